//! Odds: `odds(a, c) = a / (c − a)`, the ratio of affine terms the e-graph writes with `a` once.
//!
//! `a / (c − a)` uses `a` twice (a logit's `p / (1 − p)`, a share's `a / (a + c)`, a gear or
//! lens ratio), so inverted as written the second use can only check. Written with `a` once,
//! every exact form is stable at one end only:
//!
//! - `c / (c − a) − 1` (the inverse takes `q + 1`): for a small ratio q (p = 1e-9 in a logit)
//!   `q + 1` keeps none of q's digits, and no θ gives p back;
//! - `1 / (c / a − 1)` (the inverse takes `1/q + 1`): for a large q, `1/q + 1` rounds by an ulp of
//!   1, which moves `a` by a float where `c − a`, what the forward function divides by, has few.
//!
//! The isolation rewrites the ratio into a call of the helper `iso.odds(a, c)` (its body is the
//! same `a / (c − a)`, so forward values are bit for bit the original's), whose rule solves
//! `a / (c − a) = q` with the closed form that is stable where q is:
//!
//! ```text
//! a = c·q / (1 + q)     where |q| ≤ 1 (no cancellation: each step keeps relative precision)
//! a = c − c / (1 + q)   where |q| > 1 (a is within a factor 2 of c: the difference is exact)
//! ```
//!
//! settled like a primitive's closed form ([`pinv_primitives::rules::settle`]: an offset θ where
//! it does not pin `a`, the exact float with [`pinv_primitives::EmitOptions::exact_floats`]).
//! The e-graph writes `a / (a + c)` as `−odds(−a, c)` (exact: `a + c = c − (−a)`), so shares
//! and softmax-like ratios use the same rule. The e-graph writes `odds` only where `c` is a
//! constant, so the rule covers a known `c` only (with `a` known too, it checks).

use pinv_core::ir::{Block, Const, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::exact;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::rules::settle::{settle, settle_doc, settle_pgf, Forward};
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError};

/// The name of the helper.
pub const ODDS: &str = "iso.odds";

/// `a / (c − a)` as the helper (and the original) computes it.
pub fn eval(a: f64, c: f64) -> f64 {
    a / (c - a)
}

/// [`eval`] of constant operands `[a, c]` (folding, and evaluating plans and e-graph terms);
/// `None` unless both are f64.
pub fn eval_consts(args: &[Const]) -> Option<Const> {
    match args {
        &[Const::F64(a), Const::F64(c)] => Some(Const::F64(eval(a, c))),
        _ => None,
    }
}

/// The helper `iso.odds`, added (with its rule) if the module does not have it yet.
pub fn install(module: &mut Module, layer: &mut Layer) -> FuncId {
    let params = [("a", Type::F64), ("c", Type::F64)];
    super::helpers::fixed_helper(
        module,
        layer,
        ODDS,
        &params,
        vec![Type::F64],
        |f, b, p| emit_forward(f, b, p, Span::default()),
        OddsRule,
    )
}

/// `a / (c − a)` of `p = [a, c]` into block `b` of `f`: the helper's body, and the ratio where
/// a plan is emitted without the helper (a body that is only run forward).
pub fn emit_forward(f: &mut Function, b: Block, p: &[Value], span: Span) -> Vec<Value> {
    let d = f.ins_prim(b, Opcode::Fsub, vec![p[1], p[0]], span);
    vec![f.ins_prim(b, Opcode::Fdiv, vec![p[0], d], span)]
}

const A_OFFSET: &str = "numerator: offset from c·q/(1 + q)";

/// `a / (c − a)` in the emitter.
fn odds(e: &mut Emitter<'_>, a: Value, c: Value) -> Value {
    let d = e.fsub(c, a);
    e.fdiv(a, d)
}

/// The candidate for `a` in `a / (c − a) = q`: see the module docs.
fn numerator(e: &mut Emitter<'_>, q: Value, c: Value) -> Result<Value, RuleError> {
    let one = e.fc(1.0);
    let d = e.fadd(one, q);
    let cq = e.fmul(c, q);
    let small = e.fdiv(cq, d);
    let part = e.fdiv(c, d);
    let large = e.fsub(c, part);
    let aq = e.fabs(q);
    let near = e.fle(aq, one);
    e.select(near, small, large)
}

/// A call of the helper with other than one output and two operands.
fn malformed() -> RuleError {
    RuleError::Malformed("iso.odds has two operands and one result".to_string())
}

/// The rule of `iso.odds`: see the module docs.
#[derive(Debug)]
pub struct OddsRule;

impl InverseRule for OddsRule {
    fn name(&self) -> &str {
        "odds"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2 && pattern.is_known(1)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: if pattern.is_known(0) {
                Vec::new()
            } else {
                vec![settle_doc(A_OFFSET)]
            },
            checks: vec!["a / (c − a) = q".to_string()],
            exact: false,
            summary: "a = c·q/(1 + q) for |q| ≤ 1, c − c/(1 + q) above".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (&[q], [a, Arg::Known(c)]) = (outputs, args) else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        let c = *c;
        let fwd = |e: &mut Emitter<'_>, x| odds(e, x, c);
        let a = match a {
            Arg::Known(a) => *a,
            Arg::Unknown => {
                let d = numerator(e, q, c)?;
                solve(e, d, q, &fwd, A_OFFSET)?
            }
        };
        // The output within the tolerance, or, near the pole, `a` the float next to the exact
        // solution (see [`solve`]).
        let again = odds(e, a, c);
        let close = e.close(again, q);
        let nearest = exact::bracketed(e, a, q, &fwd);
        let ok = e.bor(close, nearest);
        e.check_step(ok, "θ loses precision: a / (c − a) is not y")?;
        Ok(vec![a, c])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let (&[q], &[a, c]) = (outputs, args) else {
            return Err(malformed());
        };
        if !pattern.is_known(1) {
            return Err(RuleError::Uncovered(pattern.clone()));
        }
        if pattern.is_known(0) {
            return Ok(());
        }
        // From what the inverse holds, as it does.
        let q = e.replayed(q);
        let c = e.replayed(c);
        let d = numerator(e, q, c)?;
        record(e, d, q, a, &|e, x| odds(e, x, c), A_OFFSET)
    }
}

/// The unknown from its candidate `d`: `d` itself where the solutions lie between its
/// neighbours ([`exact::bracketed`]: near the pole, one float moves the ratio by more than the
/// tolerance, and `d` is the float a flatter step after this one needs), else settled.
fn solve(
    e: &mut Emitter<'_>,
    d: Value,
    q: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<Value, RuleError> {
    let nearest = exact::bracketed(e, d, q, fwd);
    e.if_value(
        nearest,
        Type::F64,
        |_| Ok(d),
        |e| settle(e, d, q, fwd, role),
    )
}

/// The PGF side of [`solve`] for the forward value `x`.
fn record(
    e: &mut Emitter<'_>,
    d: Value,
    q: Value,
    x: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<(), RuleError> {
    let nearest = exact::bracketed(e, d, q, fwd);
    e.branch(
        nearest,
        |e| {
            e.note_replay(x, d);
            Ok(())
        },
        |e| settle_pgf(e, d, q, x, fwd, role),
    )
}

#[cfg(test)]
mod tests {
    use super::eval;

    /// The two closed forms, in plain floats: the one used where |q| ≤ 1 keeps the digits of a
    /// small ratio, the other those of a ratio near its pole; each is within an ulp or two of
    /// the numerator that gave q, where the form the rule does not use there is far off.
    #[test]
    fn each_closed_form_is_stable_where_it_is_used() {
        let small = |q: f64, c: f64| c * q / (1.0 + q);
        let large = |q: f64, c: f64| c - c / (1.0 + q);
        let ulps = |x: f64, y: f64| (x.to_bits() as i64 - y.to_bits() as i64).unsigned_abs();
        for &(a, c) in &[(1e-9, 1.0), (2.5e-12, 3.0), (-1e-7, 1.0), (0.3, 1.0)] {
            let q = eval(a, c);
            assert!(q.abs() <= 1.0);
            assert!(ulps(small(q, c), a) <= 2, "{a} {c}: {}", small(q, c));
        }
        for &(a, c) in &[(1.0 - 1e-9, 1.0), (2.9999, 3.0), (0.75, 1.0), (5.0, 1.0)] {
            let q = eval(a, c);
            assert!(q.abs() > 1.0);
            assert!(ulps(large(q, c), a) <= 2, "{a} {c}: {}", large(q, c));
        }
        // The form not used there is off by far more than an ulp.
        let q = eval(1e-9, 1.0);
        assert!(ulps(large(q, 1.0), 1e-9) > 1 << 20);
    }
}
