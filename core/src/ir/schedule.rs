//! Output scheduling: in a block that returns several values, the computations of the outputs
//! that are hard to walk back go first and the easy ones last.
//!
//! An inverse walks a block back from its last instruction, so the output computed last is
//! solved first, and an unknown that several outputs share is found by the first of them the
//! walk reaches; the others only check it. `(atan(sqrt(p)), 10.0 * p - min(exp(p), 0.5 - p))`
//! as written solves the second output first, which takes θ for an operand of the `-` and of
//! the `min`, and the first output then checks p: almost no θ passes (0%). Computed in the other
//! order, p comes from the first output alone and the second is a check that passes (100%).
//!
//! How hard an output is, is the sum of a cost over the instructions that feed it: the caller's
//! (the reorientation counts the θ values the rule for each instruction declares, with its
//! constant operands known), or [`two_unknowns`]. The outputs are ordered by it, most first
//! (ties keep their order), and the block's instructions by the first output each feeds in that
//! order, stably: an instruction's operands feed every output it feeds, so they still come
//! before it.
//!
//! Invariants: only blocks whose instructions are all constants and primitives are reordered
//! (no call, check or θ read moves), so every run computes the same values; a primitive that can
//! stop a run (an integer division) may stop it at another point of the same block, which the
//! inverse, built from this copy and checked against the user's function, does not see.

use super::{Block, Function, Inst, InstKind, Value};
use rustc_hash::FxHashMap;

/// How hard an instruction is to walk back (θ values its inverse reads), for
/// [`schedule_outputs`].
pub type Cost<'a> = &'a dyn Fn(&Function, Inst) -> usize;

/// The cost [`schedule_outputs`] assumes without better knowledge: 1 for a primitive with two
/// operands that are not constants, else 0.
pub fn two_unknowns(f: &Function, inst: Inst) -> usize {
    let InstKind::Prim { args, .. } = &f.insts[inst].kind else {
        return 0;
    };
    let unknown = args.iter().filter(|&&v| f.constant(v).is_none()).count();
    usize::from(unknown >= 2)
}

/// `f`, with its recomputations merged ([`super::cse`]: `-v + -v` then repeats one operand)
/// and its returning blocks' instructions reordered by `cost` (see the module docs), or `None`
/// if no order changes.
pub fn schedule_outputs(f: &Function, cost: Cost<'_>) -> Option<Function> {
    // Every `return` passes as many values as the function returns.
    if f.sig.returns.len() < 2 {
        return None;
    }
    let mut g = f.clone();
    super::cse::cse(&mut g);
    let orders: Vec<(Block, Vec<Inst>)> = g
        .reachable_blocks()
        .into_iter()
        .filter_map(|b| Some((b, block_order(&g, b, cost)?)))
        .collect();
    if orders.is_empty() {
        return None;
    }
    for (b, order) in orders {
        g.blocks[b].insts = order;
    }
    Some(g)
}

/// The new order of returning block `b`'s instructions, if it differs.
fn block_order(f: &Function, b: Block, inst_cost: Cost<'_>) -> Option<Vec<Inst>> {
    let insts = &f.blocks[b].insts;
    let (&term, body) = insts.split_last()?;
    let InstKind::Return { args } = &f.insts[term].kind else {
        return None;
    };
    if args.len() < 2 || args.len() > 64 {
        return None;
    }
    let movable = body
        .iter()
        .all(|&i| matches!(f.insts[i].kind, InstKind::Const(_) | InstKind::Prim { .. }));
    if !movable {
        return None;
    }
    // Which outputs each value of the block feeds, as a bit set, from the return back.
    let mut feeds: FxHashMap<Value, u64> = FxHashMap::default();
    for (k, &a) in args.iter().enumerate() {
        *feeds.entry(a).or_default() |= 1 << k;
    }
    let result = |i: Inst| f.insts[i].results.first().copied();
    for &i in body.iter().rev() {
        let Some(r) = result(i) else {
            continue;
        };
        let mask = feeds.get(&r).copied().unwrap_or(0);
        if mask == 0 {
            continue;
        }
        f.insts[i]
            .kind
            .for_each_arg(|a| *feeds.entry(a).or_default() |= mask);
    }
    // How hard each output is: the cost of the instructions that feed it.
    let mut cost = vec![0usize; args.len()];
    for &i in body {
        let mask = result(i).and_then(|r| feeds.get(&r).copied()).unwrap_or(0);
        let c = if mask == 0 { 0 } else { inst_cost(f, i) };
        for (k, total) in cost.iter_mut().enumerate() {
            if mask & (1 << k) != 0 {
                *total += c;
            }
        }
    }
    // Outputs hardest first; an instruction goes with the first output it feeds.
    let mut outputs: Vec<usize> = (0..args.len()).collect();
    outputs.sort_by_key(|&k| std::cmp::Reverse(cost[k]));
    let mut place = vec![0usize; args.len()];
    for (p, &k) in outputs.iter().enumerate() {
        place[k] = p;
    }
    let key = |i: Inst| {
        let mask = result(i).and_then(|r| feeds.get(&r).copied()).unwrap_or(0);
        (0..args.len())
            .filter(|&k| mask & (1 << k) != 0)
            .map(|k| place[k])
            .min()
            .unwrap_or(usize::MAX)
    };
    let mut order = body.to_vec();
    order.sort_by_key(|&i| key(i));
    if order == body {
        return None;
    }
    order.push(term);
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduled(text: &str) -> Option<String> {
        crate::ir::testing::rewritten(text, |f| schedule_outputs(f, &two_unknowns))
    }

    #[test]
    fn the_output_that_takes_theta_is_computed_first() {
        let out = scheduled(
            "function %f(p: f64) -> (f64, f64) {
block0(v0: f64):
    v1 = sqrt v0
    v2 = atan v1
    v3 = fconst 10.0
    v4 = fmul v3, v0
    v5 = exp v0
    v6 = fconst 0.5
    v7 = fsub v6, v0
    v8 = fmin v5, v7
    v9 = fsub v4, v8
    return v2, v9
}",
        )
        .expect("reordered");
        let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} in {out}"));
        assert!(at("v9 = fsub v4, v8") < at("v1 = sqrt v0"), "{out}");
        assert!(at("v1 = sqrt v0") < at("v2 = atan v1"), "{out}");
    }

    #[test]
    fn a_block_in_order_or_with_a_check_stays() {
        let in_order = "function %f(p: f64) -> (f64, f64) {
block0(v0: f64):
    v1 = fmul v0, v0
    v2 = fneg v0
    return v2, v1
}";
        assert!(scheduled(in_order).is_none());
        let with_check = "function %f(p: f64) -> (f64, f64) {
block0(v0: f64):
    v1 = fneg v0
    v2 = feq v0, v0
    check v2, \"a number\"
    v3 = fmul v0, v0
    return v1, v3
}";
        assert!(scheduled(with_check).is_none());
    }
}
