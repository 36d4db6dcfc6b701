//! Name resolution and type checking: AST → typed tree ([`hir`]). (Being written.)

pub mod hir;

use crate::error::CompileError;
use crate::syntax::ast;

/// Checks a parsed module.
pub fn check(module: &ast::Module) -> Result<hir::Program, CompileError> {
    let _ = module;
    unimplemented!()
}
