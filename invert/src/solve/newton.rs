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
//! - **The mathematics is written once**, over [`Arith`] ([`super::arith`]): the convergence
//!   test, forward differences, `J·Jᵀ`, Cramer's rule, the residual, the line search's points
//!   and the retry starts are kernels that the generated `solve` emits as IR and that
//!   [`solve_plain`] runs on any [`num_traits::Float`]. `solve_plain` has the same control flow
//!   and limits: on f64 it gives the generated code's results bit for bit (tested), and it
//!   tests the method in f32 too.
//!
//! Acceptance depends on where the start falls: one from which the method reaches no solution
//! (no y of that kind is near, or the basins lead nowhere) is a domain error. Soundness never
//! depends on it: the rule checks the outputs, and the inverse ends with the original
//! function's `f(x) = y` check.

use super::arith::{Arith, Plain};
use super::helpers::{emit_plan, new_function, Fb};
use super::plan::{PKind, PVal, Plan, PlanBuilder, RootSpec};
use num_traits::Float;
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
/// but parameters, constants, f64 primitives and squares (one pass in order: no recursion as
/// deep as the program). Steps are left out: through `floor` or an integer (`(p as i64) as
/// f64`) the derivative is 0 almost everywhere, and Newton's method cannot move.
fn inputs(plan: &Plan) -> Vec<Option<BTreeSet<u32>>> {
    let mut out: Vec<Option<BTreeSet<u32>>> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let smooth = match inst.kind {
            PKind::Prim(op) => {
                op != Opcode::Floor
                    && op.result_type() == Type::F64
                    && inst.args.iter().all(|&a| plan.ty(a) == Type::F64)
            }
            _ => true,
        };
        let found = match &inst.kind {
            PKind::Param(p) => Some(BTreeSet::from([*p])),
            PKind::Const(_) => Some(BTreeSet::new()),
            PKind::Prim(_) if !smooth => None,
            PKind::Prim(_) | PKind::Sq | PKind::Odds => {
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
    // The inputs each output is built from.
    let mut uses: Vec<BTreeSet<u32>> = Vec::new();
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
        params.extend(used.iter().copied());
        uses.push(used);
    }
    let (k, n) = (outputs.len(), params.len());
    if !(2..=MAX_EQUATIONS).contains(&k) || n < k || n > MAX_UNKNOWNS || !nonlinear {
        return None;
    }
    // Outputs that share no input are separate equations, each inverted on its own: one
    // system only when they are connected through the inputs they share.
    let mut reached = uses[0].clone();
    let mut joined = vec![false; uses.len()];
    joined[0] = true;
    let mut grew = true;
    while grew {
        grew = false;
        for (j, u) in uses.iter().enumerate() {
            if !joined[j] && !u.is_disjoint(&reached) {
                joined[j] = true;
                reached.extend(u.iter().copied());
                grew = true;
            }
        }
    }
    if joined.contains(&false) {
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
        written: None,
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

// ---- the mathematics, written once over `Arith` (plain floats, or IR)

/// Whether every output `fx` is `ys` within `tolerance` (relative to max(1, |y|)), or NaN where
/// y is NaN (as the final check of `f(x) = y` matches them: no step leads anywhere from a NaN).
pub fn converged<A: Arith>(a: &mut A, fx: &[A::F], ys: &[A::F], tolerance: f64) -> A::B {
    let mut conv = a.yes();
    for (&f, &y) in fx.iter().zip(ys) {
        let f_nan = a.ne(f, f);
        let y_nan = a.ne(y, y);
        let both_nan = a.and(f_nan, y_nan);
        let eq = a.eq(f, y);
        let eq = a.or(eq, both_nan);
        let d = a.sub(f, y);
        let d = a.abs(d);
        let one = a.c(1.0);
        let ay = a.abs(y);
        let scale = a.max(one, ay);
        let tol = a.c(tolerance);
        let bound = a.mul(tol, scale);
        let near = a.le(d, bound);
        let ok = a.or(eq, near);
        conv = a.and(conv, ok);
    }
    conv
}

/// The point a forward difference in one coordinate `xj` evaluates at, and the step actually
/// taken (`xj + h` rounds): `h = 1e-7 · max(1, |xj|)` in f64, scaled by the square root of the
/// ratio of machine epsilons at another precision (2.3e-3 in f32, where 1e-7 is below an ulp).
pub fn difference_point<A: Arith>(a: &mut A, xj: A::F) -> (A::F, A::F) {
    let ax = a.abs(xj);
    let one = a.c(1.0);
    let scale = a.max(one, ax);
    let eps = a.c(1e-7 * (a.epsilon() / f64::EPSILON).sqrt());
    let h = a.mul(eps, scale);
    let xp = a.add(xj, h);
    let h = a.sub(xp, xj);
    (xp, h)
}

/// A column of the Jacobian by forward differences: `(F(x + h·eⱼ) − F(x)) / h`.
pub fn difference_column<A: Arith>(a: &mut A, fp: &[A::F], fx: &[A::F], h: A::F) -> Vec<A::F> {
    fp.iter()
        .zip(fx)
        .map(|(&f1, &f0)| {
            let d = a.sub(f1, f0);
            a.div(d, h)
        })
        .collect()
}

/// `J·Jᵀ` (k × k) from the Jacobian's n columns of k entries.
pub fn normal_matrix<A: Arith>(a: &mut A, columns: &[Vec<A::F>], k: usize) -> Vec<Vec<A::F>> {
    (0..k)
        .map(|i| {
            (0..k)
                .map(|l| {
                    let mut acc = a.c(0.0);
                    for col in columns {
                        let p = a.mul(col[i], col[l]);
                        acc = a.add(acc, p);
                    }
                    acc
                })
                .collect()
        })
        .collect()
}

/// The determinant of a 2×2 or 3×3 matrix (rows), by cofactors along the first row.
pub fn det<A: Arith>(a: &mut A, m: &[Vec<A::F>]) -> A::F {
    match m.len() {
        2 => {
            let ad = a.mul(m[0][0], m[1][1]);
            let bc = a.mul(m[0][1], m[1][0]);
            a.sub(ad, bc)
        }
        _ => {
            let mut acc = a.c(0.0);
            for col in 0..3 {
                let minor: Vec<Vec<A::F>> = (1..3)
                    .map(|r| (0..3).filter(|&c| c != col).map(|c| m[r][c]).collect())
                    .collect();
                let d = det(a, &minor);
                let term = a.mul(m[0][col], d);
                acc = if col == 1 {
                    a.sub(acc, term)
                } else {
                    a.add(acc, term)
                };
            }
            acc
        }
    }
}

/// Whether `J·Jᵀ` can be solved: its determinant is not 0 (nor NaN).
pub fn regular<A: Arith>(a: &mut A, det: A::F) -> A::B {
    let ad = a.abs(det);
    let zero = a.c(0.0);
    a.gt(ad, zero)
}

/// The step of least norm `δ = Jᵀ·(J·Jᵀ)⁻¹·(y − F)` (the Newton step when n = k), with
/// `J·Jᵀ` (`jm`, determinant `det`) solved by Cramer's rule.
pub fn least_norm_step<A: Arith>(
    a: &mut A,
    (jm, det): (&[Vec<A::F>], A::F),
    columns: &[Vec<A::F>],
    fx: &[A::F],
    ys: &[A::F],
) -> Vec<A::F> {
    let k = jm.len();
    let rhs: Vec<A::F> = fx.iter().zip(ys).map(|(&f, &y)| a.sub(y, f)).collect();
    let z: Vec<A::F> = (0..k)
        .map(|j| {
            let mut m = jm.to_vec();
            for (i, row) in m.iter_mut().enumerate() {
                row[j] = rhs[i];
            }
            let dj = self::det(a, &m);
            a.div(dj, det)
        })
        .collect();
    columns
        .iter()
        .map(|col| {
            let mut acc = a.c(0.0);
            for (&jij, &zi) in col.iter().zip(&z) {
                let p = a.mul(jij, zi);
                acc = a.add(acc, p);
            }
            acc
        })
        .collect()
}

/// The sum of the squared residuals `F − y`.
pub fn residual_norm<A: Arith>(a: &mut A, fs: &[A::F], ys: &[A::F]) -> A::F {
    let mut acc = a.c(0.0);
    for (&f, &y) in fs.iter().zip(ys) {
        let r = a.sub(f, y);
        let r2 = a.mul(r, r);
        acc = a.add(acc, r2);
    }
    acc
}

/// `x + t·δ`: a point of the line search.
pub fn line_point<A: Arith>(a: &mut A, x: &[A::F], delta: &[A::F], t: A::F) -> Vec<A::F> {
    x.iter()
        .zip(delta)
        .map(|(&xj, &dj)| {
            let tj = a.mul(t, dj);
            a.add(xj, tj)
        })
        .collect()
}

/// The n coordinates of retry number `tries` (`tries` and `tries mod 2` as floats):
/// `0.5 − 2·tries·(1 − 2·(tries mod 2)) + 0.37·j`, staggered so that no symmetric point makes
/// the Jacobian singular.
pub fn retry_start<A: Arith>(a: &mut A, tries: A::F, odd: A::F, n: usize) -> Vec<A::F> {
    let base = a.c(0.5);
    let two = a.c(2.0);
    let swing = a.mul(tries, two);
    let sign = a.mul(odd, two);
    let one = a.c(1.0);
    let sign = a.sub(one, sign);
    let swing = a.mul(swing, sign);
    let from = a.sub(base, swing);
    (0..n)
        .map(|j| {
            let stagger = a.c(0.37 * j as f64);
            a.add(from, stagger)
        })
        .collect()
}

/// Newton's method on plain floats, as `iso.newton.N.solve` runs it: the same kernels in the
/// same order, with the same limits. `body` gives the k outputs at a point. Returns the last
/// iterate and whether it converged. On `f64` it gives the generated code's results bit for
/// bit (a test checks it); on `f32` it tests the mathematics at another precision.
pub fn solve_plain<F: Float>(
    body: &dyn Fn(&[F]) -> Vec<F>,
    ys: &[F],
    starts: &[F],
    tolerance: f64,
) -> (Vec<F>, bool) {
    let a = &mut Plain::<F>::new();
    let (n, k) = (starts.len(), ys.len());
    let (mut x, mut it, mut tries) = (starts.to_vec(), 0i64, 0i64);
    loop {
        let fx = body(&x);
        if converged(a, &fx, ys, tolerance) {
            return (x, true);
        }
        let it1 = it + 1;
        let mut stepped = false;
        if it1 <= MAX_ITERATIONS {
            let columns: Vec<Vec<F>> = (0..n)
                .map(|j| {
                    let (xpj, h) = difference_point(a, x[j]);
                    let mut xp = x.clone();
                    xp[j] = xpj;
                    difference_column(a, &body(&xp), &fx, h)
                })
                .collect();
            let jm = normal_matrix(a, &columns, k);
            let d = det(a, &jm);
            if regular(a, d) {
                let delta = least_norm_step(a, (&jm, d), &columns, &fx, ys);
                let norm = residual_norm(a, &fx, ys);
                let (mut t, mut halvings) = (a.c(1.0), 0i64);
                loop {
                    let xn = line_point(a, &x, &delta, t);
                    let norm_n = residual_norm(a, &body(&xn), ys);
                    if norm_n < norm || halvings >= MAX_HALVINGS {
                        x = xn;
                        break;
                    }
                    t = t * a.c(0.5);
                    halvings += 1;
                }
                it = it1;
                stepped = true;
            }
        }
        if !stepped {
            if tries >= RETRIES {
                return (x, false);
            }
            let (tf, odd) = (a.c(tries as f64), a.c((tries % 2) as f64));
            x = retry_start(a, tf, odd, n);
            it = 0;
            tries += 1;
        }
    }
}

/// `iso.newton.N.solve(y…, s…) -> (x…, ok)`: Newton's method for `body(x…) = y…` from `s…`
/// (see the module docs), the control flow of [`solve_plain`] around the same kernels.
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

    b.block = iter;
    let fx = b.calls(body, &x, k);
    let conv = converged(&mut b, &fx, ys, tolerance);
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
        let (xpj, h) = difference_point(&mut b, x[j]);
        let mut xp = x.clone();
        xp[j] = xpj;
        let fp = b.calls(body, &xp, k);
        columns.push(difference_column(&mut b, &fp, &fx, h));
    }
    let jm = normal_matrix(&mut b, &columns, k);
    let d = det(&mut b, &jm);
    let ok = regular(&mut b, d);
    let (cramer, _) = b.new_block(&[]);
    b.brif(ok, (cramer, &[]), (failed, &[]));
    b.block = cramer;
    let delta = least_norm_step(&mut b, (&jm, d), &columns, &fx, ys);
    let norm = residual_norm(&mut b, &fx, ys);
    // The line search: halve the step until the residual shrinks (or give up halving).
    let (ls, lp) = b.new_block(&[Type::F64, Type::I64]);
    let one_f = b.c(1.0);
    b.jump(ls, &[one_f, zero]);
    b.block = ls;
    let (t, halvings) = (lp[0], lp[1]);
    let xn = line_point(&mut b, &x, &delta, t);
    let fn_ = b.calls(body, &xn, k);
    let norm_n = residual_norm(&mut b, &fn_, ys);
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

    // Failed: again from fixed starts, at most RETRIES times, else done without an answer.
    b.block = failed;
    let max_tries = b.ci(RETRIES);
    let retried = b.op(Opcode::Ige, &[tries, max_tries]);
    let (retry, _) = b.new_block(&[]);
    let no = b.f.ins_const(failed, Const::Bool(false), span);
    b.brif(retried, (done, &[no]), (retry, &[]));
    b.block = retry;
    let tf = b.op(Opcode::FcvtFromI64, &[tries]);
    let par = b.ci(2);
    let odd = b.op(Opcode::Irem, &[tries, par]);
    let oddf = b.op(Opcode::FcvtFromI64, &[odd]);
    let mut again_args = retry_start(&mut b, tf, oddf, n);
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

    /// `(x·y, x² + y²)` and the mean and variance of three numbers, on plain floats.
    fn product_and_square<F: Float>(x: &[F]) -> Vec<F> {
        vec![x[0] * x[1], x[0] * x[0] + x[1] * x[1]]
    }

    fn mean_and_variance<F: Float>(x: &[F]) -> Vec<F> {
        let three = F::from(3.0).unwrap();
        let m = (x[0] + x[1] + x[2]) / three;
        let v =
            ((x[0] - m) * (x[0] - m) + (x[1] - m) * (x[1] - m) + (x[2] - m) * (x[2] - m)) / three;
        vec![m, v]
    }

    /// The method reaches y from θ's start (and from a start where the Jacobian is singular,
    /// through a retry), in f64 and in f32, with the tolerance each precision can meet.
    fn converges_in<F: Float + std::fmt::Debug>(tolerance: f64) {
        let f = |v: f64| F::from(v).unwrap();
        type Body<'a, F> = &'a dyn Fn(&[F]) -> Vec<F>;
        let cases: [(Body<F>, Vec<F>, Vec<F>); 4] = [
            (
                &product_and_square,
                vec![f(6.0), f(13.0)],
                vec![f(1.0), f(1.0)],
            ),
            // The Jacobian [[y, x], [2x, 2y]] is zero at the origin: only a retry moves.
            (
                &product_and_square,
                vec![f(6.0), f(13.0)],
                vec![f(0.0), f(0.0)],
            ),
            (
                &mean_and_variance,
                vec![f(2.0), f(9.0)],
                vec![f(0.0), f(1.0), f(3.0)],
            ),
            (
                &mean_and_variance,
                vec![f(-1.5), f(0.25)],
                vec![f(7.0), f(7.0), f(-2.0)],
            ),
        ];
        for (body, ys, starts) in cases {
            let (x, ok) = solve_plain(body, &ys, &starts, tolerance);
            assert!(ok, "{ys:?} from {starts:?}: stopped at {x:?}");
            let fx = body(&x);
            let mut a = Plain::<F>::new();
            assert!(converged(&mut a, &fx, &ys, tolerance), "{x:?} gives {fx:?}");
        }
        // No real solution (x² + y² ≥ 2|x·y|): every start fails, and says so.
        let (_, ok) = solve_plain(
            &product_and_square,
            &[f(6.0), f(1.0)],
            &[f(1.0), f(1.0)],
            tolerance,
        );
        assert!(!ok);
    }

    #[test]
    fn newtons_method_converges_in_f64_and_in_f32() {
        converges_in::<f64>(1e-9);
        converges_in::<f32>(1e-5);
    }

    /// The generated `iso.newton.N.solve`, run by the interpreter, and [`solve_plain`] on f64
    /// give the same iterate and verdict bit for bit: they share the kernels and the control.
    #[test]
    fn the_generated_solver_is_the_plain_one_bit_for_bit() {
        use pinv_core::interp::Interpreter;
        let file = SourceFile::new(
            "n.pinv",
            "fn body(x: f64, y: f64) -> (f64, f64) { (x * y, x * x + y * y) }",
        );
        let mut module = pinv_core::compile_source(&file).expect("compiles").module;
        let body = module.get("body").expect("body");
        let solve = build_solve("solve", body, 2, 2, Span::default());
        let solve = super::super::helpers::add(&mut module, solve);
        let tolerance = pinv_primitives::EmitOptions::default().tolerance;
        let interp = Interpreter::new(&module);
        for (ys, starts) in [
            ([6.0, 13.0], [1.0, 1.0]),
            ([6.0, 13.0], [0.0, 0.0]),
            ([-6.0, 13.0], [100.0, -0.001]),
            ([6.0, 1.0], [1.0, 1.0]),
            ([1e-300, 2.5], [3.0, 1e10]),
            ([f64::NAN, 2.0], [1.0, 2.0]),
        ] {
            let args: Vec<Const> = ys.iter().chain(&starts).map(|&v| Const::F64(v)).collect();
            let got = interp.call(solve, &args).expect("runs");
            let (x, ok) = solve_plain(&product_and_square, &ys, &starts, tolerance);
            let mut want: Vec<Const> = x.iter().map(|&v| Const::F64(v)).collect();
            want.push(Const::Bool(ok));
            let bits = |v: &[Const]| v.iter().map(|c| c.bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "{ys:?} from {starts:?}: {got:?} vs {want:?}"
            );
        }
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
        // equations than unknowns, outputs built with calls, outputs that share no input, or
        // outputs through a step (floor, an integer).
        for source in [
            "fn l(a: f64, b: f64) -> (f64, f64) { (a + b, a - 2.0 * b) }",
            "fn d(a: f64, b: f64) -> (f64, f64) { (a * a + a, b * exp(b)) }",
            "fn f(a: f64, b: f64) -> (f64, f64) { (floor(a * b), a * a + b) }",
            "fn i(a: f64, b: f64) -> (f64, f64) { (((a * b) as i64) as f64, a * a + b) }",
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
