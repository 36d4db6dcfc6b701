//! Random IR, run in the interpreter and as native code: the two must agree bit for bit.
//!
//! The generator builds modules of three functions: `f(x: f64, n: i64, b: bool) -> (f64, i64,
//! bool)`, which mixes every opcode with constants, calls, diamonds (block parameters at the
//! join), counted loops (a header with block parameters and a back edge, nested up to twice) and,
//! depending on its kind, the inverse-only instructions (`theta` of every domain, `choice`,
//! `check`) or `record`; `helper(f64, i64) -> (f64, i64, bool)` (several results); and the
//! recursive `rec(i64, f64) -> f64`. Each module runs on special inputs, under random step and
//! depth limits, with θ tapes drawn by a source that mostly answers in the domain and sometimes
//! not (wrong types, out of range, running out), recorded in the interpreter and replayed to both
//! engines. Results must have the same bits, steps, θ reads and depth; errors the same kind,
//! function, span and backtrace (for the step limit, the same kind).
//!
//! `PINV_JIT_PROPS` sets the number of modules (default 64).

use pinv_core::interp::{
    InterpConfig, Outcome, RuntimeError, RuntimeErrorKind, TapeRecorder, TapeSource, ThetaAddress,
    ThetaError, ThetaSource,
};
use pinv_core::ir::verify::verify_module;
use pinv_core::ir::write::{write_module, WriteOptions};
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncId, FuncKind, Function, InstKind, Module, Opcode,
    SegmentOp, Signature, Type, Value,
};
use pinv_core::jit::{Engine, Runner};
use pinv_core::Span;
use std::sync::Arc;

/// The shared generator (a failing seed reproduces), with the values this test draws.
struct Rng(pinv_core::rng::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn f64(&mut self) -> f64 {
        const SPECIAL: [f64; 12] = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            1e300,
            -3.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        match self.below(4) {
            0 => SPECIAL[self.below(12) as usize],
            1 => (self.below(2001) as f64 - 1000.0) / 8.0,
            2 => f64::from_bits(self.next()),
            _ => (self.below(200) as f64 - 100.0) / 3.0,
        }
    }
    fn i64(&mut self) -> i64 {
        const SPECIAL: [i64; 8] = [0, 1, -1, 2, 63, 64, i64::MAX, i64::MIN];
        match self.below(3) {
            0 => SPECIAL[self.below(8) as usize],
            1 => self.below(21) as i64 - 10,
            _ => self.next() as i64,
        }
    }
    fn value(&mut self, ty: Type) -> Const {
        match ty {
            Type::F64 => Const::F64(self.f64()),
            Type::I64 => Const::I64(self.i64()),
            Type::Bool => Const::Bool(self.below(2) == 0),
        }
    }
}

/// The values available at a point, by type.
#[derive(Clone, Default)]
struct Pools([Vec<Value>; 3]);

impl Pools {
    fn slot(ty: Type) -> usize {
        match ty {
            Type::F64 => 0,
            Type::I64 => 1,
            Type::Bool => 2,
        }
    }
    fn add(&mut self, f: &Function, v: Value) {
        self.0[Pools::slot(f.value_type(v))].push(v);
    }
    fn pick(&self, rng: &mut Rng, ty: Type) -> Value {
        let pool = &self.0[Pools::slot(ty)];
        // Prefer recent values, so results feed later operations.
        let n = pool.len() as u64;
        let k = if rng.below(2) == 0 {
            n - 1 - rng.below(n.min(4))
        } else {
            rng.below(n)
        };
        pool[k as usize]
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flavor {
    Forward,
    Inverse,
    Pgf,
}

const HELPER: u32 = 1;
const REC: u32 = 2;

struct Gen<'r> {
    rng: &'r mut Rng,
    f: Function,
    flavor: Flavor,
    span: u32,
    /// Whether the function may call the helper (the helper itself may not).
    calls_helper: bool,
}

impl Gen<'_> {
    fn span(&mut self) -> Span {
        self.span += 3;
        Span {
            start: self.span,
            end: self.span + 2,
        }
    }

    fn constant(&mut self, ty: Type) -> Const {
        self.rng.value(ty)
    }

    /// Appends `count` random steps to `block`; returns the block where control continues.
    fn steps(&mut self, mut block: Block, pools: &mut Pools, count: u32, nest: u32) -> Block {
        for _ in 0..count {
            let span = self.span();
            match self.rng.below(20) {
                0..=8 => {
                    let op = Opcode::ALL[self.rng.below(Opcode::ALL.len() as u64) as usize];
                    let args = op
                        .arg_types()
                        .iter()
                        .map(|&t| pools.pick(self.rng, t))
                        .collect::<Vec<_>>();
                    let v = self.f.ins_prim(block, op, args, span);
                    pools.add(&self.f, v);
                }
                9 | 10 => {
                    let ty = Type::ALL[self.rng.below(3) as usize];
                    let c = self.constant(ty);
                    let v = self.f.ins_const(block, c, span);
                    pools.add(&self.f, v);
                }
                11 if self.calls_helper => {
                    let args = vec![
                        pools.pick(self.rng, Type::F64),
                        pools.pick(self.rng, Type::I64),
                    ];
                    let rs = self.f.ins_call(
                        block,
                        FuncId::from_u32(HELPER),
                        args,
                        &[Type::F64, Type::I64, Type::Bool],
                        span,
                    );
                    for r in rs {
                        pools.add(&self.f, r);
                    }
                }
                12 => {
                    // rec(n & 15, x): recursion a few frames deep.
                    let n = pools.pick(self.rng, Type::I64);
                    let mask = self.f.ins_const(block, Const::I64(15), span);
                    let n = self.f.ins_prim(block, Opcode::Iand, vec![n, mask], span);
                    let x = pools.pick(self.rng, Type::F64);
                    let rs = self.f.ins_call(
                        block,
                        FuncId::from_u32(REC),
                        vec![n, x],
                        &[Type::F64],
                        span,
                    );
                    pools.add(&self.f, rs[0]);
                }
                13..=15 => self.theta_like(block, pools, span),
                16 | 17 if nest < 2 => block = self.diamond(block, pools, nest),
                18 | 19 if nest < 2 => block = self.counted_loop(block, pools, nest),
                _ => {}
            }
        }
        block
    }

    fn theta_like(&mut self, block: Block, pools: &mut Pools, span: Span) {
        let role = format!("r{}", self.span);
        match self.flavor {
            Flavor::Forward => {}
            Flavor::Pgf => {
                // Segments too: a cut with no frame open is an error both engines report.
                if self.rng.below(4) == 0 {
                    let op = [SegmentOp::Open, SegmentOp::Cut, SegmentOp::Close]
                        [self.rng.below(3) as usize];
                    self.f.ins_void(block, InstKind::Segment(op), span);
                    return;
                }
                let ty = Type::ALL[self.rng.below(3) as usize];
                let v = pools.pick(self.rng, ty);
                self.f.ins_record(block, v, role, span);
            }
            Flavor::Inverse if self.rng.below(4) == 0 => {
                // A read narrowed at run time, between two values of the function.
                let (domain, ty) = if self.rng.below(2) == 0 {
                    (Domain::Real, Type::F64)
                } else {
                    (Domain::Int, Type::I64)
                };
                let lo = pools.pick(self.rng, ty);
                let hi = pools.pick(self.rng, ty);
                let v = self.f.ins_theta_within(block, domain, [lo, hi], role, span);
                pools.add(&self.f, v);
            }
            Flavor::Inverse => match self.rng.below(3) {
                0 => {
                    let domain = match self.rng.below(7) {
                        0 => Domain::Real,
                        1 => Domain::NonzeroReal,
                        2 => {
                            let a = (self.rng.below(200) as f64 - 100.0) / 4.0;
                            Domain::Interval { lo: a, hi: a + 3.0 }
                        }
                        3 => Domain::Int,
                        4 => {
                            let lo = self.rng.below(10) as i64 - 5;
                            Domain::IntRange { lo, hi: lo + 4 }
                        }
                        5 => Domain::Bits {
                            mask: self.rng.i64() as u64,
                        },
                        _ => Domain::Bool,
                    };
                    let v = self.f.ins_theta(block, domain, role, span);
                    pools.add(&self.f, v);
                }
                1 => {
                    let n = self.rng.below(4) as u32 + 1;
                    let v = self.f.ins_choice(block, n, role, span);
                    pools.add(&self.f, v);
                }
                _ => {
                    let cond = pools.pick(self.rng, Type::Bool);
                    self.f
                        .ins_void(block, InstKind::Check { cond, reason: role }, span);
                }
            },
        }
    }

    /// `brif c, then, else(v)`; both arms run steps and join with an f64 and an i64 parameter.
    fn diamond(&mut self, block: Block, pools: &mut Pools, nest: u32) -> Block {
        let span = self.span();
        let cond = pools.pick(self.rng, Type::Bool);
        let then_b = self.f.create_block();
        let else_b = self.f.create_block();
        let p = self.f.append_block_param(else_b, Type::F64);
        let arg = pools.pick(self.rng, Type::F64);
        self.f.ins_void(
            block,
            InstKind::Brif {
                cond,
                then_dest: Box::new(BlockCall::new(then_b, vec![])),
                else_dest: Box::new(BlockCall::new(else_b, vec![arg])),
            },
            span,
        );
        let join = self.f.create_block();
        let jf = self.f.append_block_param(join, Type::F64);
        let ji = self.f.append_block_param(join, Type::I64);
        for (start, extra) in [(then_b, None), (else_b, Some(p))] {
            let mut arm = pools.clone();
            if let Some(p) = extra {
                arm.add(&self.f, p);
            }
            let count = self.rng.below(5) as u32;
            let end = self.steps(start, &mut arm, count, nest + 1);
            // Only the first arm may fail, so the join stays reachable.
            if extra.is_none() && self.rng.below(8) == 0 && self.flavor == Flavor::Inverse {
                let span = self.span();
                self.f.ins_void(
                    end,
                    InstKind::Fail {
                        reason: format!("arm {}", self.span),
                    },
                    span,
                );
            } else {
                let args = vec![arm.pick(self.rng, Type::F64), arm.pick(self.rng, Type::I64)];
                let span = self.span();
                self.f.ins_jump(end, join, args, span);
            }
        }
        pools.add(&self.f, jf);
        pools.add(&self.f, ji);
        join
    }

    /// `for c in 0..(k & 7)` carrying an f64 and an i64 around the back edge.
    fn counted_loop(&mut self, block: Block, pools: &mut Pools, nest: u32) -> Block {
        let span = self.span();
        let k = pools.pick(self.rng, Type::I64);
        let seven = self.f.ins_const(block, Const::I64(7), span);
        let bound = self.f.ins_prim(block, Opcode::Iand, vec![k, seven], span);
        let zero = self.f.ins_const(block, Const::I64(0), span);
        let header = self.f.create_block();
        let c = self.f.append_block_param(header, Type::I64);
        let a = self.f.append_block_param(header, Type::F64);
        let acc = self.f.append_block_param(header, Type::I64);
        let init = vec![
            zero,
            pools.pick(self.rng, Type::F64),
            pools.pick(self.rng, Type::I64),
        ];
        self.f.ins_jump(block, header, init, span);
        let body = self.f.create_block();
        let exit = self.f.create_block();
        let ea = self.f.append_block_param(exit, Type::F64);
        let ei = self.f.append_block_param(exit, Type::I64);
        let more = self.f.ins_prim(header, Opcode::Ilt, vec![c, bound], span);
        self.f.ins_void(
            header,
            InstKind::Brif {
                cond: more,
                then_dest: Box::new(BlockCall::new(body, vec![])),
                else_dest: Box::new(BlockCall::new(exit, vec![a, acc])),
            },
            span,
        );
        let mut inner = pools.clone();
        for v in [c, a, acc, bound] {
            inner.add(&self.f, v);
        }
        let count = self.rng.below(6) as u32 + 1;
        let end = self.steps(body, &mut inner, count, nest + 1);
        let span = self.span();
        let one = self.f.ins_const(end, Const::I64(1), span);
        let next = self.f.ins_prim(end, Opcode::Iadd, vec![c, one], span);
        let back = vec![
            next,
            inner.pick(self.rng, Type::F64),
            inner.pick(self.rng, Type::I64),
        ];
        self.f.ins_jump(end, header, back, span);
        pools.add(&self.f, ea);
        pools.add(&self.f, ei);
        exit
    }
}

fn signature(params: &[Type], returns: &[Type]) -> Signature {
    Signature {
        params: params.to_vec(),
        returns: returns.to_vec(),
    }
}

fn kind(flavor: Flavor, name: &str) -> FuncKind {
    match flavor {
        Flavor::Forward => FuncKind::Fn,
        Flavor::Inverse => FuncKind::GeneratedInverse { of: name.into() },
        Flavor::Pgf => FuncKind::GeneratedPgf { of: name.into() },
    }
}

fn function(rng: &mut Rng, flavor: Flavor, name: &str, sig: Signature, count: u32) -> Function {
    let mut g = Gen {
        rng,
        f: Function::new(name, kind(flavor, name), sig),
        flavor,
        span: 0,
        calls_helper: name != "helper",
    };
    let entry = g.f.create_entry();
    let mut pools = Pools::default();
    for v in g.f.blocks[entry].params.clone() {
        pools.add(&g.f, v);
    }
    // Every pool starts non-empty.
    for ty in Type::ALL {
        let c = g.constant(ty);
        let v = g.f.ins_const(entry, c, Span::default());
        pools.add(&g.f, v);
    }
    let end = g.steps(entry, &mut pools, count, 0);
    let rets: Vec<Value> =
        g.f.sig
            .returns
            .clone()
            .into_iter()
            .map(|t| pools.pick(g.rng, t))
            .collect();
    let span = g.span();
    g.f.ins_return(end, rets, span);
    g.f.compact();
    g.f
}

/// `rec(n, x) = if n <= 0 { x } else { rec(n - 1, x * 0.5 + 1.0) }`.
fn rec() -> Function {
    let sp = Span::default();
    let mut f = Function::new(
        "rec",
        FuncKind::Fn,
        signature(&[Type::I64, Type::F64], &[Type::F64]),
    );
    let entry = f.create_entry();
    let (n, x) = (f.blocks[entry].params[0], f.blocks[entry].params[1]);
    let zero = f.ins_const(entry, Const::I64(0), sp);
    let done = f.ins_prim(entry, Opcode::Ile, vec![n, zero], sp);
    let base = f.create_block();
    let step = f.create_block();
    f.ins_void(
        entry,
        InstKind::Brif {
            cond: done,
            then_dest: Box::new(BlockCall::new(base, vec![])),
            else_dest: Box::new(BlockCall::new(step, vec![])),
        },
        sp,
    );
    f.ins_return(base, vec![x], sp);
    let one = f.ins_const(step, Const::I64(1), sp);
    let m = f.ins_prim(step, Opcode::Isub, vec![n, one], sp);
    let half = f.ins_const(step, Const::F64(0.5), sp);
    let y = f.ins_prim(step, Opcode::Fmul, vec![x, half], sp);
    let onef = f.ins_const(step, Const::F64(1.0), sp);
    let y = f.ins_prim(step, Opcode::Fadd, vec![y, onef], sp);
    let r = f.ins_call(step, FuncId::from_u32(REC), vec![m, y], &[Type::F64], sp);
    f.ins_return(step, r, sp);
    f
}

fn module(seed: u64) -> (Module, Flavor) {
    let mut rng = Rng(pinv_core::rng::Rng::new(seed));
    let flavor = [Flavor::Forward, Flavor::Inverse, Flavor::Pgf][rng.below(3) as usize];
    let count = rng.below(24) as u32 + 4;
    let main = function(
        &mut rng,
        flavor,
        "f",
        signature(
            &[Type::F64, Type::I64, Type::Bool],
            &[Type::F64, Type::I64, Type::Bool],
        ),
        count,
    );
    let helper_flavor = if flavor == Flavor::Inverse {
        Flavor::Inverse
    } else {
        Flavor::Forward
    };
    let helper = function(
        &mut rng,
        helper_flavor,
        "helper",
        signature(&[Type::F64, Type::I64], &[Type::F64, Type::I64, Type::Bool]),
        6,
    );
    let mut m = Module::new();
    m.add(main).unwrap();
    m.add(helper).unwrap();
    m.add(rec()).unwrap();
    (m, flavor)
}

// ---------------------------------------------------------------------------------------------
// Running

/// A θ source that mostly answers inside the domain, and records what it gave.
struct Wild<'r> {
    rng: &'r mut Rng,
    given: Vec<Const>,
    budget: usize,
}

impl Wild<'_> {
    fn give(&mut self, c: Const) -> Result<Const, ThetaError> {
        if self.given.len() >= self.budget {
            return Err(ThetaError::Exhausted {
                needed_index: self.given.len(),
            });
        }
        self.given.push(c);
        Ok(c)
    }
}

impl ThetaSource for Wild<'_> {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let r = &mut *self.rng;
        let c = if r.below(12) == 0 {
            // Anything: maybe the wrong type, maybe out of the domain.
            let ty = Type::ALL[r.below(3) as usize];
            r.value(ty)
        } else {
            match domain {
                Domain::Real => Const::F64(r.f64()),
                Domain::NonzeroReal => {
                    let x = r.f64();
                    Const::F64(if x == 0.0 { 1.5 } else { x })
                }
                Domain::Interval { lo, hi } | Domain::RealWithin { lo, hi } => match r.below(5) {
                    0 => Const::F64(lo),
                    1 => Const::F64(hi),
                    // In a narrowed real domain; out of an interval.
                    2 => Const::F64(f64::NAN),
                    _ => Const::F64(lo + (hi - lo) * (r.below(1000) as f64 / 1000.0)),
                },
                Domain::Int => Const::I64(r.i64()),
                Domain::IntRange { lo, hi } => {
                    // Ranges narrowed at run time may span all of i64.
                    let width = (i128::from(hi) - i128::from(lo) + 1).min(i128::from(u32::MAX));
                    Const::I64(lo.wrapping_add(r.below(width as u64) as i64))
                }
                Domain::Bool => Const::Bool(r.below(2) == 0),
                // Mostly inside the mask, sometimes a stray bit (a domain error).
                Domain::Bits { mask } => match r.below(8) {
                    0 => Const::I64(r.i64()),
                    _ => Const::I64((r.i64() as u64 & mask) as i64),
                },
            }
        };
        self.give(c)
    }

    fn choice(&mut self, n: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let k = if self.rng.below(16) == 0 {
            n
        } else {
            self.rng.below(u64::from(n)) as u32
        };
        self.give(Const::I64(i64::from(k))).map(|_| k)
    }
}

#[derive(Debug)]
struct Ran {
    result: Result<Outcome, RuntimeError>,
    pos: usize,
    recorded: Vec<Const>,
}

fn run(
    engine: Engine,
    m: &Arc<Module>,
    args: &[Const],
    flavor: Flavor,
    tape: &[Const],
    cfg: InterpConfig,
) -> Ran {
    let runner = Runner::new(Arc::clone(m), engine).with_config(cfg);
    let f = FuncId::from_u32(0);
    if engine == Engine::Jit {
        if let Err(e) = runner.compiled(f) {
            panic!("{e}\n{}", write_module(m, &WriteOptions::default()));
        }
    }
    match flavor {
        Flavor::Forward => Ran {
            result: runner.call_traced(f, args, None),
            pos: 0,
            recorded: Vec::new(),
        },
        Flavor::Inverse => {
            let mut t = TapeSource::new(tape.to_vec());
            let result = runner.call_traced(f, args, Some(&mut t));
            Ran {
                result,
                pos: t.pos(),
                recorded: Vec::new(),
            }
        }
        Flavor::Pgf => {
            let mut rec = TapeRecorder::new();
            let result = runner.call_traced(f, args, Some(&mut rec));
            Ran {
                result,
                pos: 0,
                recorded: rec.into_values(),
            }
        }
    }
}

/// How often each outcome happened, to make sure the test reaches every kind of outcome.
type Tally = std::collections::BTreeMap<String, usize>;

fn outcome_name(r: &Result<Outcome, RuntimeError>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => {
            let kind = format!("{:?}", e.kind);
            kind.split([' ', '(', '{']).next().unwrap_or("").to_string()
        }
    }
}

fn check_seed(seed: u64, runs: usize, tally: &mut Tally) {
    let (m, flavor) = module(seed);
    if let Err(e) = verify_module(&m) {
        panic!(
            "seed {seed}: the generator made invalid IR: {e}\n{}",
            write_module(&m, &WriteOptions::default())
        );
    }
    let m = Arc::new(m);
    let mut rng = Rng(pinv_core::rng::Rng::new(seed));
    for _ in 0..runs {
        let args = [
            rng.value(Type::F64),
            rng.value(Type::I64),
            rng.value(Type::Bool),
        ];
        let mut cfg = InterpConfig::default().with_step_limit(50_000);
        match rng.below(6) {
            0 => cfg = cfg.with_step_limit(rng.below(300)),
            1 => cfg = cfg.with_depth_limit(rng.below(8) as usize),
            _ => {}
        }
        let tape = if flavor == Flavor::Inverse {
            let budget = if rng.below(8) == 0 {
                rng.below(6) as usize
            } else {
                usize::MAX
            };
            let mut wild = Wild {
                rng: &mut rng,
                given: Vec::new(),
                budget,
            };
            let runner = Runner::new(Arc::clone(&m), Engine::Interp).with_config(cfg);
            let _ = runner.call_traced(FuncId::from_u32(0), &args, Some(&mut wild));
            wild.given
        } else {
            Vec::new()
        };
        let want = run(Engine::Interp, &m, &args, flavor, &tape, cfg);
        *tally.entry(outcome_name(&want.result)).or_default() += 1;
        let got = run(Engine::Jit, &m, &args, flavor, &tape, cfg);
        let context = || {
            format!(
                "seed {seed}, args {args:?}, θ {tape:?}, {cfg:?}\n{}",
                write_module(&m, &WriteOptions::default())
            )
        };
        match (&want.result, &got.result) {
            (Ok(w), Ok(g)) => {
                assert_eq!(w, g, "{}", context());
                assert_eq!(want.pos, got.pos, "θ read: {}", context());
                assert_eq!(want.recorded, got.recorded, "θ recorded: {}", context());
            }
            (Err(w), Err(g)) => {
                assert_eq!(w.kind, g.kind, "{}", context());
                if !matches!(w.kind, RuntimeErrorKind::StepLimit { .. }) {
                    assert_eq!(w, g, "{}", context());
                }
            }
            (w, g) => panic!("interpreter {w:?}\ncompiled {g:?}\n{}", context()),
        }
    }
}

fn count() -> u64 {
    std::env::var("PINV_JIT_PROPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

#[test]
fn random_modules_agree_in_both_engines() {
    let mut tally = Tally::new();
    for seed in 0..count() {
        check_seed(
            seed.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(seed),
            24,
            &mut tally,
        );
    }
    eprintln!("outcomes: {tally:?}");
    for kind in ["ok", "StepLimit", "DepthLimit", "Theta", "CheckFailed"] {
        assert!(
            tally.contains_key(kind),
            "no run ended with {kind}: {tally:?}"
        );
    }
}
