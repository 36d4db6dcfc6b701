//! Plans: a straight-line function body as a hash-consed list of instructions, and a simulation
//! of how the reorientation would invert it.
//!
//! A [`Plan`] is what isolation proposes for a function body before anything is written into a
//! module: the same instructions as IR (constants, primitives, calls), plus the three isolation
//! helpers ([`PKind::Sq`], [`PKind::Given`], [`PKind::Root`], [`PKind::Polar`], [`PKind::Linear`])
//! that become calls of generated
//! helper functions when the plan is installed ([`super::helpers`]).
//!
//! [`simulate`] runs the reorientation's walk (`crate::walk`, the same code) on a plan as a
//! dry run, emitting nothing: outputs are known; going backwards, an instruction with a known
//! result solves its unknown operands (one θ per extra unknown operand of a binary operation);
//! whatever has only known operands is computed forward; and every time a value would be solved
//! twice, or an instruction has nothing left to solve, the reorientation emits a **consistency
//! check** — the checks that make fan-out inverses accept almost no θ. Isolation looks for a plan
//! with no such check. Free inputs are read from θ at the end. The dry run counts; it does not
//! need to agree on which operand a rule reads θ for.

use pinv_core::ir::{Const, FuncId, Function, InstKind, Opcode, Type, Value, ValueDef};
use pinv_core::Span;
use pinv_primitives::rules::f64_arith::fmul_theta_factor;
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
    /// `odds(a, c) = a / (c − a)` (the helper `iso.odds`, see [`super::odds`]).
    Odds,
    /// `given(e, p) = e`: `p` is read from θ first when it is unknown. `pivot` says what `p` is.
    Given {
        pivot: String,
        /// Read from the nonzero reals: zero would make what follows singular.
        nonzero: bool,
        /// A free unknown of a system the helper after it solves (θ by design), not a pivot
        /// chosen so that the others isolate.
        free: bool,
    },
    /// A function of one unknown solved numerically: operands `(x, k…)`, the body is
    /// `Plan::roots[i]`.
    Root(usize),
    /// The two sums of a planar chain, `(Σ rᵢ·cos φᵢ, Σ rᵢ·sin φᵢ)`: operands
    /// `(r₀, φ₀, r₁, φ₁, …)`, two results (the helper `iso.polar.N`, see [`super::polar`]).
    /// `angles` are the angles' expressions, for θ roles.
    Polar {
        angles: Vec<String>,
        /// Per link, whether its length is never negative (a constant, `sqrt`, `exp`…): then
        /// a free length needs no sign choice.
        nonneg: Vec<bool>,
    },
    /// The products of a constant `rows × n` matrix (row-major, f64 bits) with the `n` operands:
    /// `rows` results (the helper `iso.linear.N`, see [`super::linear`]). `atoms` are the
    /// operands' expressions, for θ roles.
    Linear {
        rows: u32,
        matrix: Vec<u64>,
        atoms: Vec<String>,
    },
    /// `(u + v, u·v)`: two results (the helper `iso.sumprod`, see [`super::sum_product`]).
    SumProduct,
    /// `(a / b, a % b)` of i64s: two results (the helper `iso.divmod`, see [`super::divmod`]).
    DivMod,
    /// A nonlinear system solved by Newton's method: operands the system's unknowns, results
    /// its outputs; the body is `Plan::roots[i]` (the helper `iso.newton.N`, see
    /// [`super::newton`]).
    Newton(usize),
    /// `atan2(sin e, cos e)` (the helper `iso.wrap`, see [`super::wrap`]).
    Wrap,
    /// i64 values GF(2)-linear in the operands: one result per row word of the matrix (the
    /// helper `iso.bits.N`, see [`super::bits`]).
    Bits(super::bits::BitsSpec),
    /// An i64 sum `Σ aⱼ·uⱼ + b` mod 2⁶⁴ of the operands (the helper `iso.affine.N`, see
    /// [`super::modular`]).
    Affine(super::modular::AffineSpec),
    /// `A·u + b` for a run-time `n × n` matrix: operands `(A row-major, b, u)`, `n` results
    /// (the helper `iso.linrt.N`, see [`super::linear_rt`]).
    LinearRt {
        n: u32,
    },
}

/// A rewritten body.
#[derive(Clone, Debug)]
pub enum Body {
    /// A straight-line function: its new body.
    Straight(Plan),
    /// A function with control flow, in closed block form, with new bodies for some of its
    /// blocks that end in `return`.
    Blocks {
        closed: pinv_core::ir::Function,
        plans: Vec<(pinv_core::ir::Block, Plan)>,
    },
}

/// A plan instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct PInst {
    pub kind: PKind,
    pub args: Vec<PVal>,
    pub tys: Vec<Type>,
    pub span: Span,
}

/// The body of a [`PKind::Root`] helper: a function of `(x, k…)` with one result, `x` its only
/// unknown (an f64 with an f64 result, or an i64 with an i64 or f64 result).
#[derive(Clone, Debug, PartialEq)]
pub struct RootSpec {
    pub body: Plan,
    /// What the helper computes, as an s-expression (for reports and θ roles).
    pub text: String,
    /// The same term as the program writes it, over the same parameters, where `body` is a
    /// rewrite of it (`None` where the isolation has no such term). A rewrite is equal only up
    /// to rounding, which can be all of it: `p + (p / p − min(p, p))` is 0 or 2 where p ≈ 10¹⁶,
    /// its rewrite `p · (1/p + 0)` is 1 everywhere. A start point that gives y through this
    /// term is a root too, so the PGF's θ (x itself) always gives x back.
    pub written: Option<Plan>,
}

impl RootSpec {
    /// The type of the unknown.
    pub fn unknown_ty(&self) -> Type {
        self.body.params.first().copied().unwrap_or(Type::F64)
    }

    /// The type of the helper's result.
    pub fn result_ty(&self) -> Type {
        self.body
            .outputs
            .first()
            .and_then(|v| {
                self.body
                    .insts
                    .get(v.inst as usize)?
                    .tys
                    .get(v.idx as usize)
            })
            .copied()
            .unwrap_or(Type::F64)
    }
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
    /// The results of instruction `i`.
    pub fn results(&self, i: usize) -> impl Iterator<Item = PVal> + Clone {
        (0..self.insts[i].tys.len()).map(move |r| PVal {
            inst: i as u32,
            idx: r as u32,
        })
    }

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

    /// The one value `v` has apart from NaN where it is an operation of a value with itself
    /// (`a − a`: [`pinv_core::ir::Opcode::with_itself`]).
    pub fn with_itself(&self, v: PVal) -> Option<Const> {
        let inst = &self.insts[v.inst as usize];
        match (&inst.kind, inst.args.as_slice()) {
            (PKind::Prim(op), [a, b]) if a == b => op.with_itself(),
            _ => None,
        }
    }

    /// The operations of a value with itself whose operand has no other use (`q + (p − p)`),
    /// which the reorientation takes as known: the value they have ([`Plan::with_itself`]).
    /// Where the operand is used elsewhere it is solved there, and the operation is left to
    /// the rules.
    pub fn alone_with_itself(&self) -> HashSet<PVal> {
        let mut selves = Vec::new();
        let mut other: HashSet<PVal> = self.outputs.iter().copied().collect();
        for (i, inst) in self.insts.iter().enumerate() {
            let v = PVal {
                inst: i as u32,
                idx: 0,
            };
            match self.with_itself(v) {
                Some(_) => selves.push(v),
                None => other.extend(inst.args.iter().copied()),
            }
        }
        selves.retain(|v| !other.contains(&self.insts[v.inst as usize].args[0]));
        selves.into_iter().collect()
    }

    /// Per instruction, whether its value depends on a parameter (an unknown).
    pub fn depends_on_params(&self) -> Vec<bool> {
        let mut dep: Vec<bool> = Vec::with_capacity(self.insts.len());
        for inst in &self.insts {
            let d = matches!(inst.kind, PKind::Param(_))
                || inst.args.iter().any(|a| dep[a.inst as usize]);
            dep.push(d);
        }
        dep
    }

    /// Per instruction, the parameters it depends on: a bit per parameter (the 64th stands
    /// for every parameter past 63).
    pub fn param_masks(&self) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::with_capacity(self.insts.len());
        for inst in &self.insts {
            let d = match inst.kind {
                PKind::Param(p) => 1u64 << p.min(63),
                _ => inst.args.iter().fold(0, |d, a| d | out[a.inst as usize]),
            };
            out.push(d);
        }
        out
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
        Plan::from_block(f, f.entry()?)
    }

    /// The plan of one block that ends in `return`, `jump` or `brif` and uses only its own
    /// parameters and results (a block in closed form): a function from its parameters to the
    /// returned values, to the jump's arguments, or to the values a `brif` uses
    /// ([`branch_values`]).
    pub fn from_block(f: &Function, block: pinv_core::ir::Block) -> Option<Plan> {
        let params: Vec<Type> = f.blocks[block]
            .params
            .iter()
            .map(|&p| f.value_type(p))
            .collect();
        let mut b = PlanBuilder::new(params);
        let mut map: HashMap<Value, PVal> = HashMap::new();
        for (i, &p) in f.blocks[block].params.iter().enumerate() {
            map.insert(p, b.param(i));
        }
        let (&term, body) = f.blocks[block].insts.split_last()?;
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
        let args: Vec<Value> = match &f.insts[term].kind {
            InstKind::Return { args } => args.to_vec(),
            InstKind::Jump { dest } => dest.args.to_vec(),
            kind @ InstKind::Brif { .. } => branch_values(kind),
            _ => return None,
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

/// The values a `brif` uses, each once, in order: its condition, then its `then` side's
/// arguments, then its `else` side's. A value passed to both sides is one output of a block's
/// plan, not two equal ones (which a solver would take for two equations).
pub fn branch_values(kind: &InstKind) -> Vec<Value> {
    let mut out = Vec::new();
    if let InstKind::Brif {
        cond,
        then_dest,
        else_dest,
    } = kind
    {
        for &v in std::iter::once(cond)
            .chain(&then_dest.args)
            .chain(&else_dest.args)
        {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Folds the values below `root` bottom-up, each once: `operands(v)` are the values v's result
/// is made from, and `make(v, done)` makes it from theirs in `done` (or gives up with `None`,
/// which ends the fold). A work list, so a DAG of shared operands costs its values, not its
/// exponentially many paths, and a long chain costs no native stack.
pub(super) fn fold_dag<T>(
    root: PVal,
    operands: impl Fn(PVal) -> Vec<PVal>,
    mut make: impl FnMut(PVal, &HashMap<PVal, T>) -> Option<T>,
) -> Option<T> {
    let mut done: HashMap<PVal, T> = HashMap::new();
    let mut work = vec![(root, false)];
    while let Some((v, ready)) = work.pop() {
        if done.contains_key(&v) {
            continue;
        }
        let below = operands(v);
        if !ready && !below.is_empty() {
            work.push((v, true));
            work.extend(
                below
                    .into_iter()
                    .filter(|o| !done.contains_key(o))
                    .map(|o| (o, false)),
            );
            continue;
        }
        let made = make(v, &done)?;
        done.insert(v, made);
    }
    done.remove(&root)
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
    /// parameters through `params`. `memo` maps instructions already copied. The walk keeps its
    /// own stack (a post-order, arguments left to right, as a recursive walk would go), so a
    /// chain as long as the program costs no call stack.
    pub fn copy(
        &mut self,
        from: &Plan,
        v: PVal,
        params: &dyn Fn(u32) -> PVal,
        memo: &mut HashMap<u32, u32>,
    ) -> PVal {
        let pending = |i: u32, memo: &HashMap<u32, u32>| {
            !matches!(from.insts[i as usize].kind, PKind::Param(_)) && !memo.contains_key(&i)
        };
        // (instruction, whether its arguments are copied already)
        let mut stack: Vec<(u32, bool)> = vec![(v.inst, false)];
        while let Some((i, ready)) = stack.pop() {
            if !pending(i, memo) {
                continue;
            }
            let inst = &from.insts[i as usize];
            if !ready {
                stack.push((i, true));
                for a in inst.args.iter().rev() {
                    if pending(a.inst, memo) {
                        stack.push((a.inst, false));
                    }
                }
                continue;
            }
            let args: Vec<PVal> = inst
                .args
                .iter()
                .map(|&a| Self::copied(from, a, params, memo))
                .collect();
            let kind = match &inst.kind {
                PKind::Root(r) => {
                    let spec = from.roots[*r].clone();
                    PKind::Root(self.add_root(spec))
                }
                PKind::Newton(r) => {
                    let spec = from.roots[*r].clone();
                    PKind::Newton(self.add_root(spec))
                }
                k => k.clone(),
            };
            let n = self.push(kind, args, inst.tys.clone(), inst.span);
            memo.insert(i, n);
        }
        Self::copied(from, v, params, memo)
    }

    /// What value `a` of `from` is in this plan, once [`PlanBuilder::copy`] has copied it.
    fn copied(
        from: &Plan,
        a: PVal,
        params: &dyn Fn(u32) -> PVal,
        memo: &HashMap<u32, u32>,
    ) -> PVal {
        if let PKind::Param(i) = from.insts[a.inst as usize].kind {
            return params(i);
        }
        PVal {
            inst: memo.get(&a.inst).copied().unwrap_or(a.inst),
            idx: a.idx,
        }
    }

    /// `from`'s outputs in this plan: output `replaced[r]` is result `r` of helper instruction
    /// `helper`, every other output is copied (parameters as they are).
    pub fn outputs_replacing(
        &mut self,
        from: &Plan,
        replaced: &[usize],
        helper: u32,
        memo: &mut HashMap<u32, u32>,
    ) -> Vec<PVal> {
        let ident = |p: u32| PVal { inst: p, idx: 0 };
        (0..from.outputs.len())
            .map(|i| match replaced.iter().position(|&k| k == i) {
                Some(r) => PVal {
                    inst: helper,
                    idx: r as u32,
                },
                None => self.copy(from, from.outputs[i], &ident, memo),
            })
            .collect()
    }

    /// `c₁·v₁ + … + cₖ·vₖ + last`, with the values `vᵢ` copied from `from` (parameters as
    /// they are): the known part of an output, plus what a helper computes. A coefficient of
    /// ±1 adds or subtracts; others multiply first.
    pub fn sum_onto(
        &mut self,
        from: &Plan,
        terms: &[(f64, PVal)],
        last: PVal,
        span: Span,
        memo: &mut HashMap<u32, u32>,
    ) -> PVal {
        let ident = |p: u32| PVal { inst: p, idx: 0 };
        let mut acc: Option<PVal> = None;
        let f64_op = |b: &mut PlanBuilder, op: Opcode, args: Vec<PVal>| {
            b.value(PKind::Prim(op), args, Type::F64, span)
        };
        for &(c, v) in terms {
            let v = self.copy(from, v, &ident, memo);
            let (op, term) = match c {
                1.0 => (Opcode::Fadd, v),
                -1.0 => (Opcode::Fsub, v),
                _ => {
                    let k = self.konst(Const::F64(c));
                    (Opcode::Fadd, f64_op(self, Opcode::Fmul, vec![k, v]))
                }
            };
            acc = Some(match (acc, op) {
                (Some(a), op) => f64_op(self, op, vec![a, term]),
                (None, Opcode::Fsub) => f64_op(self, Opcode::Fneg, vec![term]),
                (None, _) => term,
            });
        }
        match acc {
            None => last,
            Some(a) => f64_op(self, Opcode::Fadd, vec![a, last]),
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

/// A closed range of f64 values (bounds may be infinite). NaN is not tracked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

pub const FULL: Range = Range {
    lo: f64::NEG_INFINITY,
    hi: f64::INFINITY,
};

impl Range {
    fn of(lo: f64, hi: f64) -> Range {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            FULL
        } else {
            Range { lo, hi }
        }
    }

    fn point(c: f64) -> Range {
        Range::of(c, c)
    }

    /// Whether every value of `self` is in `o`.
    pub fn within(self, o: Range) -> bool {
        o.lo <= self.lo && self.hi <= o.hi
    }

    fn contains_zero(self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }

    fn add(self, o: Range) -> Range {
        Range::of(self.lo + o.lo, self.hi + o.hi)
    }

    fn neg(self) -> Range {
        Range::of(-self.hi, -self.lo)
    }

    fn sub(self, o: Range) -> Range {
        self.add(o.neg())
    }

    fn mul(self, o: Range) -> Range {
        if self == Range::point(0.0) || o == Range::point(0.0) {
            return Range::point(0.0);
        }
        // Bounds multiply with 0 · ∞ = 0 (the bound is approached, never reached).
        let m = |a: f64, b: f64| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
        let ps = [
            m(self.lo, o.lo),
            m(self.lo, o.hi),
            m(self.hi, o.lo),
            m(self.hi, o.hi),
        ];
        Range::of(
            ps.iter().copied().fold(f64::INFINITY, f64::min),
            ps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }

    fn div(self, o: Range) -> Range {
        if o.contains_zero() {
            FULL
        } else {
            self.mul(Range::of(1.0 / o.hi, 1.0 / o.lo))
        }
    }

    fn sq(self) -> Range {
        if self.contains_zero() {
            Range::of(0.0, f64::max(self.lo * self.lo, self.hi * self.hi))
        } else {
            self.mul(self)
        }
    }

    fn nonneg() -> Range {
        Range::of(0.0, f64::INFINITY)
    }
}

/// The range of an instruction's (first) result given its operands' ranges.
fn forward_range(kind: &PKind, a: &[Range], konst: Option<Const>) -> Range {
    match kind {
        PKind::Const(_) => match konst {
            Some(Const::F64(c)) if c.is_finite() => Range::point(c),
            _ => FULL,
        },
        PKind::Sq => a[0].sq(),
        PKind::Odds => a[0].div(a[1].sub(a[0])),
        PKind::Given { .. } => a[0],
        PKind::Prim(op) => match op {
            Opcode::Fadd => a[0].add(a[1]),
            Opcode::Fsub => a[0].sub(a[1]),
            Opcode::Fneg => a[0].neg(),
            Opcode::Fmul => a[0].mul(a[1]),
            Opcode::Fdiv => a[0].div(a[1]),
            Opcode::Exp => Range::of(a[0].lo.exp(), a[0].hi.exp()),
            Opcode::Sqrt => Range::of(a[0].lo.max(0.0).sqrt(), a[0].hi.max(0.0).sqrt()),
            Opcode::Cosh | Opcode::Fabs => Range::nonneg(),
            Opcode::Sin | Opcode::Cos | Opcode::Tanh => Range::of(-1.0, 1.0),
            Opcode::Atan | Opcode::Asin => Range::of(-2.0, 2.0),
            Opcode::Acos => Range::of(0.0, 4.0),
            _ => FULL,
        },
        _ => FULL,
    }
}

/// The bits of an i64 instruction's result `idx` known to be zero, given its operands' known
/// zeros: the i64 counterpart of [`forward_range`]. 0 where nothing is known.
/// `count` is the constant shift count, when the second operand is one.
fn forward_zeros(kind: &PKind, a: &[u64], count: Option<u32>, idx: u32) -> u64 {
    let low = |k: u32| if k >= 64 { !0 } else { (1u64 << k) - 1 };
    let count_of = |k: u64| (!k).trailing_zeros().min(64);
    match kind {
        PKind::Const(Const::I64(c)) => !(*c as u64),
        PKind::Prim(op) => match (op, a) {
            (Opcode::Iand, &[x, y]) => x | y,
            (Opcode::Ior | Opcode::Ixor, &[x, y]) => x & y,
            (Opcode::Ishl, &[x, _]) => match count {
                Some(k) => (x << k) | low(k),
                None => 0,
            },
            (Opcode::Ishr, &[x, _]) => match count {
                Some(k) => ((x as i64) >> k) as u64,
                None => 0,
            },
            (Opcode::Imul, &[x, y]) => low(count_of(x) + count_of(y)),
            (Opcode::Iadd | Opcode::Isub, &[x, y]) => low(count_of(x).min(count_of(y))),
            _ => 0,
        },
        PKind::Bits(spec) => spec.known_zeros(idx as usize),
        PKind::Affine(spec) => spec.known_zeros(),
        _ => 0,
    }
}

/// The constant count of a shift (modulo 64).
fn shift_count(plan: &Plan, inst: &PInst) -> Option<u32> {
    match plan.constant(*inst.args.get(1)?) {
        Some(Const::I64(k)) => Some((k & 63) as u32),
        _ => None,
    }
}

/// The known zero bits of `plan`'s i64 values over all inputs, per instruction and result.
pub fn known_zeros(plan: &Plan) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let a: Vec<u64> = inst
            .args
            .iter()
            .map(|v| out[v.inst as usize][v.idx as usize])
            .collect();
        let r = (0..inst.tys.len() as u32)
            .map(|idx| match inst.tys[idx as usize] {
                Type::I64 => forward_zeros(&inst.kind, &a, shift_count(plan, inst), idx),
                _ => 0,
            })
            .collect();
        out.push(r);
    }
    out
}

/// The ranges of the f64 values of `plan` over all inputs.
pub fn ranges(plan: &Plan) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::with_capacity(plan.insts.len());
    for (i, inst) in plan.insts.iter().enumerate() {
        let a: Vec<Range> = inst.args.iter().map(|v| out[v.inst as usize]).collect();
        // `p − p` ranges as the constant it is ([`Plan::with_itself`]).
        let itself = plan.with_itself(PVal {
            inst: i as u32,
            idx: 0,
        });
        out.push(match (&inst.kind, itself) {
            (PKind::Const(c), _) => forward_range(&inst.kind, &a, Some(*c)),
            (_, Some(c)) => forward_range(&PKind::Const(c), &a, Some(c)),
            (kind, None) => forward_range(kind, &a, None),
        });
    }
    out
}

/// The range of the unknown operand `k` an instruction's rule solves, from the output's range
/// and the other operands' ranges (as the inverse has them).
fn solved_range(kind: &PKind, z: Range, a: &[Range], k: usize) -> Range {
    match (kind, k) {
        (PKind::Prim(Opcode::Fadd), 0) => z.sub(a[1]),
        (PKind::Prim(Opcode::Fadd), _) => z.sub(a[0]),
        (PKind::Prim(Opcode::Fsub), 0) => z.add(a[1]),
        (PKind::Prim(Opcode::Fsub), _) => a[0].sub(z),
        (PKind::Prim(Opcode::Fmul), 0) => z.div(a[1]),
        (PKind::Prim(Opcode::Fmul), _) => z.div(a[0]),
        (PKind::Prim(Opcode::Fdiv), 0) => z.mul(a[1]),
        (PKind::Prim(Opcode::Fdiv), _) => a[0].div(z),
        (PKind::Prim(Opcode::Fneg), _) => z.neg(),
        (PKind::Prim(Opcode::Exp), _) if z.lo > 0.0 => Range::of(z.lo.ln(), z.hi.ln()),
        (PKind::Prim(Opcode::Sqrt), _) if z.lo >= 0.0 => Range::of(z.lo * z.lo, z.hi * z.hi),
        (PKind::Sq, _) if z.hi >= 0.0 => Range::of(-z.hi.sqrt(), z.hi.sqrt()),
        // a = c·q / (1 + q) (the rule solves `a` only: `c` is a constant).
        (PKind::Odds, 0) => a[1].mul(z).div(Range::point(1.0).add(z)),
        (PKind::Given { .. }, 0) => z,
        _ => FULL,
    }
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

/// Which factor of a product of two unknowns the `fmul` rule reads θ for, from the factors'
/// forward ranges, and whether it draws it so that the partner (z over it) stays in the
/// partner's range: as the rule decides ([`fmul_theta_factor`]).
fn fmul_theta_operand(a: Range, b: Range) -> (usize, bool) {
    let bounded = |r: Range| (r.lo.is_finite() || r.hi.is_finite()).then_some((r.lo, r.hi));
    let (k, partner) = fmul_theta_factor(bounded(a), bounded(b));
    (k, partner.is_some())
}

/// Simulates the reorientation of `plan` (see the module docs).
pub fn simulate(plan: &Plan) -> Simulation {
    simulate_splits(plan).0
}

/// [`simulate`], and the instructions whose rule would read θ to split the output between two
/// unknown operands.
///
/// Besides counting checks and θ, it follows the **range** of every value as the inverse
/// computes it (outputs range over the function's image, θ over its domain, solved operands
/// over what the rule computes from those): a step that inverts an operation on a value whose
/// range is not inside the operation's image (given the operands the inverse already knows)
/// fails for some θ — counted in [`Simulation::bad`], as is a divisor drawn from all reals
/// (samplers draw 0 often) or a constant 0 factor.
pub fn simulate_splits(plan: &Plan) -> (Simulation, Vec<u32>) {
    let mut dry = DryRun {
        plan,
        alone: plan.alone_with_itself(),
        fwd: ranges(plan),
        fwd_zeros: known_zeros(plan),
        known: HashSet::new(),
        zeros: HashMap::new(),
        inv: HashMap::new(),
        real_theta: HashSet::new(),
        computed: vec![false; plan.insts.len()],
        inverted: vec![false; plan.insts.len()],
        sim: Simulation::default(),
        splits: Vec::new(),
    };
    // The outputs are known (a value returned twice is checked); they range over the image.
    for &o in &plan.outputs {
        if !dry.known.insert(o) {
            dry.sim.checks += 1;
        }
        dry.inv.insert(o, dry.fwd[o.inst as usize]);
        dry.zeros
            .insert(o, dry.fwd_zeros[o.inst as usize][o.idx as usize]);
    }
    let body: Vec<usize> = (0..plan.insts.len()).collect();
    match crate::walk::walk(&mut dry, &body) {
        Ok(()) => {}
        Err(never) => match never {},
    }
    let DryRun {
        mut sim,
        splits,
        known,
        computed,
        inverted,
        ..
    } = dry;
    // A value a step solved whose own instruction the walk had passed before (its results were
    // not known yet: it comes before a deferred comparison) is neither inverted nor computed:
    // only the final check reconciles it with its operands, a consistency check in effect.
    for (i, inst) in plan.insts.iter().enumerate() {
        let reached = plan.results(i).any(|r| known.contains(&r));
        let instruction = !matches!(inst.kind, PKind::Param(_) | PKind::Const(_));
        if instruction && reached && !computed[i] && !inverted[i] {
            sim.checks += 1;
        }
    }
    // Free inputs are read from θ.
    for (i, _) in plan.params.iter().enumerate() {
        let p = PVal {
            inst: i as u32,
            idx: 0,
        };
        if !known.contains(&p) {
            sim.thetas += 1;
        }
    }
    (sim, splits)
}

/// The dry run of the inversion walk (`crate::walk`) over a plan: what each step would read
/// and check, and the range of every value as the inverse computes it. See [`simulate_splits`].
struct DryRun<'p> {
    plan: &'p Plan,
    /// [`Plan::alone_with_itself`].
    alone: HashSet<PVal>,
    /// The range of every value as the forward code computes it.
    fwd: Vec<Range>,
    /// The known zero bits of every i64 value as the forward code computes it.
    fwd_zeros: Vec<Vec<u64>>,
    known: HashSet<PVal>,
    /// The known zero bits of each known i64 value as the inverse computes it.
    zeros: HashMap<PVal, u64>,
    /// The range of each known f64 value as the inverse computes it.
    inv: HashMap<PVal, Range>,
    /// Values read from θ over all reals.
    real_theta: HashSet<PVal>,
    computed: Vec<bool>,
    /// The instructions the walk inverted (it passes over one whose results are not known).
    inverted: Vec<bool>,
    sim: Simulation,
    splits: Vec<u32>,
}

impl DryRun<'_> {
    /// The unknown integers and bools that `v` is computed from alone, through primitives
    /// (`(n as f64) * 0.5`), or `None` if it depends on an unknown f64 input or anything else.
    /// As the reorientation's `discrete_leaves`.
    fn discrete_leaves(&self, v: PVal) -> Option<Vec<PVal>> {
        const MOST: usize = 32;
        let mut leaves = Vec::new();
        let mut work = vec![v];
        let mut seen = HashSet::new();
        while let Some(x) = work.pop() {
            if !seen.insert(x) || self.known.contains(&x) {
                continue;
            }
            if seen.len() > MOST {
                return None;
            }
            let inst = &self.plan.insts[x.inst as usize];
            if x != v && self.plan.ty(x) != Type::F64 {
                // A 0 or 1 from a bool: the bool is the smaller domain to draw from.
                match (&inst.kind, inst.args.as_slice()) {
                    (PKind::Prim(Opcode::BoolToI64), &[b]) => work.push(b),
                    _ => leaves.push(x),
                }
                continue;
            }
            match &inst.kind {
                PKind::Const(_) => {}
                PKind::Prim(_) => work.extend(inst.args.iter().copied()),
                _ => return None,
            }
        }
        (!leaves.is_empty()).then_some(leaves)
    }
}

fn is_known(plan: &Plan, alone: &HashSet<PVal>, known: &HashSet<PVal>, v: PVal) -> bool {
    known.contains(&v) || plan.constant(v).is_some() || alone.contains(&v)
}

fn range_of(plan: &Plan, alone: &HashSet<PVal>, inv: &HashMap<PVal, Range>, v: PVal) -> Range {
    let itself = || plan.with_itself(v).filter(|_| alone.contains(&v));
    match plan.constant(v).or_else(itself) {
        Some(Const::F64(c)) if c.is_finite() => Range::point(c),
        _ => inv.get(&v).copied().unwrap_or(FULL),
    }
}

fn zeros_of(plan: &Plan, zeros: &HashMap<PVal, u64>, v: PVal) -> u64 {
    match plan.constant(v) {
        Some(Const::I64(c)) => !(c as u64),
        _ => zeros.get(&v).copied().unwrap_or(0),
    }
}

impl crate::walk::Steps for DryRun<'_> {
    type Inst = usize;
    type Value = PVal;
    type Error = std::convert::Infallible;

    fn args(&self, i: usize) -> Vec<PVal> {
        self.plan.insts[i].args.clone()
    }

    fn results(&self, i: usize) -> Vec<PVal> {
        self.plan.results(i).collect()
    }

    fn is_known(&self, v: PVal) -> bool {
        is_known(self.plan, &self.alone, &self.known, v)
    }

    fn is_computed(&self, i: usize) -> bool {
        self.computed[i] || matches!(self.plan.insts[i].kind, PKind::Param(_))
    }

    fn is_comparison(&self, i: usize) -> bool {
        matches!(self.plan.insts[i].kind,
            PKind::Prim(op) if op.class() == pinv_core::ir::OpClass::Compare)
    }

    fn known_count(&self) -> usize {
        self.known.len()
    }

    /// Computes instruction `i` forward if its operands are known and its results are not.
    fn propagate(&mut self, i: usize) -> Result<bool, Self::Error> {
        let plan = self.plan;
        let inst = &plan.insts[i];
        if self.computed[i] || matches!(inst.kind, PKind::Param(_) | PKind::Const(_)) {
            return Ok(false);
        }
        let results = plan.results(i);
        if results.clone().all(|r| self.known.contains(&r))
            || !inst
                .args
                .iter()
                .all(|&a| is_known(plan, &self.alone, &self.known, a))
        {
            return Ok(false);
        }
        let a: Vec<Range> = inst
            .args
            .iter()
            .map(|&v| range_of(plan, &self.alone, &self.inv, v))
            .collect();
        let r0 = forward_range(&inst.kind, &a, None);
        let z: Vec<u64> = inst
            .args
            .iter()
            .map(|&v| zeros_of(plan, &self.zeros, v))
            .collect();
        for r in results {
            if !self.known.insert(r) {
                self.sim.checks += 1;
            }
            self.inv.insert(r, r0);
            if inst.tys[r.idx as usize] == Type::I64 {
                let rz = forward_zeros(&inst.kind, &z, shift_count(plan, inst), r.idx);
                self.zeros.insert(r, rz);
            }
        }
        self.computed[i] = true;
        Ok(true)
    }

    /// As the reorientation does: before an f64 instruction with several unknown operands, θ
    /// for the integers and bools that some of them are computed from alone.
    fn discrete_first(&mut self, i: usize, unknown: &[PVal]) -> Result<bool, Self::Error> {
        let inst = &self.plan.insts[i];
        let PKind::Prim(op) = inst.kind else {
            return Ok(false);
        };
        // As the reorientation: the one factor of a product whose other is a zero (a constant
        // 0 and `q − q` range as [0, 0]).
        let zero = |b: PVal| self.fwd.get(b.inst as usize) == Some(&Range::point(0.0));
        let free = op == Opcode::Fmul
            && unknown.len() == 1
            && inst.args.iter().any(|&b| b != unknown[0] && zero(b));
        if (unknown.len() < 2 && !free)
            || op.result_type() != Type::F64
            || self.results(i).iter().all(|r| !self.known.contains(r))
        {
            return Ok(false);
        }
        let slices = unknown.iter().map(|&a| self.discrete_leaves(a)).collect();
        let leaves = crate::walk::discrete_choice(slices, free);
        for &leaf in &leaves {
            if self.known.insert(leaf) {
                self.sim.thetas += 1;
                self.inv.insert(leaf, FULL);
            }
        }
        Ok(!leaves.is_empty())
    }

    /// Inverts instruction `i`: counts its θ, checks and failing steps, and solves its operands.
    fn invert(&mut self, i: usize) -> Result<(), Self::Error> {
        let DryRun {
            plan,
            alone,
            fwd,
            fwd_zeros,
            known,
            zeros,
            inv,
            real_theta,
            computed,
            inverted,
            sim,
            splits,
        } = self;
        let plan: &Plan = plan;
        let is_known = |known: &HashSet<PVal>, v: PVal| is_known(plan, alone, known, v);
        let range_of = |inv: &HashMap<PVal, Range>, v: PVal| range_of(plan, alone, inv, v);
        let zeros_of = |zeros: &HashMap<PVal, u64>, v: PVal| zeros_of(plan, zeros, v);

        let inst = &plan.insts[i];
        if computed[i] || matches!(inst.kind, PKind::Param(_)) {
            return Ok(());
        }
        let results: Vec<PVal> = plan.results(i).collect();
        if results.iter().all(|r| !known.contains(r)) {
            return Ok(());
        }
        inverted[i] = true;
        // Results no output depends on are read from θ.
        for &r in &results {
            if known.insert(r) {
                sim.thetas += 1;
                real_theta.insert(r);
                inv.insert(r, FULL);
            }
        }
        let unknown: Vec<PVal> = inst
            .args
            .iter()
            .copied()
            .filter(|&a| !is_known(known, a))
            .collect();
        let z = results[0];
        let rz = range_of(inv, z);
        // The image of the operation given what is known: unknown operands range as forward.
        let image_args: Vec<Range> = inst
            .args
            .iter()
            .map(|&a| {
                if is_known(known, a) {
                    range_of(inv, a)
                } else {
                    fwd[a.inst as usize]
                }
            })
            .collect();
        let image = forward_range(&inst.kind, &image_args, None);
        let f64_out = plan.ty(z) == Type::F64;
        if f64_out && !unknown.is_empty() && !rz.within(image) {
            sim.bad += 1;
        }
        // The same for i64 bits: an output the inverse may have with a bit set that the
        // operation always clears (a θ where a shift or a mask needs zeros) fails for some θ.
        if plan.ty(z) == Type::I64 && !unknown.is_empty() {
            let image_zeros: Vec<u64> = inst
                .args
                .iter()
                .map(|&a| {
                    if is_known(known, a) {
                        zeros_of(zeros, a)
                    } else {
                        fwd_zeros[a.inst as usize][a.idx as usize]
                    }
                })
                .collect();
            let needed = forward_zeros(&inst.kind, &image_zeros, shift_count(plan, inst), z.idx);
            if needed & !zeros_of(zeros, z) != 0 {
                sim.bad += 1;
            }
        }
        // Which operands a helper's rule finds known.
        let pattern_of = |known: &HashSet<PVal>| {
            use pinv_primitives::{Knowledge, Pattern};
            Pattern(
                inst.args
                    .iter()
                    .map(|&a| match is_known(known, a) {
                        true => Knowledge::Known,
                        false => Knowledge::Unknown,
                    })
                    .collect(),
            )
        };
        // θ: the operand a two-unknown binary rule reads θ for.
        let mut theta_for: Option<(PVal, bool)> = None;
        // A product's factor whose partner keeps one sign is drawn so that the partner, z over
        // it, stays in its range: both range as forward.
        let mut within_partner = false;
        match &inst.kind {
            PKind::Param(_) => {}
            PKind::Const(_) => sim.checks += 1,
            PKind::Prim(op) => {
                // A comparison of `p − p` (0 or NaN) decides which of the two it is: a choice
                // where both give its result, not a check (`Reorienter::value_or_nan`).
                let decides_itself = op.class() == pinv_core::ir::OpClass::Compare
                    && inst.args.iter().any(|&a| {
                        alone.contains(&a)
                            && matches!(plan.insts[a.inst as usize].kind,
                                PKind::Prim(o) if o.nan_with_itself())
                    });
                if unknown.is_empty() && decides_itself {
                    sim.choices += 1;
                } else if unknown.is_empty() {
                    sim.checks += 1;
                }
                // What the rule divides by: a known factor, or the output of `k / ?`.
                let divisor = match (op, inst.args.as_slice(), unknown.len()) {
                    (Opcode::Fmul, &[a, b], 1) => Some(if unknown[0] == a { b } else { a }),
                    (Opcode::Fdiv, &[_, b], 1) if unknown[0] == b => Some(z),
                    _ => None,
                };
                if divisor.is_some_and(|d| real_theta.contains(&d)) {
                    sim.bad += 1;
                }
                if distinct(&unknown) >= 2 {
                    splits.push(i as u32);
                    sim.thetas += distinct(&unknown) - 1;
                    let (mut k, real) = theta_operand(*op);
                    if let (Opcode::Fmul, &[a, b]) = (op, inst.args.as_slice()) {
                        (k, within_partner) =
                            fmul_theta_operand(fwd[a.inst as usize], fwd[b.inst as usize]);
                    }
                    if let Some(&t) = inst.args.get(k) {
                        theta_for = Some((t, real));
                    }
                }
            }
            PKind::Call(_) => {
                // The callee's inverse gives every operand; known ones are checked against it.
                sim.checks += inst.args.len() - unknown.len();
                sim.thetas += distinct(&unknown).saturating_sub(1);
            }
            PKind::Sq => {
                if unknown.is_empty() {
                    sim.checks += 1;
                } else {
                    sim.choices += 1;
                }
            }
            PKind::Given { free, .. } => {
                let (e, p) = (inst.args[0], inst.args[1]);
                if is_known(known, e) {
                    sim.checks += 1;
                }
                if !is_known(known, p) {
                    // A free unknown of a system is an ordinary θ; a pivot chosen to isolate
                    // the others is one read first.
                    if *free {
                        sim.thetas += 1;
                    } else {
                        sim.givens += 1;
                    }
                    theta_for = Some((p, true));
                }
            }
            PKind::Root(_) => {
                let x = inst.args[0];
                if is_known(known, x) || unknown.len() != 1 || unknown[0] != x {
                    // The helper's rule does not cover this: its body is inverted with checks.
                    sim.checks += 1 + unknown.len();
                } else {
                    sim.roots += 1;
                }
            }
            PKind::Polar { nonneg, .. } => {
                // The rule needs the radii but one; of n unknown angles it reads n − 2 from θ,
                // one elbow choice (n ≥ 2) and whole turns for each solved angle. A link of
                // unknown length is solved alone (a sign choice and whole turns) or, with its
                // angle known, by projection.
                let pairs: Vec<(bool, bool)> = inst
                    .args
                    .chunks(2)
                    .map(|p| (is_known(known, p[0]), is_known(known, p[1])))
                    .collect();
                let free: Vec<usize> = (0..pairs.len()).filter(|&i| !pairs[i].0).collect();
                let angles: Vec<usize> = (0..pairs.len()).filter(|&i| !pairs[i].1).collect();
                match (free.as_slice(), angles.len()) {
                    ([], 0) => sim.checks += 2,
                    ([], n) => {
                        sim.thetas += n.saturating_sub(2) + n.min(2);
                        sim.choices += usize::from(n >= 2);
                    }
                    ([_], 0) => {}
                    ([i], 1) if angles == [*i] => {
                        sim.thetas += 1;
                        if !nonneg.get(*i).copied().unwrap_or(false) {
                            sim.choices += 1;
                        }
                    }
                    _ => sim.checks += 1 + unknown.len(),
                }
            }
            PKind::Linear { rows, matrix, .. } => {
                // θ for the unknown columns beyond the rank; rows beyond it are checks.
                let n = inst.args.len();
                let m: Vec<f64> = matrix.iter().map(|&c| f64::from_bits(c)).collect();
                let cols: Vec<usize> = (0..n).filter(|&c| !is_known(known, inst.args[c])).collect();
                let r = super::linear::rank(&m, *rows as usize, n, &cols);
                sim.thetas += cols.len() - r;
                sim.checks += *rows as usize - r;
            }
            PKind::Wrap => {
                if unknown.is_empty() {
                    sim.checks += 1;
                } else {
                    sim.thetas += 1;
                }
            }
            PKind::Odds => {
                // The rule solves `a` for a known `c` (a constant, where the e-graph writes
                // it); anything else is not a form it covers.
                if unknown.is_empty() {
                    sim.checks += 1;
                } else if !is_known(known, inst.args[1]) {
                    sim.checks += 1;
                    sim.bad += 1;
                }
            }
            PKind::Bits(spec) => {
                // θ for the unknown words with free bits; the image test rejects y, not θ.
                if unknown.is_empty() {
                    sim.checks += 1;
                } else {
                    sim.thetas += spec.thetas(&pattern_of(known)).len();
                }
            }
            PKind::Affine(spec) => {
                if unknown.is_empty() {
                    sim.checks += 1;
                } else {
                    sim.thetas += spec.theta_count(&pattern_of(known));
                }
            }
            PKind::LinearRt { n, .. } => {
                // The rule needs the matrix and the constants known and solves every unknown;
                // anything else is the helper's body, inverted with checks.
                let n = *n as usize;
                let fixed = inst.args[..n * n + n].iter().all(|&a| is_known(known, a));
                let solved = inst.args[n * n + n..].iter().all(|&a| !is_known(known, a));
                if !(fixed && solved && distinct(&unknown) == n) {
                    sim.checks += 1 + unknown.len();
                }
            }
            PKind::Newton(_) => {
                // The rule solves every operand, numerically; else the body, with checks.
                if unknown.len() == inst.args.len() && distinct(&unknown) == unknown.len() {
                    sim.roots += 1;
                } else {
                    sim.checks += 1 + unknown.len();
                }
            }
            PKind::DivMod => {
                // The rule solves the dividend from a known divisor; else the body's checks.
                let divisor_known = is_known(known, inst.args[1]);
                if !divisor_known || is_known(known, inst.args[0]) {
                    sim.checks += 2;
                }
            }
            PKind::SumProduct => match distinct(&unknown) {
                0 => sim.checks += 2,
                1 if unknown.len() == 1 => sim.checks += 1,
                1 => sim.checks += 3,
                _ => sim.choices += 1,
            },
        }
        // Solve: the θ operand first (any value of its domain), then the others from it.
        let mut now: Vec<Range> = inst.args.iter().map(|&a| range_of(inv, a)).collect();
        if let Some((t, real)) = theta_for {
            if !known.contains(&t) {
                known.insert(t);
                inv.insert(t, FULL);
                if real && plan.ty(t) == Type::F64 {
                    real_theta.insert(t);
                }
            }
            for (k, &a) in inst.args.iter().enumerate() {
                if a == t {
                    now[k] = FULL;
                }
            }
            if within_partner {
                inv.insert(t, fwd[t.inst as usize]);
            }
        }
        // The pattern the affine rule solves under (only it needs one: not built per step).
        let solve_pattern = matches!(inst.kind, PKind::Affine(_)).then(|| pattern_of(known));
        for (k, &a) in inst.args.iter().enumerate() {
            if unknown.contains(&a) && Some(a) != theta_for.map(|t| t.0) {
                let r = if within_partner {
                    fwd[a.inst as usize]
                } else {
                    solved_range(&inst.kind, rz, &now, k)
                };
                if known.insert(a) {
                    inv.insert(a, r);
                    now[k] = r;
                    // What a word solver leaves zero: the atom's known zeros.
                    let z = match &inst.kind {
                        PKind::Bits(spec) => spec.zeros.get(k).copied().unwrap_or(0),
                        PKind::Affine(spec) => solve_pattern
                            .as_ref()
                            .map_or(0, |p| spec.solved_zeros(p, k)),
                        _ => 0,
                    };
                    if z != 0 {
                        zeros.insert(a, z);
                    }
                }
            }
        }
        // A value appearing twice among the unknown operands is solved once, checked once.
        let dup = unknown.len() - distinct(&unknown);
        sim.checks += dup;
        Ok(())
    }
}

fn distinct(values: &[PVal]) -> usize {
    let set: HashSet<&PVal> = values.iter().collect();
    set.len()
}

/// The text of the tree under `v` in `plan`, for names and reports.
pub fn plan_text(plan: &Plan, names: &[String], v: PVal, limit: usize) -> String {
    fn go(plan: &Plan, names: &[String], v: PVal, out: &mut String, limit: usize) {
        if out.len() > limit {
            return;
        }
        let inst = &plan.insts[v.inst as usize];
        let head = match &inst.kind {
            PKind::Param(i) => {
                out.push_str(&names[*i as usize]);
                return;
            }
            PKind::Const(c) => {
                out.push_str(&const_text(*c));
                return;
            }
            PKind::Prim(op) => op.name().to_string(),
            PKind::Call(f) => format!("call.{}.{}", f.as_u32(), v.idx),
            PKind::Sq => "sq".to_string(),
            PKind::Odds => "odds".to_string(),
            PKind::Given { .. } => "given".to_string(),
            PKind::Root(r) => format!("root{r}"),
            PKind::Polar { .. } => format!("polar.{}", v.idx),
            PKind::Linear { .. } => format!("linear.{}", v.idx),
            PKind::SumProduct => format!("sumprod.{}", v.idx),
            PKind::DivMod => format!("divmod.{}", v.idx),
            PKind::Newton(r) => format!("newton{r}.{}", v.idx),
            PKind::Wrap => "wrap".to_string(),
            PKind::Bits(_) => format!("bits.{}", v.idx),
            PKind::Affine(_) => "affine".to_string(),
            PKind::LinearRt { .. } => format!("linrt.{}", v.idx),
        };
        out.push('(');
        out.push_str(&head);
        for &a in &inst.args {
            out.push(' ');
            go(plan, names, a, out, limit);
        }
        out.push(')');
    }
    let mut out = String::new();
    go(plan, names, v, &mut out, limit);
    if out.len() > limit {
        let mut cut = limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// A constant as plans and the e-graph's text form write it (f64 in the IR's shortest form).
pub fn const_text(c: Const) -> String {
    match c {
        Const::F64(x) => pinv_core::ir::constant::format_f64(x),
        Const::I64(x) => x.to_string(),
        Const::Bool(b) => b.to_string(),
    }
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
    fn ranges_see_theta_outside_an_image() {
        // x·y + x as written: θ for x (any real), then y = (z − x) / x divides by it.
        let s = sim("function %f(x: f64, y: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fmul v0, v1
    v3 = fadd v2, v0
    return v3
}");
        assert_eq!((s.checks, s.bad), (0, 1), "{s:?}");
        // (x + 1.5)·(x + 1.5) − 2.25 with a square: y + 2.25 ≥ 0 for every y in the image.
        let s = sim("function %q(x: f64) -> f64 {
block0(v0: f64):
    v1 = fconst 1.5
    v2 = fadd v0, v1
    v3 = fmul v2, v2
    v4 = fconst 2.25
    v5 = fsub v3, v4
    return v5
}");
        assert_eq!(s.bad, 0, "{s:?}");
        // exp(x)·exp(y): θ for the factor exp(x) is drawn on y's side of 0, which leaves
        // exp(y) = y / exp(x) positive too.
        let s = sim("function %e(x: f64, y: f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = exp v0
    v3 = exp v1
    v4 = fmul v2, v3
    return v4
}");
        assert_eq!(s.bad, 0, "{s:?}");
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
