//! The hand-written inverses the benchmarks compare against (`pinv::bench::reference`) read θ as
//! pinv's generated inverses do: on the PGF's tape of sampled inputs they give back the same x,
//! bit for bit, on most cases (they follow only the usual path, not every rounding fallback).
//! When reorientation changes how a function is inverted (as e-graph isolation did for `square`,
//! `quad` and `arm3`), this test names the function whose reference must follow.

use pinv::bench::reference;
use pinv::Program;
use pinv_core::ir::{Const, Type};
use pinv_tests::corpus_dir;

const FUNCTIONS: &[(&str, &str)] = &[
    ("straight.pinv", "mul_add"),
    ("straight.pinv", "lin"),
    ("unary.pinv", "square"),
    ("fanout.pinv", "quad"),
    ("loops.pinv", "arm3"),
    ("loops.pinv", "triangle"),
    ("branches.pinv", "f2"),
    ("bits.pinv", "splitmix"),
    ("systems.pinv", "scale_rotate"),
    ("../../docs/gallery.pinv", "cubic"),
];

/// A tiny deterministic generator.
fn inputs(types: &[Type], n: usize) -> Vec<Vec<Const>> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            types
                .iter()
                .map(|t| match t {
                    Type::F64 => Const::F64((next() % 20_001) as f64 / 1000.0 - 10.0),
                    Type::I64 => Const::I64((next() % 201) as i64 - 100),
                    Type::Bool => Const::Bool(next() % 2 == 0),
                })
                .collect()
        })
        .collect()
}

#[test]
fn hand_written_inverses_agree_with_generated_ones() {
    for &(file, name) in FUNCTIONS {
        let program = Program::load(corpus_dir().join(file)).expect("loads");
        let inverse = program.invert(name).expect("invertible");
        let hand = reference::inverse(name).expect("hand-written");
        let (mut agree, mut total) = (0, 0);
        for x in inputs(inverse.input_types(), 200) {
            let (Ok(y), Ok(theta)) = (inverse.forward(&x), inverse.pgf(&x)) else {
                continue;
            };
            let Ok(back) = inverse.call_with_tape(&y, &theta) else {
                continue;
            };
            total += 1;
            if hand(&y, &theta).as_deref() == Some(&back[..]) {
                agree += 1;
            }
        }
        assert!(total > 0, "{name}: no case");
        assert!(
            agree * 10 >= total * 9,
            "{name}: the hand-written inverse agrees on only {agree} of {total} cases \
             (`pinv show FILE {name} --inverse` shows how pinv inverts it now)"
        );
    }
}
