//! `pinv sample`, `plot` and `completions`, progress bars, `--help` examples and error rendering,
//! run as a user would.

mod common;

use common::{pinv, stderr, stdout, temp_dir, temp_file};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Functions that invert with the rules every build has: `+` with f64, and declared inverses.
const PROGRAM: &str = "\
fn f(x: f64, y: f64) -> f64 { x + y + 1.0 }

fn g(a: f64, b: f64, c: f64) -> f64 { a + b + c }

fn mirror(x: f64) -> f64 { abs(x) }
inverse mirror(y: f64, theta s: bool) -> f64 {
    if y < 0.0 { fail(\"abs is never negative\") } else if s { y } else { -y }
}
pgf mirror(x: f64) -> bool { x >= 0.0 }

fn shift(x: f64) -> f64 { x + 1.0 }
inverse shift(y: f64, theta t: f64) -> f64 {
    if t > 0.0 { y - 1.0 } else { fail(\"t must be positive\") }
}
pgf shift(x: f64) -> f64 { 1.0 }
";

/// The program's file, written once (tests run in parallel and read it concurrently).
fn program() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| temp_file("ux.pinv", PROGRAM)).clone()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// f(x) by running the program forward with `pinv run`.
fn run_forward(file: &Path, function: &str, x: &[f64]) -> Vec<f64> {
    let file = file.to_str().expect("utf-8 path");
    let args: Vec<String> = x.iter().map(|v| format!("{v:?}")).collect();
    let mut all = vec!["run", file, function, "--json"];
    all.extend(args.iter().map(String::as_str));
    let o = pinv(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    numbers(&json(&o)["outputs"])
}

// ---------------------------------------------------------------------------------------------
// sample

#[test]
fn sample_json_has_n_preimages_of_y_with_the_documented_fields() {
    let file = program();
    let f = file.to_str().unwrap();
    let o = pinv(&[
        "sample",
        f,
        "f",
        "--y",
        "5",
        "--samples",
        "25",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    for field in ["samples", "drawn", "accepted"] {
        assert!(v.get(field).is_some(), "no `{field}` in {v}");
    }
    let samples = v["samples"].as_array().expect("samples is an array");
    assert_eq!(samples.len(), 25);
    assert_eq!(v["accepted"], 25);
    assert!(v["drawn"].as_u64().unwrap() >= 25);
    for s in samples {
        let x = numbers(&s["x"]);
        assert_eq!(x.len(), 2, "{s}");
        assert_eq!(s["theta"].as_array().map(Vec::len), Some(1), "{s}");
        assert!(close(x[0] + x[1] + 1.0, 5.0), "f{x:?} ≠ 5");
    }
    // The interpreter agrees, for a few of them.
    for s in samples.iter().take(3) {
        let y = run_forward(&file, "f", &numbers(&s["x"]));
        assert!(close(y[0], 5.0), "{y:?}");
    }
}

#[test]
fn sample_prints_n_lines_and_the_acceptance() {
    let file = program();
    let f = file.to_str().unwrap();
    let o = pinv(&["sample", f, "g", "--y", "-2.5", "-n", "7"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("x = ")).collect();
    assert_eq!(lines.len(), 7, "{out}");
    for line in lines {
        // x = (a, b, c)  θ = [..]
        let inside = line
            .strip_prefix("x = (")
            .and_then(|r| r.split(')').next())
            .expect("x = (...)");
        let x: Vec<f64> = inside.split(", ").map(|t| t.parse().unwrap()).collect();
        assert!(close(x.iter().sum::<f64>(), -2.5), "{line}");
    }
    assert!(out.contains("acceptance 100.0%"), "{out}");
}

#[test]
fn sample_rejects_and_counts_theta_out_of_domain() {
    let file = program();
    let f = file.to_str().unwrap();
    let o = pinv(&["sample", f, "shift", "--y", "2", "-n", "50", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["accepted"], 50);
    let drawn = v["drawn"].as_u64().unwrap();
    assert!(drawn > 50, "some θ ≤ 0 must be rejected: {v}");
    assert_eq!(v["rejected"].as_u64().unwrap(), drawn - 50);
    let acceptance = v["acceptance"].as_f64().unwrap();
    assert!(close(acceptance, 50.0 / drawn as f64), "{v}");
    for s in v["samples"].as_array().unwrap() {
        assert!(numbers(&s["theta"])[0] > 0.0, "{s}");
        assert_eq!(numbers(&s["x"]), [1.0]);
    }
}

#[test]
fn sample_stops_at_the_draw_cap() {
    let file = program();
    let f = file.to_str().unwrap();
    // y < 0 has no preimage under abs: every draw is rejected, and the cap ends the search.
    let o = pinv(&[
        "sample",
        f,
        "mirror",
        "--y",
        "-1",
        "-n",
        "5",
        "--max-draws",
        "40",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("found 0 of 5 preimage(s) in 40 θ draws"),
        "{err}"
    );
    // The rejection is shown where it happens in the source.
    assert!(err.contains("abs is never negative"), "{err}");
    assert!(err.contains("ux.pinv:7:18"), "{err}");
    let o = pinv(&[
        "sample",
        f,
        "mirror",
        "--y",
        "-1",
        "-n",
        "5",
        "--max-draws",
        "40",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["drawn"], 40);
    assert_eq!(v["accepted"], 0);
    assert_eq!(v["samples"], serde_json::json!([]));
    assert!(v["error"]["message"].is_string(), "{v}");
}

#[test]
fn sample_is_reproducible_from_its_seed() {
    let file = program();
    let f = file.to_str().unwrap();
    let a = pinv(&["sample", f, "f", "--y", "1", "-n", "5", "--seed", "9"]);
    let b = pinv(&["sample", f, "f", "--y", "1", "-n", "5", "--seed", "9"]);
    let c = pinv(&["sample", f, "f", "--y", "1", "-n", "5", "--seed", "10"]);
    assert_eq!(stdout(&a), stdout(&b));
    assert_ne!(stdout(&a), stdout(&c));
}

#[test]
fn sample_gives_the_same_samples_on_any_number_of_threads() {
    let file = program();
    let f = file.to_str().unwrap();
    // `shift` rejects about half of θ, so the draws span several chunks with rejections in each.
    for (function, y, n) in [("f", "1", "9000"), ("shift", "3", "5000")] {
        let run = |jobs: &str| {
            let o = pinv(&[
                "sample", f, function, "--y", y, "-n", n, "--seed", "3", "--jobs", jobs,
            ]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o)
        };
        let one = run("1");
        assert_eq!(one.lines().count(), n.parse::<usize>().unwrap() + 1);
        assert_eq!(one, run("2"), "{function}");
        assert_eq!(one, run("3"), "{function}");
    }
}

#[test]
fn sample_streams_json_lines_and_csv() {
    let file = program();
    let f = file.to_str().unwrap();
    let o = pinv(&[
        "sample", f, "g", "--y", "6", "-n", "50", "--seed", "4", "--format", "jsonl",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 51);
    for line in &lines[..50] {
        let x = numbers(&line["x"]);
        assert_eq!(x.len(), 3);
        assert!(close(x.iter().sum::<f64>(), 6.0), "{line}");
        assert!(line["theta"].is_array(), "{line}");
    }
    let summary = &lines[50]["summary"];
    assert_eq!(summary["accepted"], 50, "{summary}");
    assert_eq!(summary["requested"], 50, "{summary}");
    // The same samples as `--json` gives, in the same order.
    let all = pinv(&[
        "sample", f, "g", "--y", "6", "-n", "50", "--seed", "4", "--json",
    ]);
    assert_eq!(
        json(&all)["samples"],
        serde_json::Value::Array(lines[..50].to_vec())
    );

    let o = pinv(&[
        "sample", f, "g", "--y", "6", "-n", "20", "--seed", "4", "--format", "csv",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut rows = text.lines();
    assert_eq!(rows.next(), Some("a,b,c,theta"));
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), 20);
    for row in rows {
        let fields: Vec<&str> = row.split(',').collect();
        assert_eq!(fields.len(), 4, "{row}");
        let x: Vec<f64> = fields[..3].iter().map(|v| v.parse().unwrap()).collect();
        assert!(close(x.iter().sum::<f64>(), 6.0), "{row}");
        assert!(
            fields[3].split(' ').all(|t| t.parse::<f64>().is_ok()),
            "{row}"
        );
    }
    // The summary is on standard error, out of the table's way.
    assert!(stderr(&o).contains("20 preimage(s)"), "{}", stderr(&o));
}

#[test]
fn sample_reports_bad_input_with_exit_2() {
    let file = program();
    let f = file.to_str().unwrap();
    let o = pinv(&["sample", f, "f", "--y", "1,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--y needs 1 value(s)"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&["sample", f, "nope", "--y", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinv(&["sample", f, "nope", "--y", "1", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(json(&o)["error"]["message"].is_string());
}

// ---------------------------------------------------------------------------------------------
// plot

/// Checks that `svg` is one well-formed `<svg>` element: every tag closed in order, and returns
/// the number of each element.
fn svg_elements(svg: &str) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg.trim();
    assert!(
        rest.starts_with("<svg"),
        "does not start with <svg: {}",
        &rest[..40]
    );
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                open.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
            continue;
        }
        let name = tag
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap()
            .to_string();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric()),
            "bad tag <{tag}>"
        );
        if open.is_empty() {
            roots += 1;
        }
        *counts.entry(name.clone()).or_insert(0) += 1;
        if !tag.ends_with('/') {
            open.push(name);
        }
    }
    assert!(open.is_empty(), "unclosed elements: {open:?}");
    assert_eq!(roots, 1, "one root element");
    assert_eq!(counts.get("svg"), Some(&1));
    counts
}

fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).expect("the PNG is written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG magic bytes");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a decodable PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buf).expect("decodable image data");
    (info.width, info.height)
}

#[test]
fn plot_writes_an_svg_with_one_circle_per_preimage() {
    let file = program();
    let f = file.to_str().unwrap();
    let out = temp_dir().join("g.svg");
    let out_s = out.to_str().unwrap();
    let o = pinv(&[
        "plot",
        f,
        "g",
        "--y",
        "3",
        "--out",
        out_s,
        "--samples",
        "123",
        "--inputs",
        "c,a",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["points"], 123);
    assert_eq!(v["accepted"], 123);
    assert_eq!(v["format"], "svg");
    assert_eq!(v["inputs"], serde_json::json!(["c", "a"]));
    let svg = std::fs::read_to_string(&out).expect("the SVG is written");
    let counts = svg_elements(&svg);
    assert_eq!(counts.get("circle"), Some(&123), "{counts:?}");
    // Title names f and y; axes are the chosen parameters.
    assert!(svg.contains("g(a, b, c) = 3.0"), "title missing");
    assert!(
        svg.contains(">\nc\n</text>") || svg.contains(">c</text>"),
        "x axis label"
    );
}

/// A bool input's axis is ticked `false` and `true` only, an integer input's at whole numbers
/// only.
#[test]
fn plot_axes_of_bool_and_integer_inputs_are_categorical() {
    let file = temp_file(
        "axes.pinv",
        "fn pick(b: bool, x: f64) -> f64 { if b { x * x } else { x } }\n\
         fn steps(n: i64, x: f64) -> f64 { (n as f64) * 0.5 + x }\n",
    );
    let f = file.to_str().unwrap();
    let text = |svg: &str| -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
            .filter_map(|t| {
                t.split_once("</text>")
                    .map(|(label, _)| label.trim().to_string())
            })
            .collect()
    };
    let out = temp_dir().join("pick.svg");
    let o = pinv(&[
        "plot",
        f,
        "pick",
        "--y",
        "4",
        "--samples",
        "50",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let labels = text(&std::fs::read_to_string(&out).expect("written"));
    assert!(
        labels.iter().any(|l| l == "false") && labels.iter().any(|l| l == "true"),
        "{labels:?}"
    );
    assert!(
        !labels.iter().any(|l| l == "0.5" || l == "0.2"),
        "{labels:?}"
    );
    // Over n in [0, 3], a real axis would be ticked every 0.5 or less; the y axis (x) is kept
    // to whole numbers by `--ylim` too, so a fractional label would be n's.
    let out = temp_dir().join("steps.svg");
    let o = pinv(&[
        "plot",
        f,
        "steps",
        "--y",
        "4",
        "--samples",
        "50",
        "--xlim",
        "0,3",
        "--ylim",
        "-10,10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let labels = text(&std::fs::read_to_string(&out).expect("written"));
    assert!(
        labels.iter().any(|l| l == "1") && labels.iter().any(|l| l == "2"),
        "{labels:?}"
    );
    // (The title, `steps(n, x) = 4.0: …`, is no tick.)
    let mut ticks = labels.iter().filter(|l| !l.contains('='));
    assert!(!ticks.any(|l| l.contains('.')), "{labels:?}");
}

#[test]
fn plot_writes_a_png_and_says_how_many_points() {
    let file = program();
    let f = file.to_str().unwrap();
    let out = temp_dir().join("f.png");
    let out_s = out.to_str().unwrap();
    let o = pinv(&["plot", f, "f", "--y", "5", "-o", out_s, "-n", "40"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("40 preimage(s) of y = 5.0"),
        "{}",
        stdout(&o)
    );
    let (w, h) = png_size(&out);
    assert!(w >= 400 && h >= 300, "{w}×{h}");
}

#[test]
fn plot_colours_points_by_discrete_theta() {
    let file = program();
    let f = file.to_str().unwrap();
    let out = temp_dir().join("mirror.svg");
    let out_s = out.to_str().unwrap();
    let o = pinv(&[
        "plot", f, "mirror", "--y", "2", "-o", out_s, "-n", "200", "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let categories = v["categories"].as_array().unwrap();
    assert_eq!(categories.len(), 2, "{v}");
    let labels: Vec<&str> = categories
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert!(labels.iter().any(|l| l.contains("s = true")), "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("s = false")), "{labels:?}");
    let total: u64 = categories
        .iter()
        .map(|c| c["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 200);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_eq!(svg_elements(&svg).get("circle"), Some(&200));
    // Two fills among the circles, and a legend that names the choices.
    let fills: std::collections::BTreeSet<&str> = svg
        .split("<circle")
        .skip(1)
        .filter_map(|c| c.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(fills.len(), 2, "{fills:?}");
    assert!(svg.contains("s = true"), "legend");
    // The PNG has the same content.
    let png = temp_dir().join("mirror.png");
    let o = pinv(&["plot", f, "mirror", "--y", "2", "-o", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    png_size(&png);
}

#[test]
fn plot_rejects_bad_extensions_and_inputs_with_exit_2() {
    let file = program();
    let f = file.to_str().unwrap();
    let jpg = temp_dir().join("p.jpg");
    let o = pinv(&["plot", f, "f", "--y", "1", "--out", jpg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`.svg` or `.png`"), "{}", stderr(&o));
    assert!(!jpg.exists());
    let o = pinv(&["plot", f, "f", "--y", "1", "--out", "noext"]);
    assert_eq!(o.status.code(), Some(2));
    let svg = temp_dir().join("p.svg");
    let svg = svg.to_str().unwrap();
    let o = pinv(&["plot", f, "f", "--y", "1", "--out", svg, "--inputs", "x,z"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no parameter `z`; its parameters are x, y"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&[
        "plot", f, "g", "--y", "1", "--out", svg, "--inputs", "a,b,c",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = pinv(&[
        "plot",
        f,
        "f",
        "--y",
        "1",
        "--out",
        "/nonexistent-dir/p.svg",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
}

#[test]
fn plot_with_no_preimage_fails_with_the_reason() {
    let file = program();
    let f = file.to_str().unwrap();
    let svg = temp_dir().join("none.svg");
    let o = pinv(&[
        "plot",
        f,
        "mirror",
        "--y",
        "-1",
        "--out",
        svg.to_str().unwrap(),
        "--max-draws",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("abs is never negative"),
        "{}",
        stderr(&o)
    );
    assert!(!svg.exists());
}

// ---------------------------------------------------------------------------------------------
// progress bars

/// What a progress bar leaves in captured output: carriage returns, ANSI escapes, bar glyphs.
fn has_bar_characters(text: &str) -> bool {
    text.contains('\r')
        || text.contains('\u{1b}')
        || text.contains("[=")
        || text.contains("=>")
        || text.contains("eta ")
}

#[test]
fn no_progress_bar_when_output_is_piped() {
    let file = program();
    let f = file.to_str().unwrap();
    // Long enough that a terminal would get a bar.
    let runs = [
        pinv(&["check", f, "--cases", "20000"]),
        pinv(&["sample", f, "f", "--y", "1", "-n", "30000"]),
        pinv(&["check", f, "--cases", "2000", "--json"]),
        pinv(&["bench", f, "f", "--budget-ms", "100"]),
    ];
    for o in &runs {
        assert!(!has_bar_characters(&stderr(o)), "stderr: {:?}", stderr(o));
        assert!(!has_bar_characters(&stdout(o)), "stdout has bar characters");
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(&runs[2])).expect("clean JSON");
    assert!(v["functions"].is_array());
}

/// In a terminal (a pseudo-terminal from `script`), a long run does show a bar; `--json` and
/// `PINV_PROGRESS=never` do not.
#[test]
fn progress_bar_in_a_terminal() {
    let have_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_script || !cfg!(target_os = "linux") {
        eprintln!("skipped: no `script` to make a terminal");
        return;
    }
    let file = program();
    let bin = env!("CARGO_BIN_EXE_pinv");
    let in_terminal = |args: &str, env: &[(&str, &str)]| {
        let o = Command::new("script")
            .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
            .env("TERM", "xterm")
            .envs(env.iter().copied())
            .output()
            .expect("script runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let f = file.to_str().unwrap();
    let long = format!("sample {f} f --y 1 -n 150000");
    // Shown at once with `always`: how long 150,000 draws take depends on the engine.
    let shown = in_terminal(&long, &[("PINV_PROGRESS", "always")]);
    assert!(
        shown.contains("sampling"),
        "no bar in a terminal: {shown:?}"
    );
    let off = in_terminal(&long, &[("PINV_PROGRESS", "never")]);
    assert!(!off.contains("sampling"), "{off:?}");
    let json = in_terminal(&format!("{long} --json"), &[]);
    assert!(!json.contains("sampling"));
    // `bench` shows the column it is measuring.
    let bench = format!("bench {f} f --budget-ms 100");
    let shown = in_terminal(&bench, &[("PINV_PROGRESS", "always")]);
    assert!(
        shown.contains("measuring"),
        "no bar in a terminal: {shown:?}"
    );
    let json = in_terminal(&format!("{bench} --json"), &[("PINV_PROGRESS", "always")]);
    assert!(!json.contains("measuring"), "{json:?}");
    // A quick run never flashes a bar.
    let quick = in_terminal(&format!("sample {f} f --y 1 -n 3"), &[]);
    assert!(!quick.contains("sampling"), "{quick:?}");
}

// ---------------------------------------------------------------------------------------------
// help, completions, errors

/// The subcommands `pinv --help` lists.
fn subcommands() -> Vec<String> {
    let o = pinv(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let list = out
        .split("Commands:")
        .nth(1)
        .expect("a Commands: section")
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let names = subcommands();
    for expected in ["run", "invert", "check", "sample", "plot", "completions"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    for name in &names {
        let o = pinv(&[name, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{name} --help");
        let out = stdout(&o);
        assert!(
            out.contains("Example"),
            "`pinv {name} --help` has no example:\n{out}"
        );
        assert!(out.contains(&format!("pinv {name}")), "{name}: {out}");
    }
    let o = pinv(&["--help"]);
    assert!(stdout(&o).contains("Example"), "{}", stdout(&o));
}

/// Runs the example of every subcommand's `--help` (those without pipes or redirections), with
/// files it writes redirected to a temporary directory, and checks what it says it prints.
#[test]
fn every_help_example_runs() {
    for name in subcommands() {
        let help = stdout(&pinv(&[&name, "--help"]));
        let example = help
            .split("Example: `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("no example in `pinv {name} --help`"));
        // Pipelines and redirections need a shell; a benchmark's example takes too long here.
        if example.contains('|') || example.contains('>') || name == "bench" {
            continue;
        }
        let mut words: Vec<String> = example.split_whitespace().map(str::to_string).collect();
        assert_eq!(words.remove(0), "pinv", "{example}");
        for i in 1..words.len() {
            if words[i - 1] == "--out" {
                words[i] = temp_dir().join(&words[i]).display().to_string();
            }
        }
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(0), "`{example}`: {}", stderr(&o));
        // `prints `X`` after the command: the output has X.
        let after = help.split(example).nth(1).unwrap_or_default();
        if let Some(promised) = after
            .trim_start_matches('`')
            .trim_start()
            .strip_prefix("prints `")
            .and_then(|rest| rest.split('`').next())
        {
            assert!(
                stdout(&o).contains(promised),
                "`{example}` should print `{promised}`, printed:\n{}",
                stdout(&o)
            );
        }
    }
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_pinv()"),
        ("zsh", "#compdef pinv"),
        ("fish", "complete -c pinv"),
        ("elvish", "pinv"),
        ("powershell", "pinv"),
    ] {
        let o = pinv(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(marker), "{shell}: {out}");
        assert!(out.contains("sample") && out.contains("plot"), "{shell}");
    }
    let o = pinv(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `pinv man` prints a man page naming every command.
#[test]
fn man_prints_a_man_page() {
    let o = pinv(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH pinv 1"), "{page}");
    for command in [
        "run",
        "invert",
        "pgf",
        "check",
        "sample",
        "plot",
        "completions",
        "man",
    ] {
        assert!(
            page.contains(command),
            "{command} missing from the man page"
        );
    }
    assert!(
        !page.contains("__functions"),
        "the hidden command is in the man page"
    );
}

/// The bash script offers the functions of the file on the command line for FUNCTION (through
/// the hidden `pinv __functions FILE`), and still the commands for the first word; a file that
/// does not compile offers nothing and prints nothing.
#[test]
fn bash_completes_the_function_names_of_the_file() {
    let o = pinv(&["__functions", "tests/corpus/straight.pinv"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).lines().any(|l| l == "mul_add"), "{}", stdout(&o));
    let bad = temp_file("bad_completion.pinv", "fn f(x: f64) -> f64 { x + y }\n");
    let o = pinv(&["__functions", bad.to_str().unwrap()]);
    assert_eq!(
        (o.status.code(), stdout(&o), stderr(&o)),
        (Some(0), String::new(), String::new())
    );
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_pinv"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let complete = |words: &str, cword: usize| -> String {
        let script = format!(
            "source <(pinv completions bash)\nCOMP_WORDS=({words}); COMP_CWORD={cword}\n\
             COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}\n\
             _pinv_with_functions pinv \"${{COMP_WORDS[COMP_CWORD]}}\" \
             \"${{COMP_WORDS[COMP_CWORD-1]}}\"\necho \"${{COMPREPLY[*]}}\""
        );
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("PATH", &path)
            .current_dir(common::workspace())
            .output()
            .expect("bash runs");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(
        complete("pinv invert tests/corpus/straight.pinv mu", 3),
        "mul_add"
    );
    let all = complete("pinv sample tests/corpus/straight.pinv ''", 3);
    assert!(all.contains("mul_add") && all.contains("lin"), "{all}");
    assert_eq!(complete("pinv inv", 1), "invert");
}

/// The zsh script offers the functions of the file on the command line for FUNCTION, positional
/// or `--function`, and the commands for the first word. The completion runs in a real
/// interactive zsh (`common/zsh_complete.zsh`, through zpty). Without zsh the test says so and
/// passes, unless `PINV_REQUIRE_ZSH` is set (CI installs zsh and sets it).
#[test]
fn zsh_completes_the_function_names_of_the_file() {
    let has_zsh = std::process::Command::new("zsh")
        .args(["-f", "-c", "zmodload zsh/zpty"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_zsh {
        assert!(
            std::env::var_os("PINV_REQUIRE_ZSH").is_none(),
            "PINV_REQUIRE_ZSH is set but zsh (with zsh/zpty) cannot be run"
        );
        eprintln!("zsh not found: its completion is not tested here");
        return;
    }
    let dir = temp_dir().join("zsh_completion");
    std::fs::create_dir_all(&dir).unwrap();
    let o = pinv(&["completions", "zsh"]);
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(dir.join("_pinv"), stdout(&o)).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_pinv"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let harness = common::workspace().join("cli/tests/common/zsh_complete.zsh");
    let complete = |line: &str| -> Vec<String> {
        let o = std::process::Command::new("zsh")
            .arg("-f")
            .arg(&harness)
            .arg(&dir)
            .arg(line)
            .env("PATH", &path)
            .current_dir(common::workspace())
            .output()
            .expect("zsh runs");
        let mut words: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
        words.sort();
        words
    };
    let straight = [
        "double",
        "easy",
        "lin",
        "mul_add",
        "nested",
        "ratio",
        "shifted_exp",
    ];
    assert_eq!(
        complete("pinv invert tests/corpus/straight.pinv "),
        straight
    );
    assert_eq!(
        complete("pinv sample tests/corpus/straight.pinv mu"),
        ["mul_add"]
    );
    assert_eq!(
        complete("pinv check tests/corpus/straight.pinv --function "),
        straight
    );
    assert_eq!(complete("pinv inv"), ["invert"]);
    assert!(complete("pinv run tests/corpus/no_such_file.pinv ").is_empty());
}

#[test]
fn compile_errors_show_source_context_in_every_file_command() {
    let bad = temp_file("bad.pinv", "fn f(x: f64) -> f64 {\n    x + y\n}\n");
    let bad = bad.to_str().unwrap();
    let out = temp_dir().join("bad.svg");
    let out = out.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", bad, "f", "1"],
        vec!["show", bad],
        vec!["invert", bad, "f", "--y", "1"],
        vec!["pgf", bad, "f", "1"],
        vec!["check", bad],
        vec!["sample", bad, "f", "--y", "1"],
        vec!["plot", bad, "f", "--y", "1", "--out", out],
    ];
    for args in commands {
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains("bad.pinv:2:9"), "{args:?}: {err}");
        assert!(
            err.contains("x + y") && err.contains('^'),
            "{args:?}: {err}"
        );
        let mut json = args.clone();
        json.push("--json");
        let o = pinv(&json);
        assert_eq!(o.status.code(), Some(2), "{json:?}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("a JSON error");
        assert_eq!(v["error"]["line"], 2, "{json:?}");
        assert!(stderr(&o).is_empty(), "{json:?}: {}", stderr(&o));
    }
}

#[test]
fn unsupported_functions_show_where_in_check_sample_and_plot() {
    // Recursion with no base case cannot be inverted; the error points at the function.
    let path = temp_file("rec.pinv", "fn r(x: f64) -> f64 {\n    r(x)\n}\n");
    let p = path.to_str().unwrap();
    let out = temp_dir().join("rec.svg");
    for args in [
        vec!["check", p, "--cases", "5"],
        vec!["sample", p, "r", "--y", "1"],
        vec!["plot", p, "r", "--y", "1", "--out", out.to_str().unwrap()],
    ] {
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("rec.pinv:"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn plot_limits_fix_the_view_and_count_what_is_outside() {
    let file = program();
    let f = file.to_str().unwrap();
    let out = temp_dir().join("limits.svg");
    let out_s = out.to_str().unwrap();
    let o = pinv(&[
        "plot", f, "f", "--y", "1", "-o", out_s, "-n", "300", "--xlim", "-5,5", "--ylim", "-5,5",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let points = v["points"].as_u64().unwrap();
    let outside = v["outside"].as_u64().unwrap();
    assert_eq!(points + outside, 300, "{v}");
    assert!(points > 0 && outside > 0, "{v}");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_eq!(svg_elements(&svg).get("circle"), Some(&(points as usize)));
    for bad in ["5,-5", "1", "a,b", "0,inf"] {
        let o = pinv(&["plot", f, "f", "--y", "1", "-o", out_s, "--xlim", bad]);
        assert_eq!(o.status.code(), Some(2), "--xlim {bad}");
        assert!(
            stderr(&o).contains("--xlim takes two finite numbers"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let file = program();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinv"))
        .args([
            "sample",
            file.to_str().unwrap(),
            "f",
            "--y",
            "1",
            "-n",
            "200000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pinv starts");
    let mut first = [0u8; 64];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("some output");
    // stdout is dropped here, as `| head -c 64` would.
    let o = child.wait_with_output().expect("pinv ends");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_ne!(o.status.code(), Some(101), "a panic's exit status");
}

// ---------------------------------------------------------------------------------------------
// the corpus

#[test]
fn sample_corpus_functions_and_check_them_with_run() {
    let cases = [
        ("tests/corpus/straight.pinv", "mul_add", "10"),
        ("tests/corpus/straight.pinv", "shifted_exp", "1.5,4"),
        ("tests/corpus/branches.pinv", "relu", "0"),
        ("tests/corpus/fanout.pinv", "xy_plus_x", "-3"),
    ];
    for (file, function, y) in cases {
        let o = pinv(&["sample", file, function, "--y", y, "-n", "12", "--json"]);
        assert_eq!(o.status.code(), Some(0), "{function}: {}", stderr(&o));
        let v = json(&o);
        let samples = v["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 12, "{function}");
        let want: Vec<f64> = y.split(',').map(|t| t.parse().unwrap()).collect();
        for s in samples {
            let fx = run_forward(Path::new(file), function, &numbers(&s["x"]));
            for (a, b) in fx.iter().zip(&want) {
                assert!(close(*a, *b), "{function}{:?} = {fx:?} ≠ {want:?}", s["x"]);
            }
        }
    }
}

/// `x² + 3x = 4` has the roots 1 and −4: the plot shows exactly those two points, in two colours
/// (the sign θ picks), and nothing else.
#[test]
fn quad_plots_its_root_pair() {
    let out = temp_dir().join("quad.svg");
    let o = pinv(&[
        "plot",
        "tests/corpus/fanout.pinv",
        "quad",
        "--y",
        "4",
        "--out",
        out.to_str().unwrap(),
        "-n",
        "200",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["points"], 200);
    let categories = v["categories"].as_array().unwrap();
    assert_eq!(categories.len(), 2, "{v}");
    for c in categories {
        assert!(c["count"].as_u64().unwrap() > 50, "{v}");
    }
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_eq!(svg_elements(&svg).get("circle"), Some(&200));
    // Two places (one per root) and two fills.
    let mut places = std::collections::BTreeMap::<(String, String), usize>::new();
    for c in svg.split("<circle").skip(1) {
        let attr = |name: &str| {
            c.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default()
                .to_string()
        };
        *places.entry((attr("cx"), attr("fill"))).or_insert(0) += 1;
    }
    assert_eq!(places.len(), 2, "{places:?}");
    // And the samples are the roots.
    let o = pinv(&[
        "sample",
        "tests/corpus/fanout.pinv",
        "quad",
        "--y",
        "4",
        "-n",
        "40",
        "--json",
    ]);
    let v = json(&o);
    let xs: Vec<f64> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| numbers(&s["x"])[0])
        .collect();
    assert!(
        xs.iter().all(|&x| close(x, 1.0) || close(x, -4.0)),
        "{xs:?}"
    );
    assert!(xs.iter().any(|&x| close(x, 1.0)) && xs.iter().any(|&x| close(x, -4.0)));
}

/// Runs the binary with `input` on standard input.
fn pinv_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinv"))
        .args(args)
        .current_dir(common::workspace())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the pinv binary runs");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).expect("writes stdin");
    }
    child.wait_with_output().expect("pinv ends")
}

#[test]
fn special_values_parse_in_any_case_and_nan_prints_as_nan() {
    let file = program();
    let file = file.to_str().expect("utf-8 path");
    for (x, want) in [
        ("NaN", "NaN"),
        ("-Infinity", "-inf"),
        ("INF", "inf"),
        ("+inf", "inf"),
    ] {
        let o = pinv(&["run", file, "f", x, "0"]);
        assert_eq!(o.status.code(), Some(0), "{x}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), want, "{x}");
    }
    // The value as typed, without the space that keeps `-…` from being read as a flag.
    let o = pinv(&["run", file, "f", "-infinite", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`-infinite` is not a valid f64"),
        "{}",
        stderr(&o)
    );
    // One value given for two: "1 was given".
    let o = pinv(&["run", file, "f", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("but 1 was given"), "{}", stderr(&o));
}

#[test]
fn y_takes_the_tuple_form_run_prints_and_a_trailing_comma() {
    let tuple = "fn pair(x: f64, n: i64) -> (f64, i64) { (x * 2.0, n + 1) }";
    let file = temp_file("pair.pinv", tuple);
    let file = file.to_str().expect("utf-8 path");
    let o = pinv(&["run", file, "pair", "1.5", "2"]);
    assert_eq!(stdout(&o).trim(), "(3.0, 3)");
    for y in ["(3.0, 3)", "3.0, 3", "3.0,3,", " ( 3.0 , 3 ) "] {
        let o = pinv(&["invert", file, "pair", "--y", y]);
        assert_eq!(o.status.code(), Some(0), "{y}: {}", stderr(&o));
        assert!(
            stdout(&o).starts_with("x = (1.5, 2)"),
            "{y}: {}",
            stdout(&o)
        );
    }
    let o = pinv(&["invert", file, "pair", "--y", "3.0,,3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("value 2 of `3.0,,3` is empty"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&["invert", file, "pair", "--y", "3.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("but 1 was given"), "{}", stderr(&o));
}

#[test]
fn a_dash_reads_the_program_from_standard_input() {
    let o = pinv_stdin(&["run", "-", "f", "1", "2"], PROGRAM);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "4.0");
    let o = pinv_stdin(&["check", "-", "f", "--cases", "20"], PROGRAM);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Errors name standard input as the file.
    let o = pinv_stdin(&["run", "-", "f", "1", "2"], "fn f(x: f64) -> f64 { x + }");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<stdin>"), "{}", stderr(&o));
}

#[test]
fn check_takes_the_function_positionally_or_by_flag() {
    let file = program();
    let file = file.to_str().expect("utf-8 path");
    for args in [
        vec!["check", file, "mirror", "--cases", "20", "--json"],
        vec![
            "check",
            file,
            "--function",
            "mirror",
            "--cases",
            "20",
            "--json",
        ],
    ] {
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let names: Vec<String> = json(&o)["functions"]
            .as_array()
            .expect("functions")
            .iter()
            .map(|f| f["name"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(names, ["mirror"]);
    }
    let o = pinv(&["check", file, "mirror", "--function", "shift"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn show_inverse_without_a_function_shows_every_function() {
    let file = program();
    let file = file.to_str().expect("utf-8 path");
    let o = pinv(&["show", file, "--inverse"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for f in ["f", "g", "mirror", "shift"] {
        assert!(
            text.contains(&format!("; θ schema of the inverse of `{f}`")),
            "{f}: {text}"
        );
    }
    let o = pinv(&["show", file, "--inverse", "--json"]);
    let doc = json(&o);
    let names: Vec<&str> = doc["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| f["function"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["f", "g", "mirror", "shift"]);
    // With FUNC, the one document as before.
    let o = pinv(&["show", file, "mirror", "--inverse", "--json"]);
    assert_eq!(json(&o)["function"], "mirror");
}

#[test]
fn argument_errors_are_json_with_json_and_help_of_help_is_help() {
    let file = program();
    let file = file.to_str().expect("utf-8 path");
    let o = pinv(&["run", file, "f", "--json", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let doc = json(&o);
    assert_eq!(doc["error"]["kind"], "usage");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("--bogus"),
        "{doc}"
    );
    for args in [["help", "--help"], ["help", "-h"]] {
        let o = pinv(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("Usage: pinv"), "{}", stdout(&o));
    }
}

#[test]
fn check_on_several_threads_reports_what_one_thread_does() {
    let run = |jobs: &str| {
        let o = pinv(&[
            "check",
            "tests/corpus/branches.pinv",
            "--cases",
            "100",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let one = run("1");
    assert_eq!(run("2"), one);
    assert_eq!(run("3"), one);
    // One function on several threads: its cases are checked in chunks side by side (1,000
    // cases are four chunks, with search on the first 100 trials).
    let run = |jobs: &str| {
        let o = pinv(&[
            "check",
            "tests/corpus/branches.pinv",
            "relu",
            "--cases",
            "1000",
            "--search",
            "100",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let one = run("1");
    assert!(one.contains("\"trials\":1000"), "{one}");
    assert_eq!(run("2"), one);
    assert_eq!(run("4"), one);
    let o = pinv(&["check", "tests/corpus/branches.pinv", "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sample_counts_distinct_preimages() {
    let file = program();
    let file = file.to_str().expect("utf-8 path");
    // A one-point preimage: every sample is the same x, and the report says so.
    let o = pinv(&["sample", file, "shift", "--y", "3", "--samples", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("4 preimage(s) (1 distinct) of y = 3.0"),
        "{}",
        stdout(&o)
    );
    let o = pinv(&[
        "sample",
        file,
        "shift",
        "--y",
        "3",
        "--samples",
        "4",
        "--json",
    ]);
    assert_eq!(json(&o)["distinct"], 1);
    // A continuous family: every x differs, and the text says nothing more.
    let o = pinv(&["sample", file, "f", "--y", "3", "--samples", "5"]);
    assert!(
        stdout(&o).contains("5 preimage(s) of y = 3.0"),
        "{}",
        stdout(&o)
    );
    let o = pinv(&["sample", file, "f", "--y", "3", "--samples", "5", "--json"]);
    assert_eq!(json(&o)["distinct"], 5);
}

#[test]
fn a_y_no_return_can_give_is_a_domain_error_in_source_terms() {
    // ping's returns give 0 or at least 1 (the range analysis follows the recursion): -3 is
    // refused at once, naming the function, not a block.
    let o = pinv(&[
        "invert",
        "tests/corpus/recursion.pinv",
        "ping",
        "--y",
        "-3",
        "--theta",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stderr(&o);
    assert!(
        text.contains("no branch of `ping` returns this y"),
        "{text}"
    );
    assert!(!text.contains("block"), "{text}");
}

#[test]
fn verbose_adds_the_generated_functions_names_to_an_error() {
    let args = [
        "invert",
        "tests/corpus/straight.pinv",
        "ratio",
        "--y",
        "0",
        "--theta",
        "1",
    ];
    let plain = pinv(&args);
    assert_eq!(plain.status.code(), Some(1), "{}", stderr(&plain));
    assert!(!stderr(&plain).contains("ratio.inv"), "{}", stderr(&plain));
    let mut verbose = args.to_vec();
    verbose.push("--verbose");
    let o = pinv(&verbose);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    // The user's message first, then the insides.
    assert!(err.starts_with(&stderr(&plain)), "{err}");
    assert!(err.contains("in the IR: `ratio.inv`"), "{err}");
    assert!(err.contains("internally: Runtime("), "{err}");
}

#[test]
fn bad_jobs_and_formats_and_an_integer_start_too_far_are_reported() {
    let o = pinv(&[
        "sample",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "1",
        "--jobs",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--jobs"), "{}", stderr(&o));
    let o = pinv(&[
        "sample",
        "tests/corpus/straight.pinv",
        "mul_add",
        "--y",
        "1",
        "--format",
        "xml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("jsonl"), "{}", stderr(&o));
    // The integer scan reaches 2^14 either way from θ: a start 10^9 away finds no root.
    let file = "tests/programs/acceptance.pinv";
    let o = pinv(&[
        "invert",
        file,
        "square_pixels",
        "--y",
        "12",
        "--theta",
        "1000000000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no integer within 16384 of θ gives the output"),
        "{}",
        stderr(&o)
    );
    let o = pinv(&["invert", file, "square_pixels", "--y", "12", "--theta", "7"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "x = 3");
}

#[test]
fn an_unknown_engine_is_bad_input_and_says_which_engines_there_are() {
    let file = program();
    let o = pinv(&[
        "run",
        file.to_str().expect("utf-8 path"),
        "shift",
        "1.0",
        "--engine",
        "fast",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown engine `fast` (expected `jit` or `interp`)"),
        "{}",
        stderr(&o)
    );
}
