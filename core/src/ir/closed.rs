//! Closed block form: every block receives, as block parameters, every value it uses that is
//! defined elsewhere.
//!
//! After this pass a block reads only its own parameters and its own instructions' results, so
//! each block is a small straight-line function from its parameters to its branch condition and
//! outgoing arguments. That is what lets the reorientation invert one block at a time along
//! whichever edge the inverse walks back over: the values a block received are exactly its
//! parameters, and the values it passed on are exactly its branch arguments.
//!
//! Liveness is computed on SSA by the usual backward dataflow: a value is live into a block if
//! the block uses it without defining it, or a successor needs it. The entry block has no live-in
//! values in verified SSA (every use is dominated by its definition).

use super::{Block, Function, Inst, Value, ValueDef, ValueList};
use cranelift_entity::SecondaryMap;
use std::collections::{BTreeSet, HashMap};

/// Returns `f` in closed block form. The entry block and existing parameters keep their values;
/// the new parameters are appended after the existing ones.
pub fn close_blocks(f: &Function) -> Function {
    let mut f = f.clone();
    let blocks = f.reachable_blocks();
    let Some(&entry) = blocks.first() else {
        return f;
    };
    // The block of each instruction in a reachable block (a map built once: searching the
    // blocks for each value made this quadratic).
    let mut inst_block: SecondaryMap<Inst, Option<Block>> = SecondaryMap::new();
    for &b in &blocks {
        for &inst in &f.blocks[b].insts {
            inst_block[inst].get_or_insert(b);
        }
    }
    let defined_in = |f: &Function, v: Value| -> Option<Block> {
        match f.values[v].def {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(inst, _) => inst_block[inst],
        }
    };
    let def_block: HashMap<Value, Block> = f
        .values
        .keys()
        .filter_map(|v| defined_in(&f, v).map(|b| (v, b)))
        .collect();

    // Uses of values defined elsewhere, per block.
    let mut uses: HashMap<Block, BTreeSet<Value>> = HashMap::new();
    for &b in &blocks {
        let set = uses.entry(b).or_default();
        for &inst in &f.blocks[b].insts {
            f.insts[inst].kind.for_each_arg(|v| {
                if def_block.get(&v) != Some(&b) {
                    set.insert(v);
                }
            });
        }
    }
    // live_in(B) = uses(B) ∪ (⋃ live_in(S) − defs(B)), to a fixpoint.
    let mut live_in: HashMap<Block, BTreeSet<Value>> = uses.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in blocks.iter().rev() {
            let mut set = live_in[&b].clone();
            for s in f.successors(b) {
                if let Some(succ) = live_in.get(&s) {
                    for &v in succ {
                        if def_block.get(&v) != Some(&b) {
                            set.insert(v);
                        }
                    }
                }
            }
            if set != live_in[&b] {
                live_in.insert(b, set);
                changed = true;
            }
        }
    }

    // New parameters; constants are copied into the block instead, so that they stay known
    // constants wherever they are used.
    let constant = |f: &Function, v: Value| match f.values[v].def {
        ValueDef::Result(inst, _) => match f.insts[inst].kind {
            crate::ir::InstKind::Const(c) => Some((c, f.insts[inst].span)),
            _ => None,
        },
        ValueDef::Param(..) => None,
    };
    let mut local: HashMap<(Block, Value), Value> = HashMap::new();
    let mut order: HashMap<Block, Vec<Value>> = HashMap::new();
    for &b in &blocks {
        if b == entry {
            continue;
        }
        let mut values = Vec::new();
        let mut copies = Vec::new();
        for &v in &live_in[&b] {
            if let Some((c, span)) = constant(&f, v) {
                let inst = f.insts.push(crate::ir::InstData {
                    kind: crate::ir::InstKind::Const(c),
                    results: ValueList::new(),
                    span,
                });
                let r = f.values.push(crate::ir::ValueData {
                    ty: c.ty(),
                    def: ValueDef::Result(inst, 0),
                });
                f.insts[inst].results.push(r);
                copies.push(inst);
                local.insert((b, v), r);
                continue;
            }
            let ty = f.value_type(v);
            let p = f.append_block_param(b, ty);
            local.insert((b, v), p);
            values.push(v);
        }
        let insts = std::mem::take(&mut f.blocks[b].insts);
        f.blocks[b].insts = copies.into_iter().chain(insts).collect();
        order.insert(b, values);
    }

    // Rewrite uses to the local versions, and pass live-ins along every edge.
    for &b in &blocks {
        for inst in f.blocks[b].insts.clone() {
            let mut kind = f.insts[inst].kind.clone();
            kind.map_args(|v| *local.get(&(b, v)).unwrap_or(&v));
            for call in kind.successors_mut() {
                if let Some(values) = order.get(&call.block) {
                    for &v in values {
                        call.args.push(*local.get(&(b, v)).unwrap_or(&v));
                    }
                }
            }
            f.insts[inst].kind = kind;
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_function_in;
    use crate::ir::write::{write_function_in, WriteOptions};

    #[test]
    fn loop_values_become_parameters() {
        let module = parse_module(
            "function %triangle(x: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = iconst 0
    jump block1(v1, v2)
block1(v3: i64, v4: i64):
    v5 = ile v3, v0
    brif v5, block2, block3
block2:
    v6 = iadd v4, v3
    v7 = iconst 1
    v8 = iadd v3, v7
    jump block1(v8, v6)
block3:
    return v4
}
",
        )
        .expect("parses");
        let f = &module.functions[module.get("triangle").expect("f")];
        let mut closed = close_blocks(f);
        closed.compact();
        verify_function_in(&module, &closed).expect("verifies");
        let text = write_function_in(&module, &closed, &WriteOptions::default());
        expect_test::expect![[r#"
            function %triangle(x: i64) -> i64 {
            block0(v0: i64):
                v1 = iconst 0
                v2 = iconst 0
                jump block1(v1, v2, v0)
            block1(v3: i64, v4: i64, v5: i64):
                v6 = ile v3, v5
                brif v6, block2(v5, v3, v4), block3(v4)
            block2(v7: i64, v8: i64, v9: i64):
                v10 = iadd v9, v8
                v11 = iconst 1
                v12 = iadd v8, v11
                jump block1(v12, v10, v7)
            block3(v13: i64):
                return v13
            }
        "#]]
        .assert_eq(&text);
    }
}
