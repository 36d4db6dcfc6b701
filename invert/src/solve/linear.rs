//! Linear systems: several outputs that are linear in the same unknowns, solved together.
//!
//! `(x + y, x − y)`, a rotation `(c·x − s·y, s·x + c·y)` or `(a + b + c, a − c)` use every
//! unknown in several outputs. Inverted one output at a time, the first output's rule splits
//! its sum with θ and every later output can only *check* — almost no θ passes. Solved as a
//! system, the outputs determine as many unknowns as the matrix has rank, and θ gives the rest.
//!
//! - **Recognition** ([`find_system`]): every f64 output is taken apart into an affine form
//!   `Σ aⱼ·uⱼ + (terms free of unknowns)` through `+`, `−`, unary `−`, multiplication by a
//!   constant and division by a nonzero constant. An **atom** `uⱼ` is a maximal part that is not
//!   such a combination and depends on an unknown: a parameter, or a subterm such as `exp(x)`
//!   or `x·y` (inverted afterwards by the ordinary walk). It is a system when some atom occurs
//!   in two outputs.
//! - **The rewritten plan** ([`candidate`]): `(l₁, …, lₙ) = linear(u₁, …, uₘ)`, a helper
//!   (`iso.linear.N`) computing the matrix products, and each output `kᵢ + lᵢ` with its known
//!   part `kᵢ`.
//! - **The rule** ([`LinearRule`]): known atoms move to the right-hand side; Gauss–Jordan
//!   elimination with partial pivoting, done on the constant matrix when the rule is emitted,
//!   picks pivot columns; the other unknown atoms are read from θ (any real) and the pivots are
//!   linear combinations of the outputs and those θ. The rule checks the products at the answer
//!   (rows beyond the rank are equations the outputs must satisfy); the inverse checks the
//!   original function (the rewrite regroups sums, exact only up to rounding).
//! - **The PGF** records the free atoms' values.
//!
//! Not covered: i64 and bool outputs (wrapping arithmetic is a ring, not a field), coefficients
//! that are not constants, and systems that are not linear (`(x + y, x·y)`).

use super::plan::{fold_dag, PInst, PKind, PVal, Plan, PlanBuilder};
use num_traits::Float;
use pinv_core::ir::{Const, Domain, FuncId, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{
    Arg, Callee, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc,
};
use std::collections::HashMap;

/// An affine form: coefficients of atoms, and known terms (coefficient, value free of unknowns).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Affine {
    pub(super) atoms: Vec<(PVal, f64)>,
    pub(super) known: Vec<(f64, PVal)>,
}

impl Affine {
    fn scale(mut self, c: f64) -> Affine {
        for a in &mut self.atoms {
            a.1 *= c;
        }
        for k in &mut self.known {
            k.0 *= c;
        }
        self
    }

    fn add(mut self, o: Affine) -> Affine {
        for (v, c) in o.atoms {
            match self.atoms.iter_mut().find(|a| a.0 == v) {
                Some(a) => a.1 += c,
                None => self.atoms.push((v, c)),
            }
        }
        self.known.extend(o.known);
        self
    }
}

/// A finite nonzero f64 constant.
fn constant(plan: &Plan, v: PVal) -> Option<f64> {
    match plan.constant(v) {
        Some(Const::F64(c)) if c.is_finite() => Some(c),
        _ => None,
    }
}

/// How an f64 value's affine form is made from its operands' ([`affine`]).
enum Form {
    /// Free of unknowns: a known term.
    Known,
    /// Not a linear combination: an atom.
    Atom,
    /// The sum of two forms, the second scaled (`a + b`, `a − b`).
    Sum(PVal, PVal, f64),
    /// A form scaled (`−a`, `c·a`, `a / c`).
    Scaled(PVal, f64),
}

/// How `v`'s form is made.
fn form(plan: &Plan, v: PVal, dep: &[bool]) -> Form {
    if !dep[v.inst as usize] {
        return Form::Known;
    }
    let inst = &plan.insts[v.inst as usize];
    match (&inst.kind, inst.args.as_slice()) {
        (PKind::Prim(Opcode::Fadd), &[a, b]) => Form::Sum(a, b, 1.0),
        (PKind::Prim(Opcode::Fsub), &[a, b]) => Form::Sum(a, b, -1.0),
        (PKind::Prim(Opcode::Fneg), &[a]) => Form::Scaled(a, -1.0),
        // A product with 0 is a term of coefficient 0 (`b * (i as f64)` at i = 0, unrolled):
        // exact for finite b, which is all the inverse's final check lets through.
        (PKind::Prim(Opcode::Fmul), &[a, b]) => match (constant(plan, a), constant(plan, b)) {
            (Some(c), _) if c.is_finite() => Form::Scaled(b, c),
            (_, Some(c)) if c.is_finite() => Form::Scaled(a, c),
            _ => Form::Atom,
        },
        (PKind::Prim(Opcode::Fdiv), &[a, b]) => match constant(plan, b) {
            Some(c) if c != 0.0 => Form::Scaled(a, 1.0 / c),
            _ => Form::Atom,
        },
        _ => Form::Atom,
    }
}

/// The most terms (atoms and known terms) an affine form may have: a value whose form would
/// have more is an atom. Without it, sums sharing operands (`a = a + a`, repeated) would
/// double the form at every level.
const MAX_TERMS: usize = 4096;

/// The affine form of f64 value `v`.
///
/// Each value's form is worked out once, operands first ([`fold_dag`]): a plan's values form a
/// DAG, which walking as a tree would cost exponential time.
pub(super) fn affine(plan: &Plan, v: PVal, dep: &[bool]) -> Affine {
    let operands = |u| match form(plan, u, dep) {
        Form::Sum(a, b, _) => vec![a, b],
        Form::Scaled(a, _) => vec![a],
        Form::Known | Form::Atom => Vec::new(),
    };
    let made = fold_dag(v, operands, |u, done: &HashMap<PVal, Affine>| {
        let atom = || Affine {
            atoms: vec![(u, 1.0)],
            known: Vec::new(),
        };
        let made = match form(plan, u, dep) {
            Form::Known => Affine {
                atoms: Vec::new(),
                known: vec![(1.0, u)],
            },
            Form::Atom => atom(),
            Form::Sum(a, b, c) => done[&a].clone().add(done[&b].clone().scale(c)),
            Form::Scaled(a, c) => done[&a].clone().scale(c),
        };
        Some(if made.atoms.len() + made.known.len() > MAX_TERMS {
            atom()
        } else {
            made
        })
    });
    made.unwrap_or_default()
}

/// A linear system found in a plan's outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    /// The outputs in the system (indices into the plan's outputs).
    pub outputs: Vec<usize>,
    /// The atoms (columns).
    atoms: Vec<PVal>,
    /// Row-major coefficients, `outputs.len() × atoms.len()`.
    matrix: Vec<f64>,
    /// Per output, its known terms.
    known: Vec<Vec<(f64, PVal)>>,
    /// Rows after the outputs': linear forms inside an output that is a function of one of
    /// them (`v = (a − b)²/4`): (the output's index, the form's value in the plan, its known
    /// terms). The helper computes the form, and the output is rewritten to use it, so that
    /// once the ordinary walk has inverted the function (`a − b = ±2√v`) the system solves the
    /// rest.
    inner: Vec<InnerRow>,
}

/// A row of a [`System`] inside an output: (the output's index, the linear form's value in the
/// plan, its known terms).
type InnerRow = (usize, PVal, Vec<(f64, PVal)>);

/// The operand of `atom` that carries its unknowns, when `atom` is a function of that one
/// operand (a primitive whose other operands are free of unknowns, or a square).
fn univariate_arg(plan: &Plan, atom: PVal, dep: &[bool]) -> Option<PVal> {
    let inst = &plan.insts[atom.inst as usize];
    if !matches!(inst.kind, PKind::Prim(_) | PKind::Sq) || inst.tys.len() != 1 {
        return None;
    }
    let mut unknown = inst.args.iter().filter(|a| dep[a.inst as usize]);
    let arg = *unknown.next()?;
    (unknown.next().is_none() && arg.idx == 0 && plan.ty(arg) == Type::F64).then_some(arg)
}

/// The linear system among `plan`'s f64 outputs, if some atom occurs in two of them.
pub fn find_system(plan: &Plan) -> Option<System> {
    find(plan, false)
}

/// One f64 output as a linear system of one row, when an atom occurs in it more than once
/// (`a + b + c + a + b·2 + c`, an unrolled loop's sum) and its atoms share no input (`a +
/// a / b` is not linear in two unknowns): the form collects the coefficients, which no walk of
/// the sum as written does. The e-graph's rewrites do the same for short sums; past a dozen
/// terms its regrouping runs out of nodes, and this is what is left.
pub fn find_row(plan: &Plan) -> Option<System> {
    find(plan, true)
}

fn find(plan: &Plan, one_row: bool) -> Option<System> {
    let dep = plan.depends_on_params();
    let mut outputs = Vec::new();
    let mut forms = Vec::new();
    // Outputs that are a function of one linear form, as candidates for inner rows.
    let mut inner_forms: Vec<(usize, PVal, Affine)> = Vec::new();
    for (i, &o) in plan.outputs.iter().enumerate() {
        if plan.ty(o) != Type::F64 || !dep[o.inst as usize] {
            continue;
        }
        let mut form = affine(plan, o, &dep);
        form.atoms.retain(|a| a.1 != 0.0);
        if form.atoms.iter().any(|a| !a.1.is_finite()) || form.atoms.is_empty() {
            continue;
        }
        if let [(atom, _)] = form.atoms.as_slice() {
            if let Some(l) = univariate_arg(plan, *atom, &dep) {
                let mut lf = affine(plan, l, &dep);
                lf.atoms.retain(|a| a.1 != 0.0);
                if !lf.atoms.is_empty() && lf.atoms.iter().all(|a| a.1.is_finite()) {
                    inner_forms.push((i, l, lf));
                    continue;
                }
            }
        }
        outputs.push(i);
        forms.push(form);
    }
    // An inner form joins the system when it shares an atom with another row; otherwise its
    // output is an ordinary row again.
    let mut inner = Vec::new();
    let mut inner_rows: Vec<Affine> = Vec::new();
    for (k, (i, l, lf)) in inner_forms.iter().enumerate() {
        let shares = lf.atoms.iter().any(|(a, _)| {
            forms.iter().any(|f| f.atoms.iter().any(|x| x.0 == *a))
                || inner_forms
                    .iter()
                    .enumerate()
                    .any(|(j, g)| j != k && g.2.atoms.iter().any(|x| x.0 == *a))
        });
        if shares {
            inner.push((*i, *l, lf.known.clone()));
            inner_rows.push(lf.clone());
        } else {
            let mut form = affine(plan, plan.outputs[*i], &dep);
            form.atoms.retain(|a| a.1 != 0.0);
            outputs.push(*i);
            forms.push(form);
        }
    }
    let rows: Vec<&Affine> = forms.iter().chain(&inner_rows).collect();
    let mut atoms: Vec<PVal> = Vec::new();
    for f in &rows {
        for &(a, _) in &f.atoms {
            if !atoms.contains(&a) {
                atoms.push(a);
            }
        }
    }
    let shared = atoms.iter().any(|a| {
        rows.iter()
            .filter(|f| f.atoms.iter().any(|x| x.0 == *a))
            .count()
            >= 2
    });
    let repeated = || {
        let masks = plan.param_masks();
        let mut seen = 0u64;
        let disjoint = atoms.iter().all(|a| {
            let m = masks[a.inst as usize];
            let fresh = seen & m == 0;
            seen |= m;
            fresh
        });
        let mut uses = vec![0usize; plan.insts.len()];
        for inst in &plan.insts {
            for a in &inst.args {
                uses[a.inst as usize] += 1;
            }
        }
        disjoint && atoms.iter().any(|a| uses[a.inst as usize] >= 2)
    };
    let found = if one_row {
        rows.len() == 1 && repeated()
    } else {
        shared && rows.len() >= 2
    };
    if !found {
        return None;
    }
    let mut matrix = vec![0.0; rows.len() * atoms.len()];
    for (r, f) in rows.iter().enumerate() {
        for &(a, c) in &f.atoms {
            if let Some(col) = atoms.iter().position(|&x| x == a) {
                matrix[r * atoms.len() + col] = c;
            }
        }
    }
    Some(System {
        outputs,
        atoms,
        matrix,
        known: forms.into_iter().map(|f| f.known).collect(),
        inner,
    })
}

/// The plan with `system`'s outputs computed by a linear helper, and a description.
pub fn candidate(plan: &Plan, system: &System, names: &[String]) -> (Plan, String) {
    let mut b = PlanBuilder::new(plan.params.clone());
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut memo = HashMap::new();
    let args: Vec<PVal> = system
        .atoms
        .iter()
        .map(|&a| b.copy(plan, a, &ident, &mut memo))
        .collect();
    let rows = system.outputs.len() + system.inner.len();
    let span = system
        .outputs
        .iter()
        .chain(system.inner.iter().map(|(i, _, _)| i))
        .next()
        .map_or(Span::default(), |&o| {
            plan.insts[plan.outputs[o].inst as usize].span
        });
    let atoms: Vec<String> = system
        .atoms
        .iter()
        .map(|&a| super::plan::plan_text(plan, names, a, 60))
        .collect();
    // Outputs outside the system come first, so that the inverse, which walks the plan from
    // its end, solves the system first and has its unknowns when it reaches them (`(p as i64,
    // p + p)`: p from the sum, then checked against the integer part, not read from θ and then
    // checked against the sum). With inner forms they may be built on the system's rows, and
    // keep their place after it.
    let mut early = HashMap::new();
    if system.inner.is_empty() {
        for (i, &o) in plan.outputs.iter().enumerate() {
            if !system.outputs.contains(&i) {
                early.insert(i, b.copy(plan, o, &ident, &mut memo));
            }
        }
    }
    let lin = b.push(
        PKind::Linear {
            rows: rows as u32,
            matrix: system.matrix.iter().map(|c| c.to_bits()).collect(),
            atoms: atoms.clone(),
        },
        args,
        vec![Type::F64; rows],
        span,
    );
    // Each inner form is the helper's row from now on: the outputs built on it use that row.
    for (j, (_, l, known)) in system.inner.iter().enumerate() {
        let row = PVal {
            inst: lin,
            idx: (system.outputs.len() + j) as u32,
        };
        let l_span = plan.insts[l.inst as usize].span;
        let mut value = b.sum_onto(plan, known, row, l_span, &mut memo);
        if value.idx != 0 {
            // One result of its own (·1 is exact, and keeps the sign of a zero).
            let one = b.konst(Const::F64(1.0));
            value = b.value(
                PKind::Prim(Opcode::Fmul),
                vec![value, one],
                Type::F64,
                l_span,
            );
        }
        memo.insert(l.inst, value.inst);
    }
    let mut outputs = Vec::new();
    for (i, &o) in plan.outputs.iter().enumerate() {
        let Some(r) = system.outputs.iter().position(|&k| k == i) else {
            let copied = match early.get(&i) {
                Some(&v) => v,
                None => b.copy(plan, o, &ident, &mut memo),
            };
            outputs.push(copied);
            continue;
        };
        let out_span = plan.insts[o.inst as usize].span;
        let l = PVal {
            inst: lin,
            idx: r as u32,
        };
        outputs.push(b.sum_onto(plan, &system.known[r], l, out_span, &mut memo));
    }
    let mut out = b.finish();
    out.outputs = outputs;
    let inner: Vec<usize> = system.inner.iter().map(|(i, _, _)| *i).collect();
    let describe = if inner.is_empty() {
        format!(
            "outputs {:?} as a linear system in {}",
            system.outputs,
            atoms.join(", ")
        )
    } else {
        format!(
            "outputs {:?}, and the linear forms inside outputs {:?}, as a linear system in {}",
            system.outputs,
            inner,
            atoms.join(", ")
        )
    };
    (out.pruned(), describe)
}

/// Gauss–Jordan elimination of the columns `cols` of a `rows × n` matrix (partial pivoting):
/// the pivot columns (indices into `cols`, in order) and the row operations as a matrix `E`
/// (`rows × rows`) such that `E·A` restricted to `cols` is in reduced row echelon form. A
/// column whose best pivot is below `1e-12` of the largest entry (at least 1) is not a pivot.
/// Over any [`Float`] (the solver uses f64; a test checks it over f32 too).
fn eliminate<F: Float>(
    matrix: &[F],
    rows: usize,
    n: usize,
    cols: &[usize],
) -> (Vec<usize>, Vec<F>) {
    let mut a: Vec<F> = (0..rows)
        .flat_map(|r| cols.iter().map(move |&c| matrix[r * n + c]))
        .collect();
    let m = cols.len();
    let mut e: Vec<F> = (0..rows * rows)
        .map(|i| {
            if i / rows == i % rows {
                F::one()
            } else {
                F::zero()
            }
        })
        .collect();
    let mut pivots = Vec::new();
    let mut row = 0;
    let scale = a
        .iter()
        .fold(F::zero(), |s, x| s.max(x.abs()))
        .max(F::one());
    let tiny = F::from(1e-12).unwrap_or_else(F::epsilon);
    for col in 0..m {
        if row == rows {
            break;
        }
        let best = (row..rows).max_by(|&p, &q| {
            let (x, y) = (a[p * m + col].abs(), a[q * m + col].abs());
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        });
        let Some(best) = best else { break };
        let pivot = a[best * m + col].abs();
        if pivot.is_nan() || pivot <= tiny * scale {
            continue;
        }
        for k in 0..m {
            a.swap(row * m + k, best * m + k);
        }
        for k in 0..rows {
            e.swap(row * rows + k, best * rows + k);
        }
        let p = a[row * m + col];
        for k in 0..m {
            a[row * m + k] = a[row * m + k] / p;
        }
        for k in 0..rows {
            e[row * rows + k] = e[row * rows + k] / p;
        }
        for r in 0..rows {
            if r == row {
                continue;
            }
            let f = a[r * m + col];
            if f == F::zero() {
                continue;
            }
            for k in 0..m {
                a[r * m + k] = a[r * m + k] - f * a[row * m + k];
            }
            for k in 0..rows {
                e[r * rows + k] = e[r * rows + k] - f * e[row * rows + k];
            }
        }
        pivots.push(col);
        row += 1;
    }
    (pivots, e)
}

/// The rank of the unknown columns `cols` of a `rows × n` matrix.
pub fn rank(matrix: &[f64], rows: usize, n: usize, cols: &[usize]) -> usize {
    eliminate(matrix, rows, n, cols).0.len()
}

/// The helper's forward semantics on constants, bit for bit as its body computes it.
pub fn eval(rows: u32, matrix: &[u64], args: &[Const]) -> Option<Vec<Const>> {
    use pinv_core::semantics::eval as ev;
    let n = args.len();
    (0..rows as usize)
        .map(|r| {
            let mut acc: Option<Const> = None;
            for (c, &a) in args.iter().enumerate() {
                let k = f64::from_bits(*matrix.get(r * n + c)?);
                if k == 0.0 {
                    continue;
                }
                let term = ev(Opcode::Fmul, &[Const::F64(k), a]).ok()?;
                acc = Some(match acc {
                    None => term,
                    Some(s) => ev(Opcode::Fadd, &[s, term]).ok()?,
                });
            }
            Some(acc.unwrap_or(Const::F64(0.0)))
        })
        .collect()
}

/// Emits `Σ matrix[r][c]·args[c]` for each row, as the helper's body and the rule's check do.
fn products(
    rows: usize,
    matrix: &[f64],
    args: &[Value],
    zero: &mut dyn FnMut() -> Value,
    konst: &mut dyn FnMut(f64) -> Value,
    op: &mut dyn FnMut(Opcode, Value, Value) -> Value,
) -> Vec<Value> {
    let n = args.len();
    (0..rows)
        .map(|r| {
            let mut acc: Option<Value> = None;
            for (c, &a) in args.iter().enumerate() {
                let k = matrix[r * n + c];
                if k == 0.0 {
                    continue;
                }
                let kv = konst(k);
                let term = op(Opcode::Fmul, kv, a);
                acc = Some(match acc {
                    None => term,
                    Some(s) => op(Opcode::Fadd, s, term),
                });
            }
            acc.unwrap_or_else(&mut *zero)
        })
        .collect()
}

/// Adds the helper for a [`PKind::Linear`] instruction to `module`, and its rule to `layer`.
pub fn install(
    module: &mut Module,
    layer: &mut Layer,
    inst: &PInst,
    rows: u32,
    matrix: &[u64],
    atoms: Vec<String>,
) -> FuncId {
    let name = super::helpers::fresh(module, "iso.linear");
    let n = inst.args.len();
    let names = (0..n).map(|i| format!("u{i}")).collect();
    let (mut f, b) = super::helpers::new_function(
        &name,
        vec![Type::F64; n],
        vec![Type::F64; rows as usize],
        names,
        inst.span,
    );
    let ps = f.blocks[b].params.clone();
    let matrix: Vec<f64> = matrix.iter().map(|&c| f64::from_bits(c)).collect();
    let span = inst.span;
    let cell = std::cell::RefCell::new(&mut f);
    let rets = products(
        rows as usize,
        &matrix,
        &ps,
        &mut || cell.borrow_mut().ins_const(b, Const::F64(0.0), span),
        &mut |k| cell.borrow_mut().ins_const(b, Const::F64(k), span),
        &mut |op, x, y| cell.borrow_mut().ins_prim(b, op, vec![x, y], span),
    );
    f.ins_return(b, rets, span);
    layer.add(
        Callee::Function(name),
        LinearRule {
            rows: rows as usize,
            matrix,
            atoms,
        },
    );
    super::helpers::add(module, f)
}

/// The rule of an `iso.linear.N` helper: see the module docs.
#[derive(Debug)]
pub struct LinearRule {
    pub rows: usize,
    /// Row-major, `rows × atoms.len()`.
    pub matrix: Vec<f64>,
    /// The atoms' expressions, for θ roles.
    pub atoms: Vec<String>,
}

impl LinearRule {
    /// The unknown columns, the pivots among them (indices into the unknown columns), and the
    /// row operations.
    fn solve_plan(&self, pattern: &Pattern) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let n = self.atoms.len();
        let unknown: Vec<usize> = (0..n).filter(|&c| !pattern.is_known(c)).collect();
        let (pivots, e) = eliminate(&self.matrix, self.rows, n, &unknown);
        (unknown, pivots, e)
    }

    fn free_role(&self, c: usize) -> String {
        format!(
            "{}: free in the linear system of the outputs",
            self.atoms[c]
        )
    }
}

impl InverseRule for LinearRule {
    fn name(&self) -> &str {
        "linear-system"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.atoms.len()
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let (unknown, pivots, _) = self.solve_plan(pattern);
        let thetas = unknown
            .iter()
            .enumerate()
            .filter(|(i, _)| !pivots.contains(i))
            .map(|(_, &c)| ThetaDoc::value(Domain::Real, &self.free_role(c)))
            .collect();
        RuleDoc {
            thetas,
            checks: vec!["the outputs are the matrix products at the answer".to_string()],
            exact: false,
            summary: "Gauss–Jordan elimination: θ for the free unknowns, the pivots from the \
                      outputs"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let n = self.atoms.len();
        if args.len() != n || outputs.len() != self.rows {
            return Err(RuleError::Malformed(
                "a linear helper's operands do not match its matrix".to_string(),
            ));
        }
        let pattern = Pattern::of(args);
        let (unknown, pivots, ops) = self.solve_plan(&pattern);
        let mut vals: Vec<Option<Value>> = args.iter().map(Arg::known).collect();
        for (i, &c) in unknown.iter().enumerate() {
            if !pivots.contains(&i) {
                vals[c] = Some(e.theta(Domain::Real, &self.free_role(c))?);
            }
        }
        self.solve_pivots(e, outputs, &mut vals, (&unknown, &pivots, &ops));
        let out: Vec<Value> = super::helpers::solved(vals)?;
        let cell = std::cell::RefCell::new(&mut *e);
        let again = products(
            self.rows,
            &self.matrix,
            &out,
            &mut || cell.borrow_mut().fc(0.0),
            &mut |k| cell.borrow_mut().fc(k),
            &mut |op, x, y| cell.borrow_mut().op2(op, x, y),
        );
        for (a, &z) in again.into_iter().zip(outputs) {
            e.check_step_equal(a, z, "the outputs are not a solution of the linear system")?;
        }
        Ok(out)
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let (unknown, pivots, ops) = self.solve_plan(pattern);
        // What the inverse holds: the outputs and known columns as it has them, the free
        // columns as θ gives them (the forward values, recorded).
        let mut vals: Vec<Option<Value>> = (0..args.len())
            .map(|c| pattern.is_known(c).then(|| e.replayed(args[c])))
            .collect();
        for (i, &c) in unknown.iter().enumerate() {
            if !pivots.contains(&i) {
                e.record(args[c], &self.free_role(c))?;
                vals[c] = Some(args[c]);
            }
        }
        let held: Vec<Value> = outputs.iter().map(|&z| e.replayed(z)).collect();
        // The pivots the inverse solves from those, which the steps before this one in the
        // walk start from (an output an ulp from its forward value gives pivots an ulp off).
        self.solve_pivots(e, &held, &mut vals, (&unknown, &pivots, &ops));
        for (i, &c) in unknown.iter().enumerate() {
            if let (true, Some(v)) = (pivots.contains(&i), vals[c]) {
                e.note_replay(args[c], v);
            }
        }
        Ok(())
    }
}

impl LinearRule {
    /// Sets the pivot columns of `vals` (the others set: known and free columns) from the
    /// outputs `outputs`: pivot k is row k of `E · (outputs − A · others)`.
    fn solve_pivots(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        vals: &mut [Option<Value>],
        (unknown, pivots, ops): (&[usize], &[usize], &[f64]),
    ) {
        let n = self.atoms.len();
        // Right-hand side: the outputs minus the known and free columns.
        let mut rhs: Vec<Value> = outputs.to_vec();
        for (c, v) in vals.iter().enumerate() {
            let pivot_col = unknown
                .iter()
                .position(|&u| u == c)
                .is_some_and(|i| pivots.contains(&i));
            let Some(v) = v.filter(|_| !pivot_col) else {
                continue;
            };
            for (r, slot) in rhs.iter_mut().enumerate() {
                let k = self.matrix[r * n + c];
                if k != 0.0 {
                    let kv = e.fc(k);
                    let t = e.fmul(kv, v);
                    *slot = e.fsub(*slot, t);
                }
            }
        }
        // Pivot k is row k of E·rhs.
        for (k, &p) in pivots.iter().enumerate() {
            let mut acc: Option<Value> = None;
            for (r, &z) in rhs.iter().enumerate() {
                let w = ops[k * self.rows + r];
                if w == 0.0 {
                    continue;
                }
                let wv = e.fc(w);
                let t = e.fmul(wv, z);
                acc = Some(match acc {
                    None => t,
                    Some(s) => e.fadd(s, t),
                });
            }
            vals[unknown[p]] = Some(match acc {
                Some(v) => v,
                None => e.fc(0.0),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eliminate;

    /// `E·A` over the eliminated columns is the identity on the pivots (reduced row echelon
    /// form), in f64 and in f32 alike; a dependent column is no pivot.
    #[test]
    fn elimination_is_generic_over_the_float_type() {
        // Columns 0 and 2 independent, column 1 = 2 × column 0.
        let a = [2.0, 4.0, 1.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0];
        let (pivots, e) = eliminate(&a, 3, 3, &[0, 1, 2]);
        assert_eq!(pivots, vec![0, 2]);
        let apply = |e: &[f64], col: usize| -> Vec<f64> {
            (0..3)
                .map(|r| (0..3).map(|k| e[r * 3 + k] * a[k * 3 + col]).sum())
                .collect()
        };
        let close = |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(p, q)| (p - q).abs() < 1e-12);
        assert!(close(&apply(&e, 0), &[1.0, 0.0, 0.0]), "{e:?}");
        assert!(close(&apply(&e, 2), &[0.0, 1.0, 0.0]), "{e:?}");
        let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
        let (pivots32, e32) = eliminate(&a32, 3, 3, &[0, 1, 2]);
        assert_eq!(pivots32, pivots);
        for (x, y) in e32.iter().zip(&e) {
            assert!((f64::from(*x) - y).abs() < 1e-6, "{e32:?} {e:?}");
        }
    }
}
