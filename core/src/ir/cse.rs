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
use super::{Block, Function, Inst, InstKind, Value};
use cranelift_entity::EntityRef;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// The hash of what an instruction computes, if CSE may merge it: its kind (constant, primitive
/// or call), constant, opcode or callee, and operands. Two instructions merge when
/// [`same_computation`] holds.
fn computation_hash(kind: &InstKind) -> Option<u64> {
    let mut h = FxHasher::default();
    match kind {
        InstKind::Const(c) => (0u8, c).hash(&mut h),
        InstKind::Prim { op, args } => (1u8, op, args.as_slice()).hash(&mut h),
        InstKind::Call { callee, args } => (2u8, callee, args.as_slice()).hash(&mut h),
        _ => return None,
    }
    Some(h.finish())
}

/// Whether two instructions compute the same thing (constants by bits).
fn same_computation(a: &InstKind, b: &InstKind) -> bool {
    match (a, b) {
        (InstKind::Const(x), InstKind::Const(y)) => x == y,
        (InstKind::Prim { op, args }, InstKind::Prim { op: o, args: a }) => op == o && args == a,
        (InstKind::Call { callee, args }, InstKind::Call { callee: c, args: a }) => {
            callee == c && args == a
        }
        _ => false,
    }
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
    // Each entry is the first and last candidate of one computation; the computation itself is
    // read from the first candidate's instruction (whose operands are final once it is kept),
    // so an entry is 8 bytes whatever the instruction holds (as Cranelift's GVN map does).
    let mut seen: HashTable<(u32, u32)> = HashTable::with_capacity(keyed);
    // (block, instruction, the next candidate of the same computation or NONE).
    const NONE: u32 = u32::MAX;
    let mut candidates: Vec<(Block, Inst, u32)> = Vec::with_capacity(keyed);
    let mut removed = 0;
    for block in order {
        let insts = std::mem::take(&mut func.blocks[block].insts);
        let mut kept = Vec::with_capacity(insts.len());
        for inst in insts {
            func.insts[inst].kind.map_args(|v| resolve(&alias, v));
            let kind = &func.insts[inst].kind;
            let Some(hash) = computation_hash(kind) else {
                kept.push(inst);
                continue;
            };
            let kind_of = |&(first, _): &(u32, u32)| &func.insts[candidates[first as usize].1].kind;
            let entry = seen.find(hash, |e| same_computation(kind_of(e), kind));
            let mut earlier = None;
            let mut next = entry.map_or(NONE, |&(first, _)| first);
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
                    let (insts, old) = (&func.insts, inst);
                    for (&o, &n) in insts[old].results.iter().zip(&insts[earlier].results) {
                        if let Some(slot) = alias.get_mut(o.index()) {
                            *slot = Some(n);
                        }
                    }
                    removed += 1;
                }
                None => {
                    let k = candidates.len() as u32;
                    let found = seen.find_mut(hash, |e| {
                        same_computation(&func.insts[candidates[e.0 as usize].1].kind, kind)
                    });
                    match found {
                        Some((_, last)) => {
                            candidates[*last as usize].2 = k;
                            *last = k;
                        }
                        None => {
                            let hash_of = |&(first, _): &(u32, u32)| {
                                let first = candidates[first as usize].1;
                                computation_hash(&func.insts[first].kind).unwrap_or(0)
                            };
                            seen.insert_unique(hash, (k, k), hash_of);
                        }
                    }
                    candidates.push((block, inst, NONE));
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
