//! i64 arithmetic: `iadd isub imul idiv irem ineg iabs imin imax`. Everything is exact.
//!
//! - `iadd isub ineg`: wrapping bijections; with both operands unknown θ is the right operand.
//! - `imul` by a known `c = m·2^k` (m odd): `z` must be a multiple of `2^k`; then
//!   `x = (z / 2^k)·m⁻¹ mod 2^(64−k)` and θ gives the k high bits, in place (none for odd `c`: the
//!   multiplicative inverse mod 2^64 undoes it); `c = 0` needs `z = 0` and x is free.
//! - `idiv`: `a = z·b + r` with θ the remainder; a known dividend gives the divisor range
//!   `|a|/(|z|+1) < |b| ≤ |a|/|z|`, walked by θ from its outer end.
//! - `irem`: `a = z ± n·|b|` with θ `n ≥ 0` (any integer quotient when z = 0); a known dividend
//!   gives θ the quotient and `b = (a − z) / q`.
//! - `iabs`: a sign choice. `imin imax`: which operand is the result, θ for the other.
//!
//! Integer division and remainder trap on a zero divisor and on `i64::MIN / -1`; the inverses
//! check both before dividing, so a bad θ is a domain error, never a trap.

use super::ops::Ops;
use super::spec::{rows, Side, Spec};
use super::{record_if, unknowns2, Extremum};
use crate::emit::Emitter;
use crate::overlay::Layer;
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use num_traits::{PrimInt, WrappingMul, WrappingSub};
use pinv_core::ir::{Const, Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    // `+ − −a` wrap: each is a bijection of each operand; with both operands unknown, θ is b.
    rows! { layer;
        Iadd => Spec::each_from_other("sub", (|e, z, b| e.isub(z, b), "a = z − b"), (|e, z, a| e.isub(z, a), "b = z − a"));
        Isub => Spec::each_from_other("add", (|e, z, b| e.iadd(z, b), "a = z + b"), (|e, z, a| e.isub(a, z), "b = a − z"));
        Ineg => Spec::bijection("neg", |e, z| e.ineg(z), "a = −z");
        Imul => imul();
        Idiv => idiv();
        Irem => irem();
        Iabs => iabs();
        Imin => Spec::from(IntMinMax(Extremum { min: true }));
        Imax => Spec::from(IntMinMax(Extremum { min: false }));
    }
}

/// Checks that `op(a, b) = z` for `idiv`/`irem` without trapping: the divisor is not 0 and the
/// operands are not `i64::MIN, -1`, then the value.
pub(crate) fn check_division(
    e: &mut Emitter<'_>,
    op: Opcode,
    a: Value,
    b: Value,
    z: Value,
) -> Result<(), RuleError> {
    let zero = e.ic(0);
    let nonzero = e.ine(b, zero);
    e.check(nonzero, "the divisor is 0")?;
    let min = e.ic(i64::MIN);
    let minus_one = e.ic(-1);
    let a_min = e.ieq(a, min);
    let b_m1 = e.ieq(b, minus_one);
    let overflow = e.band(a_min, b_m1);
    let ok = e.bnot(overflow);
    e.check(ok, "i64::MIN divided by -1 overflows")?;
    let again = e.op2(op, a, b);
    let same = e.ieq(again, z);
    e.check(
        same,
        &format!("{op} of the solution is not z (θ out of range)"),
    )
}

// ---------------------------------------------------------------------------------------------
// iadd, isub, ineg

// ---------------------------------------------------------------------------------------------
// iabs

const SIGN: &str = "sign of the operand (1: negative)";

/// `z = |a|` (wrapping at i64::MIN): a sign choice, `a = ±z`.
pub fn iabs() -> Spec {
    Spec::unary("sign", |e, z| {
        let zero = e.ic(0);
        let nonneg = e.ige(z, zero);
        let min = e.ic(i64::MIN);
        let is_min = e.ieq(z, min);
        let ok = e.bor(nonneg, is_min);
        e.check(ok, "abs is never negative (except i64::MIN)")?;
        let s = e.choice(2, SIGN)?;
        let one = e.ic(1);
        let neg = e.ieq(s, one);
        let nz = e.ineg(z);
        e.select(neg, nz, z)
    })
    .records(|e, _, a| {
        let zero = e.ic(0);
        let neg = e.ilt(a, zero);
        let s = e.b_to_i(neg);
        e.record(s, SIGN)
    })
    .doc(|_| {
        RuleDoc::exact(
            vec![ThetaDoc::choice(2, SIGN)],
            &["abs is never negative (except i64::MIN)"],
            "a = ±z",
        )
    })
}

// ---------------------------------------------------------------------------------------------
// imin, imax

/// `z = min(a, b)` (or max): which operand is z (a choice, with both unknown), θ for the other,
/// checked not to be below z (above, for max).
#[derive(Clone, Copy, Debug)]
pub struct IntMinMax(pub(crate) Extremum);

impl IntMinMax {
    fn other_role(&self, which: &str) -> String {
        self.0.operand_role(which, "")
    }

    /// θ for the operand that is not the result, drawn only from the side of z it may be on.
    fn bounded(&self, e: &mut Emitter<'_>, role: &str, z: Value) -> Result<Value, RuleError> {
        self.0.read_other(e, (z, z), role, false)
    }

    /// The unknown operand when the other is known to be `k`.
    fn solve_one(
        &self,
        e: &mut Emitter<'_>,
        (z, k): (Value, Value),
        role: &str,
    ) -> Result<Value, RuleError> {
        let same = e.ieq(z, k);
        e.if_value(
            same,
            Type::I64,
            |e| self.bounded(e, role, z),
            |e| {
                let ok = self.0.beyond(e, z, k);
                e.check(ok, &self.0.known_reason())?;
                Ok(z)
            },
        )
    }
}

impl From<IntMinMax> for Spec {
    fn from(r: IntMinMax) -> Spec {
        Spec::binary("pick")
            .both(
                move |e, z| {
                    let c = e.choice(2, &r.0.which_role())?;
                    let o = r.bounded(e, &r.other_role("the other"), z)?;
                    r.0.place(e, c, z, o)
                },
                move |e, z, a, b| {
                    let a_is = e.ieq(a, z);
                    r.0.record_placed(e, a_is, (a, b), &r.other_role("the other"))
                },
            )
            .operand(
                Side::Left,
                move |e, z, b| r.solve_one(e, (z, b), &r.other_role("left")),
                move |e, z, a, b| {
                    let same = e.ieq(z, b);
                    record_if(e, same, a, &r.other_role("left"))
                },
            )
            .operand(
                Side::Right,
                move |e, z, a| r.solve_one(e, (z, a), &r.other_role("right")),
                move |e, z, a, b| {
                    let same = e.ieq(z, a);
                    record_if(e, same, b, &r.other_role("right"))
                },
            )
            .doc(move |pattern| {
                let checks = [
                    "the other operand is beyond the result",
                    "the result is beyond the known operand",
                ];
                match unknowns2(pattern) {
                    (true, true) => RuleDoc::exact(
                        vec![
                            ThetaDoc::choice(2, &r.0.which_role()),
                            ThetaDoc::value(Domain::Int, &r.other_role("the other")),
                        ],
                        &checks,
                        "one operand is z (choice), the other θ",
                    ),
                    (true, false) => RuleDoc::exact(
                        vec![ThetaDoc::value(Domain::Int, &r.other_role("left")).when("z = b")],
                        &checks,
                        "a = θ if z = b, else a = z",
                    ),
                    _ => RuleDoc::exact(
                        vec![ThetaDoc::value(Domain::Int, &r.other_role("right")).when("z = a")],
                        &checks,
                        "b = θ if z = a, else b = z",
                    ),
                }
            })
    }
}

// ---------------------------------------------------------------------------------------------
// imul

const FREE_FACTOR: &str = "the factor (any: the other is 0)";
const HIGH_BITS: &str = "high bits of the factor (only the top tz(other) bits are used)";

/// The solutions of [`imul`].
struct Imul;

/// 0: the known factor is 0; 1: it is odd; 2: it is even, with the trailing zero count.
fn factor_class(e: &mut Emitter<'_>, c: Value) -> Result<(Value, Value), RuleError> {
    let k = e.ctz(c);
    let zero = e.ic(0);
    let c0 = e.ieq(c, zero);
    let odd = e.ieq(k, zero);
    let one = e.ic(1);
    let two = e.ic(2);
    let rest = e.select(odd, one, two)?;
    let class = e.select(c0, zero, rest)?;
    Ok((class, k))
}

/// The inverse of odd `u` modulo 2^B for a word of B bits (Newton's iteration doubles the
/// correct low bits: v = u is right to 3 bits, six steps reach 192). One definition for the
/// rules here and the solvers of `pinv` (`solve::modular`).
///
/// ```
/// use pinv_primitives::rules::i64_arith::odd_inverse;
/// assert_eq!(13u64.wrapping_mul(odd_inverse(13u64)), 1);
/// assert_eq!(7u8.wrapping_mul(odd_inverse(7u8)), 1);
/// ```
pub fn odd_inverse<W: PrimInt + WrappingMul + WrappingSub>(u: W) -> W {
    debug_assert!(u & W::one() == W::one());
    let two = W::one() + W::one();
    let mut v = u;
    for _ in 0..6 {
        v = v.wrapping_mul(&two.wrapping_sub(&u.wrapping_mul(&v)));
    }
    v
}

/// Emits the solutions of `a·x = v` mod 2^`width` for a constant `a = 2^k·u` (u odd, k below
/// the width): fails with `reason` unless v's low k bits are zero, then `x = (v >> k)·u⁻¹` mod
/// 2^(width − k), with θ (`role`, domain `bits[free]`) for the `free` bits above that (none
/// when `free` is 0). The `imul` rule and `pinv`'s sums mod 2^k solve with it.
pub fn emit_scaled_solve(
    e: &mut Emitter<'_>,
    v: Value,
    a: u64,
    width: u32,
    free: u64,
    reason: &str,
    role: &str,
) -> Result<Value, RuleError> {
    let k = a.trailing_zeros();
    let inv = e.ic(odd_inverse(a >> k) as i64);
    let mut x = if k == 0 {
        e.imul(v, inv)
    } else {
        let low = e.ic(((1u64 << k) - 1) as i64);
        let lowbits = e.iand(v, low);
        let zero = e.ic(0);
        let ok = e.ieq(lowbits, zero);
        e.check(ok, reason)?;
        let kv = e.ic(i64::from(k));
        let q = e.ishr(v, kv);
        e.imul(q, inv)
    };
    if width - k < 64 {
        let keep = e.ic(((1u64 << (width - k)) - 1) as i64);
        x = e.iand(x, keep);
    }
    if free != 0 {
        let h = e.theta(Domain::Bits { mask: free }, role)?;
        x = e.ior(x, h);
    }
    Ok(x)
}

/// The high `k` bits of a word (`k` in 1..64).
fn high_bits(k: u32) -> u64 {
    !0u64 << (64 - k)
}

impl Imul {
    /// The unknown factor x of `z = x · c` for a constant `c = m·2^k`: decided when the inverse
    /// is emitted, so the code is one multiplication by m⁻¹ (and, for even c, a test of z's
    /// low bits and θ for exactly the k high bits x loses).
    fn solve_constant(e: &mut Emitter<'_>, z: Value, c: u64) -> Result<Value, RuleError> {
        if c == 0 {
            let zero = e.ic(0);
            let ok = e.ieq(z, zero);
            e.check(ok, "a product with a factor 0 is 0")?;
            return e.theta(Domain::Int, FREE_FACTOR);
        }
        let k = c.trailing_zeros();
        let free = if k == 0 { 0 } else { high_bits(k) };
        let reason = "z is not a multiple of the power of two that divides the known factor";
        emit_scaled_solve(e, z, c, 64, free, reason, HIGH_BITS)
    }

    fn pgf_constant(e: &mut Emitter<'_>, x: Value, c: u64) -> Result<(), RuleError> {
        match c {
            0 => e.record(x, FREE_FACTOR),
            c if c % 2 == 1 => Ok(()),
            c => {
                let mask = e.ic(high_bits(c.trailing_zeros()) as i64);
                let h = e.iand(x, mask);
                e.record(h, HIGH_BITS)
            }
        }
    }

    /// The unknown factor x of `z = x · c`.
    fn solve(e: &mut Emitter<'_>, z: Value, c: Value) -> Result<Value, RuleError> {
        if let Some(Const::I64(c)) = e.constant_of(c) {
            return Imul::solve_constant(e, z, c as u64);
        }
        let (class, k) = factor_class(e, c)?;
        let r = e.switch(class, 3, &[Type::I64], |e, arm| match arm {
            0 => {
                let zero = e.ic(0);
                let ok = e.ieq(z, zero);
                e.check(ok, "a product with a factor 0 is 0")?;
                Ok(vec![e.theta(Domain::Int, FREE_FACTOR)?])
            }
            1 => {
                let inv = e.mul_inverse(c);
                Ok(vec![e.imul(z, inv)])
            }
            _ => {
                let low = e.low_mask(k);
                let zl = e.iand(z, low);
                let zero = e.ic(0);
                let ok = e.ieq(zl, zero);
                e.check(
                    ok,
                    "z is not a multiple of the power of two that divides the known factor",
                )?;
                let m = e.ishr(c, k);
                let inv = e.mul_inverse(m);
                let zk = e.ishr(z, k);
                let base = e.imul(zk, inv);
                let sixty_four = e.ic(64);
                let width = e.isub(sixty_four, k);
                let mask = e.low_mask(width);
                let base = e.iand(base, mask);
                // θ holds the k high bits in place, as for a constant factor
                // ([`Imul::solve_constant`]): the PGF may know the factor as a constant where
                // the inverse does not (or the other way round), and both read one tape.
                let h = e.theta(Domain::Int, HIGH_BITS)?;
                let high_mask = e.inot(mask);
                let high = e.iand(h, high_mask);
                Ok(vec![e.ior(base, high)])
            }
        })?;
        Ok(r[0])
    }

    fn pgf(e: &mut Emitter<'_>, x: Value, c: Value) -> Result<(), RuleError> {
        if let Some(Const::I64(c)) = e.constant_of(c) {
            return Imul::pgf_constant(e, x, c as u64);
        }
        let (class, k) = factor_class(e, c)?;
        e.switch(class, 3, &[], |e, arm| {
            match arm {
                0 => e.record(x, FREE_FACTOR)?,
                1 => {}
                _ => {
                    let sixty_four = e.ic(64);
                    let width = e.isub(sixty_four, k);
                    let low = e.low_mask(width);
                    let high_mask = e.inot(low);
                    let h = e.iand(x, high_mask);
                    e.record(h, HIGH_BITS)?;
                }
            }
            Ok(vec![])
        })?;
        Ok(())
    }
}

/// `z = a · b` (wrapping). See the module docs.
pub fn imul() -> Spec {
    Spec::binary("mul-inverse")
        .theta_first(Side::Right, "right operand", |e, _| {
            e.theta(Domain::Int, "right operand")
        })
        .operand(Side::Left, Imul::solve, |e, _, a, b| Imul::pgf(e, a, b))
        .operand(Side::Right, Imul::solve, |e, _, a, b| Imul::pgf(e, b, a))
        .doc(|pattern| {
            let mut thetas = Vec::new();
            if pattern.unknowns() == 2 {
                thetas.push(ThetaDoc::value(Domain::Int, "right operand"));
            }
            thetas.push(ThetaDoc::value(Domain::Int, FREE_FACTOR).when("the known factor is 0"));
            thetas.push(ThetaDoc::value(Domain::Int, HIGH_BITS).when("the known factor is even"));
            // (For a constant factor m·2^k the high bits are one read of the k top bits,
            // `Domain::Bits`, and an odd constant reads nothing.)
            let summary = match unknowns2(pattern) {
                (true, true) => {
                    "b = θ, a = (z / 2^k)·m⁻¹ mod 2^(64−k), with θ's top k bits, for b = m·2^k"
                }
                (true, false) => {
                    "a = (z / 2^k)·m⁻¹ mod 2^(64−k), with θ's top k bits, for b = m·2^k"
                }
                _ => "b = (z / 2^k)·m⁻¹ mod 2^(64−k), with θ's top k bits, for a = m·2^k",
            };
            RuleDoc::exact(
                thetas,
                &[
                    "a product with a factor 0 is 0",
                    "z is not a multiple of the power of two that divides the known factor",
                ],
                summary,
            )
        })
}

// ---------------------------------------------------------------------------------------------
// idiv

const REMAINDER: &str = "remainder a − z·b (|r| < |b|, the sign of a)";
const DIVISOR: &str = "divisor";
const DIVISOR_FREE: &str = "divisor (|b| > |a|)";
const DIVISOR_STEP: &str = "steps of the divisor in from |a| / |z|";

/// The solutions of [`idiv`].
struct Idiv;

/// The divisor of largest magnitude for `a / b = z` (z ≠ 0): `a / z`, or i64::MAX for
/// `i64::MIN / -1`, computed without trapping.
fn outer_divisor(e: &mut Emitter<'_>, a: Value, z: Value) -> Result<Value, RuleError> {
    let min = e.ic(i64::MIN);
    let minus_one = e.ic(-1);
    let a_min = e.ieq(a, min);
    let z_m1 = e.ieq(z, minus_one);
    let special = e.band(a_min, z_m1);
    let one = e.ic(1);
    let zero = e.ic(0);
    let z0 = e.ieq(z, zero);
    let unsafe_ = e.bor(special, z0);
    let safe_z = e.select(unsafe_, one, z)?;
    let q = e.op2(Opcode::Idiv, a, safe_z);
    let max = e.ic(i64::MAX);
    e.select(special, max, q)
}

/// The sign of `x` as ±1 (1 for 0).
fn sign(e: &mut Emitter<'_>, x: Value) -> Result<Value, RuleError> {
    let zero = e.ic(0);
    let neg = e.ilt(x, zero);
    let one = e.ic(1);
    let minus_one = e.ic(-1);
    e.select(neg, minus_one, one)
}

/// A constant divisor c (not 0 nor i64::MIN), whose remainders `|r| < |c|` can be drawn from a
/// small range instead of all i64.
fn constant_divisor(e: &Emitter<'_>, b: Value) -> Option<i64> {
    e.constant_of(b)
        .and_then(|c| c.as_i64())
        .filter(|&c| c != 0 && c != i64::MIN)
}

const REMAINDER_SIZE: &str = "size of the remainder |a − z·b| (< |b|)";

/// The remainder r = a − z·b of a division by a constant c ≠ 0. For z ≠ 0 it has the sign of
/// z·c (a truncated quotient z ≠ 0 means a has that sign), so θ is its size in `0..|c|`; for
/// z = 0 it is a itself, anywhere in `−(|c|−1)..=|c|−1`.
fn remainder_by_constant(e: &mut Emitter<'_>, z: Value, c: i64) -> Result<Value, RuleError> {
    let m = c.abs() - 1;
    let zero = e.ic(0);
    let z0 = e.ieq(z, zero);
    e.if_value(
        z0,
        Type::I64,
        |e| e.theta(Domain::IntRange { lo: -m, hi: m }, REMAINDER),
        |e| {
            let t = e.theta(Domain::IntRange { lo: 0, hi: m }, REMAINDER_SIZE)?;
            let zero = e.ic(0);
            let z_pos = e.igt(z, zero);
            let (plus, minus) = (e.ic(1), e.ic(-1));
            let s = if c > 0 {
                e.select(z_pos, plus, minus)?
            } else {
                e.select(z_pos, minus, plus)?
            };
            Ok(e.imul(s, t))
        },
    )
}

/// Records what [`remainder_by_constant`] reads for the remainder `r`.
fn record_remainder_by_constant(e: &mut Emitter<'_>, z: Value, r: Value) -> Result<(), RuleError> {
    let zero = e.ic(0);
    let z0 = e.ieq(z, zero);
    e.branch(
        z0,
        |e| e.record(r, REMAINDER),
        |e| {
            let size = e.op1(Opcode::Iabs, r);
            e.record(size, REMAINDER_SIZE)?;
            Ok(())
        },
    )?;
    Ok(())
}

impl Idiv {
    fn solve_dividend(e: &mut Emitter<'_>, z: Value, b: Value) -> Result<Value, RuleError> {
        let zero = e.ic(0);
        let nonzero = e.ine(b, zero);
        e.check(nonzero, "the divisor is 0")?;
        let r = match constant_divisor(e, b) {
            Some(c) => remainder_by_constant(e, z, c)?,
            None => e.theta(Domain::Int, REMAINDER)?,
        };
        let zb = e.imul(z, b);
        Ok(e.iadd(zb, r))
    }

    fn solve_divisor(e: &mut Emitter<'_>, z: Value, a: Value) -> Result<Value, RuleError> {
        let zero = e.ic(0);
        let z0 = e.ieq(z, zero);
        e.if_value(
            z0,
            Type::I64,
            |e| e.theta(Domain::Int, DIVISOR_FREE),
            |e| {
                let b0 = outer_divisor(e, a, z)?;
                let t = e.theta(
                    Domain::IntRange {
                        lo: 0,
                        hi: i64::MAX,
                    },
                    DIVISOR_STEP,
                )?;
                let s = sign(e, b0)?;
                let step = e.imul(s, t);
                Ok(e.isub(b0, step))
            },
        )
    }
}

/// `z = a / b` (truncating). See the module docs.
pub fn idiv() -> Spec {
    Spec::binary("mul-rem")
        .theta_first(Side::Right, DIVISOR, |e, _| e.theta(Domain::Int, DIVISOR))
        .operand(Side::Left, Idiv::solve_dividend, |e, z, a, b| {
            let zb = e.imul(z, b);
            let r = e.isub(a, zb);
            match constant_divisor(e, b) {
                Some(_) => record_remainder_by_constant(e, z, r),
                None => e.record(r, REMAINDER),
            }
        })
        .operand(Side::Right, Idiv::solve_divisor, |e, z, a, b| {
            let zero = e.ic(0);
            let z0 = e.ieq(z, zero);
            e.branch(
                z0,
                |e| e.record(b, DIVISOR_FREE),
                |e| {
                    let b0 = outer_divisor(e, a, z)?;
                    let s = sign(e, b0)?;
                    let diff = e.isub(b0, b);
                    let t = e.imul(diff, s);
                    e.record(t, DIVISOR_STEP)?;
                    Ok(())
                },
            )?;
            Ok(())
        })
        .finish(|e, a, b, z| check_division(e, Opcode::Idiv, a, b, z))
        .doc(|pattern| {
            let checks = [
                "the divisor is 0",
                "i64::MIN divided by -1 overflows",
                "idiv of the solution is z (θ out of range)",
            ];
            match unknowns2(pattern) {
                (true, true) => RuleDoc::exact(
                    vec![
                        ThetaDoc::value(Domain::Int, DIVISOR),
                        ThetaDoc::value(Domain::Int, REMAINDER),
                    ],
                    &checks,
                    "b = θ, a = z·b + r (r = θ)",
                ),
                (true, false) => {
                    RuleDoc::exact(
                        vec![
                    ThetaDoc::value(Domain::Int, REMAINDER)
                        .when("b is not a constant, or z = 0 (then within |b|)"),
                    ThetaDoc::value(
                        Domain::IntRange {
                            lo: 0,
                            hi: i64::MAX,
                        },
                        REMAINDER_SIZE,
                    )
                    .when("b is a constant c and z ≠ 0 (then below |c|; r takes the sign of z·c)"),
                ],
                        &checks,
                        "a = z·b + r (r = θ)",
                    )
                }
                _ => RuleDoc::exact(
                    vec![
                        ThetaDoc::value(Domain::Int, DIVISOR_FREE).when("z = 0"),
                        ThetaDoc::value(
                            Domain::IntRange {
                                lo: 0,
                                hi: i64::MAX,
                            },
                            DIVISOR_STEP,
                        )
                        .when("z ≠ 0"),
                    ],
                    &checks,
                    "z = 0: b = θ; else b = a/z ∓ θ",
                ),
            }
        })
}

// ---------------------------------------------------------------------------------------------
// irem

const MULTIPLES: &str = "whole multiples of |b| from z to a";
const QUOTIENT_ANY: &str = "quotient a / b (z = 0)";
const QUOTIENT: &str = "quotient trunc(a / b) (≠ 0)";

/// The solutions of [`irem`].
struct Irem;

impl Irem {
    fn solve_dividend(e: &mut Emitter<'_>, z: Value, b: Value) -> Result<Value, RuleError> {
        let zero = e.ic(0);
        let nonzero = e.ine(b, zero);
        e.check(nonzero, "the divisor is 0")?;
        // |z| < |b|, with |i64::MIN| = 2^63.
        let min = e.ic(i64::MIN);
        let z_not_min = e.ine(z, min);
        let b_min = e.ieq(b, min);
        let az = e.op1(Opcode::Iabs, z);
        let ab = e.op1(Opcode::Iabs, b);
        let smaller = e.ilt(az, ab);
        let fits = e.bor(b_min, smaller);
        let ok = e.band(z_not_min, fits);
        e.check(ok, "a remainder is smaller than the divisor in magnitude")?;
        let z0 = e.ieq(z, zero);
        e.if_value(
            z0,
            Type::I64,
            |e| {
                let n = e.theta(Domain::Int, QUOTIENT_ANY)?;
                Ok(e.imul(n, b))
            },
            |e| {
                let n = e.theta(
                    Domain::IntRange {
                        lo: 0,
                        hi: i64::MAX,
                    },
                    MULTIPLES,
                )?;
                let ab = e.op1(Opcode::Iabs, b);
                let step = e.imul(n, ab);
                let s = sign(e, z)?;
                let step = e.imul(step, s);
                Ok(e.iadd(z, step))
            },
        )
    }

    fn pgf_dividend(e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
        let zero = e.ic(0);
        let z0 = e.ieq(z, zero);
        e.branch(
            z0,
            |e| {
                let n = e.op2(Opcode::Idiv, a, b);
                e.record(n, QUOTIENT_ANY)?;
                Ok(())
            },
            |e| {
                let diff = e.isub(a, z);
                let s = sign(e, z)?;
                let diff = e.imul(diff, s);
                let ab = e.op1(Opcode::Iabs, b);
                // |b| is 2^63 (i64::MIN) only for b = i64::MIN, where n is 0.
                let min = e.ic(i64::MIN);
                let b_min = e.ieq(ab, min);
                let one = e.ic(1);
                let safe = e.select(b_min, one, ab)?;
                let n = e.op2(Opcode::Idiv, diff, safe);
                let n = e.select(b_min, zero, n)?;
                e.record(n, MULTIPLES)?;
                Ok(())
            },
        )?;
        Ok(())
    }

    fn solve_divisor(e: &mut Emitter<'_>, z: Value, a: Value) -> Result<Value, RuleError> {
        let same = e.ieq(z, a);
        e.if_value(
            same,
            Type::I64,
            |e| e.theta(Domain::Int, DIVISOR_FREE),
            |e| {
                let q = e.theta(Domain::Int, QUOTIENT)?;
                let zero = e.ic(0);
                let nonzero = e.ine(q, zero);
                e.check(nonzero, "the quotient is 0 but z ≠ a")?;
                let num = e.isub(a, z);
                let min = e.ic(i64::MIN);
                let minus_one = e.ic(-1);
                let n_min = e.ieq(num, min);
                let q_m1 = e.ieq(q, minus_one);
                let overflow = e.band(n_min, q_m1);
                let ok = e.bnot(overflow);
                e.check(ok, "a − z divided by the quotient overflows")?;
                let rem = e.op2(Opcode::Irem, num, q);
                let divisible = e.ieq(rem, zero);
                e.check(divisible, "a − z is not a multiple of the quotient θ")?;
                Ok(e.op2(Opcode::Idiv, num, q))
            },
        )
    }
}

/// `z = a % b` (truncating, the sign of a). See the module docs.
pub fn irem() -> Spec {
    Spec::binary("multiple")
        .theta_first(Side::Right, DIVISOR, |e, _| e.theta(Domain::Int, DIVISOR))
        .operand(Side::Left, Irem::solve_dividend, Irem::pgf_dividend)
        .operand(Side::Right, Irem::solve_divisor, |e, z, a, b| {
            let same = e.ieq(z, a);
            e.branch(
                same,
                |e| e.record(b, DIVISOR_FREE),
                |e| {
                    let q = e.op2(Opcode::Idiv, a, b);
                    e.record(q, QUOTIENT)?;
                    Ok(())
                },
            )?;
            Ok(())
        })
        .finish(|e, a, b, z| check_division(e, Opcode::Irem, a, b, z))
        .doc(|pattern| {
            let checks = [
                "the divisor is 0",
                "a remainder is smaller than the divisor in magnitude",
                "irem of the solution is z (θ out of range)",
            ];
            let dividend = vec![
                ThetaDoc::value(Domain::Int, QUOTIENT_ANY).when("z = 0"),
                ThetaDoc::value(
                    Domain::IntRange {
                        lo: 0,
                        hi: i64::MAX,
                    },
                    MULTIPLES,
                )
                .when("z ≠ 0"),
            ];
            match unknowns2(pattern) {
                (true, true) => {
                    let mut thetas = vec![ThetaDoc::value(Domain::Int, DIVISOR)];
                    thetas.extend(dividend);
                    RuleDoc::exact(thetas, &checks, "b = θ, a = z ± n·|b| (n = θ ≥ 0)")
                }
                (true, false) => RuleDoc::exact(dividend, &checks, "a = z ± n·|b| (n = θ ≥ 0)"),
                _ => RuleDoc::exact(
                    vec![
                        ThetaDoc::value(Domain::Int, DIVISOR_FREE).when("z = a"),
                        ThetaDoc::value(Domain::Int, QUOTIENT).when("z ≠ a"),
                    ],
                    &[
                        "the quotient is 0 but z ≠ a",
                        "a − z is not a multiple of the quotient θ",
                        "irem of the solution is z (θ out of range)",
                    ],
                    "z = a: b = θ; else b = (a − z) / q (q = θ)",
                ),
            }
        })
}
