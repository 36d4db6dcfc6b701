//! Tail duplication: a block that returns, entered from several places that pass it constants,
//! is copied onto the end of each place, where its constants are known.
//!
//! To an inverse, a join is a value to solve for and then tell apart: `x * if b { 2.0 } else
//! { 3.0 }` walked back reads the factor from θ and keeps it only where it is 2.0 or 3.0
//! exactly, which almost no θ is (0% of them were accepted). With the join's code copied into
//! each arm, the arms compute `x * 2.0` and `x * 3.0`, each of which the inverse solves, and θ
//! chooses the arm (which `return` produced y) only where both can produce y.
//!
//! Invariants:
//! - Behaviour is unchanged: each copy runs the block's instructions on the values that edge
//!   passed, in the same order, and nothing else runs differently.
//! - Only blocks that end in `return` are copied: no other block uses their values, so the
//!   copies stay in SSA form; a branch's edge into one gets a block of its own to hold the copy.
//! - Only where it pays: some parameter of the block receives a constant on every edge.
//! - Growth is bounded ([`TailLimits`]): small blocks, few returns, few instructions added.

use super::{Block, BlockCall, Function, Inst, InstKind, Value};
use rustc_hash::FxHashMap;

/// How far [`duplicate_tails`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailLimits {
    /// The most instructions a copied block may have.
    pub max_block: usize,
    /// The most instructions the copies may add in all.
    pub max_added: usize,
    /// The most blocks that return the function may end with.
    pub max_returns: usize,
}

impl Default for TailLimits {
    fn default() -> TailLimits {
        TailLimits {
            max_block: 64,
            max_added: 2_000,
            max_returns: 16,
        }
    }
}

/// `f` with its returning blocks copied into their predecessors where a parameter is a constant
/// on every edge (see the module docs); `None` if there is no such block. The result is not
/// compacted.
pub fn duplicate_tails(f: &Function, limits: TailLimits) -> Option<Function> {
    let mut g = f.clone();
    let mut added = 0;
    let mut changed = false;
    // Each round copies one block away (and the copies may make another one a candidate: a
    // predecessor that returns now, entered by constants itself).
    while let Some((block, edges)) = candidate(&g, &limits, added) {
        added += (edges.len() - 1) * g.blocks[block].insts.len();
        for (from, d) in edges {
            copy_into(&mut g, block, from, d);
        }
        g.remove_unreachable_blocks();
        changed = true;
    }
    changed.then_some(g)
}

/// A returning block to copy, with its incoming edges (each a terminator and which of its
/// targets), if one qualifies within the limits.
fn candidate(
    g: &Function,
    limits: &TailLimits,
    added: usize,
) -> Option<(Block, Vec<(Inst, usize)>)> {
    let blocks = g.reachable_blocks();
    let entry = *blocks.first()?;
    let returns = blocks.iter().filter(|&&b| g.ends_in_return(b)).count();
    let incoming = g.incoming_edges(&blocks);
    blocks.iter().copied().find_map(|b| {
        if b == entry || !g.ends_in_return(b) {
            return None;
        }
        let size = g.blocks[b].insts.len();
        let edges = incoming.of(b);
        let copies = edges.len();
        if copies < 2
            || size > limits.max_block
            || returns + copies - 1 > limits.max_returns
            || added + (copies - 1) * size > limits.max_added
        {
            return None;
        }
        let args = |&(t, d): &(Inst, usize)| {
            g.insts[t]
                .kind
                .successor(d)
                .map(|call| call.args.clone())
                .unwrap_or_default()
        };
        let all_args: Vec<_> = edges.iter().map(args).collect();
        let constant_param = (0..g.blocks[b].params.len()).any(|k| {
            all_args
                .iter()
                .all(|a| a.get(k).is_some_and(|&v| g.constant(v).is_some()))
        });
        constant_param.then(|| (b, edges.to_vec()))
    })
}

/// Copies returning block `block` onto the end of the edge `(t, d)` into it: in place of a
/// `jump`, or in a new block that a branch's edge now enters.
fn copy_into(g: &mut Function, block: Block, t: Inst, d: usize) {
    let Some(call) = g.insts[t].kind.successor(d).cloned() else {
        return;
    };
    let from = match &g.insts[t].kind {
        InstKind::Jump { .. } => {
            let Some(from) = block_of(g, t) else {
                return;
            };
            g.blocks[from].insts.pop();
            from
        }
        _ => {
            let edge = g.create_block();
            if let Some(c) = g.insts[t].kind.successor_mut(d) {
                *c = BlockCall::new(edge, Vec::new());
            }
            edge
        }
    };
    let mut map: FxHashMap<Value, Value> = g.blocks[block]
        .params
        .iter()
        .copied()
        .zip(call.args.iter().copied())
        .collect();
    for i in g.blocks[block].insts.clone() {
        let data = &g.insts[i];
        let mut kind = data.kind.clone();
        kind.map_args(|v| map.get(&v).copied().unwrap_or(v));
        let types: Vec<_> = data.results.iter().map(|&r| g.values[r].ty).collect();
        let (old, span) = (data.results.clone(), data.span);
        let copy = g.append_inst(from, kind, &types, span);
        for (o, &n) in old.iter().zip(g.insts[copy].results.iter()) {
            map.insert(*o, n);
        }
    }
}

/// The block whose terminator is `t`.
fn block_of(g: &Function, t: Inst) -> Option<Block> {
    g.layout
        .iter()
        .copied()
        .find(|&b| g.blocks[b].insts.last() == Some(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplicated(text: &str) -> Option<String> {
        crate::ir::testing::rewritten(text, |f| {
            let mut g = duplicate_tails(f, TailLimits::default())?;
            g.compact();
            Some(g)
        })
    }

    #[test]
    fn a_join_of_constants_is_copied_into_each_arm() {
        let out = duplicated(
            "function %f(x: f64, b: bool) -> f64 {
block0(v0: f64, v1: bool):
    brif v1, block1, block2
block1:
    v2 = fconst 2.0
    jump block3(v2)
block2:
    v3 = fconst 3.0
    jump block3(v3)
block3(v4: f64):
    v5 = fmul v0, v4
    return v5
}",
        )
        .expect("copied");
        assert_eq!(out.matches("return").count(), 2, "{out}");
        assert!(!out.contains("block3"), "{out}");
    }

    #[test]
    fn a_branch_edge_gets_a_block_for_its_copy() {
        let out = duplicated(
            "function %f(x: f64, b: bool) -> f64 {
block0(v0: f64, v1: bool):
    v2 = fconst 2.0
    v3 = fconst 3.0
    brif v1, block1(v2), block1(v3)
block1(v4: f64):
    v5 = fmul v0, v4
    return v5
}",
        )
        .expect("copied");
        assert_eq!(out.matches("return").count(), 2, "{out}");
    }

    #[test]
    fn a_join_of_unknowns_or_a_block_that_goes_on_stays() {
        let unknowns = "function %f(x: f64, b: bool) -> f64 {
block0(v0: f64, v1: bool):
    brif v1, block1, block2
block1:
    v2 = fneg v0
    jump block3(v2)
block2:
    jump block3(v0)
block3(v4: f64):
    v5 = fmul v0, v4
    return v5
}";
        assert!(duplicated(unknowns).is_none());
        let goes_on = "function %f(x: f64, b: bool) -> f64 {
block0(v0: f64, v1: bool):
    brif v1, block1, block2
block1:
    v2 = fconst 2.0
    jump block3(v2)
block2:
    v3 = fconst 3.0
    jump block3(v3)
block3(v4: f64):
    v5 = fmul v0, v4
    jump block4(v5)
block4(v6: f64):
    return v6
}";
        // block3 does not return; block4 is entered once.
        assert!(duplicated(goes_on).is_none());
    }

    /// Random functions that pass constants on keep every result: the copies run what the
    /// block ran.
    #[test]
    fn duplication_keeps_every_result() {
        let (copied, finished) = crate::ir::testing::keeps_every_result_in(true, |f| {
            match duplicate_tails(f, TailLimits::default()) {
                Some(g) => {
                    *f = g;
                    1
                }
                None => 0,
            }
        });
        assert!(copied > 100, "only {copied} functions changed");
        assert!(finished > 5_000, "only {finished} runs finished");
    }
}
