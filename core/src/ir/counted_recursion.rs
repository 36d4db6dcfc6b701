//! Counted recursion run as a loop, from the base case up.
//!
//! `fn fact(n: i64) -> i64 { if n <= 1 { 1 } else { n * fact(n - 1) } }` calls itself with its
//! counter one step nearer a base case and its other arguments unchanged. Such a function is a
//! fold: `fact(n)` is the base value at `n = 1`, then `k * acc` for `k = 2, 3, …, n`. Inverted as
//! a recursion, every level's product must be split by θ and the levels must then agree on the
//! counter, which almost no θ does (`fact` accepted 24% of θ). As a loop whose bound only its
//! exit test reads, the trip-count scan of the reorientation runs it forward from the base case
//! and finds the `n` whose value is y.
//!
//! The shape this pass takes, in closed block form ([`super::closed`]), is the one the front end
//! gives `if n REL K { base } else { … f(n ± 1, a…) … }`:
//! - the entry block compares one i64 parameter, the counter `n`, with a constant `K` and
//!   branches; one side (the base side) never reaches the self-call, the other goes straight to
//!   the block that makes it;
//! - there is exactly one call of the function itself, whose counter argument is `n - 1` or
//!   `n + 1` (the step `d`) and whose other arguments are the function's own parameters;
//! - there is no loop, so every level runs the entry block, then either the base side or the
//!   call's block and what follows it (the post part), once.
//!
//! The base values reached going from `n` by `d` must be one value `m`: `n <= K` with `d = −1`
//! gives `m = K`, `n < K` gives `K − 1`, `n == K` gives `K` (and never ends from below `K`), and
//! `n != K` gives `K + d`; the other relations are mirrored for `d = +1`.
//!
//! The result is the function with its recursive side replaced by: the entry block's
//! instructions and the base side at `n = m`, whose returns jump to a loop head
//! `L(k, params…, acc…)`; while `k` has not reached `n`, one trip runs the entry block's
//! instructions at `k − d` and the post part, with the call's results replaced by `acc`, and
//! jumps back with what the post part would have returned. A counter that can never reach its
//! base case (`n == K` approached from the wrong side) ends in `fail`.
//!
//! Invariant: wherever the input returns, the result returns the same values to the bit, having
//! run the same operations on the same operands (in another order: the input runs every
//! level's entry block before any post part). Where the input would recurse past the call depth
//! limit, the result may return: it is for building inverses, whose final check runs the
//! user's function. Every copied instruction keeps its span.

use super::closed::close_blocks;
use super::{Block, BlockCall, Const, FuncId, Function, InstKind, Opcode, Type, Value, ValueDef};
use std::collections::{BTreeSet, HashMap};

/// What [`counted_recursion_as_loop`] made of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct Iterated {
    /// The function without its self-call.
    pub function: Function,
    /// The index of the counter among the parameters.
    pub counter: usize,
}

/// `f` (whose id in its module is `me`) with its counted recursion run as a loop, when it has
/// the shape the module docs describe; `None` otherwise.
pub fn counted_recursion_as_loop(f: &Function, me: FuncId) -> Option<Iterated> {
    // Cheap tests first: every function an inversion reaches comes here.
    counter_test(f, f.entry()?)?;
    if !calls_itself(f, me) {
        return None;
    }
    let c = close_blocks(f);
    let shape = Shape::find(&c, me)?;
    Some(Iterated {
        function: shape.build(&c),
        counter: shape.counter,
    })
}

/// The recognised parts of a counted recursion.
struct Shape {
    entry: Block,
    /// The block with the self-call, and the call.
    call_block: Block,
    call: super::Inst,
    /// The entry's branch side that leads to the base case (0: then, 1: else).
    base_side: usize,
    counter: usize,
    /// The step of the counter at each call (−1 or +1).
    step: i64,
    /// The counter's value at the base case every recursion reaches.
    base_at: i64,
    /// A counter that never reaches the base case: the relation that it must satisfy with `K`
    /// (as `n REL K`), else the recursion never ends.
    reaches: Option<(Opcode, i64)>,
    /// Whether every counter on the base side gives what the base case at `base_at` gives, and
    /// every counter past it recurses: the base side does not read the counter, and it is
    /// taken for every counter at or behind `base_at` (`n <= 1` with `n - 1`). Then the loop
    /// alone is the function (zero trips for a counter at the base case), and one exit gives y.
    merged_base: bool,
}

impl Shape {
    fn find(c: &Function, me: FuncId) -> Option<Shape> {
        let entry = c.entry()?;
        if !c.loop_heads().is_empty() {
            return None;
        }
        let reachable = c.reachable_blocks();
        let mut calls = Vec::new();
        for &b in &reachable {
            for &i in &c.blocks[b].insts {
                if matches!(&c.insts[i].kind, InstKind::Call { callee, .. } if *callee == me) {
                    calls.push((b, i));
                }
            }
        }
        let [(call_block, call)] = calls.as_slice() else {
            return None;
        };
        let (call_block, call) = (*call_block, *call);
        if call_block == entry {
            return None;
        }
        let (then_dest, else_dest) = branch_targets(c, entry)?;
        let base_side = match (then_dest.block == call_block, else_dest.block == call_block) {
            (true, false) => 1,
            (false, true) => 0,
            _ => return None,
        };
        let base_target = [then_dest, else_dest][base_side].block;
        if c.blocks_reachable_from(base_target).contains(&call_block) {
            return None;
        }
        let params = &c.blocks[entry].params;
        let (counter, k, rel) = counter_test(c, entry)?;
        let constant = |v: Value| match c.constant(v) {
            Some(Const::I64(k)) => Some(k),
            _ => None,
        };
        // The relation that holds on the base side.
        let base_rel = if base_side == 0 { rel } else { negated(rel)? };
        // The call: the counter one step on, the other parameters as they are.
        let rec_args = &[then_dest, else_dest][1 - base_side].args;
        let call_params = &c.blocks[call_block].params;
        let origin = |v: Value| {
            call_params
                .iter()
                .position(|&q| q == v)
                .and_then(|i| rec_args.get(i).copied())
                .unwrap_or(v)
        };
        let InstKind::Call { args, .. } = &c.insts[call].kind else {
            return None;
        };
        if args.len() != params.len() {
            return None;
        }
        let mut step = None;
        for (i, &a) in args.iter().enumerate() {
            let a = origin(a);
            if i != counter {
                if a != params[i] {
                    return None;
                }
                continue;
            }
            let ValueDef::Result(inst, _) = c.values[a].def else {
                return None;
            };
            let InstKind::Prim { op, args } = &c.insts[inst].kind else {
                return None;
            };
            let is_n = |v: Value| origin(v) == params[counter];
            step = match (op, args.as_slice()) {
                (Opcode::Isub, &[x, d]) if is_n(x) && constant(d) == Some(1) => Some(-1),
                (Opcode::Iadd, &[x, d]) | (Opcode::Iadd, &[d, x])
                    if is_n(x) && matches!(constant(d), Some(1 | -1)) =>
                {
                    constant(d)
                }
                _ => return None,
            };
        }
        let step = step?;
        // Where going from `n` by `step` first meets the base case.
        let down = step < 0;
        let (base_at, reaches) = match (base_rel, down) {
            (Opcode::Ile, true) | (Opcode::Ige, false) => (k, None),
            (Opcode::Ilt, true) => (k.checked_sub(1)?, None),
            (Opcode::Igt, false) => (k.checked_add(1)?, None),
            (Opcode::Ieq, true) => (k, Some((Opcode::Igt, k))),
            (Opcode::Ieq, false) => (k, Some((Opcode::Ilt, k))),
            (Opcode::Ine, _) => (k.checked_add(step)?, None),
            _ => return None,
        };
        // Whether the base side reads the counter, through the entry block's instructions.
        let mut reads_n: std::collections::HashSet<Value> = [params[counter]].into();
        for &i in &c.blocks[entry].insts {
            let mut reads = false;
            c.insts[i]
                .kind
                .for_each_arg(|a| reads |= reads_n.contains(&a));
            if reads {
                reads_n.extend(c.insts[i].results.iter().copied());
            }
        }
        let base_args = &[then_dest, else_dest][base_side].args;
        let merged_base = reaches.is_none()
            && !matches!(base_rel, Opcode::Ine)
            && !base_args.iter().any(|a| reads_n.contains(a));
        Some(Shape {
            merged_base,
            entry,
            call_block,
            call,
            base_side,
            counter,
            step,
            base_at,
            reaches,
        })
    }

    fn build(&self, c: &Function) -> Function {
        let mut g = c.clone();
        let entry = self.entry;
        let span = c.insts[c.terminator(entry).expect("the shape has a branch")].span;
        let param_types: Vec<Type> = c.sig.params.clone();
        let acc_types: Vec<Type> = c.insts[self.call]
            .results
            .iter()
            .map(|&r| c.value_type(r))
            .collect();
        let np = param_types.len();
        // The loop head L(k, params…, acc…).
        let head = g.create_block();
        let k = g.append_block_param(head, Type::I64);
        let head_params: Vec<Value> = param_types
            .iter()
            .map(|&t| g.append_block_param(head, t))
            .collect();
        let head_acc: Vec<Value> = acc_types
            .iter()
            .map(|&t| g.append_block_param(head, t))
            .collect();
        // Copies of the base side and of the post part; their returns jump to the head.
        let term = c.terminator(entry).expect("the shape has a branch");
        let (then_dest, else_dest) = branch_targets(c, entry).expect("the shape has a branch");
        let (base_dest, rec_dest) = if self.base_side == 0 {
            (then_dest, else_dest)
        } else {
            (else_dest, then_dest)
        };
        let extra_types: Vec<Type> = std::iter::once(Type::I64)
            .chain(param_types.iter().copied())
            .chain(acc_types.iter().copied())
            .collect();
        let base_copies = copy_region(c, &mut g, base_dest.block, &extra_types, None, head);
        let post_copies = copy_region(
            c,
            &mut g,
            self.call_block,
            &extra_types,
            Some(self.call),
            head,
        );
        // The head: round while k has not reached n.
        let n = head_params[self.counter];
        let round_op = if self.step < 0 {
            Opcode::Ilt
        } else {
            Opcode::Igt
        };
        let go = g.ins_prim(head, round_op, vec![k, n], span);
        let (trip, exit) = (g.create_block(), g.create_block());
        g.ins_void(
            head,
            InstKind::Brif {
                cond: go,
                then_dest: Box::new(BlockCall::new(trip, Vec::new())),
                else_dest: Box::new(BlockCall::new(exit, Vec::new())),
            },
            span,
        );
        g.ins_return(exit, head_acc.clone(), span);
        // A trip: the entry block at k − step, then the post part with the call's results
        // replaced by acc.
        let minus_step = g.ins_const(trip, Const::I64(-self.step), span);
        let k1 = g.ins_prim(trip, Opcode::Iadd, vec![k, minus_step], span);
        let mut at_k1 = head_params.clone();
        at_k1[self.counter] = k1;
        let env = copy_straight(c, &mut g, entry, trip, &at_k1);
        let mut args: Vec<Value> = rec_dest.args.iter().map(|a| env[a]).collect();
        args.push(k1);
        args.extend(&head_params);
        args.extend(&head_acc);
        g.ins_jump(trip, post_copies[&self.call_block], args, span);
        // The recursive side now enters the base case at m, then the loop.
        let start = g.create_block();
        let start_params: Vec<Value> = param_types
            .iter()
            .map(|&t| g.append_block_param(start, t))
            .collect();
        let mut from = start;
        if let Some((op, bound)) = self.reaches {
            let kk = g.ins_const(from, Const::I64(bound), span);
            let ok = g.ins_prim(from, op, vec![start_params[self.counter], kk], span);
            let (on, never) = (g.create_block(), g.create_block());
            g.ins_void(
                from,
                InstKind::Brif {
                    cond: ok,
                    then_dest: Box::new(BlockCall::new(on, Vec::new())),
                    else_dest: Box::new(BlockCall::new(never, Vec::new())),
                },
                span,
            );
            g.ins_void(
                never,
                InstKind::Fail {
                    reason: "the recursion never reaches its base case".into(),
                },
                span,
            );
            from = on;
        }
        let m = g.ins_const(from, Const::I64(self.base_at), span);
        let mut at_m = start_params.clone();
        at_m[self.counter] = m;
        let env = copy_straight(c, &mut g, entry, from, &at_m);
        let mut args: Vec<Value> = base_dest.args.iter().map(|a| env[a]).collect();
        args.push(m);
        args.extend(&start_params);
        for &t in &acc_types {
            args.push(g.ins_const(from, Const::zero(t), span));
        }
        g.ins_jump(from, base_copies[&base_dest.block], args, span);
        // The entry's recursive side goes to the start (and its base side too, where the base
        // case at the start gives the same).
        let entry_params = g.blocks[entry].params.clone();
        debug_assert_eq!(entry_params.len(), np);
        let to_start = BlockCall::new(start, entry_params);
        if self.merged_base {
            g.insts[term].kind = InstKind::Jump { dest: to_start };
        } else if let InstKind::Brif {
            then_dest,
            else_dest,
            ..
        } = &mut g.insts[term].kind
        {
            let dest = if self.base_side == 0 {
                else_dest
            } else {
                then_dest
            };
            **dest = to_start;
        }
        g.remove_unreachable_blocks();
        // The jump chains of the copies merged, so that the loop is entered with the base
        // case's constants themselves (what the trip-count scan starts from).
        if super::merge_blocks::merge_blocks(&mut g) == 0 {
            g.compact();
        }
        g
    }
}

/// Whether `f` (whose id is `me`) has a call of itself, reachable or not.
pub(super) fn calls_itself(f: &Function, me: FuncId) -> bool {
    f.insts
        .values()
        .any(|i| matches!(&i.kind, InstKind::Call { callee, .. } if *callee == me))
}

/// Where block `b`'s `brif` goes: (then, else).
pub(super) fn branch_targets(c: &Function, b: Block) -> Option<(&BlockCall, &BlockCall)> {
    match &c.insts[c.terminator(b)?].kind {
        InstKind::Brif {
            then_dest,
            else_dest,
            ..
        } => Some((then_dest, else_dest)),
        _ => None,
    }
}

/// The test the entry block `entry` branches on, when it is `n REL K` for an i64 parameter `n`
/// (or `K REL n`) and a constant `K`: (n's index, K, REL as `n REL K`).
pub(super) fn counter_test(c: &Function, entry: Block) -> Option<(usize, i64, Opcode)> {
    let term = c.terminator(entry)?;
    let InstKind::Brif { cond, .. } = &c.insts[term].kind else {
        return None;
    };
    let params = &c.blocks[entry].params;
    let ValueDef::Result(test, _) = c.values[*cond].def else {
        return None;
    };
    if !c.blocks[entry].insts.contains(&test) {
        return None;
    }
    let InstKind::Prim { op, args } = &c.insts[test].kind else {
        return None;
    };
    let &[x, y] = args.as_slice() else {
        return None;
    };
    let position = |v: Value| params.iter().position(|&q| q == v);
    let constant = |v: Value| match c.constant(v) {
        Some(Const::I64(k)) => Some(k),
        _ => None,
    };
    let (counter, k, rel) = match (position(x), constant(y), position(y), constant(x)) {
        (Some(p), Some(k), _, _) => (p, k, *op),
        (_, _, Some(p), Some(k)) => (p, k, mirrored(*op)?),
        _ => return None,
    };
    (c.value_type(params[counter]) == Type::I64 && mirrored(rel).is_some())
        .then_some((counter, k, rel))
}

/// Copies into `g` the blocks of `c` reachable from `start`, each with the parameters `extra`
/// appended (`k`, the parameters, acc: passed along unchanged), the results of `call` (if in
/// the region) replaced by the acc parameters, and every `return` turned into a jump to `head`
/// with `k`, the parameters and the returned values. Returns the copy of each block.
fn copy_region(
    c: &Function,
    g: &mut Function,
    start: Block,
    extra: &[Type],
    call: Option<super::Inst>,
    head: Block,
) -> HashMap<Block, Block> {
    // In block order, as the copies are numbered.
    let blocks: BTreeSet<Block> = c.blocks_reachable_from(start).into_iter().collect();
    let copies: HashMap<Block, Block> = blocks.iter().map(|&b| (b, g.create_block())).collect();
    let acc_at = extra.len() - c.sig.returns.len();
    for &b in &blocks {
        let to = copies[&b];
        let mut env: HashMap<Value, Value> = HashMap::new();
        for &p in &c.blocks[b].params {
            env.insert(p, g.append_block_param(to, c.value_type(p)));
        }
        let x: Vec<Value> = extra.iter().map(|&t| g.append_block_param(to, t)).collect();
        for &inst in &c.blocks[b].insts {
            let data = &c.insts[inst];
            if Some(inst) == call {
                for (i, &r) in data.results.iter().enumerate() {
                    env.insert(r, x[acc_at + i]);
                }
                continue;
            }
            let mut kind = data.kind.clone();
            if let InstKind::Return { args } = &kind {
                let mut to_head: Vec<Value> = x[..acc_at].to_vec();
                to_head.extend(args.iter().map(|a| env[a]));
                g.ins_jump(to, head, to_head, data.span);
                continue;
            }
            for dest in kind.successors_mut() {
                dest.block = copies[&dest.block];
                for a in dest.args.iter_mut() {
                    *a = env[a];
                }
                dest.args.extend(x.iter().copied());
            }
            if let InstKind::Brif { cond, .. } = &mut kind {
                *cond = env[cond];
            } else if !kind.is_terminator() {
                kind.map_args(|a| env[&a]);
            }
            let types: Vec<Type> = data.results.iter().map(|&r| c.value_type(r)).collect();
            let copy = g.append_inst(to, kind, &types, data.span);
            for (&r, &o) in data.results.iter().zip(&g.insts[copy].results.clone()) {
                env.insert(r, o);
            }
        }
    }
    copies
}

/// Copies the instructions of `c`'s block `b` but its terminator into `g`'s block `to`, with
/// `b`'s parameters read as `params`; returns the copy of every value of `b`.
fn copy_straight(
    c: &Function,
    g: &mut Function,
    b: Block,
    to: Block,
    params: &[Value],
) -> HashMap<Value, Value> {
    let mut env: HashMap<Value, Value> = c.blocks[b]
        .params
        .iter()
        .copied()
        .zip(params.iter().copied())
        .collect();
    for &inst in &c.blocks[b].insts {
        let data = &c.insts[inst];
        if data.kind.is_terminator() {
            break;
        }
        let mut kind = data.kind.clone();
        kind.map_args(|a| env[&a]);
        let types: Vec<Type> = data.results.iter().map(|&r| c.value_type(r)).collect();
        let copy = g.append_inst(to, kind, &types, data.span);
        for (&r, &o) in data.results.iter().zip(&g.insts[copy].results.clone()) {
            env.insert(r, o);
        }
    }
    env
}

/// `K REL n` as `n REL' K`.
pub(super) fn mirrored(op: Opcode) -> Option<Opcode> {
    Some(match op {
        Opcode::Ilt => Opcode::Igt,
        Opcode::Ile => Opcode::Ige,
        Opcode::Igt => Opcode::Ilt,
        Opcode::Ige => Opcode::Ile,
        Opcode::Ieq | Opcode::Ine => op,
        _ => return None,
    })
}

/// The relation that holds where `op` does not.
fn negated(op: Opcode) -> Option<Opcode> {
    Some(match op {
        Opcode::Ilt => Opcode::Ige,
        Opcode::Ile => Opcode::Igt,
        Opcode::Igt => Opcode::Ile,
        Opcode::Ige => Opcode::Ilt,
        Opcode::Ieq => Opcode::Ine,
        Opcode::Ine => Opcode::Ieq,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_function, Module};

    const FACT: &str = "function %fact(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 1
    v2 = ile v0, v1
    brif v2, block1, block2
block1:
    v3 = iconst 1
    jump block3(v3)
block2:
    v4 = iconst 1
    v5 = isub v0, v4
    v6 = call %fact(v5)
    v7 = imul v0, v6
    jump block3(v7)
block3(v8: i64):
    return v8
}
";

    /// The module with its first function iterated (checked by the verifier), or `None`.
    fn iterated(text: &str) -> Option<(Module, Module)> {
        let original = parse_module(text).expect("parses");
        let mut m = original.clone();
        let id = m.functions.keys().next().expect("a function");
        let it = counted_recursion_as_loop(&m.functions[id], id)?;
        m.functions[id] = it.function;
        verify_function(&m, id).expect("the iterated function is valid");
        Some((original, m))
    }

    /// Both modules' first functions give the same results (or both an error) on `inputs`.
    fn same_results(original: &Module, iterated: &Module, inputs: &[Vec<Const>]) {
        let id = original.functions.keys().next().expect("a function");
        let (before, after) = (Interpreter::new(original), Interpreter::new(iterated));
        let calls = |f: &FuncId| {
            iterated.functions[*f]
                .insts
                .values()
                .any(|i| matches!(&i.kind, InstKind::Call { callee, .. } if callee == f))
        };
        assert!(!calls(&id), "the self-call is gone");
        let mut compared = 0;
        for args in inputs {
            // Where the recursion never ends, the original stops at the call depth limit.
            if let Ok(want) = before.call(id, args) {
                let got = after.call(id, args).expect("the loop returns where f does");
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{args:?}");
                compared += 1;
            }
        }
        assert!(
            compared * 4 >= inputs.len(),
            "{compared} of {}",
            inputs.len()
        );
    }

    #[test]
    fn factorial_becomes_a_loop_from_its_base_case() {
        let (original, m) = iterated(FACT).expect("iterated");
        if std::env::var("DUMP").is_ok() {
            let id = m.functions.keys().next().expect("f");
            eprintln!("{}", crate::ir::write_function(&m, id, &Default::default()));
        }
        let inputs: Vec<Vec<Const>> = (-3..80).map(|n| vec![Const::I64(n)]).collect();
        same_results(&original, &m, &inputs);
    }

    #[test]
    fn every_base_relation_and_step_computes_the_same_values() {
        // `s(n, a) = if n REL K { base } else { a + n * s(n ± 1, a) }`, for each relation
        // on either side and both steps; a counter that never reaches the base case errors
        // in the original (call depth) and is skipped by `same_results`.
        // The base case reads the counter, or not (then the loop alone is the function).
        for base in ["v5 = fmul v1, v1", "v5 = fcvt_from_i64 v0"] {
            for (test, then_base, step) in [
                ("ile v0, v3", true, "isub"),
                ("ilt v0, v3", true, "isub"),
                ("igt v0, v3", false, "isub"),
                ("ieq v0, v3", true, "isub"),
                ("ine v0, v3", false, "isub"),
                ("ige v0, v3", true, "iadd"),
                ("ieq v0, v3", true, "iadd"),
                ("ilt v3, v0", false, "isub"),
            ] {
                let (b1, b2) = if then_base {
                    ("BASE\n    jump block3(v5)", "v6 = iconst 1\n    v7 = OP v0, v6\n    v8 = call %s(v7, v1)\n    v9 = fcvt_from_i64 v0\n    v10 = fmul v9, v8\n    v11 = fadd v1, v10\n    jump block3(v11)")
                } else {
                    ("v6 = iconst 1\n    v7 = OP v0, v6\n    v8 = call %s(v7, v1)\n    v9 = fcvt_from_i64 v0\n    v10 = fmul v9, v8\n    v11 = fadd v1, v10\n    jump block3(v11)", "BASE\n    jump block3(v5)")
                };
                let text = format!(
                    "function %s(n: i64, a: f64) -> f64 {{
block0(v0: i64, v1: f64):
    v3 = iconst 4
    v4 = {test}
    brif v4, block1, block2
block1:
    {b1}
block2:
    {b2}
block3(v12: f64):
    return v12
}}
"
                )
                .replace("OP", step)
                .replace("BASE", base);
                let (original, m) = iterated(&text).unwrap_or_else(|| panic!("iterated: {text}"));
                let mut inputs = Vec::new();
                for n in -12..12 {
                    for a in [0.5, -2.0, f64::NAN] {
                        inputs.push(vec![Const::I64(n), Const::F64(a)]);
                    }
                }
                same_results(&original, &m, &inputs);
            }
        }
    }

    #[test]
    fn other_recursions_are_left_alone() {
        // The argument is not the counter one step on (`n / 2`), the other argument changes
        // (`x * 0.5`), and two self-calls (fib).
        let halving = FACT.replace("v5 = isub v0, v4", "v5 = idiv v0, v4");
        assert!(iterated(&halving).is_none());
        let two_calls = "function %fib(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 1
    v2 = ile v0, v1
    brif v2, block1, block2
block1:
    jump block3(v0)
block2:
    v4 = iconst 1
    v5 = isub v0, v4
    v6 = call %fib(v5)
    v7 = isub v5, v4
    v8 = call %fib(v7)
    v9 = iadd v6, v8
    jump block3(v9)
block3(v10: i64):
    return v10
}
";
        assert!(iterated(two_calls).is_none());
        let moving = "function %h(x: f64, n: i64) -> f64 {
block0(v0: f64, v1: i64):
    v2 = iconst 0
    v3 = ile v1, v2
    brif v3, block2(v0), block1
block1:
    v4 = fconst 0.5
    v5 = fmul v0, v4
    v8 = iconst 1
    v9 = isub v1, v8
    v10 = call %h(v5, v9)
    jump block2(v10)
block2(v11: f64):
    return v11
}
";
        assert!(iterated(moving).is_none());
    }
}
