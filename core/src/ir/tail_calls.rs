//! Self tail calls become jumps: a function that returns what it calls itself with is a loop.
//!
//! `fn halve_until(x: f64, n: i64) -> f64 { if n <= 0 { x } else { halve_until(x * 0.5 + 1.0,
//! n - 1) } }` is `while n > 0 { x = x * 0.5 + 1.0; n = n - 1; } x`. Inverted as a recursion,
//! each level's inverse reads its own base case from θ without knowing that the level above
//! needs `n = 0` exactly there (63% of θ accepted); inverted as a loop, the exit's test and what
//! a trip leaves tell it (`n <= 0` at the exit, and `n - 1` of an `n > 0` after a trip), and
//! every θ gives a preimage.
//!
//! A self-call is a tail call when its results are what its block returns (directly, or through
//! a block that only returns its parameters) and it is the last instruction before the block's
//! branch. The pass rewrites a function all of whose self-calls are tail calls: the entry block
//! becomes the loop's head (a new entry jumps to it), and each tail call a jump back to it with
//! the call's arguments.
//!
//! Invariant: wherever the input returns, the result returns the same values to the bit, having
//! run the same instructions in the same order; where the input would recurse past the call
//! depth limit, the loop runs on, up to the iteration limit. The result is for building
//! inverses, whose final check runs the user's function.

use super::closed::close_blocks;
use super::{BlockCall, FuncId, Function, InstKind};

/// `f` (whose id in its module is `me`) with its self tail calls made jumps, when it has some
/// and every self-call is one; `None` otherwise.
pub fn tail_calls_as_loop(f: &Function, me: FuncId) -> Option<Function> {
    // Every function an inversion reaches comes here: most do not call themselves.
    if !super::counted_recursion::calls_itself(f, me) {
        return None;
    }
    let c = close_blocks(f);
    let entry = c.entry()?;
    let mut tail_calls = Vec::new();
    for b in c.reachable_blocks() {
        let insts = &c.blocks[b].insts;
        for (at, &i) in insts.iter().enumerate() {
            let InstKind::Call { callee, args } = &c.insts[i].kind else {
                continue;
            };
            if *callee != me {
                continue;
            }
            // The last instruction before the branch, whose results the block returns.
            let term = *insts.get(at + 1)?;
            if at + 2 != insts.len() {
                return None;
            }
            let results = &c.insts[i].results;
            let returned = match &c.insts[term].kind {
                InstKind::Return { args } => args == results,
                InstKind::Jump { dest } => {
                    let j = &c.blocks[dest.block];
                    dest.args == *results
                        && j.insts.len() == 1
                        && matches!(&c.insts[j.insts[0]].kind,
                            InstKind::Return { args } if args[..] == j.params[..])
                }
                _ => false,
            };
            if !returned {
                return None;
            }
            tail_calls.push((b, i, term, args.clone()));
        }
    }
    if tail_calls.is_empty() {
        return None;
    }
    let mut g = c.clone();
    let start = g.create_block();
    let params: Vec<_> = c
        .sig
        .params
        .iter()
        .map(|&t| g.append_block_param(start, t))
        .collect();
    g.ins_jump(start, entry, params, f.span);
    g.layout.retain(|&b| b != start);
    g.layout.insert(0, start);
    for (b, call, term, args) in tail_calls {
        g.blocks[b].insts.retain(|&i| i != call);
        g.insts[term].kind = InstKind::Jump {
            dest: BlockCall::new(entry, args),
        };
    }
    g.remove_unreachable_blocks();
    g.compact();
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_function, Const};

    const HALVE: &str = "function %h(x: f64, n: i64) -> f64 {
block0(v0: f64, v1: i64):
    v2 = iconst 0
    v3 = ile v1, v2
    brif v3, block2(v0), block1
block1:
    v4 = fconst 0.5
    v5 = fmul v0, v4
    v6 = fconst 1.0
    v7 = fadd v5, v6
    v8 = iconst 1
    v9 = isub v1, v8
    v10 = call %h(v7, v9)
    jump block2(v10)
block2(v11: f64):
    return v11
}
";

    #[test]
    fn a_tail_call_becomes_a_jump_and_computes_the_same_bits() {
        let original = parse_module(HALVE).expect("parses");
        let mut m = original.clone();
        let id = m.functions.keys().next().expect("a function");
        m.functions[id] = tail_calls_as_loop(&m.functions[id], id).expect("a tail call");
        verify_function(&m, id).expect("valid");
        assert!(!m.functions[id]
            .insts
            .values()
            .any(|i| matches!(i.kind, InstKind::Call { .. })));
        assert_eq!(m.functions[id].loop_heads().len(), 1);
        let (before, after) = (Interpreter::new(&original), Interpreter::new(&m));
        for x in [0.7, -3.5, 1e300, f64::INFINITY, f64::NAN, -0.0] {
            for n in [-2, 0, 1, 5, 80] {
                let args = [Const::F64(x), Const::I64(n)];
                let (a, b) = (before.call(id, &args), after.call(id, &args));
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "h({x}, {n})");
            }
        }
    }

    #[test]
    fn a_call_whose_result_is_used_is_not_a_tail_call() {
        let used = HALVE.replace(
            "jump block2(v10)",
            "v12 = fadd v10, v6\n    jump block2(v12)",
        );
        let m = parse_module(&used).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        assert!(tail_calls_as_loop(&m.functions[id], id).is_none());
    }
}
