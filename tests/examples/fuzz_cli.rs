//! A mutation fuzzer for the whole pipeline, through the `pinv` binary: corpus programs (and
//! generated ones) are mutated, and each mutant goes through `pinv show` and
//! `pinv check --cases 5`. A run must end with exit 0, 1 or 2: a panic (101), a signal (a stack
//! overflow aborts) or a run past the wall-clock limit is a find, saved under `--out`.
//!
//! ```text
//! cargo build --release -p pinv-cli
//! cargo run --release -p pinv-tests --example fuzz_cli -- --runs 100000 --seed 1
//! ```
//!
//! Options: `--runs N` mutants (default 1000), `--seconds S` to stop after (printing the
//! counts every 1,000 mutants), `--seed S`, `--timeout SECS` per command
//! (default 20), `--bin PATH` (default `target/release/pinv`), `--out DIR` (default
//! `cli/tests/reproducers`, which `cli/tests/reproducers.rs` replays), `--jobs N` threads
//! (default: the cores). It prints the counts when done.
//!
//! Why not `cargo fuzz`: it needs a nightly toolchain (sanitizer flags), and this project
//! builds on stable Rust; a crash here is a process that dies, which a subprocess sees on
//! stable without instrumentation.

use pinv_tests::gen::{self, Rng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Pieces a mutation may insert: tokens of the language, and some that stress it.
const TOKENS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "return",
    "inverse",
    "pgf",
    "theta",
    "(",
    ")",
    "{",
    "}",
    ",",
    ";",
    ":",
    "->",
    "..",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "!",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "as",
    "f64",
    "i64",
    "bool",
    "true",
    "false",
    "x",
    "y",
    "n",
    "0",
    "1",
    "-1",
    "2.5",
    "1e308",
    "-9223372036854775808",
    "0x7fffffffffffffff",
    "nan",
    "inf",
    "sin(",
    "exp(",
    "log(",
    "sqrt(",
    "min(",
    "max(",
    "pow(",
    "atan2(",
    "fail(\"no\")",
    "//",
    "/*",
    "*/",
    "\"",
];

#[derive(Default)]
struct Counts {
    mutants: AtomicU64,
    runs: AtomicU64,
    exits: [AtomicU64; 3],
    panics: AtomicU64,
    signals: AtomicU64,
    hangs: AtomicU64,
}

const USAGE: &str = "
usage: fuzz_cli [--runs N] [--seconds S] [--seed S] [--timeout SECS] [--bin PATH] [--out DIR]
                [--jobs N]

Mutates corpus and generated programs and runs each through `pinv show` and
`pinv check --cases 5`; a panic, a signal or a run past --timeout (default 20 s) is a find,
saved under --out (default cli/tests/reproducers). Prints the counts.
";

fn main() {
    let args = pinv_tests::ExampleArgs::from_env(USAGE);
    let runs: u64 = args.parsed("--runs", 1000);
    let budget = args
        .value("--seconds")
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs_f64);
    let seed: u64 = args.parsed("--seed", 1);
    let timeout = Duration::from_secs_f64(args.parsed("--timeout", 20.0));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = args.binary();
    let out = args
        .value("--out")
        .map_or_else(|| root.join("cli/tests/reproducers"), PathBuf::from);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let jobs: u64 = args.parsed("--jobs", cores);
    let seeds = seeds(&root.join("tests/corpus"));
    let work = std::env::temp_dir().join(format!("pinv-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let counts = Arc::new(Counts::default());
    let finds = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    std::thread::scope(|s| {
        for job in 0..jobs {
            let (counts, finds, seeds) = (counts.clone(), finds.clone(), &seeds);
            let (bin, work, out) = (&bin, &work, &out);
            s.spawn(move || {
                let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(job));
                let mut k = job;
                while k < runs && budget.is_none_or(|b| started.elapsed() < b) {
                    let base = if rng.chance(0.3) {
                        gen::program(rng.next_u64() % 1_000_000)
                    } else {
                        rng.pick(seeds).clone()
                    };
                    let text = mutate(&base, &mut rng);
                    let file = work.join(format!("m{k}.pinv"));
                    std::fs::write(&file, &text).expect("write a mutant");
                    let path = file.to_string_lossy().into_owned();
                    for cmd in [
                        vec!["show", path.as_str()],
                        vec!["check", path.as_str(), "--cases", "5", "--time-limit", "10"],
                    ] {
                        let verdict = run(bin, &cmd, timeout, &counts);
                        if let Some(what) = verdict {
                            let name = format!("fuzz-{seed}-{k}-{}.pinv", cmd[0]);
                            let _ = std::fs::create_dir_all(out);
                            let _ = std::fs::write(out.join(&name), &text);
                            finds
                                .lock()
                                .expect("not poisoned")
                                .push(format!("{what}: {name} ({})", cmd.join(" ")));
                        }
                    }
                    let _ = std::fs::remove_file(&file);
                    let done = counts.mutants.fetch_add(1, Ordering::Relaxed) + 1;
                    if done % 1000 == 0 {
                        println!("{}", summary(&counts, started, timeout));
                    }
                    k += jobs;
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&work);
    let c = &counts;
    for find in finds.lock().expect("not poisoned").iter() {
        println!("{find}");
    }
    println!("{}", summary(c, started, timeout));
}

fn summary(c: &Counts, started: Instant, timeout: Duration) -> String {
    format!(
        "{} mutants, {} commands in {:.0} s: exit 0/1/2 {}/{}/{}, {} panics, {} signals, {} hangs (over {:.0} s)",
        c.mutants.load(Ordering::Relaxed),
        c.runs.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        c.exits[0].load(Ordering::Relaxed),
        c.exits[1].load(Ordering::Relaxed),
        c.exits[2].load(Ordering::Relaxed),
        c.panics.load(Ordering::Relaxed),
        c.signals.load(Ordering::Relaxed),
        c.hangs.load(Ordering::Relaxed),
        timeout.as_secs_f64()
    )
}

/// The corpus programs (and `bad/`), as mutation seeds.
fn seeds(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for d in [dir.to_path_buf(), dir.join("bad")] {
        for file in pinv_tests::pinv_files(&d) {
            if let Ok(text) = std::fs::read_to_string(file) {
                out.push(text);
            }
        }
    }
    out
}

/// Runs one command; `Some(what)` when it ended badly.
fn run(bin: &Path, args: &[&str], timeout: Duration, counts: &Counts) -> Option<&'static str> {
    counts.runs.fetch_add(1, Ordering::Relaxed);
    let mut child = Command::new(bin)
        .args(args)
        .env("PINV_PROGRESS", "never")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match status.code() {
                    Some(c @ 0..=2) => {
                        counts.exits[c as usize].fetch_add(1, Ordering::Relaxed);
                        None
                    }
                    Some(101) => {
                        counts.panics.fetch_add(1, Ordering::Relaxed);
                        Some("panic")
                    }
                    _ => {
                        counts.signals.fetch_add(1, Ordering::Relaxed);
                        Some("signal or odd exit")
                    }
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                counts.hangs.fetch_add(1, Ordering::Relaxed);
                return Some("hang");
            }
        }
    }
}

/// One to four mutations of `text`.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.index(4) {
        let n = s.len().max(1);
        let at = rng.index(n).min(s.len());
        match rng.index(9) {
            // Delete a span.
            0 => {
                let end = (at + 1 + rng.index(20)).min(s.len());
                s.drain(at..end);
            }
            // Duplicate a span.
            1 => {
                let end = (at + 1 + rng.index(40)).min(s.len());
                let piece: Vec<char> = s[at..end].to_vec();
                s.splice(at..at, piece);
            }
            // Insert a token.
            2 | 3 => {
                let t = format!(" {} ", rng.pick(TOKENS));
                s.splice(at..at, t.chars());
            }
            // Replace a digit run with an extreme number.
            4 => {
                let numbers = [
                    "0",
                    "-0.0",
                    "1e308",
                    "1e-308",
                    "9223372036854775807",
                    "4503599627370496",
                    "0.1",
                    "3",
                    "65535",
                ];
                if let Some(pos) = (at..s.len()).find(|&i| s[i].is_ascii_digit()) {
                    let end = (pos..s.len())
                        .find(|&i| !s[i].is_ascii_digit() && s[i] != '.')
                        .unwrap_or(s.len());
                    s.splice(pos..end, rng.pick(&numbers).chars());
                }
            }
            // Repeat a line many times.
            5 => {
                let start = s[..at]
                    .iter()
                    .rposition(|&c| c == '\n')
                    .map_or(0, |p| p + 1);
                let end = (at..s.len()).find(|&i| s[i] == '\n').unwrap_or(s.len());
                let line: Vec<char> = s[start..end].iter().copied().chain(['\n']).collect();
                let times = 1 + rng.index(2000);
                let repeated: Vec<char> = line
                    .iter()
                    .copied()
                    .cycle()
                    .take(line.len() * times)
                    .collect();
                s.splice(end..end, repeated);
            }
            // Wrap something in deep parentheses or a long chain.
            6 => {
                let depth = rng.index(5000);
                let open: String = "(".repeat(depth);
                let close: String = ")".repeat(depth);
                s.splice(at..at, open.chars());
                let pos = (at + depth + 1 + rng.index(10)).min(s.len());
                s.splice(pos..pos, close.chars());
            }
            7 => {
                let chain: String = " + 1.0".repeat(rng.index(6000));
                s.splice(at..at, chain.chars());
            }
            // A very long name.
            _ => {
                let name: String = "a".repeat(1 + rng.index(70_000));
                s.splice(at..at, name.chars());
            }
        }
    }
    s.into_iter().collect()
}
