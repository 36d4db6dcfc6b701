//! Loop unrolling by specialising blocks on the constants they receive.
//!
//! A loop whose trip count does not depend on the inputs (`for i in 0..3`, a fixed number of
//! rounds or time steps) is, for an inverse, a straight-line function written compactly: walked
//! back as a loop, every value it carries that its exit does not determine (`a`, `b` and `c` in
//! `for i in 0..3 { s = s + a + b * (i as f64) + c }`) must come from θ, and almost no θ then
//! brings `s` back to its start. Unrolled, the same function is a sum in which `a`, `b` and `c`
//! each appear three times, which the solvers take as a whole.
//!
//! The pass works on a copy in closed block form ([`super::closed`]), where a block is a function
//! of its parameters. It runs the control flow from the entry block with every value that is a
//! constant along the way known (the loop counter, `i as f64`, the branch on `i < 3`) and every
//! input unknown, and makes one copy of a block per combination of its parameters' known
//! constants that reaches it. A branch on a known condition becomes a jump. A loop whose
//! control flow depends only on constants so becomes one copy of its body per trip; a loop whose
//! exit depends on an input reaches the same state again and stays a loop (which the whole pass
//! then declines, see [`unroll_loops`]).
//!
//! Invariant: the result computes exactly what the input computes, to the bit, with the same
//! effects in the same order. Only instructions whose operands are all known constants are
//! evaluated at build time, by [`crate::semantics::eval`], the interpreter's own semantics; one
//! that would stop a run there (integer division by 0) is kept, to stop the run where it did.
//! Every copied instruction keeps its source span, so the inverse's θ schema still names the
//! user's lines.

use super::closed::close_blocks;
use super::{Block, BlockCall, Const, Function, InstKind, Value};
use std::collections::HashMap;

/// How far [`unroll_loops`] may go before it gives up and leaves the function as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnrollLimits {
    /// The most instructions the unrolled function may have.
    pub max_instructions: usize,
    /// The most copies of one block (the most trips of one loop).
    pub max_copies: usize,
}

impl Default for UnrollLimits {
    fn default() -> Self {
        UnrollLimits {
            max_instructions: 2_000,
            max_copies: 256,
        }
    }
}

/// What [`unroll_loops`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Unrolled {
    /// The function without loops.
    pub function: Function,
    /// The trips unrolled, over every loop (a loop inside another counts its trips in all).
    pub trips: usize,
}

/// The unrolled form of `f`, when `f` has a loop, every loop's control flow depends only on
/// constants, and the result fits `limits`; `None` otherwise (nothing to do, or a loop whose
/// trips depend on the inputs: such a loop is better walked back as a loop, or scanned for).
pub fn unroll_loops(f: &Function, limits: UnrollLimits) -> Option<Unrolled> {
    if f.loop_heads().is_empty() {
        return None;
    }
    let closed = close_blocks(f);
    let mut spec = Specializer {
        input: &closed,
        out: Function::new(f.name.clone(), f.kind.clone(), f.sig.clone()),
        states: HashMap::new(),
        copies: HashMap::new(),
        queue: Vec::new(),
        limits,
        size: 0,
    };
    spec.out.param_names = f.param_names.clone();
    spec.out.span = f.span;
    let entry = closed.entry()?;
    let out_entry = spec.out.create_entry();
    let key = (entry, vec![None; closed.blocks[entry].params.len()]);
    spec.copies.insert(entry, 1);
    spec.states.insert(key.clone(), out_entry);
    spec.queue.push((key, out_entry));
    while let Some((key, block)) = spec.queue.pop() {
        spec.copy_block(&key, block)?;
    }
    if !spec.out.loop_heads().is_empty() {
        return None;
    }
    // A loop's head is copied once per test of its condition: once more than its trips.
    let trips = closed
        .loop_heads()
        .iter()
        .map(|h| spec.copies.get(h).copied().unwrap_or(0).saturating_sub(1))
        .sum();
    let mut function = spec.out;
    super::dce::remove_dead_code(&mut function);
    super::merge_blocks::merge_blocks(&mut function);
    function.compact();
    Some(Unrolled { function, trips })
}

/// A block of the input with what is known of its parameters.
type State = (Block, Vec<Option<Const>>);

struct Specializer<'a> {
    input: &'a Function,
    out: Function,
    /// The output block of each state made so far.
    states: HashMap<State, Block>,
    /// How many states each input block has.
    copies: HashMap<Block, usize>,
    /// States made but not yet filled in.
    queue: Vec<(State, Block)>,
    limits: UnrollLimits,
    /// Instructions written so far.
    size: usize,
}

/// A value of the input, in the copy being written: a known constant or an output value.
#[derive(Clone, Copy)]
enum Val {
    Known(Const),
    Out(Value),
}

/// The constant `v` is known to be, if it is one.
fn known_const(env: &HashMap<Value, Val>, v: Value) -> Option<Const> {
    match env.get(&v) {
        Some(Val::Known(c)) => Some(*c),
        _ => None,
    }
}

impl Specializer<'_> {
    /// Fills in `block`, the copy of `key`'s input block; `None` past the limits.
    fn copy_block(&mut self, key: &State, block: Block) -> Option<()> {
        let input = self.input;
        let (from, known) = key;
        let mut env: HashMap<Value, Val> = HashMap::new();
        let mut consts: HashMap<Const, Value> = HashMap::new();
        // The entry's copy has its parameters already (the signature's, all unknown).
        let existing = self.out.blocks[block].params.clone();
        for (i, &p) in input.blocks[*from].params.iter().enumerate() {
            let val = match (known[i], existing.get(i)) {
                (Some(c), _) => Val::Known(c),
                (None, Some(&v)) => Val::Out(v),
                (None, None) => Val::Out(self.out.append_block_param(block, input.value_type(p))),
            };
            env.insert(p, val);
        }
        for &inst in &input.blocks[*from].insts {
            self.size += 1;
            if self.size > self.limits.max_instructions {
                return None;
            }
            let data = &input.insts[inst];
            let span = data.span;
            let mut kind = data.kind.clone();
            match &kind {
                InstKind::Const(c) => {
                    env.insert(data.results[0], Val::Known(*c));
                    continue;
                }
                InstKind::Prim { op, args } => {
                    let known: Option<Vec<Const>> =
                        args.iter().map(|a| known_const(&env, *a)).collect();
                    if let Some(Ok(c)) = known.map(|k| crate::semantics::eval(*op, &k)) {
                        env.insert(data.results[0], Val::Known(c));
                        continue;
                    }
                }
                InstKind::Brif {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    if let Some(Val::Known(Const::Bool(taken))) = env.get(cond) {
                        let dest = if *taken { then_dest } else { else_dest };
                        let dest = self.target(dest, &env, &mut consts, block, span)?;
                        self.out.ins_void(block, InstKind::Jump { dest }, span);
                        return Some(());
                    }
                }
                _ => {}
            }
            // Arguments: known constants written as constants; branch targets: the states
            // their arguments make.
            let mut dests = Vec::new();
            for d in kind.successors() {
                dests.push(self.target(d, &env, &mut consts, block, span)?);
            }
            for (slot, dest) in kind.successors_mut().into_iter().zip(dests) {
                *slot = dest;
            }
            if !kind.is_terminator() {
                kind.map_args(|a| self.out_value(a, &env, &mut consts, block, span));
            } else if let InstKind::Brif { cond, .. } = &mut kind {
                *cond = self.out_value(*cond, &env, &mut consts, block, span);
            } else if let InstKind::Return { args } = &mut kind {
                for a in args.iter_mut() {
                    *a = self.out_value(*a, &env, &mut consts, block, span);
                }
            }
            let types: Vec<_> = data.results.iter().map(|&r| input.value_type(r)).collect();
            let copy = self.out.append_inst(block, kind, &types, span);
            for (&r, &o) in data
                .results
                .iter()
                .zip(&self.out.insts[copy].results.clone())
            {
                env.insert(r, Val::Out(o));
            }
        }
        Some(())
    }

    /// The output value of `v`: its copy, or a constant written into `block` for a known one.
    fn out_value(
        &mut self,
        v: Value,
        env: &HashMap<Value, Val>,
        consts: &mut HashMap<Const, Value>,
        block: Block,
        span: crate::span::Span,
    ) -> Value {
        match env.get(&v) {
            Some(Val::Out(o)) => *o,
            Some(Val::Known(c)) => *consts
                .entry(*c)
                .or_insert_with(|| self.out.ins_const(block, *c, span)),
            // Closed block form: every value a block uses is its own or a parameter.
            None => unreachable!("closed block form uses only its own values"),
        }
    }

    /// The branch to the copy of `dest`'s block for what its arguments make known, made (and
    /// queued) if it is new; `None` past the limits.
    fn target(
        &mut self,
        dest: &BlockCall,
        env: &HashMap<Value, Val>,
        consts: &mut HashMap<Const, Value>,
        block: Block,
        span: crate::span::Span,
    ) -> Option<BlockCall> {
        let known: Vec<Option<Const>> = dest.args.iter().map(|a| known_const(env, *a)).collect();
        let args: Vec<Value> = dest
            .args
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(&a, _)| self.out_value(a, env, consts, block, span))
            .collect();
        let key = (dest.block, known);
        let target = match self.states.get(&key) {
            Some(&b) => b,
            None => {
                let copies = self.copies.entry(dest.block).or_insert(0);
                *copies += 1;
                if *copies > self.limits.max_copies {
                    return None;
                }
                let b = self.out.create_block();
                self.states.insert(key.clone(), b);
                self.queue.push((key, b));
                b
            }
        };
        Some(BlockCall::new(target, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_function, write_function, Module, WriteOptions};

    /// `for i in 0..3 { s = s + a + b * (i as f64) }; s`, as the front end lowers it.
    const MEAN: &str = "function %m(a: f64, b: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fconst 0.0
    v3 = iconst 0
    v4 = iconst 3
    jump block1(v3, v2)
block1(v5: i64, v6: f64):
    v7 = ilt v5, v4
    brif v7, block2, block3
block2:
    v8 = fadd v6, v0
    v9 = fcvt_from_i64 v5
    v10 = fmul v1, v9
    v11 = fadd v8, v10
    v12 = iconst 1
    v13 = iadd v5, v12
    jump block1(v13, v11)
block3:
    return v6
}
";

    /// Unrolls the module's only function, checks the result, and returns it with its text.
    fn unrolled(text: &str, limits: UnrollLimits) -> Option<(Module, String)> {
        let mut m = parse_module(text).expect("parses");
        let id = m.functions.keys().next().expect("a function");
        let u = unroll_loops(&m.functions[id], limits)?;
        m.functions[id] = u.function;
        verify_function(&m, id).expect("the unrolled function is valid");
        let text = write_function(&m, id, &WriteOptions::default());
        Some((m, text))
    }

    #[test]
    fn a_loop_of_three_constant_trips_becomes_straight_line_code() {
        let m = parse_module(MEAN).expect("parses");
        let f = m.functions.values().next().expect("a function");
        let u = unroll_loops(f, UnrollLimits::default()).expect("unrolled");
        assert_eq!(u.trips, 3);
        let (_, text) = unrolled(MEAN, UnrollLimits::default()).expect("unrolled");
        assert_eq!(
            text,
            "function %m(a: f64, b: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fconst 0.0
    v3 = fadd v2, v0
    v4 = fmul v1, v2
    v5 = fadd v3, v4
    v6 = fadd v5, v0
    v7 = fconst 1.0
    v8 = fmul v1, v7
    v9 = fadd v6, v8
    v10 = fadd v9, v0
    v11 = fconst 2.0
    v12 = fmul v1, v11
    v13 = fadd v10, v12
    return v13
}
"
        );
    }

    #[test]
    fn the_unrolled_function_computes_the_same_bits() {
        let original = parse_module(MEAN).expect("parses");
        let (copy, _) = unrolled(MEAN, UnrollLimits::default()).expect("unrolled");
        let id = original.functions.keys().next().expect("a function");
        let (before, after) = (Interpreter::new(&original), Interpreter::new(&copy));
        for a in [0.1, -3.5, 1e300, f64::INFINITY, f64::NAN, -0.0] {
            for b in [0.7, -0.0, 2.5e-308, f64::NEG_INFINITY] {
                let args = [Const::F64(a), Const::F64(b)];
                assert_eq!(before.call(id, &args), after.call(id, &args), "m({a}, {b})");
            }
        }
    }

    #[test]
    fn a_loop_whose_trips_depend_on_an_input_is_left_alone() {
        // `for i in 0..n { s += i }`: the counter is known, the bound is not, and every trip
        // makes a new state until the copies run out.
        let text = "function %t(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    jump block1(v1, v1)
block1(v2: i64, v3: i64):
    v4 = ilt v2, v0
    brif v4, block2, block3
block2:
    v5 = iadd v3, v2
    v6 = iconst 1
    v7 = iadd v2, v6
    jump block1(v7, v5)
block3:
    return v3
}
";
        assert!(unrolled(text, UnrollLimits::default()).is_none());
        // A loop with no known counter reaches its own state again: still a loop.
        let text = "function %h(x: i64) -> i64 {
block0(v0: i64):
    jump block1(v0)
block1(v1: i64):
    v2 = iconst 1
    v3 = igt v1, v2
    brif v3, block2, block3
block2:
    v4 = iconst 2
    v5 = idiv v1, v4
    jump block1(v5)
block3:
    return v1
}
";
        assert!(unrolled(text, UnrollLimits::default()).is_none());
    }

    #[test]
    fn the_limits_bound_the_copies_and_the_size() {
        let few_copies = UnrollLimits {
            max_copies: 2,
            ..UnrollLimits::default()
        };
        assert!(unrolled(MEAN, few_copies).is_none());
        let small = UnrollLimits {
            max_instructions: 10,
            ..UnrollLimits::default()
        };
        assert!(unrolled(MEAN, small).is_none());
    }

    #[test]
    fn a_division_that_would_trap_is_kept_to_trap_at_run_time() {
        // Two trips of `r = r + 7 / (2 - i)`: no trap. Three would divide by 0, and the
        // unrolled code must still stop there rather than be folded away.
        let text = "function %d(x: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    jump block1(v1, v0)
block1(v2: i64, v3: i64):
    v4 = iconst 3
    v5 = ilt v2, v4
    brif v5, block2, block3
block2:
    v6 = iconst 7
    v7 = iconst 2
    v8 = isub v7, v2
    v9 = idiv v6, v8
    v10 = iadd v3, v9
    v11 = iconst 1
    v12 = iadd v2, v11
    jump block1(v12, v10)
block3:
    return v3
}
";
        let original = parse_module(text).expect("parses");
        let (copy, out) = unrolled(text, UnrollLimits::default()).expect("unrolled");
        assert!(out.contains("idiv"), "{out}");
        let id = original.functions.keys().next().expect("a function");
        let args = [Const::I64(5)];
        let (a, b) = (Interpreter::new(&original), Interpreter::new(&copy));
        let (a, b) = (a.call(id, &args), b.call(id, &args));
        assert!(a.is_err(), "{a:?}");
        assert_eq!(a.map_err(|e| e.kind), b.map_err(|e| e.kind));
    }
}
