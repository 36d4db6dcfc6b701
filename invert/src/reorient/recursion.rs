//! Which functions can return at all (recursion needs a base case), and which are recursive.
//!
//! A recursive call is inverted as a call of the inverse being built (`mod.rs`), which is sound
//! whenever the recursion ends. A function none of whose paths can return without calling back
//! into a function that cannot return either (`fn f(x) { g(x) + 1.0 }`, `fn g(x) { f(x) }`)
//! has an empty image; its inverse would recurse until a limit. This analysis finds those, so
//! that inverting one is a clear error instead.

use pinv_core::ir::{FuncId, FuncKind, InstKind, Module};
use std::collections::{HashMap, HashSet};

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

/// The functions of `m` that call themselves, directly or through others: those on a cycle of
/// the call graph (strongly connected components, Tarjan's algorithm without recursion, so
/// a chain of calls as long as the program costs no stack).
///
/// Cost: linear in the number of functions and call instructions.
pub fn recursive(m: &Module) -> HashSet<FuncId> {
    let callees: HashMap<FuncId, Vec<FuncId>> = m
        .iter()
        .map(|(id, f)| {
            let mut out: Vec<FuncId> = f
                .insts
                .values()
                .filter_map(|inst| match &inst.kind {
                    InstKind::Call { callee, .. } => Some(*callee),
                    _ => None,
                })
                .collect();
            out.sort();
            out.dedup();
            (id, out)
        })
        .collect();
    let mut index: HashMap<FuncId, usize> = HashMap::new();
    let mut low: HashMap<FuncId, usize> = HashMap::new();
    let mut on_stack: HashSet<FuncId> = HashSet::new();
    let mut stack: Vec<FuncId> = Vec::new();
    let mut found = HashSet::new();
    let none = Vec::new();
    for (root, _) in m.iter() {
        if index.contains_key(&root) {
            continue;
        }
        // (function, how many of its callees are done)
        let mut work: Vec<(FuncId, usize)> = vec![(root, 0)];
        while let Some(&mut (v, ref mut next)) = work.last_mut() {
            if *next == 0 && !index.contains_key(&v) {
                let i = index.len();
                index.insert(v, i);
                low.insert(v, i);
                stack.push(v);
                on_stack.insert(v);
            }
            let out = callees.get(&v).unwrap_or(&none);
            if let Some(&w) = out.get(*next) {
                *next += 1;
                if !index.contains_key(&w) {
                    work.push((w, 0));
                } else if on_stack.contains(&w) {
                    let lw = index[&w];
                    let lv = low.entry(v).or_insert(lw);
                    *lv = (*lv).min(lw);
                }
                continue;
            }
            work.pop();
            let lv = low[&v];
            if let Some(&(parent, _)) = work.last() {
                let lp = low.entry(parent).or_insert(lv);
                *lp = (*lp).min(lv);
            }
            if lv == index[&v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(&w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let calls_itself = out.contains(&v);
                if component.len() > 1 || calls_itself {
                    found.extend(component);
                }
            }
        }
    }
    found
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
        let r = recursive(&m);
        assert_eq!(
            names(&m, &r),
            ["down", "fact", "ping", "pong", "spin", "up"]
        );
    }

    #[test]
    fn a_long_chain_of_calls_is_not_recursion_and_costs_no_stack() {
        let n = 20_000;
        let mut src = String::new();
        for i in 0..n {
            src.push_str(&format!(
                "fn f{i}(x: f64) -> f64 {{ f{}(x) + 1.0 }}\n",
                i + 1
            ));
        }
        src.push_str(&format!("fn f{n}(x: f64) -> f64 {{ f0(x) }}\n"));
        src.push_str("fn g(x: f64) -> f64 { x }\n");
        let m = module(&src);
        let r = recursive(&m);
        assert_eq!(r.len(), n + 1);
        assert!(!names(&m, &r).contains(&"g".to_string()));
    }
}
