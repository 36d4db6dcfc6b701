//! What threads buy: `sample` and `check` of one function on 1 thread and on every core, with
//! the whole-process speedup, a check that the outputs are identical, and the peak memory of
//! streaming samples as JSON Lines.
//!
//! ```text
//! cargo build --release -p pinv-cli
//! cargo run --release -p pinv-tests --example threads -- [--jobs N] [--samples N] [--cases N]
//! ```
//!
//! Defaults: every core, 10^6 samples of `mul_add` at y = 10 (text, JSON Lines), 200,000 cases
//! of `spread` (`tests/corpus/systems.pinv`), and 10^7 samples as JSON Lines for memory.

use std::path::Path;

const USAGE: &str = "
usage: threads [--jobs N] [--samples N] [--cases N] [--bin PATH]

Runs sample and check on 1 thread and on N (default: every core), prints the whole-process
speedups, checks that the outputs are identical, and measures the peak memory of streaming
samples as JSON Lines.
";

fn main() {
    let args = pinv_tests::ExampleArgs::from_env(USAGE);
    let bin = args.binary();
    let jobs: usize = args.parsed(
        "--jobs",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let samples: usize = args.parsed("--samples", 1_000_000);
    let cases: usize = args.parsed("--cases", 200_000);
    let corpus = pinv_tests::corpus_dir();
    let straight = corpus.join("straight.pinv");
    let systems = corpus.join("systems.pinv");
    let dir = std::env::temp_dir().join(format!("pinv-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a work directory");
    println!(
        "{:<34} {:>10} {:>10} {:>8} {:>10}",
        "command",
        "1 thread",
        format!("{jobs} threads"),
        "speedup",
        "identical"
    );
    let n = samples.to_string();
    let c = cases.to_string();
    // `sample mul_add --y 10 -n N`, with more options after.
    let sample = |n: &str, more: &[&str]| -> Vec<String> {
        let mut args = vec!["sample", path(&straight), "mul_add", "--y", "10", "-n", n];
        args.extend_from_slice(more);
        args.iter().map(|s| s.to_string()).collect()
    };
    let runs: [(&str, Vec<String>); 3] = [
        ("sample mul_add (text)", sample(&n, &[])),
        ("sample mul_add (jsonl)", sample(&n, &["--format", "jsonl"])),
        (
            "check spread --json",
            ["check", path(&systems), "spread", "--cases", &c, "--json"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        ),
    ];
    for (label, cmd) in runs {
        let run = |j: usize| {
            let out = dir.join(format!("out-{j}"));
            let mut args = cmd.clone();
            args.extend(["--jobs".to_string(), j.to_string()]);
            let file = std::fs::File::create(&out).expect("an output file");
            let m = pinv_tests::measure(&bin, &args, Some(file));
            (m, digest(&out))
        };
        let (one, a) = run(1);
        let (all, b) = run(jobs);
        println!(
            "{label:<34} {:>9.2}s {:>9.2}s {:>7.2}× {:>10}",
            one.seconds,
            all.seconds,
            one.seconds / all.seconds.max(1e-9),
            if a == b && one.code == all.code {
                "yes"
            } else {
                "NO"
            }
        );
    }
    let stream = sample("10000000", &["--format", "jsonl"]);
    let m = pinv_tests::measure(&bin, &stream, None);
    println!(
        "sample --samples 10^7 --format jsonl: {:.1} s, peak {:.1} MB",
        m.seconds, m.peak_mb
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hash of a file's bytes, read in pieces: this process stays small, so the peak memory of
/// the children it starts (which counts what a child shares with it before `exec`) is theirs.
fn digest(file: &Path) -> u64 {
    use std::hash::Hasher;
    use std::io::Read;
    let mut h = std::hash::DefaultHasher::new();
    if let Ok(mut f) = std::fs::File::open(file) {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            h.write(&buf[..n]);
        }
    }
    h.finish()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
