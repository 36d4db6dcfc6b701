//! f64 arithmetic: `fadd fsub fmul fdiv frem fneg`. (This module is the model the other rule
//! families follow.)
//!
//! Each binary rule solves the one-unknown patterns in closed form and [settles](super::settle)
//! the result, so that operands the output pins only loosely (an operand absorbed by a much
//! larger one, a zero factor, an infinite or NaN output) are still reached, through an offset θ.
//! With both operands unknown, θ gives one operand and the other is solved as above. Every
//! solution ends with [`verify_forward`].

use super::ops::Ops;
use super::settle::{
    settle, settle_doc, settle_guarded, settle_pgf, settle_pgf_guarded, small_multiple,
};
use super::{binary, binary_pgf, covers_unknown, unary, unary_pgf, unknowns2, verify_forward};
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::pattern::{Arg, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    layer.add(Callee::Prim(Opcode::Fadd), Fadd);
    layer.add(Callee::Prim(Opcode::Fsub), Fsub);
    layer.add(Callee::Prim(Opcode::Fmul), Fmul);
    layer.add(Callee::Prim(Opcode::Fdiv), Fdiv);
    layer.add(Callee::Prim(Opcode::Frem), Frem);
    layer.add(Callee::Prim(Opcode::Fneg), Fneg);
}

fn doc(thetas: Vec<ThetaDoc>, checks: &[&str], summary: &str) -> RuleDoc {
    RuleDoc {
        thetas,
        checks: checks.iter().map(|c| c.to_string()).collect(),
        exact: false,
        summary: summary.to_string(),
    }
}

fn uncovered(args: &[Arg]) -> RuleError {
    RuleError::Uncovered(Pattern::of(args))
}

// ---------------------------------------------------------------------------------------------
// fadd

const FADD_A: &str = "left operand: offset from z − b";
const FADD_B: &str = "right operand: offset from z − a";

/// `z = a + b`: with both unknown, θ is the right operand and `a = z − b`; with one known, the
/// other is `z − known`, settled (an offset θ where the known operand absorbs the unknown one, or
/// z is not finite). Exact only up to rounding, so every solution is checked.
#[derive(Debug)]
pub struct Fadd;

fn fadd_a(
    e: &mut Emitter<'_>,
    z: Value,
    b: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fsub(z, b);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fadd(x, b))
}

fn fadd_b(
    e: &mut Emitter<'_>,
    z: Value,
    a: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fsub(z, a);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fadd(a, x))
}

impl InverseRule for Fadd {
    fn name(&self) -> &str {
        "sub"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 2)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let checks = ["a + b = z (θ too large for z loses precision)"];
        match unknowns2(pattern) {
            (true, true) => doc(
                vec![
                    ThetaDoc::value(Domain::Real, "right operand"),
                    settle_doc(FADD_A),
                ],
                &checks,
                "b = θ, a = z − b",
            ),
            (true, false) => doc(vec![settle_doc(FADD_A)], &checks, "a = z − b"),
            _ => doc(vec![settle_doc(FADD_B)], &checks, "b = z − a"),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a, b) = binary(outputs, args)?;
        let (a, b) = match (a, b) {
            (Arg::Unknown, Arg::Unknown) => {
                let b = e.theta(Domain::Real, "right operand")?;
                let (d, f) = fadd_a(e, z, b);
                (settle(e, d, z, &f, FADD_A)?, b)
            }
            (Arg::Unknown, Arg::Known(b)) => {
                let (d, f) = fadd_a(e, z, b);
                (settle(e, d, z, &f, FADD_A)?, b)
            }
            (Arg::Known(a), Arg::Unknown) => {
                let (d, f) = fadd_b(e, z, a);
                (a, settle(e, d, z, &f, FADD_B)?)
            }
            _ => return Err(uncovered(args)),
        };
        verify_forward(e, Opcode::Fadd, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        settle_binary_pgf(
            e,
            (outputs, args, pattern),
            "right operand",
            (fadd_a, FADD_A),
            (fadd_b, FADD_B),
        )
    }
}

/// The PGF of a binary rule that reads the right operand from θ when both operands are unknown
/// and settles the other one: `solve_a(z, b)` and `solve_b(z, a)` give each operand's candidate
/// and its forward function, `role_*` the roles of their settle offsets (fadd, fsub, fdiv).
fn settle_binary_pgf<A, FA, B, FB>(
    e: &mut Emitter<'_>,
    (outputs, args, pattern): (&[Value], &[Value], &Pattern),
    right_role: &str,
    (solve_a, role_a): (A, &str),
    (solve_b, role_b): (B, &str),
) -> Result<(), RuleError>
where
    A: Fn(&mut Emitter<'_>, Value, Value) -> (Value, FA),
    FA: Fn(&mut Emitter<'_>, Value) -> Value,
    B: Fn(&mut Emitter<'_>, Value, Value) -> (Value, FB),
    FB: Fn(&mut Emitter<'_>, Value) -> Value,
{
    let (z, a, b) = binary_pgf(outputs, args)?;
    match unknowns2(pattern) {
        (true, right) => {
            if right {
                e.record(b, right_role)?;
            }
            let (d, f) = solve_a(e, z, b);
            settle_pgf(e, d, z, a, &f, role_a)
        }
        (false, true) => {
            let (d, f) = solve_b(e, z, a);
            settle_pgf(e, d, z, b, &f, role_b)
        }
        (false, false) => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// fsub

const FSUB_A: &str = "left operand: offset from z + b";
const FSUB_B: &str = "right operand: offset from a − z";

/// `z = a − b`: with both unknown, θ is the right operand and `a = z + b`; with one known,
/// `a = z + b` or `b = a − z`, settled.
#[derive(Debug)]
pub struct Fsub;

fn fsub_a(
    e: &mut Emitter<'_>,
    z: Value,
    b: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fadd(z, b);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fsub(x, b))
}

fn fsub_b(
    e: &mut Emitter<'_>,
    z: Value,
    a: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fsub(a, z);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fsub(a, x))
}

impl InverseRule for Fsub {
    fn name(&self) -> &str {
        "add"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 2)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let checks = ["a − b = z (θ too large for z loses precision)"];
        match unknowns2(pattern) {
            (true, true) => doc(
                vec![
                    ThetaDoc::value(Domain::Real, "right operand"),
                    settle_doc(FSUB_A),
                ],
                &checks,
                "b = θ, a = z + b",
            ),
            (true, false) => doc(vec![settle_doc(FSUB_A)], &checks, "a = z + b"),
            _ => doc(vec![settle_doc(FSUB_B)], &checks, "b = a − z"),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a, b) = binary(outputs, args)?;
        let (a, b) = match (a, b) {
            (Arg::Unknown, Arg::Unknown) => {
                let b = e.theta(Domain::Real, "right operand")?;
                let (d, f) = fsub_a(e, z, b);
                (settle(e, d, z, &f, FSUB_A)?, b)
            }
            (Arg::Unknown, Arg::Known(b)) => {
                let (d, f) = fsub_a(e, z, b);
                (settle(e, d, z, &f, FSUB_A)?, b)
            }
            (Arg::Known(a), Arg::Unknown) => {
                let (d, f) = fsub_b(e, z, a);
                (a, settle(e, d, z, &f, FSUB_B)?)
            }
            _ => return Err(uncovered(args)),
        };
        verify_forward(e, Opcode::Fsub, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        settle_binary_pgf(
            e,
            (outputs, args, pattern),
            "right operand",
            (fsub_a, FSUB_A),
            (fsub_b, FSUB_B),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// fmul

const FMUL_A: &str = "left operand: offset from z / b";
const FMUL_B: &str = "right operand: offset from z / a";
const FMUL_ZERO: &str = "the zero factor: offset from z / (other factor)";

/// `z = a * b`. One known: the other is `z / known`, settled (a known factor of 0, an underflow
/// to 0 or an overflow to ±inf read the offset θ). Both unknown (INVERSION-EXAMPLES §1):
/// - z ≠ 0: θ nonzero real for `a` (any real when z is NaN), `b = z / a`;
/// - z = 0: a choice of which factor is (the) 0 and θ real for the other, the zero factor
///   `z / other` (signed like z).
#[derive(Debug)]
pub struct Fmul;

fn over(
    e: &mut Emitter<'_>,
    z: Value,
    known: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fdiv(z, known);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fmul(x, known))
}

impl InverseRule for Fmul {
    fn name(&self) -> &str {
        "div"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 2)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let checks = ["a · b = z (a θ of 0 on the z ≠ 0 path, or too large, fails)"];
        match unknowns2(pattern) {
            (true, true) => doc(
                vec![
                    ThetaDoc::choice(2, "which factor is 0 (0: a, 1: b)").when("z = 0"),
                    ThetaDoc::value(Domain::Real, "the other factor").when("z = 0"),
                    settle_doc(FMUL_ZERO).when("z = 0, and z / other does not pin it"),
                    ThetaDoc::value(Domain::NonzeroReal, "left operand").when("z ≠ 0, not NaN"),
                    ThetaDoc::value(Domain::Real, "left operand").when("z is NaN"),
                    settle_doc(FMUL_B).when("z ≠ 0, and z / a does not pin b"),
                ],
                &checks,
                "z ≠ 0: a = θ, b = z / a; z = 0: one factor 0 (choice), the other θ",
            ),
            (true, false) => doc(vec![settle_doc(FMUL_A)], &checks, "a = z / b"),
            _ => doc(vec![settle_doc(FMUL_B)], &checks, "b = z / a"),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a, b) = binary(outputs, args)?;
        let (a, b) = match (a, b) {
            (Arg::Unknown, Arg::Unknown) => {
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
                        let nan = e.is_nan(z);
                        let a = e.if_else(
                            nan,
                            &[Type::F64],
                            |e| Ok(vec![e.theta(Domain::Real, "left operand")?]),
                            |e| {
                                Ok(vec![e.theta_for_operand(
                                    0,
                                    Domain::NonzeroReal,
                                    "left operand",
                                )?])
                            },
                        )?[0];
                        let (d, f) = over(e, z, a);
                        let b = settle(e, d, z, &f, FMUL_B)?;
                        Ok(vec![a, b])
                    },
                )?;
                (ab[0], ab[1])
            }
            (Arg::Unknown, Arg::Known(b)) => {
                let (d, f) = over(e, z, b);
                (settle(e, d, z, &f, FMUL_A)?, b)
            }
            (Arg::Known(a), Arg::Unknown) => {
                let (d, f) = over(e, z, a);
                (a, settle(e, d, z, &f, FMUL_B)?)
            }
            _ => return Err(uncovered(args)),
        };
        verify_forward(e, Opcode::Fmul, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let (z, a, b) = binary_pgf(outputs, args)?;
        match unknowns2(pattern) {
            (true, true) => {
                let zero = e.fc(0.0);
                let is_zero = e.feq(z, zero);
                e.if_else(
                    is_zero,
                    &[],
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
                        Ok(vec![])
                    },
                    |e| {
                        e.record(a, "left operand")?;
                        let (d, f) = over(e, z, a);
                        settle_pgf(e, d, z, b, &f, FMUL_B)?;
                        Ok(vec![])
                    },
                )?;
                Ok(())
            }
            (true, false) => {
                let (d, f) = over(e, z, b);
                settle_pgf(e, d, z, a, &f, FMUL_A)
            }
            (false, true) => {
                let (d, f) = over(e, z, a);
                settle_pgf(e, d, z, b, &f, FMUL_B)
            }
            (false, false) => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// fdiv

const FDIV_A: &str = "dividend: offset from z · b";
const FDIV_B: &str = "divisor: offset from a / z";

/// `z = a / b`: `a = z · b` or `b = a / z`, settled; both unknown, θ is the divisor (nonzero when
/// z is finite, since only ±inf and NaN come from dividing by 0) and `a = z · b`.
#[derive(Debug)]
pub struct Fdiv;

fn fdiv_a(
    e: &mut Emitter<'_>,
    z: Value,
    b: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fmul(z, b);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fdiv(x, b))
}

fn fdiv_b(
    e: &mut Emitter<'_>,
    z: Value,
    a: Value,
) -> (Value, impl Fn(&mut Emitter<'_>, Value) -> Value) {
    let d = e.fdiv(a, z);
    (d, move |e: &mut Emitter<'_>, x: Value| e.fdiv(a, x))
}

impl InverseRule for Fdiv {
    fn name(&self) -> &str {
        "mul"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 2)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let checks = ["a / b = z (a θ divisor that is too large or small fails)"];
        match unknowns2(pattern) {
            (true, true) => doc(
                vec![
                    ThetaDoc::value(Domain::NonzeroReal, "divisor").when("z is finite"),
                    ThetaDoc::value(Domain::Real, "divisor").when("z is ±inf or NaN"),
                    settle_doc(FDIV_A),
                ],
                &checks,
                "b = θ, a = z · b",
            ),
            (true, false) => doc(vec![settle_doc(FDIV_A)], &checks, "a = z · b"),
            _ => doc(vec![settle_doc(FDIV_B)], &checks, "b = a / z"),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a, b) = binary(outputs, args)?;
        let (a, b) = match (a, b) {
            (Arg::Unknown, b) => {
                let b = match b {
                    Arg::Known(b) => b,
                    Arg::Unknown => {
                        let finite = e.is_finite(z);
                        e.if_else(
                            finite,
                            &[Type::F64],
                            |e| {
                                Ok(vec![e.theta_for_operand(
                                    1,
                                    Domain::NonzeroReal,
                                    "divisor",
                                )?])
                            },
                            |e| Ok(vec![e.theta(Domain::Real, "divisor")?]),
                        )?[0]
                    }
                };
                let (d, f) = fdiv_a(e, z, b);
                (settle(e, d, z, &f, FDIV_A)?, b)
            }
            (Arg::Known(a), Arg::Unknown) => {
                let (d, f) = fdiv_b(e, z, a);
                (a, settle(e, d, z, &f, FDIV_B)?)
            }
            _ => return Err(uncovered(args)),
        };
        verify_forward(e, Opcode::Fdiv, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        settle_binary_pgf(
            e,
            (outputs, args, pattern),
            "divisor",
            (fdiv_a, FDIV_A),
            (fdiv_b, FDIV_B),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// frem

const FREM_A: &str = "dividend: offset from z ± k·|b|";
const FREM_K: &str = "whole multiples of |b| from z to a";
const FREM_Q: &str = "quotient trunc(a / b)";
const FREM_B: &str = "divisor: offset from (a − z) / q";
const FREM_FREE: &str = "divisor (|b| > |a| when z = a)";

/// `z = a % b` (truncated: `a = trunc(a/b)·b + z`, z has the sign of a, |z| < |b|).
/// - b known: `a = z ± k·|b|` with θ `k ≥ 0` (away from 0 on z's side, as the sign rule
///   requires), settled;
/// - a known: when `z = a` (or NaN), θ is the divisor itself (any with |b| > |a|); otherwise θ is
///   the integer quotient `q ≠ 0` and `b = (a − z) / q`, settled;
/// - both unknown: θ is the divisor (nonzero unless z is NaN), then as with b known.
#[derive(Debug)]
pub struct Frem;

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

impl Frem {
    fn solve_a(e: &mut Emitter<'_>, z: Value, b: Value) -> Result<Value, RuleError> {
        // |z| < |b| unless something is NaN.
        let az = e.fabs(z);
        let ab = e.fabs(b);
        let too_big = e.fge(az, ab);
        let ok = e.bnot(too_big);
        e.check(ok, "a remainder is smaller than the divisor in magnitude")?;
        let k = e.theta(
            Domain::IntRange {
                lo: 0,
                hi: i64::MAX,
            },
            FREM_K,
        )?;
        let (d, f) = frem_a(e, z, b, k)?;
        let trusted = small_multiple(e, k);
        settle_guarded(e, d, z, &f, FREM_A, Some(trusted))
    }

    fn pgf_a(e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
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
}

impl InverseRule for Frem {
    fn name(&self) -> &str {
        "multiple"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 2)
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let checks = [
            "a remainder is smaller than the divisor in magnitude",
            "a % b = z",
        ];
        let k = ThetaDoc::value(
            Domain::IntRange {
                lo: 0,
                hi: i64::MAX,
            },
            FREM_K,
        );
        match unknowns2(pattern) {
            (true, true) => doc(
                vec![
                    ThetaDoc::value(Domain::NonzeroReal, "divisor").when("z is not NaN"),
                    ThetaDoc::value(Domain::Real, "divisor").when("z is NaN"),
                    k,
                    settle_doc(FREM_A),
                ],
                &checks,
                "b = θ, a = z ± k·|b| (k = θ ≥ 0, away from 0 on z's side)",
            ),
            (true, false) => doc(
                vec![k, settle_doc(FREM_A)],
                &checks,
                "a = z ± k·|b| (k = θ ≥ 0, away from 0 on z's side)",
            ),
            _ => doc(
                vec![
                    ThetaDoc::value(Domain::Real, FREM_FREE).when("z = a or z is NaN"),
                    ThetaDoc::value(Domain::Int, FREM_Q).when("z ≠ a"),
                    settle_doc(FREM_B).when("z ≠ a"),
                ],
                &["a % b = z"],
                "z = a: b = θ (|b| > |a|); else b = (a − z) / q, q = θ",
            ),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a, b) = binary(outputs, args)?;
        let (a, b) = match (a, b) {
            (Arg::Unknown, b) => {
                let b = match b {
                    Arg::Known(b) => b,
                    Arg::Unknown => {
                        let nan = e.is_nan(z);
                        e.if_else(
                            nan,
                            &[Type::F64],
                            |e| Ok(vec![e.theta(Domain::Real, "divisor")?]),
                            |e| {
                                Ok(vec![e.theta_for_operand(
                                    1,
                                    Domain::NonzeroReal,
                                    "divisor",
                                )?])
                            },
                        )?[0]
                    }
                };
                (Frem::solve_a(e, z, b)?, b)
            }
            (Arg::Known(a), Arg::Unknown) => {
                let free = Frem::divisor_free(e, z, a);
                let b = e.if_else(
                    free,
                    &[Type::F64],
                    |e| Ok(vec![e.theta(Domain::Real, FREM_FREE)?]),
                    |e| {
                        let q = e.theta(Domain::Int, FREM_Q)?;
                        let (d, f) = frem_b(e, z, a, q);
                        let trusted = small_multiple(e, q);
                        Ok(vec![settle_guarded(e, d, z, &f, FREM_B, Some(trusted))?])
                    },
                )?[0];
                (a, b)
            }
            _ => return Err(uncovered(args)),
        };
        verify_forward(e, Opcode::Frem, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let (z, a, b) = binary_pgf(outputs, args)?;
        match unknowns2(pattern) {
            (true, right) => {
                if right {
                    e.record(b, "divisor")?;
                }
                Frem::pgf_a(e, z, a, b)
            }
            (false, true) => {
                let free = Frem::divisor_free(e, z, a);
                e.if_else(
                    free,
                    &[],
                    |e| {
                        e.record(b, FREM_FREE)?;
                        Ok(vec![])
                    },
                    |e| {
                        let num = e.fsub(a, z);
                        let q = e.fdiv(num, b);
                        let q = e.round_to_i64(q);
                        e.record(q, FREM_Q)?;
                        let (d, f) = frem_b(e, z, a, q);
                        let trusted = small_multiple(e, q);
                        settle_pgf_guarded(e, d, z, b, &f, FREM_B, Some(trusted))?;
                        Ok(vec![])
                    },
                )?;
                Ok(())
            }
            (false, false) => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// fneg

/// `z = −a`: `a = −z`, exactly (the sign bit flips back, also of zeros and NaNs).
#[derive(Debug)]
pub struct Fneg;

impl InverseRule for Fneg {
    fn name(&self) -> &str {
        "neg"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        covers_unknown(pattern, 1)
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: Vec::new(),
            checks: Vec::new(),
            exact: true,
            summary: "a = −z".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (z, a) = unary(outputs, args)?;
        if a != Arg::Unknown {
            return Err(uncovered(args));
        }
        Ok(vec![e.fneg(z)])
    }

    fn emit_pgf(
        &self,
        _: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        _: &Pattern,
    ) -> Result<(), RuleError> {
        unary_pgf(outputs, args)?;
        Ok(())
    }
}
