//! Range analysis: an interval `[lo, hi]` that each f64 value of a forward function always lies
//! in, when one can be told from its definition (`exp(x) ≥ 0`, `sin(x) ∈ [−1, 1]`,
//! `log(1 + exp(x)) ≥ 0`, a call of a function whose every `return` is such a value).
//!
//! Rules use it to draw an operand they read from θ only from values it can have: in
//! `softplus(a) * b` the factor `softplus(a)` is positive, so θ for it is drawn from (0, ∞] and
//! every draw gives a preimage, where drawing from all nonzero reals would waste half of them.
//!
//! Invariant: the interval contains every non-NaN value the forward code can compute there
//! (rounding is monotone, so the bounds computed in floating point are safe). A block parameter
//! has the hull of its incoming values, narrowed by the branch that brings each (see
//! [`analyze`]); a loop head's is unknown (no widening is attempted). A value that may be NaN
//! has an interval for its other values only; a NaN operand is not in any narrowed θ domain,
//! which only costs completeness for NaN intermediates, whose outputs `pinv check` skips as
//! non-finite.
//!
//! The analysis also knows which values are never NaN ([`Ranges::never_nan`]), because `min` and
//! `max` ignore a NaN operand: `max(asin(p), p)` for `p = −3.5` is `−3.5`, below every `asin`,
//! so their interval covers the other operand's alone where one may be NaN ([`Operand`]), which
//! values are used only in operations with themselves (`p − p`, `p / p`), which the
//! reorientation takes as the one value they have ([`Ranges::only_with_itself`]), and which go
//! into the argument of a periodic function ([`Ranges::feeds_periodic`]).

use pinv_core::ir::{
    Block, Const, Domain, FuncId, Function, InstKind, Module, Opcode, Value, ValueDef,
};
use std::collections::{HashMap, HashSet};

/// An interval `[lo, hi]`.
pub type Interval = (f64, f64);

/// The intervals of each function's results, once analysed (`None` while being analysed).
pub type ReturnRanges = HashMap<FuncId, Option<Vec<Option<Interval>>>>;

/// The known intervals of a function's f64 values.
#[derive(Clone, Debug, Default)]
pub struct Ranges {
    map: HashMap<Value, (f64, f64)>,
    /// The f64 values that are never NaN.
    never_nan: HashSet<Value>,
    /// The values used, and only in operations with themselves (`p − p`, `p / p`:
    /// [`Opcode::with_itself`]), with whether one of those divides.
    only_with_itself: HashMap<Value, bool>,
    /// The f64 values that `sin`, `cos` or `tan` take as their argument, directly or through
    /// at most [`PERIODIC_DEPTH`] f64 operations ([`Ranges::feeds_periodic`]).
    feeds_periodic: HashSet<Value>,
    /// The f64 values that `as i64` or `bits` takes, directly or through at most
    /// [`PERIODIC_DEPTH`] f64 operations ([`Ranges::feeds_conversion`]).
    feeds_conversion: HashSet<Value>,
    /// For each parameter of a block other than the entry, the values its incoming edges pass
    /// it ([`Ranges::sources`]).
    sources: HashMap<Value, Vec<Value>>,
    /// The results of operations of a value with itself that may be NaN (`p − p`, `p / p`)
    /// whose NaN can decide something other than a NaN output ([`Ranges::nan_decides`]), with
    /// whether their operand is [`solitary`] ([`Ranges::solitary_operand`]).
    nan_decides: HashMap<Value, NanDecides>,
}

/// What the reorientation needs of a value [`Ranges::nan_decides`] holds for.
#[derive(Clone, Debug)]
struct NanDecides {
    /// The operand is [`solitary`].
    solitary: bool,
    /// The block that defines the value.
    block: Block,
    /// The comparisons of the value in its block ([`Ranges::comparisons_of`]).
    comparisons: Vec<pinv_core::ir::Inst>,
}

/// How many f64 operations below a `sin`, `cos` or `tan` [`Ranges::feeds_periodic`] looks.
const PERIODIC_DEPTH: u32 = 8;

impl Ranges {
    pub fn get(&self, v: Value) -> Option<(f64, f64)> {
        self.map.get(&v).copied()
    }

    /// Whether `v` is never NaN (false where the analysis cannot tell).
    pub fn never_nan(&self, v: Value) -> bool {
        self.never_nan.contains(&v)
    }

    /// Whether `v` is used, and only in operations with itself (`v − v`, `v / v`): the
    /// reorientation takes those as the one value they have apart from NaN, and leaves `v`
    /// free ([`Ranges::divided_by_itself`]).
    pub fn only_with_itself(&self, v: Value) -> bool {
        self.only_with_itself.contains_key(&v)
    }

    /// Whether `v` goes into the argument of `sin`, `cos` or `tan`, directly or through f64
    /// operations (`sin(pow(1.5, p²))`: `p²` and `p`). Far from 0 such an argument must be
    /// exact where a relative tolerance would not do: at 2·10⁹ one ulp is 2.4e-7, which
    /// moves the sine by as much, so the steps that solve these values name their exact float.
    pub fn feeds_periodic(&self, v: Value) -> bool {
        self.feeds_periodic.contains(&v)
    }

    /// Whether `v` goes into `as i64` or `bits`, directly or through f64 operations
    /// (`pow(p, 28.0) as i64`: `p`). Where the conversion's operand is beyond 2⁵³, every ulp
    /// is another integer: a base an ulp off within the tolerance gives `pow(p, 28)` tens of
    /// integers off, so the steps that solve these values name their exact float.
    pub fn feeds_conversion(&self, v: Value) -> bool {
        self.feeds_conversion.contains(&v)
    }

    /// Whether `v` is an operation of a value with itself that may be NaN (`p − p`: 0 or NaN)
    /// whose NaN can change something other than making an output NaN: a comparison, `min`,
    /// `max`, `pow`, a conversion or a call reads it, directly or through operations that pass
    /// a NaN on, or a block parameter it goes into ([`nan_observed`]).
    pub fn nan_decides(&self, v: Value) -> bool {
        self.nan_decides.contains_key(&v)
    }

    /// Whether `v` is [`Ranges::nan_decides`] and its operand is an input or computed from
    /// inputs nothing else uses ([`solitary`]): solving it from `v` cannot disagree with
    /// another solution of them.
    pub fn solitary_operand(&self, v: Value) -> bool {
        self.nan_decides.get(&v).is_some_and(|n| n.solitary)
    }

    /// The comparisons of `v`, a [`Ranges::nan_decides`] value, in the block that defines it.
    pub fn comparisons_of(&self, v: Value) -> &[pinv_core::ir::Inst] {
        self.nan_decides
            .get(&v)
            .map_or(&[], |n| n.comparisons.as_slice())
    }

    /// The values the edges into `v`'s block pass for it, where `v` is a block parameter (other
    /// than the entry's); none otherwise.
    pub fn sources(&self, v: Value) -> &[Value] {
        self.sources.get(&v).map_or(&[], Vec::as_slice)
    }

    /// Whether `v` is used, and only in operations with itself, one of them `v / v`: 1 where
    /// `v` is finite and nonzero, NaN elsewhere. θ for such a value, where nothing solves it,
    /// is drawn nonzero ([`free_domain`]).
    pub fn divided_by_itself(&self, v: Value) -> bool {
        self.only_with_itself.get(&v) == Some(&true)
    }

    fn operand(&self, v: Value) -> Operand {
        Operand {
            range: self.get(v),
            never_nan: self.never_nan(v),
        }
    }
}

/// What the analysis knows of an operand: its interval (of its non-NaN values) and whether it is
/// never NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Operand {
    pub range: Option<Interval>,
    pub never_nan: bool,
}

impl Operand {
    /// Nothing known: any value, NaN included.
    pub const UNKNOWN: Operand = Operand {
        range: None,
        never_nan: false,
    };

    /// A constant `x`.
    pub fn constant(x: f64) -> Operand {
        if x.is_nan() {
            return Operand::UNKNOWN;
        }
        Operand {
            range: Some((x, x)),
            never_nan: true,
        }
    }
}

/// The intervals of `f`'s values, and of the functions it calls (memoised in `returns`).
///
/// Blocks are visited in layout order. A block parameter gets the hull of what its incoming
/// edges carry when every edge comes from a block visited before it (a merge after `if`; not
/// a loop head, whose back edge comes later), each argument narrowed by the branch that takes
/// the edge when that branch compares it with a constant: in `if x < 1.0 { … } else { … }` the
/// else side's `x` is at least 1.
pub fn analyze(module: &Module, f: &Function, returns: &mut ReturnRanges) -> Ranges {
    let mut r = Ranges::default();
    // Each block's incoming edges: (from, argument values, the branch's test on this side).
    let mut incoming: HashMap<Block, Vec<Incoming>> = HashMap::new();
    for &b in &f.layout {
        let Some(t) = f.terminator(b) else { continue };
        let kind = &f.insts[t].kind;
        let cond = match kind {
            InstKind::Brif { cond, .. } => Some(*cond),
            _ => None,
        };
        for (slot, call) in kind.successors().into_iter().enumerate() {
            incoming.entry(call.block).or_default().push((
                b,
                call.args.to_vec(),
                cond.map(|c| (c, slot == 0)),
            ));
        }
    }
    let mut done: HashSet<Block> = HashSet::new();
    let (mut divided, mut other_use) = (HashMap::new(), HashSet::new());
    for &b in &f.layout {
        let edges = incoming.get(&b).map(Vec::as_slice).unwrap_or_default();
        if !edges.is_empty() && edges.iter().all(|(from, _, _)| done.contains(from)) {
            for (k, &q) in f.blocks[b].params.iter().enumerate() {
                if f.value_type(q) != pinv_core::ir::Type::F64 {
                    continue;
                }
                let each: Option<Vec<(f64, f64)>> = edges
                    .iter()
                    .map(|(_, args, test)| {
                        let a = *args.get(k)?;
                        let range = match *test {
                            Some((cond, taken)) => narrowed(f, cond, taken, a, r.get(a)),
                            None => r.get(a),
                        };
                        range.filter(|(lo, hi)| lo <= hi)
                    })
                    .collect();
                let never_nan = edges
                    .iter()
                    .all(|(_, args, _)| args.get(k).is_some_and(|&a| r.never_nan(a)));
                if never_nan {
                    r.never_nan.insert(q);
                }
                if let Some(each) = each {
                    let lo = each.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
                    let hi = each.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
                    if lo <= hi && (lo > f64::NEG_INFINITY || hi < f64::INFINITY) {
                        r.map.insert(q, (lo, hi));
                    }
                }
            }
        }
        done.insert(b);
        for &inst in &f.blocks[b].insts {
            let data = &f.insts[inst];
            note_uses(&data.kind, &mut divided, &mut other_use);
            let operand = |k: usize| match &data.kind {
                InstKind::Prim { args, .. } => {
                    args.get(k).map_or(Operand::UNKNOWN, |&v| r.operand(v))
                }
                _ => Operand::UNKNOWN,
            };
            let results: Vec<Option<(f64, f64)>> = match &data.kind {
                InstKind::Const(Const::F64(x)) if !x.is_nan() => {
                    r.never_nan.insert(data.results[0]);
                    vec![Some((*x, *x))]
                }
                InstKind::Prim { op, args } => {
                    let (a, b) = (operand(0), operand(1));
                    if prim_never_nan(*op, a, b) {
                        r.never_nan.insert(data.results[0]);
                    }
                    match (op, args.as_slice()) {
                        // A square is never negative, whatever its operand's interval.
                        (Opcode::Fmul, [x, y]) if x == y => {
                            let (lo, hi) = a.range.map_or((0.0, f64::INFINITY), |(lo, hi)| {
                                let m = lo.abs().max(hi.abs());
                                let least = if lo <= 0.0 && hi >= 0.0 {
                                    0.0
                                } else {
                                    lo.abs().min(hi.abs())
                                };
                                (least * least, m * m)
                            });
                            vec![Some((lo, hi))]
                        }
                        // `p − p` is 0 and `p / p` is 1 (or NaN), whatever p's interval.
                        (op, [x, y]) if x == y && op.with_itself().is_some() => {
                            match op.with_itself() {
                                Some(Const::F64(c)) => vec![Some((c, c))],
                                _ => vec![None],
                            }
                        }
                        _ => vec![prim_range(*op, a, b)],
                    }
                }
                InstKind::Call { callee, .. } => call_range(module, *callee, returns),
                _ => Vec::new(),
            };
            for (&v, range) in data.results.iter().zip(results) {
                if let Some((lo, hi)) = range {
                    if !lo.is_nan()
                        && !hi.is_nan()
                        && lo <= hi
                        && f.value_type(v) == pinv_core::ir::Type::F64
                    {
                        r.map.insert(v, (lo, hi));
                    }
                }
            }
        }
    }
    r.sources = param_sources(f);
    // `p − p` is 0 only where p is finite: where its NaN decides something (a branch, `min`,
    // a conversion), the reorientation lets θ say which of the two it is.
    let observed = nan_observed(f, &r.sources);
    let uses = use_counts(f);
    for &b in &f.layout {
        for &inst in &f.blocks[b].insts {
            let data = &f.insts[inst];
            let InstKind::Prim { op, args } = &data.kind else {
                continue;
            };
            let with_itself = args.len() == 2 && args[0] == args[1];
            if with_itself && op.nan_with_itself() && observed.contains(&data.results[0]) {
                let nan = NanDecides {
                    solitary: solitary(f, &uses, args[0], SOLITARY_DEPTH),
                    block: b,
                    comparisons: Vec::new(),
                };
                r.nan_decides.insert(data.results[0], nan);
            }
            // The comparisons in the same block, which come after what they compare.
            if op.result_type() == pinv_core::ir::Type::Bool {
                let mut seen = args.clone();
                seen.dedup();
                for a in seen {
                    match r.nan_decides.get_mut(&a) {
                        Some(nan) if nan.block == b => nan.comparisons.push(inst),
                        _ => {}
                    }
                }
            }
        }
    }
    divided.retain(|v, _| !other_use.contains(v));
    r.only_with_itself = divided;
    r.feeds_periodic = periodic_arguments(f);
    r.feeds_conversion = conversion_operands(f);
    r
}

/// How many steps [`solitary`] looks down.
const SOLITARY_DEPTH: u32 = 16;

/// How many times each value of `f` is used.
fn use_counts(f: &Function) -> HashMap<Value, u32> {
    let mut uses: HashMap<Value, u32> = HashMap::new();
    for &b in &f.layout {
        for &inst in &f.blocks[b].insts {
            f.insts[inst]
                .kind
                .for_each_arg(|v| *uses.entry(v).or_default() += 1);
        }
    }
    uses
}

/// Whether `v` is an input of the function, or computed from constants and values used only
/// there, down to inputs (`log(p)` where p has no other use): solving such a value from what
/// `v − v` is cannot disagree with another solution of its inputs. Where one is used elsewhere
/// (`p · 2 <= q − q` with `q = p · p`), p is solved there, and `q − q` is left as its one value
/// (a NaN there, from an infinite square, is not reached).
fn solitary(f: &Function, uses: &HashMap<Value, u32>, v: Value, depth: u32) -> bool {
    match f.values[v].def {
        ValueDef::Param(b, _) => f.entry() == Some(b),
        ValueDef::Result(i, _) => {
            let InstKind::Prim { args, .. } = &f.insts[i].kind else {
                return false;
            };
            depth > 0
                && args.iter().all(|&a| {
                    f.constant(a).is_some()
                        || (uses.get(&a) == Some(&1) && solitary(f, uses, a, depth - 1))
                })
        }
    }
}

/// Whether a NaN operand of `op` always gives a NaN result.
fn propagates_nan(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fadd | Fsub
            | Fmul
            | Fdiv
            | Frem
            | Fneg
            | Sin
            | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Sinh
            | Cosh
            | Tanh
            | Exp
            | Log
            | Sqrt
            | Fabs
            | Floor
            | Atan2
    )
}

/// The f64 values of `f` whose being NaN can change something other than making an output NaN:
/// those a comparison, `min`, `max`, `pow`, a conversion or a call reads, and, backwards, the
/// operands of an operation that passes a NaN on ([`propagates_nan`]) whose result is one, and
/// what the edges into a block pass for a parameter that is one (`sources`).
fn nan_observed(f: &Function, sources: &HashMap<Value, Vec<Value>>) -> HashSet<Value> {
    let mut work: Vec<Value> = Vec::new();
    for &b in &f.layout {
        for &inst in &f.blocks[b].insts {
            match &f.insts[inst].kind {
                InstKind::Prim { op, .. } if propagates_nan(*op) => {}
                InstKind::Return { .. } | InstKind::Jump { .. } | InstKind::Brif { .. } => {}
                kind => kind.for_each_arg(|v| work.push(v)),
            }
        }
    }
    let mut observed = HashSet::new();
    while let Some(v) = work.pop() {
        if f.value_type(v) != pinv_core::ir::Type::F64 || !observed.insert(v) {
            continue;
        }
        match f.values[v].def {
            ValueDef::Result(i, _) => {
                if let InstKind::Prim { op, args } = &f.insts[i].kind {
                    if propagates_nan(*op) {
                        work.extend(args.iter().copied());
                    }
                }
            }
            ValueDef::Param(..) => {
                work.extend(sources.get(&v).into_iter().flatten().copied());
            }
        }
    }
    observed
}

/// [`Ranges::feeds_periodic`]: the arguments of `sin`, `cos` and `tan`, and the f64 operands
/// of the f64 operations that compute them, to [`PERIODIC_DEPTH`] operations down.
fn periodic_arguments(f: &Function) -> HashSet<Value> {
    operands_below(f, &[Opcode::Sin, Opcode::Cos, Opcode::Tan])
}

/// [`Ranges::feeds_conversion`]: the operands of `as i64` and `bits`, and the f64 operands of
/// the f64 operations that compute them, to [`PERIODIC_DEPTH`] operations down.
fn conversion_operands(f: &Function) -> HashSet<Value> {
    operands_below(f, &[Opcode::FcvtToI64, Opcode::F64Bits])
}

/// The f64 operands of the operations `ops` in `f`, and the f64 operands of the f64 operations
/// (and calls) that compute them, to [`PERIODIC_DEPTH`] operations down.
fn operands_below(f: &Function, ops: &[Opcode]) -> HashSet<Value> {
    let mut depth: HashMap<Value, u32> = HashMap::new();
    let mut work: Vec<(Value, u32)> = Vec::new();
    for (_, inst) in f.insts_in_layout() {
        if let InstKind::Prim { op, args } = &f.insts[inst].kind {
            if ops.contains(op) && f.value_type(args[0]) == pinv_core::ir::Type::F64 {
                work.push((args[0], PERIODIC_DEPTH));
            }
        }
    }
    while let Some((v, left)) = work.pop() {
        if depth.get(&v).is_some_and(|&d| d >= left) {
            continue;
        }
        depth.insert(v, left);
        let ValueDef::Result(def, _) = f.values[v].def else {
            continue;
        };
        // Through f64 operations, and calls (an isolation helper such as `iso.sq`).
        let args = match &f.insts[def].kind {
            InstKind::Prim { op, args } if op.result_type() == pinv_core::ir::Type::F64 => args,
            InstKind::Call { args, .. } if f.value_type(v) == pinv_core::ir::Type::F64 => args,
            _ => continue,
        };
        if left > 0 {
            for &a in args {
                if f.value_type(a) == pinv_core::ir::Type::F64 {
                    work.push((a, left - 1));
                }
            }
        }
    }
    depth.into_keys().collect()
}

/// [`Ranges::sources`]: for each parameter of a block other than the entry, what the edges
/// into the block pass it.
fn param_sources(f: &Function) -> HashMap<Value, Vec<Value>> {
    let mut sources: HashMap<Value, Vec<Value>> = HashMap::new();
    for &b in &f.layout {
        let Some(term) = f.terminator(b) else {
            continue;
        };
        for call in f.insts[term].kind.successors() {
            for (&q, &a) in f.blocks[call.block].params.iter().zip(&call.args) {
                sources.entry(q).or_default().push(a);
            }
        }
    }
    sources
}

/// Notes the values `kind` uses: in an operation with itself in `selves` (with whether one
/// divides), otherwise in `other_use`.
fn note_uses(kind: &InstKind, selves: &mut HashMap<Value, bool>, other_use: &mut HashSet<Value>) {
    match kind {
        InstKind::Prim { op, args }
            if args.len() == 2 && args[0] == args[1] && op.with_itself().is_some() =>
        {
            *selves.entry(args[0]).or_default() |= *op == Opcode::Fdiv;
        }
        _ => kind.for_each_arg(|v| {
            other_use.insert(v);
        }),
    }
}

/// The domain θ draws a value of type `ty` from where nothing solves it (an input no output
/// depends on, a result nothing uses): every value of the type, but nonzero for a value only
/// used as `v / v` ([`Ranges::divided_by_itself`]), which is NaN at 0.
pub(super) fn free_domain(ranges: &Ranges, v: Value, ty: pinv_core::ir::Type) -> Domain {
    if ranges.divided_by_itself(v) {
        Domain::NonzeroReal
    } else {
        Domain::all(ty)
    }
}

/// The interval of `a` on the side of a branch on `cond` where it is `taken`, when `cond`
/// compares `a` with a constant (closed: a strict end is kept; NaN is in no interval).
pub(super) fn narrowed(
    f: &Function,
    cond: Value,
    taken: bool,
    a: Value,
    range: Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let (lo, hi) = range.unwrap_or(FULL);
    let pinv_core::ir::ValueDef::Result(test, _) = f.values[cond].def else {
        return range;
    };
    let InstKind::Prim { op, args } = &f.insts[test].kind else {
        return range;
    };
    let constant = |v: Value| match f.constant(v)? {
        Const::F64(c) if !c.is_nan() => Some(c),
        _ => None,
    };
    // `a OP c` (or `c OP a`, mirrored) says a is below or above c on this side.
    let (below, c) = match (args.as_slice(), op) {
        (&[x, k], Opcode::Flt | Opcode::Fle) if x == a => (taken, constant(k)?),
        (&[x, k], Opcode::Fgt | Opcode::Fge) if x == a => (!taken, constant(k)?),
        (&[k, x], Opcode::Flt | Opcode::Fle) if x == a => (!taken, constant(k)?),
        (&[k, x], Opcode::Fgt | Opcode::Fge) if x == a => (taken, constant(k)?),
        _ => return range,
    };
    let narrowed = if below {
        (lo, hi.min(c))
    } else {
        (lo.max(c), hi)
    };
    (narrowed != FULL).then_some(narrowed)
}

/// An edge into a block: (from, its arguments, the branch's condition and the side taken).
type Incoming = (Block, Vec<Value>, Option<(Value, bool)>);

/// The intervals of a callee's results: the hull of its returned values' intervals.
fn call_range(
    module: &Module,
    callee: FuncId,
    returns: &mut ReturnRanges,
) -> Vec<Option<(f64, f64)>> {
    if let Some(known) = returns.get(&callee) {
        return known.clone().unwrap_or_default();
    }
    // Provisionally unknown, which also ends recursion.
    returns.insert(callee, None);
    let f = &module.functions[callee];
    // A chain of 10⁴ calls is 10⁴ nested analyses.
    let ranges = pinv_core::stack::ensure_sufficient_stack(|| analyze(module, f, returns));
    let mut hull: Vec<Option<(f64, f64)>> = vec![None; f.sig.returns.len()];
    let mut first = true;
    for (_, inst) in f.insts_in_layout() {
        if let InstKind::Return { args } = &f.insts[inst].kind {
            for (k, &v) in args.iter().enumerate() {
                let r = ranges.get(v);
                hull[k] = if first {
                    r
                } else {
                    match (hull[k], r) {
                        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                        _ => None,
                    }
                };
            }
            first = false;
        }
    }
    returns.insert(callee, Some(hull.clone()));
    hull
}

const FULL: (f64, f64) = (f64::NEG_INFINITY, f64::INFINITY);

/// Whether a primitive's f64 result is never NaN, from what is known of its operands: each is
/// never NaN, and their intervals rule out the NaN cases (`∞ − ∞`, `0 · ∞`, `0 / 0`, `∞ / ∞`,
/// `sqrt` and `log` of a negative, `asin` beyond ±1, `sin ∞`). `min` and `max` are NaN only
/// when both operands are.
pub(super) fn prim_never_nan(op: Opcode, a: Operand, b: Operand) -> bool {
    let finite = |o: Operand| {
        o.range
            .is_some_and(|(lo, hi)| lo.is_finite() && hi.is_finite())
    };
    let nonzero = |o: Operand| o.range.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
    let within = |o: Operand, l: f64, h: f64| o.range.is_some_and(|(lo, hi)| lo >= l && hi <= h);
    match op {
        Opcode::Fmin | Opcode::Fmax => a.never_nan || b.never_nan,
        Opcode::FcvtFromI64 => true,
        _ if !a.never_nan => false,
        Opcode::Fneg
        | Opcode::Fabs
        | Opcode::Floor
        | Opcode::Exp
        | Opcode::Tanh
        | Opcode::Atan
        | Opcode::Sinh
        | Opcode::Cosh => true,
        Opcode::Sqrt | Opcode::Log => within(a, 0.0, f64::INFINITY),
        Opcode::Sin | Opcode::Cos => finite(a),
        Opcode::Asin | Opcode::Acos => within(a, -1.0, 1.0),
        _ if !b.never_nan => false,
        Opcode::Atan2 => true,
        Opcode::Fadd | Opcode::Fsub => finite(a) || finite(b),
        Opcode::Fmul => finite(a) && finite(b),
        Opcode::Fdiv => finite(a) && nonzero(b),
        _ => false,
    }
}

/// The interval of a primitive's result from what is known of its operands (`None`: nothing
/// known).
pub(super) fn prim_range(op: Opcode, a_op: Operand, b_op: Operand) -> Option<(f64, f64)> {
    use std::f64::consts::{FRAC_PI_2, PI};
    let (a, b) = (a_op.range, b_op.range);
    let a_full = a.unwrap_or(FULL);
    let b_full = b.unwrap_or(FULL);
    // `min` and `max` give the other operand where one is NaN.
    let hull_where_nan = |(lo, hi): Interval| {
        let (mut lo, mut hi) = (lo, hi);
        if !a_op.never_nan {
            (lo, hi) = (lo.min(b_full.0), hi.max(b_full.1));
        }
        if !b_op.never_nan {
            (lo, hi) = (lo.min(a_full.0), hi.max(a_full.1));
        }
        (lo, hi)
    };
    let monotone = |g: fn(f64) -> f64, (lo, hi): (f64, f64)| Some((g(lo), g(hi)));
    let range = match op {
        Opcode::Fadd => (a?.0 + b?.0, a?.1 + b?.1),
        Opcode::Fsub => (a?.0 - b?.1, a?.1 - b?.0),
        Opcode::Fmul => {
            // A factor that is only ever 0 (`q − q`): the product is a zero, or NaN where the
            // other factor is infinite or NaN, whatever that factor's range.
            if a == Some((0.0, 0.0)) || b == Some((0.0, 0.0)) {
                return Some((0.0, 0.0));
            }
            let (a, b) = (a?, b?);
            let products = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
            if products.iter().any(|p| p.is_nan()) {
                return None;
            }
            (
                products.iter().copied().fold(f64::INFINITY, f64::min),
                products.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        }
        // A divisor that keeps one sign: the quotient is monotone in each operand on the box,
        // so its corners bound it (`1 / (1 + exp(-x))` in [0, 1]). NaN corners (inf / inf, 0 / 0)
        // leave it unknown.
        Opcode::Fdiv => {
            let (a, b) = (a?, b?);
            if !(b.0 > 0.0 || b.1 < 0.0) {
                return None;
            }
            let quotients = [a.0 / b.0, a.0 / b.1, a.1 / b.0, a.1 / b.1];
            if quotients.iter().any(|q| q.is_nan()) {
                return None;
            }
            (
                quotients.iter().copied().fold(f64::INFINITY, f64::min),
                quotients.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        }
        Opcode::Fneg => (-a?.1, -a?.0),
        Opcode::Exp => return monotone(f64::exp, a_full),
        Opcode::Sinh => return monotone(f64::sinh, a_full),
        Opcode::Tanh => return monotone(f64::tanh, a_full),
        Opcode::Atan => return monotone(f64::atan, a_full),
        Opcode::Floor => return monotone(f64::floor, a_full),
        Opcode::Log if a_full.0 >= 0.0 => return monotone(f64::ln, a_full),
        Opcode::Sqrt => (a_full.0.max(0.0).sqrt(), a_full.1.sqrt()),
        Opcode::Fabs => {
            let (lo, hi) = a_full;
            if lo >= 0.0 {
                (lo, hi)
            } else if hi <= 0.0 {
                (-hi, -lo)
            } else {
                (0.0, hi.max(-lo))
            }
        }
        Opcode::Cosh => {
            let (lo, hi) = a_full;
            let m = lo.abs().max(hi.abs());
            let low = if lo <= 0.0 && hi >= 0.0 {
                1.0
            } else {
                lo.abs().min(hi.abs()).cosh()
            };
            (low, m.cosh())
        }
        Opcode::Sin | Opcode::Cos => (-1.0, 1.0),
        Opcode::Asin => (-FRAC_PI_2, FRAC_PI_2),
        Opcode::Acos => (0.0, PI),
        Opcode::Atan2 => (-PI, PI),
        // An even whole power, or a power of a base that is never negative, is never negative
        // (`p · pow(1 + r, 10)`: θ draws the power, and p = y / θ has y's sign). A base whose
        // range starts at 0 may be −0, whose odd negative powers are −inf: the exponent must
        // then be at least 0.
        Opcode::Pow => {
            let even = matches!(b, Some((lo, hi)) if lo == hi && (lo / 2.0).fract() == 0.0);
            let positive_base = a_full.0 > 0.0;
            let nonneg_both = a_full.0 >= 0.0 && b_full.0 >= 0.0;
            if !(even || positive_base || nonneg_both) {
                return None;
            }
            (0.0, f64::INFINITY)
        }
        Opcode::Fmin => hull_where_nan((a_full.0.min(b_full.0), a_full.1.min(b_full.1))),
        Opcode::Fmax => hull_where_nan((a_full.0.max(b_full.0), a_full.1.max(b_full.1))),
        _ => return None,
    };
    Some(range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::SourceFile;

    #[test]
    fn softplus_is_nonnegative_and_sines_are_bounded() {
        let file = SourceFile::new(
            "r.pinv",
            "fn softplus(x: f64) -> f64 { log(1.0 + exp(x)) }
             fn g(a: f64, b: f64) -> f64 { softplus(a) * b + sin(b) * 2.0 }",
        );
        let compiled = pinv_core::compile_source(&file).expect("compiles");
        let module = &compiled.module;
        let g = &module.functions[module.get("g").expect("g")];
        let ranges = analyze(module, g, &mut HashMap::new());
        let mut found = Vec::new();
        for (_, inst) in g.insts_in_layout() {
            let data = &g.insts[inst];
            if let Some(&r) = data.results.first() {
                found.push((
                    format!("{:?}", data.kind)
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                    ranges.get(r),
                ));
            }
        }
        let call = found
            .iter()
            .find(|(k, _)| k.starts_with("Call"))
            .expect("a call");
        assert_eq!(call.1, Some((0.0, f64::INFINITY)));
        let sin = ranges.map.values().any(|&r| r == (-2.0, 2.0));
        assert!(sin, "{found:?}");
    }

    #[test]
    fn a_square_is_never_negative_whatever_its_operand() {
        let file = SourceFile::new(
            "r.pinv",
            "fn g(v: f64) -> f64 { sqrt(1.0 - v * v / 9e16) }
             fn h(v: f64) -> f64 { let w = if v > 2.0 { v } else { 2.0 }; w * w }",
        );
        let compiled = pinv_core::compile_source(&file).expect("compiles");
        let module = &compiled.module;
        let mut found = Vec::new();
        for name in ["g", "h"] {
            let f = &module.functions[module.get(name).expect("defined")];
            let ranges = analyze(module, f, &mut HashMap::new());
            found.extend(ranges.map.values().copied());
        }
        // v·v, then 1 − v²/c² below 1, and sqrt of that in [0, 1].
        for r in [(0.0, f64::INFINITY), (f64::NEG_INFINITY, 1.0), (0.0, 1.0)] {
            assert!(found.contains(&r), "{r:?} in {found:?}");
        }
        // w ≥ 2 squares to at least 4.
        assert!(found.contains(&(4.0, f64::INFINITY)), "{found:?}");
    }

    #[test]
    fn even_powers_and_powers_of_positive_bases_are_never_negative() {
        let any = Operand::UNKNOWN;
        let nonneg = Operand {
            range: Some((0.0, f64::INFINITY)),
            never_nan: true,
        };
        let positive = Operand {
            range: Some((1e-3, 5.0)),
            never_nan: true,
        };
        let half = Some((0.0, f64::INFINITY));
        for k in [10.0, 2.0, -4.0, 0.0] {
            assert_eq!(prim_range(Opcode::Pow, any, Operand::constant(k)), half);
        }
        assert_eq!(prim_range(Opcode::Pow, positive, any), half);
        assert_eq!(prim_range(Opcode::Pow, nonneg, positive), half);
        // Odd powers of anything, and a base that may be −0 to a negative power (−inf).
        assert_eq!(prim_range(Opcode::Pow, any, Operand::constant(3.0)), None);
        assert_eq!(
            prim_range(Opcode::Pow, nonneg, Operand::constant(-1.0)),
            None
        );
        assert_eq!(f64::powf(-0.0, -1.0), f64::NEG_INFINITY);
    }

    #[test]
    fn a_quotient_by_a_one_signed_divisor_is_bounded_by_its_corners() {
        let pos = Operand {
            range: Some((1.0, f64::INFINITY)),
            never_nan: true,
        };
        // The logistic 1 / (1 + exp(-x)) lies in [0, 1].
        assert_eq!(
            prim_range(Opcode::Fdiv, Operand::constant(1.0), pos),
            Some((0.0, 1.0))
        );
        let neg = Operand {
            range: Some((-4.0, -2.0)),
            never_nan: true,
        };
        let a = Operand {
            range: Some((-1.0, 3.0)),
            never_nan: true,
        };
        assert_eq!(prim_range(Opcode::Fdiv, a, neg), Some((-1.5, 0.5)));
        // A divisor that may be 0 (or of either sign), or an inf / inf corner: unknown.
        let either = Operand {
            range: Some((-1.0, 1.0)),
            never_nan: true,
        };
        assert_eq!(prim_range(Opcode::Fdiv, a, either), None);
        let up = Operand {
            range: Some((0.0, f64::INFINITY)),
            never_nan: true,
        };
        assert_eq!(prim_range(Opcode::Fdiv, up, pos), None);
    }

    #[test]
    fn a_branch_on_a_constant_bounds_its_sides() {
        // tri_wave's pieces: x on [1, 2] gives 2 − x in [0, 1], and x ≥ 2 gives x − 2 ≥ 0, so
        // the merged result of the inner `if` is never negative; the first piece x < 1 is
        // bounded above. Every value computed at random inputs lies in its interval.
        let file = SourceFile::new(
            "w.pinv",
            "fn tri_wave(x: f64) -> f64 {
                 if x < 1.0 { x } else if x < 2.0 { 2.0 - x } else { x - 2.0 }
             }",
        );
        let compiled = pinv_core::compile_source(&file).expect("compiles");
        let module = &compiled.module;
        let f = &module.functions[module.get("tri_wave").expect("tri_wave")];
        // In closed block form, as the reorientation sees it: x reaches each piece as a
        // parameter of its block, along the branch that tested it.
        let closed = crate::reorient::close_blocks(f);
        let ranges = analyze(module, &closed, &mut HashMap::new());
        let has = |want: (f64, f64)| ranges.map.values().any(|&r| r == want);
        assert!(has((0.0, 1.0)), "{:?}", ranges.map);
        assert!(has((0.0, f64::INFINITY)), "{:?}", ranges.map);
        assert!(has((1.0, 2.0)), "{:?}", ranges.map);
    }

    #[test]
    fn min_and_max_cover_the_other_operand_where_one_may_be_nan() {
        // `asin(p)` is NaN beyond ±1, and `max` then gives `p`, below every `asin`: the
        // interval of `max(asin(p), p)` is not bounded by `asin`'s. A constant is never NaN, so
        // `max(x, 0)` stays nonnegative (relu), and `max(asin(p), 0.5)` stays within
        // [0.5, π/2].
        let file = SourceFile::new(
            "m.pinv",
            "fn g(p: f64, x: f64) -> f64 {
                 let a = max(asin(p), p);
                 let b = min(p, acos(p));
                 let c = max(x, 0.0);
                 let d = max(asin(p), 0.5);
                 a + b + c + d
             }",
        );
        let compiled = pinv_core::compile_source(&file).expect("compiles");
        let module = &compiled.module;
        let f = &module.functions[module.get("g").expect("g")];
        let ranges = analyze(module, f, &mut HashMap::new());
        let mut by_op = Vec::new();
        for (_, inst) in f.insts_in_layout() {
            if let InstKind::Prim { op, args } = &f.insts[inst].kind {
                if matches!(op, Opcode::Fmin | Opcode::Fmax) {
                    let r = f.insts[inst].results[0];
                    let consts = args.iter().any(|&a| f.constant(a).is_some());
                    by_op.push((*op, consts, ranges.get(r), ranges.never_nan(r)));
                }
            }
        }
        use std::f64::consts::FRAC_PI_2;
        assert_eq!(
            by_op,
            vec![
                (
                    Opcode::Fmax,
                    false,
                    Some((f64::NEG_INFINITY, f64::INFINITY)),
                    false
                ),
                (
                    Opcode::Fmin,
                    false,
                    Some((f64::NEG_INFINITY, f64::INFINITY)),
                    false
                ),
                (Opcode::Fmax, true, Some((0.0, f64::INFINITY)), true),
                (Opcode::Fmax, true, Some((0.5, FRAC_PI_2)), true),
            ]
        );
    }
}
