//! Random valid programs (`pinv_tests::gen`): every inverse is sound (and complete, in the
//! ignored test), no run-time error escapes an inverse, and the interpreter and the JIT agree
//! bit for bit.
//!
//! `PINV_GEN_PROGRAMS` sets how many programs (default 40; CI sets more), `PINV_GEN_SEED` the
//! first seed. A failure names its seed: `pinv_tests::gen::program(seed)` is the program.
//! `cargo run --release -p pinv-tests --example gen_check -- 10000` runs the long version.

use pinv::check::{check_inverse, CheckConfig};
use pinv::{Const, Error, Program};
use pinv_core::jit::Engine;
use pinv_tests::gen;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// What checking the inverses of a run of generated programs found.
#[derive(Default)]
struct Findings {
    checked: usize,
    unsound: Vec<String>,
    incomplete: Vec<String>,
}

fn check_generated(first: u64, count: u64) -> Findings {
    let config = CheckConfig {
        cases: 30,
        ..CheckConfig::default()
    };
    let mut found = Findings::default();
    for seed in first..first + count {
        let text = gen::program(seed);
        let program = Program::parse("gen.pinv", &text).expect("generated programs compile");
        for name in program.function_names() {
            let inverse = match program.invert(name) {
                Ok(inverse) => inverse,
                Err(Error::Unsupported { .. } | Error::NoRule { .. }) => continue,
                Err(e) => {
                    found
                        .unsound
                        .push(format!("seed {seed}, `{name}`: inversion failed: {e}"));
                    continue;
                }
            };
            found.checked += 1;
            let r = check_inverse(&inverse, &config);
            let s = &r.soundness;
            let what = format!(
                "seed {seed}, `{name}`: {} violations, {} errors, {}/{} recovered: {}",
                s.violations,
                s.errors,
                r.completeness.recovered,
                r.completeness.trials,
                r.message.as_deref().unwrap_or("")
            );
            if s.violations > 0 || s.errors > 0 {
                found.unsound.push(what);
            } else if r.completeness.recovered != r.completeness.trials {
                found.incomplete.push(what);
            }
        }
    }
    found
}

/// No wrong x, no run-time error escaping an inverse, no internal error: the floor.
#[test]
fn generated_programs_are_sound() {
    let found = check_generated(env("PINV_GEN_SEED", 0), env("PINV_GEN_PROGRAMS", 40));
    assert!(
        found.unsound.is_empty(),
        "{} of {} inverses failed:\n{}",
        found.unsound.len(),
        found.checked,
        found.unsound.join("\n")
    );
}

/// Every x comes back from its PGF. Ignored while it fails: a few generated programs lose
/// precision that no θ records (a step the tolerance lets through, whose error a later
/// cancellation or `floor` amplifies beyond the round-trip tolerance; see issue 17's note).
/// `cargo test -p pinv-tests --test generated -- --ignored` runs it.
#[test]
#[ignore = "known incomplete inverses of ill-conditioned generated programs (issue 17)"]
fn generated_programs_are_complete() {
    let found = check_generated(env("PINV_GEN_SEED", 0), env("PINV_GEN_PROGRAMS", 40));
    assert!(
        found.incomplete.is_empty(),
        "{} of {} inverses are incomplete:\n{}",
        found.incomplete.len(),
        found.checked,
        found.incomplete.join("\n")
    );
}

/// Inputs for a function: a few fixed values of each type, then pseudo-random ones.
fn inputs(types: &[pinv_core::ir::Type], rng: &mut gen::Rng) -> Vec<Const> {
    use pinv_core::ir::Type;
    types
        .iter()
        .map(|t| match t {
            Type::F64 => Const::F64(*rng.pick(&[
                0.0,
                -0.0,
                1.0,
                -2.5,
                3.75,
                1e-3,
                1e6,
                f64::INFINITY,
                f64::NAN,
            ])),
            Type::I64 => Const::I64(*rng.pick(&[0, 1, -1, 7, -100, i64::MAX, i64::MIN])),
            Type::Bool => Const::Bool(rng.chance(0.5)),
        })
        .collect()
}

#[test]
fn generated_programs_run_alike_in_both_engines() {
    let first = env("PINV_GEN_SEED", 0);
    let count = env("PINV_GEN_PROGRAMS", 40);
    let mut rng = gen::Rng::new(first);
    for seed in first..first + count {
        let text = gen::program(seed);
        let program = Program::parse("gen.pinv", &text).expect("compiles");
        let jit = program.clone().with_engine(Engine::Jit);
        let interp = program.clone().with_engine(Engine::Interp);
        for name in program.function_names() {
            let (_, f) = program.function(name).expect("exists");
            for _ in 0..8 {
                let x = inputs(&f.sig.params, &mut rng);
                let a = jit.run(name, &x);
                let b = interp.run(name, &x);
                match (&a, &b) {
                    (Ok(a), Ok(b)) => assert_eq!(
                        a.iter().map(|c| c.bits()).collect::<Vec<_>>(),
                        b.iter().map(|c| c.bits()).collect::<Vec<_>>(),
                        "seed {seed}, `{name}`{x:?}:\n{text}"
                    ),
                    (Err(a), Err(b)) => assert_eq!(
                        a.to_string(),
                        b.to_string(),
                        "seed {seed}, `{name}`{x:?}:\n{text}"
                    ),
                    _ => panic!("seed {seed}, `{name}`{x:?}: jit {a:?}, interp {b:?}\n{text}"),
                }
            }
        }
    }
}
