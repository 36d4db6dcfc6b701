//! The reference interpreter. (Being written.)

/// A failure while running.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("runtime error")]
pub struct RuntimeError;
