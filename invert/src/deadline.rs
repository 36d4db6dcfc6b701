//! How long building an inverse may take: a [`Deadline`] the passes poll between units of work
//! (a function, a block, an instruction), so that a program whose inversion would run for
//! minutes ends in [`Error::TimedOut`] instead (`pinv check`'s `timeout`).
//!
//! Invariant: a deadline only ever turns a build into that error. It never changes the code a
//! build that finishes produces, so it is not part of the code cache's key
//! ([`crate::reorient::ReorientOptions::hash_key`]).

use crate::error::Error;
use pinv_core::Span;
use std::time::{Duration, Instant};

/// A point in time past which a build stops, or none.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline {
    /// When, and the limit it was set from (for the message).
    at: Option<(Instant, Duration)>,
}

impl Deadline {
    /// No deadline: [`Deadline::passed`] is always false.
    pub fn none() -> Deadline {
        Deadline { at: None }
    }

    /// `limit` from now (none for `None`).
    pub fn after(limit: Option<Duration>) -> Deadline {
        Deadline {
            at: limit.map(|limit| (Instant::now() + limit, limit)),
        }
    }

    /// Whether the deadline has come.
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|(at, _)| Instant::now() >= at)
    }

    /// An error naming `function` (at `span`) if the deadline has come.
    pub fn check(&self, function: &str, span: Span) -> Result<(), Error> {
        match self.at {
            Some((at, limit)) if Instant::now() >= at => Err(Error::TimedOut {
                function: function.to_string(),
                limit,
                span,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_passes_once_and_names_the_function() {
        assert!(!Deadline::none().passed());
        assert!(Deadline::none().check("f", Span::default()).is_ok());
        let later = Deadline::after(Some(Duration::from_secs(3600)));
        assert!(!later.passed());
        let now = Deadline::after(Some(Duration::ZERO));
        assert!(now.passed());
        let e = now.check("f", Span::default()).unwrap_err();
        assert!(e.to_string().contains("`f`"), "{e}");
        assert!(matches!(e, Error::TimedOut { .. }), "{e}");
    }
}
