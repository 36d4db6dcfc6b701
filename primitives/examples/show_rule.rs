//! Prints the inverse and PGF a standard rule emits: `cargo run -p pinv-primitives --example
//! show_rule -- fmul uu`.

use pinv_core::ir::Opcode;
use pinv_primitives::testing::{case_name, Case};
use pinv_primitives::{Pattern, Stack};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(op), Some(code)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: show_rule OPCODE PATTERN (u = unknown, k = known), e.g. fmul uk");
        std::process::exit(2);
    };
    let Some(op) = Opcode::from_name(op) else {
        eprintln!("no opcode `{op}`");
        std::process::exit(2);
    };
    let Some(pattern) = Pattern::every(op.arity())
        .into_iter()
        .find(|p| case_name(op, p).ends_with(&format!("_{code}")))
    else {
        eprintln!("no pattern `{code}` for {op}");
        std::process::exit(2);
    };
    match Case::new(&Stack::standard(), op, pattern) {
        Ok(case) => print!("{}", case.text()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
