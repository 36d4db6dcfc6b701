//! Exact settling: which of the floats that give a step's output the input was.
//!
//! [`super::settle`] returns a closed-form candidate `d` wherever every solution of `fwd(x) =
//! target` lies within the tolerance of `d`. That is complete for one step, but not for a chain
//! whose inverse amplifies: `x ↦ x · 0.5 + 1` run 69 times takes 7.1 and 2.0 to the same 2.0, and
//! walking it back doubles a one-ulp difference 69 times. With [`crate::EmitOptions::exact_floats`]
//! a settle step instead finds the **run** of floats that give `target` exactly, and θ names one
//! of them, so that every step (and so every chain of steps) is exact:
//!
//! - The floats are numbered in their order by [`ord`] (an i64: `−0` just below `+0`), so "the
//!   next float" is `+1`, and a run is an interval of integers.
//! - The common case is tested first ([`alone`]): `d` gives `target` and its two neighbours do
//!   not, so `d` is the answer, with no θ and no search.
//! - The **anchor** is `d` when `fwd(d)` is `target`; otherwise a bisection over the floats of the
//!   probe window `d ± δ` (the one [`super::settle::pins`] uses) finds the first float that is not
//!   below `target` in `fwd`'s direction.
//! - Each **edge** of the run is found by galloping from the anchor (1, 2, 4, ... floats away)
//!   and bisecting the last step: at most 64 iterations each, about 2·log₂ of the run's length.
//! - The run is **usable** when the anchor gives `target` and the run ends inside the window: for
//!   a `fwd` monotone on the window (what `pins` already assumes), that run then holds every float
//!   that gives `target`. The inverse returns the anchor where the run is one float long (no θ),
//!   and otherwise reads θ, an integer offset narrowed to the run, and returns that float. The
//!   PGF records `ord(x) − ord(anchor)`, which lies in the run because `fwd(x)` is `target`.
//! - Where the run is not usable (`d` not finite, no float near `d` gives `target`, a run wider
//!   than the window, a candidate the rule does not trust), the step settles as without the
//!   option.

use super::ops::Ops;
use super::settle::{and_trusted, window, Forward};
use crate::emit::Emitter;
use crate::rule::RuleError;
use pinv_core::ir::{Opcode, Type, Value};

/// The position of `x` in the order of the floats, as an i64: the order of the results is the
/// order of the floats (`−0` is `−1`, `+0` is `0`), and NaNs lie beyond the infinities.
pub fn ord(e: &mut Emitter<'_>, x: Value) -> Value {
    let bits = e.op1(Opcode::F64Bits, x);
    flip_negative(e, bits)
}

/// The float at position `k` of [`ord`]'s order (its inverse).
pub fn from_ord(e: &mut Emitter<'_>, k: Value) -> Value {
    let bits = flip_negative(e, k);
    e.op1(Opcode::F64FromBits, bits)
}

/// `a` with its 63 low bits flipped where it is negative: an involution that turns the bits of a
/// negative float (ordered backwards) into positions ordered forwards, and back.
fn flip_negative(e: &mut Emitter<'_>, a: Value) -> Value {
    let c63 = e.ic(63);
    let sign = e.ishr(a, c63);
    let max = e.ic(i64::MAX);
    let mask = e.iand(sign, max);
    e.ixor(a, mask)
}

/// `c ? a : b` for i64 without a branch (`b ^ ((a ^ b) & −c)`): the searches' loops stay one
/// block each, which keeps them cheap and lets guards step over them.
fn pick(e: &mut Emitter<'_>, c: Value, a: Value, b: Value) -> Value {
    let ci = e.op1(Opcode::BoolToI64, c);
    let mask = e.ineg(ci);
    let diff = e.ixor(a, b);
    let masked = e.iand(diff, mask);
    e.ixor(b, masked)
}

/// `c ? a : b` for bools without a branch.
fn pick_bool(e: &mut Emitter<'_>, c: Value, a: Value, b: Value) -> Value {
    let ca = e.band(c, a);
    let not_c = e.bnot(c);
    let cb = e.band(not_c, b);
    e.bor(ca, cb)
}

/// `⌊(a + b) / 2⌋` without overflow.
fn midpoint(e: &mut Emitter<'_>, a: Value, b: Value) -> Value {
    let one = e.ic(1);
    let ha = e.ishr(a, one);
    let hb = e.ishr(b, one);
    let both = e.iand(a, b);
    let odd = e.iand(both, one);
    let sum = e.iadd(ha, hb);
    e.iadd(sum, odd)
}

/// The run of floats that give `target`, found around the candidate `d`. Positions are [`ord`]
/// positions; `lo ≤ hi` are offsets from the anchor (`lo ≤ 0 ≤ hi` as found; a run narrowed by
/// [`Run::within`] may leave the anchor out).
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// The run is found, holds every float that gives `target`, and the step can use it.
    pub usable: Value,
    /// The position of the anchor, a float of the run.
    pub anchor: Value,
    /// The first float of the run, as an offset from the anchor (≤ 0).
    pub lo: Value,
    /// The last float of the run, as an offset from the anchor (≥ 0).
    pub hi: Value,
}

impl Run {
    /// Whether the run is one float (so no θ is needed): the one at offset `lo`.
    pub fn single(&self, e: &mut Emitter<'_>) -> Value {
        e.ieq(self.lo, self.hi)
    }

    /// The run narrowed to the floats in `range` (what the rule knows of the value solved, as
    /// [`Emitter::solving_range`] gives it; a range of reals, so a zero end takes in both
    /// zeros), and unusable where that leaves none. Positions are compared where they are (the
    /// run's ends and the range's), so no offset overflows.
    pub fn within(&self, e: &mut Emitter<'_>, range: Option<(f64, f64)>) -> Run {
        let Some((lo, hi)) = range else {
            return *self;
        };
        let first = e.iadd(self.anchor, self.lo);
        let last = e.iadd(self.anchor, self.hi);
        let (mut from, mut to) = (first, last);
        let mut inside = e.bc(true);
        if lo.is_finite() {
            let end = e.fc(if lo == 0.0 { -0.0 } else { lo });
            let end = ord(e, end);
            let past = e.ilt(last, end);
            let not_past = e.bnot(past);
            inside = e.band(inside, not_past);
            from = e.op2(Opcode::Imax, from, end);
            from = e.op2(Opcode::Imin, from, last);
        }
        if hi.is_finite() {
            let end = e.fc(if hi == 0.0 { 0.0 } else { hi });
            let end = ord(e, end);
            let past = e.ilt(end, first);
            let not_past = e.bnot(past);
            inside = e.band(inside, not_past);
            to = e.op2(Opcode::Imin, to, end);
            to = e.op2(Opcode::Imax, to, first);
        }
        Run {
            usable: e.band(self.usable, inside),
            anchor: self.anchor,
            lo: e.isub(from, self.anchor),
            hi: e.isub(to, self.anchor),
        }
    }

    /// The same run anchored at its first float (offsets `0..=hi − lo`): where it is found
    /// from different anchors (the inverse's value and the forward one), its floats are
    /// numbered alike.
    pub fn from_first(&self, e: &mut Emitter<'_>) -> Run {
        let first = e.iadd(self.anchor, self.lo);
        let zero = e.ic(0);
        let last = e.isub(self.hi, self.lo);
        Run {
            usable: self.usable,
            anchor: first,
            lo: zero,
            hi: last,
        }
    }

    /// The float at offset `k` from the anchor.
    pub fn at(&self, e: &mut Emitter<'_>, k: Value) -> Value {
        let p = e.iadd(self.anchor, k);
        from_ord(e, p)
    }
}

/// Finds the run of floats `x` with `fwd(x) = target` around `d` (see the module docs); `trusted`
/// (if given) must hold for the run to be usable.
pub fn run(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
) -> Result<Run, RuleError> {
    // About 300 instructions in 36 blocks, the same at every step of a chain or loop of the
    // same operation: a helper of its own, which those steps share.
    let r = e.outlined(|e| {
        let finite = e.is_finite(d);
        let go = and_trusted(e, finite, trusted);
        let types = [Type::Bool, Type::I64, Type::I64, Type::I64];
        e.if_else(
            go,
            &types,
            |e| search(e, d, target, fwd),
            |e| {
                let no = e.bc(false);
                let zero = e.ic(0);
                Ok(vec![no, zero, zero, zero])
            },
        )
    })?;
    Ok(Run {
        usable: r[0],
        anchor: r[1],
        lo: r[2],
        hi: r[3],
    })
}

/// Whether `d` alone gives `target`: a nonzero float (or an infinity) that gives it, between two
/// neighbours that do not. A monotone `fwd` then gives `target` nowhere else, so the step needs
/// no θ and no [`run`]. The neighbours are the bit patterns one above and one below (the next
/// float in magnitude each way: below `d` and above it, whatever its sign); zero is left out,
/// because its neighbour of the other sign is not one bit pattern away. About 15 instructions:
/// the whole cost of the common case, so it comes first.
pub fn alone(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
    trusted: Option<Value>,
) -> Value {
    let r = super::settle::shared_test(e, |e| alone_here(e, d, target, fwd));
    and_trusted(e, r, trusted)
}

/// [`alone`] without the rule's trust, written where the emitter is.
fn alone_here(e: &mut Emitter<'_>, d: Value, target: Value, fwd: Forward<'_>) -> Value {
    let (prev, next) = neighbours(e, d);
    let at = fwd(e, d);
    let at_next = fwd(e, next);
    let at_prev = fwd(e, prev);
    let hit = e.feq(at, target);
    let next_hits = e.feq(at_next, target);
    let prev_hits = e.feq(at_prev, target);
    let either = e.bor(next_hits, prev_hits);
    let neither = e.bnot(either);
    let zero = e.fc(0.0);
    let nonzero = e.fne(d, zero);
    let r = e.band(hit, neither);
    e.band(r, nonzero)
}

/// The bit patterns one below and one above `d`'s: the next float in magnitude each way, below
/// `d` and above it whatever its sign (not across zero).
fn neighbours(e: &mut Emitter<'_>, d: Value) -> (Value, Value) {
    let bits = e.op1(Opcode::F64Bits, d);
    let one = e.ic(1);
    let next = e.iadd(bits, one);
    let prev = e.isub(bits, one);
    let next = e.op1(Opcode::F64FromBits, next);
    let prev = e.op1(Opcode::F64FromBits, prev);
    (prev, next)
}

/// Whether the solutions of `fwd(x) = target` around `d` lie strictly between `d`'s two
/// neighbours, for a steep `fwd`: their outputs lie strictly on opposite sides of `target`. A
/// monotone `fwd` then reaches `target` only between them, so `d` is the one float that can give
/// it exactly, and at most one float from the best approximation where none does. For a steep
/// step (`a / (c − a)` near its pole, where one float of `a` moves the output by more than the
/// tolerance) no float may give `target` within the tolerance, and the float nearest it is what
/// a later, flatter step (`log`) needs. Zero is left out, as in [`alone`].
pub fn bracketed(e: &mut Emitter<'_>, d: Value, target: Value, fwd: Forward<'_>) -> Value {
    let (prev, next) = neighbours(e, d);
    let at_next = fwd(e, next);
    let at_prev = fwd(e, prev);
    let up_lo = e.flt(at_prev, target);
    let up_hi = e.flt(target, at_next);
    let up = e.band(up_lo, up_hi);
    let down_lo = e.flt(at_next, target);
    let down_hi = e.flt(target, at_prev);
    let down = e.band(down_lo, down_hi);
    let r = e.bor(up, down);
    let zero = e.fc(0.0);
    let nonzero = e.fne(d, zero);
    e.band(r, nonzero)
}

/// [`run`]'s search: its usable flag, anchor, `lo` and `hi`.
fn search(
    e: &mut Emitter<'_>,
    d: Value,
    target: Value,
    fwd: Forward<'_>,
) -> Result<Vec<Value>, RuleError> {
    let (below, above) = window(e, d);
    let od = ord(e, d);
    let ob = ord(e, below);
    let oa = ord(e, above);
    let kmin = e.isub(ob, od);
    let kmax = e.isub(oa, od);
    let gives = |e: &mut Emitter<'_>, k: Value| {
        let p = e.iadd(od, k);
        let x = from_ord(e, p);
        let fx = fwd(e, x);
        e.feq(fx, target)
    };
    let at = fwd(e, d);
    let hit = e.feq(at, target);
    let anchor = e.if_value(
        hit,
        Type::I64,
        |e| Ok(e.ic(0)),
        |e| first_not_below(e, (od, below, above), (kmin, kmax), target, fwd),
    )?;
    let found = gives(e, anchor);
    let oanchor = e.iadd(od, anchor);
    // The room on each side of the anchor inside the window.
    let up_room = e.isub(kmax, anchor);
    let down_room = e.isub(anchor, kmin);
    let (hi, up_out) = edge(e, oanchor, up_room, 1, target, fwd)?;
    let (lo_mag, down_out) = edge(e, oanchor, down_room, -1, target, fwd)?;
    let lo = e.ineg(lo_mag);
    let inside = e.band(up_out, down_out);
    let usable = e.band(found, inside);
    Ok(vec![usable, oanchor, lo, hi])
}

/// The offset (from `d`, at position `od`, in `(kmin, kmax]`) of the first float of the window
/// that is not below `target` in `fwd`'s direction, which the window's ends give
/// (`fwd(below) < fwd(above)`: increasing). A bisection, at most 64 iterations; where the ends
/// do not straddle `target`, its answer is some float of the window, which [`run`] then tests.
fn first_not_below(
    e: &mut Emitter<'_>,
    (od, below, above): (Value, Value, Value),
    (kmin, kmax): (Value, Value),
    target: Value,
    fwd: Forward<'_>,
) -> Result<Value, RuleError> {
    let f_below = fwd(e, below);
    let f_above = fwd(e, above);
    let increasing = e.flt(f_below, f_above);
    let (_, first) = bisect(e, kmin, kmax, |e, mid| {
        let p = e.iadd(od, mid);
        let x = from_ord(e, p);
        let fx = fwd(e, x);
        let lt = e.flt(fx, target);
        let gt = e.fgt(fx, target);
        Ok(pick_bool(e, increasing, lt, gt))
    })?;
    Ok(first)
}

/// Bisects the integers `[lo, hi]`, where `keeps(lo)` holds and `keeps(hi)` does not (for a
/// `keeps` that holds up to some point and not after), down to two neighbours: the last that
/// keeps and the first that does not. At most 64 iterations.
fn bisect(
    e: &mut Emitter<'_>,
    lo: Value,
    hi: Value,
    keeps: impl FnOnce(&mut Emitter<'_>, Value) -> Result<Value, RuleError>,
) -> Result<(Value, Value), RuleError> {
    let r = e.while_loop(
        &[Type::I64, Type::I64],
        &[lo, hi],
        |e, s| {
            let one = e.ic(1);
            let next = e.iadd(s[0], one);
            Ok(e.ilt(next, s[1]))
        },
        |e, s| {
            let mid = midpoint(e, s[0], s[1]);
            let k = keeps(e, mid)?;
            let lo = pick(e, k, mid, s[0]);
            let hi = pick(e, k, s[1], mid);
            Ok(vec![lo, hi])
        },
    )?;
    Ok((r[0], r[1]))
}

/// One edge of the run: the largest `j` in `0..=room` such that the floats `anchor + sign·i`
/// for `i ≤ j` all give `target` (the anchor does), and whether the run ends before `room` (the
/// float `room` away does not give `target`). Gallops 1, 2, 4, ... floats away, then bisects the
/// last step: at most 64 iterations each.
fn edge(
    e: &mut Emitter<'_>,
    anchor: Value,
    room: Value,
    sign: i64,
    target: Value,
    fwd: Forward<'_>,
) -> Result<(Value, Value), RuleError> {
    let gives = |e: &mut Emitter<'_>, j: Value| {
        let s = e.ic(sign);
        let step = e.imul(j, s);
        let p = e.iadd(anchor, step);
        let x = from_ord(e, p);
        let fx = fwd(e, x);
        e.feq(fx, target)
    };
    let at_room = gives(e, room);
    let ends = e.bnot(at_room);
    let zero = e.ic(0);
    let one = e.ic(1);
    // Gallop: `inside` gives target, `probe` is the next float tried (never beyond `room`).
    let first = e.op2(Opcode::Imin, one, room);
    let g = e.while_loop(
        &[Type::I64, Type::I64],
        &[zero, first],
        |e, s| {
            let short = e.ilt(s[1], room);
            let positive = e.igt(s[1], zero);
            let within = e.band(short, positive);
            let hit = gives(e, s[1]);
            Ok(e.band(within, hit))
        },
        |e, s| {
            let one = e.ic(1);
            let half_room = e.ishr(room, one);
            let doubled = e.ishl(s[1], one);
            let far = e.igt(s[1], half_room);
            let next = pick(e, far, room, doubled);
            Ok(vec![s[1], next])
        },
    )?;
    // Bisect: `g[0]` gives target, `g[1]` does not (or is `room`, which does not where the run
    // ends inside the window).
    let (last, _) = bisect(e, g[0], g[1], |e, mid| Ok(gives(e, mid)))?;
    Ok((last, ends))
}
