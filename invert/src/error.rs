//! The errors of the `pinv` library: one enum, every variant saying what and where.

use pinv_core::diagnostic::Located;
use pinv_core::interp::RuntimeError;
use pinv_core::Span;
use thiserror::Error;

/// Anything that can go wrong in the library API.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Error {
    /// The program does not compile (syntax, names, types, signatures).
    #[error(transparent)]
    Compile(#[from] pinv_core::CompileError),
    /// The file could not be read.
    #[error("cannot read `{path}`: {message}")]
    Io { path: String, message: String },
    /// No function of that name.
    #[error("no function `{name}`; the module has: {available}")]
    NoSuchFunction { name: String, available: String },
    /// Wrong number or types of values for a function's inputs, outputs or θ.
    #[error("{0}")]
    BadValues(String),
    /// The function cannot be inverted (yet): names the function and the construct.
    #[error("cannot invert `{function}`: {reason}")]
    Unsupported {
        function: String,
        reason: String,
        span: Span,
    },
    /// The function, with what it calls, is larger than an inversion may take
    /// ([`crate::reorient::ReorientOptions::max_instructions`]).
    #[error(
        "`{function}` is too large to invert: {size} IR instructions with the functions it calls \
         (the limit is {limit}); split the work into smaller functions, invert a smaller part, \
         or raise the limit (`--max-instructions`)"
    )]
    TooLarge {
        function: String,
        size: usize,
        limit: usize,
        span: Span,
    },
    /// Building the inverse took longer than the time limit it was given
    /// ([`crate::reorient::ReorientOptions::time_limit`]).
    #[error(
        "building the inverse of `{function}` took longer than the time limit of {} s",
        limit.as_secs_f64()
    )]
    TimedOut {
        function: String,
        limit: std::time::Duration,
        span: Span,
    },
    /// No layer of the stack has a rule for this callee and pattern.
    #[error("cannot invert `{function}`: no inverse rule for {callee} with operands {pattern}")]
    NoRule {
        function: String,
        callee: String,
        pattern: String,
        span: Span,
    },
    /// Running forward code, an inverse or a PGF failed: a runtime error, a domain error (a failed
    /// `check`, θ out of domain) or a step limit.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Native code could not be made for a function (`Engine::Interp` still runs it).
    #[error("compiling to native code failed: {0}")]
    Jit(#[from] pinv_core::jit::JitError),
    /// A bug in pinv: generated code broke an IR invariant.
    #[error("internal error (please report it): {0}")]
    Internal(String),
}

impl Error {
    /// Where in the source the error is, if it has a place.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Compile(e) => Some(e.span()),
            Error::Unsupported { span, .. }
            | Error::NoRule { span, .. }
            | Error::TooLarge { span, .. }
            | Error::TimedOut { span, .. } => Some(*span),
            Error::Runtime(e) => Some(e.span),
            _ => None,
        }
    }

    /// Whether this is a domain error of an inverse: θ or y outside its domain (a failed check,
    /// a θ value out of its domain, `fail`), rather than a problem with the program or the call.
    pub fn is_domain_error(&self) -> bool {
        use pinv_core::interp::RuntimeErrorKind as K;
        matches!(
            self,
            Error::Runtime(RuntimeError {
                kind: K::CheckFailed { .. } | K::Fail { .. } | K::Theta(_),
                ..
            })
        )
    }

    /// The error of a run of an inverse: a trap of the program's own arithmetic (division by
    /// zero, `i64::MIN / -1`) becomes a domain error. Inside an inverse it means that θ led to
    /// an x, or a value on the way to it, outside the domain of the program (the final
    /// `f(x) = y` check of `let v = 7 / q; p` divides by q): that θ gives no preimage, and a
    /// sampler goes on with the next one. Other errors are returned as they are.
    pub fn in_inverse(self) -> Error {
        use pinv_core::interp::RuntimeErrorKind as K;
        match self {
            Error::Runtime(mut e) if matches!(e.kind, K::DivisionByZero | K::Overflow) => {
                e.kind = K::CheckFailed {
                    reason: format!("this θ leads outside the program's domain: {}", e.kind),
                };
                Error::Runtime(e)
            }
            other => other,
        }
    }

    /// Whether a run stopped at the step, depth or time limit (not a domain error, not a bug:
    /// the run was too long or too deep for the limits it was given).
    pub fn is_limit(&self) -> bool {
        use pinv_core::interp::RuntimeErrorKind as K;
        matches!(
            self,
            Error::Runtime(RuntimeError {
                kind: K::StepLimit { .. } | K::DepthLimit { .. } | K::TimeLimit,
                ..
            })
        )
    }

    /// Whether this is the time limit: the run was stopped, not refused (a subset of
    /// [`Error::is_limit`]).
    pub fn is_time_limit(&self) -> bool {
        use pinv_core::interp::RuntimeErrorKind as K;
        matches!(
            self,
            Error::Runtime(RuntimeError {
                kind: K::TimeLimit,
                ..
            })
        )
    }
}

impl Located for Error {
    fn span(&self) -> Span {
        Error::span(self).unwrap_or_default()
    }

    fn label(&self) -> String {
        match self {
            Error::Runtime(e) => e.label(),
            Error::Compile(e) => Located::label(e),
            _ => String::new(),
        }
    }

    fn secondary(&self) -> Vec<(Span, String)> {
        match self {
            Error::Runtime(e) => e.secondary(),
            Error::Compile(e) => Located::secondary(e),
            _ => Vec::new(),
        }
    }
}

/// The result type of the `pinv` library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
