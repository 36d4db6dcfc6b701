//! ns per call of a native inverse on θ drawn by the sampler (not the PGF's θ, which
//! `pinv bench` times): the cost users see in `sample`, `plot` and `check`, where a numeric
//! root or a trip-count scan runs from an arbitrary start.
//!
//! `cargo run --release -p pinv --example sampled_latency -- FILE FUNC Y [TAPES]`: draws TAPES
//! (default 10,000) θ tapes for y = Y, then times the native inverse over them, round robin,
//! and prints the median ns per call of five runs and the share of tapes that give a preimage.

use pinv::theta::Sampler;
use pinv::{Const, Program};
use pinv_core::interp::{InterpConfig, TapeSource};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(name), Some(y)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: sampled_latency FILE FUNC Y [TAPES]".into());
    };
    let y: f64 = y.parse().map_err(|e| format!("Y: {e}"))?;
    let n: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let program = Program::load(path).map_err(|e| e.to_string())?;
    let inverse = program.invert(name).map_err(|e| e.to_string())?;
    let native = inverse.native().map_err(|e| e.to_string())?;
    let y = [Const::F64(y)];
    let mut sampler = Sampler::new(1);
    let mut tapes = Vec::with_capacity(n);
    let mut accepted = 0;
    for _ in 0..n {
        let (x, drawn) = inverse.sample(&y, &mut sampler);
        accepted += usize::from(x.is_ok());
        tapes.push(TapeSource::new(drawn));
    }
    let limits = InterpConfig::default();
    let returns = &inverse.module().functions[inverse.inverse_id()].sig.returns;
    let mut out: Vec<Const> = returns.iter().map(|&t| Const::zero(t)).collect();
    let mut runs = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for tape in tapes.iter_mut() {
            tape.rewind();
            let _ = black_box(native.call_into(&limits, black_box(&y), Some(tape), &mut out));
        }
        runs.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    runs.sort_by(f64::total_cmp);
    println!(
        "{name}: {:.1} ns per call (median of 5 runs over {n} sampled θ tapes), {:.1}% give a preimage",
        runs[2],
        100.0 * accepted as f64 / n as f64
    );
    Ok(())
}
