//! Common subexpression elimination: an instruction that recomputes a value some dominating
//! instruction already computed is removed, and its results are replaced by the earlier ones.
//!
//! Only pure instructions are merged: constants, primitive operations and calls of pure functions
//! (forward functions are pure and deterministic; a dominating call or division that completed
//! means the repeated one would too). θ reads, choices, checks, records and terminators are never
//! merged, nor are calls of functions that read θ or record it (a generated inverse or PGF, as
//! [`cse_keep_ids_where`] is told): two such calls read or record twice.
//!
//! Inversion runs this on its copy of the forward code, because a value computed twice looks
//! like fan-out to the reorientation (`(x + 1, exp(x + 1))` uses `x` twice), whereas a value
//! computed once and used twice is known as soon as either use is solved.

use super::dominators::DomTree;
use super::{Block, FuncId, Function, Inst, InstKind, Value};
use cranelift_entity::EntityRef;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// The hash of what an instruction computes, if CSE may merge it: its kind (constant, primitive
/// or call), constant, opcode or callee, and operands. Two instructions merge when
/// [`same_computation`] holds.
fn computation_hash(kind: &InstKind, pure_call: &dyn Fn(FuncId) -> bool) -> Option<u64> {
    let mut h = FxHasher::default();
    match kind {
        InstKind::Const(c) => (0u8, c).hash(&mut h),
        InstKind::Prim { op, args } => (1u8, op, args.as_slice()).hash(&mut h),
        InstKind::Call { callee, args } if pure_call(*callee) => {
            (2u8, callee, args.as_slice()).hash(&mut h)
        }
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
/// numbering (for passes that compact later anyway). Every callee is taken to be pure (forward
/// code calls only forward functions).
pub fn cse_keep_ids(func: &mut Function) -> usize {
    cse_keep_ids_where(func, &|_| true)
}

/// [`cse_keep_ids`], merging calls only of the callees `pure_call` says are pure.
pub fn cse_keep_ids_where(func: &mut Function, pure_call: &dyn Fn(FuncId) -> bool) -> usize {
    let doms = DomTree::compute(func);
    // Replacements by value number (values are dense).
    let mut alias: Vec<Option<Value>> = vec![None; func.values.len()];
    let resolve =
        |alias: &[Option<Value>], v: Value| alias.get(v.index()).copied().flatten().unwrap_or(v);
    // A scoped table, as Cranelift's GVN keeps: the blocks are visited in a preorder of the
    // dominator tree, and the table holds the computations of the blocks that dominate the one
    // visited (those on the path from the entry), each once; leaving a block's subtree takes
    // its computations out again. A lookup is one probe, however many blocks compute the same
    // thing without dominating each other (the same constant in ten thousand sibling branches).
    // Each entry is an instruction (4 bytes); its computation is read from the instruction,
    // whose operands are final once it is kept.
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
    let mut table: HashTable<Inst> = HashTable::with_capacity(keyed);
    // The blocks entered and not yet left, with where each one's insertions start in `undo`.
    let mut scopes: Vec<(Block, usize)> = Vec::new();
    let mut undo: Vec<(u64, Inst)> = Vec::new();
    let mut removed = 0;
    for block in doms.preorder() {
        while let Some(&(open, mark)) = scopes.last() {
            if doms.dominates(open, block) {
                break;
            }
            for (hash, inst) in undo.drain(mark..) {
                if let Ok(entry) = table.find_entry(hash, |&e| e == inst) {
                    entry.remove();
                }
            }
            scopes.pop();
        }
        scopes.push((block, undo.len()));
        let insts = std::mem::take(&mut func.blocks[block].insts);
        let mut kept = Vec::with_capacity(insts.len());
        for inst in insts {
            func.insts[inst].kind.map_args(|v| resolve(&alias, v));
            let kind = &func.insts[inst].kind;
            let Some(hash) = computation_hash(kind, pure_call) else {
                kept.push(inst);
                continue;
            };
            let earlier = table
                .find(hash, |&e| same_computation(&func.insts[e].kind, kind))
                .copied();
            match earlier {
                Some(earlier) => {
                    let insts = &func.insts;
                    for (&o, &n) in insts[inst].results.iter().zip(&insts[earlier].results) {
                        if let Some(slot) = alias.get_mut(o.index()) {
                            *slot = Some(n);
                        }
                    }
                    removed += 1;
                }
                None => {
                    let hash_of =
                        |&e: &Inst| computation_hash(&func.insts[e].kind, pure_call).unwrap_or(0);
                    table.insert_unique(hash, inst, hash_of);
                    undo.push((hash, inst));
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
