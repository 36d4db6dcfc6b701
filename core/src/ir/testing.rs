//! Test helpers for the IR's passes: random verifiable functions, to run before and after a pass.

use super::read::parse_function;
use super::verify::verify_module;
use super::write::{write_function_in, WriteOptions};
use super::{
    Block, BlockCall, Const, FuncKind, Function, InstKind, Module, Opcode, Signature, Type, Value,
};
use crate::interp::{InterpConfig, Interpreter};
use crate::span::Span;

/// A random verifiable function of one i64: the entry defines a few values every block may
/// use; each other block has up to two parameters and either only jumps on (passing its
/// parameters and the entry's values) or adds a constant and branches on the sum, jumps or
/// returns. Loops may not terminate.
///
/// With `constants`, half the arguments passed are new constants of the passing block, and
/// the last block returns and is half the targets (a join of constants that returns, as
/// `x * if b { 2 } else { 3 }` makes).
pub(crate) fn random_function(seed: u64, constants: bool) -> Module {
    let mut rng = crate::rng::Rng::new(seed);
    let mut next = move |n: u64| rng.below(n);
    let sig = Signature {
        params: vec![Type::I64],
        returns: vec![Type::I64],
    };
    let mut f = Function::new("f", FuncKind::Fn, sig);
    let sp = Span::default();
    let entry = f.create_entry();
    let x = f.blocks[entry].params[0];
    let k = f.ins_const(entry, Const::I64(next(9) as i64 - 4), sp);
    let shared = vec![x, f.ins_prim(entry, Opcode::Iadd, vec![x, k], sp)];
    let n = 2 + next(8) as usize;
    let mut blocks = Vec::new();
    for _ in 0..n {
        let b = f.create_block();
        for _ in 0..next(3) {
            f.append_block_param(b, Type::I64);
        }
        blocks.push(b);
    }
    let exit = blocks[n - 1];
    if constants && f.blocks[exit].params.is_empty() {
        f.append_block_param(exit, Type::I64);
    }
    let target = |next: &mut dyn FnMut(u64) -> u64| {
        if constants && next(2) == 0 {
            exit
        } else {
            blocks[next(n as u64) as usize]
        }
    };
    // With `constants`, each argument is a new constant of the passing block half the time.
    let pick = |f: &mut Function,
                b: Block,
                avail: &[Value],
                t: Block,
                next: &mut dyn FnMut(u64) -> u64| {
        let mut call: Vec<Value> = Vec::new();
        for _ in 0..f.blocks[t].params.len() {
            let v = if constants && next(2) == 0 {
                f.ins_const(b, Const::I64(next(5) as i64 - 2), sp)
            } else {
                avail[next(avail.len() as u64) as usize]
            };
            call.push(v);
        }
        call
    };
    let first = blocks[next(n as u64) as usize];
    let args = pick(&mut f, entry, &shared, first, &mut next);
    f.ins_jump(entry, first, args, sp);
    for &b in &blocks {
        let mut avail = shared.clone();
        avail.extend(f.blocks[b].params.iter().copied());
        let returns = constants && b == exit;
        if !returns && next(2) == 0 {
            let t = target(&mut next);
            let args = pick(&mut f, b, &avail, t, &mut next);
            f.ins_jump(b, t, args, sp);
            continue;
        }
        let a = avail[next(avail.len() as u64) as usize];
        let c = f.ins_const(b, Const::I64(next(7) as i64 - 3), sp);
        let sum = f.ins_prim(b, Opcode::Iadd, vec![a, c], sp);
        avail.push(sum);
        match if returns { 0 } else { next(4) } {
            0 => {
                f.ins_return(b, vec![sum], sp);
            }
            1 => {
                let t = target(&mut next);
                let args = pick(&mut f, b, &avail, t, &mut next);
                f.ins_jump(b, t, args, sp);
            }
            _ => {
                let zero = f.ins_const(b, Const::I64(0), sp);
                let cond = f.ins_prim(b, Opcode::Igt, vec![sum, zero], sp);
                let (t, e) = (target(&mut next), target(&mut next));
                let ta = pick(&mut f, b, &avail, t, &mut next);
                let ea = pick(&mut f, b, &avail, e, &mut next);
                f.ins_void(
                    b,
                    InstKind::Brif {
                        cond,
                        then_dest: Box::new(BlockCall::new(t, ta)),
                        else_dest: Box::new(BlockCall::new(e, ea)),
                    },
                    sp,
                );
            }
        }
    }
    f.remove_unreachable_blocks();
    let mut m = Module::new();
    m.add(f).expect("one function");
    m
}

/// Runs `pass` on 3,000 random functions ([`random_function`]) and checks that each still
/// verifies and that every run that finished before (x from −6 to 5, at most 2,000 steps)
/// finishes after with the same result. Returns the sum of what `pass` returned (how much it
/// changed) and how many runs finished, for the caller to check the test saw enough.
pub(crate) fn keeps_every_result(pass: impl FnMut(&mut Function) -> usize) -> (usize, usize) {
    keeps_every_result_in(false, pass)
}

/// [`keeps_every_result`] over [`random_function`]`(seed, constants)`.
pub(crate) fn keeps_every_result_in(
    constants: bool,
    mut pass: impl FnMut(&mut Function) -> usize,
) -> (usize, usize) {
    let config = InterpConfig::default().with_step_limit(2_000);
    let (mut changed, mut finished) = (0, 0);
    for seed in 0..3000 {
        let before = random_function(seed, constants);
        let id = before.functions.keys().next().expect("a function");
        verify_module(&before).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        let mut after = before.clone();
        changed += pass(&mut after.functions[id]);
        verify_module(&after).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        for x in -6..6 {
            let args = [Const::I64(x)];
            let a = Interpreter::new(&before)
                .with_config(config)
                .call(id, &args);
            let b = Interpreter::new(&after).with_config(config).call(id, &args);
            if let Ok(a) = a {
                finished += 1;
                assert_eq!(b.as_ref().ok(), Some(&a), "seed {seed}, x = {x}");
            }
        }
    }
    (changed, finished)
}

/// Runs `pass` on the one function of IR `text`; where it gives a new function, checks that
/// the module with it verifies and returns its text.
pub(crate) fn rewritten(
    text: &str,
    pass: impl FnOnce(&Function) -> Option<Function>,
) -> Option<String> {
    let m = parse_function(text).expect("parses");
    let id = m.functions.keys().next().expect("a function");
    let g = pass(&m.functions[id])?;
    let mut check = m.clone();
    check.functions[id] = g.clone();
    verify_module(&check).unwrap_or_else(|e| panic!("{e:?}"));
    Some(write_function_in(&m, &g, &WriteOptions::default()))
}
