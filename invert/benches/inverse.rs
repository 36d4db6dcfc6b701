//! Criterion benchmarks: for each function of the set, ns per call forward and inverse,
//! interpreted and native, the hand-written Rust inverse with the same θ, and the latency from
//! source to a native inverse. The workload is `pinv::bench::Workload` (the same calls
//! `pinv bench` times).
//!
//! `cargo bench -p pinv --bench inverse` (add `-- mul_add` to run one function).

use criterion::{criterion_group, criterion_main, Criterion};
use pinv::bench::{compile_latency, Workload};
use pinv_core::SourceFile;
use std::path::Path;

const FUNCTIONS: &[(&str, &str)] = &[
    ("straight.pinv", "mul_add"),
    ("straight.pinv", "lin"),
    ("unary.pinv", "square"),
    ("fanout.pinv", "quad"),
    ("loops.pinv", "arm3"),
    ("loops.pinv", "triangle"),
    ("branches.pinv", "f2"),
];

fn source(file: &str) -> SourceFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    SourceFile::new(file, text)
}

fn benches(c: &mut Criterion) {
    for &(file, name) in FUNCTIONS {
        let src = source(file);
        let mut w = match Workload::new(&src, name, 64, 0) {
            Ok(w) => w,
            Err(e) => panic!("{name}: {e}"),
        };
        let mut group = c.benchmark_group(name);
        group.bench_function("forward/interp", |b| b.iter(|| w.forward_interp()));
        group.bench_function("forward/native", |b| b.iter(|| w.forward_native()));
        if w.has_inverse() {
            group.bench_function("inverse/interp", |b| b.iter(|| w.inverse_interp()));
            group.bench_function("inverse/native", |b| b.iter(|| w.inverse_native()));
            if w.has_hand_written() {
                group.bench_function("inverse/hand-written", |b| b.iter(|| w.hand_written()));
            }
            group.sample_size(20);
            group.bench_function("compile/source-to-native-inverse", |b| {
                b.iter(|| compile_latency(&src, name, 1))
            });
        }
        for note in &w.notes {
            eprintln!("{name}: {note}");
        }
        group.finish();
    }
}

criterion_group!(pinv_benches, benches);
criterion_main!(pinv_benches);
