//! `pinv bench FILE FUNC`: how fast a function and its inverse run, interpreted and native.

use crate::output;
use crate::progress::Progress;
use crate::Outcome;
use clap::Args;
use pinv::bench::{bench_with, BenchConfig, BenchReport, Phase};
use std::path::PathBuf;
use std::time::Duration;

/// Measure a function: ns per call forward and inverse, in the interpreter and as native code,
/// next to a hand-written Rust inverse (for the corpus functions that have one), and the time
/// from source to a native inverse. Build with `--release` for meaningful numbers.
///
/// Example: `pinv bench tests/corpus/straight.pinv mul_add`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function.
    pub function: String,
    /// Sampled inputs; calls cycle through them.
    #[arg(long, default_value_t = 64)]
    pub cases: usize,
    /// Milliseconds spent measuring each column.
    #[arg(long, default_value_t = 300)]
    pub budget_ms: u64,
    /// Seed of the input sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> Outcome {
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let config = BenchConfig {
        cases: args.cases,
        seed: args.seed,
        budget: Duration::from_millis(args.budget_ms),
        ..BenchConfig::default()
    };
    let progress = Progress::new(Phase::ALL.len() as u64, args.json, "measuring");
    let measured = bench_with(&loaded.file, &args.function, &config, &mut |phase| {
        progress.set_message(phase.label().to_string());
        progress.set_position(phase.index() as u64);
    });
    progress.finish();
    match measured {
        Ok(report) => {
            if args.json {
                outln!("{}", serde_json::json!(report));
            } else {
                print_table(&report);
            }
            Outcome::Success
        }
        Err(e) => output::library_error(&loaded.file, &e, args.json),
    }
}

fn ns(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.1}"))
}

fn print_table(r: &BenchReport) {
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build of pinv; build with --release for meaningful numbers");
    }
    outln!("{} ({} cases)", r.function, r.cases);
    outln!("  {:<26} {:>12}", "", "ns per call");
    outln!(
        "  {:<26} {:>12.1}",
        "forward, interpreted",
        r.forward_interp
    );
    outln!("  {:<26} {:>12.1}", "forward, native", r.forward_native);
    outln!(
        "  {:<26} {:>12}",
        "inverse, interpreted",
        ns(r.inverse_interp)
    );
    outln!("  {:<26} {:>12}", "inverse, native", ns(r.inverse_native));
    outln!(
        "  {:<26} {:>12}",
        "inverse, hand-written Rust",
        ns(r.hand_written)
    );
    if let Some(s) = r.inverse_speedup() {
        outln!("  native inverse is {s:.1}× faster than interpreted");
    }
    if let Some(h) = r.hand_ratio() {
        outln!("  native inverse takes {h:.2}× the hand-written time");
    }
    outln!(
        "  compile forward (IR → native): {:.1} µs",
        r.compile_forward.as_secs_f64() * 1e6
    );
    if let Some(c) = r.compile_inverse {
        outln!(
            "  source → native inverse:      {:.1} µs",
            c.as_secs_f64() * 1e6
        );
    }
    for note in &r.notes {
        outln!("  note: {note}");
    }
}
