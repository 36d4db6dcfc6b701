//! Inverting straight-line code (issue: reorientation): every straight-line function of the
//! corpus is sound and complete under `pinv check`, and those without fan-out are accepted for
//! almost every θ. Also ParametricInversion.jl's own examples, ported.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000).

use pinv::check::{check_function, close, CheckConfig, Status};
use pinv::{Const, Program, Sampler};
use pinv_tests::corpus_dir;

fn cases() -> usize {
    pinv_tests::check_cases()
}

fn load(file: &str) -> Program {
    Program::load(corpus_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// (file, function, whether an unknown is used more than once).
const STRAIGHT: &[(&str, &str, bool)] = &[
    ("straight.pinv", "mul_add", false),
    ("straight.pinv", "lin", false),
    ("straight.pinv", "easy", false),
    ("straight.pinv", "double", false),
    ("straight.pinv", "nested", false),
    ("straight.pinv", "ratio", false),
    ("straight.pinv", "shifted_exp", false),
    ("unary.pinv", "square", true),
    ("unary.pinv", "wave", false),
    ("unary.pinv", "grow", false),
    ("unary.pinv", "root", false),
    ("unary.pinv", "magnitude", false),
    ("unary.pinv", "softplus", false),
    ("unary.pinv", "uses_softplus", false),
    ("fanout.pinv", "twice", true),
    ("fanout.pinv", "fdupl", true),
    ("fanout.pinv", "xy_plus_x", true),
    ("fanout.pinv", "reuse", true),
    ("fanout.pinv", "quad", true),
    ("ints.pinv", "add5", false),
    ("ints.pinv", "mod17", false),
    ("ints.pinv", "odd_mul", false),
    ("ints.pinv", "mix", true),
    ("ints.pinv", "halve", false),
];

#[test]
fn straight_line_corpus_is_sound_and_complete() {
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    for &(file, name, fan_out) in STRAIGHT {
        let program = load(file);
        let report = check_function(&program, name, &config);
        let ok = report.status == Status::Ok
            && report.soundness.violations == 0
            && report.soundness.errors == 0
            && report.completeness.recovered == report.completeness.trials
            && report.soundness.trials == config.cases
            && (fan_out || report.acceptance() >= 99.0);
        if !ok {
            failures.push(format!(
                "{file} {name}: {:?}, accepted {:.1}%, {:?}, {:?}: {}",
                report.status,
                report.acceptance(),
                report.soundness,
                report.completeness,
                report.message.unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Draws `n` θ for y and checks every preimage; returns how many were accepted.
fn preimages(program: &Program, name: &str, y: &[Const], n: usize) -> usize {
    let inverse = program.invert(name).expect("invertible");
    let mut sampler = Sampler::new(7);
    let mut accepted = 0;
    for _ in 0..n {
        let (x, theta) = inverse.sample(y, &mut sampler);
        match x {
            Ok(x) => {
                let fx = program.run(name, &x).expect("runs");
                for (a, b) in fx.iter().zip(y) {
                    assert!(
                        close(*a, *b, 1e-9),
                        "{name}: θ {theta:?} gave {x:?} ↦ {fx:?}"
                    );
                }
                accepted += 1;
            }
            Err(e) => assert!(e.is_domain_error(), "{name}: {e}"),
        }
    }
    accepted
}

#[test]
fn parametric_inversion_jl_examples() {
    // From ParametricInversion.jl's tests: x*y+z at y = 5, and x*2+y*3 at y = 100.
    let program = load("straight.pinv");
    assert!(preimages(&program, "mul_add", &[Const::F64(5.0)], 500) >= 495);
    assert!(preimages(&program, "lin", &[Const::F64(100.0)], 500) >= 495);
    // The degenerate case: mul_add = z exactly when x*y = 0, and θ reaches x = 0 and y = 0.
    let inverse = program.invert("mul_add").expect("invertible");
    for x in [
        [Const::F64(0.0), Const::F64(0.0), Const::F64(5.0)],
        [Const::F64(0.0), Const::F64(3.0), Const::F64(5.0)],
        [Const::F64(-2.0), Const::F64(0.0), Const::F64(5.0)],
    ] {
        let theta = inverse.pgf(&x).expect("pgf");
        let back = inverse
            .call_with_tape(&[Const::F64(5.0)], &theta)
            .expect("the PGF's θ is in the domain");
        // Equal as numbers: the sign of a zero product is lost in `x*y + z` (−0 + 5 = 0 + 5).
        for (a, b) in back.iter().zip(&x) {
            assert!(close(*a, *b, 0.0), "θ = {theta:?}: {back:?} ≠ {x:?}");
        }
    }
}

#[test]
fn explicit_theta_gives_the_same_preimage_every_time() {
    let program = load("straight.pinv");
    let inverse = program.invert("mul_add").expect("invertible");
    let theta = inverse
        .pgf(&[Const::F64(2.0), Const::F64(3.0), Const::F64(4.0)])
        .expect("pgf");
    let first = inverse
        .call_with_tape(&[Const::F64(10.0)], &theta)
        .expect("in domain");
    for _ in 0..5 {
        assert_eq!(
            inverse
                .call_with_tape(&[Const::F64(10.0)], &theta)
                .expect("again"),
            first
        );
    }
    assert_eq!(first, [Const::F64(2.0), Const::F64(3.0), Const::F64(4.0)]);
}

#[test]
fn calls_nest_and_use_declared_inverses() {
    let program = Program::parse(
        "calls.pinv",
        "fn inner(a: f64) -> f64 { a * 3.0 }
         fn middle(a: f64, b: f64) -> f64 { inner(a) + b }
         fn outer(a: f64, b: f64, c: f64) -> f64 { middle(a, b) * 2.0 - c }
         fn cube(x: f64) -> f64 { x * x * x }
         inverse cube(y: f64) -> f64 { if y < 0.0 { -pow(-y, 1.0 / 3.0) } else { pow(y, 1.0 / 3.0) } }
         fn uses_cube(x: f64, s: f64) -> f64 { cube(x) + s }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: 200,
        ..CheckConfig::default()
    };
    for name in ["outer", "uses_cube"] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
    // Small callees are copied into the caller (`pinv_core::ir::inline`): the inverse solves
    // their code in place, with what the caller knows; a declared inverse stays a call.
    let ir = program.invert("outer").expect("invertible").inverse_ir();
    assert!(!ir.contains("call %middle.inv"), "{ir}");
    assert!(!ir.contains("call %inner.inv"), "{ir}");
    let ir = program
        .invert("uses_cube")
        .expect("invertible")
        .inverse_ir();
    assert!(ir.contains("call %inverse:cube"), "{ir}");
}

/// A callee too large to copy is inverted on its own and called, as before inlining.
#[test]
fn a_large_callee_stays_a_call_of_its_inverse() {
    let mut body = String::from("fn big(a: f64) -> f64 {\n    let mut s = a;\n");
    for _ in 0..500 {
        body.push_str("    s = s * 1.0001 + 0.5;\n");
    }
    body.push_str("    s\n}\nfn outer(a: f64, b: f64) -> f64 { big(a) * 2.0 - b }\n");
    let program = Program::parse("big.pinv", &body).expect("compiles");
    let ir = program.invert("outer").expect("invertible").inverse_ir();
    assert!(ir.contains("call %big.inv"), "{ir}");
    let config = CheckConfig {
        cases: 50,
        ..CheckConfig::default()
    };
    let report = check_function(&program, "outer", &config);
    assert_eq!(report.status, Status::Ok, "{report:?}");
}

#[test]
fn recursion_with_no_base_case_is_reported_not_looped() {
    // Recursion is inverted as calls of the inverse being built; where no path can return, the
    // image is empty and the inversion says so instead of building an inverse that recurses
    // until a limit.
    let program = Program::parse(
        "rec.pinv",
        "fn down(x: f64) -> f64 { up(x) }
         fn up(x: f64) -> f64 { down(x) }
         fn user(x: f64) -> f64 { up(x) + 1.0 }",
    )
    .expect("compiles");
    for name in ["user", "up", "down"] {
        let err = program.invert(name).expect_err("never returns");
        let message = err.to_string();
        assert!(message.contains("never returns"), "{message}");
        assert!(message.contains("recursive"), "{message}");
        assert!(message.contains(&format!("`{name}`")), "{message}");
    }
}

#[test]
fn comparisons_are_solved_after_what_determines_their_operands() {
    // x is determined by x * 2.0; the comparison is then computed and checked, which every y in
    // the image passes. Solving the comparison first would read x from θ, and x * 2.0 would
    // almost never agree.
    let program = Program::parse(
        "cmp.pinv",
        "fn tagged(x: f64) -> (f64, bool) { (x * 2.0, x > 1.0) }
         fn flags(a: i64) -> (bool, i64, bool) { (a < 10, a * 3, a == 3) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(300),
        ..CheckConfig::default()
    };
    for name in ["tagged", "flags"] {
        let report = check_function(&program, name, &config);
        assert_eq!(report.status, Status::Ok, "{name}: {report:?}");
        assert!(report.acceptance() >= 99.0, "{name}: {report:?}");
    }
}

#[test]
fn an_integer_computed_through_f64_steps_round_trips() {
    // `a as f64` is solved from p / b, which carries rounding (−27.999999999999996 for −28):
    // the conversion takes the nearest integer within the tolerance instead of failing.
    let program = Program::parse(
        "conv.pinv",
        "fn conv(a: i64, b: f64) -> f64 { (a as f64) * b + (b as i64) as f64 }",
    )
    .expect("compiles");
    let inverse = program.invert("conv").expect("invertible");
    let x0 = [Const::I64(-28), Const::F64(-9.77088982130693)];
    let y = inverse.forward(&x0).expect("runs");
    let theta = inverse.pgf(&x0).expect("pgf");
    let back = inverse.call_with_tape(&y, &theta).expect("in domain");
    assert_eq!(back[0], Const::I64(-28));
    assert!(close(back[1], x0[1], 1e-9), "{back:?}");
    let report = check_function(
        &program,
        "conv",
        &CheckConfig {
            cases: cases().min(300),
            ..CheckConfig::default()
        },
    );
    assert_eq!(report.status, Status::Ok, "{report:?}");
    assert_eq!(report.completeness.recovered, report.completeness.trials);
}

#[test]
fn a_numeric_root_is_the_one_nearest_its_start_point_in_both_engines() {
    // x³ − x = 0 has three roots; no rewrite leaves x once, so the inverse solves numerically
    // from the start point θ, scanning outward for the nearest bracket of a root. A θ that is a
    // root itself comes back unchanged.
    let program =
        Program::parse("roots.pinv", "fn f(x: f64) -> f64 { x * x * x - x }").expect("compiles");
    let y = [Const::F64(0.0)];
    let cases: [(f64, f64); 9] = [
        (-3.0, -1.0),
        (-0.7, -1.0),
        (-1.0, -1.0),
        (-0.2, 0.0),
        (0.0, 0.0),
        (0.2, 0.0),
        (0.8, 1.0),
        (1.0, 1.0),
        (4e7, 1.0),
    ];
    for engine in [pinv::Engine::Interp, pinv::Engine::Jit] {
        let inverse = program
            .clone()
            .with_engine(engine)
            .invert("f")
            .expect("invertible");
        for (s, root) in cases {
            let x = inverse
                .call_with_tape(&y, &[Const::F64(s)])
                .unwrap_or_else(|e| panic!("{engine:?}: θ = {s}: {e}"));
            assert!(
                close(x[0], Const::F64(root), 1e-9),
                "{engine:?}: θ = {s} gave {x:?}, not {root}"
            );
        }
        // A NaN start point still names a root (every distance from it is 0).
        let x = inverse
            .call_with_tape(&y, &[Const::F64(f64::NAN)])
            .unwrap_or_else(|e| panic!("{engine:?}: θ = NaN: {e}"));
        assert!(
            [-1.0, 0.0, 1.0]
                .iter()
                .any(|&r| close(x[0], Const::F64(r), 1e-9)),
            "{x:?}"
        );
    }
}

/// An unknown compared with itself (`p <= p`, and what `p <= min(p, p)` becomes once `min(p, p)`
/// is p) is read from θ once and the comparison checked forward: reading each side from θ, as
/// a comparison of two unknowns does, gave two different values of p for almost every θ.
#[test]
fn an_unknown_compared_with_itself_is_read_once() {
    let program = Program::parse(
        "self.pinv",
        "fn le_self(p: f64, q: f64) -> (bool, f64) { (p <= min(p, p), q * 2.0) }
         fn gt_self(n: i64) -> bool { n > n }
         fn ge_self(n: i64, m: i64) -> (bool, i64) { (n >= n, n + m) }",
    )
    .expect("compiles");
    let config = CheckConfig {
        cases: cases().min(300),
        ..CheckConfig::default()
    };
    for name in ["le_self", "gt_self", "ge_self"] {
        let r = check_function(&program, name, &config);
        assert!(
            r.sound_and_complete() && r.acceptance() >= 90.0,
            "{name}: {:?} {:?}, accepted {:.1}%",
            r.status,
            r.message,
            r.acceptance()
        );
    }
}
