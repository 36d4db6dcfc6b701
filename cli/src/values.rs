//! Reading and printing values as users write them: `1.5`, `-2`, `inf`, `nan`, `42`, `true`.

use pinv::ir::constant::{format_f64, parse_f64, parse_i64};
use pinv::ir::{Const, Type};

/// Parses a command-line value as a value of type `ty`.
///
/// f64 accepts decimal and exponent forms, `inf`, `infinity` and `nan` in any case and with a
/// sign (`NaN`, `-Infinity`), and integers (as reals); i64 accepts decimal and `0x` hexadecimal
/// (a 64-bit pattern: `0xffffffff00000000` is the word with the high half set), with a sign;
/// bool accepts `true` and `false`.
pub fn parse_value(text: &str, ty: Type) -> Result<Const, String> {
    let t = text.trim();
    let bad = || format!("`{t}` is not a valid {ty}");
    match ty {
        Type::F64 => special_f64(t)
            .or_else(|| parse_f64(t))
            .map(Const::F64)
            .ok_or_else(bad),
        Type::I64 => parse_i64(t).map(Const::I64).ok_or_else(bad),
        Type::Bool => match t {
            "true" => Ok(Const::Bool(true)),
            "false" => Ok(Const::Bool(false)),
            _ => Err(bad()),
        },
    }
}

/// The f64 values with names, in any case: `nan`, `inf`, `infinity`, with a sign.
fn special_f64(t: &str) -> Option<f64> {
    let (sign, name) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, t),
    };
    match name.to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "inf" | "infinity" => Some(sign * f64::INFINITY),
        _ => None,
    }
}

/// A tolerance option: a number ≥ 0 (NaN and negative tolerances are refused: with them no
/// comparison, or every one, would pass).
pub fn parse_tolerance(text: &str) -> Result<f64, String> {
    match parse_f64(text.trim()) {
        Some(t) if t >= 0.0 => Ok(t),
        Some(_) => Err(format!("`{}`: a tolerance must be 0 or more", text.trim())),
        None => Err(format!("`{}` is not a number", text.trim())),
    }
}

/// A step limit: a whole number ≥ 1. Every run has a limit, so that no input makes a command
/// hang: a long run asks for a large one.
pub fn parse_step_limit(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err(
            "the step limit must be at least 1 (every run has one, so that nothing \
                      hangs; give a large one, such as 10000000000, for a long run)"
                .to_string(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{}` is not a whole number of steps", text.trim())),
    }
}

/// A duration in seconds: a finite number > 0.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match parse_f64(text.trim()) {
        Some(t) if t > 0.0 && t.is_finite() && t < 1e9 => Ok(t),
        _ => Err(format!(
            "`{}`: give a number of seconds above 0",
            text.trim()
        )),
    }
}

/// Formats a value so that [`parse_value`] reads it back (exactly, but for the payload of a
/// NaN: every NaN prints as `NaN`).
pub fn format_value(c: Const) -> String {
    match c {
        Const::F64(x) if x.is_nan() => "NaN".to_string(),
        Const::F64(x) => format_f64(x),
        other => other.to_string(),
    }
}

/// A value as JSON: numbers where JSON can hold them, and the strings `"inf"`, `"-inf"`, `"nan"`
/// for the f64 values it cannot.
pub fn json_value(c: Const) -> serde_json::Value {
    match c {
        Const::F64(x) if x.is_finite() => serde_json::json!(x),
        Const::F64(x) => serde_json::Value::String(format_f64(x)),
        Const::I64(x) => serde_json::json!(x),
        Const::Bool(b) => serde_json::json!(b),
    }
}

/// Several values as one line: `1.5` for one, `(1.5, 2)` for several.
pub fn format_values(values: &[Const]) -> String {
    match values {
        [one] => format_value(*one),
        _ => format!(
            "({})",
            values
                .iter()
                .map(|&v| format_value(v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_special_values_in_any_case() {
        for (text, want) in [
            ("NaN", f64::NAN),
            ("nan", f64::NAN),
            ("-NAN", f64::NAN),
            ("Inf", f64::INFINITY),
            ("+infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            (" -inf ", f64::NEG_INFINITY),
        ] {
            let got = parse_value(text, Type::F64);
            assert!(
                matches!(got, Ok(Const::F64(x)) if x.to_bits() == want.to_bits() || x.is_nan() && want.is_nan()),
                "{text}: {got:?}"
            );
        }
        assert_eq!(
            parse_value(" -infinite", Type::F64),
            Err("`-infinite` is not a valid f64".to_string())
        );
        assert_eq!(format_value(Const::F64(-f64::NAN)), "NaN");
        assert_eq!(format_value(Const::F64(f64::NEG_INFINITY)), "-inf");
    }

    #[test]
    fn parses_what_users_type() {
        assert_eq!(parse_value("1.5", Type::F64), Ok(Const::F64(1.5)));
        assert_eq!(parse_value("-2", Type::F64), Ok(Const::F64(-2.0)));
        assert_eq!(parse_value("inf", Type::F64), Ok(Const::F64(f64::INFINITY)));
        assert!(matches!(parse_value("nan", Type::F64), Ok(Const::F64(x)) if x.is_nan()));
        assert_eq!(parse_value("42", Type::I64), Ok(Const::I64(42)));
        assert_eq!(parse_value("-0x10", Type::I64), Ok(Const::I64(-16)));
        assert_eq!(
            parse_value("-9223372036854775808", Type::I64),
            Ok(Const::I64(i64::MIN))
        );
        assert!(parse_value("9223372036854775808", Type::I64).is_err());
        assert!(parse_value("1.5", Type::I64).is_err());
        assert_eq!(parse_value("true", Type::Bool), Ok(Const::Bool(true)));
        assert!(parse_value("1", Type::Bool).is_err());
        assert!(parse_value("", Type::F64).is_err());
    }

    #[test]
    fn formats_round_trip() {
        for c in [
            Const::F64(-0.0),
            Const::F64(0.1),
            Const::I64(-3),
            Const::Bool(false),
        ] {
            assert_eq!(parse_value(&format_value(c), c.ty()), Ok(c));
        }
        assert_eq!(format_values(&[Const::F64(1.0), Const::I64(2)]), "(1.0, 2)");
    }
}
