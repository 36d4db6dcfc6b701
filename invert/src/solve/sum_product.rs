//! Sum and product: two outputs `c·(u + v) + k` and `d·(u·v) + k'` of the same two unknowns.
//!
//! `(x + y, x·y)` uses both unknowns in both outputs and is not linear, so neither the e-graph
//! nor [`super::linear`] helps: inverted one output at a time, the product can only be checked,
//! and almost no θ passes. But u and v are the two roots of `t² − s·t + p` (Vieta), so the pair
//! is solved at once with a single choice: which root is u.
//!
//! - **Recognition** ([`find_pair`]): one f64 output's affine form ([`super::linear`]) has
//!   exactly two atoms `u`, `v` with the same coefficient `c`; another's has exactly one atom,
//!   the product `u·v` (either order), with coefficient `d`.
//! - **The rewritten plan** ([`candidate`]): `(σ, π) = sumprod(u, v)` (the helper
//!   `iso.sumprod`), the outputs `k + c·σ` and `k' + d·π`.
//! - **The rule** ([`SumProductRule`]): with both unknown, `s² − 4p` must not be negative
//!   (beyond rounding: a domain error), the roots are computed stably (`q = (s ± √disc)/2` with
//!   the sign of s, the other `p / q`), and `choice 2` says whether u is the larger; with one
//!   known, the other is `s − u`. The rule checks both outputs at the answer.
//! - **The PGF** records whether u is below v.

use super::plan::{PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::{Block, Const, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc};
use std::collections::HashMap;

/// The name of the helper.
pub const SUMPROD: &str = "iso.sumprod";

/// A sum and a product of the same two unknowns among a plan's outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub sum_output: usize,
    pub product_output: usize,
    u: PVal,
    v: PVal,
    sum_coef: f64,
    sum_known: Vec<(f64, PVal)>,
    product_coef: f64,
    product_known: Vec<(f64, PVal)>,
}

/// The first sum/product pair among `plan`'s outputs.
pub fn find_pair(plan: &Plan) -> Option<Pair> {
    let dep = plan.depends_on_params();
    let forms: Vec<Option<super::linear::Affine>> = plan
        .outputs
        .iter()
        .map(|&o| {
            (plan.ty(o) == Type::F64 && dep[o.inst as usize])
                .then(|| super::linear::affine(plan, o, &dep))
        })
        .collect();
    for (i, sum) in forms.iter().enumerate() {
        let Some(sum) = sum else { continue };
        let &[(u, cu), (v, cv)] = sum.atoms.as_slice() else {
            continue;
        };
        if cu != cv || cu == 0.0 || !cu.is_finite() {
            continue;
        }
        for (j, product) in forms.iter().enumerate() {
            let Some(product) = product.as_ref().filter(|_| j != i) else {
                continue;
            };
            let &[(w, d)] = product.atoms.as_slice() else {
                continue;
            };
            let inst = &plan.insts[w.inst as usize];
            let is_product = matches!(inst.kind, PKind::Prim(Opcode::Fmul))
                && (inst.args == [u, v] || inst.args == [v, u]);
            if is_product && d != 0.0 && d.is_finite() {
                return Some(Pair {
                    sum_output: i,
                    product_output: j,
                    u,
                    v,
                    sum_coef: cu,
                    sum_known: sum.known.clone(),
                    product_coef: d,
                    product_known: product.known.clone(),
                });
            }
        }
    }
    None
}

/// The plan with `pair`'s outputs computed by the sum/product helper, and a description.
pub fn candidate(plan: &Plan, pair: &Pair, names: &[String]) -> (Plan, String) {
    let mut b = PlanBuilder::new(plan.params.clone());
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut memo = HashMap::new();
    let u = b.copy(plan, pair.u, &ident, &mut memo);
    let v = b.copy(plan, pair.v, &ident, &mut memo);
    let span = plan.insts[plan.outputs[pair.product_output].inst as usize].span;
    let sp = b.push(
        PKind::SumProduct,
        vec![u, v],
        vec![Type::F64, Type::F64],
        span,
    );
    let mut outputs = Vec::new();
    for (i, &o) in plan.outputs.iter().enumerate() {
        let (idx, coef, known) = if i == pair.sum_output {
            (0, pair.sum_coef, &pair.sum_known)
        } else if i == pair.product_output {
            (1, pair.product_coef, &pair.product_known)
        } else {
            outputs.push(b.copy(plan, o, &ident, &mut memo));
            continue;
        };
        let out_span = plan.insts[o.inst as usize].span;
        let r = PVal { inst: sp, idx };
        let scaled = if coef == 1.0 {
            r
        } else {
            let k = b.konst(Const::F64(coef));
            b.value(PKind::Prim(Opcode::Fmul), vec![k, r], Type::F64, out_span)
        };
        outputs.push(b.sum_onto(plan, known, scaled, out_span, &mut memo));
    }
    let mut out = b.finish();
    out.outputs = outputs;
    let text = |v: PVal| super::plan::plan_text(plan, names, v, 60);
    let describe = format!(
        "outputs {} and {} as the sum and product of {} and {}",
        pair.sum_output,
        pair.product_output,
        text(pair.u),
        text(pair.v)
    );
    (out.pruned(), describe)
}

/// The helper's forward semantics on constants, bit for bit as its body computes it.
pub fn eval(args: &[Const]) -> Option<Vec<Const>> {
    use pinv_core::semantics::eval as ev;
    let &[u, v] = args else { return None };
    Some(vec![
        ev(Opcode::Fadd, &[u, v]).ok()?,
        ev(Opcode::Fmul, &[u, v]).ok()?,
    ])
}

/// The helper `iso.sumprod`, added (with its rule) if the module does not have it yet.
pub fn install(module: &mut Module, layer: &mut Layer) -> FuncId {
    let params = [("u", Type::F64), ("v", Type::F64)];
    let body = |f: &mut Function, b: Block, p: &[Value]| {
        let s = f.ins_prim(b, Opcode::Fadd, vec![p[0], p[1]], Span::default());
        let q = f.ins_prim(b, Opcode::Fmul, vec![p[0], p[1]], Span::default());
        vec![s, q]
    };
    let returns = vec![Type::F64, Type::F64];
    super::helpers::fixed_helper(
        module,
        layer,
        SUMPROD,
        &params,
        returns,
        body,
        SumProductRule,
    )
}

const ORDER: &str = "which root is u (0: the larger, 1: the smaller)";

/// The rule of `iso.sumprod`: see the module docs.
#[derive(Debug)]
pub struct SumProductRule;

impl InverseRule for SumProductRule {
    fn name(&self) -> &str {
        "vieta"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let both = pattern.unknowns() == 2;
        RuleDoc {
            thetas: if both {
                vec![ThetaDoc::choice(2, ORDER)]
            } else {
                Vec::new()
            },
            checks: vec![
                "s² − 4p is not negative (u and v are real)".to_string(),
                "u + v = s and u · v = p at the answer".to_string(),
            ],
            exact: false,
            summary: "u, v = the roots of t² − s·t + p".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (&[s, p], [a, b]) = (outputs, args) else {
            return Err(RuleError::Malformed(
                "the sum/product helper has two operands and two outputs".to_string(),
            ));
        };
        let (u, v) = match (a, b) {
            (Arg::Known(u), Arg::Known(v)) => (*u, *v),
            (Arg::Known(u), Arg::Unknown) => (*u, e.fsub(s, *u)),
            (Arg::Unknown, Arg::Known(v)) => (e.fsub(s, *v), *v),
            (Arg::Unknown, Arg::Unknown) => {
                let ss = e.fmul(s, s);
                let four = e.fc(4.0);
                let p4 = e.fmul(four, p);
                let disc = e.fsub(ss, p4);
                // Rounding can make a double root's discriminant slightly negative.
                let one = e.fc(1.0);
                let mag = e.op2(Opcode::Fmax, ss, one);
                let slack = e.fc(-1e-12);
                let floor = e.fmul(slack, mag);
                let real = e.fge(disc, floor);
                e.check(real, "no real u and v: s² − 4p is negative")?;
                let zero = e.fc(0.0);
                let disc = e.op2(Opcode::Fmax, disc, zero);
                let r = e.op1(Opcode::Sqrt, disc);
                let nonneg = e.fge(s, zero);
                let plus = e.fadd(s, r);
                let minus = e.fsub(s, r);
                let sum = e.select(nonneg, plus, minus)?;
                let half = e.fc(0.5);
                let q = e.fmul(sum, half);
                let q_zero = e.feq(q, zero);
                let pq = e.fdiv(p, q);
                let other = e.select(q_zero, zero, pq)?;
                let larger = e.op2(Opcode::Fmax, q, other);
                let smaller = e.op2(Opcode::Fmin, q, other);
                let c = e.choice(2, ORDER)?;
                let first = e.ic(0);
                let u_larger = e.ieq(c, first);
                let u = e.select(u_larger, larger, smaller)?;
                let v = e.select(u_larger, smaller, larger)?;
                (u, v)
            }
        };
        let s2 = e.fadd(u, v);
        let p2 = e.fmul(u, v);
        e.check_step_equal(s2, s, "u + v is not the sum")?;
        e.check_step_equal(p2, p, "u · v is not the product")?;
        Ok(vec![u, v])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if pattern.unknowns() != 2 {
            return Ok(());
        }
        let &[u, v] = args else {
            return Err(RuleError::Malformed(
                "the sum/product helper has two operands".to_string(),
            ));
        };
        let below = e.flt(u, v);
        let c = e.b_to_i(below);
        e.record(c, ORDER)
    }
}
