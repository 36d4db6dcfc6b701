//! `pinv run FILE FUNC ARGS...`: run a function forward (native code, or the interpreter).

use crate::output::{self, Loaded};
use crate::values::{format_values, json_value, parse_value};
use crate::Outcome;
use clap::Args;
use pinv::ir::{Const, FuncId, Function};
use pinv::InterpConfig;
use std::path::PathBuf;

/// Run a function on the given inputs and print its outputs.
///
/// Example: `pinv run tests/corpus/straight.pinv mul_add 2 3 4` prints `10.0`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function to run.
    pub function: String,
    /// One value per input: `1.5`, `-2`, `inf`, `nan`, `42`, `true`.
    pub args: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Stop with an error after this many executed instructions (at least 1).
    #[arg(long, default_value_t = pinv::DEFAULT_STEP_LIMIT, value_parser = crate::values::parse_step_limit)]
    pub step_limit: u64,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
}

pub fn run(args: &RunArgs) -> Outcome {
    let loaded = match output::load(&args.file, args.json) {
        Ok(l) => l,
        Err(outcome) => return outcome,
    };
    let (_, function) = match find_function(&loaded, &args.function, args.json) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    let inputs = match parse_inputs(function, &args.args) {
        Ok(inputs) => inputs,
        Err(message) => {
            return output::plain_error(args.json, "arguments", &message, Outcome::BadInput)
        }
    };
    let config = InterpConfig::default().with_step_limit(args.step_limit);
    let program = loaded
        .program
        .clone()
        .with_config(config)
        .with_engine(args.engine.engine);
    match program.run(&function.name, &inputs) {
        Ok(outputs) => {
            if args.json {
                let value = serde_json::json!({
                    "function": function.name,
                    "inputs": inputs.iter().map(|&c| json_value(c)).collect::<Vec<_>>(),
                    "outputs": outputs.iter().map(|&c| json_value(c)).collect::<Vec<_>>(),
                    "types": function.sig.returns.iter().map(|t| t.name()).collect::<Vec<_>>(),
                });
                outln!("{value}");
            } else {
                outln!("{}", format_values(&outputs));
            }
            Outcome::Success
        }
        Err(pinv::Error::Runtime(e)) => {
            output::located_error(&loaded.file, &e, args.json, "runtime", Outcome::Failure)
        }
        Err(e) => output::library_error(&loaded.file, &e, args.json),
    }
}

/// Finds a function of the module by name, reporting a missing one with the names there are.
pub fn find_function<'a>(
    loaded: &'a Loaded,
    name: &str,
    json: bool,
) -> Result<(FuncId, &'a Function), Outcome> {
    let module = loaded.module();
    match module.get(name) {
        Some(id) => Ok((id, &module.functions[id])),
        None => {
            let names: Vec<&str> = module.iter().map(|(_, f)| f.name.as_str()).collect();
            let message = format!(
                "no function `{name}` in `{}`; it has: {}",
                loaded.file.name(),
                if names.is_empty() {
                    "no functions".to_string()
                } else {
                    names.join(", ")
                }
            );
            Err(output::plain_error(
                json,
                "arguments",
                &message,
                Outcome::BadInput,
            ))
        }
    }
}

/// Parses one command-line value per parameter of `function`.
pub fn parse_inputs(function: &Function, args: &[String]) -> Result<Vec<Const>, String> {
    let params = &function.sig.params;
    if args.len() != params.len() {
        let described: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, ty)| match function.param_names.get(i) {
                Some(name) => format!("{name}: {ty}"),
                None => ty.to_string(),
            })
            .collect();
        return Err(format!(
            "`{}` takes {} input(s) ({}) but {} {} given",
            function.name,
            params.len(),
            described.join(", "),
            args.len(),
            if args.len() == 1 { "was" } else { "were" }
        ));
    }
    args.iter()
        .zip(params)
        .enumerate()
        .map(|(i, (text, &ty))| {
            parse_value(text, ty).map_err(|e| {
                let name = function.param_names.get(i).map_or("", String::as_str);
                format!("input {} (`{name}`): {e}", i + 1)
            })
        })
        .collect()
}
