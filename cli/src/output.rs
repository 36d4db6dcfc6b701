//! Loading programs and reporting errors, for people (with source context, coloured on a
//! terminal) or for programs (`--json`, on stdout).

use crate::Outcome;
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use pinv::diagnostic::{self, Located};
use pinv::Program;
use pinv::SourceFile;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// A program read from a file and compiled.
pub struct Loaded {
    pub file: SourceFile,
    pub program: Program,
}

impl Loaded {
    pub fn module(&self) -> &pinv::ir::Module {
        self.program.module()
    }

    /// The source names of `function`'s inputs (`x1`, `x2`, … where a name is missing).
    pub fn input_names(&self, function: &str) -> Result<Vec<String>, pinv::Error> {
        let (_, f) = self.program.function(function)?;
        Ok((0..f.sig.params.len())
            .map(|i| {
                f.param_names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("x{}", i + 1))
            })
            .collect())
    }

    /// `only` (checked to be a function of the file), or every function, in file order.
    pub fn selected_functions(
        &self,
        only: Option<&str>,
        json: bool,
    ) -> Result<Vec<String>, Outcome> {
        match only {
            Some(name) => match self.program.function(name) {
                Ok(_) => Ok(vec![name.to_string()]),
                Err(e) => Err(library_error(&self.file, &e, json)),
            },
            None => Ok(self
                .program
                .function_names()
                .into_iter()
                .map(str::to_string)
                .collect()),
        }
    }
}

/// Reads and compiles `path`, reporting any error; `Err` carries the exit outcome.
pub fn load(path: &Path, json: bool) -> Result<Loaded, Outcome> {
    let stdin = path.as_os_str() == "-";
    let name = if stdin {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let text = match read_source(path, stdin) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                return Err(plain_error(
                    json,
                    "input",
                    &format!("`{name}` is not valid UTF-8 text"),
                    Outcome::BadInput,
                ))
            }
        },
        Err(e) => {
            return Err(plain_error(
                json,
                "input",
                &format!("cannot read `{name}`: {e}"),
                Outcome::BadInput,
            ))
        }
    };
    let file = SourceFile::new(name, text);
    match Program::from_source(file.clone()) {
        Ok(program) => Ok(Loaded { file, program }),
        Err(pinv::Error::Compile(e)) => {
            Err(located_error(&file, &e, json, "compile", Outcome::BadInput))
        }
        Err(other) => Err(plain_error(
            json,
            "internal",
            &format!("internal error (please report it): {other}"),
            Outcome::Failure,
        )),
    }
}

/// The bytes of a source file, or of standard input for `-` (read only up to one byte past the
/// size limit: the compiler refuses a larger file, and a pipe that never ends must not fill the
/// memory).
fn read_source(path: &Path, stdin: bool) -> std::io::Result<Vec<u8>> {
    if !stdin {
        return std::fs::read(path);
    }
    use std::io::Read;
    let mut bytes = Vec::new();
    let limit = pinv::MAX_SOURCE_BYTES as u64 + 1;
    std::io::stdin()
        .lock()
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reports an error that has a place in the source. Returns `outcome` for convenience.
pub fn located_error(
    file: &SourceFile,
    error: &dyn Located,
    json: bool,
    kind: &str,
    outcome: Outcome,
) -> Outcome {
    if json {
        let lc = file.line_col(error.span().start);
        let value = serde_json::json!({
            "error": {
                "kind": kind,
                "message": error.to_string(),
                "file": file.name(),
                "line": lc.line,
                "column": lc.column,
                "rendered": diagnostic::render(file, error),
            }
        });
        outln!("{value}");
    } else if std::io::stderr().is_terminal() {
        let mut stderr = StandardStream::stderr(ColorChoice::Auto);
        diagnostic::emit(file, error, &mut stderr);
    } else {
        eprint!("{}", diagnostic::render(file, error));
    }
    outcome
}

/// Reports an error of the library: with its source location when it has one; bad values and
/// unknown names are bad input (exit 2), everything else a failure (exit 1).
pub fn library_error(file: &SourceFile, error: &pinv::Error, json: bool) -> Outcome {
    use pinv::Error as E;
    let (kind, outcome) = match error {
        E::Compile(_) => ("compile", Outcome::BadInput),
        E::TooLarge { .. } => ("too_large", Outcome::BadInput),
        E::Io { .. } | E::NoSuchFunction { .. } | E::BadValues(_) => {
            ("arguments", Outcome::BadInput)
        }
        E::Unsupported { .. } | E::NoRule { .. } => ("unsupported", Outcome::Failure),
        E::Runtime(_) if error.is_domain_error() => ("domain", Outcome::Failure),
        E::Runtime(_) => ("runtime", Outcome::Failure),
        E::Jit(_) => ("jit", Outcome::Failure),
        E::TimedOut { .. } => ("timeout", Outcome::Failure),
        E::Internal(_) => ("internal", Outcome::Failure),
    };
    if VERBOSE.load(Ordering::Relaxed) && !json {
        let outcome = if error.span().is_some() {
            located_error(file, error, json, kind, outcome)
        } else {
            plain_error(json, kind, &error.to_string(), outcome)
        };
        eprint!("{}", internal_detail(error));
        return outcome;
    }
    if error.span().is_some() {
        located_error(file, error, json, kind, outcome)
    } else {
        plain_error(json, kind, &error.to_string(), outcome)
    }
}

/// `--verbose`: errors also show their internal detail ([`internal_detail`]).
pub static VERBOSE: AtomicBool = AtomicBool::new(false);

/// What `--verbose` adds to an error: the generated functions by their IR names (the one that
/// was running, then its callers, innermost first), and the error as the library holds it.
pub fn internal_detail(error: &pinv::Error) -> String {
    let mut out = String::new();
    if let pinv::Error::Runtime(e) = error {
        out.push_str(&format!(
            "  = in the IR: `{}` at bytes {}..{}\n",
            e.function, e.span.start, e.span.end
        ));
        for site in &e.backtrace {
            out.push_str(&format!(
                "    called from `{}` at bytes {}..{}\n",
                site.function, site.span.start, site.span.end
            ));
        }
    }
    out.push_str(&format!("  = internally: {error:?}\n"));
    out
}

/// Reports an error with no source location. Returns `outcome` for convenience.
pub fn plain_error(json: bool, kind: &str, message: &str, outcome: Outcome) -> Outcome {
    if json {
        let value = serde_json::json!({ "error": { "kind": kind, "message": message } });
        outln!("{value}");
    } else {
        eprintln!("error: {message}");
    }
    outcome
}
