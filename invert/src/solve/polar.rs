//! Planar chains: two outputs that are sums of the same polar terms, solved jointly.
//!
//! A planar arm (`arm3`), a two-link manipulator (`kin2` in LANGUAGE.md) or a pendulum returns
//! a point `(x, y)` that is a sum of vectors of fixed length at unknown angles:
//!
//! ```text
//! x = r₁·cos φ₁ + … + rₘ·cos φₘ + cx        y = r₁·sin φ₁ + … + rₘ·sin φₘ + cy
//! ```
//!
//! Inverted one output at a time, every angle is used twice (by a `cos` in `x` and a `sin` in
//! `y`): the walk solves it from one and can only *check* the other, and almost no θ passes
//! (arm3 accepted none). No rewrite by the e-graph rules fixes that (the cure is trigonometry,
//! not algebra), so this module recognises the shape directly on a [`Plan`] and solves the pair
//! of outputs at once:
//!
//! - **Recognition** ([`find_chain`]): two f64 outputs, one a sum (`+`, `−`, unary `−`) of
//!   terms `c·cos φ` and the other of terms `c·sin φ` with the same coefficients and the same
//!   angle values `φ` (after CSE, so `a1 + t2` used by both is one value), plus terms free of
//!   unknowns (`cx`, `cy`). The outputs may be in either
//!   order (`x = l·sin t, y = l·cos t` is the same chain with the outputs swapped).
//! - **The rewritten plan** ([`candidate`]): `(px, py) = polar(r₁, φ₁, …, rₘ, φₘ)` (a two-result
//!   helper, `iso.polar.N`, whose body is the sums above), `x = cx + px`, `y = cy + py`. The
//!   reorientation then meets the helper with both results known and its angles unknown, and
//!   the angles' own expressions (`a2 = a1 + t2`) are inverted as usual.
//! - **The rule** ([`PolarRule`]): known angles' terms are subtracted first; of `n` unknown
//!   angles, all but the last two are read from θ (the plan puts the shortest links first, so
//!   the two longest — the widest reachable annulus — are solved); the last two are the
//!   classic two-link solution (law of cosines, an **elbow choice**), one alone is `atan2` of
//!   the remaining vector. Every solved angle also reads θ **whole turns** `k` (`φ + 2πk`), so
//!   every preimage is reached. A target out of reach is a domain error; the rule checks the
//!   sums at the answer, and the inverse checks the original function (the rewrite regroups
//!   additions, exact only up to rounding).
//! - **The PGF** recomputes, from the same outputs and the same θ-read angles, exactly what the
//!   inverse computes, and records the elbow (the sign of `sin(φ_b − φ_a)`) and the turns that
//!   bring each computed angle nearest to the true one.
//!
//! A link whose length is unknown too (polar coordinates `(r·cos t, r·sin t)`) is solved when it
//! is the only unknown link: `r = ±|(x, y)|` (a sign choice), `t = atan2(±y, ±x) + 2πk`; with its
//! angle known, its length is the projection on that direction.
//!
//! Not covered: a link of unknown length next to other unknown links, a common factor outside
//! the sums (`2·(cos a + cos b)`), mirrored signs (`x = l·sin t, y = −l·cos t`),
//! three-dimensional chains, and angles that occur in two terms. The degenerate target where
//! the two solved links cancel (`r_a = r_b` and the point at their base) has a whole circle of
//! solutions, of which the rule reaches one.

use super::plan::{PInst, PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::{Const, Domain, FuncId, Module, Opcode, Type, Value};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{
    Arg, Callee, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc,
};
use std::collections::HashMap;
use std::f64::consts::TAU;

/// One polar term `±c·trig(φ)` of a sum.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Term {
    phi: PVal,
    /// The coefficient (`None`: 1).
    coef: Option<PVal>,
    neg: bool,
}

/// Two outputs of a plan that form a planar chain (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// Indices into the plan's outputs: the sum of cosines, the sum of sines.
    pub cos_output: usize,
    pub sin_output: usize,
    terms: Vec<Term>,
    /// Summands of each output free of unknowns, with their signs.
    rest_cos: Vec<(bool, PVal)>,
    rest_sin: Vec<(bool, PVal)>,
}

impl Chain {
    /// The number of polar terms (links).
    pub fn links(&self) -> usize {
        self.terms.len()
    }
}

/// The most summands a side of a chain may have: past it, it is not one. A sum whose operands
/// are shared (`a = a + a`, repeated) has exponentially many summands when taken apart.
const MAX_SUMMANDS: usize = 4096;

/// The summands of the f64 sum `v` (through `+`, `−` and unary `−`), with their signs, left
/// to right; `None` past [`MAX_SUMMANDS`]. A work list, not recursion: a long chain of sums
/// costs no native stack.
fn summands(plan: &Plan, v: PVal) -> Option<Vec<(bool, PVal)>> {
    let mut out = Vec::new();
    let mut work = vec![(v, false)];
    while let Some((v, neg)) = work.pop() {
        let inst = &plan.insts[v.inst as usize];
        match (&inst.kind, inst.args.as_slice()) {
            (PKind::Prim(Opcode::Fadd), &[a, b]) => work.extend([(b, neg), (a, neg)]),
            (PKind::Prim(Opcode::Fsub), &[a, b]) => work.extend([(b, !neg), (a, neg)]),
            (PKind::Prim(Opcode::Fneg), &[a]) => work.push((a, !neg)),
            _ => {
                out.push((neg, v));
                if out.len() > MAX_SUMMANDS {
                    return None;
                }
            }
        }
    }
    Some(out)
}

/// `trig(φ)`, `c·trig(φ)` or `trig(φ)·c`: (`φ`, `c`).
fn trig_term(plan: &Plan, v: PVal, trig: Opcode, dep: &[bool]) -> Option<(PVal, Option<PVal>)> {
    let inst = &plan.insts[v.inst as usize];
    let is_trig = |w: PVal| -> Option<PVal> {
        let i = &plan.insts[w.inst as usize];
        match (&i.kind, i.args.as_slice()) {
            (PKind::Prim(op), &[phi]) if *op == trig => Some(phi),
            _ => None,
        }
    };
    if let Some(phi) = is_trig(v) {
        return Some((phi, None));
    }
    match (&inst.kind, inst.args.as_slice()) {
        (PKind::Prim(Opcode::Fmul), &[a, b]) => {
            // Prefer the factor free of unknowns as the coefficient; an unknown one is a link
            // of free length (polar coordinates: `r·cos t`).
            match (is_trig(a), is_trig(b)) {
                (Some(phi), Some(_)) if !dep[b.inst as usize] => Some((phi, Some(b))),
                (_, Some(phi)) => Some((phi, Some(a))),
                (Some(phi), None) => Some((phi, Some(b))),
                (None, None) => None,
            }
        }
        _ => None,
    }
}

/// One side of a chain: the polar terms of `trig` and the summands free of unknowns, or `None`
/// if some summand is neither (or an angle occurs twice).
type Side = (Vec<Term>, Vec<(bool, PVal)>);

fn side(plan: &Plan, output: PVal, trig: Opcode, dep: &[bool]) -> Option<Side> {
    let parts = summands(plan, output)?;
    let mut terms: Vec<Term> = Vec::new();
    let mut rest = Vec::new();
    for (neg, v) in parts {
        if !dep[v.inst as usize] {
            rest.push((neg, v));
            continue;
        }
        let (phi, coef) = trig_term(plan, v, trig, dep)?;
        if terms.iter().any(|t| t.phi == phi) {
            return None;
        }
        terms.push(Term { phi, coef, neg });
    }
    Some((terms, rest))
}

/// Two coefficients that are the same number (the same value, or equal constants).
fn same_coef(plan: &Plan, a: Option<PVal>, b: Option<PVal>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a == b
                || matches!((plan.constant(a), plan.constant(b)),
                    (Some(Const::F64(x)), Some(Const::F64(y))) if x.to_bits() == y.to_bits())
        }
        (Some(c), None) | (None, Some(c)) => plan.constant(c) == Some(Const::F64(1.0)),
    }
}

/// The first pair of outputs of `plan` that forms a planar chain.
pub fn find_chain(plan: &Plan) -> Option<Chain> {
    let dep = plan.depends_on_params();
    let outs = &plan.outputs;
    for i in 0..outs.len() {
        for j in 0..outs.len() {
            if i == j || plan.ty(outs[i]) != Type::F64 || plan.ty(outs[j]) != Type::F64 {
                continue;
            }
            let Some((terms, rest_cos)) = side(plan, outs[i], Opcode::Cos, &dep) else {
                continue;
            };
            let Some((sines, rest_sin)) = side(plan, outs[j], Opcode::Sin, &dep) else {
                continue;
            };
            let matched = terms.len() == sines.len()
                && terms.iter().all(|t| {
                    sines.iter().any(|s| {
                        s.phi == t.phi && s.neg == t.neg && same_coef(plan, s.coef, t.coef)
                    })
                });
            if matched && !terms.is_empty() {
                return Some(Chain {
                    cos_output: i,
                    sin_output: j,
                    terms,
                    rest_cos,
                    rest_sin,
                });
            }
        }
    }
    None
}

/// The plan with `chain`'s two outputs computed by a polar helper, and a description of the
/// chain for reports. `names` are the plan's parameter names.
pub fn candidate(plan: &Plan, chain: &Chain, names: &[String]) -> (Plan, String) {
    let mut b = PlanBuilder::new(plan.params.clone());
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut memo = HashMap::new();
    // Shortest links first: those are read from θ, the two longest are solved.
    let magnitude = |t: &Term| match t.coef.map(|c| plan.constant(c)) {
        None => 1.0,
        Some(Some(Const::F64(c))) => c.abs(),
        Some(_) => f64::INFINITY,
    };
    let mut order: Vec<usize> = (0..chain.terms.len()).collect();
    let solved = order.len().saturating_sub(2);
    order.sort_by(|&a, &b| magnitude(&chain.terms[a]).total_cmp(&magnitude(&chain.terms[b])));
    let (first, last) = order.split_at(solved);
    let mut kept: Vec<usize> = first.to_vec();
    let mut tail = last.to_vec();
    tail.sort();
    kept.extend(tail);

    let mut args = Vec::new();
    let mut angles = Vec::new();
    let mut nonneg = Vec::new();
    let mut span = Span::default();
    let ranges = super::plan::ranges(plan);
    for &k in &kept {
        let t = chain.terms[k];
        nonneg.push(
            !t.neg
                && match t.coef {
                    None => true,
                    Some(c) => ranges[c.inst as usize].lo >= 0.0,
                },
        );
        let r = match t.coef {
            None => b.konst(Const::F64(if t.neg { -1.0 } else { 1.0 })),
            Some(c) => {
                let c = b.copy(plan, c, &ident, &mut memo);
                if t.neg {
                    b.value(
                        PKind::Prim(Opcode::Fneg),
                        vec![c],
                        Type::F64,
                        Span::default(),
                    )
                } else {
                    c
                }
            }
        };
        let phi = b.copy(plan, t.phi, &ident, &mut memo);
        args.push(r);
        args.push(phi);
        angles.push(super::plan::plan_text(plan, names, t.phi, 60));
        if span == Span::default() {
            span = plan.insts[t.phi.inst as usize].span;
        }
    }
    let polar = b.push(
        PKind::Polar {
            angles: angles.clone(),
            nonneg,
        },
        args,
        vec![Type::F64, Type::F64],
        span,
    );
    let mut outputs: Vec<PVal> = Vec::new();
    for (i, &o) in plan.outputs.iter().enumerate() {
        let (rest, idx) = if i == chain.cos_output {
            (&chain.rest_cos, 0)
        } else if i == chain.sin_output {
            (&chain.rest_sin, 1)
        } else {
            outputs.push(b.copy(plan, o, &ident, &mut memo));
            continue;
        };
        let out_span = plan.insts[o.inst as usize].span;
        let terms: Vec<(f64, PVal)> = rest
            .iter()
            .map(|&(neg, v)| (if neg { -1.0 } else { 1.0 }, v))
            .collect();
        let p = PVal { inst: polar, idx };
        outputs.push(b.sum_onto(plan, &terms, p, out_span, &mut memo));
    }
    let mut out = b.finish();
    out.outputs = outputs;
    let describe = format!(
        "outputs {} and {} as a planar chain of {} link(s) at angles {}; θ for {}, solved: {}",
        chain.cos_output,
        chain.sin_output,
        kept.len(),
        angles.join(", "),
        if solved == 0 {
            "none".to_string()
        } else {
            angles[..solved].join(", ")
        },
        angles[solved..].join(", "),
    );
    (out.pruned(), describe)
}

/// The helper's forward semantics on constants, bit for bit as its body computes it.
pub fn eval(args: &[Const]) -> Option<Vec<Const>> {
    use pinv_core::semantics::eval as ev;
    let mut sums: [Option<Const>; 2] = [None, None];
    for pair in args.chunks(2) {
        let &[r, phi] = pair else { return None };
        for (k, trig) in [Opcode::Cos, Opcode::Sin].into_iter().enumerate() {
            let t = ev(trig, &[phi]).ok()?;
            let term = ev(Opcode::Fmul, &[r, t]).ok()?;
            sums[k] = Some(match sums[k] {
                None => term,
                Some(acc) => ev(Opcode::Fadd, &[acc, term]).ok()?,
            });
        }
    }
    Some(vec![sums[0]?, sums[1]?])
}

/// Adds the helper for a [`PKind::Polar`] instruction to `module`, and its rule to `layer`.
pub fn install(
    module: &mut Module,
    layer: &mut Layer,
    inst: &PInst,
    angles: &[String],
    nonneg: &[bool],
) -> FuncId {
    let name = super::helpers::fresh(module, "iso.polar");
    let links = inst.args.len() / 2;
    let mut params = Vec::new();
    let mut names = Vec::new();
    for i in 0..links {
        params.extend([Type::F64, Type::F64]);
        names.extend([format!("r{i}"), format!("phi{i}")]);
    }
    let (mut f, b) =
        super::helpers::new_function(&name, params, vec![Type::F64, Type::F64], names, inst.span);
    let ps = f.blocks[b].params.clone();
    let mut sums: [Option<Value>; 2] = [None, None];
    for pair in ps.chunks(2) {
        for (k, trig) in [Opcode::Cos, Opcode::Sin].into_iter().enumerate() {
            let t = f.ins_prim(b, trig, vec![pair[1]], inst.span);
            let term = f.ins_prim(b, Opcode::Fmul, vec![pair[0], t], inst.span);
            sums[k] = Some(match sums[k] {
                None => term,
                Some(acc) => f.ins_prim(b, Opcode::Fadd, vec![acc, term], inst.span),
            });
        }
    }
    let rets: Vec<Value> = sums.iter().flatten().copied().collect();
    f.ins_return(b, rets, inst.span);
    layer.add(
        Callee::Function(name),
        PolarRule {
            angles: angles.to_vec(),
            nonneg: nonneg.to_vec(),
        },
    );
    super::helpers::add(module, f)
}

// ---------------------------------------------------------------------------------------------
// The rule

const ELBOW: &str = "elbow (0: sin(φb − φa) ≥ 0, 1: < 0)";
const SIGN: &str = "sign of the free length (0: ≥ 0, 1: < 0)";

/// The rule of an `iso.polar.N` helper: see the module docs. Operands are `(r₀, φ₀, r₁, φ₁, …)`;
/// the radii must be known.
#[derive(Debug)]
pub struct PolarRule {
    /// The angles' expressions, for θ roles.
    pub angles: Vec<String>,
    /// Per link, whether its length is never negative (no sign choice for it).
    pub nonneg: Vec<bool>,
}

/// How the rule solves one pattern: which angles are known, read from θ, or solved.
struct Split {
    known: Vec<usize>,
    given: Vec<usize>,
    solved: Vec<usize>,
    /// The one link whose length is unknown too: alone with an unknown angle it is solved in
    /// polar coordinates (a sign choice and whole turns); with a known angle, by projection.
    free_radius: Option<usize>,
}

impl PolarRule {
    /// Whether link `i`'s length is never negative.
    fn nonneg(&self, i: usize) -> bool {
        self.nonneg.get(i).copied().unwrap_or(false)
    }

    fn split(&self, pattern: &Pattern) -> Option<Split> {
        let links = pattern.arity() / 2;
        if pattern.arity() != 2 * links || links != self.angles.len() {
            return None;
        }
        let free: Vec<usize> = (0..links).filter(|&i| !pattern.is_known(2 * i)).collect();
        let (known, unknown): (Vec<usize>, Vec<usize>) =
            (0..links).partition(|&i| pattern.is_known(2 * i + 1));
        match free.as_slice() {
            [] => {
                let cut = unknown.len().saturating_sub(2);
                Some(Split {
                    known,
                    given: unknown[..cut].to_vec(),
                    solved: unknown[cut..].to_vec(),
                    free_radius: None,
                })
            }
            &[i] if unknown.is_empty() || unknown == [i] => Some(Split {
                known: known.into_iter().filter(|&k| k != i).collect(),
                given: Vec::new(),
                solved: unknown,
                free_radius: Some(i),
            }),
            _ => None,
        }
    }

    fn given_role(&self, i: usize) -> String {
        format!(
            "angle {}: chosen as θ (the other links reach the rest)",
            self.angles[i]
        )
    }

    fn turns_role(&self, i: usize) -> String {
        format!("whole turns of the angle {}", self.angles[i])
    }
}

/// `(x, y)` minus `r·(cos φ, sin φ)` for every `(r, φ)` in `terms`, in order.
fn subtract(
    e: &mut Emitter<'_>,
    mut x: Value,
    mut y: Value,
    terms: &[(Value, Value)],
) -> (Value, Value) {
    for &(r, phi) in terms {
        let c = e.op1(Opcode::Cos, phi);
        let s = e.op1(Opcode::Sin, phi);
        let rc = e.fmul(r, c);
        let rs = e.fmul(r, s);
        x = e.fsub(x, rc);
        y = e.fsub(y, rs);
    }
    (x, y)
}

/// The base angles (before whole turns) of the solved links, from the remaining vector
/// `(x, y)`; with two links, `lower` is the elbow (true: `sin(φb − φa) < 0`). Also the
/// condition that the target is within reach.
fn base_angles(
    e: &mut Emitter<'_>,
    x: Value,
    y: Value,
    radii: &[Value],
    lower: Option<Value>,
) -> Result<(Vec<Value>, Value), RuleError> {
    match (radii, lower) {
        (&[r], _) => {
            // r·(cos φ, sin φ) = (x, y).
            let ux = e.fdiv(x, r);
            let uy = e.fdiv(y, r);
            let phi = e.op2(Opcode::Atan2, uy, ux);
            let zero = e.fc(0.0);
            let nonzero = e.fne(r, zero);
            Ok((vec![phi], nonzero))
        }
        (&[ra, rb], Some(lower)) => {
            // |(x, y)|² = ra² + rb² + 2·ra·rb·cos δ, δ = φb − φa.
            let xx = e.fmul(x, x);
            let yy = e.fmul(y, y);
            let d2 = e.fadd(xx, yy);
            let aa = e.fmul(ra, ra);
            let bb = e.fmul(rb, rb);
            let ab = e.fmul(ra, rb);
            let two = e.fc(2.0);
            let den = e.fmul(two, ab);
            let s2 = e.fadd(aa, bb);
            let num = e.fsub(d2, s2);
            let c = e.fdiv(num, den);
            let lo = e.fc(-1.0 - 1e-9);
            let hi = e.fc(1.0 + 1e-9);
            let above = e.fge(c, lo);
            let below = e.fle(c, hi);
            let reach = e.band(above, below);
            let m1 = e.fc(-1.0);
            let p1 = e.fc(1.0);
            let c = e.op2(Opcode::Fmax, c, m1);
            let c = e.op2(Opcode::Fmin, c, p1);
            let cc = e.fmul(c, c);
            let one = e.fc(1.0);
            let rest = e.fsub(one, cc);
            let s = e.op1(Opcode::Sqrt, rest);
            let neg = e.fneg(s);
            let s = e.select(lower, neg, s)?;
            // (x + iy) = e^{iφa}·(ra + rb·e^{iδ}).
            let rbc = e.fmul(rb, c);
            let wx = e.fadd(ra, rbc);
            let wy = e.fmul(rb, s);
            let at = e.op2(Opcode::Atan2, y, x);
            let aw = e.op2(Opcode::Atan2, wy, wx);
            let a = e.fsub(at, aw);
            let delta = e.op2(Opcode::Atan2, s, c);
            let b = e.fadd(a, delta);
            Ok((vec![a, b], reach))
        }
        _ => Err(RuleError::Malformed(
            "a polar helper solves one or two links".to_string(),
        )),
    }
}

/// The whole turns k that bring `base + 2πk` nearest to `phi`.
fn nearest_turns(e: &mut Emitter<'_>, phi: Value, base: Value) -> Value {
    let diff = e.fsub(phi, base);
    let tau = e.fc(TAU);
    let q = e.fdiv(diff, tau);
    e.round_to_i64(q)
}

/// `(r, φ)` with `r·(cos φ, sin φ) = (x, y)` and r of the sign `negative` says: `r = ±|(x, y)|`,
/// `φ = atan2(±y, ±x)` (at the origin, r = 0 and φ = 0).
fn polar_coordinates(
    e: &mut Emitter<'_>,
    x: Value,
    y: Value,
    negative: Value,
) -> Result<(Value, Value), RuleError> {
    let xx = e.fmul(x, x);
    let yy = e.fmul(y, y);
    let d2 = e.fadd(xx, yy);
    let d = e.op1(Opcode::Sqrt, d2);
    let nd = e.fneg(d);
    let r = e.select(negative, nd, d)?;
    let nx = e.fneg(x);
    let ny = e.fneg(y);
    let sx = e.select(negative, nx, x)?;
    let sy = e.select(negative, ny, y)?;
    Ok((r, e.op2(Opcode::Atan2, sy, sx)))
}

/// `base + 2πk`.
fn with_turns(e: &mut Emitter<'_>, base: Value, k: Value) -> Value {
    let kf = e.i_to_f(k);
    let tau = e.fc(TAU);
    let shift = e.fmul(kf, tau);
    e.fadd(base, shift)
}

/// The radii and angles of operands `idx`.
fn pick(values: &[Value], idx: &[usize]) -> Vec<(Value, Value)> {
    idx.iter()
        .map(|&i| (values[2 * i], values[2 * i + 1]))
        .collect()
}

impl InverseRule for PolarRule {
    fn name(&self) -> &str {
        "planar-chain"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        self.split(pattern).is_some()
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let mut thetas = Vec::new();
        let mut checks = vec!["the links' sums at the answer are the outputs".to_string()];
        if let Some(s) = self.split(pattern) {
            for &i in &s.given {
                thetas.push(ThetaDoc::value(Domain::Real, &self.given_role(i)));
            }
            if s.free_radius.is_some_and(|i| !self.nonneg(i)) && s.solved.len() == 1 {
                thetas.push(ThetaDoc::choice(2, SIGN));
            } else if s.solved.len() == 2 {
                thetas.push(ThetaDoc::choice(2, ELBOW));
                checks.insert(0, "the target is within reach of the two links".to_string());
            } else if s.solved.len() == 1 && s.free_radius.is_none() {
                checks.insert(0, "the link's length is not 0".to_string());
            }
            for &i in &s.solved {
                thetas.push(ThetaDoc::value(Domain::Int, &self.turns_role(i)));
            }
        }
        RuleDoc {
            thetas,
            checks,
            exact: false,
            summary: "angles of a planar chain: θ for all but two, the last two by the law of \
                      cosines (elbow choice), + 2πk"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let pattern = Pattern::of(args);
        let split = self
            .split(&pattern)
            .ok_or_else(|| RuleError::Uncovered(pattern.clone()))?;
        let &[x, y] = outputs else {
            return Err(RuleError::Malformed(
                "a polar helper has two outputs".to_string(),
            ));
        };
        // Known operands as they are; unknown angles filled in below.
        let mut vals: Vec<Option<Value>> = args.iter().map(Arg::known).collect();
        let get = |vals: &[Option<Value>], i: usize| -> Result<Value, RuleError> {
            vals[i].ok_or_else(|| RuleError::Malformed("an operand left unsolved".to_string()))
        };
        for &i in &split.given {
            vals[2 * i + 1] = Some(e.theta(Domain::Real, &self.given_role(i))?);
        }
        let mut first: Vec<(Value, Value)> = Vec::new();
        for &i in split.known.iter().chain(&split.given) {
            first.push((get(&vals, 2 * i)?, get(&vals, 2 * i + 1)?));
        }
        let (rx, ry) = subtract(e, x, y, &first);
        if let Some(i) = split.free_radius {
            let (r, phi) = match split.solved.as_slice() {
                // The angle is known: the length is the projection on its direction.
                [] => {
                    let phi = get(&vals, 2 * i + 1)?;
                    let c = e.op1(Opcode::Cos, phi);
                    let s = e.op1(Opcode::Sin, phi);
                    let px = e.fmul(rx, c);
                    let py = e.fmul(ry, s);
                    (e.fadd(px, py), phi)
                }
                _ => {
                    let negative = if self.nonneg(i) {
                        e.bc(false)
                    } else {
                        let c = e.choice(2, SIGN)?;
                        let one = e.ic(1);
                        e.ieq(c, one)
                    };
                    let (r, base) = polar_coordinates(e, rx, ry, negative)?;
                    let k = e.theta(Domain::Int, &self.turns_role(i))?;
                    (r, with_turns(e, base, k))
                }
            };
            vals[2 * i] = Some(r);
            vals[2 * i + 1] = Some(phi);
        } else if !split.solved.is_empty() {
            let radii: Vec<Value> = split
                .solved
                .iter()
                .map(|&i| get(&vals, 2 * i))
                .collect::<Result<_, _>>()?;
            let lower = if split.solved.len() == 2 {
                let c = e.choice(2, ELBOW)?;
                let one = e.ic(1);
                Some(e.ieq(c, one))
            } else {
                None
            };
            let (bases, ok) = base_angles(e, rx, ry, &radii, lower)?;
            e.check(
                ok,
                if split.solved.len() == 2 {
                    "the target is out of reach of the two links θ leaves to solve"
                } else {
                    "a link of length 0 has no angle to solve"
                },
            )?;
            for (&i, base) in split.solved.iter().zip(bases) {
                let k = e.theta(Domain::Int, &self.turns_role(i))?;
                vals[2 * i + 1] = Some(with_turns(e, base, k));
            }
        }
        let out: Vec<Value> = (0..vals.len())
            .map(|i| get(&vals, i))
            .collect::<Result<_, _>>()?;
        // The sums at the answer, as the helper computes them.
        let mut sums: [Option<Value>; 2] = [None, None];
        for pair in out.chunks(2) {
            for (k, trig) in [Opcode::Cos, Opcode::Sin].into_iter().enumerate() {
                let t = e.op1(trig, pair[1]);
                let term = e.fmul(pair[0], t);
                sums[k] = Some(match sums[k] {
                    None => term,
                    Some(acc) => e.fadd(acc, term),
                });
            }
        }
        if let [Some(sx), Some(sy)] = sums {
            e.check_step_equal(sx, x, "the links do not reach x")?;
            e.check_step_equal(sy, y, "the links do not reach y")?;
        }
        Ok(out)
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let split = self
            .split(pattern)
            .ok_or_else(|| RuleError::Uncovered(pattern.clone()))?;
        let &[x, y] = outputs else {
            return Err(RuleError::Malformed(
                "a polar helper has two outputs".to_string(),
            ));
        };
        for &i in &split.given {
            e.record(args[2 * i + 1], &self.given_role(i))?;
        }
        let mut first = pick(args, &split.known);
        first.extend(pick(args, &split.given));
        let (rx, ry) = subtract(e, x, y, &first);
        if let (Some(i), [_]) = (split.free_radius, split.solved.as_slice()) {
            let negative = if self.nonneg(i) {
                e.bc(false)
            } else {
                let negative = e.sign_bit(args[2 * i]);
                let c = e.b_to_i(negative);
                e.record(c, SIGN)?;
                negative
            };
            let (_, base) = polar_coordinates(e, rx, ry, negative)?;
            let k = nearest_turns(e, args[2 * i + 1], base);
            return e.record(k, &self.turns_role(i));
        }
        if split.solved.is_empty() || split.free_radius.is_some() {
            return Ok(());
        }
        let solved = pick(args, &split.solved);
        let radii: Vec<Value> = solved.iter().map(|p| p.0).collect();
        let lower = if let [(_, a), (_, b)] = solved[..] {
            let d = e.fsub(b, a);
            let s = e.op1(Opcode::Sin, d);
            let zero = e.fc(0.0);
            let lower = e.flt(s, zero);
            let c = e.b_to_i(lower);
            e.record(c, ELBOW)?;
            Some(lower)
        } else {
            None
        };
        let (bases, _) = base_angles(e, rx, ry, &radii, lower)?;
        for ((&i, base), (_, phi)) in split.solved.iter().zip(bases).zip(solved) {
            let k = nearest_turns(e, phi, base);
            e.record(k, &self.turns_role(i))?;
        }
        Ok(())
    }
}
