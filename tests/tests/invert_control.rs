//! Inverting branches, several returns and loops: every function of branches.pinv and
//! loops.pinv is sound and complete; `while1` and `sign` keep no θ choice for their control
//! flow; search finds preimages that sampling rarely hits; a tape too short is an error; the
//! iteration limit stops an inverse that keeps going round; the printed inverse of every corpus
//! function is the same on every inversion; dropping the steps' own precision checks keeps every
//! preimage and every dispatch guard.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000).

use pinv::check::{check_function, close, CheckConfig, Status};
use pinv::reorient::ReorientOptions;
use pinv::search::SearchConfig;
use pinv::{Const, Program, Sampler};
use pinv_tests::{corpus_dir, pinv_files};

fn cases() -> usize {
    pinv_tests::check_cases()
}

fn load(file: &str) -> Program {
    Program::load(corpus_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn branches_and_loops_are_sound_and_complete() {
    let config = CheckConfig {
        cases: cases(),
        search_cases: 20,
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for file in ["branches.pinv", "loops.pinv"] {
        let program = load(file);
        for name in program.function_names() {
            let report = check_function(&program, name, &config);
            table.push(format!(
                "{name}: accepted {:.1}%, search {:?}",
                report.acceptance(),
                report.search_acceptance()
            ));
            let ok = report.status == Status::Ok
                && report.soundness.violations == 0
                && report.soundness.errors == 0
                && report.completeness.recovered == report.completeness.trials
                && report.completeness.trials == config.cases;
            if !ok {
                failures.push(format!("{file} {name}: {report:?}"));
            }
        }
    }
    eprintln!("{}", table.join("\n"));
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The `choice` reads of an inverse (and of the inverses it calls).
fn choices(program: &Program, name: &str) -> usize {
    let inverse = program.invert(name).expect("invertible");
    inverse.inverse_ir().matches(" = choice ").count()
}

#[test]
fn fixed_trip_counts_and_sign_need_no_choice() {
    assert_eq!(choices(&load("loops.pinv"), "while1"), 0);
    assert_eq!(choices(&load("branches.pinv"), "sign"), 0);
    assert_eq!(choices(&load("loops.pinv"), "triangle"), 0);
    // Two return sites that facts cannot tell apart: θ picks one.
    assert!(choices(&load("branches.pinv"), "mid") >= 1);
    // The schema says which choices of control flow are left.
    let mid = load("branches.pinv").invert("mid").expect("invertible");
    assert_eq!(mid.schema().control_choices().len(), 1);
    for (file, name) in [("loops.pinv", "while1"), ("branches.pinv", "sign")] {
        let inverse = load(file).invert(name).expect("invertible");
        assert!(inverse.schema().control_choices().is_empty(), "{name}");
    }
}

#[test]
fn guards_decide_returns_that_facts_cannot() {
    // mid(x) = if x > 100 { return x } x*x. For y <= 100 the first return cannot pass its check
    // (x = y must exceed 100), so the inverse takes the second without reading a choice: the
    // tape is just the sign of x. For y > 100 both are possible and θ picks.
    let program = load("branches.pinv");
    let inverse = program.invert("mid").expect("invertible");
    for sign in [0, 1] {
        let x = inverse
            .call_with_tape(&[Const::F64(49.0)], &[Const::I64(sign)])
            .expect("one θ: the sign");
        assert!(
            close(x[0], Const::F64(if sign == 0 { 7.0 } else { -7.0 }), 1e-12),
            "{x:?}"
        );
    }
    let x = inverse
        .call_with_tape(&[Const::F64(144.0)], &[Const::I64(0)])
        .expect("the first return");
    assert_eq!(x, [Const::F64(144.0)]);
    let x = inverse
        .call_with_tape(&[Const::F64(144.0)], &[Const::I64(1), Const::I64(1)])
        .expect("the second return, negative root");
    assert!(close(x[0], Const::F64(-12.0), 1e-12), "{x:?}");
}

#[test]
fn triangle_is_found_by_search() {
    let program = load("loops.pinv");
    let inverse = program.invert("triangle").expect("invertible");
    for (y, x) in [(0i64, 0i64), (1, 1), (10, 4), (55, 10), (5050, 100)] {
        let outcome = inverse
            .search(&[Const::I64(y)], &SearchConfig::default())
            .expect("searches");
        let found = outcome
            .found
            .unwrap_or_else(|| panic!("y = {y}: nothing in {} runs", outcome.runs));
        let fx = program.run("triangle", &found.x).expect("runs");
        assert_eq!(fx, [Const::I64(y)], "x = {:?}", found.x);
        if y > 0 {
            assert_eq!(found.x, [Const::I64(x)]);
        }
    }
    // No preimage: triangle never gives 2.
    let outcome = inverse
        .search(
            &[Const::I64(2)],
            &SearchConfig {
                max_runs: 300,
                ..SearchConfig::default()
            },
        )
        .expect("searches");
    assert!(outcome.found.is_none());
}

#[test]
fn the_arm_reaches_a_family_of_poses() {
    let program = load("loops.pinv");
    let inverse = program.invert("arm3").expect("invertible");
    // Two poses with the same hand position: the first two links flipped across the line from
    // the shoulder to the wrist (elbow up and elbow down), the last link kept.
    let (t1, t2, t3) = (0.3f64, 0.9f64, -0.4f64);
    let (a1, a2, a3) = (t1, t1 + t2, t1 + t2 + t3);
    let (wx, wy) = (a1.cos() + 2.0 * a2.cos(), a1.sin() + 2.0 * a2.sin());
    let axis = wy.atan2(wx);
    let (b1, b2) = (2.0 * axis - a1, 2.0 * axis - a2);
    let poses = [
        [Const::F64(t1), Const::F64(t2), Const::F64(t3)],
        [Const::F64(b1), Const::F64(b2 - b1), Const::F64(a3 - b2)],
    ];
    let hand = program.run("arm3", &poses[0]).expect("runs");
    let other = program.run("arm3", &poses[1]).expect("runs");
    for (a, b) in hand.iter().zip(&other) {
        assert!(
            close(*a, *b, 1e-12),
            "not the same hand: {hand:?} {other:?}"
        );
    }
    // Both poses are reached from the same y: θ picks which.
    for pose in &poses {
        let theta = inverse.pgf(pose).expect("pgf");
        let back = inverse.call_with_tape(&hand, &theta).expect("in domain");
        for (a, b) in back.iter().zip(pose) {
            assert!(close(*a, *b, 1e-6), "{back:?} ≠ {pose:?}");
        }
    }
    // And whatever θ the sampler draws, an accepted pose puts the hand there.
    let mut sampler = pinv::Sampler::new(11);
    for _ in 0..500 {
        if let (Ok(x), _) = inverse.sample(&hand, &mut sampler) {
            let back = program.run("arm3", &x).expect("runs");
            for (a, b) in back.iter().zip(&hand) {
                assert!(close(*a, *b, 1e-9), "{x:?} ↦ {back:?} ≠ {hand:?}");
            }
        }
    }
}

#[test]
fn a_short_tape_is_an_error_not_a_panic() {
    let program = load("loops.pinv");
    let inverse = program.invert("while2").expect("invertible");
    let y = program
        .run("while2", &[Const::F64(1.5), Const::I64(3)])
        .expect("runs");
    let theta = inverse.pgf(&[Const::F64(1.5), Const::I64(3)]).expect("pgf");
    assert_eq!(
        inverse.call_with_tape(&y, &theta).expect("in domain"),
        [Const::F64(1.5), Const::I64(3)]
    );
    for cut in 0..theta.len() {
        let err = inverse
            .call_with_tape(&y, &theta[..cut])
            .expect_err("too short");
        assert!(err.to_string().contains("θ"), "{err}");
    }
}

#[test]
fn the_iteration_limit_is_a_domain_error() {
    // Going round adds 0, so the facts cannot count the iterations: θ decides, and a θ that
    // always goes round must be stopped.
    let program = Program::parse(
        "spin.pinv",
        "fn spin(a: f64, n: i64) -> f64 {
            let mut r = a;
            let mut i = n;
            while i > 0 { r = r * 1.0; i = i / 2; }
            r
        }",
    )
    .expect("compiles");
    let options = ReorientOptions::default().with_iteration_limit(50);
    let inverse = program
        .invert_with("spin", &program.stack(), &options)
        .expect("invertible");
    let y = [Const::F64(2.0)];
    let mut rejected = 0;
    let mut sampler = pinv::Sampler::new(1);
    for _ in 0..200 {
        match inverse.sample(&y, &mut sampler).0 {
            Ok(x) => {
                let fx = program.run("spin", &x).expect("runs");
                assert!(close(fx[0], y[0], 1e-9));
            }
            Err(e) => {
                assert!(e.is_domain_error(), "{e}");
                rejected += 1;
            }
        }
    }
    assert!(rejected > 0);
}

#[test]
fn the_iteration_limit_counts_iterations() {
    // A loop whose body has a branch: several blocks per iteration, but each iteration passes
    // the loop head once, and only there is the walk back counted.
    let program = Program::parse(
        "tri.pinv",
        "fn tri(x: i64) -> i64 {
            let mut i = 0;
            let mut r = 0;
            while i <= x {
                if i % 2 == 0 { r += i; } else { r += 2 * i; }
                i += 1;
            }
            r
        }",
    )
    .expect("compiles");
    let limit = 40;
    let options = ReorientOptions::default().with_iteration_limit(limit);
    let inverse = program
        .invert_with("tri", &program.stack(), &options)
        .expect("invertible");
    // The largest x whose preimage the inverse still reaches: about `limit` iterations.
    let reached = (0..2 * limit)
        .take_while(|&x| {
            let y = program.run("tri", &[Const::I64(x)]).expect("runs");
            let theta = inverse.pgf(&[Const::I64(x)]).expect("pgf");
            match inverse.call_with_tape(&y, &theta) {
                Ok(back) => back == [Const::I64(x)],
                Err(e) => {
                    // At the limit: said by the scan for the trip count, by the walk, or by a
                    // dispatch guard that ran into it (then no edge looks possible).
                    let said = e.to_string();
                    assert!(
                        said.contains("loop iterations")
                            || said.contains("brings these values")
                            || said.contains(&format!("trips round the loop (up to {limit})")),
                        "x = {x}: {e}"
                    );
                    false
                }
            }
        })
        .last()
        .expect("small x are reached");
    assert!(
        (limit - 3..=limit).contains(&reached),
        "reached x = {reached} with a limit of {limit} iterations"
    );
}

#[test]
fn short_circuit_and_nested_control_flow_in_loops() {
    let program = Program::parse(
        "nest.pinv",
        "fn count(n: i64, lo: i64) -> i64 {
            let mut k = 0;
            for i in 0..n {
                if i >= lo && i % 3 != 0 || i == 7 {
                    k += 2;
                } else if i > 100 {
                    return -1;
                }
            }
            k
        }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: 200,
        search_cases: 20,
        ..CheckConfig::default()
    };
    let report = check_function(&program, "count", &config);
    assert_eq!(report.status, Status::Ok, "{report:?}");
    assert!(
        report.search_acceptance().unwrap_or(0.0) > 0.0,
        "{report:?}"
    );
    let sat = check_function(&load("ints.pinv"), "sat", &config);
    assert_eq!(sat.status, Status::Ok, "{sat:?}");
    assert!(sat.acceptance() > 50.0, "{sat:?}");
}

#[test]
fn nested_loops_round_trip_through_rounding() {
    // Taken apart term by term, the sum ends near 0.0, not at it (0.1 and 0.2 do not add
    // exactly): the edge into the outer loop must still be recognised, or the inverse walks on
    // past i = 0 until the iteration limit.
    let program = Program::parse(
        "nested.pinv",
        "fn nested(x: f64, y: f64) -> f64 {
             let mut acc = 0.0;
             for i in 0..3 {
                 for j in 0..2 {
                     acc += x * (i as f64) + y * (j as f64);
                 }
             }
             acc
         }",
    )
    .expect("compiles");
    let inverse = program.invert("nested").expect("invertible");
    for x in [
        [0.1, 0.2],
        [-3.5084946393718663, -2.3552140697665314],
        [1e-3, 7.25],
    ] {
        let x = [Const::F64(x[0]), Const::F64(x[1])];
        let y = inverse.forward(&x).expect("runs");
        let theta = inverse.pgf(&x).expect("pgf");
        let back = inverse.call_with_tape(&y, &theta).expect("in domain");
        for (a, b) in back.iter().zip(&x) {
            assert!(close(*a, *b, 1e-9), "{back:?} ≠ {x:?}");
        }
    }
    let report = check_function(
        &program,
        "nested",
        &CheckConfig {
            cases: cases().min(300),
            ..CheckConfig::default()
        },
    );
    assert_eq!(report.status, Status::Ok, "{report:?}");
    assert_eq!(report.completeness.recovered, report.completeness.trials);
}

#[test]
fn nested_loops_count_their_outer_iterations_without_theta() {
    // The inner loop carries the outer counter round unchanged, so the outer loop's step is
    // still `i + 1`: "entered" (i == 0) and "went round" (i ≥ 1) exclude each other, and the
    // inverse reads no θ for either loop.
    let program = Program::parse(
        "nested.pinv",
        "fn shifted(x: f64) -> f64 {
             let mut acc = x;
             for i in 0..2 {
                 for j in 0..2 {
                     acc = acc + 1.0;
                 }
             }
             acc
         }
         fn staircase(x: i64) -> i64 {
             let mut acc = x;
             for i in 0..3 {
                 for j in 0..i {
                     acc = acc + j;
                 }
             }
             acc
         }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(300),
        ..CheckConfig::default()
    };
    for name in ["shifted", "staircase"] {
        let inverse = program.invert(name).expect("invertible");
        assert!(
            inverse.schema().control_choices().is_empty(),
            "{name}: {}",
            inverse.schema()
        );
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
}

#[test]
fn guards_look_past_branches_inside_regions() {
    // Which way each `if` went is decided by a condition the inverse can compute (i % 2 == 0,
    // x > 0) — but the test of it comes after a rule's own branch (exact, or read an offset).
    // Guards follow both sides of such branches, so the inverse reads no path choice it would
    // then reject.
    let program = Program::parse(
        "guards.pinv",
        "fn alternate(a: f64) -> f64 {
             let mut s = a;
             for i in 0..4 {
                 if i % 2 == 0 { s = s + 1.0; } else { s = s * 2.0; }
             }
             s
         }
         fn halves(x: f64) -> f64 {
             let y = if x > 0.0 { x * 2.0 } else { x / 2.0 };
             y + 1.0
         }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(300),
        ..CheckConfig::default()
    };
    for name in ["alternate", "halves"] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
}

#[test]
fn theta_that_runs_out_of_steps_is_rejected_not_an_error() {
    // An f64 loop counter: the comparison's θ puts the exit value anywhere, and walking back
    // one by one from far out runs into the step limit. Such θ are not accepted, but they are
    // not bugs either, and search gives up on them after a few runs.
    let program = Program::parse(
        "fcount.pinv",
        "fn fcount(x: f64) -> f64 {
             let mut t = 0.0;
             let mut i = 0.0;
             while i < 3.0 {
                 t = t + x * i;
                 i = i + 1.0;
             }
             t
         }",
    )
    .expect("compiles");
    let report = check_function(
        &program,
        "fcount",
        &CheckConfig {
            cases: 20,
            search_cases: 2,
            ..CheckConfig::default()
        },
    );
    assert_eq!(report.status, Status::Ok, "{report:?}");
    assert_eq!(report.soundness.errors, 0, "{report:?}");
    assert_eq!(report.soundness.violations, 0, "{report:?}");
}

/// The printed inverse, PGF and θ schema of one function (or the error), as `pinv show
/// --inverse` prints them, less the isolation report, which carries timings.
/// The inverse's schema, IR and PGF as text. The e-graph runs get time limits far past what they
/// need, so that a loaded machine (the limits are 200 ms a run by default, which a debug build
/// under load can reach for `systems.pinv`'s `mean_var2`) cannot make two inversions differ.
fn printed_inverse(program: &Program, name: &str) -> String {
    let mut options = pinv::reorient::ReorientOptions::default();
    options.isolation.run_time_limit = std::time::Duration::from_secs(60);
    options.isolation.function_time_limit = std::time::Duration::from_secs(120);
    match program.invert_with(name, &program.stack(), &options) {
        Ok(inverse) => format!(
            "{}\n{}\n{}",
            inverse.schema(),
            inverse.inverse_ir(),
            inverse.pgf_ir()
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// Guard helpers, regions and dispatch blocks are named and emitted in an order that no hash
/// map's iteration decides: inverting a function again, in a fresh program (fresh maps, fresh
/// `RandomState`s), prints the same text.
#[test]
fn printed_inverses_are_the_same_on_every_inversion() {
    let mut differ = Vec::new();
    for path in pinv_files(&corpus_dir()) {
        let first = Program::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let names: Vec<String> = first
            .function_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        for name in &names {
            let expected = printed_inverse(&first, name);
            for _ in 0..6 {
                let again = Program::load(&path).expect("loaded once already");
                if printed_inverse(&again, name) != expected {
                    differ.push(format!("{} {name}", path.display()));
                    break;
                }
            }
        }
    }
    assert!(differ.is_empty(), "printed differently: {differ:?}");
}

/// A value's bits: f64s compared as bit patterns (so -0.0 is not 0.0, and NaN is NaN).
fn bits(values: &[Const]) -> Vec<(u8, u64)> {
    values
        .iter()
        .map(|c| match *c {
            Const::F64(v) => (0, v.to_bits()),
            Const::I64(v) => (1, v as u64),
            Const::Bool(v) => (2, v as u64),
        })
        .collect()
}

/// The guard functions in a printed inverse.
fn guards(ir: &str) -> Vec<&str> {
    ir.split("\nfunction ")
        .filter(|f| f.lines().next().is_some_and(|l| l.contains(".guard.")))
        .collect()
}

/// By default an inverse keeps no step's own precision check (`θ loses precision: fadd of the
/// solution is not the output`), only its final `f(x) = y` check. That only lets more θ through:
/// every θ the inverse with step checks accepts gives the same x, bit for bit, without them;
/// every x either returns maps to y; and the dispatch guards, copied from the inverse before the
/// step checks go, are the same, so no choice changes.
#[test]
fn dropping_step_checks_keeps_every_preimage_and_guard() {
    let keep = ReorientOptions::default().with_step_checks(true);
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut failures = Vec::new();
    let (mut both, mut only_lean, mut guarded) = (0, 0, 0);
    for path in pinv_files(&corpus_dir()) {
        let program = Program::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for name in program.function_names() {
            let Ok(lean) = program.invert(name) else {
                continue;
            };
            let full = program
                .invert_with(name, &program.stack(), &keep)
                .expect("invertible without the option");
            let lean_guards = guards(&lean.inverse_ir()).join("\n");
            guarded += usize::from(!lean_guards.is_empty());
            if lean_guards != guards(&full.inverse_ir()).join("\n") {
                failures.push(format!("{name}: the guards differ"));
            }
            let mut sampler = Sampler::new(3);
            for _ in 0..300 {
                let x: Vec<Const> = lean
                    .input_types()
                    .iter()
                    .map(|ty| match ty {
                        pinv::Type::F64 => Const::F64((next() % 2001) as f64 / 100.0 - 10.0),
                        pinv::Type::I64 => Const::I64((next() % 201) as i64 - 100),
                        pinv::Type::Bool => Const::Bool(next() % 2 == 0),
                    })
                    .collect();
                let Ok(y) = program.run(name, &x) else {
                    continue;
                };
                let (with_checks, theta) = full.sample(&y, &mut sampler);
                let without = lean.call_with_tape(&y, &theta);
                match (with_checks, without) {
                    (Ok(a), Ok(b)) => {
                        both += 1;
                        if bits(&a) != bits(&b) {
                            failures.push(format!("{name} y {y:?} θ {theta:?}: {a:?} ≠ {b:?}"));
                        }
                    }
                    (Ok(a), Err(e)) => {
                        failures.push(format!("{name} y {y:?} θ {theta:?}: {a:?}, then {e}"))
                    }
                    (Err(_), Ok(b)) => {
                        only_lean += 1;
                        let fb = program.run(name, &b).expect("runs");
                        if !fb.iter().zip(&y).all(|(&p, &q)| close(p, q, 1e-9)) {
                            failures.push(format!("{name} y {y:?} θ {theta:?}: {b:?} ↦ {fb:?}"));
                        }
                    }
                    (Err(_), Err(_)) => {}
                }
            }
        }
    }
    eprintln!("accepted by both: {both}, only without step checks: {only_lean}");
    assert!(both > 1000, "too few accepted θ to compare: {both}");
    assert!(
        guarded >= 2,
        "too few functions with guards to compare: {guarded}"
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A guard that passes whatever its inputs (the region it guards checks nothing before its first
/// θ read) is not called: in `f2` both edges into the `if`'s join always pass, so the inverse
/// reads the choice straight away, and neither it nor the PGF calls a guard.
#[test]
fn guards_that_always_pass_are_not_called() {
    let program = load("branches.pinv");
    let inverse = program.invert("f2").expect("invertible");
    let ir = format!("{}\n{}", inverse.inverse_ir(), inverse.pgf_ir());
    assert!(ir.contains("function %f2.guard."), "f2 has guards:\n{ir}");
    assert!(!ir.contains("call %f2.guard."), "{ir}");
    // `mid`'s guards do check something, and stay.
    let mid = program.invert("mid").expect("invertible");
    assert!(mid.inverse_ir().contains("call %mid.guard."));
}

#[test]
fn a_loop_of_a_million_iterations_needs_no_stack() {
    // The PGF runs the loop forward as a loop (its θ ordered by segments), so a trip count far
    // beyond any call depth limit round-trips, and both engines record the same tape.
    let program = Program::parse(
        "walk.pinv",
        "fn walk(x: f64) -> i64 {
            let mut v = x;
            let mut n = 0;
            while v < 1000000.0 { v = v + 1.0; n += 1; }
            n
        }",
    )
    .expect("compiles");
    let x0 = [Const::F64(0.25)];
    let y = program.run("walk", &x0).expect("runs");
    assert_eq!(y, [Const::I64(1_000_000)]);
    let mut tapes = Vec::new();
    for engine in [pinv_core::jit::Engine::Interp, pinv_core::jit::Engine::Jit] {
        let inverse = program
            .clone()
            .with_engine(engine)
            .invert("walk")
            .expect("invertible");
        let theta = inverse
            .pgf(&x0)
            .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
        let x = inverse
            .call_with_tape(&y, &theta)
            .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
        assert!(close(x[0], x0[0], 1e-9), "{engine:?}: {x:?}");
        tapes.push(theta);
    }
    assert_eq!(tapes[0], tapes[1]);
}

#[test]
fn a_loop_of_ten_million_iterations_passes_check() {
    // Every sampled input runs the loop 10⁷ times forward, in the inverse (walking back) and in
    // the PGF: within the default step limit, with no stack growth, sound and complete.
    let program = Program::parse(
        "relax.pinv",
        "fn relax(x: f64) -> f64 {
            let mut v = x;
            let mut i = 0;
            while i < 10000000 { v = v * 0.9999999 + 0.0000001; i += 1; }
            v
        }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: 2,
        ..CheckConfig::default()
    };
    let r = check_function(&program, "relax", &config);
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert_eq!(r.soundness.violations, 0, "{r:?}");
    assert_eq!(r.completeness.recovered, r.completeness.trials, "{r:?}");
    assert_eq!(r.soundness.trials, 2, "{r:?}");
}

#[test]
fn branches_whose_values_differ_only_in_the_sign_of_zero_stay_complete() {
    // The dispatch compares f64 values within a tolerance, so a merge of `0.0` and `-0.0` cannot
    // tell its branches apart by the value: θ must choose, and the PGF must say which.
    let program = Program::parse(
        "zeros.pinv",
        "fn z(a: bool, b: bool) -> f64 {
            let v = if a { if b { 0.0 } else { -0.0 } } else { 3.0 };
            v * 2.0
        }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(200),
        ..CheckConfig::default()
    };
    let r = check_function(&program, "z", &config);
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert_eq!(r.completeness.recovered, r.completeness.trials, "{r:?}");
}

/// A large function's settle steps call one shared helper for the test of whether a closed form
/// pins its step (`pinv_primitives::EmitOptions::outline_settles`, which the reorientation sets
/// from 20,000 forward instructions on; forced here), and its dispatch guards copy those calls:
/// a guard still tells which branch can give y (it does not decay to `true` and disappear), and
/// the inverse stays sound and complete, with the acceptance it has without the helpers.
#[test]
fn settle_tests_as_shared_helpers_are_called_by_the_guards_too() {
    let mut src = String::from("fn f(x: f64) -> f64 {\n    let mut a = x;\n");
    for _ in 0..40 {
        src.push_str("    a = if a > 0.0 { a * 0.5 } else { a + 1.0 };\n");
    }
    src.push_str("    a\n}\n");
    let program = Program::parse("large.pinv", &src).expect("compiles");
    let mut options = ReorientOptions::default();
    options.emit.outline_settles = true;
    let inverse = program
        .invert_with("f", &program.stack(), &options)
        .expect("invertible");
    let module = inverse.module();
    let pieces: Vec<_> = module
        .functions
        .iter()
        .filter(|(_, g)| g.name.starts_with("piece."))
        .map(|(id, _)| id)
        .collect();
    assert!(!pieces.is_empty(), "no shared helper");
    let calls_piece = |g: &pinv_core::ir::Function| {
        g.insts.values().any(|d| {
            matches!(&d.kind, pinv_core::ir::InstKind::Call { callee, .. } if pieces.contains(callee))
        })
    };
    assert!(calls_piece(&module.functions[inverse.inverse_id()]));
    let guards: Vec<_> = module
        .functions
        .values()
        .filter(|g| g.name.contains(".guard."))
        .collect();
    assert!(guards.len() >= 40, "{} guards", guards.len());
    for g in guards {
        assert!(calls_piece(g), "{} does not test its step", g.name);
    }
    let config = CheckConfig {
        cases: 300,
        ..CheckConfig::default()
    };
    let shared = pinv::check::check_inverse(&inverse, &config);
    let inline = check_function(&program, "f", &config);
    for report in [&shared, &inline] {
        assert_eq!(report.soundness.violations, 0, "{report:?}");
        assert_eq!(
            report.completeness.recovered, report.completeness.trials,
            "{report:?}"
        );
        assert_eq!(report.status, Status::Ok, "{report:?}");
    }
    assert_eq!(shared.acceptance(), inline.acceptance());
}
