//! Acceptance on functions of the kinds users bring (`tests/programs/acceptance.pinv` and
//! `tests/corpus/systems.pinv`): kinematics, statistics, finance, geometry, normalisation,
//! piecewise maps. Every inverse is sound and complete, the median function accepts ≥ 99% of
//! the θ drawn, and none accepts fewer than half.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 300 here).

use pinv::check::{check_function, CheckConfig, Status};
use pinv::Program;
use pinv_tests::corpus_dir;

#[test]
fn functions_users_bring_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let mut rates = Vec::new();
    let mut failures = Vec::new();
    for file in ["systems.pinv", "../programs/acceptance.pinv"] {
        let program = Program::load(corpus_dir().join(file)).expect("loads");
        for name in program.function_names() {
            let r = check_function(&program, name, &config);
            let sound_and_complete = r.sound_and_complete();
            if !(sound_and_complete && r.status == Status::Ok) {
                failures.push(format!("{file} {name}: {:?} {:?}", r.status, r.message));
            }
            let rate = r.acceptance();
            if rate < 50.0 {
                failures.push(format!("{file} {name}: accepts {rate:.1}%"));
            }
            rates.push(rate);
        }
    }
    assert!(rates.len() >= 25, "{} functions", rates.len());
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    assert!(median >= 99.0, "median acceptance {median:.1}%: {rates:?}");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A sum, difference, product or quotient of two unknowns where one has a known range (a sine,
/// a logistic, an angle, an exponential, a root): θ draws the other only from the values that
/// leave the bounded one in its range (a domain that depends on y), or draws the one with the
/// range itself. Each of these accepted 6% to 76% of θ when θ drew any real.
#[test]
fn a_bounded_term_narrows_what_theta_draws_for_the_other() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let program = Program::load(corpus_dir().join("../programs/acceptance.pinv")).expect("loads");
    for name in [
        "noisy_phase",
        "calibrated",
        "heading",
        "saturated_drop",
        "active_power",
        "line_current",
        "grown",
        "compounded",
        "amplitude",
        "above_floor",
    ] {
        let r = check_function(&program, name, &config);
        assert!(r.sound_and_complete(), "{name}: {:?}", r.message);
        let rate = r.acceptance();
        assert!(rate >= 95.0, "{name} accepts {rate:.1}%");
    }
}

/// A product of two unknowns where one factor keeps one sign and both have a range (`v² ·
/// sin(2a)`, `exp(−d) · sin(p)`, `|v| · cos(t)`): θ draws the factor whose partner keeps one
/// sign from the values that leave the partner, y over it, in its range (the sine on y's side
/// of 0). A θ for the one-signed factor left the sine beyond ±1 for about half the draws, and
/// a balanced split of `v² · sin(2a)` for most (42%, 52% and 42% accepted).
#[test]
fn a_product_with_a_one_signed_factor_draws_the_other_on_ys_side() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let program = Program::load(corpus_dir().join("../programs/acceptance.pinv")).expect("loads");
    for name in ["projectile_range", "damped", "rectified"] {
        let r = check_function(&program, name, &config);
        assert!(r.sound_and_complete(), "{name}: {:?}", r.message);
        let rate = r.acceptance();
        assert!(rate >= 95.0, "{name} accepts {rate:.1}%");
    }
}

/// Helpers called with constants (`clamp(2x − 0.5, 0, 1)`, `lerp(220, 440, t)`) are copied into
/// their callers, where the constants are known (`pinv_core::ir::inline`). Walked back through
/// the helper's own inverse, the constants were read from θ and kept only where θ hit them
/// exactly: 0% to 4.5% of θ were accepted.
#[test]
fn helpers_called_with_constants_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let program = Program::load(corpus_dir().join("../programs/acceptance.pinv")).expect("loads");
    for (name, floor) in [
        ("brightness", 95.0),
        ("tone", 95.0),
        ("percent", 95.0),
        ("bin", 50.0),
    ] {
        let r = check_function(&program, name, &config);
        assert!(r.sound_and_complete(), "{name}: {:?}", r.message);
        let rate = r.acceptance();
        assert!(rate >= floor, "{name} accepts {rate:.1}%");
        let inverse = program.invert(name).expect("invertible");
        assert!(
            !inverse.inverse_ir().contains(".inv.body"),
            "{name}: the helper's inverse is still called"
        );
    }
}

/// Where an operand is computed from integers (or bools) alone, θ draws those first, from their
/// own domain, and the rest is solved from them: no θ reads a real that a whole number would then
/// have to come out of.
#[test]
fn integers_an_operand_is_computed_from_are_drawn_first() {
    use pinv::theta::SlotKind;
    use pinv_core::ir::{Domain, Type};
    let program = Program::load(corpus_dir().join("../programs/acceptance.pinv")).expect("loads");
    for (name, ty) in [("fare", Type::I64), ("surcharge", Type::Bool)] {
        let inverse = program.invert(name).expect("invertible");
        let domains: Vec<Domain> = inverse
            .schema()
            .slots
            .iter()
            .filter(|s| !s.conditional)
            .filter_map(|s| match s.kind {
                SlotKind::Value { domain, .. } => Some(domain),
                _ => None,
            })
            .collect();
        // (Reads "on some paths" name a float where rounding leaves several: not these.)
        assert_eq!(domains, vec![Domain::all(ty)], "{name}: {domains:?}");
    }
}

#[test]
fn injective_functions_read_no_theta() {
    // For each x, the PGF records no choice: the inverse reads no θ on the path of f(x) but,
    // where rounding leaves several floats that give a step's output (`log` of a quotient
    // takes three floats to one y near 0.1, and the sum after it must be exact), which of
    // them: an integer within the run, and the functions' inputs are all f64.
    let cases: [(&str, &[&str]); 2] = [
        ("systems.pinv", &["mid_half", "log_ratio", "split100"]),
        (
            "../programs/acceptance.pinv",
            &[
                "z_score",
                "logit",
                "sigmoid",
                "compound",
                "continuous",
                "segment",
                "min_max",
                "celsius_to_fahrenheit",
                "motion",
            ],
        ),
    ];
    let mut rng = pinv_core::rng::Rng::new(11);
    for (file, names) in cases {
        let program = Program::load(corpus_dir().join(file)).expect("loads");
        for &name in names {
            let inverse = program.invert(name).expect("invertible");
            // Every integer θ names a float among those that give a step's output.
            for slot in &inverse.schema().slots {
                if let pinv::theta::SlotKind::Value { domain, .. } = slot.kind {
                    if domain.ty() == pinv::ir::Type::I64 {
                        assert!(
                            slot.role.contains("which of the floats"),
                            "{name}: {}",
                            slot.role
                        );
                    }
                }
            }
            for _ in 0..50 {
                let x: Vec<pinv::Const> = inverse
                    .input_types()
                    .iter()
                    .map(|t| match t {
                        pinv::ir::Type::I64 => {
                            pinv::Const::I64((rng.next_u64() % 2001) as i64 - 1000)
                        }
                        _ => pinv::Const::F64((rng.next_u64() % 20_001) as f64 / 1000.0 - 10.0),
                    })
                    .collect();
                // Outside f's domain (the log of a negative odds ratio) every such x gives
                // NaN: f is injective on its domain only.
                let Ok(y) = program.run(name, &x) else {
                    continue;
                };
                if y.iter().any(|v| v.as_f64().is_some_and(|f| !f.is_finite())) {
                    continue;
                }
                let theta = inverse.pgf(&x).expect("pgf");
                assert!(
                    theta.iter().all(|t| matches!(t, pinv::Const::I64(_))),
                    "{name}{x:?}: θ = {theta:?}"
                );
            }
        }
    }
}

/// One i64 unknown used several times with no rewrite that leaves it once: θ is a start point,
/// the inverse scans the integers outward from it, and the PGF records x itself. A divisor that
/// depends on the unknown could trap partway through a scan, so such a term is not scanned:
/// its inverse is still sound and complete.
#[test]
fn an_integer_used_several_times_is_found_by_a_scan_from_theta() {
    use pinv::theta::SlotKind;
    use pinv_core::ir::Domain;
    let program = Program::load(corpus_dir().join("../programs/acceptance.pinv")).expect("loads");
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    for name in [
        "handshakes",
        "square_pixels",
        "self_mix",
        "triangle_dots",
        "power_tower",
    ] {
        let inverse = program.invert(name).expect("invertible");
        // One start point, an integer, read on every path (`handshakes` also has the
        // remainder of its `/ 2`, read where the product is odd).
        let starts: Vec<_> = inverse
            .schema()
            .slots
            .iter()
            .filter(|s| s.role.contains("start point"))
            .collect();
        assert!(
            matches!(
                starts.as_slice(),
                [s] if !s.conditional && matches!(s.kind, SlotKind::Value { domain: Domain::Int, .. })
            ),
            "{name}: {}",
            inverse.schema()
        );
        let r = check_function(&program, name, &config);
        assert!(r.sound_and_complete(), "{name}: {:?}", r.message);
        assert!(r.acceptance() >= 99.0, "{name}: {:.1}%", r.acceptance());
    }
    let program =
        Program::parse("t.pinv", "fn per(n: i64) -> i64 { (n * n + 7) / n }").expect("compiles");
    let inverse = program.invert("per").expect("invertible");
    assert!(
        !inverse
            .schema()
            .slots
            .iter()
            .any(|s| s.role.contains("start point")),
        "{}",
        inverse.schema()
    );
    let r = check_function(&program, "per", &config);
    assert!(r.sound_and_complete(), "{:?}", r.message);
}

/// An output at an end of a function's domain (`sqrt x = 0`, `asin x = π/2`, `acos x = 0` or
/// `π`, `log x = −∞`) pins the input: the probe past the end is NaN, which straddles nothing, so
/// the step read an offset θ that only 0 satisfied (20% of θ drawn were accepted). Now no θ is
/// read there, x comes back exactly, and the same holds inside a larger expression.
#[test]
fn an_output_at_the_end_of_a_domain_pins_the_input() {
    use pinv::Const::F64;
    use std::f64::consts::{FRAC_PI_2, PI};
    let program = Program::parse(
        "ends.pinv",
        "fn root(x: f64) -> f64 { sqrt(x) }
         fn arcsin(x: f64) -> f64 { asin(x) }
         fn arccos(x: f64) -> f64 { acos(x) }
         fn ln(x: f64) -> f64 { log(x) }
         fn shifted(x: f64) -> f64 { 2.0 * sqrt(x - 1.0) + 3.0 }",
    )
    .expect("compiles");
    let cases: [(&str, f64, f64); 8] = [
        ("root", 0.0, 0.0),
        ("root", -0.0, -0.0),
        ("arcsin", FRAC_PI_2, 1.0),
        ("arcsin", -FRAC_PI_2, -1.0),
        ("arccos", 0.0, 1.0),
        ("arccos", PI, -1.0),
        ("ln", f64::NEG_INFINITY, 0.0),
        ("shifted", 3.0, 1.0),
    ];
    for (name, y, want) in cases {
        let inverse = program.invert(name).expect("invertible");
        for seed in 0..20 {
            let mut sampler = pinv::theta::Sampler::new(seed);
            let x = inverse.call(&[F64(y)], &mut sampler);
            assert_eq!(x.ok(), Some(vec![F64(want)]), "{name}({y})");
        }
        let theta = inverse.pgf(&[F64(want)]).expect("pgf");
        assert!(theta.is_empty(), "{name}({want}): θ = {theta:?}");
    }
}

/// A product far below the ulp of the sum it is added to (`exp(x) · 1e-20 + 1`: all of it is
/// lost for x < 8) is solved by naming one of the floats that give the sum (from −1.1e-16 to
/// 1.1e-16 at y = 1), and x comes back. θ names one the product can be: of that run, the
/// negative half is no `exp(x) · 1e-20` nor `abs(x) · 1e-20`, and drawing from it too
/// accepted 59% of θ.
#[test]
fn a_run_of_floats_theta_names_is_narrowed_to_the_range_of_the_value_solved() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let program = Program::parse(
        "corrections.pinv",
        "fn grown(x: f64) -> f64 { exp(x) * 1e-20 + 1.0 }
         fn size(x: f64) -> f64 { abs(x) * 1e-20 + 1.0 }",
    )
    .expect("compiles");
    for name in ["grown", "size"] {
        let r = check_function(&program, name, &config);
        assert!(r.sound_and_complete(), "{name}: {:?}", r.message);
        let rate = r.acceptance();
        assert!(rate >= 90.0, "{name} accepts {rate:.1}%");
    }
}
