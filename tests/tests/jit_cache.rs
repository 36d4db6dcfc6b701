//! The code cache through the library API: owners, invalidation, hits, and threads.
//!
//! A program's forward code lives under `Owner::Forward`; each inversion's code under
//! `Owner::Inverse(stack identity + options)`. These tests hold the contracts of ARCHITECTURE.md
//! ("Code cache and owners") on a real program.

use pinv::reorient::ReorientOptions;
use pinv::{Const, Program};
use pinv_core::jit::{EntryInfo, Owner};
use pinv_primitives::Layer;
use std::collections::BTreeSet;

const SOURCE: &str = "
fn double(x: f64) -> f64 { 2.0 * x }
fn nested(a: f64, b: f64, c: f64) -> f64 {
    let x = a + b + 3.0;
    double(x * c)
}
fn other(x: f64, y: f64) -> f64 { x * y + 1.0 }
";

fn program() -> Program {
    Program::parse("cache.pinv", SOURCE).expect("compiles")
}

fn inputs() -> Vec<Vec<Const>> {
    let xs = [0.5, -1.25, 3.0, f64::NAN, -0.0, 1e300];
    xs.iter()
        .flat_map(|&a| {
            xs.iter()
                .map(move |&b| vec![Const::F64(a), Const::F64(b), Const::F64(a - b)])
        })
        .collect()
}

/// Runs every forward function natively on every input; returns the results' bits.
fn run_forward(program: &Program) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    for x in inputs() {
        for (name, n) in [("double", 1), ("nested", 3), ("other", 2)] {
            let r = program.run(name, &x[..n]).expect("runs");
            out.push(r.iter().map(|c| c.bits()).collect());
        }
    }
    out
}

/// Exercises an inverse natively: its PGF, and the inverse on the PGF's tape.
fn exercise(inverse: &pinv::Inverse, n: usize) {
    inverse.native().expect("compiles");
    for x in inputs() {
        let x = &x[..n];
        let theta = inverse.pgf(x).expect("pgf");
        let y = inverse.forward(x).expect("runs");
        let _ = inverse.call_with_tape(&y, &theta);
    }
}

fn inverse_entries(program: &Program) -> Vec<EntryInfo> {
    program
        .code_cache()
        .entries()
        .into_iter()
        .filter(|e| e.owner != Owner::Forward)
        .collect()
}

#[test]
fn inverse_compilation_leaves_forward_entries_unchanged() {
    let program = program();
    let before = run_forward(&program);
    let snapshot = program.code_cache().forward_snapshot();
    assert_eq!(snapshot.len(), 3);
    let inverse = program.invert("nested").expect("invertible");
    exercise(&inverse, 3);
    assert!(!inverse_entries(&program).is_empty());
    assert_eq!(program.code_cache().forward_snapshot(), snapshot);
    assert_eq!(run_forward(&program), before);
    assert_eq!(program.code_cache().forward_snapshot(), snapshot);
}

#[test]
fn forward_results_are_the_same_after_pushing_a_user_layer() {
    let program = program();
    let before = run_forward(&program);
    let snapshot = program.code_cache().forward_snapshot();
    let stack = program.stack().with(Layer::new("user"));
    let inverse = program
        .invert_with("nested", &stack, &ReorientOptions::default())
        .expect("invertible");
    exercise(&inverse, 3);
    assert_eq!(run_forward(&program), before);
    assert_eq!(program.code_cache().forward_snapshot(), snapshot);
}

#[test]
fn editing_a_layer_invalidates_only_the_inverses_that_consulted_it() {
    let program = program();
    run_forward(&program);
    let snapshot = program.code_cache().forward_snapshot();
    exercise(&program.invert("other").expect("invertible"), 2);
    let standard: BTreeSet<_> = inverse_entries(&program)
        .into_iter()
        .map(|e| (e.function, e.owner))
        .collect();

    let user = Layer::new("user");
    let user_id = user.id().0;
    let stack = program.stack().with(user);
    for (name, n) in [("other", 2), ("nested", 3)] {
        let inverse = program
            .invert_with(name, &stack, &ReorientOptions::default())
            .expect("invertible");
        exercise(&inverse, n);
    }
    let all = inverse_entries(&program);
    let consulted = all
        .iter()
        .filter(|e| e.layers.iter().any(|l| l.layer == user_id))
        .count();
    assert!(consulted > 0 && consulted < all.len(), "{all:#?}");

    let dropped = program.code_cache().edit_layer(user_id);
    assert_eq!(dropped, consulted);
    let left: BTreeSet<_> = inverse_entries(&program)
        .into_iter()
        .map(|e| (e.function, e.owner))
        .collect();
    assert_eq!(left, standard);
    assert_eq!(program.code_cache().forward_snapshot(), snapshot);
}

#[test]
fn redefining_a_function_invalidates_exactly_its_dependants() {
    let program = program();
    run_forward(&program);
    exercise(&program.invert("nested").expect("invertible"), 3);
    exercise(&program.invert("other").expect("invertible"), 2);
    let before = program.code_cache().entries();
    let world = program.code_cache().world();
    let dependants: Vec<&EntryInfo> = before
        .iter()
        .filter(|e| e.functions.iter().any(|f| f == "double"))
        .collect();
    assert!(dependants.iter().any(|e| e.owner == Owner::Forward));
    assert!(dependants.iter().any(|e| e.owner != Owner::Forward));

    let dropped = program.code_cache().redefine("double");
    assert_eq!(dropped, dependants.len());
    assert!(program.code_cache().world() > world);
    let after = program.code_cache().entries();
    let expected: Vec<&EntryInfo> = before
        .iter()
        .filter(|e| !e.functions.iter().any(|f| f == "double"))
        .collect();
    assert_eq!(after.iter().collect::<Vec<_>>(), expected);
    assert!(after.iter().any(|e| e.function == "other"));
}

#[test]
fn two_stacks_never_share_entries() {
    let program = program();
    let a = program.invert("other").expect("invertible");
    let stack = program.stack().with(Layer::new("user"));
    let b = program
        .invert_with("other", &stack, &ReorientOptions::default())
        .expect("invertible");
    let (ca, cb) = (a.native().expect("compiles"), b.native().expect("compiles"));
    assert!(!ca.same_code(&cb));
    let owners: BTreeSet<Owner> = inverse_entries(&program)
        .into_iter()
        .filter(|e| e.function == "other.inv")
        .map(|e| e.owner)
        .collect();
    assert_eq!(owners.len(), 2);
}

#[test]
fn compiling_twice_is_a_counted_cache_hit() {
    let program = program();
    let first = program.invert("other").expect("invertible");
    let code = first.native().expect("compiles");
    let stats = program.code_cache().stats();
    let second = program.invert("other").expect("invertible");
    let again = second.native().expect("compiles");
    assert!(code.same_code(&again));
    let after = program.code_cache().stats();
    assert_eq!(after.hits, stats.hits + 1);
    assert_eq!(after.misses, stats.misses);

    let f = program.native("other").expect("compiles");
    let g = program.native("other").expect("compiles");
    assert!(f.same_code(&g));
    assert_eq!(program.code_cache().stats().hits, after.hits + 1);
}

#[test]
fn one_inverse_called_from_four_threads_at_once() {
    let program = program();
    let inverse = program.invert("nested").expect("invertible");
    let cases: Vec<(Vec<Const>, Vec<Const>, Vec<Const>)> = inputs()
        .into_iter()
        .filter_map(|x| {
            let theta = inverse.pgf(&x).ok()?;
            let y = inverse.forward(&x).ok()?;
            let back = inverse.call_with_tape(&y, &theta).ok()?;
            Some((y, theta, back))
        })
        .collect();
    assert!(cases.len() > 10);
    let barrier = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                barrier.wait();
                for _ in 0..500 {
                    for (y, theta, back) in &cases {
                        let x = inverse.call_with_tape(y, theta).expect("in domain");
                        assert_eq!(&x, back);
                    }
                }
            });
        }
    });
}
