//! `pinv show FILE [FUNC]`: print the IR of a module or one function, as text or Graphviz.

use crate::commands::run::find_function;
use crate::output;
use crate::Outcome;
use clap::{Args, ValueEnum};
use pinv::ir::dot::{function_to_dot, module_to_dot};
use pinv::ir::write::{write_function, write_module, WriteOptions};
use pinv::ir::{FuncId, FuncKind, Module};
use std::path::PathBuf;

/// Print the SSA IR of a module, or of one function.
///
/// Example: `pinv show tests/corpus/loops.pinv triangle --format dot | dot -Tsvg > cfg.svg`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// Only this function (default: all of them).
    pub function: Option<String>,
    /// Text IR, or a Graphviz graph of the control-flow graph.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print the IR inside a JSON document.
    #[arg(long)]
    pub json: bool,
    /// Show each instruction's source span (`@start..end`, byte offsets).
    #[arg(long)]
    pub spans: bool,
    /// Show the inverse, its PGF and its θ schema instead: of FUNC, or of every function.
    #[arg(long)]
    pub inverse: bool,
    /// With `--inverse`: the time each phase of building the inverse took (prepare, isolation,
    /// walk, simplify, finish, verify, schema), compiling it to native code, and each e-graph
    /// run's iterations, nodes and time (which vary from run to run; without it the output is
    /// the same every time). With `--json`: a `timings` field.
    #[arg(long, requires = "inverse")]
    pub timings: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Dot,
}

pub fn run(args: &ShowArgs) -> Outcome {
    if args.inverse {
        return show_inverse(args);
    }
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let module = loaded.module();
    let selected: Vec<FuncId> = match &args.function {
        Some(name) => match find_function(&loaded, name, args.json) {
            Ok((id, _)) => vec![id],
            Err(outcome) => return outcome,
        },
        None => module.iter().map(|(id, _)| id).collect(),
    };
    let opts = WriteOptions { spans: args.spans };
    if args.json {
        let functions: Vec<serde_json::Value> = selected
            .iter()
            .map(|&id| function_json(module, id, args.format, &opts))
            .collect();
        let value = serde_json::json!({
            "file": loaded.file.name(),
            "functions": functions,
        });
        outln!("{value}");
        return Outcome::Success;
    }
    let text = match (args.format, &args.function) {
        (Format::Text, None) => write_module(module, &opts),
        (Format::Text, Some(_)) => write_function(module, selected[0], &opts),
        (Format::Dot, None) => module_to_dot(module),
        (Format::Dot, Some(_)) => function_to_dot(module, selected[0]),
    };
    out!("{text}");
    if !text.ends_with('\n') {
        outln!();
    }
    Outcome::Success
}

fn function_json(
    module: &Module,
    id: FuncId,
    format: Format,
    opts: &WriteOptions,
) -> serde_json::Value {
    let f = &module.functions[id];
    let theta_from = match &f.kind {
        FuncKind::Inverse { outputs, .. } => *outputs,
        _ => f.sig.params.len(),
    };
    let params: Vec<serde_json::Value> = f
        .sig
        .params
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            serde_json::json!({
                "name": f.param_names.get(i),
                "type": ty,
                "theta": i >= theta_from,
            })
        })
        .collect();
    let mut value = serde_json::json!({
        "name": f.name,
        "kind": f.kind,
        "params": params,
        "returns": f.sig.returns,
        "blocks": f.layout.len(),
        "ir": write_function(module, id, opts),
    });
    if format == Format::Dot {
        value["dot"] = serde_json::Value::String(function_to_dot(module, id));
    }
    value
}

fn show_inverse(args: &ShowArgs) -> Outcome {
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let names = match loaded.selected_functions(args.function.as_deref(), args.json) {
        Ok(names) => names,
        Err(outcome) => return outcome,
    };
    let one = args.function.is_some();
    let mut outcome = Outcome::Success;
    let mut documents: Vec<serde_json::Value> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let inverse = match loaded.program.invert(name) {
            Ok(inverse) => inverse,
            Err(e) => {
                // One function that cannot be inverted does not hide the others.
                let failed = output::library_error(&loaded.file, &e, args.json);
                if one {
                    return failed;
                }
                outcome = outcome.max(failed);
                continue;
            }
        };
        if args.json {
            let mut doc = inverse_json(&inverse);
            if args.timings {
                doc["timings"] = timings_json(&inverse);
            }
            documents.push(doc);
            continue;
        }
        if i > 0 && args.format == Format::Text {
            outln!();
        }
        show_one_inverse(args, &inverse);
    }
    if args.json {
        // One function: its document, as always; every function: them all, in order.
        match documents.as_slice() {
            [doc] if one => outln!("{doc}"),
            _ => outln!("{}", serde_json::json!({ "functions": documents })),
        }
    }
    outcome
}

/// The JSON document of one inverse.
fn inverse_json(inverse: &pinv::Inverse) -> serde_json::Value {
    let schema = inverse.schema();
    serde_json::json!({
        "function": inverse.function(),
        "theta": schema.slots,
        "theta_fixed_length": schema.is_fixed(),
        "control_choices": schema.control_choices().len(),
        "inverse_ir": inverse.inverse_ir(),
        "pgf_ir": inverse.pgf_ir(),
        "pgf": inverse.pgf_id().err(),
        "isolation": inverse.isolation(),
    })
}

/// The time each phase of building `inverse` took, and compiling it to native code (which it
/// does now), in milliseconds: `{"phases": [{"phase", "ms"}], "total_ms", "native_ms"}`
/// (`native_ms` null where native code cannot be had).
fn timings_json(inverse: &pinv::Inverse) -> serde_json::Value {
    let phases = inverse.phases();
    let native = native_time(inverse);
    serde_json::json!({
        "phases": phases.0.iter().map(|(name, t)| serde_json::json!({
            "phase": name,
            "ms": t.as_secs_f64() * 1e3,
        })).collect::<Vec<_>>(),
        "total_ms": phases.total().as_secs_f64() * 1e3,
        "native_ms": native.ok().map(|t| t.as_secs_f64() * 1e3),
    })
}

/// How long compiling `inverse` to native code takes (now, on first use), or why it cannot be.
fn native_time(inverse: &pinv::Inverse) -> Result<std::time::Duration, String> {
    let started = std::time::Instant::now();
    inverse
        .native()
        .map(|_| started.elapsed())
        .map_err(|e| e.to_string())
}

/// One inverse as text (θ schema, control choices, isolation, the inverse and PGF IR) or as a
/// Graphviz graph.
fn show_one_inverse(args: &ShowArgs, inverse: &pinv::Inverse) {
    let schema = inverse.schema();
    if args.format == Format::Dot {
        outln!(
            "{}",
            function_to_dot(inverse.module(), inverse.inverse_id())
        );
        return;
    }
    outln!("; θ schema of the inverse of `{}`", inverse.function());
    for line in schema.to_string().lines() {
        outln!(";   {line}");
    }
    if !schema.is_fixed() {
        outln!(";   (reads marked \"on some paths\" happen only on some paths: the tape's length varies)");
    }
    let choices = schema.control_choices();
    if choices.is_empty() {
        outln!(
            "; control flow: no choice left to θ (every return, merge and loop count is computed)"
        );
    } else {
        outln!("; control flow: {} choice(s) left to θ:", choices.len());
        for c in choices {
            let at = c
                .location
                .as_deref()
                .map(|l| format!("  [{l}]"))
                .unwrap_or_default();
            outln!(
                ";   {}{at}",
                c.role.trim_start_matches(pinv::theta::CONTROL_FLOW).trim()
            );
        }
    }
    let isolation = inverse.isolation();
    if !isolation.is_empty() {
        outln!(";");
        outln!("; e-graph isolation of reused unknowns:");
        for report in isolation {
            let text = if args.timings {
                format!("{report:#}")
            } else {
                report.summary()
            };
            for line in text.lines() {
                outln!(";   {line}");
            }
        }
    }
    if args.timings {
        let phases = inverse.phases();
        outln!(";");
        outln!(
            "; time to build the inverse: {:.2} ms ({phases})",
            phases.total().as_secs_f64() * 1e3
        );
        match native_time(inverse) {
            Ok(t) => outln!(
                "; time to compile it to native code: {:.2} ms",
                t.as_secs_f64() * 1e3
            ),
            Err(why) => outln!("; no native code: {why}"),
        }
    }
    outln!();
    out!("{}", inverse.inverse_ir());
    match inverse.pgf_id() {
        Ok(_) => {
            outln!();
            out!("{}", inverse.pgf_ir());
        }
        Err(why) => outln!("\n; no PGF: {why}"),
    }
    let helpers = inverse.helpers_ir();
    if !helpers.is_empty() {
        outln!("\n; helpers they call:\n");
        out!("{helpers}");
    }
}
