//! Property tests of the solvers added for acceptance (`invert/src/solve/divmod.rs`,
//! `newton.rs`, `linear_rt.rs`, `numeric.rs`, and integers drawn first in `reorient/region.rs`):
//! for random x, the PGF's θ gives x back bit for bit (completeness); for random θ, the inverse
//! gives an x with f(x) = y or a domain error, never a wrong x (soundness) nor another kind of
//! failure; including the edges:
//! the i64 extremes for a quotient and remainder, a variance of 0 (the one point where the
//! system's Jacobian is singular) and a Jacobian singular along whole curves for Newton's
//! method, a variance of 0 and a negative one (the edge of the image, and beyond it) for a
//! function of one linear form, a zero matrix (every unknown free) and
//! random θ that make a matrix singular, and matrices of rank 2 of 3 and 1 of 2 (θ names the
//! unknowns of the columns without a pivot) for a linear system with run-time coefficients, and a
//! double root (y = 0) for a numeric root.
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
fn rot2(x: f64, y: f64, a: f64, b: f64) -> (f64, f64) { (a * x - b * y, b * x + a * y) }
fn cyc3(x: f64, y: f64, z: f64, g: f64) -> (f64, f64, f64) { (g * x + y, g * y + z, g * z + x) }
fn twice(x: f64, y: f64, a: f64, b: f64) -> (f64, f64) { (a * x + b * y, 2.0 * a * x + 2.0 * b * y) }
fn gap(a: f64, b: f64) -> f64 { max(a, b) - min(a, b) }
fn mv2(a: f64, b: f64) -> (f64, f64) {
    let m = (a + b) / 2.0;
    (m, ((a - m) * (a - m) + (b - m) * (b - m)) / 2.0)
}
fn curve(x: f64, y: f64) -> (f64, f64) { (x * x + y * y, x * y * y) }
fn cubic(x: f64) -> f64 { x * x * x - x }
fn fare(n: i64, x: f64) -> f64 { (n as f64) * 2.5 + x }
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
        [
            "split",
            "split_neg",
            "split_big",
            "stats3",
            "exp_mix",
            "rot2",
            "cyc3",
            "twice",
            "gap",
            "mv2",
            "curve",
            "cubic",
            "fare",
        ]
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
    round_trip(name, x0, theta, None)
}

/// [`round_trip_and_sound`] with x given back within `check`'s completeness tolerance
/// (relative, 1e-9) instead of bit for bit: for a solver whose arithmetic rounds (elimination
/// on a run-time matrix).
fn round_trip_close_and_sound(
    name: &str,
    x0: &[Const],
    theta: &[Const],
) -> Result<(), TestCaseError> {
    round_trip(name, x0, theta, Some(1e-9))
}

fn round_trip(
    name: &str,
    x0: &[Const],
    theta: &[Const],
    tolerance: Option<f64>,
) -> Result<(), TestCaseError> {
    let p = program();
    let inverse = inverse(name);
    let y = p.run(name, x0).expect("runs");
    let tape = inverse.pgf(x0).expect("pgf");
    let back = inverse
        .call_with_tape(&y, &tape)
        .expect("the PGF's θ inverts");
    match tolerance {
        None => {
            let bits = |v: &[Const]| v.iter().map(|c| c.bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&back), bits(x0), "{}{:?}: θ = {:?}", name, x0, tape);
        }
        Some(tol) => prop_assert!(
            back.iter()
                .zip(x0)
                .all(|(a, b)| pinv::check::close(*a, *b, tol)),
            "{}{:?}: θ = {:?} gives back {:?}",
            name,
            x0,
            tape,
            back
        ),
    }
    // θ may hold more values than the inverse reads (the rest is left) or fewer (a domain
    // error: the tape runs out).
    match inverse.call(&y, &mut pinv::theta::Tape::new(theta.to_vec())) {
        Ok(x) => {
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
        // A θ that gives no preimage is a domain error, never another failure.
        Err(e) => prop_assert!(e.is_domain_error(), "{}: θ = {:?}: {}", name, theta, e),
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

    #[test]
    fn newton_is_sound_and_complete_where_the_jacobian_is_singular_along_curves(
        x in prop_oneof![Just(0.0), -100.0f64..100.0],
        y in prop_oneof![Just(0.0), -100.0f64..100.0],
        s in proptest::collection::vec(prop_oneof![Just(0.0), -1e3f64..1e3], 2),
    ) {
        // (x² + y², x·y²): J = [[2x, 2y], [y², 2xy]], det = 2y(2x² − y²), zero along y = 0
        // and y = ±√2·x.
        let theta: Vec<Const> = s.iter().map(|&v| Const::F64(v)).collect();
        let f = |a: f64, b: f64| [Const::F64(a), Const::F64(b)];
        round_trip_and_sound("curve", &f(x, y), &theta)?;
        round_trip_and_sound("curve", &f(x, 0.0), &theta)?;
        round_trip_and_sound("curve", &f(x, std::f64::consts::SQRT_2 * x), &theta)?;
    }

    #[test]
    fn a_function_of_one_linear_form_is_sound_at_the_edge_of_its_image(
        a in -1e3f64..1e3,
        d in prop_oneof![Just(0.0), -1e-6f64..1e-6, -1e3f64..1e3],
        v in prop_oneof![Just(f64::MIN_POSITIVE), 1e-300f64..1e-200, 1e-3f64..1e3],
        s in proptest::collection::vec(prop_oneof![Just(0.0), Just(1.0), -1e3f64..1e3], 3),
    ) {
        // The mean and variance of two numbers: a variance of 0 (a = b) is the edge of the
        // image, where the sign θ picks between equal roots.
        let theta: Vec<Const> = s.iter().map(|&v| Const::F64(v)).collect();
        let f = |a: f64, b: f64| [Const::F64(a), Const::F64(b)];
        round_trip_close_and_sound("mv2", &f(a, a + d), &theta)?;
        round_trip_close_and_sound("mv2", &f(a, a), &theta)?;
        // Beyond the edge: a negative variance has no preimage, whatever θ is.
        let beyond = [Const::F64(a), Const::F64(-v)];
        let inverse = inverse("mv2");
        for tape in [theta.clone(), vec![Const::I64(0)], vec![Const::I64(1)], Vec::new()] {
            prop_assert!(inverse.call_with_tape(&beyond, &tape).is_err(), "θ {:?}", tape);
        }
    }

    #[test]
    fn a_linear_system_with_run_time_coefficients_is_sound_and_complete(
        x in -1e3f64..1e3,
        y in -1e3f64..1e3,
        a in prop_oneof![Just(0.0), -10.0f64..10.0],
        b in prop_oneof![Just(0.0), -10.0f64..10.0],
        s in proptest::collection::vec(prop_oneof![Just(0.0), -1e3f64..1e3], 4),
    ) {
        let theta: Vec<Const> = s.iter().map(|&v| Const::F64(v)).collect();
        let f = |v: [f64; 4]| v.map(Const::F64);
        round_trip_close_and_sound("rot2", &f([x, y, a, b]), &theta)?;
        // The zero matrix: every (x, y) gives (0, 0), and θ names x and y.
        round_trip_and_sound("rot2", &f([x, y, 0.0, 0.0]), &theta)?;
        // Rank 2 of 3 (a cyclic gain of −1), and a matrix whose second row is twice its first:
        // θ names the unknowns of the columns without a pivot.
        let g = if a == 0.0 { -1.0 } else { a };
        round_trip_close_and_sound("cyc3", &f([x, y, b, g]), &theta)?;
        round_trip_close_and_sound("cyc3", &f([x, y, b, -1.0]), &theta)?;
        round_trip_close_and_sound("twice", &f([x, y, a, b]), &theta)?;
    }

    #[test]
    fn numeric_roots_are_sound_and_complete_at_double_roots_too(
        a in -100.0f64..100.0,
        d in prop_oneof![Just(0.0), -1e-3f64..1e-3, -10.0f64..10.0],
        s in proptest::collection::vec(-1e3f64..1e3, 2),
    ) {
        let theta: Vec<Const> = s.iter().map(|&v| Const::F64(v)).collect();
        // b = a + d: y = |d|, two roots a ± |d| within one grid step for a small d, one double
        // root for d = 0.
        round_trip_and_sound("gap", &[Const::F64(a), Const::F64(a + d)], &theta)?;
        round_trip_and_sound("cubic", &[Const::F64(a / 10.0)], &theta[..1])?;
    }

    #[test]
    fn integers_drawn_first_are_sound_and_complete(
        n in i64s(),
        x in prop_oneof![Just(0.0), -1e6f64..1e6],
        k in i64s(),
        r in -1e6f64..1e6,
    ) {
        // x = y − 2.5·n rounds: back within the tolerance, as `check` asks (a float step settles
        // exactly only where the inverse walks back its own results: loops, recursion).
        let (x0, theta) = ([Const::I64(n), Const::F64(x)], [Const::I64(k), Const::F64(r)]);
        round_trip_close_and_sound("fare", &x0, &theta)?;
    }
}
