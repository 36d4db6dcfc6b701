//! Dead code: values nothing needs, block parameters nothing reads, and branches whose arms
//! do nothing.
//!
//! A program's dead code is not free for its inverse: every value the reorientation meets is
//! a value it must account for, and a dead `if` is a merge whose arm θ must choose (with
//! `let v = if p > 0 { 5 } else { 6 }; p` every θ but one in two was wasted). So the front end
//! removes it before anything else sees the IR ([`crate::frontend`]).
//!
//! What is kept, so that behaviour is unchanged to the bit:
//! - every instruction that can stop a run or has an effect: calls (a callee may fail or not
//!   terminate) unless the callee is [total](total_functions), integer division and remainder
//!   unless the divisor is a constant other than 0 and −1 (they trap), `theta`, `choice`,
//!   `check`, `record`, and the terminators;
//! - the branches of loops: a loop that might not terminate is never removed;
//! - the entry block's parameters (the function's signature).
//!
//! What goes: pure instructions whose results are not needed (transitively), block parameters
//! whose values are not needed (with the arguments passed to them), a `brif` whose two edges go
//! to the same block with the same arguments or whose condition is a constant (it becomes a
//! `jump`; the arm not taken is then unreachable), and blocks that only jump on (their
//! predecessors branch past them). Repeated until nothing changes.

use super::{
    Block, BlockCall, Const, FuncId, Function, Inst, InstKind, Module, Opcode, Value, ValueDef,
};
use cranelift_entity::{EntitySet, SecondaryMap};

/// Removes dead code from `func`; returns whether anything changed. The function stays valid
/// (the verifier's invariants hold if they held before) but is not compacted. Every call is
/// kept: see [`remove_dead_code_calling`].
pub fn remove_dead_code(func: &mut Function) -> bool {
    remove_dead_code_calling(func, &EntitySet::new())
}

/// [`remove_dead_code`], where a call of a function in `total` whose results nothing needs is
/// dead too ([`total_functions`]).
pub fn remove_dead_code_calling(func: &mut Function, total: &EntitySet<FuncId>) -> bool {
    let mut changed = false;
    loop {
        let mut round = remove_dead_values(func, total);
        round |= fold_branches(func);
        if !round {
            return changed;
        }
        changed = true;
        func.remove_unreachable_blocks();
    }
}

/// Whether `inst` must stay whether or not its results are used; a call of a function in
/// `total` need not.
fn has_effect(func: &Function, inst: Inst, total: &EntitySet<FuncId>) -> bool {
    match &func.insts[inst].kind {
        InstKind::Const(_) => false,
        InstKind::Prim { op, args } => match op {
            Opcode::Idiv | Opcode::Irem => !matches!(
                args.get(1).and_then(|&d| func.constant(d)),
                Some(Const::I64(d)) if d != 0 && d != -1
            ),
            _ => false,
        },
        InstKind::Call { callee, .. } => !total.contains(*callee),
        _ => true,
    }
}

/// The functions of `module` that are **total**: every run returns, without an error, in a
/// number of steps bounded by their code. Such a function has no loop, no instruction that can
/// fail or has an effect (integer division by a divisor that may be 0 or −1, `check`, `fail`,
/// θ, records), and calls only total functions (so none is recursive). A call of one whose
/// results nothing needs is dead code like a pure instruction: `if g(p, v) { .. }` with the
/// `if`'s value unused, which kept `v` and everything computed into it alive for the inverse
/// to solve (`gen_check` seed 6459).
///
/// In time linear in the module: a function is decided once its callees are, from the leaves
/// of the call graph up (a call cycle is never decided, so never total).
pub fn total_functions(module: &Module) -> EntitySet<FuncId> {
    let mut total = EntitySet::new();
    // Per function whose own code qualifies: its callees not yet known to be total; per
    // callee, its callers.
    let mut waiting: SecondaryMap<FuncId, u32> = SecondaryMap::new();
    let mut callers: SecondaryMap<FuncId, Vec<FuncId>> = SecondaryMap::new();
    let mut ready = Vec::new();
    for (id, f) in module.iter() {
        if !own_code_is_total(f) {
            continue;
        }
        let mut callees: Vec<FuncId> = Vec::new();
        for b in f.reachable_blocks() {
            for &i in &f.blocks[b].insts {
                if let InstKind::Call { callee, .. } = f.insts[i].kind {
                    callees.push(callee);
                }
            }
        }
        callees.sort_unstable();
        callees.dedup();
        waiting[id] = callees.len() as u32;
        for c in callees {
            callers[c].push(id);
        }
        if waiting[id] == 0 {
            ready.push(id);
        }
    }
    while let Some(id) = ready.pop() {
        total.insert(id);
        for &caller in &callers[id] {
            waiting[caller] -= 1;
            if waiting[caller] == 0 {
                ready.push(caller);
            }
        }
    }
    total
}

/// Whether `f`'s own code is that of a total function ([`total_functions`]), its calls aside:
/// a body with no loop and no instruction that can fail or has an effect.
fn own_code_is_total(f: &Function) -> bool {
    if f.entry().is_none() || !f.loop_heads().is_empty() {
        return false;
    }
    let none = EntitySet::new();
    f.reachable_blocks().into_iter().all(|b| {
        f.blocks[b].insts.iter().all(|&i| match &f.insts[i].kind {
            InstKind::Call { .. } => true,
            kind if kind.is_terminator() => !matches!(kind, InstKind::Fail { .. }),
            _ => !has_effect(f, i, &none),
        })
    })
}

/// Marks what is needed from the effects back, then deletes the rest: pure instructions and
/// block parameters (other than the entry's) with their branch arguments.
fn remove_dead_values(func: &mut Function, total: &EntitySet<FuncId>) -> bool {
    let blocks = func.reachable_blocks();
    let Some(&entry) = blocks.first() else {
        return false;
    };
    let edges = func.incoming_edges(&blocks);
    let mut live_inst: EntitySet<Inst> = EntitySet::new();
    let mut live_value: EntitySet<Value> = EntitySet::new();
    let mut work: Vec<Value> = Vec::new();
    for &b in &blocks {
        for &i in &func.blocks[b].insts {
            if !has_effect(func, i, total) {
                continue;
            }
            live_inst.insert(i);
            // A branch needs its condition; its arguments are needed only by needed parameters.
            match &func.insts[i].kind {
                InstKind::Jump { .. } => {}
                InstKind::Brif { cond, .. } => work.push(*cond),
                kind => kind.for_each_arg(|v| work.push(v)),
            }
        }
    }
    for &p in &func.blocks[entry].params {
        live_value.insert(p);
    }
    while let Some(v) = work.pop() {
        if !live_value.insert(v) {
            continue;
        }
        match func.values[v].def {
            ValueDef::Result(i, _) => {
                if live_inst.insert(i) {
                    func.insts[i].kind.for_each_arg(|a| work.push(a));
                }
            }
            ValueDef::Param(b, k) => {
                for &(t, d) in edges.of(b) {
                    if let Some(&a) = func.insts[t]
                        .kind
                        .successor(d)
                        .and_then(|c| c.args.get(k as usize))
                    {
                        work.push(a);
                    }
                }
            }
        }
    }

    let mut changed = false;
    for &b in &blocks {
        let before = func.blocks[b].insts.len();
        let insts = &func.insts;
        func.blocks[b]
            .insts
            .retain(|&i| live_inst.contains(i) || insts[i].kind.is_terminator());
        changed |= func.blocks[b].insts.len() != before;
    }
    for &b in &blocks {
        if b == entry {
            continue;
        }
        let params = func.blocks[b].params.clone();
        let keep: Vec<bool> = params.iter().map(|&p| live_value.contains(p)).collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        changed = true;
        let kept: Vec<Value> = params
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(&p, _)| p)
            .collect();
        for (n, &p) in kept.iter().enumerate() {
            func.values[p].def = ValueDef::Param(b, n as u32);
        }
        func.blocks[b].params = kept;
        for &(t, d) in edges.of(b) {
            if let Some(call) = func.insts[t].kind.successor_mut(d) {
                let mut n = 0;
                call.args.retain(|_| {
                    n += 1;
                    keep.get(n - 1).copied().unwrap_or(true)
                });
            }
        }
    }
    changed
}

/// Branches past blocks that only jump on, and turns a `brif` with two equal edges into a
/// `jump`.
fn fold_branches(func: &mut Function) -> bool {
    let blocks = func.reachable_blocks();
    let entry = blocks.first().copied();
    // A block with no parameters whose only instruction is `jump T(args)` (T not itself).
    let mut forward: SecondaryMap<Block, Option<BlockCall>> = SecondaryMap::new();
    for &b in &blocks {
        if Some(b) == entry || !func.blocks[b].params.is_empty() {
            continue;
        }
        if let [only] = func.blocks[b].insts[..] {
            if let InstKind::Jump { dest } = &func.insts[only].kind {
                if dest.block != b {
                    forward[b] = Some(dest.clone());
                }
            }
        }
    }
    // Blocks on a cycle of such blocks (`loop {}` once its body folded away) keep their jumps:
    // forwarding along the cycle would go round it forever, one step per round.
    for b in forwarding_cycles(&blocks, &forward) {
        forward[b] = None;
    }
    let mut changed = false;
    for &b in &blocks {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        for call in func.insts[t].kind.successors_mut() {
            // One step at a time: a chain of such blocks is followed over rounds.
            if let Some(next) = &forward[call.block] {
                *call = next.clone();
                changed = true;
            }
        }
        if let InstKind::Brif {
            cond,
            then_dest,
            else_dest,
        } = &func.insts[t].kind
        {
            // Equal edges, or a condition that is a constant: only one way to go.
            let taken = match func.constant(*cond) {
                Some(Const::Bool(true)) => Some(then_dest.clone()),
                Some(Const::Bool(false)) => Some(else_dest.clone()),
                _ => (then_dest == else_dest).then(|| then_dest.clone()),
            };
            if let Some(dest) = taken {
                func.insts[t].kind = InstKind::Jump { dest: *dest };
                changed = true;
            }
        }
    }
    changed
}

/// The blocks of `blocks` that lie on a cycle of `forward` (each block has at most one
/// successor there, so the cycles are found in one pass: a walk that meets a block of its own
/// path closes a cycle from there).
fn forwarding_cycles(
    blocks: &[Block],
    forward: &SecondaryMap<Block, Option<BlockCall>>,
) -> Vec<Block> {
    // 0: not seen; k + 1: seen by the walk from blocks[k].
    let mut seen: SecondaryMap<Block, usize> = SecondaryMap::new();
    let mut cyclic = Vec::new();
    for (k, &start) in blocks.iter().enumerate() {
        let mut path = Vec::new();
        let mut b = start;
        while seen[b] == 0 {
            seen[b] = k + 1;
            path.push(b);
            match &forward[b] {
                Some(next) => b = next.block,
                None => break,
            }
        }
        if seen[b] == k + 1 && forward[b].is_some() {
            if let Some(at) = path.iter().position(|&p| p == b) {
                cyclic.extend_from_slice(&path[at..]);
            }
        }
    }
    cyclic
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{parse_module, verify_function, write_function, WriteOptions};

    fn run(text: &str) -> String {
        let mut m = parse_module(text).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        let f = &mut m.functions[id];
        remove_dead_code(f);
        f.compact();
        verify_function(&m, id).expect("still valid");
        write_function(&m, id, &WriteOptions::default())
    }

    /// Calls whose results nothing needs go where the callee always returns: not one that may
    /// divide by zero, loop, recurse, fail, or call such a function.
    #[test]
    fn an_unused_call_of_a_total_function_goes() {
        let mut m = parse_module(
            "function %double(p: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 2
    v2 = imul v0, v1
    return v2
}
function %twice(p: i64) -> i64 {
block0(v0: i64):
    v1 = call %double(v0)
    v2 = iconst 7
    v3 = idiv v1, v2
    brif v1, block1, block2
block1:
    return v3
block2:
    v4 = call %double(v3)
    return v4
}
function %ratio(p: i64) -> i64 {
block0(v0: i64):
    v1 = idiv v0, v0
    return v1
}
function %down(p: i64) -> i64 {
block0(v0: i64):
    v1 = call %down(v0)
    return v1
}
function %spin(p: i64) -> i64 {
block0(v0: i64):
    jump block1
block1:
    jump block1
}
function %refuse(p: i64) -> i64 {
block0(v0: i64):
    fail \"no\"
}
function %uses(p: i64) -> i64 {
block0(v0: i64):
    v1 = call %twice(v0)
    v2 = call %ratio(v0)
    v3 = call %down(v0)
    v4 = call %spin(v0)
    v5 = call %refuse(v0)
    v6 = call %double(v0)
    return v0
}
",
        )
        .expect("parses");
        let total = total_functions(&m);
        let named: Vec<&str> = m
            .iter()
            .filter(|(id, _)| total.contains(*id))
            .map(|(_, f)| f.name.as_str())
            .collect();
        assert_eq!(named, ["double", "twice"]);
        let id = m.get("uses").expect("uses");
        let f = &mut m.functions[id];
        assert!(remove_dead_code_calling(f, &total));
        f.compact();
        verify_function(&m, id).expect("still valid");
        let out = write_function(&m, id, &WriteOptions::default());
        for kept in ["%ratio", "%down", "%spin", "%refuse"] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
        for gone in ["%twice", "%double"] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
    }

    #[test]
    fn a_dead_if_goes_entirely() {
        let out = run("function %d(p: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    brif v2, block1, block2
block1:
    v3 = iconst 5
    jump block3(v3)
block2:
    v4 = iconst 6
    jump block3(v4)
block3(v5: i64):
    return v0
}
");
        assert_eq!(
            out,
            "function %d(p: i64) -> i64 {
block0(v0: i64):
    jump block1
block1:
    return v0
}
"
        );
    }

    /// A loop whose body was folded away is a cycle of blocks that only jump on: dead-code
    /// removal stops (forwarding along the cycle would go round it forever) and keeps the loop.
    #[test]
    fn a_cycle_of_empty_blocks_stays_a_loop() {
        let spin = "function %spin(p: i64) -> i64 {
block0(v0: i64):
    jump block1
block1:
    jump block2
block2:
    jump block3
block3:
    jump block1
}
";
        assert_eq!(run(spin), spin);
    }

    #[test]
    fn a_branch_on_a_constant_goes() {
        let out = run("function %k(p: f64) -> f64 {
block0(v0: f64):
    v1 = bconst false
    brif v1, block1, block2
block1:
    v2 = fconst -0.0
    jump block3(v2)
block2:
    v3 = fconst 0.0
    jump block3(v3)
block3(v4: f64):
    v5 = fadd v0, v4
    return v5
}
");
        assert!(!out.contains("brif"), "{out}");
        assert!(!out.contains("-0.0"), "{out}");
    }

    #[test]
    fn division_that_may_trap_stays() {
        let out = run("function %b(p: i64, q: i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst 7
    v3 = idiv v2, v1
    v4 = iconst 2
    v5 = idiv v0, v4
    return v0
}
");
        assert_eq!(out.matches("idiv").count(), 1, "{out}");
    }

    #[test]
    fn loops_stay_but_unused_carried_values_go() {
        let out = run("function %l(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = iconst 1
    jump block1(v1, v1)
block1(v3: i64, v4: i64):
    v5 = ilt v3, v0
    brif v5, block2, block3
block2:
    v6 = iadd v3, v2
    v7 = iadd v4, v3
    jump block1(v6, v7)
block3:
    return v3
}
");
        assert!(out.contains("brif"), "{out}");
        assert_eq!(out.matches("iadd").count(), 1, "{out}");
    }
}
