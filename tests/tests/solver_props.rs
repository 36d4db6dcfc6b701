//! Property tests of the solvers added for acceptance (`invert/src/solve/divmod.rs` and
//! `newton.rs`): for random x, the PGF's θ gives x back bit for bit (completeness); for random
//! θ, the inverse gives an x with f(x) = y or a domain error, never a wrong x (soundness);
//! including the edges: the i64 extremes for a quotient and remainder, and a variance of 0 (the
//! one point where the system's Jacobian is singular) for Newton's method.
//!
//! `PROPTEST_CASES` sets the cases per property (default 64).

use pinv::{Const, Program};
use proptest::prelude::*;
use std::sync::OnceLock;

const SOURCE: &str = "
fn split(x: i64) -> (i64, i64) { (x / 7, x % 7) }
fn split_neg(x: i64) -> (i64, i64) { (x / -3, x % -3) }
fn split_big(x: i64) -> (i64, i64) { (x / 9223372036854775807, x % 9223372036854775807) }
fn stats3(a: f64, b: f64, c: f64) -> (f64, f64) {
    let m = (a + b + c) / 3.0;
    let v = ((a - m) * (a - m) + (b - m) * (b - m) + (c - m) * (c - m)) / 3.0;
    (m, v)
}
fn exp_mix(x: f64, y: f64) -> (f64, f64) { (exp(x) + y, x + exp(y)) }
";

fn program() -> &'static Program {
    static P: OnceLock<Program> = OnceLock::new();
    P.get_or_init(|| Program::parse("solvers.pinv", SOURCE).expect("compiles"))
}

/// Each function's inverse, built once (inverting runs the e-graph, which takes milliseconds).
fn inverse(name: &str) -> &'static pinv::Inverse {
    static INVERSES: OnceLock<std::collections::HashMap<&'static str, pinv::Inverse>> =
        OnceLock::new();
    let all = INVERSES.get_or_init(|| {
        ["split", "split_neg", "split_big", "stats3", "exp_mix"]
            .into_iter()
            .map(|n| (n, program().invert(n).expect("invertible")))
            .collect()
    });
    &all[name]
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

fn i64s() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -1000i64..1000,
        Just(i64::MIN),
        Just(i64::MAX),
        Just(i64::MIN + 1),
    ]
}

/// Round trip through the PGF, then soundness of the inverse at y for a θ: the same x back, and
/// f(inverse(y, θ)) = y whenever the inverse gives an x.
fn round_trip_and_sound(name: &str, x0: &[Const], theta: &[Const]) -> Result<(), TestCaseError> {
    let p = program();
    let inverse = inverse(name);
    let y = p.run(name, x0).expect("runs");
    let tape = inverse.pgf(x0).expect("pgf");
    let back = inverse
        .call_with_tape(&y, &tape)
        .expect("the PGF's θ inverts");
    let bits = |v: &[Const]| v.iter().map(|c| c.bits()).collect::<Vec<_>>();
    prop_assert_eq!(bits(&back), bits(x0), "{}{:?}: θ = {:?}", name, x0, tape);
    if let Ok(x) = inverse.call_with_tape(&y, theta) {
        let fx = p.run(name, &x).expect("runs");
        for (a, b) in fx.iter().zip(&y) {
            prop_assert!(
                pinv::check::close(*a, *b, 1e-9),
                "{}: x = {:?} gives {:?}, not {:?}",
                name,
                x,
                fx,
                y
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_quotient_and_remainder_give_their_dividend(x in i64s()) {
        for name in ["split", "split_neg", "split_big"] {
            round_trip_and_sound(name, &[Const::I64(x)], &[])?;
        }
    }

    #[test]
    fn newtons_method_is_sound_and_complete(
        a in -50.0f64..50.0,
        b in -50.0f64..50.0,
        c in -50.0f64..50.0,
        s in proptest::collection::vec(-1e3f64..1e3, 3),
    ) {
        let theta: Vec<Const> = s.iter().map(|&v| Const::F64(v)).collect();
        round_trip_and_sound("stats3", &[Const::F64(a), Const::F64(b), Const::F64(c)], &theta)?;
        // A variance of 0: (m, m, m) alone, where the Jacobian is singular.
        round_trip_and_sound("stats3", &[Const::F64(a), Const::F64(a), Const::F64(a)], &theta)?;
        let (x, y) = (a / 10.0, b / 10.0);
        round_trip_and_sound("exp_mix", &[Const::F64(x), Const::F64(y)], &theta[..2])?;
    }
}
