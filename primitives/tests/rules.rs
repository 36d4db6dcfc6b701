//! Soundness and completeness of every standard rule, for every opcode and every pattern, on
//! edge inputs and on random inputs and θ (`PROPTEST_CASES` sets how many random seeds; 64 by
//! default; `PINV_OPS=fadd,sin` restricts the opcodes; `PINV_SHOW_IR=1` prints the generated IR
//! of failing cases).

use pinv_core::ir::{Const, Opcode, Type};
use pinv_core::semantics;
use pinv_primitives::testing::{
    edge_values, sample_operands, sample_value, Case, Failure, RandomTheta, Rng, RoundTrip, Trial,
};
use pinv_primitives::Stack;
use proptest::prelude::*;
use std::sync::OnceLock;

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let filter = std::env::var("PINV_OPS").ok();
        let ops: Vec<Opcode> = Opcode::ALL
            .iter()
            .copied()
            .filter(|op| {
                filter
                    .as_deref()
                    .is_none_or(|f| f.split(',').any(|name| name == op.name()))
            })
            .collect();
        Case::all(&Stack::standard(), &ops).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        max_shrink_iters: 0,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Collects failures and panics with the first few.
#[derive(Default)]
struct Failures(Vec<Failure>);

impl Failures {
    fn add(&mut self, r: Result<(), Failure>) {
        if let Err(f) = r {
            self.0.push(f);
        }
    }

    fn finish(self) -> Result<(), TestCaseError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = self.0.iter().take(25).map(|f| f.to_string()).collect();
        Err(TestCaseError::fail(format!(
            "{} failures, the first:\n{}",
            self.0.len(),
            shown.join("\n")
        )))
    }
}

/// Every combination of edge values for the operands of `op`.
fn edge_operands(op: Opcode) -> Vec<Vec<Const>> {
    let mut all: Vec<Vec<Const>> = vec![Vec::new()];
    for &ty in op.arg_types() {
        let edges = edge_values(ty);
        all = all
            .into_iter()
            .flat_map(|prefix| {
                edges.iter().map(move |&v| {
                    let mut next = prefix.clone();
                    next.push(v);
                    next
                })
            })
            .collect();
    }
    all
}

#[test]
fn round_trip_on_edges() {
    let mut failures = Failures::default();
    for case in cases() {
        for x in edge_operands(case.op) {
            failures.add(case.round_trip(&x).map(|_| ()));
        }
    }
    failures.finish().unwrap();
}

#[test]
fn soundness_on_edges() {
    let mut failures = Failures::default();
    let mut rng = Rng::new(7);
    for case in cases() {
        let zs = edge_values(case.op.result_type());
        for x in edge_operands(case.op) {
            let known = case.known_of(&x);
            let z = match semantics::eval(case.op, &x) {
                Ok(z) if rng.chance(0.7) => z,
                _ => *rng.pick(&zs),
            };
            for _ in 0..3 {
                let mut theta = RandomTheta::new(rng.next_u64());
                failures.add(case.soundness(z, &known, &mut theta).map(|_| ()));
            }
        }
    }
    failures.finish().unwrap();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn round_trip_random(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut failures = Failures::default();
        for case in cases() {
            for _ in 0..8 {
                let x = sample_operands(&mut rng, case.op);
                failures.add(case.round_trip(&x).map(|_| ()));
            }
        }
        failures.finish()?;
    }

    #[test]
    fn soundness_random(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut failures = Failures::default();
        for case in cases() {
            for _ in 0..8 {
                let x = sample_operands(&mut rng, case.op);
                let mut known = case.known_of(&x);
                let z = match semantics::eval(case.op, &x) {
                    Ok(z) if rng.chance(0.6) => z,
                    _ => sample_value(&mut rng, case.op.result_type()),
                };
                if rng.chance(0.1) {
                    for (k, ty) in known.iter_mut().zip(case.op.arg_types()) {
                        *k = sample_value(&mut rng, *ty);
                    }
                }
                let mut theta = RandomTheta::new(rng.next_u64());
                failures.add(case.soundness(z, &known, &mut theta).map(|_| ()));
            }
        }
        failures.finish()?;
    }
}

proptest! {
    #![proptest_config(config())]

    /// Known operands written as constants, as inversion meets literals: rules may specialise on
    /// them, and must stay sound and complete.
    #[test]
    fn with_constants_random(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut failures = Failures::default();
        let stack = Stack::standard();
        for case in cases() {
            let (unknowns, arity) = (case.pattern.unknowns(), case.pattern.arity());
            if unknowns == 0 || unknowns == arity {
                continue;
            }
            for _ in 0..2 {
                let x = sample_operands(&mut rng, case.op);
                let known = case.known_of(&x);
                let baked = match Case::with_constants(&stack, case.op, case.pattern.clone(), &known) {
                    Ok(baked) => baked,
                    Err(f) => {
                        failures.add(Err(f));
                        continue;
                    }
                };
                failures.add(baked.round_trip(&x).map(|_| ()));
                for _ in 0..2 {
                    let z = match semantics::eval(case.op, &x) {
                        Ok(z) if rng.chance(0.7) => z,
                        _ => sample_value(&mut rng, case.op.result_type()),
                    };
                    let mut theta = RandomTheta::new(rng.next_u64());
                    failures.add(baked.soundness(z, &known, &mut theta).map(|_| ()));
                }
            }
        }
        failures.finish()?;
    }
}

/// Small constant divisors, multipliers, masks and shift counts, where rules specialise.
#[test]
fn with_small_constants() {
    use Opcode::*;
    let mut failures = Failures::default();
    let stack = Stack::standard();
    let mut rng = Rng::new(3);
    let uk = pinv_primitives::Pattern::every(2)[1].clone();
    let ku = pinv_primitives::Pattern::every(2)[2].clone();
    for op in [Idiv, Irem, Imul, Iand, Ior, Ishl, Ishr, Imin, Iadd, Ilt] {
        for c in [
            -7i64,
            -3,
            -2,
            -1,
            1,
            2,
            3,
            8,
            17,
            1 << 40,
            i64::MAX,
            i64::MIN,
        ] {
            for pattern in [&uk, &ku] {
                let case = match Case::with_constants(&stack, op, pattern.clone(), &[Const::I64(c)])
                {
                    Ok(case) => case,
                    Err(f) => {
                        failures.add(Err(f));
                        continue;
                    }
                };
                for _ in 0..40 {
                    let v = pinv_primitives::testing::sample_i64(&mut rng);
                    let x = if pattern == &uk {
                        vec![Const::I64(v), Const::I64(c)]
                    } else {
                        vec![Const::I64(c), Const::I64(v)]
                    };
                    failures.add(case.round_trip(&x).map(|_| ()));
                    let z = match semantics::eval(op, &x) {
                        Ok(z) if rng.chance(0.7) => z,
                        _ => sample_value(&mut rng, op.result_type()),
                    };
                    let mut theta = RandomTheta::new(rng.next_u64());
                    failures.add(case.soundness(z, &[Const::I64(c)], &mut theta).map(|_| ()));
                }
            }
        }
    }
    failures.finish().unwrap();
}

/// Operand ranges narrow the θ that give operands (a factor known to be positive is drawn from
/// (0, ∞]); sound for every θ, complete for operands in their ranges.
#[test]
fn with_operand_ranges() {
    let mut failures = Failures::default();
    let stack = Stack::standard();
    let mut rng = Rng::new(5);
    let ranges = [
        Some((0.0, f64::INFINITY)),
        Some((f64::NEG_INFINITY, -1.0)),
        Some((-1.0, 1.0)),
    ];
    for &op in Opcode::ALL {
        if op.arg_types().iter().any(|&t| t != Type::F64) {
            continue;
        }
        for pattern in pinv_primitives::Pattern::every(op.arity()) {
            for range in ranges {
                let rs = vec![range; op.arity()];
                let case = match Case::with_operand_ranges(&stack, op, pattern.clone(), rs) {
                    Ok(case) => case,
                    Err(f) => {
                        failures.add(Err(f));
                        continue;
                    }
                };
                let (lo, hi) = range.unwrap();
                for _ in 0..30 {
                    let x: Vec<Const> = sample_operands(&mut rng, op)
                        .into_iter()
                        .map(|c| match c {
                            Const::F64(v) if v.is_nan() => Const::F64(lo.max(-1e300)),
                            Const::F64(v) => Const::F64(v.clamp(lo, hi)),
                            other => other,
                        })
                        .collect();
                    failures.add(case.round_trip(&x).map(|_| ()));
                    let z = match semantics::eval(op, &x) {
                        Ok(z) if rng.chance(0.7) => z,
                        _ => sample_value(&mut rng, op.result_type()),
                    };
                    let mut theta = RandomTheta::new(rng.next_u64());
                    failures.add(
                        case.soundness(z, &case.known_of(&x), &mut theta)
                            .map(|_| ()),
                    );
                }
            }
        }
    }
    failures.finish().unwrap();
}

/// How often the inverse accepts a random θ for an output that has preimages: not a property of
/// the contract, but a rule that (almost) never accepts is probably broken. Printed with
/// `--nocapture`.
#[test]
fn acceptance_is_not_zero() {
    let mut rng = Rng::new(11);
    let mut dead = Vec::new();
    for case in cases() {
        let (mut solved, mut tried) = (0, 0);
        for _ in 0..300 {
            let x = sample_operands(&mut rng, case.op);
            let Ok(z) = semantics::eval(case.op, &x) else {
                continue;
            };
            if let Const::F64(v) = z {
                if !v.is_finite() {
                    continue;
                }
            }
            let mut theta = RandomTheta::new(rng.next_u64());
            tried += 1;
            if let Ok(Trial::Solved(_)) = case.soundness(z, &case.known_of(&x), &mut theta) {
                solved += 1;
            }
        }
        println!("{:<28} {solved:>4}/{tried}", format!("{case:?}"));
        if tried > 0 && solved == 0 {
            dead.push(format!("{case:?}"));
        }
    }
    assert!(dead.is_empty(), "never accepts a random θ: {dead:?}");
}

#[test]
fn every_case_builds_and_edges_are_reached() {
    let n: usize = Opcode::ALL.iter().map(|op| 1 << op.arity()).sum();
    if std::env::var("PINV_OPS").is_err() {
        assert_eq!(cases().len(), n);
    }
    // The edge round trips are not vacuous: most edge operands have an output and are reached.
    let (mut reached, mut total) = (0, 0);
    for case in cases() {
        for x in edge_operands(case.op) {
            total += 1;
            if case.round_trip(&x) == Ok(RoundTrip::Reached) {
                reached += 1;
            }
        }
    }
    assert!(reached * 10 >= total * 9, "{reached} of {total}");
}
