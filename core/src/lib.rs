//! pinv-core: the `.pinv` front end, the SSA IR, its verifier and the reference interpreter.
//!
//! The data flows one way, and each stage's type says which stage it is:
//!
//! ```text
//! source ─syntax::parse─▶ syntax::ast ─typeck::check─▶ typeck::hir ─lower::lower─▶ ir::Module
//!        ─ir::verify─▶ interp (reference semantics: semantics)  or  jit (Cranelift, code cache)
//! ```
//!
//! [`frontend::compile_source`] runs the whole front end (it is not [`jit::compile`], which turns
//! IR into native code); [`diagnostic`] renders its errors.

pub mod diagnostic;
pub mod error;
pub mod frontend;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod lower;
pub mod rng;
pub mod semantics;
pub mod span;
pub mod stack;
pub mod syntax;
pub mod typeck;

pub use error::{CompileError, Error, Result};
pub use frontend::{compile_source, Compiled};
pub use span::{SourceFile, Span};
