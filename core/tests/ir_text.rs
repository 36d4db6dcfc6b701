//! The IR text form: the printer's exact output, the parser reading it back, and the round-trip
//! guarantees:
//!
//! - for a compact function `f`, `parse(write(f, spans: true)) == f`;
//! - for any text `t` the printer produced, `write(parse(t)) == t`.

use expect_test::{expect, Expect};
use pinv_core::ir::read::{parse_function, parse_module};
use pinv_core::ir::verify::verify_module;
use pinv_core::ir::write::{write_function, write_module, WriteOptions};
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncId, FuncKind, Function, InstKind, Module, Opcode,
    Signature, Type, Value,
};
use pinv_core::Span;

const SPANS: WriteOptions = WriteOptions { spans: true };
const PLAIN: WriteOptions = WriteOptions { spans: false };

fn sig(params: &[Type], returns: &[Type]) -> Signature {
    Signature {
        params: params.to_vec(),
        returns: returns.to_vec(),
    }
}

fn sp(start: u32, end: u32) -> Span {
    Span { start, end }
}

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn one(f: Function) -> Module {
    let mut m = Module::new();
    m.add(f).unwrap();
    m
}

/// Verifies, checks both round-trip guarantees (with and without spans) and returns the text.
fn round_trip(module: &Module) -> String {
    verify_module(module).unwrap_or_else(|e| panic!("{e}\n{}", write_module(module, &PLAIN)));
    let mut compact = module.clone();
    compact.compact_all();
    assert!(
        compact == *module,
        "test functions are built compact:\n{}",
        write_module(module, &PLAIN)
    );
    let with_spans = write_module(module, &SPANS);
    let parsed = parse_module(&with_spans).unwrap_or_else(|e| panic!("{e}\n{with_spans}"));
    assert!(parsed == *module, "parse(write(f)) != f:\n{with_spans}");
    assert_eq!(write_module(&parsed, &SPANS), with_spans);
    let plain = write_module(module, &PLAIN);
    let parsed = parse_module(&plain).unwrap_or_else(|e| panic!("{e}\n{plain}"));
    assert_eq!(write_module(&parsed, &PLAIN), plain);
    plain
}

fn check(module: &Module, expected: Expect) {
    expected.assert_eq(&round_trip(module));
}

#[test]
fn straight_line() {
    let mut f = Function::new("mul_add", FuncKind::Fn, sig(&[Type::F64; 3], &[Type::F64]));
    f.param_names = names(&["x", "y", "z"]);
    let b0 = f.create_entry();
    let [x, y, z] = f.blocks[b0].params[..] else {
        unreachable!()
    };
    let m = f.ins_prim(b0, Opcode::Fmul, vec![x, y], sp(10, 15));
    let s = f.ins_prim(b0, Opcode::Fadd, vec![m, z], sp(10, 19));
    f.ins_return(b0, vec![s], sp(3, 20));
    let module = one(f);
    check(
        &module,
        expect![[r#"
            function %mul_add(x: f64, y: f64, z: f64) -> f64 {
            block0(v0: f64, v1: f64, v2: f64):
                v3 = fmul v0, v1
                v4 = fadd v3, v2
                return v4
            }
        "#]],
    );
    expect![[r#"
        function %mul_add(x: f64, y: f64, z: f64) -> f64 @0..0 {
        block0(v0: f64, v1: f64, v2: f64):
            v3 = fmul v0, v1 @10..15
            v4 = fadd v3, v2 @10..19
            return v4 @3..20
        }
    "#]]
    .assert_eq(&write_function(&module, FuncId::from_u32(0), &SPANS));
}

/// `sum_to(n)`: a loop whose header has block parameters and a back edge.
fn sum_to() -> Function {
    let mut f = Function::new("sum_to", FuncKind::Fn, sig(&[Type::I64], &[Type::I64]));
    f.param_names = names(&["n"]);
    f.span = sp(0, 99);
    let entry = f.create_entry();
    let n = f.blocks[entry].params[0];
    let zero = f.ins_const(entry, Const::I64(0), sp(1, 2));
    let header = f.create_block();
    f.ins_jump(entry, header, vec![zero, zero], sp(3, 4));
    let i = f.append_block_param(header, Type::I64);
    let acc = f.append_block_param(header, Type::I64);
    let more = f.ins_prim(header, Opcode::Ilt, vec![i, n], sp(5, 6));
    let body = f.create_block();
    let exit = f.create_block();
    f.ins_void(
        header,
        InstKind::Brif {
            cond: more,
            then_dest: Box::new(BlockCall::new(body, vec![])),
            else_dest: Box::new(BlockCall::new(exit, vec![])),
        },
        sp(7, 8),
    );
    let acc2 = f.ins_prim(body, Opcode::Iadd, vec![acc, i], sp(9, 10));
    let one = f.ins_const(body, Const::I64(1), sp(11, 12));
    let i2 = f.ins_prim(body, Opcode::Iadd, vec![i, one], sp(13, 14));
    f.ins_jump(body, header, vec![i2, acc2], sp(15, 16));
    f.ins_return(exit, vec![acc], sp(17, 18));
    f
}

#[test]
fn loop_with_block_params_and_back_edge() {
    check(
        &one(sum_to()),
        expect![[r#"
            function %sum_to(n: i64) -> i64 {
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
        "#]],
    );
}

#[test]
fn brif_with_arguments() {
    let mut f = Function::new("relu", FuncKind::Fn, sig(&[Type::F64], &[Type::F64]));
    let entry = f.create_entry();
    let x = f.blocks[entry].params[0];
    let zero = f.ins_const(entry, Const::F64(0.0), Span::default());
    let neg = f.ins_prim(entry, Opcode::Flt, vec![x, zero], Span::default());
    let join = f.create_block();
    let r = f.append_block_param(join, Type::F64);
    f.ins_void(
        entry,
        InstKind::Brif {
            cond: neg,
            then_dest: Box::new(BlockCall::new(join, vec![zero])),
            else_dest: Box::new(BlockCall::new(join, vec![x])),
        },
        Span::default(),
    );
    f.ins_return(join, vec![r], Span::default());
    check(
        &one(f),
        expect![[r#"
            function %relu(p0: f64) -> f64 {
            block0(v0: f64):
                v1 = fconst 0.0
                v2 = flt v0, v1
                brif v2, block1(v1), block1(v0)
            block1(v3: f64):
                return v3
            }
        "#]],
    );
}

#[test]
fn call_with_two_results_defined_later() {
    let kin2_sig = sig(&[Type::F64, Type::I64], &[Type::F64, Type::Bool]);
    let mut caller = Function::new("caller", FuncKind::Fn, sig(&[Type::F64], &[Type::F64]));
    caller.param_names = names(&["x"]);
    let entry = caller.create_entry();
    let x = caller.blocks[entry].params[0];
    let k = caller.ins_const(entry, Const::I64(3), Span::default());
    // %kin2 is added second: its id is fn1.
    let rs = caller.ins_call(
        entry,
        FuncId::from_u32(1),
        vec![x, k],
        &kin2_sig.returns,
        Span::default(),
    );
    let b = caller.ins_prim(entry, Opcode::BoolToI64, vec![rs[1]], Span::default());
    let bf = caller.ins_prim(entry, Opcode::FcvtFromI64, vec![b], Span::default());
    let s = caller.ins_prim(entry, Opcode::Fadd, vec![rs[0], bf], Span::default());
    caller.ins_return(entry, vec![s], Span::default());

    let mut kin2 = Function::new("kin2", FuncKind::Fn, kin2_sig);
    kin2.param_names = names(&["a", "n"]);
    let entry = kin2.create_entry();
    let [a, n] = kin2.blocks[entry].params[..] else {
        unreachable!()
    };
    let nf = kin2.ins_prim(entry, Opcode::FcvtFromI64, vec![n], Span::default());
    let p = kin2.ins_prim(entry, Opcode::Fmul, vec![a, nf], Span::default());
    let pos = kin2.ins_prim(entry, Opcode::Fgt, vec![p, a], Span::default());
    kin2.ins_return(entry, vec![p, pos], Span::default());

    let mut module = Module::new();
    module.add(caller).unwrap();
    module.add(kin2).unwrap();
    check(
        &module,
        expect![[r#"
            function %caller(x: f64) -> f64 {
            block0(v0: f64):
                v1 = iconst 3
                v2, v3 = call %kin2(v0, v1)
                v4 = bool_to_i64 v3
                v5 = fcvt_from_i64 v4
                v6 = fadd v2, v5
                return v6
            }

            function %kin2(a: f64, n: i64) -> (f64, bool) {
            block0(v0: f64, v1: i64):
                v2 = fcvt_from_i64 v1
                v3 = fmul v0, v2
                v4 = fgt v3, v0
                return v3, v4
            }
        "#]],
    );
}

/// An inverse with a θ parameter and all three inverse-only instructions, and its PGF.
#[test]
fn inverse_and_pgf() {
    let mut inv = Function::new(
        "inverse:softplus",
        FuncKind::Inverse {
            of: "softplus".into(),
            outputs: 1,
        },
        sig(&[Type::F64, Type::Bool], &[Type::F64]),
    );
    inv.param_names = names(&["y", "s"]);
    let entry = inv.create_entry();
    let y = inv.blocks[entry].params[0];
    let zero = inv.ins_const(entry, Const::F64(0.0), sp(30, 33));
    let ok = inv.ins_prim(entry, Opcode::Fgt, vec![y, zero], sp(34, 40));
    inv.ins_void(
        entry,
        InstKind::Check {
            cond: ok,
            reason: "softplus(x) > 0".into(),
        },
        sp(34, 40),
    );
    let t = inv.ins_theta(
        entry,
        Domain::NonzeroReal,
        "fmul left operand".into(),
        sp(41, 42),
    );
    let u = inv.ins_theta(
        entry,
        Domain::Interval { lo: -1.0, hi: 1.0 },
        "unit".into(),
        sp(43, 44),
    );
    let k = inv.ins_theta(
        entry,
        Domain::IntRange { lo: -3, hi: 9 },
        "k".into(),
        sp(45, 46),
    );
    let c = inv.ins_choice(entry, 2, "which \"branch\"".into(), sp(47, 48));
    let _b = inv.ins_theta(entry, Domain::Bool, "b".into(), sp(0, 0));
    let _r = inv.ins_theta(entry, Domain::Real, "r".into(), sp(0, 0));
    let _i = inv.ins_theta(entry, Domain::Int, "i".into(), sp(0, 0));
    let ck = inv.ins_prim(entry, Opcode::Iadd, vec![c, k], Span::default());
    let ckf = inv.ins_prim(entry, Opcode::FcvtFromI64, vec![ck], Span::default());
    let tu = inv.ins_prim(entry, Opcode::Fmul, vec![t, u], Span::default());
    let x = inv.ins_prim(entry, Opcode::Fadd, vec![tu, ckf], Span::default());
    inv.ins_return(entry, vec![x], Span::default());

    let mut pgf = Function::new(
        "pgf:softplus",
        FuncKind::Pgf {
            of: "softplus".into(),
        },
        sig(&[Type::F64], &[Type::Bool]),
    );
    pgf.param_names = names(&["x"]);
    let entry = pgf.create_entry();
    let x = pgf.blocks[entry].params[0];
    let zero = pgf.ins_const(entry, Const::F64(0.0), Span::default());
    let s = pgf.ins_prim(entry, Opcode::Fge, vec![x, zero], Span::default());
    pgf.ins_return(entry, vec![s], Span::default());

    let mut module = Module::new();
    module.add(inv).unwrap();
    module.add(pgf).unwrap();
    check(
        &module,
        expect![[r#"
            function %inverse:softplus(y: f64, theta s: bool) -> f64 inverse(softplus) {
            block0(v0: f64, v1: bool):
                v2 = fconst 0.0
                v3 = fgt v0, v2
                check v3, "softplus(x) > 0"
                v4 = theta nonzero "fmul left operand"
                v5 = theta [-1.0, 1.0] "unit"
                v6 = theta int[-3..=9] "k"
                v7 = choice 2 "which \"branch\""
                v8 = theta bool "b"
                v9 = theta real "r"
                v10 = theta int "i"
                v11 = iadd v7, v6
                v12 = fcvt_from_i64 v11
                v13 = fmul v4, v5
                v14 = fadd v13, v12
                return v14
            }

            function %pgf:softplus(x: f64) -> bool pgf(softplus) {
            block0(v0: f64):
                v1 = fconst 0.0
                v2 = fge v0, v1
                return v2
            }
        "#]],
    );
}

#[test]
fn fail_and_no_returns() {
    let mut f = Function::new("guard", FuncKind::Fn, sig(&[Type::Bool], &[]));
    f.param_names = names(&["ok"]);
    let entry = f.create_entry();
    let ok = f.blocks[entry].params[0];
    let good = f.create_block();
    let bad = f.create_block();
    f.ins_void(
        entry,
        InstKind::Brif {
            cond: ok,
            then_dest: Box::new(BlockCall::new(good, vec![])),
            else_dest: Box::new(BlockCall::new(bad, vec![])),
        },
        Span::default(),
    );
    f.ins_return(good, vec![], Span::default());
    f.ins_void(
        bad,
        InstKind::Fail {
            reason: "not \\ ok:\n\tdone".into(),
        },
        Span::default(),
    );
    check(
        &one(f),
        expect![[r#"
            function %guard(ok: bool) -> () {
            block0(v0: bool):
                brif v0, block1, block2
            block1:
                return
            block2:
                fail "not \\ ok:\n\tdone"
            }
        "#]],
    );
}

#[test]
fn every_kind_of_constant() {
    let consts = [
        Const::F64(1.5),
        Const::F64(-0.0),
        Const::F64(0.0),
        Const::F64(f64::INFINITY),
        Const::F64(f64::NEG_INFINITY),
        Const::F64(f64::NAN),
        Const::F64(f64::from_bits(0x7ff0_0000_0000_0001)),
        Const::F64(f64::from_bits(0xfff8_0000_0000_0000)),
        Const::F64(1e300),
        Const::F64(5e-324),
        Const::F64(0.1 + 0.2),
        Const::I64(-7),
        Const::I64(i64::MIN),
        Const::I64(i64::MAX),
        Const::Bool(true),
        Const::Bool(false),
    ];
    let mut f = Function::new("consts", FuncKind::Fn, sig(&[], &[Type::F64]));
    let entry = f.create_entry();
    let vs: Vec<Value> = consts
        .iter()
        .map(|&c| f.ins_const(entry, c, Span::default()))
        .collect();
    f.ins_return(entry, vec![vs[1]], Span::default());
    let module = one(f);
    check(
        &module,
        expect![[r#"
            function %consts() -> f64 {
            block0:
                v0 = fconst 1.5
                v1 = fconst -0.0
                v2 = fconst 0.0
                v3 = fconst inf
                v4 = fconst -inf
                v5 = fconst nan
                v6 = fconst nan:0x7ff0000000000001
                v7 = fconst nan:0xfff8000000000000
                v8 = fconst 1e300
                v9 = fconst 5e-324
                v10 = fconst 0.30000000000000004
                v11 = iconst -7
                v12 = iconst -9223372036854775808
                v13 = iconst 9223372036854775807
                v14 = bconst true
                v15 = bconst false
                return v1
            }
        "#]],
    );
    // Equality of constants is by bits: the NaN payloads and the sign of zero survived.
    let parsed = parse_module(&write_module(&module, &PLAIN)).unwrap();
    let f = &parsed.functions[FuncId::from_u32(0)];
    for (inst, c) in f.blocks[Block::from_u32(0)].insts.iter().zip(consts) {
        match f.insts[*inst].kind {
            InstKind::Const(k) => assert_eq!(k.bits(), c.bits()),
            ref other => panic!("{other:?}"),
        }
    }
}

#[test]
fn odd_names_are_quoted_and_read_back() {
    let mut f = Function::new(
        "a b\"c",
        FuncKind::Fn,
        sig(&[Type::F64, Type::F64], &[Type::F64]),
    );
    f.param_names = names(&["theta", "two words"]);
    let entry = f.create_entry();
    let x = f.blocks[entry].params[0];
    f.ins_return(entry, vec![x], Span::default());
    let mut g = Function::new(
        "inverse:f.g",
        FuncKind::Inverse {
            of: "weird of".into(),
            outputs: 0,
        },
        sig(&[Type::I64], &[]),
    );
    g.param_names = names(&["theta"]);
    let entry = g.create_entry();
    g.ins_return(entry, vec![], Span::default());
    let mut module = Module::new();
    module.add(f).unwrap();
    module.add(g).unwrap();
    check(
        &module,
        expect![[r#"
            function %"a b\"c"(theta: f64, "two words": f64) -> f64 {
            block0(v0: f64, v1: f64):
                return v0
            }

            function %inverse:f.g(theta theta: i64) -> () inverse("weird of") {
            block0(v0: i64):
                return
            }
        "#]],
    );
}

/// A function that is not compact prints its real ids, and that text reads back to text that
/// prints the same (the numbers are kept, with unused ids in the gaps).
#[test]
fn non_compact_text_keeps_its_numbers() {
    let mut f = sum_to();
    // Move the exit block before the body and drop a value by rewriting it away.
    f.layout = vec![
        Block::from_u32(0),
        Block::from_u32(1),
        Block::from_u32(3),
        Block::from_u32(2),
    ];
    let module = one(f);
    let text = write_module(&module, &SPANS);
    expect![[r#"
        function %sum_to(n: i64) -> i64 @0..99 {
        block0(v0: i64):
            v1 = iconst 0 @1..2
            jump block1(v1, v1) @3..4
        block1(v2: i64, v3: i64):
            v4 = ilt v2, v0 @5..6
            brif v4, block2, block3 @7..8
        block3:
            return v3 @17..18
        block2:
            v5 = iadd v3, v2 @9..10
            v6 = iconst 1 @11..12
            v7 = iadd v2, v6 @13..14
            jump block1(v7, v5) @15..16
        }
    "#]]
    .assert_eq(&text);
    let parsed = parse_module(&text).unwrap();
    assert_eq!(write_module(&parsed, &SPANS), text);
    verify_module(&parsed).unwrap();

    // Gaps in the numbering.
    let text = "function %g(x: f64) -> f64 {\nblock4(v10: f64):\n    v20 = fneg v10\n    jump block2(v20)\nblock2(v3: f64):\n    return v3\n}\n";
    let parsed = parse_module(text).unwrap();
    assert_eq!(write_module(&parsed, &PLAIN), text);
    verify_module(&parsed).unwrap();
    let mut compact = parsed.clone();
    compact.compact_all();
    expect![[r#"
        function %g(x: f64) -> f64 {
        block0(v0: f64):
            v1 = fneg v0
            jump block1(v1)
        block1(v2: f64):
            return v2
        }
    "#]]
    .assert_eq(&write_module(&compact, &PLAIN));
}

#[test]
fn huge_numbers_are_renumbered_in_order_of_definition() {
    let text = "function %g(x: f64) -> f64 {\nblock4000000(v4000000000: f64):\n    return v4000000000\n}\n";
    let parsed = parse_module(text).unwrap();
    expect![[r#"
        function %g(x: f64) -> f64 {
        block0(v0: f64):
            return v0
        }
    "#]]
    .assert_eq(&write_module(&parsed, &PLAIN));
}

#[test]
fn uses_before_definitions_resolve() {
    // block3 is textually first but runs last; block1 uses v9, defined in block2, which
    // dominates it; block2 uses the loop header's v2 before it is defined in the text.
    let text = r#"
; a comment line
function %fwd(x: f64) -> f64 {   ; trailing comment
block0(v0: f64):
    jump block2
block1:
    return v9
block2:
    v9 = fneg v0
    jump block1
}
"#;
    let module = parse_module(text).unwrap();
    verify_module(&module).unwrap();
    let printed = write_module(&module, &PLAIN);
    expect![[r#"
        function %fwd(x: f64) -> f64 {
        block0(v0: f64):
            jump block2
        block1:
            return v9
        block2:
            v9 = fneg v0
            jump block1
        }
    "#]]
    .assert_eq(&printed);
    assert_eq!(
        write_module(&parse_module(&printed).unwrap(), &PLAIN),
        printed
    );
}

#[test]
fn empty_and_blockless() {
    assert_eq!(parse_module("").unwrap().functions.len(), 0);
    assert_eq!(parse_module("\n ; nothing\n\n").unwrap().functions.len(), 0);
    let text = "function %f() -> () {\n}\n";
    let m = parse_module(text).unwrap();
    assert_eq!(write_module(&m, &PLAIN), text);
    assert!(parse_function(text).is_ok());
    assert!(parse_function("").is_err());
    // Empty block parameter lists and CRLF line ends are accepted.
    let m = parse_module("function %f() -> () {\r\nblock0():\r\n  return\r\n}\r\n").unwrap();
    assert_eq!(
        write_module(&m, &PLAIN),
        "function %f() -> () {\nblock0:\n    return\n}\n"
    );
}

#[test]
fn display_of_a_module() {
    let m = one(sum_to());
    assert_eq!(m.to_string(), write_module(&m, &PLAIN));
    assert_eq!(format!("{m:#}"), write_module(&m, &SPANS));
}

/// (text, line, column, message substring)
#[test]
fn parse_errors_say_where_and_what() {
    let cases: &[(&str, usize, usize, &str)] = &[
        ("fn %f() -> () {\n}\n", 1, 1, "expected `function`"),
        (
            "function f() -> () {\n}\n",
            1,
            10,
            "expected a function name",
        ),
        (
            "function %f(x: f32) -> () {\n}\n",
            1,
            16,
            "unknown type `f32`",
        ),
        (
            "function %f() -> () {\nblock0:\n    return\n",
            1,
            1,
            "no closing",
        ),
        (
            "function %f() -> () {\n    return\n}\n",
            2,
            5,
            "before the first block",
        ),
        (
            "function %f() -> () {\nblock0:\n    v0 = fadd v1, v1\n    return\n}\n",
            3,
            15,
            "v1 is not defined",
        ),
        (
            "function %f() -> () {\nblock0:\n    jump block1\n}\n",
            3,
            10,
            "block1 is not defined",
        ),
        (
            "function %f(x: f64) -> () {\nblock0(v0: f64):\n    v0 = fneg v0\n    return\n}\n",
            3,
            5,
            "v0 is defined twice",
        ),
        (
            "function %f() -> () {\nblock0:\n    return\nblock0:\n    return\n}\n",
            4,
            1,
            "block0 is defined twice",
        ),
        (
            "function %f() -> () {\nblock0:\n    v1 = fmadd v0\n}\n",
            3,
            10,
            "unknown instruction `fmadd`",
        ),
        (
            "function %f() -> () {\nblock0:\n    v1 = fconst 1.5x\n}\n",
            3,
            17,
            "expected an f64 constant, found `1.5x`",
        ),
        (
            "function %f() -> () {\nblock0:\n    v1 = iconst 99999999999999999999\n}\n",
            3,
            17,
            "expected an i64 constant",
        ),
        (
            "function %f() -> () {\nblock0:\n    v1, v2 = call %g()\n}\n",
            3,
            19,
            "unknown function %g",
        ),
        (
            "function %f() -> () {\nblock0:\n    v1 = call %f()\n    return\n}\n",
            3,
            5,
            "`call` defines no value",
        ),
        (
            "function %f() -> f64 {\nblock0:\n    v1, v2 = fconst 1.0\n}\n",
            3,
            5,
            "`fconst` here defines 1 value, but 2 are named",
        ),
        (
            "function %f() -> () {\nblock0:\n    fneg v0\n}\n",
            3,
            5,
            "`fneg` defines a value",
        ),
        (
            "function %f() -> () {\nblock0:\n    fail \"oops\n}\n",
            3,
            10,
            "unterminated string",
        ),
        (
            "function %f() -> () {\nblock0:\n    fail \"a\\qb\"\n}\n",
            3,
            12,
            "unknown escape",
        ),
        (
            "function %f() -> () {\nblock0:\n    v0 = theta reals \"r\"\n}\n",
            3,
            16,
            "expected a domain",
        ),
        (
            "function %f() -> () {\nblock0:\n    return v0 v1\n}\n",
            3,
            15,
            "expected end of line, found `v1`",
        ),
        (
            "function %f(theta t: f64) -> () {\n}\n",
            1,
            13,
            "only an inverse",
        ),
        (
            "function %f(theta t: f64, y: f64) -> () inverse(g) {\n}\n",
            1,
            27,
            "must come after",
        ),
        (
            "function %f() -> () {\n}\nfunction %f() -> () {\n}\n",
            3,
            10,
            "function %f is defined twice",
        ),
        (
            "function %f() -> () {\nblock0:\n    return @1..\n}\n",
            3,
            16,
            "expected a span end",
        ),
        (
            "function %f() -> () {\nblock0:\n    v99999999999 = iconst 1\n}\n",
            3,
            5,
            "value number too large",
        ),
    ];
    for &(text, line, column, message) in cases {
        let err = match parse_module(text) {
            Ok(m) => panic!("parsed:\n{text}\nas\n{m}"),
            Err(e) => e,
        };
        let shown = err.to_string();
        assert!(
            shown.contains(message) && err.line == line && err.column == column,
            "{text}\nexpected {line}:{column} {message}\nfound    {shown}"
        );
    }
}

#[test]
fn parse_error_display() {
    let err =
        parse_module("function %f() -> () {\nblock0:\n    v1 = fadd v0, v0\n}\n").unwrap_err();
    expect!["IR text, line 3, column 15: v0 is not defined"].assert_eq(&err.to_string());
}
