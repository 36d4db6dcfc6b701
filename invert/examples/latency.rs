//! Where the time from source to a native inverse goes: front end, reorientation, and native
//! compilation, as medians over many runs.
//!
//! `cargo run --release -p pinv --example latency -- tests/corpus/straight.pinv mul_add [runs]`;
//! with `LATENCY_FORWARD=N` it also times compiling the forward function alone, N times.

use pinv::Program;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(name)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: latency FILE FUNC [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut front, mut reorient, mut native, mut total) = (vec![], vec![], vec![], vec![]);
    let mut bare = vec![];
    for _ in 0..runs {
        let t0 = Instant::now();
        let program = Program::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
        let t1 = Instant::now();
        let inverse = program.invert(name).unwrap_or_else(|e| panic!("{e}"));
        let t2 = Instant::now();
        inverse.native().unwrap_or_else(|e| panic!("{e}"));
        let t3 = Instant::now();
        front.push(t1 - t0);
        reorient.push(t2 - t1);
        native.push(t3 - t2);
        total.push(t3 - t0);
        let module = std::sync::Arc::new(inverse.module().clone());
        let t4 = Instant::now();
        let code = pinv_core::jit::compile(module, inverse.inverse_id());
        bare.push(t4.elapsed());
        drop(code);
    }
    if let Some(n) = std::env::var("LATENCY_FORWARD")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let program = Program::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
        let module = std::sync::Arc::new(program.module().clone());
        let id = program.function(name).unwrap_or_else(|e| panic!("{e}")).0;
        let mut times = vec![];
        for _ in 0..n {
            let t = Instant::now();
            let code = pinv_core::jit::compile(std::sync::Arc::clone(&module), id);
            times.push(t.elapsed());
            drop(code);
        }
        println!("forward {name}: {:?} (median of {n})", median(times));
    }
    println!(
        "{name}: front end {:?}, invert {:?}, native {:?} (of which compiling {:?}), total {:?} (medians of {runs})",
        median(front),
        median(reorient),
        median(native),
        median(bare),
        median(total)
    );
}
