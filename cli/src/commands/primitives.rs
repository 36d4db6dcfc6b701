//! `pinv primitives`: every primitive with its inverse rules and θ domains, from the table itself.

use crate::Outcome;
use clap::Args;
use pinv::primitives::catalogue::{catalogue, render};
use pinv::primitives::Stack;

/// List every primitive operation with its parametric inverses: for each pattern of known (`k`)
/// and unknown (`?`) operands, the rule, its θ reads and domains, and its domain checks.
///
/// Example: `pinv primitives | grep -A4 '^fmul'`.
#[derive(Args, Debug)]
pub struct PrimitivesArgs {
    /// Print the catalogue as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &PrimitivesArgs) -> Outcome {
    let entries = catalogue(&Stack::standard());
    if args.json {
        outln!("{}", serde_json::json!({ "primitives": entries }));
    } else {
        out!("{}", render(&entries));
    }
    Outcome::Success
}
