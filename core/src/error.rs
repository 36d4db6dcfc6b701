//! The errors of pinv-core: one enum per stage, all with source spans, and the crate's [`Error`](enum@Error).
//!
//! - [`CompileError`]: anything wrong with a program (lexing, parsing, names, types, signatures).
//! - [`crate::ir::read::IrParseError`]: malformed IR text.
//! - [`crate::ir::verify::VerifyError`]: an IR function that breaks an invariant (a bug in a pass,
//!   or hand-written IR).
//! - [`crate::interp::RuntimeError`]: a failure while running (integer division by zero, a failed
//!   `check`, `fail(...)`, the step or depth limit).
//!
//! [`crate::diagnostic`] renders any of them with the offending source line and a caret.

use crate::span::Span;
use thiserror::Error;

/// An error in a program, found while lexing, parsing or checking it. Every variant has a span.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum CompileError {
    // ---- lexing
    #[error("unexpected character `{ch}`")]
    UnexpectedChar { ch: char, span: Span },
    #[error("unterminated string literal")]
    UnterminatedString { span: Span },
    #[error("unterminated block comment")]
    UnterminatedComment { span: Span },
    #[error("invalid number literal `{text}`")]
    InvalidNumber { text: String, span: Span },
    #[error("integer literal `{text}` is too large for i64")]
    IntegerTooLarge { text: String, span: Span },

    // ---- parsing
    #[error("the file is too large: {size} bytes (the limit is {limit})")]
    FileTooLarge {
        size: usize,
        limit: usize,
        span: Span,
    },
    #[error("expected {expected}, found {found}")]
    Expected {
        expected: String,
        found: String,
        span: Span,
    },
    #[error("comparison operators cannot be chained")]
    ChainedComparison { span: Span },
    #[error("string literals are only allowed as the reason in `fail(\"...\")`")]
    StringOutsideFail { span: Span },
    #[error("too deeply nested (more than {limit} levels)")]
    TooDeep { limit: usize, span: Span },
    #[error(
        "expression too long: more than {limit} operators in one expression (split it with `let`)"
    )]
    TooLong { limit: usize, span: Span },

    // ---- names
    #[error("unknown name `{name}`")]
    UnknownName { name: String, span: Span },
    #[error("unknown function `{name}`")]
    UnknownFunction { name: String, span: Span },
    #[error("unknown type `{name}`")]
    UnknownType { name: String, span: Span },
    #[error("the function `{name}` is defined more than once")]
    DuplicateFunction {
        name: String,
        span: Span,
        first: Span,
    },
    #[error("`{name}` is a primitive and cannot be redefined")]
    ReservedName { name: String, span: Span },
    #[error("the parameter `{name}` appears more than once")]
    DuplicateParam { name: String, span: Span },
    #[error("cannot assign twice to immutable `{name}`")]
    AssignImmutable {
        name: String,
        span: Span,
        decl: Span,
    },

    // ---- types
    #[error("mismatched types: expected `{expected}`, found `{found}`")]
    MismatchedTypes {
        expected: String,
        found: String,
        span: Span,
    },
    #[error("cannot apply `{op}` to `{ty}`")]
    BadOperand { op: String, ty: String, span: Span },
    #[error("cannot cast `{from}` as `{to}`")]
    BadCast {
        from: String,
        to: String,
        span: Span,
    },
    #[error("`{name}` takes {expected} argument(s) but {found} were given")]
    WrongArgCount {
        name: String,
        expected: usize,
        found: usize,
        span: Span,
    },
    #[error("a tuple of {found} values cannot be destructured into {expected} names")]
    PatternArity {
        expected: usize,
        found: usize,
        span: Span,
    },
    #[error("`{what}` is not allowed here: {why}")]
    NotAllowed {
        what: String,
        why: String,
        span: Span,
    },

    // ---- inverse and pgf declarations
    #[error("{kind} of unknown function `{name}`")]
    DeclarationOfUnknown {
        kind: &'static str,
        name: String,
        span: Span,
    },
    #[error("`{name}` has more than one {kind} declaration")]
    DuplicateDeclaration {
        kind: &'static str,
        name: String,
        span: Span,
        first: Span,
    },
    #[error("inverse of `{name}` has the wrong signature: {detail}")]
    InverseSignature {
        name: String,
        detail: String,
        span: Span,
    },
    #[error("pgf of `{name}` has the wrong signature: {detail}")]
    PgfSignature {
        name: String,
        detail: String,
        span: Span,
    },
}

impl CompileError {
    /// Where the error is.
    pub fn span(&self) -> Span {
        use CompileError::*;
        match self {
            UnexpectedChar { span, .. }
            | UnterminatedString { span }
            | UnterminatedComment { span }
            | InvalidNumber { span, .. }
            | IntegerTooLarge { span, .. }
            | Expected { span, .. }
            | ChainedComparison { span }
            | StringOutsideFail { span }
            | TooDeep { span, .. }
            | FileTooLarge { span, .. }
            | TooLong { span, .. }
            | UnknownName { span, .. }
            | UnknownFunction { span, .. }
            | UnknownType { span, .. }
            | DuplicateFunction { span, .. }
            | ReservedName { span, .. }
            | DuplicateParam { span, .. }
            | AssignImmutable { span, .. }
            | MismatchedTypes { span, .. }
            | BadOperand { span, .. }
            | BadCast { span, .. }
            | WrongArgCount { span, .. }
            | PatternArity { span, .. }
            | NotAllowed { span, .. }
            | DeclarationOfUnknown { span, .. }
            | DuplicateDeclaration { span, .. }
            | InverseSignature { span, .. }
            | PgfSignature { span, .. } => *span,
        }
    }

    /// Secondary locations worth showing, with what they are.
    pub fn secondary(&self) -> Vec<(Span, String)> {
        use CompileError::*;
        match self {
            DuplicateFunction { first, .. } | DuplicateDeclaration { first, .. } => {
                vec![(*first, "first defined here".to_string())]
            }
            AssignImmutable { name, decl, .. } => {
                vec![(
                    *decl,
                    format!(
                        "first assignment to `{name}`; write `let mut {name}` to make it mutable"
                    ),
                )]
            }
            _ => Vec::new(),
        }
    }
}

/// Any error of pinv-core.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Error {
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error(transparent)]
    IrParse(#[from] crate::ir::read::IrParseError),
    #[error(transparent)]
    Verify(#[from] crate::ir::verify::VerifyError),
    #[error(transparent)]
    Runtime(#[from] crate::interp::RuntimeError),
    #[error(transparent)]
    Jit(#[from] crate::jit::JitError),
}

/// The result type of pinv-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;
