//! The `pinv` binary, run as a user would: outputs, JSON, and exit codes (0 success, 1 runtime
//! failure, 2 bad input).

mod common;

use common::{pinv, stderr, stdout, text, workspace};
use std::path::PathBuf;

/// Writes a program to a fresh temporary file and returns its path.
fn temp_program(name: &str, text: &str) -> PathBuf {
    common::temp_file(name, text)
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
    assert_eq!(stdout(&o), "NaN\n");
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

#[test]
fn invert_with_explicit_theta_is_deterministic() {
    let pgf = pinv(&[
        "pgf",
        "tests/corpus/straight.pinv",
        "mul_add",
        "2",
        "3",
        "4",
    ]);
    assert_eq!(pgf.status.code(), Some(0), "{}", stderr(&pgf));
    let theta = stdout(&pgf).trim().to_string();
    let mut outputs = Vec::new();
    for _ in 0..3 {
        let o = pinv(&[
            "invert",
            "tests/corpus/straight.pinv",
            "mul_add",
            "--y",
            "10",
            "--theta",
            &theta,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        outputs.push(stdout(&o));
    }
    assert_eq!(outputs[0], "x = (2.0, 3.0, 4.0)\n");
    assert!(outputs.iter().all(|o| o == &outputs[0]));
}

#[test]
fn invert_samples_and_json() {
    let o = pinv(&[
        "invert",
        "tests/corpus/straight.pinv",
        "lin",
        "--y",
        "100",
        "--samples",
        "5",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["function"], "lin");
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 5);
    for r in results {
        let x = r["x"].as_array().expect("an accepted x");
        let (a, b) = (x[0].as_f64().expect("f64"), x[1].as_f64().expect("f64"));
        assert!((a * 2.0 + b * 3.0 - 100.0).abs() < 1e-6, "{r}");
    }
    // The same seed gives the same preimages.
    let again = pinv(&[
        "invert",
        "tests/corpus/straight.pinv",
        "lin",
        "--y",
        "100",
        "--samples",
        "5",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(stdout(&o), stdout(&again));
}

#[test]
fn bad_theta_exits_2() {
    let base = [
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "10",
        "--theta",
    ];
    for theta in ["1", "1,2,3,4", "1,true"] {
        let mut args = base.to_vec();
        args.push(theta);
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(2), "θ = {theta}: {}", stderr(&o));
        assert!(stderr(&o).contains("θ"), "θ = {theta}: {}", stderr(&o));
    }
    let o = pinv(&[
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "abc",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinv(&[
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "1,2",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_theta_out_of_domain_is_a_domain_error() {
    // θ = 0 for the nonzero factor of x*y when x*y = 6 ≠ 0.
    let o = pinv(&[
        "invert",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "10",
        "--theta",
        "4,0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("straight.pinv:3:5"), "{}", stderr(&o));
}

#[test]
fn check_json_has_the_documented_fields() {
    let o = pinv(&[
        "check",
        "tests/corpus/straight.pinv",
        "--cases",
        "50",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["file"], "tests/corpus/straight.pinv");
    let functions = v["functions"].as_array().expect("functions");
    assert_eq!(functions.len(), 7);
    for f in functions {
        for field in [
            "name",
            "status",
            "theta",
            "soundness",
            "completeness",
            "message",
            "acceptance_ok",
        ] {
            assert!(f.get(field).is_some(), "{field} missing in {f}");
        }
        for field in ["trials", "accepted", "violations"] {
            assert!(f["soundness"][field].is_u64(), "{field} in {f}");
        }
        for field in ["trials", "recovered"] {
            assert!(f["completeness"][field].is_u64(), "{field} in {f}");
        }
        assert_eq!(f["status"], "ok", "{f}");
    }
    let o = pinv(&[
        "check",
        "tests/corpus/straight.pinv",
        "--function",
        "lin",
        "--cases",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("lin") && !stdout(&o).contains("mul_add"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn low_acceptance_is_shown_and_fails_only_when_asked() {
    // pow_sq (exponentiation by squaring) reads at every level a θ that the levels above mostly
    // reject: about a third of draws give y.
    let args = [
        "check",
        "tests/programs/recursive.pinv",
        "--function",
        "pow_sq",
    ];
    let o = pinv(&[&args[..], &["--cases", "200", "--search", "0"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("low acceptance"), "{}", stdout(&o));
    let o = pinv(&[&args[..], &["--cases", "200", "--search", "0", "--json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["functions"][0]["acceptance_ok"], false, "{v}");
    assert_eq!(v["functions"][0]["status"], "ok", "{v}");
    let strict = ["--cases", "200", "--search", "0", "--min-acceptance", "90"];
    let o = pinv(&[&args[..], &strict].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).contains("failed: low acceptance"),
        "{}",
        stdout(&o)
    );
    // A threshold it meets passes; a percentage out of range is bad input.
    let o = pinv(
        &[
            &args[..],
            &["--cases", "200", "--search", "0", "--min-acceptance", "10"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = pinv(&[&args[..], &["--min-acceptance", "150"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("give a percentage from 0 to 100"),
        "{}",
        text(&o)
    );
}

#[test]
fn bit_theta_is_written_in_hex_and_checked_against_its_free_bits() {
    // xorshift32 keeps the low word: θ is the high half, `bits[0xffffffff00000000]`.
    let file = "tests/programs/bitmix.pinv";
    let invert = |theta: &str| {
        pinv(&[
            "invert",
            file,
            "xorshift32",
            "--y",
            "270369",
            "--theta",
            theta,
        ])
    };
    let o = invert("0x500000000");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(stdout(&o).trim(), "x = 21474836481");
    let o = pinv(&["pgf", file, "xorshift32", "21474836481"]);
    assert_eq!(stdout(&o).trim(), "21474836480", "{}", text(&o));
    // Not a number: bad input. A bit the map determines: outside the domain, a failed run.
    let o = invert("0xzz");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`0xzz`, which is not a valid i64"),
        "{}",
        text(&o)
    );
    let o = invert("1");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("outside its domain bits[0xffffffff00000000]"),
        "{}",
        text(&o)
    );
}

#[test]
fn check_fails_with_exit_1_on_unsupported_functions() {
    let path = temp_program("rec.pinv", "fn r(x: f64) -> f64 { r(x) }\n");
    let o = pinv(&["check", path.to_str().expect("utf-8"), "--cases", "5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("unsupported"), "{}", stdout(&o));
}

#[test]
fn show_inverse_prints_schema_and_code() {
    let o = pinv(&["show", "tests/corpus/straight.pinv", "mul_add", "--inverse"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("θ schema"), "{text}");
    assert!(text.contains("straight.pinv:3:"), "{text}");
    assert!(text.contains("generated_inverse(mul_add)"), "{text}");
    assert!(text.contains("generated_pgf(mul_add)"), "{text}");
    // Without a function: every function's.
    let o = pinv(&["show", "tests/corpus/straight.pinv", "--inverse"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("generated_inverse(nested)"),
        "{}",
        stdout(&o)
    );
    let o = pinv(&["show", "tests/corpus/branches.pinv", "sign", "--inverse"]);
    assert!(
        stdout(&o).contains("control flow: no choice left to θ"),
        "{}",
        stdout(&o)
    );
    let o = pinv(&["show", "tests/corpus/branches.pinv", "mid", "--inverse"]);
    assert!(
        stdout(&o).contains("control flow: 1 choice(s) left to θ"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn primitives_catalogue_lists_every_opcode() {
    let o = pinv(&["primitives", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let entries = v["primitives"].as_array().expect("entries");
    assert_eq!(entries.len(), pinv::ir::Opcode::ALL.len());
    let o = pinv(&["primitives"]);
    assert!(
        stdout(&o).contains("fadd (f64, f64) -> f64"),
        "{}",
        stdout(&o)
    );
}

/// The catalogue, text and JSON, byte for byte: the standard rules are declared as data, and a
/// change to how they are declared must not change what they say. After an intended change run
/// `UPDATE_EXPECT=1 cargo test -p pinv-cli --test cli primitives_catalogue` and review the diff.
#[test]
fn primitives_catalogue_is_unchanged() {
    let o = pinv(&["primitives"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    expect_test::expect_file!["snapshots/primitives.txt"].assert_eq(&stdout(&o));
    let o = pinv(&["primitives", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let pretty = serde_json::to_string_pretty(&v).expect("JSON") + "\n";
    expect_test::expect_file!["snapshots/primitives.json"].assert_eq(&pretty);
}

#[test]
fn show_inverse_reports_isolation() {
    let o = pinv(&["show", "tests/corpus/fanout.pinv", "quad", "--inverse"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("e-graph isolation"), "{text}");
    assert!(
        text.contains("isolated: every unknown is solved once"),
        "{text}"
    );
    assert!(text.contains("(fsub (sq (fadd x 1.5)) 2.25)"), "{text}");
    let o = pinv(&[
        "show",
        "tests/corpus/fanout.pinv",
        "reuse",
        "--inverse",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["isolation"][0]["outcome"]["kind"], "isolated", "{v}");
}

#[test]
fn show_inverse_is_the_same_every_time_and_times_runs_only_when_asked() {
    let args = ["show", "tests/corpus/systems.pinv", "--inverse"];
    let first = pinv(&args);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let text = stdout(&first);
    assert!(text.contains("e-graph isolation"), "{text}");
    assert!(!text.contains(" ms"), "{text}");
    assert_eq!(text, stdout(&pinv(&args)));
    let o = pinv(&[
        "show",
        "tests/corpus/systems.pinv",
        "spread",
        "--inverse",
        "--timings",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let timed = stdout(&o);
    assert!(
        timed.contains("iterations,") && timed.contains(" ms"),
        "{timed}"
    );
    assert_eq!(timed.matches("θ first: a").count(), 1, "{timed}");
    // Every phase of building the inverse, and compiling it.
    let phases = [
        "prepare",
        "isolation",
        "walk",
        "simplify",
        "finish",
        "verify",
        "schema",
    ];
    let line = timed
        .lines()
        .find(|l| l.starts_with("; time to build the inverse: "))
        .unwrap_or_else(|| panic!("{timed}"));
    for phase in phases {
        assert!(line.contains(&format!("{phase} ")), "{phase}: {line}");
    }
    assert!(
        timed.contains("; time to compile it to native code: "),
        "{timed}"
    );
    let o = pinv(&[
        "show",
        "tests/corpus/systems.pinv",
        "spread",
        "--inverse",
        "--timings",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let listed: Vec<&str> = v["timings"]["phases"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["phase"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(listed, phases, "{v}");
    assert!(
        v["timings"]["total_ms"].as_f64().is_some_and(|t| t > 0.0),
        "{v}"
    );
    assert!(v["timings"]["native_ms"].as_f64().is_some(), "{v}");
    let o = pinv(&["show", "tests/corpus/systems.pinv", "--timings"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
