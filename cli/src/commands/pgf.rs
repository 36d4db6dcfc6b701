//! `pinv pgf FILE FUNC ARGS...`: the θ that makes the inverse give back ARGS.

use crate::commands::invert::load_inverse;
use crate::commands::run::parse_inputs;
use crate::output;
use crate::values::json_value;
use crate::Outcome;
use clap::Args;
use pinv::theta::format_tape;
use std::path::PathBuf;

/// Print the θ for which the inverse returns the given inputs (the parameter-generating
/// function): `f⁻¹(f(x), pgf(x)) = x`.
///
/// Example: `pinv pgf tests/corpus/straight.pinv mul_add 2 3 4` prints `4.0,2.0`: z = 4, then
/// x = 2, the θ with which `pinv invert ... mul_add --y 10 --theta 4,2` gives back (2, 3, 4).
#[derive(Args, Debug)]
pub struct PgfArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function.
    pub function: String,
    /// One value per input.
    pub args: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
    #[command(flatten)]
    pub limits: crate::limits::LimitsArg,
}

pub fn run(args: &PgfArgs) -> Outcome {
    let deadline = args.limits.deadline(std::time::Instant::now());
    let (loaded, inverse) = match load_inverse(
        &args.file,
        &args.function,
        args.json,
        &args.limits,
        deadline,
        false,
    ) {
        Ok(x) => x,
        Err(outcome) => return outcome,
    };
    let inverse = inverse.with_engine(args.engine.engine);
    let (_, function) = match loaded.program.function(&args.function) {
        Ok(f) => f,
        Err(e) => return output::library_error(&loaded.file, &e, args.json),
    };
    let x = match parse_inputs(function, &args.args) {
        Ok(x) => x,
        Err(m) => return output::plain_error(args.json, "arguments", &m, Outcome::BadInput),
    };
    let y = match inverse.forward(&x) {
        Ok(y) => y,
        Err(e) => return output::library_error(&loaded.file, &e, args.json),
    };
    match inverse.pgf(&x) {
        Ok(theta) => {
            if args.json {
                let value = serde_json::json!({
                    "function": inverse.function(),
                    "x": x.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                    "y": y.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                    "theta": theta.iter().map(|&v| json_value(v)).collect::<Vec<_>>(),
                });
                outln!("{value}");
            } else {
                outln!("{}", format_tape(&theta).replace(", ", ","));
            }
            Outcome::Success
        }
        Err(e) => output::library_error(&loaded.file, &e, args.json),
    }
}
