//! f64 arithmetic: `fadd fsub fmul fdiv frem fneg`. (This module is the model the other rule
//! families follow.)
//!
//! Each binary rule solves the one-unknown patterns in closed form and [settles](super::settle)
//! the result, so that operands the output pins only loosely (an operand absorbed by a much
//! larger one, a zero factor, an infinite or NaN output) are still reached, through an offset θ.
//! With both operands unknown, θ gives one operand and the other is solved as above. Every
//! solution ends with [`verify_forward`](super::verify_forward).

use super::ops::Ops;
use super::settle::{
    settle, settle_doc, settle_guarded, settle_pgf, settle_pgf_guarded, small_multiple,
};
use super::spec::{rows, Closed, Side, Spec};
use super::unknowns2;
use crate::emit::Emitter;
use crate::overlay::Layer;
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    use Closed::{OtherThen, ZThen};
    use Opcode::{Fadd, Fdiv, Fmul, Fsub};
    const TOO_LARGE: &str = "θ too large for z loses precision";
    // op => closed_forms((name, op, its sign), what a failing θ did, left: (closed form, what
    //       the operand is called, formula), right: the same, the operand θ gives first)
    rows! { layer;
        Fadd => closed_forms(("sub", Fadd, "+"), TOO_LARGE, (ZThen(Fsub), "left operand", "z − b"),
            (ZThen(Fsub), "right operand", "z − a"), right_of(Fadd));
        Fsub => closed_forms(("add", Fsub, "−"), TOO_LARGE, (ZThen(Fadd), "left operand", "z + b"),
            (OtherThen(Fsub), "right operand", "a − z"), right_of(Fsub));
        Fdiv => closed_forms(("mul", Fdiv, "/"), "a θ divisor that is too large or small fails",
            (ZThen(Fmul), "dividend", "z · b"), (OtherThen(Fdiv), "divisor", "a / z"), divisor_first());
        Fmul => fmul();
        Frem => frem();
        // `z = −a`: `a = −z`, exactly (the sign bit flips back, also of zeros and NaNs).
        Fneg => Spec::bijection("neg", |e, z| e.fneg(z), "a = −z");
    }
}

/// One operand of a [`closed_forms`] rule: its closed form, what it is called, and the formula
/// the closed form computes (`"z − b"`).
type Form = (Closed, &'static str, &'static str);

/// The operand θ gives first when both are unknown: its role, its reads (for the docs) and how
/// it is read.
type First = (
    &'static str,
    Vec<ThetaDoc>,
    fn(&mut Emitter<'_>, Value) -> Result<Value, RuleError>,
);

/// `z = op(a, b)` where each operand has a closed form by one primitive (the other operand
/// known), [settled](super::settle) against `op`; with both unknown θ gives the right operand
/// (`first`). Every solution is checked (`fails` says what a θ that fails the check did).
/// fadd, fsub, fdiv:
/// - `z = a + b`: `a = z − b`, `b = z − a` (an offset θ where the known operand absorbs the
///   unknown one, or z is not finite);
/// - `z = a − b`: `a = z + b`, `b = a − z`;
/// - `z = a / b`: `a = z · b`, `b = a / z`; with both unknown θ is the divisor, nonzero when z
///   is finite (only ±inf and NaN come from dividing by 0).
fn closed_forms(
    (name, op, sign): (&'static str, Opcode, &'static str),
    fails: &'static str,
    (lc, l_name, l_formula): Form,
    (rc, r_name, r_formula): Form,
    (role, reads, theta): First,
) -> Spec {
    let l_role = format!("{l_name}: offset from {l_formula}");
    let r_role = format!("{r_name}: offset from {r_formula}");
    let check = format!("a {sign} b = z ({fails})");
    let (l_doc, r_doc) = (settle_doc(&l_role), settle_doc(&r_role));
    Spec::binary(name)
        .theta_first(Side::Right, role, theta)
        .settled(Side::Left, op, lc, l_role)
        .settled(Side::Right, op, rc, r_role)
        .verified(op)
        .doc(move |pattern| {
            let (thetas, summary) = match unknowns2(pattern) {
                (true, true) => {
                    let mut thetas = reads.clone();
                    thetas.push(l_doc.clone());
                    (thetas, format!("b = θ, a = {l_formula}"))
                }
                (true, false) => (vec![l_doc.clone()], format!("a = {l_formula}")),
                _ => (vec![r_doc.clone()], format!("b = {r_formula}")),
            };
            RuleDoc::rounded(thetas, &[&check], &summary)
        })
}

const RIGHT: &str = "right operand";

/// The right operand of `z = a + b` or `z = a − b`: any real, drawn only from the values that
/// leave both operands in their ranges ([`right_within`]).
fn right_of(op: Opcode) -> First {
    let reads = vec![ThetaDoc::value(Domain::Real, RIGHT)];
    let read: fn(&mut Emitter<'_>, Value) -> Result<Value, RuleError> = match op {
        Opcode::Fsub => |e, z| right_within(e, z, true),
        _ => |e, z| right_within(e, z, false),
    };
    (RIGHT, reads, read)
}

/// Operand `i`'s range where it bounds something (an end is finite): `sinh` of an unknown has
/// the range of every real, which narrows nothing.
fn bounding(e: &Emitter<'_>, i: usize) -> Option<(f64, f64)> {
    e.operand_range(i)
        .filter(|(lo, hi)| lo.is_finite() || hi.is_finite())
}

/// Reads `b` of `z = a + b` (or `z = a − b` where `difference`) with `a` unknown too, from the
/// reals narrowed to `b`'s own range and, where `a`'s range `[lo, hi]` is known, to the values
/// that leave `a = z − b` (`a = z + b`) in it: `b ∈ [z − hi, z − lo]` (`[lo − z, hi − z]`), a
/// domain that depends on y (`sin(t) + noise`: the noise within 1 of z, where any real would
/// leave `sin(t)` above 1 or below −1 for almost every θ).
///
/// Complete: the forward operands satisfy `a + b = z + ε` with `|ε|` at most half an ulp of z,
/// so `b` lies in the interval computed from z, once it is widened by the tolerance relative
/// to the magnitudes involved (which also covers a z that earlier steps of the inverse computed
/// within the tolerance). A z that is not finite leaves `b` free of `a`'s range (`exp(a) + b =
/// inf` for an infinite `a`, and a NaN from a NaN `a`), and the domain keeps NaN, which `b`'s
/// own range does not speak of.
fn right_within(e: &mut Emitter<'_>, z: Value, difference: bool) -> Result<Value, RuleError> {
    let left = bounding(e, 0);
    if bounding(e, 1).is_none() && left.is_none() {
        return e.theta(Domain::Real, RIGHT);
    }
    let (mut below, mut above) = (e.fc(f64::NEG_INFINITY), e.fc(f64::INFINITY));
    if let Some((lo, hi)) = left {
        let (lo_c, hi_c) = (e.fc(lo), e.fc(hi));
        let (l, h) = if difference {
            (e.fsub(lo_c, z), e.fsub(hi_c, z))
        } else {
            (e.fsub(z, hi_c), e.fsub(z, lo_c))
        };
        let ends = [lo, hi]
            .into_iter()
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs()));
        let az = e.fabs(z);
        let base = e.fc(1.0 + ends);
        let scale = e.fadd(az, base);
        let tol = e.fc(e.options().tolerance);
        let delta = e.fmul(tol, scale);
        let l = e.fsub(l, delta);
        let h = e.fadd(h, delta);
        let finite = e.is_finite(z);
        below = e.select(finite, l, below)?;
        above = e.select(finite, h, above)?;
    }
    // `real` narrowed at run time keeps NaN: `a − atan(a · c)` is NaN with both operands NaN.
    right_in_own_range(e, below, above, RIGHT)
}

/// Reads the right operand from the reals narrowed at run time to `[below, above]`, cut to the
/// operand's own range where it has one (what the sum's and the divisor's reads share).
fn right_in_own_range(
    e: &mut Emitter<'_>,
    below: Value,
    above: Value,
    role: &str,
) -> Result<Value, RuleError> {
    in_own_range(e, 1, below, above, role)
}

/// θ for operand `i` within `[below, above]` and its own range.
fn in_own_range(
    e: &mut Emitter<'_>,
    i: usize,
    mut below: Value,
    mut above: Value,
    role: &str,
) -> Result<Value, RuleError> {
    if let Some((lo, hi)) = bounding(e, i) {
        let (lo_c, hi_c) = (e.fc(lo), e.fc(hi));
        below = e.op2(Opcode::Fmax, below, lo_c);
        above = e.op2(Opcode::Fmin, above, hi_c);
    }
    e.theta_within(Domain::Real, below, above, role)
}

/// The divisor: nonzero when z is finite.
fn divisor_first() -> First {
    let reads = vec![
        ThetaDoc::value(Domain::NonzeroReal, "divisor").when("z is finite"),
        ThetaDoc::value(Domain::Real, "divisor").when("z is ±inf or NaN"),
    ];
    ("divisor", reads, |e, z| {
        let finite = e.is_finite(z);
        e.if_value(
            finite,
            Type::F64,
            |e| match bounding(e, 0) {
                Some(range) => divisor_within(e, z, range),
                None => e.theta_for_operand(1, Domain::NonzeroReal, "divisor"),
            },
            |e| e.theta(Domain::Real, "divisor"),
        )
    })
}

/// The divisor of a finite `z = a / b` with `a` unknown too and its range `[lo, hi]` known:
/// `b = a / z` lies between `lo / z` and `hi / z` (`sin(t) / b = z` leaves `|b| ≤ 1 / |z|`),
/// widened by the tolerance relative to each end (division keeps signs exactly, so an end of 0
/// stays 0), and within `b`'s own range. Where z is 0 the quotients say nothing and the bounds
/// are open. The domain is the reals narrowed at run time, where the nonzero reals cannot be:
/// it holds 0, which the check rejects (`a / 0` is not finite) and which a draw from an
/// interval almost never gives.
fn divisor_within(e: &mut Emitter<'_>, z: Value, (lo, hi): (f64, f64)) -> Result<Value, RuleError> {
    let (lo_c, hi_c) = (e.fc(lo), e.fc(hi));
    let q1 = e.fdiv(lo_c, z);
    let q2 = e.fdiv(hi_c, z);
    let zero = e.fc(0.0);
    let z_zero = e.feq(z, zero);
    let (below, above) = widened_between(e, q1, q2, z_zero)?;
    right_in_own_range(e, below, above, "divisor")
}

/// The interval between `q1` and `q2`, widened by the tolerance relative to each end (an end
/// of 0 stays 0), or all of the reals where `open` holds.
fn widened_between(
    e: &mut Emitter<'_>,
    q1: Value,
    q2: Value,
    open: Value,
) -> Result<(Value, Value), RuleError> {
    let below = e.op2(Opcode::Fmin, q1, q2);
    let above = e.op2(Opcode::Fmax, q1, q2);
    let tol = e.fc(e.options().tolerance);
    let b_abs = e.fabs(below);
    let b_slack = e.fmul(tol, b_abs);
    let below = e.fsub(below, b_slack);
    let a_abs = e.fabs(above);
    let a_slack = e.fmul(tol, a_abs);
    let above = e.fadd(above, a_slack);
    let (neg_inf, inf) = (e.fc(f64::NEG_INFINITY), e.fc(f64::INFINITY));
    Ok((e.select(open, neg_inf, below)?, e.select(open, inf, above)?))
}

// ---------------------------------------------------------------------------------------------
// fmul

const FMUL_A: &str = "left operand: offset from z / b";
const FMUL_B: &str = "right operand: offset from z / a";
const FMUL_ZERO: &str = "the zero factor: offset from z / (other factor)";

fn over(
    e: &mut Emitter<'_>,
    z: Value,
    known: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fdiv(z, known);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fmul(x, known))
}

/// `z = a * b`. One known: the other is `z / known`, settled (a known factor of 0, an underflow
/// to 0 or an overflow to ±inf read the offset θ). Both unknown (INVERSION-EXAMPLES §1):
/// - z ≠ 0: θ nonzero real for `a` (any real when z is NaN), `b = z / a`;
/// - z = 0: a choice of which factor is (the) 0 and θ real for the other, the zero factor
///   `z / other` (signed like z).
pub fn fmul() -> Spec {
    use Closed::ZThen;
    Spec::binary("div")
        .both(fmul_both, fmul_both_pgf)
        .settled(Side::Left, Opcode::Fmul, ZThen(Opcode::Fdiv), FMUL_A)
        .settled(Side::Right, Opcode::Fmul, ZThen(Opcode::Fdiv), FMUL_B)
        .verified(Opcode::Fmul)
        .doc(|pattern| {
            let checks = ["a · b = z (a θ of 0 on the z ≠ 0 path, or too large, fails)"];
            match unknowns2(pattern) {
                (true, true) => RuleDoc::rounded(
                    vec![
                        ThetaDoc::choice(2, "which factor is 0 (0: a, 1: b)").when("z = 0"),
                        ThetaDoc::value(Domain::Real, "the other factor").when("z = 0"),
                        settle_doc(FMUL_ZERO).when("z = 0, and z / other does not pin it"),
                        ThetaDoc::value(Domain::NonzeroReal, "left operand").when("z ≠ 0, not NaN"),
                        ThetaDoc::value(Domain::Real, "left operand").when("z is NaN"),
                        settle_doc(FMUL_B).when("z ≠ 0, and z / a does not pin b"),
                    ],
                    &checks,
                    "z ≠ 0: a = θ, b = z / a (θ for the factor whose partner keeps one sign, within z \
                     over the partner's range, where both have a range); z = 0: one factor 0 \
                     (choice), the other θ",
                ),
                (true, false) => RuleDoc::rounded(vec![settle_doc(FMUL_A)], &checks, "a = z / b"),
                _ => RuleDoc::rounded(vec![settle_doc(FMUL_B)], &checks, "b = z / a"),
            }
        })
}

/// Both factors of `z = a · b` unknown: see [`fmul`].
fn fmul_both(e: &mut Emitter<'_>, z: Value) -> Result<(Value, Value), RuleError> {
    let zero = e.fc(0.0);
    let is_zero = e.feq(z, zero);
    let ab = e.if_else(
        is_zero,
        &[Type::F64, Type::F64],
        |e| {
            let c = e.choice(2, "which factor is 0 (0: a, 1: b)")?;
            let t = e.theta(Domain::Real, "the other factor")?;
            let (d, f) = over(e, z, t);
            let zf = settle(e, d, z, &f, FMUL_ZERO)?;
            let zero_i = e.ic(0);
            let a_is_zero = e.ieq(c, zero_i);
            let a = e.select(a_is_zero, zf, t)?;
            let b = e.select(a_is_zero, t, zf)?;
            Ok(vec![a, b])
        },
        |e| {
            // θ gives the factor `first` (0: a, 1: b), the other is z over it.
            let (first, role, settle_role, partner) = fmul_first(e);
            let nan = e.is_nan(z);
            let t = e.if_else(
                nan,
                &[Type::F64],
                |e| Ok(vec![e.theta(Domain::Real, role)?]),
                |e| {
                    Ok(vec![match partner {
                        Some(range) => factor_within(e, z, first, range, role)?,
                        None => e.theta_for_operand(first, Domain::NonzeroReal, role)?,
                    }])
                },
            )?[0];
            let (d, f) = over(e, z, t);
            let other = settle(e, d, z, &f, settle_role)?;
            Ok(if first == 0 {
                vec![t, other]
            } else {
                vec![other, t]
            })
        },
    )?;
    Ok((ab[0], ab[1]))
}

/// Which factor of `z = a · b` (z ≠ 0) θ gives when both are unknown, with its role and the
/// settle role of the other: the left one, unless the right one has a known range and the left
/// one none (`x * sin(t)`, `x * exp(t)`): then θ draws the right one from its range and every
/// draw leaves a quotient for the left, where a θ for the left would give `sin(t)` beyond ±1
/// for most draws, or `exp(t)` below 0 for half of them. The inverse and the PGF decide
/// alike, from the ranges ([`fmul_theta_factor`]).
///
/// With both ranges known, θ gives the factor whose partner keeps one sign (`exp(u) *
/// sin(t)`, `v² · sin(t)`): it is drawn from the values that leave the quotient in the
/// partner's range ([`factor_within`]), `sin(t)` on z's side of 0, where a θ for `exp(u)`
/// left the quotient beyond ±1 for half the draws. The last value is that partner's range.
fn fmul_first(e: &Emitter<'_>) -> (usize, &'static str, &'static str, Option<(f64, f64)>) {
    match fmul_theta_factor(bounding(e, 0), bounding(e, 1)) {
        (1, partner) => (1, "right operand", FMUL_A, partner),
        (_, partner) => (0, "left operand", FMUL_B, partner),
    }
}

/// The factor of `z = a · b`, both unknown, that θ gives ([`fmul_first`]), from the factors'
/// ranges where they have a finite end (`None`: none), with the partner's range where θ is
/// drawn so that the partner, z over it, stays in that range ([`factor_within`]: both have a
/// range and the partner's keeps one sign, `[lo, hi]` with `lo ≥ 0` or `hi ≤ 0`). A factor
/// that is the zeros alone (`0.0 · p`) leaves the left one, read as ever: its products are
/// zeros, the rule's `z = 0` case. The plan simulation decides as the rule does from this.
pub fn fmul_theta_factor(
    a: Option<(f64, f64)>,
    b: Option<(f64, f64)>,
) -> (usize, Option<(f64, f64)>) {
    let zero = |r: Option<(f64, f64)>| r == Some((0.0, 0.0));
    let one_signed = |(lo, hi): (f64, f64)| lo >= 0.0 || hi <= 0.0;
    if zero(a) || zero(b) {
        return (0, None);
    }
    match (a, b) {
        (None, Some(_)) => (1, None),
        (Some(ra), Some(rb)) if one_signed(ra) && !one_signed(rb) => (1, Some(ra)),
        (Some(_), Some(rb)) if one_signed(rb) => (0, Some(rb)),
        _ => (0, None),
    }
}

/// Whether the `fmul` rule, with both factors unknown, draws θ so that the quotient stays in
/// the partner's range ([`factor_within`]: both ranges known, one keeping one sign). Then every
/// draw gives a product of y, which a split that ignores the ranges (`iso.mul`'s balanced one)
/// would not.
pub fn fmul_splits_within_ranges(e: &Emitter<'_>) -> bool {
    fmul_first(e).3.is_some()
}

/// Factor `first` of a finite nonzero `z = a · b` whose partner has the one-signed range
/// `[lo, hi]`: the partner is `z / t`, which lies in `[lo, hi]` for `t` between `z / lo` and
/// `z / hi` (`z / 0` is ±inf), widened by the tolerance relative to each end and within
/// `first`'s own range. Complete as [`divisor_within`] is: the forward factors give `a · b =
/// z + ε`, and a z earlier steps computed within the tolerance, by the widening. A z that is
/// ±inf leaves the bounds open.
fn factor_within(
    e: &mut Emitter<'_>,
    z: Value,
    first: usize,
    (lo, hi): (f64, f64),
    role: &str,
) -> Result<Value, RuleError> {
    // A zero end is the side's zero, so that z over it is the infinity of the quotients' sign
    // (`[−∞, 0]`: z / −0 is −∞ for z > 0, where z / +0 would be +∞).
    let (lo, hi) = match (lo == 0.0, hi == 0.0) {
        (_, true) => (lo, -0.0),
        (true, false) => (0.0, hi),
        _ => (lo, hi),
    };
    let (lo_c, hi_c) = (e.fc(lo), e.fc(hi));
    let q1 = e.fdiv(z, lo_c);
    let q2 = e.fdiv(z, hi_c);
    let finite = e.is_finite(z);
    let infinite = e.bnot(finite);
    let (below, above) = widened_between(e, q1, q2, infinite)?;
    in_own_range(e, first, below, above, role)
}

/// The PGF of [`fmul_both`].
fn fmul_both_pgf(e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
    // The inverse's z ([`Emitter::replayed`]): it decides and divides by it.
    let z = e.replayed(z);
    let zero = e.fc(0.0);
    let is_zero = e.feq(z, zero);
    e.branch(
        is_zero,
        |e| {
            // The factor that is 0, or (after underflow) the smaller one.
            let zero = e.fc(0.0);
            let a0 = e.feq(a, zero);
            let b0 = e.feq(b, zero);
            let aa = e.fabs(a);
            let ab = e.fabs(b);
            let a_smaller = e.fle(aa, ab);
            let not_b0 = e.bnot(b0);
            let pick_a = e.band(not_b0, a_smaller);
            let pick_a = e.bor(a0, pick_a);
            let c0 = e.ic(0);
            let c1 = e.ic(1);
            let c = e.select(pick_a, c0, c1)?;
            e.record(c, "which factor is 0 (0: a, 1: b)")?;
            let t = e.select(pick_a, b, a)?;
            e.record(t, "the other factor")?;
            let x = e.select(pick_a, a, b)?;
            let (d, f) = over(e, z, t);
            settle_pgf(e, d, z, x, &f, FMUL_ZERO)?;
            Ok(())
        },
        |e| {
            let (first, role, settle_role, _) = fmul_first(e);
            let (t, other) = if first == 0 { (a, b) } else { (b, a) };
            e.record(t, role)?;
            let (d, f) = over(e, z, t);
            settle_pgf(e, d, z, other, &f, settle_role)?;
            Ok(())
        },
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// frem

const FREM_A: &str = "dividend: offset from z ± k·|b|";
const FREM_K: &str = "whole multiples of |b| from z to a";
const FREM_Q: &str = "quotient trunc(a / b)";
const FREM_B: &str = "divisor: offset from (a − z) / q";
const FREM_FREE: &str = "divisor (|b| > |a| when z = a)";

/// The candidate `a = z ± k·|b|` (with k·|b| = 0 for k = 0, even for infinite b).
fn frem_a(
    e: &mut Emitter<'_>,
    z: Value,
    b: Value,
    k: Value,
) -> Result<(Value, impl Fn(&mut Emitter<'_>, Value) -> Value), RuleError> {
    let kf = e.i_to_f(k);
    let bb = e.fabs(b);
    let m = e.fmul(kf, bb);
    let zero_i = e.ic(0);
    let k0 = e.ieq(k, zero_i);
    let zero = e.fc(0.0);
    let m = e.select(k0, zero, m)?;
    let step = e.with_sign_of(m, z)?;
    let d = e.fadd(z, step);
    Ok((d, move |e: &mut Emitter<'_>, x: Value| {
        e.op2(Opcode::Frem, x, b)
    }))
}

fn frem_b(
    e: &mut Emitter<'_>,
    z: Value,
    a: Value,
    q: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let num = e.fsub(a, z);
    let qf = e.i_to_f(q);
    let d = e.fdiv(num, qf);
    (d, move |e: &mut Emitter<'_>, x: Value| {
        e.op2(Opcode::Frem, a, x)
    })
}

const MULTIPLES: Domain = Domain::IntRange {
    lo: 0,
    hi: i64::MAX,
};

fn frem_solve_a(e: &mut Emitter<'_>, z: Value, b: Value) -> Result<Value, RuleError> {
    // |z| < |b| unless something is NaN.
    let az = e.fabs(z);
    let ab = e.fabs(b);
    let too_big = e.fge(az, ab);
    let ok = e.bnot(too_big);
    e.check(ok, "a remainder is smaller than the divisor in magnitude")?;
    let k = e.theta(MULTIPLES, FREM_K)?;
    let (d, f) = frem_a(e, z, b, k)?;
    let trusted = small_multiple(e, k);
    settle_guarded(e, d, z, &f, FREM_A, Some(trusted))
}

fn frem_pgf_a(e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
    let aa = e.fabs(a);
    let az = e.fabs(z);
    let ab = e.fabs(b);
    let num = e.fsub(aa, az);
    let q = e.fdiv(num, ab);
    let k = e.round_to_i64(q);
    let zero_i = e.ic(0);
    let k = e.op2(Opcode::Imax, k, zero_i);
    e.record(k, FREM_K)?;
    let (d, f) = frem_a(e, z, b, k)?;
    let trusted = small_multiple(e, k);
    settle_pgf_guarded(e, d, z, a, &f, FREM_A, Some(trusted))
}

/// Whether the divisor is free (`z = a`: quotient 0; or z is NaN).
fn divisor_free(e: &mut Emitter<'_>, z: Value, a: Value) -> Value {
    let same = e.feq(z, a);
    let nan = e.is_nan(z);
    e.bor(same, nan)
}

fn frem_solve_b(e: &mut Emitter<'_>, z: Value, a: Value) -> Result<Value, RuleError> {
    let free = divisor_free(e, z, a);
    e.if_value(
        free,
        Type::F64,
        |e| e.theta(Domain::Real, FREM_FREE),
        |e| {
            let q = e.theta(Domain::Int, FREM_Q)?;
            let (d, f) = frem_b(e, z, a, q);
            let trusted = small_multiple(e, q);
            settle_guarded(e, d, z, &f, FREM_B, Some(trusted))
        },
    )
}

fn frem_pgf_b(e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
    let free = divisor_free(e, z, a);
    e.branch(
        free,
        |e| e.record(b, FREM_FREE),
        |e| {
            let num = e.fsub(a, z);
            let q = e.fdiv(num, b);
            let q = e.round_to_i64(q);
            e.record(q, FREM_Q)?;
            let (d, f) = frem_b(e, z, a, q);
            let trusted = small_multiple(e, q);
            settle_pgf_guarded(e, d, z, b, &f, FREM_B, Some(trusted))?;
            Ok(())
        },
    )?;
    Ok(())
}

/// `z = a % b` (truncated: `a = trunc(a/b)·b + z`, z has the sign of a, |z| < |b|).
/// - b known: `a = z ± k·|b|` with θ `k ≥ 0` (away from 0 on z's side, as the sign rule
///   requires), settled;
/// - a known: when `z = a` (or NaN), θ is the divisor itself (any with |b| > |a|); otherwise θ is
///   the integer quotient `q ≠ 0` and `b = (a − z) / q`, settled;
/// - both unknown: θ is the divisor (nonzero unless z is NaN), then as with b known.
pub fn frem() -> Spec {
    Spec::binary("multiple")
        .theta_first(Side::Right, "divisor", |e, z| {
            let nan = e.is_nan(z);
            e.if_value(
                nan,
                Type::F64,
                |e| e.theta(Domain::Real, "divisor"),
                |e| e.theta_for_operand(1, Domain::NonzeroReal, "divisor"),
            )
        })
        .operand(Side::Left, frem_solve_a, frem_pgf_a)
        .operand(Side::Right, frem_solve_b, frem_pgf_b)
        .verified(Opcode::Frem)
        .doc(|pattern| {
            let checks = [
                "a remainder is smaller than the divisor in magnitude",
                "a % b = z",
            ];
            let k = ThetaDoc::value(MULTIPLES, FREM_K);
            match unknowns2(pattern) {
                (true, true) => RuleDoc::rounded(
                    vec![
                        ThetaDoc::value(Domain::NonzeroReal, "divisor").when("z is not NaN"),
                        ThetaDoc::value(Domain::Real, "divisor").when("z is NaN"),
                        k,
                        settle_doc(FREM_A),
                    ],
                    &checks,
                    "b = θ, a = z ± k·|b| (k = θ ≥ 0, away from 0 on z's side)",
                ),
                (true, false) => RuleDoc::rounded(
                    vec![k, settle_doc(FREM_A)],
                    &checks,
                    "a = z ± k·|b| (k = θ ≥ 0, away from 0 on z's side)",
                ),
                _ => RuleDoc::rounded(
                    vec![
                        ThetaDoc::value(Domain::Real, FREM_FREE).when("z = a or z is NaN"),
                        ThetaDoc::value(Domain::Int, FREM_Q).when("z ≠ a"),
                        settle_doc(FREM_B).when("z ≠ a"),
                    ],
                    &["a % b = z"],
                    "z = a: b = θ (|b| > |a|); else b = (a − z) / q, q = θ",
                ),
            }
        })
}

// ---------------------------------------------------------------------------------------------
// fneg
