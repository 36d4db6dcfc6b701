//! Affine maps mod 2⁶⁴: an i64 value that is `Σ aⱼ·uⱼ + b` (wrapping) in unknown words.
//!
//! `(x + 7) * 5 + (x << 3)` is `13·x + 35`, `x * 3 - (x << 1)` is `x`: the unknown is used twice,
//! and inverted one operation at a time the second use can only check. Collected into one
//! affine term it is solved exactly: `a·x = v` with `a = 2^k·u` (u odd) has a solution iff the
//! low k bits of v are zero, and then `x = (v >> k)·u⁻¹ mod 2^(64−k)` plus any k high bits.
//!
//! - **Recognition** ([`find_sums`]): every i64 value is taken apart through `+`, `−`, unary
//!   `−`, multiplication by a constant and `<<` by a constant (`x << k` is `x·2^k`); an
//!   **atom** is anything else (a parameter, `x ^ y`, a call). A mask of the low k bits,
//!   `S & (2^k − 1)`, makes the sum one mod 2^k, which only a narrower mask may use as a sum
//!   (for anything else it is an atom). A **root** (an affine value used by something that is
//!   not affine, or returned) is rewritten when its tree reaches some value twice, or when it is
//!   masked (the walk would draw θ for the bits the mask drops, and the product's inverse would
//!   spread them into bits the steps before must have zero: `(h * C) & 0xffffffff` of a 32-bit
//!   h).
//! - **The rewritten plan** ([`candidate`]): each such root is a helper `iso.affine.N(u…)`
//!   ([`PKind::Affine`]) computing the collected sum.
//! - **The rule** ([`AffineRule`]): known atoms move to the right-hand side; of the unknown
//!   atoms, the one whose coefficient has the fewest trailing zeros is solved, the others are
//!   θ (any i64); then the pivot's coefficient `2^k·u` needs the low k bits of the rest to be
//!   zero (else y has no preimage, whatever θ), and θ gives exactly the bits it leaves free:
//!   the k high bits mod 2⁶⁴, everything from bit `w − k` up mod 2^w
//!   ([`pinv_core::ir::Domain::Bits`]). Bits the forward program always has zero in an atom
//!   (its known zeros, [`super::plan::known_zeros`]) are never free: a 32-bit h is solved as
//!   exactly the 32-bit value. One unknown with an odd coefficient reads no θ.
//! - **The PGF** records the other atoms and the pivot's high bits.
//!
//! The arithmetic ([`odd_inverse`], [`solve_scaled`]) is generic over the word.

use super::plan::{PInst, PKind, PVal, Plan, PlanBuilder};
use num_traits::{PrimInt, WrappingMul, WrappingSub};
use pinv_core::ir::{Const, Domain, FuncId, Module, Opcode, Type, Value};
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most atoms one helper takes.
const MAX_ATOMS: usize = 8;

/// The inverse of odd `u` modulo 2^B (one definition, with the `imul` rule's).
pub use pinv_primitives::rules::i64_arith::odd_inverse;

/// The solutions of `a·x = v` (mod 2^B): `None` when there are none, else the one whose `k` high
/// bits are zero and `k` (`x + h·2^(B−k)` is a solution for every h). `a = 0` has `k = B`.
pub fn solve_scaled<W: PrimInt + WrappingMul + WrappingSub>(a: W, v: W) -> Option<(W, u32)> {
    let bits = W::zero().count_zeros();
    if a == W::zero() {
        return (v == W::zero()).then_some((W::zero(), bits));
    }
    let k = a.trailing_zeros();
    let low = (W::one() << k as usize) - W::one();
    if v & low != W::zero() {
        return None;
    }
    let x = (v >> k as usize).wrapping_mul(&odd_inverse(a >> k as usize));
    let keep = if k == 0 {
        !W::zero()
    } else {
        !W::zero() >> k as usize
    };
    Some((x & keep, k))
}

/// What a [`PKind::Affine`] helper computes: `(Σ coeffs[j]·u_j + offset) mod 2^width`,
/// wrapping (a width below 64 is a sum masked to its low bits: `(h * C) & 0xffffffff`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffineSpec {
    pub coeffs: Vec<u64>,
    pub offset: u64,
    pub width: u32,
    /// Per atom, the bits known to be zero in the forward program: θ never draws them.
    pub zeros: Vec<u64>,
    /// The atoms' expressions, for θ roles.
    pub atoms: Vec<String>,
}

/// The low `k` bits (all 64 for k ≥ 64).
fn low(k: u32) -> u64 {
    if k >= 64 {
        !0
    } else {
        (1u64 << k) - 1
    }
}

impl AffineSpec {
    /// The helper's forward semantics on constants.
    pub fn eval(&self, args: &[Const]) -> Option<Vec<Const>> {
        let mut acc = self.offset;
        for (&a, x) in self.coeffs.iter().zip(args) {
            acc = acc.wrapping_add(a.wrapping_mul(x.as_i64()? as u64));
        }
        Some(vec![Const::I64((acc & low(self.width)) as i64)])
    }

    /// The bits of the result that are always zero: those above the width.
    pub fn known_zeros(&self) -> u64 {
        !low(self.width)
    }

    /// A coefficient as it acts mod 2^width.
    fn coeff(&self, c: usize) -> u64 {
        self.coeffs[c] & low(self.width)
    }

    /// The trailing zeros of a coefficient mod 2^width (width for 0).
    fn tz(&self, c: usize) -> u32 {
        self.coeff(c).trailing_zeros().min(self.width)
    }

    /// The unknown atoms, the pivot among them (the fewest trailing zeros), and its k.
    fn plan(&self, pattern: &Pattern) -> (Vec<usize>, Option<(usize, u32)>) {
        let unknown: Vec<usize> = (0..self.coeffs.len())
            .filter(|&c| !pattern.is_known(c))
            .collect();
        let pivot = unknown
            .iter()
            .copied()
            .min_by_key(|&c| self.tz(c))
            .map(|c| (c, self.tz(c)));
        (unknown, pivot)
    }

    fn zeros_of(&self, c: usize) -> u64 {
        self.zeros.get(c).copied().unwrap_or(0)
    }

    /// The θ domain of a free atom: the bits not known to be zero.
    fn free_domain(&self, c: usize) -> Domain {
        match self.zeros_of(c) {
            0 => Domain::Int,
            z => Domain::Bits { mask: !z },
        }
    }

    /// The pivot's free bits: those its coefficient multiplies past the width, or that the
    /// width drops, less the known zeros (none when it is determined).
    fn pivot_free(&self, p: usize, k: u32) -> u64 {
        if k >= self.width {
            return !self.zeros_of(p);
        }
        !low(self.width - k) & !self.zeros_of(p)
    }

    /// θ reads under `pattern` (simulation and docs): the other unknowns, then the pivot's
    /// free bits.
    pub fn theta_count(&self, pattern: &Pattern) -> usize {
        let (unknown, pivot) = self.plan(pattern);
        unknown.len().saturating_sub(1)
            + usize::from(pivot.is_some_and(|(p, k)| self.pivot_free(p, k) != 0))
    }

    /// The bits known to be zero of operand `c` as the rule solves it under `pattern`.
    pub fn solved_zeros(&self, pattern: &Pattern, c: usize) -> u64 {
        match self.plan(pattern).1 {
            // The pivot is its low bits (which fit below width − k) and θ's free bits.
            Some((p, k)) if p == c && k < self.width => {
                !(low(self.width - k) | self.pivot_free(p, k))
            }
            _ => self.zeros_of(c),
        }
    }
}

/// An affine form: coefficients of atoms, and a constant, mod 2^width (a width below 64 is a
/// sum masked to its low bits, which no further arithmetic may use as a sum).
#[derive(Clone, Debug, PartialEq)]
struct Form {
    terms: BTreeMap<PVal, u64>,
    b: u64,
    width: u32,
}

impl Form {
    fn scale(&self, k: u64) -> Form {
        let terms = self
            .terms
            .iter()
            .map(|(&v, &a)| (v, a.wrapping_mul(k)))
            .filter(|&(_, a)| a != 0)
            .collect();
        Form {
            terms,
            b: self.b.wrapping_mul(k),
            width: 64,
        }
    }

    fn add(&self, o: &Form) -> Form {
        let mut terms = self.terms.clone();
        for (&v, &a) in &o.terms {
            let e = terms.entry(v).or_insert(0);
            *e = e.wrapping_add(a);
            if *e == 0 {
                terms.remove(&v);
            }
        }
        Form {
            terms,
            b: self.b.wrapping_add(o.b),
            width: 64,
        }
    }
}

/// A root and its collected sum: the atoms with their coefficients, and the constant.
#[derive(Clone, Debug, PartialEq)]
struct Sum {
    root: PVal,
    terms: Vec<(PVal, u64)>,
    offset: u64,
    width: u32,
}

/// The roots worth collecting, with their sums (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Sums {
    roots: Vec<Sum>,
}

/// The affine roots of `plan` that use some value twice, if any.
pub fn find_sums(plan: &Plan) -> Option<Sums> {
    let dep = plan.depends_on_params();
    let konst = |v: PVal| match plan.constant(v) {
        Some(Const::I64(c)) => Some(c as u64),
        _ => None,
    };
    let mut forms: Vec<Option<Form>> = vec![None; plan.insts.len()];
    for (i, inst) in plan.insts.iter().enumerate() {
        if !dep[i] || inst.tys.as_slice() != [Type::I64] {
            continue;
        }
        let PKind::Prim(op) = inst.kind else { continue };
        let form = |v: PVal| -> Form {
            match (&forms[v.inst as usize], konst(v)) {
                (Some(f), _) => f.clone(),
                (None, Some(c)) => Form {
                    terms: BTreeMap::new(),
                    b: c,
                    width: 64,
                },
                (None, None) => Form {
                    terms: BTreeMap::from([(v, 1)]),
                    b: 0,
                    width: 64,
                },
            }
        };
        // A sum (width 64), or a masked sum used as an atom by anything but a narrower mask.
        let sum = |v: PVal| -> Form {
            let f = form(v);
            if f.width == 64 {
                f
            } else {
                Form {
                    terms: BTreeMap::from([(v, 1)]),
                    b: 0,
                    width: 64,
                }
            }
        };
        // `x & (2^k − 1)`: the sum mod 2^k.
        let masked = |v: PVal, m: u64| -> Option<Form> {
            let k = (m != 0 && m != !0 && (m + 1).is_power_of_two()).then(|| m.trailing_ones())?;
            let f = form(v);
            Some(Form {
                width: f.width.min(k),
                ..f
            })
        };
        let f = match (op, inst.args.as_slice()) {
            (Opcode::Iadd, &[a, b]) => Some(sum(a).add(&sum(b))),
            (Opcode::Isub, &[a, b]) => Some(sum(a).add(&sum(b).scale(!0))),
            (Opcode::Ineg, &[a]) => Some(sum(a).scale(!0)),
            (Opcode::Imul, &[a, b]) => match (konst(a), konst(b)) {
                (_, Some(k)) => Some(sum(a).scale(k)),
                (Some(k), _) => Some(sum(b).scale(k)),
                _ => None,
            },
            (Opcode::Ishl, &[a, k]) => konst(k).map(|k| sum(a).scale(1 << (k & 63))),
            (Opcode::Iand, &[a, b]) => match (konst(a), konst(b)) {
                (_, Some(m)) => masked(a, m),
                (Some(m), _) => masked(b, m),
                _ => None,
            },
            _ => None,
        };
        // More atoms than a helper takes: an atom itself (this also bounds the forms' size).
        forms[i] = f.filter(|f| !f.terms.is_empty() && f.terms.len() <= MAX_ATOMS);
    }
    let affine = |v: PVal| forms[v.inst as usize].is_some();
    let mut roots: BTreeSet<PVal> = plan
        .outputs
        .iter()
        .copied()
        .filter(|&o| affine(o))
        .collect();
    let narrow = |v: PVal| {
        forms[v.inst as usize]
            .as_ref()
            .is_some_and(|f| f.width < 64)
    };
    for (i, inst) in plan.insts.iter().enumerate() {
        if forms[i].is_none() {
            roots.extend(inst.args.iter().copied().filter(|&a| affine(a)));
        } else if !matches!(inst.kind, PKind::Prim(Opcode::Iand)) {
            // A masked sum that arithmetic uses is an atom there: it is solved on its own.
            roots.extend(inst.args.iter().copied().filter(|&a| narrow(a)));
        }
    }
    let mut found = Vec::new();
    for &r in &roots {
        // Does the affine tree under r reach some value twice?
        let mut seen = BTreeSet::new();
        let mut stack = vec![r.inst as usize];
        let mut twice = false;
        while let Some(i) = stack.pop() {
            for a in &plan.insts[i].args {
                let k = a.inst as usize;
                if !dep[k] {
                    continue;
                }
                if !seen.insert(k) {
                    twice = true;
                } else if forms[k].is_some() && !roots.contains(a) {
                    stack.push(k);
                }
            }
        }
        let Some(f) = forms[r.inst as usize].as_ref() else {
            continue;
        };
        // A masked sum is solved mod 2^width whether or not it reuses a value: the walk would
        // draw θ for the bits the mask drops, and the product's inverse would then spread them.
        // (A bare mask, `x & m`, is the bit maps' and the walk's.)
        let bare = f.terms.len() == 1 && f.b == 0 && f.terms.values().all(|&a| a == 1);
        let masked = f.width < 64 && !bare;
        if (twice || masked) && f.terms.len() <= MAX_ATOMS {
            found.push(Sum {
                root: r,
                terms: f.terms.iter().map(|(&v, &a)| (v, a)).collect(),
                offset: f.b,
                width: f.width,
            });
        }
    }
    (!found.is_empty()).then_some(Sums { roots: found })
}

/// The plan with each root computed by an affine helper, and a description.
pub fn candidate(plan: &Plan, sums: &Sums, names: &[String]) -> (Plan, String) {
    let known = super::plan::known_zeros(plan);
    let mut b = PlanBuilder::new(plan.params.clone());
    let mut map: HashMap<u32, u32> = HashMap::new();
    let mut texts = Vec::new();
    let root_of: HashMap<u32, usize> = sums
        .roots
        .iter()
        .enumerate()
        .map(|(k, r)| (r.root.inst, k))
        .collect();
    // Instructions in order: a root's atoms come before it, so they are mapped by then.
    for (i, inst) in plan.insts.iter().enumerate() {
        let at = |v: PVal, map: &HashMap<u32, u32>| PVal {
            inst: map[&v.inst],
            idx: v.idx,
        };
        let n = match (&inst.kind, root_of.get(&(i as u32))) {
            (PKind::Param(p), _) => b.param(*p as usize).inst,
            (_, Some(&k)) => {
                let Sum {
                    terms,
                    offset,
                    width,
                    ..
                } = &sums.roots[k];
                let atoms: Vec<String> = terms
                    .iter()
                    .map(|&(v, _)| super::plan::plan_text(plan, names, v, 60))
                    .collect();
                let sum: Vec<String> = terms
                    .iter()
                    .zip(&atoms)
                    .map(|(&(_, a), t)| format!("{}·{t}", a as i64))
                    .collect();
                texts.push(format!(
                    "{} + {} collected mod 2^{width}",
                    sum.join(" + "),
                    *offset as i64
                ));
                let spec = AffineSpec {
                    coeffs: terms.iter().map(|t| t.1).collect(),
                    offset: *offset,
                    width: *width,
                    zeros: terms
                        .iter()
                        .map(|(v, _)| known[v.inst as usize][v.idx as usize])
                        .collect(),
                    atoms,
                };
                let args = terms.iter().map(|&(v, _)| at(v, &map)).collect();
                b.push(PKind::Affine(spec), args, vec![Type::I64], inst.span)
            }
            (kind, None) => {
                let args = inst.args.iter().map(|&a| at(a, &map)).collect();
                b.push(kind.clone(), args, inst.tys.clone(), inst.span)
            }
        };
        map.insert(i as u32, n);
    }
    let mut out = b.finish();
    // Copied instructions keep their numeric helpers' indices (no helper is added here).
    out.roots = plan.roots.clone();
    out.outputs = plan
        .outputs
        .iter()
        .map(|o| PVal {
            inst: map[&o.inst],
            idx: o.idx,
        })
        .collect();
    (out.pruned(), texts.join("; "))
}

/// Emits `Σ coeffs[j]·x_j` over the given words (`None` is left out).
fn sum<O: Ops + ?Sized>(o: &mut O, coeffs: &[u64], xs: &[Option<Value>]) -> Option<Value> {
    let mut acc: Option<Value> = None;
    for (&a, x) in coeffs.iter().zip(xs) {
        let Some(x) = *x else { continue };
        let term = match a {
            1 => x,
            a => {
                let k = o.ic(a as i64);
                o.imul(x, k)
            }
        };
        acc = Some(match acc {
            None => term,
            Some(s) => o.iadd(s, term),
        });
    }
    acc
}

/// Adds the helper for a [`PKind::Affine`] instruction to `module`, and its rule to `layer`.
pub fn install(module: &mut Module, layer: &mut Layer, inst: &PInst, spec: &AffineSpec) -> FuncId {
    let body = |e: &mut Emitter<'_>, ps: &[Option<Value>]| -> Vec<Value> {
        let s = sum(e, &spec.coeffs, ps);
        let off = e.ic(spec.offset as i64);
        let r = match s {
            Some(s) if spec.offset == 0 => s,
            Some(s) => e.iadd(s, off),
            None => off,
        };
        vec![if spec.width < 64 {
            let m = e.ic(low(spec.width) as i64);
            e.iand(r, m)
        } else {
            r
        }]
    };
    let rule = AffineRule { spec: spec.clone() };
    let shape = (spec.coeffs.len(), 1);
    let sig = super::helpers::words(shape.0, shape.1);
    super::helpers::emitted_helper(module, layer, "iso.affine", sig, inst.span, body, rule)
}

/// The rule of an `iso.affine.N` helper: see the module docs.
#[derive(Debug)]
pub struct AffineRule {
    pub spec: AffineSpec,
}

const NO_PREIMAGE: &str =
    "y has no preimage: the collected sum never has these low bits (or bits above its width)";

impl AffineRule {
    fn free_role(&self, c: usize) -> String {
        format!("{}: free in the collected sum", self.spec.atoms[c])
    }

    fn high_role(&self, c: usize) -> String {
        format!(
            "{}: high bits its coefficient multiplies away",
            self.spec.atoms[c]
        )
    }
}

impl InverseRule for AffineRule {
    fn name(&self) -> &str {
        "affine-mod-2^64"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.spec.coeffs.len()
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let spec = &self.spec;
        let (unknown, pivot) = spec.plan(pattern);
        let mut thetas: Vec<ThetaDoc> = unknown
            .iter()
            .filter(|&&c| Some(c) != pivot.map(|p| p.0))
            .map(|&c| ThetaDoc::value(spec.free_domain(c), &self.free_role(c)))
            .collect();
        if let Some((p, k)) = pivot {
            let mask = spec.pivot_free(p, k);
            if mask != 0 {
                thetas.push(ThetaDoc::value(Domain::Bits { mask }, &self.high_role(p)));
            }
        }
        RuleDoc {
            thetas,
            checks: vec![NO_PREIMAGE.to_string()],
            exact: true,
            summary: "a·x = v mod 2^w with a = 2^k·u: x = (v >> k)·u⁻¹ mod 2^(w−k), θ for the \
                      bits that leaves free"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let spec = &self.spec;
        let (&[y], true) = (outputs, args.len() == spec.coeffs.len()) else {
            return Err(RuleError::Malformed(
                "an affine helper's operands do not match its sum".to_string(),
            ));
        };
        let width = spec.width;
        if width < 64 {
            let high = e.ic(!low(width) as i64);
            let above = e.iand(y, high);
            let zero = e.ic(0);
            let ok = e.ieq(above, zero);
            e.check(ok, NO_PREIMAGE)?;
        }
        let pattern = Pattern::of(args);
        let (unknown, pivot) = spec.plan(&pattern);
        let mut out: Vec<Option<Value>> = args.iter().map(Arg::known).collect();
        for &c in &unknown {
            if Some(c) != pivot.map(|p| p.0) {
                out[c] = Some(e.theta(spec.free_domain(c), &self.free_role(c))?);
            }
        }
        // v = (y − offset − Σ every atom but the pivot) mod 2^width.
        let mut v = y;
        if spec.offset != 0 {
            let off = e.ic(spec.offset as i64);
            v = e.isub(v, off);
        }
        if let Some(s) = sum(e, &spec.coeffs, &out) {
            v = e.isub(v, s);
        }
        if width < 64 {
            let m = e.ic(low(width) as i64);
            v = e.iand(v, m);
        }
        let Some((p, k)) = pivot else {
            let zero = e.ic(0);
            let ok = e.ieq(v, zero);
            e.check(ok, "the known values do not give the output")?;
            return super::helpers::solved(out);
        };
        let free = spec.pivot_free(p, k);
        if k >= width {
            let zero = e.ic(0);
            let ok = e.ieq(v, zero);
            e.check(ok, NO_PREIMAGE)?;
            out[p] = Some(e.theta(spec.free_domain(p), &self.free_role(p))?);
            return super::helpers::solved(out);
        }
        let role = self.high_role(p);
        let x = pinv_primitives::rules::i64_arith::emit_scaled_solve(
            e,
            v,
            spec.coeff(p),
            width,
            free,
            NO_PREIMAGE,
            &role,
        )?;
        out[p] = Some(x);
        super::helpers::solved(out)
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let spec = &self.spec;
        let (unknown, pivot) = spec.plan(pattern);
        for &c in &unknown {
            if Some(c) != pivot.map(|p| p.0) {
                e.record(args[c], &self.free_role(c))?;
            }
        }
        match pivot {
            Some((p, k)) if k >= spec.width => e.record(args[p], &self.free_role(p)),
            Some((p, k)) if spec.pivot_free(p, k) != 0 => {
                let m = e.ic(spec.pivot_free(p, k) as i64);
                let h = e.iand(args[p], m);
                e.record(h, &self.high_role(p))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn high(k: u32) -> u64 {
        if k >= 64 {
            !0
        } else if k == 0 {
            0
        } else {
            !0u64 << (64 - k)
        }
    }

    proptest! {
        #[test]
        fn scaled_equations_are_solved_exactly(a in any::<u64>(), x in any::<u64>(), h in any::<u64>(), shift in 0u32..64) {
            let a = a << shift;
            let v = a.wrapping_mul(x);
            let (base, k) = solve_scaled(a, v).expect("v = a·x has a solution");
            prop_assert_eq!(k, a.trailing_zeros().min(64));
            // Every choice of the k high bits is a solution, and x's own high bits give x.
            let hi = high(k);
            prop_assert_eq!(a.wrapping_mul(base | (h & hi)), v);
            prop_assert_eq!(base | (x & hi), x);
            // An odd v has no solution for an even a.
            if k > 0 {
                prop_assert_eq!(solve_scaled(a, v | 1), None);
            }
            // Narrow words: the same arithmetic.
            let (a8, x8) = ((a >> 56) as u8 | 1, x as u8);
            let (b8, k8) = solve_scaled(a8, a8.wrapping_mul(x8)).expect("odd");
            prop_assert_eq!((b8, k8), (x8, 0));
        }
    }
}
