//! Common subexpression elimination: an instruction that recomputes a value some dominating
//! instruction already computed is removed, and its results are replaced by the earlier ones.
//!
//! Only pure instructions are merged: constants, primitive operations and calls (module functions
//! are pure and deterministic; a dominating call or division that completed means the repeated
//! one would too). θ reads, choices, checks, records and terminators are never merged.
//!
//! Inversion runs this on its copy of the forward code, because a value computed twice looks
//! like fan-out to the reorientation (`(x + 1, exp(x + 1))` uses `x` twice), whereas a value
//! computed once and used twice is known as soon as either use is solved.

use super::dominators::DomTree;
use super::{Block, Const, FuncId, Function, Inst, InstKind, Opcode, Value};
use cranelift_entity::EntityRef;
use rustc_hash::FxHashMap;

#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Const(Const),
    /// A primitive of at most two operands (every opcode), without allocating.
    Prim2(Opcode, [Option<Value>; 2]),
    Prim(Opcode, Vec<Value>),
    Call(FuncId, Vec<Value>),
}

/// Removes recomputations from `func`; returns how many instructions were removed.
pub fn cse(func: &mut Function) -> usize {
    let removed = cse_keep_ids(func);
    if removed > 0 {
        func.compact();
    }
    removed
}

/// [`cse`] without the final [`Function::compact`]: removed instructions leave holes in the
/// numbering (for passes that compact later anyway).
pub fn cse_keep_ids(func: &mut Function) -> usize {
    let doms = DomTree::compute(func);
    let order: Vec<Block> = doms.reverse_postorder().collect();
    // Replacements by value number (values are dense).
    let mut alias: Vec<Option<Value>> = vec![None; func.values.len()];
    let resolve =
        |alias: &[Option<Value>], v: Value| alias.get(v.index()).copied().flatten().unwrap_or(v);
    // The instructions kept for each key, in the order they were kept: a list through
    // `candidates` (first and last index per key), without a vector per key.
    // Sized by the instructions that can be merged, among those in the layout: a function an
    // earlier pass rewrote in place has many more numbered (dead) ones.
    let keyed = func
        .layout
        .iter()
        .flat_map(|&b| &func.blocks[b].insts)
        .filter(|&&i| {
            matches!(
                func.insts[i].kind,
                InstKind::Const(_) | InstKind::Prim { .. } | InstKind::Call { .. }
            )
        })
        .count();
    let mut seen: FxHashMap<Key, (u32, u32)> =
        FxHashMap::with_capacity_and_hasher(keyed, Default::default());
    // (block, instruction, the next candidate of the same key or NONE).
    const NONE: u32 = u32::MAX;
    let mut candidates: Vec<(Block, Inst, u32)> = Vec::with_capacity(keyed);
    let mut removed = 0;
    for block in order {
        let insts = func.blocks[block].insts.clone();
        let mut kept = Vec::with_capacity(insts.len());
        for inst in insts {
            func.insts[inst].kind.map_args(|v| resolve(&alias, v));
            let key = match &func.insts[inst].kind {
                InstKind::Const(c) => Some(Key::Const(*c)),
                InstKind::Prim { op, args } => Some(match args.as_slice() {
                    [a] => Key::Prim2(*op, [Some(*a), None]),
                    [a, b] => Key::Prim2(*op, [Some(*a), Some(*b)]),
                    _ => Key::Prim(*op, args.clone()),
                }),
                InstKind::Call { callee, args } => Some(Key::Call(*callee, args.clone())),
                _ => None,
            };
            let Some(key) = key else {
                kept.push(inst);
                continue;
            };
            let mut earlier = None;
            let mut next = seen.get(&key).map_or(NONE, |&(first, _)| first);
            while next != NONE {
                let (b, i, after) = candidates[next as usize];
                if doms.dominates(b, block) {
                    earlier = Some(i);
                    break;
                }
                next = after;
            }
            match earlier {
                Some(earlier) => {
                    let old = func.insts[inst].results.clone();
                    let new = func.insts[earlier].results.clone();
                    for (o, n) in old.into_iter().zip(new) {
                        if let Some(slot) = alias.get_mut(o.index()) {
                            *slot = Some(n);
                        }
                    }
                    removed += 1;
                }
                None => {
                    let k = candidates.len() as u32;
                    candidates.push((block, inst, NONE));
                    match seen.get_mut(&key) {
                        Some((_, last)) => {
                            candidates[*last as usize].2 = k;
                            *last = k;
                        }
                        None => {
                            seen.insert(key, (k, k));
                        }
                    }
                    kept.push(inst);
                }
            }
        }
        func.blocks[block].insts = kept;
    }
    if removed > 0 {
        // Uses in blocks visited before their definitions' duplicates (through back edges).
        for block in func.layout.clone() {
            for inst in func.blocks[block].insts.clone() {
                func.insts[inst].kind.map_args(|v| resolve(&alias, v));
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_module;
    use crate::ir::write::{write_module, WriteOptions};

    fn cse_text(text: &str) -> String {
        let mut module = parse_module(text).expect("parses");
        for f in module.functions.values_mut() {
            cse(f);
        }
        verify_module(&module).expect("verifies");
        write_module(&module, &WriteOptions::default())
    }

    #[test]
    fn merges_repeated_pure_values_across_dominated_blocks() {
        let out = cse_text(
            "function %f(x: f64) -> (f64, f64) {
block0(v0: f64):
    v1 = fconst 1.0
    v2 = fadd v0, v1
    v3 = fconst 1.0
    v4 = fadd v0, v3
    v5 = fgt v4, v1
    brif v5, block1, block2
block1:
    v6 = fadd v0, v1
    v7 = exp v6
    return v2, v7
block2:
    return v4, v2
}
",
        );
        expect_test::expect![[r#"
            function %f(x: f64) -> (f64, f64) {
            block0(v0: f64):
                v1 = fconst 1.0
                v2 = fadd v0, v1
                v3 = fgt v2, v1
                brif v3, block1, block2
            block1:
                v4 = exp v2
                return v2, v4
            block2:
                return v2, v2
            }
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn keeps_values_of_sibling_blocks_apart_and_theta_reads_alone() {
        let out = cse_text(
            "function %g(y: f64) -> (f64, f64) generated_inverse(g) {
block0(v0: f64):
    v1 = theta real \"a\"
    v2 = theta real \"a\"
    v3 = fgt v0, v1
    brif v3, block1, block2
block1:
    v4 = fadd v1, v2
    jump block3(v4)
block2:
    v5 = fadd v1, v2
    jump block3(v5)
block3(v6: f64):
    v7 = fadd v1, v2
    return v6, v7
}
",
        );
        assert_eq!(out.matches("theta").count(), 2, "{out}");
        assert_eq!(out.matches("fadd").count(), 3, "{out}");
    }
}
