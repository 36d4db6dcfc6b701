//! Linear systems whose coefficients are known only at run time: rotations, scalings, mixing
//! with a weight that is itself an input.
//!
//! `(c·x − d·y, d·x + c·y)` with `c = s·cos t`, `d = s·sin t` uses x and y in both outputs.
//! Inverted one output at a time almost no θ passes; the constant-coefficient solver
//! ([`super::linear`]) does not apply, as c and d are not constants. But once s and t are
//! chosen, the outputs are linear in (x, y): θ gives s and t, and (x, y) is the solution of a
//! 2×2 system.
//!
//! - **Recognition** ([`find_system`]): for a set U of f64 inputs (as many as the f64 outputs
//!   that use them, 2 to 4), every such output is `Σⱼ Aᵢⱼ·uⱼ + bᵢ` with `Aᵢⱼ` and `bᵢ` products
//!   of values that do not depend on U (through `+`, `−`, unary `−`, products and division by a
//!   constant). Of the sets that qualify, the one whose coefficients have the fewest factors
//!   is taken (for a rotation: x and y, not the scale).
//! - **The rewritten plan** ([`candidate`]): the coefficients and constant parts are computed
//!   as values, the outputs by one helper `iso.linrt.N(A…, b…, u…)` ([`PKind::LinearRt`]), and
//!   the other inputs the coefficients use are read from θ first ([`PKind::Given`]), so that
//!   the coefficients are known when the helper is inverted.
//! - **The rule** ([`LinearRtRule`]): Gaussian elimination with partial pivoting on the
//!   run-time matrix (unrolled, the row swaps as selects). Where a pivot is at or below 10⁻¹²
//!   of the matrix's largest entry, the matrix is taken as singular and complete pivoting
//!   (rows and columns swapped so that each pivot is the largest entry left) finds its rank r:
//!   the unknowns of the n − r columns without a pivot are free, θ names each (read only then:
//!   the null space's directions), and the r pivot rows give the others. An x is in reach
//!   whatever the rank, the zero matrix (r = 0) included; where y is not in the matrix's image,
//!   the final check makes it a domain error. The PGF takes the same decisions on the same
//!   matrix (its entries are computed from values θ gives exactly) and records the free
//!   unknowns in the order the inverse reads them.
//! - **The elimination is written once**, over [`Arith`] ([`super::arith`]): partial and
//!   complete pivoting, back substitution and the column permutation emit the rule's IR and run
//!   on any [`num_traits::Float`] in [`solve_plain`], which gives the generated inverse's
//!   unknowns bit for bit on f64 (tested) and is tested in f32 too.
//! - Where a factor of every coefficient is an input (a rotation's scale), it is drawn from the
//!   nonzero reals: a scale of 0 would make the matrix zero, and a random θ for its unknowns
//!   would almost never give y. An x with that factor 0 is out of reach (a gap).
//!
//! The inverse's final check runs the original function, so the regrouping of sums (exact
//! only up to rounding) never makes an answer wrong.

use super::arith::{Arith, Plain};
use super::plan::{fold_dag, PInst, PKind, PVal, Plan, PlanBuilder};
use num_traits::Float;
use pinv_core::ir::{Const, Domain, FuncId, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc};
use std::collections::HashMap;

/// The most unknowns one system solves.
const MAX_N: usize = 4;

/// A term of a coefficient or of a constant part: `scale · Π factors`.
type Term = (f64, Vec<PVal>);

/// An output as `Σ coeffs[u]·u + known`, for the inputs u of a set.
#[derive(Clone, Debug, Default)]
struct Form {
    coeffs: HashMap<u32, Vec<Term>>,
    known: Vec<Term>,
}

impl Form {
    /// `self` with `change` applied to every term, coefficients and known part alike.
    fn map_terms(mut self, mut change: impl FnMut(&mut Term)) -> Form {
        for terms in self
            .coeffs
            .values_mut()
            .chain(std::iter::once(&mut self.known))
        {
            terms.iter_mut().for_each(&mut change);
        }
        self
    }

    fn scale(self, k: f64) -> Form {
        self.map_terms(|t| t.0 *= k)
    }

    fn times(self, f: PVal) -> Form {
        self.map_terms(|t| t.1.push(f))
    }

    fn add(mut self, o: Form) -> Form {
        for (u, terms) in o.coeffs {
            self.coeffs.entry(u).or_default().extend(terms);
        }
        self.known.extend(o.known);
        self
    }
}

/// A system found in a plan (see the module docs).
#[derive(Clone, Debug)]
pub struct System {
    /// The outputs solved (indices into the plan's outputs), one row each.
    outputs: Vec<usize>,
    /// The unknown inputs (columns).
    unknowns: Vec<u32>,
    /// Row-major coefficient terms.
    matrix: Vec<Vec<Term>>,
    /// Per row, the constant part.
    known: Vec<Vec<Term>>,
    /// The inputs the coefficients and constant parts use: read from θ first.
    givens: Vec<u32>,
    /// Those of them that are a factor of every coefficient (zero would make the matrix zero):
    /// read from the nonzero reals.
    nonzero: Vec<u32>,
}

/// Whether `p` is a factor of value `v` (`v` is zero when `p` is). Each value is looked at
/// once: products share operands (`a = a * a`, repeated), and a tree walk would be exponential.
fn has_factor(plan: &Plan, v: PVal, p: u32) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        let inst = &plan.insts[v.inst as usize];
        match (&inst.kind, inst.args.as_slice()) {
            (PKind::Param(q), _) if *q == p => return true,
            (PKind::Prim(Opcode::Fmul), &[a, b]) => work.extend([b, a]),
            (PKind::Prim(Opcode::Fneg), &[a]) | (PKind::Prim(Opcode::Fdiv), &[a, _]) => {
                work.push(a)
            }
            _ => {}
        }
    }
    false
}

/// How a value's [`Form`] is made from its operands' ([`form`]).
enum Shape {
    /// Free of the inputs in the set: a known term.
    Known,
    /// One of the inputs.
    Param(u32),
    /// `a + k·b` (`k` is ±1).
    Sum(PVal, PVal, f64),
    /// `k·a`.
    Scaled(PVal, f64),
    /// `a·f`, with `f` free of the inputs.
    Times(PVal, PVal),
    /// Not linear in the inputs.
    Other,
}

fn shape(plan: &Plan, v: PVal, set: u64, dep: &[u64]) -> Shape {
    if dep[v.inst as usize] & set == 0 {
        return Shape::Known;
    }
    let inst = &plan.insts[v.inst as usize];
    let free = |a: PVal| dep[a.inst as usize] & set == 0;
    let constant = |a: PVal| match plan.constant(a) {
        Some(Const::F64(c)) if c.is_finite() && c != 0.0 => Some(c),
        _ => None,
    };
    match (&inst.kind, inst.args.as_slice()) {
        (PKind::Param(p), _) => Shape::Param(*p),
        (PKind::Prim(Opcode::Fadd), &[a, b]) => Shape::Sum(a, b, 1.0),
        (PKind::Prim(Opcode::Fsub), &[a, b]) => Shape::Sum(a, b, -1.0),
        (PKind::Prim(Opcode::Fneg), &[a]) => Shape::Scaled(a, -1.0),
        (PKind::Prim(Opcode::Fmul), &[a, b]) => match (constant(a), constant(b)) {
            (Some(k), _) => Shape::Scaled(b, k),
            (_, Some(k)) => Shape::Scaled(a, k),
            _ if free(a) => Shape::Times(b, a),
            _ if free(b) => Shape::Times(a, b),
            _ => Shape::Other,
        },
        (PKind::Prim(Opcode::Fdiv), &[a, b]) => match constant(b) {
            Some(k) => Shape::Scaled(a, 1.0 / k),
            None => Shape::Other,
        },
        _ => Shape::Other,
    }
}

/// The most terms a [`Form`] may have: a larger one is not taken as linear. Sums that share
/// operands (`a = a + a`, repeated) would double the form at every level.
const MAX_TERMS: usize = 4096;

/// The form of f64 value `v` in the inputs `set`, if it is linear in them.
///
/// Each value's form is worked out once, operands first ([`fold_dag`]): a plan's values form a
/// DAG, which a tree walk would take exponential time over.
fn form(plan: &Plan, v: PVal, set: u64, dep: &[u64]) -> Option<Form> {
    let operands = |u| match shape(plan, u, set, dep) {
        Shape::Sum(a, b, _) => vec![a, b],
        Shape::Scaled(a, _) | Shape::Times(a, _) => vec![a],
        Shape::Known | Shape::Param(_) | Shape::Other => Vec::new(),
    };
    fold_dag(v, operands, |u, done: &HashMap<PVal, Form>| {
        let made = match shape(plan, u, set, dep) {
            Shape::Known => Form {
                coeffs: HashMap::new(),
                known: vec![(1.0, vec![u])],
            },
            Shape::Param(p) => Form {
                coeffs: HashMap::from([(p, vec![(1.0, Vec::new())])]),
                known: Vec::new(),
            },
            Shape::Sum(a, b, k) => done.get(&a)?.clone().add(done.get(&b)?.clone().scale(k)),
            Shape::Scaled(a, k) => done.get(&a)?.clone().scale(k),
            Shape::Times(a, f) => done.get(&a)?.clone().times(f),
            Shape::Other => return None,
        };
        let terms = made.known.len() + made.coeffs.values().map(Vec::len).sum::<usize>();
        (terms <= MAX_TERMS).then_some(made)
    })
}

/// The system with run-time coefficients among `plan`'s f64 outputs, if there is one that the
/// constant-coefficient solver does not cover (see the module docs).
pub fn find_system(plan: &Plan) -> Option<System> {
    if plan.params.len() > 64 {
        return None;
    }
    let dep = plan.param_masks();
    let f64_params: Vec<u32> = (0..plan.params.len() as u32)
        .filter(|&p| plan.params[p as usize] == Type::F64)
        .collect();
    let outputs: Vec<usize> = (0..plan.outputs.len())
        .filter(|&i| plan.ty(plan.outputs[i]) == Type::F64)
        .collect();
    let mut best: Option<(usize, System)> = None;
    for n in 2..=MAX_N.min(outputs.len()) {
        for set in subsets(&f64_params, n) {
            let mask = set.iter().fold(0u64, |m, &p| m | 1 << p);
            // The outputs that use the set: exactly n, each linear in it.
            let rows: Vec<usize> = outputs
                .iter()
                .copied()
                .filter(|&i| dep[plan.outputs[i].inst as usize] & mask != 0)
                .collect();
            if rows.len() != n {
                continue;
            }
            let Some(forms) = rows
                .iter()
                .map(|&i| form(plan, plan.outputs[i], mask, &dep))
                .collect::<Option<Vec<Form>>>()
            else {
                continue;
            };
            let matrix: Vec<Vec<Term>> = forms
                .iter()
                .flat_map(|f| {
                    set.iter()
                        .map(|u| f.coeffs.get(u).cloned().unwrap_or_default())
                })
                .collect();
            // Run-time coefficients somewhere (else the constant solver's), and every column used.
            let runtime = matrix.iter().flatten().any(|t| !t.1.is_empty());
            let used = (0..n).all(|c| (0..n).any(|r| !matrix[r * n + c].is_empty()));
            if !runtime || !used {
                continue;
            }
            let mut givens: Vec<u32> = Vec::new();
            for t in matrix
                .iter()
                .flatten()
                .chain(forms.iter().flat_map(|f| &f.known))
            {
                for factor in &t.1 {
                    let d = dep[factor.inst as usize];
                    for p in 0..plan.params.len() as u32 {
                        if d >> p & 1 == 1 && !givens.contains(&p) {
                            givens.push(p);
                        }
                    }
                }
            }
            givens.sort_unstable();
            let nonzero: Vec<u32> = givens
                .iter()
                .copied()
                .filter(|&p| {
                    plan.params[p as usize] == Type::F64
                        && matrix
                            .iter()
                            .flatten()
                            .all(|t| t.1.iter().any(|&f| has_factor(plan, f, p)))
                })
                .collect();
            let cost: usize = matrix.iter().flatten().map(|t| t.1.len()).sum();
            if best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((
                    cost,
                    System {
                        outputs: rows,
                        unknowns: set,
                        matrix,
                        known: forms.into_iter().map(|f| f.known).collect(),
                        givens,
                        nonzero,
                    },
                ));
            }
        }
    }
    best.map(|b| b.1)
}

/// The subsets of `items` of size `n`, in order.
fn subsets(items: &[u32], n: usize) -> Vec<Vec<u32>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], n - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

/// `Σ scale · Π factors` as plan values (copied from `from`), or `0.0`.
fn sum_of(
    b: &mut PlanBuilder,
    from: &Plan,
    terms: &[Term],
    span: Span,
    memo: &mut HashMap<u32, u32>,
) -> PVal {
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut acc: Option<PVal> = None;
    for (scale, factors) in terms {
        let mut prod: Option<PVal> = None;
        for &f in factors {
            let v = b.copy(from, f, &ident, memo);
            prod = Some(match prod {
                None => v,
                Some(p) => b.value(PKind::Prim(Opcode::Fmul), vec![p, v], Type::F64, span),
            });
        }
        let term = match (prod, *scale) {
            (Some(p), 1.0) => p,
            (Some(p), k) => {
                let k = b.konst(Const::F64(k));
                b.value(PKind::Prim(Opcode::Fmul), vec![k, p], Type::F64, span)
            }
            (None, k) => b.konst(Const::F64(k)),
        };
        acc = Some(match acc {
            None => term,
            Some(a) => b.value(PKind::Prim(Opcode::Fadd), vec![a, term], Type::F64, span),
        });
    }
    acc.unwrap_or_else(|| b.konst(Const::F64(0.0)))
}

/// The plan with `system`'s outputs computed by a run-time linear helper, its coefficient
/// inputs read from θ first, and a description.
pub fn candidate(plan: &Plan, system: &System, names: &[String]) -> (Plan, String) {
    let n = system.unknowns.len();
    let mut b = PlanBuilder::new(plan.params.clone());
    let mut memo = HashMap::new();
    let span = system.outputs.first().map_or(Span::default(), |&o| {
        plan.insts[plan.outputs[o].inst as usize].span
    });
    let mut args: Vec<PVal> = system
        .matrix
        .iter()
        .map(|terms| sum_of(&mut b, plan, terms, span, &mut memo))
        .collect();
    for terms in &system.known {
        let k = sum_of(&mut b, plan, terms, span, &mut memo);
        args.push(k);
    }
    args.extend(system.unknowns.iter().map(|&p| b.param(p as usize)));
    let h = b.push(
        PKind::LinearRt { n: n as u32 },
        args,
        vec![Type::F64; n],
        span,
    );
    let mut outputs = b.outputs_replacing(plan, &system.outputs, h, &mut memo);
    // The inputs the coefficients use are read from θ first.
    let name = |p: u32| {
        names
            .get(p as usize)
            .cloned()
            .unwrap_or_else(|| format!("p{p}"))
    };
    if let Some(first) = system.outputs.first().copied() {
        for &p in &system.givens {
            let out = outputs[first];
            outputs[first] = b.value(
                PKind::Given {
                    pivot: name(p),
                    nonzero: system.nonzero.contains(&p),
                    free: true,
                },
                vec![out, b.param(p as usize)],
                Type::F64,
                span,
            );
        }
    }
    let mut out = b.finish();
    out.outputs = outputs;
    let unknowns: Vec<String> = system.unknowns.iter().map(|&p| name(p)).collect();
    let givens: Vec<String> = system.givens.iter().map(|&p| name(p)).collect();
    let text = format!(
        "outputs {:?} as a linear system in {} with coefficients from {} (chosen first)",
        system.outputs,
        unknowns.join(", "),
        givens.join(", ")
    );
    (out.pruned(), text)
}

/// The helper's forward semantics on constants: `A·u + b`.
pub fn eval(n: usize, args: &[Const]) -> Option<Vec<Const>> {
    use pinv_core::semantics::eval as ev;
    (0..n)
        .map(|r| {
            let mut acc = args.get(n * n + r).copied()?;
            for c in 0..n {
                let t = ev(
                    Opcode::Fmul,
                    &[*args.get(r * n + c)?, *args.get(n * n + n + c)?],
                )
                .ok()?;
                acc = ev(Opcode::Fadd, &[acc, t]).ok()?;
            }
            Some(acc)
        })
        .collect()
}

/// Emits `A·u + b` row by row, as the helper's body and the rule's check compute it.
fn products<O: Ops + ?Sized>(
    o: &mut O,
    n: usize,
    a: &[Value],
    b: &[Value],
    u: &[Value],
) -> Vec<Value> {
    (0..n)
        .map(|r| {
            let mut acc = b[r];
            for c in 0..n {
                let t = o.fmul(a[r * n + c], u[c]);
                acc = o.fadd(acc, t);
            }
            acc
        })
        .collect()
}

/// Adds the helper for a [`PKind::LinearRt`] instruction to `module`, and its rule to `layer`.
pub fn install(module: &mut Module, layer: &mut Layer, inst: &PInst, n: u32) -> FuncId {
    let n = n as usize;
    let params = (0..n * n + 2 * n)
        .map(|i| match i {
            i if i < n * n => format!("a{}{}", i / n, i % n),
            i if i < n * n + n => format!("b{}", i - n * n),
            i => format!("u{}", i - n * n - n),
        })
        .map(|name| (name, Type::F64))
        .collect();
    let body = |e: &mut Emitter<'_>, ps: &[Option<Value>]| -> Vec<Value> {
        let ps: Vec<Value> = ps.iter().flatten().copied().collect();
        products(e, n, &ps[..n * n], &ps[n * n..n * n + n], &ps[n * n + n..])
    };
    let sig = (params, vec![Type::F64; n]);
    super::helpers::emitted_helper(
        module,
        layer,
        "iso.linrt",
        sig,
        inst.span,
        body,
        LinearRtRule { n },
    )
}

/// The rule of an `iso.linrt.N` helper: see the module docs.
#[derive(Debug)]
pub struct LinearRtRule {
    pub n: usize,
}

/// The role of the θ that names an unknown a singular matrix leaves free.
const FREE: &str = "an unknown the singular system leaves free";

impl InverseRule for LinearRtRule {
    fn name(&self) -> &str {
        "linear-system-run-time"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        let n = self.n;
        pattern.arity() == n * n + 2 * n
            && (0..n * n + n).all(|i| pattern.is_known(i))
            && (n * n + n..n * n + 2 * n).all(|i| !pattern.is_known(i))
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: (0..self.n)
                .map(|_| ThetaDoc {
                    when: Some("the matrix is singular".to_string()),
                    ..ThetaDoc::value(Domain::Real, FREE)
                })
                .collect(),
            checks: vec!["the outputs are the matrix products at the answer".to_string()],
            exact: false,
            summary: "Gaussian elimination with partial pivoting on the run-time matrix; \
                      complete pivoting where it is singular"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let n = self.n;
        if outputs.len() != n || !self.covers(&Pattern::of(args)) {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        }
        let known: Vec<Value> = args[..n * n + n]
            .iter()
            .map(|a| a.known().ok_or(RuleError::Uncovered(Pattern::of(args))))
            .collect::<Result<_, _>>()?;
        let (a0, b0) = known.split_at(n * n);
        let r0: Vec<Value> = outputs
            .iter()
            .zip(b0)
            .map(|(&y, &b)| e.fsub(y, b))
            .collect();
        let regular = partial_pivoting(e, n, a0, &r0);
        let types = vec![Type::F64; n];
        let u = e.if_else(
            regular.nonsingular,
            &types,
            |e| Ok(back_substitution(e, n, &regular.a, &regular.r)),
            |e| {
                // Singular: the columns complete pivoting leaves without a pivot are free; θ
                // names them, and the pivot rows give the others.
                let ech = complete_pivoting(e, n, a0, &r0);
                // The unknowns from the last position up (as back substitution goes).
                let mut w: Vec<Value> = Vec::with_capacity(n);
                for k in (0..n).rev() {
                    let after: Vec<Value> = w.iter().rev().copied().collect();
                    let (a, r) = (&ech.a, ech.r[k]);
                    let v = e.if_value(
                        ech.free[k],
                        Type::F64,
                        |e| e.theta(Domain::Real, FREE),
                        |e| Ok(solve_row(e, n, k, a, r, &after)),
                    )?;
                    w.push(v);
                }
                w.reverse();
                Ok((0..n).map(|c| ech.unpermute(e, &w, c)).collect())
            },
        )?;
        let again = products(e, n, a0, b0, &u);
        for (v, &y) in again.into_iter().zip(outputs) {
            e.check_step_equal(v, y, "the outputs are not a solution of the linear system")?;
        }
        Ok(known.into_iter().chain(u).collect())
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        _pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let n = self.n;
        let (a0, rest) = args.split_at(n * n);
        let u = rest
            .get(n..2 * n)
            .ok_or_else(|| RuleError::Malformed("the unknowns' forward values".into()))?;
        // The same decisions as the inverse, on the same matrix (its entries are computed from
        // values θ gives exactly): where it is singular, record the free columns' unknowns in
        // the order the inverse reads them.
        let regular = partial_pivoting(e, n, a0, &[]);
        e.branch(
            regular.nonsingular,
            |_| Ok(()),
            |e| {
                let ech = complete_pivoting(e, n, a0, &[]);
                for k in (0..n).rev() {
                    let v = ech.permuted(e, u, k);
                    e.branch(ech.free[k], |e| e.record(v, FREE), |_| Ok(()))?;
                }
                Ok(())
            },
        )
    }
}

/// The largest |entry| of the matrix `a`, at least the smallest normal, times 10⁻¹²: a pivot
/// at or below it is taken for 0.
pub fn tiny_pivot<A: Arith>(e: &mut A, a: &[A::F]) -> A::F {
    let mut scale = e.c(f64::MIN_POSITIVE);
    for &v in a {
        let m = e.abs(v);
        scale = e.max(scale, m);
    }
    let eps = e.c(1e-12);
    e.mul(scale, eps)
}

/// Swaps `x` and `y` where `cond` holds.
fn swap_if<A: Arith>(e: &mut A, cond: A::B, x: &mut A::F, y: &mut A::F) {
    let (a, b) = (*x, *y);
    *x = e.choose(cond, b, a);
    *y = e.choose(cond, a, b);
}

/// Swaps rows `k < i` of the matrix `a` and of the right-hand sides `r` (empty where only the
/// matrix matters) where `cond` holds.
fn swap_rows_if<A: Arith>(
    e: &mut A,
    cond: A::B,
    n: usize,
    (k, i): (usize, usize),
    a: &mut [A::F],
    r: &mut [A::F],
) {
    for j in 0..n {
        let (lo, hi) = a.split_at_mut(i * n);
        swap_if(e, cond, &mut lo[k * n + j], &mut hi[j]);
    }
    if !r.is_empty() {
        let (lo, hi) = r.split_at_mut(i);
        swap_if(e, cond, &mut lo[k], &mut hi[0]);
    }
}

/// Subtracts multiples of row `k` (pivot `a[k][k]`) from the rows below it, in `a` and in the
/// right-hand sides `r` (empty where only the matrix matters).
fn eliminate_below<A: Arith>(e: &mut A, n: usize, k: usize, a: &mut [A::F], r: &mut [A::F]) {
    let p = a[k * n + k];
    for i in k + 1..n {
        let f = e.div(a[i * n + k], p);
        for j in k..n {
            let t = e.mul(f, a[k * n + j]);
            a[i * n + j] = e.sub(a[i * n + j], t);
        }
        if !r.is_empty() {
            let t = e.mul(f, r[k]);
            r[i] = e.sub(r[i], t);
        }
    }
}

/// The upper-triangular system partial pivoting leaves.
pub struct Triangular<A: Arith> {
    pub a: Vec<A::F>,
    pub r: Vec<A::F>,
    /// Every pivot is above [`tiny_pivot`].
    pub nonsingular: A::B,
}

/// Gaussian elimination with partial pivoting (the row swaps as selects) of `a0` (n × n, row
/// major) and the right-hand sides `r0` (empty where only the matrix matters).
pub fn partial_pivoting<A: Arith>(e: &mut A, n: usize, a0: &[A::F], r0: &[A::F]) -> Triangular<A> {
    let mut a: Vec<A::F> = a0.to_vec();
    let mut r: Vec<A::F> = r0.to_vec();
    let tiny = tiny_pivot(e, &a);
    let mut nonsingular = e.yes();
    for k in 0..n {
        // Bring the largest |a[i][k]| (i ≥ k) to row k, by swaps.
        for i in k + 1..n {
            let ak = e.abs(a[k * n + k]);
            let ai = e.abs(a[i * n + k]);
            let swap = e.gt(ai, ak);
            swap_rows_if(e, swap, n, (k, i), &mut a, &mut r);
        }
        let mag = e.abs(a[k * n + k]);
        let ok = e.gt(mag, tiny);
        nonsingular = e.and(nonsingular, ok);
        eliminate_below(e, n, k, &mut a, &mut r);
    }
    Triangular { a, r, nonsingular }
}

/// Unknown `k` of an upper-triangular system, from the unknowns after it (`after[j]` is
/// unknown `k + 1 + j`).
pub fn solve_row<A: Arith>(
    e: &mut A,
    n: usize,
    k: usize,
    a: &[A::F],
    r: A::F,
    after: &[A::F],
) -> A::F {
    let mut acc = r;
    for (j, &w) in (k + 1..n).zip(after) {
        let t = e.mul(a[k * n + j], w);
        acc = e.sub(acc, t);
    }
    e.div(acc, a[k * n + k])
}

/// Back substitution in the triangular system of nonzero pivots.
pub fn back_substitution<A: Arith>(e: &mut A, n: usize, a: &[A::F], r: &[A::F]) -> Vec<A::F> {
    let mut u: Vec<A::F> = Vec::with_capacity(n);
    for k in (0..n).rev() {
        // `u` holds the unknowns after k, last first.
        let after: Vec<A::F> = u.iter().rev().copied().collect();
        let v = solve_row(e, n, k, a, r[k], &after);
        u.push(v);
    }
    u.reverse();
    u
}

/// Row echelon form by complete pivoting: rows and columns swapped (as selects) so that each
/// pivot is the largest |entry| left. Position k holds column `perm[k]` (its index, as a
/// float), and `free[k]` holds from the first position whose largest entry left is at or below
/// [`tiny_pivot`]: that column and every later one have no pivot, so the unknowns there are
/// free, and the rows above give the others.
pub struct Echelon<A: Arith> {
    pub a: Vec<A::F>,
    pub r: Vec<A::F>,
    pub perm: Vec<A::F>,
    pub free: Vec<A::B>,
}

impl<A: Arith> Echelon<A> {
    /// The unknown of column `c`, from `w` in the echelon's column order.
    pub fn unpermute(&self, e: &mut A, w: &[A::F], c: usize) -> A::F {
        let column = e.c(c as f64);
        let mut acc = w[0];
        for (&p, &wk) in self.perm.iter().zip(w).skip(1) {
            let here = e.eq(p, column);
            acc = e.choose(here, wk, acc);
        }
        acc
    }

    /// The unknown at echelon position `k`, from `u` in the original column order.
    pub fn permuted(&self, e: &mut A, u: &[A::F], k: usize) -> A::F {
        let mut acc = u[0];
        for (c, &uc) in u.iter().enumerate().skip(1) {
            let column = e.c(c as f64);
            let here = e.eq(self.perm[k], column);
            acc = e.choose(here, uc, acc);
        }
        acc
    }
}

/// [`Echelon`] of `a0` and the right-hand sides `r0` (empty where only the matrix matters).
pub fn complete_pivoting<A: Arith>(e: &mut A, n: usize, a0: &[A::F], r0: &[A::F]) -> Echelon<A> {
    let mut a: Vec<A::F> = a0.to_vec();
    let mut r: Vec<A::F> = r0.to_vec();
    let mut perm: Vec<A::F> = (0..n).map(|j| e.c(j as f64)).collect();
    let tiny = tiny_pivot(e, &a);
    let mut free = Vec::with_capacity(n);
    let mut no_pivot = e.no();
    for k in 0..n {
        // Where the largest |a[i][j]| with i, j ≥ k is (the first of equals).
        let mut best = e.abs(a[k * n + k]);
        let at_k = e.c(k as f64);
        let (mut bi, mut bj) = (at_k, at_k);
        for i in k..n {
            for j in k..n {
                if (i, j) == (k, k) {
                    continue;
                }
                let m = e.abs(a[i * n + j]);
                let larger = e.gt(m, best);
                best = e.choose(larger, m, best);
                let (iv, jv) = (e.c(i as f64), e.c(j as f64));
                bi = e.choose(larger, iv, bi);
                bj = e.choose(larger, jv, bj);
            }
        }
        // Row k ↔ row bi, then column k ↔ column bj (in every row, and in `perm`).
        for i in k + 1..n {
            let iv = e.c(i as f64);
            let here = e.eq(bi, iv);
            swap_rows_if(e, here, n, (k, i), &mut a, &mut r);
        }
        for j in k + 1..n {
            let jv = e.c(j as f64);
            let here = e.eq(bj, jv);
            for i in 0..n {
                let (lo, hi) = a.split_at_mut(i * n + j);
                swap_if(e, here, &mut lo[i * n + k], &mut hi[0]);
            }
            let (lo, hi) = perm.split_at_mut(j);
            swap_if(e, here, &mut lo[k], &mut hi[0]);
        }
        let pivot = e.gt(best, tiny);
        let none = e.not(pivot);
        no_pivot = e.or(no_pivot, none);
        free.push(no_pivot);
        eliminate_below(e, n, k, &mut a, &mut r);
    }
    Echelon { a, r, perm, free }
}

/// The rule's solution on plain floats: `u` with `A·u + b = y` (`a` row major), as the inverse
/// computes it: partial pivoting where every pivot is above [`tiny_pivot`]; otherwise complete
/// pivoting, with `free()` naming the unknowns of the columns without a pivot, asked in the
/// order the inverse reads their θ (the last echelon position first). On f64 it gives the
/// generated inverse's unknowns bit for bit (tested).
pub fn solve_plain<F: Float>(
    n: usize,
    a: &[F],
    b: &[F],
    y: &[F],
    free: &mut dyn FnMut() -> F,
) -> Vec<F> {
    let e = &mut Plain::<F>::new();
    let r0: Vec<F> = y.iter().zip(b).map(|(&yi, &bi)| e.sub(yi, bi)).collect();
    let regular = partial_pivoting(e, n, a, &r0);
    if regular.nonsingular {
        return back_substitution(e, n, &regular.a, &regular.r);
    }
    let ech = complete_pivoting(e, n, a, &r0);
    let mut w: Vec<F> = vec![F::nan(); n];
    for k in (0..n).rev() {
        w[k] = if ech.free[k] {
            free()
        } else {
            solve_row(e, n, k, &ech.a, ech.r[k], &w[k + 1..])
        };
    }
    (0..n).map(|c| ech.unpermute(e, &w, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Program;

    /// `A·u + b = y` holds within `tol` (relative to max(1, |y|)).
    fn solves<F: Float + std::fmt::Debug>(n: usize, a: &[F], b: &[F], y: &[F], u: &[F], tol: F) {
        for r in 0..n {
            let mut acc = b[r];
            for c in 0..n {
                acc = acc + a[r * n + c] * u[c];
            }
            let scale = y[r].abs().max(F::one());
            assert!(
                (acc - y[r]).abs() <= tol * scale,
                "row {r}: {acc:?} is not {:?}",
                y[r]
            );
        }
    }

    /// The elimination on plain floats, in f64 and f32: a regular matrix, a rank-deficient one
    /// (θ names the pivotless column's unknown), and the zero matrix (θ names every unknown).
    fn solves_in<F: Float + std::fmt::Debug>(tol: F) {
        let f = |v: f64| F::from(v).unwrap();
        let fs = |v: &[f64]| v.iter().map(|&x| f(x)).collect::<Vec<F>>();
        let mut none = || -> F { panic!("no θ needed") };
        let (a, b, y) = (fs(&[0.0, 2.0, 3.0, -1.0]), fs(&[1.0, 0.0]), fs(&[5.0, 4.0]));
        let u = solve_plain(2, &a, &b, &y, &mut none);
        solves(2, &a, &b, &y, &u, tol);
        // Rank 2 of 3: the rows of the cyclic gain −1 sum to 0, and y on that plane.
        let a = fs(&[-1.0, 1.0, 0.0, 0.0, -1.0, 1.0, 1.0, 0.0, -1.0]);
        let (b, y) = (fs(&[0.0; 3]), fs(&[1.0, 2.0, -3.0]));
        let mut named = Vec::new();
        let u = solve_plain(3, &a, &b, &y, &mut || {
            named.push(());
            f(0.75)
        });
        assert_eq!(named.len(), 1);
        solves(3, &a, &b, &y, &u, tol);
        // Rank 1 with its largest entry off the first position: rows and columns swap, and
        // the answer comes back in the original column order.
        let (a, b, y) = (fs(&[1.0, 2.0, 2.0, 4.0]), fs(&[0.0, 1.0]), fs(&[3.0, 7.0]));
        let u = solve_plain(2, &a, &b, &y, &mut || f(-0.5));
        solves(2, &a, &b, &y, &u, tol);
        // The pivot is the 4, in column 1: column 0 is the free one.
        assert_eq!(u[0], f(-0.5), "{u:?}: θ names the column without a pivot");
        // The zero matrix: each unknown is θ's, the last position first.
        let mut values = vec![f(2.0), f(-4.0)];
        let u = solve_plain(
            2,
            &fs(&[0.0; 4]),
            &fs(&[1.0, 1.0]),
            &fs(&[1.0, 1.0]),
            &mut || values.remove(0),
        );
        assert_eq!(u, fs(&[-4.0, 2.0]));
    }

    #[test]
    fn elimination_solves_regular_and_singular_systems_in_f64_and_f32() {
        solves_in::<f64>(1e-12);
        solves_in::<f32>(1e-5);
    }

    /// The generated inverse's unknowns are [`solve_plain`]'s on f64, bit for bit, whether the
    /// matrix θ gives is regular, rank-deficient or zero.
    #[test]
    fn the_generated_elimination_is_the_plain_one_bit_for_bit() {
        let program = Program::parse(
            "m.pinv",
            "fn g(x: f64, y: f64, a: f64, b: f64) -> (f64, f64) { (a * x + b * y, b * x + a * y) }",
        )
        .expect("compiles");
        let inverse = program.invert("g").expect("invertible");
        let report = inverse.isolation()[0].to_string();
        assert!(report.contains("with coefficients from a, b"), "{report}");
        // θ reads b, then a, then, where the matrix [[a, b], [b, a]] is singular (a = ±b), the
        // free unknowns.
        for (y, [a, b], free) in [
            ([5.0, 4.0], [0.3, 2.0], vec![]),
            ([1e-3, -7.5], [1e10, -1e-10], vec![]),
            ([3.0, 3.0], [1.0, 1.0], vec![0.625]),
            ([-2.0, 2.0], [-4.0, 4.0], vec![1e3]),
            ([0.0, 0.0], [0.0, 0.0], vec![1.5, -2.25]),
        ] {
            let mut tape: Vec<Const> = [b, a].iter().map(|&v| Const::F64(v)).collect();
            tape.extend(free.iter().map(|&v| Const::F64(v)));
            let ys = y.map(Const::F64);
            let got = inverse.call_with_tape(&ys, &tape).expect("a preimage");
            let mut next = free.into_iter();
            let want = solve_plain(2, &[a, b, b, a], &[0.0, 0.0], &y, &mut || {
                next.next().expect("as many θ as the inverse read")
            });
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let got: Vec<f64> = got[..2].iter().map(|c| c.as_f64().expect("f64")).collect();
            assert_eq!(
                bits(&got),
                bits(&want),
                "y {y:?}, a {a}, b {b}: {got:?} vs {want:?}"
            );
        }
    }
}
