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
//!   run-time matrix (unrolled, the row swaps as selects); a pivot below 10⁻¹² of the matrix's
//!   largest entry is a singular system, a domain error for that θ. A zero matrix (every
//!   coefficient 0) leaves every unknown free: θ names each (read only then), so an x whose
//!   coefficients are all 0 is in reach. Where a factor of every coefficient is drawn from the
//!   nonzero reals (a rotation's scale), the matrix cannot be zero and no such read is emitted;
//!   an x with that factor 0 is out of reach (a gap). Other singular matrices are still a
//!   domain error.
//!
//! The inverse's final check runs the original function, so the regrouping of sums (exact
//! only up to rounding) never makes an answer wrong.

use super::plan::{PInst, PKind, PVal, Plan, PlanBuilder};
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

impl System {
    /// Whether every coefficient can be 0 at once: none is drawn nonzero through a common
    /// factor, and none is a nonzero constant (the 1 and −1 of a mix).
    fn can_be_zero(&self) -> bool {
        let constant_nonzero = |terms: &Vec<Term>| {
            terms.iter().all(|(_, factors)| factors.is_empty())
                && terms.iter().map(|(k, _)| k).sum::<f64>() != 0.0
        };
        self.nonzero.is_empty() && !self.matrix.iter().any(constant_nonzero)
    }
}

/// Whether `p` is a factor of value `v` (`v` is zero when `p` is).
fn has_factor(plan: &Plan, v: PVal, p: u32) -> bool {
    let inst = &plan.insts[v.inst as usize];
    pinv_core::stack::ensure_sufficient_stack(|| match (&inst.kind, inst.args.as_slice()) {
        (PKind::Param(q), _) => *q == p,
        (PKind::Prim(Opcode::Fmul), &[a, b]) => has_factor(plan, a, p) || has_factor(plan, b, p),
        (PKind::Prim(Opcode::Fneg), &[a]) | (PKind::Prim(Opcode::Fdiv), &[a, _]) => {
            has_factor(plan, a, p)
        }
        _ => false,
    })
}

/// Per plan value, the inputs it depends on (a bit per parameter; the first 64).
fn depends(plan: &Plan) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let d = match inst.kind {
            PKind::Param(p) => 1u64 << p.min(63),
            _ => inst.args.iter().fold(0, |d, a| d | out[a.inst as usize]),
        };
        out.push(d);
    }
    out
}

/// The form of f64 value `v` in the inputs `set`, if it is linear in them.
fn form(plan: &Plan, v: PVal, set: u64, dep: &[u64]) -> Option<Form> {
    if dep[v.inst as usize] & set == 0 {
        return Some(Form {
            coeffs: HashMap::new(),
            known: vec![(1.0, vec![v])],
        });
    }
    let inst = &plan.insts[v.inst as usize];
    let free = |a: PVal| dep[a.inst as usize] & set == 0;
    let constant = |a: PVal| match plan.constant(a) {
        Some(Const::F64(c)) if c.is_finite() && c != 0.0 => Some(c),
        _ => None,
    };
    pinv_core::stack::ensure_sufficient_stack(|| match (&inst.kind, inst.args.as_slice()) {
        (PKind::Param(p), _) => Some(Form {
            coeffs: HashMap::from([(*p, vec![(1.0, Vec::new())])]),
            known: Vec::new(),
        }),
        (PKind::Prim(Opcode::Fadd), &[a, b]) => {
            Some(form(plan, a, set, dep)?.add(form(plan, b, set, dep)?))
        }
        (PKind::Prim(Opcode::Fsub), &[a, b]) => {
            Some(form(plan, a, set, dep)?.add(form(plan, b, set, dep)?.scale(-1.0)))
        }
        (PKind::Prim(Opcode::Fneg), &[a]) => Some(form(plan, a, set, dep)?.scale(-1.0)),
        (PKind::Prim(Opcode::Fmul), &[a, b]) => match (constant(a), constant(b)) {
            (Some(k), _) => Some(form(plan, b, set, dep)?.scale(k)),
            (_, Some(k)) => Some(form(plan, a, set, dep)?.scale(k)),
            _ if free(a) => Some(form(plan, b, set, dep)?.times(a)),
            _ if free(b) => Some(form(plan, a, set, dep)?.times(b)),
            _ => None,
        },
        (PKind::Prim(Opcode::Fdiv), &[a, b]) => {
            constant(b).and_then(|k| Some(form(plan, a, set, dep)?.scale(1.0 / k)))
        }
        _ => None,
    })
}

/// The system with run-time coefficients among `plan`'s f64 outputs, if there is one that the
/// constant-coefficient solver does not cover (see the module docs).
pub fn find_system(plan: &Plan) -> Option<System> {
    if plan.params.len() > 64 {
        return None;
    }
    let dep = depends(plan);
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
        PKind::LinearRt {
            n: n as u32,
            free: system.can_be_zero(),
        },
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
pub fn install(module: &mut Module, layer: &mut Layer, inst: &PInst, n: u32, free: bool) -> FuncId {
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
        LinearRtRule { n, free },
    )
}

/// The rule of an `iso.linrt.N` helper: see the module docs.
#[derive(Debug)]
pub struct LinearRtRule {
    pub n: usize,
    /// The matrix can be zero: θ names the unknowns it leaves free (see the module docs).
    pub free: bool,
}

const SINGULAR: &str = "the linear system is singular for this θ";

/// The role of the θ that names an unknown a zero matrix leaves free.
const FREE: &str = "an unknown the zero matrix leaves free";

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
            thetas: (0..if self.free { self.n } else { 0 })
                .map(|_| ThetaDoc {
                    when: Some("every coefficient is 0".to_string()),
                    ..ThetaDoc::value(Domain::Real, FREE)
                })
                .collect(),
            checks: vec![
                SINGULAR.to_string(),
                "the outputs are the matrix products at the answer".to_string(),
            ],
            exact: false,
            summary: "Gaussian elimination with partial pivoting on the run-time matrix"
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
        if !self.free {
            let u = self.eliminate(e, a0, b0, outputs)?;
            return self.checked(e, known, u, outputs);
        }
        // A zero matrix leaves every unknown free (the outputs are then the constant parts):
        // θ names each, as the PGF records them. Otherwise, elimination.
        let all_zero = all_zero(e, a0);
        let types = vec![Type::F64; n];
        let u = e.if_else(
            all_zero,
            &types,
            |e| (0..n).map(|_| e.theta(Domain::Real, FREE)).collect(),
            |e| self.eliminate(e, a0, b0, outputs),
        )?;
        self.checked(e, known, u, outputs)
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        _pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let n = self.n;
        if !self.free {
            return Ok(());
        }
        let (a0, rest) = args.split_at(n * n);
        let u = rest
            .get(n..2 * n)
            .ok_or_else(|| RuleError::Malformed("the unknowns' forward values".into()))?;
        let all_zero = all_zero(e, a0);
        e.if_else(
            all_zero,
            &[],
            |e| {
                for &v in u {
                    e.record(v, FREE)?;
                }
                Ok(Vec::new())
            },
            |_| Ok(Vec::new()),
        )?;
        Ok(())
    }
}

/// Whether every entry of the matrix `a` is 0 (a NaN entry does not count against it: the
/// check of `A·u + b` then fails), decided alike in the inverse and the PGF.
fn all_zero(e: &mut Emitter<'_>, a: &[Value]) -> Value {
    let mut largest = e.fc(0.0);
    for &v in a {
        let m = e.fabs(v);
        largest = e.op2(Opcode::Fmax, largest, m);
    }
    let zero = e.fc(0.0);
    e.op2(Opcode::Fle, largest, zero)
}

impl LinearRtRule {
    /// The matrix and constants, then `u`, once the outputs are checked to be `A·u + b`.
    fn checked(
        &self,
        e: &mut Emitter<'_>,
        known: Vec<Value>,
        u: Vec<Value>,
        outputs: &[Value],
    ) -> Result<Vec<Value>, RuleError> {
        let n = self.n;
        let again = products(e, n, &known[..n * n], &known[n * n..], &u);
        for (v, &y) in again.into_iter().zip(outputs) {
            e.check_step_equal(v, y, "the outputs are not a solution of the linear system")?;
        }
        Ok(known.into_iter().chain(u).collect())
    }

    /// Gaussian elimination with partial pivoting: the unknowns of `A·u + b = outputs`, or a
    /// domain error where a pivot is below 10⁻¹² of the largest entry.
    fn eliminate(
        &self,
        e: &mut Emitter<'_>,
        a0: &[Value],
        b0: &[Value],
        outputs: &[Value],
    ) -> Result<Vec<Value>, RuleError> {
        let n = self.n;
        let mut a: Vec<Value> = a0.to_vec();
        let mut r: Vec<Value> = outputs
            .iter()
            .zip(b0)
            .map(|(&y, &b)| e.fsub(y, b))
            .collect();
        // The scale a pivot is judged against: the largest |entry|, at least the smallest normal.
        let mut scale = e.fc(f64::MIN_POSITIVE);
        for &v in &a {
            let m = e.fabs(v);
            scale = e.op2(Opcode::Fmax, scale, m);
        }
        let eps = e.fc(1e-12);
        let tiny = e.fmul(scale, eps);
        for k in 0..n {
            // Partial pivoting: bring the largest |a[i][k]| (i ≥ k) to row k, by swaps.
            for i in k + 1..n {
                let ak = e.fabs(a[k * n + k]);
                let ai = e.fabs(a[i * n + k]);
                let swap = e.fgt(ai, ak);
                for j in 0..n {
                    let (x, y) = (a[k * n + j], a[i * n + j]);
                    a[k * n + j] = e.select(swap, y, x)?;
                    a[i * n + j] = e.select(swap, x, y)?;
                }
                let (x, y) = (r[k], r[i]);
                r[k] = e.select(swap, y, x)?;
                r[i] = e.select(swap, x, y)?;
            }
            let p = a[k * n + k];
            let mag = e.fabs(p);
            let ok = e.fgt(mag, tiny);
            e.check(ok, SINGULAR)?;
            for i in k + 1..n {
                let f = e.fdiv(a[i * n + k], p);
                for j in k..n {
                    let t = e.fmul(f, a[k * n + j]);
                    a[i * n + j] = e.fsub(a[i * n + j], t);
                }
                let t = e.fmul(f, r[k]);
                r[i] = e.fsub(r[i], t);
            }
        }
        // Back substitution.
        let mut u: Vec<Option<Value>> = vec![None; n];
        for k in (0..n).rev() {
            let mut acc = r[k];
            for j in k + 1..n {
                let uj = u[j].ok_or_else(|| RuleError::Malformed("back substitution".into()))?;
                let t = e.fmul(a[k * n + j], uj);
                acc = e.fsub(acc, t);
            }
            u[k] = Some(e.fdiv(acc, a[k * n + k]));
        }
        super::helpers::solved(u)
    }
}
