//! i64 bitwise operations: `iand ior ixor inot ishl ishr`. Everything is exact.
//!
//! - `x & c`: z must be a subset of c; the bits of x outside c are θ. Both unknown: the bits of a
//!   outside z are θ, then b as with a known.
//! - `x | c`: c must be a subset of z; the bits of x inside c are θ. Both unknown: a ⊆ z is θ,
//!   then b as with a known.
//! - `x ^ c`, `!x`: bijections. Both unknown: θ is b.
//! - `x << k` (count mod 64): z's low k bits must be 0; x's high k bits are θ. `x >> k`
//!   (arithmetic): z's top k+1 bits must agree; x's low k bits are θ. A known value with an
//!   unknown count: the count mod 64 follows from the trailing zeros (`<<`) or redundant sign bits
//!   (`>>`) of z and x, or is θ where those say nothing (z = 0, or −1 for `>>`), and the count
//!   beyond 64 is θ.
//! - Both unknown for shifts: θ is the count, then as with the count known.
//!
//! A θ that would be ignored (all bits fixed, a zero shift) is not read.

use super::ops::Ops;
use super::spec::{rows, Side, Spec};
use super::{record_if, unknowns2};
use crate::emit::Emitter;
use crate::overlay::Layer;
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    rows! { layer;
        Iand => Spec::from(Bits { or: false });
        Ior => Spec::from(Bits { or: true });
        Ixor => Spec::each_from_other("xor", (|e, z, b| e.ixor(z, b), "a = z ^ b"), (|e, z, a| e.ixor(z, a), "b = z ^ a"));
        Inot => Spec::bijection("not", |e, z| e.inot(z), "a = !z");
        Ishl => Spec::from(Shift { left: true });
        Ishr => Spec::from(Shift { left: false });
    }
}

fn exact_doc(thetas: Vec<ThetaDoc>, checks: &[&str], summary: &str) -> RuleDoc {
    RuleDoc {
        thetas,
        checks: checks.iter().map(|c| c.to_string()).collect(),
        exact: true,
        summary: summary.to_string(),
    }
}

/// Reads θ and returns `f(θ)` if `cond`, else `otherwise`.
fn theta_if(
    e: &mut Emitter<'_>,
    cond: Value,
    role: &str,
    f: impl FnOnce(&mut Emitter<'_>, Value) -> Value,
    otherwise: Value,
) -> Result<Value, RuleError> {
    e.if_value(
        cond,
        Type::I64,
        |e| {
            let t = e.theta(Domain::Int, role)?;
            Ok(f(e, t))
        },
        |_| Ok(otherwise),
    )
}

// ---------------------------------------------------------------------------------------------
// iand, ior

/// `z = a & b` or `z = a | b`. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct Bits {
    pub or: bool,
}

impl Bits {
    fn free_role(&self) -> &'static str {
        if self.or {
            "bits of the operand inside the known one"
        } else {
            "bits of the operand outside the known one"
        }
    }

    fn first_role(&self) -> &'static str {
        if self.or {
            "left operand (only its bits inside z are used)"
        } else {
            "bits of the left operand outside z"
        }
    }

    fn reason(&self) -> &'static str {
        if self.or {
            "the known operand has bits that z lacks"
        } else {
            "z has bits outside the known operand"
        }
    }

    /// Whether bits of the unknown are free given the known `c` (c ≠ 0 for or, c ≠ −1 for and).
    fn has_free(&self, e: &mut Emitter<'_>, c: Value) -> Value {
        let fixed = e.ic(if self.or { 0 } else { -1 });
        e.ine(c, fixed)
    }

    /// The unknown operand given the known `c`.
    fn solve(&self, e: &mut Emitter<'_>, z: Value, c: Value) -> Result<Value, RuleError> {
        let zero = e.ic(0);
        let outside = if self.or {
            let nz = e.inot(z);
            e.iand(c, nz)
        } else {
            let nc = e.inot(c);
            e.iand(z, nc)
        };
        let ok = e.ieq(outside, zero);
        e.check(ok, self.reason())?;
        let nc = e.inot(c);
        let base = if self.or { e.iand(z, nc) } else { z };
        let free = self.has_free(e, c);
        let or = self.or;
        theta_if(
            e,
            free,
            self.free_role(),
            move |e, t| {
                let bits = if or { e.iand(t, c) } else { e.iand(t, nc) };
                e.ior(base, bits)
            },
            base,
        )
    }

    fn pgf(&self, e: &mut Emitter<'_>, x: Value, c: Value) -> Result<(), RuleError> {
        let free = self.has_free(e, c);
        let bits = if self.or {
            e.iand(x, c)
        } else {
            let nc = e.inot(c);
            e.iand(x, nc)
        };
        record_if(e, free, bits, self.free_role())
    }

    /// Both unknown: a first (and: z ⊆ a; or: a ⊆ z).
    fn first(&self, e: &mut Emitter<'_>, z: Value) -> Result<Value, RuleError> {
        let free = self.has_free(e, z);
        let or = self.or;
        theta_if(
            e,
            free,
            self.first_role(),
            move |e, t| {
                if or {
                    e.iand(t, z)
                } else {
                    let nz = e.inot(z);
                    let bits = e.iand(t, nz);
                    e.ior(z, bits)
                }
            },
            z,
        )
    }

    fn first_pgf(&self, e: &mut Emitter<'_>, z: Value, a: Value) -> Result<(), RuleError> {
        let free = self.has_free(e, z);
        let bits = if self.or {
            a
        } else {
            let nz = e.inot(z);
            e.iand(a, nz)
        };
        record_if(e, free, bits, self.first_role())
    }
}

impl From<Bits> for Spec {
    fn from(r: Bits) -> Spec {
        Spec::binary("mask")
            .both(
                move |e, z| {
                    let a = r.first(e, z)?;
                    Ok((a, r.solve(e, z, a)?))
                },
                move |e, z, a, b| {
                    r.first_pgf(e, z, a)?;
                    r.pgf(e, b, a)
                },
            )
            .operand(
                Side::Left,
                move |e, z, b| r.solve(e, z, b),
                move |e, _, a, b| r.pgf(e, a, b),
            )
            .operand(
                Side::Right,
                move |e, z, a| r.solve(e, z, a),
                move |e, _, a, b| r.pgf(e, b, a),
            )
            .doc(move |pattern| {
                let (when_free, summary) = if r.or {
                    (
                        "the known operand is not 0",
                        "x = (z & !c) | (θ & c) for known c ⊆ z",
                    )
                } else {
                    (
                        "the known operand is not -1",
                        "x = z | (θ & !c) for known c ⊇ z",
                    )
                };
                let mut thetas = Vec::new();
                if pattern.unknowns() == 2 {
                    thetas.push(ThetaDoc::value(Domain::Int, r.first_role()).when(if r.or {
                        "z is not 0"
                    } else {
                        "z is not -1"
                    }));
                }
                thetas.push(ThetaDoc::value(Domain::Int, r.free_role()).when(when_free));
                let summary = if pattern.unknowns() == 2 {
                    if r.or {
                        "a = z & θ, then b = (z & !a) | (θ & a)".to_string()
                    } else {
                        "a = z | (θ & !z), then b = z | (θ & !a)".to_string()
                    }
                } else {
                    summary.to_string()
                };
                exact_doc(thetas, &[r.reason()], &summary)
            })
    }
}

// ---------------------------------------------------------------------------------------------
// ixor, inot

// ---------------------------------------------------------------------------------------------
// ishl, ishr

const COUNT: &str = "shift count";
const COUNT_LOW: &str = "shift count mod 64";
const COUNT_HIGH: &str = "shift count div 64 (the count is taken mod 64)";

/// `z = a << b` or `z = a >> b` (arithmetic). See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct Shift {
    pub left: bool,
}

impl Shift {
    fn op(&self) -> Opcode {
        if self.left {
            Opcode::Ishl
        } else {
            Opcode::Ishr
        }
    }

    fn lost_role(&self) -> &'static str {
        if self.left {
            "high bits of the operand, shifted out"
        } else {
            "low bits of the operand, shifted out"
        }
    }

    fn reason(&self) -> &'static str {
        if self.left {
            "z has 1s in the low bits a left shift fills with 0"
        } else {
            "the top bits of z are not copies of its sign bit"
        }
    }

    /// The shifted operand given the count `s`.
    fn solve_value(&self, e: &mut Emitter<'_>, z: Value, s: Value) -> Result<Value, RuleError> {
        let m63 = e.ic(63);
        let k = e.iand(s, m63);
        let zero = e.ic(0);
        let ok = if self.left {
            let low = e.low_mask(k);
            let zl = e.iand(z, low);
            e.ieq(zl, zero)
        } else {
            let sh = e.isub(m63, k);
            let top = e.ishr(z, sh);
            let minus_one = e.ic(-1);
            let t0 = e.ieq(top, zero);
            let t1 = e.ieq(top, minus_one);
            e.bor(t0, t1)
        };
        e.check(ok, self.reason())?;
        let shifted = e.ine(k, zero);
        if self.left {
            let base = e.lshr(z, k);
            theta_if(
                e,
                shifted,
                self.lost_role(),
                move |e, t| {
                    let sixty_four = e.ic(64);
                    let w = e.isub(sixty_four, k);
                    let high = e.ishl(t, w);
                    e.ior(base, high)
                },
                z,
            )
        } else {
            let base = e.ishl(z, k);
            theta_if(
                e,
                shifted,
                self.lost_role(),
                move |e, t| {
                    let low = e.low_mask(k);
                    let bits = e.iand(t, low);
                    e.ior(base, bits)
                },
                z,
            )
        }
    }

    fn pgf_value(&self, e: &mut Emitter<'_>, x: Value, s: Value) -> Result<(), RuleError> {
        let m63 = e.ic(63);
        let k = e.iand(s, m63);
        let zero = e.ic(0);
        let shifted = e.ine(k, zero);
        let bits = if self.left {
            let sixty_four = e.ic(64);
            let w = e.isub(sixty_four, k);
            e.lshr(x, w)
        } else {
            let low = e.low_mask(k);
            e.iand(x, low)
        };
        record_if(e, shifted, bits, self.lost_role())
    }

    /// Whether the count mod 64 is determined by z and a (else it is θ).
    fn count_known(&self, e: &mut Emitter<'_>, z: Value) -> Value {
        let zero = e.ic(0);
        let z0 = e.ieq(z, zero);
        if self.left {
            e.bnot(z0)
        } else {
            let minus_one = e.ic(-1);
            let zm1 = e.ieq(z, minus_one);
            let sat = e.bor(z0, zm1);
            e.bnot(sat)
        }
    }

    /// The count mod 64 that z and a determine: trailing zeros (<<) or redundant sign bits (>>).
    fn count_from(&self, e: &mut Emitter<'_>, z: Value, a: Value) -> Value {
        if self.left {
            let tz = e.ctz(z);
            let ta = e.ctz(a);
            e.isub(tz, ta)
        } else {
            let rz = redundant_sign_bits(e, z);
            let ra = redundant_sign_bits(e, a);
            e.isub(rz, ra)
        }
    }

    /// The count given the shifted value.
    fn solve_count(&self, e: &mut Emitter<'_>, z: Value, a: Value) -> Result<Value, RuleError> {
        let known = self.count_known(e, z);
        let k = e.if_value(
            known,
            Type::I64,
            |e| Ok(self.count_from(e, z, a)),
            |e| e.theta(Domain::IntRange { lo: 0, hi: 63 }, COUNT_LOW),
        )?;
        let hi = e.theta(Domain::Int, COUNT_HIGH)?;
        let six = e.ic(6);
        let high = e.ishl(hi, six);
        let s = e.iadd(k, high);
        let again = e.op2(self.op(), a, s);
        let ok = e.ieq(again, z);
        e.check(
            ok,
            &format!(
                "`{}` by this count does not give the output",
                self.op().spelling()
            ),
        )?;
        Ok(s)
    }

    fn pgf_count(&self, e: &mut Emitter<'_>, z: Value, s: Value) -> Result<(), RuleError> {
        let known = self.count_known(e, z);
        let unknown = e.bnot(known);
        let m63 = e.ic(63);
        let k = e.iand(s, m63);
        record_if(e, unknown, k, COUNT_LOW)?;
        let six = e.ic(6);
        let hi = e.ishr(s, six);
        e.record(hi, COUNT_HIGH)
    }
}

/// The number of bits below the sign bit that equal it.
fn redundant_sign_bits(e: &mut Emitter<'_>, x: Value) -> Value {
    let s63 = e.ic(63);
    let sign = e.ishr(x, s63);
    let folded = e.ixor(x, sign);
    let lz = e.clz(folded);
    let one = e.ic(1);
    e.isub(lz, one)
}

impl From<Shift> for Spec {
    fn from(r: Shift) -> Spec {
        Spec::binary("unshift")
            .theta_first(Side::Right, COUNT, |e, _| e.theta(Domain::Int, COUNT))
            .operand(
                Side::Left,
                move |e, z, b| r.solve_value(e, z, b),
                move |e, _, a, b| r.pgf_value(e, a, b),
            )
            .operand(
                Side::Right,
                move |e, z, a| r.solve_count(e, z, a),
                move |e, z, _, b| r.pgf_count(e, z, b),
            )
            .doc(move |pattern| {
                let lost =
                    ThetaDoc::value(Domain::Int, r.lost_role()).when("the count mod 64 is not 0");
                let count_check = format!(
                    "`{}` by this count does not give the output",
                    r.op().spelling()
                );
                match unknowns2(pattern) {
                    (true, true) => exact_doc(
                        vec![ThetaDoc::value(Domain::Int, COUNT), lost],
                        &[r.reason()],
                        if r.left {
                            "b = θ, a = (z >>> k) | (θ << (64 − k))"
                        } else {
                            "b = θ, a = (z << k) | (θ & (2^k − 1))"
                        },
                    ),
                    (true, false) => exact_doc(
                        vec![lost],
                        &[r.reason()],
                        if r.left {
                            "a = (z >>> k) | (θ << (64 − k)), k = b mod 64"
                        } else {
                            "a = (z << k) | (θ & (2^k − 1)), k = b mod 64"
                        },
                    ),
                    _ => exact_doc(
                        vec![
                            ThetaDoc::value(Domain::IntRange { lo: 0, hi: 63 }, COUNT_LOW)
                                .when(if r.left { "z = 0" } else { "z is 0 or -1" }),
                            ThetaDoc::value(Domain::Int, COUNT_HIGH),
                        ],
                        &[&count_check],
                        "b = k + 64·θ, k from the bit counts of z and a",
                    ),
                }
            })
    }
}
