//! `pinv completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell.
//!
//! clap_complete writes the subcommands and options. For bash, zsh and fish the script also
//! offers the function names of the file already on the command line where a command takes
//! FUNCTION after FILE: it asks `pinv __functions FILE` (hidden), which prints them.

use crate::Outcome;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::path::PathBuf;

/// The commands whose second positional argument is a function of the file before it.
const FILE_THEN_FUNCTION: &str = "run show invert pgf bench sample plot check";

/// Bash: wraps clap_complete's `_pinv`, completing the word after FILE with its functions.
const BASH_FUNCTIONS: &str = r#"
# The functions of the file on the command line, for FUNCTION (after FILE, before any option
# that takes a value).
_pinv_with_functions() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    case " FILE_THEN_FUNCTION " in
        *" ${COMP_WORDS[1]} "*)
            local i words=()
            for ((i = 2; i < COMP_CWORD; i++)); do
                case "${COMP_WORDS[i]}" in -*) ;; *) words+=("${COMP_WORDS[i]}") ;; esac
            done
            if [[ ${#words[@]} -eq 1 && "$cur" != -* ]]; then
                COMPREPLY=($(compgen -W "$(pinv __functions "${words[0]}" 2>/dev/null)" -- "$cur"))
                return 0
            fi
            ;;
    esac
    _pinv "$@"
}
complete -F _pinv_with_functions -o bashdefault -o default pinv
"#;

/// Fish: the third token (after `pinv` and the command) is FILE.
const FISH_FUNCTIONS: &str = r#"
# The functions of the file on the command line, for FUNCTION.
complete -c pinv -n "__fish_seen_subcommand_from FILE_THEN_FUNCTION; and test (count (commandline -opc)) -eq 3" -f -a "(pinv __functions (commandline -opc)[3] 2>/dev/null)"
"#;

/// Zsh: `_arguments` sets `line` to the command's words without options, so FILE is `line[1]`
/// (the subcommand's own `_arguments` call runs the action). Defined before clap_complete's
/// closing `_pinv "$@"`, which runs when the script is autoloaded from `fpath`.
const ZSH_FUNCTIONS: &str = r#"
# The functions of the file on the command line, for FUNCTION.
(( $+functions[_pinv_functions] )) ||
_pinv_functions() {
    local file=${(Q)line[1]}
    [[ $file == '~'* ]] && file=${~file}
    local -a names
    names=(${(f)"$(pinv __functions "$file" 2>/dev/null)"})
    _describe -t functions 'function' names
}

"#;

/// Print a shell completion script for pinv's subcommands and options (and, in bash, zsh and
/// fish, the function names of the file on the command line).
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
    let script = String::from_utf8_lossy(&script);
    if args.shell == Shell::Zsh {
        out!("{}", zsh_with_functions(&script, &command));
        return Outcome::Success;
    }
    out!("{script}");
    let functions = match args.shell {
        Shell::Bash => BASH_FUNCTIONS,
        Shell::Fish => FISH_FUNCTIONS,
        _ => "",
    };
    out!(
        "{}",
        functions.replace("FILE_THEN_FUNCTION", FILE_THEN_FUNCTION)
    );
    Outcome::Success
}

/// clap_complete's zsh script, with `_pinv_functions` as the action of every FUNCTION argument:
/// the positional after FILE of the commands in [`FILE_THEN_FUNCTION`], and options whose value
/// is named FUNCTION (`check --function`).
fn zsh_with_functions(script: &str, command: &clap::Command) -> String {
    let positional: Vec<String> = FILE_THEN_FUNCTION
        .split(' ')
        .filter_map(|name| command.find_subcommand(name))
        .filter_map(|sub| sub.get_positionals().nth(1))
        .map(|arg| arg.get_id().to_string())
        .collect();
    let mut out = String::with_capacity(script.len() + ZSH_FUNCTIONS.len());
    for line in script.lines() {
        if line.starts_with("if [ \"$funcstack[1]\" = \"_pinv\" ]") {
            out.push_str(ZSH_FUNCTIONS);
        }
        // A positional's spec: `':id -- help:action'` (`'::id …` when optional).
        let id = line
            .trim_start()
            .trim_start_matches('\'')
            .strip_prefix(':')
            .map(|rest| rest.trim_start_matches(':'))
            .and_then(|rest| rest.split_once(" -- "))
            .map(|(id, _)| id);
        let is_function = id.is_some_and(|id| positional.iter().any(|p| p == id))
            || line.ends_with(":FUNCTION:_default' \\");
        match line.rsplit_once(":_default'") {
            Some((head, tail)) if is_function => {
                out.push_str(head);
                out.push_str(":_pinv_functions'");
                out.push_str(tail);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `pinv __functions FILE`.
#[derive(Args, Debug)]
pub struct FunctionsArgs {
    pub file: PathBuf,
}

/// Prints the functions of `args.file`, one per line; nothing (and success) when it cannot be
/// read or compiled: a completion must not print errors into the user's command line.
pub fn functions(args: &FunctionsArgs) -> Outcome {
    if let Ok(program) = pinv::Program::load(&args.file) {
        for name in program.function_names() {
            outln!("{name}");
        }
    }
    Outcome::Success
}
