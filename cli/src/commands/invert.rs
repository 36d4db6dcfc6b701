//! `pinv invert FILE FUNC --y V[,V...]`: preimages of y, from an explicit θ or sampled θ.

use crate::output::{self, Loaded};
use crate::values::{format_values, json_value, parse_value};
use crate::Outcome;
use clap::Args;
use pinv::theta::{format_tape, TextTape};
use pinv::{Const, Inverse, Sampler};
use std::path::PathBuf;

/// Invert a function: print preimages of y, each with the θ that gave it.
///
/// With `--theta`, θ is read from the list (`pinv show FILE FUNC --inverse` shows what each
/// value means); otherwise θ is drawn from its domains, reproducibly from `--seed`.
///
/// Example: `pinv invert tests/corpus/straight.pinv mul_add --y 10 --theta 4,2` prints
/// `x = (2.0, 3.0, 4.0)`.
#[derive(Args, Debug)]
pub struct InvertArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function to invert.
    pub function: String,
    /// The output to invert: one value per output, separated by commas.
    #[arg(long, value_name = "V[,V...]")]
    pub y: String,
    /// θ, as values separated by commas, in the inverse's reading order.
    #[arg(long, value_name = "V,V,...", conflicts_with_all = ["seed", "samples"])]
    pub theta: Option<String>,
    /// Seed of the θ sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many θ to draw (each gives a preimage or a domain error).
    #[arg(long, default_value_t = 1)]
    pub samples: usize,
    /// Search for a preimage instead: enumerate discrete θ (choices, loop counts, small
    /// integers) in order of size, sampling only the continuous θ, up to this many runs.
    #[arg(long, value_name = "RUNS", conflicts_with_all = ["theta", "samples"])]
    pub search: Option<usize>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
    #[command(flatten)]
    pub limits: crate::limits::LimitsArg,
}

/// Parses comma-separated values, one per type: `1.5, 2` or, as `run` prints a tuple,
/// `(1.5, 2)`. A trailing comma is allowed; an empty value between commas is an error.
pub fn parse_list(text: &str, types: &[pinv::Type], what: &str) -> Result<Vec<Const>, String> {
    let t = text.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .unwrap_or(t);
    let mut parts: Vec<&str> = t.split(',').map(str::trim).collect();
    if parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if let Some(i) = parts.iter().position(|p| p.is_empty()) {
        return Err(format!(
            "{what}: value {} of `{}` is empty",
            i + 1,
            text.trim()
        ));
    }
    if parts.len() != types.len() {
        let given = parts.len();
        return Err(format!(
            "{what} needs {} value(s) ({}) but {given} {} given",
            types.len(),
            types
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", "),
            if given == 1 { "was" } else { "were" }
        ));
    }
    parts
        .iter()
        .zip(types)
        .map(|(p, &ty)| parse_value(p, ty).map_err(|e| format!("{what}: {e}")))
        .collect()
}

/// Loads the file and builds the inverse, reporting failures; `lazy_pgf` for commands that do
/// not run the PGF (it is then built only if something asks for it, see
/// [`pinv::reorient::ReorientOptions::lazy_pgf`]).
pub fn load_inverse(
    file: &std::path::Path,
    function: &str,
    json: bool,
    limits: &crate::limits::LimitsArg,
    deadline: Option<std::time::Instant>,
    lazy_pgf: bool,
) -> Result<(Loaded, Inverse), Outcome> {
    let output::Loaded { file, program } = output::load(file, json)?;
    // Interpreted runs stop at the time limit too (compiled ones at their step limit).
    let program = program.with_config(limits.interp().with_deadline(deadline));
    let loaded = output::Loaded { file, program };
    let options = pinv::reorient::ReorientOptions {
        time_limit: limits.time(),
        max_instructions: limits.size.max_instructions,
        lazy_pgf,
        ..pinv::reorient::ReorientOptions::default()
    };
    let program = &loaded.program;
    match program.invert_with(function, &program.stack(), &options) {
        Ok(inverse) => Ok((loaded, inverse)),
        Err(e) => Err(output::library_error(&loaded.file, &e, json)),
    }
}

pub fn run(args: &InvertArgs) -> Outcome {
    let deadline = args.limits.deadline(std::time::Instant::now());
    let loaded = load_inverse(
        &args.file,
        &args.function,
        args.json,
        &args.limits,
        deadline,
        true,
    );
    let (loaded, inverse) = match loaded {
        Ok(x) => x,
        Err(outcome) => return outcome,
    };
    let inverse = inverse.with_engine(args.engine.engine);
    let y = match parse_list(&args.y, inverse.output_types(), "--y") {
        Ok(y) => y,
        Err(m) => return output::plain_error(args.json, "arguments", &m, Outcome::BadInput),
    };
    if let Some(theta) = &args.theta {
        return explicit(&loaded, &inverse, &y, theta, args.json);
    }
    if let Some(runs) = args.search {
        return search(&loaded, &inverse, &y, runs, args.seed, deadline, args.json);
    }
    let mut sampler = Sampler::new(args.seed);
    let mut results = Vec::new();
    let mut accepted = 0;
    let mut limited = 0;
    // With one θ drawn, what became of it, said once in the error.
    let (mut only, mut only_theta): (Option<String>, String) = (None, String::new());
    let (mut drawn, mut timed_out) = (0, false);
    for _ in 0..args.samples {
        if deadline.is_some_and(|at| std::time::Instant::now() >= at) {
            timed_out = true;
            break;
        }
        drawn += 1;
        let (x, theta) = inverse.sample(&y, &mut sampler);
        match x {
            Ok(x) => {
                accepted += 1;
                if args.json {
                    results.push(serde_json::json!({
                        "x": x.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                        "theta": theta.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                    }));
                } else {
                    outln!("x = {}  θ = [{}]", format_values(&x), format_tape(&theta));
                }
            }
            // A θ out of domain, or one whose run hit a limit (counted): skipped, not the end.
            Err(e) if e.is_domain_error() || e.is_limit() => {
                let limit = e.is_limit();
                limited += usize::from(limit);
                if args.json {
                    results.push(serde_json::json!({
                        "x": null,
                        "theta": theta.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                        "error": error_json(&loaded, &e),
                    }));
                } else if args.samples == 1 {
                    // One θ: the error below says what became of it, once.
                    only = Some(if limit {
                        format!("hit a limit: {e}")
                    } else {
                        format!("is out of domain: {}", located(&loaded, &e))
                    });
                    only_theta = format_tape(&theta);
                } else if limit {
                    outln!("θ = [{}] hit a limit: {e}", format_tape(&theta));
                } else {
                    outln!(
                        "θ = [{}] is out of domain: {}",
                        format_tape(&theta),
                        located(&loaded, &e)
                    );
                }
            }
            Err(e) => return output::library_error(&loaded.file, &e, args.json),
        }
    }
    if args.json {
        let value = serde_json::json!({
            "function": inverse.function(),
            "y": y.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
            "results": results,
            "drawn": drawn,
            "accepted": accepted,
            "limited": limited,
            "timed_out": timed_out,
        });
        outln!("{value}");
    }
    if timed_out && accepted > 0 && !args.json {
        eprintln!(
            "note: the time limit came after {drawn} of the {} θ draws",
            args.samples
        );
    }
    if accepted > 0 || args.samples == 0 {
        Outcome::Success
    } else {
        if let (false, Some(what)) = (args.json, &only) {
            let domain = what.strip_prefix("is out of domain: ");
            if let (true, Some(reason)) = (only_theta.is_empty(), domain) {
                // It failed before reading any θ, so every θ fails there: y has no preimage.
                eprintln!("error: y has no preimage: {reason}");
            } else {
                eprintln!("error: the θ drawn, [{only_theta}], {what} (try --samples)");
            }
        } else if !args.json && timed_out {
            eprintln!(
                "error: none of the {drawn} θ drawn before the time limit gave a preimage of y (raise --time-limit)"
            );
        } else if !args.json {
            eprintln!(
                "error: none of the {} θ drawn gave a preimage of y (try --samples)",
                args.samples
            );
        }
        Outcome::Failure
    }
}

fn explicit(loaded: &Loaded, inverse: &Inverse, y: &[Const], theta: &str, json: bool) -> Outcome {
    let mut tape = TextTape::parse(theta);
    match inverse.call(y, &mut tape) {
        Ok(x) if tape.pos() == tape.len() => {
            if json {
                let value = serde_json::json!({
                    "function": inverse.function(),
                    "y": y.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                    "results": [{
                        "x": x.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                        "theta": tape.read().iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                    }],
                });
                outln!("{value}");
            } else {
                outln!("x = {}", format_values(&x));
            }
            Outcome::Success
        }
        Ok(_) => output::plain_error(
            json,
            "arguments",
            &format!(
                "θ has {} values but the inverse read only {} (`pinv show {} {} --inverse` shows the θ schema)",
                tape.len(),
                tape.pos(),
                loaded.file.name(),
                inverse.function()
            ),
            Outcome::BadInput,
        ),
        Err(e) => {
            use pinv::{RuntimeErrorKind, ThetaError};
            let bad_tape = matches!(
                &e,
                pinv::Error::Runtime(r) if matches!(
                    &r.kind,
                    RuntimeErrorKind::Theta(ThetaError::Exhausted { .. } | ThetaError::WrongType { .. } | ThetaError::Other(_))
                )
            );
            if bad_tape {
                let message = format!(
                    "{e} (the inverse reads θ as `pinv show {} {} --inverse` shows)",
                    loaded.file.name(),
                    inverse.function()
                );
                output::plain_error(json, "arguments", &message, Outcome::BadInput)
            } else {
                output::library_error(&loaded.file, &e, json)
            }
        }
    }
}

fn located(loaded: &Loaded, e: &pinv::Error) -> String {
    match e.span() {
        Some(span) => format!("{e} (at {})", loaded.file.location(span)),
        None => e.to_string(),
    }
}

fn error_json(loaded: &Loaded, e: &pinv::Error) -> serde_json::Value {
    serde_json::json!({
        "message": e.to_string(),
        "location": e.span().map(|s| loaded.file.location(s)),
    })
}

fn search(
    loaded: &Loaded,
    inverse: &Inverse,
    y: &[Const],
    runs: usize,
    seed: u64,
    deadline: Option<std::time::Instant>,
    json: bool,
) -> Outcome {
    let config = pinv::search::SearchConfig {
        max_runs: runs,
        seed,
        deadline,
        ..pinv::search::SearchConfig::default()
    };
    let outcome = match inverse.search(y, &config) {
        Ok(o) => o,
        Err(e) => return output::library_error(&loaded.file, &e, json),
    };
    if json {
        let found = outcome.found.as_ref().map(|f| {
            serde_json::json!({
                "x": f.x.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                "theta": f.theta.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
            })
        });
        let value = serde_json::json!({
            "function": inverse.function(),
            "y": y.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
            "found": found,
            "runs": outcome.runs,
        });
        outln!("{value}");
    }
    match outcome.found {
        Some(found) => {
            if !json {
                outln!(
                    "x = {}  θ = [{}]  (found in {} runs)",
                    format_values(&found.x),
                    format_tape(&found.theta),
                    outcome.runs
                );
            }
            Outcome::Success
        }
        None => {
            if !json {
                eprintln!("error: no preimage of y found in {} runs", outcome.runs);
            }
            Outcome::Failure
        }
    }
}
