//! From a plan (a function body) to an e-graph input and back, and numeric evaluation of terms.
//!
//! **Into the e-graph** ([`Input::new`]): the expression DAG of the outputs, with leaves
//! - the function's parameters (unknowns), as symbols named like the parameters;
//! - **atoms**: maximal subterms whose inputs occur nowhere else ([`Dag::atoms`]). The
//!   reorientation inverts them without any check on its own, so rewriting them is wasted work;
//!   each becomes one opaque unknown leaf (its cost weight is the number of inputs it uses). This
//!   keeps the e-graph small for large functions whose fan-out is local;
//! - **pivots**: values chosen as θ, as known symbols.
//!
//! **Back** ([`to_plan`]): the extracted term becomes plan instructions (hash-consed, so shared
//! subterms are computed once, as CSE would leave them); atoms and pivots are copied back from the
//! original body. Each instruction gets the source span of an original instruction of the same
//! e-class where there is one (so θ slots still point into the source), else the span of the
//! output it belongs to.

use super::analysis::{IsoAnalysis, VarInfo, VarKind};
use super::cost::Extracted;
use super::lang::Node;
use crate::solve::plan::{plan_text, PKind, PVal, Plan, PlanBuilder};
use egg::{Id, Language, RecExpr, Symbol};
use pinv_core::interp::Interpreter;
use pinv_core::ir::{Const, FuncId, Module, Opcode, Type};
use pinv_core::Span;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::{HashMap, HashSet};

/// What a leaf symbol of an e-graph input stands for in the original body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Param(u32),
    /// A value of the original plan (an atom or a pivot), copied back as it was.
    Value(PVal),
}

/// Structure of a body: liveness, uses, and tree occurrences of each parameter.
#[derive(Clone, Debug)]
pub struct Dag {
    pub live: Vec<bool>,
    /// Per instruction: how many operand slots (and outputs) use one of its results.
    pub uses: Vec<u32>,
    /// Per instruction: the parameters it depends on (bit `min(i, 63)`).
    pub params: Vec<u64>,
    /// Per instruction and parameter: occurrences on the tree (saturating).
    pub occ: Vec<Vec<u64>>,
    /// Per parameter: occurrences on the output trees.
    pub total: Vec<u64>,
}

impl Dag {
    pub fn new(plan: &Plan) -> Dag {
        let n = plan.insts.len();
        let np = plan.params.len();
        let live = plan.live();
        let mut uses = vec![0u32; n];
        let params = plan.param_masks();
        let mut occ = vec![vec![0u64; np]; n];
        for (i, inst) in plan.insts.iter().enumerate() {
            if let PKind::Param(p) = inst.kind {
                occ[i][p as usize] = 1;
                continue;
            }
            for a in &inst.args {
                let a = a.inst as usize;
                if live[i] {
                    uses[a] += 1;
                }
                let (before, after) = occ.split_at_mut(i);
                for (d, s) in after[0].iter_mut().zip(&before[a]) {
                    *d = d.saturating_add(*s);
                }
            }
        }
        let mut total = vec![0u64; np];
        for o in &plan.outputs {
            uses[o.inst as usize] += 1;
            for (p, t) in total.iter_mut().enumerate() {
                *t = t.saturating_add(occ[o.inst as usize][p]);
            }
        }
        Dag {
            live,
            uses,
            params,
            occ,
            total,
        }
    }

    /// Parameters that occur more than once on the output trees.
    pub fn fanned_params(&self) -> Vec<u32> {
        (0..self.total.len() as u32)
            .filter(|&p| self.total[p as usize] > 1)
            .collect()
    }

    fn mask_params(&self, mask: u64) -> impl Iterator<Item = usize> + '_ {
        (0..self.total.len()).filter(move |&p| mask & (1u64 << p.min(63)) != 0)
    }

    /// Whether instruction `i` is clean: it uses inputs, and each of them occurs once in all.
    fn clean(&self, plan: &Plan, i: usize) -> bool {
        self.live[i]
            && self.params[i] != 0
            && !matches!(plan.insts[i].kind, PKind::Param(_) | PKind::Const(_))
            && plan.insts[i].tys.len() == 1
            && self.mask_params(self.params[i]).all(|p| self.total[p] == 1)
    }

    /// The maximal clean instructions (see the module docs).
    pub fn atoms(&self, plan: &Plan) -> HashSet<u32> {
        let clean: Vec<bool> = (0..plan.insts.len()).map(|i| self.clean(plan, i)).collect();
        let mut inside = vec![false; plan.insts.len()];
        for (i, inst) in plan.insts.iter().enumerate() {
            if clean[i] {
                for a in &inst.args {
                    inside[a.inst as usize] = true;
                }
            }
        }
        (0..plan.insts.len() as u32)
            .filter(|&i| clean[i as usize] && !inside[i as usize])
            .collect()
    }

    /// Candidate pivots: shared values (used more than once) that depend on an input occurring
    /// more than once, most-used first, then those inputs themselves, most-occurring first, then
    /// the other inputs (in `exp(x)·exp(y) + exp(x)`, θ for y leaves `exp(x) = y / (1 + exp y)`,
    /// always positive).
    pub fn pivot_candidates(&self, plan: &Plan) -> Vec<PVal> {
        let fanned: u64 = self
            .fanned_params()
            .iter()
            .fold(0, |m, &p| m | 1u64 << p.min(63));
        let mut shared: Vec<u32> = (0..plan.insts.len() as u32)
            .filter(|&i| {
                let i = i as usize;
                self.live[i]
                    && self.uses[i] > 1
                    && self.params[i] & fanned != 0
                    && plan.insts[i].tys.len() == 1
                    && !matches!(plan.insts[i].kind, PKind::Param(_) | PKind::Const(_))
            })
            .collect();
        shared.sort_by_key(|&i| {
            (
                std::cmp::Reverse(self.uses[i as usize]),
                std::cmp::Reverse(self.params[i as usize].count_ones()),
                i,
            )
        });
        let mut params: Vec<u32> = (0..self.total.len() as u32)
            .filter(|&p| self.total[p as usize] > 0)
            .collect();
        params.sort_by_key(|&p| (std::cmp::Reverse(self.total[p as usize]), p));
        shared
            .into_iter()
            .map(|inst| PVal { inst, idx: 0 })
            .chain(params.into_iter().map(|inst| PVal { inst, idx: 0 }))
            .collect()
    }
}

/// An e-graph input: the output terms, what their leaves are, and where their parts came from.
#[derive(Clone, Debug)]
pub struct Input {
    pub expr: RecExpr<Node>,
    /// One node of `expr` per output.
    pub roots: Vec<Id>,
    pub analysis: IsoAnalysis,
    pub leaves: HashMap<Symbol, Leaf>,
    /// Node of `expr` → span of the original instruction.
    pub spans: Vec<(Id, Span)>,
    /// Result types of every called function.
    pub call_types: HashMap<FuncId, Vec<Type>>,
    /// Distinct unknown symbols in the input.
    pub unknowns: usize,
    /// Node of `expr` → the value of the plan it stands for (operations and calls only).
    pub originals: Vec<(Id, PVal)>,
}

/// Where [`to_plan`] keeps the original form of a term that holds no unknown but pivots: such
/// a term is computed forward once the pivots are read from θ, and its rewrite is equal only up
/// to rounding (`a·a + (a + 2)` against `a + (a² + 2)`). The PGF runs the forward code, so a
/// later step that needs the value bit for bit (an integer made a float) must see the same
/// float in the inverse.
pub struct KeepOriginals<'a> {
    /// The e-class of each value of the original plan that has one (canonical ids).
    pub class_original: &'a HashMap<Id, PVal>,
    pub vars: &'a HashMap<Symbol, VarInfo>,
    /// The values read from θ first.
    pub pivots: &'a [PVal],
}

/// Unique, readable names for the parameters.
pub fn param_names(given: &[String], n: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let base = given
            .get(i)
            .filter(|s| !s.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("p{i}"));
        let name = if names.contains(&base) || super::lang::Num::parse(&base).is_some() {
            format!("{base}#{i}")
        } else {
            base
        };
        names.push(name);
    }
    names
}

impl Input {
    /// The e-graph input for `plan` with `atoms` kept opaque and `pivots` known. `sigs` gives the
    /// result types of called functions.
    pub fn new(
        plan: &Plan,
        names: &[String],
        atoms: &HashSet<u32>,
        pivots: &[PVal],
        sigs: &dyn Fn(FuncId) -> Vec<Type>,
    ) -> Input {
        let live = plan.live();
        let dag = Dag::new(plan);
        let mut expr = RecExpr::default();
        let mut map: HashMap<PVal, Id> = HashMap::new();
        let mut analysis = IsoAnalysis::default();
        let mut leaves = HashMap::new();
        let mut spans = Vec::new();
        let mut call_types = HashMap::new();
        let mut originals = Vec::new();
        let mut used_names: HashSet<String> = names.iter().cloned().collect();
        let mut leaf = |name: String, info: VarInfo, what: Leaf, expr: &mut RecExpr<Node>| {
            let mut name = name;
            let mut k = 1;
            while leaves.contains_key(&Symbol::from(name.as_str()))
                || (used_names.contains(&name) && !matches!(what, Leaf::Param(_)))
            {
                k += 1;
                name = format!("{name}#{k}");
            }
            used_names.insert(name.clone());
            let s = Symbol::from(name.as_str());
            analysis.vars.insert(s, info);
            leaves.insert(s, what);
            expr.add(Node::Var(s))
        };
        let mut next_bit = plan.params.len() as u32;
        for (i, inst) in plan.insts.iter().enumerate() {
            if !live[i] && !matches!(inst.kind, PKind::Param(_)) {
                continue;
            }
            let v0 = PVal {
                inst: i as u32,
                idx: 0,
            };
            let ty0 = inst.tys.first().copied().unwrap_or(Type::F64);
            if pivots.contains(&v0) {
                let name = match inst.kind {
                    PKind::Param(p) => names[p as usize].clone(),
                    _ => format!("θ{{{}}}", plan_text(plan, names, v0, 40)),
                };
                let id = leaf(
                    name,
                    VarInfo {
                        ty: ty0,
                        kind: VarKind::Pivot,
                    },
                    Leaf::Value(v0),
                    &mut expr,
                );
                map.insert(v0, id);
                continue;
            }
            let id = match &inst.kind {
                PKind::Param(p) => leaf(
                    names[*p as usize].clone(),
                    VarInfo {
                        ty: ty0,
                        kind: VarKind::Unknown { bit: *p, weight: 1 },
                    },
                    Leaf::Param(*p),
                    &mut expr,
                ),
                _ if atoms.contains(&(i as u32)) => {
                    let bit = next_bit;
                    next_bit += 1;
                    leaf(
                        format!("{{{}}}", plan_text(plan, names, v0, 40)),
                        VarInfo {
                            ty: ty0,
                            kind: VarKind::Unknown {
                                bit,
                                weight: u64::from(dag.params[i].count_ones()).max(1),
                            },
                        },
                        Leaf::Value(v0),
                        &mut expr,
                    )
                }
                PKind::Const(c) => expr.add(Node::num(*c)),
                PKind::Prim(op) => {
                    let args: Vec<Id> = inst.args.iter().map(|a| map[a]).collect();
                    expr.add(Node::op(*op, &args))
                }
                PKind::Call(f) => {
                    let args: Vec<Id> = inst.args.iter().map(|a| map[a]).collect();
                    let tys = sigs(*f);
                    for (r, &ty) in tys.iter().enumerate() {
                        analysis.calls.insert((*f, r as u32), ty);
                    }
                    call_types.insert(*f, tys);
                    for r in 1..inst.tys.len() {
                        let id = expr.add(Node::Call {
                            callee: *f,
                            result: r as u32,
                            args: args.clone().into_boxed_slice(),
                        });
                        map.insert(
                            PVal {
                                inst: i as u32,
                                idx: r as u32,
                            },
                            id,
                        );
                        originals.push((
                            id,
                            PVal {
                                inst: i as u32,
                                idx: r as u32,
                            },
                        ));
                        spans.push((id, inst.span));
                    }
                    expr.add(Node::Call {
                        callee: *f,
                        result: 0,
                        args: args.into_boxed_slice(),
                    })
                }
                PKind::Sq => {
                    let a = map[&inst.args[0]];
                    expr.add(Node::Sq([a]))
                }
                PKind::Given { .. }
                | PKind::Odds
                | PKind::Root(_)
                | PKind::Polar { .. }
                | PKind::Linear { .. }
                | PKind::SumProduct
                | PKind::DivMod
                | PKind::Newton(_)
                | PKind::Wrap
                | PKind::Bits(_)
                | PKind::Affine(_)
                | PKind::LinearRt { .. } => {
                    unreachable!("isolation helpers are not in original bodies")
                }
            };
            if !matches!(inst.kind, PKind::Param(_) | PKind::Const(_)) {
                spans.push((id, inst.span));
                if !atoms.contains(&(i as u32)) {
                    originals.push((id, v0));
                }
            }
            map.insert(v0, id);
        }
        let roots = plan.outputs.iter().map(|o| map[o]).collect();
        let unknowns = analysis
            .vars
            .values()
            .filter(|v| matches!(v.kind, VarKind::Unknown { .. }))
            .count();
        Input {
            expr,
            roots,
            analysis,
            leaves,
            spans,
            call_types,
            unknowns,
            originals,
        }
    }
}

/// The plan of an extracted term. `span_of` gives the span for a node's e-class; `fallback` is
/// used where it has none.
pub fn to_plan(
    ext: &Extracted,
    original: &Plan,
    leaves: &HashMap<Symbol, Leaf>,
    call_types: &HashMap<FuncId, Vec<Type>>,
    span_of: &dyn Fn(Id) -> Option<Span>,
    keep: Option<&KeepOriginals<'_>>,
) -> Plan {
    let mut b = PlanBuilder::new(original.params.clone());
    let mut memo = HashMap::new();
    let mut vals: Vec<PVal> = Vec::with_capacity(ext.nodes.len());
    let params = |p: u32| PVal { inst: p, idx: 0 };
    // Per node of `ext`, whether it holds no unknown; per value of `original`, whether it
    // depends on no parameter but through pivots.
    let mut no_unknown: Vec<bool> = Vec::with_capacity(ext.nodes.len());
    let pivots_only: Vec<bool> = match keep {
        Some(k) => {
            let mut ok: Vec<bool> = Vec::with_capacity(original.insts.len());
            for (i, inst) in original.insts.iter().enumerate() {
                let pivot = k.pivots.iter().any(|p| p.inst as usize == i);
                let v = pivot
                    || (!matches!(inst.kind, PKind::Param(_))
                        && inst.args.iter().all(|a| ok[a.inst as usize]));
                ok.push(v);
            }
            ok
        }
        None => Vec::new(),
    };
    let fallback: Vec<Span> = original
        .outputs
        .iter()
        .map(|o| original.insts[o.inst as usize].span)
        .collect();
    // The output each node belongs to (the first that reaches it), for the fallback span.
    // The nodes form a DAG: each walk visits a node once (without the visited set, a value
    // used twice at every level, as `z ^ (z >> 27)` repeated, made the walk exponential).
    let mut owner = vec![0usize; ext.nodes.len()];
    for (k, &r) in ext.roots.iter().enumerate().rev() {
        let mut seen = vec![false; ext.nodes.len()];
        let mut stack = vec![r];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            owner[i] = k;
            stack.extend(ext.nodes[i].children().iter().map(|&c| usize::from(c)));
        }
    }
    for (i, node) in ext.nodes.iter().enumerate() {
        let span = span_of(ext.classes[i])
            .unwrap_or_else(|| fallback.get(owner[i]).copied().unwrap_or_default());
        let arg = |c: Id| vals[usize::from(c)];
        let free = match (node, keep) {
            (Node::Var(s), Some(k)) => {
                !matches!(k.vars.get(s).map(|v| v.kind), Some(VarKind::Unknown { .. }))
            }
            _ => node.children().iter().all(|&c| no_unknown[usize::from(c)]),
        };
        no_unknown.push(free);
        let kept = match keep {
            Some(k) if free && !matches!(node, Node::Var(_) | Node::Num(_)) => k
                .class_original
                .get(&ext.classes[i])
                .filter(|o| pivots_only[o.inst as usize]),
            _ => None,
        };
        if let Some(&o) = kept {
            vals.push(b.copy(original, o, &params, &mut memo));
            continue;
        }
        let v = match node {
            Node::Num(n) => b.konst(n.0),
            Node::Var(s) => match leaves[s] {
                Leaf::Param(p) => b.param(p as usize),
                Leaf::Value(v) => b.copy(original, v, &params, &mut memo),
            },
            Node::Op(op, args) => {
                let args = args.iter().map(|&c| arg(c)).collect();
                b.value(PKind::Prim(*op), args, op.result_type(), span)
            }
            Node::Sq([a]) => b.value(PKind::Sq, vec![arg(*a)], Type::F64, span),
            Node::Odds([a, c]) => b.value(PKind::Odds, vec![arg(*a), arg(*c)], Type::F64, span),
            Node::Call {
                callee,
                result,
                args,
            } => {
                let args = args.iter().map(|&c| arg(c)).collect();
                let tys = call_types.get(callee).cloned().unwrap_or_default();
                let inst = b.push(PKind::Call(*callee), args, tys, span);
                PVal { inst, idx: *result }
            }
        };
        vals.push(v);
    }
    let mut plan = b.finish();
    plan.outputs = ext.roots.iter().map(|&r| vals[r]).collect();
    plan.pruned()
}

// ---------------------------------------------------------------------------------------------
// Numeric evaluation

/// The steps the numeric checks of one rewrite may spend running the program's functions, over
/// all their points: a call that recurses (or loops) a lot is cut off by this, not run to each
/// point's step limit (a function calling itself hundreds of times per level took minutes).
/// A call cut off gives no value, so the point is skipped or the rewrite is not used: safe.
pub const CHECK_STEPS: u64 = 2_000_000;

/// The allowance of one call before any call of the check has finished: enough for the
/// straight-line and shallowly recursive functions most checks call.
const FIRST_CALL_STEPS: u64 = 4096;

/// What is left of [`CHECK_STEPS`] for one check, and how much one call may take of it.
///
/// One call may take 16 times the steps of the longest call that finished (at least
/// [`FIRST_CALL_STEPS`]); until one finishes, the allowance doubles with each call cut off. So a
/// point where the function never ends (`power(b, e)` with `e < 0` halving and decrementing
/// round a cycle) costs what a few ordinary points cost, and the points where it does end
/// still get checked: one such point no longer takes the whole budget.
#[derive(Debug)]
pub struct StepBudget {
    left: std::cell::Cell<u64>,
    /// The steps of the longest call that finished, if one did.
    longest: std::cell::Cell<Option<u64>>,
    /// The allowance while no call has finished.
    untried: std::cell::Cell<u64>,
}

impl Default for StepBudget {
    fn default() -> StepBudget {
        StepBudget {
            left: std::cell::Cell::new(CHECK_STEPS),
            longest: std::cell::Cell::new(None),
            untried: std::cell::Cell::new(FIRST_CALL_STEPS),
        }
    }
}

impl StepBudget {
    /// How many steps the next call may take.
    fn allowance(&self) -> u64 {
        let per_call = match self.longest.get() {
            Some(steps) => steps.saturating_mul(16).max(FIRST_CALL_STEPS),
            None => self.untried.get(),
        };
        self.left.get().min(per_call)
    }

    /// Runs `f(args)` within its allowance; `None` if it fails or is cut off.
    pub fn call(&self, module: &Module, f: FuncId, args: &[Const]) -> Option<Vec<Const>> {
        let limit = self.allowance();
        if limit == 0 {
            return None;
        }
        let run = Interpreter::new(module)
            .with_config(pinv_core::interp::InterpConfig::default().with_step_limit(limit))
            .call_traced(f, args, None);
        let left = self.left.get();
        match run {
            Ok(outcome) => {
                self.left.set(left.saturating_sub(outcome.steps));
                let longest = self.longest.get().unwrap_or(0).max(outcome.steps);
                self.longest.set(Some(longest));
                Some(outcome.results)
            }
            Err(_) => {
                // Where it failed is not said: count the whole allowance, so that failing calls
                // cannot run on for free.
                self.left.set(left - limit);
                self.untried.set(self.untried.get().saturating_mul(2));
                None
            }
        }
    }
}

/// Values of every node of a term (children before parents) for leaf values `env`; `None` where
/// a leaf has no value or an operation fails.
pub fn eval_nodes(
    nodes: &[Node],
    env: &HashMap<Symbol, Const>,
    module: &Module,
    budget: &StepBudget,
) -> Vec<Option<Const>> {
    let mut out: Vec<Option<Const>> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let args: Option<Vec<Const>> = node
            .children()
            .iter()
            .map(|&c| out[usize::from(c)])
            .collect();
        let v = match (node, args) {
            (Node::Num(n), _) => Some(n.0),
            (Node::Var(s), _) => env.get(s).copied(),
            (Node::Op(op, _), Some(args)) => pinv_core::semantics::eval(*op, &args).ok(),
            (Node::Sq(_), Some(args)) => {
                pinv_core::semantics::eval(Opcode::Fmul, &[args[0], args[0]]).ok()
            }
            (Node::Odds(_), Some(args)) => crate::solve::odds::eval_consts(&args),
            (Node::Call { callee, result, .. }, Some(args)) => budget
                .call(module, *callee, &args)
                .and_then(|r| r.get(*result as usize).copied()),
            _ => None,
        };
        out.push(v);
    }
    out
}

/// A random leaf value of type `ty`: reals mostly in [−10, 10], sometimes spread over magnitudes
/// or small integers.
pub fn sample(rng: &mut Xoshiro256PlusPlus, ty: Type) -> Const {
    match ty {
        Type::F64 => Const::F64(match rng.random_range(0..10u32) {
            0..=5 => rng.random_range(-10.0..10.0),
            6 | 7 => {
                let m = 10f64.powf(rng.random_range(-3.0..3.0));
                if rng.random_bool(0.5) {
                    m
                } else {
                    -m
                }
            }
            _ => f64::from(rng.random_range(-5..=5i32)),
        }),
        // Small integers, and whole words (bit mixing is wrong first in the high bits).
        Type::I64 => Const::I64(match rng.random_range(0..4u32) {
            0 => rng.random::<i64>(),
            _ => rng.random_range(-100..=100),
        }),
        Type::Bool => Const::Bool(rng.random_bool(0.5)),
    }
}

/// Test points for checking a rewrite against the original: random values of each type and,
/// once some are found where the original is defined, points near those. A function defined
/// only on a narrow interval (`log(p / (2 − p))` on (0, 2)) gets its points there, so that its
/// rewrite is not dropped for want of points to compare.
pub struct Points {
    rng: Xoshiro256PlusPlus,
    tys: Vec<Type>,
    found: Vec<Vec<Const>>,
    tried: usize,
    limit: usize,
}

impl Points {
    /// Up to `8 · points` candidate points of types `tys`.
    pub fn new(seed: u64, tys: Vec<Type>, points: usize) -> Points {
        Points {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            tys,
            found: Vec::new(),
            tried: 0,
            limit: points * 8,
        }
    }

    /// How many candidates were given.
    pub fn tried(&self) -> usize {
        self.tried
    }

    /// Records that the original is defined at `x`.
    pub fn valid(&mut self, x: Vec<Const>) {
        if self.found.len() < 64 {
            self.found.push(x);
        }
    }

    /// The next candidate, or `None` past the limit.
    pub fn next_point(&mut self) -> Option<Vec<Const>> {
        if self.tried >= self.limit {
            return None;
        }
        self.tried += 1;
        let rng = &mut self.rng;
        let random = self.tried <= self.limit / 4 || rng.random_bool(0.25);
        if random || (self.found.is_empty() && rng.random_bool(0.5)) {
            return Some(self.tys.iter().map(|&t| sample(rng, t)).collect());
        }
        if self.found.is_empty() {
            // Small positive reals (logarithms, square roots, ratios of them).
            return Some(
                self.tys
                    .iter()
                    .map(|&t| match t {
                        Type::F64 => {
                            Const::F64(rng.random::<f64>() * 2f64.powi(rng.random_range(-3..4)))
                        }
                        t => sample(rng, t),
                    })
                    .collect(),
            );
        }
        let base = self.found[rng.random_range(0..self.found.len())].clone();
        Some(
            base.into_iter()
                .map(|c| match c {
                    Const::F64(x) => {
                        let d = rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-4..0));
                        Const::F64(x * (1.0 + d) + d * 0.01)
                    }
                    Const::I64(x) => Const::I64(x.wrapping_add(rng.random_range(-3..=3))),
                    Const::Bool(b) => Const::Bool(b ^ rng.random_bool(0.2)),
                })
                .collect(),
        )
    }
}

/// Whether a rewritten value agrees with the original one: exactly for i64 and bool, within the
/// relative tolerance for f64 (equal infinities agree).
pub fn agrees(original: Const, rewritten: Const, tol: f64) -> bool {
    rewritten.close_to(original, tol)
}

/// Why a rewritten form failed its check against the original at random points.
#[derive(Clone, Debug, PartialEq)]
pub enum Disagreement {
    /// At the inputs `at`, output `output` is `written` in the original but `rewritten` (`None`:
    /// an error) in the rewrite.
    Differs {
        output: usize,
        at: String,
        written: Const,
        rewritten: Option<Const>,
    },
    /// Only `valid` of `tried` random points gave a finite value to compare.
    TooFewPoints { valid: usize, tried: usize },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::Differs {
                output,
                at,
                written,
                rewritten,
            } => {
                write!(
                    f,
                    "output {output} is {written} but the rewritten form gives "
                )?;
                match rewritten {
                    Some(r) => write!(f, "{r}")?,
                    None => write!(f, "an error")?,
                }
                write!(f, " at {at}")
            }
            Disagreement::TooFewPoints { valid, tried } => write!(
                f,
                "only {valid} of {tried} random points give a finite value to compare"
            ),
        }
    }
}

/// Checks an extracted term against the input at `points` random points. `Err` says where they
/// differ, or that too few points could be evaluated.
pub fn check_numerically(
    input: &Input,
    ext: &Extracted,
    module: &Module,
    points: usize,
    tol: f64,
    seed: u64,
) -> Result<(), Disagreement> {
    // In name order: the points drawn for a seed must not depend on a hash map's order.
    let mut vars: Vec<(Symbol, Type)> = input
        .analysis
        .vars
        .iter()
        .map(|(&s, info)| (s, info.ty))
        .collect();
    vars.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    let budget = StepBudget::default();
    let types = vars.iter().map(|v| v.1).collect();
    at_random_points(types, points, seed, |x| {
        let env: HashMap<Symbol, Const> = vars.iter().map(|v| v.0).zip(x.iter().copied()).collect();
        let before = eval_nodes(input.expr.as_ref(), &env, module, &budget);
        let after = eval_nodes(&ext.nodes, &env, module, &budget);
        for (k, &root) in input.roots.iter().enumerate() {
            let Some(a) = before[usize::from(root)] else {
                return Ok(false);
            };
            if matches!(a, Const::F64(x) if !x.is_finite()) {
                return Ok(false);
            }
            let b = after[ext.roots[k]];
            match b {
                Some(b) if agrees(a, b, tol) => {}
                _ => {
                    let at: Vec<String> = env.iter().map(|(s, c)| format!("{s} = {c}")).collect();
                    return Err(Disagreement::Differs {
                        output: k,
                        at: at.join(", "),
                        written: a,
                        rewritten: b,
                    });
                }
            }
        }
        Ok(true)
    })
}

/// Runs `check` at random points of `types` ([`Points`], from `seed`) until `points` of them
/// were valid (`check` says `Ok(true)`; `Ok(false)`: nothing to compare there) or the points
/// run out; fails with the first disagreement, or when fewer than half were valid.
pub fn at_random_points(
    types: Vec<Type>,
    points: usize,
    seed: u64,
    mut check: impl FnMut(&[Const]) -> Result<bool, Disagreement>,
) -> Result<(), Disagreement> {
    let mut candidates = Points::new(seed, types, points);
    let mut valid = 0;
    while valid < points {
        let Some(x) = candidates.next_point() else {
            break;
        };
        if check(&x)? {
            valid += 1;
            candidates.valid(x);
        }
    }
    if valid * 2 < points {
        return Err(Disagreement::TooFewPoints {
            valid,
            tried: candidates.tried(),
        });
    }
    Ok(())
}
