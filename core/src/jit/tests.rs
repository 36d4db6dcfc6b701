//! Unit tests of the backend: every opcode on special values, errors, limits, θ, calls, cache.
//! Each compares compiled code with the interpreter, which is the reference.

use super::compile::{compile_tier, Tier};
use super::*;
use crate::interp::{RuntimeErrorKind, TapeRecorder, TapeSource};
use crate::ir::read::parse_module;
use crate::ir::{FuncKind, Function, Opcode, Signature, Type};
use crate::span::Span;
use crate::SourceFile;

fn source(src: &str) -> Arc<Module> {
    let file = SourceFile::new("t.pinv", src);
    match crate::compile_source(&file) {
        Ok(c) => Arc::new(c.module),
        Err(e) => panic!("{e}"),
    }
}

fn ir(text: &str) -> Arc<Module> {
    Arc::new(parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

/// What θ source a run gets.
#[derive(Clone, Debug)]
enum Theta {
    None,
    Tape(Vec<Const>),
    Recorder,
}

/// The outcome of one run, with what the θ source saw.
#[derive(Debug)]
struct Run {
    result: Result<Outcome, RuntimeError>,
    /// Tape position, or the recorded values.
    theta: Vec<Const>,
    pos: usize,
}

fn run_with(
    engine: Engine,
    m: &Arc<Module>,
    f: FuncId,
    args: &[Const],
    theta: &Theta,
    cfg: InterpConfig,
) -> Run {
    let runner = Runner::new(Arc::clone(m), engine).with_config(cfg);
    let _ = &m.functions[f].name;
    if engine == Engine::Jit {
        // The test is about compiled code: it must compile.
        runner.compiled(f).unwrap_or_else(|e| panic!("{e}"));
    }
    match theta {
        Theta::None => Run {
            result: runner.call_traced(f, args, None),
            theta: Vec::new(),
            pos: 0,
        },
        Theta::Tape(values) => {
            let mut tape = TapeSource::new(values.clone());
            let result = runner.call_traced(f, args, Some(&mut tape));
            Run {
                result,
                theta: Vec::new(),
                pos: tape.pos(),
            }
        }
        Theta::Recorder => {
            let mut rec = TapeRecorder::new();
            let result = runner.call_traced(f, args, Some(&mut rec));
            Run {
                result,
                theta: rec.into_values(),
                pos: 0,
            }
        }
    }
}

/// Runs compiled code as [`run_with`] does.
fn run_code(code: &CompiledFunction, args: &[Const], theta: &Theta, cfg: InterpConfig) -> Run {
    match theta {
        Theta::None => Run {
            result: code.call_traced(&cfg, args, None),
            theta: Vec::new(),
            pos: 0,
        },
        Theta::Tape(values) => {
            let mut tape = TapeSource::new(values.clone());
            let result = code.call_traced(&cfg, args, Some(&mut tape));
            Run {
                result,
                theta: Vec::new(),
                pos: tape.pos(),
            }
        }
        Theta::Recorder => {
            let mut rec = TapeRecorder::new();
            let result = code.call_traced(&cfg, args, Some(&mut rec));
            Run {
                result,
                theta: rec.into_values(),
                pos: 0,
            }
        }
    }
}

/// Runs both engines and asserts they agree: the same results (by bits), steps, θ reads and
/// depth, or the same error (kind, and except for the step limit, where and how it was reached).
fn agree(
    m: &Arc<Module>,
    name: &str,
    args: &[Const],
    theta: &Theta,
    cfg: InterpConfig,
) -> Result<Outcome, RuntimeError> {
    let f = m.get(name).unwrap_or_else(|| panic!("no {name}"));
    let want = run_with(Engine::Interp, m, f, args, theta, cfg);
    let got = run_with(Engine::Jit, m, f, args, theta, cfg);
    let ctx = || format!("{name}{args:?} θ={theta:?} cfg={cfg:?}");
    // Both tiers of compiled code give the same as the default compilation.
    for tier in [Tier::Quick, Tier::Optimized] {
        let code = compile_tier(Arc::clone(m), f, Some(tier)).unwrap_or_else(|e| panic!("{e}"));
        let other = run_code(&code, args, theta, cfg);
        match (&other.result, &got.result) {
            // Where the limit is noticed may differ (a recursive unit whose frames do not fit
            // may run in the interpreter, which notices it exactly).
            (Err(a), Err(b)) if matches!(b.kind, RuntimeErrorKind::StepLimit { .. }) => {
                assert_eq!(a.kind, b.kind, "{tier:?}: {}", ctx())
            }
            (a, b) => {
                assert_eq!(a, b, "{tier:?}: {}", ctx());
                assert_eq!(
                    (&other.theta, other.pos),
                    (&got.theta, got.pos),
                    "{tier:?}: {}",
                    ctx()
                );
            }
        }
    }
    match (&want.result, &got.result) {
        (Ok(w), Ok(g)) => assert_eq!(
            w,
            g,
            "{}: bits {:x?} vs {:x?}",
            ctx(),
            w.results.iter().map(|c| c.bits()).collect::<Vec<_>>(),
            g.results.iter().map(|c| c.bits()).collect::<Vec<_>>()
        ),
        (Err(w), Err(g)) => {
            assert_eq!(w.kind, g.kind, "{}", ctx());
            if !matches!(w.kind, RuntimeErrorKind::StepLimit { .. }) {
                assert_eq!(w, g, "{}", ctx());
            }
        }
        (w, g) => panic!("{}: interpreter {w:?}, compiled {g:?}", ctx()),
    }
    if want.result.is_ok() {
        assert_eq!(want.theta, got.theta, "θ recorded: {}", ctx());
        assert_eq!(want.pos, got.pos, "θ read: {}", ctx());
    }
    got.result
}

fn agree_plain(m: &Arc<Module>, name: &str, args: &[Const]) -> Result<Vec<Const>, RuntimeError> {
    agree(m, name, args, &Theta::None, InterpConfig::default()).map(|o| o.results)
}

const F64S: [u64; 24] = [
    0x0000_0000_0000_0000, // 0.0
    0x8000_0000_0000_0000, // -0.0
    0x3ff0_0000_0000_0000, // 1.0
    0xbff8_0000_0000_0000, // -1.5
    0x4004_0000_0000_0000, // 2.5
    0x4008_0000_0000_0000, // 3.0
    0xc01d_0000_0000_0000, // -7.25
    0x7fe1_ccf3_85eb_c8a0, // 1e308
    0xffe1_ccf3_85eb_c8a0, // -1e308
    0x0000_0000_0000_0001, // 5e-324
    0x7ff0_0000_0000_0000, // inf
    0xfff0_0000_0000_0000, // -inf
    0x7ff8_0000_0000_0000, // NaN
    0xfff8_0000_0000_0000, // -NaN (the x86 default NaN)
    0x7ff8_0000_0000_0abc, // NaN with a payload
    0x7ff0_0000_0000_0001, // signalling NaN
    0xfff4_0000_0000_1234, // negative signalling NaN with a payload
    0x3fe0_0000_0000_0000, // 0.5
    0x0001_0000_0000_0000, // subnormal
    0x4059_0000_0000_0000, // 100.0
    0xbfe8_0000_0000_0000, // -0.75
    0x4009_21fb_5444_2d18, // pi
    0x43e0_0000_0000_0000, // 2^63
    0xc3e0_0000_0000_0000, // -2^63
];

const I64S: [i64; 16] = [
    0,
    1,
    -1,
    2,
    -2,
    63,
    64,
    65,
    -64,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    1_234_567,
    -987_654_321,
    0x5555_5555_5555_5555,
    17,
];

fn values(ty: Type) -> Vec<Const> {
    match ty {
        Type::F64 => F64S
            .iter()
            .map(|&b| Const::F64(f64::from_bits(b)))
            .collect(),
        Type::I64 => I64S.iter().map(|&x| Const::I64(x)).collect(),
        Type::Bool => vec![Const::Bool(false), Const::Bool(true)],
    }
}

/// `op` as a function of its operands.
fn op_module(op: Opcode) -> Arc<Module> {
    let sig = Signature {
        params: op.arg_types().to_vec(),
        returns: vec![op.result_type()],
    };
    let mut f = Function::new("op", FuncKind::Fn, sig);
    let entry = f.create_entry();
    let params = f.blocks[entry].params.clone();
    let r = f.ins_prim(entry, op, params, Span::default());
    f.ins_return(entry, vec![r], Span::default());
    let mut m = Module::new();
    m.add(f).unwrap();
    Arc::new(m)
}

#[test]
fn every_opcode_agrees_bit_for_bit_on_special_values() {
    for &op in Opcode::ALL {
        let m = op_module(op);
        let cases: Vec<Vec<Const>> = match op.arg_types() {
            [a] => values(*a).into_iter().map(|x| vec![x]).collect(),
            [a, b] => {
                let bs = values(*b);
                values(*a)
                    .into_iter()
                    .flat_map(|x| bs.iter().map(move |&y| vec![x, y]))
                    .collect()
            }
            other => panic!("{op} takes {other:?}"),
        };
        for args in cases {
            let r = std::panic::catch_unwind(|| agree_plain(&m, "op", &args));
            assert!(
                r.is_ok(),
                "{op} on {:x?}",
                args.iter().map(|c| c.bits()).collect::<Vec<_>>()
            );
        }
    }
}

/// Every binary f64 opcode with a constant operand (left or right), on special values: the
/// translation treats some constants specially (`fmax x, 1.0` is a comparison and a select).
#[test]
fn binary_opcodes_with_a_constant_operand_agree() {
    for &op in Opcode::ALL {
        if op.arg_types() != [Type::F64, Type::F64] {
            continue;
        }
        for c in F64S {
            let c = f64::from_bits(c);
            for left in [false, true] {
                let sig = Signature {
                    params: vec![Type::F64],
                    returns: vec![op.result_type()],
                };
                let mut f = Function::new("op", FuncKind::Fn, sig);
                let entry = f.create_entry();
                let x = f.blocks[entry].params[0];
                let k = f.ins_const(entry, Const::F64(c), Span::default());
                let args = if left { vec![k, x] } else { vec![x, k] };
                let r = f.ins_prim(entry, op, args, Span::default());
                f.ins_return(entry, vec![r], Span::default());
                let mut m = Module::new();
                m.add(f).unwrap();
                let m = Arc::new(m);
                let id = m.get("op").unwrap();
                let code = compile(Arc::clone(&m), id).unwrap();
                let interp = crate::interp::Interpreter::new(&m);
                for x in values(Type::F64) {
                    let want = interp.call(id, &[x]);
                    let got = code.call(&[x]);
                    assert_eq!(want, got, "{op} with {c:?} (left: {left}) on {x:?}");
                }
            }
        }
    }
}

/// A product of two negations keeps the negated NaN's sign (Cranelift's optimizer would
/// rewrite it to the product of the operands).
#[test]
fn products_of_negations_keep_nan_signs() {
    let m = ir("
function %f(x: f64, y: f64) -> (f64, f64, f64) {
block0(v0: f64, v1: f64):
    v2 = fneg v0
    v3 = fneg v1
    v4 = fmul v2, v3
    v5 = fmul v2, v2
    v6 = fadd v2, v3
    return v4, v5, v6
}
");
    for x in values(Type::F64) {
        for y in [Const::F64(2.0), Const::F64(f64::NAN), Const::F64(-0.0)] {
            agree_plain(&m, "f", &[x, y]).unwrap();
        }
    }
}

#[test]
fn nan_operands_propagate_as_in_the_shared_functions() {
    // Both operands NaN: the result is the first one, quieted, in both engines.
    let a = f64::from_bits(0x7ff8_0000_0000_0abc);
    let b = f64::from_bits(0xfff8_0000_0000_0def);
    for op in [Opcode::Fadd, Opcode::Fsub, Opcode::Fmul, Opcode::Fdiv] {
        let m = op_module(op);
        let r = agree_plain(&m, "op", &[Const::F64(a), Const::F64(b)]).unwrap();
        assert_eq!(r[0].bits(), a.to_bits(), "{op}");
        let r = agree_plain(&m, "op", &[Const::F64(b), Const::F64(a)]).unwrap();
        assert_eq!(r[0].bits(), b.to_bits(), "{op}");
    }
}

const PROGRAM: &str = "
fn sum(n: i64) -> i64 {
    let mut i = 0;
    let mut r = 0;
    while i < n { r += i; i += 1; }
    r
}
fn forever(x: i64) -> i64 {
    let mut i = x;
    while i == i { i += 1; }
    i
}
fn divmod(a: i64, b: i64) -> (i64, i64, bool) { (a / b, a % b, a < b) }
fn use_divmod(a: i64, b: i64) -> i64 {
    let (q, r, lt) = divmod(a, b);
    if lt { q } else { r + q * 2 }
}
fn fact(n: i64) -> i64 { if n <= 1 { 1 } else { n * fact(n - 1) } }
fn even(n: i64) -> bool { if n == 0 { true } else { odd(n - 1) } }
fn odd(n: i64) -> bool { if n == 0 { false } else { even(n - 1) } }
fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }
fn fails(x: f64) -> f64 { if x > 0.0 { sqrt(x) } else { fail(\"not positive\") } }
fn calls_fails(x: f64) -> f64 { fails(x) + fails(x + 1.0) }
fn mixed(x: f64, n: i64, b: bool) -> (f64, i64, bool) {
    let y = if b { x * 2.0 } else { min(x, 1.5) };
    (y + (n as f64), (x as i64) + n, !b && x < 3.0)
}
fn nothing() -> f64 { 1.0 }
";

#[test]
fn programs_agree() {
    let m = source(PROGRAM);
    use Const::{Bool as B, F64 as F, I64 as I};
    for n in [-3, 0, 1, 5, 100] {
        agree_plain(&m, "sum", &[I(n)]).unwrap();
    }
    for (a, b) in [(7, 2), (-7, 2), (7, 0), (i64::MIN, -1), (3, 9), (0, -1)] {
        let _ = agree_plain(&m, "divmod", &[I(a), I(b)]);
        let _ = agree_plain(&m, "use_divmod", &[I(a), I(b)]);
    }
    for n in [0, 1, 10, 20] {
        agree_plain(&m, "fact", &[I(n)]).unwrap();
        agree_plain(&m, "even", &[I(n)]).unwrap();
        agree_plain(&m, "fib", &[I(n)]).unwrap();
    }
    for x in [2.0, -1.0, 0.0, -0.5, f64::NAN] {
        let _ = agree_plain(&m, "fails", &[F(x)]);
        let _ = agree_plain(&m, "calls_fails", &[F(x)]);
    }
    for (x, n, b) in [
        (1.0, 2, true),
        (f64::NAN, -1, false),
        (2.5, i64::MAX, false),
    ] {
        agree_plain(&m, "mixed", &[F(x), I(n), B(b)]).unwrap();
    }
    assert_eq!(agree_plain(&m, "nothing", &[]).unwrap(), [F(1.0)]);
    let e = agree_plain(&m, "calls_fails", &[F(-5.0)]).unwrap_err();
    assert_eq!(e.backtrace.len(), 1, "{e:?}");
}

#[test]
fn step_limits_agree_exactly() {
    let m = source(PROGRAM);
    use Const::{F64 as F, I64 as I};
    for limit in 0..120 {
        let cfg = InterpConfig::default().with_step_limit(limit);
        let _ = agree(&m, "sum", &[I(6)], &Theta::None, cfg);
        let _ = agree(&m, "use_divmod", &[I(5), I(0)], &Theta::None, cfg);
        let _ = agree(&m, "fact", &[I(4)], &Theta::None, cfg);
        let _ = agree(&m, "calls_fails", &[F(-1.0)], &Theta::None, cfg);
    }
    // A loop that never ends stops at the limit.
    let cfg = InterpConfig::default().with_step_limit(100_000);
    let e = agree(&m, "forever", &[I(0)], &Theta::None, cfg).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::StepLimit { limit: 100_000 });
    // Exponential recursion without loops stops too.
    let cfg = InterpConfig::default().with_step_limit(10_000);
    let e = agree(&m, "fib", &[I(40)], &Theta::None, cfg).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::StepLimit { limit: 10_000 });
}

/// Compiled code never reads the clock: a run with a deadline gets its fuel in slices, granted
/// only before the deadline. A loop that would run for minutes (to its step limit of 10¹¹),
/// and a recursion without loops, stop at the deadline with `TimeLimit`; a run that ends first
/// takes exactly the steps it takes without a deadline (the slices add up), and a step limit
/// past the first slice is still reached as a step limit.
#[test]
fn compiled_code_stops_at_the_deadline() {
    use std::time::{Duration, Instant};
    let m = source(PROGRAM);
    use Const::I64 as I;
    let soon = || Some(Instant::now() + Duration::from_millis(200));
    let later = Some(Instant::now() + Duration::from_secs(3600));
    let jit = |name: &str, args: &[Const], cfg: InterpConfig| {
        let f = m.get(name).unwrap_or_else(|| panic!("no {name}"));
        run_with(Engine::Jit, &m, f, args, &Theta::None, cfg).result
    };
    let long = InterpConfig::default().with_step_limit(100_000_000_000);
    for (name, arg) in [("forever", 0), ("fib", 90)] {
        let e = jit(name, &[I(arg)], long.with_deadline(soon())).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::TimeLimit, "{name}: {e:?}");
    }
    // 5·10⁷ steps: three slices and a bit.
    let n = [I(10_000_000)];
    let plain = jit("sum", &n, InterpConfig::default());
    let sliced = jit("sum", &n, InterpConfig::default().with_deadline(later));
    assert_eq!(plain, sliced);
    assert!(
        plain.as_ref().is_ok_and(|r| r.steps > 40_000_000),
        "{plain:?}"
    );
    let cfg = InterpConfig::default().with_step_limit(30_000_000);
    for cfg in [cfg, cfg.with_deadline(later)] {
        let e = jit("sum", &n, cfg).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::StepLimit { limit: 30_000_000 });
    }
}

#[test]
fn depth_limits_agree() {
    let m = source(PROGRAM);
    use Const::I64 as I;
    for limit in 0..8 {
        let cfg = InterpConfig::default().with_depth_limit(limit);
        for n in 0..8 {
            let _ = agree(&m, "fact", &[I(n)], &Theta::None, cfg);
            let _ = agree(&m, "even", &[I(n)], &Theta::None, cfg);
            let _ = agree(&m, "use_divmod", &[I(n), I(3)], &Theta::None, cfg);
        }
    }
    // The default limit (10 000 frames) is reached in compiled code as in the interpreter.
    let e = agree_plain(&m, "even", &[I(20_000)]).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::DepthLimit { limit: 10_000 });
    agree_plain(&m, "even", &[I(9_000)]).unwrap();
}

/// Leaf callees that cannot fail are translated in place (`sq`, `pick`); `twice` calls `sq`
/// and is compiled on its own, `loops` has a loop and is called.
const INLINING: &str = "
fn sq(x: f64) -> f64 { x * x }
fn pick(x: f64, b: bool) -> (f64, bool, i64) {
    if b { (x + 1.0, !b, 3) } else { (x - 1.0, b, -4) }
}
fn twice(x: f64) -> f64 { sq(x) + sq(x + 1.0) }
fn deep(x: f64, b: bool) -> f64 {
    let (y, c, n) = pick(twice(x), b);
    if c { y + (n as f64) } else { sq(y) }
}
fn loops(n: i64) -> i64 { let mut i = 0; while i < n { i += 1; } i }
fn calls_loop(n: i64) -> i64 { loops(n) + loops(n + 1) }
";

/// Inlined calls count steps, check the depth limit, report the deepest stack and stop at the
/// step limit as calls do.
#[test]
fn inlined_calls_agree_with_calls() {
    let m = source(INLINING);
    let deep = compile(Arc::clone(&m), m.get("deep").unwrap()).unwrap();
    assert_eq!(
        deep.unit.functions, 2,
        "deep and twice; pick and sq inlined"
    );
    use Const::{Bool as B, F64 as F, I64 as I};
    for (x, b) in [(1.5, true), (-2.0, false), (f64::NAN, true), (0.0, false)] {
        for limit in 0..60 {
            let cfg = InterpConfig::default().with_step_limit(limit);
            let _ = agree(&m, "deep", &[F(x), B(b)], &Theta::None, cfg);
        }
        for limit in 0..5 {
            let cfg = InterpConfig::default().with_depth_limit(limit);
            let _ = agree(&m, "deep", &[F(x), B(b)], &Theta::None, cfg);
            let _ = agree(&m, "twice", &[F(x)], &Theta::None, cfg);
        }
        let o = agree(
            &m,
            "deep",
            &[F(x), B(b)],
            &Theta::None,
            InterpConfig::default(),
        )
        .unwrap();
        assert_eq!(o.max_depth, 3);
    }
    for limit in 0..40 {
        let cfg = InterpConfig::default().with_step_limit(limit);
        let _ = agree(&m, "calls_loop", &[I(3)], &Theta::None, cfg);
    }
    // The limit reached at an inlined callee's entry is reported there, through the call.
    let cfg = InterpConfig::default().with_step_limit(3);
    let e = agree(&m, "twice", &[F(1.0)], &Theta::None, cfg).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::StepLimit { limit: 3 });
    let e = agree(
        &m,
        "twice",
        &[F(1.0)],
        &Theta::None,
        InterpConfig::default().with_depth_limit(1),
    )
    .unwrap_err();
    assert_eq!(
        (e.function.as_str(), e.backtrace.len()),
        ("twice", 0),
        "{e:?}"
    );
}

/// Branches to two blocks that only jump on (compiled as selects): in a loop, to a block with
/// other predecessors, and to a chain of blocks that only jump on (skipped too).
const DIAMONDS_IR: &str = r#"
function %pick(x: f64, n: i64) -> (f64, i64) {
block0(v0: f64, v1: i64):
    v2 = fconst 0.0
    v3 = iconst 0
    jump block1(v0, v3)
block1(v4: f64, v5: i64):
    v6 = ilt v5, v1
    brif v6, block2, block7(v4, v5)
block2:
    v7 = fgt v4, v2
    v8 = fneg v4
    brif v7, block3, block4
block3:
    jump block5(v8, v4)
block4:
    jump block5(v4, v8)
block5(v9: f64, v10: f64):
    v11 = fadd v9, v10
    v12 = iconst 1
    v13 = iadd v5, v12
    v14 = fle v11, v2
    brif v14, block8, block9
block8:
    jump block1(v11, v13)
block9:
    jump block1(v9, v13)
block7(v15: f64, v16: i64):
    v17 = feq v15, v2
    brif v17, block10, block11
block10:
    jump block12(v15)
block11:
    jump block12(v2)
block12(v18: f64):
    jump block13(v16, v18)
block13(v19: i64, v20: f64):
    jump block14(v20, v19)
block14(v21: f64, v22: i64):
    return v21, v22
}
"#;

#[test]
fn branches_between_jumps_agree() {
    let m = ir(DIAMONDS_IR);
    use Const::{F64 as F, I64 as I};
    for x in [1.5, -2.0, 0.0, f64::NAN] {
        for n in [0, 1, 3] {
            agree(
                &m,
                "pick",
                &[F(x), I(n)],
                &Theta::None,
                InterpConfig::default(),
            )
            .unwrap();
            for limit in 0..40 {
                let cfg = InterpConfig::default().with_step_limit(limit);
                let _ = agree(&m, "pick", &[F(x), I(n)], &Theta::None, cfg);
            }
        }
    }
}

#[test]
fn deep_recursion_never_overflows_a_small_stack() {
    let m = source(PROGRAM);
    let even = m.get("even").unwrap();
    let code = compile(Arc::clone(&m), even).unwrap();
    // 256 KiB of stack cannot hold a million frames: the call runs natively on a stack of its
    // own, mapped once per thread and kept for the next deep call.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let cfg = InterpConfig::default().with_depth_limit(1_000_000);
            let first = code.call_traced(&cfg, &[Const::I64(200_000)], None);
            let second = code.call_traced(&cfg, &[Const::I64(199_999)], None);
            (
                first,
                second,
                super::runtime::stack::mapped_on_this_thread(),
            )
        })
        .unwrap();
    let (first, second, mapped) = handle.join().unwrap();
    assert_eq!(first.unwrap().results, [Const::Bool(true)]);
    assert_eq!(second.unwrap().results, [Const::Bool(false)]);
    assert_eq!(mapped, 1, "one own stack, reused");
}

/// On a stack of its own, compiled code gives what the interpreter gives: the results, and the
/// depth limit at the same depth (`agree` also compares steps, θ reads and errors).
#[test]
fn calls_on_an_own_stack_agree_with_the_interpreter() {
    let m = source(PROGRAM);
    let handle = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(move || {
            let mut seen = Vec::new();
            for (n, limit) in [
                (0, 100_000),
                (5_000, 100_000),
                (99_998, 100_000),
                (100_000, 100_000),
            ] {
                let cfg = InterpConfig::default().with_depth_limit(limit);
                let r = agree(&m, "even", &[Const::I64(n)], &Theta::None, cfg);
                seen.push(r.map(|o| o.results).map_err(|e| e.kind));
            }
            (seen, super::runtime::stack::mapped_on_this_thread())
        })
        .unwrap();
    let (seen, mapped) = handle.join().unwrap();
    assert_eq!(seen[0], Ok(vec![Const::Bool(true)]));
    assert_eq!(seen[1], Ok(vec![Const::Bool(true)]));
    assert_eq!(seen[2], Ok(vec![Const::Bool(true)]));
    assert_eq!(
        seen[3],
        Err(RuntimeErrorKind::DepthLimit { limit: 100_000 })
    );
    assert!(mapped >= 1, "the calls ran natively on an own stack");
}

const THETA_IR: &str = r#"
function %inv(y: f64) -> (f64, i64) inverse(f) {
block0(v0: f64):
    v1 = theta [-1.0, 1.0] "noise"
    v2 = choice 3 "branch"
    v3 = fadd v0, v1
    v4 = fconst 0.0
    v5 = fgt v3, v4
    check v5, "y + noise > 0"
    v6 = iconst 0
    v7 = ieq v2, v6
    brif v7, block1(v3), block2
block1(v8: f64):
    v9 = call %helper(v8)
    return v9, v2
block2:
    v10 = theta int[-5..=5] "k"
    v11 = iconst 1
    v12 = ieq v2, v11
    brif v12, block3, block4
block3:
    v13 = fcvt_from_i64 v10
    return v13, v10
block4:
    fail "branch 2 is impossible"
}

function %helper(x: f64) -> f64 inverse(g) {
block0(v0: f64):
    v1 = theta nonzero "scale"
    v2 = theta bool "flip"
    v3 = fmul v0, v1
    v4 = fneg v3
    brif v2, block1(v4), block1(v3)
block1(v5: f64):
    return v5
}

function %f.pgf(x: f64, n: i64, b: bool) -> () generated_pgf(f) {
block0(v0: f64, v1: i64, v2: bool):
    record v0, "x"
    record v1, "n"
    record v2, "b"
    v3 = fconst 2.0
    v4 = fmul v0, v3
    record v4, "twice x"
    return
}
"#;

#[test]
fn theta_reads_checks_and_records_agree() {
    let m = ir(THETA_IR);
    use Const::{Bool as B, F64 as F, I64 as I};
    let tapes: Vec<Vec<Const>> = vec![
        vec![F(0.5), I(0), F(2.0), B(true)],
        vec![F(0.5), I(0), F(2.0), B(false)],
        vec![F(0.5), I(0), F(0.0), B(false)], // scale out of its domain
        vec![F(1.5), I(0), F(2.0), B(false)], // noise out of its domain
        vec![F(0.5), I(3), F(2.0), B(false)], // choice out of range
        vec![F(0.5), I(1), I(4)],             // branch 1
        vec![F(0.5), I(1), I(6)],             // k out of range
        vec![F(0.5), I(2), I(1)],             // fail
        vec![F(-0.5), I(0)],                  // check fails at y = 0.2
        vec![F(0.5), I(0), F(2.0)],           // tape runs out
        vec![F(0.5), F(0.0)],                 // wrong type for the choice
        vec![],
    ];
    for tape in &tapes {
        for y in [0.2, 3.0, f64::NAN] {
            let _ = agree(
                &m,
                "inv",
                &[F(y)],
                &Theta::Tape(tape.clone()),
                InterpConfig::default(),
            );
        }
    }
    let e = agree(&m, "inv", &[F(1.0)], &Theta::None, InterpConfig::default()).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::NoThetaSource);
    let e = agree(
        &m,
        "inv",
        &[F(0.2)],
        &Theta::Tape(tapes[8].clone()),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        RuntimeErrorKind::CheckFailed {
            reason: "y + noise > 0".into()
        }
    );
    let o = agree(
        &m,
        "f.pgf",
        &[F(1.5), I(-3), B(true)],
        &Theta::Recorder,
        InterpConfig::default(),
    )
    .unwrap();
    assert_eq!(o.theta_reads, 4);
    // A source that only reads refuses `record`: the same error in both.
    let e = agree(
        &m,
        "f.pgf",
        &[F(1.5), I(-3), B(true)],
        &Theta::Tape(vec![]),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::Theta(_)), "{e:?}");
}

/// A loop's PGF that records each iteration as a segment, called inside a segment of another
/// PGF that has its own frame.
const SEGMENT_IR: &str = r#"
function %g.pgf(x: i64) -> () generated_pgf(g) {
block0(v0: i64):
    v1 = iconst 0
    v2 = iconst 1
    segment open
    jump block1(v1)
block1(v3: i64):
    v4 = ilt v3, v0
    brif v4, block2, block3
block2:
    record v3, "i"
    v5 = iadd v3, v2
    record v5, "i + 1"
    segment cut
    jump block1(v5)
block3:
    segment close
    return
}
function %f.pgf(n: i64) -> () generated_pgf(f) {
block0(v0: i64):
    v1 = iconst 100
    segment open
    record v1, "first"
    segment cut
    call %g.pgf(v0)
    record v0, "n"
    segment cut
    segment cut
    segment close
    return
}
function %unopened.pgf(n: i64) -> () generated_pgf(unopened) {
block0(v0: i64):
    record v0, "n"
    segment cut
    return
}
"#;

/// `segment` puts a frame's segments in reverse order, each keeping its own, and frames nest:
/// the same tape from the interpreter, both tiers of compiled code, and in text round trip.
#[test]
fn segments_reverse_a_frame_and_nest() {
    let m = ir(SEGMENT_IR);
    let text = |m: &Module| crate::ir::write_module(m, &crate::ir::WriteOptions::default());
    assert_eq!(text(&m), text(&ir(&text(&m))));
    use Const::I64 as I;
    let tape = |name: &str, n: i64| -> Vec<Const> {
        let f = m.get(name).unwrap_or_else(|| panic!("no {name}"));
        let _ = agree(&m, name, &[I(n)], &Theta::Recorder, InterpConfig::default());
        let run = run_with(
            Engine::Jit,
            &m,
            f,
            &[I(n)],
            &Theta::Recorder,
            InterpConfig::default(),
        );
        run.result.unwrap_or_else(|e| panic!("{e}"));
        run.theta
    };
    assert_eq!(tape("g.pgf", 0), vec![]);
    assert_eq!(tape("g.pgf", 3), [2, 3, 1, 2, 0, 1].map(I).to_vec());
    assert_eq!(tape("f.pgf", 3), [2, 3, 1, 2, 0, 1, 3, 100].map(I).to_vec());
    assert_eq!(tape("f.pgf", 0), [0, 100].map(I).to_vec());
    // A cut with no open frame is a malformed PGF: an error in both engines, never a panic.
    let e = agree(
        &m,
        "unopened.pgf",
        &[I(1)],
        &Theta::Recorder,
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::Theta(_)), "{e:?}");
    // A source that only reads refuses `segment` as it refuses `record`.
    let e = agree(
        &m,
        "g.pgf",
        &[I(0)],
        &Theta::Tape(vec![]),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::Theta(_)), "{e:?}");
}

/// θ reads whose domain the code narrows at run time.
const WITHIN_IR: &str = r#"
function %f(a: f64, n: i64) -> (f64, i64) {
block0(v0: f64, v1: i64):
    return v0, v1
}
function %f.inv(y: f64, m: i64) -> (f64, i64) generated_inverse(f) {
block0(v0: f64, v1: i64):
    v2 = fconst -inf
    v3 = theta real within v2, v0 "at most y"
    v4 = iconst 10
    v5 = theta int within v1, v4 "between m and 10"
    v6 = fadd v3, v0
    return v6, v5
}
"#;

/// A narrowed read takes values inside its bounds (NaN too, for reals, even where no number is
/// left), refuses others as out of domain, and an empty integer range is a domain error before
/// anything is read: the same in the interpreter and both tiers of compiled code.
#[test]
fn narrowed_theta_reads_agree() {
    let m = ir(WITHIN_IR);
    use Const::{F64 as F, I64 as I};
    let ys: [[Const; 2]; 4] = [
        [F(2.0), I(3)],
        [F(-1.0), I(10)],
        [F(f64::NAN), I(0)],
        [F(5.0), I(11)],
    ];
    let tapes: Vec<Vec<Const>> = vec![
        vec![F(1.5), I(5)],
        vec![F(2.0), I(10)],
        vec![F(2.5), I(5)],
        vec![F(f64::NAN), I(3)],
        vec![F(-1e300), I(2)],
        vec![F(f64::NEG_INFINITY), I(11)],
        vec![F(0.0)],
        vec![I(1), I(5)],
    ];
    for y in &ys {
        for tape in &tapes {
            let _ = agree(
                &m,
                "f.inv",
                y,
                &Theta::Tape(tape.clone()),
                InterpConfig::default(),
            );
        }
    }
    // Inside: accepted.
    let o = agree(
        &m,
        "f.inv",
        &[F(2.0), I(3)],
        &Theta::Tape(vec![F(1.5), I(5)]),
        InterpConfig::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.results, [F(3.5), I(5)]);
    // A NaN is in a narrowed real domain.
    assert!(agree(
        &m,
        "f.inv",
        &[F(2.0), I(3)],
        &Theta::Tape(vec![F(f64::NAN), I(5)]),
        InterpConfig::default()
    )
    .is_ok());
    // Above y: out of the narrowed domain.
    let e = agree(
        &m,
        "f.inv",
        &[F(2.0), I(3)],
        &Theta::Tape(vec![F(2.5), I(5)]),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::Theta(_)), "{e:?}");
    // m = 11 > 10: nothing is left for the second read.
    let e = agree(
        &m,
        "f.inv",
        &[F(2.0), I(11)],
        &Theta::Tape(vec![F(1.0), I(11)]),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(
        matches!(e.kind, RuntimeErrorKind::CheckFailed { .. }),
        "{e:?}"
    );
    // A NaN bound leaves no number, but NaN is still a value of a narrowed real.
    let e = agree(
        &m,
        "f.inv",
        &[F(f64::NAN), I(0)],
        &Theta::Tape(vec![F(1.0), I(1)]),
        InterpConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::Theta(_)), "{e:?}");
    assert!(agree(
        &m,
        "f.inv",
        &[F(f64::NAN), I(0)],
        &Theta::Tape(vec![F(f64::NAN), I(1)]),
        InterpConfig::default()
    )
    .is_ok());
}

/// One read from every kind of domain, and a choice, in a row.
const DOMAINS_IR: &str = r#"
function %reads(y: f64) -> (f64, f64, f64, i64, i64, bool, i64) inverse(f) {
block0(v0: f64):
    v1 = theta real "real"
    v2 = theta nonzero "nonzero"
    v3 = theta [-1.5, 2.0] "interval"
    v4 = theta int "int"
    v5 = theta int[-3..=7] "range"
    v6 = theta bool "bool"
    v7 = choice 3 "choice"
    v8 = fadd v0, v1
    return v8, v2, v3, v4, v5, v6, v7
}
"#;

/// Compiled code reads a `TapeSource` inline: on every domain's edges, with wrong types, short
/// tapes and a tape that does not start at its first value, it gives the interpreter's results,
/// errors (kind, function, span), θ read count and tape position.
#[test]
fn inline_tape_reads_agree_on_every_domain_edge() {
    use Const::{Bool as B, F64 as F, I64 as I};
    let m = ir(DOMAINS_IR);
    let f = m.get("reads").unwrap();
    let good = [F(1.0), F(2.0), F(0.5), I(4), I(7), B(true), I(2)];
    // Replacements for each position: edges inside and outside its domain, other types.
    let edges: [Vec<Const>; 7] = [
        vec![F(f64::NAN), F(-0.0), F(f64::NEG_INFINITY), I(1), B(false)],
        vec![
            F(0.0),
            F(-0.0),
            F(f64::NAN),
            F(f64::INFINITY),
            F(-1e-310),
            I(1),
        ],
        vec![
            F(-1.5),
            F(2.0),
            F(-1.5000000000000002),
            F(2.0000000000000004),
            F(f64::NAN),
            F(-0.0),
            I(0),
        ],
        vec![I(i64::MIN), I(i64::MAX), F(4.0), B(true)],
        vec![I(-3), I(7), I(-4), I(8), I(i64::MIN), I(i64::MAX), F(1.0)],
        vec![B(false), I(1), F(1.0)],
        vec![
            I(0),
            I(2),
            I(3),
            I(-1),
            I(i64::MIN),
            I(u32::MAX as i64 + 1),
            F(0.0),
            B(true),
        ],
    ];
    let mut tapes: Vec<Vec<Const>> = vec![good.to_vec()];
    for (i, alternatives) in edges.iter().enumerate() {
        for &a in alternatives {
            let mut t = good.to_vec();
            t[i] = a;
            tapes.push(t);
        }
    }
    for n in 0..good.len() {
        tapes.push(good[..n].to_vec());
    }
    let compiled = compile(Arc::clone(&m), f).unwrap();
    let interp = crate::interp::Interpreter::new(&m);
    for tape in &tapes {
        for skip in [0, 1, 3] {
            // `skip` values already read before the call: both engines start there.
            let mut values = vec![I(9); skip];
            values.extend(tape.iter().copied());
            let start = |values: &[Const]| {
                let mut t = TapeSource::new(values.to_vec());
                for _ in 0..skip {
                    let _ = crate::interp::ThetaSource::choice(&mut t, 10, &address());
                }
                t
            };
            let (mut a, mut b) = (start(&values), start(&values));
            let want = interp.call_traced(f, &[F(0.5)], Some(&mut a));
            let got = compiled.call_traced(&InterpConfig::default(), &[F(0.5)], Some(&mut b));
            assert_eq!(want, got, "tape {tape:?} after {skip}");
            assert_eq!(a.pos(), b.pos(), "tape {tape:?} after {skip}");
            // The fast path of `call_into` too.
            let mut c = start(&values);
            let mut out = [F(0.0), F(0.0), F(0.0), I(0), I(0), B(false), I(0)];
            let into =
                compiled.call_into(&InterpConfig::default(), &[F(0.5)], Some(&mut c), &mut out);
            match &want {
                Ok(o) => assert_eq!(o.results, out, "tape {tape:?}"),
                Err(e) => assert_eq!(Err(e), into.as_ref(), "tape {tape:?}"),
            }
            assert_eq!(a.pos(), c.pos(), "tape {tape:?} after {skip}");
        }
    }
}

fn address() -> crate::interp::ThetaAddress<'static> {
    crate::interp::ThetaAddress {
        function: "test",
        inst: <crate::ir::Inst as cranelift_entity::EntityRef>::new(0),
        role: "skip",
        span: Span::default(),
        index: 0,
    }
}

#[test]
fn a_panicking_theta_source_panics_through_compiled_code() {
    struct Boom;
    impl ThetaSource for Boom {
        fn theta(
            &mut self,
            _: crate::ir::Domain,
            _: &crate::interp::ThetaAddress<'_>,
        ) -> Result<Const, crate::interp::ThetaError> {
            panic!("boom")
        }
        fn choice(
            &mut self,
            _: u32,
            _: &crate::interp::ThetaAddress<'_>,
        ) -> Result<u32, crate::interp::ThetaError> {
            panic!("boom")
        }
    }
    let m = ir(THETA_IR);
    let code = compile(Arc::clone(&m), m.get("inv").unwrap()).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        code.call_with_theta(&[Const::F64(1.0)], &mut Boom)
    }));
    let payload = r.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    // The code is still usable.
    let mut tape = TapeSource::new(vec![Const::F64(0.5), Const::I64(1), Const::I64(2)]);
    assert_eq!(
        code.call_with_theta(&[Const::F64(1.0)], &mut tape).unwrap(),
        [Const::F64(2.0), Const::I64(2)]
    );
}

#[test]
fn bad_arguments_agree() {
    let m = source(PROGRAM);
    let e = agree_plain(&m, "sum", &[Const::F64(1.0)]).unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::BadArguments { .. }));
    let e = agree_plain(&m, "sum", &[]).unwrap_err();
    assert!(matches!(e.kind, RuntimeErrorKind::BadArguments { .. }));
}

#[test]
fn invalid_ir_is_an_error_not_a_panic() {
    let mut f = Function::new(
        "f",
        FuncKind::Fn,
        Signature {
            params: vec![],
            returns: vec![Type::F64],
        },
    );
    f.create_entry();
    let mut m = Module::new();
    let id = m.add(f).unwrap();
    let e = compile(Arc::new(m), id).unwrap_err();
    assert!(matches!(e, JitError::Invalid { .. }), "{e}");
}

#[test]
fn call_into_writes_results_without_allocating() {
    let m = source(PROGRAM);
    let code = compile(Arc::clone(&m), m.get("mixed").unwrap()).unwrap();
    let mut out = [Const::F64(0.0), Const::I64(0), Const::Bool(false)];
    code.call_into(
        &InterpConfig::default(),
        &[Const::F64(1.0), Const::I64(2), Const::Bool(true)],
        None,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [Const::F64(4.0), Const::I64(3), Const::Bool(false)]);
}

/// Compiled code reads arguments and writes results as `Const`s itself: results of every type,
/// through the trampoline (a root its unit calls) and without it, and wrong arguments or result
/// buffers rejected before anything runs.
#[test]
fn entries_read_and_write_consts_of_every_type() {
    let m = source(
        "
fn down(n: i64, x: f64) -> (f64, i64, bool) {
    if n <= 0 { (x, n, x > 1.0) } else { let (a, b, c) = down(n - 1, x * 2.0); (a + 1.0, b + n, !c) }
}
fn flip(b: bool, x: f64) -> bool { if x > 0.0 { !b } else { b } }
",
    );
    use Const::{Bool as B, F64 as F, I64 as I};
    for n in [-1, 0, 1, 4] {
        for x in [0.25, -3.0, f64::NAN, 1.5] {
            agree_plain(&m, "down", &[I(n), F(x)]).unwrap();
        }
    }
    for b in [true, false] {
        for x in [1.0, -1.0, f64::NAN] {
            agree_plain(&m, "flip", &[B(b), F(x)]).unwrap();
        }
    }
    let code = compile(Arc::clone(&m), m.get("down").unwrap()).unwrap();
    let cfg = InterpConfig::default();
    let mut out = [F(0.0), I(0), B(false)];
    code.call_into(&cfg, &[I(2), F(0.75)], None, &mut out)
        .unwrap();
    assert_eq!(out, [F(5.0), I(3), B(true)]);
    // Each argument position with the wrong type, and a buffer of the wrong length.
    for args in [[F(2.0), F(0.75)], [I(2), I(0)], [I(2), B(true)]] {
        let e = code.call_into(&cfg, &args, None, &mut out).unwrap_err();
        assert!(
            matches!(e.kind, RuntimeErrorKind::BadArguments { .. }),
            "{e:?}"
        );
    }
    let e = code
        .call_into(&cfg, &[I(2), F(0.75)], None, &mut out[..2])
        .unwrap_err();
    assert!(
        matches!(e.kind, RuntimeErrorKind::BadArguments { .. }),
        "{e:?}"
    );
}

#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<CompiledFunction>();
    check::<CodeCache>();
    check::<Runner>();
}

// ---------------------------------------------------------------------------------------------
// The cache

const CACHE_PROGRAM: &str = "
fn double(x: f64) -> f64 { 2.0 * x }
fn nested(a: f64, b: f64) -> f64 { double(a + b) }
fn other(x: f64) -> f64 { x - 1.0 }
";

fn layer(layer: u64, version: u64) -> LayerVersion {
    LayerVersion { layer, version }
}

#[test]
fn forward_lookups_hit_after_the_first() {
    let cache = CodeCache::new();
    let m = source(CACHE_PROGRAM);
    let nested = m.get("nested").unwrap();
    let a = cache.forward(&m, nested).unwrap();
    let b = cache.forward(&m, nested).unwrap();
    assert!(a.same_code(&b));
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.forward_entries), (1, 1, 1));
    assert_eq!(
        a.call(&[Const::F64(1.0), Const::F64(2.0)]).unwrap(),
        [Const::F64(6.0)]
    );
}

#[test]
fn inverse_entries_never_touch_forward_ones() {
    let cache = CodeCache::new();
    let m = source(CACHE_PROGRAM);
    for name in ["double", "nested", "other"] {
        cache.forward(&m, m.get(name).unwrap()).unwrap();
    }
    let snapshot = cache.forward_snapshot();
    let key = InverseKey::new([1, 0]);
    let deps = InverseDeps {
        functions: vec!["nested".into(), "double".into()],
        layers: vec![layer(1, 0), layer(2, 3)],
    };
    let inv = cache
        .inverse(&key, &m, m.get("nested").unwrap(), &deps)
        .unwrap();
    assert!(!inv.same_code(&cache.forward(&m, m.get("nested").unwrap()).unwrap()));
    assert_eq!(cache.forward_snapshot(), snapshot);
    // Editing a layer drops only the inverse entries that consulted it.
    assert_eq!(cache.edit_layer(7), 0);
    assert_eq!(cache.edit_layer(2), 1);
    assert_eq!(cache.forward_snapshot(), snapshot);
    assert_eq!(cache.stats().inverse_entries, 0);
}

#[test]
fn two_keys_never_share_entries() {
    let cache = CodeCache::new();
    let m = source(CACHE_PROGRAM);
    let f = m.get("double").unwrap();
    let deps = InverseDeps::default();
    let a = cache.inverse(&InverseKey::new([1]), &m, f, &deps).unwrap();
    let b = cache.inverse(&InverseKey::new([2]), &m, f, &deps).unwrap();
    assert!(!a.same_code(&b));
    let a2 = cache.inverse(&InverseKey::new([1]), &m, f, &deps).unwrap();
    assert!(a.same_code(&a2));
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.inverse_entries), (1, 2, 2));
}

#[test]
fn redefining_a_function_drops_exactly_its_dependants() {
    let cache = CodeCache::new();
    let m = source(CACHE_PROGRAM);
    for name in ["double", "nested", "other"] {
        cache.forward(&m, m.get(name).unwrap()).unwrap();
    }
    let key = InverseKey::new([9]);
    let deps_nested = InverseDeps {
        functions: vec!["nested".into(), "double".into()],
        layers: vec![layer(1, 0)],
    };
    let deps_other = InverseDeps {
        functions: vec!["other".into()],
        layers: vec![layer(1, 0)],
    };
    cache
        .inverse(&key, &m, m.get("nested").unwrap(), &deps_nested)
        .unwrap();
    cache
        .inverse(&key, &m, m.get("other").unwrap(), &deps_other)
        .unwrap();
    let world = cache.world();
    // `double` is in the forward entries of double and nested, and nested's inverse.
    assert_eq!(cache.redefine("double"), 3);
    assert!(cache.world() > world);
    let left: Vec<(String, Owner)> = cache
        .entries()
        .into_iter()
        .map(|e| (e.function, e.owner))
        .collect();
    assert_eq!(
        left,
        [
            ("other".to_string(), Owner::Forward),
            ("other".to_string(), Owner::Inverse(key.clone())),
        ]
    );
}

#[test]
fn a_changed_module_is_a_redefinition() {
    let cache = CodeCache::new();
    let m1 = source(CACHE_PROGRAM);
    let m2 = source(&CACHE_PROGRAM.replace("2.0 * x", "3.0 * x"));
    let nested = m1.get("nested").unwrap();
    cache.forward(&m1, m1.get("other").unwrap()).unwrap();
    let a = cache.forward(&m1, nested).unwrap();
    let b = cache.forward(&m2, nested).unwrap();
    assert!(!a.same_code(&b));
    let args = [Const::F64(1.0), Const::F64(1.0)];
    assert_eq!(a.call(&args).unwrap(), [Const::F64(4.0)]);
    assert_eq!(b.call(&args).unwrap(), [Const::F64(6.0)]);
    // `other` does not depend on `double`: still cached.
    assert_eq!(cache.stats().forward_entries, 2);
    assert_eq!(cache.stats().misses, 3);
}

#[test]
fn the_cache_serves_several_threads_at_once() {
    let cache = CodeCache::new();
    let m = source(CACHE_PROGRAM);
    let names = ["double", "nested", "other"];
    std::thread::scope(|s| {
        for t in 0..4 {
            let (cache, m) = (&cache, &m);
            s.spawn(move || {
                for i in 0..200 {
                    let name = names[(i + t) % names.len()];
                    let id = m.get(name).unwrap();
                    let code = cache.forward(m, id).unwrap();
                    let args: Vec<Const> = m.functions[id]
                        .sig
                        .params
                        .iter()
                        .map(|_| Const::F64(1.5))
                        .collect();
                    let want = crate::interp::Interpreter::new(m).call(id, &args).unwrap();
                    assert_eq!(code.call(&args).unwrap(), want);
                    if i % 17 == t {
                        cache.redefine(name);
                    }
                    if i % 23 == t {
                        let key = InverseKey::new([t as u64]);
                        cache.inverse(&key, m, id, &InverseDeps::default()).unwrap();
                        cache.edit_layer(0);
                    }
                }
            });
        }
    });
    let s = cache.stats();
    assert!(s.hits > 0 && s.misses > 0, "{s:?}");
}

/// A unit compiled quickly is recompiled after enough calls, and every call before and after
/// gives the interpreter's answer; handles share the recompiled code.
#[test]
fn quick_code_tiers_up_after_enough_calls() {
    let m = ir(THETA_IR);
    let f = m.get("inv").unwrap();
    let code = compile_tier(Arc::clone(&m), f, Some(Tier::Quick)).unwrap();
    let other = code.clone();
    let tapes = [
        vec![
            Const::F64(0.5),
            Const::I64(0),
            Const::F64(2.0),
            Const::Bool(true),
        ],
        vec![Const::F64(0.5), Const::I64(1), Const::I64(4)],
        vec![Const::F64(-0.5), Const::I64(0)],
    ];
    let interp = crate::interp::Interpreter::new(&m);
    let tier_up = code
        .unit
        .tier_up
        .as_ref()
        .expect("a quick unit can tier up");
    for i in 0..(super::compile::TIER_UP_CALLS as usize + 50) {
        let tape = &tapes[i % tapes.len()];
        let y = [Const::F64(0.25 * i as f64)];
        let want = interp.call_traced(f, &y, Some(&mut TapeSource::new(tape.clone())));
        let got = code.call_traced(
            &InterpConfig::default(),
            &y,
            Some(&mut TapeSource::new(tape.clone())),
        );
        assert_eq!(want, got, "call {i}");
    }
    assert!(
        matches!(tier_up.optimized.get(), Some(Some(_))),
        "recompiled"
    );
    assert!(other.tier_up_now());
    let optimized = compile_tier(Arc::clone(&m), f, Some(Tier::Optimized)).unwrap();
    assert!(optimized.unit.tier_up.is_none());
    assert!(!optimized.tier_up_now());
}

/// A function with more blocks than the JIT compiles is refused with [`JitError::TooLarge`]
/// before any compilation, and a [`Runner`] asked for native code runs it in the interpreter,
/// with the same result.
#[test]
fn a_function_of_too_many_blocks_runs_in_the_interpreter() {
    let mut text = String::from("function %long(x: i64) -> i64 {\nblock0(v0: i64):\n");
    let blocks = MAX_JIT_BLOCKS + 1;
    for b in 0..blocks - 1 {
        text.push_str(&format!(
            "    v{} = iconst 1\n    v{} = iadd v{}, v{}\n    jump block{}(v{})\nblock{}(v{}: i64):\n",
            3 * b + 1,
            3 * b + 2,
            if b == 0 { 0 } else { 3 * b },
            3 * b + 1,
            b + 1,
            3 * b + 2,
            b + 1,
            3 * b + 3,
        ));
    }
    text.push_str(&format!("    return v{}\n}}\n", 3 * (blocks - 1)));
    let m = ir(&text);
    let id = m.get("long").expect("long");
    let e = compile(Arc::clone(&m), id)
        .map(|_| ())
        .expect_err("too large");
    assert!(
        matches!(e, JitError::TooLarge { blocks: b, .. } if b == blocks),
        "{e}"
    );
    assert!(e.to_string().contains("the interpreter runs it"), "{e}");
    let args = [Const::I64(5)];
    let native = Runner::new(Arc::clone(&m), Engine::Jit).call(id, &args);
    let interp = Runner::new(Arc::clone(&m), Engine::Interp).call(id, &args);
    assert_eq!(native, Ok(vec![Const::I64(5 + blocks as i64 - 1)]));
    assert_eq!(native, interp);
}

/// `%name(x: i64) -> i64`: x plus 1, `adds` times, in one block, then (with `callee`) that
/// function of the sum.
fn chain_of_adds(name: &str, adds: usize, callee: Option<&str>) -> String {
    let mut text =
        format!("function %{name}(x: i64) -> i64 {{\nblock0(v0: i64):\n    v1 = iconst 1\n");
    for k in 0..adds {
        let from = if k == 0 { 0 } else { k + 1 };
        text.push_str(&format!("    v{} = iadd v{from}, v1\n", k + 2));
    }
    let sum = adds + 1;
    match callee {
        Some(callee) => text.push_str(&format!(
            "    v{} = call %{callee}(v{sum})\n    return v{}\n}}\n",
            sum + 1,
            sum + 1
        )),
        None => text.push_str(&format!("    return v{sum}\n}}\n")),
    }
    text
}

/// A function of few blocks but more instructions than the JIT compiles is refused too, and
/// runs in the interpreter with the same result.
#[test]
fn a_function_of_too_many_instructions_runs_in_the_interpreter() {
    let adds = MAX_JIT_INSTS;
    let m = ir(&chain_of_adds("long", adds, None));
    let id = m.get("long").expect("long");
    let e = compile(Arc::clone(&m), id)
        .map(|_| ())
        .expect_err("too large");
    assert!(
        matches!(e, JitError::TooLarge { blocks: 1, instructions, .. } if instructions == adds + 2),
        "{e}"
    );
    let args = [Const::I64(5)];
    let native = Runner::new(Arc::clone(&m), Engine::Jit).call(id, &args);
    let interp = Runner::new(Arc::clone(&m), Engine::Interp).call(id, &args);
    assert_eq!(native, Ok(vec![Const::I64(5 + adds as i64)]));
    assert_eq!(native, interp);
}

/// The instruction limit counts the functions a function calls: two functions of 60% of the
/// limit each compile alone, and together (one calling the other) run in the interpreter.
#[test]
fn the_instruction_limit_counts_the_callees() {
    let adds = MAX_JIT_INSTS * 3 / 5;
    let m = ir(&format!(
        "{}\n{}",
        chain_of_adds("inner", adds, None),
        chain_of_adds("outer", adds, Some("inner"))
    ));
    let (inner, outer) = (
        m.get("inner").expect("inner"),
        m.get("outer").expect("outer"),
    );
    assert!(compile(Arc::clone(&m), inner).is_ok());
    let e = compile(Arc::clone(&m), outer)
        .map(|_| ())
        .expect_err("too large with its callee");
    assert!(
        matches!(&e, JitError::TooLarge { function, instructions, .. }
            if function == "outer" && *instructions == 2 * adds + 5),
        "{e}"
    );
    let args = [Const::I64(1)];
    let native = Runner::new(Arc::clone(&m), Engine::Jit).call(outer, &args);
    assert_eq!(native, Ok(vec![Const::I64(1 + 2 * adds as i64)]));
}
