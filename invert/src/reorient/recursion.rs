//! Which functions can return at all: recursion needs a base case.
//!
//! A recursive call is inverted as a call of the inverse being built (`mod.rs`), which is sound
//! whenever the recursion ends. A function none of whose paths can return without calling back
//! into a function that cannot return either (`fn f(x) { g(x) + 1.0 }`, `fn g(x) { f(x) }`)
//! has an empty image; its inverse would recurse until a limit. This analysis finds those, so
//! that inverting one is a clear error instead.

use pinv_core::ir::{FuncId, FuncKind, InstKind, Module};
use std::collections::HashSet;

/// The functions of `m` that some input takes to a `return`, assuming every call returns when
/// its callee can: the least fixpoint, from no function, of "a path from the entry block to a
/// `return` whose calls are all to such functions". Functions that are not plain `fn`s (declared
/// inverses and PGFs) count as returning.
///
/// Cost: one pass over every instruction per round, and a round adds at least one function.
pub fn returning(m: &Module) -> HashSet<FuncId> {
    let mut done: HashSet<FuncId> = m
        .iter()
        .filter(|(_, f)| f.kind != FuncKind::Fn)
        .map(|(id, _)| id)
        .collect();
    loop {
        let before = done.len();
        for (id, f) in m.iter() {
            if done.contains(&id) || f.layout.is_empty() {
                continue;
            }
            let Some(entry) = f.entry() else { continue };
            // Blocks reached from the entry through blocks whose calls all return.
            let passable = |b| {
                f.blocks[b].insts.iter().all(|&i| match &f.insts[i].kind {
                    InstKind::Call { callee, .. } => done.contains(callee),
                    _ => true,
                })
            };
            let mut seen = HashSet::new();
            let mut work = vec![entry];
            let mut returns = false;
            while let Some(b) = work.pop() {
                if !seen.insert(b) || !passable(b) {
                    continue;
                }
                if f.ends_in_return(b) {
                    returns = true;
                    break;
                }
                work.extend(f.successors(b));
            }
            if returns {
                done.insert(id);
            }
        }
        if done.len() == before {
            return done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::reorient::test_module as module;

    fn names(m: &Module, set: &HashSet<FuncId>) -> Vec<String> {
        let mut v: Vec<String> = set.iter().map(|&id| m.functions[id].name.clone()).collect();
        v.sort();
        v
    }

    #[test]
    fn base_cases_make_recursion_return() {
        let m = module(
            "fn fact(n: i64) -> i64 { if n <= 1 { 1 } else { n * fact(n - 1) } }
             fn ping(n: i64) -> i64 { if n <= 0 { 0 } else { 1 + pong(n - 1) } }
             fn pong(n: i64) -> i64 { if n <= 0 { 0 } else { 2 + ping(n - 1) } }
             fn down(x: f64) -> f64 { up(x) }
             fn up(x: f64) -> f64 { down(x) + 1.0 }
             fn user(x: f64) -> f64 { if x > 0.0 { up(x) } else { x } }
             fn only_up(x: f64) -> f64 { up(x) * 2.0 }
             fn spin(x: f64) -> f64 { spin(x) }",
        );
        let r = returning(&m);
        assert_eq!(names(&m, &r), ["fact", "ping", "pong", "user"]);
    }
}
