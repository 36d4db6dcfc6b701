//! Comparisons of f64 (`feq fne flt fle fgt fge`) and i64 (`ieq ine ilt ile igt ige`): a witness
//! pair for either truth value.
//!
//! With one operand known, the other is read as θ itself, from the side of the known one the
//! truth value requires: a domain narrowed at run time (`b` in `(a, ∞]` for `a < b` true; for
//! f64 the "false" side of an ordered comparison also holds for NaN, which its domain keeps; an
//! i64 side with no value, such as `b > i64::MAX`, is empty). With both unknown, θ is the left
//! operand and then the same. Only `≠` reads a gap, its values lying on both sides: `b = a + g`
//! with `g ≠ 0`, [settled](super::settle) for f64 (a gap absorbed by a much larger known operand
//! reads an offset), and wrapping for i64 (a gap that wraps onto `a` fails the final check).

use super::ops::Ops;
use super::settle::{settle, settle_doc, settle_pgf};
use super::spec::{Side, Spec};
use super::unknowns2;
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Type, Value};

pub fn register(layer: &mut Layer) {
    use Opcode::*;
    for op in [Feq, Fne, Flt, Fle, Fgt, Fge, Ieq, Ine, Ilt, Ile, Igt, Ige] {
        layer.add(Callee::Prim(op), Spec::from(Compare { op }));
    }
}

/// Where the moved operand `m` must lie relative to the anchor `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    /// m > k
    Gt,
    /// m ≥ k
    Ge,
    /// m < k
    Lt,
    /// m ≤ k
    Le,
    /// m = k
    Eq,
    /// m ≠ k (or NaN)
    Ne,
    /// not (m > k): m ≤ k or NaN
    NotGt,
    /// not (m ≥ k): m < k or NaN
    NotGe,
    /// not (m < k): m ≥ k or NaN
    NotLt,
    /// not (m ≤ k): m > k or NaN
    NotLe,
}

impl Rel {
    /// For i64 (no NaN) the negated relations are the plain ones.
    fn int(self) -> Rel {
        match self {
            Rel::NotGt => Rel::Le,
            Rel::NotGe => Rel::Lt,
            Rel::NotLt => Rel::Ge,
            Rel::NotLe => Rel::Gt,
            r => r,
        }
    }

    /// Whether this is the negation of an ordered relation, which NaN satisfies.
    fn negated(self) -> bool {
        matches!(self, Rel::NotGt | Rel::NotGe | Rel::NotLt | Rel::NotLe)
    }

    /// Whether the moved operand is read as itself, from the side of the anchor it must be on
    /// (every ordered relation); `Ne` reads a nonzero gap instead (a value of either side).
    fn direct(self) -> bool {
        !matches!(self, Rel::Eq | Rel::Ne)
    }

    /// The role of a moved operand read as itself.
    fn side_role(self) -> &'static str {
        match self {
            Rel::Gt => "the operand, above the other",
            Rel::Ge => "the operand, at or above the other",
            Rel::Lt => "the operand, below the other",
            Rel::Le => "the operand, at or below the other",
            Rel::NotGt => "the operand, not above the other (NaN allowed)",
            Rel::NotGe => "the operand, not at or above the other (NaN allowed)",
            Rel::NotLt => "the operand, not below the other (NaN allowed)",
            _ => "the operand, not at or below the other (NaN allowed)",
        }
    }

    /// The domain a directly read operand is narrowed from: NaN is kept where the relation
    /// allows it.
    fn side_domain(self, int: bool) -> Domain {
        if int {
            Domain::Int
        } else if self.negated() {
            Domain::Real
        } else {
            Domain::Interval {
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
            }
        }
    }
}

/// The θ role of the gap of `m ≠ k` (the one relation read as a gap, since its values lie on
/// both sides of k).
fn ne_gap_role(int: bool) -> &'static str {
    if int {
        "gap to the other operand, beyond 1 (zigzag: θ 0, −1, 1, −2, … is gap 0, 1, 2, 3, …)"
    } else {
        "difference to the other operand (≠ 0; NaN allowed)"
    }
}

/// `z = a OP b` for a comparison. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct Compare {
    pub op: Opcode,
}

impl Compare {
    fn int(&self) -> bool {
        matches!(
            self.op,
            Opcode::Ieq | Opcode::Ine | Opcode::Ilt | Opcode::Ile | Opcode::Igt | Opcode::Ige
        )
    }

    fn ty(&self) -> Type {
        if self.int() {
            Type::I64
        } else {
            Type::F64
        }
    }

    /// The relations of `b` to `a` for `z = a OP b` true and false.
    fn rels_right(&self) -> (Rel, Rel) {
        use Opcode::*;
        let (t, f) = match self.op {
            Feq | Ieq => (Rel::Eq, Rel::Ne),
            Fne | Ine => (Rel::Ne, Rel::Eq),
            Flt | Ilt => (Rel::Gt, Rel::NotGt),
            Fle | Ile => (Rel::Ge, Rel::NotGe),
            Fgt | Igt => (Rel::Lt, Rel::NotLt),
            _ => (Rel::Le, Rel::NotLe),
        };
        if self.int() {
            (t.int(), f.int())
        } else {
            (t, f)
        }
    }

    /// The relations of `a` to `b` for `z = a OP b` true and false (the mirrored comparison).
    fn rels_left(&self) -> (Rel, Rel) {
        use Opcode::*;
        let mirrored = match self.op {
            Flt => Fgt,
            Fgt => Flt,
            Fle => Fge,
            Fge => Fle,
            Ilt => Igt,
            Igt => Ilt,
            Ile => Ige,
            Ige => Ile,
            op => op,
        };
        Compare { op: mirrored }.rels_right()
    }

    fn anchor_role(&self) -> &'static str {
        "left operand"
    }

    fn offset_role(&self) -> &'static str {
        "moved operand: offset from anchor ± gap"
    }

    /// The bounds of the side of `k` that `rel` puts the moved operand on. An i64 relation with
    /// no value on its side (`m > i64::MAX`) gets an empty range, and so does an f64 one that
    /// no value satisfies (`m > NaN`); a negated relation with a NaN anchor holds for every m.
    fn side(&self, e: &mut Emitter<'_>, k: Value, rel: Rel) -> Result<(Value, Value), RuleError> {
        let above = matches!(rel, Rel::Gt | Rel::Ge | Rel::NotLt | Rel::NotLe);
        if self.int() {
            let (min, max) = (e.ic(i64::MIN), e.ic(i64::MAX));
            let one = e.ic(1);
            return Ok(match rel {
                Rel::Gt => {
                    let at_end = e.ieq(k, max);
                    let next = e.iadd(k, one);
                    (e.select(at_end, max, next)?, e.select(at_end, min, max)?)
                }
                Rel::Lt => {
                    let at_end = e.ieq(k, min);
                    let prev = e.isub(k, one);
                    (e.select(at_end, max, min)?, e.select(at_end, min, prev)?)
                }
                _ if above => (k, max),
                _ => (min, k),
            });
        }
        let (ninf, inf) = (e.fc(f64::NEG_INFINITY), e.fc(f64::INFINITY));
        let edge = if rel.negated() {
            // Not above NaN: every value.
            let nan = e.is_nan(k);
            let open = if above { ninf } else { inf };
            e.select(nan, open, k)?
        } else {
            k
        };
        Ok(if above { (edge, inf) } else { (ninf, edge) })
    }

    /// `m` with relation `rel` to `k`: the operand itself from its side of `k` for an ordered
    /// relation, `k` for `Eq`, and `k` moved by a nonzero gap θ for `Ne`.
    fn moved(
        &self,
        e: &mut Emitter<'_>,
        k: Value,
        rel: Rel,
        operand: usize,
    ) -> Result<Value, RuleError> {
        if rel == Rel::Eq {
            return Ok(k);
        }
        if rel.direct() {
            let (mut lo, mut hi) = self.side(e, k, rel)?;
            if let (false, Some((slo, shi))) = (self.int(), e.operand_range(operand)) {
                // What the forward code can compute there (a branch that compared it before).
                let (slo, shi) = (e.fc(slo), e.fc(shi));
                lo = e.prim(Opcode::Fmax, &[lo, slo]);
                hi = e.prim(Opcode::Fmin, &[hi, shi]);
            }
            if let Some((blo, bhi)) = e.operand_bound(operand) {
                // What else is known of the operand at run time narrows its side further.
                let (max, min) = if self.int() {
                    (Opcode::Imax, Opcode::Imin)
                } else {
                    (Opcode::Fmax, Opcode::Fmin)
                };
                lo = e.prim(max, &[lo, blo]);
                hi = e.prim(min, &[hi, bhi]);
            }
            let t = e.theta_within(rel.side_domain(self.int()), lo, hi, rel.side_role())?;
            if self.int() || !rel.negated() {
                return Ok(t);
            }
            // A negated relation whose side the narrowing left no number on holds only for
            // NaN: `0 >= 0 · p` is false only where `0 · p`, a zero wherever it is a number, is
            // NaN. θ is still read (the PGF records NaN there, as the forward value is).
            let none = match rel {
                // Strictly beyond k: nothing above it, or below it, is left.
                Rel::NotLe => e.fle(hi, k),
                Rel::NotGe => e.fge(lo, k),
                _ => e.flt(hi, lo),
            };
            let nan = e.fc(f64::NAN);
            return e.select(none, nan, t);
        }
        // m ≠ k.
        if self.int() {
            // Every u64 gap is some i64 θ, and small θ of either sign are small gaps, so sampled
            // θ (small, often 0) land on valid witnesses: m = k + 1 + g, wrapping.
            let t = e.theta(Domain::Int, ne_gap_role(true))?;
            let g = zigzag_encode(e, t);
            let one = e.ic(1);
            let k1 = e.iadd(k, one);
            return Ok(e.iadd(k1, g));
        }
        let g = e.theta(Domain::NonzeroReal, ne_gap_role(false))?;
        let d = e.fadd(k, g);
        settle(e, d, g, &|e, x| e.fsub(x, k), self.offset_role())
    }

    fn moved_pgf(
        &self,
        e: &mut Emitter<'_>,
        k: Value,
        m: Value,
        rel: Rel,
    ) -> Result<(), RuleError> {
        if rel == Rel::Eq {
            return Ok(());
        }
        if rel.direct() {
            // The inverse reads m from k's side of what it holds for k. Where m is k (`max(p,
            // q) ≤ q`) and the inverse holds k an ulp past the forward value (solved from y by
            // a closed form), the forward m lies just beyond that side: the inverse's own m is
            // then its k, which the steps after it (`max`, a value used twice) take to x.
            let beyond = match rel {
                Rel::Le | Rel::NotGt => Some(Opcode::Fgt),
                Rel::Ge | Rel::NotLt => Some(Opcode::Flt),
                _ => None,
            };
            if let Some(beyond) = beyond.filter(|_| !self.int()) {
                let held = e.replayed(k);
                let past = e.prim(beyond, &[m, held]);
                let read = e.select(past, held, m)?;
                e.note_replay(m, read);
                return e.record(read, rel.side_role());
            }
            return e.record(m, rel.side_role());
        }
        // m ≠ k.
        if self.int() {
            let one = e.ic(1);
            let d = e.isub(m, k);
            let g = e.isub(d, one);
            let t = zigzag_decode(e, g);
            return e.record(t, ne_gap_role(true));
        }
        // g = m − k; equal infinities give 0.
        let diff = e.fsub(m, k);
        let same = e.feq(m, k);
        let zero = e.fc(0.0);
        let g = e.select(same, zero, diff)?;
        e.record(g, ne_gap_role(false))?;
        let d = e.fadd(k, g);
        settle_pgf(e, d, g, m, &|e, x| e.fsub(x, k), self.offset_role())
    }

    /// The unknown operand with relation (`t` if z, else `f`) to the known `k`.
    fn solve(
        &self,
        e: &mut Emitter<'_>,
        z: Value,
        k: Value,
        (t, f): (Rel, Rel),
        operand: usize,
    ) -> Result<Value, RuleError> {
        let ty = self.ty();
        let r = e.if_else(
            z,
            &[ty],
            |e| Ok(vec![self.moved(e, k, t, operand)?]),
            |e| Ok(vec![self.moved(e, k, f, operand)?]),
        )?;
        Ok(r[0])
    }

    fn solve_pgf(
        &self,
        e: &mut Emitter<'_>,
        z: Value,
        k: Value,
        m: Value,
        (t, f): (Rel, Rel),
    ) -> Result<(), RuleError> {
        e.branch(
            z,
            |e| {
                self.moved_pgf(e, k, m, t)?;
                Ok(())
            },
            |e| {
                self.moved_pgf(e, k, m, f)?;
                Ok(())
            },
        )?;
        Ok(())
    }

    fn rel_doc(&self, rel: Rel, when: &str) -> Vec<ThetaDoc> {
        if rel == Rel::Eq {
            return Vec::new();
        }
        if rel.direct() {
            return vec![ThetaDoc::value(rel.side_domain(self.int()), rel.side_role()).when(when)];
        }
        if self.int() {
            return vec![ThetaDoc::value(Domain::Int, ne_gap_role(true)).when(when)];
        }
        vec![
            ThetaDoc::value(Domain::NonzeroReal, ne_gap_role(false)).when(when),
            settle_doc(self.offset_role()).when(when),
        ]
    }
}

impl From<Compare> for Spec {
    fn from(r: Compare) -> Spec {
        Spec::binary("witness")
            .theta_first(Side::Left, r.anchor_role(), move |e, _| {
                e.theta(Domain::all(r.ty()), r.anchor_role())
            })
            .operand(
                Side::Left,
                move |e, z, b| r.solve(e, z, b, r.rels_left(), 0),
                move |e, z, a, b| r.solve_pgf(e, z, b, a, r.rels_left()),
            )
            .operand(
                Side::Right,
                move |e, z, a| r.solve(e, z, a, r.rels_right(), 1),
                move |e, z, a, b| r.solve_pgf(e, z, a, b, r.rels_right()),
            )
            .finish(move |e, a, b, z| {
                let again = e.prim(r.op, &[a, b]);
                let ok = e.op2(Opcode::Beq, again, z);
                e.check(
                    ok,
                    &format!(
                        "{} of the witnesses is not z (the gap is absorbed or wraps)",
                        r.op
                    ),
                )
            })
            .doc(move |pattern| {
                let (a_unknown, b_unknown) = unknowns2(pattern);
                let (thetas, summary) = if b_unknown {
                    // b solved against a (after θ for a, if both are unknown).
                    let (t, f) = r.rels_right();
                    let mut thetas = Vec::new();
                    if a_unknown {
                        thetas.push(ThetaDoc::value(Domain::all(r.ty()), r.anchor_role()));
                    }
                    thetas.extend(r.rel_doc(t, "z is true"));
                    thetas.extend(r.rel_doc(f, "z is false"));
                    let s = if a_unknown {
                        "a = θ, b = a ± gap θ"
                    } else {
                        "b = a ± gap θ"
                    };
                    (thetas, s)
                } else {
                    let (t, f) = r.rels_left();
                    let mut thetas = r.rel_doc(t, "z is true");
                    thetas.extend(r.rel_doc(f, "z is false"));
                    (thetas, "a = b ± gap θ")
                };
                RuleDoc {
                    thetas,
                    checks: vec![format!(
                        "{} of the witnesses is z (a gap absorbed or wrapped fails)",
                        r.op
                    )],
                    exact: true,
                    summary: summary.to_string(),
                }
            })
    }
}

/// The u64 gap (as i64 bits) of a θ: 0, −1, 1, −2, 2, … ↦ 0, 1, 2, 3, 4, … (a bijection).
fn zigzag_encode(e: &mut Emitter<'_>, t: Value) -> Value {
    let one = e.ic(1);
    let sixty_three = e.ic(63);
    let doubled = e.ishl(t, one);
    let sign = e.ishr(t, sixty_three);
    e.ixor(doubled, sign)
}

/// The θ of a u64 gap (as i64 bits): the inverse of [`zigzag_encode`].
fn zigzag_decode(e: &mut Emitter<'_>, g: Value) -> Value {
    let one = e.ic(1);
    let half = e.lshr(g, one);
    let low = e.iand(g, one);
    let minus = e.ineg(low);
    e.ixor(half, minus)
}
