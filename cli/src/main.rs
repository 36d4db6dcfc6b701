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

/// The allocator: building a large inverse makes and drops millions of small vectors, which
/// mimalloc serves in about half the time of the system allocator, at about the same peak
/// memory (less for the largest builds, more for mid-sized ones and for small runs: the figures
/// are with the dependency in the workspace's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod commands;
mod draws;
mod engine;
mod jobs;
mod limits;
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
    /// After an error, also print what pinv's insides call it: the generated function that was
    /// running (`f.inv`, `f.guard.block3`, `iso.root.0.solve`), the calls that led there, and the
    /// error's full internal form.
    #[arg(long, short = 'v', global = true)]
    verbose: bool,
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
    Man(commands::man::ManArgs),
    /// The function names of a file, one per line, for shell completion (what `pinv completions`
    /// scripts call); nothing when the file does not compile.
    #[command(name = "__functions", hide = true)]
    Functions(commands::completions::FunctionsArgs),
}

/// How a command ended, and so the process's exit status. Ordered by severity (the worst of
/// several is their `max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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

/// `pinv help --help` (and `-h`) asks for the help of `help`: the top-level help.
fn help_of_help(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let asks = args.get(1).is_some_and(|a| a == "help")
        && args[2..].iter().any(|a| a == "--help" || a == "-h");
    if asks {
        args.into_iter().take(1).chain(["--help".into()]).collect()
    } else {
        args
    }
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().map(protect_negative_values).collect();
    let args = help_of_help(args);
    let json = args.iter().skip(1).any(|a| a == "--json");
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && json => {
            // Argument errors are JSON too when JSON was asked for: the first line of clap's
            // message, without its styling, as a `usage` error.
            let text = e.render().to_string();
            let message = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
            return output::plain_error(true, "usage", &message, Outcome::BadInput).into();
        }
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
    output::VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
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
        Command::Man(args) => commands::man::run(&args),
        Command::Functions(args) => commands::completions::functions(&args),
    };
    outcome.into()
}
