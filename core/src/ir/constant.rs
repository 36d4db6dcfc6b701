//! Constants: the immediate of a `const` instruction, and the runtime value of a scalar.

use super::Type;
use std::fmt;

/// A scalar value. f64 equality and hashing are by bits, so that `-0.0` and `0.0` differ and a
/// NaN equals itself: this is what "bit-identical" means in the differential tests.
///
/// The layout is fixed (`repr(C, u8)`): a one-byte tag (0: f64, 1: i64, 2: bool) at offset 0 and
/// the payload at offset 8, 16 bytes in all. Compiled code reads arguments and writes results
/// in this form (see `jit::abi`).
#[derive(Clone, Copy, Debug)]
#[repr(C, u8)]
pub enum Const {
    F64(f64),
    I64(i64),
    Bool(bool),
}

impl Const {
    pub fn ty(self) -> Type {
        match self {
            Const::F64(_) => Type::F64,
            Const::I64(_) => Type::I64,
            Const::Bool(_) => Type::Bool,
        }
    }

    /// The zero of a type (`0.0`, `0`, `false`).
    pub fn zero(ty: Type) -> Const {
        match ty {
            Type::F64 => Const::F64(0.0),
            Type::I64 => Const::I64(0),
            Type::Bool => Const::Bool(false),
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        match self {
            Const::F64(x) => Some(x),
            _ => None,
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            Const::I64(x) => Some(x),
            _ => None,
        }
    }

    pub fn as_bool(self) -> Option<bool> {
        match self {
            Const::Bool(x) => Some(x),
            _ => None,
        }
    }

    /// Whether `self` (a value computed) agrees with `expected`: exactly for i64 and bool; for
    /// f64 see [`f64_close`].
    pub fn close_to(self, expected: Const, tol: f64) -> bool {
        match (self, expected) {
            (Const::F64(a), Const::F64(b)) => f64_close(a, b, tol),
            (a, b) => a == b,
        }
    }

    /// The bits that identify this value: f64 by `to_bits`, i64 as is, bool as 0 or 1.
    pub fn bits(self) -> u64 {
        match self {
            Const::F64(x) => x.to_bits(),
            Const::I64(x) => x as u64,
            Const::Bool(b) => b as u64,
        }
    }
}

/// Whether the f64 `actual` agrees with `expected` as every f64 comparison of pinv means it:
/// equal as numbers (±0 alike, equal infinities), both NaN, or `|a − b| ≤ tol · max(1, |b|)`.
///
/// The relative bound applies only where the difference is finite, so the comparison is exact
/// where either value is not finite whatever the tolerance: `inf` agrees only with `inf` of the
/// same sign, and NaN only with NaN. (Without that rule `tol · |inf|` is infinite and every
/// finite value would agree with an infinite one.)
///
/// ```
/// use pinv_core::ir::f64_close;
/// assert!(f64_close(1.0 + 1e-12, 1.0, 1e-9));
/// assert!(!f64_close(-2.1, f64::INFINITY, 1e-9));
/// assert!(f64_close(f64::NAN, f64::NAN, 1e-9));
/// assert!(!f64_close(f64::MAX, -f64::MAX, 1e-9));
/// ```
pub fn f64_close(actual: f64, expected: f64, tol: f64) -> bool {
    if actual == expected || (actual.is_nan() && expected.is_nan()) {
        return true;
    }
    let diff = (actual - expected).abs();
    diff < f64::INFINITY && diff <= tol * expected.abs().max(1.0)
}

impl PartialEq for Const {
    fn eq(&self, other: &Const) -> bool {
        self.ty() == other.ty() && self.bits() == other.bits()
    }
}

impl Eq for Const {}

/// Ordered by type, then by bits (a total order for sets and maps, not numeric order).
impl PartialOrd for Const {
    fn partial_cmp(&self, other: &Const) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Const {
    fn cmp(&self, other: &Const) -> std::cmp::Ordering {
        (self.ty(), self.bits()).cmp(&(other.ty(), other.bits()))
    }
}

impl std::hash::Hash for Const {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ty().hash(state);
        self.bits().hash(state);
    }
}

/// Formats an f64 so that it parses back to the same bits: the shortest round-trip decimal
/// (always with a `.` or an exponent), `inf`, `-inf`, `nan`, or `nan:0x…` for a NaN other than
/// the canonical quiet NaN.
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        if x.to_bits() == f64::NAN.to_bits() {
            "nan".to_string()
        } else {
            format!("nan:0x{:016x}", x.to_bits())
        }
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:?}")
    }
}

/// Parses an i64 as users write one: decimal (it must fit), or `0x` hexadecimal, which is a
/// 64-bit pattern (`0xffffffff00000000` is the word with its high half set, a negative i64),
/// either with a sign.
pub fn parse_i64(t: &str) -> Option<i64> {
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok()? as i64,
        None => {
            let magnitude = digits.parse::<u64>().ok()?;
            if negative && magnitude == 1 << 63 {
                return Some(i64::MIN);
            }
            i64::try_from(magnitude).ok()?
        }
    };
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// Parses what [`format_f64`] prints (and any decimal float Rust's `str::parse` accepts).
pub fn parse_f64(s: &str) -> Option<f64> {
    match s {
        "nan" => Some(f64::NAN),
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => {
            if let Some(hex) = s.strip_prefix("nan:0x") {
                let bits = u64::from_str_radix(hex, 16).ok()?;
                let x = f64::from_bits(bits);
                return x.is_nan().then_some(x);
            }
            // Reject Rust's other spellings of special values ("infinity", "NaN", ...).
            if s.chars()
                .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            {
                return None;
            }
            s.parse().ok()
        }
    }
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Const::F64(x) => f.write_str(&format_f64(x)),
            Const::I64(x) => write!(f, "{x}"),
            Const::Bool(b) => write!(f, "{b}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i64_text_is_decimal_or_a_hex_bit_pattern() {
        assert_eq!(parse_i64("42"), Some(42));
        assert_eq!(parse_i64("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64("9223372036854775808"), None);
        assert_eq!(parse_i64("0x500000000"), Some(0x5_0000_0000));
        assert_eq!(parse_i64("0xffffffff00000000"), Some(-4294967296));
        assert_eq!(parse_i64("-0x10"), Some(-16));
        assert_eq!(parse_i64("0x"), None);
        assert_eq!(parse_i64("1.5"), None);
    }

    #[test]
    fn f64_text_round_trips_by_bits() {
        let odd_nan = f64::from_bits(0x7ff0_0000_0000_0001);
        for x in [
            0.0,
            -0.0,
            1.5,
            -2.0e-300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            odd_nan,
            0.1 + 0.2,
        ] {
            let s = format_f64(x);
            let y = parse_f64(&s).unwrap_or_else(|| panic!("{s} does not parse"));
            assert_eq!(x.to_bits(), y.to_bits(), "{s}");
        }
        assert_eq!(parse_f64("infinity"), None);
        assert_eq!(parse_f64("1e3"), Some(1000.0));
    }
}
