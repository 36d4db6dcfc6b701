//! `pinv completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell.

use crate::Outcome;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Print a shell completion script for pinv's subcommands and options.
///
/// Load it in the current shell, or save it where your shell looks for completions:
///
///   bash:  source <(pinv completions bash)
///          (or save it as ~/.local/share/bash-completion/completions/pinv)
///   zsh:   pinv completions zsh > ~/.zfunc/_pinv   (with `fpath+=~/.zfunc` before `compinit`)
///   fish:  pinv completions fish > ~/.config/fish/completions/pinv.fish
///
/// Example: `pinv completions bash > ~/.local/share/bash-completion/completions/pinv`.
#[derive(Args, Debug)]
#[command(
    about = "Print a shell completion script for pinv's subcommands and options",
    verbatim_doc_comment
)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs) -> Outcome {
    let mut command = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "pinv", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Outcome::Success
}
