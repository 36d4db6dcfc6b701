//! The numeric fallback: one unknown that still occurs several times after rewriting.
//!
//! For `x⁵ + x`, `x³ − x + 1` or `x·exp x` no rewrite leaves `x` once. The smallest subterm `T`
//! holding every occurrence of `x` (its other operands `k…` known by the time it is inverted)
//! becomes a helper `iso.root.N(x, k…) = T`, and its inverse rule solves `T(x, k…) = y` by
//! **generated IR with loops**, so the interpreter (and any backend) runs it like any other code:
//!
//! - `iso.grid(i)`: a fixed grid of 2M+1 points, symmetric and geometric: `0` and
//!   `±10^(−6 + 0.04·j)`, `j = 0 … 350`, i.e. from 1e-6 to 1e8 in steps of about 9.6%.
//! - `iso.root.N.solve(y, k…, s)`: scans the grid for brackets of `h(x) = T(x, k…) − y` (a grid
//!   point where `h = 0`, or a sign change between neighbours), takes the one nearest the start
//!   point `s`, fails with a domain error when there is none, and bisects it to adjacent floats
//!   (at most 200 steps), returning the end with the smaller `|h|`. The scan starts at the grid
//!   interval holding `s` and goes outward, nearest bracket first, one evaluation of `h` per
//!   step, until no nearer bracket is left: its cost grows with the distance (in grid steps)
//!   from `s` to the root, not with the grid (`examples/sampled_latency.rs` times it).
//!
//! θ is that start point `s`, a real, and the rule returns `s` itself, without solving, where
//! `T(s, k…) = y` already holds within the tolerance, or the same term as the program writes
//! it does, where `T` is a rewrite of it (`iso.root.N.written`, [`RootSpec::written`]: a
//! rewrite is equal only up to rounding). So the PGF records x itself, and the
//! round trip gives x back bit for bit whatever the shape of `T` near x: a double root, two
//! roots in one grid step, a root beyond the grid, or a `T` that is constant on a whole interval
//! (`p / p` is 1 for every nonzero p: every p is a preimage of 1, and θ = p names it). A drawn
//! `s` is almost never a root itself, and then names the root nearest it: every θ is accepted
//! whenever the scan finds a root, and the roots near the sampler's bulk are the likelier.
//!
//! - `iso.root.N.dip(y, k…, a, b, h_f)`: where the scan sees `h` keep its sign over three grid
//!   points in a row and dip in the middle, two roots (`|a − b| = y` for a small y, roots a ± y)
//!   or a double root (`|a − b| = 0`, or x² = 0) may lie between the outer two, where no
//!   neighbours change sign. A golden-section search for the smallest `|h|` there (at most
//!   [`DIP_STEPS`] evaluations) finds a point of the other sign (a bracket with the middle
//!   point) or one where `|h|` is below `1e-12·max(1, |y|)` (a double root); either is a
//!   bracket like the others, by its distance from `s`. A dip with no root costs the search
//!   and gives nothing.
//!
//! **Integers.** An i64 unknown gets the same helper with an exact scan instead
//! ([`install_int_root`]): `iso.root.N.solve` tries s, s + 1, s − 1, … up to [`INT_REACH`]
//! away (for an f64 `T` of an integer, `(n as f64) * 0.5`, within the tolerance). There `T` is
//! the largest term on the way down to the occurrences with no other unknown
//! (so `n·(n − 1) / 2` is scanned whole rather than leaving a remainder to guess), and it may
//! not divide by anything that depends on x (a trap would stop the scan).
//!
//! **The mathematics is written once**, over [`Arith`] ([`super::arith`]): the bracket and dip
//! tests, distances, the golden-section points and the bisection step are kernels that the
//! generated functions emit as IR and that [`scan_plain`] (the walk over the grid),
//! [`dip_plain`] and [`bisect_plain`] run on any [`num_traits::Float`], with the generated
//! code's control flow. On f64 they give the generated `iso.root.N.solve`'s and `.dip`'s results
//! bit for bit (tested); they are tested in f32 too.
//!
//! Limits of the scan (for sampled θ only; completeness does not depend on it): roots beyond
//! ±1e8, and roots in a dip the grid does not show (a narrow spike of the other sign where the
//! grid's `|h|` is not smallest at a point next to it), are not found from a start point that
//! is not itself a root. Soundness is unaffected (the rule checks `T(x, k…) ≈ y`, and the inverse
//! checks the original function).

use super::arith::{Arith, Plain};
use super::helpers::{emit_plan, fresh, new_function, Fb, RootRule};
use super::plan::{PKind, Plan, RootSpec};
use num_traits::Float;
use pinv_core::ir::{Block, Const, FuncId, Function, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::{Callee, Layer};

/// Grid points on each side of 0.
pub const SIDE: i64 = 351;
/// The smallest magnitude is 10^LOW.
pub const LOW: f64 = -6.0;
/// The step of the exponent.
pub const STEP: f64 = 0.04;
/// At most this many bisection steps.
pub const BISECTIONS: i64 = 200;

const GRID: &str = "iso.grid";

/// The `i`-th grid point, as the generated `iso.grid` computes it (for tests).
pub fn grid_point(i: i64) -> f64 {
    if i == SIDE {
        return 0.0;
    }
    let (j, sign) = if i < SIDE {
        (SIDE - 1 - i, -1.0)
    } else {
        (i - SIDE - 1, 1.0)
    };
    sign * pinv_core::semantics::eval(
        Opcode::Pow,
        &[Const::F64(10.0), Const::F64((j as f64) * STEP + LOW)],
    )
    .ok()
    .and_then(Const::as_f64)
    .unwrap_or(f64::NAN)
}

/// What the numeric roots' builder adds.
impl Fb {
    /// Whether the integer scan's `t = T(x)` gives `y`: exactly for an i64 `T`; for an f64 one
    /// within the default tolerance, `|t − y| ≤ 1e-9 · max(1, |y|)` (the rule's own check
    /// decides with the emitter's tolerance).
    fn gives(&mut self, t: Value, y: Value) -> Value {
        if self.f.value_type(t) == Type::I64 {
            return self.op(Opcode::Ieq, &[t, y]);
        }
        let diff = self.op(Opcode::Fsub, &[t, y]);
        small_beside(self, diff, y, 1e-9)
    }

    /// `c ? a : b` for two values of one type, already computed.
    pub(super) fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.f.value_type(a);
        let (t, _) = self.new_block(&[]);
        let (e, _) = self.new_block(&[]);
        let (join, p) = self.new_block(&[ty]);
        self.brif(c, (t, &[]), (e, &[]));
        self.at(t);
        self.jump(join, &[a]);
        self.at(e);
        self.jump(join, &[b]);
        self.at(join);
        p[0]
    }

    /// The grid point next to `x = x_i` ([`grid_step`]), with the index tests in IR.
    fn grid_next(&mut self, i: Value, x: Value, dir: i64) -> Value {
        let side = self.ci(SIDE);
        // Moving away from 0 grows |x|: up on the positive side, down on the negative one.
        let away = if dir > 0 {
            self.op(Opcode::Igt, &[i, side])
        } else {
            self.op(Opcode::Ilt, &[i, side])
        };
        let at_zero = self.op(Opcode::Ieq, &[i, side]);
        let toward = self.ci(SIDE - dir);
        let at_low = self.op(Opcode::Ieq, &[i, toward]);
        grid_step(self, x, dir, (away, at_zero, at_low))
    }
}

// ---- the mathematics of the scan, the dip search and the bisection, written once over
// `Arith` (plain floats, or IR)

/// Whether `|d| ≤ tol · max(1, |y|)`: `d` is small beside `y` (false for a NaN `d`).
pub fn small_beside<A: Arith>(a: &mut A, d: A::F, y: A::F, tol: f64) -> A::B {
    let ad = a.abs(d);
    let ay = a.abs(y);
    let one = a.c(1.0);
    let scale = a.max(ay, one);
    let tol = a.c(tol);
    let bound = a.mul(tol, scale);
    a.le(ad, bound)
}

/// The distance from `s` to the interval `[lo, hi]` (0 inside it).
pub fn distance<A: Arith>(a: &mut A, s: A::F, lo: A::F, hi: A::F) -> A::F {
    let below = a.sub(lo, s);
    let above = a.sub(s, hi);
    let out = a.max(below, above);
    let zero = a.c(0.0);
    a.max(out, zero)
}

/// The grid point next to `x = x_i` (`x_{i+1}` for `dir = 1`, `x_{i−1}` for `dir = −1`), by
/// one multiplication or division by the grid's ratio, and the constants at 0 and ±1e-6. The
/// caller tests the index: `away` (i is beyond 0 in the direction of the step, so |x| grows),
/// `at_zero` (i is 0's index) and `at_low` (i is ±1e-6's index, the step goes to 0). Within a
/// few ulps of what `iso.grid` computes: a scan only needs its points in order.
pub fn grid_step<A: Arith>(
    a: &mut A,
    x: A::F,
    dir: i64,
    (away, at_zero, at_low): (A::B, A::B, A::B),
) -> A::F {
    let ratio = a.c(10f64.powf(STEP));
    let grown = a.mul(x, ratio);
    let shrunk = a.div(x, ratio);
    let next = a.choose(away, grown, shrunk);
    // Next to 0 the grid jumps to ±1e-6, and from ±1e-6 to 0.
    let low = a.c(dir as f64 * 10f64.powf(LOW));
    let zero = a.c(0.0);
    let next = a.choose(at_zero, low, next);
    a.choose(at_low, zero, next)
}

/// Whether `h_prev`, `h`, `h_next` (three points in a row) have one strict sign and `|h|` is
/// the smallest (strictly below `|h_prev|`): a dip that may hide two roots.
pub fn dip<A: Arith>(a: &mut A, h_prev: A::F, h: A::F, h_next: A::F) -> A::B {
    let zero = a.c(0.0);
    let p = [a.gt(h_prev, zero), a.gt(h, zero), a.gt(h_next, zero)];
    let pos = a.and(p[0], p[1]);
    let pos = a.and(pos, p[2]);
    let n = [a.lt(h_prev, zero), a.lt(h, zero), a.lt(h_next, zero)];
    let neg = a.and(n[0], n[1]);
    let neg = a.and(neg, n[2]);
    let same = a.or(pos, neg);
    let ap = a.abs(h_prev);
    let am = a.abs(h);
    let an = a.abs(h_next);
    let below_prev = a.lt(am, ap);
    let below_next = a.le(am, an);
    let low = a.and(below_prev, below_next);
    a.and(same, low)
}

/// `h = 0 || h < 0 < h1 || h > 0 > h1`: a root in `[x_i, x_{i+1})`.
pub fn is_root<A: Arith>(a: &mut A, h: A::F, h1: A::F) -> A::B {
    let zero = a.c(0.0);
    let at = a.eq(h, zero);
    let l = a.lt(h, zero);
    let r = a.gt(h1, zero);
    let up = a.and(l, r);
    let l = a.gt(h, zero);
    let r = a.lt(h1, zero);
    let down = a.and(l, r);
    let change = a.or(up, down);
    a.or(at, change)
}

/// The golden ratio's conjugate, 1/φ: the fraction of an interval a golden-section step keeps.
const GOLDEN: f64 = 0.618_033_988_749_894_9;

/// The golden-section point `hi − 0.618·(hi − lo)`, nearer `lo`.
pub fn golden_lower<A: Arith>(a: &mut A, lo: A::F, hi: A::F) -> A::F {
    let g = a.c(GOLDEN);
    let w = a.sub(hi, lo);
    let gw = a.mul(g, w);
    a.sub(hi, gw)
}

/// The golden-section point `lo + 0.618·(hi − lo)`, nearer `hi`.
pub fn golden_upper<A: Arith>(a: &mut A, lo: A::F, hi: A::F) -> A::F {
    let g = a.c(GOLDEN);
    let w = a.sub(hi, lo);
    let gw = a.mul(g, w);
    a.add(lo, gw)
}

/// Whether `hx` has the other sign than `h_f` (or is 0): a bracket with the dip's middle.
/// `f_positive` is `h_f > 0`.
pub fn other_sign<A: Arith>(a: &mut A, f_positive: A::B, hx: A::F) -> A::B {
    let zero = a.c(0.0);
    let le = a.le(hx, zero);
    let ge = a.ge(hx, zero);
    a.pick(f_positive, le, ge)
}

/// The midpoint of a bisection step, `lo + (hi − lo)/2`, and whether it is stuck (not strictly
/// inside: `lo` and `hi` are adjacent floats).
pub fn bisection_midpoint<A: Arith>(a: &mut A, lo: A::F, hi: A::F) -> (A::F, A::B) {
    let d = a.sub(hi, lo);
    let half = a.c(0.5);
    let d = a.mul(d, half);
    let mid = a.add(lo, d);
    let below = a.le(mid, lo);
    let above = a.ge(mid, hi);
    (mid, a.or(below, above))
}

/// Whether `hm` and `hlo` have one strict sign: the root is above the midpoint.
pub fn same_sign<A: Arith>(a: &mut A, hm: A::F, hlo: A::F) -> A::B {
    let zero = a.c(0.0);
    let m = a.lt(hm, zero);
    let l = a.lt(hlo, zero);
    let both_neg = a.and(m, l);
    let m = a.gt(hm, zero);
    let l = a.gt(hlo, zero);
    let both_pos = a.and(m, l);
    a.or(both_neg, both_pos)
}

/// Whether `|h_lo| ≤ |h_hi|`: the end a finished bisection returns.
pub fn lower_is_nearer<A: Arith>(a: &mut A, h_lo: A::F, h_hi: A::F) -> A::B {
    let l = a.abs(h_lo);
    let h = a.abs(h_hi);
    a.le(l, h)
}

/// The bisection of `iso.root.N.solve` on plain floats: from a bracket `[lo, hi]` of `h` (with
/// `h(lo)`), halve it until `h` is 0 at a point or the ends are adjacent floats (at most
/// [`BISECTIONS`] steps), and return the end with the smaller `|h|`.
pub fn bisect_plain<F: Float>(h: &dyn Fn(F) -> F, lo: F, hi: F, h_lo: F) -> F {
    let a = &mut Plain::<F>::new();
    let (mut lo, mut hi, mut h_lo) = (lo, hi, h_lo);
    for _ in 0..BISECTIONS {
        if h_lo == F::zero() {
            return lo;
        }
        let (mid, stuck) = bisection_midpoint(a, lo, hi);
        if stuck {
            break;
        }
        let hm = h(mid);
        if hm == F::zero() {
            return mid;
        }
        if same_sign(a, hm, h_lo) {
            (lo, h_lo) = (mid, hm);
        } else {
            hi = mid;
        }
    }
    if h_lo == F::zero() {
        return lo;
    }
    if lower_is_nearer(a, h_lo, h(hi)) {
        lo
    } else {
        hi
    }
}

/// The grid point next to `x = x_i` on plain floats ([`grid_step`], the index tests as
/// [`Fb::grid_next`] makes them).
fn grid_next_plain<F: Float>(a: &mut Plain<F>, i: i64, x: F, dir: i64) -> F {
    let away = if dir > 0 { i > SIDE } else { i < SIDE };
    grid_step(a, x, dir, (away, i == SIDE, i == SIDE - dir))
}

/// `x as i64` as IR's `fcvt_to_i64` computes it: saturating, NaN to 0.
fn to_i64<F: Float>(x: F) -> i64 {
    x.to_i64().unwrap_or(if x.is_nan() {
        0
    } else if x > F::zero() {
        i64::MAX
    } else {
        i64::MIN
    })
}

/// `iso.root.N.solve` on plain floats: the root of `h` whose bracket is nearest the start
/// point `s`, found by the same walk over the grid ([`build`]: nearest bracket first, dips
/// searched with [`dip_plain`]) and bisected with [`bisect_plain`]; `None` where the generated
/// code fails ("no real root in [-1e8, 1e8]"). On f64 it gives the generated code's root bit for
/// bit (tested).
pub fn scan_plain<F: Float>(h: &dyn Fn(F) -> F, y: F, s: F) -> Option<F> {
    let a = &mut Plain::<F>::new();
    let grid = |i: i64| F::from(grid_point(i)).unwrap_or_else(F::nan);
    let last = 2 * SIDE - 1;
    // Where s lies: estimated from log|s|, then set right by a step or two either way.
    let e = (s.abs().ln() / a.c(std::f64::consts::LN_10) - a.c(LOW)) / a.c(STEP);
    let j = to_i64(e.floor()).clamp(-1, SIDE);
    let p = (SIDE + 1 + j).min(last);
    let mut i = if s < F::zero() { last - p } else { p };
    while i < last && grid(i + 1) <= s {
        i += 1;
    }
    while i > 0 && grid(i) > s {
        i -= 1;
    }
    let (nan, far) = (F::nan(), F::infinity());
    let x_start = grid(i);
    let h_start = h(x_start);
    let (mut u, mut xu, mut hu) = (i, x_start, h_start);
    let (mut l1, mut xl1, mut hl1) = (i, x_start, h_start);
    let mut best = (nan, nan, nan, far);
    let (mut xpu, mut hpu, mut xpl, mut hpl) = (nan, nan, nan, nan);
    loop {
        let xu1 = grid_next_plain(a, u, xu, 1);
        let du = distance(a, s, xu, xu1);
        let du = if u <= last { du } else { far };
        let l = l1 - 1;
        let xl = grid_next_plain(a, l1, xl1, -1);
        let dd = distance(a, s, xl, xl1);
        let dd = if l >= 0 { dd } else { far };
        let nearest = a.min(du, dd);
        // Go on while a bracket nearer than the best is left (false for NaN, as in IR).
        if !a.lt(nearest, best.3) {
            break;
        }
        // Up or down (ties go down), with the point before the frontier, the frontier and the
        // new point.
        let up = du < dd;
        let (bracket, prev, front, new) = if up {
            let moved = !xpu.is_nan();
            let prev = if moved { (xpu, hpu) } else { (xl1, hl1) };
            let h_new = h(xu1);
            ((xu, xu1, hu, h_new, du), prev, (xu, hu), (xu1, h_new))
        } else {
            let moved = !xpl.is_nan();
            let prev = if moved { (xpl, hpl) } else { (xu, hu) };
            let h_new = h(xl);
            ((xl, xl1, h_new, hl1, dd), prev, (xl1, hl1), (xl, h_new))
        };
        let (lo, hi, h_lo, h_hi, d) = bracket;
        if is_root(a, h_lo, h_hi) {
            best = (lo, hi, h_lo, d);
        }
        if dip(a, prev.1, front.1, new.1) {
            let (lo_x, hi_x) = (a.min(prev.0, new.0), a.max(prev.0, new.0));
            let (dx, dh, kind) = dip_plain(h, y, lo_x, hi_x, front.1);
            let double_root = kind == a.c(2.0);
            let (lo_d, hi_d) = if double_root {
                (dx, dx)
            } else {
                (a.min(dx, front.0), a.max(dx, front.0))
            };
            let h_lo_d = if double_root || dx < front.0 {
                dh
            } else {
                front.1
            };
            let d_dip = distance(a, s, lo_d, hi_d);
            if kind > F::zero() && d_dip < best.3 {
                best = (lo_d, hi_d, h_lo_d, d_dip);
            }
        }
        if up {
            (xpu, hpu) = (xu, hu);
            (u, xu, hu) = (u + 1, xu1, new.1);
        } else {
            (xpl, hpl) = (xl1, hl1);
            (l1, xl1, hl1) = (l, xl, new.1);
        }
    }
    // The last grid point is a root of its own where h is 0 there.
    let x_end = grid(2 * SIDE);
    if h(x_end) == F::zero() && distance(a, s, x_end, x_end) < best.3 {
        return Some(x_end);
    }
    (best.3 < far).then(|| bisect_plain(h, best.0, best.1, best.2))
}

/// What the dip search found: a point, `h` there, and its kind (0: nothing; 1: `h` has the
/// other sign there; 2: `|h|` is below `1e-12·max(1, |y|)`, a double root).
pub type DipFound<F> = (F, F, F);

/// The dip search of `iso.root.N.dip` on plain floats ([`build_dip`]): inside `[lo, hi]`, where
/// `h` kept the sign of `h_f` at three grid points, a golden-section search for the smallest
/// `|h|`, at most [`DIP_STEPS`] steps.
pub fn dip_plain<F: Float>(h: &dyn Fn(F) -> F, y: F, lo: F, hi: F, h_f: F) -> DipFound<F> {
    let a = &mut Plain::<F>::new();
    let (mut lo, mut hi) = (lo, hi);
    let (mut c, mut d) = (golden_lower(a, lo, hi), golden_upper(a, lo, hi));
    let (mut hc, mut hd) = (h(c), h(d));
    let f_positive = h_f > F::zero();
    let one = F::one();
    for k in 0.. {
        if other_sign(a, f_positive, hc) {
            return (c, hc, one);
        }
        if other_sign(a, f_positive, hd) {
            return (d, hd, one);
        }
        if k >= DIP_STEPS || !a.lt(c, d) {
            break;
        }
        if hc.abs() < hd.abs() {
            // The smallest |h| is in [lo, d]: d becomes the upper end, c the new d.
            let nc = golden_lower(a, lo, d);
            (hi, c, d, hc, hd) = (d, nc, c, h(nc), hc);
        } else {
            // In [c, hi]: c becomes the lower end, d the new c.
            let nd = golden_upper(a, c, hi);
            (lo, c, d, hc, hd) = (c, d, nd, hd, h(nd));
        }
    }
    let c_best = hc.abs() <= hd.abs();
    let (x, hx) = if c_best { (c, hc) } else { (d, hd) };
    let kind = if small_beside(a, hx, y, 1e-12) {
        a.c(2.0)
    } else {
        F::zero()
    };
    (x, hx, kind)
}
/// The grid helper, added once per module.
fn grid(module: &mut Module) -> FuncId {
    if let Some(id) = module.get(GRID) {
        return id;
    }
    let (f, entry) = new_function(
        GRID,
        vec![Type::I64],
        vec![Type::F64],
        vec!["i".to_string()],
        Span::default(),
    );
    let mut b = Fb {
        f,
        block: entry,
        span: Span::default(),
    };
    let i = b.f.blocks[entry].params[0];
    let side = b.ci(SIDE);
    let mid = b.op(Opcode::Ieq, &[i, side]);
    let (zero_b, _) = b.new_block(&[]);
    let (side_b, _) = b.new_block(&[]);
    b.brif(mid, (zero_b, &[]), (side_b, &[]));
    b.at(zero_b);
    let z = b.c(0.0);
    b.ret(z);
    b.at(side_b);
    let (mag_b, mp) = b.new_block(&[Type::I64, Type::F64]);
    let neg = b.op(Opcode::Ilt, &[i, side]);
    let (neg_b, _) = b.new_block(&[]);
    let (pos_b, _) = b.new_block(&[]);
    b.brif(neg, (neg_b, &[]), (pos_b, &[]));
    b.at(neg_b);
    let last = b.ci(SIDE - 1);
    let j = b.op(Opcode::Isub, &[last, i]);
    let m1 = b.c(-1.0);
    b.jump(mag_b, &[j, m1]);
    b.at(pos_b);
    let first = b.ci(SIDE + 1);
    let j = b.op(Opcode::Isub, &[i, first]);
    let p1 = b.c(1.0);
    b.jump(mag_b, &[j, p1]);
    b.at(mag_b);
    let jf = b.op(Opcode::FcvtFromI64, &[mp[0]]);
    let step = b.c(STEP);
    let e = b.op(Opcode::Fmul, &[jf, step]);
    let low = b.c(LOW);
    let e = b.op(Opcode::Fadd, &[e, low]);
    let ten = b.c(10.0);
    let mag = b.op(Opcode::Pow, &[ten, e]);
    let x = b.op(Opcode::Fmul, &[mp[1], mag]);
    b.ret(x);
    module.add(b.f).expect("the grid helper is new")
}

/// Adds the body `iso.root.N(x, k…) = T` of `spec` (T of type `ty`, `sq` the square helper
/// where T uses one) under the first free name; returns the name, the body's id and the types
/// of k….
fn add_body(
    module: &mut Module,
    spec: &RootSpec,
    ty: Type,
    sq: Option<FuncId>,
    span: Span,
) -> (String, FuncId, Vec<Type>) {
    let name = fresh(module, "iso.root");
    let body = add_term(module, &name, &spec.body, ty, sq, span);
    (name, body, spec.body.params[1..].to_vec())
}

/// Adds the function `name(x, k…)` that computes `term`, a plan of one result of type `ty`.
fn add_term(
    module: &mut Module,
    name: &str,
    term: &Plan,
    ty: Type,
    sq: Option<FuncId>,
    span: Span,
) -> FuncId {
    let mut names = vec!["x".to_string()];
    names.extend((1..term.params.len()).map(|j| format!("k{}", j - 1)));
    let (mut f, entry) = new_function(name, term.params.clone(), vec![ty], names, span);
    let params = f.blocks[entry].params.clone();
    let helper = |_: usize, kind: &PKind| match kind {
        PKind::Sq => sq,
        _ => None,
    };
    let out = emit_plan(term, &mut f, entry, &params, &helper, module);
    f.ins_return(entry, out, span);
    module.add(f).expect("a fresh name")
}

/// A builder at the entry of a root's `solve(y, k…, s) -> x` (y of type `y_ty`, x and the start
/// point s of type `x_ty`), and its parameters y, k… and s.
fn solve_function(
    name: &str,
    y_ty: Type,
    k_types: &[Type],
    x_ty: Type,
    span: Span,
) -> (Fb, Value, Vec<Value>, Value) {
    let mut params = vec![y_ty];
    params.extend(k_types.iter().copied());
    params.push(x_ty);
    let mut names = vec!["y".to_string()];
    names.extend((0..k_types.len()).map(|j| format!("k{j}")));
    names.push("s".to_string());
    let (f, entry) = new_function(name, params, vec![x_ty], names, span);
    let b = Fb {
        f,
        block: entry,
        span,
    };
    let ps = b.f.blocks[entry].params.clone();
    let (y, s) = (ps[0], ps[ps.len() - 1]);
    let ks = ps[1..ps.len() - 1].to_vec();
    (b, y, ks, s)
}

/// Adds `iso.root.N` (the body), its `solve` helper, and the rule; returns the
/// body's id.
pub fn install_root(
    module: &mut Module,
    layer: &mut Layer,
    spec: &RootSpec,
    sq: FuncId,
    span: Span,
) -> FuncId {
    let grid = grid(module);
    let (name, body, k_types) = add_body(module, spec, Type::F64, Some(sq), span);

    let dip = build_dip(&format!("{name}.dip"), body, &k_types, span);
    let dip = module.add(dip).expect("a fresh name");
    let solve = format!("{name}.solve");
    let f = build(&solve, body, grid, dip, &k_types, span);
    module.add(f).expect("a fresh name");
    let written = spec.written.as_ref().map(|term| {
        let written = format!("{name}.written");
        add_term(module, &written, term, Type::F64, Some(sq), span);
        written
    });
    layer.add(
        Callee::Function(name.clone()),
        RootRule {
            ty: Type::F64,
            body: name,
            written,
            solve,
            role: format!(
                "a start point: x itself where {} = y there, else the root nearest it",
                spec.text
            ),
        },
    );
    body
}

/// The farthest the integer scan goes from its start, each way.
pub const INT_REACH: i64 = 1 << 14;

/// Adds the helper of an i64 [`PKind::Root`]: the body `iso.root.N(x, k…) = T` (x an i64) and
/// `iso.root.N.solve(y, k…, s)`, which tries s, s + 1, s − 1, s + 2, … up to [`INT_REACH`]
/// away and returns the first x with `T(x, k…) = y` (a domain error where there is none). As for
/// reals, θ is the start point and the PGF records x itself, so every x is reached, and θ near
/// the sampler's small integers finds the roots near 0. `T` has no operation that traps at
/// some x (see the isolation's choice of `T`), so the scan never stops on an error.
pub fn install_int_root(
    module: &mut Module,
    layer: &mut Layer,
    spec: &RootSpec,
    span: Span,
) -> FuncId {
    let t_ty = spec.result_ty();
    let (name, body, k_types) = add_body(module, spec, t_ty, None, span);

    let solve = format!("{name}.solve");
    let (mut b, y, ks, s) = solve_function(&solve, t_ty, &k_types, Type::I64, span);
    let zero = b.ci(0);
    let one = b.ci(1);
    let reach = b.ci(INT_REACH);
    let (step, step_p) = b.new_block(&[Type::I64]);
    b.jump(step, &[zero]);
    // At distance d: s + d, then s − d (wrapping, like the language's own arithmetic).
    b.at(step);
    let d = step_p[0];
    let up = b.op(Opcode::Iadd, &[s, d]);
    let (found, found_p) = b.new_block(&[Type::I64]);
    let (down, _) = b.new_block(&[]);
    let mut args = vec![up];
    args.extend(ks.iter().copied());
    let t = b.call_as(body, &args, t_ty);
    let hit = b.gives(t, y);
    b.brif(hit, (found, &[up]), (down, &[]));
    b.at(down);
    let low = b.op(Opcode::Isub, &[s, d]);
    let mut args = vec![low];
    args.extend(ks.iter().copied());
    let t = b.call_as(body, &args, t_ty);
    let hit = b.gives(t, y);
    let (next, _) = b.new_block(&[]);
    b.brif(hit, (found, &[low]), (next, &[]));
    b.at(next);
    let d1 = b.op(Opcode::Iadd, &[d, one]);
    let more = b.op(Opcode::Ile, &[d1, reach]);
    let (none, _) = b.new_block(&[]);
    b.brif(more, (step, &[d1]), (none, &[]));
    b.at(none);
    b.fail(&format!(
        "no integer within {INT_REACH} of θ gives the output"
    ));
    b.at(found);
    b.ret(found_p[0]);
    module.add(b.f).expect("a fresh name");
    layer.add(
        Callee::Function(name.clone()),
        RootRule {
            ty: Type::I64,
            body: name,
            written: None,
            solve,
            role: format!(
                "a start point: x itself where {} = y there, else the integer nearest it that gives y",
                spec.text
            ),
        },
    );
    body
}

/// What every step of the walk in `iso.root.N.solve` uses.
struct Walk {
    walk: Block,
    dip_fn: FuncId,
    y: Value,
    ks: Vec<Value>,
    s: Value,
    /// The best bracket so far: lower end, upper end, h at the lower end, distance from `s`.
    best: [Value; 4],
}

/// One side's step: the bracket it walks over (lower end, upper end, h at each, distance from
/// `s`), and its last three points (the one before the frontier, the frontier, the new one).
struct Side {
    bracket: (Value, Value, Value, Value, Value),
    prev: (Value, Value),
    front: (Value, Value),
    new: (Value, Value),
}

impl Walk {
    /// Ends a step: keeps the bracket if `h` changes sign over it, then looks into a dip at the
    /// frontier ([`build_dip`]) and keeps what it finds where that is nearer, and goes round the
    /// walk with the sides' new frontiers (`fronts`: u, x_u, h_u, l + 1, x_{l+1}, h_{l+1}) and
    /// the points before them (`prevs`).
    fn step(&self, b: &mut Fb, side: Side, fronts: [Value; 6], prevs: [Value; 4]) {
        let (lo, hi, h_lo, h_hi, d) = side.bracket;
        let [best_lo, best_hi, best_h, best_d] = self.best;
        let r = is_root(b, h_lo, h_hi);
        let nb_lo = b.select(r, lo, best_lo);
        let nb_hi = b.select(r, hi, best_hi);
        let nb_h = b.select(r, h_lo, best_h);
        let nd = b.select(r, d, best_d);
        let (x_front, h_front) = side.front;
        let dip = dip(b, side.prev.1, h_front, side.new.1);
        let (look, _) = b.new_block(&[]);
        let (joined, jp) = b.new_block(&[Type::F64, Type::F64, Type::F64, Type::F64]);
        b.brif(dip, (look, &[]), (joined, &[nb_lo, nb_hi, nb_h, nd]));
        b.at(look);
        let a = b.op(Opcode::Fmin, &[side.prev.0, side.new.0]);
        let z = b.op(Opcode::Fmax, &[side.prev.0, side.new.0]);
        let mut args = vec![self.y];
        args.extend(self.ks.iter().copied());
        args.extend([a, z, h_front]);
        let found = b.calls(self.dip_fn, &args, 3);
        let (dx, dh, kind) = (found[0], found[1], found[2]);
        // kind 1: dx has the other sign (a bracket with the frontier); 2: dx is a double root.
        let none = b.c(0.0);
        let two = b.c(2.0);
        let double_root = b.op(Opcode::Feq, &[kind, two]);
        let below_front = b.op(Opcode::Flt, &[dx, x_front]);
        let lo_d = b.op(Opcode::Fmin, &[dx, x_front]);
        let hi_d = b.op(Opcode::Fmax, &[dx, x_front]);
        let lo_d = b.select(double_root, dx, lo_d);
        let hi_d = b.select(double_root, dx, hi_d);
        let h_lo_d = b.select(below_front, dh, h_front);
        let h_lo_d = b.select(double_root, dh, h_lo_d);
        let d_dip = distance(b, self.s, lo_d, hi_d);
        let some = b.op(Opcode::Fgt, &[kind, none]);
        let nearer = b.op(Opcode::Flt, &[d_dip, nd]);
        let take = b.op(Opcode::Band, &[some, nearer]);
        let lo2 = b.select(take, lo_d, nb_lo);
        let hi2 = b.select(take, hi_d, nb_hi);
        let h2 = b.select(take, h_lo_d, nb_h);
        let d2 = b.select(take, d_dip, nd);
        b.jump(joined, &[lo2, hi2, h2, d2]);
        b.at(joined);
        let mut args = fronts.to_vec();
        args.extend_from_slice(&jp);
        args.extend(prevs);
        b.jump(self.walk, &args);
    }
}

/// Golden-section steps of a dip search (the interval shrinks by 0.618 per step: 80 steps take a
/// grid step of 10% down to below an ulp).
pub const DIP_STEPS: i64 = 80;

/// `iso.root.N.dip(y, k…, a, b, h_f) -> (x, h(x), kind)`: inside `[a, b]`, where the scan
/// saw `h` keep the sign of `h_f` at three grid points and dip in the middle, a golden-section
/// search for the smallest `|h|`. kind 1: a point where `h` has the other sign or is 0 (a
/// bracket with the middle point: two roots stepped over); 2: no such point, but `|h|` gets
/// below `1e-12·max(1, |y|)` (a double root, as `|a − b| = 0` has); 0: nothing.
fn build_dip(name: &str, body: FuncId, k_types: &[Type], span: Span) -> Function {
    let mut params = vec![Type::F64];
    params.extend(k_types.iter().copied());
    params.extend([Type::F64, Type::F64, Type::F64]);
    let mut names = vec!["y".to_string()];
    names.extend((0..k_types.len()).map(|j| format!("k{j}")));
    names.extend(["a".to_string(), "b".to_string(), "h_f".to_string()]);
    let (f, entry) = new_function(name, params, vec![Type::F64; 3], names, span);
    let mut b = Fb {
        f,
        block: entry,
        span,
    };
    let ps = b.f.blocks[entry].params.clone();
    let n = ps.len();
    let y = ps[0];
    let ks = ps[1..n - 3].to_vec();
    let (a, z, hf) = (ps[n - 3], ps[n - 2], ps[n - 1]);
    let c = golden_lower(&mut b, a, z);
    let d = golden_upper(&mut b, a, z);
    let hc = h(&mut b, body, c, &ks, y);
    let hd = h(&mut b, body, d, &ks, y);
    let i0 = b.ci(0);
    let types = [
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::I64,
    ];
    let (gs, gp) = b.new_block(&types);
    b.jump(gs, &[a, z, c, d, hc, hd, i0]);
    b.at(gs);
    let (a, z, c, d, hc, hd, k) = (gp[0], gp[1], gp[2], gp[3], gp[4], gp[5], gp[6]);
    let zero = b.c(0.0);
    let one_k = b.c(1.0);
    let f_pos = b.op(Opcode::Fgt, &[hf, zero]);
    let other_c = other_sign(&mut b, f_pos, hc);
    let other_d = other_sign(&mut b, f_pos, hd);
    let (ret_c, _) = b.new_block(&[]);
    let (try_d, _) = b.new_block(&[]);
    b.brif(other_c, (ret_c, &[]), (try_d, &[]));
    b.at(ret_c);
    b.f.ins_return(b.block, vec![c, hc, one_k], span);
    b.at(try_d);
    let (ret_d, _) = b.new_block(&[]);
    let (step_b, _) = b.new_block(&[]);
    b.brif(other_d, (ret_d, &[]), (step_b, &[]));
    b.at(ret_d);
    b.f.ins_return(b.block, vec![d, hd, one_k], span);
    b.at(step_b);
    let limit = b.ci(DIP_STEPS);
    let more = b.op(Opcode::Ilt, &[k, limit]);
    let apart = b.op(Opcode::Flt, &[c, d]);
    let go = b.op(Opcode::Band, &[more, apart]);
    let (shrink, _) = b.new_block(&[]);
    let (finish, _) = b.new_block(&[]);
    b.brif(go, (shrink, &[]), (finish, &[]));
    b.at(shrink);
    let one = b.ci(1);
    let k1 = b.op(Opcode::Iadd, &[k, one]);
    let ac = b.op(Opcode::Fabs, &[hc]);
    let ad = b.op(Opcode::Fabs, &[hd]);
    let left = b.op(Opcode::Flt, &[ac, ad]);
    let (lb, _) = b.new_block(&[]);
    let (rb, _) = b.new_block(&[]);
    b.brif(left, (lb, &[]), (rb, &[]));
    // The smallest |h| is in [a, d]: d becomes the upper end, c the new d.
    b.at(lb);
    let nc = golden_lower(&mut b, a, d);
    let hnc = h(&mut b, body, nc, &ks, y);
    b.jump(gs, &[a, d, nc, c, hnc, hc, k1]);
    // In [c, z]: c becomes the lower end, d the new c.
    b.at(rb);
    let nd = golden_upper(&mut b, c, z);
    let hnd = h(&mut b, body, nd, &ks, y);
    b.jump(gs, &[c, z, d, nd, hd, hnd, k1]);
    b.at(finish);
    let c_best = lower_is_nearer(&mut b, hc, hd);
    let x = b.select(c_best, c, d);
    let hx = b.select(c_best, hc, hd);
    let double = small_beside(&mut b, hx, y, 1e-12);
    let two = b.c(2.0);
    let kind = b.select(double, two, zero);
    b.f.ins_return(b.block, vec![x, hx, kind], span);
    b.f
}

/// Emits `h(x) = body(x, k…) − y`.
fn h(b: &mut Fb, body: FuncId, x: Value, ks: &[Value], y: Value) -> Value {
    let mut args = vec![x];
    args.extend(ks.iter().copied());
    let t = b.call(body, &args);
    b.op(Opcode::Fsub, &[t, y])
}

/// `iso.root.N.solve(y, k…, s)`: the root of `h` whose bracket is nearest the start point `s`.
///
/// A scan outward from the grid interval holding `s` finds the bracket `[x_i, x_{i+1})` with a
/// root (`is_root`) at the smallest distance from `s` (0 when `s` lies in it; the lower of equal
/// distances), then bisects it. The last grid point is a bracket of its own where `h` is 0
/// there.
fn build(
    name: &str,
    body: FuncId,
    grid: FuncId,
    dip_fn: FuncId,
    k_types: &[Type],
    span: Span,
) -> Function {
    let (mut b, y, ks, s) = solve_function(name, Type::F64, k_types, Type::F64, span);

    // Where s lies: the grid interval [x_i, x_{i+1}) holding it, estimated from log|s| and set
    // right by a step or two either way (a NaN s stays where the estimate puts it, and every
    // distance from it is 0: the root nearest that index wins).
    let one = b.ci(1);
    let i0 = b.ci(0);
    let far = b.c(f64::INFINITY);
    let last = b.ci(2 * SIDE - 1);
    let a = b.op(Opcode::Fabs, &[s]);
    let l = b.op(Opcode::Log, &[a]);
    let ln10 = b.c(std::f64::consts::LN_10);
    let e = b.op(Opcode::Fdiv, &[l, ln10]);
    let low = b.c(LOW);
    let e = b.op(Opcode::Fsub, &[e, low]);
    let step = b.c(STEP);
    let e = b.op(Opcode::Fdiv, &[e, step]);
    let e = b.op(Opcode::Floor, &[e]);
    let j = b.op(Opcode::FcvtToI64, &[e]);
    let side = b.ci(SIDE);
    let j = b.op(Opcode::Imin, &[j, side]);
    let minus_one = b.ci(-1);
    let j = b.op(Opcode::Imax, &[j, minus_one]);
    let first_pos = b.ci(SIDE + 1);
    let p = b.op(Opcode::Iadd, &[first_pos, j]);
    let p = b.op(Opcode::Imin, &[p, last]);
    let mirrored = b.op(Opcode::Isub, &[last, p]);
    let zero = b.c(0.0);
    let negative = b.op(Opcode::Flt, &[s, zero]);
    let start = b.select(negative, mirrored, p);
    // Up while x_{i+1} ≤ s, then down while x_i > s.
    let (up, up_p) = b.new_block(&[Type::I64]);
    b.jump(up, &[start]);
    b.at(up);
    let i = up_p[0];
    let room = b.op(Opcode::Ilt, &[i, last]);
    let i1 = b.op(Opcode::Iadd, &[i, one]);
    let x1 = b.call(grid, &[i1]);
    let below = b.op(Opcode::Fle, &[x1, s]);
    let go = b.op(Opcode::Band, &[room, below]);
    let (down, down_p) = b.new_block(&[Type::I64]);
    b.brif(go, (up, &[i1]), (down, &[i]));
    b.at(down);
    let i = down_p[0];
    let room = b.op(Opcode::Igt, &[i, i0]);
    let xi = b.call(grid, &[i]);
    let above = b.op(Opcode::Fgt, &[xi, s]);
    let go = b.op(Opcode::Band, &[room, above]);
    let i_less = b.op(Opcode::Isub, &[i, one]);
    let (scan, sp) = b.new_block(&[Type::I64]);
    b.brif(go, (down, &[i_less]), (scan, &[i]));

    // Outward from there: the brackets [x_k, x_{k+1}] above (k = u, u + 1, …) and below (k =
    // l, l − 1, …) are taken nearest first, and the scan stops once the next ones are no nearer
    // than the nearest bracket with a root (distances only grow outward). Each side keeps its
    // frontier point and h there, and steps to the next grid point by one multiplication, so a
    // step costs one evaluation of h; where s lies near a root, that is a few steps instead of
    // all 2·SIDE of them.
    b.at(scan);
    let x_start = b.call(grid, &[sp[0]]);
    let h_start = h(&mut b, body, x_start, &ks, y);
    let nan = b.c(f64::NAN);
    // (u, x_u, h_u, l + 1, x_{l+1}, h_{l+1}, best lower end, best upper end, h there, its
    // distance, the point before x_u and h there, the point before x_{l+1} and h there); no
    // best yet: a NaN lower end and an infinite distance; a side not moved yet: a NaN point
    // before its frontier.
    let types = [
        Type::I64,
        Type::F64,
        Type::F64,
        Type::I64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
        Type::F64,
    ];
    let (walk, wp) = b.new_block(&types);
    b.jump(
        walk,
        &[
            sp[0], x_start, h_start, sp[0], x_start, h_start, nan, nan, nan, far, nan, nan, nan,
            nan,
        ],
    );
    b.at(walk);
    let (u, xu, hu, l1, xl1, hl1) = (wp[0], wp[1], wp[2], wp[3], wp[4], wp[5]);
    let (best_lo, best_hi, best_h, best_d) = (wp[6], wp[7], wp[8], wp[9]);
    let (xpu, hpu, xpl, hpl) = (wp[10], wp[11], wp[12], wp[13]);
    let u_in = b.op(Opcode::Ile, &[u, last]);
    let xu1 = b.grid_next(u, xu, 1);
    let du = distance(&mut b, s, xu, xu1);
    let du = b.select(u_in, du, far);
    let l = b.op(Opcode::Isub, &[l1, one]);
    let l_in = b.op(Opcode::Ige, &[l, i0]);
    let xl = b.grid_next(l1, xl1, -1);
    let dd = distance(&mut b, s, xl, xl1);
    let dd = b.select(l_in, dd, far);
    let nearest = b.op(Opcode::Fmin, &[du, dd]);
    let go_on = b.op(Opcode::Flt, &[nearest, best_d]);
    let (step_b, _) = b.new_block(&[]);
    let (last_b, _) = b.new_block(&[]);
    b.brif(go_on, (step_b, &[]), (last_b, &[]));
    b.at(step_b);
    // Ties go down (the lower bracket first, as a scan from the bottom would).
    let take_up = b.op(Opcode::Flt, &[du, dd]);
    let (up_b, _) = b.new_block(&[]);
    let (down_b, _) = b.new_block(&[]);
    b.brif(take_up, (up_b, &[]), (down_b, &[]));
    let walk = Walk {
        walk,
        dip_fn,
        y,
        ks: ks.clone(),
        s,
        best: [best_lo, best_hi, best_h, best_d],
    };
    // Up: [x_u, x_{u+1}], the point before x_u the down side's frontier until up has moved.
    b.at(up_b);
    let moved = b.op(Opcode::Feq, &[xpu, xpu]);
    let x_prev = b.select(moved, xpu, xl1);
    let h_prev = b.select(moved, hpu, hl1);
    let h_new = h(&mut b, body, xu1, &ks, y);
    let u_next = b.op(Opcode::Iadd, &[u, one]);
    walk.step(
        &mut b,
        Side {
            bracket: (xu, xu1, hu, h_new, du),
            prev: (x_prev, h_prev),
            front: (xu, hu),
            new: (xu1, h_new),
        },
        [u_next, xu1, h_new, l1, xl1, hl1],
        [xu, hu, xpl, hpl],
    );
    b.at(down_b);
    let moved = b.op(Opcode::Feq, &[xpl, xpl]);
    let x_prev = b.select(moved, xpl, xu);
    let h_prev = b.select(moved, hpl, hu);
    let h_new = h(&mut b, body, xl, &ks, y);
    walk.step(
        &mut b,
        Side {
            bracket: (xl, xl1, h_new, hl1, dd),
            prev: (x_prev, h_prev),
            front: (xl1, hl1),
            new: (xl, h_new),
        },
        [u, xu, hu, l, xl, h_new],
        [xpu, hpu, xl1, hl1],
    );

    // The last grid point is a root of its own where h is 0 there.
    b.at(last_b);
    let end = b.ci(2 * SIDE);
    let x_end = b.call(grid, &[end]);
    let h_end = h(&mut b, body, x_end, &ks, y);
    let at_end = b.op(Opcode::Feq, &[h_end, zero]);
    let d = distance(&mut b, s, x_end, x_end);
    let nearer = b.op(Opcode::Flt, &[d, best_d]);
    let end_wins = b.op(Opcode::Band, &[at_end, nearer]);
    let (ret_end, _) = b.new_block(&[]);
    let (pick, _) = b.new_block(&[]);
    b.brif(end_wins, (ret_end, &[]), (pick, &[]));
    b.at(ret_end);
    b.ret(x_end);
    b.at(pick);
    let found = b.op(Opcode::Flt, &[best_d, far]);
    let (none_b, _) = b.new_block(&[]);
    let (some_b, _) = b.new_block(&[]);
    b.brif(found, (some_b, &[]), (none_b, &[]));
    b.at(none_b);
    b.fail("the equation has no real root in [-1e8, 1e8] (numeric isolation)");
    b.at(some_b);
    let (lo, hi_x, hlo) = (best_lo, best_hi, best_h);

    // Bisection: (lo, hi, h(lo), steps).
    let (bis, bp) = b.new_block(&[Type::F64, Type::F64, Type::F64, Type::I64]);
    b.jump(bis, &[lo, hi_x, hlo, i0]);
    b.at(bis);
    let (lo, hi, hlo, k) = (bp[0], bp[1], bp[2], bp[3]);
    let zero = b.c(0.0);
    let exact = b.op(Opcode::Feq, &[hlo, zero]);
    let (ret_lo, _) = b.new_block(&[]);
    let (check, _) = b.new_block(&[]);
    b.brif(exact, (ret_lo, &[]), (check, &[]));
    b.at(ret_lo);
    b.ret(lo);
    b.at(check);
    let limit = b.ci(BISECTIONS);
    let enough = b.op(Opcode::Ige, &[k, limit]);
    let (step_b, _) = b.new_block(&[]);
    let (finish, _) = b.new_block(&[]);
    b.brif(enough, (finish, &[]), (step_b, &[]));
    b.at(step_b);
    let (mid, stuck) = bisection_midpoint(&mut b, lo, hi);
    let (eval_b, _) = b.new_block(&[]);
    b.brif(stuck, (finish, &[]), (eval_b, &[]));
    b.at(eval_b);
    let hm = h(&mut b, body, mid, &ks, y);
    let zero = b.c(0.0);
    let hit = b.op(Opcode::Feq, &[hm, zero]);
    let (ret_mid, _) = b.new_block(&[]);
    let (move_b, _) = b.new_block(&[]);
    b.brif(hit, (ret_mid, &[]), (move_b, &[]));
    b.at(ret_mid);
    b.ret(mid);
    b.at(move_b);
    let same = same_sign(&mut b, hm, hlo);
    let k1 = b.op(Opcode::Iadd, &[k, one]);
    b.brif(same, (bis, &[mid, hi, hm, k1]), (bis, &[lo, mid, hlo, k1]));
    // The end with the smaller |h|.
    b.at(finish);
    let hh = h(&mut b, body, hi, &ks, y);
    let pick_lo = lower_is_nearer(&mut b, hlo, hh);
    let (rl, _) = b.new_block(&[]);
    let (rh, _) = b.new_block(&[]);
    b.brif(pick_lo, (rl, &[]), (rh, &[]));
    b.at(rl);
    b.ret(lo);
    b.at(rh);
    b.ret(hi);
    b.f
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::SourceFile;

    fn cubic<F: Float>(x: F) -> F {
        x * x * x + (F::one() + F::one()) * x - F::from(5.0).unwrap()
    }

    /// Bisection ends at a float next to the root of x³ + 2x − 5 (about 1.3283), in f64 and
    /// in f32: no float nearer the root gives a smaller |h|.
    fn bisects_in<F: Float + std::fmt::Debug>() {
        let (lo, hi) = (F::one(), F::one() + F::one());
        let r = bisect_plain(&cubic, lo, hi, cubic(lo));
        let h = cubic(r).abs();
        for n in [r - r * F::epsilon(), r + r * F::epsilon()] {
            assert!(h <= cubic(n).abs() * (F::one() + F::one()), "{r:?}: {h:?}");
        }
        assert!((r - F::from(1.328_268_855_668_608_6).unwrap()).abs() < F::from(1e-5).unwrap());
    }

    #[test]
    fn bisection_reaches_adjacent_floats_in_f64_and_f32() {
        bisects_in::<f64>();
        bisects_in::<f32>();
    }

    /// `(x − 1)² − y` keeps one sign at grid points around 1 for a small y; the dip search
    /// finds a point of the other sign between them (two roots), or, for y = 0, the double root
    /// itself, in f64 and f32.
    fn finds_dips_in<F: Float + std::fmt::Debug>() {
        let f = |v: f64| F::from(v).unwrap();
        let (lo, hi) = (f(0.9), f(1.1));
        for y in [f(1e-4), f(0.0)] {
            let h = |x: F| (x - F::one()) * (x - F::one()) - y;
            let (x, hx, kind) = dip_plain(&h, y, lo, hi, h(lo));
            assert!(kind > F::zero(), "y = {y:?}: nothing found ({x:?}, {hx:?})");
            assert!(hx <= F::zero() || hx.abs() <= f(1e-6), "{x:?}: {hx:?}");
        }
        // A dip with no root: (x − 1)² + 1.
        let h = |x: F| (x - F::one()) * (x - F::one()) + F::one();
        assert_eq!(dip_plain(&h, F::zero(), lo, hi, h(lo)).2, F::zero());
    }

    #[test]
    fn the_dip_search_finds_close_and_double_roots_in_f64_and_f32() {
        finds_dips_in::<f64>();
        finds_dips_in::<f32>();
    }

    /// The generated `iso.root.N.solve`, run by the interpreter, and [`scan_plain`] on f64
    /// find the same root (or fail alike) bit for bit, from start points near and far, on both
    /// sides of 0, at a double root and where there is no root.
    #[test]
    fn the_generated_scan_is_the_plain_one_bit_for_bit() {
        use pinv_core::interp::Interpreter;
        let mut found = 0;
        for (source, forward, ys) in [
            (
                "fn body(x: f64) -> f64 { x * x * x + 2.0 * x }",
                (|x: f64| x * x * x + 2.0 * x) as fn(f64) -> f64,
                [5.0, -3.0, 0.0, 1e12],
            ),
            (
                "fn body(x: f64) -> f64 { (x - 1.0) * (x - 1.0) }",
                |x: f64| (x - 1.0) * (x - 1.0),
                [0.0, 1e-4, 4.0, -1.0],
            ),
        ] {
            let file = SourceFile::new("s.pinv", source);
            let mut module = pinv_core::compile_source(&file).expect("compiles").module;
            let body = module.get("body").expect("body");
            let grid_fn = grid(&mut module);
            let dip = build_dip("dip", body, &[], Span::default());
            let dip = super::super::helpers::add(&mut module, dip);
            let solve = build("solve", body, grid_fn, dip, &[], Span::default());
            let solve = super::super::helpers::add(&mut module, solve);
            let interp = Interpreter::new(&module);
            for y in ys {
                for s in [0.0, 1.0, -1.0, 0.37, -250.0, 3e7, f64::NAN] {
                    let got = interp
                        .call(solve, &[Const::F64(y), Const::F64(s)])
                        .ok()
                        .and_then(|v| v[0].as_f64());
                    let h = |x: f64| forward(x) - y;
                    let want = scan_plain(&h, y, s);
                    found += usize::from(want.is_some());
                    assert_eq!(
                        got.map(f64::to_bits),
                        want.map(f64::to_bits),
                        "{source}: y = {y}, s = {s}: {got:?} vs {want:?}"
                    );
                }
            }
        }
        // Of the 56 runs, those at y = −1 for the square and y = 1e12 beyond the grid find none.
        assert!(found >= 40, "{found}");
    }

    #[test]
    fn the_scan_finds_roots_in_f32() {
        let h = |x: f32| x * x * x + 2.0 * x - 5.0;
        for s in [0.0f32, 1.0, -3.0, 100.0] {
            let x = scan_plain(&h, 5.0, s).expect("a root");
            assert!(h(x).abs() < 1e-5, "from {s}: {x}");
        }
        assert_eq!(scan_plain(&|x: f32| x * x + 1.0, 0.0, 0.5), None);
    }

    /// The generated `iso.root.N.dip`, run by the interpreter, and [`dip_plain`] on f64 give
    /// the same point, value and kind bit for bit: they share the kernels.
    #[test]
    fn the_generated_dip_search_is_the_plain_one_bit_for_bit() {
        use pinv_core::interp::Interpreter;
        let file = SourceFile::new(
            "d.pinv",
            "fn body(x: f64) -> f64 { (x - 1.0) * (x - 1.0) + x * 1e-3 }",
        );
        let mut module = pinv_core::compile_source(&file).expect("compiles").module;
        let body = module.get("body").expect("body");
        let dip = build_dip("dip", body, &[], Span::default());
        let dip = super::super::helpers::add(&mut module, dip);
        let interp = Interpreter::new(&module);
        let forward = |x: f64| (x - 1.0) * (x - 1.0) + x * 1e-3;
        for (y, lo, hi) in [
            (1.0005, 0.9, 1.1),
            (0.99975, 0.9, 1.1),
            (0.9, 0.9, 1.1),
            (2.0, -3.0, 5.0),
            // No root, over an interval wide enough for every one of the DIP_STEPS steps.
            (-1.0, -1e6, 1e6),
            (f64::NAN, 0.0, 1.0),
        ] {
            let h = |x: f64| forward(x) - y;
            let args = [y, lo, hi, h(lo)].map(Const::F64);
            let got = interp.call(dip, &args).expect("runs");
            let (x, hx, kind) = dip_plain(&h, y, lo, hi, h(lo));
            let want = [x, hx, kind].map(Const::F64);
            let bits = |v: &[Const]| v.iter().map(|c| c.bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "y = {y} in [{lo}, {hi}]: {got:?} vs {want:?}"
            );
        }
    }
}
