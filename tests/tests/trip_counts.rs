//! Trip counts from the data (`invert/src/reorient/trips.rs`): a loop whose bound only its exit
//! test reads is inverted by scanning the loop forward for the trip counts that give y, and a
//! loop whose test compares a value with a constant narrows that value at its exit to what a
//! trip round the loop leaves. Both keep the inverse sound and complete, accept almost every θ,
//! and give the same tapes and x in the interpreter and native code.
//!
//! A loop inside the scanned loop is run by the scan as part of each trip (nested loops over two
//! counters).
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 300 here).

use pinv::check::{check_function, CheckConfig};
use pinv::{Const, Program};
use pinv_tests::{corpus_dir, round_trip};

fn load(path: &str) -> Program {
    Program::load(corpus_dir().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn data_dependent_trip_counts_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let files: [(&str, &[&str]); 3] = [
        ("loops.pinv", &["triangle"]),
        ("recursion.pinv", &["steps_to"]),
        (
            "../programs/trips.pinv",
            &[
                "odd_sum",
                "down_to",
                "even_sum",
                "doublings",
                "years_to",
                "scaled_count",
                "halvings",
                "digits",
                "cool",
                "sum_squares",
                "big_steps",
                "pairs",
                "pair_sums",
                "rows",
                "stairs",
                "fact_loop",
                "pow3",
                "savings",
                "debt",
                "guarded_total",
                "guarded_growth",
                "guarded_compound",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (file, names) in files {
        let program = load(file);
        for &name in names {
            let r = check_function(&program, name, &config);
            let sound_and_complete = r.sound_and_complete();
            // `check` measures ≥ 99% for each (the README's figures); the floor leaves room for
            // other case counts.
            let accepted = r.acceptance();
            if !(sound_and_complete && accepted >= 90.0) {
                failures.push(format!(
                    "{file} {name}: {:?} {:?}, accepted {accepted:.1}%",
                    r.status, r.message
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn long_loops_round_trip_in_both_engines() {
    use Const::{F64 as F, I64 as I};
    let loops = load("loops.pinv");
    for x in [-5, 0, 1, 2, 3, 100_000] {
        round_trip(&loops, "triangle", &[I(x)]);
    }
    let trips = load("../programs/trips.pinv");
    for x in [
        i64::MIN,
        -3,
        0,
        1,
        2,
        3,
        1 << 40,
        (1 << 40) + 12_345,
        i64::MAX,
    ] {
        round_trip(&trips, "halvings", &[I(x)]);
        round_trip(&trips, "digits", &[I(x)]);
    }
    for x in [f64::NEG_INFINITY, -1.0, 0.5, 1.0, 3.0, 1e300, f64::INFINITY] {
        round_trip(&trips, "doublings", &[F(x)]);
    }
    for x in [-2.0, 100.0, 150.0, 1e6, 1e12] {
        round_trip(&trips, "years_to", &[F(x)]);
        round_trip(&trips, "cool", &[F(x)]);
    }
    // Past a wrap-around of the sum: the tail's share of θ names these trip counts.
    for n in [0, 7, 40_000, 43_000, 50_000, 90_000] {
        round_trip(&trips, "big_steps", &[I(n)]);
    }
    // A sum of a counter running down rises, then falls for good once the counter is negative.
    for lo in [-300, -150, -101, -100, -1, 0, 1, 50, 99, 100, 200] {
        round_trip(&trips, "down_to", &[I(lo)]);
    }
    for n in [-1, 0, 5, 1000] {
        round_trip(&trips, "sum_squares", &[I(n)]);
        round_trip(&trips, "odd_sum", &[I(n)]);
        round_trip(&trips, "even_sum", &[I(n)]);
        round_trip(&trips, "scaled_count", &[F(1.5), I(n)]);
    }
    // Nested loops: about n²/2 inner trips, run by the scan.
    for n in [-2, 0, 1, 2, 3, 50, 300] {
        round_trip(&trips, "pairs", &[I(n)]);
        round_trip(&trips, "pair_sums", &[I(n)]);
        round_trip(&trips, "rows", &[I(n)]);
        round_trip(&trips, "stairs", &[I(n)]);
    }
}

#[test]
fn each_trip_count_that_gives_y_is_a_theta() {
    // y = 0 comes from no trip (n < 0) and from one trip (n = 0, adding 0): two candidates, and
    // θ names each; every other y of the image has one, and the bound is then one value.
    let loops = load("loops.pinv");
    let inverse = loops.invert("triangle").expect("invertible");
    let none = inverse
        .call_with_tape(&[Const::I64(0)], &[Const::I64(0), Const::I64(-7)])
        .expect("no trip");
    assert_eq!(none, [Const::I64(-7)]);
    let one = inverse
        .call_with_tape(&[Const::I64(0)], &[Const::I64(1), Const::I64(0)])
        .expect("one trip");
    assert_eq!(one, [Const::I64(0)]);
    let x = inverse
        .call_with_tape(&[Const::I64(5050)], &[Const::I64(0), Const::I64(100)])
        .expect("101 trips");
    assert_eq!(x, [Const::I64(100)]);
    // Outside the image: a clear domain error, not a search to the limit.
    let e = inverse
        .call_with_tape(&[Const::I64(2)], &[Const::I64(0), Const::I64(1)])
        .expect_err("no triangle number is 2");
    assert!(
        e.to_string().contains("no number of trips round the loop"),
        "{e}"
    );
    let e = inverse
        .call_with_tape(&[Const::I64(-4)], &[Const::I64(0), Const::I64(1)])
        .expect_err("triangle numbers are not negative");
    assert!(
        e.to_string().contains("no number of trips round the loop"),
        "{e}"
    );
}

#[test]
fn a_loop_entered_or_not_is_told_by_what_it_leaves() {
    // halvings(x) = 0 for every x ≤ 1 (the loop is never entered: x is free below 2), and for
    // y ≥ 1 the loop went round, so r left it at exactly 1: x is 2^y plus the remainders θ
    // picks on the way back, and no draw is wasted on r.
    let trips = load("../programs/trips.pinv");
    let inverse = trips.invert("halvings").expect("invertible");
    let x = inverse
        .call_with_tape(&[Const::I64(0)], &[Const::I64(-40)])
        .expect("never entered");
    assert_eq!(x, [Const::I64(-40)]);
    let x = inverse
        .call_with_tape(
            &[Const::I64(3)],
            &[Const::I64(1), Const::I64(0), Const::I64(0), Const::I64(0)],
        )
        .expect("three trips");
    assert_eq!(x, [Const::I64(8)]);
}

#[test]
fn a_sum_that_may_wrap_keeps_its_tail_in_a_small_share_of_theta() {
    // big_steps(50000) wraps round; its θ names a trip count past the wrap with a first θ below
    // 2^-20, and every first θ above that names the trip counts before any wrap.
    let trips = load("../programs/trips.pinv");
    let inverse = trips.invert("big_steps").expect("invertible");
    let x0 = [Const::I64(50_000)];
    let y = trips.run("big_steps", &x0).expect("runs");
    let theta = inverse.pgf(&x0).expect("pgf");
    let Const::F64(u) = theta[0] else {
        panic!("{theta:?}")
    };
    assert!(u < 1.0 / (1u64 << 20) as f64, "{theta:?}");
    assert_eq!(inverse.call_with_tape(&y, &theta).expect("inverts"), x0);
    let x0 = [Const::I64(7)];
    let theta = inverse.pgf(&x0).expect("pgf");
    let Const::F64(u) = theta[0] else {
        panic!("{theta:?}")
    };
    assert!(u > 1.0 / (1u64 << 20) as f64, "{theta:?}");
    // Any first θ outside the tail gives 7 back for its y.
    let y = trips.run("big_steps", &x0).expect("runs");
    for u in [0.001, 0.5, 0.999_999, 1.0] {
        let x = inverse
            .call_with_tape(&y, &[Const::F64(u), Const::I64(7)])
            .expect("one trip count before any wrap");
        assert_eq!(x, x0);
    }
}

#[test]
fn products_one_way_floats_and_guard_clauses_round_trip() {
    // A product that reaches 0 stays 0 (fact_loop from 66 trips); one that never does (pow3) is
    // scanned up to a horizon of 4,096 trips, past which its counts are the tail's; an f64 that
    // never falls (savings) stops the scan once past y, and at ∞ its later counts are the
    // tail's. Each round trips, in both engines, on either side of those edges.
    let trips = load("../programs/trips.pinv");
    use Const::I64 as I;
    for n in [-4, 0, 1, 2, 21, 65, 66, 100, 4095, 4096, 5000] {
        round_trip(&trips, "fact_loop", &[I(n)]);
        round_trip(&trips, "pow3", &[I(n)]);
    }
    for n in [-1, 0, 10, 14427, 14428, 14500] {
        round_trip(&trips, "savings", &[I(n)]);
        round_trip(&trips, "debt", &[I(n)]);
    }
    // The guard clauses were dropped, and the report says so.
    for name in ["guarded_total", "guarded_growth"] {
        let inverse = trips.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        assert!(report.redundant_guard_dropped, "{report}");
        for n in [i64::MIN, -3, 0, 1, 2, 30] {
            round_trip(&trips, name, &[I(n)]);
        }
    }
    let inverse = trips.invert("guarded_compound").expect("invertible");
    assert!(inverse.isolation()[0].redundant_guard_dropped);
    for n in [i64::MIN, -3, 0, 1, 2, 30] {
        round_trip(&trips, "guarded_compound", &[Const::F64(250.0), I(n)]);
    }
    // y = ∞ is matched exactly: the first count that overflows, not every count (∞'s
    // tolerance was ∞ in the scan's comparison).
    let inverse = trips.invert("savings").expect("invertible");
    let y = [Const::F64(f64::INFINITY)];
    let first = (0..)
        .find(|&n| trips.run("savings", &[I(n)]).expect("runs") == y)
        .expect("overflows");
    for u in [0.001, 0.5, 1.0] {
        let x = inverse
            .call_with_tape(&y, &[Const::F64(u), I(first)])
            .expect("the first count that overflows");
        assert_eq!(x, [I(first)]);
    }
}

/// Loops whose trip count is a constant are unrolled before inversion
/// (`pinv_core::ir::unroll`): `fixed_trips.pinv`'s sums, Horner's rule, Euler steps and a
/// weighted sum with a branch on the counter accept every θ. Walked back as loops, all but the
/// Euler steps and the mixer accepted 0% (the values the loop carries came from θ), and
/// `drift_mean` was incomplete.
#[test]
fn constant_trip_counts_are_unrolled_and_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let program = load("../programs/fixed_trips.pinv");
    let mut failures = Vec::new();
    for name in program.function_names() {
        let r = check_function(&program, name, &config);
        // `check --cases 1000` measures 100% for each.
        let accepted = r.acceptance();
        if !(r.sound_and_complete() && accepted >= 90.0) {
            failures.push(format!(
                "{name}: {:?} {:?}, accepted {accepted:.1}%",
                r.status, r.message
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The isolation report says what was unrolled.
    let inverse = program.invert("drift_mean").expect("invertible");
    let report = &inverse.isolation()[0];
    assert_eq!(report.unrolled, 3, "{report}");
    assert!(
        report.to_string().contains("unrolled first: 3 trip(s)"),
        "{report}"
    );
    use Const::{F64 as F, I64 as I};
    // Finite inputs: a linear system solves its pivot as y less the other terms, which for
    // an infinite y and another infinite input is inf − inf, no number.
    for (a, b) in [(0.0, -0.0), (1.5, -2.25), (1e300, 3.0), (-7.25e-300, 1.0)] {
        round_trip(&program, "drift_mean", &[F(a), F(b), F(a - b)]);
        round_trip(&program, "blend", &[F(a), F(b)]);
        round_trip(&program, "fall", &[F(a), F(b)]);
        round_trip(&program, "alternating", &[F(a), F(b)]);
        round_trip(&program, "horner", &[F(b)]);
    }
    for x in [i64::MIN, -1, 0, 7, i64::MAX] {
        round_trip(&program, "mix_rounds", &[I(x)]);
    }
}
