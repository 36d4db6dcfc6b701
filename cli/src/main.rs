//! `pinv`: invert programs from the command line.
//!
//! Exit status: 0 on success, 1 when running failed (a runtime or domain error) or a check
//! failed, 2 on bad input (unreadable file, syntax or type errors, wrong arguments).

mod commands;
mod output;
mod values;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Parametric inverses of programs.
#[derive(Parser, Debug)]
#[command(name = "pinv", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(commands::run::RunArgs),
    Show(commands::show::ShowArgs),
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

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
    };
    outcome.into()
}
