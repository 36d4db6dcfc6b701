//! E-graph isolation (issue 6): reused unknowns are rewritten so that each is solved once, and the
//! fan-out corpus goes from "sound but rarely accepted" to "accepted".
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000).

use pinv::check::{check_function, check_inverse, CheckConfig, Status};
use pinv::egraph::{IsolationConfig, Outcome, Stop};
use pinv::reorient::ReorientOptions;
use pinv::theta::SlotKind;
use pinv::{Const, Program, Sampler};
use pinv_tests::corpus_dir;

fn cases() -> usize {
    pinv_tests::check_cases()
}

fn fanout() -> Program {
    Program::load(corpus_dir().join("fanout.pinv")).expect("fanout.pinv compiles")
}

const FANOUT: &[&str] = &["twice", "fdupl", "xy_plus_x", "quad", "reuse"];

#[test]
fn fanout_corpus_is_accepted() {
    let program = fanout();
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    for &name in FANOUT {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        if report.outcome != Outcome::Isolated {
            failures.push(format!("{name}: not isolated:\n{report}"));
        }
        let r = check_inverse(&inverse, &config);
        let ok = r.status == Status::Ok
            && r.sound_and_complete()
            && r.soundness.trials == config.cases
            && r.acceptance() >= 99.0;
        if !ok {
            failures.push(format!(
                "{name}: {:?}, accepted {:.1}%, {:?}, {:?}: {}",
                r.status,
                r.acceptance(),
                r.soundness,
                r.completeness,
                r.message.unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Inputs in [−10, 10] from a seed.
fn inputs(n: usize, arity: usize, seed: u64) -> Vec<Vec<Const>> {
    let mut s = Sampler::new(seed);
    (0..n)
        .map(|_| {
            (0..arity)
                .map(|_| Const::F64((s.real() * 7.3) % 10.0))
                .collect()
        })
        .collect()
}

#[test]
fn twice_has_no_theta_left() {
    // a + a = 2·a: the inverse is y / 2. The only θ in the schema is the rule's offset for
    // outputs that do not pin the answer (infinities, NaN): never read for finite outputs.
    let program = fanout();
    let inverse = program.invert("twice").expect("invertible");
    assert!(
        inverse.schema().slots.iter().all(|s| s.conditional),
        "{}",
        inverse.schema()
    );
    for x in inputs(300, 1, 1) {
        let y = inverse.forward(&x).expect("runs");
        let theta = inverse.pgf(&x).expect("pgf");
        assert!(theta.is_empty(), "x = {x:?}: θ = {theta:?}");
        let back = inverse.call_with_tape(&y, &[]).expect("no θ needed");
        assert!(pinv::check::close(back[0], x[0], 1e-12), "{x:?} → {back:?}");
    }
}

#[test]
fn quad_has_only_its_root_choice() {
    // x² + 3x = (x + 1.5)² − 2.25: the only θ read for finite outputs is the sign choice.
    let program = fanout();
    let inverse = program.invert("quad").expect("invertible");
    let always: Vec<_> = inverse
        .schema()
        .slots
        .iter()
        .filter(|s| !s.conditional)
        .collect();
    assert_eq!(always.len(), 1, "{}", inverse.schema());
    assert_eq!(always[0].kind, SlotKind::Choice { n: 2 });
    for x in inputs(300, 1, 2) {
        let y = inverse.forward(&x).expect("runs");
        let theta = inverse.pgf(&x).expect("pgf");
        assert!(
            matches!(theta.as_slice(), [Const::I64(0 | 1)]),
            "x = {x:?}: θ = {theta:?}"
        );
        // Both signs give a preimage: the two roots of x² + 3x = y.
        let a = inverse
            .call_with_tape(&y, &[Const::I64(0)])
            .expect("root 0");
        let b = inverse
            .call_with_tape(&y, &[Const::I64(1)])
            .expect("root 1");
        let (a, b) = (a[0].as_f64().unwrap(), b[0].as_f64().unwrap());
        assert!((a + b + 3.0).abs() < 1e-6, "{x:?}: roots {a} and {b}");
    }
}

#[test]
fn tangled_unknowns_choose_a_theta() {
    // In `reuse` neither x nor y can be written once; with the shared value x + y as θ the
    // rest isolates: (x + y)·((x + y) + (y + 2)).
    let program = fanout();
    let inverse = program.invert("reuse").expect("invertible");
    let report = &inverse.isolation()[0];
    assert_eq!(report.outcome, Outcome::Isolated, "{report}");
    assert!(
        report.runs.iter().any(|r| r.pivots == ["(fadd x y)"]),
        "{report}"
    );
    assert_eq!(report.after.checks, 0);
}

/// Once θ gives `a`, `a·a + (a + 2)` is computed forward, and as written: the e-graph's
/// `a + (a² + 2)` differs from it in the last bit for some `a`, and then `y / (a·a + a + 2)` is
/// no longer the power of two `2ⁿ` the PGF recorded its θ for (about 1% of inputs were lost).
#[test]
fn what_theta_gives_alone_is_computed_as_written() {
    let program = Program::parse(
        "gain.pinv",
        "fn octave_gain(a: f64, n: i64) -> f64 { (a * a + (a - -2.0)) * ((1 << n) as f64) }",
    )
    .expect("compiles");
    let inverse = program.invert("octave_gain").expect("invertible");
    let report = &inverse.isolation()[0];
    assert_eq!(report.thetas, ["a"], "{report}");
    assert!(
        report.rewritten[0].contains("(fadd (fmul a a) (fsub a -2.0))"),
        "{report}"
    );
    let config = CheckConfig {
        cases: cases().max(1000),
        ..CheckConfig::default()
    };
    let r = check_inverse(&inverse, &config);
    assert!(
        r.sound_and_complete(),
        "{:?}: {:?}",
        r.completeness,
        r.message
    );
}

/// Isolation decides the same way every time: the random points that check a rewrite are drawn
/// for the variables in name order. They were drawn in a hash map's order, which differs between
/// maps, so this function came out partly isolated or not from one inversion to the next
/// (gen_check seed 1614).
#[test]
fn isolation_decides_the_same_every_time() {
    let source = "fn g1(p0: i64, p1: i64) -> i64 { (p0 % (-p1)) / (((-1) / p0) % (p1 - p0)) }";
    let text = || {
        let program = Program::parse("g1.pinv", source).expect("compiles");
        let inverse = program.invert("g1").expect("invertible");
        format!("{}\n{}", inverse.isolation()[0], inverse.inverse_ir())
    };
    let first = text();
    for _ in 0..12 {
        assert_eq!(text(), first);
    }
}

#[test]
fn numeric_fallback_for_one_unknown() {
    let program = Program::parse(
        "numeric.pinv",
        "fn cubic(x: f64) -> f64 { x * x * x - x + 1.0 }
         fn quintic(x: f64) -> f64 { x * x * x * x * x + x }
         fn xexp(x: f64) -> f64 { x * exp(x) }
         fn shifted(x: f64, s: f64) -> f64 { x * exp(x) + s }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(300),
        ..CheckConfig::default()
    };
    for name in ["cubic", "quintic", "xexp", "shifted"] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        assert_eq!(report.outcome, Outcome::Isolated, "{report}");
        if name == "shifted" {
            // Better than a root: x read from θ first, then s = y − x·eˣ.
            assert_eq!(report.thetas, ["x"], "{report}");
            assert!(report.numeric.is_empty(), "{report}");
        } else {
            assert_eq!(report.numeric.len(), 1, "{report}");
        }
        let r = check_inverse(&inverse, &config);
        assert_eq!(r.status, Status::Ok, "{name}: {r:?}");
        // `shifted` rejects the θ for x where x·eˣ overflows or swamps y (x beyond ~30).
        let least = if name == "shifted" { 80.0 } else { 99.0 };
        assert!(r.acceptance() >= least, "{name}: {r:?}");
    }
    // x·eˣ = −0.2 has two real roots, near −2.54 and −0.26; θ is a start point, and the root
    // nearest it is taken.
    let inverse = program.invert("xexp").expect("invertible");
    let y = [Const::F64(-0.2)];
    let lo = inverse
        .call_with_tape(&y, &[Const::F64(-3.0)])
        .expect("a root");
    let hi = inverse
        .call_with_tape(&y, &[Const::F64(0.5)])
        .expect("a root");
    let (lo, hi) = (lo[0].as_f64().unwrap(), hi[0].as_f64().unwrap());
    assert!(lo < -1.0 && -1.0 < hi, "{lo} {hi}");
    // A start point that is a root already comes back bit for bit (what the PGF relies on).
    let again = inverse
        .call_with_tape(&y, &[Const::F64(hi)])
        .expect("a root");
    assert_eq!(again[0].as_f64().map(f64::to_bits), Some(hi.to_bits()));
    // x·eˣ ≥ −1/e: no root, a domain error.
    let err = inverse
        .call_with_tape(&[Const::F64(-1.0)], &[Const::F64(0.5)])
        .expect_err("no root");
    assert!(err.is_domain_error(), "{err}");
}

/// Two roots inside one step of the scan's grid (`|a − b| = y` for a small y: b = a ± y), and a
/// double root with no sign change at all (`|a − b| = 0`), are found from any start point: the
/// scan looks into every dip of `|h|` it walks past.
#[test]
fn close_roots_and_double_roots_are_found_from_any_start_point() {
    let program = Program::parse(
        "dips.pinv",
        "fn gap(a: f64, b: f64) -> f64 { max(a, b) - min(a, b) }",
    )
    .expect("compiles");
    let inverse = program.invert("gap").expect("invertible");
    assert_eq!(inverse.isolation()[0].numeric.len(), 1);
    let mut sampler = Sampler::new(7);
    for y in [0.0, 1e-3, 0.25] {
        let draws = 300;
        let accepted = (0..draws)
            .filter(|_| inverse.sample(&[Const::F64(y)], &mut sampler).0.is_ok())
            .count();
        assert_eq!(accepted, draws, "y = {y}: {accepted} of {draws}");
    }
}

#[test]
fn limits_fall_back_cleanly_and_are_reported() {
    let program = fanout();
    let options = ReorientOptions {
        isolation: IsolationConfig::default()
            .with_iter_limit(1)
            .with_max_pivots(0)
            .with_numeric(false),
        ..ReorientOptions::default()
    };
    let inverse = program
        .invert_with("reuse", &program.stack(), &options)
        .expect("invertible");
    let report = &inverse.isolation()[0];
    assert_eq!(report.outcome, Outcome::NotIsolated, "{report}");
    assert_eq!(report.runs[0].stop, Stop::IterationLimit, "{report}");
    assert!(report.to_string().contains("not isolated"), "{report}");
    // Inverted as written, with consistency checks: sound, complete, rarely accepted.
    let r = check_inverse(
        &inverse,
        &CheckConfig {
            cases: 200,
            ..CheckConfig::default()
        },
    );
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert!(r.acceptance() < 50.0, "{r:?}");
}

#[test]
fn isolation_off_leaves_fan_out_to_checks() {
    let program = fanout();
    let options = ReorientOptions {
        isolation: IsolationConfig::disabled(),
        ..ReorientOptions::default()
    };
    let inverse = program
        .invert_with("twice", &program.stack(), &options)
        .expect("invertible");
    assert!(inverse.isolation().is_empty());
    let r = check_inverse(
        &inverse,
        &CheckConfig {
            cases: 200,
            ..CheckConfig::default()
        },
    );
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert!(r.acceptance() < 50.0, "{r:?}");
}

#[test]
fn functions_without_fan_out_are_not_touched() {
    let program = Program::load(corpus_dir().join("straight.pinv")).expect("compiles");
    for name in ["mul_add", "lin", "easy", "nested", "ratio"] {
        let inverse = program.invert(name).expect("invertible");
        for report in inverse.isolation() {
            assert!(
                matches!(report.outcome, Outcome::NoFanOut | Outcome::Skipped(_)),
                "{name}: {report}"
            );
        }
    }
}

#[test]
fn small_callees_are_isolated_in_their_caller() {
    let program = Program::parse(
        "calls.pinv",
        "fn sq_plus(x: f64) -> f64 { x * x + 3.0 * x }
         fn outer(a: f64, b: f64) -> f64 { sq_plus(a) * b }",
    )
    .expect("compiles");
    let inverse = program.invert("outer").expect("invertible");
    // The callee is small: its body is copied into `outer` first, and isolated there.
    let caller = inverse
        .isolation()
        .iter()
        .find(|r| r.function == "outer")
        .expect("the caller is considered");
    assert_eq!(caller.outcome, Outcome::Isolated, "{caller}");
    assert_eq!(caller.inlined, 1, "{caller}");
    let r = check_function(
        &program,
        "outer",
        &CheckConfig {
            cases: 300,
            ..CheckConfig::default()
        },
    );
    assert_eq!(r.status, Status::Ok, "{r:?}");
}

/// Simplification must not change any result: the same tape gives the same answer, bit for bit.
#[test]
fn simplification_changes_no_result() {
    let plain = ReorientOptions {
        isolation: IsolationConfig::default().with_simplify(false),
        ..ReorientOptions::default()
    };
    let mut before = 0;
    let mut after = 0;
    for file in ["straight.pinv", "unary.pinv", "fanout.pinv", "ints.pinv"] {
        let program = Program::load(corpus_dir().join(file)).expect("compiles");
        for name in program.function_names() {
            let (Ok(simple), Ok(full)) = (
                program.invert(name),
                program.invert_with(name, &program.stack(), &plain),
            ) else {
                continue;
            };
            let size = |inv: &pinv::Inverse| {
                inv.inverse_ir().lines().count() + inv.pgf_ir().lines().count()
            };
            before += size(&full);
            after += size(&simple);
            let types = full.input_types().to_vec();
            let mut s = Sampler::new(11);
            for k in 0..100 {
                let x: Vec<Const> = types
                    .iter()
                    .map(|&t| match t {
                        pinv::Type::F64 => Const::F64(s.real()),
                        pinv::Type::I64 => Const::I64(s.int()),
                        pinv::Type::Bool => Const::Bool(k % 2 == 0),
                    })
                    .collect();
                let Ok(y) = full.forward(&x) else { continue };
                let (ta, tb) = (full.pgf(&x), simple.pgf(&x));
                assert_eq!(
                    ta.is_ok(),
                    tb.is_ok(),
                    "{file} {name}: PGF at {x:?}: {ta:?} vs {tb:?}"
                );
                if let (Ok(ta), Ok(tb)) = (ta, tb) {
                    assert_eq!(ta, tb, "{file} {name}: PGF at {x:?}");
                    let a = full.call_with_tape(&y, &ta).map_err(|e| e.to_string());
                    let b = simple.call_with_tape(&y, &tb).map_err(|e| e.to_string());
                    assert_eq!(a, b, "{file} {name}: inverse at {y:?}");
                }
                // Sampled θ: the same draws give the same answer.
                let (a, ta) = full.sample(&y, &mut Sampler::new(k));
                let (b, tb) = simple.sample(&y, &mut Sampler::new(k));
                assert_eq!(ta, tb, "{file} {name}: θ drawn at {y:?}");
                assert_eq!(
                    a.map_err(|e| e.is_domain_error()),
                    b.map_err(|e| e.is_domain_error()),
                    "{file} {name}: sampled inverse at {y:?}"
                );
            }
        }
    }
    assert!(
        after < before,
        "simplification removed nothing: {after} vs {before} lines"
    );
    eprintln!("generated IR: {before} lines before simplification, {after} after");
}

#[test]
fn blocks_of_functions_with_control_flow_are_isolated() {
    // `mid` returns x*x on one branch: in closed block form that block is a function of its
    // parameter, isolated to sq(x) (a sign choice) instead of a check that fails for almost
    // every θ.
    let program = Program::load(corpus_dir().join("branches.pinv")).expect("compiles");
    let config = CheckConfig {
        cases: 300,
        ..CheckConfig::default()
    };
    let off = ReorientOptions {
        isolation: IsolationConfig::disabled(),
        ..ReorientOptions::default()
    };
    for name in ["mid", "complex"] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        assert_eq!(report.outcome, Outcome::Isolated, "{report}");
        let on = check_inverse(&inverse, &config);
        let before = check_inverse(
            &program
                .invert_with(name, &program.stack(), &off)
                .expect("invertible"),
            &config,
        );
        assert_eq!(on.status, Status::Ok, "{name}: {on:?}");
        assert!(
            on.acceptance() > before.acceptance() + 30.0,
            "{name}: {:.1}% with isolation, {:.1}% without",
            on.acceptance(),
            before.acceptance()
        );
    }
}

#[test]
fn a_function_of_one_linear_form_joins_the_linear_system() {
    // The variance of two numbers is (a − b)²/4 once rewritten: with the mean, a linear system
    // in (a + b, a − b). θ picks only the sign of a − b, and every draw is a preimage (it was
    // 0% before the linear form joined the system). The other two show the same shape where
    // the walk alone also succeeds, which the system must not spoil.
    let program = Program::parse(
        "forms.pinv",
        "fn mean_var2(a: f64, b: f64) -> (f64, f64) {
             let m = (a + b) / 2.0;
             let v = ((a - m) * (a - m) + (b - m) * (b - m)) / 2.0;
             (m, v)
         }
         fn sum_diff_exp(a: f64, b: f64) -> (f64, f64) { (a + b, exp(a - b)) }
         fn rot_sin(x: f64, y: f64) -> (f64, f64) { (x + 2.0 * y, sin(x - y)) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: 200,
        ..CheckConfig::default()
    };
    for name in ["mean_var2", "sum_diff_exp", "rot_sin"] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
}

#[test]
fn a_quotient_and_remainder_of_one_dividend_give_it_back_with_no_theta() {
    let program = Program::parse(
        "divmod.pinv",
        "fn split100(x: i64) -> (i64, i64) { (x / 100, x % 100) }
         fn clock(secs: i64) -> (i64, i64, i64) {
             let h = secs / 3600;
             let rest = secs % 3600;
             (h, rest / 60, rest % 60)
         }
         fn shifted(x: i64, k: i64) -> (i64, i64) { ((x + k) / 7, (x + k) % 7) }",
    )
    .expect("compiles");
    for name in ["split100", "clock"] {
        let inverse = program.invert(name).expect("invertible");
        assert!(
            inverse.schema().slots.is_empty(),
            "{name}: {}",
            inverse.schema()
        );
    }
    // Every dividend, the extremes included, comes back; pairs no dividend gives are refused.
    let mut rng = pinv_core::rng::Rng::new(7);
    let split = program.invert("split100").expect("invertible");
    let mut xs = vec![
        0,
        1,
        -1,
        99,
        -99,
        100,
        -100,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
    ];
    xs.extend((0..200).map(|_| rng.next_u64() as i64 >> (rng.next_u64() % 64)));
    for x in xs {
        let y = program.run("split100", &[Const::I64(x)]).expect("runs");
        let back = split.call_with_tape(&y, &[]).expect("a preimage");
        assert_eq!(back, [Const::I64(x)], "y = {y:?}");
    }
    for (q, r) in [(1, -3), (-1, 3), (0, 100), (i64::MAX, 99)] {
        let e = split.call_with_tape(&[Const::I64(q), Const::I64(r)], &[]);
        assert!(e.is_err(), "({q}, {r}) has no dividend: {e:?}");
    }
    let config = CheckConfig {
        cases: 300,
        ..CheckConfig::default()
    };
    for name in ["split100", "clock", "shifted"] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
}

#[test]
fn a_square_nonlinear_system_is_solved_by_newtons_method() {
    // The mean and variance of three numbers: θ is a start point, and Newton's method with
    // steps of least norm takes it to a point of the circle of solutions. Sound and complete
    // (x comes back bit for bit: the PGF's start is x itself), and almost every θ drawn is
    // accepted (a start from which no solution is reached is a domain error, never a wrong x).
    let program = Program::parse(
        "newton.pinv",
        "fn stats3(a: f64, b: f64, c: f64) -> (f64, f64) {
             let m = (a + b + c) / 3.0;
             let v = ((a - m) * (a - m) + (b - m) * (b - m) + (c - m) * (c - m)) / 3.0;
             (m, v)
         }
         fn sym3(x: f64, y: f64, z: f64) -> (f64, f64, f64) {
             (x + y + z, x * y + y * z + z * x, x * y * z)
         }
         fn cubic_pair(x: f64, y: f64) -> (f64, f64) { (x * x * x + y, y * y * y - x) }
         fn exp_mix(x: f64, y: f64) -> (f64, f64) { (exp(x) + y, x + exp(y)) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: 200,
        ..CheckConfig::default()
    };
    // (exp_mix's Jacobian is singular at 0: the retries start elsewhere.)
    for (name, floor) in [
        ("stats3", 95.0),
        ("sym3", 90.0),
        ("cubic_pair", 95.0),
        ("exp_mix", 90.0),
    ] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert_eq!(report.soundness.violations, 0, "{name}: {report:?}");
        assert_eq!(
            report.completeness.recovered, report.completeness.trials,
            "{name}: {report:?}"
        );
        assert!(report.acceptance() >= floor, "{name}: {report:?}");
    }
    let inverse = program.invert("stats3").expect("invertible");
    assert!(
        inverse
            .schema()
            .to_string()
            .contains("Newton's start point"),
        "{}",
        inverse.schema()
    );
    // Bit for bit through the PGF.
    let x0 = [Const::F64(1.25), Const::F64(-3.5), Const::F64(7.0)];
    let y = program.run("stats3", &x0).expect("runs");
    let theta = inverse.pgf(&x0).expect("pgf");
    assert_eq!(inverse.call_with_tape(&y, &theta).expect("inverts"), x0);
    // An input that makes the outputs NaN comes back too: Newton's method starts from x, whose
    // outputs are NaN where y is, which the final check matches (it stopped as "not reached").
    for x0 in [
        [Const::F64(f64::NAN), Const::F64(-3.5), Const::F64(7.0)],
        [Const::F64(f64::INFINITY), Const::F64(2.0), Const::F64(7.0)],
    ] {
        let y = program.run("stats3", &x0).expect("runs");
        let theta = inverse.pgf(&x0).expect("pgf");
        // (Const compares bits: NaN is NaN.)
        assert_eq!(inverse.call_with_tape(&y, &theta).expect("inverts"), x0);
    }
    // A negative variance has no preimage: every θ is a domain error.
    let mut sampler = Sampler::new(3);
    for _ in 0..50 {
        let (x, _) = inverse.sample(&[Const::F64(1.0), Const::F64(-2.0)], &mut sampler);
        assert!(x.is_err(), "{x:?}");
    }
}
