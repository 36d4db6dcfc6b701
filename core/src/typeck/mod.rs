//! Name resolution and type checking: AST → typed tree ([`hir`]).
//!
//! [`check`] works in two passes over the module's items, in source order, and stops at the first
//! error:
//! 1. `decl::Items::collect` resolves every item's header (parameters, return type) and the
//!    function namespace, so that bodies may call functions defined later;
//! 2. for each item, `decl::Items::kind` checks an `inverse` or `pgf` declaration against its
//!    function, then `body::check_function` checks the body.
//!
//! The submodules, each owning one concern:
//! - `decl` owns headers, function names, and the `inverse` / `pgf` signature rules;
//! - `types` owns written types and where tuples may be written;
//! - `scope` owns lexical scopes and the local table of one function;
//! - `body` owns blocks and statements, the body's type, divergence and which span to blame;
//! - `expr` owns expressions;
//! - `ops` owns the opcode of each operator and cast on each type.

mod body;
mod decl;
mod expr;
pub mod hir;
mod ops;
mod scope;
mod types;

#[cfg(test)]
mod tests;

use crate::error::CompileError;
use crate::syntax::ast;

/// Checks a parsed module.
pub fn check(module: &ast::Module) -> Result<hir::Program, CompileError> {
    let items = decl::Items::collect(module)?;
    let functions = module
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let kind = items.kind(index, item)?;
            body::check_function(item, index, kind, &items)
        })
        .collect::<Result<_, _>>()?;
    Ok(hir::Program { functions })
}
