//! What a PGF and an inverse cost against the forward run they mirror, in each engine: the time
//! of `f(x)`, of `pgf(x)` and of `f⁻¹(f(x), pgf(x))`, and their ratios to the forward run.
//!
//! `cargo run --release -p pinv --example pgf_cost -- tests/programs/recursive.pinv fib 30`
//! (the inputs after the function, in `run`'s syntax). A recursion's or a loop's PGF records θ at
//! every level; its cost per level is what this prints. `PGF_COST_RUNS` sets the runs (the best is
//! printed), `PGF_COST_ENGINE=jit|interp` one engine.

use pinv::{Const, Engine, Program, Type};
use std::time::{Duration, Instant};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// The fastest of `runs` timings of `f` (the least disturbed by the rest of the machine).
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.expect("at least one run"))
}

fn parse(ty: Type, s: &str) -> Option<Const> {
    match ty {
        Type::F64 => s.parse().ok().map(Const::F64),
        Type::I64 => s.parse().ok().map(Const::I64),
        Type::Bool => s.parse().ok().map(Const::Bool),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(name)) = (args.get(1), args.get(2)) else {
        return Err("usage: pgf_cost FILE FUNC ARGS...".into());
    };
    let runs: usize = std::env::var("PGF_COST_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let program = Program::load(path).map_err(|e| e.to_string())?;
    let inverse = program.invert(name).map_err(|e| e.to_string())?;
    let x: Vec<Const> = inverse
        .input_types()
        .iter()
        .zip(&args[3..])
        .map(|(&ty, s)| parse(ty, s).ok_or_else(|| format!("bad {ty} input `{s}`")))
        .collect::<Result<_, _>>()?;
    if x.len() != inverse.input_types().len() {
        return Err(format!(
            "{name} takes {} inputs",
            inverse.input_types().len()
        ));
    }
    let engines = match std::env::var("PGF_COST_ENGINE").as_deref() {
        Ok("jit") => vec![Engine::Jit],
        Ok("interp") => vec![Engine::Interp],
        _ => vec![Engine::Jit, Engine::Interp],
    };
    for engine in engines {
        let inverse = inverse.clone().with_engine(engine);
        let (forward, y) = best(runs, || inverse.forward(&x));
        let y = y.map_err(|e| e.to_string())?;
        let (pgf, theta) = best(runs, || inverse.pgf(&x));
        let theta = theta.map_err(|e| e.to_string())?;
        let (inv, back) = best(runs, || inverse.call_with_tape(&y, &theta));
        let back = back.map_err(|e| e.to_string())?;
        let ratio = |d: Duration| d.as_secs_f64() / forward.as_secs_f64().max(1e-9);
        println!(
            "{engine:?}: forward {forward:?}, pgf {pgf:?} ({:.1}×), inverse {inv:?} ({:.1}×), θ {} values, x back {}",
            ratio(pgf),
            ratio(inv),
            theta.len(),
            if back == x { "exactly" } else { "different" }
        );
    }
    Ok(())
}
