//! Guard clauses that the rest of the function makes redundant.
//!
//! `if n <= 0 { return 0; }` before `let mut s = 0; let mut i = 1; while i <= n { … } s` returns
//! what the loop would return for every such n (it runs no trip and leaves `s = 0`). To an
//! inverse the two `return`s are two paths that may give y = 0, and θ picks one: the loop's,
//! for y = 0, finds no trip count whose bound is above 0 and rejects the draw (a quarter of
//! `check`'s draws for a counter drawn around 0). Without the guard, one path gives every y.
//!
//! The pass takes an entry block that branches on `n REL K` (an i64 parameter and a constant)
//! and runs both sides abstractly with `n` anywhere in the guard's range and every other input
//! symbolic: constants are folded by [`crate::semantics::eval`], a comparison of `n` with a
//! constant is decided by the range, anything computed from an input is unknown, and each run
//! must reach a `return` of known values (constants, or inputs passed through unchanged:
//! `if years <= 0 { return p; }` before a loop that starts from p) through branches it can
//! decide, with no call, no `fail` and no instruction that may trap on an unknown operand,
//! within a step budget. Where both return the same values (constants to the bit), the
//! guard's branch becomes a jump to the other side.
//!
//! Invariant: the result returns the same values as the input on every input, to the bit, and
//! stops with the same error wherever the input does (the other side was proved to return the
//! guard's constants without an error on the guard's inputs). It runs more instructions on
//! those inputs; it is for building inverses, whose final check runs the user's function.

use super::counted_recursion::{branch_targets, counter_test, mirrored};
use super::{Block, Const, Function, InstKind, Opcode, Value};
use std::collections::HashMap;

/// The most instructions the abstract run of a side may take (a loop that would run longer on
/// the guard's inputs keeps its guard).
const STEP_BUDGET: usize = 10_000;

/// `f` without its entry's guard clause, when one side of the entry's branch returns constants
/// or inputs that the other side returns too for every input that takes the guard; `None`
/// otherwise.
pub fn drop_redundant_guard(f: &Function) -> Option<Function> {
    // The test first, on `f` itself (closing adds parameters to the other blocks only): every
    // function an inversion reaches comes here.
    let entry = f.entry()?;
    let (counter, k, rel) = counter_test(f, entry)?;
    let c = super::closed::close_blocks(f);
    let term = c.terminator(entry)?;
    let (then_dest, else_dest) = branch_targets(&c, entry)?;
    for (guard, other, holds) in [(then_dest, else_dest, true), (else_dest, then_dest, false)] {
        let Some(range) = counter_range(rel, k, holds) else {
            continue;
        };
        let run = |dest: &super::BlockCall| {
            let mut env = Abstract::new(&c, counter, range);
            env.enter(entry)?;
            let args = dest.args.iter().map(|a| env.get(*a)).collect();
            env.run(dest.block, args)
        };
        let (Some(a), Some(b)) = (run(guard), run(other)) else {
            continue;
        };
        if a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.same(y)) {
            let mut g = c.clone();
            g.insts[term].kind = InstKind::Jump {
                dest: other.clone(),
            };
            g.remove_unreachable_blocks();
            g.compact();
            return Some(g);
        }
    }
    None
}

/// The values of the counter for which `n REL k` is `holds`, if they are one interval.
fn counter_range(rel: Opcode, k: i64, holds: bool) -> Option<(i64, i64)> {
    let (lo, hi) = (i64::MIN, i64::MAX);
    Some(match (rel, holds) {
        (Opcode::Ile, true) | (Opcode::Igt, false) => (lo, k),
        (Opcode::Ilt, true) | (Opcode::Ige, false) => (lo, k.checked_sub(1)?),
        (Opcode::Igt, true) | (Opcode::Ile, false) => (k.checked_add(1)?, hi),
        (Opcode::Ige, true) | (Opcode::Ilt, false) => (k, hi),
        (Opcode::Ieq, true) | (Opcode::Ine, false) => (k, k),
        _ => return None,
    })
}

/// An abstract value: a constant, the counter (somewhere in its range), another input as it was
/// given, or anything.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Abs {
    Known(Const),
    Counter,
    Input(usize),
    Unknown,
}

impl Abs {
    /// Whether two returned values are the same on every input the run covers: the same
    /// constant to the bit, or the same input unchanged.
    fn same(&self, other: &Abs) -> bool {
        match (self, other) {
            (Abs::Known(a), Abs::Known(b)) => a.ty() == b.ty() && a.bits() == b.bits(),
            (Abs::Counter, Abs::Counter) => true,
            (Abs::Input(i), Abs::Input(j)) => i == j,
            _ => false,
        }
    }
}

/// An abstract run of `c` with the counter in `range` and every other input unknown.
struct Abstract<'f> {
    c: &'f Function,
    counter: usize,
    range: (i64, i64),
    env: HashMap<Value, Abs>,
    steps: usize,
}

impl<'f> Abstract<'f> {
    fn new(c: &'f Function, counter: usize, range: (i64, i64)) -> Abstract<'f> {
        Abstract {
            c,
            counter,
            range,
            env: HashMap::new(),
            steps: 0,
        }
    }

    fn get(&self, v: Value) -> Abs {
        self.env.get(&v).copied().unwrap_or(Abs::Unknown)
    }

    /// Binds the entry's parameters and runs its instructions (not its branch).
    fn enter(&mut self, entry: Block) -> Option<()> {
        for (i, &p) in self.c.blocks[entry].params.iter().enumerate() {
            let v = if i == self.counter {
                Abs::Counter
            } else {
                Abs::Input(i)
            };
            self.env.insert(p, v);
        }
        for &inst in &self.c.blocks[entry].insts {
            if !self.c.insts[inst].kind.is_terminator() {
                self.step(inst)?;
            }
        }
        Some(())
    }

    /// Runs from `block` with `args` to a `return` of values it knows (constants, or inputs
    /// unchanged); `None` where it cannot tell.
    fn run(&mut self, mut block: Block, mut args: Vec<Abs>) -> Option<Vec<Abs>> {
        let c = self.c;
        loop {
            // Each block entered is a step: a loop of blocks that only jump (`loop {}`) must
            // spend the budget too.
            self.steps += 1;
            if self.steps > STEP_BUDGET {
                return None;
            }
            for (&p, &a) in c.blocks[block].params.iter().zip(&args) {
                self.env.insert(p, a);
            }
            let mut next = None;
            for &inst in &c.blocks[block].insts {
                match &c.insts[inst].kind {
                    InstKind::Return { args } => {
                        return args
                            .iter()
                            .map(|a| match self.get(*a) {
                                Abs::Unknown => None,
                                known => Some(known),
                            })
                            .collect();
                    }
                    InstKind::Jump { dest } => next = Some(dest),
                    InstKind::Brif {
                        cond,
                        then_dest,
                        else_dest,
                    } => {
                        let Abs::Known(Const::Bool(taken)) = self.get(*cond) else {
                            return None;
                        };
                        next = Some(if taken { then_dest } else { else_dest });
                    }
                    _ => self.step(inst)?,
                }
            }
            let dest = next?;
            args = dest.args.iter().map(|a| self.get(*a)).collect();
            block = dest.block;
        }
    }

    /// One instruction; `None` for what the run cannot follow (a call, a `fail`, a possible
    /// trap, the budget spent).
    fn step(&mut self, inst: super::Inst) -> Option<()> {
        self.steps += 1;
        if self.steps > STEP_BUDGET {
            return None;
        }
        let data = &self.c.insts[inst];
        let value = match &data.kind {
            InstKind::Const(k) => Abs::Known(*k),
            InstKind::Prim { op, args } => {
                let vals: Vec<Abs> = args.iter().map(|a| self.get(*a)).collect();
                let known: Option<Vec<Const>> = vals
                    .iter()
                    .map(|v| match v {
                        Abs::Known(k) => Some(*k),
                        _ => None,
                    })
                    .collect();
                match known {
                    Some(ks) => Abs::Known(crate::semantics::eval(*op, &ks).ok()?),
                    None if op.can_trap() => return None,
                    None => self.compare(*op, &vals).unwrap_or(Abs::Unknown),
                }
            }
            _ => return None,
        };
        for &r in &data.results {
            self.env.insert(r, value);
        }
        Some(())
    }

    /// A comparison of the counter with a constant that its range decides.
    fn compare(&self, op: Opcode, vals: &[Abs]) -> Option<Abs> {
        let (lo, hi) = self.range;
        let (rel, k) = match vals {
            [Abs::Counter, Abs::Known(Const::I64(k))] => (op, *k),
            [Abs::Known(Const::I64(k)), Abs::Counter] => (mirrored(op)?, *k),
            _ => return None,
        };
        // (always true, always false) over [lo, hi].
        let (yes, no) = match rel {
            Opcode::Ilt => (hi < k, lo >= k),
            Opcode::Ile => (hi <= k, lo > k),
            Opcode::Igt => (lo > k, hi <= k),
            Opcode::Ige => (lo >= k, hi < k),
            Opcode::Ieq => (lo == k && hi == k, k < lo || k > hi),
            Opcode::Ine => (k < lo || k > hi, lo == k && hi == k),
            _ => return None,
        };
        match (yes, no) {
            (true, _) => Some(Abs::Known(Const::Bool(true))),
            (_, true) => Some(Abs::Known(Const::Bool(false))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{verify_function, Module};
    use crate::span::SourceFile;

    /// The module of `source` with its first function's guard dropped, or `None`.
    fn dropped(source: &str) -> Option<(Module, Module)> {
        let file = SourceFile::new("t.pinv", source);
        let original = crate::compile_source(&file).expect("compiles").module;
        let mut m = original.clone();
        let id = m.functions.keys().next().expect("a function");
        m.functions[id] = drop_redundant_guard(&m.functions[id])?;
        verify_function(&m, id).expect("valid");
        Some((original, m))
    }

    const TOTAL: &str = "fn total(n: i64) -> i64 {
    if n <= 0 { return 0; }
    let mut s = 0;
    let mut i = 1;
    while i <= n { s += i; i += 1; }
    s
}";

    #[test]
    fn a_guard_the_loop_makes_redundant_is_dropped() {
        let (original, m) = dropped(TOTAL).expect("dropped");
        let id = m.functions.keys().next().expect("a function");
        let returns = |m: &Module| {
            m.functions[id]
                .insts
                .values()
                .filter(|i| matches!(i.kind, InstKind::Return { .. }))
                .count()
        };
        assert_eq!((returns(&original), returns(&m)), (2, 1));
        let (before, after) = (Interpreter::new(&original), Interpreter::new(&m));
        for n in [i64::MIN, -7, -1, 0, 1, 2, 50, 3000] {
            let args = [Const::I64(n)];
            assert_eq!(before.call(id, &args), after.call(id, &args), "total({n})");
        }
    }

    #[test]
    fn a_guard_that_returns_an_input_the_loop_leaves_unchanged_is_dropped() {
        let grow = "fn grow(p: f64, years: i64) -> f64 {
    if years <= 0 { return p; }
    let mut b = p;
    for y in 0..years { b = b * 1.05; }
    b
}";
        let (original, m) = dropped(grow).expect("dropped");
        let id = m.functions.keys().next().expect("a function");
        let (before, after) = (Interpreter::new(&original), Interpreter::new(&m));
        for p in [0.0, -0.0, 2.5, f64::NAN, f64::INFINITY] {
            for n in [i64::MIN, -1, 0, 1, 7] {
                let args = [Const::F64(p), Const::I64(n)];
                let (a, b) = (before.call(id, &args), after.call(id, &args));
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "grow({p}, {n})");
            }
        }
        // A value computed from the input is not the input, even when it equals it.
        assert!(dropped(&grow.replace("let mut b = p;", "let mut b = p * 1.0;")).is_none());
    }

    #[test]
    fn a_guard_is_kept_where_the_rest_gives_otherwise_or_cannot_be_followed() {
        // Another value at the guard's inputs.
        assert!(dropped(&TOTAL.replace("return 0;", "return 1;")).is_none());
        // A division by an unknown may stop the run where the guard returns.
        let divides = TOTAL
            .replace("fn total(n: i64)", "fn total(n: i64, d: i64)")
            .replace("let mut s = 0;", "let mut s = 0 / d;");
        assert!(dropped(&divides).is_none());
        // A loop that would run past the step budget for some guarded n, and a branch on an
        // unknown input.
        assert!(dropped(&TOTAL.replace("let mut i = 1;", "let mut i = -100000;")).is_none());
        let branches = "fn b(n: i64, x: f64) -> f64 {
    if n < 0 { return 0.0; }
    if x > 1.0 { 0.0 } else { x }
}";
        assert!(dropped(branches).is_none());
    }
}
