//! The `.pinv` syntax: tokens, the lexer, the AST and the parser.

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod token;

pub use parser::parse;
