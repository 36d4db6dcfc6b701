//! Integer range analysis: an interval `[lo, hi]` that each i64 value of a forward function
//! always lies in, from its definition, through calls, and through recursion.
//!
//! The dispatch of an inverse uses it to rule out a `return` (or an edge into a merge) that
//! cannot have produced y: in `fn ping(n) { if n <= 0 { 0 } else { 1 + pong(n - 1) } }` the
//! second return is at least 1 once `pong` is known to be at least 0, so y = 0 needs no θ and
//! a negative y is rejected at once instead of recursing until a limit.
//!
//! Invariant: every value the forward code computes lies in its interval. Bounds are i128:
//! finite bounds are i64 values, and an interval whose finite bound would leave i64 becomes the
//! full i64 range (i64 arithmetic wraps). Block parameters get the hull of what arrives from
//! blocks analysed before them (a merge), and are unknown where a loop brings them round.
//!
//! The results of a recursive function are a **post-fixpoint**: starting from "no value" for the
//! function being analysed, its returns are recomputed with the assumption widened until the
//! assumption holds everything the body can return; only then is it kept. A bound that keeps
//! moving becomes infinite ([`NEG_INF`], [`POS_INF`]): "no bound, from recursion". Adding a
//! value of at most 2³² in magnitude keeps an infinite bound infinite, which is sound for
//! recursion less than 2³¹ levels deep (the call depth limit is 10,000); any other operation on
//! an infinite bound gives the full range.

use pinv_core::ir::{Block, Const, FuncId, Function, InstKind, Module, Opcode, Type, Value};
use std::collections::{HashMap, HashSet};

/// An interval of i64 values, `lo <= hi`; a bound may be infinite ([`NEG_INF`], [`POS_INF`]).
pub type IntRange = (i128, i128);

/// No lower bound, from a recursive fixpoint.
pub const NEG_INF: i128 = i128::MIN;
/// No upper bound, from a recursive fixpoint.
pub const POS_INF: i128 = i128::MAX;

const FULL: IntRange = (i64::MIN as i128, i64::MAX as i128);

/// How large a value added to an infinite bound may be for the bound to stay infinite.
const SMALL_STEP: i128 = 1 << 32;

/// What is known of a function's i64 results: per result, `None` for "no value yet" (only while
/// a recursive function's fixpoint is being computed) or an interval (`FULL` for unknown and for
/// results that are not i64).
type Returns = Vec<Option<IntRange>>;

/// The memo of [`analyze`] across functions.
#[derive(Debug, Default)]
pub struct IntReturns {
    done: HashMap<FuncId, Returns>,
    /// Functions whose fixpoint is being computed, with the current assumption.
    assumed: HashMap<FuncId, Returns>,
    /// The functions in `assumed` whose assumption the current computation has read.
    read: HashSet<FuncId>,
}

/// The intervals of `f`'s i64 values (values with no interval are left out).
pub fn analyze(module: &Module, f: &Function, memo: &mut IntReturns) -> HashMap<Value, IntRange> {
    let mut map: HashMap<Value, IntRange> = HashMap::new();
    // Each block's incoming arguments, to give a parameter the hull of what arrives (a merge
    // after `if`); a parameter with an edge from a block not analysed yet (a loop) is unknown.
    let mut incoming: HashMap<Block, Vec<(Block, Vec<Value>)>> = HashMap::new();
    for &b in &f.layout {
        if let Some(t) = f.terminator(b) {
            for call in f.insts[t].kind.successors() {
                incoming
                    .entry(call.block)
                    .or_default()
                    .push((b, call.args.to_vec()));
            }
        }
    }
    let mut done: HashSet<Block> = HashSet::new();
    for &b in &f.layout {
        let edges = incoming.get(&b).map(Vec::as_slice).unwrap_or_default();
        for (k, &p) in f.blocks[b].params.iter().enumerate() {
            let mut hull: Option<IntRange> = None;
            let mut known = !edges.is_empty();
            for (from, args) in edges {
                let r = args.get(k).and_then(|v| map.get(v).copied());
                match r {
                    Some(r) if done.contains(from) => {
                        if is_empty(r) {
                            continue;
                        }
                        hull = Some(hull.map_or(r, |h| (h.0.min(r.0), h.1.max(r.1))));
                    }
                    _ => known = false,
                }
            }
            if known {
                map.insert(p, hull.unwrap_or(EMPTY));
            }
        }
        analyze_block(module, f, b, &mut map, memo);
        done.insert(b);
    }
    map
}

/// [`analyze`] for the instructions of one block.
fn analyze_block(
    module: &Module,
    f: &Function,
    b: Block,
    map: &mut HashMap<Value, IntRange>,
    memo: &mut IntReturns,
) {
    for &inst in &f.blocks[b].insts {
        let data = &f.insts[inst];
        let get = |v: Value| map.get(&v).copied();
        let results: Vec<Option<IntRange>> = match &data.kind {
            InstKind::Const(Const::I64(x)) => vec![Some((i128::from(*x), i128::from(*x)))],
            InstKind::Prim { op, args } => {
                let a = args.first().and_then(|&v| get(v));
                let b = args.get(1).and_then(|&v| get(v));
                vec![prim_range(*op, a, b)]
            }
            InstKind::Call { callee, .. } => call_range(module, *callee, memo)
                .into_iter()
                // A callee with no value yet for a result: nothing is returned there yet, and
                // the empty set is not an interval; the call's block is then unreachable in
                // this round, which `hull` below tells apart.
                .map(|r| r.or(Some(EMPTY)))
                .collect(),
            _ => Vec::new(),
        };
        for (&v, range) in data.results.iter().zip(results) {
            if let Some(r) = range {
                if f.value_type(v) == Type::I64 && r != FULL {
                    map.insert(v, r);
                }
            }
        }
    }
}

/// Marks a value that cannot exist yet (a result of a recursive call whose fixpoint has found no
/// value so far): `lo > hi`. Every operation on it gives [`EMPTY`] again.
const EMPTY: IntRange = (1, 0);

fn is_empty(r: IntRange) -> bool {
    r.0 > r.1
}

/// The intervals of a callee's results.
fn call_range(module: &Module, callee: FuncId, memo: &mut IntReturns) -> Returns {
    if let Some(r) = memo.done.get(&callee) {
        return r.clone();
    }
    if let Some(r) = memo.assumed.get(&callee) {
        memo.read.insert(callee);
        return r.clone();
    }
    let f = &module.functions[callee];
    if f.layout.is_empty() {
        return vec![Some(FULL); f.sig.returns.len()];
    }
    pinv_core::stack::ensure_sufficient_stack(|| fixpoint(module, callee, f, memo))
}

/// The most rounds of a fixpoint: each widening moves a bound to its extreme, so a function
/// with k i64 results is stable after at most 2k + 2 rounds; past this, everything is unknown.
const MAX_ROUNDS: usize = 16;

fn fixpoint(module: &Module, id: FuncId, f: &Function, memo: &mut IntReturns) -> Returns {
    let outer_read = std::mem::take(&mut memo.read);
    let mut assumption: Returns = vec![None; f.sig.returns.len()];
    let mut result = vec![Some(FULL); f.sig.returns.len()];
    let mut provisional = false;
    for round in 0..MAX_ROUNDS {
        memo.assumed.insert(id, assumption.clone());
        memo.read.clear();
        let found = returns_of(module, f, memo);
        memo.assumed.remove(&id);
        let self_read = memo.read.remove(&id);
        provisional = !memo.read.is_empty();
        if !self_read || contains_all(&assumption, &found) {
            result = if self_read { assumption } else { found };
            break;
        }
        assumption = widen(&assumption, &found, round >= 1);
    }
    // A result that read the assumption of a function further out holds only under it: that
    // function's own fixpoint recomputes it, so it is not kept.
    if !provisional {
        memo.done.insert(id, result.clone());
    }
    let inner = std::mem::replace(&mut memo.read, outer_read);
    memo.read.extend(inner);
    result
}

/// The hull of the values `f`'s `return`s give, per result.
fn returns_of(module: &Module, f: &Function, memo: &mut IntReturns) -> Returns {
    let map = analyze(module, f, memo);
    let mut hull: Returns = vec![None; f.sig.returns.len()];
    for (_, inst) in f.insts_in_layout() {
        let InstKind::Return { args } = &f.insts[inst].kind else {
            continue;
        };
        let here: Vec<IntRange> = args
            .iter()
            .map(|&v| match f.value_type(v) {
                Type::I64 => map.get(&v).copied().unwrap_or(FULL),
                _ => FULL,
            })
            .collect();
        // A return that can only give a value that does not exist yet is not reached.
        if here.iter().any(|&r| is_empty(r)) {
            continue;
        }
        for (h, r) in hull.iter_mut().zip(here) {
            *h = Some(match *h {
                None => r,
                Some((a, b)) => (a.min(r.0), b.max(r.1)),
            });
        }
    }
    hull
}

fn contains_all(outer: &Returns, inner: &Returns) -> bool {
    outer.iter().zip(inner).all(|(o, i)| match (o, i) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some((a, b)), Some((c, d))) => a <= c && d <= b,
    })
}

/// The assumption grown to hold `found`; with `jump`, a bound that has to move goes to its
/// extreme at once (so the rounds end).
fn widen(old: &Returns, found: &Returns, jump: bool) -> Returns {
    old.iter()
        .zip(found)
        .map(|(o, n)| match (o, n) {
            (o, None) => *o,
            (None, n) => *n,
            (&Some((a, b)), &Some((c, d))) => {
                let lo = if c < a {
                    if jump {
                        NEG_INF
                    } else {
                        c
                    }
                } else {
                    a
                };
                let hi = if d > b {
                    if jump {
                        POS_INF
                    } else {
                        d
                    }
                } else {
                    b
                };
                Some((lo, hi))
            }
        })
        .collect()
}

fn infinite(x: i128) -> bool {
    x == NEG_INF || x == POS_INF
}

/// An interval from bounds computed exactly: infinite bounds stay so, and a finite bound
/// outside i64 makes it the full range (the arithmetic wraps).
fn fit(lo: i128, hi: i128) -> IntRange {
    let inside = |x: i128| infinite(x) || i64::try_from(x).is_ok();
    if inside(lo) && inside(hi) {
        (lo, hi)
    } else {
        FULL
    }
}

/// `a + b` of two intervals (`b` negated first for `a - b`).
fn add(a: IntRange, b: IntRange) -> IntRange {
    let small = |r: IntRange| {
        !infinite(r.0) && !infinite(r.1) && r.0.abs() <= SMALL_STEP && r.1.abs() <= SMALL_STEP
    };
    let bound = |x: i128, y: i128, r: IntRange, other: IntRange| -> Option<i128> {
        match (infinite(x), infinite(y)) {
            (false, false) => Some(x + y),
            (true, false) if small(other) => Some(x),
            (false, true) if small(r) => Some(y),
            _ => None,
        }
    };
    match (bound(a.0, b.0, a, b), bound(a.1, b.1, a, b)) {
        (Some(lo), Some(hi)) => fit(lo, hi),
        _ => FULL,
    }
}

fn neg(a: IntRange) -> IntRange {
    let n = |x: i128| match x {
        NEG_INF => POS_INF,
        POS_INF => NEG_INF,
        x => -x,
    };
    fit(n(a.1), n(a.0))
}

/// The interval of a primitive's i64 result from its operands' (`None`: nothing known).
pub(super) fn prim_range(op: Opcode, a: Option<IntRange>, b: Option<IntRange>) -> Option<IntRange> {
    if a.is_some_and(is_empty) || b.is_some_and(is_empty) {
        return Some(EMPTY);
    }
    let af = a.unwrap_or(FULL);
    let bf = b.unwrap_or(FULL);
    let finite = |r: IntRange| !infinite(r.0) && !infinite(r.1);
    let range = match op {
        Opcode::Iadd => add(a?, b?),
        Opcode::Isub => add(a?, neg(b?)),
        Opcode::Imul => {
            let (a, b) = (a?, b?);
            if !finite(a) || !finite(b) {
                return None;
            }
            let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
            fit(
                p.iter().copied().min().unwrap_or(0),
                p.iter().copied().max().unwrap_or(0),
            )
        }
        Opcode::Ineg => neg(a?),
        Opcode::Iabs => {
            let (lo, hi) = a?;
            if lo <= i128::from(i64::MIN) {
                return None;
            }
            if lo >= 0 {
                (lo, hi)
            } else if hi <= 0 {
                neg((lo, hi))
            } else {
                (0, hi.max(-lo))
            }
        }
        Opcode::Imin => (af.0.min(bf.0), af.1.min(bf.1)),
        Opcode::Imax => (af.0.max(bf.0), af.1.max(bf.1)),
        // The remainder has the dividend's sign and is smaller than the divisor in magnitude.
        Opcode::Irem => {
            if !finite(bf) {
                return None;
            }
            let m = (bf.0.abs().max(bf.1.abs()) - 1).max(0);
            let lo = if af.0 >= 0 { 0 } else { (-m).max(af.0) };
            let hi = if af.1 <= 0 { 0 } else { m.min(af.1) };
            (lo, hi)
        }
        // Division by a constant other than 0 and −1 (the one that can overflow) truncates
        // toward zero, which is monotone in the dividend; so is an arithmetic shift right.
        Opcode::Idiv => match b? {
            (d, d2) if d == d2 && d != 0 && d != -1 && finite(af) => {
                let (x, y) = (af.0 / d, af.1 / d);
                (x.min(y), x.max(y))
            }
            _ => return None,
        },
        Opcode::Ishr => match b? {
            (k, k2) if k == k2 && (0..64).contains(&k) && finite(af) => (af.0 >> k, af.1 >> k),
            _ => return None,
        },
        // `a & k` with a nonnegative constant mask: between 0 and the mask.
        Opcode::Iand => match (a, b) {
            (_, Some((k, k2))) | (Some((k, k2)), _) if k == k2 && k >= 0 => (0, k),
            _ => return None,
        },
        _ => return None,
    };
    Some(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::reorient::test_module as module;

    fn returns(m: &Module, name: &str) -> Returns {
        let id = m.get(name).unwrap_or_else(|| panic!("no {name}"));
        call_range(m, id, &mut IntReturns::default())
    }

    #[test]
    fn recursion_reaches_a_sound_fixpoint() {
        let m = module(
            "fn ping(n: i64) -> i64 { if n <= 0 { 0 } else { 1 + pong(n - 1) } }
             fn pong(n: i64) -> i64 { if n <= 0 { 0 } else { 2 + ping(n - 1) } }
             fn down(n: i64) -> i64 { if n <= 0 { -1 } else { down(n - 1) - 3 } }
             fn digit(n: i64) -> i64 { if n < 10 { abs(n % 10) } else { digit(n / 10) } }
             fn both(n: i64) -> (i64, i64) { if n <= 0 { (0, 5) } else { let (a, b) = both(n - 1); (a + 1, b) } }
             fn wraps(n: i64) -> i64 { n * 3 + 1 }
             fn spin(n: i64) -> i64 { spin(n) + 1 }",
        );
        assert_eq!(returns(&m, "ping"), [Some((0, POS_INF))]);
        assert_eq!(returns(&m, "pong"), [Some((0, POS_INF))]);
        assert_eq!(returns(&m, "down"), [Some((NEG_INF, -1))]);
        assert_eq!(returns(&m, "digit"), [Some((0, 9))]);
        assert_eq!(returns(&m, "both"), [Some((0, POS_INF)), Some((5, 5))]);
        assert_eq!(returns(&m, "wraps"), [Some(FULL)]);
        // No return is ever reached: no value at all.
        assert_eq!(returns(&m, "spin"), [None]);
    }

    /// The intervals hold every value the function computes (checked by running it).
    #[test]
    fn intervals_hold_the_values_computed() {
        let m = module(
            "fn ping(n: i64) -> i64 { if n <= 0 { 0 } else { 1 + pong(n - 1) } }
             fn pong(n: i64) -> i64 { if n <= 0 { 0 } else { 2 + ping(n - 1) } }
             fn digit(n: i64) -> i64 { if n < 10 { abs(n % 10) } else { digit(n / 10) } }
             fn mix(n: i64) -> i64 { max(min(n, 7), -3) * 2 - (n & 12) + n % 5 }",
        );
        let interp = pinv_core::interp::Interpreter::new(&m);
        for name in ["ping", "pong", "digit", "mix"] {
            let r = returns(&m, name)[0].unwrap_or(FULL);
            let id = m.get(name).unwrap_or_else(|| panic!("no {name}"));
            for n in -60..60 {
                let y = interp
                    .call(id, &[Const::I64(n)])
                    .unwrap_or_else(|e| panic!("{e}"));
                let Const::I64(y) = y[0] else { panic!() };
                let y = i128::from(y);
                assert!(r.0 <= y && y <= r.1, "{name}({n}) = {y} outside {r:?}");
            }
        }
    }
}
