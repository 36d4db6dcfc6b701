//! Where the time from source to a native inverse goes: front end, reorientation, and native
//! compilation, as medians over many runs.
//!
//! `cargo run --release -p pinv --example latency -- tests/corpus/straight.pinv mul_add [runs]`;
//! with `LATENCY_FORWARD=N` it also times compiling the forward function alone, N times.

use pinv::Program;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(name)) = (args.get(1), args.get(2)) else {
        return Err("usage: latency FILE FUNC [RUNS]".into());
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let (mut front, mut reorient, mut native, mut total, mut bare) =
        (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let program = Program::parse(path, &text).map_err(|e| e.to_string())?;
        let t1 = Instant::now();
        let inverse = program.invert(name).map_err(|e| e.to_string())?;
        let t2 = Instant::now();
        inverse.native().map_err(|e| e.to_string())?;
        let t3 = Instant::now();
        front.push(t1 - t0);
        reorient.push(t2 - t1);
        native.push(t3 - t2);
        total.push(t3 - t0);
        // The compilation alone, without the cache's bookkeeping.
        let module = Arc::new(inverse.module().clone());
        let t4 = Instant::now();
        let code = pinv_core::jit::compile(module, inverse.inverse_id());
        bare.push(t4.elapsed());
        drop(code);
    }
    if let Some(n) = std::env::var("LATENCY_FORWARD")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let program = Program::parse(path, &text).map_err(|e| e.to_string())?;
        let module = Arc::new(program.module().clone());
        let id = program.function(name).map_err(|e| e.to_string())?.0;
        let mut times = vec![];
        for _ in 0..n.max(1) {
            let t = Instant::now();
            let code = pinv_core::jit::compile(Arc::clone(&module), id);
            times.push(t.elapsed());
            drop(code);
        }
        println!("forward {name}: {:?} (median of {n})", median(times));
    }
    let src = pinv_core::SourceFile::new(path.clone(), text.clone());
    if let Some(d) = pinv::bench::compile_latency(&src, name, runs) {
        println!("bench::compile_latency: {d:?}");
    }
    println!(
        "{name}: front end {:?}, invert {:?}, native {:?} (of which compiling {:?}), total {:?} (medians of {runs})",
        median(front),
        median(reorient),
        median(native),
        median(bare),
        median(total)
    );
    Ok(())
}
