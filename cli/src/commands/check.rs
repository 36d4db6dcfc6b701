//! `pinv check FILE`: soundness, acceptance and completeness of every function's inverse.

use crate::output;
use crate::progress::Progress;
use crate::Outcome;
use clap::Args;
use pinv::check::{check_function_with, CheckConfig, FunctionReport, Status};
use std::path::PathBuf;

/// Check the inverses of a file's functions: soundness (every returned x maps to y),
/// acceptance (the share of sampled θ that give an x) and completeness (the PGF recovers x).
///
/// Exit status 0 when every function is `ok`, 1 otherwise, 2 on bad input.
///
/// Example: `pinv check tests/corpus/straight.pinv --cases 200`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The .pinv file.
    pub file: PathBuf,
    /// Only this function.
    #[arg(long)]
    pub function: Option<String>,
    /// Sampled inputs per function.
    #[arg(long, default_value_t = 1000)]
    pub cases: usize,
    /// Seed of the input and θ samplers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Soundness tolerance: |f(x) − y| ≤ tol · max(1, |y|).
    #[arg(long, default_value_t = 1e-9)]
    pub soundness_tolerance: f64,
    /// Completeness tolerance: |x − x₀| ≤ tol · max(1, |x₀|).
    #[arg(long, default_value_t = 1e-6)]
    pub completeness_tolerance: f64,
    /// Also search for discrete θ (choices, loop counts, small integers) on this many of the
    /// sampled outputs, and report how often search finds a preimage.
    #[arg(long, default_value_t = 100)]
    pub search: usize,
    /// The most runs of the inverse per search.
    #[arg(long, default_value_t = 500)]
    pub search_runs: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
}

pub fn run(args: &CheckArgs) -> Outcome {
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let names: Vec<String> = match &args.function {
        Some(name) => match loaded.program.function(name) {
            Ok(_) => vec![name.clone()],
            Err(e) => return output::library_error(&loaded.file, &e, args.json),
        },
        None => loaded
            .program
            .function_names()
            .into_iter()
            .map(str::to_string)
            .collect(),
    };
    let program = loaded.program.clone().with_engine(args.engine.engine);
    let config = CheckConfig {
        cases: args.cases,
        seed: args.seed,
        soundness_tolerance: args.soundness_tolerance,
        completeness_tolerance: args.completeness_tolerance,
        search_cases: args.search,
        search: pinv::search::SearchConfig {
            max_runs: args.search_runs,
            seed: args.seed,
            ..pinv::search::SearchConfig::default()
        },
    };
    let cases = args.cases as u64;
    let progress = Progress::new(cases * names.len() as u64, args.json, "checking");
    let reports: Vec<FunctionReport> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            progress.set_message(name.clone());
            let base = i as u64 * cases;
            let report = check_function_with(&program, name, &config, &mut |done| {
                progress.set_position(base + done as u64)
            });
            progress.set_position(base + cases);
            report
        })
        .collect();
    progress.finish();
    if args.json {
        let value = serde_json::json!({
            "file": loaded.file.name(),
            "functions": reports,
        });
        outln!("{value}");
    } else {
        print_table(&reports);
        // Where each unsupported function stops inversion, with its source.
        for r in reports.iter().filter(|r| r.status == Status::Unsupported) {
            if let Err(e) = loaded.program.invert(&r.name) {
                if e.span().is_some() {
                    output::located_error(&loaded.file, &e, false, "unsupported", Outcome::Failure);
                }
            }
        }
    }
    if reports.iter().all(|r| r.status == Status::Ok) {
        Outcome::Success
    } else {
        Outcome::Failure
    }
}

fn print_table(reports: &[FunctionReport]) {
    let width = reports
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    outln!(
        "{:<width$}  {:>5}  {:>6}  {:>9}  {:>8}  {:>10}  {:>12}  status",
        "function",
        "θ",
        "trials",
        "accepted",
        "search",
        "violations",
        "completeness"
    );
    for r in reports {
        let status = match r.status {
            Status::Ok => "ok".to_string(),
            Status::Failed => "failed".to_string(),
            Status::Unsupported => "unsupported".to_string(),
        };
        let search = match r.search_acceptance() {
            Some(p) => format!("{p:.1}%"),
            None => "-".to_string(),
        };
        let violations = r.soundness.violations + r.search.as_ref().map_or(0, |s| s.violations);
        outln!(
            "{:<width$}  {:>5}  {:>6}  {:>8.1}%  {:>8}  {:>10}  {:>12}  {status}",
            r.name,
            r.theta,
            r.soundness.trials,
            r.acceptance(),
            search,
            violations,
            format!("{}/{}", r.completeness.recovered, r.completeness.trials),
        );
        if r.status != Status::Ok {
            if let Some(message) = &r.message {
                outln!("{:<width$}  ↳ {message}", "");
            }
        }
    }
}
