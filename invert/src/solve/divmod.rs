//! Quotient and remainder: `a / b` and `a % b` of the same i64 dividend, solved together.
//!
//! `(x / 100, x % 100)` uses `x` twice. Inverted one operation at a time, the remainder's rule
//! reads the whole multiples of 100 from θ (`x = r + 100·k`), and the quotient can then only
//! check them: almost no θ passes. Together they pin the dividend: `a = q·b + r`, with no θ.
//!
//! - **Recognition** ([`candidate`]): an `idiv` and an `irem` with the same two operands, the
//!   dividend depending on an unknown.
//! - **The rewritten plan**: both become the two results of one helper, `iso.divmod(a, b) =
//!   (a / b, a % b)`.
//! - **The rule** ([`DivModRule`]): with `b` known and `a` unknown, `a = q·b + r` (wrapping, as
//!   the forward code's arithmetic), then the rule checks that `a / b` and `a % b` give `q` and
//!   `r` back (a pair that no dividend gives, such as a remainder of the wrong sign, is a domain
//!   error). Other patterns (an unknown divisor) are not covered: the helper's body is inverted
//!   as written.
//! - **The PGF** records nothing: there is no θ.

use super::plan::{PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::{Block, Const, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError};
use std::collections::HashMap;

/// The name of the helper.
pub const DIVMOD: &str = "iso.divmod";

/// The quotient/remainder pairs of `plan`: (the first instruction, the second), for each
/// `idiv` and `irem` with the same operands whose dividend depends on an unknown.
fn pairs(plan: &Plan) -> Vec<(usize, usize)> {
    let dep = plan.depends_on_params();
    // Operands → (the idiv, the irem) on them.
    let mut seen: HashMap<&[PVal], (Option<usize>, Option<usize>)> = HashMap::new();
    for (i, inst) in plan.insts.iter().enumerate() {
        let slot = match inst.kind {
            PKind::Prim(Opcode::Idiv) => 0,
            PKind::Prim(Opcode::Irem) => 1,
            _ => continue,
        };
        if !dep[inst.args[0].inst as usize] {
            continue;
        }
        let entry = seen.entry(inst.args.as_slice()).or_default();
        let place = if slot == 0 {
            &mut entry.0
        } else {
            &mut entry.1
        };
        place.get_or_insert(i);
    }
    let mut out: Vec<(usize, usize)> = seen
        .into_values()
        .filter_map(|(q, r)| Some((q?.min(r?), q?.max(r?))))
        .collect();
    out.sort_unstable();
    out
}

/// The plan with every quotient/remainder pair computed by `iso.divmod`, and a description;
/// `None` if there is no pair.
pub fn candidate(plan: &Plan, names: &[String]) -> Option<(Plan, String)> {
    let pairs = pairs(plan);
    if pairs.is_empty() {
        return None;
    }
    // Each instruction of a pair → the pair.
    let pair_of: HashMap<usize, (usize, usize)> =
        pairs.iter().flat_map(|&p| [(p.0, p), (p.1, p)]).collect();
    let mut b = PlanBuilder::new(plan.params.clone());
    // Old instruction → its value in the new plan (results beyond the first: a pair's partner).
    let mut map: HashMap<u32, PVal> = HashMap::new();
    let at = |v: PVal, map: &HashMap<u32, PVal>| {
        let n = map[&v.inst];
        PVal {
            inst: n.inst,
            idx: n.idx + v.idx,
        }
    };
    let mut described = Vec::new();
    for (i, inst) in plan.insts.iter().enumerate() {
        if let Some(&(first, second)) = pair_of.get(&i) {
            if i == second {
                continue;
            }
            let args: Vec<PVal> = inst.args.iter().map(|&a| at(a, &map)).collect();
            let h = b.push(PKind::DivMod, args, vec![Type::I64, Type::I64], inst.span);
            // Results: the quotient, then the remainder.
            let (q, r) = match inst.kind {
                PKind::Prim(Opcode::Idiv) => (first, second),
                _ => (second, first),
            };
            map.insert(q as u32, PVal { inst: h, idx: 0 });
            map.insert(r as u32, PVal { inst: h, idx: 1 });
            described.push(super::plan::plan_text(plan, names, inst.args[0], 60));
            continue;
        }
        let n = match &inst.kind {
            PKind::Param(p) => b.param(*p as usize),
            kind => {
                let args = inst.args.iter().map(|&a| at(a, &map)).collect();
                PVal {
                    inst: b.push(kind.clone(), args, inst.tys.clone(), inst.span),
                    idx: 0,
                }
            }
        };
        map.insert(i as u32, n);
    }
    let mut out = b.finish();
    out.roots = plan.roots.clone();
    out.outputs = plan.outputs.iter().map(|&o| at(o, &map)).collect();
    let describe = format!(
        "the quotient and remainder of {} together",
        described.join(", ")
    );
    Some((out.pruned(), describe))
}

/// The helper's forward semantics on constants, bit for bit as its body computes it.
pub fn eval(args: &[Const]) -> Option<Vec<Const>> {
    use pinv_core::semantics::eval as ev;
    Some(vec![
        ev(Opcode::Idiv, args).ok()?,
        ev(Opcode::Irem, args).ok()?,
    ])
}

/// The helper `iso.divmod`, added (with its rule) if the module does not have it yet.
pub fn install(module: &mut Module, layer: &mut Layer) -> FuncId {
    let params = [("a", Type::I64), ("b", Type::I64)];
    let body = |f: &mut Function, b: Block, p: &[Value]| {
        let q = f.ins_prim(b, Opcode::Idiv, vec![p[0], p[1]], Span::default());
        let r = f.ins_prim(b, Opcode::Irem, vec![p[0], p[1]], Span::default());
        vec![q, r]
    };
    super::helpers::fixed_helper(
        module,
        layer,
        DIVMOD,
        &params,
        vec![Type::I64, Type::I64],
        body,
        DivModRule,
    )
}

/// The rule of `iso.divmod`: see the module docs.
#[derive(Debug)]
pub struct DivModRule;

impl InverseRule for DivModRule {
    fn name(&self) -> &str {
        "divmod"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2 && !pattern.is_known(0) && pattern.is_known(1)
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: Vec::new(),
            checks: vec!["a / b = q and a % b = r at a = q·b + r".to_string()],
            exact: true,
            summary: "a = q·b + r".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (&[q, r], [Arg::Unknown, Arg::Known(b)]) = (outputs, args) else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        let b = *b;
        // A zero divisor, or i64::MIN / −1, traps forward: no dividend gives these outputs.
        let zero = e.ic(0);
        let nonzero = e.op2(Opcode::Ine, b, zero);
        e.check(nonzero, "the divisor is 0: no dividend gives a quotient")?;
        let qb = e.op2(Opcode::Imul, q, b);
        let a = e.op2(Opcode::Iadd, qb, r);
        let min = e.ic(i64::MIN);
        let minus_one = e.ic(-1);
        let a_min = e.op2(Opcode::Ieq, a, min);
        let b_m1 = e.op2(Opcode::Ieq, b, minus_one);
        let traps = e.band(a_min, b_m1);
        let fine = e.bnot(traps);
        e.check(
            fine,
            "i64::MIN / −1 overflows: no dividend gives these outputs",
        )?;
        let q2 = e.op2(Opcode::Idiv, a, b);
        let r2 = e.op2(Opcode::Irem, a, b);
        let q_ok = e.op2(Opcode::Ieq, q2, q);
        let r_ok = e.op2(Opcode::Ieq, r2, r);
        let ok = e.band(q_ok, r_ok);
        e.check(ok, "no dividend gives this quotient and remainder")?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        _: &mut Emitter<'_>,
        _: &[Value],
        _: &[Value],
        _: &Pattern,
    ) -> Result<(), RuleError> {
        Ok(())
    }
}
