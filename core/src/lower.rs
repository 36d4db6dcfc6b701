//! Lowering: typed tree → SSA IR. (Being written.)

use crate::check::hir;
use crate::ir;

/// Lowers a checked program to an IR module, one function per `fn`, `inverse` and `pgf`.
pub fn lower(program: &hir::Program) -> ir::Module {
    let _ = program;
    unimplemented!()
}
