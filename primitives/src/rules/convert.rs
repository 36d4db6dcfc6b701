//! Conversions: `fcvt_to_i64` (truncating, saturating, NaN → 0), `fcvt_from_i64` (rounding),
//! `bool_to_i64`, and the bit casts `f64_bits`/`f64_from_bits` (bijections, inverses use them to
//! step between neighbouring floats). Exact: every solution is checked with the forward
//! conversion.

use super::f64_elem::sign_choice;
use super::ops::Ops;
use super::record_if;
use super::spec::Spec;
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    layer.add(Callee::Prim(Opcode::FcvtToI64), to_int());
    layer.add(Callee::Prim(Opcode::FcvtFromI64), from_int());
    layer.add(Callee::Prim(Opcode::BoolToI64), from_bool());
    layer.add(
        Callee::Prim(Opcode::F64Bits),
        Spec::from(Bits {
            inverse: Opcode::F64FromBits,
        }),
    );
    layer.add(
        Callee::Prim(Opcode::F64FromBits),
        Spec::from(Bits {
            inverse: Opcode::F64Bits,
        }),
    );
}

/// 2^63 as an f64.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;
/// Below 2^53 in magnitude an f64 can have a fractional part, and every i64 is an f64.
const TWO_53: f64 = 9_007_199_254_740_992.0;

// ---------------------------------------------------------------------------------------------
// fcvt_to_i64

const UP: &str = "the operand (at least 2^63: saturates to i64::MAX)";
const DOWN: &str = "the operand (at most -2^63: saturates to i64::MIN)";
const ZERO_CASE: &str = "which operand gives 0 (0: in [0, 1), 1: in (-1, 0], 2: NaN)";
const FRACTION: &str = "fractional part, toward the next integer away from 0";

/// 0: z = MAX, 1: z = MIN, 2: z = 0, 3: otherwise.
fn to_int_class(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    let max = e.ic(i64::MAX);
    let min = e.ic(i64::MIN);
    let zero = e.ic(0);
    let is_max = e.ieq(z, max);
    let is_min = e.ieq(z, min);
    let is_zero = e.ieq(z, zero);
    let c0 = e.ic(0);
    let c1 = e.ic(1);
    let c2 = e.ic(2);
    let c3 = e.ic(3);
    let r = e.select(is_zero, c2, c3)?;
    let r = e.select(is_min, c1, r)?;
    e.select(is_max, c0, r)
}

/// A fraction θ in [0, 1), with its check.
fn fraction(e: &mut Emitter<'_>) -> Result<Value, RuleError> {
    let f = e.theta(Domain::Interval { lo: 0.0, hi: 1.0 }, FRACTION)?;
    let one = e.fc(1.0);
    let below = e.flt(f, one);
    e.check(below, "the fractional part is below 1")?;
    Ok(f)
}

/// `z = x as i64`:
/// - `z = i64::MAX`: θ is x in [2^63, ∞] (saturation); `z = i64::MIN`: θ in [−∞, −2^63];
/// - `z = 0`: a choice of [0, 1), (−1, 0] or NaN, and θ the fraction `|x| ∈ [0, 1)`;
/// - otherwise z must be an f64; `x = z ± f` away from 0 with θ `f ∈ [0, 1)` (interval and a
///   check) where |z| < 2^53, `x = z` above.
pub fn to_int() -> Spec {
    Spec::unary("fraction", |e, z| {
        let class = to_int_class(e, z)?;
        let x = e.switch(class, 4, &[Type::F64], |e, arm| match arm {
            0 => Ok(vec![e.theta(
                Domain::Interval {
                    lo: TWO_63,
                    hi: f64::INFINITY,
                },
                UP,
            )?]),
            1 => Ok(vec![e.theta(
                Domain::Interval {
                    lo: f64::NEG_INFINITY,
                    hi: -TWO_63,
                },
                DOWN,
            )?]),
            2 => {
                let c = e.choice(3, ZERO_CASE)?;
                e.switch(c, 3, &[Type::F64], |e, k| match k {
                    0 => Ok(vec![fraction(e)?]),
                    1 => {
                        let f = fraction(e)?;
                        Ok(vec![e.fneg(f)])
                    }
                    _ => Ok(vec![e.fc(f64::NAN)]),
                })
            }
            _ => {
                let zf = e.i_to_f(z);
                let back = e.op1(Opcode::FcvtToI64, zf);
                let same = e.ieq(back, z);
                e.check(same, "z is not the truncation of any f64")?;
                let small = e.abs_cmp(zf, Opcode::Flt, TWO_53);
                let r = e.if_else(
                    small,
                    &[Type::F64],
                    |e| {
                        let f = fraction(e)?;
                        let away = e.with_sign_of(f, zf)?;
                        Ok(vec![e.fadd(zf, away)])
                    },
                    |_| Ok(vec![zf]),
                )?;
                Ok(r)
            }
        })?[0];
        let again = e.op1(Opcode::FcvtToI64, x);
        let ok = e.ieq(again, z);
        e.check(
            ok,
            "the truncation of the solution is not z (the fraction rounds up)",
        )?;
        Ok(x)
    })
    .records(|e, z, x| {
        let class = to_int_class(e, z)?;
        e.switch(class, 4, &[], |e, arm| {
            match arm {
                0 => e.record(x, UP)?,
                1 => e.record(x, DOWN)?,
                2 => {
                    let nan = e.is_nan(x);
                    let s = sign_choice(e, x);
                    let two = e.ic(2);
                    let c = e.select(nan, two, s)?;
                    e.record(c, ZERO_CASE)?;
                    let not_nan = e.bnot(nan);
                    let ax = e.fabs(x);
                    record_if(e, not_nan, ax, FRACTION)?;
                }
                _ => {
                    let zf = e.i_to_f(z);
                    let small = e.abs_cmp(zf, Opcode::Flt, TWO_53);
                    e.branch(
                        small,
                        |e| {
                            let d = e.fsub(x, zf);
                            let f = e.fabs(d);
                            e.record(f, FRACTION)?;
                            Ok(())
                        },
                        |_| Ok(()),
                    )?;
                }
            }
            Ok(vec![])
        })?;
        Ok(())
    })
    .doc(|_| {
        let frac = Domain::Interval { lo: 0.0, hi: 1.0 };
        RuleDoc {
            thetas: vec![
                ThetaDoc::value(
                    Domain::Interval {
                        lo: TWO_63,
                        hi: f64::INFINITY,
                    },
                    UP,
                )
                .when("z = i64::MAX"),
                ThetaDoc::value(
                    Domain::Interval {
                        lo: f64::NEG_INFINITY,
                        hi: -TWO_63,
                    },
                    DOWN,
                )
                .when("z = i64::MIN"),
                ThetaDoc::choice(3, ZERO_CASE).when("z = 0"),
                ThetaDoc::value(frac, FRACTION).when("z = 0 and x is not NaN, or 0 < |z| < 2^53"),
            ],
            checks: vec![
                "z is not the truncation of any f64".into(),
                "the fractional part is below 1".into(),
                "the truncation of the solution is z (z ± f rounded to the next integer)".into(),
            ],
            exact: true,
            summary: "x = z ± f (f = θ in [0, 1)); saturation and NaN ends by θ".into(),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// fcvt_from_i64

const OFFSET: &str = "offset among the i64s that round to z";

/// The i64 nearest to z (ties up; saturating). `z + 0.5` would round to even between 2^52 and
/// 2^53, so the fraction is taken first (exact below 2^53; above, z is an integer).
fn nearest(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    let r = super::nearest_integer(e, z)?;
    Ok(e.op1(Opcode::FcvtToI64, r))
}

fn rounds(e: &mut Emitter<'_>, z: Value) -> Value {
    e.abs_cmp(z, Opcode::Fge, TWO_53)
}

/// `z = x as f64`: z must be at most 2^63 in magnitude; below 2^53, x is the nearest integer
/// (z within the tolerance of it: z may carry the rounding of earlier steps), and above, where
/// every f64 is an integer, `z as i64` plus θ in [−1024, 1024] (the i64s that round to the same
/// f64), checked exactly.
pub fn from_int() -> Spec {
    Spec::unary("round", |e, z| {
        let fits = e.abs_cmp(z, Opcode::Fle, TWO_63);
        e.check(fits, "z is not the f64 of any i64")?;
        let d = nearest(e, z)?;
        let far = rounds(e, z);
        // Above 2^53 every f64 is an integer and the offset must keep x rounding to z exactly;
        // below, z may carry the rounding of the steps that computed it (`p / b` for an integer
        // factor of p), so the nearest integer is taken and checked within the tolerance.
        let x = e.if_value(
            far,
            Type::I64,
            |e| {
                let t = e.theta(
                    Domain::IntRange {
                        lo: -1024,
                        hi: 1024,
                    },
                    OFFSET,
                )?;
                let x = e.iadd(d, t);
                let again = e.i_to_f(x);
                let same = e.feq(again, z);
                e.check(same, "the offset leaves the i64s that round to z")?;
                Ok(x)
            },
            |e| {
                let again = e.i_to_f(d);
                let near = e.close(again, z);
                e.check(near, "z is not the f64 of any i64")?;
                Ok(d)
            },
        )?;
        Ok(x)
    })
    .records(|e, z, x| {
        let far = rounds(e, z);
        let d = nearest(e, z)?;
        let t = e.isub(x, d);
        record_if(e, far, t, OFFSET)?;
        Ok(())
    })
    .doc(|_| RuleDoc {
        thetas: vec![ThetaDoc::value(
            Domain::IntRange {
                lo: -1024,
                hi: 1024,
            },
            OFFSET,
        )
        .when("|z| ≥ 2^53")],
        checks: vec![
            "z is not the f64 of any i64".into(),
            "the offset leaves the i64s that round to z".into(),
        ],
        exact: false,
        summary: "x = the i64 nearest z (+ θ above 2^53)".into(),
    })
}

// ---------------------------------------------------------------------------------------------
// bool_to_i64

/// `z = b as i64`: z is 0 or 1, `b = (z = 1)`.
pub fn from_bool() -> Spec {
    Spec::unary("test", |e, z| {
        let zero = e.ic(0);
        let one = e.ic(1);
        let z0 = e.ieq(z, zero);
        let z1 = e.ieq(z, one);
        let ok = e.bor(z0, z1);
        e.check(ok, "bool as i64 is 0 or 1")?;
        Ok(z1)
    })
    .doc(|_| RuleDoc {
        thetas: Vec::new(),
        checks: vec!["bool as i64 is 0 or 1".into()],
        exact: true,
        summary: "b = (z = 1)".into(),
    })
}

// ---------------------------------------------------------------------------------------------
// f64_bits, f64_from_bits

/// `z = f64_bits(x)` or `z = f64_from_bits(a)`: a bijection between the 2^64 bit patterns, whose
/// inverse is the other cast (NaN payloads included).
#[derive(Clone, Copy, Debug)]
pub struct Bits {
    /// The cast that undoes this one.
    inverse: Opcode,
}

impl From<Bits> for Spec {
    fn from(r: Bits) -> Spec {
        Spec::unary("bit cast", move |e, z| Ok(e.prim(r.inverse, &[z]))).doc(move |_| RuleDoc {
            thetas: Vec::new(),
            checks: Vec::new(),
            exact: true,
            summary: format!("x = {}(z)", r.inverse),
        })
    }
}
