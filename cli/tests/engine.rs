//! `--engine jit|interp`: every command that runs code prints the same with either engine, and
//! `pinv bench` reports its columns.

mod common;

use common::pinv;
use std::process::Output;

/// Runs `args` with each engine and asserts the same exit status, stdout and stderr.
fn same_with_both_engines(args: &[&str]) -> Output {
    let mut runs = ["jit", "interp"].map(|engine| {
        let mut a = args.to_vec();
        a.extend(["--engine", engine]);
        pinv(&a)
    });
    let [jit, interp] = &mut runs;
    assert_eq!(jit.status.code(), interp.status.code(), "{args:?}");
    assert_eq!(
        String::from_utf8_lossy(&jit.stdout),
        String::from_utf8_lossy(&interp.stdout),
        "{args:?}"
    );
    assert_eq!(
        String::from_utf8_lossy(&jit.stderr),
        String::from_utf8_lossy(&interp.stderr),
        "{args:?}"
    );
    std::mem::replace(jit, interp.clone())
}

#[test]
fn run_is_the_same_with_both_engines() {
    let o = same_with_both_engines(&[
        "run",
        "tests/corpus/straight.pinv",
        "mul_add",
        "2",
        "3",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0));
    same_with_both_engines(&["run", "tests/corpus/loops.pinv", "arm3", "0.5", "-1", "nan"]);
    same_with_both_engines(&["run", "tests/corpus/ints.pinv", "halve", "--json", "-9"]);
    // A runtime error, and a loop stopped by the step limit.
    same_with_both_engines(&["run", "tests/corpus/ints.pinv", "mod17", "5"]);
    let o = same_with_both_engines(&[
        "run",
        "tests/corpus/loops.pinv",
        "while2",
        "1.0",
        "1000000000",
        "--step-limit",
        "5000",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn invert_pgf_and_check_are_the_same_with_both_engines() {
    same_with_both_engines(&[
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "10",
        "--samples",
        "20",
    ]);
    same_with_both_engines(&[
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "10",
        "--theta",
        "4,3",
        "--json",
    ]);
    same_with_both_engines(&["pgf", "tests/corpus/unary.pinv", "square", "--", "-3"]);
    same_with_both_engines(&["pgf", "tests/corpus/loops.pinv", "triangle", "7"]);
    same_with_both_engines(&[
        "check",
        "tests/corpus/straight.pinv",
        "--cases",
        "50",
        "--json",
    ]);
}

#[test]
fn an_unknown_engine_is_bad_input() {
    let o = pinv(&[
        "run",
        "tests/corpus/straight.pinv",
        "mul_add",
        "1",
        "2",
        "3",
        "--engine",
        "gpu",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("jit"));
}

#[test]
fn bench_reports_every_column() {
    let o = pinv(&[
        "bench",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--budget-ms",
        "20",
        "--cases",
        "8",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("bench --json prints JSON");
    for field in [
        "forward_interp",
        "forward_native",
        "inverse_interp",
        "inverse_native",
        "hand_written",
    ] {
        assert!(
            report[field].as_f64().is_some_and(|ns| ns > 0.0),
            "{field}: {report}"
        );
    }
    assert!(report["compile_inverse"].is_object(), "{report}");
    let o = pinv(&[
        "bench",
        "tests/corpus/straight.pinv",
        "nested",
        "--budget-ms",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("inverse, native") && text.contains("no hand-written"),
        "{text}"
    );
}

#[test]
fn sample_and_plot_are_the_same_with_both_engines() {
    same_with_both_engines(&[
        "sample",
        "tests/corpus/fanout.pinv",
        "quad",
        "--y",
        "10",
        "--samples",
        "20",
        "--json",
    ]);
    let dir = std::env::temp_dir().join(format!("pinv-engine-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("quad.svg");
    let out = out.to_str().expect("utf-8 path");
    same_with_both_engines(&[
        "plot",
        "tests/corpus/fanout.pinv",
        "quad",
        "--y",
        "10",
        "--samples",
        "20",
        "--out",
        out,
    ]);
}
