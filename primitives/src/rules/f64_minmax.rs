//! `fmin` and `fmax`: which operand is the result, and θ for the other, bounded by it.
//!
//! Remember the NaN rule of the semantics: a NaN operand is ignored, so the other operand of a
//! non-NaN result may be NaN; a NaN result needs both operands NaN.

use super::ops::Ops;
use super::spec::{Side, Spec};
use super::{record_if, unknowns2, Extremum};
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    layer.add(
        Callee::Prim(Opcode::Fmin),
        Spec::from(MinMax(Extremum { min: true })),
    );
    layer.add(
        Callee::Prim(Opcode::Fmax),
        Spec::from(MinMax(Extremum { min: false })),
    );
}

/// `z = min(a, b)` (or max).
/// - both unknown: z NaN: both are NaN; otherwise a choice of which operand is z, and θ for the
///   other with a check that it is not below z (above, for max; NaN allowed) by more than the
///   tolerance (z may carry the rounding of the steps before it);
/// - one known: if z equals it (within the tolerance: z may carry rounding), θ for the other
///   (not below z, within the tolerance); otherwise the other is z, with a check that the known
///   operand is above z (or NaN). The PGF decides "equals" the same way, on the exact values.
///
/// No arithmetic (only the operands given back, ±0 alike), but up to rounding: the other
/// operand may lie beyond z by the tolerance.
#[derive(Clone, Copy, Debug)]
pub struct MinMax(pub(crate) Extremum);

impl MinMax {
    fn other_role(&self) -> String {
        self.operand_role("the other")
    }

    fn operand_role(&self, which: &str) -> String {
        self.0.operand_role(which, "; NaN allowed")
    }

    /// θ for the operand that is not the result: not beyond `z` by more than the tolerance. `z`
    /// may carry the rounding of earlier steps (a settle that pinned it within the tolerance),
    /// so the operand the PGF records (exact, from the forward run) may lie a hair beyond it:
    /// `min(p, p)` one ulp below z, or a known operand near z.
    fn bounded(&self, e: &mut Emitter<'_>, role: &str, z: Value) -> Result<Value, RuleError> {
        // Drawn only from the side of z it may be on, and the tolerance (NaN stays possible):
        // for max, up to z + tol · max(1, |z|).
        let mag = e.fabs(z);
        let one = e.f64(1.0);
        let scale = e.op2(Opcode::Fmax, mag, one);
        let largest = e.f64(f64::MAX);
        let scale = e.op2(Opcode::Fmin, scale, largest);
        let tol = e.f64(e.options().tolerance);
        let slack = e.op2(Opcode::Fmul, tol, scale);
        let edge = if self.0.min {
            e.op2(Opcode::Fsub, z, slack)
        } else {
            e.op2(Opcode::Fadd, z, slack)
        };
        self.0.read_other(e, (z, edge), role, true)
    }

    /// Whether `z` is the known operand `k`: within the tolerance (`z` may carry the rounding
    /// of earlier steps, and the PGF, which sees the exact forward values, decides the same
    /// way), and not NaN (a NaN result needs both operands NaN).
    fn is_known(e: &mut Emitter<'_>, z: Value, k: Value) -> Value {
        let close = e.close(z, k);
        let nan = e.is_nan(z);
        let not_nan = e.bnot(nan);
        e.band(close, not_nan)
    }

    /// The PGF of [`MinMax::solve_one`]: `x` (the `which` operand) if z is the known `k`.
    fn record_one(
        &self,
        e: &mut Emitter<'_>,
        (z, k): (Value, Value),
        x: Value,
        which: &str,
    ) -> Result<(), RuleError> {
        let same = MinMax::is_known(e, z, k);
        record_if(e, same, x, &self.operand_role(which))?;
        let x_is_z = e.bnot(same);
        MinMax::note_held(e, z, x, x_is_z)
    }

    /// Where operand `x` is the result (`x_is_z`), the inverse holds its z for it
    /// ([`Emitter::replayed`]), which the steps before this one solve from (`cos(p)` in
    /// `min(2, cos(p))` or `max(cos(p), q) * 3`).
    fn note_held(e: &mut Emitter<'_>, z: Value, x: Value, x_is_z: Value) -> Result<(), RuleError> {
        let held_z = e.replayed(z);
        if held_z != z {
            let held = e.select(x_is_z, held_z, x)?;
            e.note_replay(x, held);
        }
        Ok(())
    }

    /// The unknown operand when the other is known to be `k`.
    fn solve_one(
        &self,
        e: &mut Emitter<'_>,
        z: Value,
        k: Value,
        role: &str,
    ) -> Result<Value, RuleError> {
        let same = MinMax::is_known(e, z, k);
        // With the known operand near the result, the other may be a hair beyond it (below it,
        // for min) and still give it.
        e.if_value(
            same,
            Type::F64,
            |e| self.bounded(e, role, z),
            |e| {
                // The unknown is z; the known must be beyond it, or NaN (and must be NaN for a
                // NaN z, when the comparison is false).
                let kn = e.is_nan(k);
                let beyond = self.0.beyond(e, z, k); // z < k for min
                let ok = e.bor(beyond, kn);
                e.check(ok, &self.0.known_reason())?;
                Ok(z)
            },
        )
    }

    /// Whether `x` is `z` including the sign of a zero (and not NaN).
    fn is_z(e: &mut Emitter<'_>, x: Value, z: Value) -> Value {
        let eq = e.feq(x, z);
        let sx = e.sign_bit(x);
        let sz = e.sign_bit(z);
        let same_sign = e.op2(Opcode::Beq, sx, sz);
        e.band(eq, same_sign)
    }
}

impl From<MinMax> for Spec {
    fn from(r: MinMax) -> Spec {
        Spec::binary("pick")
            .both(
                move |e, z| {
                    let nan = e.is_nan(z);
                    let ab = e.if_else(
                        nan,
                        &[Type::F64, Type::F64],
                        |_| Ok(vec![z, z]),
                        |e| {
                            let c = e.choice(2, &r.0.which_role())?;
                            let o = r.bounded(e, &r.other_role(), z)?;
                            let (a, b) = r.0.place(e, c, z, o)?;
                            Ok(vec![a, b])
                        },
                    )?;
                    Ok((ab[0], ab[1]))
                },
                move |e, z, a, b| {
                    let nan = e.is_nan(z);
                    e.branch(
                        nan,
                        |_| Ok(()),
                        |e| {
                            let a_is = MinMax::is_z(e, a, z);
                            r.0.record_placed(e, a_is, (a, b), &r.other_role())?;
                            MinMax::note_held(e, z, a, a_is)?;
                            let b_is = e.bnot(a_is);
                            MinMax::note_held(e, z, b, b_is)
                        },
                    )?;
                    Ok(())
                },
            )
            .operand(
                Side::Left,
                move |e, z, b| r.solve_one(e, z, b, &r.operand_role("left")),
                move |e, z, a, b| r.record_one(e, (z, b), a, "left"),
            )
            .operand(
                Side::Right,
                move |e, z, a| r.solve_one(e, z, a, &r.operand_role("right")),
                move |e, z, a, b| r.record_one(e, (z, a), b, "right"),
            )
            .doc(move |pattern| {
                let checks = vec![r.0.other_reason(Type::F64), r.0.known_reason()];
                let (thetas, summary) = match unknowns2(pattern) {
                    (true, true) => (
                        vec![
                            ThetaDoc::choice(2, &r.0.which_role()).when("z is not NaN"),
                            ThetaDoc::value(Domain::Real, &r.other_role()).when("z is not NaN"),
                        ],
                        "one operand is z (choice), the other θ; both NaN for NaN z".to_string(),
                    ),
                    (true, false) => (
                        vec![ThetaDoc::value(Domain::Real, &r.operand_role("left")).when("z = b")],
                        "a = θ if z = b, else a = z".to_string(),
                    ),
                    _ => (
                        vec![ThetaDoc::value(Domain::Real, &r.operand_role("right")).when("z = a")],
                        "b = θ if z = a, else b = z".to_string(),
                    ),
                };
                RuleDoc {
                    thetas,
                    checks,
                    // The other operand may be a hair beyond z (z may carry earlier rounding): with one
                    // operand known, "z is that operand" is decided within the tolerance; with both
                    // unknown, θ's range reaches the tolerance beyond z.
                    exact: false,
                    summary,
                }
            })
    }
}
