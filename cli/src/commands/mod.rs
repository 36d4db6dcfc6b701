//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod invert;
pub mod pgf;
pub mod primitives;
pub mod run;
pub mod show;
