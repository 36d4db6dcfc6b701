//! The parser. (Being written.)

use super::ast;
use crate::error::CompileError;

/// Parses a whole `.pinv` module.
pub fn parse(text: &str) -> Result<ast::Module, CompileError> {
    let _ = text;
    unimplemented!()
}
