//! Angle wrapping: `atan2(sin e, cos e)` is `e` brought into (−π, π].
//!
//! The idiom normalises an angle (robot headings, phase differences). Inverted as written,
//! `e` is used twice (by `sin` and by `cos`), the e-graph has no rule that removes the fan-out,
//! and the numeric fallback must find one of infinitely many roots of a sawtooth — incomplete
//! wherever a grid step holds several. But the preimages are exactly `y + 2πk`: the
//! subterm becomes a helper `iso.wrap(e)` (body: the same `atan2(sin e, cos e)`) whose rule reads
//! θ whole turns k, checks that y is an angle in [−π, π], and checks the helper at the answer.
//! The PGF records `round((e − wrap(e)) / 2π)`.

use super::plan::{PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::{Block, Domain, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc};
use std::collections::HashMap;
use std::f64::consts::{PI, TAU};

/// The name of the helper.
pub const WRAP: &str = "iso.wrap";

/// The angle `e` if `inst` is `atan2(sin e, cos e)`.
fn wrapped(plan: &Plan, i: usize) -> Option<PVal> {
    let inst = &plan.insts[i];
    let (PKind::Prim(Opcode::Atan2), &[s, c]) = (&inst.kind, inst.args.as_slice()) else {
        return None;
    };
    let arg_of = |v: PVal, op: Opcode| -> Option<PVal> {
        let i = &plan.insts[v.inst as usize];
        match (&i.kind, i.args.as_slice()) {
            (PKind::Prim(o), &[a]) if *o == op => Some(a),
            _ => None,
        }
    };
    let e = arg_of(s, Opcode::Sin)?;
    (arg_of(c, Opcode::Cos)? == e).then_some(e)
}

/// `plan` with every `atan2(sin e, cos e)` replaced by `wrap(e)`, or `None` if it has none.
pub fn candidate(plan: &Plan) -> Option<(Plan, String)> {
    if !(0..plan.insts.len()).any(|i| wrapped(plan, i).is_some()) {
        return None;
    }
    let mut b = PlanBuilder::new(plan.params.clone());
    let mut map: HashMap<u32, u32> = HashMap::new();
    let mut count = 0;
    for (i, inst) in plan.insts.iter().enumerate() {
        let at = |v: PVal, map: &HashMap<u32, u32>| PVal {
            inst: map[&v.inst],
            idx: v.idx,
        };
        let n = match (&inst.kind, wrapped(plan, i)) {
            (PKind::Param(p), _) => b.param(*p as usize).inst,
            (_, Some(e)) => {
                count += 1;
                b.push(PKind::Wrap, vec![at(e, &map)], vec![Type::F64], inst.span)
            }
            (kind, None) => {
                let args = inst.args.iter().map(|&a| at(a, &map)).collect();
                b.push(kind.clone(), args, inst.tys.clone(), inst.span)
            }
        };
        map.insert(i as u32, n);
    }
    let mut out = b.finish();
    out.roots = plan.roots.clone();
    out.outputs = plan
        .outputs
        .iter()
        .map(|&o| PVal {
            inst: map[&o.inst],
            idx: o.idx,
        })
        .collect();
    let text = format!("{count} angle(s) wrapped by atan2(sin e, cos e), solved as y + 2πk");
    Some((out.pruned(), text))
}

/// The helper `iso.wrap`, added (with its rule) if the module does not have it yet.
pub fn install(module: &mut Module, layer: &mut Layer) -> FuncId {
    let body = |f: &mut Function, b: Block, p: &[Value]| {
        let s = f.ins_prim(b, Opcode::Sin, vec![p[0]], Span::default());
        let c = f.ins_prim(b, Opcode::Cos, vec![p[0]], Span::default());
        vec![f.ins_prim(b, Opcode::Atan2, vec![s, c], Span::default())]
    };
    let params = [("e", Type::F64)];
    super::helpers::fixed_helper(
        module,
        layer,
        WRAP,
        &params,
        vec![Type::F64],
        body,
        WrapRule,
    )
}

const TURNS: &str = "whole turns of the wrapped angle";

/// `atan2(sin e, cos e)` as the helper computes it.
fn wrap(e: &mut Emitter<'_>, v: Value) -> Value {
    let s = e.op1(Opcode::Sin, v);
    let c = e.op1(Opcode::Cos, v);
    e.op2(Opcode::Atan2, s, c)
}

/// The rule of `iso.wrap`: see the module docs.
#[derive(Debug)]
pub struct WrapRule;

impl InverseRule for WrapRule {
    fn name(&self) -> &str {
        "unwrap-turns"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 1
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: if pattern.is_known(0) {
                Vec::new()
            } else {
                vec![ThetaDoc::value(Domain::Int, TURNS)]
            },
            checks: vec![
                "y is an angle in [−π, π]".to_string(),
                "wrapping the answer gives y".to_string(),
            ],
            exact: false,
            summary: "e = y + 2πk".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (&[y], [a]) = (outputs, args) else {
            return Err(RuleError::Malformed("iso.wrap has one operand".to_string()));
        };
        let x = match a {
            Arg::Known(x) => *x,
            Arg::Unknown => {
                let lo = e.fc(-PI);
                let hi = e.fc(PI);
                let above = e.fge(y, lo);
                let below = e.fle(y, hi);
                let angle = e.band(above, below);
                e.check(angle, "y is not an angle in [−π, π]")?;
                let k = e.theta(Domain::Int, TURNS)?;
                let kf = e.i_to_f(k);
                let tau = e.fc(TAU);
                let shift = e.fmul(kf, tau);
                e.fadd(y, shift)
            }
        };
        let again = wrap(e, x);
        e.check_step_equal(again, y, "wrapping the answer does not give y")?;
        Ok(vec![x])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if pattern.is_known(0) {
            return Ok(());
        }
        let &[x] = args else {
            return Err(RuleError::Malformed("iso.wrap has one operand".to_string()));
        };
        let y = wrap(e, x);
        let d = e.fsub(x, y);
        let tau = e.fc(TAU);
        let q = e.fdiv(d, tau);
        let k = e.round_to_i64(q);
        e.record(k, TURNS)
    }
}
