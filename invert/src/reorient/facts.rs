//! Facts about the values that arrive along each CFG edge, used to decide — without θ — which
//! edge the inverse walks back over.
//!
//! Two kinds of fact are found in the forward code:
//! - **value sets**: a constant, a block parameter all of whose incoming values are constants, or
//!   the branch condition itself passed along the edge that only runs when it is true (or false,
//!   as short-circuit `&&`/`||` do) has one of a few known values;
//! - **induction**: a loop-header parameter that enters as the constant A and comes round the
//!   back edge as itself plus a constant c > 0 is at least A + c whenever the back edge was taken
//!   (at most A + c for c < 0), so "entered the loop" and "went round again" are told apart by the
//!   counter (`i == 0` against `i >= 1`).
//!
//! The facts of an edge are a conjunction over its target's parameters. When the facts of every
//! pair of edges into a block exclude each other, the inverse picks the edge by testing them, and
//! reads no θ at all (this is how `for` loops with a fixed trip count and `sign` lose every choice);
//! otherwise it tests them to find the edges that are still possible and reads a choice only when
//! more than one is.

use super::int_ranges::IntRange;
use pinv_core::ir::{Block, Const, Function, InstKind, Opcode, Value, ValueDef, ValueList};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most constants a value set holds before it is forgotten.
pub const MAX_SET: usize = 16;

/// A fact about one parameter (by index) of the edge's target block, or one output.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// The value is one of these constants.
    In(usize, Vec<Const>),
    /// The i64 value is at least this.
    AtLeast(usize, i64),
    /// The i64 value is at most this.
    AtMost(usize, i64),
    /// The f64 value, unless NaN, lies in `[lo, hi]` (from [`super::ranges`]). It prunes the
    /// edges a dispatch tests but never makes two edges exclusive: a NaN (which no interval
    /// holds) keeps every edge possible, so θ still chooses for it.
    Within(usize, f64, f64),
}

impl Fact {
    fn index(&self) -> usize {
        match self {
            Fact::In(i, _) | Fact::AtLeast(i, _) | Fact::AtMost(i, _) | Fact::Within(i, _, _) => *i,
        }
    }
}

/// Whether no value satisfies both facts (which are about the same index).
fn exclusive(a: &Fact, b: &Fact) -> bool {
    if a.index() != b.index() {
        return false;
    }
    let int = |c: &Const| c.as_i64();
    match (a, b) {
        (Fact::In(_, s), Fact::In(_, t)) => s.iter().all(|x| !t.iter().any(|y| alike(*x, *y))),
        (Fact::In(_, s), Fact::AtLeast(_, lo)) | (Fact::AtLeast(_, lo), Fact::In(_, s)) => {
            s.iter().all(|c| int(c).is_some_and(|x| x < *lo))
        }
        (Fact::In(_, s), Fact::AtMost(_, hi)) | (Fact::AtMost(_, hi), Fact::In(_, s)) => {
            s.iter().all(|c| int(c).is_some_and(|x| x > *hi))
        }
        (Fact::AtLeast(_, lo), Fact::AtMost(_, hi))
        | (Fact::AtMost(_, hi), Fact::AtLeast(_, lo)) => lo > hi,
        _ => false,
    }
}

/// Whether the run-time test of a value set could take `a` for `b`: f64 constants are compared
/// as the dispatch compares them (within a tolerance, so `0.0` and `-0.0` are alike, and NaN
/// is like NaN; the margin here is wider than any tolerance a check uses), everything else
/// exactly. Two sets with alike members are not exclusive: the dispatch then tests both, and θ
/// chooses where both hold.
fn alike(a: Const, b: Const) -> bool {
    match (a, b) {
        (Const::F64(x), Const::F64(y)) => {
            x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-6 * y.abs().max(1.0)
        }
        _ => a == b,
    }
}

/// Whether the facts of two edges exclude each other.
pub fn edges_exclusive(a: &[Fact], b: &[Fact]) -> bool {
    a.iter().any(|fa| b.iter().any(|fb| exclusive(fa, fb)))
}

/// Whether every pair of edges excludes each other.
pub fn all_exclusive(facts: &[Vec<Fact>]) -> bool {
    (0..facts.len()).all(|i| (i + 1..facts.len()).all(|j| edges_exclusive(&facts[i], &facts[j])))
}

/// A loop counter: a block parameter that enters as `start` and comes round as itself plus a
/// constant step, along the edges (by index) listed with their steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Induction {
    pub start: i64,
    pub steps: Vec<(usize, i64)>,
}

impl Induction {
    pub fn increasing(&self) -> bool {
        self.steps.iter().all(|&(_, c)| c > 0)
    }

    pub fn decreasing(&self) -> bool {
        self.steps.iter().all(|&(_, c)| c < 0)
    }

    /// The step, if every edge that goes round adds the same one.
    pub fn unit_step(&self) -> Option<i64> {
        let c = self.steps.first()?.1;
        (self.steps.iter().all(|&(_, d)| d == c) && (c == 1 || c == -1)).then_some(c)
    }
}

/// One incoming edge of a block: the predecessor, which successor slot of its terminator
/// (0 for `jump` and the then-side of `brif`, 1 for the else-side), and its arguments.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: Block,
    pub slot: usize,
    pub to: Block,
    pub args: Vec<Value>,
}

/// The CFG of a function in closed block form, with the facts of each edge.
pub struct Cfg {
    /// Incoming edges of each reachable block, in a fixed order.
    pub preds: BTreeMap<Block, Vec<Edge>>,
    /// Blocks that end in `return`, in layout order.
    pub returns: Vec<Block>,
    /// Whether some block can reach itself (the function has a loop).
    pub cyclic: bool,
    /// The targets of retreating edges of a depth-first walk from the entry: every cycle goes
    /// through one (for the usual loops, their headers), so counting passes through them bounds
    /// every walk round a cycle, once per iteration.
    pub loop_heads: BTreeSet<Block>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let reachable = f.reachable_blocks();
        let mut preds: BTreeMap<Block, Vec<Edge>> = BTreeMap::new();
        let mut returns = Vec::new();
        for &b in &reachable {
            preds.entry(b).or_default();
            let Some(term) = f.terminator(b) else {
                continue;
            };
            match &f.insts[term].kind {
                InstKind::Return { .. } => returns.push(b),
                kind => {
                    for (slot, call) in kind.successors().into_iter().enumerate() {
                        preds.entry(call.block).or_default().push(Edge {
                            from: b,
                            slot,
                            to: call.block,
                            args: call.args.to_vec(),
                        });
                    }
                }
            }
        }
        let loop_heads = f.loop_heads();
        Cfg {
            preds,
            returns,
            cyclic: !loop_heads.is_empty(),
            loop_heads,
        }
    }
}

/// Finds facts in a function (in closed block form).
pub struct Facts<'f> {
    f: &'f Function,
    cfg: &'f Cfg,
    sets: BTreeMap<Value, Option<BTreeSet<Const>>>,
    /// Intervals of i64 values ([`super::int_ranges`]), for `AtLeast`/`AtMost` facts about the
    /// values an edge or a `return` carries.
    int_ranges: HashMap<Value, IntRange>,
    /// Intervals of f64 values ([`super::ranges`]), for `Within` facts.
    ranges: Option<std::rc::Rc<super::ranges::Ranges>>,
    /// Facts found elsewhere about the values an edge (from, side) carries.
    edge_extra: BTreeMap<(Block, usize), Vec<Fact>>,
}

impl<'f> Facts<'f> {
    pub fn new(f: &'f Function, cfg: &'f Cfg) -> Facts<'f> {
        Facts {
            f,
            cfg,
            sets: BTreeMap::new(),
            int_ranges: HashMap::new(),
            ranges: None,
            edge_extra: BTreeMap::new(),
        }
    }

    /// Also states facts found elsewhere about the values edges carry (the trajectory of a loop
    /// counter, [`super::trips::test_trajectory`]), keyed by (from, branch side).
    pub fn with_edge_facts(mut self, extra: BTreeMap<(Block, usize), Vec<Fact>>) -> Facts<'f> {
        self.edge_extra = extra;
        self
    }

    /// Also states the bounds of i64 values that `ranges` knows.
    pub fn with_int_ranges(mut self, ranges: HashMap<Value, IntRange>) -> Facts<'f> {
        self.int_ranges = ranges;
        self
    }

    /// Also states the intervals of f64 values that `ranges` knows.
    pub fn with_ranges(mut self, ranges: std::rc::Rc<super::ranges::Ranges>) -> Facts<'f> {
        self.ranges = Some(ranges);
        self
    }

    /// `AtLeast`/`AtMost` facts, as index `k`, for the finite bounds of `v`'s interval (a
    /// `Within` fact for an f64 value).
    fn bounds(&self, k: usize, v: Value) -> Vec<Fact> {
        if let Some((lo, hi)) = self.ranges.as_ref().and_then(|r| r.get(v)) {
            return vec![Fact::Within(k, lo, hi)];
        }
        let Some(&(lo, hi)) = self.int_ranges.get(&v) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Ok(lo) = i64::try_from(lo) {
            if lo > i64::MIN {
                out.push(Fact::AtLeast(k, lo));
            }
        }
        if let Ok(hi) = i64::try_from(hi) {
            if hi < i64::MAX {
                out.push(Fact::AtMost(k, hi));
            }
        }
        out
    }

    /// The constants `v` can be, if few and known.
    fn set(&mut self, v: Value) -> Option<BTreeSet<Const>> {
        if let Some(s) = self.sets.get(&v) {
            return s.clone();
        }
        // Provisionally unknown, which also ends cycles through loop parameters.
        self.sets.insert(v, None);
        let result = match self.f.values[v].def {
            ValueDef::Result(inst, _) => match self.f.insts[inst].kind {
                InstKind::Const(c) => Some(BTreeSet::from([c])),
                _ => None,
            },
            ValueDef::Param(block, index) => {
                let edges = self.cfg.preds.get(&block).cloned().unwrap_or_default();
                let mut all = BTreeSet::new();
                let mut known = !edges.is_empty();
                for e in &edges {
                    match self.edge_arg_set(e, index as usize) {
                        Some(s) => all.extend(s),
                        None => known = false,
                    }
                    if !known || all.len() > MAX_SET {
                        known = false;
                        break;
                    }
                }
                known.then_some(all)
            }
        };
        self.sets.insert(v, result.clone());
        result
    }

    /// The constants the `index`-th argument of an edge can be.
    fn edge_arg_set(&mut self, e: &Edge, index: usize) -> Option<BTreeSet<Const>> {
        let arg = *e.args.get(index)?;
        // A branch condition passed along its own edge is known there.
        if let Some(term) = self.f.terminator(e.from) {
            if let InstKind::Brif { cond, .. } = self.f.insts[term].kind {
                if cond == arg {
                    return Some(BTreeSet::from([Const::Bool(e.slot == 0)]));
                }
            }
        }
        self.set(arg)
    }

    /// Follows block parameters back to the value they carry: through a single incoming edge,
    /// and through a loop that passes the parameter round unchanged (an inner loop's header
    /// carrying the outer counter: every edge brings either one outside value or the
    /// parameter itself back), so the outer loop's step is still seen as `i + 1`.
    fn origin(&self, v: Value) -> Value {
        self.origin_within(v, 4)
    }

    fn origin_within(&self, mut v: Value, depth: u32) -> Value {
        for _ in 0..64 {
            let ValueDef::Param(block, index) = self.f.values[v].def else {
                break;
            };
            let Some(preds) = self.cfg.preds.get(&block) else {
                break;
            };
            if let [e] = preds.as_slice() {
                match e.args.get(index as usize) {
                    Some(&arg) => {
                        v = arg;
                        continue;
                    }
                    None => break,
                }
            }
            if depth == 0 {
                break;
            }
            let mut carried: Option<Value> = None;
            let mut invariant = true;
            for e in preds {
                let Some(&arg) = e.args.get(index as usize) else {
                    invariant = false;
                    break;
                };
                let o = self.origin_within(arg, depth - 1);
                if o == v {
                    continue;
                }
                if carried.is_some_and(|c| c != o) {
                    invariant = false;
                    break;
                }
                carried = Some(o);
            }
            match carried {
                Some(c) if invariant => v = c,
                _ => break,
            }
        }
        v
    }

    /// If `v` is `p + c` (or `p - c`) for a constant c, with `p` carrying `param`: c.
    fn step_of(&self, v: Value, param: Value) -> Option<i64> {
        let ValueDef::Result(inst, _) = self.f.values[v].def else {
            return None;
        };
        let InstKind::Prim { op, ref args } = self.f.insts[inst].kind else {
            return None;
        };
        let constant = |x: Value| match self.f.values[x].def {
            ValueDef::Result(i, _) => self.f.insts[i].kind.clone(),
            _ => InstKind::Return {
                args: ValueList::new(),
            },
        };
        let [a, b] = args.as_slice() else {
            return None;
        };
        let (a, b) = (*a, *b);
        match (op, constant(b), constant(a)) {
            (Opcode::Iadd, InstKind::Const(Const::I64(c)), _) if self.origin(a) == param => Some(c),
            (Opcode::Iadd, _, InstKind::Const(Const::I64(c))) if self.origin(b) == param => Some(c),
            (Opcode::Isub, InstKind::Const(Const::I64(c)), _) if self.origin(a) == param => {
                c.checked_neg()
            }
            _ => None,
        }
    }

    /// The facts of every incoming edge of `block`, in `cfg.preds` order.
    pub fn edge_facts(&mut self, block: Block) -> Vec<Vec<Fact>> {
        let edges = self.cfg.preds.get(&block).cloned().unwrap_or_default();
        let params = self.f.blocks[block].params.clone();
        let mut facts: Vec<Vec<Fact>> = vec![Vec::new(); edges.len()];
        for (i, e) in edges.iter().enumerate() {
            for k in 0..params.len() {
                if let Some(set) = self.edge_arg_set(e, k) {
                    facts[i].push(Fact::In(k, set.into_iter().collect()));
                } else if let Some(&arg) = e.args.get(k) {
                    // An f64 argument the branch taking this edge compared with a constant
                    // is narrowed by that test.
                    let test = self
                        .f
                        .terminator(e.from)
                        .and_then(|t| match self.f.insts[t].kind {
                            InstKind::Brif { cond, .. } => Some((cond, e.slot == 0)),
                            _ => None,
                        });
                    let on_edge = self.ranges.as_ref().and_then(|r| {
                        let (cond, taken) = test?;
                        super::ranges::narrowed(self.f, cond, taken, arg, r.get(arg))
                    });
                    match on_edge {
                        Some((lo, hi)) => facts[i].push(Fact::Within(k, lo, hi)),
                        None => facts[i].extend(self.bounds(k, arg)),
                    }
                }
            }
        }
        // Induction: facts for the edges that go round.
        for (k, ind) in self.inductions(block) {
            for &(i, c) in &ind.steps {
                let Some(bound) = ind.start.checked_add(c) else {
                    continue;
                };
                if ind.increasing() {
                    facts[i].push(Fact::AtLeast(k, bound));
                } else if ind.decreasing() {
                    facts[i].push(Fact::AtMost(k, bound));
                }
            }
        }
        for (i, e) in edges.iter().enumerate() {
            for fact in self.edge_extra.get(&(e.from, e.slot)).into_iter().flatten() {
                let known = facts[i]
                    .iter()
                    .any(|f| matches!(f, Fact::In(..)) && f.index() == fact.index());
                if !known {
                    facts[i].push(fact.clone());
                }
            }
        }
        facts
    }

    /// The induction variables among `block`'s parameters (by index): entering edges pass one
    /// constant, the others the parameter plus a constant step.
    pub fn inductions(&mut self, block: Block) -> Vec<(usize, Induction)> {
        let edges = self.cfg.preds.get(&block).cloned().unwrap_or_default();
        let params = self.f.blocks[block].params.clone();
        let mut out = Vec::new();
        for (k, &p) in params.iter().enumerate() {
            let mut start: Option<i64> = None;
            let mut steps: Vec<(usize, i64)> = Vec::new();
            let mut ok = true;
            for (i, e) in edges.iter().enumerate() {
                let Some(&arg) = e.args.get(k) else {
                    ok = false;
                    break;
                };
                if let Some(c) = self.step_of(arg, p) {
                    steps.push((i, c));
                    continue;
                }
                match self
                    .edge_arg_set(e, k)
                    .map(|s| s.into_iter().collect::<Vec<_>>())
                {
                    Some(s) if s.len() == 1 && s[0].as_i64().is_some() => {
                        let a = s[0].as_i64().unwrap_or_default();
                        if start.is_some_and(|x| x != a) {
                            ok = false;
                        }
                        start = Some(a);
                    }
                    _ => ok = false,
                }
            }
            if let Some(start) = start.filter(|_| ok && !steps.is_empty()) {
                out.push((k, Induction { start, steps }));
            }
        }
        out
    }

    /// The facts of each return site about the returned values.
    pub fn return_facts(&mut self) -> Vec<Vec<Fact>> {
        let returns = self.cfg.returns.clone();
        returns
            .iter()
            .map(|&b| {
                let mut facts = Vec::new();
                if let Some(term) = self.f.terminator(b) {
                    if let InstKind::Return { args } = self.f.insts[term].kind.clone() {
                        for (k, v) in args.into_iter().enumerate() {
                            if let Some(set) = self.set(v) {
                                facts.push(Fact::In(k, set.into_iter().collect()));
                            } else {
                                facts.extend(self.bounds(k, v));
                            }
                        }
                    }
                }
                facts
            })
            .collect()
    }
}
