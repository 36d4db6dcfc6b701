//! Elementary f64 functions: `exp log sqrt sinh tanh` (monotone: one closed form), `cosh fabs`
//! (even: a sign choice), `floor` (a fractional part θ) and `pow` (by which operand is known).
//!
//! The monotone functions share `monotone`: check the output's domain (a z past the end of a
//! bounded range, `tanh`'s ±1, `atan`'s ±π/2 or `sqrt`'s 0, by no more than the tolerance is
//! moved onto it: computed from other values, it may be an ulp off), compute the closed-form
//! inverse, [settle](super::settle) it (saturation such as `exp x = 0` or `tanh x = 1` reads an
//! offset θ, so those preimages are reached too), and check the forward value.

use super::ops::Ops;
use super::settle::{settle, settle_pgf};
use super::settle::{
    settle_doc, settle_guarded, settle_pgf_guarded, settle_pgf_when, settle_when, use_base,
};
use super::spec::{rows, Side, Spec};
use super::{unknowns2, verify_forward};
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};
use std::f64::consts::LN_2;

pub fn register(layer: &mut Layer) {
    use Opcode::{Exp, Log, Sinh, Sqrt, Tanh};
    // op => monotone(name, op, summary, the output's domain check, the closed-form inverse)
    rows! { layer;
        Exp => monotone("log", Exp, "x = log z", OutputDomain::Check(("exp is never negative", not_negative)), |e, z| Ok(e.op1(Log, z)));
        Log => monotone("exp", Log, "x = exp z", OutputDomain::Any, |e, z| Ok(e.op1(Exp, z)));
        Sqrt => monotone("square", Sqrt, "x = z²", OutputDomain::Onto("sqrt is never negative", 0.0, f64::INFINITY), square_keeping_sign);
        Sinh => monotone("asinh", Sinh, "x = asinh z", OutputDomain::Any, asinh);
        Tanh => monotone("atanh", Tanh, "x = atanh z", OutputDomain::Onto("tanh is between -1 and 1", -1.0, 1.0), atanh);
    }
    layer.add(Callee::Prim(Opcode::Cosh), cosh());
    layer.add(Callee::Prim(Opcode::Fabs), fabs());
    layer.add(Callee::Prim(Opcode::Floor), floor());
    layer.add(Callee::Prim(Opcode::Pow), pow());
}

/// `log(v + sqrt(v² + s))` for v ≥ 0 (s = 1: asinh; s = −1: acosh), as `log v + ln 2` where v²
/// would lose everything (v > 2^28).
fn acosh_or_asinh(e: &mut Emitter<'_>, v: Value, s: f64) -> Result<Value, RuleError> {
    let big = e.fc(268_435_456.0);
    let is_big = e.fgt(v, big);
    e.if_else(
        is_big,
        &[Type::F64],
        |e| {
            let l = e.op1(Opcode::Log, v);
            let ln2 = e.fc(LN_2);
            Ok(vec![e.fadd(l, ln2)])
        },
        |e| {
            let sq = e.fmul(v, v);
            let sc = e.fc(s);
            let sum = e.fadd(sq, sc);
            let root = e.op1(Opcode::Sqrt, sum);
            if s > 0.0 {
                // asinh v = log1p(v + v² / (1 + √(v² + 1))): `log(v + √(v² + 1))` keeps
                // only ulp(1) / v of a small v's precision (v = 10⁻¹³: a thousandth).
                let one = e.fc(1.0);
                let den = e.fadd(one, root);
                let frac = e.fdiv(sq, den);
                let x = e.fadd(v, frac);
                return Ok(vec![log1p(e, x)?]);
            }
            let arg = e.fadd(v, root);
            Ok(vec![e.op1(Opcode::Log, arg)])
        },
    )
    .map(|r| r[0])
}

/// `log(1 + x)`, to a few ulps where `1 + x` rounds most of a small x away: `x · log(u) / (u −
/// 1)` with `u = 1 + x` (x itself where u is 1), for |x| < ½; `log(1 + x)` beyond.
fn log1p(e: &mut Emitter<'_>, x: Value) -> Result<Value, RuleError> {
    let one = e.fc(1.0);
    let u = e.fadd(one, x);
    let l = e.op1(Opcode::Log, u);
    let d = e.fsub(u, one);
    let q = e.fdiv(x, d);
    let small = e.fmul(l, q);
    let is_one = e.feq(u, one);
    let small = e.select(is_one, x, small)?;
    let ax = e.fabs(x);
    let half = e.fc(0.5);
    let near = e.flt(ax, half);
    e.select(near, small, l)
}

/// A domain check of an output: its reason, and the condition as IR (true: in the domain).
pub type OutputCheck = (&'static str, fn(&mut Emitter<'_>, Value) -> Value);

/// What a monotone function's inverse requires of its output z.
#[derive(Clone, Copy)]
pub(crate) enum OutputDomain {
    /// Every f64.
    Any,
    /// What the check says.
    Check(OutputCheck),
    /// The closed interval `[lo, hi]` that the function reaches, both ends included (in f64,
    /// `tanh` reaches ±1 and `atan` ±π/2 rounded; `sqrt` reaches 0 and +∞, and −0 from −0,
    /// which is not below 0), with the reason a z outside it is out of domain. A z outside it by no more than the tolerance is moved onto the end: a z
    /// computed from other values (`y / a` for `a·atan(x) = y`) may land an ulp or so past
    /// the end that the forward value was, and the closed form at the end (`tan(π/2)` ≈
    /// 1.6·10¹⁶) is the preimage there, settled as usual.
    Onto(&'static str, f64, f64),
}

impl OutputDomain {
    /// Checks z, and returns the z the inverse goes on with ([`OutputDomain::moved_onto`]).
    pub(crate) fn check(self, e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
        match self {
            OutputDomain::Any => {}
            OutputDomain::Check((reason, ok)) => {
                let ok = ok(e, z);
                e.check(ok, reason)?;
            }
            OutputDomain::Onto(reason, lo, hi) => {
                let ok = near_interval(e, z, lo, hi);
                e.check(ok, reason)?;
            }
        }
        self.moved_onto(e, z)
    }

    /// z moved onto the interval of [`OutputDomain::Onto`] (itself otherwise): the inverse and
    /// the PGF both go on with it.
    pub(crate) fn moved_onto(self, e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
        match self {
            OutputDomain::Onto(_, lo, hi) => onto_interval(e, z, lo, hi),
            OutputDomain::Any | OutputDomain::Check(_) => Ok(z),
        }
    }
}

/// `!(z < lo − δ) && !(z > hi + δ)`, δ the tolerance at each end (true for NaN).
fn near_interval(e: &mut Emitter<'_>, z: Value, lo: f64, hi: f64) -> Value {
    let tol = e.options().tolerance;
    let below = e.fc(lo - tol * lo.abs().max(1.0));
    let above = e.fc(hi + tol * hi.abs().max(1.0));
    let under = e.flt(z, below);
    let over = e.fgt(z, above);
    let out = e.bor(under, over);
    e.bnot(out)
}

/// z moved onto `[lo, hi]` if it is past an end (NaN stays NaN).
fn onto_interval(e: &mut Emitter<'_>, z: Value, lo: f64, hi: f64) -> Result<Value, RuleError> {
    let lo_c = e.fc(lo);
    let hi_c = e.fc(hi);
    let under = e.flt(z, lo_c);
    let over = e.fgt(z, hi_c);
    let z = e.select(under, lo_c, z)?;
    e.select(over, hi_c, z)
}

pub(crate) const OFFSET: &str = "operand: offset from the closed form";

/// A strictly monotone unary function `op` with a closed-form inverse: `x = closed(z)`, settled
/// and checked, after the output's domain `check`, if it has one. No θ except the settle offset
/// (saturated outputs, NaN, rounding).
pub(crate) fn monotone(
    name: &'static str,
    op: Opcode,
    summary: &'static str,
    domain: OutputDomain,
    closed: fn(&mut Emitter<'_>, Value) -> Result<Value, RuleError>,
) -> Spec {
    Spec::unary(name, move |e, z| {
        let z = domain.check(e, z)?;
        let d = closed(e, z)?;
        let x = settle(e, d, z, &|e, x| e.op1(op, x), OFFSET)?;
        verify_forward(e, op, &[x], z)?;
        Ok(x)
    })
    .records(move |e, z, x| {
        // The inverse's z ([`Emitter::replayed`]), moved onto the domain as the inverse moves it.
        let z = e.replayed(z);
        let z = domain.moved_onto(e, z)?;
        let d = closed(e, z)?;
        settle_pgf(e, d, z, x, &|e, x| e.op1(op, x), OFFSET)
    })
    .doc(move |_| {
        let mut checks: Vec<String> = match domain {
            OutputDomain::Any => Vec::new(),
            OutputDomain::Check((reason, _)) | OutputDomain::Onto(reason, _, _) => {
                vec![reason.to_string()]
            }
        };
        checks.push(format!("`{}` of the solution is the output", op.spelling()));
        RuleDoc {
            thetas: vec![settle_doc(OFFSET)],
            checks,
            exact: false,
            summary: summary.to_string(),
        }
    })
}

/// Whether z's sign bit is clear (−0 is negative).
fn not_negative(e: &mut Emitter<'_>, z: Value) -> Value {
    let neg = e.sign_bit(z);
    e.bnot(neg)
}

/// `z²` with z's sign: `sqrt`'s closed form, which gives −0 for `z = −0` (the root of −0 is
/// −0); every other z it is asked about is not negative.
fn square_keeping_sign(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    let sq = e.fmul(z, z);
    e.with_sign_of(sq, z)
}

fn asinh(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    let az = e.fabs(z);
    let r = acosh_or_asinh(e, az, 1.0)?;
    e.with_sign_of(r, z)
}

/// `½ log((1 + |z|) / (1 − |z|))` with z's sign, as `½ log1p(2|z| / (1 − |z|))`: the
/// quotient rounds most of a small z away.
fn atanh(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    let az = e.fabs(z);
    let one = e.fc(1.0);
    let num = e.fadd(az, az);
    let den = e.fsub(one, az);
    let q = e.fdiv(num, den);
    let l = log1p(e, q)?;
    let half = e.fc(0.5);
    let r = e.fmul(half, l);
    e.with_sign_of(r, z)
}

// ---------------------------------------------------------------------------------------------
// cosh

const SIGN: &str = "sign of the operand (1: negative)";

fn cosh_candidate(e: &mut Emitter<'_>, z: Value, s: Value) -> Result<Value, RuleError> {
    let r = acosh_or_asinh(e, z, -1.0)?;
    let neg = e.fneg(r);
    let one = e.ic(1);
    let is_neg = e.ieq(s, one);
    e.select(is_neg, neg, r)
}

/// The sign choice of `x`: 1 if its sign bit is set (so −0 round-trips), else 0.
pub(crate) fn sign_choice(e: &mut Emitter<'_>, x: Value) -> Value {
    let sb = e.sign_bit(x);
    e.b_to_i(sb)
}

/// `z = cosh x`: a sign choice, `x = ±acosh z`, settled (z near 1 pins x loosely).
pub fn cosh() -> Spec {
    Spec::unary("acosh", |e, z| {
        let one = e.fc(1.0);
        let low = e.flt(z, one);
        let ok = e.bnot(low);
        e.check(ok, "cosh is at least 1")?;
        let s = e.choice(2, SIGN)?;
        let d = cosh_candidate(e, z, s)?;
        let x = settle(e, d, z, &|e, x| e.op1(Opcode::Cosh, x), OFFSET)?;
        verify_forward(e, Opcode::Cosh, &[x], z)?;
        Ok(x)
    })
    .records(|e, z, x| {
        let z = e.replayed(z);
        let s = sign_choice(e, x);
        e.record(s, SIGN)?;
        let d = cosh_candidate(e, z, s)?;
        settle_pgf(e, d, z, x, &|e, x| e.op1(Opcode::Cosh, x), OFFSET)
    })
    .doc(|_| RuleDoc {
        thetas: vec![ThetaDoc::choice(2, SIGN), settle_doc(OFFSET)],
        checks: vec![
            "cosh is at least 1".into(),
            "cosh of the solution is z".into(),
        ],
        exact: false,
        summary: "x = ±acosh z".into(),
    })
}

// ---------------------------------------------------------------------------------------------
// fabs

/// `z = |x|`: a sign choice, `x = ±z`, exactly.
pub fn fabs() -> Spec {
    Spec::unary("sign", |e, z| {
        let neg = e.sign_bit(z);
        let ok = e.bnot(neg);
        e.check(ok, "abs is never negative")?;
        let s = e.choice(2, SIGN)?;
        let one = e.ic(1);
        let is_neg = e.ieq(s, one);
        let nz = e.fneg(z);
        e.select(is_neg, nz, z)
    })
    .records(|e, z, x| {
        let s = sign_choice(e, x);
        e.record(s, SIGN)?;
        // Where the inverse holds another z ([`Emitter::replayed`]), it holds ±that z for x,
        // which the steps before this one solve from.
        let held_z = e.replayed(z);
        if held_z != z {
            let neg = e.sign_bit(x);
            let flipped = e.fneg(held_z);
            let held = e.select(neg, flipped, held_z)?;
            e.note_replay(x, held);
        }
        Ok(())
    })
    .doc(|_| RuleDoc {
        thetas: vec![ThetaDoc::choice(2, SIGN)],
        checks: vec!["abs is never negative".into()],
        exact: true,
        summary: "x = ±z".into(),
    })
}

// ---------------------------------------------------------------------------------------------
// floor

const FRACTION: &str = "fractional part x − floor(x)";
/// Below 2^52 an f64 can have a fractional part.
const FRACTIONAL: f64 = 4_503_599_627_370_496.0;

fn has_fraction(e: &mut Emitter<'_>, z: Value) -> Value {
    e.abs_cmp(z, Opcode::Flt, FRACTIONAL)
}

/// The x the inverse of `floor` takes for the integer `z` and θ `f`: `z + f`, and `z` itself
/// where f = 0 (so −0 stays −0); for z = −1, `−f` (and −1 for f = 0). `z + f` reaches every
/// float of `[z, z + 1)` but there: `x + 1` rounds for x in (−0.5, 0), so −1 + f reaches only
/// the multiples of 2⁻⁵³ and never `−4·10⁻⁷⁹`, where `−f` reaches them all.
fn plus_fraction(e: &mut Emitter<'_>, z: Value, f: Value) -> Result<Value, RuleError> {
    let zero = e.fc(0.0);
    let f0 = e.feq(f, zero);
    let sum = e.fadd(z, f);
    let minus_one = e.fc(-1.0);
    let at_minus_one = e.feq(z, minus_one);
    let neg = e.fneg(f);
    let x = e.select(at_minus_one, neg, sum)?;
    e.select(f0, z, x)
}

/// The θ [`plus_fraction`] takes to `x` for the integer `z`: `x − z`, or `−x` for z = −1 (0
/// for x = −1), kept below 1 (the domain's end, where `x` is not in `[z, z + 1)`: the integer
/// the inverse holds need not be the forward floor).
fn fraction_of(e: &mut Emitter<'_>, z: Value, x: Value) -> Result<Value, RuleError> {
    let diff = e.fsub(x, z);
    let minus_one = e.fc(-1.0);
    let at_minus_one = e.feq(z, minus_one);
    let is_minus_one = e.feq(x, minus_one);
    let zero = e.fc(0.0);
    let neg = e.fneg(x);
    let from_zero = e.select(is_minus_one, zero, neg)?;
    let f = e.select(at_minus_one, from_zero, diff)?;
    let below_one = e.fc(1.0 - f64::EPSILON / 2.0);
    Ok(e.op2(Opcode::Fmin, f, below_one))
}

/// `z = floor x`: `x = z + f` with θ `f ∈ [0, 1)` (an interval and a check), where `|z| < 2^52`;
/// above, and for ±inf and NaN, `x = z`.
pub fn floor() -> Spec {
    Spec::unary("fraction", |e, z| {
        // z may carry the rounding of the steps that computed it (exp of a log): below 2^52
        // the nearest integer is taken, and must be z within the tolerance; above, every f64
        // is an integer.
        let n = super::nearest_integer(e, z)?;
        let close = e.close(n, z);
        let nan = e.is_nan(z);
        let ok = e.bor(close, nan);
        e.check(ok, "floor gives an integer")?;
        let z = n;
        let frac = has_fraction(e, z);
        let x = e.if_value(
            frac,
            Type::F64,
            |e| {
                let f = e.theta(Domain::Interval { lo: 0.0, hi: 1.0 }, FRACTION)?;
                let one = e.fc(1.0);
                let below = e.flt(f, one);
                e.check(below, "the fractional part is below 1")?;
                plus_fraction(e, z, f)
            },
            |_| Ok(z),
        )?;
        verify_forward(e, Opcode::Floor, &[x], z)?;
        Ok(x)
    })
    .records(|e, z, x| {
        // The integer the inverse takes: the nearest to the z it holds.
        let held = e.replayed(z);
        let z = super::nearest_integer(e, held)?;
        let frac = has_fraction(e, z);
        e.branch(
            frac,
            |e| {
                let f = fraction_of(e, z, x)?;
                e.record(f, FRACTION)?;
                // What the inverse holds: [`plus_fraction`] of the integer it holds.
                let held = plus_fraction(e, z, f)?;
                e.note_replay(x, held);
                Ok(())
            },
            |_| Ok(()),
        )?;
        Ok(())
    })
    .doc(|_| RuleDoc {
        thetas: vec![
            ThetaDoc::value(Domain::Interval { lo: 0.0, hi: 1.0 }, FRACTION).when("|z| < 2^52"),
        ],
        checks: vec![
            "floor gives an integer".into(),
            "the fractional part is below 1".into(),
            "floor of the solution is z (z + f can round up)".into(),
        ],
        exact: false,
        summary: "x = z + f (x = −f for z = −1, which reaches the floats near 0)".into(),
    })
}

// ---------------------------------------------------------------------------------------------
// pow

const BASE_FREE: &str = "base (any: x^0 = 1)";
const BASE_SIGN: &str = "sign of the base (1: negative)";
const BASE: &str = "base: offset from the root of z";
const EXPONENT: &str = "exponent";
const EXP_OFFSET: &str = "exponent: offset from log|z| / log|a|";

/// The class of a known exponent: 0 (zero), 1 (even integer or ±inf), 2 (anything else).
fn exponent_class(e: &mut Emitter<'_>, c: Value) -> Result<Value, RuleError> {
    let zero = e.fc(0.0);
    let is_zero = e.feq(c, zero);
    let fc = e.floor(c);
    let is_int = e.feq(fc, c);
    let half = e.fc(0.5);
    let h = e.fmul(c, half);
    let fh = e.floor(h);
    let even_half = e.feq(fh, h);
    let even = e.band(is_int, even_half);
    let zero_i = e.ic(0);
    let one_i = e.ic(1);
    let two_i = e.ic(2);
    let rest = e.select(even, one_i, two_i)?;
    e.select(is_zero, zero_i, rest)
}

/// Whether `c` is an odd integer.
fn is_odd(e: &mut Emitter<'_>, c: Value) -> Value {
    let fc = e.floor(c);
    let is_int = e.feq(fc, c);
    let half = e.fc(0.5);
    let h = e.fmul(c, half);
    let fh = e.floor(h);
    let odd_half = e.fne(fh, h);
    e.band(is_int, odd_half)
}

/// The root candidate for the base: `±|z|^(1/c)` (the sign from `s` for even `c`, from z for odd
/// `c`, + otherwise).
fn root(e: &mut Emitter<'_>, z: Value, c: Value, s: Option<Value>) -> Result<Value, RuleError> {
    let one = e.fc(1.0);
    let inv = e.fdiv(one, c);
    let az = e.fabs(z);
    let r = e.op2(Opcode::Pow, az, inv);
    match s {
        Some(s) => {
            let one_i = e.ic(1);
            let neg = e.ieq(s, one_i);
            let nr = e.fneg(r);
            e.select(neg, nr, r)
        }
        None => {
            let odd = is_odd(e, c);
            let signed = e.with_sign_of(r, z)?;
            e.select(odd, signed, r)
        }
    }
}

/// Whether the root candidate is a useful base for an offset: for a tiny exponent (|c| ≤ 1e-14)
/// `x^c` maps bases many orders of magnitude apart to one output, so the offset θ is the whole
/// base instead.
fn root_trusted(e: &mut Emitter<'_>, c: Value) -> Value {
    e.abs_cmp(c, Opcode::Fgt, 1e-14)
}

/// The solutions of [`pow`].
struct Pow;

impl Pow {
    /// The base, given the exponent.
    fn solve_base(e: &mut Emitter<'_>, z: Value, c: Value) -> Result<Value, RuleError> {
        let class = exponent_class(e, c)?;
        let fwd = move |e: &mut Emitter<'_>, x: Value| e.op2(Opcode::Pow, x, c);
        e.switch(class, 3, &[Type::F64], |e, k| match k {
            0 => Ok(vec![e.theta(Domain::Real, BASE_FREE)?]),
            1 => {
                let zero = e.fc(0.0);
                let neg = e.flt(z, zero);
                let ok = e.bnot(neg);
                e.check(ok, "an even power is never negative")?;
                let s = e.choice(2, BASE_SIGN)?;
                let d = root(e, z, c, Some(s))?;
                let trusted = root_trusted(e, c);
                Ok(vec![settle_guarded(e, d, z, &fwd, BASE, Some(trusted))?])
            }
            _ => {
                let odd = is_odd(e, c);
                let zero = e.fc(0.0);
                let neg = e.flt(z, zero);
                let even_or_frac = e.bnot(odd);
                let bad = e.band(neg, even_or_frac);
                let ok = e.bnot(bad);
                e.check(
                    ok,
                    "only an odd integer power of a negative base is negative",
                )?;
                let d = root(e, z, c, None)?;
                let trusted = root_trusted(e, c);
                Ok(vec![settle_guarded(e, d, z, &fwd, BASE, Some(trusted))?])
            }
        })
        .map(|r| r[0])
    }

    fn pgf_base(e: &mut Emitter<'_>, z: Value, a: Value, c: Value) -> Result<(), RuleError> {
        // Decided and solved from what the inverse holds ([`Emitter::replayed`]); the base's
        // sign is recorded from its forward value.
        let z = e.replayed(z);
        let c = e.replayed(c);
        let class = exponent_class(e, c)?;
        let fwd = move |e: &mut Emitter<'_>, x: Value| e.op2(Opcode::Pow, x, c);
        e.switch(class, 3, &[], |e, k| {
            match k {
                0 => e.record(a, BASE_FREE)?,
                1 => {
                    let s = sign_choice(e, a);
                    e.record(s, BASE_SIGN)?;
                    let d = root(e, z, c, Some(s))?;
                    let trusted = root_trusted(e, c);
                    settle_pgf_guarded(e, d, z, a, &fwd, BASE, Some(trusted))?;
                }
                _ => {
                    let d = root(e, z, c, None)?;
                    let trusted = root_trusted(e, c);
                    settle_pgf_guarded(e, d, z, a, &fwd, BASE, Some(trusted))?;
                }
            }
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Whether `v` is `z`, or within the emitter's tolerance of it relative to |z| (z finite).
    fn near(e: &mut Emitter<'_>, v: Value, z: Value) -> Value {
        let equal = e.feq(v, z);
        let diff = e.fsub(v, z);
        let diff = e.fabs(diff);
        let mag = e.fabs(z);
        let tol = e.fc(e.options().tolerance);
        let bound = e.fmul(tol, mag);
        let near = e.fle(diff, bound);
        let finite = e.is_finite(z);
        let near = e.band(near, finite);
        e.bor(equal, near)
    }

    /// The exponent candidate and whether it is trusted as is, given the base.
    fn exponent_candidate(
        e: &mut Emitter<'_>,
        z: Value,
        a: Value,
    ) -> Result<(Value, Value, Value), RuleError> {
        let negative = Pow::negative(e, a);
        let r = e.if_else(
            negative,
            &[Type::F64, Type::Bool],
            |e| {
                let (d, ok) = Pow::integer_exponent(e, z, a);
                Ok(vec![d, ok])
            },
            |e| {
                let d = Pow::log_ratio(e, z, a);
                let ok = super::settle::pins(e, d, z, &|e, x| e.op2(Opcode::Pow, a, x));
                Ok(vec![d, ok])
            },
        )?;
        let base = use_base(e, r[0]);
        Ok((r[0], r[1], base))
    }

    /// The exponent candidate of a negative base, and whether it is trusted as is. Only
    /// integers: the nearest one, if it alone (of its parity) gives z within the tolerance
    /// relative to |z|. Within it, not exactly: z and the base may carry the rounding of the
    /// steps that computed them (`atan2(pow(b, n), b)` walked back gives both from a radius and
    /// an angle), and a candidate the exact test turned away sent the inverse to an offset that
    /// the PGF, deciding on the forward values, never recorded. Relative to |z|, not to
    /// max(1, |z|): the powers of a base differ by a factor of it, however small they are.
    fn integer_exponent(e: &mut Emitter<'_>, z: Value, a: Value) -> (Value, Value) {
        let az = e.fabs(z);
        let aa = e.fabs(a);
        let lz = e.op1(Opcode::Log, az);
        let la = e.op1(Opcode::Log, aa);
        let q = e.fdiv(lz, la);
        let d = e.round(q);
        let finite = e.is_finite(d);
        let hit = e.op2(Opcode::Pow, a, d);
        let hit = Pow::near(e, hit, z);
        let two = e.fc(2.0);
        let dm = e.fsub(d, two);
        let dp = e.fadd(d, two);
        let m = e.op2(Opcode::Pow, a, dm);
        let p = e.op2(Opcode::Pow, a, dp);
        let m_hit = Pow::near(e, m, z);
        let p_hit = Pow::near(e, p, z);
        let other = e.bor(m_hit, p_hit);
        let unique = e.bnot(other);
        let ok = e.band(finite, hit);
        (d, e.band(ok, unique))
    }

    /// `a < 0`: a base whose powers are defined only at integers.
    fn negative(e: &mut Emitter<'_>, a: Value) -> Value {
        let zero = e.fc(0.0);
        e.flt(a, zero)
    }

    /// `log z / log a`: the exponent a base `a ≥ 0` takes to z.
    fn log_ratio(e: &mut Emitter<'_>, z: Value, a: Value) -> Value {
        let lz = e.op1(Opcode::Log, z);
        let la = e.op1(Opcode::Log, a);
        e.fdiv(lz, la)
    }
}

/// `z = pow(a, b)`.
/// - exponent known (`c`): `c = 0`: the base is free (θ); `c` an even integer (±inf too): a sign
///   choice and `a = ±z^(1/c)`; otherwise `a = z^(1/c)`, with z's sign for odd `c`; settled.
/// - base known: `b = log z / log a` for `a ≥ 0` (settled: `a = 1`, `z ∈ {0, ∞}` read the
///   offset); for `a < 0`, whose powers are defined only at integers, the nearest integer to
///   `log|z| / log|a|`, used when it is the only integer of its parity that gives z (within the
///   tolerance relative to |z|), otherwise with an offset θ.
/// - both unknown: θ is the exponent, then as with the exponent known.
pub fn pow() -> Spec {
    Spec::binary("root-log")
        .theta_first(Side::Right, EXPONENT, |e, _| {
            e.theta(Domain::Real, EXPONENT)
        })
        .operand(Side::Left, Pow::solve_base, Pow::pgf_base)
        .operand(
            Side::Right,
            |e, z, a| {
                if !e.options().exact_floats {
                    let (d, ok, base) = Pow::exponent_candidate(e, z, a)?;
                    return settle_when(e, d, ok, base, EXP_OFFSET);
                }
                // Where the exact float matters, a positive base's exponent is settled as
                // every monotone step is (the float among those that give z).
                let negative = Pow::negative(e, a);
                e.if_value(
                    negative,
                    Type::F64,
                    |e| {
                        let (d, ok) = Pow::integer_exponent(e, z, a);
                        let base = use_base(e, d);
                        settle_when(e, d, ok, base, EXP_OFFSET)
                    },
                    |e| {
                        let d = Pow::log_ratio(e, z, a);
                        settle(e, d, z, &|e, x| e.op2(Opcode::Pow, a, x), EXP_OFFSET)
                    },
                )
            },
            |e, z, a, b| {
                // Decided and solved from what the inverse holds ([`Emitter::replayed`]).
                let z = e.replayed(z);
                let a = e.replayed(a);
                if !e.options().exact_floats {
                    let (d, ok, base) = Pow::exponent_candidate(e, z, a)?;
                    return settle_pgf_when(e, d, ok, base, b, EXP_OFFSET);
                }
                let negative = Pow::negative(e, a);
                e.branch(
                    negative,
                    |e| {
                        let (d, ok) = Pow::integer_exponent(e, z, a);
                        let base = use_base(e, d);
                        settle_pgf_when(e, d, ok, base, b, EXP_OFFSET)
                    },
                    |e| {
                        let d = Pow::log_ratio(e, z, a);
                        settle_pgf(e, d, z, b, &|e, x| e.op2(Opcode::Pow, a, x), EXP_OFFSET)
                    },
                )
            },
        )
        .verified(Opcode::Pow)
        .doc(|pattern| {
            let base = vec![
                ThetaDoc::value(Domain::Real, BASE_FREE).when("the exponent is 0"),
                ThetaDoc::choice(2, BASE_SIGN).when("the exponent is an even integer"),
                settle_doc(BASE).when("the exponent is not 0"),
            ];
            let checks = vec![
                "an even power is never negative".to_string(),
                "only an odd integer power of a negative base is negative".to_string(),
                "pow of the solution is z".to_string(),
            ];
            match unknowns2(pattern) {
                (true, true) => {
                    let mut thetas = vec![ThetaDoc::value(Domain::Real, EXPONENT)];
                    thetas.extend(base);
                    RuleDoc {
                        thetas,
                        checks,
                        exact: false,
                        summary: "b = θ, a = ±z^(1/b)".into(),
                    }
                }
                (true, false) => RuleDoc {
                    thetas: base,
                    checks,
                    exact: false,
                    summary: "a = ±z^(1/b)".into(),
                },
                _ => RuleDoc {
                    thetas: vec![settle_doc(EXP_OFFSET)],
                    checks: vec!["pow of the solution is z".into()],
                    exact: false,
                    summary: "b = log|z| / log|a| (an integer for a < 0)".into(),
                },
            }
        })
}
