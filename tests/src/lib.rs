//! Shared helpers for pinv's integration tests: locating and compiling the corpus.
//!
//! The corpus (`tests/corpus/*.pinv`) is a copy of the team's shared example programs; the
//! programs in `tests/corpus/bad/` must fail cleanly with the error their first line names.

pub mod gen;

use pinv_core::{Compiled, SourceFile};
use std::path::PathBuf;

/// The command-line options of the examples (`fuzz_cli`, `scaling`): `--name value` pairs.
pub struct ExampleArgs(Vec<String>);

impl ExampleArgs {
    /// The process's arguments. With `--help` or `-h` among them, prints `usage` and exits
    /// with status 0 (an example that ran its whole workload instead would take minutes).
    pub fn from_env(usage: &str) -> ExampleArgs {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.iter().any(|a| a == "--help" || a == "-h") {
            println!("{}", usage.trim());
            std::process::exit(0);
        }
        ExampleArgs(args)
    }

    /// The value after `name`, if given.
    pub fn value(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.0.get(i + 1))
            .cloned()
    }

    /// Whether the flag `name` is given.
    pub fn flag(&self, name: &str) -> bool {
        self.0.iter().any(|a| a == name)
    }

    /// The value after `name` parsed, or `default` when it is missing or does not parse.
    pub fn parsed<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        self.value(name)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    }

    /// The release binary to run: `--bin PATH`, or `target/release/pinv` of this workspace.
    /// Exits with status 2, saying how to build it, where there is none.
    pub fn binary(&self) -> PathBuf {
        let bin = self.value("--bin").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/pinv"),
            PathBuf::from,
        );
        if !bin.exists() {
            eprintln!(
                "no binary at {} (cargo build --release -p pinv-cli)",
                bin.display()
            );
            std::process::exit(2);
        }
        bin
    }
}

/// What running a command cost: wall seconds, the child's peak resident memory in MB, and its
/// exit code.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub seconds: f64,
    pub peak_mb: f64,
    pub code: Option<i32>,
}

/// Runs `bin args` with progress bars off, its standard output to `stdout` (or nowhere), and
/// measures it (for the examples that print time and memory).
pub fn measure(bin: &std::path::Path, args: &[String], stdout: Option<std::fs::File>) -> Measured {
    use std::process::{Command, Stdio};
    let started = std::time::Instant::now();
    // Reaped by wait4 below, which also gives its resource usage (std's wait does not).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(bin)
        .args(args)
        .env("PINV_PROGRESS", "never")
        .stdout(stdout.map_or_else(Stdio::null, Stdio::from))
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct, which wait4 fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for; status and usage are valid pointers.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = started.elapsed().as_secs_f64();
    let code = (waited == pid && libc::WIFEXITED(status)).then(|| libc::WEXITSTATUS(status));
    Measured {
        seconds,
        // ru_maxrss is in kilobytes on Linux.
        peak_mb: usage.ru_maxrss as f64 / 1024.0,
        code,
    }
}

/// Sampled inputs per function for the `check`-based tests: `PINV_CHECK_CASES`, default 1000.
/// A test whose functions are slow takes the smaller of this and its own cap.
pub fn check_cases() -> usize {
    std::env::var("PINV_CHECK_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

/// The directory holding the corpus.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The `.pinv` files directly in `dir`, sorted by name.
pub fn pinv_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "pinv"))
        .collect();
    files.sort();
    files
}

/// Reads a corpus file (relative to the corpus directory).
pub fn corpus_source(name: &str) -> SourceFile {
    let path = corpus_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    SourceFile::new(name, text)
}

/// Reads and compiles a corpus file, panicking with the rendered error if it does not compile.
pub fn compile_corpus(name: &str) -> (SourceFile, Compiled) {
    let file = corpus_source(name);
    match pinv_core::compile_source(&file) {
        Ok(compiled) => (file, compiled),
        Err(pinv_core::Error::Compile(e)) => {
            panic!("{}", pinv_core::diagnostic::render(&file, &e))
        }
        Err(e) => panic!("{name}: {e}"),
    }
}

/// The expectation a `bad/` file states in its first line: `// error: LINE: fragment`, where
/// LINE is a 1-based line number or `eof`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedError {
    /// `None` for `eof`.
    pub line: Option<usize>,
    pub fragment: String,
}

/// Parses the `// error: LINE: fragment` header of a bad program.
pub fn expected_error(text: &str) -> Option<ExpectedError> {
    let header = text.lines().next()?.strip_prefix("// error:")?.trim();
    let (line, fragment) = header.split_once(':')?;
    let line = match line.trim() {
        "eof" => None,
        n => Some(n.parse().ok()?),
    };
    Some(ExpectedError {
        line,
        fragment: fragment.trim().to_string(),
    })
}

/// f(x) for an x, then the inverse at f(x) with the PGF's θ, in both engines: the same tape and
/// the same bits of x back, and x back within the completeness tolerance.
pub fn round_trip(program: &pinv::Program, name: &str, x0: &[pinv::Const]) {
    let y = program
        .run(name, x0)
        .unwrap_or_else(|e| panic!("{name}{x0:?}: {e}"));
    let mut seen: Option<(Vec<pinv::Const>, Vec<pinv::Const>)> = None;
    for engine in [pinv_core::jit::Engine::Interp, pinv_core::jit::Engine::Jit] {
        let inverse = program
            .clone()
            .with_engine(engine)
            .invert(name)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let theta = inverse
            .pgf(x0)
            .unwrap_or_else(|e| panic!("{name}{x0:?} {engine:?}: {e}"));
        let x = inverse
            .call_with_tape(&y, &theta)
            .unwrap_or_else(|e| panic!("{name}{x0:?} {engine:?}: {e}"));
        for (a, b) in x.iter().zip(x0) {
            assert!(
                pinv::check::close(*a, *b, 1e-6),
                "{name}{x0:?} {engine:?}: gave {x:?}"
            );
        }
        let bits = |v: &[pinv::Const]| v.iter().map(|c| c.bits()).collect::<Vec<_>>();
        match &seen {
            None => seen = Some((theta, x)),
            Some((t, x1)) => {
                assert_eq!(
                    bits(t),
                    bits(&theta),
                    "{name}{x0:?}: the engines' tapes differ"
                );
                assert_eq!(bits(x1), bits(&x), "{name}{x0:?}: the engines' x differ");
            }
        }
    }
}
