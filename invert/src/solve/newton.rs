//! Nonlinear systems: Newton's method, with steps of least norm, from a start point θ gives.
//!
//! The mean and the variance of three numbers, `(Σxᵢ/3, Σ(xᵢ − m)²/3)`, use every unknown in
//! both outputs, nonlinearly, and no rewrite leaves each once. Inverted one output at a time,
//! the second output can only check what θ gave the first, and almost no θ passes. Solved as a
//! system, the `k` outputs are `k` equations in the `n ≥ k` unknowns, whose solutions form a
//! set of dimension `n − k` (a circle, for the mean and variance of three numbers); θ is a
//! point, and Newton's method takes it to a solution near it.
//!
//! - **Recognition** ([`find_system`]): `k` f64 outputs (2 ≤ k ≤ [`MAX_EQUATIONS`]) built from
//!   the same `n ≥ k` f64 inputs (at most [`MAX_UNKNOWNS`]), by primitives and squares alone,
//!   at least one of them nonlinear in them (a linear system is [`super::linear`]'s).
//! - **The rewritten plan** ([`candidate`]): the outputs become the results of one helper,
//!   `iso.newton.N(u₁, …, uₙ)`, whose body (a [`RootSpec`] body with `k` results) is the
//!   outputs' code.
//! - **The rule** ([`NewtonRule`]): θ gives a start point (every unknown);
//!   `iso.newton.N.solve` runs Newton's method from it: the Jacobian `J` (k × n) by forward
//!   differences, the step of least norm `δ = Jᵀ(J·Jᵀ)⁻¹(y − F(x))` (the Newton step when
//!   n = k; `J·Jᵀ` solved by Cramer's rule), a backtracking line search that halves the step
//!   until the residual shrinks, at most [`MAX_ITERATIONS`] steps, until every output is within
//!   the tolerance (or NaN where y is NaN, as the final check matches them). A run that does not get there, or meets a singular `J·Jᵀ`, starts again
//!   from a few fixed points ([`RETRIES`]), and only then is a domain error. Where the start
//!   already gives y within the tolerance it is returned as it is.
//! - **The PGF** records x itself as the start point: Newton's method stops at once there, so
//!   x comes back bit for bit.
//!
//! Acceptance depends on where the start falls: one from which the method reaches no solution
//! (no y of that kind is near, or the basins lead nowhere) is a domain error. Soundness never
//! depends on it: the rule checks the outputs, and the inverse ends with the original
//! function's `f(x) = y` check.

use super::helpers::{emit_plan, new_function, Fb};
use super::plan::{PKind, PVal, Plan, PlanBuilder, RootSpec};
use pinv_core::ir::{Const, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::{
    Arg, Callee, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc,
};
use std::collections::{BTreeSet, HashMap};

/// The most equations (outputs) solved by Newton's method together.
pub const MAX_EQUATIONS: usize = 3;
/// The most unknowns a system may have (solved and free).
pub const MAX_UNKNOWNS: usize = 6;
/// The most Newton steps.
pub const MAX_ITERATIONS: i64 = 60;
/// The most halvings of one step in the line search.
pub const MAX_HALVINGS: i64 = 12;
/// How many more starts a run that fails from θ's start tries.
pub const RETRIES: i64 = 3;

/// A nonlinear system among a plan's outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    /// The outputs in the system (indices into the plan's outputs).
    pub outputs: Vec<usize>,
    /// The plan's parameters they are built from, in order.
    pub params: Vec<u32>,
}

/// Per instruction of `plan`, the parameters it depends on, or `None` if its code has anything
/// but parameters, constants, primitives and squares (one pass in order: no recursion as deep
/// as the program).
fn inputs(plan: &Plan) -> Vec<Option<BTreeSet<u32>>> {
    let mut out: Vec<Option<BTreeSet<u32>>> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let found = match &inst.kind {
            PKind::Param(p) => Some(BTreeSet::from([*p])),
            PKind::Const(_) => Some(BTreeSet::new()),
            PKind::Prim(_) | PKind::Sq => {
                inst.args.iter().try_fold(BTreeSet::new(), |mut all, a| {
                    all.extend(out[a.inst as usize].as_ref()?.iter().copied());
                    Some(all)
                })
            }
            _ => None,
        };
        out.push(found);
    }
    out
}

/// The nonlinear system among `plan`'s outputs, if there is one (see the module docs).
pub fn find_system(plan: &Plan) -> Option<System> {
    let dep = plan.depends_on_params();
    let used_by = inputs(plan);
    let mut outputs = Vec::new();
    let mut params: BTreeSet<u32> = BTreeSet::new();
    let mut nonlinear = false;
    for (i, &o) in plan.outputs.iter().enumerate() {
        if plan.ty(o) != Type::F64 || !dep[o.inst as usize] {
            continue;
        }
        let used = used_by[o.inst as usize].clone()?;
        if used.iter().any(|&p| plan.params[p as usize] != Type::F64) {
            return None;
        }
        let form = super::linear::affine(plan, o, &dep);
        nonlinear |= form
            .atoms
            .iter()
            .any(|(a, _)| !matches!(plan.insts[a.inst as usize].kind, PKind::Param(_)));
        outputs.push(i);
        params.extend(used);
    }
    let (k, n) = (outputs.len(), params.len());
    if !(2..=MAX_EQUATIONS).contains(&k) || n < k || n > MAX_UNKNOWNS || !nonlinear {
        return None;
    }
    Some(System {
        outputs,
        params: params.into_iter().collect(),
    })
}

/// The plan with `system`'s outputs computed by a Newton helper, and a description.
pub fn candidate(plan: &Plan, system: &System, names: &[String]) -> (Plan, String) {
    // The helper's body: the outputs' code over the system's parameters.
    let n = system.params.len();
    let mut body = PlanBuilder::new(vec![Type::F64; n]);
    let mut memo = HashMap::new();
    let position: HashMap<u32, usize> = system
        .params
        .iter()
        .enumerate()
        .map(|(j, &p)| (p, j))
        .collect();
    let local = |p: u32| PVal {
        inst: position.get(&p).copied().unwrap_or(0) as u32,
        idx: 0,
    };
    let outs: Vec<PVal> = system
        .outputs
        .iter()
        .map(|&o| body.copy(plan, plan.outputs[o], &local, &mut memo))
        .collect();
    let mut body = body.finish();
    body.outputs = outs;
    // The system's inputs by name, solved first (the rule's θ roles name them).
    let name = |p: u32| {
        names
            .get(p as usize)
            .cloned()
            .unwrap_or_else(|| format!("p{p}"))
    };
    let text = system
        .params
        .iter()
        .map(|&p| name(p))
        .collect::<Vec<_>>()
        .join(", ");
    let spec = RootSpec {
        body: body.pruned(),
        text: text.clone(),
    };

    let mut b = PlanBuilder::new(plan.params.clone());
    let mut memo = HashMap::new();
    let args: Vec<PVal> = system.params.iter().map(|&p| b.param(p as usize)).collect();
    let r = b.add_root(spec);
    let k = system.outputs.len();
    let span = plan.insts[plan.outputs[system.outputs[0]].inst as usize].span;
    let h = b.push(PKind::Newton(r), args, vec![Type::F64; k], span);
    let outputs = b.outputs_replacing(plan, &system.outputs, h, &mut memo);
    let mut out = b.finish();
    out.outputs = outputs;
    let describe = format!(
        "outputs {:?} as a nonlinear system in {text}, solved by Newton's method from a θ start",
        system.outputs,
    );
    (out.pruned(), describe)
}

/// The helper `iso.newton.N` for `spec` (with its solver and rule).
pub fn install(module: &mut Module, layer: &mut Layer, spec: &RootSpec, span: Span) -> FuncId {
    let name = super::helpers::fresh(module, "iso.newton");
    let n = spec.body.params.len();
    let k = spec.body.outputs.len();
    let (mut f, entry) = new_function(
        &name,
        vec![Type::F64; n],
        vec![Type::F64; k],
        (0..n).map(|j| format!("u{j}")).collect(),
        span,
    );
    let params = f.blocks[entry].params.clone();
    let sq = super::helpers::square(module, layer);
    let helper = |_: usize, kind: &PKind| match kind {
        PKind::Sq => Some(sq),
        _ => None,
    };
    let out = emit_plan(&spec.body, &mut f, entry, &params, &helper, module);
    f.ins_return(entry, out, span);
    let body = super::helpers::add(module, f);
    let solve = format!("{name}.solve");
    let s = build_solve(&solve, body, n, k, span);
    super::helpers::add(module, s);
    layer.add(
        Callee::Function(name.clone()),
        NewtonRule {
            solve,
            n,
            k,
            text: spec.text.clone(),
        },
    );
    body
}

/// What Newton's method's builder adds.
impl Fb {
    /// The sum of the squared residuals `F − y`.
    fn norm(&mut self, fs: &[Value], ys: &[Value]) -> Value {
        let mut acc = self.c(0.0);
        for (&a, &y) in fs.iter().zip(ys) {
            let r = self.op(Opcode::Fsub, &[a, y]);
            let r2 = self.op(Opcode::Fmul, &[r, r]);
            acc = self.op(Opcode::Fadd, &[acc, r2]);
        }
        acc
    }
    /// The determinant of a 2×2 or 3×3 matrix (rows of values).
    fn det(&mut self, m: &[Vec<Value>]) -> Value {
        match m.len() {
            2 => {
                let ad = self.op(Opcode::Fmul, &[m[0][0], m[1][1]]);
                let bc = self.op(Opcode::Fmul, &[m[0][1], m[1][0]]);
                self.op(Opcode::Fsub, &[ad, bc])
            }
            _ => {
                let mut acc = self.c(0.0);
                for col in 0..3 {
                    let minor: Vec<Vec<Value>> = (1..3)
                        .map(|r| (0..3).filter(|&c| c != col).map(|c| m[r][c]).collect())
                        .collect();
                    let d = self.det(&minor);
                    let term = self.op(Opcode::Fmul, &[m[0][col], d]);
                    acc = if col == 1 {
                        self.op(Opcode::Fsub, &[acc, term])
                    } else {
                        self.op(Opcode::Fadd, &[acc, term])
                    };
                }
                acc
            }
        }
    }
}

/// `iso.newton.N.solve(y…, s…) -> (x…, ok)`: Newton's method for `body(x…) = y…` from `s…`
/// (see the module docs).
fn build_solve(name: &str, body: FuncId, n: usize, k: usize, span: Span) -> Function {
    let params = vec![Type::F64; k + n];
    let mut names: Vec<String> = (0..k).map(|i| format!("y{i}")).collect();
    names.extend((0..n).map(|j| format!("s{j}")));
    let mut returns = vec![Type::F64; n];
    returns.push(Type::Bool);
    let (f, entry) = new_function(name, params, returns, names, span);
    let mut b = Fb {
        f,
        block: entry,
        span,
    };
    let p = b.f.blocks[entry].params.clone();
    let (ys, starts) = (&p[..k], &p[k..]);
    let tolerance = pinv_primitives::EmitOptions::default().tolerance;
    // iter(x…, iterations, tries): a failed run from θ's start is tried again from fixed ones.
    let mut types = vec![Type::F64; n];
    types.extend([Type::I64, Type::I64]);
    let (iter, ip) = b.new_block(&types);
    let (x, it, tries) = (ip[..n].to_vec(), ip[n], ip[n + 1]);
    let zero = b.ci(0);
    let mut args = starts.to_vec();
    args.extend([zero, zero]);
    b.jump(iter, &args);
    let (failed, _) = b.new_block(&[]);

    // Converged when every output is within the tolerance, or NaN where y is (as the final
    // check of `f(x) = y` matches them: no step leads anywhere from a NaN).
    b.block = iter;
    let fx = b.calls(body, &x, k);
    let mut conv = b.f.ins_const(iter, Const::Bool(true), span);
    for (&a, &y) in fx.iter().zip(ys) {
        let a_nan = b.op(Opcode::Fne, &[a, a]);
        let y_nan = b.op(Opcode::Fne, &[y, y]);
        let both_nan = b.op(Opcode::Band, &[a_nan, y_nan]);
        let eq = b.op(Opcode::Feq, &[a, y]);
        let eq = b.op(Opcode::Bor, &[eq, both_nan]);
        let d = b.op(Opcode::Fsub, &[a, y]);
        let d = b.op(Opcode::Fabs, &[d]);
        let one = b.c(1.0);
        let ay = b.op(Opcode::Fabs, &[y]);
        let scale = b.op(Opcode::Fmax, &[one, ay]);
        let tol = b.c(tolerance);
        let bound = b.op(Opcode::Fmul, &[tol, scale]);
        let near = b.op(Opcode::Fle, &[d, bound]);
        let ok = b.op(Opcode::Bor, &[eq, near]);
        conv = b.op(Opcode::Band, &[conv, ok]);
    }
    let (done, dp) = b.new_block(&[Type::Bool]);
    let (step, _) = b.new_block(&[]);
    let yes = b.f.ins_const(iter, Const::Bool(true), span);
    b.brif(conv, (done, &[yes]), (step, &[]));

    // A step: the Jacobian by forward differences.
    b.block = step;
    let one_i = b.ci(1);
    let it1 = b.op(Opcode::Iadd, &[it, one_i]);
    let max_it = b.ci(MAX_ITERATIONS);
    let over = b.op(Opcode::Igt, &[it1, max_it]);
    let (jac, _) = b.new_block(&[]);
    b.brif(over, (failed, &[]), (jac, &[]));
    b.block = jac;
    let mut columns: Vec<Vec<Value>> = Vec::new();
    for j in 0..n {
        let ax = b.op(Opcode::Fabs, &[x[j]]);
        let one = b.c(1.0);
        let scale = b.op(Opcode::Fmax, &[one, ax]);
        let eps = b.c(1e-7);
        let h = b.op(Opcode::Fmul, &[eps, scale]);
        let mut xp = x.clone();
        xp[j] = b.op(Opcode::Fadd, &[x[j], h]);
        // The step actually taken (x + h rounds).
        let h = b.op(Opcode::Fsub, &[xp[j], x[j]]);
        let fp = b.calls(body, &xp, k);
        let col: Vec<Value> = fp
            .iter()
            .zip(&fx)
            .map(|(&a, &f0)| {
                let d = b.op(Opcode::Fsub, &[a, f0]);
                b.op(Opcode::Fdiv, &[d, h])
            })
            .collect();
        columns.push(col);
    }
    // The step of least norm: δ = Jᵀ·(J·Jᵀ)⁻¹·(y − F), the Newton step when n = k.
    let jm: Vec<Vec<Value>> = (0..k)
        .map(|i| {
            (0..k)
                .map(|l| {
                    let mut acc = b.c(0.0);
                    for col in &columns {
                        let p = b.op(Opcode::Fmul, &[col[i], col[l]]);
                        acc = b.op(Opcode::Fadd, &[acc, p]);
                    }
                    acc
                })
                .collect()
        })
        .collect();
    let det = b.det(&jm);
    let ad = b.op(Opcode::Fabs, &[det]);
    let zero_f = b.c(0.0);
    let regular = b.op(Opcode::Fgt, &[ad, zero_f]);
    let (cramer, _) = b.new_block(&[]);
    b.brif(regular, (cramer, &[]), (failed, &[]));
    b.block = cramer;
    let rhs: Vec<Value> = fx
        .iter()
        .zip(ys)
        .map(|(&a, &y)| b.op(Opcode::Fsub, &[y, a]))
        .collect();
    let z: Vec<Value> = (0..k)
        .map(|j| {
            let mut m = jm.clone();
            for (i, row) in m.iter_mut().enumerate() {
                row[j] = rhs[i];
            }
            let dj = b.det(&m);
            b.op(Opcode::Fdiv, &[dj, det])
        })
        .collect();
    let delta: Vec<Value> = columns
        .iter()
        .map(|col| {
            let mut acc = b.c(0.0);
            for (&jij, &zi) in col.iter().zip(&z) {
                let p = b.op(Opcode::Fmul, &[jij, zi]);
                acc = b.op(Opcode::Fadd, &[acc, p]);
            }
            acc
        })
        .collect();
    let norm = b.norm(&fx, ys);
    // The line search: halve the step until the residual shrinks (or give up halving).
    let (ls, lp) = b.new_block(&[Type::F64, Type::I64]);
    let one_f = b.c(1.0);
    b.jump(ls, &[one_f, zero]);
    b.block = ls;
    let (t, halvings) = (lp[0], lp[1]);
    let xn: Vec<Value> = (0..n)
        .map(|j| {
            let tj = b.op(Opcode::Fmul, &[t, delta[j]]);
            b.op(Opcode::Fadd, &[x[j], tj])
        })
        .collect();
    let fn_ = b.calls(body, &xn, k);
    let norm_n = b.norm(&fn_, ys);
    let better = b.op(Opcode::Flt, &[norm_n, norm]);
    let max_h = b.ci(MAX_HALVINGS);
    let tired = b.op(Opcode::Ige, &[halvings, max_h]);
    let go = b.op(Opcode::Bor, &[better, tired]);
    let (again, _) = b.new_block(&[]);
    let mut next = xn.clone();
    next.extend([it1, tries]);
    b.brif(go, (iter, &next), (again, &[]));
    b.block = again;
    let half = b.c(0.5);
    let t2 = b.op(Opcode::Fmul, &[t, half]);
    let one_h = b.ci(1);
    let h2 = b.op(Opcode::Iadd, &[halvings, one_h]);
    b.jump(ls, &[t2, h2]);

    // Failed: again from fixed starts (staggered, so that no symmetric point makes the
    // Jacobian singular), at most RETRIES times, else done without an answer.
    b.block = failed;
    let max_tries = b.ci(RETRIES);
    let retried = b.op(Opcode::Ige, &[tries, max_tries]);
    let (retry, _) = b.new_block(&[]);
    let no = b.f.ins_const(failed, Const::Bool(false), span);
    b.brif(retried, (done, &[no]), (retry, &[]));
    b.block = retry;
    // Start j of retry r: 0.5 − 2·r·(−1)^r + 0.37·j, from the number of tries so far.
    let tf = b.op(Opcode::FcvtFromI64, &[tries]);
    let base = b.c(0.5);
    let two = b.c(2.0);
    let swing = b.op(Opcode::Fmul, &[tf, two]);
    let par = b.ci(2);
    let odd = b.op(Opcode::Irem, &[tries, par]);
    let oddf = b.op(Opcode::FcvtFromI64, &[odd]);
    let sign = b.op(Opcode::Fmul, &[oddf, two]);
    let one = b.c(1.0);
    let sign = b.op(Opcode::Fsub, &[one, sign]);
    let swing = b.op(Opcode::Fmul, &[swing, sign]);
    let from = b.op(Opcode::Fsub, &[base, swing]);
    let mut again_args: Vec<Value> = (0..n)
        .map(|j| {
            let stagger = b.c(0.37 * j as f64);
            b.op(Opcode::Fadd, &[from, stagger])
        })
        .collect();
    let zero_it = b.ci(0);
    let one_t = b.ci(1);
    let tries1 = b.op(Opcode::Iadd, &[tries, one_t]);
    again_args.extend([zero_it, tries1]);
    b.jump(iter, &again_args);

    // The answer (x as the last iterate reached it), and whether it converged.
    b.block = done;
    let mut out = x.clone();
    out.push(dp[0]);
    b.f.ins_return(done, out, span);
    b.f
}

/// The rule of `iso.newton.N`: see the module docs.
#[derive(Debug)]
pub struct NewtonRule {
    solve: String,
    n: usize,
    k: usize,
    text: String,
}

impl NewtonRule {
    /// The name of the system's `j`-th input.
    fn input(&self, j: usize) -> String {
        self.text
            .split(", ")
            .nth(j)
            .map_or_else(|| format!("input {j}"), |s| format!("`{s}`"))
    }

    fn start_role(&self, j: usize) -> String {
        format!(
            "{}: Newton's start point (x itself where that gives y)",
            self.input(j)
        )
    }
}

impl InverseRule for NewtonRule {
    fn name(&self) -> &str {
        "newton"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.n && pattern.unknowns() == self.n
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        let thetas: Vec<ThetaDoc> = (0..self.n)
            .map(|j| ThetaDoc::value(pinv_core::ir::Domain::Real, &self.start_role(j)))
            .collect();
        RuleDoc {
            thetas,
            checks: vec![
                "Newton's method converges to the outputs within the tolerance".to_string(),
            ],
            exact: false,
            summary: "Newton's method (steps of least norm) from a θ start".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        if args.len() != self.n || outputs.len() != self.k {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        }
        let mut call = outputs.to_vec();
        for j in 0..self.n {
            call.push(e.theta(pinv_core::ir::Domain::Real, &self.start_role(j))?);
        }
        let r = e.call(&self.solve, &call)?;
        e.check(
            r[self.n],
            "Newton's method did not reach y from this start (or met a singular Jacobian)",
        )?;
        Ok(r[..self.n].to_vec())
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        _pattern: &Pattern,
    ) -> Result<(), RuleError> {
        for (j, &a) in args.iter().enumerate() {
            e.record(a, &self.start_role(j))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::SourceFile;

    fn plan(source: &str) -> Plan {
        let file = SourceFile::new("n.pinv", source);
        let compiled = pinv_core::compile_source(&file).expect("compiles");
        let (_, f) = compiled.module.iter().next().expect("a function");
        Plan::from_function(f).expect("straight line")
    }

    #[test]
    fn nonlinear_systems_are_found_and_others_are_left_alone() {
        let stats = plan(
            "fn s(a: f64, b: f64, c: f64) -> (f64, f64) {
                 let m = (a + b + c) / 3.0;
                 (m, (a - m) * (a - m) + (b - m) * (b - m) + (c - m) * (c - m))
             }",
        );
        let system = find_system(&stats).expect("a system");
        assert_eq!(system.outputs, vec![0, 1]);
        assert_eq!(system.params, vec![0, 1, 2]);
        // A linear system is the linear solver's; one output is no system; nor are more
        // equations than unknowns, or outputs built with calls.
        for source in [
            "fn l(a: f64, b: f64) -> (f64, f64) { (a + b, a - 2.0 * b) }",
            "fn o(a: f64, b: f64) -> f64 { a * b + a }",
            "fn m(a: f64) -> (f64, f64) { (a * a, a + 1.0) }",
            "fn e(a: f64, b: f64, c: f64, d: f64) -> (f64, f64, f64, f64) {
                 (a * b, b * c, c * d, d * a)
             }",
        ] {
            assert_eq!(find_system(&plan(source)), None, "{source}");
        }
    }

    #[test]
    fn the_helper_computes_the_outputs_and_the_rewrite_keeps_the_rest() {
        let p = plan(
            "fn f(x: f64, y: f64, z: f64) -> (f64, f64, bool) { (x * y, x + y * y, z > 0.0) }",
        );
        let system = find_system(&p).expect("a system");
        let names: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
        let (rewritten, text) = candidate(&p, &system, &names);
        assert!(text.contains("system in x, y, solved by Newton"), "{text}");
        assert_eq!(rewritten.outputs.len(), 3);
        let h = rewritten.outputs[0];
        assert!(matches!(
            rewritten.insts[h.inst as usize].kind,
            PKind::Newton(_)
        ));
        let PKind::Newton(r) = rewritten.insts[h.inst as usize].kind else {
            unreachable!()
        };
        assert_eq!(rewritten.roots[r].body.outputs.len(), 2);
        assert_eq!(rewritten.roots[r].body.params.len(), 2);
    }
}
