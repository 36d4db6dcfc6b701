//! The domain of a θ read: the set a `theta` instruction draws its value from.
//!
//! The domain fixes the value's type (reals → f64, integers → i64, bool → bool). Samplers draw from
//! it, explicit tapes are validated against it, and `ThetaSchema` shows it to users.

use super::constant::{format_f64, parse_f64};
use super::Type;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Domain {
    /// Every f64 (finite or not).
    Real,
    /// Every f64 except ±0.
    NonzeroReal,
    /// The closed interval `[lo, hi]` of f64.
    Interval { lo: f64, hi: f64 },
    /// The f64 in `[lo, hi]`, and NaN: [`Domain::Real`] narrowed at run time
    /// ([`Domain::within`]), which keeps the NaN `real` has (`real[lo, hi]`).
    RealWithin { lo: f64, hi: f64 },
    /// Every i64.
    Int,
    /// The i64s in `lo..=hi`.
    IntRange { lo: i64, hi: i64 },
    /// `true` or `false`.
    Bool,
    /// The i64s with no bit set outside `mask` (the bits a bit map leaves free); `mask` is the
    /// word as unsigned bits.
    Bits { mask: u64 },
}

impl Domain {
    /// The type of the values in this domain.
    pub fn ty(self) -> Type {
        match self {
            Domain::Real
            | Domain::NonzeroReal
            | Domain::Interval { .. }
            | Domain::RealWithin { .. } => Type::F64,
            Domain::Int | Domain::IntRange { .. } | Domain::Bits { .. } => Type::I64,
            Domain::Bool => Type::Bool,
        }
    }

    /// The widest domain of a type (what a `theta` parameter of that type ranges over).
    pub fn all(ty: Type) -> Domain {
        match ty {
            Type::F64 => Domain::Real,
            Type::I64 => Domain::Int,
            Type::Bool => Domain::Bool,
        }
    }

    /// This domain narrowed to the values between `lo` and `hi` (a `theta … within lo, hi`):
    /// `real` to `real[lo, hi]` (NaN stays in), `int` to `int[lo..=hi]`, an interval or range to
    /// its intersection with `[lo, hi]`. `None` when nothing is left (NaN bounds, `lo > hi`, an
    /// intersection that is empty) or the domain cannot be narrowed (bool, nonzero, bits). A
    /// narrowed `real` is never empty: with no number left it is NaN alone (`p < asin(p)` is
    /// false for p = −3.5 because asin(−3.5) is NaN, and NaN is the only value left for it).
    pub fn within(self, lo: super::Const, hi: super::Const) -> Option<Domain> {
        use super::Const::{F64, I64};
        let narrowed = match (self, lo, hi) {
            (Domain::Real, F64(lo), F64(hi)) => Domain::RealWithin { lo, hi },
            (Domain::RealWithin { lo: a, hi: b }, F64(lo), F64(hi)) => Domain::RealWithin {
                lo: a.max(lo),
                hi: b.min(hi),
            },
            (Domain::Interval { lo: a, hi: b }, F64(lo), F64(hi)) => Domain::Interval {
                lo: a.max(lo),
                hi: b.min(hi),
            },
            (Domain::Int, I64(lo), I64(hi)) => Domain::IntRange { lo, hi },
            (Domain::IntRange { lo: a, hi: b }, I64(lo), I64(hi)) => Domain::IntRange {
                lo: a.max(lo),
                hi: b.min(hi),
            },
            _ => return None,
        };
        // NaN alone, written one way (`real[inf, -inf]`), so that equal domains compare equal.
        let narrowed = match narrowed {
            Domain::RealWithin { lo, hi } if lo.is_nan() || hi.is_nan() || lo > hi => {
                Domain::RealWithin {
                    lo: f64::INFINITY,
                    hi: f64::NEG_INFINITY,
                }
            }
            other => other,
        };
        let empty = match narrowed {
            Domain::RealWithin { .. } => false,
            Domain::Interval { lo, hi } => lo.is_nan() || hi.is_nan() || lo > hi,
            Domain::IntRange { lo, hi } => lo > hi,
            _ => false,
        };
        (!empty).then_some(narrowed)
    }

    /// Whether `within` can narrow this domain (and so a `theta … within` may use it).
    pub fn can_narrow(self) -> bool {
        matches!(
            self,
            Domain::Real
                | Domain::RealWithin { .. }
                | Domain::Interval { .. }
                | Domain::Int
                | Domain::IntRange { .. }
        )
    }

    /// Parses what `Display` prints: `real`, `nonzero`, `[lo, hi]`, `int`, `int[lo..=hi]`, `bool`,
    /// `bits[0x…]`.
    pub fn parse(s: &str) -> Option<Domain> {
        let s = s.trim();
        match s {
            "real" => return Some(Domain::Real),
            "nonzero" => return Some(Domain::NonzeroReal),
            "int" => return Some(Domain::Int),
            "bool" => return Some(Domain::Bool),
            _ => {}
        }
        if let Some(inner) = s.strip_prefix("int[").and_then(|r| r.strip_suffix(']')) {
            let (lo, hi) = inner.split_once("..=")?;
            return Some(Domain::IntRange {
                lo: lo.trim().parse().ok()?,
                hi: hi.trim().parse().ok()?,
            });
        }
        if let Some(inner) = s.strip_prefix("real[").and_then(|r| r.strip_suffix(']')) {
            let (lo, hi) = inner.split_once(',')?;
            return Some(Domain::RealWithin {
                lo: parse_f64(lo.trim())?,
                hi: parse_f64(hi.trim())?,
            });
        }
        if let Some(inner) = s.strip_prefix("bits[").and_then(|r| r.strip_suffix(']')) {
            let hex = inner.trim().strip_prefix("0x")?;
            return Some(Domain::Bits {
                mask: u64::from_str_radix(hex, 16).ok()?,
            });
        }
        if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let (lo, hi) = inner.split_once(',')?;
            return Some(Domain::Interval {
                lo: parse_f64(lo.trim())?,
                hi: parse_f64(hi.trim())?,
            });
        }
        None
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Domain::Real => f.write_str("real"),
            Domain::NonzeroReal => f.write_str("nonzero"),
            Domain::Interval { lo, hi } => write!(f, "[{}, {}]", format_f64(lo), format_f64(hi)),
            Domain::RealWithin { lo, hi } => {
                write!(f, "real[{}, {}]", format_f64(lo), format_f64(hi))
            }
            Domain::Int => f.write_str("int"),
            Domain::IntRange { lo, hi } => write!(f, "int[{lo}..={hi}]"),
            Domain::Bool => f.write_str("bool"),
            Domain::Bits { mask } => write!(f, "bits[{mask:#x}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for d in [
            Domain::Real,
            Domain::NonzeroReal,
            Domain::Interval { lo: -1.5, hi: 3.0 },
            Domain::RealWithin {
                lo: f64::NEG_INFINITY,
                hi: 2.5,
            },
            Domain::Int,
            Domain::IntRange { lo: -3, hi: 7 },
            Domain::Bool,
            Domain::Bits {
                mask: 0xffff_ffff_0000_0000,
            },
        ] {
            assert_eq!(Domain::parse(&d.to_string()), Some(d), "{d}");
        }
    }
}
