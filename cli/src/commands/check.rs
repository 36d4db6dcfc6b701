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
/// Exit status 0 when every function is `ok` (or `low acceptance`: below 50% of θ accepted), 1
/// otherwise (with `--min-acceptance P`, also below P%), 2 on bad input.
///
/// Example: `pinv check tests/corpus/straight.pinv --cases 200`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// Only this function (default: every function of the file).
    #[arg(value_name = "FUNC")]
    pub func: Option<String>,
    /// Only this function (the same as FUNC).
    #[arg(long, conflicts_with = "func")]
    pub function: Option<String>,
    /// Sampled inputs per function.
    #[arg(long, default_value_t = 1000)]
    pub cases: usize,
    /// Seed of the input and θ samplers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Soundness tolerance: |f(x) − y| ≤ tol · max(1, |y|) (exact where y is not finite).
    #[arg(long, default_value_t = 1e-9, value_parser = crate::values::parse_tolerance)]
    pub soundness_tolerance: f64,
    /// Completeness tolerance: |x − x₀| ≤ tol · max(1, |x₀|) (exact where x₀ is not finite).
    #[arg(long, default_value_t = 1e-6, value_parser = crate::values::parse_tolerance)]
    pub completeness_tolerance: f64,
    /// Each run (forward, inverse, PGF) stops with a limit error after this many executed
    /// instructions; a function whose every run does is reported as `failed: limit`.
    #[arg(long, default_value_t = pinv::DEFAULT_STEP_LIMIT, value_parser = crate::values::parse_step_limit)]
    pub step_limit: u64,
    #[command(flatten)]
    pub size: crate::limits::SizeLimitArg,
    /// Seconds one function's check may take, building its inverse included; then it is
    /// reported as `timeout` with the cases done so far, and the check goes on with the next
    /// function.
    #[arg(long, default_value_t = 120.0, value_parser = crate::values::parse_seconds)]
    pub time_limit: f64,
    /// Exit 0 even when a function had no case to check (`no data`).
    #[arg(long)]
    pub allow_empty: bool,
    /// Fail (exit 1) a function that accepts less than this percentage of sampled θ. Without
    /// it, an acceptance below 50% is shown as `low acceptance` and the exit status is 0.
    #[arg(long, value_parser = parse_percent)]
    pub min_acceptance: Option<f64>,
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
    /// Threads to check on (default: one per core): functions side by side, and the cases of
    /// one function in chunks when there are fewer functions than threads. The report is the
    /// same whatever the number: each chunk of cases is sampled from the seed and its number.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
}

pub fn run(args: &CheckArgs) -> Outcome {
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let only = args.func.as_deref().or(args.function.as_deref());
    let names = match loaded.selected_functions(only, args.json) {
        Ok(names) => names,
        Err(outcome) => return outcome,
    };
    let program = loaded
        .program
        .clone()
        .with_config(pinv::InterpConfig::default().with_step_limit(args.step_limit))
        .with_engine(args.engine.engine);
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
        time_limit: Some(std::time::Duration::from_secs_f64(args.time_limit)),
        min_acceptance: args.min_acceptance.unwrap_or(pinv::check::LOW_ACCEPTANCE),
        max_instructions: args.size.max_instructions,
        jobs: 1,
    };
    let cases = args.cases as u64;
    let progress = Progress::new(cases * names.len() as u64, args.json, "checking");
    // Functions are checked side by side; the threads left over check the cases of each.
    let threads = args
        .jobs
        .map_or_else(pinv::parallel::default_jobs, |j| j as usize)
        .max(1);
    let jobs = threads.clamp(1, names.len().max(1));
    let config = CheckConfig {
        jobs: (threads / jobs).max(1),
        ..config
    };
    let reports = check_all(&program, &names, &config, jobs, &progress);
    progress.finish();
    if args.json {
        let value = serde_json::json!({
            "file": loaded.file.name(),
            "functions": reports,
        });
        outln!("{value}");
    } else {
        print_table(&reports, args.min_acceptance.is_some());
        // Where each unsupported function stops inversion, with its source.
        for r in reports.iter().filter(|r| r.status == Status::Unsupported) {
            if let Err(e) = loaded.program.invert(&r.name) {
                if e.span().is_some() {
                    output::located_error(&loaded.file, &e, false, "unsupported", Outcome::Failure);
                }
            }
        }
    }
    let passed = |r: &FunctionReport| {
        (r.status == Status::Ok && (r.acceptance_ok || args.min_acceptance.is_none()))
            || (args.allow_empty && r.status == Status::NoData)
    };
    if reports.is_empty() && !args.allow_empty {
        outln!("no data: the file has no function to check (--allow-empty accepts that)");
        return Outcome::Failure;
    }
    if reports.iter().all(passed) {
        Outcome::Success
    } else {
        Outcome::Failure
    }
}

/// Names longer than this are printed whole, and push their row's columns right.
const MAX_NAME_WIDTH: usize = 40;

/// A percentage: a number from 0 to 100.
fn parse_percent(text: &str) -> Result<f64, String> {
    match pinv::ir::constant::parse_f64(text.trim()) {
        Some(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "`{}`: give a percentage from 0 to 100",
            text.trim()
        )),
    }
}

/// Checks `names` on `jobs` threads, each with its own copy of the program and code cache (freed
/// after every function, so memory stays that of `jobs` functions), taking the next function
/// when it is done. The reports come back in the order of `names`.
fn check_all(
    program: &pinv::Program,
    names: &[String],
    config: &CheckConfig,
    jobs: usize,
    progress: &Progress,
) -> Vec<FunctionReport> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<FunctionReport>>> = Mutex::new(vec![None; names.len()]);
    let cases = config.cases as u64;
    let work = || {
        let program = program.clone().with_own_code_cache();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(name) = names.get(i) else { break };
            if jobs == 1 {
                progress.set_message(name.clone());
            }
            let mut done_here = 0u64;
            let report = check_function_with(&program, name, config, &mut |done| {
                let done = done as u64;
                progress.inc(done.saturating_sub(done_here));
                done_here = done_here.max(done);
            });
            progress.inc(cases.saturating_sub(done_here));
            // Its compiled code is freed before the next function is checked.
            program.code_cache().clear();
            if let Ok(mut slots) = slots.lock() {
                slots[i] = Some(report);
            }
        }
    };
    if jobs == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                // The stack the main thread has (8 MiB on Linux), not a spawned thread's
                // default of 2 MiB: the limits on how deep a program may nest are measured
                // there, and a worker must cope with whatever the main thread does.
                let spawned = std::thread::Builder::new()
                    .stack_size(pinv::parallel::WORKER_STACK)
                    .spawn_scoped(s, work);
                if spawned.is_err() {
                    // No thread to be had: this one does the work (the others share it).
                    work();
                }
            }
        });
    }
    slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// The report as a table; `strict`: a low acceptance fails the check (`--min-acceptance`).
fn print_table(reports: &[FunctionReport], strict: bool) {
    let width = reports
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .clamp(8, MAX_NAME_WIDTH);
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
        let status = match (r.status, r.acceptance_ok, strict) {
            (Status::Ok, false, false) => "low acceptance",
            (Status::Ok, false, true) => "failed: low acceptance",
            (status, _, _) => status.label(),
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
