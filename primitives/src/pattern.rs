//! Known/unknown patterns: which operands of an instruction are already known when it is inverted.
//!
//! Inversion walks the forward code backwards from the outputs, so an instruction's output is
//! always known when its rule runs. Its operands are each either known (a constant, or a value
//! the inverse has already solved) or unknown (to be solved by this rule, usually with θ).

use pinv_core::ir::Value;
use serde::Serialize;
use std::fmt;

/// Whether one operand is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Knowledge {
    Known,
    Unknown,
}

/// The knowledge of each operand, in operand order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Pattern(pub Vec<Knowledge>);

impl Pattern {
    /// Every operand unknown.
    pub fn all_unknown(arity: usize) -> Pattern {
        Pattern(vec![Knowledge::Unknown; arity])
    }

    /// Every operand known (a consistency check, as after fan-out).
    pub fn all_known(arity: usize) -> Pattern {
        Pattern(vec![Knowledge::Known; arity])
    }

    /// The pattern of a list of operands.
    pub fn of(args: &[Arg]) -> Pattern {
        Pattern(args.iter().map(Arg::knowledge).collect())
    }

    /// Every pattern of `arity` operands, from all unknown to all known.
    pub fn every(arity: usize) -> Vec<Pattern> {
        (0..1usize << arity)
            .map(|bits| {
                Pattern(
                    (0..arity)
                        .map(|i| {
                            if bits >> (arity - 1 - i) & 1 == 1 {
                                Knowledge::Known
                            } else {
                                Knowledge::Unknown
                            }
                        })
                        .collect(),
                )
            })
            .collect()
    }

    pub fn arity(&self) -> usize {
        self.0.len()
    }

    pub fn is_known(&self, i: usize) -> bool {
        self.0.get(i) == Some(&Knowledge::Known)
    }

    pub fn unknowns(&self) -> usize {
        self.0.iter().filter(|k| **k == Knowledge::Unknown).count()
    }
}

/// Written like a call with `?` for unknown and `k` for known operands: `(?, k)`.
impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(match k {
                Knowledge::Known => "k",
                Knowledge::Unknown => "?",
            })?;
        }
        f.write_str(")")
    }
}

/// An operand as a rule sees it while emitting an inverse: its value in the inverse function if
/// known, or unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    Known(Value),
    Unknown,
}

impl Arg {
    pub fn knowledge(&self) -> Knowledge {
        match self {
            Arg::Known(_) => Knowledge::Known,
            Arg::Unknown => Knowledge::Unknown,
        }
    }

    pub fn known(&self) -> Option<Value> {
        match self {
            Arg::Known(v) => Some(*v),
            Arg::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_in_order() {
        let all: Vec<String> = Pattern::every(2).iter().map(|p| p.to_string()).collect();
        assert_eq!(all, ["(?, ?)", "(?, k)", "(k, ?)", "(k, k)"]);
        assert_eq!(Pattern::every(0).len(), 1);
    }
}
