//! Inlining: a call of a small function that does not recurse is replaced by a copy of the
//! callee's body, run on the call's arguments.
//!
//! To an inverse, a call is a wall: the callee's inverse is made once for every caller, so it
//! knows nothing of what the caller passes. `clamp(x * 2.0, 0.0, 1.0)` walked back through
//! `clamp`'s own inverse reads the bounds from θ and keeps only the θ where they are exactly
//! 0 and 1 (0.3% of θ were accepted); `lerp(10.0, 20.0, t)` accepted none. Copied into the
//! caller, the bounds are constants, the ranges and facts the caller knows reach the callee's
//! code, and the e-graph sees the whole expression.
//!
//! Invariants:
//! - Behaviour is unchanged: the copy runs the callee's instructions, in order, on the values
//!   the call passed, and the callee's `return` becomes a jump to the rest of the caller's
//!   block, whose parameters are the call's results (the same values: every use stays valid).
//! - Only callees `inlinable` accepts are copied, and never one that can call itself or the
//!   caller (recursion stays a call: its inverse is a call of the inverse being built).
//! - Growth is bounded ([`InlineLimits`]): small callees, few instructions added in all. Calls
//!   the copies bring are inlined in turn, within the same bound.
//! - Linear in the function and what is added: each block is walked once, and a block split
//!   at a call moves only what follows the call, once.

use super::{Block, BlockCall, FuncId, Function, Inst, InstKind, Module, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

/// How far [`inline_calls`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InlineLimits {
    /// The most instructions a callee may have to be copied.
    pub max_callee: usize,
    /// The most instructions the copies may add to one function in all.
    pub max_added: usize,
}

impl Default for InlineLimits {
    fn default() -> InlineLimits {
        InlineLimits {
            max_callee: 400,
            max_added: 4_000,
        }
    }
}

/// What [`inline_calls`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Inlined {
    /// The caller with the calls replaced (not compacted).
    pub function: Function,
    /// How many calls were replaced.
    pub calls: usize,
}

/// `module`'s function `caller` with its calls of small functions that `inlinable` accepts and
/// that cannot reach themselves or `caller` replaced by copies of their bodies (see the module
/// docs); `None` if no call is.
pub fn inline_calls(
    module: &Module,
    caller: FuncId,
    limits: InlineLimits,
    inlinable: impl Fn(FuncId) -> bool,
) -> Option<Inlined> {
    let mut g = module.functions[caller].clone();
    let mut added = 0;
    let mut calls = 0;
    let mut verdicts: FxHashMap<FuncId, bool> = FxHashMap::default();
    let mut accepts = |callee: FuncId| -> bool {
        *verdicts.entry(callee).or_insert_with(|| {
            let f = &module.functions[callee];
            let size = f.insts_in_layout().count();
            callee != caller
                && !f.layout.is_empty()
                && size <= limits.max_callee
                && inlinable(callee)
                && !reaches(module, callee, &[callee, caller])
        })
    };
    let original = g.layout.clone();
    // The blocks made while walking a block: the copies of each callee, then the rest of the
    // block after the call. They go right after it in the layout.
    let mut made: FxHashMap<Block, Vec<Block>> = FxHashMap::default();
    let mut work: Vec<Block> = original.iter().rev().copied().collect();
    // The values some instruction reads (the copies' reads are added as they are made). A
    // call whose results nothing reads stays a call: copied, its code would be code the
    // inverse must walk back for nothing.
    let mut used: FxHashSet<Value> = FxHashSet::default();
    let present: Vec<Inst> = g.insts_in_layout().map(|(_, i)| i).collect();
    note_reads(&g, &present, &mut used);
    // The results of calls replaced by straight-line copies, and the values they stand for.
    let mut replaced: FxHashMap<Value, Value> = FxHashMap::default();
    while let Some(block) = work.pop() {
        let mut pending: VecDeque<Inst> = std::mem::take(&mut g.blocks[block].insts).into();
        let mut current = block;
        while let Some(inst) = pending.pop_front() {
            let InstKind::Call { callee, args } = &g.insts[inst].kind else {
                g.blocks[current].insts.push(inst);
                continue;
            };
            let (callee, args) = (*callee, args.to_vec());
            let size = module.functions[callee].insts_in_layout().count();
            let read = g.insts[inst].results.iter().any(|r| used.contains(r));
            if !read || added + size > limits.max_added || !accepts(callee) {
                g.blocks[current].insts.push(inst);
                continue;
            }
            added += size;
            calls += 1;
            let body = &module.functions[callee];
            let results = std::mem::take(&mut g.insts[inst].results);
            if let Some(copies) = copy_straight(&mut g, body, &args, &results, &mut replaced) {
                note_reads(&g, &copies, &mut used);
                // Walked next, for calls of their own.
                for &c in copies.iter().rev() {
                    pending.push_front(c);
                }
                continue;
            }
            let rest = g.create_block();
            // The call's results become the parameters of the rest of the block.
            for (i, &r) in results.iter().enumerate() {
                g.values[r].def = ValueDef::Param(rest, i as u32);
                g.blocks[rest].params.push(r);
            }
            let span = g.insts[inst].span;
            let (copies, entered) = copy_body(&mut g, body, &args, rest);
            for &b in &copies {
                note_reads(&g, &g.blocks[b].insts, &mut used);
            }
            let passed = if entered { args } else { Vec::new() };
            g.ins_jump(current, copies[0], passed, span);
            // The copies are walked for calls of their own, after the rest of this block.
            work.extend(copies.iter().rev().copied());
            let after = made.entry(block).or_default();
            after.extend(copies);
            after.push(rest);
            current = rest;
        }
    }
    if calls == 0 {
        return None;
    }
    if !replaced.is_empty() {
        let resolve = |mut v: Value| {
            while let Some(&w) = replaced.get(&v) {
                v = w;
            }
            v
        };
        for (_, i) in g.insts_in_layout().collect::<Vec<_>>() {
            g.insts[i].kind.map_args(resolve);
        }
    }
    g.layout = layout(&original, &made);
    Some(Inlined { function: g, calls })
}

/// Adds to `used` every value that instructions `insts` of `g` read.
fn note_reads(g: &Function, insts: &[Inst], used: &mut FxHashSet<Value>) {
    for &i in insts {
        g.insts[i].kind.for_each_arg(|v| {
            used.insert(v);
        });
    }
}

/// The original blocks, each followed by the blocks made while walking it (and those by the
/// blocks made while walking them).
fn layout(original: &[Block], made: &FxHashMap<Block, Vec<Block>>) -> Vec<Block> {
    let mut order = Vec::new();
    let mut stack: Vec<Block> = original.iter().rev().copied().collect();
    while let Some(b) = stack.pop() {
        order.push(b);
        if let Some(after) = made.get(&b) {
            stack.extend(after.iter().rev().copied());
        }
    }
    order
}

/// Whether `from` calls, directly or not, one of `targets`.
fn reaches(module: &Module, from: FuncId, targets: &[FuncId]) -> bool {
    let f = &module.functions[from];
    let callees: Vec<FuncId> = f
        .insts_in_layout()
        .filter_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Call { callee, .. } => Some(*callee),
            _ => None,
        })
        .collect();
    module
        .reachable_from(&callees)
        .iter()
        .any(|id| targets.contains(id))
}

/// A callee of one block that returns: its instructions copied (not placed in a block; the
/// caller places them where the call was), with `results` standing for the values it returns
/// (noted in `replaced`, which the caller substitutes once at the end). `None` for any other
/// callee.
fn copy_straight(
    g: &mut Function,
    callee: &Function,
    args: &[Value],
    results: &[Value],
    replaced: &mut FxHashMap<Value, Value>,
) -> Option<Vec<Inst>> {
    let [entry] = callee.layout[..] else {
        return None;
    };
    let (&term, body) = callee.blocks[entry].insts.split_last()?;
    let InstKind::Return { args: returned } = &callee.insts[term].kind else {
        return None;
    };
    let mut values: FxHashMap<Value, Value> = callee.blocks[entry]
        .params
        .iter()
        .copied()
        .zip(args.iter().copied())
        .collect();
    let mut copies = Vec::with_capacity(body.len());
    for &i in body {
        let data = &callee.insts[i];
        let mut kind = data.kind.clone();
        kind.map_args(|v| values.get(&v).copied().unwrap_or(v));
        let types: Vec<_> = data.results.iter().map(|&r| callee.values[r].ty).collect();
        let copy = g.create_inst(kind, &types, data.span);
        for (&o, &n) in data.results.iter().zip(g.insts[copy].results.iter()) {
            values.insert(o, n);
        }
        copies.push(copy);
    }
    for (&r, v) in results.iter().zip(returned.iter()) {
        replaced.insert(r, values.get(v).copied().unwrap_or(*v));
    }
    Some(copies)
}

/// Copies `callee`'s blocks into `g` (at the end of its layout), each `return` becoming a jump
/// to `rest` with the returned values; returns the copies in the callee's order (the entry's
/// first) and whether the copy of the entry takes the arguments as parameters (only where an
/// edge of the callee enters it; otherwise its parameters are replaced by `args`).
fn copy_body(
    g: &mut Function,
    callee: &Function,
    args: &[Value],
    rest: Block,
) -> (Vec<Block>, bool) {
    let mut blocks: FxHashMap<Block, Block> = FxHashMap::default();
    let mut values: FxHashMap<Value, Value> = FxHashMap::default();
    let entry = callee.layout[0];
    // An entry no edge of the callee enters holds the call's arguments themselves: a constant
    // argument stays a constant in the copy (a block parameter is an unknown to an inverse).
    let entered = callee
        .layout
        .iter()
        .any(|&b| callee.successors(b).contains(&entry));
    for &b in &callee.layout {
        let copy = g.create_block();
        blocks.insert(b, copy);
        if b == entry && !entered {
            values.extend(
                callee.blocks[b]
                    .params
                    .iter()
                    .copied()
                    .zip(args.iter().copied()),
            );
            continue;
        }
        for &p in &callee.blocks[b].params {
            let q = g.append_block_param(copy, callee.values[p].ty);
            values.insert(p, q);
        }
    }
    let mut copies: Vec<Inst> = Vec::new();
    for &b in &callee.layout {
        for &i in &callee.blocks[b].insts {
            let data = &callee.insts[i];
            // Block ids of the callee and the caller overlap: the callee's targets are mapped
            // here, before a `return` becomes a jump to the caller's `rest`.
            let kind = match &data.kind {
                InstKind::Return { args } => InstKind::Jump {
                    dest: BlockCall::new(rest, args.clone()),
                },
                kind => {
                    let mut kind = kind.clone();
                    for call in kind.successors_mut() {
                        call.block = blocks[&call.block];
                    }
                    kind
                }
            };
            let types: Vec<_> = data.results.iter().map(|&r| callee.values[r].ty).collect();
            let copy = g.append_inst(blocks[&b], kind, &types, data.span);
            for (&o, &n) in data.results.iter().zip(g.insts[copy].results.iter()) {
                values.insert(o, n);
            }
            copies.push(copy);
        }
    }
    for i in copies {
        // Every value an instruction of the callee reads is the callee's.
        g.insts[i]
            .kind
            .map_args(|v| values.get(&v).copied().unwrap_or(v));
    }
    let copies = callee.layout.iter().map(|b| blocks[b]).collect();
    (copies, entered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_function, write_function, Const, WriteOptions};

    const CLAMP: &str = "function %bright(x: f64) -> f64 {
block0(v0: f64):
    v1 = fconst 2.0
    v2 = fmul v0, v1
    v3 = fconst 0.0
    v4 = fconst 1.0
    v5 = call %clamp(v2, v3, v4)
    v6 = fadd v5, v5
    return v6
}

function %clamp(x: f64, lo: f64, hi: f64) -> f64 {
block0(v0: f64, v1: f64, v2: f64):
    v3 = flt v0, v1
    brif v3, block1, block2
block1:
    return v1
block2:
    v4 = fmin v0, v2
    return v4
}
";

    /// The module with its first function's calls inlined (checked by the verifier), and the
    /// number of calls inlined.
    fn inlined(text: &str, limits: InlineLimits) -> Option<(Module, usize)> {
        let mut m = parse_module(text).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        let done = inline_calls(&m, id, limits, |_| true)?;
        m.functions[id] = done.function;
        m.functions[id].compact();
        verify_function(&m, id).unwrap_or_else(|e| panic!("{e}"));
        Some((m, done.calls))
    }

    fn run(m: &Module, args: &[Const]) -> Vec<Const> {
        let id = m.functions.keys().next().expect("a function");
        Interpreter::new(m).call(id, args).expect("runs")
    }

    #[test]
    fn a_call_becomes_the_callee_s_body_on_the_arguments() {
        let original = parse_module(CLAMP).expect("parses");
        let (m, calls) = inlined(CLAMP, InlineLimits::default()).expect("inlined");
        assert_eq!(calls, 1);
        let id = m.functions.keys().next().expect("a function");
        let text = write_function(&m, id, &WriteOptions::default());
        assert!(!text.contains("call"), "{text}");
        assert!(text.contains("fmin"), "{text}");
        for x in [-1.0, 0.0, 0.25, 0.5, 3.0, f64::NAN, f64::INFINITY] {
            let a = run(&original, &[Const::F64(x)]);
            let b = run(&m, &[Const::F64(x)]);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "x = {x}");
        }
    }

    #[test]
    fn recursion_and_large_callees_stay_calls() {
        let recursive = "function %f(n: i64) -> i64 {
block0(v0: i64):
    v1 = call %g(v0)
    return v1
}

function %g(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = ile v0, v1
    brif v2, block1, block2
block1:
    return v1
block2:
    v3 = iconst 1
    v4 = isub v0, v3
    v5 = call %g(v4)
    return v5
}
";
        assert!(inlined(recursive, InlineLimits::default()).is_none());
        let small = InlineLimits {
            max_callee: 3,
            max_added: 100,
        };
        assert!(inlined(CLAMP, small).is_none());
        let tight = InlineLimits {
            max_callee: 100,
            max_added: 3,
        };
        assert!(inlined(CLAMP, tight).is_none());
    }

    #[test]
    fn a_call_whose_results_nothing_reads_stays_a_call() {
        let dead = CLAMP.replace("v6 = fadd v5, v5", "v6 = fadd v2, v2");
        assert!(inlined(&dead, InlineLimits::default()).is_none());
    }

    #[test]
    fn calls_the_copies_bring_are_inlined_in_turn() {
        let nested = "function %f(x: i64) -> i64 {
block0(v0: i64):
    v1 = call %g(v0)
    v2 = call %g(v1)
    v3 = iadd v1, v2
    return v3
}

function %g(x: i64) -> i64 {
block0(v0: i64):
    v1 = call %h(v0)
    v2 = imul v1, v1
    return v2
}

function %h(x: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 3
    v2 = iadd v0, v1
    return v2
}
";
        let original = parse_module(nested).expect("parses");
        let (m, calls) = inlined(nested, InlineLimits::default()).expect("inlined");
        assert_eq!(calls, 4);
        for x in [-5, 0, 2, 1 << 40] {
            assert_eq!(
                run(&original, &[Const::I64(x)]),
                run(&m, &[Const::I64(x)]),
                "x = {x}"
            );
        }
    }
}
