//! `pinv man`: the man page, in roff, from the same definitions as `--help`.

use crate::Outcome;
use clap::{Args, CommandFactory};

/// Print pinv's man page (roff), generated from the same definitions as `--help`.
///
/// Example: `pinv man > ~/.local/share/man/man1/pinv.1 && man pinv`.
#[derive(Args, Debug)]
#[command(about = "Print pinv's man page (roff), generated from the same text as `--help`")]
pub struct ManArgs {}

pub fn run(_: &ManArgs) -> Outcome {
    let mut page = Vec::new();
    match clap_mangen::Man::new(crate::Cli::command()).render(&mut page) {
        Ok(()) => {
            out!("{}", String::from_utf8_lossy(&page));
            Outcome::Success
        }
        Err(e) => {
            eprintln!("error: cannot write the man page: {e}");
            Outcome::Failure
        }
    }
}
