//! Every crash, hang and wrong answer found so far (issue 17, and the fuzzer's finds), replayed
//! through the binary: each must end with a clean exit (0, 1 or 2), never a panic (101) or a
//! signal, and say what a user needs to know.
//!
//! The fuzzer (`cargo run --release -p pinv-tests --example fuzz_cli`) saves what it finds
//! under `cli/tests/reproducers/`; every file there is replayed by `saved_reproducers`
//! (`shared-operand-chain-*`: splitmix with a step repeated hundreds of times, whose isolation
//! walked its DAG of shared operands as a tree, exponentially; `self-calls-*`: a recursive
//! function calling itself hundreds of times, which isolation's numeric checks ran to the step
//! limit at every point; `long-sum-in-a-check-worker`: a sum of 3,000 terms whose plan copy
//! recursed once per term, past the stack of `check`'s worker threads; `self-calls-per-level-*`:
//! a recursive function with a frame too large for the thread's stack, which ran in the
//! interpreter for seconds per case past `check`'s time limit; `shared-sums-*`: sums sharing
//! operands, which the linear-system recognisers walked as a tree, exponentially;
//! `empty-loop-*`: a `while` whose counter never changes, which constant folding leaves as a
//! cycle of blocks that only jump: dead-code removal forwarded jumps round the cycle forever,
//! and the abstract runs of the bit-flow solver and of guard-clause removal counted steps only
//! for instructions other than jumps, so none of them stopped).

mod common;

use common::{pinv, pinv_within, text, workspace};
use std::path::PathBuf;
use std::process::Output;

fn temp_program(name: &str, text: &str) -> String {
    common::temp_file(name, text).to_string_lossy().into_owned()
}

/// Exits 0, 1 or 2 (not a panic, not a signal).
fn clean(o: &Output) {
    assert!(
        matches!(o.status.code(), Some(0..=2)),
        "{:?}: {}",
        o.status,
        text(o)
    );
}

fn chain(n: usize) -> String {
    let mut s = String::new();
    for i in 1..n {
        s.push_str(&format!(
            "fn f{i}(x: f64) -> f64 {{ f{}(x) + 1.0 }}\n",
            i + 1
        ));
    }
    s.push_str(&format!("fn f{n}(x: f64) -> f64 {{ x }}\n"));
    s
}

#[test]
fn infinite_y_gives_no_wrong_x() {
    for (file, func, y) in [
        ("tests/corpus/fanout.pinv", "quad", "inf"),
        ("tests/corpus/straight.pinv", "mul_add", "inf"),
        ("tests/corpus/straight.pinv", "mul_add", "-inf"),
        ("tests/corpus/straight.pinv", "mul_add", "nan"),
    ] {
        let o = pinv(&["sample", file, func, "--y", y, "--samples", "3", "--json"]);
        clean(&o);
        let value: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        for sample in value["samples"].as_array().expect("samples") {
            // Finite values are JSON numbers, others the strings "inf", "-inf", "nan".
            let x: Vec<String> = sample["x"]
                .as_array()
                .expect("x")
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect();
            let mut args = vec!["run", file, func];
            args.extend(x.iter().map(String::as_str));
            let run = pinv(&args);
            assert_eq!(run.status.code(), Some(0), "{}", text(&run));
            let out = String::from_utf8_lossy(&run.stdout).trim().to_string();
            assert!(
                out == y || (y == "nan" && out.starts_with("nan")),
                "{file} {func}: y = {y}, x = {x:?} gives {out}"
            );
        }
    }
}

#[test]
fn a_long_function_name_does_not_break_the_table() {
    let name = "a".repeat(65_536);
    let file = temp_program(
        "long_name.pinv",
        &format!("fn {name}(x: f64) -> f64 {{ x }}"),
    );
    let o = pinv(&["check", &file, "--cases", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn deep_call_chains_invert_or_fail_cleanly() {
    let file = temp_program("chain.pinv", &chain(3000));
    let o = pinv(&["invert", &file, "f1", "--y", "3000", "--samples", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = pinv(&["show", &file, "f1", "--inverse"]);
    clean(&o);
    // 10⁴ levels: the range analysis followed the calls one nested level each and overflowed
    // the stack. Running f1 itself passes the call depth limit, so the final check reports it.
    let file = temp_program("chain10k.pinv", &chain(10_000));
    let o = pinv(&["invert", &file, "f1", "--y", "10000", "--samples", "1"]);
    clean(&o);
    assert!(
        o.status.code() == Some(0) || text(&o).contains("limit"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_ring_of_mutually_recursive_functions_is_a_clean_error() {
    let n = 2000;
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "fn f{i}(x: f64) -> f64 {{ f{}(x) + 1.0 }}\n",
            (i + 1) % n
        ));
    }
    let file = temp_program("ring.pinv", &s);
    for args in [
        vec!["invert", &file, "f1", "--y", "1", "--samples", "1"],
        vec!["pgf", &file, "f1", "1"],
    ] {
        let o = pinv(&args);
        clean(&o);
        assert!(text(&o).contains("recursive"), "{}", text(&o));
    }
}

#[test]
fn flat_sums_are_not_nesting() {
    let sum = |n: usize| format!("fn s(x: f64) -> f64 {{ x{} }}", " + 1.0".repeat(n));
    let file = temp_program("sum300.pinv", &sum(300));
    let o = pinv(&["run", &file, "s", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "301.0\n");
    let file = temp_program("sum10k.pinv", &sum(10_000));
    let o = pinv(&["run", &file, "s", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("expression too long"), "{}", text(&o));
    assert!(!text(&o).contains("nested"), "{}", text(&o));
}

#[test]
fn a_function_too_large_to_invert_is_refused_before_any_work() {
    let mut program = String::from("fn s(x: f64) -> f64 {\n    let mut a = x;\n");
    for _ in 0..20_000 {
        program.push_str("    a = a * 1.0001 + 0.5;\n");
    }
    program.push_str("    a\n}\n");
    let file = temp_program("long.pinv", &program);
    let o = pinv(&["run", &file, "s", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // 40,000 instructions: under the default limit, over a lower one.
    let limit = ["--max-instructions", "30000"];
    for args in [
        vec!["invert", &file, "s", "--y", "1", "--samples", "1"],
        vec!["pgf", &file, "s", "1"],
    ] {
        let o = pinv(&[&args[..], &limit[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("too large to invert"), "{}", text(&o));
        assert!(text(&o).contains("--max-instructions"), "{}", text(&o));
    }
    let o = pinv(&["check", &file, "--cases", "3", limit[0], limit[1]]);
    assert!(text(&o).contains("too large to invert"), "{}", text(&o));
}

#[test]
fn a_file_too_large_is_refused_at_once() {
    let line = "// a comment line that pads the file out to more than the front end takes\n";
    let mut program = line.repeat((9 << 20) / line.len());
    program.push_str("fn f(x: f64) -> f64 { x }\n");
    let file = temp_program("huge.pinv", &program);
    let o = pinv(&["show", &file]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the file is too large"), "{}", text(&o));
}

#[test]
fn a_function_that_never_ends_is_reported_not_hung() {
    let file = temp_program(
        "forever.pinv",
        "fn f(x: i64) -> i64 { let mut i = x; while i >= 0 { i = i + 0; } i }\n\
         fn g(x: f64) -> f64 { let mut i = 0; while i >= 0 { i = i + 0; } x }",
    );
    let o = pinv(&["check", &file, "--cases", "3", "--step-limit", "10000"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("failed: limit"), "{}", text(&o));
}

/// A run of compiled code stops at the time limit, not only at its step limit (fuzz seed 26,
/// mutant 41,662: a function whose statements each call it again ran `check --time-limit 10`
/// for 26 s). Here each call makes eight calls, and the step limit is far away (10¹², about
/// an hour): before, `check` ran until its first case reached it; now it says `timeout`.
#[test]
fn a_run_that_outlasts_the_time_limit_stops_at_it() {
    let mut src = String::from("fn spread(x: f64, n: i64) -> f64 {\n");
    for _ in 0..8 {
        src.push_str("    if n <= 0 { x } else { spread(x * 0.5, n - 1) }\n");
    }
    src.push_str("    x\n}\n");
    let file = temp_program("spread.pinv", &src);
    let args = [
        "check",
        &file,
        "--cases",
        "5",
        "--time-limit",
        "1",
        "--step-limit",
        "1000000000000",
    ];
    let code = pinv_within(&args, std::time::Duration::from_secs(120));
    assert_eq!(code, Some(1), "{args:?}");
    let o = pinv(&args);
    assert!(text(&o).contains("timeout"), "{}", text(&o));
}

#[test]
fn check_with_nothing_to_check_is_no_data() {
    let empty = temp_program("empty.pinv", "");
    let o = pinv(&["check", &empty]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no data"), "{}", text(&o));
    let o = pinv(&["check", &empty, "--allow-empty"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = pinv(&["check", "tests/corpus/straight.pinv", "--cases", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no data"), "{}", text(&o));
}

#[test]
fn limits_and_tolerances_are_validated() {
    for args in [
        vec![
            "run",
            "tests/corpus/straight.pinv",
            "mul_add",
            "1",
            "2",
            "3",
            "--step-limit",
            "0",
        ],
        vec![
            "check",
            "tests/corpus/straight.pinv",
            "--soundness-tolerance",
            "nan",
        ],
        vec![
            "check",
            "tests/corpus/straight.pinv",
            "--completeness-tolerance",
            "-1",
        ],
        vec!["check", "tests/corpus/straight.pinv", "--step-limit", "0"],
        vec!["check", "tests/corpus/straight.pinv", "--time-limit", "0"],
    ] {
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

#[test]
fn a_trap_in_the_final_check_rejects_theta() {
    let file = temp_program(
        "trap.pinv",
        "fn b(p: f64, q: f64) -> f64 { let v = 7 / (q as i64); p }",
    );
    let o = pinv(&["sample", &file, "b", "--y", "1", "--samples", "20"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_wrong_declared_inverse_is_named() {
    let file = temp_program(
        "wrong_inverse.pinv",
        "fn square(x: f64) -> f64 { x * x }
inverse square(y: f64, theta s: bool) -> f64 {
    if s { sqrt(y) } else { sqrt(y) + 1.0 }
}
pgf square(x: f64) -> bool { x >= 0.0 }
fn area(r: f64) -> f64 { 3.0 * square(r) }
",
    );
    let o = pinv(&["invert", &file, "area", "--y", "12", "--theta", "false"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the declared `inverse square` returned inputs"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("loses precision"), "{}", text(&o));
    let o = pinv(&["invert", &file, "area", "--y", "12", "--theta", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `fn long`, 3,000 statements long: its inverse takes longer than 0.05 s to build.
fn long_statement_chain() -> String {
    let mut src = String::from("fn long(x: f64) -> f64 {\n    let mut a = x;\n");
    for _ in 0..3000 {
        src.push_str("    a = a * 1.0001 + 0.5;\n");
    }
    src.push_str("    a\n}\n");
    src
}

/// `check --time-limit` bounds building the inverse too: a function whose inversion takes
/// longer is a `timeout` that says so, and the rest of the file is checked.
#[test]
fn building_an_inverse_counts_against_the_time_limit() {
    let src = long_statement_chain() + "fn short(x: f64) -> f64 { x + 1.0 }\n";
    let file = temp_program("long-build.pinv", &src);
    let o = pinv(&["check", &file, "--cases", "5", "--time-limit", "0.05"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("building the inverse of `long` took longer than the time limit of 0.05 s"),
        "{out}"
    );
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {out}"))
            .to_string()
    };
    assert!(row("long").ends_with("timeout"), "{out}");
    assert!(row("short").ends_with("ok"), "{out}");
}

/// `invert`, `sample`, `plot` and `pgf` take `--step-limit` and `--time-limit`: building past
/// the time limit is an error that says so, and drawing stops there with what it found.
#[test]
fn every_command_that_inverts_takes_the_limits() {
    let file = temp_program("long-build-each.pinv", &long_statement_chain());
    for args in [
        vec!["invert", &file, "long", "--y", "1"],
        vec!["sample", &file, "long", "--y", "1"],
        vec!["pgf", &file, "long", "1"],
    ] {
        let mut args = args.clone();
        args.extend(["--time-limit", "0.05"]);
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("took longer than the time limit of 0.05 s"),
            "{args:?}: {}",
            text(&o)
        );
    }
    // Each draw of `steps_to` at y = 2·10⁶ runs its loop two million times: a hundred
    // thousand of them do not fit in half a second.
    let slow = "tests/corpus/recursion.pinv";
    let many = ["--samples", "100000", "--time-limit", "0.5"];
    let o = pinv(&[&["sample", slow, "steps_to", "--y", "2000000"][..], &many].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("stopped at the time limit"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("before the time limit; raise --time-limit"),
        "{}",
        text(&o)
    );
    let o = pinv(&[&["invert", slow, "steps_to", "--y", "2000000"][..], &many].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("the time limit came after"),
        "{}",
        text(&o)
    );
    let out = common::temp_file("slow-plot.svg", "");
    let out = out.to_string_lossy();
    let o = pinv(
        &[
            &["plot", slow, "steps_to", "--y", "2000000", "--out", &out][..],
            &many,
        ]
        .concat(),
    );
    assert!(text(&o).contains("the time limit came"), "{}", text(&o));
    // A step limit that every run hits: each θ is skipped and counted.
    let o = pinv(&[
        "sample",
        slow,
        "steps_to",
        "--y",
        "2000000",
        "--samples",
        "3",
        "--step-limit",
        "1000",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("stopped at a step or depth limit"),
        "{}",
        text(&o)
    );
}

/// The fuzzer's saved finds.
#[test]
fn saved_reproducers() {
    let dir = workspace().join("cli/tests/reproducers");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pinv"))
        .collect();
    files.sort();
    for file in files {
        let path = file.to_string_lossy().into_owned();
        for args in [
            vec!["show", &path],
            vec!["check", &path, "--cases", "5", "--time-limit", "20"],
        ] {
            let code = pinv_within(&args, std::time::Duration::from_secs(120));
            assert!(matches!(code, Some(0..=2)), "{args:?}: {code:?}");
        }
    }
}
