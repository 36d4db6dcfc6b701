use super::*;
use crate::ir::{FuncKind, Opcode, Signature};
use crate::span::SourceFile;
use proptest::prelude::*;
use Const::{Bool as B, F64 as F, I64 as I};

fn sp() -> Span {
    Span::default()
}

fn sig(params: &[Type], returns: &[Type]) -> Signature {
    Signature {
        params: params.to_vec(),
        returns: returns.to_vec(),
    }
}

/// A function with its entry block and the entry's parameters.
fn func(name: &str, params: &[Type], returns: &[Type]) -> (Function, Block, Vec<Value>) {
    let mut f = Function::new(name, FuncKind::Fn, sig(params, returns));
    let entry = f.create_entry();
    let ps = f.blocks[entry].params.clone();
    (f, entry, ps)
}

fn brif(
    f: &mut Function,
    b: Block,
    cond: Value,
    then: (Block, Vec<Value>),
    els: (Block, Vec<Value>),
) {
    f.ins_void(
        b,
        InstKind::Brif {
            cond,
            then_dest: Box::new(BlockCall::new(then.0, then.1)),
            else_dest: Box::new(BlockCall::new(els.0, els.1)),
        },
        sp(),
    );
}

fn single(f: Function) -> (Module, FuncId) {
    let mut m = Module::new();
    let id = m.add(f).unwrap();
    (m, id)
}

fn run(m: &Module, id: FuncId, args: &[Const]) -> Result<Vec<Const>, RuntimeError> {
    Interpreter::new(m).call(id, args)
}

// ---------------------------------------------------------------------------------------------
// Programs

#[test]
fn straight_line() {
    // f(x, y) = (x * y + 1.0, x < y)
    let (mut f, b, p) = func("f", &[Type::F64, Type::F64], &[Type::F64, Type::Bool]);
    let m = f.ins_prim(b, Opcode::Fmul, vec![p[0], p[1]], sp());
    let one = f.ins_const(b, F(1.0), sp());
    let s = f.ins_prim(b, Opcode::Fadd, vec![m, one], sp());
    let lt = f.ins_prim(b, Opcode::Flt, vec![p[0], p[1]], sp());
    f.ins_return(b, vec![s, lt], sp());
    let (module, id) = single(f);
    let out = Interpreter::new(&module)
        .call_traced(id, &[F(2.0), F(3.5)], None)
        .unwrap();
    assert_eq!(out.results, vec![F(8.0), B(true)]);
    assert_eq!(out.steps, 5);
    assert_eq!(out.theta_reads, 0);
    assert_eq!(out.max_depth, 1);
}

/// `sum(n) = 0 + 1 + ... + (n - 1)`, a loop with block parameters `(i, s)`.
fn sum_function() -> Function {
    let (mut f, b0, p) = func("sum", &[Type::I64], &[Type::I64]);
    let n = p[0];
    let head = f.create_block();
    let i = f.append_block_param(head, Type::I64);
    let s = f.append_block_param(head, Type::I64);
    let body = f.create_block();
    let exit = f.create_block();
    let r = f.append_block_param(exit, Type::I64);

    let zero = f.ins_const(b0, I(0), sp());
    f.ins_jump(b0, head, vec![zero, zero], sp());

    let lt = f.ins_prim(head, Opcode::Ilt, vec![i, n], sp());
    brif(&mut f, head, lt, (body, vec![]), (exit, vec![s]));

    let s2 = f.ins_prim(body, Opcode::Iadd, vec![s, i], sp());
    let one = f.ins_const(body, I(1), sp());
    let i2 = f.ins_prim(body, Opcode::Iadd, vec![i, one], sp());
    f.ins_jump(body, head, vec![i2, s2], sp());

    f.ins_return(exit, vec![r], sp());
    f
}

#[test]
fn counting_loop_with_block_params() {
    let (module, id) = single(sum_function());
    for n in [0, 1, 2, 10, 1000] {
        assert_eq!(
            run(&module, id, &[I(n)]).unwrap(),
            vec![I(n * (n - 1) / 2)],
            "n = {n}"
        );
    }
    assert_eq!(run(&module, id, &[I(-5)]).unwrap(), vec![I(0)]);
    // 2 in the entry, 2 per test, 4 per iteration, 1 return.
    let out = Interpreter::new(&module)
        .call_traced(id, &[I(10)], None)
        .unwrap();
    assert_eq!(out.steps, 2 + 11 * 2 + 10 * 4 + 1);
}

#[test]
fn branch_arguments_are_read_before_parameters_are_written() {
    // swap(a, b, n): n times (a, b) = (b, a), passed as jump block1(b, a, k-1).
    let (mut f, b0, p) = func(
        "swap",
        &[Type::I64, Type::I64, Type::I64],
        &[Type::I64, Type::I64],
    );
    let head = f.create_block();
    let a = f.append_block_param(head, Type::I64);
    let b = f.append_block_param(head, Type::I64);
    let k = f.append_block_param(head, Type::I64);
    let body = f.create_block();
    let exit = f.create_block();
    f.ins_jump(b0, head, vec![p[0], p[1], p[2]], sp());
    let zero = f.ins_const(head, I(0), sp());
    let more = f.ins_prim(head, Opcode::Igt, vec![k, zero], sp());
    brif(&mut f, head, more, (body, vec![]), (exit, vec![]));
    let one = f.ins_const(body, I(1), sp());
    let k2 = f.ins_prim(body, Opcode::Isub, vec![k, one], sp());
    f.ins_jump(body, head, vec![b, a, k2], sp());
    f.ins_return(exit, vec![a, b], sp());
    let (module, id) = single(f);
    assert_eq!(
        run(&module, id, &[I(1), I(2), I(3)]).unwrap(),
        vec![I(2), I(1)]
    );
    assert_eq!(
        run(&module, id, &[I(1), I(2), I(4)]).unwrap(),
        vec![I(1), I(2)]
    );
}

#[test]
fn call_returning_two_values() {
    let mut module = Module::new();
    // divmod(a, b) = (a / b, a % b)
    let (mut d, b, p) = func("divmod", &[Type::I64, Type::I64], &[Type::I64, Type::I64]);
    let q = d.ins_prim(b, Opcode::Idiv, vec![p[0], p[1]], sp());
    let r = d.ins_prim(b, Opcode::Irem, vec![p[0], p[1]], sp());
    d.ins_return(b, vec![q, r], sp());
    let divmod = module.add(d).unwrap();
    // f(a, b) = let (q, r) = divmod(a, b); (q * b + r, r)
    let (mut f, b, p) = func("f", &[Type::I64, Type::I64], &[Type::I64, Type::I64]);
    let qr = f.ins_call(b, divmod, vec![p[0], p[1]], &[Type::I64, Type::I64], sp());
    let qb = f.ins_prim(b, Opcode::Imul, vec![qr[0], p[1]], sp());
    let back = f.ins_prim(b, Opcode::Iadd, vec![qb, qr[1]], sp());
    f.ins_return(b, vec![back, qr[1]], sp());
    let fid = module.add(f).unwrap();

    assert_eq!(
        run(&module, divmod, &[I(17), I(5)]).unwrap(),
        vec![I(3), I(2)]
    );
    assert_eq!(
        run(&module, divmod, &[I(-17), I(5)]).unwrap(),
        vec![I(-3), I(-2)]
    );
    let out = Interpreter::new(&module)
        .call_traced(fid, &[I(-17), I(5)], None)
        .unwrap();
    assert_eq!(out.results, vec![I(-17), I(-2)]);
    assert_eq!(out.max_depth, 2);
    assert_eq!(out.steps, 4 + 3);
}

/// `fact(n) = if n <= 1 { 1 } else { n * fact(n - 1) }`, function 0 of its module.
fn factorial_module() -> (Module, FuncId) {
    let mut module = Module::new();
    let id = module.functions.next_key();
    let (mut f, b0, p) = func("fact", &[Type::I64], &[Type::I64]);
    let n = p[0];
    let base = f.create_block();
    let rec = f.create_block();
    let one = f.ins_const(b0, I(1), sp());
    let small = f.ins_prim(b0, Opcode::Ile, vec![n, one], sp());
    brif(&mut f, b0, small, (base, vec![]), (rec, vec![]));
    f.ins_return(base, vec![one], sp());
    let m = f.ins_prim(rec, Opcode::Isub, vec![n, one], sp());
    let r = f.ins_call(rec, id, vec![m], &[Type::I64], sp());
    let prod = f.ins_prim(rec, Opcode::Imul, vec![n, r[0]], sp());
    f.ins_return(rec, vec![prod], sp());
    assert_eq!(module.add(f), Ok(id));
    (module, id)
}

#[test]
fn recursion() {
    let (module, id) = factorial_module();
    let mut want = 1i64;
    for n in 1..=20 {
        want *= n;
        assert_eq!(run(&module, id, &[I(n)]).unwrap(), vec![I(want)], "{n}!");
    }
    assert_eq!(run(&module, id, &[I(0)]).unwrap(), vec![I(1)]);
    // 21! wraps.
    assert_eq!(
        run(&module, id, &[I(21)]).unwrap(),
        vec![I(want.wrapping_mul(21))]
    );
    let out = Interpreter::new(&module)
        .call_traced(id, &[I(5)], None)
        .unwrap();
    assert_eq!(out.max_depth, 5);
}

/// `depth(n) = if n == 0 { 0 } else { depth(n - 1) + 1 }`: not a tail call.
fn depth_module() -> (Module, FuncId) {
    let mut module = Module::new();
    let id = module.functions.next_key();
    let (mut f, b0, p) = func("depth", &[Type::I64], &[Type::I64]);
    let n = p[0];
    let base = f.create_block();
    let rec = f.create_block();
    let zero = f.ins_const(b0, I(0), Span::new(1, 2));
    let done = f.ins_prim(b0, Opcode::Ieq, vec![n, zero], sp());
    brif(&mut f, b0, done, (base, vec![]), (rec, vec![]));
    f.ins_return(base, vec![zero], sp());
    let one = f.ins_const(rec, I(1), sp());
    let m = f.ins_prim(rec, Opcode::Isub, vec![n, one], sp());
    let r = f.ins_call(rec, id, vec![m], &[Type::I64], Span::new(40, 52));
    let s = f.ins_prim(rec, Opcode::Iadd, vec![r[0], one], sp());
    f.ins_return(rec, vec![s], sp());
    assert_eq!(module.add(f), Ok(id));
    (module, id)
}

#[test]
fn deep_recursion_hits_the_depth_limit_without_overflowing_the_stack() {
    let (module, id) = depth_module();
    let err = run(&module, id, &[I(100_000)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::DepthLimit { limit: 10_000 });
    assert_eq!(err.function, "depth");
    assert_eq!(err.span, Span::new(40, 52));
    assert_eq!(err.backtrace.len(), RuntimeError::BACKTRACE_LEN);
    assert_eq!(
        err.to_string(),
        "call depth limit of 10000 exceeded in `depth`"
    );

    // With room enough, the same recursion runs to the end on the explicit frame stack.
    let interp =
        Interpreter::new(&module).with_config(InterpConfig::default().with_depth_limit(200_000));
    let out = interp.call_traced(id, &[I(100_000)], None).unwrap();
    assert_eq!(out.results, vec![I(100_000)]);
    assert_eq!(out.max_depth, 100_001);

    // The limit counts frames: depth(n) needs n + 1.
    let interp =
        Interpreter::new(&module).with_config(InterpConfig::default().with_depth_limit(11));
    assert_eq!(interp.call(id, &[I(10)]).unwrap(), vec![I(10)]);
    let err = interp.call(id, &[I(11)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::DepthLimit { limit: 11 });
    assert_eq!(err.backtrace.len(), 10);
}

#[test]
fn infinite_loop_hits_the_step_limit() {
    let (mut f, b0, _) = func("spin", &[], &[]);
    let l = f.create_block();
    f.ins_jump(b0, l, vec![], sp());
    f.ins_jump(l, l, vec![], Span::new(7, 9));
    let (module, id) = single(f);
    let interp =
        Interpreter::new(&module).with_config(InterpConfig::default().with_step_limit(1000));
    let err = interp.call(id, &[]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::StepLimit { limit: 1000 });
    assert_eq!(err.span, Span::new(7, 9));
    assert_eq!(err.to_string(), "step limit of 1000 exceeded in `spin`");
}

#[test]
fn a_run_past_its_deadline_stops_within_a_poll() {
    let (mut f, b0, _) = func("spin", &[], &[]);
    let l = f.create_block();
    f.ins_jump(b0, l, vec![], sp());
    f.ins_jump(l, l, vec![], Span::new(7, 9));
    let (module, id) = single(f);
    let past = std::time::Instant::now();
    let config = InterpConfig::default().with_deadline(Some(past));
    let run = Interpreter::new(&module).with_config(config);
    let err = run.call(id, &[]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::TimeLimit);
    assert_eq!(err.to_string(), "time limit reached in `spin`");
    // A deadline far off changes nothing: the step limit ends the run, as without one.
    let later = past + std::time::Duration::from_secs(3600);
    let config = InterpConfig::default()
        .with_step_limit(200_000)
        .with_deadline(Some(later));
    let err = Interpreter::new(&module)
        .with_config(config)
        .call(id, &[])
        .unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::StepLimit { limit: 200_000 });
}

#[test]
fn step_limit_is_exact() {
    let (module, id) = single(sum_function());
    let steps = Interpreter::new(&module)
        .call_traced(id, &[I(7)], None)
        .unwrap()
        .steps;
    let at = |limit| {
        Interpreter::new(&module).with_config(InterpConfig::default().with_step_limit(limit))
    };
    assert_eq!(at(steps).call(id, &[I(7)]).unwrap(), vec![I(21)]);
    let err = at(steps - 1).call(id, &[I(7)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::StepLimit { limit: steps - 1 });
}

#[test]
fn division_by_zero_reports_the_instruction() {
    let text = "fn f(a: i64, b: i64) -> i64 { a / b }";
    let div_span = Span::new(30, 35);
    assert_eq!(&text[div_span.range()], "a / b");
    let (mut f, b, p) = func("f", &[Type::I64, Type::I64], &[Type::I64]);
    let q = f.ins_prim(b, Opcode::Idiv, vec![p[0], p[1]], div_span);
    f.ins_return(b, vec![q], sp());
    let (module, id) = single(f);
    assert_eq!(run(&module, id, &[I(7), I(2)]).unwrap(), vec![I(3)]);
    let err = run(&module, id, &[I(7), I(0)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::DivisionByZero);
    assert_eq!(err.span, div_span);
    assert_eq!(err.function, "f");
    assert_eq!(err.to_string(), "division by zero in `f`");
    let rendered = crate::diagnostic::render(&SourceFile::new("f.pinv", text), &err);
    assert!(rendered.contains("f.pinv:1:31"), "{rendered}");
    assert!(rendered.contains("the divisor is zero"), "{rendered}");

    let err = run(&module, id, &[I(i64::MIN), I(-1)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::Overflow);
    assert_eq!(err.span, div_span);

    // Through the crate's error type too.
    let e: crate::Error = err.into();
    assert!(matches!(e, crate::Error::Runtime(_)));
}

#[test]
fn errors_in_a_callee_name_the_callee_and_keep_the_call_stack() {
    let mut module = Module::new();
    let (mut g, b, p) = func("g", &[Type::I64], &[Type::I64]);
    let zero = g.ins_const(b, I(0), sp());
    let q = g.ins_prim(b, Opcode::Irem, vec![p[0], zero], Span::new(5, 6));
    g.ins_return(b, vec![q], sp());
    let gid = module.add(g).unwrap();
    let (mut f, b, p) = func("f", &[Type::I64], &[Type::I64]);
    let r = f.ins_call(b, gid, vec![p[0]], &[Type::I64], Span::new(20, 24));
    f.ins_return(b, vec![r[0]], sp());
    let fid = module.add(f).unwrap();
    let err = run(&module, fid, &[I(1)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::DivisionByZero);
    assert_eq!(err.function, "g");
    assert_eq!(err.span, Span::new(5, 6));
    assert_eq!(
        err.backtrace,
        vec![CallSite {
            function: "f".into(),
            span: Span::new(20, 24)
        }]
    );
    assert_eq!(
        Located::secondary(&err),
        vec![(Span::new(20, 24), "called from `f`".to_string())]
    );
}

// ---------------------------------------------------------------------------------------------
// θ, choice, check and fail

/// `inv(y)`: t = theta real; k = choice 3; s = theta nonzero; u = theta [0, 1]; b = theta bool;
/// check y >= 0; returns (y * s + t, k, u, b).
fn theta_module() -> (Module, FuncId) {
    let (mut f, b, p) = func(
        "inv",
        &[Type::F64],
        &[Type::F64, Type::I64, Type::F64, Type::Bool],
    );
    let y = p[0];
    let t = f.ins_theta(b, Domain::Real, "t".into(), Span::new(1, 2));
    let k = f.ins_choice(b, 3, "branch".into(), Span::new(3, 4));
    let s = f.ins_theta(b, Domain::NonzeroReal, "s".into(), Span::new(5, 6));
    let u = f.ins_theta(
        b,
        Domain::Interval { lo: 0.0, hi: 1.0 },
        "u".into(),
        Span::new(7, 8),
    );
    let bb = f.ins_theta(b, Domain::Bool, "b".into(), Span::new(9, 10));
    let zero = f.ins_const(b, F(0.0), sp());
    let ok = f.ins_prim(b, Opcode::Fge, vec![y, zero], sp());
    f.ins_void(
        b,
        InstKind::Check {
            cond: ok,
            reason: "y must be nonnegative".into(),
        },
        Span::new(11, 12),
    );
    let ys = f.ins_prim(b, Opcode::Fmul, vec![y, s], sp());
    let r = f.ins_prim(b, Opcode::Fadd, vec![ys, t], sp());
    f.ins_return(b, vec![r, k, u, bb], sp());
    single(f)
}

fn good_tape() -> Vec<Const> {
    vec![F(0.5), I(2), F(-2.0), F(1.0), B(true)]
}

#[test]
fn theta_and_choice_read_the_tape_in_order() {
    let (module, id) = theta_module();
    let mut tape = TapeSource::new(good_tape());
    let out = Interpreter::new(&module)
        .call_traced(id, &[F(3.0)], Some(&mut tape))
        .unwrap();
    assert_eq!(out.results, vec![F(-5.5), I(2), F(1.0), B(true)]);
    assert_eq!(out.theta_reads, 5);
    assert_eq!(tape.pos(), 5);
    assert!(tape.remaining().is_empty());
    tape.rewind();
    let again = Interpreter::new(&module)
        .call_with_theta(id, &[F(3.0)], &mut tape)
        .unwrap();
    assert_eq!(again, out.results);
}

#[test]
fn theta_addresses_count_reads() {
    struct Recorder(Vec<(String, String, Span, usize, Option<Domain>)>);
    impl ThetaSource for Recorder {
        fn theta(&mut self, domain: Domain, at: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
            self.0.push((
                at.function.into(),
                at.role.into(),
                at.span,
                at.index,
                Some(domain),
            ));
            Ok(match domain {
                Domain::Bool => B(false),
                Domain::Interval { lo, .. } => F(lo),
                _ => F(1.0),
            })
        }
        fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
            self.0
                .push((at.function.into(), at.role.into(), at.span, at.index, None));
            Ok(n - 1)
        }
    }
    let (module, id) = theta_module();
    let mut rec = Recorder(Vec::new());
    let out = Interpreter::new(&module)
        .call_with_theta(id, &[F(2.0)], &mut rec)
        .unwrap();
    assert_eq!(out, vec![F(3.0), I(2), F(0.0), B(false)]);
    let roles: Vec<_> = rec.0.iter().map(|r| (r.1.as_str(), r.2, r.3)).collect();
    assert_eq!(
        roles,
        vec![
            ("t", Span::new(1, 2), 0),
            ("branch", Span::new(3, 4), 1),
            ("s", Span::new(5, 6), 2),
            ("u", Span::new(7, 8), 3),
            ("b", Span::new(9, 10), 4),
        ]
    );
    assert!(rec.0.iter().all(|r| r.0 == "inv"));
    assert_eq!(rec.0[2].4, Some(Domain::NonzeroReal));
}

#[test]
fn exhausted_tape_is_an_error() {
    let (module, id) = theta_module();
    let mut tape = TapeSource::new(good_tape()[..3].to_vec());
    let err = Interpreter::new(&module)
        .call_with_theta(id, &[F(3.0)], &mut tape)
        .unwrap_err();
    assert_eq!(
        err.kind,
        RuntimeErrorKind::Theta(ThetaError::Exhausted { needed_index: 3 })
    );
    assert_eq!(err.span, Span::new(7, 8));
    assert_eq!(
        err.to_string(),
        "bad θ in `inv`: the θ tape is exhausted: no value at position 3"
    );
}

#[test]
fn out_of_domain_and_wrong_type_are_errors() {
    let (module, id) = theta_module();
    let interp = Interpreter::new(&module);
    let with = |k: usize, c: Const| {
        let mut tape = good_tape();
        tape[k] = c;
        interp
            .call_with_theta(id, &[F(3.0)], &mut TapeSource::new(tape))
            .unwrap_err()
    };
    // choice 3 takes 0, 1, 2.
    let err = with(1, I(3));
    assert_eq!(
        err.kind,
        RuntimeErrorKind::Theta(ThetaError::OutOfDomain {
            value: "3".into(),
            domain: Domain::IntRange { lo: 0, hi: 2 }
        })
    );
    assert_eq!(err.span, Span::new(3, 4));
    assert!(matches!(
        with(1, I(-1)).kind,
        RuntimeErrorKind::Theta(ThetaError::OutOfDomain { .. })
    ));
    assert_eq!(
        with(1, F(1.0)).kind,
        RuntimeErrorKind::Theta(ThetaError::WrongType {
            expected: Type::I64,
            found: Type::F64
        })
    );
    // nonzero: neither zero.
    for z in [0.0, -0.0] {
        assert!(matches!(
            with(2, F(z)).kind,
            RuntimeErrorKind::Theta(ThetaError::OutOfDomain {
                domain: Domain::NonzeroReal,
                ..
            })
        ));
    }
    // [0, 1]: not 1.5, not NaN.
    for x in [1.5, -0.1, f64::NAN] {
        assert!(matches!(
            with(3, F(x)).kind,
            RuntimeErrorKind::Theta(ThetaError::OutOfDomain { .. })
        ));
    }
    assert_eq!(
        with(4, I(1)).kind,
        RuntimeErrorKind::Theta(ThetaError::WrongType {
            expected: Type::Bool,
            found: Type::I64
        })
    );
    assert_eq!(
        with(0, B(true)).kind,
        RuntimeErrorKind::Theta(ThetaError::WrongType {
            expected: Type::F64,
            found: Type::Bool
        })
    );
}

#[test]
fn the_interpreter_checks_what_a_source_gives() {
    /// A source that ignores domains.
    struct Liar;
    impl ThetaSource for Liar {
        fn theta(&mut self, _: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
            Ok(I(7))
        }
        fn choice(&mut self, _: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
            Ok(99)
        }
    }
    let (module, id) = theta_module();
    let err = Interpreter::new(&module)
        .call_with_theta(id, &[F(1.0)], &mut Liar)
        .unwrap_err();
    assert_eq!(
        err.kind,
        RuntimeErrorKind::Theta(ThetaError::WrongType {
            expected: Type::F64,
            found: Type::I64
        })
    );
    // Domains, including the choice range.
    assert!(check_domain(Domain::Real, F(f64::NAN)).is_ok());
    assert!(check_domain(Domain::NonzeroReal, F(f64::INFINITY)).is_ok());
    assert!(check_domain(Domain::Interval { lo: -1.0, hi: 1.0 }, F(-1.0)).is_ok());
    assert!(check_domain(Domain::Int, I(i64::MIN)).is_ok());
    assert!(check_domain(Domain::IntRange { lo: -3, hi: 3 }, I(4)).is_err());
    assert!(check_domain(Domain::Bool, B(false)).is_ok());
    assert_eq!(check_choice(2, I(1)), Ok(1));
    assert!(check_choice(2, I(2)).is_err());
    assert!(check_choice(0, I(0)).is_err());
}

#[test]
fn failing_check_reports_its_reason() {
    let (module, id) = theta_module();
    let err = Interpreter::new(&module)
        .call_with_theta(id, &[F(-3.0)], &mut TapeSource::new(good_tape()))
        .unwrap_err();
    assert_eq!(
        err.kind,
        RuntimeErrorKind::CheckFailed {
            reason: "y must be nonnegative".into()
        }
    );
    assert_eq!(err.span, Span::new(11, 12));
    assert_eq!(
        err.to_string(),
        "check failed in `inv`: y must be nonnegative"
    );
    assert_eq!(err.label(), "y must be nonnegative");
    // A NaN fails the check too (fge is false).
    assert!(Interpreter::new(&module)
        .call_with_theta(id, &[F(f64::NAN)], &mut TapeSource::new(good_tape()))
        .is_err());
}

#[test]
fn theta_without_a_source_is_an_error() {
    let (module, id) = theta_module();
    let err = run(&module, id, &[F(1.0)]).unwrap_err();
    assert_eq!(err.kind, RuntimeErrorKind::NoThetaSource);
    assert_eq!(err.span, Span::new(1, 2));
    assert_eq!(err.to_string(), "`inv` reads θ but no θ source was given");
}

#[test]
fn fail_reports_its_reason() {
    // f(x) = if x > 0 { x } else { fail("x must be positive") }
    let (mut f, b0, p) = func("f", &[Type::F64], &[Type::F64]);
    let yes = f.create_block();
    let no = f.create_block();
    let zero = f.ins_const(b0, F(0.0), sp());
    let pos = f.ins_prim(b0, Opcode::Fgt, vec![p[0], zero], sp());
    brif(&mut f, b0, pos, (yes, vec![]), (no, vec![]));
    f.ins_return(yes, vec![p[0]], sp());
    f.ins_void(
        no,
        InstKind::Fail {
            reason: "x must be positive".into(),
        },
        Span::new(3, 9),
    );
    let (module, id) = single(f);
    assert_eq!(run(&module, id, &[F(2.0)]).unwrap(), vec![F(2.0)]);
    let err = run(&module, id, &[F(-2.0)]).unwrap_err();
    assert_eq!(
        err.kind,
        RuntimeErrorKind::Fail {
            reason: "x must be positive".into()
        }
    );
    assert_eq!(err.span, Span::new(3, 9));
    assert_eq!(err.to_string(), "failed in `f`: x must be positive");
}

// ---------------------------------------------------------------------------------------------
// Bad arguments and malformed IR

#[test]
fn wrong_arguments_are_reported() {
    let (mut f, b, p) = func("f", &[Type::F64, Type::I64], &[Type::F64]);
    f.span = Span::new(0, 10);
    f.ins_return(b, vec![p[0]], sp());
    let (module, id) = single(f);
    for args in [
        vec![],
        vec![F(1.0)],
        vec![F(1.0), I(1), I(1)],
        vec![I(1), F(1.0)],
    ] {
        let err = run(&module, id, &args).unwrap_err();
        assert_eq!(
            err.kind,
            RuntimeErrorKind::BadArguments {
                expected: vec![Type::F64, Type::I64],
                found: args.iter().map(|c| c.ty()).collect()
            }
        );
        assert_eq!(err.span, Span::new(0, 10));
    }
    let err = run(&module, id, &[I(1), F(1.0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "wrong arguments for `f`: expected (f64, i64), found (i64, f64)"
    );
    assert_eq!(run(&module, id, &[F(1.0), I(1)]).unwrap(), vec![F(1.0)]);
}

fn malformed_message(f: Function, args: &[Const]) -> String {
    let (module, id) = single(f);
    match run(&module, id, args) {
        Err(RuntimeError {
            kind: RuntimeErrorKind::Malformed { message },
            ..
        }) => message,
        other => panic!("expected a malformed-IR error, got {other:?}"),
    }
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    // No blocks at all.
    let f = Function::new("f", FuncKind::Fn, sig(&[], &[]));
    assert!(malformed_message(f, &[]).contains("no blocks"));

    // A block without a terminator.
    let (mut f, b, _) = func("f", &[], &[Type::I64]);
    f.ins_const(b, I(1), sp());
    assert!(malformed_message(f, &[]).contains("without a terminator"));

    // A value used before it is defined (defined later in the same block).
    let (mut f, b, p) = func("f", &[Type::I64], &[Type::I64]);
    let later = f.values.next_key();
    let sum = f.ins_prim(b, Opcode::Iadd, vec![p[0], later], sp());
    assert_eq!(sum, later);
    f.ins_return(b, vec![sum], sp());
    assert!(malformed_message(f, &[I(1)]).contains("before it is defined"));

    // Operands of the wrong type.
    let (mut f, b, p) = func("f", &[Type::I64], &[Type::F64]);
    let s = f.ins_prim(b, Opcode::Fadd, vec![p[0], p[0]], sp());
    f.ins_return(b, vec![s], sp());
    assert!(malformed_message(f, &[I(1)]).contains("`fadd` takes (f64, f64)"));

    // A return that does not match the signature.
    let (mut f, b, p) = func("f", &[Type::I64], &[Type::I64, Type::I64]);
    f.ins_return(b, vec![p[0]], sp());
    assert!(malformed_message(f, &[I(1)]).contains("signature"));

    // A branch with the wrong number of arguments.
    let (mut f, b, p) = func("f", &[Type::I64], &[Type::I64]);
    let t = f.create_block();
    f.append_block_param(t, Type::I64);
    f.ins_jump(b, t, vec![p[0], p[0]], sp());
    assert!(malformed_message(f, &[I(1)]).contains("argument"));

    // A branch argument of the wrong type.
    let (mut f, b, _) = func("f", &[], &[]);
    let t = f.create_block();
    f.append_block_param(t, Type::I64);
    let x = f.ins_const(b, F(1.0), sp());
    f.ins_jump(b, t, vec![x], sp());
    assert!(malformed_message(f, &[]).contains("has type i64"));

    // A non-bool condition.
    let (mut f, b, p) = func("f", &[Type::I64], &[]);
    f.ins_void(
        b,
        InstKind::Check {
            cond: p[0],
            reason: "r".into(),
        },
        sp(),
    );
    assert!(malformed_message(f, &[I(1)]).contains("condition"));

    // A call of a function that does not exist.
    let (mut f, b, _) = func("f", &[], &[]);
    f.ins_call(b, FuncId::from_u32(7), vec![], &[], sp());
    assert!(malformed_message(f, &[]).contains("not a function"));

    // A call with the wrong arguments, or the wrong number of results.
    let mut module = Module::new();
    let (mut g, b, p) = func("g", &[Type::I64], &[Type::I64]);
    g.ins_return(b, vec![p[0]], sp());
    let gid = module.add(g).unwrap();
    let (mut f, b, _) = func("f", &[], &[]);
    let x = f.ins_const(b, F(1.0), sp());
    f.ins_call(b, gid, vec![x], &[Type::I64], sp());
    f.ins_return(b, vec![], sp());
    let fid = module.add(f).unwrap();
    assert!(matches!(
        run(&module, fid, &[]).unwrap_err().kind,
        RuntimeErrorKind::Malformed { .. }
    ));
    let (mut h, b, _) = func("h", &[], &[]);
    let x = h.ins_const(b, I(1), sp());
    h.ins_call(b, gid, vec![x], &[], sp());
    h.ins_return(b, vec![], sp());
    let hid = module.add(h).unwrap();
    assert!(matches!(
        run(&module, hid, &[]).unwrap_err().kind,
        RuntimeErrorKind::Malformed { .. }
    ));

    // Calling an id that is not in the module.
    let err = run(&module, FuncId::from_u32(99), &[]).unwrap_err();
    assert!(matches!(err.kind, RuntimeErrorKind::Malformed { .. }));
}

// ---------------------------------------------------------------------------------------------
// Agreement with the semantics

/// A function `f(args) = op(args)` for each opcode.
fn prim_module() -> (Module, Vec<(Opcode, FuncId)>) {
    let mut module = Module::new();
    let mut ids = Vec::new();
    for &op in Opcode::ALL {
        let (mut f, b, p) = func(op.name(), op.arg_types(), &[op.result_type()]);
        let r = f.ins_prim(b, op, p, sp());
        f.ins_return(b, vec![r], sp());
        ids.push((op, module.add(f).unwrap()));
    }
    (module, ids)
}

fn arg_for(ty: Type) -> BoxedStrategy<Const> {
    match ty {
        Type::F64 => prop_oneof![
            any::<u64>().prop_map(|b| F(f64::from_bits(b))),
            any::<f64>().prop_map(F),
            (-3i64..3).prop_map(|x| F(x as f64)),
        ]
        .boxed(),
        Type::I64 => prop_oneof![any::<i64>().prop_map(I), (-3i64..3).prop_map(I)].boxed(),
        Type::Bool => any::<bool>().prop_map(B).boxed(),
    }
}

fn op_and_args() -> impl Strategy<Value = (Opcode, Vec<Const>)> {
    prop::sample::select(Opcode::ALL.to_vec()).prop_flat_map(|op| {
        let args: Vec<_> = op.arg_types().iter().map(|&t| arg_for(t)).collect();
        (Just(op), args)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn interpreter_is_bit_exact_with_the_semantics((op, args) in op_and_args()) {
        let (module, ids) = prim_module();
        let id = ids.iter().find(|(o, _)| *o == op).unwrap().1;
        let got = run(&module, id, &args);
        match semantics::eval(op, &args) {
            Ok(want) => prop_assert_eq!(got.unwrap(), vec![want]),
            Err(e) => prop_assert_eq!(got.unwrap_err().kind, RuntimeErrorKind::from(e)),
        }
    }

    #[test]
    fn sum_loop_matches_the_formula(n in -5i64..300) {
        let (module, id) = single(sum_function());
        let want = if n > 0 { n * (n - 1) / 2 } else { 0 };
        prop_assert_eq!(run(&module, id, &[I(n)]).unwrap(), vec![I(want)]);
    }
}

#[test]
fn repeated_call_sites_are_folded() {
    let site = |f: &str, at: usize| CallSite {
        function: f.into(),
        span: Span::new(at, at + 4),
    };
    let mut err = RuntimeError::new(RuntimeErrorKind::DivisionByZero, "g", Span::new(0, 1));
    err.backtrace = vec![site("g", 10), site("g", 10), site("g", 10), site("f", 20)];
    assert_eq!(
        Located::secondary(&err),
        vec![
            (Span::new(10, 14), "called from `g` × 3".to_string()),
            (Span::new(20, 24), "called from `f`".to_string()),
        ]
    );
    // A backtrace cut at its length may go on deeper.
    err.backtrace = vec![site("fact", 30); RuntimeError::BACKTRACE_LEN];
    assert_eq!(
        Located::secondary(&err),
        vec![(
            Span::new(30, 34),
            "called from `fact` × 16 or more".to_string()
        )]
    );
}

#[test]
fn generated_functions_are_named_in_user_terms() {
    use crate::interp::user_name;
    assert_eq!(user_name("triangle.inv"), "the inverse of `triangle`");
    assert_eq!(user_name("fib.inv.body"), "the inverse of `fib`");
    assert_eq!(user_name("triangle.pgf"), "the PGF of `triangle`");
    assert_eq!(user_name("f.guard.block3"), "the inverse of `f`");
    assert_eq!(user_name("f.trips.block1.count"), "the inverse of `f`");
    assert_eq!(user_name("inverse:g"), "the declared inverse of `g`");
    assert_eq!(user_name("iso.sq"), "a solver's helper (`iso.sq`)");
    assert_eq!(user_name("fact"), "`fact`");
}
