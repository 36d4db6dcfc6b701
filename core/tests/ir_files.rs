//! File-based IR tests: every `tests/ir/*.ir` file is parsed, verified, printed, and the printed
//! text compared with the file's own text.
//!
//! A file starts with a header of `;` comment lines (and blank lines); the rest is the IR exactly as
//! the printer writes it. Header lines that mean something:
//!
//! - `; error: SUBSTRING`: parsing or verification must fail with a message containing SUBSTRING.
//!   (If the text parses, it must still print back as written.)
//! - `; spans: true`: print with source spans (` @START..END`).
//! - `; run: %F(ARGS) == RESULTS`: calling function `F` on `ARGS` gives `RESULTS` (one value, or
//!   several in parentheses), bit for bit, in the interpreter and in compiled code alike. Before
//!   `==`, `theta [V, ...]` gives the θ tape an inverse reads (all of it must be read), and
//!   instead of `== RESULTS`, `fails "TEXT"` expects a run-time error whose message contains
//!   TEXT, and `records [V, ...]` the θ tape a PGF records (a PGF always runs with a recorder,
//!   so `==` and `fails` see its results and errors). Values are written as the printer
//!   writes constants (`1.5`, `-inf`, `nan:0x…`, `7`, `true`), typed by the signature; a tape
//!   value with a `.`, an exponent, `inf` or `nan` is an f64, `true`/`false` a bool, else an i64.
//!
//! `UPDATE_EXPECT=1 cargo test -p pinv-core --test ir_files` rewrites each file's IR with what the
//! printer writes, keeping the header.

use pinv_core::interp::{InterpConfig, TapeRecorder, TapeSource};
use pinv_core::ir::constant::{parse_f64, parse_i64};
use pinv_core::ir::read::parse_module;
use pinv_core::ir::verify::verify_module;
use pinv_core::ir::write::{write_module, WriteOptions};
use pinv_core::ir::{Const, FuncKind, Module, Type};
use pinv_core::jit::{Engine, Runner};
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Header {
    /// The header's text, kept when blessing.
    text: String,
    error: Option<String>,
    spans: bool,
    /// The `run:` directives, as written after `run:`.
    runs: Vec<String>,
}

/// What a `run:` directive expects.
#[derive(Debug)]
enum Expect {
    Results(Vec<Const>),
    Fails(String),
    Records(Vec<Const>),
}

/// A parsed `run:` directive.
struct Run {
    func: String,
    args: Vec<Const>,
    theta: Option<Vec<Const>>,
    expect: Expect,
}

/// Splits `a, b, c` at top-level commas (none of the values has one inside).
fn list(text: &str) -> Vec<&str> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    text.split(',').map(str::trim).collect()
}

/// A value of type `ty`.
fn value(text: &str, ty: Type) -> Result<Const, String> {
    let v = match ty {
        Type::F64 => parse_f64(text).map(Const::F64),
        Type::I64 => parse_i64(text).map(Const::I64),
        Type::Bool => match text {
            "true" => Some(Const::Bool(true)),
            "false" => Some(Const::Bool(false)),
            _ => None,
        },
    };
    v.ok_or_else(|| format!("`{text}` is not a {ty}"))
}

/// A tape value, typed by how it is written.
fn tape_value(text: &str) -> Result<Const, String> {
    let ty = if text == "true" || text == "false" {
        Type::Bool
    } else if text.contains(['.', 'e', 'E']) || text.contains("inf") || text.contains("nan") {
        Type::F64
    } else {
        Type::I64
    };
    value(text, ty)
}

fn tape(text: &str) -> Result<Vec<Const>, String> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| format!("a tape is written `[v, ...]`, not `{text}`"))?;
    list(inner).into_iter().map(tape_value).collect()
}

/// Parses `%F(ARGS) [theta [..]] (== RESULTS | fails "TEXT" | records [..])` against `module`.
fn parse_run(text: &str, module: &Module) -> Result<Run, String> {
    let text = text.trim();
    let rest = text
        .strip_prefix('%')
        .ok_or_else(|| format!("a run starts with `%function(`: {text}"))?;
    let open = rest.find('(').ok_or("no `(` after the function name")?;
    let func = rest[..open].to_string();
    let close = rest.find(')').ok_or("no `)` after the arguments")?;
    let id = module
        .get(&func)
        .ok_or_else(|| format!("no function `{func}`"))?;
    let sig = &module.functions[id].sig;
    let args: Vec<Const> = list(&rest[open + 1..close])
        .into_iter()
        .zip(&sig.params)
        .map(|(t, &ty)| value(t, ty))
        .collect::<Result<_, _>>()?;
    if args.len() != sig.params.len() {
        return Err(format!("`{func}` takes {} arguments", sig.params.len()));
    }
    let mut rest = rest[close + 1..].trim();
    let mut theta = None;
    if let Some(after) = rest.strip_prefix("theta") {
        let end = after.find(']').ok_or("no `]` after the θ tape")?;
        theta = Some(tape(&after[..=end])?);
        rest = after[end + 1..].trim();
    }
    let expect = if let Some(r) = rest.strip_prefix("==") {
        let r = r.trim();
        let inner = r
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(r);
        let results: Vec<Const> = list(inner)
            .into_iter()
            .zip(&sig.returns)
            .map(|(t, &ty)| value(t, ty))
            .collect::<Result<_, _>>()?;
        if results.len() != sig.returns.len() {
            return Err(format!("`{func}` returns {} values", sig.returns.len()));
        }
        Expect::Results(results)
    } else if let Some(r) = rest.strip_prefix("fails") {
        let r = r.trim();
        let want = r
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .ok_or("`fails` takes a quoted message")?;
        Expect::Fails(want.to_string())
    } else if let Some(r) = rest.strip_prefix("records") {
        Expect::Records(tape(r)?)
    } else {
        return Err(format!(
            "a run ends with `== …`, `fails \"…\"` or `records […]`: {text}"
        ));
    };
    Ok(Run {
        func,
        args,
        theta,
        expect,
    })
}

/// Whether two lists of values are the same bit for bit.
fn same(a: &[Const], b: &[Const]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.ty() == y.ty() && x.bits() == y.bits())
}

fn show(values: &[Const]) -> String {
    let v: Vec<String> = values.iter().map(Const::to_string).collect();
    format!("[{}]", v.join(", "))
}

/// A recorder compiled code cannot write directly (it is not a plain [`TapeRecorder`]): every
/// `record` and `segment` is a callback through the θ source's methods.
struct Forwarding(TapeRecorder);

impl pinv_core::interp::ThetaSource for Forwarding {
    fn theta(
        &mut self,
        domain: pinv_core::ir::Domain,
        at: &pinv_core::interp::ThetaAddress<'_>,
    ) -> Result<Const, pinv_core::interp::ThetaError> {
        self.0.theta(domain, at)
    }

    fn choice(
        &mut self,
        n: u32,
        at: &pinv_core::interp::ThetaAddress<'_>,
    ) -> Result<u32, pinv_core::interp::ThetaError> {
        self.0.choice(n, at)
    }

    fn record(
        &mut self,
        value: Const,
        at: &pinv_core::interp::ThetaAddress<'_>,
    ) -> Result<(), pinv_core::interp::ThetaError> {
        self.0.record(value, at)
    }

    fn segment(
        &mut self,
        op: pinv_core::ir::SegmentOp,
    ) -> Result<(), pinv_core::interp::ThetaError> {
        self.0.segment(op)
    }
}

/// Runs one directive in `engine`, a PGF's recorder `wrapped` in [`Forwarding`] or plain; what
/// went wrong, if anything.
fn execute(run: &Run, module: &Arc<Module>, engine: Engine, wrapped: bool) -> Result<(), String> {
    let runner = Runner::new(Arc::clone(module), engine).with_config(InterpConfig::default());
    let id = module
        .get(&run.func)
        .ok_or_else(|| format!("no function `{}`", run.func))?;
    if engine == Engine::Jit {
        runner
            .compiled(id)
            .map_err(|e| format!("does not compile: {e}"))?;
    }
    let mut source = run.theta.clone().map(TapeSource::new);
    let mut plain = TapeRecorder::new();
    let mut forwarding = Forwarding(TapeRecorder::new());
    let recorder: &mut dyn pinv_core::interp::ThetaSource =
        if wrapped { &mut forwarding } else { &mut plain };
    let pgf = matches!(
        module.functions[id].kind,
        FuncKind::GeneratedPgf { .. } | FuncKind::Pgf { .. }
    );
    let theta: Option<&mut dyn pinv_core::interp::ThetaSource> = match (&mut source, &run.expect) {
        (Some(t), _) => Some(t),
        (None, Expect::Records(_)) => Some(recorder),
        (None, _) if pgf => Some(recorder),
        (None, _) => None,
    };
    let outcome = runner.call_traced(id, &run.args, theta);
    match (&run.expect, outcome) {
        (Expect::Results(want), Ok(o)) => {
            if !same(&o.results, want) {
                return Err(format!("gave {}, not {}", show(&o.results), show(want)));
            }
            if let Some(t) = &source {
                if t.pos() != run.theta.as_ref().map_or(0, Vec::len) {
                    return Err(format!("read {} of the θ tape's values", t.pos()));
                }
            }
            Ok(())
        }
        (Expect::Records(want), Ok(_)) => {
            let got = if wrapped {
                forwarding.0.into_values()
            } else {
                plain.into_values()
            };
            if same(&got, want) {
                Ok(())
            } else {
                Err(format!("recorded {}, not {}", show(&got), show(want)))
            }
        }
        (Expect::Fails(want), Err(e)) if e.to_string().contains(want.as_str()) => Ok(()),
        (Expect::Fails(want), Err(e)) => Err(format!("failed with `{e}`, not `{want}`")),
        (Expect::Fails(want), Ok(o)) => Err(format!(
            "gave {} where it should fail with `{want}`",
            show(&o.results)
        )),
        (_, Err(e)) => Err(format!("failed: {e}")),
    }
}

/// Splits a file into its header and its IR.
fn split(text: &str) -> (Header, &str) {
    let mut header = Header {
        text: String::new(),
        error: None,
        spans: false,
        runs: Vec::new(),
    };
    let mut rest = text;
    while !rest.is_empty() {
        let (line, after) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let trimmed = line.trim();
        if !(trimmed.is_empty() || trimmed.starts_with(';')) {
            break;
        }
        let comment = trimmed.trim_start_matches(';').trim();
        if let Some(e) = comment.strip_prefix("error:") {
            header.error = Some(e.trim().to_string());
        } else if let Some(s) = comment.strip_prefix("spans:") {
            header.spans = s.trim() == "true";
        } else if let Some(r) = comment.strip_prefix("run:") {
            header.runs.push(r.trim().to_string());
        }
        header.text.push_str(line);
        header.text.push('\n');
        rest = after;
    }
    (header, rest)
}

/// Runs one file; returns what went wrong, if anything.
fn run(path: &Path, bless: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (header, body) = split(&text);
    let opts = WriteOptions {
        spans: header.spans,
    };
    let parsed = parse_module(&text);
    let outcome = match &parsed {
        Err(e) => Err(e.to_string()),
        Ok(module) => verify_module(module).map_err(|e| e.to_string()),
    };
    match (&header.error, &outcome) {
        (None, Err(e)) => return Err(format!("unexpected error: {e}")),
        (Some(want), Ok(())) => return Err(format!("expected an error containing `{want}`")),
        (Some(want), Err(e)) if !e.contains(want.as_str()) => {
            return Err(format!("expected an error containing `{want}`, found: {e}"))
        }
        _ => {}
    }
    let Ok(module) = parsed else {
        return Ok(());
    };
    let printed = write_module(&module, &opts);
    if printed != body {
        if bless {
            std::fs::write(path, format!("{}{printed}", header.text)).map_err(|e| e.to_string())?;
        } else {
            return Err(format!(
                "printed text differs (UPDATE_EXPECT=1 to update):\n--- file\n{body}--- printed\n{printed}"
            ));
        }
    }
    // The printer's text reads back to the same text.
    let again = parse_module(&printed).map_err(|e| format!("printed text does not parse: {e}"))?;
    if write_module(&again, &opts) != printed {
        return Err("printed text does not print back the same".to_string());
    }
    if !header.runs.is_empty() && header.error.is_some() {
        return Err("a file that must fail to verify has nothing to run".to_string());
    }
    let module = Arc::new(module);
    for text in &header.runs {
        let run = parse_run(text, &module).map_err(|e| format!("run: {text}: {e}"))?;
        for (engine, wrapped) in [
            (Engine::Interp, false),
            (Engine::Jit, false),
            (Engine::Jit, true),
        ] {
            execute(&run, &module, engine, wrapped).map_err(|e| {
                let through = if wrapped { ", through callbacks" } else { "" };
                format!("run: {text} ({engine:?}{through}): {e}")
            })?;
        }
    }
    Ok(())
}

#[test]
fn ir_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ir");
    // One variable re-blesses every expected output of the project (expect-test's own name).
    let bless = std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .ir files in {}", dir.display());
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| run(p, bless).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
