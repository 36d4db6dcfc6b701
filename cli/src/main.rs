//! `pinv`: invert programs from the command line.
//!
//! Exit status: 0 on success, 1 when running failed (a runtime or domain error) or a check
//! failed, 2 on bad input (unreadable file, syntax or type errors, wrong arguments).

/// `println!` that ignores a closed stdout (as in `pinv show ... | head`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod commands;
mod draws;
mod engine;
mod output;
mod progress;
mod values;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Parametric inverses of programs.
#[derive(Parser, Debug)]
#[command(name = "pinv", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  pinv run tests/corpus/straight.pinv mul_add 2 3 4
  pinv invert tests/corpus/straight.pinv mul_add --y 10 --samples 3
  pinv sample tests/corpus/straight.pinv mul_add --y 10 --samples 100 --json
  pinv plot tests/corpus/fanout.pinv quad --y 4 --out quad.svg
  pinv check tests/corpus/straight.pinv

`pinv COMMAND --help` explains a command, with an example.";

#[derive(Subcommand, Debug)]
enum Command {
    Run(commands::run::RunArgs),
    Show(commands::show::ShowArgs),
    Invert(commands::invert::InvertArgs),
    Pgf(commands::pgf::PgfArgs),
    Check(commands::check::CheckArgs),
    Primitives(commands::primitives::PrimitivesArgs),
    Bench(commands::bench::BenchArgs),
    Sample(commands::sample::SampleArgs),
    Plot(commands::plot::PlotArgs),
    Completions(commands::completions::CompletionsArgs),
}

/// How a command ended, and so the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked: exit 0.
    Success,
    /// Running failed, or a check found a problem: exit 1.
    Failure,
    /// The input was bad (file, program or arguments): exit 2.
    BadInput,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> ExitCode {
        match outcome {
            Outcome::Success => ExitCode::SUCCESS,
            Outcome::Failure => ExitCode::from(1),
            Outcome::BadInput => ExitCode::from(2),
        }
    }
}

/// Keeps values like `-2`, `-1.5e3`, `-inf`, `-nan` and `-0x10` from being read as flags: clap
/// takes anything starting with `-` for an option, so such values get a leading space, which
/// every value parser trims. No option of `pinv` starts with a digit, `.`, `inf` or `nan`.
fn protect_negative_values(arg: std::ffi::OsString) -> std::ffi::OsString {
    let Some(text) = arg.to_str() else {
        return arg;
    };
    let Some(rest) = text.strip_prefix('-') else {
        return arg;
    };
    let lower = rest.to_ascii_lowercase();
    let numeric = lower.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        || lower.starts_with("inf")
        || lower.starts_with("nan");
    if numeric {
        format!(" {text}").into()
    } else {
        arg
    }
}

fn main() -> ExitCode {
    let args = std::env::args_os().map(protect_negative_values);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with success, usage errors to stderr.
            let _ = e.print();
            return if e.use_stderr() {
                Outcome::BadInput.into()
            } else {
                Outcome::Success.into()
            };
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => commands::run::run(&args),
        Command::Show(args) => commands::show::run(&args),
        Command::Invert(args) => commands::invert::run(&args),
        Command::Pgf(args) => commands::pgf::run(&args),
        Command::Check(args) => commands::check::run(&args),
        Command::Primitives(args) => commands::primitives::run(&args),
        Command::Bench(args) => commands::bench::run(&args),
        Command::Sample(args) => commands::sample::run(&args),
        Command::Plot(args) => commands::plot::run(&args),
        Command::Completions(args) => commands::completions::run(&args),
    };
    outcome.into()
}
