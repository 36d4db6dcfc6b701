//! Outputs that share unknowns, solved together: planar chains (`invert/src/egraph/polar.rs`:
//! two outputs that are sums of the same polar terms, so arms and pendulums accept most θ
//! instead of none) and linear systems (`invert/src/egraph/linear.rs`: `(x + y, x − y)`).
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 500 here).

use pinv::check::{check_inverse, CheckConfig, Status};
use pinv::egraph::Outcome;
use pinv::{Const, Program};
use pinv_tests::corpus_dir;

fn cases() -> usize {
    pinv_tests::check_cases().min(500)
}

/// What `check` finds short in an inverse, if anything: a status other than ok, an unsound or
/// incomplete case, or an acceptance below `least` percent.
fn shortfall(
    name: &str,
    inverse: &pinv::Inverse,
    config: &CheckConfig,
    least: f64,
) -> Option<String> {
    let r = check_inverse(inverse, config);
    let ok = r.status == Status::Ok
        && r.soundness.violations == 0
        && r.completeness.recovered == r.completeness.trials
        && r.acceptance() >= least;
    (!ok).then(|| {
        format!(
            "{name}: {:?}, accepted {:.1}% (want ≥ {least}%), {:?}, {:?}",
            r.status,
            r.acceptance(),
            r.soundness,
            r.completeness
        )
    })
}

const CHAINS: &str = "
fn kin2(a1: f64, a2: f64) -> (f64, f64) {
    let x = cos(a1) + cos(a1 + a2);
    let y = sin(a1) + sin(a1 + a2);
    (x, y)
}

// The outputs swapped: x uses sines.
fn pendulum(t: f64) -> (f64, f64) {
    (1.5 * sin(t), 1.5 * cos(t))
}

// Offsets, subtraction, coefficients on either side.
fn based(t1: f64, t2: f64) -> (f64, f64) {
    let x = 3.0 + cos(t1) * 2.0 - 0.5 * cos(t1 - t2);
    let y = sin(t1) * 2.0 - 1.0 - 0.5 * sin(t1 - t2);
    (x, y)
}

// Four links, and the last angle is an output too (known when the chain is solved).
fn arm4(t1: f64, t2: f64, t3: f64, t4: f64) -> (f64, f64, f64) {
    let a2 = t1 + t2;
    let a3 = a2 + t3;
    let a4 = a3 + t4;
    let x = 2.0 * cos(t1) + 1.5 * cos(a2) + cos(a3) + 0.3 * cos(a4);
    let y = 2.0 * sin(t1) + 1.5 * sin(a2) + sin(a3) + 0.3 * sin(a4);
    (x, y, a4)
}

// Not a chain: the links differ between x and y.
fn skewed(a: f64, b: f64) -> (f64, f64) {
    (cos(a) + 2.0 * cos(b), sin(a) + sin(b))
}
";

fn chains() -> Program {
    Program::parse("chains.pinv", CHAINS).expect("compiles")
}

fn f(c: &Const) -> f64 {
    c.as_f64().expect("f64")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

#[test]
fn chains_are_solved_jointly_and_accept_most_theta() {
    let arm3 = Program::load(corpus_dir().join("loops.pinv")).expect("loops.pinv compiles");
    let programs = [
        (chains(), "kin2", 99.0),
        (chains(), "pendulum", 99.0),
        (chains(), "based", 99.0),
        (chains(), "arm4", 50.0),
        (arm3, "arm3", 50.0),
    ];
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    for (program, name, least) in &programs {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        if report.outcome != Outcome::Isolated || report.joint.len() != 1 {
            failures.push(format!("{name}: not solved as a chain:\n{report}"));
        }
        failures.extend(shortfall(name, &inverse, &config, *least));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_elbow_and_the_turns_pick_the_preimage() {
    let program = chains();
    let inverse = program.invert("kin2").expect("invertible");
    let x0 = [Const::F64(0.3), Const::F64(0.9)];
    let y = inverse.forward(&x0).expect("runs");
    // θ: elbow, whole turns of a1, whole turns of a1 + a2 (then offsets, read on some paths).
    let theta = inverse.pgf(&x0).expect("pgf");
    let back = inverse.call_with_tape(&y, &theta).expect("in domain");
    assert!(close(f(&back[0]), 0.3, 1e-9) && close(f(&back[1]), 0.9, 1e-9));
    let flip = |c: &Const| Const::I64(1 - c.as_i64().expect("a choice"));
    let mut other = theta.clone();
    other[0] = flip(&theta[0]);
    let mirrored = inverse.call_with_tape(&y, &other).expect("in domain");
    // The other elbow: the same hand, the middle joint bent the other way (a2 ↦ −a2).
    assert!(close(f(&mirrored[1]), -0.9, 1e-9), "{mirrored:?}");
    let again = inverse.forward(&mirrored).expect("runs");
    for (a, b) in again.iter().zip(&y) {
        assert!(close(f(a), f(b), 1e-9), "{again:?} ≠ {y:?}");
    }
    // One more whole turn of a1 and one fewer of a1 + a2: t1 + 2π, t2 − 2π.
    let mut turned = theta.clone();
    turned[1] = Const::I64(theta[1].as_i64().expect("turns") + 1);
    let spun = inverse.call_with_tape(&y, &turned).expect("in domain");
    let tau = std::f64::consts::TAU;
    assert!(close(f(&spun[0]), 0.3 + tau, 1e-9), "{spun:?}");
    assert!(close(f(&spun[1]), 0.9 - tau, 1e-9), "{spun:?}");
}

#[test]
fn a_target_out_of_reach_is_a_domain_error() {
    let program = chains();
    let inverse = program.invert("kin2").expect("invertible");
    // Two links of length 1 reach at most 2.
    for theta in [
        [Const::I64(0), Const::I64(0), Const::I64(0)],
        [Const::I64(1), Const::I64(3), Const::I64(-2)],
    ] {
        let err = inverse
            .call_with_tape(&[Const::F64(2.5), Const::F64(0.0)], &theta)
            .expect_err("out of reach");
        assert!(err.is_domain_error(), "{err}");
        assert!(err.to_string().contains("reach"), "{err}");
    }
    // A pendulum of length 1.5 is only ever 1.5 from its pivot.
    let inverse = program.invert("pendulum").expect("invertible");
    let err = inverse
        .call_with_tape(&[Const::F64(0.0), Const::F64(1.0)], &[Const::I64(0)])
        .expect_err("not on the circle");
    assert!(err.is_domain_error(), "{err}");
}

#[test]
fn sums_that_are_not_a_chain_are_not_solved_as_one() {
    // `cos a + 2·cos b` with `sin a + sin b` is no planar chain (each link has one length):
    // the chain solver leaves it, and Newton's method solves it as a nonlinear system.
    let program = chains();
    let inverse = program.invert("skewed").expect("invertible");
    let report = &inverse.isolation()[0];
    assert!(
        report.joint.iter().all(|j| !j.contains("chain")),
        "{report}"
    );
    // Sound: whatever it accepts maps back to y; and complete.
    let r = check_inverse(
        &inverse,
        &CheckConfig {
            cases: cases().min(200),
            ..CheckConfig::default()
        },
    );
    assert_eq!(r.soundness.violations, 0, "{r:?}");
    assert_eq!(r.completeness.recovered, r.completeness.trials, "{r:?}");
}

const SYSTEMS: &str = "
fn two_out(x: f64, y: f64) -> (f64, f64) { (x + y, x - y) }

fn rot(x: f64, y: f64) -> (f64, f64) {
    let c = 0.6;
    let s = 0.8;
    (c * x - s * y, s * x + c * y)
}

// More outputs than unknowns: the third row is an equation y must satisfy.
fn over(a: f64, b: f64) -> (f64, f64, f64) { (a + b, a - b, 2.0 * a) }

// More unknowns than outputs: θ for one.
fn under(a: f64, b: f64, c: f64) -> (f64, f64) { (a + 2.0 * b - c, b + c) }

// Every unknown in both outputs, rank 2: θ for one.
fn wide(a: f64, b: f64, c: f64) -> (f64, f64) { (a + b + c, a - b + 3.0 * c) }

// Atoms: exp(x) is solved by the system, then x by the ordinary walk.
fn atoms(x: f64, y: f64) -> (f64, f64) { (exp(x) + y, exp(x) - 2.0 * y + 1.0) }

// Not linear (a sum and a product).
fn sum_prod(x: f64, y: f64) -> (f64, f64) { (x + y, x * y) }
";

#[test]
fn linear_systems_are_solved_together() {
    let program = Program::parse("systems.pinv", SYSTEMS).expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    for name in ["two_out", "rot", "over", "under", "wide", "atoms"] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        // `under` needs no system (θ for c, then b, then a: no unknown is solved twice);
        // `over` keeps one check (its third output is an equation, not fan-out) and `atoms` a
        // step that rejects some y (exp(x) must come out positive): both count as improved.
        let joint = report.joint.len() == 1
            && matches!(report.outcome, Outcome::Isolated | Outcome::Improved);
        let expected = if name == "under" {
            report.outcome == Outcome::NoFanOut
        } else {
            joint
        };
        if !expected {
            failures.push(format!("{name}: not solved as expected:\n{report}"));
        }
        failures.extend(shortfall(name, &inverse, &config, 99.0));
    }
    // Not linear: solved as a sum and a product instead (below), not as a linear system.
    let inverse = program.invert("sum_prod").expect("invertible");
    let joint = &inverse.isolation()[0].joint;
    assert!(
        joint.len() == 1 && joint[0].contains("sum and product"),
        "{joint:?}"
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn systems_read_theta_only_for_what_the_outputs_leave_free() {
    let program = Program::parse("systems.pinv", SYSTEMS).expect("compiles");
    // (x + y, x − y) determines both: no θ, x = (s + d) / 2, y = (s − d) / 2.
    let inverse = program.invert("two_out").expect("invertible");
    let x = inverse
        .call_with_tape(&[Const::F64(5.0), Const::F64(1.0)], &[])
        .expect("in domain");
    assert_eq!(x, [Const::F64(3.0), Const::F64(2.0)]);
    // Three equations, two unknowns: y off the plane a + b + (a − b) = 2a is a domain error.
    let inverse = program.invert("over").expect("invertible");
    let ok = inverse
        .call_with_tape(&[Const::F64(2.0), Const::F64(0.0), Const::F64(2.0)], &[])
        .expect("in domain");
    assert_eq!(ok, [Const::F64(1.0), Const::F64(1.0)]);
    let err = inverse
        .call_with_tape(&[Const::F64(2.0), Const::F64(0.0), Const::F64(3.0)], &[])
        .expect_err("no preimage");
    assert!(err.is_domain_error(), "{err}");
    // Two equations, three unknowns: one θ, and every θ gives a preimage.
    let inverse = program.invert("under").expect("invertible");
    let y = [Const::F64(4.0), Const::F64(1.0)];
    let mut seen = Vec::new();
    for t in [-2.0, 0.0, 0.5, 3.0] {
        let x = inverse
            .call_with_tape(&y, &[Const::F64(t)])
            .expect("in domain");
        let back = inverse.forward(&x).expect("runs");
        for (a, b) in back.iter().zip(&y) {
            assert!(close(f(a), f(b), 1e-9), "{back:?} ≠ {y:?}");
        }
        seen.push(x);
    }
    seen.dedup();
    assert_eq!(seen.len(), 4, "θ picks the preimage: {seen:?}");
}

#[test]
fn a_sum_and_a_product_are_the_roots_of_a_quadratic() {
    let program = Program::parse(
        "vieta.pinv",
        "fn sum_prod(x: f64, y: f64) -> (f64, f64) { (x + y, x * y) }
         fn scaled(x: f64, y: f64) -> (f64, f64) { (2.0 * x + 2.0 * y + 1.0, 3.0 * (y * x) - 1.0) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    for name in ["sum_prod", "scaled"] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        assert_eq!(report.outcome, Outcome::Isolated, "{report}");
        assert_eq!(report.joint.len(), 1, "{report}");
        let r = check_inverse(&inverse, &config);
        assert_eq!(r.status, Status::Ok, "{name}: {r:?}");
        assert!(r.acceptance() >= 99.0, "{name}: {r:?}");
        assert_eq!(r.completeness.recovered, r.completeness.trials, "{name}");
    }
    // x + y = 5, x·y = 6: θ picks which root is x.
    let inverse = program.invert("sum_prod").expect("invertible");
    let y = [Const::F64(5.0), Const::F64(6.0)];
    let larger = inverse
        .call_with_tape(&y, &[Const::I64(0)])
        .expect("in domain");
    let smaller = inverse
        .call_with_tape(&y, &[Const::I64(1)])
        .expect("in domain");
    assert_eq!(larger, [Const::F64(3.0), Const::F64(2.0)]);
    assert_eq!(smaller, [Const::F64(2.0), Const::F64(3.0)]);
    // x + y = 1, x·y = 6 has no real solution.
    let err = inverse
        .call_with_tape(&[Const::F64(1.0), Const::F64(6.0)], &[Const::I64(0)])
        .expect_err("complex roots");
    assert!(err.is_domain_error(), "{err}");
}

#[test]
fn wrapped_angles_come_back_as_whole_turns() {
    let program = Program::parse(
        "wrap.pinv",
        "fn wrapped(x: f64) -> f64 { atan2(sin(x), cos(x)) }
         fn heading(a: f64, b: f64) -> f64 { atan2(sin(a + b), cos(a + b)) * 2.0 }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    for name in ["wrapped", "heading"] {
        let inverse = program.invert(name).expect("invertible");
        let r = check_inverse(&inverse, &config);
        assert_eq!(r.status, Status::Ok, "{name}: {r:?}");
        assert!(r.acceptance() >= 99.0, "{name}: {r:?}");
        assert_eq!(r.completeness.recovered, r.completeness.trials, "{name}");
    }
    // θ is the number of whole turns; an output outside [−π, π] is no angle.
    let inverse = program.invert("wrapped").expect("invertible");
    let x = inverse
        .call_with_tape(&[Const::F64(0.5)], &[Const::I64(2)])
        .expect("in domain");
    assert!(
        close(f(&x[0]), 0.5 + 2.0 * std::f64::consts::TAU, 1e-12),
        "{x:?}"
    );
    let err = inverse
        .call_with_tape(&[Const::F64(4.0)], &[Const::I64(0)])
        .expect_err("not an angle");
    assert!(err.is_domain_error(), "{err}");
}

#[test]
fn polar_coordinates_choose_the_sign_of_the_length() {
    let program = Program::parse(
        "polar.pinv",
        "fn to_xy(r: f64, t: f64) -> (f64, f64) { (r * cos(t), r * sin(t)) }
         fn offset(r: f64, t: f64) -> (f64, f64) { (1.0 + cos(t) * r, sin(t) * r - 2.0) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    for name in ["to_xy", "offset"] {
        let inverse = program.invert(name).expect("invertible");
        let r = check_inverse(&inverse, &config);
        assert_eq!(r.status, Status::Ok, "{name}: {r:?}");
        assert!(r.acceptance() >= 99.0, "{name}: {r:?}");
        assert_eq!(r.completeness.recovered, r.completeness.trials, "{name}");
    }
    // (0, 2): r = 2 at t = π/2, or r = −2 at t = −π/2; then whole turns.
    let inverse = program.invert("to_xy").expect("invertible");
    let y = [Const::F64(0.0), Const::F64(2.0)];
    let half_pi = std::f64::consts::FRAC_PI_2;
    let plus = inverse
        .call_with_tape(&y, &[Const::I64(0), Const::I64(0)])
        .expect("in domain");
    let minus = inverse
        .call_with_tape(&y, &[Const::I64(1), Const::I64(1)])
        .expect("in domain");
    assert_eq!(plus, [Const::F64(2.0), Const::F64(half_pi)]);
    assert!(f(&minus[0]) == -2.0 && close(f(&minus[1]), -half_pi + std::f64::consts::TAU, 1e-12));
}

const RUNTIME: &str = "
// A rotation by an input angle and a scale by an input factor.
fn scale_rotate(x: f64, y: f64, s: f64, t: f64) -> (f64, f64) {
    let c = s * cos(t);
    let d = s * sin(t);
    (c * x - d * y, d * x + c * y)
}

// A mix with a weight that is an input.
fn mix(a: f64, b: f64, w: f64) -> (f64, f64) {
    (w * a + (1.0 - w) * b, a - b)
}

// A cyclic gain in three dimensions: singular where g³ = −1.
fn gain3(x: f64, y: f64, z: f64, g: f64) -> (f64, f64, f64) {
    (g * x + y, g * y + z, g * z + x)
}
";

#[test]
fn systems_with_run_time_coefficients_are_solved_after_their_coefficients() {
    let program = Program::parse("runtime.pinv", RUNTIME).expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    for (name, least, thetas) in [
        // The given inputs, then one read per unknown, made only where the matrix is singular.
        ("scale_rotate", 99.0, 2 + 2),
        ("mix", 99.0, 1 + 2),
        ("gain3", 90.0, 1 + 3),
    ] {
        let inverse = program.invert(name).expect("invertible");
        let report = &inverse.isolation()[0];
        if !report
            .joint
            .iter()
            .any(|j| j.contains("with coefficients from"))
        {
            failures.push(format!(
                "{name}: not solved as a run-time system:\n{report}"
            ));
        }
        if inverse.schema().len() != thetas {
            failures.push(format!("{name}: θ\n{}", inverse.schema()));
        }
        failures.extend(shortfall(name, &inverse, &config, least));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn a_singular_run_time_system_leaves_its_null_space_to_theta() {
    let program = Program::parse("runtime.pinv", RUNTIME).expect("compiles");
    let inverse = program.invert("gain3").expect("invertible");
    let gain = |g: f64, free: f64| [Const::F64(g), Const::F64(free)];
    // g = −1: the rows are dependent (they sum to 0), so a y whose outputs do not sum to 0 has
    // no preimage with that gain, whatever θ names.
    let y = [Const::F64(1.0), Const::F64(2.0), Const::F64(3.0)];
    for free in [0.0, 0.5, -7.0] {
        let err = inverse
            .call_with_tape(&y, &gain(-1.0, free))
            .expect_err("inconsistent");
        assert!(err.is_domain_error(), "{err}");
    }
    // Any other gain solves it, with no further θ.
    let x = inverse
        .call_with_tape(&y, &[Const::F64(2.0)])
        .expect("solvable");
    let back = inverse.forward(&x).expect("runs");
    for (a, b) in back.iter().zip(&y) {
        assert!(close(f(a), f(b), 1e-9), "{back:?}");
    }
    // A y on the plane the rows leave: every θ for the free column gives a preimage, each a
    // different one (the null space is the line x = y = z).
    let y = [Const::F64(1.0), Const::F64(2.0), Const::F64(-3.0)];
    let mut seen = Vec::new();
    for free in [0.0, 0.5, -7.0, 1e3] {
        let x = inverse
            .call_with_tape(&y, &gain(-1.0, free))
            .expect("consistent");
        let back = inverse.forward(&x).expect("runs");
        for (a, b) in back.iter().zip(&y) {
            assert!(close(f(a), f(b), 1e-9), "θ {free}: {x:?} gives {back:?}");
        }
        assert!(!seen.contains(&f(&x[0])), "θ {free}: {x:?} again");
        seen.push(f(&x[0]));
    }
    // And the PGF names such an x: gain −1 and its free unknown.
    let x0 = [0.25, -1.5, 4.0, -1.0].map(Const::F64);
    let y0 = inverse.forward(&x0).expect("runs");
    let tape = inverse.pgf(&x0).expect("pgf");
    assert_eq!(tape.len(), 2, "{tape:?}");
    let x = inverse.call_with_tape(&y0, &tape).expect("the PGF's θ");
    for (a, b) in x.iter().zip(&x0) {
        assert!(close(f(a), f(b), 1e-9), "{x:?} is not {x0:?}");
    }
    // The scale of a rotation is drawn nonzero: a rotation is singular only at scale 0.
    let rotate = program.invert("scale_rotate").expect("invertible");
    let text = rotate.schema().to_string();
    assert!(text.contains("nonzero"), "{text}");
}

#[test]
fn a_free_length_that_is_never_negative_needs_no_sign() {
    // The radius √r is never negative: θ is only the whole turns of t.
    let program = Program::parse(
        "noise.pinv",
        "fn noise(r: f64, t: f64) -> (f64, f64) { let s = sqrt(r); (s * cos(t), s * sin(t)) }
         fn free(r: f64, t: f64) -> (f64, f64) { (r * cos(t), r * sin(t)) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let noise = program.invert("noise").expect("invertible");
    assert!(
        !noise.schema().to_string().contains("sign"),
        "{}",
        noise.schema()
    );
    let r = check_inverse(&noise, &config);
    assert!(
        r.acceptance() >= 99.0 && r.completeness.recovered == r.completeness.trials,
        "{r:?}"
    );
    // A length of either sign keeps its sign choice.
    let free = program.invert("free").expect("invertible");
    assert!(
        free.schema().to_string().contains("sign"),
        "{}",
        free.schema()
    );
}
