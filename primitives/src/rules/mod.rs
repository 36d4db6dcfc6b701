//! The standard rules, one module per family of primitives.
//!
//! Every opcode of `pinv_core::ir::Opcode::ALL` has rules covering every pattern with at least
//! one unknown operand; the all-known pattern (every operand already solved, as after fan-out)
//! is covered for every opcode by [`consistency::consistency`], which checks that the forward
//! value matches. `catalogue` tests that nothing is missing.
//!
//! | module | opcodes | θ |
//! |---|---|---|
//! | [`f64_arith`] | `fadd fsub fmul fdiv frem fneg` | one operand when both are unknown; zero factor choice; integer multiples for `frem` |
//! | [`f64_elem`] | `exp log sqrt sinh cosh tanh fabs floor pow` | sign choices (`cosh fabs`, even powers), a fraction in [0, 1) (`floor`), a free base for `x^0` |
//! | [`f64_trig`] | `sin cos tan asin acos atan atan2` | branch choice and whole periods; radius (`atan2`) |
//! | [`f64_minmax`] | `fmin fmax` | which operand is the result, the other bounded by it |
//! | [`compare`] | `feq … fge`, `ieq … ige` | a witness: one operand, and a gap to the other |
//! | [`i64_arith`] | `iadd isub imul idiv irem ineg iabs imin imax` | high bits (even multipliers), remainders, quotients, divisor ranges, sign |
//! | [`i64_bits`] | `iand ior ixor inot ishl ishr` | bits the operation forgets; shift counts |
//! | [`bool`](mod@bool) | `band bor bxor beq bne bnot` | a choice among the operand pairs of the truth table |
//! | [`convert`] | `fcvt_to_i64 fcvt_from_i64 bool_to_i64` | fraction, saturation ends and NaN; the i64s that round alike |
//!
//! f64 solutions go through [`settle`], which adds an offset θ exactly where the closed form does
//! not pin the operand (so every f64 preimage is reachable, within the tolerance), and end with
//! [`verify_forward`], a step check ([`Emitter::check_step`]) that an inverse ending in its own
//! `f(x) = y` check drops where no dispatch guard decides by it. i64 and bool rules are exact, and
//! check what θ can get wrong (overflow, divisibility, a zero divisor) before any operation that
//! could trap; those checks always stay.
//!
//! Shared machinery: [`ops`] (shorthand instructions), [`settle`] (how f64 rules turn a closed
//! form into a complete solution), and [`verify_forward`] (the final guard of f64 rules).

pub mod bool;
pub mod compare;
pub mod consistency;
pub mod convert;
pub mod exact;
pub mod f64_arith;
pub mod f64_elem;
pub mod f64_minmax;
pub mod f64_trig;
pub mod i64_arith;
pub mod i64_bits;
pub mod ops;
pub mod settle;
pub mod spec;

use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::pattern::{Arg, Pattern};
use crate::rule::RuleError;
use pinv_core::ir::{Opcode, Type, Value};

/// Builds the standard layer.
pub fn standard_rules() -> Layer {
    let mut layer = Layer::new("standard");
    f64_arith::register(&mut layer);
    f64_elem::register(&mut layer);
    f64_trig::register(&mut layer);
    f64_minmax::register(&mut layer);
    compare::register(&mut layer);
    i64_arith::register(&mut layer);
    i64_bits::register(&mut layer);
    bool::register(&mut layer);
    convert::register(&mut layer);
    for &op in Opcode::ALL {
        layer.add(Callee::Prim(op), consistency::consistency(op));
    }
    layer
}

/// Checks that `op(args)` is `z` (within tolerance for f64): the final guard of every rule whose
/// solution is exact only up to rounding, so that a θ that loses precision is a domain error and
/// never a wrong answer. It is a step check ([`Emitter::check_step`]): an inverse that checks
/// `f(x) = y` at its end keeps it only where a dispatch guard decides by it.
///
/// "Within tolerance" is the project's `|a − b| ≤ tol · max(1, |b|)`: for outputs below 1 in
/// magnitude it is an absolute 1e-9, so a tiny output (say 1e-300) is matched by 0. That is sound
/// by the definition, but a caller that chains many steps through tiny intermediate values may
/// want a stricter [`crate::EmitOptions::tolerance`].
pub fn verify_forward(
    e: &mut Emitter<'_>,
    op: Opcode,
    args: &[Value],
    z: Value,
) -> Result<(), RuleError> {
    if !e.writes_step_checks() {
        return Ok(());
    }
    let again = e.prim(op, args);
    e.check_step_equal(
        again,
        z,
        &format!("θ loses precision: {op} of the solution is not the output"),
    )
}

/// The integer nearest `z` as an f64 (ties up); every f64 from 2^52 up is an integer and
/// stays, and so do ±inf and NaN.
pub(crate) fn nearest_integer(e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
    use ops::Ops;
    let f = e.floor(z);
    let frac = e.fsub(z, f);
    let half = e.fc(0.5);
    let up = e.fge(frac, half);
    let one = e.fc(1.0);
    let f1 = e.fadd(f, one);
    e.select(up, f1, f)
}

/// The output and the operands of a binary rule.
pub(crate) fn binary(outputs: &[Value], args: &[Arg]) -> Result<(Value, Arg, Arg), RuleError> {
    match (outputs, args) {
        (&[z], &[a, b]) => Ok((z, a, b)),
        _ => Err(RuleError::Malformed(format!(
            "a binary rule was given {} outputs and {} operands",
            outputs.len(),
            args.len()
        ))),
    }
}

/// The output and the operand values of a binary rule's PGF.
pub(crate) fn binary_pgf(
    outputs: &[Value],
    args: &[Value],
) -> Result<(Value, Value, Value), RuleError> {
    match (outputs, args) {
        (&[z], &[a, b]) => Ok((z, a, b)),
        _ => Err(RuleError::Malformed(
            "a binary PGF needs one output and two operands".into(),
        )),
    }
}

/// `min` (`min` true) or `max`, with what the rules of both types say of it in roles and checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extremum {
    pub min: bool,
}

impl Extremum {
    /// `fmin`/`fmax` or `imin`/`imax`.
    pub fn op(self, ty: Type) -> Opcode {
        match (self.min, ty) {
            (true, Type::F64) => Opcode::Fmin,
            (false, Type::F64) => Opcode::Fmax,
            (true, _) => Opcode::Imin,
            (false, _) => Opcode::Imax,
        }
    }

    /// "minimum" or "maximum".
    pub fn word(self) -> &'static str {
        if self.min {
            "minimum"
        } else {
            "maximum"
        }
    }

    /// The role of the choice of which operand is the result.
    pub fn which_role(self) -> String {
        format!("which operand is the {} (0: a, 1: b)", self.word())
    }

    /// The role of the operand that is not the result (`which`: "left", "the other", ...);
    /// `extra` ends the parenthesis.
    pub fn operand_role(self, which: &str, extra: &str) -> String {
        format!(
            "{which} operand (not {} the {}{extra})",
            self.wrong_side(),
            self.word()
        )
    }

    /// The range of the operand that is not the result, from `edge` (the result, or a little
    /// past it) away to the end of its type: `[edge, +∞]` for min.
    pub fn range_from(self, e: &mut Emitter<'_>, edge: Value) -> (Value, Value) {
        use ops::Ops;
        let far = match (self.min, e.value_type(edge)) {
            (true, Type::F64) => e.fc(f64::INFINITY),
            (false, Type::F64) => e.fc(f64::NEG_INFINITY),
            (true, _) => e.ic(i64::MAX),
            (false, _) => e.ic(i64::MIN),
        };
        if self.min {
            (edge, far)
        } else {
            (far, edge)
        }
    }

    /// θ for the operand that is not the result `z`, drawn from `edge` away ([`Extremum::range_from`])
    /// and checked not to be beyond z, or (`tolerant`) not beyond it by more than the tolerance.
    pub fn read_other(
        self,
        e: &mut Emitter<'_>,
        (z, edge): (Value, Value),
        role: &str,
        tolerant: bool,
    ) -> Result<Value, RuleError> {
        use ops::Ops;
        let ty = e.value_type(z);
        let (lo, hi) = self.range_from(e, edge);
        let o = e.theta_within(pinv_core::ir::Domain::all(ty), lo, hi, role)?;
        let mut bad = self.beyond(e, o, z);
        if tolerant {
            let near = e.close(o, z);
            let far = e.bnot(near);
            bad = e.band(bad, far);
        }
        let ok = e.bnot(bad);
        e.check(ok, &self.other_reason(ty))?;
        Ok(o)
    }

    /// Why a θ for the operand that is not the result is wrong: it is beyond the result.
    pub fn other_reason(self, ty: Type) -> String {
        format!(
            "the other operand of {} is {} it",
            self.op(ty),
            self.wrong_side()
        )
    }

    /// Why a known operand that is not the result is wrong: the result is beyond it.
    pub fn known_reason(self) -> String {
        format!(
            "the {} is {} the known operand",
            self.word(),
            self.other_side()
        )
    }

    /// Where the other operand may not lie from the result: "below" the minimum.
    pub fn wrong_side(self) -> &'static str {
        if self.min {
            "below"
        } else {
            "above"
        }
    }

    /// Where the result lies from a known operand that is not it: "above" for the minimum.
    pub fn other_side(self) -> &'static str {
        if self.min {
            "above"
        } else {
            "below"
        }
    }

    /// The operands when both are unknown: `c` (a choice) says which one is z (0: a), and the
    /// other is `o`.
    pub fn place(
        self,
        e: &mut Emitter<'_>,
        c: Value,
        z: Value,
        o: Value,
    ) -> Result<(Value, Value), RuleError> {
        use ops::Ops;
        let zero = e.ic(0);
        let a_is = e.ieq(c, zero);
        let a = e.select(a_is, z, o)?;
        let b = e.select(a_is, o, z)?;
        Ok((a, b))
    }

    /// The PGF of [`Extremum::place`]: records whether `a` is z (`a_is`) and the other operand.
    pub fn record_placed(
        self,
        e: &mut Emitter<'_>,
        a_is: Value,
        (a, b): (Value, Value),
        other_role: &str,
    ) -> Result<(), RuleError> {
        use ops::Ops;
        let zero = e.ic(0);
        let one = e.ic(1);
        let c = e.select(a_is, zero, one)?;
        e.record(c, &self.which_role())?;
        let o = e.select(a_is, b, a)?;
        e.record(o, other_role)
    }

    /// Whether `o` is on the wrong side of `z` (`o < z` for min), in their type.
    pub fn beyond(self, e: &mut Emitter<'_>, o: Value, z: Value) -> Value {
        let (lt, gt) = match e.value_type(o) {
            Type::F64 => (Opcode::Flt, Opcode::Fgt),
            _ => (Opcode::Ilt, Opcode::Igt),
        };
        e.prim(if self.min { lt } else { gt }, &[o, z])
    }
}

/// Records `v` if `cond`.
pub(crate) fn record_if(
    e: &mut Emitter<'_>,
    cond: Value,
    v: Value,
    role: &str,
) -> Result<(), RuleError> {
    e.branch(cond, |e| e.record(v, role), |_| Ok(()))
}

/// Which operands are unknown, for a binary pattern: (left unknown, right unknown).
pub(crate) fn unknowns2(pattern: &Pattern) -> (bool, bool) {
    (!pattern.is_known(0), !pattern.is_known(1))
}

/// Covers every pattern of `arity` operands with at least one unknown.
pub(crate) fn covers_unknown(pattern: &Pattern, arity: usize) -> bool {
    pattern.arity() == arity && pattern.unknowns() >= 1
}
