//! Jump threading: an edge into a block that holds nothing but a `jump` goes straight to where
//! that jump goes, with the jump's arguments (the block's parameters replaced by what the edge
//! passed).
//!
//! Generated code is full of such *forwarding* blocks: a choice between two values ends in
//! `brif c, block3, block4; block3: jump block5(v30); block4: jump block5(v29); block5(v37):
//! jump block6(v37)`, which threading turns into `brif c, block6(v30), block6(v29)`, a third of
//! the blocks of a typical inverse gone. Each block costs every later pass (dominator trees, the
//! θ schema, the JIT, whose size limit counts blocks), and each jump is a step of a run.
//!
//! Threading keeps every result bit for bit: the instructions that run are the same, minus the
//! jumps. It is sound in SSA without further conditions on the arguments: a value a forwarding
//! block passes on is its own parameter (replaced by the edge's argument) or defined in a block
//! that dominates it, and such a block dominates each of its predecessors too, so the value is
//! available where the edge now starts. What it needs is that the forwarding block's parameters
//! are used nowhere but in its own `jump`: a block it dominates may read them directly, and
//! once no edge enters the block they would be undefined. Such blocks are left alone, as are
//! cycles of forwarding blocks (a loop that only jumps), the entry block, and a block that
//! forwards to itself.
//!
//! A `brif` whose two edges end up equal becomes a `jump`; one whose edges go to the same block
//! with different arguments stays a `brif` (the JIT compiles it as selects).

use super::{Block, BlockCall, Function, InstKind, Value, ValueDef, ValueList};
use cranelift_entity::{EntitySet, SecondaryMap};

/// What is known of a block, for threading through it.
#[derive(Clone, Default)]
enum Forward {
    /// Not a forwarding block (or one that cannot be threaded through).
    #[default]
    No,
    /// A forwarding block whose final target is not worked out yet.
    Pending,
    /// Being worked out (a cycle if met again).
    Visiting,
    /// Where an edge into the block ends up, its arguments in terms of the block's parameters
    /// and of values that dominate it.
    To(BlockCall),
}

/// Threads the jumps of `func` through its forwarding blocks (see the module docs) and drops
/// the blocks no longer reachable; returns how many edges were redirected. The function stays
/// valid (the verifier's invariants hold if they held before) but is not compacted.
pub fn thread_jumps(func: &mut Function) -> usize {
    let reachable = func.reachable_blocks();
    let entry = func.entry();
    // Parameters read anywhere but in their own block's jump rule a block out.
    let mut read_elsewhere: EntitySet<Value> = EntitySet::new();
    let mut forward: SecondaryMap<Block, Forward> = SecondaryMap::new();
    for &b in &reachable {
        match jump_of(func, b) {
            Some(dest) if Some(b) != entry && dest.block != b => {
                forward[b] = Forward::Pending;
                for &a in &dest.args {
                    let own = matches!(func.values[a].def, ValueDef::Param(p, _) if p == b);
                    if !own {
                        read_elsewhere.insert(a);
                    }
                }
            }
            _ => {
                for &i in &func.blocks[b].insts {
                    func.insts[i].kind.for_each_arg(|v| {
                        read_elsewhere.insert(v);
                    });
                }
            }
        }
    }
    for &b in &reachable {
        if matches!(forward[b], Forward::Pending)
            && func.blocks[b]
                .params
                .iter()
                .any(|&p| read_elsewhere.contains(p))
        {
            forward[b] = Forward::No;
        }
    }
    for &b in &reachable {
        resolve(func, &mut forward, b);
    }
    let mut redirected = 0;
    for &b in &reachable {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let mut kind = func.insts[t].kind.clone();
        for call in kind.successors_mut() {
            if let Forward::To(to) = &forward[call.block] {
                *call = substitute(func, call, to);
                redirected += 1;
            }
        }
        if let InstKind::Brif {
            then_dest,
            else_dest,
            ..
        } = &kind
        {
            if then_dest == else_dest {
                kind = InstKind::Jump {
                    dest: (**then_dest).clone(),
                };
            }
        }
        func.insts[t].kind = kind;
    }
    if redirected > 0 {
        func.remove_unreachable_blocks();
    }
    redirected
}

/// Works out `forward[b]` for a forwarding block `b`: follows its chain of forwarding blocks
/// to the first block that is not one, then fills in the chain from its end. A chain that runs
/// into a cycle is not threaded through.
fn resolve(func: &Function, forward: &mut SecondaryMap<Block, Forward>, b: Block) {
    let mut chain = Vec::new();
    let mut at = b;
    while matches!(forward[at], Forward::Pending) {
        let Some(jump) = jump_of(func, at) else {
            forward[at] = Forward::No;
            break;
        };
        forward[at] = Forward::Visiting;
        chain.push(at);
        at = jump.block;
    }
    let cycle = matches!(forward[at], Forward::Visiting);
    // From the last block of the chain back: each one's jump, followed on through the next.
    while let Some(c) = chain.pop() {
        forward[c] = match jump_of(func, c) {
            Some(jump) if !cycle => match &forward[jump.block] {
                Forward::To(to) => Forward::To(substitute(func, jump, to)),
                _ => Forward::To(jump.clone()),
            },
            _ => Forward::No,
        };
    }
}

/// The `jump` a forwarding block consists of.
fn jump_of(func: &Function, b: Block) -> Option<&BlockCall> {
    match func.blocks[b].insts.as_slice() {
        [i] => match &func.insts[*i].kind {
            InstKind::Jump { dest } => Some(dest),
            _ => None,
        },
        _ => None,
    }
}

/// `to` (where an edge into `call.block` ends up, in terms of that block's parameters) for the
/// edge `call`: the parameters replaced by the arguments `call` passes.
fn substitute(func: &Function, call: &BlockCall, to: &BlockCall) -> BlockCall {
    let params = &func.blocks[call.block].params;
    let args: ValueList = to
        .args
        .iter()
        .map(|&a| match params.iter().position(|&p| p == a) {
            Some(k) => call.args.get(k).copied().unwrap_or(a),
            None => a,
        })
        .collect();
    BlockCall::new(to.block, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_module;
    use crate::ir::write::{write_function, WriteOptions};

    /// Threads the first function of `text`, checks it still verifies, and prints it.
    fn run(text: &str) -> String {
        let mut m = parse_module(text).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        thread_jumps(&mut m.functions[id]);
        m.functions[id].compact();
        verify_module(&m).expect("still valid");
        write_function(&m, id, &WriteOptions::default())
    }

    #[test]
    fn a_choice_of_two_values_becomes_one_branch() {
        let out = run("function %f(a: f64, b: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = flt v0, v1
    brif v2, block1, block2
block1:
    jump block6(v0)
block2:
    v3 = fadd v0, v1
    v4 = flt v3, v1
    brif v4, block3, block4
block3:
    jump block5(v3)
block4:
    jump block5(v1)
block5(v5: f64):
    jump block6(v5)
block6(v6: f64):
    v7 = fmul v6, v6
    return v7
}
");
        assert_eq!(
            out,
            "function %f(a: f64, b: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = flt v0, v1
    brif v2, block2(v0), block1
block1:
    v3 = fadd v0, v1
    v4 = flt v3, v1
    brif v4, block2(v3), block2(v1)
block2(v5: f64):
    v6 = fmul v5, v5
    return v6
}
"
        );
    }

    #[test]
    fn equal_edges_become_a_jump() {
        let out = run("function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    brif v2, block1, block2
block1:
    jump block3(v0)
block2:
    jump block3(v0)
block3(v3: i64):
    return v3
}
");
        assert_eq!(
            out,
            "function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    jump block1(v0)
block1(v3: i64):
    return v3
}
"
        );
    }

    #[test]
    fn parameters_read_past_the_jump_keep_their_block() {
        // block2 reads block1's parameter directly: block1 must stay on the path.
        let text = "function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    brif v2, block1(v0), block1(v1)
block1(v3: i64):
    jump block2
block2:
    v4 = iadd v3, v3
    return v4
}
";
        assert_eq!(run(text), text);
    }

    #[test]
    fn loops_of_jumps_stay() {
        let text = "function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    brif v2, block1, block3
block1:
    jump block2
block2:
    jump block1
block3:
    return v0
}
";
        assert_eq!(run(text), text);
    }

    #[test]
    fn threading_keeps_every_result() {
        // Threading only removes jumps: a run that finished finishes, the same.
        let (threaded, finished) = crate::ir::testing::keeps_every_result(thread_jumps);
        assert!(threaded > 1000, "only {threaded} edges threaded");
        assert!(finished > 5_000, "only {finished} runs finished");
    }
}
