//! The IR text parser. (Being written.)

/// Malformed IR text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("IR parse error")]
pub struct IrParseError;
