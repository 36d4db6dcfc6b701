//! `pinv sample FILE FUNC --y V[,V...] --samples N`: N preimages of y from sampled θ.

use crate::commands::invert::{load_inverse, parse_list};
use crate::draws::{default_max_draws, draw, Draws};
use crate::output::{self, Loaded};
use crate::progress::Progress;
use crate::values::{format_values, json_value};
use crate::Outcome;
use clap::Args;
use pinv::theta::format_tape;
use pinv::Const;
use std::path::PathBuf;

/// Sample preimages of y: draw θ from its domains until N of them give an x with f(x) = y.
///
/// θ that the inverse rejects as out of its domain are counted and redrawn, and the acceptance
/// rate (accepted / drawn) is reported. Drawing stops after `--max-draws` θ (by default 100 per
/// wanted sample, at least 10 000) even if fewer than N preimages were found: then the ones found
/// are printed and the exit status is 1.
///
/// With `--json` the output is one object:
/// `{"samples":[{"x":[…],"theta":[…]},…],"drawn":…,"accepted":…,"distinct":…,"rejected":…,"acceptance":…}`
/// (`distinct`: how many different x; the text report says it when some x repeat).
///
/// Example: `pinv sample tests/corpus/straight.pinv mul_add --y 10 --samples 5 --seed 7`
/// prints five (x, y, z) with x·y + z = 10, each with its θ.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function to invert.
    pub function: String,
    /// The output to invert: one value per output, separated by commas.
    #[arg(long, value_name = "V[,V...]")]
    pub y: String,
    /// How many preimages to find.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub samples: usize,
    /// Seed of the θ sampler (the same seed gives the same samples).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Give up after this many θ draws [default: 100 × samples, at least 10000].
    #[arg(long, value_name = "DRAWS")]
    pub max_draws: Option<usize>,
    /// Print the samples as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
}

pub fn run(args: &SampleArgs) -> Outcome {
    let (loaded, inverse) = match load_inverse(&args.file, &args.function, args.json) {
        Ok((loaded, inverse)) => (loaded, inverse.with_engine(args.engine.engine)),
        Err(outcome) => return outcome,
    };
    let y = match parse_list(&args.y, inverse.output_types(), "--y") {
        Ok(y) => y,
        Err(m) => return output::plain_error(args.json, "arguments", &m, Outcome::BadInput),
    };
    let max_draws = args
        .max_draws
        .unwrap_or_else(|| default_max_draws(args.samples));
    let progress = Progress::new(args.samples as u64, args.json, "sampling");
    let draws = match draw(&inverse, &y, args.samples, args.seed, max_draws, &progress) {
        Ok(d) => d,
        Err(e) => return output::library_error(&loaded.file, &e, args.json),
    };
    let complete = draws.preimages.len() >= args.samples;
    if args.json {
        print_json(&loaded, &inverse, &y, &draws, args.samples);
    } else {
        for p in &draws.preimages {
            outln!(
                "x = {}  θ = [{}]",
                format_values(&p.x),
                format_tape(&p.theta)
            );
        }
        let limited = if draws.limited > 0 {
            format!(", {} stopped at a step or depth limit", draws.limited)
        } else {
            String::new()
        };
        let distinct = draws.distinct();
        let distinct = if distinct < draws.preimages.len() {
            format!(" ({distinct} distinct)")
        } else {
            String::new()
        };
        outln!(
            "{} preimage(s){distinct} of y = {} from {} θ drawn: acceptance {:.1}% ({} rejected as out of domain{limited})",
            draws.preimages.len(),
            format_values(&y),
            draws.drawn,
            draws.acceptance(),
            draws.rejected
        );
    }
    if complete {
        Outcome::Success
    } else {
        shortfall(&loaded, inverse.function(), &draws, args.samples, args.json)
    }
}

fn print_json(loaded: &Loaded, inverse: &pinv::Inverse, y: &[Const], draws: &Draws, wanted: usize) {
    let list = |values: &[Const]| values.iter().map(|&v| json_value(v)).collect::<Vec<_>>();
    let samples: Vec<serde_json::Value> = draws
        .preimages
        .iter()
        .map(|p| serde_json::json!({ "x": list(&p.x), "theta": list(&p.theta) }))
        .collect();
    let mut value = serde_json::json!({
        "samples": samples,
        "drawn": draws.drawn,
        "accepted": draws.preimages.len(),
        "distinct": draws.distinct(),
        "rejected": draws.rejected,
        "limited": draws.limited,
        "acceptance": draws.acceptance() / 100.0,
        "requested": wanted,
        "function": inverse.function(),
        "y": list(y),
    });
    if draws.preimages.len() < wanted {
        value["error"] = serde_json::json!({
            "kind": "domain",
            "message": shortfall_message(loaded, inverse.function(), draws, wanted),
            "first_rejection": draws.first_rejection.as_ref().map(|e| e.to_string()),
        });
    }
    outln!("{value}");
}

fn shortfall_message(loaded: &Loaded, function: &str, draws: &Draws, wanted: usize) -> String {
    format!(
        "found {} of {wanted} preimage(s) in {} θ draws (acceptance {:.2}%); raise --max-draws, or see what θ means with `pinv show {} {function} --inverse`",
        draws.preimages.len(),
        draws.drawn,
        draws.acceptance(),
        loaded.file.name(),
    )
}

/// Reports too few preimages: the count, and why the first rejected θ was rejected, with its
/// place in the source.
fn shortfall(loaded: &Loaded, function: &str, draws: &Draws, wanted: usize, json: bool) -> Outcome {
    if json {
        return Outcome::Failure;
    }
    eprintln!(
        "error: {}",
        shortfall_message(loaded, function, draws, wanted)
    );
    if let Some(e) = &draws.first_rejection {
        eprintln!("the first rejected θ was rejected here:");
        output::library_error(&loaded.file, e, false);
    }
    Outcome::Failure
}
