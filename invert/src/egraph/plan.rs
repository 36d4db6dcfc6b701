//! Plans: a straight-line function body as a hash-consed list of instructions, and a simulation
//! of how the reorientation would invert it.
//!
//! A [`Plan`] is what isolation proposes for a function body before anything is written into a
//! module: the same instructions as IR (constants, primitives, calls), plus the three isolation
//! helpers ([`PKind::Sq`], [`PKind::Given`], [`PKind::Root`]) that become calls of generated
//! helper functions when the plan is installed ([`super::helpers`]).
//!
//! [`simulate`] runs the reorientation's walk on a plan without emitting anything: outputs are
//! known; going backwards, an instruction with a known result solves its unknown operands (one θ
//! per extra unknown operand of a binary operation); whatever has only known operands is computed
//! forward; and every time a value would be solved twice, or an instruction has nothing left to
//! solve, the reorientation emits a **consistency check** — the checks that make fan-out inverses
//! accept almost no θ. Isolation looks for a plan with no such check. The simulation follows
//! `crate::reorient` (the walk in reverse program order, `propagate_forward` after each step,
//! free inputs read from θ at the end); it counts, it does not need to agree on which operand a
//! rule reads θ for.

use pinv_core::ir::{Const, FuncId, Function, InstKind, Opcode, Type, Value, ValueDef};
use pinv_core::Span;
use std::collections::{HashMap, HashSet};

/// One result of a plan instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PVal {
    pub inst: u32,
    pub idx: u32,
}

/// What a plan instruction does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PKind {
    /// The `i`-th parameter of the function.
    Param(u32),
    Const(Const),
    Prim(Opcode),
    /// A call of a module function.
    Call(FuncId),
    /// `sq x = x * x` (the helper `iso.sq`).
    Sq,
    /// `given(e, p) = e`: `p` is read from θ first when it is unknown. `pivot` says what `p` is.
    Given {
        pivot: String,
    },
    /// A function of one unknown solved numerically: operands `(x, k…)`, the body is
    /// `Plan::roots[i]`.
    Root(usize),
}

/// A plan instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct PInst {
    pub kind: PKind,
    pub args: Vec<PVal>,
    pub tys: Vec<Type>,
    pub span: Span,
}

/// The body of a [`PKind::Root`] helper: a function of `(x, k…)` with one f64 result, `x` its
/// only unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct RootSpec {
    pub body: Plan,
    /// What the helper computes, as an s-expression (for reports and θ roles).
    pub text: String,
}

/// A straight-line body. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub params: Vec<Type>,
    pub insts: Vec<PInst>,
    pub outputs: Vec<PVal>,
    pub roots: Vec<RootSpec>,
}

impl Plan {
    pub fn ty(&self, v: PVal) -> Type {
        self.insts[v.inst as usize].tys[v.idx as usize]
    }

    /// The constant a value is, if it is one.
    pub fn constant(&self, v: PVal) -> Option<Const> {
        match self.insts[v.inst as usize].kind {
            PKind::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Instructions other than parameters and constants.
    pub fn size(&self) -> usize {
        self.insts
            .iter()
            .filter(|i| !matches!(i.kind, PKind::Param(_) | PKind::Const(_)))
            .count()
    }

    /// The plan of a single-block function that returns: one instruction per constant, primitive
    /// and call, in order. `None` for anything else (control flow, inverse-only instructions).
    pub fn from_function(f: &Function) -> Option<Plan> {
        if f.layout.len() != 1 {
            return None;
        }
        let entry = f.entry()?;
        let mut b = PlanBuilder::new(f.sig.params.clone());
        let mut map: HashMap<Value, PVal> = HashMap::new();
        for (i, &p) in f.blocks[entry].params.iter().enumerate() {
            map.insert(p, b.param(i));
        }
        let (&term, body) = f.blocks[entry].insts.split_last()?;
        for &inst in body {
            let data = &f.insts[inst];
            let args: Option<Vec<PVal>> = data
                .kind
                .args()
                .iter()
                .map(|a| map.get(a).copied())
                .collect();
            let args = args?;
            let tys: Vec<Type> = data.results.iter().map(|&r| f.value_type(r)).collect();
            let kind = match &data.kind {
                InstKind::Const(c) => PKind::Const(*c),
                InstKind::Prim { op, .. } => PKind::Prim(*op),
                InstKind::Call { callee, .. } => PKind::Call(*callee),
                _ => return None,
            };
            let inst = b.push(kind, args, tys, data.span);
            for (i, &r) in data.results.iter().enumerate() {
                map.insert(
                    r,
                    PVal {
                        inst,
                        idx: i as u32,
                    },
                );
            }
        }
        let InstKind::Return { args } = &f.insts[term].kind else {
            return None;
        };
        let outputs: Option<Vec<PVal>> = args.iter().map(|a| map.get(a).copied()).collect();
        let mut plan = b.finish();
        plan.outputs = outputs?;
        Some(plan)
    }

    /// The instructions the outputs depend on (transitively), as a mask over `insts`.
    pub fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.insts.len()];
        let mut stack: Vec<u32> = self.outputs.iter().map(|v| v.inst).collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut live[i as usize], true) {
                continue;
            }
            stack.extend(self.insts[i as usize].args.iter().map(|a| a.inst));
        }
        live
    }

    /// This plan without instructions no output depends on (parameters stay).
    pub fn pruned(&self) -> Plan {
        let live = self.live();
        let mut b = PlanBuilder::new(self.params.clone());
        let mut map: HashMap<u32, u32> = HashMap::new();
        for (i, inst) in self.insts.iter().enumerate() {
            if !live[i] && !matches!(inst.kind, PKind::Param(_)) {
                continue;
            }
            let args = inst
                .args
                .iter()
                .map(|a| PVal {
                    inst: map[&a.inst],
                    idx: a.idx,
                })
                .collect();
            let n = b.push(inst.kind.clone(), args, inst.tys.clone(), inst.span);
            map.insert(i as u32, n);
        }
        let mut plan = b.finish();
        plan.roots = self.roots.clone();
        plan.outputs = self
            .outputs
            .iter()
            .map(|o| PVal {
                inst: map[&o.inst],
                idx: o.idx,
            })
            .collect();
        plan
    }
}

/// Builds a plan, hash-consing instructions: the same kind with the same operands is one
/// instruction (as CSE would leave it).
pub struct PlanBuilder {
    plan: Plan,
    cache: HashMap<(PKind, Vec<PVal>), u32>,
}

impl PlanBuilder {
    /// A builder with one parameter instruction per type, in order.
    pub fn new(params: Vec<Type>) -> PlanBuilder {
        let mut b = PlanBuilder {
            plan: Plan {
                params: params.clone(),
                ..Plan::default()
            },
            cache: HashMap::new(),
        };
        for (i, ty) in params.into_iter().enumerate() {
            b.push(
                PKind::Param(i as u32),
                Vec::new(),
                vec![ty],
                Span::default(),
            );
        }
        b
    }

    pub fn param(&self, i: usize) -> PVal {
        PVal {
            inst: i as u32,
            idx: 0,
        }
    }

    /// Appends (or finds) an instruction; returns its index.
    pub fn push(&mut self, kind: PKind, args: Vec<PVal>, tys: Vec<Type>, span: Span) -> u32 {
        let key = (kind, args);
        if let Some(&i) = self.cache.get(&key) {
            return i;
        }
        let i = self.plan.insts.len() as u32;
        self.plan.insts.push(PInst {
            kind: key.0.clone(),
            args: key.1.clone(),
            tys,
            span,
        });
        self.cache.insert(key, i);
        i
    }

    /// A single-result instruction's value.
    pub fn value(&mut self, kind: PKind, args: Vec<PVal>, ty: Type, span: Span) -> PVal {
        let inst = self.push(kind, args, vec![ty], span);
        PVal { inst, idx: 0 }
    }

    pub fn konst(&mut self, c: Const) -> PVal {
        self.value(PKind::Const(c), Vec::new(), c.ty(), Span::default())
    }

    pub fn add_root(&mut self, spec: RootSpec) -> usize {
        self.plan.roots.push(spec);
        self.plan.roots.len() - 1
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Copies value `v` of `from` (and what it depends on) into this plan, mapping `from`'s
    /// parameters through `params`. `memo` maps instructions already copied.
    pub fn copy(
        &mut self,
        from: &Plan,
        v: PVal,
        params: &dyn Fn(u32) -> PVal,
        memo: &mut HashMap<u32, u32>,
    ) -> PVal {
        let inst = &from.insts[v.inst as usize];
        if let PKind::Param(i) = inst.kind {
            return params(i);
        }
        if let Some(&n) = memo.get(&v.inst) {
            return PVal {
                inst: n,
                idx: v.idx,
            };
        }
        let args: Vec<PVal> = inst
            .args
            .clone()
            .into_iter()
            .map(|a| self.copy(from, a, params, memo))
            .collect();
        let kind = match &inst.kind {
            PKind::Root(r) => {
                let spec = from.roots[*r].clone();
                PKind::Root(self.add_root(spec))
            }
            k => k.clone(),
        };
        let n = self.push(kind, args, inst.tys.clone(), inst.span);
        memo.insert(v.inst, n);
        PVal {
            inst: n,
            idx: v.idx,
        }
    }

    pub fn finish(self) -> Plan {
        self.plan
    }
}

/// What the reorientation would do with a plan (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Simulation {
    /// Consistency checks: the fan-out left.
    pub checks: usize,
    /// θ values read by binary rules with two unknown operands, for free results and free
    /// inputs.
    pub thetas: usize,
    /// Path choices (the sign of a square root).
    pub choices: usize,
    /// Values read from θ before the rest is inverted ([`PKind::Given`]).
    pub givens: usize,
    /// Numeric root choices ([`PKind::Root`]).
    pub roots: usize,
    /// θ reads that many θ values fail: a value drawn from all reals for something whose range
    /// is restricted (a square, an exponential…), or later divided by (0 is drawn often).
    pub bad: usize,
}

/// A closed range of f64 values (bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Range {
    lo: f64,
    hi: f64,
}

const FULL: Range = Range {
    lo: f64::NEG_INFINITY,
    hi: f64::INFINITY,
};

impl Range {
    fn restricted(self) -> bool {
        self.lo > f64::NEG_INFINITY || self.hi < f64::INFINITY
    }

    fn of(lo: f64, hi: f64) -> Range {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            FULL
        } else {
            Range { lo, hi }
        }
    }

    fn contains_zero(self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }

    fn mul(self, o: Range) -> Range {
        if (self.lo == 0.0 && self.hi == 0.0) || (o.lo == 0.0 && o.hi == 0.0) {
            return Range { lo: 0.0, hi: 0.0 };
        }
        let ps = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        if ps.iter().any(|p| p.is_nan()) {
            return FULL;
        }
        Range::of(
            ps.iter().copied().fold(f64::INFINITY, f64::min),
            ps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

/// The range of every f64 value of `plan` (parameters range over everything).
fn ranges(plan: &Plan) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let a = |i: usize| out[inst.args[i].inst as usize];
        let r = match &inst.kind {
            PKind::Const(Const::F64(c)) if c.is_finite() => Range { lo: *c, hi: *c },
            PKind::Sq => {
                let x = a(0);
                if x.contains_zero() {
                    Range::of(0.0, f64::max(x.lo * x.lo, x.hi * x.hi))
                } else {
                    x.mul(x)
                }
            }
            PKind::Given { .. } => a(0),
            PKind::Prim(op) => match op {
                Opcode::Fadd => Range::of(a(0).lo + a(1).lo, a(0).hi + a(1).hi),
                Opcode::Fsub => Range::of(a(0).lo - a(1).hi, a(0).hi - a(1).lo),
                Opcode::Fneg => Range::of(-a(0).hi, -a(0).lo),
                Opcode::Fmul => a(0).mul(a(1)),
                Opcode::Fdiv if !a(1).contains_zero() => {
                    a(0).mul(Range::of(1.0 / a(1).hi, 1.0 / a(1).lo))
                }
                Opcode::Exp | Opcode::Cosh | Opcode::Sqrt | Opcode::Fabs => {
                    Range::of(0.0, f64::INFINITY)
                }
                Opcode::Sin | Opcode::Cos | Opcode::Tanh => Range::of(-1.0, 1.0),
                Opcode::Atan | Opcode::Asin => Range::of(-2.0, 2.0),
                Opcode::Acos => Range::of(0.0, 4.0),
                _ => FULL,
            },
            _ => FULL,
        };
        out.push(r);
    }
    out
}

/// Which operand a rule reads θ for when both are unknown, and whether that θ can be any real
/// (`fadd`/`fsub`: the right operand, any real; `fmul`: the left, nonzero; `fdiv`: the divisor,
/// nonzero — as the standard rules do).
fn theta_operand(op: Opcode) -> (usize, bool) {
    match op {
        Opcode::Fmul => (0, false),
        Opcode::Fdiv => (1, false),
        _ => (1, true),
    }
}

/// Simulates the reorientation of `plan` (see the module docs).
pub fn simulate(plan: &Plan) -> Simulation {
    simulate_splits(plan).0
}

/// [`simulate`], and the instructions whose rule would read θ to split the output between two
/// unknown operands.
pub fn simulate_splits(plan: &Plan) -> (Simulation, Vec<u32>) {
    let mut splits = Vec::new();
    let mut sim = Simulation::default();
    let n = plan.insts.len();
    let range = ranges(plan);
    let mut known: HashSet<PVal> = HashSet::new();
    // Values read from θ over all reals.
    let mut real_theta: HashSet<PVal> = HashSet::new();
    let mut computed = vec![false; n];
    let is_known =
        |known: &HashSet<PVal>, v: PVal| known.contains(&v) || plan.constant(v).is_some();
    let is_f64 = |v: PVal| plan.ty(v) == Type::F64;
    let read_real = |sim: &mut Simulation, v: PVal, real_theta: &mut HashSet<PVal>| {
        if is_f64(v) {
            if range[v.inst as usize].restricted() {
                sim.bad += 1;
            }
            real_theta.insert(v);
        }
    };

    // The outputs are known (a value returned twice is checked).
    for &o in &plan.outputs {
        if !known.insert(o) {
            sim.checks += 1;
        }
    }

    let propagate = |known: &mut HashSet<PVal>, computed: &mut Vec<bool>, sim: &mut Simulation| {
        for (i, inst) in plan.insts.iter().enumerate() {
            if computed[i] || matches!(inst.kind, PKind::Param(_) | PKind::Const(_)) {
                continue;
            }
            let results = (0..inst.tys.len()).map(|r| PVal {
                inst: i as u32,
                idx: r as u32,
            });
            if results.clone().all(|r| known.contains(&r)) {
                continue;
            }
            if !inst.args.iter().all(|&a| is_known(known, a)) {
                continue;
            }
            for r in results {
                if !known.insert(r) {
                    sim.checks += 1;
                }
            }
            computed[i] = true;
        }
    };

    propagate(&mut known, &mut computed, &mut sim);
    for i in (0..n).rev() {
        let inst = &plan.insts[i];
        if computed[i] || matches!(inst.kind, PKind::Param(_)) {
            continue;
        }
        let results: Vec<PVal> = (0..inst.tys.len())
            .map(|r| PVal {
                inst: i as u32,
                idx: r as u32,
            })
            .collect();
        if results.iter().all(|r| !known.contains(r)) {
            continue;
        }
        // Results no output depends on are read from θ.
        for &r in &results {
            if known.insert(r) {
                sim.thetas += 1;
                read_real(&mut sim, r, &mut real_theta);
            }
        }
        let unknown: Vec<PVal> = inst
            .args
            .iter()
            .copied()
            .filter(|&a| !is_known(&known, a))
            .collect();
        let solve = |known: &mut HashSet<PVal>, sim: &mut Simulation, a: PVal| {
            if !known.insert(a) {
                sim.checks += 1;
            }
        };
        match &inst.kind {
            PKind::Param(_) => {}
            PKind::Const(_) => sim.checks += 1,
            PKind::Prim(op) => {
                if unknown.is_empty() {
                    sim.checks += 1;
                }
                // What the rule divides by: a known factor, or the output of `k / ?`.
                let z = results[0];
                let divisor = match (op, inst.args.as_slice(), unknown.len()) {
                    (Opcode::Fmul, &[a, b], 1) => Some(if unknown[0] == a { b } else { a }),
                    (Opcode::Fdiv, &[_, b], 1) if unknown[0] == b => Some(z),
                    _ => None,
                };
                let zero = |d: PVal| matches!(plan.constant(d), Some(Const::F64(c)) if c == 0.0);
                if divisor.is_some_and(|d| real_theta.contains(&d) || zero(d)) {
                    sim.bad += 1;
                }
                if distinct(&unknown) >= 2 {
                    splits.push(i as u32);
                    sim.thetas += distinct(&unknown) - 1;
                    let (k, real) = theta_operand(*op);
                    if real {
                        if let Some(&t) = inst.args.get(k) {
                            read_real(&mut sim, t, &mut real_theta);
                        }
                    }
                }
                for a in unknown {
                    solve(&mut known, &mut sim, a);
                }
            }
            PKind::Call(_) => {
                // The callee's inverse gives every operand; known ones are checked against it.
                let known_args = inst.args.len() - unknown.len();
                sim.checks += known_args;
                sim.thetas += distinct(&unknown).saturating_sub(1);
                for a in unknown {
                    solve(&mut known, &mut sim, a);
                }
            }
            PKind::Sq => {
                if unknown.is_empty() {
                    sim.checks += 1;
                } else {
                    sim.choices += 1;
                }
                for a in unknown {
                    solve(&mut known, &mut sim, a);
                }
            }
            PKind::Given { .. } => {
                let (e, p) = (inst.args[0], inst.args[1]);
                if is_known(&known, e) {
                    sim.checks += 1;
                } else {
                    solve(&mut known, &mut sim, e);
                }
                if !is_known(&known, p) {
                    sim.givens += 1;
                    read_real(&mut sim, p, &mut real_theta);
                    solve(&mut known, &mut sim, p);
                }
            }
            PKind::Root(_) => {
                let x = inst.args[0];
                if is_known(&known, x) || unknown.len() != 1 || unknown[0] != x {
                    // The helper's rule does not cover this: its body is inverted with checks.
                    sim.checks += 1 + unknown.len();
                } else {
                    sim.roots += 1;
                }
                for a in unknown {
                    solve(&mut known, &mut sim, a);
                }
            }
        }
        propagate(&mut known, &mut computed, &mut sim);
    }
    // Free inputs are read from θ.
    for (i, _) in plan.params.iter().enumerate() {
        let p = PVal {
            inst: i as u32,
            idx: 0,
        };
        if !known.contains(&p) {
            sim.thetas += 1;
            read_real(&mut sim, p, &mut real_theta);
        }
    }
    (sim, splits)
}

fn distinct(values: &[PVal]) -> usize {
    let set: HashSet<&PVal> = values.iter().collect();
    set.len()
}

/// The value a parameter of `f` is, or `None`.
pub fn param_index(f: &Function, v: Value) -> Option<usize> {
    match f.values[v].def {
        ValueDef::Param(b, i) if Some(b) == f.entry() => Some(i as usize),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::ir::parse_module;

    fn sim(text: &str) -> Simulation {
        let m = parse_module(text).unwrap();
        let (_, f) = m.iter().next().unwrap();
        simulate(&Plan::from_function(f).unwrap())
    }

    #[test]
    fn fan_out_makes_checks() {
        let twice = sim("function %twice(a: f64) -> f64 {
block0(v0: f64):
    v1 = fadd v0, v0
    return v1
}");
        assert_eq!(twice.checks, 1);
        let doubled = sim("function %d(a: f64) -> f64 {
block0(v0: f64):
    v1 = fconst 2.0
    v2 = fmul v1, v0
    return v2
}");
        assert_eq!(doubled, Simulation::default());
        let mul_add = sim("function %m(x: f64, y: f64, z: f64) -> f64 {
block0(v0: f64, v1: f64, v2: f64):
    v3 = fmul v0, v1
    v4 = fadd v3, v2
    return v4
}");
        assert_eq!(mul_add.checks, 0);
        assert_eq!(mul_add.thetas, 2);
    }

    #[test]
    fn shared_subterms_solved_once_are_fine() {
        // a * (y + a + 2) with a = x + y: θ for a, then y, then x.
        let s = sim("function %r(x: f64, y: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fadd v0, v1
    v3 = fadd v1, v2
    v4 = fconst 2.0
    v5 = fadd v3, v4
    v6 = fmul v2, v5
    return v6
}");
        assert_eq!(s.checks, 0, "{s:?}");
        assert_eq!(s.thetas, 1);
        // a * (a + 1): over-determined.
        let s = sim("function %r(x: f64, y: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fadd v0, v1
    v4 = fconst 1.0
    v5 = fadd v2, v4
    v6 = fmul v2, v5
    return v6
}");
        assert_eq!(s.checks, 1, "{s:?}");
    }
}
