//! Settling an f64 unknown from its closed form: the step that makes f64 rules complete.
//!
//! Most f64 rules end by solving `fwd(x) = target` for one unknown `x`, where `fwd` is monotone
//! near the solution (`x + b`, `x * b`, `exp x`, one branch of `sin`, ...), with a closed-form
//! candidate `d` (`target − b`, `target / b`, `log target`, ...). In exact arithmetic `d` is the
//! answer. In floating point it may not be:
//!
//! - the output pins `x` only loosely: many floats map to the same output (`x + 1e20`, `exp x`
//!   near underflow, `sin x` near a peak, `tanh x` near ±1), so the `x` that was given may be
//!   far (beyond the tolerance) from `d`;
//! - `d` is not finite (an infinite or NaN output, a zero divisor, ...), so the closed form says
//!   nothing;
//! - the output is hypersensitive to `x` (`sin x` for huge `x`), so `d` is off by more than the
//!   output can absorb.
//!
//! [`settle`] decides, from values the inverse knows, whether `d` **pins** the answer:
//!
//! ```text
//! δ = 0.5 · tolerance · max(1, |d|)          (tolerance = 1e-9 by default)
//! pins = fwd(d − δ) and fwd(d + δ) lie strictly on opposite sides of target
//!        and fwd(d) equals target within the tolerance
//!     or (fwd's direction unknown) one probe is NaN, past an end of fwd's domain,
//!        the other is a number other than target, and fwd(d) = target exactly
//! ```
//!
//! Because `fwd` is monotone around `d`, if `pins` holds every exact solution lies within `δ` of
//! `d` (less than the round-trip tolerance), so returning `d` is complete. Otherwise the inverse
//! reads an **offset** θ (a real, 0 in the common case) and returns `d + θ`, or θ itself when `d`
//! is 0 or not finite, or when a zero solves the equation (which keeps the sign of a zero, and
//! covers non-finite answers and answers much smaller than `d`). The PGF computes the same
//! decision and, where the inverse reads the offset, records `x − d` (or `x`). A bad offset is a
//! domain error, never a wrong answer: every rule still ends with a forward check (a step check),
//! and an inverse checks `f(x) = y` before it returns.
//!
//! With [`crate::EmitOptions::exact_floats`], a step instead names the exact float: see
//! [`super::exact`].
//!
//! Rules whose candidate is unreliable in known cases (an integer multiple beyond 2^52, a tiny
//! exponent) pass a `trusted` condition ([`settle_guarded`]); where it fails, the θ is the whole
//! value. Rules with their own test of the candidate (a discrete solution set) use
//! [`settle_when`].
//!
//! # Limits
//!
//! - The offset is exact when `x` and `d` are within a factor of 2 of each other (Sterbenz) and
//!   within an ulp otherwise. A round trip could fail only if `x − d` overflowed (`x` and `d`
//!   near ±f64::MAX with opposite signs); no rule is known to produce such a `d`.
//! - The probe assumes `fwd` is monotone on `[d − δ, d + δ]`. Where it is not (a period or a
//!   divisor smaller than δ), the result is still sound, and the rules guard the cases where it
//!   could be incomplete (`trusted`).

use super::exact;
use super::ops::Ops;
use crate::emit::Emitter;
use crate::rule::{RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

/// The forward function being solved, written as IR: `fwd(e, x)`.
pub type Forward<'a> = &'a dyn Fn(&mut Emitter<'_>, Value) -> Value;

/// The relative half-width of the probe around the candidate, as a fraction of the emitter's
/// tolerance ([`crate::EmitOptions::tolerance`]): half of it, so that a solution within the probe
/// is within the tolerance of the candidate with room for rounding.
pub const PROBE: f64 = 0.5;

/// Whether candidate `d` pins the solution of `fwd(x) = target` (see the module docs).
pub fn pins(e: &mut Emitter<'_>, d: Value, target: Value, fwd: Forward<'_>) -> Value {
    let (below, above) = window(e, d);
    let one = e.fc(1.0);
    let lo = fwd(e, below);
    let hi = fwd(e, above);
    // The probe straddles the target: `lo < target < hi` where `fwd` increases, `hi < target <
    // lo` where it decreases; both are tested unless the direction is known (then the other
    // cannot hold: a rounded monotone function keeps its order, and a NaN is in no order).
    let up = |e: &mut Emitter<'_>| {
        let lo_lt = e.flt(lo, target);
        let t_lt_hi = e.flt(target, hi);
        e.band(lo_lt, t_lt_hi)
    };
    let down = |e: &mut Emitter<'_>| {
        let hi_lt = e.flt(hi, target);
        let t_lt_lo = e.flt(target, lo);
        e.band(hi_lt, t_lt_lo)
    };
    let mid = fwd(e, d);
    let (straddles, at_end) = match direction(e, (below, lo), (above, hi)) {
        Some(Direction::Increasing) => (up(e), None),
        Some(Direction::Decreasing) => (down(e), None),
        None => {
            let up = up(e);
            let down = down(e);
            let either = e.bor(up, down);
            let end = ends_in_domain_limited(e, lo).then(|| domain_end(e, lo, hi, mid, target));
            (either, end)
        }
    };
    // `fwd(d)` equals target within the tolerance, as [`Emitter::close`] means it, where the
    // probe straddles: target then lies strictly between two values, so it is finite, and of
    // `close`'s three ways to agree (equal, both NaN, near) "near" alone decides (equal values
    // are near; a NaN is near nothing).
    let diff = e.fsub(mid, target);
    let diff = e.fabs(diff);
    let at = e.fabs(target);
    let scale = e.op2(pinv_core::ir::Opcode::Fmax, at, one);
    let tol = e.fc(e.options().tolerance);
    let bound = e.fmul(tol, scale);
    let near = e.fle(diff, bound);
    let pins = e.band(straddles, near);
    match at_end {
        Some(end) => e.bor(pins, end),
        None => pins,
    }
}

/// Whether the probe's value `v` comes last from a function that is undefined (NaN) past an
/// end of its domain: `sqrt`, `log`, `asin`, `acos`, `pow`. Only there can [`domain_end`] hold,
/// so only there is its test emitted (`x · x` or `exp x` never give NaN from a number).
fn ends_in_domain_limited(e: &Emitter<'_>, v: Value) -> bool {
    use pinv_core::ir::InstKind;
    matches!(
        e.defining(v),
        Some(InstKind::Prim {
            op: Opcode::Sqrt | Opcode::Log | Opcode::Asin | Opcode::Acos | Opcode::Pow,
            ..
        })
    )
}

/// Whether `d` is at an end of `fwd`'s domain and gives `target` exactly: one probe is NaN (past
/// the end: `sqrt` below 0, `asin` above 1, `log` below 0), the other is a number other than
/// `target`, and `fwd(d)` is `target` itself. `fwd` is monotone where it is defined, and defined
/// on an interval, so every solution lies between `d` and the end, within the probe: `sqrt x = 0`
/// pins `x = 0`, `asin x = π/2` pins `x = 1` and `log x = −∞` pins `x = 0`, where the straddle
/// test sees a NaN and the step would read an offset that only 0 satisfies. Only for functions
/// whose direction [`pins`] does not know and whose domain has an end
/// ([`ends_in_domain_limited`]). `target` may be infinite here (`log x = −∞`): equality, not
/// nearness.
fn domain_end(e: &mut Emitter<'_>, lo: Value, hi: Value, mid: Value, target: Value) -> Value {
    let ordered_ne = |e: &mut Emitter<'_>, v: Value| {
        let below = e.flt(v, target);
        let above = e.flt(target, v);
        e.bor(below, above)
    };
    let lo_nan = e.fne(lo, lo);
    let hi_nan = e.fne(hi, hi);
    let hi_off = ordered_ne(e, hi);
    let lo_off = ordered_ne(e, lo);
    let lower_end = e.band(lo_nan, hi_off);
    let upper_end = e.band(hi_nan, lo_off);
    let end = e.bor(lower_end, upper_end);
    let exact = e.feq(mid, target);
    e.band(end, exact)
}

/// The probe window around the candidate: `(d − δ, d + δ)` with `δ = PROBE · tolerance ·
/// max(1, |d|)`.
pub(super) fn window(e: &mut Emitter<'_>, d: Value) -> (Value, Value) {
    let ad = e.fabs(d);
    let one = e.fc(1.0);
    let scale = e.op2(pinv_core::ir::Opcode::Fmax, ad, one);
    let probe = e.fc(PROBE * e.options().tolerance);
    let delta = e.fmul(probe, scale);
    let below = e.fsub(d, delta);
    let above = e.fadd(d, delta);
    (below, above)
}

/// Which way a forward function goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Increasing,
    Decreasing,
}

/// The direction of `fwd` around the probe, when its two probes `(x, fwd(x))` show it: each is
/// one primitive applied to the probe point and the same other operand, one of `x + k`, `k + x`,
/// `x − k`, `k − x`, or `x · c` and `x / c` with a constant `c` (not NaN; its sign bit gives the
/// direction, so `x / −0` decreases). Every one of them is monotone in `x` once rounded (the
/// values out of order are NaN, which straddles nothing). Anything else: `None`.
fn direction(
    e: &Emitter<'_>,
    (below, lo): (Value, Value),
    (above, hi): (Value, Value),
) -> Option<Direction> {
    use pinv_core::ir::{Const, InstKind, Opcode};
    let prim = |v: Value| match e.defining(v)? {
        InstKind::Prim { op, args } if args.len() == 2 => Some((*op, args[0], args[1])),
        _ => None,
    };
    let (op, l0, l1) = prim(lo)?;
    let (op_hi, h0, h1) = prim(hi)?;
    // The probe point on the same side in both, the other operand the same.
    let probe_left = l0 == below && h0 == above && l1 == h1;
    let probe_right = l1 == below && h1 == above && l0 == h0;
    if op != op_hi || !(probe_left || probe_right) {
        return None;
    }
    let other = if probe_left { l1 } else { l0 };
    // By the sign bit: dividing by −0 gives the infinities in decreasing order.
    let constant_sign = || match e.constant_of(other) {
        Some(Const::F64(c)) if !c.is_nan() && c.is_sign_positive() => Some(Direction::Increasing),
        Some(Const::F64(c)) if !c.is_nan() => Some(Direction::Decreasing),
        _ => None,
    };
    match (op, probe_left) {
        (Opcode::Fadd, _) | (Opcode::Fsub, true) => Some(Direction::Increasing),
        (Opcode::Fsub, false) => Some(Direction::Decreasing),
        (Opcode::Fmul, _) | (Opcode::Fdiv, true) => constant_sign(),
        _ => None,
    }
}

/// Inverse side: `d` if it pins the solution, else `d + θ` (or `θ`) with θ a real read under
/// `role`. The caller still checks the forward value.
pub fn settle(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<Value, RuleError> {
    settle_guarded(e, d, target, fwd, role, None)
}

/// [`settle`], where `trusted` (if given) must also hold for `d` to be used: rules whose candidate
/// is known to be unreliable in some cases (a quotient beyond 2^52, where `fwd` is not monotone
/// over the probe) make the θ read the whole value there.
pub fn settle_guarded(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    role: &str,
    trusted: Option<Value>,
) -> Result<Value, RuleError> {
    let loose = |e: &mut Emitter<'_>| {
        let ok = pinned(e, d, target, fwd, trusted);
        if e.options().wide_runs {
            offset_when_pinned(e, d, ok, target, fwd, trusted, role)
        } else {
            offset_when(e, d, ok, |e| base_of(e, d, target, fwd, trusted), role)
        }
    };
    if !e.options().exact_floats {
        return loose(e);
    }
    let alone = exact::alone(e, d, target, fwd, trusted);
    let r = e.if_else(
        alone,
        &[Type::F64],
        |_| Ok(vec![d]),
        |e| {
            let run = exact::run(e, d, target, fwd, trusted)?;
            Ok(vec![name_in_run(e, &run, role, loose)?])
        },
    )?;
    Ok(r[0])
}

/// Names the float around `d` that `fwd` takes to `target` exactly, where several do ([`exact`]):
/// `d` where it is the only one, else the float θ names among the run, counted from the run's
/// first float (an integer narrowed to the run); `d` itself, with no θ, where no run is usable.
/// For a value already solved, within the tolerance, by other means (the isolation's rewritten
/// form of a loop's body, which rounds differently from the body), named again against what the
/// function computes. Counted from the run's start, not from `d`, so that the PGF, which holds
/// the forward value and not `d`, names the same float wherever it finds the same run.
pub fn name_exactly(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<Value, RuleError> {
    in_run_from_start(e, d, target, fwd, |e, run| read_in_run(e, run, role))
}

/// The PGF side of [`name_exactly`], for the forward value `x` and the inverse's run found
/// around `d` (the forward value too, where the PGF does not hold the inverse's): records where
/// `x` is in the run, where the inverse reads it; returns the float the inverse takes.
pub fn name_exactly_pgf(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    x: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<Value, RuleError> {
    in_run_from_start(e, d, target, fwd, |e, run| record_nearest(e, run, x, role))
}

/// [`name_exactly`]'s search: `d` where it alone gives `target` or no run is usable, else
/// [`pick_in_run`] on the run counted from its first float ([`exact::Run::from_first`]).
fn in_run_from_start(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    several: impl FnOnce(&mut Emitter<'_>, &exact::Run) -> Result<Value, RuleError>,
) -> Result<Value, RuleError> {
    let alone = exact::alone(e, d, target, fwd, None);
    e.if_value(
        alone,
        Type::F64,
        |_| Ok(d),
        |e| {
            let run = exact::run(e, d, target, fwd, None)?.from_first(e);
            pick_in_run(e, &run, several, |_| Ok(d))
        },
    )
}

/// The float of a usable `run` (its one float, or the one `several` gives where it has more);
/// `otherwise` where the run is not usable.
fn pick_in_run(
    e: &mut Emitter<'_>,
    run: &exact::Run,
    several: impl FnOnce(&mut Emitter<'_>, &exact::Run) -> Result<Value, RuleError>,
    otherwise: impl FnOnce(&mut Emitter<'_>) -> Result<Value, RuleError>,
) -> Result<Value, RuleError> {
    e.if_value(
        run.usable,
        Type::F64,
        |e| {
            let single = run.single(e);
            e.if_value(
                single,
                Type::F64,
                |e| Ok(run.at(e, run.lo)),
                |e| several(e, run),
            )
        },
        otherwise,
    )
}

/// The float of `run` the inverse takes: its one float, or the one θ names (an integer offset
/// narrowed to the run, and to the range of the value solved where the rule knows one:
/// [`exact::Run::within`]); `otherwise` where the run is not usable.
fn name_in_run(
    e: &mut Emitter<'_>,
    run: &exact::Run,
    role: &str,
    otherwise: impl FnOnce(&mut Emitter<'_>) -> Result<Value, RuleError>,
) -> Result<Value, RuleError> {
    let range = e.solving_range();
    let run = &run.within(e, range);
    pick_in_run(e, run, |e, run| read_in_run(e, run, role), otherwise)
}

/// The float θ names in `run` (of several floats): an offset narrowed to the run.
fn read_in_run(e: &mut Emitter<'_>, run: &exact::Run, role: &str) -> Result<Value, RuleError> {
    let k = e.theta_within(Domain::Int, run.lo, run.hi, &exact_role(role))?;
    Ok(run.at(e, k))
}

/// The PGF side of [`name_in_run`]: records where `x` is in the run, where the inverse reads it;
/// returns the float the inverse takes (`x`, where the run holds it).
fn record_in_run(
    e: &mut Emitter<'_>,
    run: &exact::Run,
    x: Value,
    role: &str,
    otherwise: impl FnOnce(&mut Emitter<'_>) -> Result<Value, RuleError>,
) -> Result<Value, RuleError> {
    let range = e.solving_range();
    let run = &run.within(e, range);
    pick_in_run(e, run, |e, run| record_nearest(e, run, x, role), otherwise)
}

/// Records where `x` is in `run` (of several floats) and returns that float. Where the inverse's
/// output is not x's (a step after this one pinned its value by a closed form, not to the bit),
/// x may lie outside the run: θ then names the run's float nearest to it, which a rounding step
/// after this one (`as i64`) may still take back to x.
fn record_nearest(
    e: &mut Emitter<'_>,
    run: &exact::Run,
    x: Value,
    role: &str,
) -> Result<Value, RuleError> {
    let p = exact::ord(e, x);
    let k = e.isub(p, run.anchor);
    let k = e.op2(Opcode::Imax, k, run.lo);
    let k = e.op2(Opcode::Imin, k, run.hi);
    e.record(k, &exact_role(role))?;
    Ok(run.at(e, k))
}

/// The role of the θ that names one float of a run ([`exact`]).
fn exact_role(role: &str) -> String {
    format!("{role} (which of the floats that give the output)")
}

/// Whether the solutions of `fwd(x) = target` around `d` are wide for its magnitude: the float
/// a relative `PROBE · tolerance` away from `d` (the smallest float away, at 0) gives `target`
/// too. [`pins`] measures its window absolutely below magnitude 1, so it pins `d = 1e-13` where
/// the solutions span 1e-13 ± 1.4e-17, or `d = 0` where they run from the tiniest floats of
/// either sign up to 7e-18 (`a + b = a` for `a = −0.1`); not `sinh x = 0`, whose only
/// solutions are the zeros.
fn wide(e: &mut Emitter<'_>, d: Value, target: Value, fwd: Forward<'_>) -> Value {
    let ad = e.fabs(d);
    let eps = e.fc(PROBE * e.options().tolerance);
    let relative = e.fmul(eps, ad);
    let tiny = e.fc(f64::from_bits(1));
    let delta = e.op2(pinv_core::ir::Opcode::Fmax, relative, tiny);
    let below = e.fsub(d, delta);
    let above = e.fadd(d, delta);
    let at_below = fwd(e, below);
    let at_above = fwd(e, above);
    let below_hits = e.feq(at_below, target);
    let above_hits = e.feq(at_above, target);
    e.bor(below_hits, above_hits)
}

/// [`offset_when`] for a settle step's own decision `ok` ([`pinned`]), except where the
/// solutions are [`wide`]: every one is within the tolerance of `d`, as `ok` says, but the one
/// given may be `1e-72` where `d` is 0, and a step after it that reads magnitudes
/// (`pow(0.1, n) = b`, `log b`, `b as i64` after a scaling) cannot get it back from `d`. There θ
/// names the float among the run that gives `target` ([`exact::run`]), as
/// [`crate::EmitOptions::exact_floats`] does everywhere; `d` where the run is not usable.
fn offset_when_pinned(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    target: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
    role: &str,
) -> Result<Value, RuleError> {
    // `d` alone on one side of the first branch: the reorientation's dispatch guards, which
    // copy the θ-free code of an inverse, go on past a branch whose one side knows the value
    // (`d`) and the other does not, but a branch nested inside a side is joined, forgetting it.
    let wide = wide(e, d, target, fwd);
    let narrow = e.bnot(wide);
    let settled = e.band(ok, narrow);
    e.if_value(
        settled,
        Type::F64,
        |_| Ok(d),
        |e| {
            let pinned = |e: &mut Emitter<'_>| {
                let run = exact::run(e, d, target, fwd, trusted)?;
                name_in_run(e, &run, role, |_| Ok(d))
            };
            offset_unless(
                e,
                d,
                ok,
                pinned,
                |e| base_of(e, d, target, fwd, trusted),
                role,
            )
        },
    )
}

/// The PGF side of [`offset_when_pinned`]; returns what the inverse holds.
#[allow(clippy::too_many_arguments)]
fn record_offset_when_pinned(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    target: Value,
    x: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
    role: &str,
) -> Result<Value, RuleError> {
    let wide = wide(e, d, target, fwd);
    let narrow = e.bnot(wide);
    let settled = e.band(ok, narrow);
    e.if_value(
        settled,
        Type::F64,
        |_| Ok(d),
        |e| {
            let pinned = |e: &mut Emitter<'_>| {
                let run = exact::run(e, d, target, fwd, trusted)?;
                record_in_run(e, &run, x, role, |_| Ok(d))
            };
            let base = |e: &mut Emitter<'_>| base_of(e, d, target, fwd, trusted);
            record_offset_unless(e, d, ok, pinned, base, x, role)
        },
    )
}

/// Whether the offset is added to `d`, decided where the offset is read: not where `d` is 0 or
/// not finite, nor where a zero solves the equation (the solution set then reaches 0, and an `x`
/// much smaller than `d`, or a zero of the other sign, would be lost in `d + (x − d)`), nor where
/// the candidate is not `trusted`.
fn base_of(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
) -> Value {
    let base = use_base(e, d);
    let zero = e.fc(0.0);
    let neg_zero = e.fc(-0.0);
    let at_zero = fwd(e, zero);
    let at_neg_zero = fwd(e, neg_zero);
    let zero_hits = e.feq(at_zero, target);
    let neg_zero_hits = e.feq(at_neg_zero, target);
    let zero_solves = e.bor(zero_hits, neg_zero_hits);
    let far = e.bnot(zero_solves);
    let base = e.band(base, far);
    and_trusted(e, base, trusted)
}

/// Whether `d` pins the solution ([`pins`]) and the rule trusts it: the decision of a settle
/// step without [`crate::EmitOptions::exact_floats`], the same in the inverse and the PGF.
fn pinned(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
) -> Value {
    let ok = shared_test(e, |e| pins(e, d, target, fwd));
    and_trusted(e, ok, trusted)
}

/// `test` (code that reads no θ and cannot fail, giving one value) written where the emitter
/// is, or with [`crate::EmitOptions::outline_settles`] a call of a helper that every step of
/// the same operation shares ([`Emitter::outlined`]).
pub(super) fn shared_test(e: &mut Emitter<'_>, test: impl Fn(&mut Emitter<'_>) -> Value) -> Value {
    match shared_piece(e, |e| Ok(test(e))) {
        Ok(v) => v,
        // `outlined` fails only where its body does, and a test cannot: kept as written code
        // all the same rather than a panic.
        Err(_) => test(e),
    }
}

/// [`shared_test`] for a piece that may fail (as building a `select` may).
fn shared_piece(
    e: &mut Emitter<'_>,
    piece: impl Fn(&mut Emitter<'_>) -> Result<Value, RuleError>,
) -> Result<Value, RuleError> {
    if !e.options().outline_settles {
        return piece(e);
    }
    Ok(e.outlined(|e| Ok(vec![piece(e)?]))?[0])
}

/// `cond`, and `trusted` where the rule gives one.
pub(super) fn and_trusted(e: &mut Emitter<'_>, cond: Value, trusted: Option<Value>) -> Value {
    match trusted {
        Some(t) => e.band(cond, t),
        None => cond,
    }
}

/// The inverse side of a settle step whose decision is already made: `ok ? d : (base ? d + θ : θ)`.
/// Rules with their own test of whether `d` pins the answer (such as a discrete solution set)
/// use it directly; `base` is usually [`use_base`] ("d is finite and nonzero").
pub fn settle_when(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    base: Value,
    role: &str,
) -> Result<Value, RuleError> {
    offset_when(e, d, ok, |_| base, role)
}

fn offset_when(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    base: impl FnOnce(&mut Emitter<'_>) -> Value,
    role: &str,
) -> Result<Value, RuleError> {
    offset_unless(e, d, ok, |_| Ok(d), base, role)
}

/// `ok ? pinned : (base ? d + θ : θ)`: [`offset_when`] with what the inverse takes where `ok`
/// holds given by `pinned`.
fn offset_unless(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    pinned: impl FnOnce(&mut Emitter<'_>) -> Result<Value, RuleError>,
    base: impl FnOnce(&mut Emitter<'_>) -> Value,
    role: &str,
) -> Result<Value, RuleError> {
    e.if_value(ok, Type::F64, pinned, |e| {
        let base = base(e);
        let t = e.theta(Domain::Real, role)?;
        offset_from(e, d, base, t)
    })
}

/// The value an offset step takes from its θ `t`: `d + t` where `base` holds, else `t` itself,
/// [brought into](into_range) the range of the value solved where the rule knows one. The
/// inverse computes it from the θ it reads, and the PGF from the θ it records (the value the
/// inverse then holds), so the two agree by construction.
fn offset_from(e: &mut Emitter<'_>, d: Value, base: Value, t: Value) -> Result<Value, RuleError> {
    let shifted = e.fadd(d, t);
    let itself = match e.solving_range() {
        Some((lo, hi)) if lo.is_finite() || hi.is_finite() => {
            shared_piece(e, |e| into_range(e, t, lo, hi))?
        }
        _ => t,
    };
    e.select(base, shifted, itself)
}

/// `t` where it is in `[lo, hi]`, the range of the value solved ([`Emitter::solving_range`];
/// NaN too), else reflected at the end it is past and kept within the other: where `d` gives nothing (0
/// or not finite: `b` in `−0 / b`), θ is the value itself, and a θ on the wrong side of `sqrt`'s
/// 0 would fail. Every value of the range is its own image, so the PGF records it as is.
fn into_range(e: &mut Emitter<'_>, t: Value, lo: f64, hi: f64) -> Result<Value, RuleError> {
    // Reflected at `end` (`2·end − t`), then kept on the near side of `other` where it is
    // finite.
    let reflect = |e: &mut Emitter<'_>, v: Value, end: f64, other: f64, past: Opcode| {
        let (end_c, twice) = (e.fc(end), e.fc(2.0 * end));
        let is_past = e.prim(past, &[t, end_c]);
        let mut back = e.fsub(twice, t);
        if other.is_finite() {
            let other_c = e.fc(other);
            let keep = if past == Opcode::Flt {
                Opcode::Fmin
            } else {
                Opcode::Fmax
            };
            back = e.op2(keep, back, other_c);
        }
        e.select(is_past, back, v)
    };
    let mut v = t;
    if lo.is_finite() {
        v = reflect(e, v, lo, hi, Opcode::Flt)?;
    }
    if hi.is_finite() {
        v = reflect(e, v, hi, lo, Opcode::Fgt)?;
    }
    Ok(v)
}

/// PGF side of [`settle`]: records the offset that makes the inverse return `x`, where the inverse
/// reads one, and notes what the inverse then holds ([`Emitter::note_replay`]: `d` where it pins
/// the answer, `x` where θ names it), so that the steps before this one in the walk solve what
/// the inverse solves, not the forward values.
pub fn settle_pgf(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    x: Value,
    fwd: Forward<'_>,
    role: &str,
) -> Result<(), RuleError> {
    settle_pgf_guarded(e, d, target, x, fwd, role, None)
}

/// PGF side of [`settle_guarded`].
pub fn settle_pgf_guarded(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    x: Value,
    fwd: Forward<'_>,
    role: &str,
    trusted: Option<Value>,
) -> Result<(), RuleError> {
    let loose = |e: &mut Emitter<'_>| {
        let ok = pinned(e, d, target, fwd, trusted);
        if e.options().wide_runs {
            record_offset_when_pinned(e, d, ok, target, x, fwd, trusted, role)
        } else {
            record_offset_when(e, d, ok, |e| base_of(e, d, target, fwd, trusted), x, role)
        }
    };
    let replayed = if !e.options().exact_floats {
        loose(e)?
    } else {
        let alone = exact::alone(e, d, target, fwd, trusted);
        e.if_value(
            alone,
            Type::F64,
            |_| Ok(d),
            |e| {
                let run = exact::run(e, d, target, fwd, trusted)?;
                record_in_run(e, &run, x, role, loose)
            },
        )?
    };
    e.note_replay(x, replayed);
    Ok(())
}

/// PGF side of [`settle_when`].
pub fn settle_pgf_when(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    base: Value,
    x: Value,
    role: &str,
) -> Result<(), RuleError> {
    let replayed = record_offset_when(e, d, ok, |_| base, x, role)?;
    e.note_replay(x, replayed);
    Ok(())
}

/// Records as [`record_offset_unless`] does, with `d` where `ok` holds; returns what the inverse
/// holds.
fn record_offset_when(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    base: impl FnOnce(&mut Emitter<'_>) -> Value,
    x: Value,
    role: &str,
) -> Result<Value, RuleError> {
    record_offset_unless(e, d, ok, |_| Ok(d), base, x, role)
}

/// The PGF side of [`offset_unless`]: `pinned` where `ok` holds, else the offset's record.
/// Returns the value the inverse computes from what is recorded (`base ? d + θ : θ`, the
/// inverse's own arithmetic: `x` itself unless the offset rounds).
fn record_offset_unless(
    e: &mut Emitter<'_>,
    d: Value,
    ok: Value,
    pinned: impl FnOnce(&mut Emitter<'_>) -> Result<Value, RuleError>,
    base: impl FnOnce(&mut Emitter<'_>) -> Value,
    x: Value,
    role: &str,
) -> Result<Value, RuleError> {
    e.if_value(ok, Type::F64, pinned, |e| {
        let base = base(e);
        let diff = e.fsub(x, d);
        let t = e.select(base, diff, x)?;
        e.record(t, role)?;
        offset_from(e, d, base, t)
    })
}

/// Whether an offset is added to `d` (true) or read as the whole value (false: `d` is 0 or not
/// finite): the default `base` of [`settle_when`].
pub fn use_base(e: &mut Emitter<'_>, d: Value) -> Value {
    let finite = e.is_finite(d);
    let zero = e.fc(0.0);
    let nonzero = e.fne(d, zero);
    e.band(finite, nonzero)
}

/// Whether an integer multiplier `k` (of a period, a divisor, ...) is below 2^52 in magnitude, so
/// that the candidate it builds is accurate: the usual `trusted` of [`settle_guarded`].
pub fn small_multiple(e: &mut Emitter<'_>, k: Value) -> Value {
    let lim = e.ic(1 << 52);
    let neg_lim = e.ic(-(1 << 52));
    let below = e.ilt(k, lim);
    let above = e.igt(k, neg_lim);
    e.band(below, above)
}

/// The documentation of the offset θ of a [`settle`] step.
pub fn settle_doc(role: &str) -> ThetaDoc {
    ThetaDoc::value(Domain::Real, role).when("the closed form does not pin it")
}

#[cfg(test)]
mod tests {
    use super::Direction;

    /// The straddle test with both brackets, and with the one `direction` keeps.
    fn straddles(lo: f64, hi: f64, t: f64, direction: Option<Direction>) -> bool {
        let up = lo < t && t < hi;
        let down = hi < t && t < lo;
        match direction {
            Some(Direction::Increasing) => up,
            Some(Direction::Decreasing) => down,
            None => up || down,
        }
    }

    /// Where `direction` recognizes the forward function, testing one bracket decides as testing
    /// both, on every pair of special and ordinary values.
    #[test]
    fn one_bracket_decides_as_both_for_monotone_steps() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            3.5,
            -2.25,
            1e-300,
            -1e-300,
            5e-324,
            1e300,
            -1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        type Fwd = fn(f64, f64) -> f64;
        type Dir = fn(f64) -> Direction;
        let steps: [(Fwd, Dir); 6] = [
            (|x, k| x + k, |_| Direction::Increasing),
            (|x, k| k + x, |_| Direction::Increasing),
            (|x, k| x - k, |_| Direction::Increasing),
            (|x, k| k - x, |_| Direction::Decreasing),
            (|x, c| x * c, sign),
            (|x, c| x / c, sign),
        ];
        fn sign(c: f64) -> Direction {
            if c.is_sign_positive() {
                Direction::Increasing
            } else {
                Direction::Decreasing
            }
        }
        for (fwd, dir) in steps {
            for &k in &values {
                if k.is_nan() {
                    continue;
                }
                for &d in &values {
                    let delta = 0.5e-9 * d.abs().max(1.0);
                    let (lo, hi) = (fwd(d - delta, k), fwd(d + delta, k));
                    for &t in &values {
                        assert_eq!(
                            straddles(lo, hi, t, Some(dir(k))),
                            straddles(lo, hi, t, None),
                            "d = {d}, k = {k}, target = {t}"
                        );
                    }
                }
            }
        }
    }
}
