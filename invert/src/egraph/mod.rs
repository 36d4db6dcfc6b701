//! E-graph isolation of reused unknowns, and simplification of generated code (egg 0.11).
//!
//! (Module overview; see the submodules.)

pub mod analysis;
pub mod config;
pub mod convert;
pub mod cost;
pub mod helpers;
pub mod hook;
pub mod isolate;
pub mod lang;
pub mod numeric;
pub mod plan;
pub mod rules;
pub mod simplify;

pub use config::{IsolationConfig, IsolationReport, Outcome, RunReport, Stop};
pub use isolate::{isolate_function, Isolated};
pub use rules::Family;
