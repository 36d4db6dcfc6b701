//! Trivial block parameters: a parameter whose every incoming argument is the parameter itself
//! or one other value `v` always holds `v`, so it is replaced by `v` and dropped with its
//! arguments (the "trivial φ" of Braun et al., *Simple and Efficient Construction of Static
//! Single Assignment Form*, 2013).
//!
//! Generated loops are full of them: a trip-count scan carries the loop's invariants (the
//! input, a bound that never moves, a flag that is never set) round the loop as parameters,
//! each passed back unchanged by the latch. Every one costs a register or a stack slot per trip
//! in compiled code, and hides from the other passes that the value is a constant (`bnot v19`
//! of a flag that is always `false`).
//!
//! The search is optimistic, as sparse constant propagation is: every parameter is assumed to
//! hold one value until an edge brings another, and the assumptions are revised until none
//! changes. So a *set* of parameters that pass only each other round (an invariant carried
//! through a loop nest's headers, or through a merge inside the loop that picks either it or a
//! saved copy of it), fed one value `v` from outside, is found to hold `v` too.
//!
//! Replacing is sound in valid SSA: at the fixed point, every edge into such a set carries `v`
//! or a member of the set, so at run time the members only ever hold `v`; and `v` is an
//! argument on every edge that enters the set from outside, so it dominates each of those
//! edges' sources, through one of which every path from the entry comes: `v` dominates every
//! use of the parameters it replaces.
//!
//! The entry block's parameters (the signature) are never touched.

use super::{Block, Function, Value, ValueDef};
use cranelift_entity::SecondaryMap;

/// Replaces every trivial block parameter of `func`'s reachable blocks by the one value it
/// always holds, and removes it with its arguments; returns how many were removed, and adds to
/// `touched` the blocks with an instruction that read one (each once). The function stays valid
/// (the verifier's invariants hold if they held before) but is not compacted.
pub fn remove_trivial_params(func: &mut Function, touched: &mut Vec<Block>) -> usize {
    let blocks = func.reachable_blocks();
    let Some(&entry) = blocks.first() else {
        return 0;
    };
    // The parameters of the reachable blocks other than the entry, numbered densely (a loop
    // nest of ten thousand statements has a million values but few parameters), with where
    // each is (its block and position).
    let mut params: Vec<Value> = Vec::new();
    let mut at: Vec<(Block, usize)> = Vec::new();
    // `NONE` for a value that is not such a parameter.
    let mut index: SecondaryMap<Value, u32> = SecondaryMap::with_default(NONE);
    for &b in &blocks {
        if b != entry {
            for (k, &p) in func.blocks[b].params.iter().enumerate() {
                index[p] = params.len() as u32;
                params.push(p);
                at.push((b, k));
            }
        }
    }
    if params.is_empty() {
        return 0;
    }
    let incoming = func.incoming_edges(&blocks);
    // Which parameters each one is passed to (flat: `users[first_user[i]..first_user[i + 1]]`).
    let param = |v: Value| Some(index[v] as usize).filter(|_| index[v] != NONE);
    let passed = |i: usize, each: &mut dyn FnMut(usize)| {
        let (b, k) = at[i];
        for &(t, d) in incoming.of(b) {
            if let Some(j) = func.insts[t]
                .kind
                .successor(d)
                .and_then(|c| c.args.get(k))
                .and_then(|&a| param(a))
            {
                each(j);
            }
        }
    };
    let mut first_user = vec![0usize; params.len() + 1];
    for i in 0..params.len() {
        passed(i, &mut |j| first_user[j + 1] += 1);
    }
    for i in 0..params.len() {
        first_user[i + 1] += first_user[i];
    }
    let mut users = vec![0usize; first_user[params.len()]];
    let mut filled_users = first_user.clone();
    for i in 0..params.len() {
        passed(i, &mut |j| {
            users[filled_users[j]] = i;
            filled_users[j] += 1;
        });
    }
    // Optimistically, every parameter holds one value until an edge shows otherwise (so a
    // cycle of parameters that only pass each other round a loop, fed one value from outside,
    // holds that value): `Unseen` < `One(v)` < `Many`, each parameter moving up only, at most
    // twice. A parameter is looked at again when one passed to it moves: a work list, in
    // layout order first.
    let mut state = vec![Holds::Unseen; params.len()];
    let mut work: Vec<usize> = (0..params.len()).rev().collect();
    let mut queued = vec![true; params.len()];
    while let Some(i) = work.pop() {
        queued[i] = false;
        let (b, k) = at[i];
        let p = params[i];
        let mut seen = Holds::Unseen;
        for &(t, d) in incoming.of(b) {
            let Some(&a) = func.insts[t].kind.successor(d).and_then(|c| c.args.get(k)) else {
                seen = Holds::Many;
                break;
            };
            let a = match param(a).map(|j| state[j]) {
                Some(Holds::Unseen) => continue,
                Some(Holds::One(v)) => v,
                _ => a,
            };
            if a != p {
                seen = seen.join(Holds::One(a));
            }
            if seen == Holds::Many {
                break;
            }
        }
        let next = state[i].join(seen);
        if next != state[i] {
            state[i] = next;
            for &u in &users[first_user[i]..first_user[i + 1]] {
                if !queued[u] {
                    queued[u] = true;
                    work.push(u);
                }
            }
        }
    }
    // A parameter still `Unseen` receives no value from outside its cycle: only code the
    // entry cannot reach, left alone.
    let removed = state.iter().filter(|h| matches!(h, Holds::One(_))).count();
    if removed == 0 {
        return 0;
    }
    let holds = |v: Value| match param(v).map(|i| state[i]) {
        Some(Holds::One(w)) => w,
        _ => v,
    };
    let keep = |v: Value| holds(v) == v;
    for &b in &blocks {
        for k in 0..func.blocks[b].insts.len() {
            let i = func.blocks[b].insts[k];
            // Arguments first, then the edges' arguments to removed parameters go.
            let mut reads = false;
            func.insts[i].kind.map_args(|v| {
                let w = holds(v);
                reads |= w != v;
                w
            });
            if reads && touched.last() != Some(&b) {
                touched.push(b);
            }
            for call in func.insts[i].kind.successors_mut() {
                if call.block == entry {
                    continue;
                }
                let targets = &func.blocks[call.block].params;
                if call.args.len() == targets.len() {
                    let mut n = 0;
                    call.args.retain(|_| {
                        n += 1;
                        keep(targets[n - 1])
                    });
                }
            }
        }
    }
    for &b in &blocks {
        if b == entry {
            continue;
        }
        func.blocks[b].params.retain(|&p| keep(p));
        for (n, &p) in func.blocks[b].params.iter().enumerate() {
            func.values[p].def = ValueDef::Param(b, n as u32);
        }
    }
    removed
}

/// [`remove_trivial_params`]'s index of a value that is not a parameter it looks at.
const NONE: u32 = u32::MAX;

/// What a block parameter is known to hold, in the order facts only move up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Holds {
    /// No incoming value seen yet (the optimistic start).
    #[default]
    Unseen,
    /// Always this value (not itself a parameter that holds one value).
    One(Value),
    /// Several values.
    Many,
}

impl Holds {
    /// The least fact that covers both.
    fn join(self, other: Holds) -> Holds {
        match (self, other) {
            (Holds::Unseen, x) | (x, Holds::Unseen) => x,
            (Holds::One(a), Holds::One(b)) if a == b => Holds::One(a),
            _ => Holds::Many,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use crate::ir::verify::verify_module;
    use crate::ir::write::{write_function, WriteOptions};

    /// Removes the first function's trivial parameters, checks it still verifies, and prints it
    /// with how many went.
    fn run(text: &str) -> (usize, String) {
        let mut m = parse_module(text).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        let removed = remove_trivial_params(&mut m.functions[id], &mut Vec::new());
        m.functions[id].compact();
        verify_module(&m).expect("still valid");
        (removed, write_function(&m, id, &WriteOptions::default()))
    }

    #[test]
    fn an_invariant_carried_round_a_loop_is_the_value_it_enters_with() {
        // v4 (the bound) and v5 (a flag never set) go round unchanged; v3 counts.
        let (removed, out) = run("function %f(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = bconst false
    jump block1(v1, v0, v2)
block1(v3: i64, v4: i64, v5: bool):
    v6 = ige v3, v4
    v7 = bor v6, v5
    brif v7, block2, block3
block2:
    return v3
block3:
    v8 = iconst 1
    v9 = iadd v3, v8
    jump block1(v9, v4, v5)
}
");
        assert_eq!(removed, 2);
        assert_eq!(
            out,
            "function %f(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = bconst false
    jump block1(v1)
block1(v3: i64):
    v4 = ige v3, v0
    v5 = bor v4, v2
    brif v5, block2, block3
block2:
    return v3
block3:
    v6 = iconst 1
    v7 = iadd v3, v6
    jump block1(v7)
}
"
        );
    }

    #[test]
    fn parameters_that_only_pass_each_other_hold_what_enters_them() {
        // v2 enters the loop; inside, a merge picks v2 itself or its saved copy v5, and the
        // latch passes the merge's v6 back: both parameters always hold v0.
        let (removed, out) = run("function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    jump block1(v1, v0)
block1(v2: i64, v3: i64):
    v4 = igt v2, v3
    brif v4, block3, block2
block2:
    v7 = iconst 1
    v8 = iadd v2, v7
    brif v4, block4(v3), block4(v3)
block4(v6: i64):
    jump block1(v8, v6)
block3:
    return v3
}
");
        assert_eq!(removed, 2, "{out}");
        assert!(out.contains("block1(v2: i64):"), "{out}");
        assert!(out.contains("v3 = igt v2, v0"), "{out}");
        assert!(out.contains("return v0"), "{out}");
    }

    #[test]
    fn a_parameter_given_two_values_stays() {
        let text = "function %f(a: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    v2 = igt v0, v1
    brif v2, block1(v0), block1(v1)
block1(v3: i64):
    return v3
}
";
        assert_eq!(run(text), (0, text.to_string()));
    }

    #[test]
    fn removing_trivial_parameters_keeps_every_result() {
        // Only parameter passing changes: a run that finished finishes, the same.
        let (removed, finished) =
            crate::ir::testing::keeps_every_result(|f| remove_trivial_params(f, &mut Vec::new()));
        assert!(removed > 300, "only {removed} parameters removed");
        assert!(finished > 5_000, "only {finished} runs finished");
    }
}
