//! Trigonometric functions: `sin cos tan` (periodic: a branch choice and a whole number of
//! periods θ), `asin acos atan` (monotone) and `atan2` (a radius θ).

use super::f64_elem::{monotone, OutputDomain, OFFSET};
use super::ops::Ops;
use super::settle::{
    settle, settle_doc, settle_guarded, settle_pgf, settle_pgf_guarded, settle_pgf_when,
    settle_when, small_multiple, window,
};
use super::spec::{rows, Closed, Side, Spec};
use super::{unknowns2, verify_forward};
use crate::emit::Emitter;
use crate::overlay::Layer;
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};
use std::f64::consts::{FRAC_PI_2, PI, TAU};

pub fn register(layer: &mut Layer) {
    use Opcode::{Acos, Asin, Atan, Cos, Sin, Tan};
    // op => monotone(name, op, summary, the output's domain check, the closed-form inverse)
    rows! { layer;
        Asin => monotone("sin", Asin, "x = sin z", OutputDomain::Onto("asin is between -π/2 and π/2", -FRAC_PI_2, FRAC_PI_2), |e, z| Ok(e.op1(Sin, z)));
        Acos => monotone("cos", Acos, "x = cos z", OutputDomain::Onto("acos is between 0 and π", 0.0, PI), |e, z| Ok(e.op1(Cos, z)));
        Atan => monotone("tan", Atan, "x = tan z", OutputDomain::Onto("atan is between -π/2 and π/2", -FRAC_PI_2, FRAC_PI_2), |e, z| Ok(e.op1(Tan, z)));
        Sin => Spec::from(Periodic::Sin);
        Cos => Spec::from(Periodic::Cos);
        Tan => Spec::from(Periodic::Tan);
        Atan2 => atan2();
    }
}

// ---------------------------------------------------------------------------------------------
// sin, cos, tan

const TURNS: &str = "whole periods";

/// `sin`, `cos` and `tan`: every solution is a principal one plus whole periods.
/// - `z = sin x`: a branch choice (`asin z` or `π − asin z`) and θ `k ∈ ℤ`: `x = branch + 2πk`;
/// - `z = cos x`: a sign choice (`±acos z`) and `k`: `x = ±acos z + 2πk`;
/// - `z = tan x`: `k` only: `x = atan z + πk`;
///
/// settled (near the peaks, and for huge x where `2πk` is inexact, an offset θ) and checked.
/// The PGF takes the branch and k nearest to x.
#[derive(Clone, Copy, Debug)]
pub enum Periodic {
    Sin,
    Cos,
    Tan,
}

impl Periodic {
    fn op(self) -> Opcode {
        match self {
            Periodic::Sin => Opcode::Sin,
            Periodic::Cos => Opcode::Cos,
            Periodic::Tan => Opcode::Tan,
        }
    }

    fn period(self) -> f64 {
        match self {
            Periodic::Tan => PI,
            _ => TAU,
        }
    }

    fn branch_role(self) -> &'static str {
        match self {
            Periodic::Sin => "branch (0: asin z, 1: π − asin z)",
            _ => "branch (0: acos z, 1: −acos z)",
        }
    }

    /// The principal value: asin, acos or atan of z.
    fn principal(self, e: &mut Emitter<'_>, z: Value) -> Value {
        let inv = match self {
            Periodic::Sin => Opcode::Asin,
            Periodic::Cos => Opcode::Acos,
            Periodic::Tan => Opcode::Atan,
        };
        e.op1(inv, z)
    }

    /// The solution of branch `c` (0 or 1) before adding periods.
    fn branch(self, e: &mut Emitter<'_>, r: Value, c: u32) -> Value {
        match (self, c) {
            (_, 0) | (Periodic::Tan, _) => r,
            (Periodic::Sin, _) => {
                let pi = e.fc(PI);
                e.fsub(pi, r)
            }
            (Periodic::Cos, _) => e.fneg(r),
        }
    }

    /// `branch(c) + period · k`, with `c` a value (`None` for tan).
    fn candidate(
        self,
        e: &mut Emitter<'_>,
        r: Value,
        c: Option<Value>,
        k: Value,
    ) -> Result<Value, RuleError> {
        let base = match c {
            None => r,
            Some(c) => {
                let b0 = self.branch(e, r, 0);
                let b1 = self.branch(e, r, 1);
                let one = e.ic(1);
                let is1 = e.ieq(c, one);
                e.select(is1, b1, b0)?
            }
        };
        let kf = e.i_to_f(k);
        let p = e.fc(self.period());
        let shift = e.fmul(kf, p);
        Ok(e.fadd(base, shift))
    }

    /// The k that brings `branch` nearest to x, and the distance left.
    fn name(self) -> &'static str {
        match self {
            Periodic::Sin => "asin-turns",
            Periodic::Cos => "acos-turns",
            Periodic::Tan => "atan-turns",
        }
    }

    /// What the inverse requires of z: sine and cosine reach [−1, 1], and a z past an end by
    /// no more than the tolerance is moved onto it (the inverse may hold the rounding of the
    /// steps after it: `atan2(cos(p), 0.25)` solved back to a cosine of 1.0000000000000002),
    /// in the PGF too; the tangent reaches every number.
    fn output_domain(self) -> OutputDomain {
        match self {
            Periodic::Sin => {
                OutputDomain::Onto("the output of `sin` is between -1 and 1", -1.0, 1.0)
            }
            Periodic::Cos => {
                OutputDomain::Onto("the output of `cos` is between -1 and 1", -1.0, 1.0)
            }
            Periodic::Tan => OutputDomain::Any,
        }
    }

    fn nearest(self, e: &mut Emitter<'_>, x: Value, branch: Value) -> (Value, Value) {
        let diff = e.fsub(x, branch);
        let p = e.fc(self.period());
        let q = e.fdiv(diff, p);
        let k = e.round_to_i64(q);
        let kf = e.i_to_f(k);
        let shift = e.fmul(kf, p);
        let d = e.fadd(branch, shift);
        let off = e.fsub(x, d);
        (k, e.fabs(off))
    }
}

impl From<Periodic> for Spec {
    fn from(kind: Periodic) -> Spec {
        Spec::unary(kind.name(), move |e, z| {
            let z = kind.output_domain().check(e, z)?;
            let c = match kind {
                Periodic::Tan => None,
                _ => Some(e.choice(2, kind.branch_role())?),
            };
            let k = e.theta(Domain::Int, TURNS)?;
            let r = kind.principal(e, z);
            let d = kind.candidate(e, r, c, k)?;
            let op = kind.op();
            let trusted = small_multiple(e, k);
            let x = settle_guarded(e, d, z, &|e, x| e.op1(op, x), OFFSET, Some(trusted))?;
            verify_forward(e, op, &[x], z)?;
            Ok(x)
        })
        .records(move |e, z, x| {
            // The inverse's z: the branch and turns found from x are then those that give x
            // back from what the inverse computes.
            let z = e.replayed(z);
            let z = kind.output_domain().moved_onto(e, z)?;
            let r = kind.principal(e, z);
            let (c, k) = match kind {
                Periodic::Tan => (None, kind.nearest(e, x, r).0),
                _ => {
                    let b0 = kind.branch(e, r, 0);
                    let b1 = kind.branch(e, r, 1);
                    let (k0, off0) = kind.nearest(e, x, b0);
                    let (k1, off1) = kind.nearest(e, x, b1);
                    let second = e.flt(off1, off0);
                    let c = e.b_to_i(second);
                    e.record(c, kind.branch_role())?;
                    (Some(c), e.select(second, k1, k0)?)
                }
            };
            e.record(k, TURNS)?;
            let d = kind.candidate(e, r, c, k)?;
            let op = kind.op();
            let trusted = small_multiple(e, k);
            settle_pgf_guarded(e, d, z, x, &|e, x| e.op1(op, x), OFFSET, Some(trusted))
        })
        .doc(move |_| {
            let mut thetas = Vec::new();
            if !matches!(kind, Periodic::Tan) {
                thetas.push(ThetaDoc::choice(2, kind.branch_role()));
            }
            thetas.push(ThetaDoc::value(Domain::Int, TURNS));
            thetas.push(settle_doc(OFFSET));
            let mut checks = Vec::new();
            if let OutputDomain::Onto(reason, ..) = kind.output_domain() {
                checks.push(reason.to_string());
            }
            checks.push(format!(
                "`{}` of the solution is the output",
                kind.op().spelling()
            ));
            let summary = match kind {
                Periodic::Sin => "x = asin z or π − asin z, + 2πk",
                Periodic::Cos => "x = ±acos z + 2πk",
                Periodic::Tan => "x = atan z + πk",
            };
            RuleDoc {
                thetas,
                checks,
                exact: false,
                summary: summary.into(),
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// atan2

const RADIUS: &str = "radius sqrt(x² + y²)";
const Y_OFF: &str = "y: offset from the closed form";
const X_OFF: &str = "x: offset from the closed form";
const Y_FREE: &str = "y (any, z is NaN)";
const X_FREE: &str = "x (any, z is NaN)";
const LARGER: &str = "the larger coordinate (the radius overflows)";
const LARGER_EXACT: &str = "the larger coordinate's magnitude (its sign is z's)";

/// `sin z`, `cos z`, and whether the x coordinate of a point at angle `z` is the larger one
/// (`|cos z| ≥ |sin z|`; x then has the sign of `cos z`).
fn sin_cos(e: &mut Emitter<'_>, z: Value) -> (Value, Value, Value) {
    let s = e.op1(Opcode::Sin, z);
    let c = e.op1(Opcode::Cos, z);
    let as_ = e.fabs(s);
    let ac = e.fabs(c);
    (s, c, e.fge(ac, as_))
}

/// Both coordinates unknown, z not NaN, with exact floats ([`crate::EmitOptions::exact_floats`]):
/// θ is the magnitude of the larger coordinate, which takes its sign from z (x from `cos z`, y
/// from z itself, as `atan2` gives it), and the smaller is named against it. A radius gives the
/// larger coordinate only as `r · cos z` rounded, which need not be the forward float, and a
/// step after it that names exact floats (a sum the coordinate goes into) then finds another
/// run than the PGF's.
fn exact_point(e: &mut Emitter<'_>, z: Value) -> Result<Vec<Value>, RuleError> {
    let m = e.theta(
        Domain::Interval {
            lo: 0.0,
            hi: f64::INFINITY,
        },
        LARGER_EXACT,
    )?;
    let (_, c, x_larger) = sin_cos(e, z);
    e.if_else(
        x_larger,
        &[Type::F64, Type::F64],
        |e| {
            let x = e.with_sign_of(m, c)?;
            let d = y_of(e, z, x)?;
            let trusted = y_of_trusted(e, d, x);
            let f = move |e: &mut Emitter<'_>, y: Value| e.op2(Opcode::Atan2, y, x);
            let y = settle_guarded(e, d, z, &f, Y_OFF, Some(trusted))?;
            Ok(vec![y, x])
        },
        |e| {
            let y = e.with_sign_of(m, z)?;
            let d = x_of(e, z, y)?;
            let trusted = x_of_trusted(e, d, y);
            let f = move |e: &mut Emitter<'_>, x: Value| e.op2(Opcode::Atan2, y, x);
            let x = settle_guarded(e, d, z, &f, X_OFF, Some(trusted))?;
            Ok(vec![y, x])
        },
    )
}

/// The PGF side of [`exact_point`], for the forward point `(y, x)` at the angle `z` the inverse
/// holds.
fn exact_point_pgf(e: &mut Emitter<'_>, z: Value, y: Value, x: Value) -> Result<(), RuleError> {
    let (_, c, x_larger) = sin_cos(e, z);
    e.branch(
        x_larger,
        |e| {
            let m = e.fabs(x);
            e.record(m, LARGER_EXACT)?;
            let xs = e.with_sign_of(m, c)?;
            let d = y_of(e, z, xs)?;
            let trusted = y_of_trusted(e, d, xs);
            let f = move |e: &mut Emitter<'_>, y: Value| e.op2(Opcode::Atan2, y, xs);
            settle_pgf_guarded(e, d, z, y, &f, Y_OFF, Some(trusted))
        },
        |e| {
            let m = e.fabs(y);
            e.record(m, LARGER_EXACT)?;
            let ys = e.with_sign_of(m, z)?;
            let d = x_of(e, z, ys)?;
            let trusted = x_of_trusted(e, d, ys);
            let f = move |e: &mut Emitter<'_>, x: Value| e.op2(Opcode::Atan2, ys, x);
            settle_pgf_guarded(e, d, z, x, &f, X_OFF, Some(trusted))?;
            // `atan2(p, p)`: as in the radius form, the last note for p is y's.
            e.note_replay(y, ys);
            Ok(())
        },
    )
}

/// `(y, x)` candidates from the radius and whether the x coordinate is the larger one.
fn polar(e: &mut Emitter<'_>, z: Value, r: Value) -> (Value, Value, Value) {
    let (s, c, x_larger) = sin_cos(e, z);
    let y = e.fmul(r, s);
    let x = e.fmul(r, c);
    (y, x, x_larger)
}

/// `y = x tan z`, with the sign of z (which y always has: at the rounded ±π/2, `tan z` can have
/// the wrong sign for a negative x).
/// The candidate `y = x · tan z` (with z's sign).
fn y_of(e: &mut Emitter<'_>, z: Value, x: Value) -> Result<Value, RuleError> {
    let t = e.op1(Opcode::Tan, z);
    let d = e.fmul(x, t);
    e.with_sign_of(d, z)
}

/// Where `atan2(y, x)` is monotone in y over the probe around the candidate `d` (x known):
/// x > 0, or a probe that stays on one side of y = 0. For x < 0 it jumps from −π to π at y = 0,
/// and for x = 0 it is ±π/2 for every nonzero y: a probe across the jump straddles every z in
/// between, and would pin `d` for a z an ulp from ±π that no y gives (θ then gives y).
fn y_of_trusted(e: &mut Emitter<'_>, d: Value, x: Value) -> Value {
    let zero = e.fc(0.0);
    let right = e.fgt(x, zero);
    let (below, above) = window(e, d);
    let positive = e.fgt(below, zero);
    let negative = e.flt(above, zero);
    let one_side = e.bor(positive, negative);
    e.bor(right, one_side)
}

/// Where `atan2(y, x)` is monotone in x (y known): y ≠ 0. For y = ±0 it is a step (±π for
/// x < 0, ±0 for x > 0), whose solutions are a half-line, not a float near the candidate.
fn x_of_trusted(e: &mut Emitter<'_>, _d: Value, y: Value) -> Value {
    let zero = e.fc(0.0);
    e.fne(y, zero)
}

/// The candidate `x = y / tan z`.
fn x_of(e: &mut Emitter<'_>, z: Value, y: Value) -> Result<Value, RuleError> {
    let t = e.op1(Opcode::Tan, z);
    Ok(e.fdiv(y, t))
}

/// `sqrt(x² + y²)` without overflow or underflow on the way.
fn hypot(e: &mut Emitter<'_>, y: Value, x: Value) -> Result<Value, RuleError> {
    let ax = e.fabs(x);
    let ay = e.fabs(y);
    let m = e.op2(Opcode::Fmax, ax, ay);
    let zero = e.fc(0.0);
    let is_zero = e.feq(m, zero);
    let finite = e.is_finite(m);
    let sx = e.fdiv(ax, m);
    let sy = e.fdiv(ay, m);
    let sx2 = e.fmul(sx, sx);
    let sy2 = e.fmul(sy, sy);
    let sum = e.fadd(sx2, sy2);
    let root = e.op1(Opcode::Sqrt, sum);
    let scaled = e.fmul(m, root);
    // m = 0: 0; m = inf: inf; otherwise m·sqrt((x/m)² + (y/m)²).
    let r = e.select(finite, scaled, m)?;
    e.select(is_zero, zero, r)
}

/// `z = atan2(y, x)`.
/// - both unknown: z NaN: both free (θ); otherwise θ is the radius `r ≥ 0` and the point is
///   `(r sin z, r cos z)`: the larger coordinate as is (θ where `r` overflows), the smaller
///   settled against it (its offset θ where they do not pin it, such as `y = 0`);
/// - x known: `y = x tan z`, settled; y known: `x = y / tan z`, settled.
pub fn atan2() -> Spec {
    Spec::binary("polar")
        .output_check(|e, z| {
            // A z computed from other values may land an ulp past ±π, where the forward value
            // was: moved onto it, as for `atan`.
            OutputDomain::Onto("atan2 is between -π and π", -PI, PI).check(e, z)
        })
        .both(
            |e, z| {
                let nan = e.is_nan(z);
                let yx = e.if_else(
                    nan,
                    &[Type::F64, Type::F64],
                    |e| {
                        let y = e.theta(Domain::Real, Y_FREE)?;
                        let x = e.theta(Domain::Real, X_FREE)?;
                        Ok(vec![y, x])
                    },
                    |e| {
                        if e.options().exact_floats {
                            return exact_point(e, z);
                        }
                        let r = e.theta(
                            Domain::Interval {
                                lo: 0.0,
                                hi: f64::INFINITY,
                            },
                            RADIUS,
                        )?;
                        let (yc, xc, x_larger) = polar(e, z, r);
                        e.if_else(
                            x_larger,
                            &[Type::F64, Type::F64],
                            |e| {
                                let ok = e.is_finite(xc);
                                let no = e.bc(false);
                                let x = settle_when(e, xc, ok, no, LARGER)?;
                                let (d, f) = y_of_point(e, z, yc, x);
                                let y = settle(e, d, z, &f, Y_OFF)?;
                                Ok(vec![y, x])
                            },
                            |e| {
                                let ok = e.is_finite(yc);
                                let no = e.bc(false);
                                let y = settle_when(e, yc, ok, no, LARGER)?;
                                let (d, f) = x_of_point(e, z, xc, y);
                                let x = settle(e, d, z, &f, X_OFF)?;
                                Ok(vec![y, x])
                            },
                        )
                    },
                )?;
                Ok((yx[0], yx[1]))
            },
            |e, z, y, x| {
                // The point is computed from the angle the inverse holds ([`Emitter::replayed`]);
                // the radius is recorded from the forward coordinates.
                let z = e.replayed(z);
                let nan = e.is_nan(z);
                e.branch(
                    nan,
                    |e| {
                        e.record(y, Y_FREE)?;
                        e.record(x, X_FREE)?;
                        Ok(())
                    },
                    |e| {
                        if e.options().exact_floats {
                            return exact_point_pgf(e, z, y, x);
                        }
                        let r = hypot(e, y, x)?;
                        e.record(r, RADIUS)?;
                        let (yc, xc, x_larger) = polar(e, z, r);
                        e.branch(
                            x_larger,
                            |e| {
                                let ok = e.is_finite(xc);
                                let no = e.bc(false);
                                settle_pgf_when(e, xc, ok, no, x, LARGER)?;
                                let xs = e.select(ok, xc, x)?;
                                let (d, f) = y_of_point(e, z, yc, xs);
                                settle_pgf(e, d, z, y, &f, Y_OFF)?;
                                Ok(())
                            },
                            |e| {
                                let ok = e.is_finite(yc);
                                let no = e.bc(false);
                                settle_pgf_when(e, yc, ok, no, y, LARGER)?;
                                let ys = e.select(ok, yc, y)?;
                                let (d, f) = x_of_point(e, z, xc, ys);
                                settle_pgf(e, d, z, x, &f, X_OFF)?;
                                // `atan2(p, p)`: one forward value, two solutions; the inverse
                                // keeps the first operand's (and checks the other against it),
                                // so the last note for it must be y's, on this arm too.
                                e.note_replay(y, ys);
                                Ok(())
                            },
                        )?;
                        Ok(())
                    },
                )?;
                Ok(())
            },
        )
        .settled_trusting(
            Side::Left,
            Opcode::Atan2,
            Closed::By(y_of),
            Y_OFF,
            Some(y_of_trusted),
        )
        .settled_trusting(
            Side::Right,
            Opcode::Atan2,
            Closed::By(x_of),
            X_OFF,
            Some(x_of_trusted),
        )
        .verified(Opcode::Atan2)
        .doc(|pattern| {
            let checks = vec![
                "atan2 is between -π and π".to_string(),
                "atan2 of the solution is z".to_string(),
            ];
            let (thetas, summary) = match unknowns2(pattern) {
                (true, true) => (
                    vec![
                        ThetaDoc::value(Domain::Real, Y_FREE).when("z is NaN"),
                        ThetaDoc::value(Domain::Real, X_FREE).when("z is NaN"),
                        ThetaDoc::value(
                            Domain::Interval {
                                lo: 0.0,
                                hi: f64::INFINITY,
                            },
                            RADIUS,
                        )
                        // One θ either way (the count orders a block's outputs): the larger
                        // coordinate's magnitude takes the radius's place in exact steps.
                        .when(
                            "z is not NaN; where steps name exact floats, the larger coordinate's \
                             magnitude instead (its sign is z's)",
                        ),
                        ThetaDoc::value(Domain::Real, LARGER).when("r sin z or r cos z overflows"),
                        settle_doc(Y_OFF).when("|y| ≤ |x|, and r sin z does not pin y"),
                        settle_doc(X_OFF).when("|x| < |y|, and r cos z does not pin x"),
                    ],
                    "y = r sin z, x = r cos z (r = θ)",
                ),
                (true, false) => (vec![settle_doc(Y_OFF)], "y = x tan z"),
                _ => (vec![settle_doc(X_OFF)], "x = y / tan z"),
            };
            RuleDoc {
                thetas,
                checks,
                exact: false,
                summary: summary.into(),
            }
        })
}

/// The smaller coordinate y, given the polar candidate `yc` and the settled larger `x`.
fn y_of_point(
    _: &mut Emitter<'_>,
    _z: Value,
    yc: Value,
    x: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    (yc, move |e: &mut Emitter<'_>, y: Value| {
        e.op2(Opcode::Atan2, y, x)
    })
}

/// The smaller coordinate x, given the polar candidate `xc` and the settled larger `y`.
fn x_of_point(
    _: &mut Emitter<'_>,
    _z: Value,
    xc: Value,
    y: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    (xc, move |e: &mut Emitter<'_>, x: Value| {
        e.op2(Opcode::Atan2, y, x)
    })
}
