//! File-based expected output of isolation: for each fan-out function, what isolation did, the
//! rewritten forward function, the θ schema, and the generated inverse and PGF — kept in
//! `tests/snapshots/isolation/`.
//!
//! To re-bless after an intended change, run
//! `UPDATE_EXPECT=1 cargo test -p pinv-tests --test isolation_snapshots` and review the diff.

use expect_test::expect_file;
use pinv::egraph::{isolate_function, IsolationConfig};
use pinv::Program;
use pinv_tests::corpus_source;

fn snapshot(program: &Program, name: &str) -> String {
    let inverse = program.invert(name).expect("invertible");
    let (id, _) = program.function(name).expect("exists");
    let isolated = isolate_function(program.module(), id, &IsolationConfig::default());
    let mut out = String::new();
    out.push_str("; what isolation did\n");
    for report in inverse.isolation() {
        for line in report.summary().lines() {
            out.push_str(&format!("; {line}\n"));
        }
    }
    out.push_str("\n; the rewritten forward function (the reorientation inverts this)\n");
    out.push_str(
        &isolated
            .rewritten_ir(program.module())
            .unwrap_or_else(|| "; (not rewritten)\n".to_string()),
    );
    out.push_str("\n; θ schema\n");
    for line in inverse.schema().to_string().lines() {
        out.push_str(&format!("; {line}\n"));
    }
    out.push_str("\n; the inverse\n");
    out.push_str(&inverse.inverse_ir());
    out.push_str("\n; the PGF\n");
    out.push_str(&inverse.pgf_ir());
    out
}

fn fanout() -> Program {
    let file = corpus_source("fanout.pinv");
    Program::from_source(file).expect("compiles")
}

#[test]
fn twice() {
    expect_file!["../snapshots/isolation/twice.txt"].assert_eq(&snapshot(&fanout(), "twice"));
}

#[test]
fn fdupl() {
    expect_file!["../snapshots/isolation/fdupl.txt"].assert_eq(&snapshot(&fanout(), "fdupl"));
}

#[test]
fn xy_plus_x() {
    expect_file!["../snapshots/isolation/xy_plus_x.txt"]
        .assert_eq(&snapshot(&fanout(), "xy_plus_x"));
}

#[test]
fn quad() {
    expect_file!["../snapshots/isolation/quad.txt"].assert_eq(&snapshot(&fanout(), "quad"));
}

#[test]
fn reuse() {
    expect_file!["../snapshots/isolation/reuse.txt"].assert_eq(&snapshot(&fanout(), "reuse"));
}

#[test]
fn numeric_root() {
    let program = Program::parse(
        "cubic.pinv",
        "fn cubic(x: f64) -> f64 { x * x * x - x + 1.0 }",
    )
    .expect("compiles");
    expect_file!["../snapshots/isolation/cubic.txt"].assert_eq(&snapshot(&program, "cubic"));
}
