//! The SSA IR: typed entity ids, blocks with block parameters, one opcode per primitive, and the
//! inverse-only instructions (`theta`, `check`, `choice`).
//!
//! - [`entities`]: the typed ids ([`FuncId`], [`Block`], [`Value`], [`Inst`]).
//! - [`opcode`]: the table of primitive operations.
//! - [`instr`]: instructions; [`function`]: functions and how to build them; [`module`]: modules.
//! - [`write`](mod@write) and [`read`]: the text form, which round-trips; [`dot`]: Graphviz output.
//! - [`compact`]: dense renumbering in layout order (what the text form's numbers show).
//! - [`verify`]: the verifier, whose module docs list the invariants it checks.
//! - [`outline`]: moving a piece of a function into a helper it calls.
//! - Passes that keep every result: [`cse`], [`dce`] (dead code), [`merge_blocks`],
//!   [`thread_jumps`] (edges past blocks that only jump on), [`trivial_params`] (block
//!   parameters that always hold one value), [`implied`] (checks and branches the
//!   path already decided), [`unroll`] (loops whose trips are constants), [`inline`] (calls of
//!   small functions that do not recurse); [`dominators`] for them and the verifier.

pub mod closed;
pub mod compact;
pub mod constant;
pub mod counted_recursion;
pub mod cse;
pub mod dce;
pub mod domain;
pub mod dominators;
pub mod dot;
pub mod entities;
pub mod fold;
pub mod function;
pub mod guard_clauses;
pub mod implied;
pub mod inline;
pub mod instr;
pub mod merge_blocks;
pub mod module;
pub mod opcode;
pub mod outline;
pub mod read;
pub mod schedule;
pub mod tail_calls;
pub mod tail_dup;
pub mod thread_jumps;
pub mod trivial_params;
pub mod types;
pub mod unroll;
pub mod verify;
pub mod write;

#[cfg(test)]
pub(crate) mod testing;

pub use constant::{f64_close, Const};
pub use domain::Domain;
pub use entities::{Block, FuncId, Inst, Value};
pub use function::{BlockData, FuncKind, Function, Signature, ValueData, ValueDef};
pub use instr::{BlockCall, InstData, InstKind, SegmentOp, ThetaRead, ValueList};
pub use module::Module;
pub use opcode::{OpClass, Opcode};
pub use read::{parse_module, IrParseError};
pub use types::Type;
pub use verify::{verify_function, verify_module, VerifyError};
pub use write::{write_function, write_module, WriteOptions};
