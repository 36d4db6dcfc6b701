//! `pinv check`: soundness, acceptance and completeness of a function's inverse, measured.
//!
//! For each of `cases` sampled inputs x₀ (f64 uniform in [−10, 10], i64 in [−100, 100], bools
//! fair; an x₀ where f fails or gives a non-finite output is skipped), with y = f(x₀):
//! - **soundness**: θ is drawn from its domains; a returned x must satisfy f(x) ≈ y;
//! - **acceptance**: the share of drawn θ that returned an x at all;
//! - **completeness**: x = f⁻¹(y, pgf(x₀)) must give back x₀.
//!
//! A round trip (the PGF, then the inverse) may take [`ROUND_TRIP_STEPS`] times the steps of the
//! forward run it undoes, where that is more than the step limit: an inverse costs a constant
//! factor more than its function (θ reads, dispatch), so an x₀ whose forward run came near the
//! limit would otherwise fail its round trip for want of steps, not of completeness.

use crate::program::{Inverse, Program};
use crate::search::SearchConfig;
use crate::theta::Sampler;
use pinv_core::ir::{Const, Type};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::ops::ControlFlow;

/// How to check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckConfig {
    /// Sampled inputs per function.
    pub cases: usize,
    pub seed: u64,
    /// Soundness: |f(x) − y| ≤ tol · max(1, |y|).
    pub soundness_tolerance: f64,
    /// Completeness: |x − x₀| ≤ tol · max(1, |x₀|).
    pub completeness_tolerance: f64,
    /// On how many of the sampled y to also run a search for discrete θ (0: none).
    pub search_cases: usize,
    /// Limits of each search.
    pub search: SearchConfig,
    /// The longest one function's check may take, building its inverse included
    /// ([`check_function`]); the cases done by then are reported, with the status
    /// [`Status::Timeout`]. `None`: no limit.
    pub time_limit: Option<std::time::Duration>,
    /// Acceptance, in percent, below which an inverse is poor
    /// ([`FunctionReport::acceptance_ok`]; [`LOW_ACCEPTANCE`] by default).
    pub min_acceptance: f64,
    /// Threads checking cases at once (1 by default; the report does not depend on it).
    pub jobs: usize,
    /// The largest function inverted ([`crate::reorient::ReorientOptions::max_instructions`]).
    pub max_instructions: usize,
}

/// How many times the forward run's steps a round trip may take (see the module docs).
pub const ROUND_TRIP_STEPS: u64 = 64;

/// The acceptance (percent) below which `pinv check` calls an inverse's acceptance low.
pub const LOW_ACCEPTANCE: f64 = 50.0;

impl Default for CheckConfig {
    fn default() -> CheckConfig {
        CheckConfig {
            cases: 1000,
            seed: 0,
            soundness_tolerance: 1e-9,
            completeness_tolerance: 1e-6,
            search_cases: 0,
            search: SearchConfig {
                max_runs: 500,
                ..SearchConfig::default()
            },
            time_limit: None,
            min_acceptance: LOW_ACCEPTANCE,
            jobs: 1,
            max_instructions: crate::reorient::DEFAULT_MAX_INSTRUCTIONS,
        }
    }
}

/// The verdict on one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No violation, and the PGF recovered every sampled input.
    Ok,
    /// A violation, an error inside the inverse, or an input the PGF did not recover.
    Failed,
    /// The function could not be inverted.
    Unsupported,
    /// No case could be checked: f failed (or gave a non-finite output) at every sampled
    /// input, or no case was asked for. Nothing is known about the inverse.
    NoData,
    /// Every run hit the step or depth limit (a function that does not terminate, or runs
    /// longer than the limit allows): nothing could be checked.
    Limit,
    /// The check ran out of its time limit; the counts are those of the cases done by then.
    Timeout,
}

impl Status {
    /// How the report prints it: `ok`, `failed`, `unsupported`, `no data`, `failed: limit`,
    /// `timeout`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::NoData => "no data",
            Status::Limit => "failed: limit",
            Status::Timeout => "timeout",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Soundness {
    /// Sampled (y, θ) pairs.
    pub trials: usize,
    /// Pairs for which the inverse returned an x.
    pub accepted: usize,
    /// Returned x with f(x) ≠ y.
    pub violations: usize,
    /// Runs that failed with something other than a domain error (a bug).
    pub errors: usize,
    /// Runs stopped by the step or depth limit: a θ that sends the inverse round a loop for
    /// longer than the limits allow (a loop bound far out, say) is not accepted, but it is not
    /// a bug either.
    pub exhausted: usize,
    /// Sampled inputs x₀ whose forward run hit the step or depth limit (not checked).
    pub forward_limits: usize,
}

/// Acceptance of search: on how many sampled y a search for discrete θ found a preimage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SearchReport {
    pub trials: usize,
    pub found: usize,
    /// Runs of the inverse over all searches.
    pub runs: usize,
    /// Found preimages with f(x) ≠ y (must be 0).
    pub violations: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Completeness {
    pub trials: usize,
    pub recovered: usize,
}

/// The report on one function (the `--json` fields are part of pinv's interface).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub status: Status,
    /// θ slots in the schema.
    pub theta: usize,
    pub soundness: Soundness,
    pub completeness: Completeness,
    /// Acceptance of search, when asked for.
    pub search: Option<SearchReport>,
    /// Why it failed or is unsupported, with a first counterexample.
    pub message: Option<String>,
    /// Whether some θ were sampled and at least [`CheckConfig::min_acceptance`] percent of
    /// them gave a preimage.
    pub acceptance_ok: bool,
}

impl FunctionReport {
    /// Sound (no sampled θ gave a wrong x, and none stopped on an error other than "out of
    /// domain") and complete (every PGF round trip gave its x back): the two promises, whatever
    /// the acceptance. A `timeout` or `failed` status may still hold this for the cases done.
    pub fn sound_and_complete(&self) -> bool {
        self.soundness.violations == 0
            && self.soundness.errors == 0
            && self.completeness.recovered == self.completeness.trials
    }

    /// The share of searched y for which search found a preimage, in percent.
    pub fn search_acceptance(&self) -> Option<f64> {
        self.search
            .as_ref()
            .filter(|s| s.trials > 0)
            .map(|s| 100.0 * s.found as f64 / s.trials as f64)
    }

    /// Accepted θ as a share of trials, in percent.
    pub fn acceptance(&self) -> f64 {
        if self.soundness.trials == 0 {
            0.0
        } else {
            100.0 * self.soundness.accepted as f64 / self.soundness.trials as f64
        }
    }
}

/// After this many sampled inputs whose forward run hit a limit, and none that did not, a
/// check gives up on the function ([`Status::Limit`]).
const FORWARD_LIMITS_TO_GIVE_UP: usize = 10;

/// Checks one function of `program`.
pub fn check_function(program: &Program, name: &str, config: &CheckConfig) -> FunctionReport {
    check_function_with(program, name, config, &mut |_| {})
}

/// [`check_function`], calling `on_case` with the number of cases done after each sampled case
/// (for progress bars).
pub fn check_function_with(
    program: &Program,
    name: &str,
    config: &CheckConfig,
    on_case: &mut dyn FnMut(usize),
) -> FunctionReport {
    // Building the inverse counts against the time limit too: a program whose inversion
    // would take minutes is a `timeout`, and the cases get what is left.
    let started = std::time::Instant::now();
    let options = crate::reorient::ReorientOptions {
        time_limit: config.time_limit,
        max_instructions: config.max_instructions,
        ..crate::reorient::ReorientOptions::default()
    };
    match program.invert_with(name, &program.stack(), &options) {
        Ok(inverse) => {
            let config = CheckConfig {
                time_limit: config
                    .time_limit
                    .map(|limit| limit.saturating_sub(started.elapsed())),
                ..config.clone()
            };
            check_inverse_with(&inverse, &config, on_case)
        }
        Err(e) => FunctionReport {
            name: name.to_string(),
            status: if matches!(e, crate::Error::TimedOut { .. }) {
                Status::Timeout
            } else {
                Status::Unsupported
            },
            theta: 0,
            soundness: Soundness::default(),
            completeness: Completeness::default(),
            search: None,
            message: Some(e.to_string()),
            acceptance_ok: false,
        },
    }
}

/// Checks a built inverse.
pub fn check_inverse(inverse: &Inverse, config: &CheckConfig) -> FunctionReport {
    check_inverse_with(inverse, config, &mut |_| {})
}

/// [`check_inverse`], calling `on_case` with the number of cases done after each sampled case.
///
/// The cases come in chunks of [`CASES_PER_CHUNK`], each drawing its inputs and θ from
/// generators seeded from the seed and its number, checked on [`CheckConfig::jobs`] threads
/// and counted in order ([`crate::parallel::ordered`]): the report is the same for any number
/// of threads (but for a `timeout`, which depends on the machine anyway).
pub fn check_inverse_with(
    inverse: &Inverse,
    config: &CheckConfig,
    on_case: &mut dyn FnMut(usize),
) -> FunctionReport {
    let deadline = config
        .time_limit
        .map(|limit| std::time::Instant::now() + limit);
    // Every run stops at the time limit too, interpreted or compiled.
    let limited = inverse.with_limits(inverse.limits().with_deadline(deadline));
    let inverse = &limited;
    let mut soundness = Soundness::default();
    let mut completeness = Completeness::default();
    let mut search = (config.search_cases > 0).then(SearchReport::default);
    let mut message: Option<String> = None;
    let mut timed_out = false;
    let attempts = config.cases.saturating_mul(20).max(100);
    let chunks = attempts.div_ceil(CASES_PER_CHUNK * 20);
    crate::parallel::ordered(
        config.jobs,
        chunks,
        |k| check_chunk(inverse, config, k, deadline),
        |_, chunk| {
            for case in chunk.cases {
                if soundness.trials >= config.cases {
                    return ControlFlow::Break(());
                }
                let Some(trial) = case else {
                    soundness.forward_limits += 1;
                    // A function that never ends within the limits: every case would end so.
                    if soundness.trials == 0
                        && soundness.forward_limits >= FORWARD_LIMITS_TO_GIVE_UP
                    {
                        return ControlFlow::Break(());
                    }
                    continue;
                };
                soundness.trials += 1;
                soundness.accepted += usize::from(trial.accepted);
                soundness.violations += usize::from(trial.violation);
                soundness.errors += usize::from(trial.error);
                soundness.exhausted += usize::from(trial.exhausted);
                if let (Some(report), Some(found)) = (search.as_mut(), trial.search) {
                    if report.trials < config.search_cases {
                        report.trials += 1;
                        report.runs += found.runs;
                        report.found += found.found;
                        report.violations += found.violations;
                    }
                }
                if !trial.round_trip_stopped {
                    completeness.trials += 1;
                    completeness.recovered += usize::from(trial.recovered);
                }
                if let Some(m) = trial.message {
                    message.get_or_insert(m);
                }
                on_case(soundness.trials);
            }
            if chunk.timed_out {
                timed_out = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    );
    let sound = soundness.violations == 0
        && soundness.errors == 0
        && search.as_ref().is_none_or(|s| s.violations == 0)
        && completeness.recovered == completeness.trials;
    let status = if !sound {
        Status::Failed
    } else if timed_out {
        Status::Timeout
    } else if soundness.trials == 0 && soundness.forward_limits > 0 {
        message.get_or_insert_with(|| {
            format!(
                "f ran into the step or depth limit at {} sampled input(s) and gave no output to check",
                soundness.forward_limits
            )
        });
        Status::Limit
    } else if soundness.trials == 0 {
        Status::NoData
    } else if soundness.exhausted == soundness.trials && soundness.accepted == 0 {
        message.get_or_insert_with(|| {
            "every run of the inverse ran into the step or depth limit".to_string()
        });
        Status::Limit
    } else {
        Status::Ok
    };
    let acceptance_ok = soundness.trials > 0
        && 100.0 * soundness.accepted as f64 >= config.min_acceptance * soundness.trials as f64;
    FunctionReport {
        name: inverse.function().to_string(),
        status,
        theta: inverse.schema().len(),
        soundness,
        completeness,
        search,
        message,
        acceptance_ok,
    }
}

/// Cases per chunk of a check (see [`check_inverse_with`]).
pub const CASES_PER_CHUNK: usize = 256;

/// One trial of a check: an input x₀ whose forward run gave y, and what the inverse did.
#[derive(Debug, Default)]
struct Trial {
    accepted: bool,
    violation: bool,
    error: bool,
    exhausted: bool,
    search: Option<SearchReport>,
    recovered: bool,
    /// The time limit stopped the PGF or the inverse on its θ: the trial does not count for
    /// completeness (the function's status is `timeout`).
    round_trip_stopped: bool,
    /// The first thing worth saying about the trial (a counterexample, a failure).
    message: Option<String>,
}

/// The cases of one chunk, in order: a trial, or `None` for an x₀ whose forward run hit a
/// limit (x₀ where f fails otherwise, or gives a non-finite output, are not cases).
struct ChunkCases {
    cases: Vec<Option<Trial>>,
    /// The time limit came while the chunk was being checked.
    timed_out: bool,
}

/// Checks chunk `k`: up to [`CASES_PER_CHUNK`] trials, from at most 20 times as many sampled
/// inputs, with generators seeded from the seed and `k` (chunk 0's are the seed itself, so a
/// check of one chunk samples what it did before checks were cut into chunks).
fn check_chunk(
    inverse: &Inverse,
    config: &CheckConfig,
    k: usize,
    deadline: Option<std::time::Instant>,
) -> ChunkCases {
    let seed = crate::parallel::chunk_seed(config.seed, k);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sampler = Sampler::new(seed ^ 0x5eed_5eed_5eed_5eed);
    let mut chunk = ChunkCases {
        cases: Vec::new(),
        timed_out: false,
    };
    let (mut trials, mut limits) = (0, 0);
    for _ in 0..CASES_PER_CHUNK * 20 {
        if trials >= CASES_PER_CHUNK.min(config.cases) {
            break;
        }
        if deadline.is_some_and(|at| std::time::Instant::now() > at) {
            chunk.timed_out = true;
            break;
        }
        let x0: Vec<Const> = inverse
            .input_types()
            .iter()
            .map(|&ty| sample_input(&mut rng, ty))
            .collect();
        let (y, steps) = match inverse.forward_counted(&x0) {
            Ok(counted) => counted,
            Err(e) if e.is_limit() => {
                chunk.cases.push(None);
                limits += 1;
                if trials == 0 && limits >= FORWARD_LIMITS_TO_GIVE_UP {
                    break;
                }
                continue;
            }
            Err(_) => continue,
        };
        if y.iter()
            .any(|v| matches!(v, Const::F64(x) if !x.is_finite()))
        {
            continue;
        }
        // The search runs on the first `search_cases` trials of the check, as numbered if
        // every chunk before this one had all its trials.
        let index = k * CASES_PER_CHUNK + trials;
        trials += 1;
        let mut trial = check_case(inverse, config, &x0, &y, steps, &mut sampler);
        if index < config.search_cases {
            trial.search = Some(search_case(
                inverse,
                config,
                &y,
                index,
                deadline,
                &mut trial.message,
            ));
        }
        chunk.cases.push(Some(trial));
    }
    chunk
}

/// Checks soundness on one drawn θ, and completeness, at an input x₀ with f(x₀) = y (which
/// took `steps`).
fn check_case(
    inverse: &Inverse,
    config: &CheckConfig,
    x0: &[Const],
    y: &[Const],
    steps: u64,
    sampler: &mut Sampler,
) -> Trial {
    let mut trial = Trial::default();
    let mut note = |m: String| {
        trial.message.get_or_insert(m);
    };
    let (x, theta) = inverse.sample(y, sampler);
    let (mut accepted, mut violation, mut error, mut exhausted) = (false, false, false, false);
    match x {
        Ok(x) => {
            accepted = true;
            match inverse.forward(&x) {
                Ok(fx) if close_all(&fx, y, config.soundness_tolerance) => {}
                Ok(fx) => {
                    violation = true;
                    note(format!(
                        "unsound: θ = [{}] gives x = {} but f(x) = {} ≠ y = {}",
                        crate::theta::format_tape_brief(&theta, TAPE_IN_MESSAGES),
                        show(&x),
                        show(&fx),
                        show(y)
                    ));
                }
                Err(e) => {
                    violation = true;
                    note(format!(
                        "unsound: θ = [{}] gives x = {} where f fails: {e}",
                        crate::theta::format_tape_brief(&theta, TAPE_IN_MESSAGES),
                        show(&x)
                    ));
                }
            }
        }
        Err(e) if e.is_domain_error() => {}
        Err(e) if e.is_limit() => exhausted = true,
        Err(e) => {
            error = true;
            note(format!("the inverse failed at y = {}: {e}", show(y)));
        }
    }

    let limits = inverse.limits();
    let raised;
    let round_trip = match limits.step_limit {
        Some(limit) if steps.saturating_mul(ROUND_TRIP_STEPS) > limit => {
            raised =
                inverse.with_limits(limits.with_step_limit(steps.saturating_mul(ROUND_TRIP_STEPS)));
            &raised
        }
        _ => inverse,
    };
    let mut recovered = false;
    let mut round_trip_stopped = false;
    match round_trip.pgf(x0) {
        // The check's time ran out during the round trip: it says nothing about completeness.
        Err(e) if e.is_time_limit() => round_trip_stopped = true,
        Ok(theta) => match round_trip.call_with_tape(y, &theta) {
            Err(e) if e.is_time_limit() => round_trip_stopped = true,
            Ok(x) if close_all(&x, x0, config.completeness_tolerance) => recovered = true,
            Ok(x) => note(format!(
                "incomplete: x₀ = {}, pgf = [{}] gives back {}",
                show(x0),
                crate::theta::format_tape_brief(&theta, TAPE_IN_MESSAGES),
                show(&x)
            )),
            Err(e) => note(format!(
                "incomplete: x₀ = {}, pgf = [{}]: {e}",
                show(x0),
                crate::theta::format_tape_brief(&theta, TAPE_IN_MESSAGES)
            )),
        },
        Err(e) => note(format!("the PGF failed at x₀ = {}: {e}", show(x0))),
    }
    Trial {
        accepted,
        violation,
        error,
        exhausted,
        recovered,
        round_trip_stopped,
        ..trial
    }
}

/// A search for discrete θ at y, the check's `index`th trial; a counterexample goes to
/// `message` (if it holds none yet).
fn search_case(
    inverse: &Inverse,
    config: &CheckConfig,
    y: &[Const],
    index: usize,
    deadline: Option<std::time::Instant>,
    message: &mut Option<String>,
) -> SearchReport {
    let mut report = SearchReport {
        trials: 1,
        ..SearchReport::default()
    };
    let cfg = SearchConfig {
        seed: config.seed.wrapping_add(index as u64 + 1),
        deadline: deadline.or(config.search.deadline),
        ..config.search
    };
    if let Ok(outcome) = inverse.search(y, &cfg) {
        report.runs += outcome.runs;
        if let Some(found) = outcome.found {
            report.found += 1;
            match inverse.forward(&found.x) {
                Ok(fx) if close_all(&fx, y, config.soundness_tolerance) => {}
                _ => {
                    report.violations += 1;
                    message.get_or_insert(format!(
                        "unsound: search found x = {} for y = {}",
                        show(&found.x),
                        show(y)
                    ));
                }
            }
        }
    }
    report
}

fn sample_input(rng: &mut Xoshiro256PlusPlus, ty: Type) -> Const {
    match ty {
        Type::F64 => Const::F64(rng.random_range(-10.0..=10.0)),
        Type::I64 => Const::I64(rng.random_range(-100..=100)),
        Type::Bool => Const::Bool(rng.random_bool(0.5)),
    }
}

/// Whether two values agree: exactly for i64 and bool; for f64 within `tol` relative to
/// max(1, |b|), with equal infinities and two NaNs agreeing.
pub fn close(a: Const, b: Const, tol: f64) -> bool {
    a.close_to(b, tol)
}

fn close_all(a: &[Const], b: &[Const], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| close(x, y, tol))
}

/// How many values of a PGF's tape a message shows.
const TAPE_IN_MESSAGES: usize = 16;

fn show(values: &[Const]) -> String {
    format!("({})", crate::theta::format_tape(values))
}
