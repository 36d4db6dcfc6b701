use super::*;
use proptest::prelude::*;
use Const::{Bool as B, F64 as F, I64 as I};
use Opcode::*;

fn ev(op: Opcode, args: &[Const]) -> Const {
    eval(op, args).unwrap_or_else(|e| panic!("{op}{args:?}: {e}"))
}

fn f(op: Opcode, args: &[f64]) -> f64 {
    let args: Vec<Const> = args.iter().map(|&x| F(x)).collect();
    match ev(op, &args) {
        F(x) => x,
        other => panic!("{op} gave {other:?}"),
    }
}

fn i(op: Opcode, args: &[i64]) -> i64 {
    let args: Vec<Const> = args.iter().map(|&x| I(x)).collect();
    match ev(op, &args) {
        I(x) => x,
        other => panic!("{op} gave {other:?}"),
    }
}

fn ierr(op: Opcode, a: i64, b: i64) -> EvalError {
    eval(op, &[I(a), I(b)]).expect_err("expected an error")
}

/// Bitwise f64 equality, so that -0.0 != 0.0 and NaN == NaN.
#[track_caller]
fn same(got: f64, want: f64) {
    assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "got {got:?} ({:#x}), want {want:?} ({:#x})",
        got.to_bits(),
        want.to_bits()
    );
}

fn sample(ty: Type) -> Const {
    match ty {
        Type::F64 => F(1.5),
        Type::I64 => I(3),
        Type::Bool => B(true),
    }
}

#[test]
fn every_opcode_evaluates_with_well_typed_operands() {
    for &op in Opcode::ALL {
        let args: Vec<Const> = op.arg_types().iter().map(|&t| sample(t)).collect();
        let r = eval(op, &args).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(r.ty(), op.result_type(), "{op}");
    }
}

#[test]
fn ill_typed_operands_are_a_mismatch_not_a_panic() {
    for &op in Opcode::ALL {
        let arity = op.arity();
        let mut cases: Vec<Vec<Const>> = vec![
            vec![],
            vec![sample(Type::F64); arity + 1],
            vec![sample(Type::F64); arity.saturating_sub(1)],
        ];
        // Each operand in turn given every wrong type.
        for k in 0..arity {
            for &t in &Type::ALL {
                if t != op.arg_types()[k] {
                    let mut args: Vec<Const> = op.arg_types().iter().map(|&t| sample(t)).collect();
                    args[k] = sample(t);
                    cases.push(args);
                }
            }
        }
        for args in cases {
            if args.len() == arity
                && args
                    .iter()
                    .map(|c| c.ty())
                    .eq(op.arg_types().iter().copied())
            {
                continue;
            }
            match eval(op, &args) {
                Err(EvalError::Mismatch {
                    op: o,
                    expected,
                    found,
                }) => {
                    assert_eq!(o, op);
                    assert_eq!(expected, op.arg_types());
                    assert_eq!(found, args.iter().map(|c| c.ty()).collect::<Vec<_>>());
                }
                other => panic!("{op}{args:?}: {other:?}"),
            }
        }
    }
    let e = eval(Fadd, &[I(1)]).unwrap_err();
    assert_eq!(e.to_string(), "`fadd` takes (f64, f64) but was given (i64)");
}

#[test]
fn f64_arithmetic() {
    same(f(Fadd, &[0.1, 0.2]), 0.1 + 0.2);
    same(f(Fadd, &[-0.0, -0.0]), -0.0);
    same(f(Fadd, &[-0.0, 0.0]), 0.0);
    same(f(Fsub, &[1.0, 3.0]), -2.0);
    same(f(Fsub, &[0.0, 0.0]), 0.0);
    same(f(Fmul, &[-2.0, 0.0]), -0.0);
    same(f(Fmul, &[f64::MAX, 2.0]), f64::INFINITY);
    same(f(Fdiv, &[1.0, 0.0]), f64::INFINITY);
    same(f(Fdiv, &[1.0, -0.0]), f64::NEG_INFINITY);
    same(f(Fdiv, &[-1.0, 0.0]), f64::NEG_INFINITY);
    assert!(f(Fdiv, &[0.0, 0.0]).is_nan());
    assert!(f(Fadd, &[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    assert!(f(Fadd, &[f64::NAN, 1.0]).is_nan());
}

#[test]
fn frem_has_the_sign_of_the_dividend() {
    same(f(Frem, &[5.5, 2.0]), 1.5);
    same(f(Frem, &[-5.5, 2.0]), -1.5);
    same(f(Frem, &[5.5, -2.0]), 1.5);
    same(f(Frem, &[-5.5, -2.0]), -1.5);
    same(f(Frem, &[-4.0, 2.0]), -0.0);
    same(f(Frem, &[4.0, 2.0]), 0.0);
    same(f(Frem, &[3.0, f64::INFINITY]), 3.0);
    same(f(Frem, &[-3.0, f64::NEG_INFINITY]), -3.0);
    assert!(f(Frem, &[3.0, 0.0]).is_nan());
    assert!(f(Frem, &[f64::INFINITY, 2.0]).is_nan());
    assert!(f(Frem, &[f64::NAN, 2.0]).is_nan());
    // Exact, unlike a - b * trunc(a / b).
    same(f(Frem, &[1e300, 3.0]), 1e300 % 3.0);
}

#[test]
fn fneg_and_fabs_work_on_the_sign_bit() {
    same(f(Fneg, &[0.0]), -0.0);
    same(f(Fneg, &[-0.0]), 0.0);
    same(f(Fneg, &[1.5]), -1.5);
    same(f(Fneg, &[f64::INFINITY]), f64::NEG_INFINITY);
    let nan = f64::NAN;
    assert_eq!(f(Fneg, &[nan]).to_bits(), nan.to_bits() ^ (1 << 63));
    assert_eq!(f(Fneg, &[f(Fneg, &[nan])]).to_bits(), nan.to_bits());
    same(f(Fabs, &[-0.0]), 0.0);
    same(f(Fabs, &[-2.5]), 2.5);
    same(f(Fabs, &[f64::NEG_INFINITY]), f64::INFINITY);
    assert_eq!(f(Fabs, &[-nan]).to_bits(), nan.to_bits() & !(1 << 63));
}

#[test]
fn elementary_functions() {
    use std::f64::consts::{E, FRAC_PI_2, FRAC_PI_4, PI};
    same(f(Sin, &[0.0]), 0.0);
    same(f(Sin, &[-0.0]), -0.0);
    same(f(Sin, &[1.0]), 1.0f64.sin());
    same(f(Cos, &[0.0]), 1.0);
    same(f(Tan, &[FRAC_PI_4]), FRAC_PI_4.tan());
    same(f(Asin, &[1.0]), FRAC_PI_2);
    same(f(Acos, &[-1.0]), PI);
    same(f(Atan, &[f64::INFINITY]), FRAC_PI_2);
    assert!(f(Asin, &[2.0]).is_nan());
    assert!(f(Sin, &[f64::INFINITY]).is_nan());
    same(f(Sinh, &[0.0]), 0.0);
    same(f(Cosh, &[0.0]), 1.0);
    same(f(Tanh, &[f64::INFINITY]), 1.0);
    same(f(Exp, &[0.0]), 1.0);
    same(f(Exp, &[1.0]), 1.0f64.exp());
    same(f(Exp, &[f64::NEG_INFINITY]), 0.0);
    same(f(Exp, &[1000.0]), f64::INFINITY);
    same(f(Log, &[1.0]), 0.0);
    same(f(Log, &[E]), E.ln());
    same(f(Log, &[0.0]), f64::NEG_INFINITY);
    same(f(Log, &[-0.0]), f64::NEG_INFINITY);
    assert!(f(Log, &[-1.0]).is_nan());
    same(f(Sqrt, &[4.0]), 2.0);
    same(f(Sqrt, &[-0.0]), -0.0);
    same(f(Sqrt, &[2.0]), std::f64::consts::SQRT_2);
    assert!(f(Sqrt, &[-1.0]).is_nan());
    same(f(Floor, &[-1.5]), -2.0);
    same(f(Floor, &[1.5]), 1.0);
    same(f(Floor, &[-0.5]), -1.0);
    same(f(Floor, &[0.5]), 0.0);
    same(f(Floor, &[-0.0]), -0.0);
    same(f(Pow, &[2.0, 10.0]), 1024.0);
    same(f(Pow, &[f64::NAN, 0.0]), 1.0);
    same(f(Pow, &[1.0, f64::NAN]), 1.0);
    assert!(f(Pow, &[-8.0, 1.0 / 3.0]).is_nan());
    same(f(Atan2, &[1.0, 0.0]), FRAC_PI_2);
    same(f(Atan2, &[0.0, -1.0]), PI);
    same(f(Atan2, &[-0.0, -1.0]), -PI);
    same(f(Atan2, &[1.0, 1.0]), FRAC_PI_4);
}

#[test]
fn fmin_fmax_ignore_nan_and_order_zeros() {
    let nan = f64::NAN;
    for (a, b) in [(-0.0, 0.0), (0.0, -0.0)] {
        same(f(Fmin, &[a, b]), -0.0);
        same(f(Fmax, &[a, b]), 0.0);
    }
    same(f(Fmin, &[0.0, 0.0]), 0.0);
    same(f(Fmax, &[-0.0, -0.0]), -0.0);
    same(f(Fmin, &[nan, 1.0]), 1.0);
    same(f(Fmin, &[1.0, nan]), 1.0);
    same(f(Fmax, &[nan, -1.0]), -1.0);
    same(f(Fmax, &[-1.0, nan]), -1.0);
    same(f(Fmin, &[nan, -0.0]), -0.0);
    same(f(Fmax, &[0.0, nan]), 0.0);
    assert!(f(Fmin, &[nan, nan]).is_nan());
    assert!(f(Fmax, &[nan, -nan]).is_nan());
    same(f(Fmin, &[1.0, 2.0]), 1.0);
    same(f(Fmin, &[2.0, 1.0]), 1.0);
    same(f(Fmax, &[1.0, 2.0]), 2.0);
    same(f(Fmax, &[2.0, 1.0]), 2.0);
    same(f(Fmin, &[f64::NEG_INFINITY, -1e308]), f64::NEG_INFINITY);
    same(f(Fmax, &[f64::INFINITY, nan]), f64::INFINITY);
}

#[test]
fn f64_comparisons_follow_ieee() {
    let nan = f64::NAN;
    let cmp = |op, a: f64, b: f64| ev(op, &[F(a), F(b)]);
    for op in [Feq, Flt, Fle, Fgt, Fge] {
        assert_eq!(cmp(op, nan, nan), B(false), "{op}");
        assert_eq!(cmp(op, nan, 1.0), B(false), "{op}");
        assert_eq!(cmp(op, 1.0, nan), B(false), "{op}");
    }
    assert_eq!(cmp(Fne, nan, nan), B(true));
    assert_eq!(cmp(Fne, nan, 1.0), B(true));
    assert_eq!(cmp(Feq, -0.0, 0.0), B(true));
    assert_eq!(cmp(Fne, -0.0, 0.0), B(false));
    assert_eq!(cmp(Flt, -0.0, 0.0), B(false));
    assert_eq!(cmp(Fle, -0.0, 0.0), B(true));
    assert_eq!(cmp(Fge, 0.0, -0.0), B(true));
    assert_eq!(cmp(Flt, 1.0, 2.0), B(true));
    assert_eq!(cmp(Fgt, 1.0, 2.0), B(false));
    assert_eq!(cmp(Flt, f64::NEG_INFINITY, f64::MIN), B(true));
}

#[test]
fn i64_arithmetic_wraps() {
    let (min, max) = (i64::MIN, i64::MAX);
    assert_eq!(i(Iadd, &[max, 1]), min);
    assert_eq!(i(Iadd, &[min, -1]), max);
    assert_eq!(i(Isub, &[min, 1]), max);
    assert_eq!(i(Isub, &[0, min]), min);
    assert_eq!(i(Imul, &[max, 2]), -2);
    assert_eq!(i(Imul, &[min, -1]), min);
    assert_eq!(i(Ineg, &[min]), min);
    assert_eq!(i(Ineg, &[5]), -5);
    assert_eq!(i(Iabs, &[min]), min);
    assert_eq!(i(Iabs, &[-7]), 7);
    assert_eq!(i(Iabs, &[max]), max);
    assert_eq!(i(Imin, &[min, max]), min);
    assert_eq!(i(Imax, &[min, max]), max);
    assert_eq!(i(Imin, &[-3, -3]), -3);
}

#[test]
fn i64_division_truncates_and_traps() {
    assert_eq!(i(Idiv, &[7, 2]), 3);
    assert_eq!(i(Idiv, &[-7, 2]), -3);
    assert_eq!(i(Idiv, &[7, -2]), -3);
    assert_eq!(i(Idiv, &[-7, -2]), 3);
    assert_eq!(i(Irem, &[7, 2]), 1);
    assert_eq!(i(Irem, &[-7, 2]), -1);
    assert_eq!(i(Irem, &[7, -2]), 1);
    assert_eq!(i(Irem, &[-7, -2]), -1);
    assert_eq!(i(Idiv, &[i64::MIN, 1]), i64::MIN);
    assert_eq!(i(Idiv, &[i64::MAX, -1]), -i64::MAX);
    assert_eq!(i(Irem, &[i64::MIN, 2]), 0);
    assert_eq!(i(Irem, &[i64::MIN, i64::MAX]), -1);
    assert_eq!(ierr(Idiv, 1, 0), EvalError::DivisionByZero);
    assert_eq!(ierr(Irem, 1, 0), EvalError::DivisionByZero);
    assert_eq!(ierr(Idiv, i64::MIN, 0), EvalError::DivisionByZero);
    assert_eq!(ierr(Idiv, i64::MIN, -1), EvalError::Overflow);
    assert_eq!(ierr(Irem, i64::MIN, -1), EvalError::Overflow);
    assert_eq!(EvalError::DivisionByZero.to_string(), "division by zero");
}

#[test]
fn i64_bitwise_and_shifts() {
    assert_eq!(i(Iand, &[0b1100, 0b1010]), 0b1000);
    assert_eq!(i(Ior, &[0b1100, 0b1010]), 0b1110);
    assert_eq!(i(Ixor, &[0b1100, 0b1010]), 0b0110);
    assert_eq!(i(Inot, &[0]), -1);
    assert_eq!(i(Inot, &[i64::MAX]), i64::MIN);
    // Counts are taken modulo 64.
    assert_eq!(i(Ishl, &[1, 0]), 1);
    assert_eq!(i(Ishl, &[1, 63]), i64::MIN);
    assert_eq!(i(Ishl, &[1, 64]), 1);
    assert_eq!(i(Ishl, &[1, 65]), 2);
    assert_eq!(i(Ishl, &[1, -1]), i64::MIN);
    assert_eq!(i(Ishl, &[3, i64::MIN]), 3);
    assert_eq!(i(Ishl, &[-1, 4]), -16);
    assert_eq!(i(Ishr, &[-16, 2]), -4);
    assert_eq!(i(Ishr, &[i64::MIN, 63]), -1);
    assert_eq!(i(Ishr, &[i64::MIN, 64]), i64::MIN);
    assert_eq!(i(Ishr, &[i64::MIN, 65]), i64::MIN / 2);
    assert_eq!(i(Ishr, &[i64::MIN, -1]), -1);
    assert_eq!(i(Ishr, &[i64::MAX, -1]), 0);
    assert_eq!(i(Ishr, &[256, 4]), 16);
}

#[test]
fn i64_comparisons_are_signed() {
    let cmp = |op, a: i64, b: i64| ev(op, &[I(a), I(b)]);
    assert_eq!(cmp(Ilt, -1, 0), B(true));
    assert_eq!(cmp(Ilt, i64::MIN, i64::MAX), B(true));
    assert_eq!(cmp(Ile, 3, 3), B(true));
    assert_eq!(cmp(Igt, 3, 3), B(false));
    assert_eq!(cmp(Ige, 3, 3), B(true));
    assert_eq!(cmp(Ieq, 3, 3), B(true));
    assert_eq!(cmp(Ine, 3, 3), B(false));
    assert_eq!(cmp(Igt, 0, -1), B(true));
}

#[test]
fn bool_operations() {
    for a in [false, true] {
        assert_eq!(ev(Bnot, &[B(a)]), B(!a));
        assert_eq!(ev(BoolToI64, &[B(a)]), I(a as i64));
        for b in [false, true] {
            assert_eq!(ev(Band, &[B(a), B(b)]), B(a && b));
            assert_eq!(ev(Bor, &[B(a), B(b)]), B(a || b));
            assert_eq!(ev(Bxor, &[B(a), B(b)]), B(a != b));
            assert_eq!(ev(Beq, &[B(a), B(b)]), B(a == b));
            assert_eq!(ev(Bne, &[B(a), B(b)]), B(a != b));
        }
    }
}

#[test]
fn conversions_saturate() {
    let to = |x: f64| ev(FcvtToI64, &[F(x)]);
    assert_eq!(to(f64::NAN), I(0));
    assert_eq!(to(-f64::NAN), I(0));
    assert_eq!(to(f64::INFINITY), I(i64::MAX));
    assert_eq!(to(f64::NEG_INFINITY), I(i64::MIN));
    assert_eq!(to(1e300), I(i64::MAX));
    assert_eq!(to(-1e300), I(i64::MIN));
    assert_eq!(to(9223372036854775808.0), I(i64::MAX));
    assert_eq!(to(-9223372036854775808.0), I(i64::MIN));
    assert_eq!(to(2.9), I(2));
    assert_eq!(to(-2.9), I(-2));
    assert_eq!(to(-0.5), I(0));
    assert_eq!(to(-0.0), I(0));
    let from = |x: i64| ev(FcvtFromI64, &[I(x)]);
    assert_eq!(from(3), F(3.0));
    assert_eq!(from(-3), F(-3.0));
    assert_eq!(from(0), F(0.0));
    assert_eq!(from(i64::MAX), F(9223372036854775808.0));
    assert_eq!(from(i64::MIN), F(-9223372036854775808.0));
    // 2^53 + 1 is not representable: ties to even gives 2^53.
    assert_eq!(from((1 << 53) + 1), F(9007199254740992.0));
    assert_eq!(from((1 << 53) + 3), F(9007199254740996.0));
}

#[test]
fn extern_symbols_cover_exactly_the_f64_operations() {
    let mut names = Vec::new();
    for &op in Opcode::ALL {
        let all_f64 =
            op.result_type() == Type::F64 && op.arg_types().iter().all(|&t| t == Type::F64);
        match extern_symbol(op) {
            Some(sym) => {
                assert!(all_f64, "{op}");
                assert_eq!(sym.op, op);
                assert_eq!(sym.name, format!("pinv_{}", op.name()));
                assert_eq!(sym.func.arity(), op.arity());
                assert!(!sym.func.addr().is_null());
                // The symbol computes what eval computes.
                let xs = [0.7, -1.25];
                let got = match sym.func {
                    F64Fn::Unary(g) => g(xs[0]),
                    F64Fn::Binary(g) => g(xs[0], xs[1]),
                };
                same(got, f(op, &xs[..op.arity()]));
                names.push(sym.name);
            }
            None => assert!(!all_f64, "{op} has no symbol"),
        }
    }
    assert_eq!(extern_symbols().count(), names.len());
    names.sort();
    names.dedup();
    assert_eq!(names.len(), extern_symbols().count());
}

// ---------------------------------------------------------------------------------------------
// Property tests: eval agrees with direct Rust evaluation (f64 compared by bits).

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        any::<f64>(),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            f64::MAX,
            1e300,
            -1e300,
            9223372036854775807.0,
            -9223372036854775808.0,
        ]),
    ]
}

fn any_i64() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -130i64..130,
        prop::sample::select(vec![i64::MIN, i64::MIN + 1, i64::MAX, -1, 0, 1, 63, 64, 65]),
    ]
}

/// The reference min/max on non-NaN values: IEEE total order, which puts -0 below +0.
fn ref_min(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => b,
        (_, true) => a,
        _ if a.total_cmp(&b).is_le() => a,
        _ => b,
    }
}

fn ref_max(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => b,
        (_, true) => a,
        _ if a.total_cmp(&b).is_ge() => a,
        _ => b,
    }
}

/// Division through i128, where nothing overflows; `i64::MIN % -1` is an error as in Rust.
fn ref_div(a: i64, b: i64, rem: bool) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    if a == i64::MIN && b == -1 {
        return Err(EvalError::Overflow);
    }
    let (a, b) = (a as i128, b as i128);
    let q = if rem { a % b } else { a / b };
    Ok(q as i64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn f64_binary_ops_match_rust(a in any_f64(), b in any_f64()) {
        let cases: [(Opcode, f64); 9] = [
            (Fadd, a + b),
            (Fsub, a - b),
            (Fmul, a * b),
            (Fdiv, a / b),
            (Frem, a % b),
            (Pow, a.powf(b)),
            (Atan2, a.atan2(b)),
            (Fmin, ref_min(a, b)),
            (Fmax, ref_max(a, b)),
        ];
        for (op, want) in cases {
            let got = f(op, &[a, b]);
            if matches!(op, Fmin | Fmax) && a.is_nan() && b.is_nan() {
                prop_assert!(got.is_nan());
            } else {
                prop_assert_eq!(got.to_bits(), want.to_bits(), "{} {:?} {:?}", op, a, b);
            }
        }
        let cmps: [(Opcode, bool); 6] =
            [(Feq, a == b), (Fne, a != b), (Flt, a < b), (Fle, a <= b), (Fgt, a > b), (Fge, a >= b)];
        for (op, want) in cmps {
            prop_assert_eq!(ev(op, &[F(a), F(b)]), B(want), "{} {:?} {:?}", op, a, b);
        }
    }

    #[test]
    fn f64_unary_ops_match_rust(x in any_f64()) {
        let cases: [(Opcode, f64); 16] = [
            (Fneg, -x),
            (Fabs, x.abs()),
            (Sin, x.sin()),
            (Cos, x.cos()),
            (Tan, x.tan()),
            (Asin, x.asin()),
            (Acos, x.acos()),
            (Atan, x.atan()),
            (Sinh, x.sinh()),
            (Cosh, x.cosh()),
            (Tanh, x.tanh()),
            (Exp, x.exp()),
            (Log, x.ln()),
            (Sqrt, x.sqrt()),
            (Floor, x.floor()),
            (Fneg, f64::from_bits(x.to_bits() ^ 0x8000_0000_0000_0000)),
        ];
        for (op, want) in cases {
            prop_assert_eq!(f(op, &[x]).to_bits(), want.to_bits(), "{} {:?}", op, x);
        }
        // Saturating conversion, against a reference that never uses `as` on an out-of-range value.
        let want = if x.is_nan() {
            0
        } else if x >= 9223372036854775808.0 {
            i64::MAX
        } else if x <= -9223372036854775808.0 {
            i64::MIN
        } else {
            x.trunc() as i64
        };
        prop_assert_eq!(ev(FcvtToI64, &[F(x)]), I(want));
    }

    #[test]
    fn i64_ops_match_rust(a in any_i64(), b in any_i64()) {
        prop_assert_eq!(i(Iadd, &[a, b]), (a as i128 + b as i128) as i64);
        prop_assert_eq!(i(Isub, &[a, b]), (a as i128 - b as i128) as i64);
        prop_assert_eq!(i(Imul, &[a, b]), (a as i128 * b as i128) as i64);
        prop_assert_eq!(eval(Idiv, &[I(a), I(b)]), ref_div(a, b, false).map(I));
        prop_assert_eq!(eval(Irem, &[I(a), I(b)]), ref_div(a, b, true).map(I));
        prop_assert_eq!(i(Ineg, &[a]), (-(a as i128)) as i64);
        prop_assert_eq!(i(Iabs, &[a]), (a as i128).abs() as i64);
        prop_assert_eq!(i(Imin, &[a, b]), std::cmp::min(a, b));
        prop_assert_eq!(i(Imax, &[a, b]), std::cmp::max(a, b));
        prop_assert_eq!(i(Iand, &[a, b]), a & b);
        prop_assert_eq!(i(Ior, &[a, b]), a | b);
        prop_assert_eq!(i(Ixor, &[a, b]), a ^ b);
        prop_assert_eq!(i(Inot, &[a]), !a);
        let count = b.rem_euclid(64) as u32;
        prop_assert_eq!(i(Ishl, &[a, b]), ((a as i128) << count) as i64);
        prop_assert_eq!(i(Ishr, &[a, b]), a >> count);
        prop_assert_eq!(ev(Ieq, &[I(a), I(b)]), B(a == b));
        prop_assert_eq!(ev(Ine, &[I(a), I(b)]), B(a != b));
        prop_assert_eq!(ev(Ilt, &[I(a), I(b)]), B(a < b));
        prop_assert_eq!(ev(Ile, &[I(a), I(b)]), B(a <= b));
        prop_assert_eq!(ev(Igt, &[I(a), I(b)]), B(a > b));
        prop_assert_eq!(ev(Ige, &[I(a), I(b)]), B(a >= b));
        prop_assert_eq!(ev(FcvtFromI64, &[I(a)]), F(a as f64));
    }
}
