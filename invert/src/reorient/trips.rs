//! Trip counts from the data: a loop whose bound only its exit test reads is inverted by running
//! the loop forward, not by guessing the bound.
//!
//! In `let mut i = 0; let mut r = 0; while i <= n { r += i; i += 1; } r` the loop starts from
//! constants and `n` is read only by the test, so the values at the k-th test do not depend on
//! `n`: they are the same trajectory for every `n`. Only the number of trips does, and that is
//! what y decides. The inverse therefore runs the trajectory forward, from the constants, and
//! at every visit of the loop head asks two things: do the values the loop would leave with here
//! give the values known after the loop (y, walked back)? And is there an `n` whose test goes
//! round at every earlier visit and leaves at this one? Every visit where both hold is a
//! **candidate**; θ picks one of them (a read narrowed to `0..count`, with no θ at all in effect
//! when there is one), and then the bound from the interval of `n` that leaves there (narrowed
//! again: for an i64 counter that is one value). The loop is then not walked back: with the
//! bound known, the inverse goes on before the loop, at the edge that entered it, with the
//! values it was entered with; the PGF records nothing inside the loop.
//!
//! The scan must know when to stop. It stops when no bound can go round any further (the
//! intervals of the tests are empty), or when a value compared with y has passed it for good:
//! - an i64 value that changes by a step of known sign at every trip (`r += i` with `i >= 0`),
//!   and cannot wrap within the iteration limit (so `r` never comes back to y);
//! - one whose step is a counter moving one way ([`Curve`]: `s += i` with `i` counting down
//!   rises, then falls for good once `i <= 0`), stopped once the step leads away from y too;
//! - one that may wrap round within the limit (`s += i * i`) stops the candidates before a wrap;
//!   those past one (the tail) are found by scanning on, when θ asks for them through a share of
//!   [`TAIL_SHARE`] of its first read.
//!
//! Without such a proof the loop is not scanned (θ reads the bound, as before).
//!
//! What this module owns: the recognition ([`plan`]), the scan functions it generates for a
//! loop head `H` of `f` (`f.trips.H.MODE`: H's instructions and the loop body, copied, with the
//! bookkeeping of candidates around them), the narrowing of a value compared at a loop's exit
//! ([`exit_bounds`]), and the trajectory of a counter the loop computes from constants alone
//! ([`test_trajectory`]). Invariants: a scan contains no θ, no `check` and no call; it runs at
//! most the iteration limit of visits and says so ([`STATUS_LIMIT`]) instead of running on; the
//! candidates it counts, picks and locates are the same list in every mode, in visit order.
//!
//! `f.trips.H.MODE(k…, pick, n, from) -> (status, lo, hi, visit, H's parameters…)`, with `k…`
//! the values known at the loop's exit ([`ScanMode`]):
//! - `count`: status is the number of candidates before any wrap ([`STATUS_LIMIT`] past the
//!   iteration limit), with the first candidate's bounds and parameters (θ picks it most
//!   often, and then needs no rescan);
//! - `pick`: status is `pick`, `[lo, hi]` the bounds that leave at that candidate, with H's
//!   parameters there; [`STATUS_NONE`] if there is no such candidate;
//! - `locate` (the PGF): status is the index of the candidate at which bound `n` leaves
//!   ([`STATUS_TAIL`] past a wrap, with its visit number), or [`STATUS_NONE`];
//! - `tail`: the first candidate past a wrap at or after visit `from` ([`STATUS_TAIL`]).

use super::blocks::{copy_block, Trip};
use super::facts::Cfg;
use super::int_ranges::{prim_range, IntRange, NEG_INF, POS_INF};
use super::ranges::{prim_range as float_range, Interval, Operand};
use super::region::{pair_fwd, rule_error, Region};
use super::Reorienter;
use crate::error::Error;
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncKind, Function, Inst, InstKind, Opcode, Signature, Type,
    Value, ValueDef,
};
use pinv_core::Span;
use pinv_primitives::rules::ops::Ops;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// How the scan gets a loop head parameter's value at the first visit.
#[derive(Clone, Copy, Debug)]
enum Init {
    /// A constant the entry edge passes.
    Const(Const),
    /// The bound itself (the scan's `n`).
    Bound,
    /// Not changed by the loop and passed on at its exit: the `k` of that exit argument.
    Exit(usize),
}

/// The relation of the exit test, as `n REL p` with `n` the bound, true on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    /// `a REL b` as `b REL' a`.
    fn mirrored(self) -> Rel {
        match self {
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
        }
    }

    fn not(self) -> Rel {
        match self {
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
        }
    }
}

/// A loop whose trip count the scan can compute: what [`plan`] found.
#[derive(Debug)]
pub(super) struct Plan {
    head: Block,
    /// The edge that enters the loop: (from, branch side).
    pub entry: (Block, usize),
    /// The branch side of the head that leaves the loop (0: then, 1: else).
    pub exit_slot: usize,
    /// The index of the bound among the head's parameters.
    pub bound: usize,
    bound_ty: Type,
    /// The exit test is `n REL p` when it is true.
    rel: Rel,
    /// Whether the loop goes round when the test is true.
    round_on: bool,
    /// The test's other operand (a value of the head).
    p: Value,
    /// The test's result, the head's branch condition.
    cond: Value,
    init: Vec<Init>,
    /// The loop's blocks other than the head, in reverse postorder from the head.
    body: Vec<Block>,
    /// The head's branch side that stays in the loop.
    round: BlockCall,
    /// The exit edge's arguments (values of the head).
    exit_args: Vec<Value>,
    /// Exit arguments that move one way at every trip: (index, nondecreasing, may wrap round
    /// within the iteration limit).
    monotone: Vec<(usize, bool, bool)>,
    /// Exit arguments whose step at each trip is another head parameter that moves one way, so
    /// that once the step has the sign that leads away from y it keeps it ([`Curve`]).
    curves: Vec<Curve>,
    /// Exit arguments that each trip multiplies by something ([`find_products`]): once such a
    /// product is 0 it stays 0, so a y other than 0 is out of reach and the scan stops. Used
    /// only without a monotone value or a curve; then candidates past [`SCAN_HORIZON`] visits
    /// are the tail's, as no value proves the scan may stop before the iteration limit.
    products: Vec<usize>,
    /// f64 exit arguments that move one way from a constant ([`find_rising`]): (index, up).
    /// Past y the scan stops; at ±∞ (which stays) the candidates after are the tail's, so
    /// that y = ∞ (an overflow) does not scan to the iteration limit.
    rising: Vec<(usize, bool)>,
    /// Whether the only values that stop the scan may wrap round: then trip counts past a wrap
    /// (the tail) are found by scanning on, and θ reaches them through a small share of its
    /// domain ([`TAIL_SHARE`]).
    pub tail: bool,
    pub span: Span,
}

impl Plan {
    /// The loop's head.
    pub fn head(&self) -> Block {
        self.head
    }

    /// Whether `b` is a block of the loop.
    pub fn contains(&self, b: Block) -> bool {
        b == self.head || self.body.contains(&b)
    }
}

/// A loop offset: the value is the head's parameter `param` plus an amount within `[lo, hi]`
/// (a bound may be infinite: [`NEG_INF`], [`POS_INF`]).
type Offset = (usize, i128, i128);

/// How many rounds [`Offsets::run`] widens the parameters of loops inside a loop's body.
const WIDENINGS: usize = 4;

/// Recognises a loop head whose exit test alone reads a bound, from constants, with a proof
/// that the scan stops. `None`: the loop is inverted as before.
pub(super) fn plan(c: &Function, cfg: &Cfg, head: Block, iteration_limit: i64) -> Option<Plan> {
    let blocks = loop_blocks(c, head);
    let inside = |b: Block| blocks.contains(&b);
    let ExitTest {
        exit_slot,
        round,
        exit,
        test,
        cond,
        rel,
        a,
        b,
    } = exit_test(c, head, &blocks)?;
    let term = c.terminator(head)?;
    // No other way out, no other way in, nothing that may trap or call. A loop inside is run
    // by the scan as it is (its trips are part of one visit of the head), and its parameters'
    // offsets are widened where it moves them ([`Offsets::run`]).
    for &b in &blocks {
        for succ in c.successors(b) {
            if !inside(succ) && b != head {
                return None;
            }
        }
        for e in cfg.preds.get(&b)? {
            if b != head && !inside(e.from) {
                return None;
            }
        }
        for &inst in &c.blocks[b].insts {
            if !may_scan(c, inst) {
                return None;
            }
        }
    }
    let entries: Vec<_> = cfg.preds[&head]
        .iter()
        .filter(|e| !inside(e.from))
        .collect();
    let [entry] = entries.as_slice() else {
        return None;
    };
    let params = &c.blocks[head].params;
    let position = |v: Value| params.iter().position(|&q| q == v);
    // `p OP n` is `n OP' p` with the relation mirrored.
    let (bound, p, rel) = match (position(a), position(b)) {
        (Some(i), _) if entry_arg_is_unknown(c, entry, i) => (i, b, rel),
        (_, Some(i)) if entry_arg_is_unknown(c, entry, i) => (i, a, rel.mirrored()),
        _ => return None,
    };
    let body = reverse_postorder(c, head, &blocks);
    let mut offsets = Offsets::new(c, head, &body);
    // Ranges of the head's i64 parameters over at most `limit` trips, refined twice: a counter's
    // range bounds what it adds to a sum.
    let limit = i128::from(iteration_limit.max(0));
    let mut seeds: HashMap<usize, IntRange> = HashMap::new();
    for _ in 0..3 {
        offsets.run(&seeds, &HashMap::new());
        for k in 0..params.len() {
            let (Some(Const::I64(start)), Some((lo, hi))) = (
                entry.args.get(k).and_then(|a| c.constant(*a)),
                offsets.latch_step(cfg, k),
            ) else {
                continue;
            };
            if let Some(range) = reach(i128::from(start), (lo, hi), limit) {
                seeds.insert(k, range);
            }
        }
    }
    offsets.run(&seeds, &HashMap::new());
    // The bound: unchanged round the loop, read by the test alone, not used after it.
    if offsets.latch_step(cfg, bound) != Some((0, 0)) || offsets.uses_of(bound) != vec![test] {
        return None;
    }
    let cond_used_elsewhere = blocks.iter().any(|&b| {
        c.blocks[b].insts.iter().any(|&i| {
            let mut uses = false;
            c.insts[i].kind.for_each_arg(|v| uses |= v == cond);
            uses && i != term
        })
    });
    if cond_used_elsewhere
        || exit
            .args
            .iter()
            .any(|a| offsets.param_of(*a) == Some(bound))
    {
        return None;
    }
    // Every other parameter starts from a constant, or is passed through to the exit.
    let mut init = Vec::new();
    for (k, &q) in params.iter().enumerate() {
        let i = if k == bound {
            Init::Bound
        } else if let Some(c0) = c.constant(*entry.args.get(k)?) {
            Init::Const(c0)
        } else if offsets.latch_step(cfg, k) == Some((0, 0)) {
            let at = exit.args.iter().position(|&a| a == q)?;
            Init::Exit(at)
        } else {
            return None;
        };
        init.push(i);
    }
    // Exit values that move one way (in unbounded arithmetic), and whether they can wrap round
    // within the iteration limit.
    let mut monotone = Vec::new();
    for (e, &(k, off_lo, off_hi)) in exit
        .args
        .iter()
        .enumerate()
        .flat_map(|(e, &a)| offsets.all(a).iter().map(move |o| (e, o)))
    {
        let a = exit.args[e];
        let (Init::Const(Const::I64(start)), Some((lo, hi)), true) = (
            init[k],
            offsets.latch_step(cfg, k),
            off_lo == off_hi && c.value_type(a) == Type::I64,
        ) else {
            continue;
        };
        let fits = reach(i128::from(start) + off_lo, (lo, hi), limit).is_some();
        if lo >= 0 && hi > 0 {
            monotone.push((e, true, !fits));
        } else if hi <= 0 && lo < 0 {
            monotone.push((e, false, !fits));
        }
    }
    monotone.dedup_by_key(|m| m.0);
    // One value that cannot wrap is enough; only without one do the others make a tail.
    let tail = monotone.iter().all(|m| m.2);
    if !tail {
        monotone.retain(|m| !m.2);
    }
    let mut curves = Vec::new();
    let mut products = Vec::new();
    let mut rising = Vec::new();
    let mut tail = tail && !monotone.is_empty();
    if monotone.is_empty() {
        curves = find_curves(c, cfg, &offsets, &init, &exit.args, params, limit);
        if curves.is_empty() {
            rising = find_rising(c, cfg, &offsets, &init, &exit.args, params);
            if rising.is_empty() {
                products = find_products(c, cfg, &offsets, &exit.args, params);
            }
            if rising.is_empty() && products.is_empty() {
                return None;
            }
            // No proof that a product has passed y for good: trip counts past the horizon
            // are the tail's; an f64 value at ±∞ stays there.
            tail = true;
        }
    }
    Some(Plan {
        head,
        entry: (entry.from, entry.slot),
        exit_slot,
        bound,
        bound_ty: c.value_type(params[bound]),
        rel,
        round_on: exit_slot == 1,
        p,
        cond,
        init,
        body,
        round,
        exit_args: exit.args.to_vec(),
        monotone,
        curves,
        products,
        rising,
        tail,
        span: c.insts[test].span,
    })
}

/// Whether every loop of `f` is one the scan takes ([`plan`]): a function rewritten to loops
/// for the scan's sake ([`pinv_core::ir::counted_recursion`]) is worth it only then; a loop
/// the scan declines is walked back, with θ choosing its trips.
pub(super) fn scans_every_loop(f: &Function, iteration_limit: i64) -> bool {
    let mut c = pinv_core::ir::closed::close_blocks(f);
    c.compact();
    let cfg = Cfg::new(&c);
    cfg.loop_heads
        .iter()
        .all(|&head| plan(&c, &cfg, head, iteration_limit).is_some())
}

/// What a loop's exit tells about the value its test compares with a constant, beyond the test
/// itself: in `while r > 1 { r = r / 2; n += 1; }`, leaving says `r <= 1`, but a trip round the
/// loop leaves `r / 2` of an `r > 1`, so at least 1; unless the loop was never entered, `r` is 1.
/// Where the values known after the loop rule out that it was never entered (here `n` is not 0),
/// the inverse draws the compared value from what a trip leaves only ([`ExitBounds`] at run time).
#[derive(Debug)]
pub(super) struct ExitBounds {
    pub exit_slot: usize,
    /// The head's parameter the test compares with a constant (its index).
    pub param: usize,
    /// What a trip round the loop can leave in it.
    latch: (Const, Const),
    /// Its value when the loop is entered, when a constant; `None`: any value.
    entry: Option<Const>,
    /// Exit arguments that are head parameters entered as a constant: (exit argument index,
    /// constant). If one of them differs from its constant, the loop went round.
    entered_when: Vec<(usize, Const)>,
}

/// The [`ExitBounds`] of loop head `head`, when a trip round its loop narrows the value its test
/// compares with a constant; `trajectory` is that value's, if [`test_trajectory`] found one.
pub(super) fn exit_bounds(
    c: &Function,
    cfg: &Cfg,
    head: Block,
    trajectory: Option<&Trajectory>,
) -> Option<ExitBounds> {
    let blocks = loop_blocks(c, head);
    let t = exit_test(c, head, &blocks)?;
    let params = &c.blocks[head].params;
    let position = |v: Value| params.iter().position(|&q| q == v);
    let (param, k, rel) = compared(c, head, &t)?;
    // A value each trip computes from itself and constants leaves at one known value.
    if let Some(tr) = trajectory {
        return Some(ExitBounds {
            exit_slot: t.exit_slot,
            param,
            latch: (tr.exit, tr.exit),
            entry: Some(tr.exit),
            entered_when: Vec::new(),
        });
    }
    let round_on = t.exit_slot == 1;
    let body = reverse_postorder(c, head, &blocks);
    let mut offsets = Offsets::new(c, head, &body);
    let mut seeds = HashMap::new();
    let mut fseeds = HashMap::new();
    match k {
        Const::I64(k) => {
            seeds.insert(param, int_set(rel, i128::from(k), round_on)?);
        }
        Const::F64(k) if !k.is_nan() => {
            fseeds.insert(param, float_set(rel, k, round_on));
        }
        _ => return None,
    }
    offsets.run(&seeds, &fseeds);
    let inside = |b: Block| blocks.contains(&b);
    let latches: Vec<Value> = cfg.preds[&head]
        .iter()
        .filter(|e| inside(e.from))
        .map(|e| e.args.get(param).copied())
        .collect::<Option<_>>()?;
    let latch = match k {
        Const::I64(_) => {
            let rs: Vec<IntRange> = latches
                .iter()
                .map(|&v| offsets.range(v))
                .collect::<Option<_>>()?;
            let lo = rs.iter().map(|r| r.0).min()?;
            let hi = rs.iter().map(|r| r.1).max()?;
            let (Ok(lo), Ok(hi)) = (i64::try_from(lo), i64::try_from(hi)) else {
                return None;
            };
            if (lo, hi) == (i64::MIN, i64::MAX) {
                return None;
            }
            (Const::I64(lo), Const::I64(hi))
        }
        _ => {
            let rs: Vec<Interval> = latches
                .iter()
                .map(|&v| offsets.frange(v))
                .collect::<Option<_>>()?;
            let lo = rs.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
            let hi = rs.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
            if lo.is_nan() || hi.is_nan() || (lo == f64::NEG_INFINITY && hi == f64::INFINITY) {
                return None;
            }
            (Const::F64(lo), Const::F64(hi))
        }
    };
    // The entry edges' constants, where they agree.
    let entries: Vec<&super::facts::Edge> = cfg.preds[&head]
        .iter()
        .filter(|e| !inside(e.from))
        .collect();
    let entered = |j: usize| -> Option<Const> {
        let mut cs = entries
            .iter()
            .map(|e| e.args.get(j).and_then(|a| c.constant(*a)));
        let first = cs.next()??;
        cs.all(|x| x.is_some_and(|x| x.bits() == first.bits() && x.ty() == first.ty()))
            .then_some(first)
    };
    if entries.is_empty() {
        return None;
    }
    let entry = entered(param);
    let entered_when: Vec<(usize, Const)> = t
        .exit
        .args
        .iter()
        .enumerate()
        .filter_map(|(e, &a)| Some((e, entered(position(a)?)?)))
        .collect();
    if entry.is_none() && entered_when.is_empty() {
        return None;
    }
    Some(ExitBounds {
        exit_slot: t.exit_slot,
        param,
        latch,
        entry,
        entered_when,
    })
}

/// The head's parameter the exit test compares with a constant: (its index, the constant, the
/// test as `q REL k`).
fn compared(c: &Function, head: Block, t: &ExitTest) -> Option<(usize, Const, Rel)> {
    let params = &c.blocks[head].params;
    let position = |v: Value| params.iter().position(|&q| q == v);
    match (
        position(t.a),
        c.constant(t.b),
        position(t.b),
        c.constant(t.a),
    ) {
        (Some(i), Some(k), _, _) => Some((i, k, t.rel)),
        (_, _, Some(i), Some(k)) => Some((i, k, t.rel.mirrored())),
        _ => None,
    }
}

/// What a loop head's parameter that its exit test compares with a constant does when each
/// trip computes it from itself and constants alone (`i = i + 1.0`): the loop then always runs
/// the same number of trips, and the values are what the forward code computes, bit for bit.
#[derive(Clone, Debug)]
pub(super) struct Trajectory {
    /// The parameter's index.
    pub param: usize,
    /// Its value when the loop leaves.
    pub exit: Const,
    /// The values it comes round the loop with (every visit but the first), when there are at
    /// most [`super::facts::MAX_SET`] of them.
    pub round: Option<BTreeSet<Const>>,
}

/// The [`Trajectory`] of `head`'s compared parameter, if it has one.
pub(super) fn test_trajectory(c: &Function, cfg: &Cfg, head: Block) -> Option<Trajectory> {
    let blocks = loop_blocks(c, head);
    let t = exit_test(c, head, &blocks)?;
    let (param, k, rel) = compared(c, head, &t)?;
    let inside = |b: Block| blocks.contains(&b);
    let (latches, entries): (Vec<_>, Vec<_>) =
        cfg.preds[&head].iter().partition(|e| inside(e.from));
    let [latch] = latches.as_slice() else {
        return None;
    };
    let latch = *latch.args.get(param)?;
    let starts: Vec<Const> = entries
        .iter()
        .map(|e| e.args.get(param).and_then(|a| c.constant(*a)))
        .collect::<Option<_>>()?;
    let start = *starts.first()?;
    if starts
        .iter()
        .any(|s| s.bits() != start.bits() || s.ty() != start.ty())
    {
        return None;
    }
    let (exit, round) = trajectory(
        c,
        head,
        &blocks,
        latch,
        param,
        start,
        (rel, k, t.exit_slot == 1),
    )?;
    Some(Trajectory { param, exit, round })
}

/// A scan's status past the iteration limit.
const STATUS_LIMIT: i64 = -3;
/// A scan's status for a candidate past a wrap-around (the tail).
const STATUS_TAIL: i64 = -4;
/// A scan's status where it found no such candidate.
const STATUS_NONE: i64 = -1;

/// The share of θ's domain that names trip counts past a wrap-around of an i64 sum (the tail):
/// such counts are real preimages, which completeness needs, but almost no y has one, and
/// finding them scans up to the iteration limit.
pub(super) const TAIL_SHARE: f64 = 1.0 / (1u64 << 20) as f64;

/// The visits a scan counts candidates over when only a product ([`Plan::products`]) can stop
/// it: a loop whose product never reaches 0 (`r = r * 3`) would otherwise be scanned to the
/// iteration limit by every inverse call. Trip counts past it are the tail's. It is below the
/// default call depth limit (10,000), so that a recursion run as a loop
/// ([`pinv_core::ir::counted_recursion`]) is offered depths its forward run reaches: `fact`
/// is 0 from 66 on, but `fact(20000)` is an error.
const SCAN_HORIZON: i64 = 1 << 12;

/// Trips [`trajectory`] runs at most.
const MAX_SIMULATED: usize = 1 << 20;

/// Runs the head's parameter `param` when each trip computes it from itself and constants alone
/// (`i = i + 1.0`, `i = i * 3`): from the constant `start`, with the forward code's own
/// semantics, to the first visit whose test `q REL k` lets it out (`round_on`: the loop goes
/// round when the test holds). Returns the value it leaves with, and the values it comes round
/// with when few ([`Trajectory::round`]). `None` when the next value depends on anything else,
/// or the trip count passes [`MAX_SIMULATED`].
fn trajectory(
    c: &Function,
    head: Block,
    blocks: &BTreeSet<Block>,
    latch: Value,
    param: usize,
    start: Const,
    (rel, k, round_on): (Rel, Const, bool),
) -> Option<(Const, Option<BTreeSet<Const>>)> {
    use pinv_core::semantics::eval;
    let test = |q: Const| -> Option<bool> {
        let op = match (q, rel) {
            (Const::I64(_), Rel::Lt) => Opcode::Ilt,
            (Const::I64(_), Rel::Le) => Opcode::Ile,
            (Const::I64(_), Rel::Gt) => Opcode::Igt,
            (Const::I64(_), Rel::Ge) => Opcode::Ige,
            (_, Rel::Lt) => Opcode::Flt,
            (_, Rel::Le) => Opcode::Fle,
            (_, Rel::Gt) => Opcode::Fgt,
            (_, Rel::Ge) => Opcode::Fge,
        };
        match eval(op, &[q, k]).ok()? {
            Const::Bool(b) => Some(b),
            _ => None,
        }
    };
    let mut round = Some(BTreeSet::new());
    let mut q = start;
    for _ in 0..MAX_SIMULATED {
        if test(q)? != round_on {
            return Some((q, round));
        }
        q = eval_trip(c, head, blocks, latch, param, q, 0)?;
        if let Some(set) = &mut round {
            set.insert(q);
            if set.len() > super::facts::MAX_SET {
                round = None;
            }
        }
    }
    None
}

/// `v` of one trip, given the head's parameter `param` is `q`; `None` if `v` depends on anything
/// else (another parameter, a merge of paths) or fails.
fn eval_trip(
    c: &Function,
    head: Block,
    blocks: &BTreeSet<Block>,
    v: Value,
    param: usize,
    q: Const,
    depth: usize,
) -> Option<Const> {
    if depth > 256 {
        return None;
    }
    match c.values[v].def {
        ValueDef::Param(b, i) if b == head => (i as usize == param).then_some(q),
        ValueDef::Param(b, i) => {
            // A body block entered by one edge from inside the loop.
            let mut incoming = blocks.iter().flat_map(|&p| {
                c.terminator(p)
                    .map(|t| c.insts[t].kind.successors())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|call| call.block == b)
                    .map(|call| call.args.get(i as usize).copied())
                    .collect::<Vec<_>>()
            });
            let arg = incoming.next()??;
            if incoming.next().is_some() {
                return None;
            }
            eval_trip(c, head, blocks, arg, param, q, depth + 1)
        }
        ValueDef::Result(inst, _) => match &c.insts[inst].kind {
            InstKind::Const(k) => Some(*k),
            InstKind::Prim { op, args } => {
                let vals: Vec<Const> = args
                    .iter()
                    .map(|&a| eval_trip(c, head, blocks, a, param, q, depth + 1))
                    .collect::<Option<_>>()?;
                pinv_core::semantics::eval(*op, &vals).ok()
            }
            _ => None,
        },
    }
}

/// `{q : (q REL k) == holds}` over i64, `None` if empty.
fn int_set(rel: Rel, k: i128, holds: bool) -> Option<IntRange> {
    let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
    let r = match if holds { rel } else { rel.not() } {
        Rel::Lt => (min, k - 1),
        Rel::Le => (min, k),
        Rel::Gt => (k + 1, max),
        Rel::Ge => (k, max),
    };
    (r.0 <= r.1).then_some(r)
}

/// `{q : (q REL k) == holds}` over non-NaN f64, closed (the intervals of [`super::ranges`]
/// hold the values; a strict end is kept).
fn float_set(rel: Rel, k: f64, holds: bool) -> Interval {
    match if holds { rel } else { rel.not() } {
        Rel::Lt | Rel::Le => (f64::NEG_INFINITY, k),
        Rel::Gt | Rel::Ge => (k, f64::INFINITY),
    }
}

/// A loop head's exit test: `a OP b`, true on one side of its branch, which leaves the loop.
struct ExitTest {
    exit_slot: usize,
    round: BlockCall,
    exit: BlockCall,
    test: Inst,
    cond: Value,
    /// `a REL b` is the test.
    rel: Rel,
    a: Value,
    b: Value,
}

/// The exit test of `head`, when it ends in an ordered comparison of its own with one side
/// leaving `blocks` (the loop) and the other staying.
fn exit_test(c: &Function, head: Block, blocks: &BTreeSet<Block>) -> Option<ExitTest> {
    let term = c.terminator(head)?;
    let InstKind::Brif {
        cond,
        then_dest,
        else_dest,
    } = &c.insts[term].kind
    else {
        return None;
    };
    let inside = |b: Block| blocks.contains(&b);
    let (exit_slot, round, exit) = match (inside(then_dest.block), inside(else_dest.block)) {
        (true, false) => (1, then_dest.clone(), else_dest.clone()),
        (false, true) => (0, else_dest.clone(), then_dest.clone()),
        _ => return None,
    };
    let ValueDef::Result(test, _) = c.values[*cond].def else {
        return None;
    };
    if !c.blocks[head].insts.contains(&test) {
        return None;
    }
    let InstKind::Prim { op, args } = &c.insts[test].kind else {
        return None;
    };
    let rel = match op {
        Opcode::Ilt | Opcode::Flt => Rel::Lt,
        Opcode::Ile | Opcode::Fle => Rel::Le,
        Opcode::Igt | Opcode::Fgt => Rel::Gt,
        Opcode::Ige | Opcode::Fge => Rel::Ge,
        _ => return None,
    };
    let &[a, b] = args.as_slice() else {
        return None;
    };
    Some(ExitTest {
        exit_slot,
        round: *round,
        exit: *exit,
        test,
        cond: *cond,
        rel,
        a,
        b,
    })
}

/// An exit argument `o` (index `exit`) that each trip changes by `sign · (h + offset)`, with `h`
/// the head's parameter `step` moving one way: the steps are monotone, so `o` is convex (steps
/// nondecreasing: once a step is ≥ 0 and `o` is above y, it never comes back) or concave (the
/// mirror image). `Σ i` for `i` counting down from 100 rises, then falls for good.
#[derive(Clone, Copy, Debug)]
struct Curve {
    exit: usize,
    step: usize,
    offset: i64,
    sign: i64,
    convex: bool,
}

/// The [`Curve`]s among the exit arguments, where the head's parameter they are a copy of starts
/// from a constant, comes round as itself plus a step `±(h + c)`, and cannot wrap round within
/// the iteration limit.
fn find_curves(
    c: &Function,
    cfg: &Cfg,
    offsets: &Offsets<'_>,
    init: &[Init],
    exit_args: &[Value],
    params: &[Value],
    limit: i128,
) -> Vec<Curve> {
    let mut out = Vec::new();
    let latches = offsets.latches(cfg);
    let [latch] = latches.as_slice() else {
        return out;
    };
    for (e, o) in carried(exit_args, params) {
        let (Init::Const(Const::I64(start)), Some((lo, hi))) =
            (init[o], offsets.latch_step(cfg, o))
        else {
            continue;
        };
        // No wrap: every value within the limit's reach fits.
        if reach(i128::from(start), (lo, hi), limit).is_none() {
            continue;
        }
        let Some(&next) = latch.args.get(o) else {
            continue;
        };
        let ValueDef::Result(inst, _) = c.values[next].def else {
            continue;
        };
        let InstKind::Prim { op, args } = &c.insts[inst].kind else {
            continue;
        };
        let (d, sign) = match (op, args.as_slice()) {
            (Opcode::Iadd, &[x, d]) if offsets.from(x, o) == Some((0, 0)) => (d, 1),
            (Opcode::Iadd, &[d, x]) if offsets.from(x, o) == Some((0, 0)) => (d, 1),
            (Opcode::Isub, &[x, d]) if offsets.from(x, o) == Some((0, 0)) => (d, -1),
            _ => continue,
        };
        // The step is another parameter plus a constant, and that parameter moves one way.
        for &(j, dlo, dhi) in offsets.all(d) {
            let (true, Some((slo, shi)), Ok(offset)) = (
                j != o && dlo == dhi,
                offsets.latch_step(cfg, j),
                i64::try_from(dlo),
            ) else {
                continue;
            };
            let steps_up = slo >= 0;
            let steps_down = shi <= 0;
            if !(steps_up || steps_down) || c.value_type(params[j]) != Type::I64 {
                continue;
            }
            out.push(Curve {
                exit: e,
                step: j,
                offset,
                sign,
                // The steps of o go up when h goes up (sign +) or down (sign −).
                convex: steps_up == (sign > 0),
            });
            break;
        }
    }
    out
}

/// f64 exit arguments that are the head's parameter `o`, start from a constant `s ≥ 0` and
/// come round as `o` multiplied by factors of at least 1 and added amounts of at least 0
/// (`r = r * 1.05 + 0.25`): each such step gives at least what it is given, rounding included
/// (rounding is monotone, and `a·m ≥ a`, `a + b ≥ a` exactly), so `o` never falls; ∞ stays ∞.
/// The mirror image (`s ≤ 0`, amounts at most 0) never rises. As (index, up).
fn find_rising(
    c: &Function,
    cfg: &Cfg,
    offsets: &Offsets<'_>,
    init: &[Init],
    exit_args: &[Value],
    params: &[Value],
) -> Vec<(usize, bool)> {
    let latches = offsets.latches(cfg);
    let mut out = Vec::new();
    if latches.is_empty() {
        return out;
    }
    for (e, o) in carried(exit_args, params) {
        let Init::Const(Const::F64(start)) = init[o] else {
            continue;
        };
        for up in [true, false] {
            let starts_right = if up { start >= 0.0 } else { start <= 0.0 };
            let moves = |next: Value| moves_one_way(c, offsets, o, next, up, 8);
            if starts_right
                && latches
                    .iter()
                    .all(|l| l.args.get(o).is_some_and(|&n| moves(n)))
            {
                out.push((e, up));
                break;
            }
        }
    }
    out
}

/// Whether `v` is the head's parameter `o` (at or past 0 on the `up` side) moved that way:
/// multiplied by at least 1, plus (minus) an amount of that sign; `depth` bounds the search.
fn moves_one_way(
    c: &Function,
    offsets: &Offsets<'_>,
    o: usize,
    v: Value,
    up: bool,
    depth: usize,
) -> bool {
    if offsets.from(v, o) == Some((0, 0)) {
        return true;
    }
    let ValueDef::Result(inst, _) = c.values[v].def else {
        return false;
    };
    let InstKind::Prim { op, args } = &c.insts[inst].kind else {
        return false;
    };
    let &[x, y] = args.as_slice() else {
        return false;
    };
    if depth == 0 {
        return false;
    }
    let inner = |w: Value| moves_one_way(c, offsets, o, w, up, depth - 1);
    let at_least = |w: Value, k: f64| offsets.frange(w).is_some_and(|(lo, _)| lo >= k);
    let at_most = |w: Value, k: f64| offsets.frange(w).is_some_and(|(_, hi)| hi <= k);
    // An amount that moves the value the `up` way (added), or the other (subtracted).
    let with = |w: Value| {
        if up {
            at_least(w, 0.0)
        } else {
            at_most(w, 0.0)
        }
    };
    let against = |w: Value| {
        if up {
            at_most(w, 0.0)
        } else {
            at_least(w, 0.0)
        }
    };
    match op {
        Opcode::Fmul => (inner(x) && at_least(y, 1.0)) || (inner(y) && at_least(x, 1.0)),
        Opcode::Fadd => (inner(x) && with(y)) || (inner(y) && with(x)),
        Opcode::Fsub => inner(x) && against(y),
        _ => false,
    }
}

/// Exit arguments that are the head's parameter `o`, where every edge back to the head passes
/// `o * m` (or `m * o`) for any `m`: zero is absorbing for multiplication (in wrapping
/// arithmetic too), so once such a product is 0 it is 0 at every later visit. `r = r * i`
/// (`fact`) wraps to 0 within 66 trips; `r = r * 3` never reaches 0, and is scanned up to
/// [`SCAN_HORIZON`] only.
fn find_products(
    c: &Function,
    cfg: &Cfg,
    offsets: &Offsets<'_>,
    exit_args: &[Value],
    params: &[Value],
) -> Vec<usize> {
    let latches = offsets.latches(cfg);
    let mut out = Vec::new();
    if latches.is_empty() {
        return out;
    }
    for (e, o) in carried(exit_args, params) {
        let multiplied = |next: Value| {
            let ValueDef::Result(inst, _) = c.values[next].def else {
                return false;
            };
            let InstKind::Prim {
                op: Opcode::Imul,
                args,
            } = &c.insts[inst].kind
            else {
                return false;
            };
            args.iter().any(|&x| offsets.from(x, o) == Some((0, 0)))
        };
        if latches
            .iter()
            .all(|l| l.args.get(o).is_some_and(|&next| multiplied(next)))
        {
            out.push(e);
        }
    }
    out
}

/// The exit arguments that are head parameters as they are: (exit index, parameter index).
fn carried<'a>(
    exit_args: &'a [Value],
    params: &'a [Value],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    exit_args
        .iter()
        .enumerate()
        .filter_map(|(e, &a)| Some((e, params.iter().position(|&q| q == a)?)))
}

/// Where a value that starts at `start` and changes by `step` at every trip can get to within
/// `limit` trips (in unbounded arithmetic); `None` if that leaves i64, where it would wrap.
fn reach(start: i128, (lo, hi): (i128, i128), limit: i128) -> Option<IntRange> {
    let r = (
        start.checked_add(limit.checked_mul(lo.min(0))?)?,
        start.checked_add(limit.checked_mul(hi.max(0))?)?,
    );
    (i64::try_from(r.0).is_ok() && i64::try_from(r.1).is_ok()).then_some(r)
}

/// Whether the entry edge passes the head's `k`-th parameter something other than a constant.
fn entry_arg_is_unknown(c: &Function, entry: &super::facts::Edge, k: usize) -> bool {
    entry.args.get(k).is_some_and(|a| c.constant(*a).is_none())
}

/// Whether a loop instruction can run at every visit of a scan without trapping or calling:
/// the scan runs visits the forward run with this bound never reaches.
fn may_scan(c: &Function, inst: Inst) -> bool {
    match &c.insts[inst].kind {
        InstKind::Const(_) | InstKind::Jump { .. } | InstKind::Brif { .. } => true,
        InstKind::Prim { op, args } => match op {
            Opcode::Idiv | Opcode::Irem => {
                matches!(c.constant(args[1]), Some(Const::I64(d)) if d != 0 && d != -1)
            }
            _ => true,
        },
        _ => false,
    }
}

/// The blocks of the loop headed by `head`: those it reaches that reach it back.
pub(super) fn loop_blocks(c: &Function, head: Block) -> BTreeSet<Block> {
    let mut from: BTreeSet<Block> = BTreeSet::new();
    let mut work = vec![head];
    while let Some(b) = work.pop() {
        for s in c.successors(b) {
            if from.insert(s) {
                work.push(s);
            }
        }
    }
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in &from {
        for s in c.successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    let mut to: BTreeSet<Block> = BTreeSet::from([head]);
    let mut work = vec![head];
    while let Some(b) = work.pop() {
        for &p in preds.get(&b).into_iter().flatten() {
            if from.contains(&p) && to.insert(p) {
                work.push(p);
            }
        }
    }
    to
}

/// The loop's blocks other than `head`, in reverse postorder of the walk from `head` that does
/// not go back into it.
fn reverse_postorder(c: &Function, head: Block, blocks: &BTreeSet<Block>) -> Vec<Block> {
    let mut post = Vec::new();
    let mut seen: BTreeSet<Block> = BTreeSet::from([head]);
    let mut stack: Vec<(Block, usize)> = vec![(head, 0)];
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let succs = c.successors(b);
        if let Some(&s) = succs.get(*next) {
            *next += 1;
            if blocks.contains(&s) && seen.insert(s) {
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post.retain(|&b| b != head);
    post
}

/// The values of a loop as offsets from the head's parameters, and the i64 ranges of the rest.
struct Offsets<'f> {
    c: &'f Function,
    head: Block,
    body: &'f [Block],
    offsets: HashMap<Value, Vec<Offset>>,
    ranges: HashMap<Value, IntRange>,
    /// The f64 values' intervals (non-NaN values only, as in [`super::ranges`]).
    franges: HashMap<Value, Interval>,
    /// The parameters of loops inside the body, as widened so far (offsets, i64 range).
    widened: HashMap<Value, (Vec<Offset>, Option<IntRange>)>,
    /// Per block, the edges into it from the loop's blocks: the source's position in the
    /// order head, body… (what [`Offsets::pass`] visits), its terminator and the side taken.
    /// Built once: looking them up by scanning the loop for every block was quadratic in the
    /// loop's size (cubic with the `done` test), 86% of inverting a 2,400-line function.
    preds: HashMap<Block, Vec<(usize, Inst, usize)>>,
    /// Each body block's (first) index in `body` (built once, as `preds` is).
    at: HashMap<Block, usize>,
}

impl<'f> Offsets<'f> {
    fn new(c: &'f Function, head: Block, body: &'f [Block]) -> Offsets<'f> {
        let mut preds: HashMap<Block, Vec<(usize, Inst, usize)>> = HashMap::new();
        for (pos, &p) in std::iter::once(&head).chain(body).enumerate() {
            let Some(t) = c.terminator(p) else { continue };
            for (side, call) in c.insts[t].kind.successors().iter().enumerate() {
                preds.entry(call.block).or_default().push((pos, t, side));
            }
        }
        Offsets {
            c,
            head,
            body,
            offsets: HashMap::new(),
            ranges: HashMap::new(),
            franges: HashMap::new(),
            widened: HashMap::new(),
            preds,
            at: body
                .iter()
                .enumerate()
                .rev()
                .map(|(i, &b)| (b, i))
                .collect(),
        }
    }

    /// The offsets of `v` from the head's parameters.
    fn all(&self, v: Value) -> &[Offset] {
        self.offsets.get(&v).map_or(&[], Vec::as_slice)
    }

    /// `v`'s offset from the head's parameter `k`.
    fn from(&self, v: Value, k: usize) -> Option<(i128, i128)> {
        self.all(v)
            .iter()
            .find(|o| o.0 == k)
            .map(|&(_, lo, hi)| (lo, hi))
    }

    /// The head parameter `v` is a copy of, if it is one.
    fn param_of(&self, v: Value) -> Option<usize> {
        self.all(v)
            .iter()
            .find(|o| o.1 == 0 && o.2 == 0)
            .map(|o| o.0)
    }

    fn range(&self, v: Value) -> Option<IntRange> {
        if let Some(&r) = self.ranges.get(&v) {
            return Some(r);
        }
        match self.c.constant(v)? {
            Const::I64(k) => Some((i128::from(k), i128::from(k))),
            _ => None,
        }
    }

    fn frange(&self, v: Value) -> Option<Interval> {
        if let Some(&r) = self.franges.get(&v) {
            return Some(r);
        }
        match self.c.constant(v)? {
            Const::F64(x) if !x.is_nan() => Some((x, x)),
            _ => None,
        }
    }

    /// Recomputes offsets and ranges, with the head's i64 parameters in `seeds` and its f64
    /// parameters in `fseeds`.
    /// The offsets and ranges of the loop's values, from `seeds` (ranges of the head's
    /// parameters).
    ///
    /// A loop inside the body goes round any number of times per trip: its head's parameters
    /// are first taken from the edges that enter it; then, while an edge back to it brings a
    /// value past that, the bound it passes is widened to infinity (an i64 counted up by one
    /// per inner trip is the outer value plus `[0, ∞]`), and the pass runs again. Widening
    /// settles in one round per bound; after [`WIDENINGS`] rounds the inner loops' parameters
    /// are left unknown.
    fn run(&mut self, seeds: &HashMap<usize, IntRange>, fseeds: &HashMap<usize, Interval>) {
        self.widened.clear();
        for round in 0..=WIDENINGS {
            self.pass(seeds, fseeds);
            let moved = self.widen();
            if !moved {
                return;
            }
            if round == WIDENINGS {
                for v in self.widened.values_mut() {
                    *v = (Vec::new(), None);
                }
                self.pass(seeds, fseeds);
            }
        }
    }

    /// Widens the parameters of the loops inside the body where an incoming edge brings a
    /// value outside what the pass assumed; whether any moved.
    fn widen(&mut self) -> bool {
        let c = self.c;
        let mut moved = false;
        for &b in self.body {
            if !self.is_inner_head(b) {
                continue;
            }
            let incoming = self.incoming(b, None);
            for (k, &q) in c.blocks[b].params.iter().enumerate() {
                let args: Vec<_> = incoming.iter().filter_map(|a| a.get(k).copied()).collect();
                if args.len() < incoming.len() {
                    continue;
                }
                let (hull, range) = self.hull(&args);
                let now = self.all(q).to_vec();
                let mut offs = Vec::new();
                for &(j, lo, hi) in &now {
                    let Some(&(_, hlo, hhi)) = hull.iter().find(|o| o.0 == j) else {
                        continue;
                    };
                    offs.push((
                        j,
                        if hlo < lo { NEG_INF } else { lo },
                        if hhi > hi { POS_INF } else { hi },
                    ));
                }
                let range = match (range, self.range(q)) {
                    (Some(r), Some(n)) => Some((
                        if r.0 < n.0 { NEG_INF } else { n.0 },
                        if r.1 > n.1 { POS_INF } else { n.1 },
                    )),
                    _ => None,
                };
                if offs != now || range != self.range(q) {
                    moved = true;
                    self.widened.insert(q, (offs, range));
                }
            }
        }
        moved
    }

    /// Whether body block `b` heads a loop inside the body: an edge comes to it from itself or
    /// from a block after it.
    fn is_inner_head(&self, b: Block) -> bool {
        // Body block i is at position i + 1 of head, body….
        let Some(&here) = self.at.get(&b) else {
            return false;
        };
        self.preds
            .get(&b)
            .is_some_and(|edges| edges.iter().any(|&(pos, _, _)| pos > here))
    }

    /// The edges into `b` from the loop's blocks (only from the first `done` of head, body…,
    /// when given): each edge's arguments, with the range its branch narrows each to.
    fn incoming(&self, b: Block, done: Option<usize>) -> Vec<Vec<(Value, Option<IntRange>)>> {
        let c = self.c;
        let Some(edges) = self.preds.get(&b) else {
            return Vec::new();
        };
        edges
            .iter()
            .filter(|&&(pos, _, _)| done.is_none_or(|d| pos < d))
            .map(|&(_, t, side)| {
                let call = &c.insts[t].kind.successors()[side];
                call.args
                    .iter()
                    .map(|&a| (a, self.narrowed(t, side, a)))
                    .collect()
            })
            .collect()
    }

    /// What branch `t` taking side `side` says of `a`, where it tests `a REL k` (or `k REL a`)
    /// with k an i64 constant: in `while j > 0 { s += j; … }` the body's j is at least 1.
    fn narrowed(&self, t: Inst, side: usize, a: Value) -> Option<IntRange> {
        let c = self.c;
        let InstKind::Brif { cond, .. } = c.insts[t].kind else {
            return None;
        };
        let ValueDef::Result(test, _) = c.values[cond].def else {
            return None;
        };
        let InstKind::Prim { op, args } = &c.insts[test].kind else {
            return None;
        };
        let rel = match op {
            Opcode::Ilt => Rel::Lt,
            Opcode::Ile => Rel::Le,
            Opcode::Igt => Rel::Gt,
            Opcode::Ige => Rel::Ge,
            _ => return None,
        };
        let constant = |v: Value| match c.constant(v) {
            Some(Const::I64(k)) => Some(i128::from(k)),
            _ => None,
        };
        let (rel, k) = match *args.as_slice() {
            [x, y] if x == a => (rel, constant(y)?),
            [x, y] if y == a => (rel.mirrored(), constant(x)?),
            _ => return None,
        };
        int_set(rel, k, side == 0)
    }

    /// The offsets every one of `args` has (each the hull), and the hull of their i64 ranges
    /// (each within what its edge narrows it to).
    fn hull(&self, args: &[(Value, Option<IntRange>)]) -> (Vec<Offset>, Option<IntRange>) {
        let mut hulls: Vec<Offset> = Vec::new();
        if let Some(&(first, _)) = args.first() {
            for &(k, _, _) in self.all(first) {
                let each: Option<Vec<(i128, i128)>> =
                    args.iter().map(|&(a, _)| self.from(a, k)).collect();
                if let Some(each) = each {
                    let lo = each.iter().map(|o| o.0).min().unwrap_or(0);
                    let hi = each.iter().map(|o| o.1).max().unwrap_or(0);
                    hulls.push((k, lo, hi));
                }
            }
        }
        let ranges: Option<Vec<IntRange>> = args
            .iter()
            .map(|&(a, edge)| match (self.range(a), edge) {
                // An empty meet is an edge never taken: its own range is still a bound.
                (Some(r), Some(e)) if r.0.max(e.0) <= r.1.min(e.1) => {
                    Some((r.0.max(e.0), r.1.min(e.1)))
                }
                (r, e) => r.or(e),
            })
            .collect();
        let range = ranges.filter(|rs| !rs.is_empty()).map(|rs| {
            let lo = rs.iter().map(|r| r.0).min().unwrap_or(0);
            let hi = rs.iter().map(|r| r.1).max().unwrap_or(0);
            (lo, hi)
        });
        (hulls, range)
    }

    /// One pass over the head and the body, in order.
    fn pass(&mut self, seeds: &HashMap<usize, IntRange>, fseeds: &HashMap<usize, Interval>) {
        self.offsets.clear();
        self.ranges.clear();
        self.franges.clear();
        let c = self.c;
        for (k, &q) in c.blocks[self.head].params.iter().enumerate() {
            self.offsets.insert(q, vec![(k, 0, 0)]);
            if let Some(&r) = seeds.get(&k) {
                self.ranges.insert(q, r);
            }
            if let Some(&r) = fseeds.get(&k) {
                self.franges.insert(q, r);
            }
        }
        let order: Vec<Block> = std::iter::once(self.head)
            .chain(self.body.iter().copied())
            .collect();
        for (n, &b) in order.iter().enumerate() {
            if n > 0 {
                self.block_params(b, n);
            }
            for &inst in &c.blocks[b].insts {
                let InstKind::Prim { op, args } = &c.insts[inst].kind else {
                    continue;
                };
                let r = c.insts[inst].results[0];
                let range = |v: Value| self.range(v);
                if let Some(x) = prim_range(*op, args.first().and_then(|&a| range(a)), {
                    args.get(1).and_then(|&a| range(a))
                }) {
                    if c.value_type(r) == Type::I64 {
                        self.ranges.insert(r, x);
                    }
                }
                // Only constants are known never to be NaN here.
                let operand = |k: usize| {
                    let Some(&v) = args.get(k) else {
                        return Operand::UNKNOWN;
                    };
                    match c.constant(v) {
                        Some(Const::F64(x)) => Operand::constant(x),
                        _ => Operand {
                            range: self.frange(v),
                            never_nan: false,
                        },
                    }
                };
                if let Some((lo, hi)) = float_range(*op, operand(0), operand(1)) {
                    if c.value_type(r) == Type::F64 && lo <= hi {
                        self.franges.insert(r, (lo, hi));
                    }
                }
                let mut offs: Vec<Offset> = Vec::new();
                let mut moved = |o: Offset, other: Value, sign: i128| {
                    if self.from(other, o.0).is_none() {
                        if let Some(x) = self.range(other).and_then(|d| shift(o, d, sign)) {
                            offs.push(x);
                        }
                    }
                };
                match (op, args.as_slice()) {
                    (Opcode::Iadd, &[a, b]) => {
                        self.all(a).iter().for_each(|&o| moved(o, b, 1));
                        self.all(b).iter().for_each(|&o| moved(o, a, 1));
                    }
                    (Opcode::Isub, &[a, b]) => self.all(a).iter().for_each(|&o| moved(o, b, -1)),
                    _ => {}
                }
                if !offs.is_empty() {
                    self.offsets.insert(r, offs);
                }
            }
        }
    }

    /// A body block's parameters: offsets and ranges that every incoming edge agrees on (the
    /// hull), from blocks already done. The head of a loop inside the body has edges back from
    /// blocks not done yet: its parameters are what [`Offsets::widen`] made of them, else what
    /// the edges entering it bring.
    fn block_params(&mut self, b: Block, done: usize) {
        let c = self.c;
        let incoming = self.incoming(b, Some(done));
        for (k, &q) in c.blocks[b].params.iter().enumerate() {
            if let Some((offs, range)) = self.widened.get(&q).cloned() {
                if !offs.is_empty() {
                    self.offsets.insert(q, offs);
                }
                if let Some(r) = range {
                    self.ranges.insert(q, r);
                }
                continue;
            }
            let args: Vec<_> = incoming.iter().filter_map(|a| a.get(k).copied()).collect();
            if args.is_empty() || args.len() < incoming.len() {
                continue;
            }
            let (hulls, range) = self.hull(&args);
            if !hulls.is_empty() {
                self.offsets.insert(q, hulls);
            }
            if let Some(r) = range {
                self.ranges.insert(q, r);
            }
            let franges: Option<Vec<Interval>> =
                args.iter().map(|&(a, _)| self.frange(a)).collect();
            if let Some(rs) = franges {
                let lo = rs.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
                let hi = rs.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
                self.franges.insert(q, (lo, hi));
            }
        }
    }

    /// The edges back to the head from the loop's blocks.
    fn latches<'c>(&self, cfg: &'c Cfg) -> Vec<&'c super::facts::Edge> {
        cfg.preds[&self.head]
            .iter()
            .filter(|e| self.body.contains(&e.from) || e.from == self.head)
            .collect()
    }

    /// What one trip adds to the head's parameter `k`: the hull over the edges back to the
    /// head, if every one passes `k` plus an amount.
    fn latch_step(&self, cfg: &Cfg, k: usize) -> Option<(i128, i128)> {
        let mut out: Option<(i128, i128)> = None;
        for e in &cfg.preds[&self.head] {
            if e.from != self.head && !self.body.contains(&e.from) {
                continue;
            }
            let (lo, hi) = self.from(*e.args.get(k)?, k)?;
            out = Some(match out {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        out
    }

    /// The instructions of the loop that read a copy of the head's parameter `k`, other than
    /// branches passing it on to a copy.
    fn uses_of(&self, k: usize) -> Vec<Inst> {
        let c = self.c;
        let is_copy = |v: Value| self.param_of(v) == Some(k);
        let mut out = Vec::new();
        for &b in std::iter::once(&self.head).chain(self.body) {
            for &inst in &c.blocks[b].insts {
                let kind = &c.insts[inst].kind;
                if kind.is_terminator() {
                    let mut bad = false;
                    if let InstKind::Brif { cond, .. } = kind {
                        bad |= is_copy(*cond);
                    }
                    for call in kind.successors() {
                        let to = &c.blocks[call.block].params;
                        for (i, &a) in call.args.iter().enumerate() {
                            let inside = call.block == self.head || self.body.contains(&call.block);
                            if is_copy(a) && inside && to.get(i).is_some_and(|&q| !is_copy(q)) {
                                bad = true;
                            }
                        }
                    }
                    if bad {
                        out.push(inst);
                    }
                    continue;
                }
                let mut reads = false;
                kind.for_each_arg(|v| reads |= is_copy(v));
                if reads {
                    out.push(inst);
                }
            }
        }
        out
    }
}

/// Offset `o` moved by `d` (`sign` −1: by −d). An infinite bound stays infinite (a value an
/// inner loop moves without bound, moved again); `None` where one would be ∞ − ∞.
fn shift(o: Offset, d: IntRange, sign: i128) -> Option<Offset> {
    let neg = |x: i128| match x {
        NEG_INF => POS_INF,
        POS_INF => NEG_INF,
        x => -x,
    };
    let (lo, hi) = if sign > 0 {
        (d.0, d.1)
    } else {
        (neg(d.1), neg(d.0))
    };
    Some((o.0, bound_add(o.1, lo)?, bound_add(o.2, hi)?))
}

/// `a + b` for bounds that may be infinite; `None` for ∞ − ∞ or a finite sum past i128.
fn bound_add(a: i128, b: i128) -> Option<i128> {
    match (a, b) {
        (NEG_INF, POS_INF) | (POS_INF, NEG_INF) => None,
        (NEG_INF, _) | (_, NEG_INF) => Some(NEG_INF),
        (POS_INF, _) | (_, POS_INF) => Some(POS_INF),
        _ => a.checked_add(b),
    }
}

/// Copies the loop's body (its blocks other than the head) into `s`, with `map` giving the
/// head's values; an edge back to the head becomes a jump to `visit` with `extra` appended.
/// Returns the copy of the block the head goes round to.
fn copy_body(
    c: &Function,
    plan: &Plan,
    s: &mut Function,
    map: &mut BTreeMap<Value, Value>,
    visit: Block,
    extra: &[Value],
) -> Result<Block, Error> {
    let mut blocks: HashMap<Block, Block> = HashMap::new();
    for &b in &plan.body {
        let nb = s.create_block();
        for &q in &c.blocks[b].params {
            let v = s.append_block_param(nb, c.value_type(q));
            map.insert(q, v);
        }
        blocks.insert(b, nb);
    }
    for &b in &plan.body {
        copy_block(c, b, s, blocks[&b], map)?;
        // The terminator, with the edges back to the head going to the next visit.
        let Some(t) = c.terminator(b) else {
            continue;
        };
        let data = &c.insts[t];
        let mut kind = data.kind.clone();
        let mut missing = None;
        kind.map_args(|v| {
            map.get(&v).copied().unwrap_or_else(|| {
                missing = Some(v);
                v
            })
        });
        if let Some(v) = missing {
            return Err(Error::Internal(format!("{v} is not defined in the loop")));
        }
        for call in kind.successors_mut() {
            if call.block == plan.head {
                call.block = visit;
                call.args.extend_from_slice(extra);
            } else {
                call.block = *blocks.get(&call.block).ok_or_else(|| {
                    Error::Internal(format!("{} is outside the loop", call.block))
                })?;
            }
        }
        s.append_inst(blocks[&b], kind, &[], data.span);
    }
    blocks
        .get(&plan.round.block)
        .copied()
        .ok_or_else(|| Error::Internal("the loop body is missing".to_string()))
}

/// What a scan function does ([`build_scan`] makes one per mode, each with only its own tests
/// in the loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ScanMode {
    /// Counts the candidates before any wrap, returning the first.
    Count,
    /// Returns candidate `pick` (before any wrap).
    Pick,
    /// Returns the index of the candidate at which bound `n` leaves (−4 past a wrap).
    Locate,
    /// Returns the first candidate past a wrap at or after visit `from`.
    Tail,
}

impl ScanMode {
    /// The mode's function name, for loop head `head` of function `f`.
    pub fn name(self, f: &str, head: Block) -> String {
        let mode = match self {
            ScanMode::Count => "count",
            ScanMode::Pick => "pick",
            ScanMode::Locate => "locate",
            ScanMode::Tail => "tail",
        };
        format!("{f}.trips.{head}.{mode}")
    }
}

/// Builds `f.trips.H.MODE` (see the module docs).
pub(super) fn build_scan(
    c: &Function,
    plan: &Plan,
    mode: ScanMode,
    iteration_limit: i64,
    tolerance: f64,
) -> Result<Function, Error> {
    let span = plan.span;
    let head_params = &c.blocks[plan.head].params;
    let head_types: Vec<Type> = head_params.iter().map(|&q| c.value_type(q)).collect();
    let exit_types: Vec<Type> = plan.exit_args.iter().map(|&a| c.value_type(a)).collect();
    let t = plan.bound_ty;
    let mut params = exit_types.clone();
    params.extend([Type::I64, t, Type::I64]);
    let mut returns = vec![Type::I64, t, t, Type::I64];
    returns.extend(head_types.iter().copied());
    let mut s = Function::new(
        mode.name(&c.name, plan.head),
        FuncKind::GeneratedInverse { of: c.name.clone() },
        Signature { params, returns },
    );
    s.span = c.span;
    s.param_names = (0..exit_types.len())
        .map(|i| format!("k{i}"))
        .chain(["pick".to_string(), "n".to_string(), "from".to_string()])
        .collect();
    let b0 = s.create_entry();
    let b0p = s.blocks[b0].params.clone();
    let (ks, pick, nval, from) = (
        &b0p[..exit_types.len()],
        b0p[exit_types.len()],
        b0p[exit_types.len() + 1],
        b0p[exit_types.len() + 2],
    );
    let (lowest, highest) = match t {
        Type::I64 => (Const::I64(i64::MIN), Const::I64(i64::MAX)),
        _ => (Const::F64(f64::NEG_INFINITY), Const::F64(f64::INFINITY)),
    };
    // The first visit.
    let mut state: Vec<Value> = Vec::new();
    for init in &plan.init {
        state.push(match *init {
            Init::Const(k) => s.ins_const(b0, k, span),
            Init::Bound => nval,
            Init::Exit(e) => ks[e],
        });
    }
    let zero = s.ins_const(b0, Const::I64(0), span);
    let clo0 = s.ins_const(b0, lowest, span);
    let chi0 = s.ins_const(b0, highest, span);
    let fals = s.ins_const(b0, Const::Bool(false), span);
    // visit(H's parameters, idx, clo, chi, cempty, steps)
    let visit = s.create_block();
    let hp: Vec<Value> = head_types
        .iter()
        .map(|&ty| s.append_block_param(visit, ty))
        .collect();
    let idx = s.append_block_param(visit, Type::I64);
    let clo = s.append_block_param(visit, t);
    let chi = s.append_block_param(visit, t);
    let cempty = s.append_block_param(visit, Type::Bool);
    let steps = s.append_block_param(visit, Type::I64);
    // Whether a sum that may wrap round has passed y: the candidates after are the tail's.
    let passed = s.append_block_param(visit, Type::Bool);
    // The first candidate, which counting returns (θ picks it most often).
    let f_lo = s.append_block_param(visit, t);
    let f_hi = s.append_block_param(visit, t);
    let f_state: Vec<Value> = head_types
        .iter()
        .map(|&ty| s.append_block_param(visit, ty))
        .collect();
    let mut args = state.clone();
    args.extend([zero, clo0, chi0, fals, zero, fals, clo0, chi0]);
    args.extend(state.iter().copied());
    s.ins_jump(b0, visit, args, span);

    let i = |s: &mut Function, b: Block, x: i64| s.ins_const(b, Const::I64(x), span);
    let prim =
        |s: &mut Function, b: Block, op: Opcode, a: &[Value]| s.ins_prim(b, op, a.to_vec(), span);
    let ret = |s: &mut Function,
               b: Block,
               status: Value,
               (lo, hi, visit): (Value, Value, Value),
               hp: &[Value]| {
        let mut r = vec![status, lo, hi, visit];
        r.extend_from_slice(hp);
        s.ins_return(b, r, span);
    };
    let branch = |s: &mut Function, b: Block, cond: Value, yes: Block, no: Block| {
        s.ins_void(
            b,
            InstKind::Brif {
                cond,
                then_dest: Box::new(BlockCall::new(yes, Vec::new())),
                else_dest: Box::new(BlockCall::new(no, Vec::new())),
            },
            span,
        );
    };

    // Past the limit: status −3.
    let one = i(&mut s, visit, 1);
    let steps1 = prim(&mut s, visit, Opcode::Iadd, &[steps, one]);
    let limit = i(&mut s, visit, iteration_limit);
    let over = prim(&mut s, visit, Opcode::Igt, &[steps1, limit]);
    let (at_limit, go) = (s.create_block(), s.create_block());
    branch(&mut s, visit, over, at_limit, go);
    let minus3 = i(&mut s, at_limit, STATUS_LIMIT);
    ret(&mut s, at_limit, minus3, (clo, chi, steps), &hp);

    // The head's instructions, on this visit's values.
    let mut map: BTreeMap<Value, Value> = head_params
        .iter()
        .copied()
        .zip(hp.iter().copied())
        .collect();
    copy_block(c, plan.head, &mut s, go, &mut map)?;
    let get = |map: &BTreeMap<Value, Value>, v: Value| {
        map.get(&v)
            .copied()
            .ok_or_else(|| Error::Internal(format!("{v} is not a value of the loop head")))
    };
    let p = get(&map, plan.p)?;
    let exits: Vec<Value> = plan
        .exit_args
        .iter()
        .map(|&a| get(&map, a))
        .collect::<Result<_, _>>()?;
    // The bounds that go round, and (only where the exit values give y: most visits do not)
    // those that leave here.
    let (nlo, nhi, nempty) = set_of(&mut s, go, t, plan.rel, p, plan.round_on, span);
    let (max, min, gt) = match t {
        Type::I64 => (Opcode::Imax, Opcode::Imin, Opcode::Igt),
        _ => (Opcode::Fmax, Opcode::Fmin, Opcode::Fgt),
    };
    let mut matched = s.ins_const(go, Const::Bool(true), span);
    for (&e, &k) in exits.iter().zip(ks) {
        let same = same_value(&mut s, go, e, k, tolerance, span);
        matched = prim(&mut s, go, Opcode::Band, &[matched, same]);
    }
    let (bounds, join) = (s.create_block(), s.create_block());
    let not_cand = s.ins_const(go, Const::Bool(false), span);
    s.ins_void(
        go,
        InstKind::Brif {
            cond: matched,
            then_dest: Box::new(BlockCall::new(bounds, Vec::new())),
            else_dest: Box::new(BlockCall::new(join, vec![not_cand, clo, chi])),
        },
        span,
    );
    let (elo, ehi, eempty) = set_of(&mut s, bounds, t, plan.rel, p, !plan.round_on, span);
    let lo = prim(&mut s, bounds, max, &[clo, elo]);
    let hi = prim(&mut s, bounds, min, &[chi, ehi]);
    let inverted = prim(&mut s, bounds, gt, &[lo, hi]);
    let empty = prim(&mut s, bounds, Opcode::Bor, &[cempty, eempty]);
    let empty = prim(&mut s, bounds, Opcode::Bor, &[empty, inverted]);
    let is_cand = prim(&mut s, bounds, Opcode::Bnot, &[empty]);
    s.ins_jump(bounds, join, vec![is_cand, lo, hi], span);
    let cand = s.append_block_param(join, Type::Bool);
    let lo = s.append_block_param(join, t);
    let hi = s.append_block_param(join, t);
    let go = join;
    // Locating: does `n` itself leave here?
    let test = get(&map, plan.cond)?;
    let round_here = match plan.round_on {
        true => test,
        false => prim(&mut s, go, Opcode::Bnot, &[test]),
    };
    let leaves = prim(&mut s, go, Opcode::Bnot, &[round_here]);
    let (located, next) = (s.create_block(), s.create_block());
    if mode == ScanMode::Locate {
        branch(&mut s, go, leaves, located, next);
    } else {
        s.ins_jump(go, next, Vec::new(), span);
    }
    // status = cand ? (passed ? −4 : idx) : −1, as (at + 1)·cand − 1 with at = idx or −4.
    let c1 = i(&mut s, located, 1);
    let m4 = i(&mut s, located, STATUS_TAIL);
    let tail_at = prim(&mut s, located, Opcode::BoolToI64, &[passed]);
    let keep_idx = prim(&mut s, located, Opcode::Isub, &[c1, tail_at]);
    let at_main = prim(&mut s, located, Opcode::Imul, &[idx, keep_idx]);
    let at_tail = prim(&mut s, located, Opcode::Imul, &[m4, tail_at]);
    let at = prim(&mut s, located, Opcode::Iadd, &[at_main, at_tail]);
    let at1 = prim(&mut s, located, Opcode::Iadd, &[at, c1]);
    let ci = prim(&mut s, located, Opcode::BoolToI64, &[cand]);
    let prod = prim(&mut s, located, Opcode::Imul, &[at1, ci]);
    let status = prim(&mut s, located, Opcode::Isub, &[prod, c1]);
    ret(&mut s, located, status, (lo, hi, steps), &hp);
    // Picking: is this the candidate asked for (before a wrap), or the first of the tail's at
    // or past visit `from`?
    let onward = s.create_block();
    match mode {
        ScanMode::Pick => {
            let main = prim(&mut s, next, Opcode::Bnot, &[passed]);
            let is_pick = prim(&mut s, next, Opcode::Ieq, &[pick, idx]);
            let is_pick = prim(&mut s, next, Opcode::Band, &[is_pick, cand]);
            let is_pick = prim(&mut s, next, Opcode::Band, &[is_pick, main]);
            let picked = s.create_block();
            branch(&mut s, next, is_pick, picked, onward);
            ret(&mut s, picked, idx, (lo, hi, steps), &hp);
        }
        ScanMode::Tail => {
            let far = prim(&mut s, next, Opcode::Ige, &[steps, from]);
            let is_tail = prim(&mut s, next, Opcode::Band, &[far, passed]);
            let is_tail = prim(&mut s, next, Opcode::Band, &[is_tail, cand]);
            let tail_picked = s.create_block();
            branch(&mut s, next, is_tail, tail_picked, onward);
            let m4 = i(&mut s, tail_picked, STATUS_TAIL);
            ret(&mut s, tail_picked, m4, (lo, hi, steps), &hp);
        }
        ScanMode::Count | ScanMode::Locate => {
            s.ins_jump(next, onward, Vec::new(), span);
        }
    }
    // Keep the first candidate (counting returns it).
    let zero_here = i(&mut s, onward, 0);
    let is_first = prim(&mut s, onward, Opcode::Ieq, &[idx, zero_here]);
    let is_first = prim(&mut s, onward, Opcode::Band, &[is_first, cand]);
    let not_passed = prim(&mut s, onward, Opcode::Bnot, &[passed]);
    let is_first = prim(&mut s, onward, Opcode::Band, &[is_first, not_passed]);
    let (take, keep, cont) = (s.create_block(), s.create_block(), s.create_block());
    if mode == ScanMode::Count {
        branch(&mut s, onward, is_first, take, keep);
    } else {
        s.ins_jump(onward, keep, Vec::new(), span);
    }
    let mut taken = vec![lo, hi];
    taken.extend(hp.iter().copied());
    s.ins_jump(take, cont, taken, span);
    let mut kept = vec![f_lo, f_hi];
    kept.extend(f_state.iter().copied());
    s.ins_jump(keep, cont, kept, span);
    let c_lo = s.append_block_param(cont, t);
    let c_hi = s.append_block_param(cont, t);
    let c_state: Vec<Value> = head_types
        .iter()
        .map(|&ty| s.append_block_param(cont, ty))
        .collect();
    let onward = cont;
    // On to the next visit, unless nothing can come of it.
    let not_passed = prim(&mut s, onward, Opcode::Bnot, &[passed]);
    let counted = prim(&mut s, onward, Opcode::Band, &[cand, not_passed]);
    let ci = prim(&mut s, onward, Opcode::BoolToI64, &[counted]);
    let idx_next = prim(&mut s, onward, Opcode::Iadd, &[idx, ci]);
    let clo1 = prim(&mut s, onward, max, &[clo, nlo]);
    let chi1 = prim(&mut s, onward, min, &[chi, nhi]);
    let inverted = prim(&mut s, onward, gt, &[clo1, chi1]);
    let cempty1 = prim(&mut s, onward, Opcode::Bor, &[cempty, nempty]);
    let cempty1 = prim(&mut s, onward, Opcode::Bor, &[cempty1, inverted]);
    // A value that moves one way and has passed y ends the scan, if it cannot wrap round
    // within the limit; one that may wrap ends the candidates before a wrap (the main ones),
    // and locating and the tail go on past it.
    let mut stop = cempty1;
    let mut passed1 = passed;
    for &(e, up, wraps) in &plan.monotone {
        let op = if up { Opcode::Igt } else { Opcode::Ilt };
        let beyond = prim(&mut s, onward, op, &[exits[e], ks[e]]);
        if wraps {
            passed1 = prim(&mut s, onward, Opcode::Bor, &[passed1, beyond]);
        } else {
            stop = prim(&mut s, onward, Opcode::Bor, &[stop, beyond]);
        }
    }
    // A product that is 0 stays 0: past y for good, unless y is 0 (then every later visit
    // gives it, and the horizon below makes the candidates past it the tail's).
    for &e in &plan.products {
        let zero = i(&mut s, onward, 0);
        let now_zero = prim(&mut s, onward, Opcode::Ieq, &[exits[e], zero]);
        let y_not_zero = prim(&mut s, onward, Opcode::Ine, &[ks[e], zero]);
        let gone = prim(&mut s, onward, Opcode::Band, &[now_zero, y_not_zero]);
        stop = prim(&mut s, onward, Opcode::Bor, &[stop, gone]);
    }
    for &(e, up) in &plan.rising {
        let (past, edge) = if up {
            (Opcode::Fgt, f64::INFINITY)
        } else {
            (Opcode::Flt, f64::NEG_INFINITY)
        };
        let beyond = prim(&mut s, onward, past, &[exits[e], ks[e]]);
        stop = prim(&mut s, onward, Opcode::Bor, &[stop, beyond]);
        let edge = s.ins_const(onward, Const::F64(edge), span);
        let at_edge = prim(&mut s, onward, Opcode::Feq, &[exits[e], edge]);
        passed1 = prim(&mut s, onward, Opcode::Bor, &[passed1, at_edge]);
    }
    if !plan.products.is_empty() {
        let horizon = i(&mut s, onward, SCAN_HORIZON.min(iteration_limit));
        let far = prim(&mut s, onward, Opcode::Ige, &[steps1, horizon]);
        passed1 = prim(&mut s, onward, Opcode::Bor, &[passed1, far]);
    }
    for curve in &plan.curves {
        // The coming trip's step, sign · (h + offset): once it leads away from y and o is past
        // y on that side, o stays there.
        let h = hp[curve.step];
        let k = i(&mut s, onward, curve.offset);
        let step = prim(&mut s, onward, Opcode::Iadd, &[h, k]);
        let step = if curve.sign < 0 {
            prim(&mut s, onward, Opcode::Ineg, &[step])
        } else {
            step
        };
        let zero = i(&mut s, onward, 0);
        let (o, y) = (exits[curve.exit], ks[curve.exit]);
        let (away, beyond) = if curve.convex {
            (
                prim(&mut s, onward, Opcode::Ige, &[step, zero]),
                prim(&mut s, onward, Opcode::Igt, &[o, y]),
            )
        } else {
            (
                prim(&mut s, onward, Opcode::Ile, &[step, zero]),
                prim(&mut s, onward, Opcode::Ilt, &[o, y]),
            )
        };
        let done = prim(&mut s, onward, Opcode::Band, &[away, beyond]);
        stop = prim(&mut s, onward, Opcode::Bor, &[stop, done]);
    }
    if matches!(mode, ScanMode::Count | ScanMode::Pick) {
        stop = prim(&mut s, onward, Opcode::Bor, &[stop, passed1]);
    }
    let (stopped, round) = (s.create_block(), s.create_block());
    branch(&mut s, onward, stop, stopped, round);
    // Stopped: the count when counting, else −1 (no such candidate).
    let status = if mode == ScanMode::Count {
        idx_next
    } else {
        i(&mut s, stopped, STATUS_NONE)
    };
    ret(&mut s, stopped, status, (c_lo, c_hi, steps), &c_state);
    // One trip: the loop body, copied, back to the next visit.
    let round_args: Vec<Value> = plan
        .round
        .args
        .iter()
        .map(|&a| get(&map, a))
        .collect::<Result<_, _>>()?;
    let first = copy_body(
        c,
        plan,
        &mut s,
        &mut map,
        visit,
        &[
            &[idx_next, clo1, chi1, cempty1, steps1, passed1, c_lo, c_hi][..],
            &c_state,
        ]
        .concat(),
    )?;
    s.ins_jump(round, first, round_args, span);
    Ok(s)
}

/// The bounds `n` with `(n REL p) == holds`, as `(lo, hi, empty)`. For f64 the interval is
/// closed (a strict end is included; the walk back checks the test exactly); with a NaN `p` no
/// `n` makes the test true, and every `n` makes it false, which `fmax`/`fmin` give by ignoring
/// the NaN bound.
fn set_of(
    s: &mut Function,
    b: Block,
    t: Type,
    rel: Rel,
    p: Value,
    holds: bool,
    span: Span,
) -> (Value, Value, Value) {
    let prim = |s: &mut Function, op: Opcode, a: &[Value]| s.ins_prim(b, op, a.to_vec(), span);
    let rel = if holds { rel } else { rel.not() };
    match t {
        Type::I64 => {
            let min = s.ins_const(b, Const::I64(i64::MIN), span);
            let max = s.ins_const(b, Const::I64(i64::MAX), span);
            let one = s.ins_const(b, Const::I64(1), span);
            match rel {
                Rel::Le => (min, p, s.ins_const(b, Const::Bool(false), span)),
                Rel::Ge => (p, max, s.ins_const(b, Const::Bool(false), span)),
                Rel::Lt => {
                    let hi = prim(s, Opcode::Isub, &[p, one]);
                    let empty = prim(s, Opcode::Ieq, &[p, min]);
                    (min, hi, empty)
                }
                Rel::Gt => {
                    let lo = prim(s, Opcode::Iadd, &[p, one]);
                    let empty = prim(s, Opcode::Ieq, &[p, max]);
                    (lo, max, empty)
                }
            }
        }
        _ => {
            let lo_inf = s.ins_const(b, Const::F64(f64::NEG_INFINITY), span);
            let hi_inf = s.ins_const(b, Const::F64(f64::INFINITY), span);
            let empty = if holds {
                prim(s, Opcode::Fne, &[p, p])
            } else {
                s.ins_const(b, Const::Bool(false), span)
            };
            match rel {
                Rel::Le | Rel::Lt => (lo_inf, p, empty),
                Rel::Ge | Rel::Gt => (p, hi_inf, empty),
            }
        }
    }
}

/// Whether the scan's value `e` is the known `k`: exactly for i64 and bool; for f64 as the
/// inverse's checks compare (within `tolerance` relative, equal infinities, two NaNs).
fn same_value(s: &mut Function, b: Block, e: Value, k: Value, tolerance: f64, span: Span) -> Value {
    let prim = |s: &mut Function, op: Opcode, a: &[Value]| s.ins_prim(b, op, a.to_vec(), span);
    match s.value_type(e) {
        Type::I64 => prim(s, Opcode::Ieq, &[e, k]),
        Type::Bool => prim(s, Opcode::Beq, &[e, k]),
        _ => {
            let eq = prim(s, Opcode::Feq, &[e, k]);
            let d = prim(s, Opcode::Fsub, &[e, k]);
            let d = prim(s, Opcode::Fabs, &[d]);
            let one = s.ins_const(b, Const::F64(1.0), span);
            let ak = prim(s, Opcode::Fabs, &[k]);
            let scale = prim(s, Opcode::Fmax, &[one, ak]);
            let tol = s.ins_const(b, Const::F64(tolerance), span);
            let allowed = prim(s, Opcode::Fmul, &[tol, scale]);
            let near = prim(s, Opcode::Fle, &[d, allowed]);
            // Exact for a y that is not finite: ∞'s tolerance would be ∞, and every value near.
            let inf = s.ins_const(b, Const::F64(f64::INFINITY), span);
            let finite = prim(s, Opcode::Flt, &[ak, inf]);
            let near = prim(s, Opcode::Band, &[near, finite]);
            let en = prim(s, Opcode::Fne, &[e, e]);
            let kn = prim(s, Opcode::Fne, &[k, k]);
            let both = prim(s, Opcode::Band, &[en, kn]);
            let r = prim(s, Opcode::Bor, &[eq, near]);
            prim(s, Opcode::Bor, &[r, both])
        }
    }
}

impl Reorienter<'_> {
    /// Plans a scan for every loop head of `c` that has one, and adds its helpers to the module:
    /// loop head → the scan.
    pub(super) fn plan_trips(
        &mut self,
        c: &Function,
        cfg: &Cfg,
    ) -> Result<BTreeMap<Block, Rc<Trip>>, Error> {
        let mut out = BTreeMap::new();
        let plans: Vec<Plan> = cfg
            .loop_heads
            .iter()
            .filter_map(|&head| plan(c, cfg, head, self.options.iteration_limit))
            .collect();
        // A loop inside a scanned loop is run by the scan, never walked back: no scan of its
        // own (its PGF would record what the inverse never reads).
        let heads: Vec<(Block, Vec<Block>)> =
            plans.iter().map(|p| (p.head, p.body.clone())).collect();
        let nested = |p: &Plan| {
            heads
                .iter()
                .any(|(h, body)| *h != p.head && body.contains(&p.head))
        };
        for plan in plans.into_iter().filter(|p| !nested(p)) {
            let head = plan.head;
            let mut modes = vec![ScanMode::Count, ScanMode::Pick, ScanMode::Locate];
            if plan.tail {
                modes.push(ScanMode::Tail);
            }
            for mode in modes {
                let scan = build_scan(
                    c,
                    &plan,
                    mode,
                    self.options.iteration_limit,
                    self.options.emit.tolerance,
                )?;
                self.add(scan)?;
            }
            out.insert(
                head,
                Rc::new(Trip {
                    plan,
                    of: c.name.clone(),
                }),
            );
        }
        Ok(out)
    }

    /// At the exit of a scanned loop, with `known_after` (the exit arguments, forward value and
    /// inverse value): runs the scan, reads which candidate and the bound, and solves the loop
    /// head's parameters; the PGF locates its bound among the candidates and records both.
    pub(super) fn emit_trip_scan(
        &mut self,
        c: &Function,
        region: &mut Region<'_>,
        trip: &Trip,
        known_after: &[(Value, Value)],
        span: Span,
    ) -> Result<Vec<Value>, Error> {
        let plan = &trip.plan;
        let params = c.blocks[plan.head].params.clone();
        let ks: Vec<Value> = known_after.iter().map(|&(_, v)| v).collect();
        let kf: Vec<Value> = known_after
            .iter()
            .map(|&(f, _)| pair_fwd(&region.fwd, f))
            .collect::<Result<_, _>>()?;
        let nf = pair_fwd(&region.fwd, params[plan.bound])?;
        let t = plan.bound_ty;
        let limit = self.options.iteration_limit;
        let at = plan.span;
        let which = if plan.tail {
            "which number of trips round the loop, among those that give y (below 2^-20: one \
             past a wrap-around of the sum)"
        } else {
            "which number of trips round the loop, among those that give y"
        };
        let bound = "the loop's bound, among those that stop it after that many trips";
        let none = format!("no number of trips round the loop (up to {limit}) gives these values");
        let (state, n) = region
            .emit(self.options, at, "", Some(&self.out), |ie, pe| {
                // Every scan takes (k…, pick, n, from); only Pick reads `pick`, only Locate `n`,
                // only Tail `from`.
                let with = |ks: &[Value], rest: [Value; 3]| [ks, &rest[..]].concat();
                let dummy = ie.konst(Const::zero(t));
                let zero = ie.i64(0);
                let one = ie.i64(1);
                let counted =
                    ie.call(&trip.scan(ScanMode::Count), &with(&ks, [zero, dummy, zero]))?;
                let count = counted[0];
                let types: Vec<Type> = counted[1..].iter().map(|&v| ie.value_type(v)).collect();
                // Candidate j before any wrap: the first comes with the count.
                let main = |ie: &mut pinv_primitives::Emitter<'_>, j: Value| {
                    let first = ie.prim(Opcode::Ieq, &[j, zero]);
                    ie.if_else(
                        first,
                        &types,
                        |_| Ok(counted[1..].to_vec()),
                        |ie| {
                            let picked =
                                ie.call(&trip.scan(ScanMode::Pick), &with(&ks, [j, dummy, zero]))?;
                            let found = ie.prim(Opcode::Ieq, &[picked[0], j]);
                            ie.check(found, "the loop's scan lost a candidate")?;
                            Ok(picked[1..].to_vec())
                        },
                    )
                };
                let picked = if plan.tail {
                    let (lo, hi) = (ie.f64(0.0), ie.f64(1.0));
                    let u = ie.theta_within(Domain::Real, lo, hi, which)?;
                    let share = ie.f64(TAIL_SHARE);
                    let in_tail = ie.prim(Opcode::Flt, &[u, share]);
                    ie.if_else(
                        in_tail,
                        &types,
                        |ie| {
                            // The first trip count past a wrap at or after visit u/ε·limit.
                            let scaled = ie.prim(Opcode::Fdiv, &[u, share]);
                            let lim = ie.f64(limit as f64);
                            let at = ie.prim(Opcode::Fmul, &[scaled, lim]);
                            let at = ie.prim(Opcode::Floor, &[at]);
                            let from = ie.prim(Opcode::FcvtToI64, &[at]);
                            let picked = ie.call(
                                &trip.scan(ScanMode::Tail),
                                &with(&ks, [zero, dummy, from]),
                            )?;
                            let tail = ie.i64(STATUS_TAIL);
                            let found = ie.prim(Opcode::Ieq, &[picked[0], tail]);
                            ie.check(found, &none)?;
                            Ok(picked[1..].to_vec())
                        },
                        |ie| {
                            let some = ie.prim(Opcode::Ige, &[count, one]);
                            ie.check(some, &none)?;
                            // j = ⌊(u − ε)/(1 − ε) · count⌋, within 0..count.
                            let rest = ie.prim(Opcode::Fsub, &[u, share]);
                            let width = ie.f64(1.0 - TAIL_SHARE);
                            let frac = ie.prim(Opcode::Fdiv, &[rest, width]);
                            let cf = ie.prim(Opcode::FcvtFromI64, &[count]);
                            let jf = ie.prim(Opcode::Fmul, &[frac, cf]);
                            let jf = ie.prim(Opcode::Floor, &[jf]);
                            let j = ie.prim(Opcode::FcvtToI64, &[jf]);
                            let last = ie.prim(Opcode::Isub, &[count, one]);
                            let j = ie.prim(Opcode::Imin, &[j, last]);
                            let j = ie.prim(Opcode::Imax, &[j, zero]);
                            main(ie, j)
                        },
                    )?
                } else {
                    let some = ie.prim(Opcode::Ige, &[count, one]);
                    ie.check(some, &none)?;
                    let last = ie.prim(Opcode::Isub, &[count, one]);
                    let j = ie.theta_within(Domain::Int, zero, last, which)?;
                    main(ie, j)?
                };
                let n = ie.theta_within(Domain::all(t), picked[0], picked[1], bound)?;
                // The PGF: where among the candidates the bound stops the loop.
                let pzero = pe.i64(0);
                let located =
                    pe.call(&trip.scan(ScanMode::Locate), &with(&kf, [pzero, nf, pzero]))?;
                if plan.tail {
                    let counted =
                        pe.call(&trip.scan(ScanMode::Count), &with(&kf, [pzero, nf, pzero]))?;
                    let half = pe.f64(0.5);
                    let share = pe.f64(TAIL_SHARE);
                    let lim = pe.f64(limit as f64);
                    let visit = pe.prim(Opcode::FcvtFromI64, &[located[3]]);
                    let visit = pe.prim(Opcode::Fadd, &[visit, half]);
                    let u_tail = pe.prim(Opcode::Fdiv, &[visit, lim]);
                    let u_tail = pe.prim(Opcode::Fmul, &[u_tail, share]);
                    let index = pe.prim(Opcode::FcvtFromI64, &[located[0]]);
                    let index = pe.prim(Opcode::Fadd, &[index, half]);
                    let cf = pe.prim(Opcode::FcvtFromI64, &[counted[0]]);
                    let frac = pe.prim(Opcode::Fdiv, &[index, cf]);
                    let width = pe.f64(1.0 - TAIL_SHARE);
                    let u_main = pe.prim(Opcode::Fmul, &[frac, width]);
                    let u_main = pe.prim(Opcode::Fadd, &[u_main, share]);
                    let tail = pe.i64(STATUS_TAIL);
                    let in_tail = pe.prim(Opcode::Ieq, &[located[0], tail]);
                    let u = pe.select(in_tail, u_tail, u_main)?;
                    pe.record(u, which)?;
                } else {
                    pe.record(located[0], which)?;
                }
                pe.record(nf, bound)?;
                Ok((picked[3..].to_vec(), n))
            })
            .map_err(|e| rule_error(c, e))?;
        for (k, &q) in params.iter().enumerate() {
            let v = if k == plan.bound { n } else { state[k] };
            self.solve(
                c,
                region,
                q,
                v,
                span,
                "the loop's values at its exit disagree with its scan",
            )?;
        }
        // The values the loop was entered with.
        let mut init = Vec::new();
        for i in &plan.init {
            init.push(match *i {
                Init::Const(k) => region.inv.ins_const(region.inv_block, k, span),
                Init::Bound => n,
                Init::Exit(e) => ks[e],
            });
        }
        Ok(init)
    }
}

impl Reorienter<'_> {
    /// At the exit of a loop with [`ExitBounds`], with `known_after` (the exit arguments,
    /// forward value and inverse value): the bounds of the value its test compares, for the
    /// test's rule — what a trip leaves, joined with the entry value unless the known values
    /// rule out that the loop was never entered.
    pub(super) fn emit_exit_bounds(
        &mut self,
        c: &Function,
        head: Block,
        region: &mut Region<'_>,
        eb: &ExitBounds,
        known_after: &[(Value, Value)],
        span: Span,
    ) -> Result<(), Error> {
        let q = c.blocks[head].params[eb.param];
        if region.known.contains_key(&q) {
            return Ok(());
        }
        let int = matches!(eb.latch.0, Const::I64(_));
        let (whole_lo, whole_hi) = if int {
            (Const::I64(i64::MIN), Const::I64(i64::MAX))
        } else {
            (Const::F64(f64::NEG_INFINITY), Const::F64(f64::INFINITY))
        };
        let (entry_lo, entry_hi) = eb.entry.map_or((whole_lo, whole_hi), |k| (k, k));
        let bounds = region
            .emit(self.options, span, "", None, |ie, _| {
                let (min, max) = if int {
                    (Opcode::Imin, Opcode::Imax)
                } else {
                    (Opcode::Fmin, Opcode::Fmax)
                };
                let latch_lo = ie.konst(eb.latch.0);
                let latch_hi = ie.konst(eb.latch.1);
                let joined_lo = ie.konst(entry_lo);
                let joined_lo = ie.prim(min, &[joined_lo, latch_lo]);
                let joined_hi = ie.konst(entry_hi);
                let joined_hi = ie.prim(max, &[joined_hi, latch_hi]);
                // Whether the loop may not have been entered: every known value entered as a
                // constant still is that constant.
                let mut entry = ie.bool(true);
                for &(e, k) in &eb.entered_when {
                    let Some(&(_, v)) = known_after.get(e) else {
                        continue;
                    };
                    let k = ie.konst(k);
                    let same = match ie.value_type(k) {
                        Type::I64 => ie.prim(Opcode::Ieq, &[v, k]),
                        Type::Bool => ie.prim(Opcode::Beq, &[v, k]),
                        _ => ie.prim(Opcode::Feq, &[v, k]),
                    };
                    entry = ie.prim(Opcode::Band, &[entry, same]);
                }
                let lo = ie.select(entry, joined_lo, latch_lo)?;
                let hi = ie.select(entry, joined_hi, latch_hi)?;
                Ok((lo, hi))
            })
            .map_err(|e| rule_error(c, e))?;
        region.bounds.insert(q, bounds);
        Ok(())
    }
}
