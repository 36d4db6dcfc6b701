//! Block merging: a block whose only predecessor ends with an unconditional `jump` to it is
//! appended to that predecessor, its parameters replaced by the jump's arguments.
//!
//! Generated code (the inverse's dispatch and region blocks) is full of such chains; merging
//! them makes the text form readable and the code faster, and changes no behaviour: the merged
//! instructions run in the same order with the same values.

use super::{Block, Function, InstKind, Value};
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
pub fn merge_blocks_keep_ids(func: &mut Function) -> usize {
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
        // A block B with exactly one incoming edge, which is a `jump` from P ≠ B.
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
        // Drop P's jump, then move B's instructions to P.
        func.blocks[p].insts.pop();
        let moved = std::mem::take(&mut func.blocks[b].insts);
        func.blocks[p].insts.extend(moved);
        func.blocks[b].params.clear();
        func.layout.retain(|&x| x != b);
        // B's parameters become the jump's arguments everywhere.
        for &blk in &func.layout.clone() {
            for inst in func.blocks[blk].insts.clone() {
                func.insts[inst]
                    .kind
                    .map_args(|v| *subst.get(&v).unwrap_or(&v));
            }
        }
        merged += 1;
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_module;
    use crate::ir::write::{write_module, WriteOptions};

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
