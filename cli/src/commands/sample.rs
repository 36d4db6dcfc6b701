//! `pinv sample FILE FUNC --y V[,V...] --samples N`: N preimages of y from sampled θ.

use crate::commands::invert::{load_inverse, parse_list};
use crate::draws::{draw_each, DrawConfig, Draws, Preimage};
use crate::output::{self, Loaded};
use crate::progress::Progress;
use crate::values::{format_value, format_values, json_value};
use crate::Outcome;
use clap::Args;
use pinv::theta::format_tape;
use pinv::Const;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::ops::ControlFlow;
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
/// (`distinct`: how many different x; the text report says it when some x repeat). With
/// `--format jsonl` each sample is a line `{"x":[…],"theta":[…]}` written as it is found, and the
/// last line is `{"summary":{…}}` with the same counts (but `distinct`); `--format csv` writes a
/// row per sample. Both keep no sample in memory, so any number of samples fits.
///
/// The draws are split over `--jobs` threads in chunks, each seeded from `--seed` and its
/// number: the samples and their order are the same whatever the number of threads.
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
    /// Print the samples as JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
    /// How to print the samples: `text`; `json`, one object holding them all; `jsonl`, one
    /// object per line as each is found, then a line `{"summary": {…}}`; `csv`, a header of
    /// the input names and `theta`, then a row per sample (the summary goes to standard error).
    /// `jsonl` and `csv` keep no sample in memory.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub jobs: crate::jobs::JobsArg,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
    #[command(flatten)]
    pub limits: crate::limits::LimitsArg,
}

/// `sample --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Jsonl,
    Csv,
}

pub fn run(args: &SampleArgs) -> Outcome {
    let deadline = args.limits.deadline(std::time::Instant::now());
    let format = if args.json { Format::Json } else { args.format };
    // Errors are JSON where the output is.
    let json = matches!(format, Format::Json | Format::Jsonl);
    let (loaded, inverse) = match load_inverse(
        &args.file,
        &args.function,
        json,
        &args.limits,
        deadline,
        true,
    ) {
        Ok((loaded, inverse)) => (loaded, inverse.with_engine(args.engine.engine)),
        Err(outcome) => return outcome,
    };
    let y = match parse_list(&args.y, inverse.output_types(), "--y") {
        Ok(y) => y,
        Err(m) => return output::plain_error(json, "arguments", &m, Outcome::BadInput),
    };
    let names = match loaded.input_names(&args.function) {
        Ok(names) => names,
        Err(e) => return output::library_error(&loaded.file, &e, json),
    };
    let config =
        DrawConfig::new(args.samples, args.seed, args.max_draws, args.jobs.get()).until(deadline);
    let progress = Progress::new(args.samples as u64, format != Format::Text, "sampling");
    // Samples are written as they are found; the text and JSON reports also count the
    // distinct x (JSON keeps every sample anyway).
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // The x seen, by a 64-bit hash of each (text and JSON only: JSON Lines and CSV keep
    // nothing per sample).
    let mut hashes: Vec<u64> = Vec::new();
    let mut kept = Vec::new();
    let mut closed = false;
    if format == Format::Csv {
        let header: Vec<String> = names.iter().map(|n| csv_field(n)).collect();
        closed |= writeln!(out, "{},theta", header.join(",")).is_err();
    }
    // Each sample is formatted on the thread that drew it; this one only writes.
    let drawn = draw_each(
        &inverse,
        &y,
        &config,
        &progress,
        |p, text| {
            let start = text.len();
            let hash = match format {
                Format::Text => {
                    let _ = write!(text, "x = ");
                    write_values(text, &p.x);
                    let _ = write!(text, "  θ = [{}]", format_tape(&p.theta));
                    Some(x_hash(&p.x))
                }
                Format::Json => return Formatted::Kept(p),
                Format::Jsonl => {
                    write_json_line(text, &p);
                    None
                }
                Format::Csv => {
                    for (i, &v) in p.x.iter().enumerate() {
                        let sep = if i > 0 { "," } else { "" };
                        let _ = write!(text, "{sep}{}", format_value(v));
                    }
                    for (i, &v) in p.theta.iter().enumerate() {
                        let sep = if i > 0 { " " } else { "," };
                        let _ = write!(text, "{sep}{}", format_value(v));
                    }
                    if p.theta.is_empty() {
                        text.push(',');
                    }
                    None
                }
            };
            text.push('\n');
            Formatted::Line(start..text.len(), hash)
        },
        |formatted, text| {
            let written = match formatted {
                Formatted::Line(range, hash) => {
                    hashes.extend(hash);
                    out.write_all(text[range].as_bytes())
                }
                Formatted::Kept(p) => {
                    hashes.push(x_hash(&p.x));
                    kept.push(p);
                    Ok(())
                }
            };
            // A closed output (`| head`) stops drawing.
            closed |= written.is_err();
            if closed {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    let _ = out.flush();
    drop(out);
    let mut draws = match drawn {
        Ok(d) => d,
        Err(e) => return output::library_error(&loaded.file, &e, json),
    };
    if closed {
        return Outcome::Success;
    }
    draws.preimages = kept;
    // Counted once, at the end: sorting is cheaper than a set that grows per sample.
    hashes.sort_unstable();
    hashes.dedup();
    let distinct = hashes.len();
    let complete = draws.accepted >= args.samples;
    match format {
        Format::Json => print_json(&loaded, &inverse, &y, &draws, args.samples, distinct),
        Format::Jsonl => {
            let summary = summary_json(&loaded, &inverse, &y, &draws, args.samples);
            outln!("{}", serde_json::json!({ "summary": summary }));
        }
        Format::Text => outln!("{}", summary_line(&y, &draws, Some(distinct))),
        Format::Csv => eprintln!("{}", summary_line(&y, &draws, None)),
    }
    if complete {
        Outcome::Success
    } else {
        shortfall(&loaded, inverse.function(), &draws, args.samples, json)
    }
}

/// What `sample` writes for one sample, made on the thread that drew it.
enum Formatted {
    /// A line (its place in the chunk's text), and the hash of x where different x are
    /// counted.
    Line(std::ops::Range<usize>, Option<u64>),
    /// The sample itself (`--format json` prints them all at the end).
    Kept(Preimage),
}

/// A 64-bit hash of x, bit for bit, for counting different x: a sampler that keeps giving the
/// same point of a continuous family shows in the count.
fn x_hash(x: &[Const]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for c in x {
        c.bits().hash(&mut h);
        c.ty().hash(&mut h);
    }
    h.finish()
}

/// A CSV field: quoted where it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn list(values: &[Const]) -> Vec<serde_json::Value> {
    values.iter().map(|&v| json_value(v)).collect()
}

/// [`format_values`], written to `out`.
fn write_values(out: &mut String, values: &[Const]) {
    match values {
        [one] => out.push_str(&format_value(*one)),
        _ => {
            out.push('(');
            for (i, &v) in values.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format_value(v));
            }
            out.push(')');
        }
    }
}

/// [`sample_json`] as a line of text, written without building the JSON value.
fn write_json_line(out: &mut String, p: &Preimage) {
    let list = |out: &mut String, values: &[Const]| {
        out.push('[');
        for (i, &v) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&json_value(v).to_string());
        }
        out.push(']');
    };
    // The keys in the order `sample_json` prints them.
    out.push_str("{\"theta\":");
    list(out, &p.theta);
    out.push_str(",\"x\":");
    list(out, &p.x);
    out.push('}');
}

fn sample_json(p: &Preimage) -> serde_json::Value {
    serde_json::json!({ "x": list(&p.x), "theta": list(&p.theta) })
}

/// The text report's last line: how many preimages, from how many draws.
fn summary_line(y: &[Const], draws: &Draws, distinct: Option<usize>) -> String {
    let limited = if draws.limited > 0 {
        format!(", {} stopped at a step or depth limit", draws.limited)
    } else {
        String::new()
    };
    let distinct = match distinct {
        Some(d) if d < draws.accepted => format!(" ({d} distinct)"),
        _ => String::new(),
    };
    let limited = if draws.timed_out {
        format!("{limited}; stopped at the time limit")
    } else {
        limited
    };
    format!(
        "{} preimage(s){distinct} of y = {} from {} θ drawn: acceptance {:.1}% ({} rejected as out of domain{limited})",
        draws.accepted,
        format_values(y),
        draws.drawn,
        draws.acceptance(),
        draws.rejected
    )
}

/// The counts of a JSON report, and its error when too few preimages were found.
fn summary_json(
    loaded: &Loaded,
    inverse: &pinv::Inverse,
    y: &[Const],
    draws: &Draws,
    wanted: usize,
) -> serde_json::Value {
    let mut value = serde_json::json!({
        "drawn": draws.drawn,
        "accepted": draws.accepted,
        "rejected": draws.rejected,
        "limited": draws.limited,
        "timed_out": draws.timed_out,
        "acceptance": draws.acceptance() / 100.0,
        "requested": wanted,
        "function": inverse.function(),
        "y": list(y),
    });
    if draws.accepted < wanted {
        value["error"] = serde_json::json!({
            "kind": "domain",
            "message": shortfall_message(loaded, inverse.function(), draws, wanted),
            "first_rejection": draws.first_rejection.as_ref().map(|e| e.to_string()),
        });
    }
    value
}

fn print_json(
    loaded: &Loaded,
    inverse: &pinv::Inverse,
    y: &[Const],
    draws: &Draws,
    wanted: usize,
    distinct: usize,
) {
    let mut value = summary_json(loaded, inverse, y, draws, wanted);
    value["samples"] = draws.preimages.iter().map(sample_json).collect();
    value["distinct"] = distinct.into();
    outln!("{value}");
}

fn shortfall_message(loaded: &Loaded, function: &str, draws: &Draws, wanted: usize) -> String {
    let advice = if draws.timed_out {
        " before the time limit; raise --time-limit".to_string()
    } else {
        format!(
            "; raise --max-draws, or see what θ means with `pinv show {} {function} --inverse`",
            loaded.file.name()
        )
    };
    format!(
        "found {} of {wanted} preimage(s) in {} θ draws (acceptance {:.2}%){advice}",
        draws.accepted,
        draws.drawn,
        draws.acceptance(),
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
