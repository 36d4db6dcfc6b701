//! Block merging: a block whose only predecessor ends with an unconditional `jump` to it is
//! appended to that predecessor, its parameters replaced by the jump's arguments.
//!
//! Generated code (the inverse's dispatch and region blocks) is full of such chains; merging
//! them makes the text form readable and the code faster, and changes no behaviour: the merged
//! instructions run in the same order with the same values.

use super::{Block, Function, InstKind, Value};
use cranelift_entity::SecondaryMap;
use std::collections::HashMap;

/// Merges jump chains in `func`; returns how many blocks were merged away.
pub fn merge_blocks(func: &mut Function) -> usize {
    let merged = merge_blocks_keep_ids(func);
    if merged > 0 {
        func.compact();
    }
    merged
}

/// [`merge_blocks`] without the final [`Function::compact`]: merged blocks leave holes in the
/// numbering (for passes that compact later anyway).
///
/// Which blocks merge does not depend on the order of the merges (merging B into P gives P
/// B's terminator, and B's successors had B as their only predecessor exactly when they now
/// have P), so all of them are found on the original graph and done in one pass: each chain of
/// merged blocks is appended to its first block, and every use of a merged block's parameters
/// becomes (transitively) the argument its jump passed.
pub fn merge_blocks_keep_ids(func: &mut Function) -> usize {
    let reachable = func.reachable_blocks();
    let entry = func.entry();
    // Incoming edges from reachable blocks: how many, and from where (the last one).
    let mut incoming: SecondaryMap<Block, (u32, Option<Block>)> = SecondaryMap::new();
    for &b in &reachable {
        for s in func.successors(b) {
            let e = &mut incoming[s];
            e.0 += 1;
            e.1 = Some(b);
        }
    }
    // B merges into P: B is not the entry, its one incoming edge is a `jump` from P != B.
    let mut child: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
    let mut merged_into: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut subst: HashMap<Value, Value> = HashMap::new();
    let mut merged = 0;
    for &b in &reachable {
        if Some(b) == entry {
            continue;
        }
        let (1, Some(p)) = incoming[b] else {
            continue;
        };
        if p == b {
            continue;
        }
        let Some(term) = func.terminator(p) else {
            continue;
        };
        let InstKind::Jump { dest } = &func.insts[term].kind else {
            continue;
        };
        if dest.block != b {
            continue;
        }
        subst.extend(
            func.blocks[b]
                .params
                .iter()
                .copied()
                .zip(dest.args.iter().copied()),
        );
        child[p] = Some(b);
        merged_into[b] = true;
        merged += 1;
    }
    if merged == 0 {
        return 0;
    }
    // Each chain is appended to its first block, without the jumps between them.
    for &head in &func.layout.clone() {
        if merged_into[head] {
            continue;
        }
        let mut cur = head;
        while let Some(next) = child[cur] {
            func.blocks[head].insts.pop();
            let moved = std::mem::take(&mut func.blocks[next].insts);
            func.blocks[head].insts.extend(moved);
            func.blocks[next].params.clear();
            cur = next;
        }
    }
    func.layout.retain(|&b| !merged_into[b]);
    // Merged blocks' parameters become the jumps' arguments everywhere.
    let resolve = |mut v: Value| {
        while let Some(&w) = subst.get(&v) {
            v = w;
        }
        v
    };
    for &blk in &func.layout {
        for &inst in &func.blocks[blk].insts {
            func.insts[inst].kind.map_args(resolve);
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_module;
    use crate::ir::write::{write_module, WriteOptions};

    /// The previous implementation, one merge at a time with the graph recomputed after each:
    /// the reference for the one-pass version.
    fn one_at_a_time(func: &mut Function) -> usize {
        let mut merged = 0;
        loop {
            let reachable = func.reachable_blocks();
            let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
            for &b in &reachable {
                for s in func.successors(b) {
                    preds.entry(s).or_default().push(b);
                }
            }
            let entry = func.entry();
            let candidate = reachable.iter().copied().find_map(|b| {
                if Some(b) == entry {
                    return None;
                }
                let [p] = preds.get(&b)?.as_slice() else {
                    return None;
                };
                if *p == b {
                    return None;
                }
                let term = func.terminator(*p)?;
                matches!(&func.insts[term].kind, InstKind::Jump { dest } if dest.block == b)
                    .then_some((*p, b, term))
            });
            let Some((p, b, term)) = candidate else {
                break;
            };
            let InstKind::Jump { dest } = func.insts[term].kind.clone() else {
                break;
            };
            let subst: HashMap<Value, Value> = func.blocks[b]
                .params
                .iter()
                .copied()
                .zip(dest.args.iter().copied())
                .collect();
            func.blocks[p].insts.pop();
            let moved = std::mem::take(&mut func.blocks[b].insts);
            func.blocks[p].insts.extend(moved);
            func.blocks[b].params.clear();
            func.layout.retain(|&x| x != b);
            for &blk in &func.layout.clone() {
                for inst in func.blocks[blk].insts.clone() {
                    func.insts[inst]
                        .kind
                        .map_args(|v| *subst.get(&v).unwrap_or(&v));
                }
            }
            merged += 1;
        }
        if merged > 0 {
            func.compact();
        }
        merged
    }

    /// A random control-flow graph: blocks with parameters, jumps passing parameters on, branches
    /// and returns (not necessarily verifiable: merging does not need that).
    fn random_cfg(seed: u64) -> Function {
        use crate::ir::{BlockCall, Const, FuncKind, Opcode, Signature, Type};
        use crate::span::Span;
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        let sig = Signature {
            params: vec![Type::I64],
            returns: vec![Type::I64],
        };
        let mut f = Function::new("f", FuncKind::Fn, sig);
        let entry = f.create_entry();
        let n = 2 + next(7) as usize;
        let mut blocks = vec![entry];
        for _ in 1..n {
            let b = f.create_block();
            for _ in 0..next(3) {
                f.append_block_param(b, Type::I64);
            }
            blocks.push(b);
        }
        let sp = Span::default();
        for &b in &blocks {
            let mut avail = f.blocks[b].params.clone();
            avail.push(f.ins_const(b, Const::I64(next(100) as i64), sp));
            let a = avail[next(avail.len() as u64) as usize];
            avail.push(f.ins_prim(b, Opcode::Iadd, vec![a, a], sp));
            let args_for = |f: &Function, t: Block, next: &mut dyn FnMut(u64) -> u64| {
                (0..f.blocks[t].params.len())
                    .map(|_| avail[next(avail.len() as u64) as usize])
                    .collect::<Vec<_>>()
            };
            match next(4) {
                0 => {
                    let v = avail[0];
                    f.ins_return(b, vec![v], sp);
                }
                1 => {
                    let (t, e) = (
                        blocks[next(n as u64) as usize],
                        blocks[next(n as u64) as usize],
                    );
                    let c = f.ins_const(b, Const::Bool(next(2) == 0), sp);
                    let (ta, ea) = (args_for(&f, t, &mut next), args_for(&f, e, &mut next));
                    f.ins_void(
                        b,
                        InstKind::Brif {
                            cond: c,
                            then_dest: Box::new(BlockCall::new(t, ta)),
                            else_dest: Box::new(BlockCall::new(e, ea)),
                        },
                        sp,
                    );
                }
                _ => {
                    let t = blocks[next(n as u64) as usize];
                    let args = args_for(&f, t, &mut next);
                    f.ins_jump(b, t, args, sp);
                }
            }
        }
        f
    }

    #[test]
    fn one_pass_merges_as_one_merge_at_a_time() {
        let mut merged = 0;
        for seed in 0..2000 {
            let f = random_cfg(seed);
            let (mut a, mut b) = (f.clone(), f.clone());
            let (na, nb) = (merge_blocks(&mut a), one_at_a_time(&mut b));
            assert_eq!(na, nb, "seed {seed}");
            assert_eq!(a, b, "seed {seed}");
            merged += na;
        }
        assert!(merged > 500, "only {merged} merges");
    }

    #[test]
    fn chains_collapse_and_loops_stay() {
        let mut module = parse_module(
            "function %f(x: i64) -> i64 {
block0(v0: i64):
    jump block1(v0)
block1(v1: i64):
    v2 = iconst 1
    jump block2(v1, v2)
block2(v3: i64, v4: i64):
    v5 = iadd v3, v4
    v6 = ilt v5, v3
    brif v6, block3, block4(v5)
block3:
    jump block2(v3, v4)
block4(v7: i64):
    return v7
}
",
        )
        .expect("parses");
        for f in module.functions.values_mut() {
            assert_eq!(merge_blocks(f), 1);
        }
        verify_module(&module).expect("verifies");
        expect_test::expect![[r#"
            function %f(x: i64) -> i64 {
            block0(v0: i64):
                v1 = iconst 1
                jump block1(v0, v1)
            block1(v2: i64, v3: i64):
                v4 = iadd v2, v3
                v5 = ilt v4, v2
                brif v5, block2, block3(v4)
            block2:
                jump block1(v2, v3)
            block3(v6: i64):
                return v6
            }
        "#]]
        .assert_eq(&write_module(&module, &WriteOptions::default()));
    }
}
