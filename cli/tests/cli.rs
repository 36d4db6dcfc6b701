//! The `pinv` binary, run as a user would: outputs, JSON, and exit codes (0 success, 1 runtime
//! failure, 2 bad input).

use std::path::PathBuf;
use std::process::{Command, Output};

fn pinv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinv"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("the pinv binary runs")
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes a program to a fresh temporary file and returns its path.
fn temp_program(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pinv-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp program");
    path
}

#[test]
fn run_prints_outputs() {
    let o = pinv(&[
        "run",
        "tests/corpus/straight.pinv",
        "mul_add",
        "2",
        "3",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "10.0\n");
}

#[test]
fn run_accepts_negative_and_special_values() {
    let o = pinv(&[
        "run",
        "tests/corpus/straight.pinv",
        "mul_add",
        "-1.5",
        "2",
        "-inf",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "-inf\n");
    let o = pinv(&["run", "tests/corpus/ints.pinv", "add5", "-2"]);
    assert_eq!(stdout(&o), "3\n");
    let o = pinv(&["run", "tests/corpus/unary.pinv", "square", "nan"]);
    assert_eq!(stdout(&o), "nan\n");
    let o = pinv(&[
        "run",
        "tests/corpus/ints.pinv",
        "sat",
        "true",
        "false",
        "false",
        "true",
        "false",
        "false",
    ]);
    assert_eq!(stdout(&o), "false\n");
}

#[test]
fn run_prints_tuples() {
    let o = pinv(&[
        "run",
        "tests/corpus/straight.pinv",
        "shifted_exp",
        "-1",
        "2",
    ]);
    assert_eq!(stdout(&o), "(0.0, 3.0)\n");
}

#[test]
fn run_json() {
    let o = pinv(&[
        "run",
        "tests/corpus/straight.pinv",
        "shifted_exp",
        "-1",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["function"], "shifted_exp");
    assert_eq!(v["outputs"], serde_json::json!([0.0, 3.0]));
    assert_eq!(v["types"], serde_json::json!(["f64", "f64"]));
    let o = pinv(&["run", "tests/corpus/straight.pinv", "ratio", "0", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["outputs"], serde_json::json!(["inf"]));
}

#[test]
fn wrong_arguments_exit_2() {
    let o = pinv(&["run", "tests/corpus/straight.pinv", "mul_add", "1", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("takes 3 input(s) (x: f64, y: f64, z: f64) but 2 were given"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&["run", "tests/corpus/ints.pinv", "add5", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`1.5` is not a valid i64"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&["run", "tests/corpus/ints.pinv", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no function `nope`"), "{}", stderr(&o));
    let o = pinv(&["run", "tests/corpus/does-not-exist.pinv", "f"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
    let o = pinv(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn runtime_errors_exit_1_with_location() {
    let path = temp_program("div.pinv", "fn d(a: i64, b: i64) -> i64 {\n    a / b\n}\n");
    let path = path.to_str().expect("utf-8 path");
    let o = pinv(&["run", path, "d", "1", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("division by zero"), "{err}");
    assert!(err.contains("div.pinv:2:5"), "{err}");
    let o = pinv(&["run", path, "d", "-9223372036854775808", "-1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = pinv(&["run", path, "d", "7", "0", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["error"]["kind"], "runtime");
    assert_eq!(v["error"]["line"], 2);
}

#[test]
fn step_limit_stops_endless_loops() {
    let path = temp_program(
        "spin.pinv",
        "fn spin(x: i64) -> i64 {\n    let mut i = 0;\n    while i >= 0 { i = i * 1; }\n    i\n}\n",
    );
    let o = pinv(&[
        "run",
        path.to_str().expect("utf-8"),
        "spin",
        "1",
        "--step-limit",
        "1000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("step limit"), "{}", stderr(&o));
}

#[test]
fn bad_programs_exit_2_with_their_error() {
    let dir = workspace().join("tests/corpus/bad");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("bad corpus") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "pinv") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&path).expect("readable");
        let header = text.lines().next().unwrap_or_default();
        let fragment = header.splitn(3, ':').nth(2).unwrap_or_default().trim();
        let o = pinv(&["run", path.to_str().expect("utf-8"), "f"]);
        assert_eq!(o.status.code(), Some(2), "{}", path.display());
        let err = stderr(&o);
        assert!(err.contains(fragment), "{}: {err}", path.display());
        assert!(err.contains('^'), "{err}");
        let o = pinv(&["show", path.to_str().expect("utf-8"), "--json"]);
        assert_eq!(o.status.code(), Some(2));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON error");
        assert_eq!(v["error"]["kind"], "compile");
    }
    assert!(seen >= 5);
}

#[test]
fn show_prints_ir_text_and_dot() {
    let o = pinv(&["show", "tests/corpus/straight.pinv", "mul_add"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("function %mul_add(x: f64, y: f64, z: f64) -> f64 {"),
        "{text}"
    );
    assert!(text.contains("fmul") && text.contains("fadd"), "{text}");
    let o = pinv(&["show", "tests/corpus/loops.pinv", "--format", "dot"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("digraph"), "{}", stdout(&o));
    let o = pinv(&["show", "tests/corpus/loops.pinv"]);
    for f in ["%while1", "%while2", "%triangle", "%arm3"] {
        assert!(stdout(&o).contains(f), "{f}");
    }
}

#[test]
fn show_json() {
    let o = pinv(&["show", "tests/corpus/unary.pinv", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let functions = v["functions"].as_array().expect("functions");
    let inverse = functions
        .iter()
        .find(|f| f["name"] == "inverse:softplus")
        .expect("the declared inverse is shown");
    assert_eq!(inverse["kind"]["kind"], "inverse");
    assert!(inverse["ir"].as_str().expect("ir").contains("fail"));
    let o = pinv(&[
        "show",
        "tests/corpus/loops.pinv",
        "triangle",
        "--json",
        "--format",
        "dot",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert!(v["functions"][0]["dot"]
        .as_str()
        .expect("dot")
        .contains("digraph"));
}

#[test]
fn help_has_examples() {
    let o = pinv(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Example"), "{}", stdout(&o));
}
