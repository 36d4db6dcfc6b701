//! How time and memory grow with the program: runs the release binary on generated programs
//! of growing size and prints wall time, peak memory (the child's maximum resident set) and
//! the growth exponent between sizes (1: linear, 2: quadratic).
//!
//! ```text
//! cargo build --release -p pinv-cli
//! cargo run --release -p pinv-tests --example scaling -- [--max N] [--only WORDS] [--bin PATH]
//! ```
//!
//! `--only chain,branches` runs only the workloads whose label contains one of the words.
//! `--phases` also prints, for each `invert` workload, where the time went
//! (`pinv::Inverse::phases`: prepare, isolation, walk, simplify, finish, verify, schema),
//! measured in a child process (this one's memory would count in the next child's peak: Linux
//! gives a child the peak of the process it was forked from).
//!
//! Workloads: `check --cases 10` of a file of N small functions (the memory of checking many
//! functions), `check --cases 10` of a chain of N statements (building, compiling and running
//! the inverse and the PGF), and `invert` of one function of N statements: a chain
//! (`a = a * 1.0001 + 0.5`), N branches (`if a > 0.0 { a * 0.5 } else { a + 1.0 }`) and a
//! loop whose body has N statements. Sizes go 10, 100, 1,000, … up to `--max` (default
//! 10,000).

use std::path::Path;

/// A label, the program of size N, and the command run on it.
type Workload = (&'static str, fn(usize) -> String, &'static [&'static str]);

/// `invert`, with the size limit raised past the default (250,000 instructions) so that the
/// largest programs (10⁵ branches: 900,000) are built too.
const INVERT: &[&str] = &[
    "invert",
    "--y",
    "1",
    "--samples",
    "1",
    "--max-instructions",
    "1000000",
];

const USAGE: &str = "
usage: scaling [--max N] [--only WORDS] [--bin PATH] [--phases]

Runs the release binary on generated programs of 10, 100, ... statements up to N (default
10000) and prints wall time, peak memory and the growth exponents between sizes.
--only chain,branches runs only the workloads whose label holds one of the words; --bin PATH
is the binary (default target/release/pinv). --phases also prints, for each invert workload,
the time of each phase of building the inverse (measured in a child process).
";

fn main() {
    let args = pinv_tests::ExampleArgs::from_env(USAGE);
    if let Some(file) = args.value("--phases-of") {
        println!("{}", phases_of(&file));
        return;
    }
    let max: usize = args.parsed("--max", 10_000);
    let bin = args.binary();
    let dir = std::env::temp_dir().join(format!("pinv-scaling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a work directory");
    let sizes: Vec<usize> = (1..)
        .map(|k| 10usize.pow(k))
        .take_while(|&n| n <= max)
        .collect();
    let workloads: [Workload; 5] = [
        ("functions, check", functions, &["check", "--cases", "10"]),
        ("chain, invert", chain, INVERT),
        // `check` also compiles and runs the PGF, which computes the whole chain forward before
        // it walks back: every forward value stays live across the walk.
        (
            "chain, check",
            chain,
            &[
                "check",
                "--cases",
                "10",
                "--search",
                "0",
                "--max-instructions",
                "1000000",
            ],
        ),
        ("branches, invert", branches, INVERT),
        ("loop body, invert", loop_body, INVERT),
    ];
    println!(
        "{:<18} {:>8} {:>10} {:>12} {:>10} {:>10}",
        "workload", "N", "seconds", "peak MB", "time exp", "mem exp"
    );
    let only = args.value("--only");
    let phases = args.flag("--phases");
    let wanted = |label: &str| {
        only.as_deref()
            .is_none_or(|words| words.split(',').any(|w| label.contains(w)))
    };
    for (label, make, cmd) in workloads.into_iter().filter(|w| wanted(w.0)) {
        let mut last: Option<(usize, f64, f64)> = None;
        for &n in &sizes {
            let file = dir.join(format!(
                "{}-{n}.pinv",
                label.split(',').next().unwrap_or("w")
            ));
            std::fs::write(&file, make(n)).expect("write the program");
            let (secs, mb, code) = measure(&bin, &file, cmd);
            let exps = match last {
                Some((n0, s0, m0)) => {
                    let r = (n as f64 / n0 as f64).ln();
                    (
                        format!("{:.2}", (secs / s0).ln() / r),
                        format!("{:.2}", (mb / m0).ln() / r),
                    )
                }
                None => ("-".to_string(), "-".to_string()),
            };
            println!(
                "{label:<18} {n:>8} {secs:>10.3} {mb:>12.1} {:>10} {:>10}{}",
                exps.0,
                exps.1,
                if code == Some(0) || code == Some(1) {
                    String::new()
                } else {
                    format!("  (exit {code:?})")
                }
            );
            last = Some((n, secs, mb));
            if phases && cmd[0] == "invert" {
                println!("{:<18} {n:>8}   {}", "", phases_in_child(&file));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`phases_of`] `file`, run in a child process (this example, with `--phases-of FILE`).
fn phases_in_child(file: &Path) -> String {
    let run = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg("--phases-of")
            .arg(file)
            .output()
    });
    match run {
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Err(e) => format!("could not run: {e}"),
    }
}

/// Where the time of inverting `f` in `file` goes, phase by phase, or why it fails.
fn phases_of(file: &str) -> String {
    let source = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => return format!("{file}: {e}"),
    };
    let options = pinv::reorient::ReorientOptions {
        max_instructions: 1_000_000,
        // As `pinv invert` builds it: without the PGF.
        lazy_pgf: true,
        ..Default::default()
    };
    let inverted = pinv::Program::parse(file, &source).and_then(|program| {
        let stack = program.stack();
        program.invert_with("f", &stack, &options)
    });
    match inverted {
        Ok(inverse) => inverse.phases().to_string(),
        Err(e) => format!("does not invert: {e}"),
    }
}

/// Runs `bin cmd[0] file cmd[1..]` (with the function name for `invert`); returns wall
/// seconds, the child's peak resident memory in MB, and its exit code.
fn measure(bin: &Path, file: &Path, cmd: &[&str]) -> (f64, f64, Option<i32>) {
    let mut args: Vec<String> = vec![cmd[0].to_string(), file.to_string_lossy().into_owned()];
    if cmd[0] == "invert" {
        args.push("f".to_string());
    }
    args.extend(cmd[1..].iter().map(|s| s.to_string()));
    let m = pinv_tests::measure(bin, &args, None);
    (m.seconds, m.peak_mb, m.code)
}

fn functions(n: usize) -> String {
    (0..n)
        .map(|i| format!("fn g{i}(x: f64, y: f64) -> f64 {{ x * {}.5 + y }}\n", i + 1))
        .collect()
}

fn chain(n: usize) -> String {
    let mut s = String::from("fn f(x: f64) -> f64 {\n    let mut a = x;\n");
    for _ in 0..n {
        s.push_str("    a = a * 1.0001 + 0.5;\n");
    }
    s.push_str("    a\n}\n");
    s
}

fn branches(n: usize) -> String {
    let mut s = String::from("fn f(x: f64) -> f64 {\n    let mut a = x;\n");
    for _ in 0..n {
        s.push_str("    a = if a > 0.0 { a * 0.5 } else { a + 1.0 };\n");
    }
    s.push_str("    a\n}\n");
    s
}

fn loop_body(n: usize) -> String {
    let mut s = String::from("fn f(x: f64) -> f64 {\n    let mut a = x;\n    for i in 0..3 {\n");
    for _ in 0..n {
        s.push_str("        a = a * 1.0001 + 0.5;\n");
    }
    s.push_str("    }\n    a\n}\n");
    s
}
