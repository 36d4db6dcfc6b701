//! The front-end driver: source text → AST → typed tree → verified IR.

use crate::error::{CompileError, Error};
use crate::ir;
use crate::span::SourceFile;
use crate::typeck::{self, hir};
use crate::{lower, syntax};

/// A compiled module: the typed program and its IR.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub program: hir::Program,
    pub module: ir::Module,
}

/// Parses, checks, lowers, folds constants ([`ir::fold`]), removes dead code ([`ir::dce`]) and
/// verifies a source file.
///
/// Errors in the program are [`Error::Compile`]; an [`Error::Verify`] would be a bug in lowering.
pub fn compile_source(file: &SourceFile) -> Result<Compiled, Error> {
    let program = front_end(file.text())?;
    let mut module = lower::lower(&program);
    for f in module.functions.values_mut() {
        // Constants fold first, so that a branch on a condition of constants is one way.
        let changed = ir::fold::fold_until_stable(f);
        if changed {
            f.compact();
        }
    }
    // Then calls of total functions whose results nothing needs go too (known once every
    // callee is folded: a branch on constants may have hidden a division by zero).
    let total = ir::dce::total_functions(&module);
    for f in module.functions.values_mut() {
        let calls_total = f
            .insts
            .values()
            .any(|d| matches!(d.kind, ir::InstKind::Call { callee, .. } if total.contains(callee)));
        if calls_total && ir::fold::fold_until_stable_calling(f, &total) {
            f.compact();
        }
    }
    ir::verify::verify_module(&module)?;
    Ok(Compiled { program, module })
}

/// The largest source text the front end takes: time and memory grow with it (about 170
/// bytes of memory per byte of source, through the tree, the typed tree and the IR), and a
/// larger file is refused at once rather than after minutes and gigabytes.
pub const MAX_SOURCE_BYTES: usize = 8 << 20;

/// Parses and checks source text.
pub fn front_end(text: &str) -> Result<hir::Program, CompileError> {
    if text.len() > MAX_SOURCE_BYTES {
        return Err(CompileError::FileTooLarge {
            size: text.len(),
            limit: MAX_SOURCE_BYTES,
            span: crate::span::Span::new(0, 0),
        });
    }
    let ast = syntax::parse(text)?;
    typeck::check(&ast)
}
