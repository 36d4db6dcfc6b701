//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod completions;
pub mod invert;
pub mod man;
pub mod pgf;
pub mod plot;
pub mod primitives;
pub mod run;
pub mod sample;
pub mod show;
