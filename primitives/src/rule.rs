//! Inverse rules: how one callee (a primitive opcode or a module function) is inverted.
//!
//! A rule covers one or more known/unknown [`Pattern`]s of its callee's operands. For each it
//! can (1) emit the inverse as IR, reading θ for the degrees of freedom and checking domains,
//! (2) emit the PGF as IR, recording the θ values that make the inverse give back given operands,
//! and (3) describe itself ([`RuleDoc`]) for the catalogue and for θ schemas.
//!
//! The contract every rule keeps, tested by property tests over random operands and θ:
//! - soundness: whatever θ, the inverse either fails a `check` or returns operands whose forward
//!   value is the output (exactly for i64 and bool; within tolerance for f64 where
//!   [`RuleDoc::exact`] is false);
//! - completeness: for operands `x`, running the inverse on `op(x)` with the θ that the PGF records
//!   for `x` gives back `x` (the known operands as given).

use crate::emit::Emitter;
use crate::pattern::{Arg, Pattern};
use pinv_core::ir::{Domain, Value};
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// What can go wrong while a rule emits code. These are bugs or unsupported requests, never a
/// domain error (those are `check`s in the emitted code).
#[derive(Clone, Debug, PartialEq, Error)]
pub enum RuleError {
    #[error("the rule does not cover the pattern {0}")]
    Uncovered(Pattern),
    #[error("`{what}` is not allowed in this kind of code")]
    WrongMode { what: &'static str },
    #[error("unknown function `{0}`")]
    UnknownFunction(String),
    #[error("no PGF: {0}")]
    NoPgf(String),
    #[error("malformed rule output: {0}")]
    Malformed(String),
}

/// The domain of one θ read in a rule's documentation: a value domain or a path choice.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThetaKind {
    Value { domain: Domain },
    Choice { n: u32 },
}

impl fmt::Display for ThetaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThetaKind::Value { domain } => write!(f, "{domain}"),
            ThetaKind::Choice { n } => write!(f, "choice {n}"),
        }
    }
}

/// One θ read of a rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThetaDoc {
    pub kind: ThetaKind,
    /// What the value means, e.g. "right operand" or "which factor is 0".
    pub role: String,
    /// When it is read, if not always, e.g. "z = 0".
    pub when: Option<String>,
}

impl ThetaDoc {
    pub fn value(domain: Domain, role: &str) -> ThetaDoc {
        ThetaDoc {
            kind: ThetaKind::Value { domain },
            role: role.to_string(),
            when: None,
        }
    }

    pub fn choice(n: u32, role: &str) -> ThetaDoc {
        ThetaDoc {
            kind: ThetaKind::Choice { n },
            role: role.to_string(),
            when: None,
        }
    }

    /// Marks the read as conditional.
    pub fn when(mut self, condition: &str) -> ThetaDoc {
        self.when = Some(condition.to_string());
        self
    }
}

/// What a rule does for one pattern.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleDoc {
    /// The θ reads, in reading order.
    pub thetas: Vec<ThetaDoc>,
    /// The domain checks, as the reasons they fail with.
    pub checks: Vec<String>,
    /// Whether the inverse reproduces the output exactly (false: up to rounding).
    pub exact: bool,
    /// The solution in a line, e.g. "a = z − θ, b = θ".
    pub summary: String,
}

impl RuleDoc {
    /// The doc of a rule whose inverse gives the output back exactly.
    pub fn exact(thetas: Vec<ThetaDoc>, checks: &[&str], summary: &str) -> RuleDoc {
        RuleDoc {
            thetas,
            checks: checks.iter().map(|c| c.to_string()).collect(),
            exact: true,
            summary: summary.to_string(),
        }
    }

    /// The doc of a rule whose inverse gives the output back up to rounding (f64 rules).
    pub fn rounded(thetas: Vec<ThetaDoc>, checks: &[&str], summary: &str) -> RuleDoc {
        RuleDoc {
            exact: false,
            ..RuleDoc::exact(thetas, checks, summary)
        }
    }
}

/// An inverse rule. See the module docs for the contract.
pub trait InverseRule: Send + Sync + fmt::Debug {
    /// A short name, unique among the rules of one callee (such as `sub-theta`).
    fn name(&self) -> &str;

    /// Whether the rule inverts this pattern of its callee's operands.
    fn covers(&self, pattern: &Pattern) -> bool;

    /// What the rule reads and checks for `pattern` (which it covers).
    fn doc(&self, pattern: &Pattern) -> RuleDoc;

    /// Emits the inverse: given the known outputs and the operands, returns a value for every
    /// operand (known operands may be returned as given).
    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError>;

    /// Emits the PGF: given the forward values of the outputs and of every operand, records the θ
    /// values that [`InverseRule::emit_inverse`] reads for `pattern`, in its reading order, so that
    /// the inverse returns exactly these operands.
    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError>;
}
