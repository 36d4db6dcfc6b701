//! Simplification of generated inverse and PGF code.
//!
//! Rules emit what they need locally: constants again and again, checks of values against
//! themselves, `x · 1.0`, branches on constants. After the reorientation (and the isolation
//! guard) every generated function is simplified, **without changing any result bit for bit**:
//!
//! 1. **Per block, with an e-graph**: the block's pure instructions (constants and primitives
//!    that cannot trap) are added to an e-graph over leaves (block parameters, results of
//!    statements, values of other blocks); the exact rules ([`super::rules::exact_simplifications`])
//!    and constant folding ([`super::analysis`], the IR's own semantics) run with small limits;
//!    the block is rebuilt with its **statements in their original order** (θ reads, choices,
//!    checks, records, calls — a call may read θ or fail — integer division, the terminator)
//!    and each pure value emitted once, right before its first use. Values used in other blocks
//!    are emitted before the terminator. Most blocks give the e-graph nothing to do (no rule's
//!    left-hand side occurs, nothing folds): those are rebuilt the same way without building one
//!    (`Plain`), which gives the same block and is several times faster.
//! 2. A `check` of a condition that folds to `true` is removed; a `brif` on a constant becomes a
//!    `jump`, and blocks no longer reachable are dropped (no run took that branch, so no tape
//!    changes). Straight jump chains are merged (`pinv_core::ir::merge_blocks`) before and after,
//!    so the e-graphs see whole straight-line stretches. After the implied checks, edges go
//!    past blocks that only pass values on (`pinv_core::ir::thread_jumps`): a choice of two
//!    values, six blocks as the rules emit it, becomes a `brif` with the values as arguments.
//!    Before step 1, and again after threading (which takes forwarding blocks out of a loop's
//!    latch), block parameters that always hold one value are that value
//!    (`pinv_core::ir::trivial_params`: a trip-count scan carries its invariants round the
//!    loop), and the blocks that read one are rewritten again by step 1.
//! 3. **Dead code**: pure instructions whose results are unused are removed.
//! 4. **Dead θ reads**: a `theta` or `choice` whose value is unused still consumes a tape
//!    position, so removing it alone would shift every later read and break the PGF, which
//!    writes the tape in the same order. It is removed **together with the PGF's `record` of the
//!    same slot**, and only when that record is certain: rules emit each read and its record with
//!    the same role and the same span, under mirrored conditions, so when exactly one read of the
//!    inverse and exactly one record of the PGF carry that (role, span), on every run either both
//!    happen or neither does, and removing both keeps every other read aligned with its record.
//!    Otherwise the read stays. An inverse without a PGF has no tape to keep aligned with.
//!
//! Not done: `(z − θ) + θ → z` for f64 (false in floating point — which is why rules check their
//! answers; it is done for i64, where it is exact).
//!
//! Functions are simplified in place, and verified afterwards: by the reorientation, which
//! reports one the verifier rejects as an internal error (a bug here), and, for the PGFs whose
//! simplification is deferred, by [`crate::reorient::finish_deferred_pgfs`], which keeps the
//! unsimplified PGF it still has instead.

use super::analysis::{IsoAnalysis, VarInfo, VarKind};
use super::cost::IsoCost;
use super::lang::Node;
use super::rules::{exact_simplifications, Rule};
use crate::deadline::Deadline;
use egg::{Extractor, Id, Runner, Symbol};
use pinv_core::ir::implied::{remove_implied_checks, ImpliedConfig};
use pinv_core::ir::{
    Block, Const, FuncId, FuncKind, Function, Inst, InstKind, Module, Value, ValueList,
};
use rustc_hash::FxHashMap;
use std::collections::{HashMap, HashSet};

/// What simplification did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SimplifyStats {
    pub insts_before: usize,
    pub insts_after: usize,
    /// θ reads removed together with their records.
    pub dead_thetas: usize,
    pub checks_removed: usize,
    pub branches_folded: usize,
}

/// Simplifies every generated inverse and PGF of `module`.
///
/// Past `deadline` the functions left are not simplified (the build is given up anyway).
pub fn simplify_generated(module: &mut Module, deadline: Deadline) -> SimplifyStats {
    simplify_generated_except(module, deadline, &HashSet::new())
}

/// [`simplify_generated`], leaving alone the functions in `done`, which were simplified on their
/// own already ([`simplify_alone`]).
pub fn simplify_generated_except(
    module: &mut Module,
    deadline: Deadline,
    done: &HashSet<FuncId>,
) -> SimplifyStats {
    let mut stats = SimplifyStats::default();
    let ids = generated(module);
    let first = fold_constant_callees(module, &ids, done, &mut stats);
    for &id in ids.iter().filter(|id| !first.contains(id)) {
        if deadline.passed() {
            break;
        }
        simplify_one(module, id, &mut stats);
    }
    remove_dead_thetas(module, &ids, &mut stats);
    stats.insts_after = ids.iter().map(|&id| count(&module.functions[id])).sum();
    stats
}

/// [`simplify_generated`], except that the PGFs are left as they are when simplifying them
/// cannot change anything else: when no inverse reads a θ it does not use (step 4 removes such
/// reads together with records of the *simplified* PGF). Returns the PGFs left, for
/// [`finish_pgfs`]; simplifying them then gives what `simplify_generated` gives (each function is
/// simplified on its own). This way an inverse can be compiled and run before its PGF is needed.
///
/// `pgfs_built` false says the PGFs have no code yet: where they cannot be left (an inverse
/// reads a θ it does not use), nothing more is done and the result is `None`.
pub fn simplify_generated_deferring_pgfs(
    module: &mut Module,
    deadline: Deadline,
    done: &HashSet<FuncId>,
    pgfs_built: bool,
) -> Option<Vec<FuncId>> {
    let mut stats = SimplifyStats::default();
    let ids = generated(module);
    let is_pgf =
        |m: &Module, id: FuncId| matches!(m.functions[id].kind, FuncKind::GeneratedPgf { .. });
    let (pgfs, others): (Vec<FuncId>, Vec<FuncId>) =
        ids.iter().partition(|&&id| is_pgf(module, id));
    let first = fold_constant_callees(module, &ids, done, &mut stats);
    for &id in others.iter().filter(|id| !first.contains(id)) {
        if deadline.passed() {
            break;
        }
        simplify_one(module, id, &mut stats);
    }
    let unused_reads = others.iter().any(|&id| {
        matches!(module.functions[id].kind, FuncKind::GeneratedInverse { .. })
            && reads_unused_theta(&module.functions[id])
    });
    if !unused_reads {
        return Some(pgfs);
    }
    if !pgfs_built {
        return None;
    }
    for &id in &pgfs {
        simplify_one(module, id, &mut stats);
    }
    remove_dead_thetas(module, &ids, &mut stats);
    Some(Vec::new())
}

/// Simplifies the PGFs [`simplify_generated_deferring_pgfs`] left.
pub fn finish_pgfs(module: &mut Module, pgfs: &[FuncId]) {
    let mut stats = SimplifyStats::default();
    for &id in pgfs {
        simplify_one(module, id, &mut stats);
    }
}

/// Step 0: simplifies first the generated inverses that generated code calls (the dispatch
/// guards), and where one comes out returning a constant whatever its inputs (a guard of a
/// region whose θ-free start checks nothing), replaces every call of it among `ids` with that
/// constant, for step 2 to fold. Callees in `done` were simplified already. Returns the
/// functions that need no more simplifying: those simplified here, and `done`. PGFs are only
/// rewritten here, never simplified, so that [`simplify_generated_deferring_pgfs`] can still
/// defer them.
fn fold_constant_callees(
    module: &mut Module,
    ids: &[FuncId],
    done: &HashSet<FuncId>,
    stats: &mut SimplifyStats,
) -> HashSet<FuncId> {
    let generated: HashSet<FuncId> = ids.iter().copied().collect();
    let mut callees: Vec<FuncId> = Vec::new();
    let mut seen: HashSet<FuncId> = HashSet::new();
    for &id in ids {
        let f = &module.functions[id];
        for (_, i) in f.insts_in_layout() {
            if let InstKind::Call { callee, .. } = &f.insts[i].kind {
                let inverse = matches!(
                    module.functions[*callee].kind,
                    FuncKind::GeneratedInverse { .. }
                );
                if inverse && generated.contains(callee) && seen.insert(*callee) {
                    callees.push(*callee);
                }
            }
        }
    }
    callees.sort();
    let mut constant: HashMap<FuncId, Const> = HashMap::new();
    for &id in &callees {
        if !done.contains(&id) {
            simplify_one(module, id, stats);
        }
        if let Some(k) = constant_result(&module.functions[id]) {
            constant.insert(id, k);
        }
    }
    if !constant.is_empty() {
        for &id in ids {
            let f = &mut module.functions[id];
            for b in f.layout.clone() {
                for &i in &f.blocks[b].insts {
                    if let InstKind::Call { callee, .. } = &f.insts[i].kind {
                        if let Some(&k) = constant.get(callee) {
                            f.insts[i].kind = InstKind::Const(k);
                        }
                    }
                }
            }
        }
    }
    callees.into_iter().chain(done.iter().copied()).collect()
}

/// The one value `f` returns whatever its inputs: every `return` returns the same constant, and
/// nothing else ends a run (no `fail`, `check`, θ read or call). What else it computes is then
/// dead: a guard that copied a region's θ-free start, bounds for a narrowed θ read among it,
/// and no check (`select`s left as diamonds whose results nothing uses). A primitive that could
/// stop a run (an integer division by 0) does not count: a guard only tells when a path cannot
/// pass, and the region it guards runs the same code.
fn constant_result(f: &Function) -> Option<Const> {
    let mut result: Option<Const> = None;
    for (_, i) in f.insts_in_layout() {
        match &f.insts[i].kind {
            InstKind::Const(_)
            | InstKind::Prim { .. }
            | InstKind::Jump { .. }
            | InstKind::Brif { .. } => {}
            InstKind::Return { args } => {
                let [v] = args.as_slice() else {
                    return None;
                };
                let k = f.constant(*v)?;
                match result {
                    Some(r) if r != k => return None,
                    _ => result = Some(k),
                }
            }
            _ => return None,
        }
    }
    result
}

/// The generated inverses and PGFs of `module`.
fn generated(module: &Module) -> Vec<FuncId> {
    module
        .iter()
        .filter(|(_, f)| {
            matches!(
                f.kind,
                FuncKind::GeneratedInverse { .. } | FuncKind::GeneratedPgf { .. }
            )
        })
        .map(|(id, _)| id)
        .collect()
}

/// Simplifies function `id` of `module` (steps 1–3), keeping the original if the result does
/// not verify.
/// Simplifies one function in place: a copy of a large function would cost as much memory as
/// the function (at 10⁴ statements, a hundred megabytes), so nothing is kept to fall back on.
/// The reorientation verifies every generated function afterwards and reports one the verifier
/// rejects as an internal error; [`crate::reorient::finish_deferred_pgfs`] verifies the PGFs it
/// finishes and keeps the unsimplified one it still has if one is rejected.
fn simplify_one(module: &mut Module, id: FuncId, stats: &mut SimplifyStats) {
    stats.insts_before += count(&module.functions[id]);
    // Out of the module while it is rewritten, so that its calls' callees can be looked at
    // (a call of itself sees the stand-in, of the same kind).
    let stand_in = {
        let f = &module.functions[id];
        Function::new(f.name.clone(), f.kind.clone(), f.sig.clone())
    };
    let mut f = std::mem::replace(&mut module.functions[id], stand_in);
    simplify_function(&mut f, rules(), &|c| pure_callee(module, c), stats);
    module.functions[id] = f;
}

/// Whether every call of `callee` with the same arguments computes the same, with no effect:
/// forward code and user declarations do, generated inverses and PGFs read or record θ.
fn pure_callee(module: &Module, callee: FuncId) -> bool {
    matches!(
        module.functions[callee].kind,
        FuncKind::Fn | FuncKind::Inverse { .. } | FuncKind::Pgf { .. }
    )
}

/// The simplifier's rules: built once per process (building them parses their patterns).
fn rules() -> &'static [Rule] {
    static RULES: std::sync::OnceLock<Vec<Rule>> = std::sync::OnceLock::new();
    RULES.get_or_init(exact_simplifications)
}

/// Simplifies a generated function that calls no generated function, as
/// [`simplify_generated`] would: for a dispatch guard, as soon as it is built, so that the
/// reorientation holds each guard at its simplified size (a branchy inverse has thousands). Pass
/// it in `done` to [`simplify_generated_except`] then.
pub fn simplify_alone(f: &mut Function) {
    // Without the module, no callee is known to be pure.
    simplify_function(f, rules(), &|_| false, &mut SimplifyStats::default());
}

/// Step 4 for every generated inverse among `ids`.
fn remove_dead_thetas(module: &mut Module, ids: &[FuncId], stats: &mut SimplifyStats) {
    // The PGF functions of each inverted function: its PGF, and the PGF's helpers where it
    // has one function per block.
    let mut pgfs: HashMap<String, Vec<FuncId>> = HashMap::new();
    for (id, f) in module.iter() {
        if let FuncKind::GeneratedPgf { of } = &f.kind {
            pgfs.entry(of.clone()).or_default().push(id);
        }
    }
    for &id in ids {
        let FuncKind::GeneratedInverse { of } = &module.functions[id].kind else {
            continue;
        };
        let pgf = pgfs.get(of).map_or(&[][..], |p| &p[..]);
        stats.dead_thetas += dead_thetas(module, id, pgf);
    }
}

/// Whether some θ read of `f` has a value nothing uses.
fn reads_unused_theta(f: &Function) -> bool {
    let mut used = vec![false; f.values.len()];
    for (_, i) in f.insts_in_layout() {
        f.insts[i].kind.for_each_arg(|v| {
            if let Some(u) = used.get_mut(v.as_u32() as usize) {
                *u = true;
            }
        });
    }
    f.insts_in_layout().any(|(_, i)| {
        let data = &f.insts[i];
        matches!(data.kind, InstKind::Theta(_) | InstKind::Choice { .. })
            && data
                .results
                .first()
                .is_some_and(|r| !used.get(r.as_u32() as usize).copied().unwrap_or(true))
    })
}

fn count(f: &Function) -> usize {
    f.layout.iter().map(|&b| f.blocks[b].insts.len()).sum()
}

/// Whether an instruction is pure and can be rebuilt from an e-graph.
fn pure(kind: &InstKind) -> bool {
    match kind {
        InstKind::Const(_) => true,
        InstKind::Prim { op, .. } => !op.can_trap(),
        _ => false,
    }
}

/// Simplifies one function in place (see the module docs, steps 1–3).
/// Folds statement `i` on constants: a `check` of true is dropped (returns true: skip it), a
/// `brif` on a constant becomes a `jump`.
fn fold_statement(
    f: &mut Function,
    i: Inst,
    konst: &dyn Fn(Value) -> Option<Const>,
    stats: &mut SimplifyStats,
) -> bool {
    match &f.insts[i].kind {
        InstKind::Check { cond, .. } if konst(*cond) == Some(Const::Bool(true)) => {
            stats.checks_removed += 1;
            true
        }
        InstKind::Brif {
            cond,
            then_dest,
            else_dest,
        } => {
            if let Some(Const::Bool(c)) = konst(*cond) {
                let dest = if c {
                    then_dest.clone()
                } else {
                    else_dest.clone()
                };
                f.insts[i].kind = InstKind::Jump { dest: *dest };
                stats.branches_folded += 1;
            }
            false
        }
        _ => false,
    }
}

/// Simplifies one function in place (steps 1–3 of the module docs). Calls of callees for which
/// `pure_call` holds may be merged with an equal call that dominates them; others (a generated
/// inverse reads θ, a PGF records it) are each kept.
pub fn simplify_function(
    f: &mut Function,
    rules: &[Rule],
    pure_call: &dyn Fn(FuncId) -> bool,
    stats: &mut SimplifyStats,
) {
    // Compacted once, at the end.
    pinv_core::ir::merge_blocks::merge_blocks_keep_ids(f);
    // Loop invariants carried round as parameters become the values they are, for the
    // per-block rules to fold (a scan's flag that is never set, a bound that never moves).
    pinv_core::ir::trivial_params::remove_trivial_params(f, &mut Vec::new());
    rewrite_blocks(f, rules, None, stats);
    fold_on_constants(f, stats);
    f.remove_unreachable_blocks();
    pinv_core::ir::merge_blocks::merge_blocks_keep_ids(f);
    // Checks and branches the path already decided (a step's precision check on the path
    // whose branch tested it); CSE then merges what the checks it copied recompute.
    let implied = remove_implied_checks(f, ImpliedConfig::default());
    stats.checks_removed += implied.checks_removed;
    stats.branches_folded += implied.branches_folded;
    // Edges past blocks that only pass values on (after the implied checks, which sink check
    // bundles through such blocks); a block one edge now enters may merge.
    let threaded = pinv_core::ir::thread_jumps::thread_jumps(f);
    if implied.branches_folded > 0 || threaded > 0 {
        pinv_core::ir::merge_blocks::merge_blocks_keep_ids(f);
        // Threading takes the forwarding blocks out of the way of a loop's latch, which may
        // now pass an invariant straight back; the rules then fold what it made constant,
        // which can leave another parameter passing itself back (a flag or'ed with what is now
        // `false`). A few rounds: each is linear, and later ones rarely find anything.
        for _ in 0..TRIVIAL_PARAM_ROUNDS {
            let mut touched = Vec::new();
            if pinv_core::ir::trivial_params::remove_trivial_params(f, &mut touched) == 0 {
                break;
            }
            rewrite_blocks(f, rules, Some(&touched), stats);
            fold_on_constants(f, stats);
            f.remove_unreachable_blocks();
            pinv_core::ir::merge_blocks::merge_blocks_keep_ids(f);
        }
    }
    hoist_constants(f);
    pinv_core::ir::cse::cse_keep_ids_where(f, pure_call);
    dce(f);
    f.compact();
}

/// How many times [`simplify_function`] alternates removing trivial block parameters with the
/// rules that fold what they leave.
const TRIVIAL_PARAM_ROUNDS: usize = 3;

/// Step 1 (the rules, block by block: every block, or those in `only`), then every use of a
/// value a block's rewrite replaced made to use its replacement.
fn rewrite_blocks(
    f: &mut Function,
    rules: &[Rule],
    only: Option<&[Block]>,
    stats: &mut SimplifyStats,
) {
    // Blocks using each value, to know what is live out of its block.
    let mut used_in = UsedIn(vec![Uses::None; f.values.len()]);
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            f.insts[i].kind.for_each_arg(|v| used_in.add(v, b));
        }
    }
    let index = RuleIndex::of(rules);
    let mut replace: FxHashMap<Value, Value> = FxHashMap::default();
    let blocks = only.map_or_else(|| f.layout.clone(), <[Block]>::to_vec);
    for b in blocks {
        simplify_block(f, b, &used_in, rules, &index, &mut replace, stats);
    }
    if !replace.is_empty() {
        // A block's live-out value can be replaced by a value of an earlier block that was
        // itself replaced (`v5 = v3 · 1.0` there, `v59 = v5 / 1.0` here): follow the chain.
        // Each step goes to a value defined earlier, so a chain is at most as long as the map.
        let resolve = |mut v: Value| {
            for _ in 0..replace.len() {
                match replace.get(&v) {
                    Some(&next) => v = next,
                    None => break,
                }
            }
            v
        };
        for b in f.layout.clone() {
            for i in f.blocks[b].insts.clone() {
                f.insts[i].kind.map_args(resolve);
            }
        }
    }
}

/// Step 2 for statements whose condition is a constant defined in another block (such as a
/// guard's answer, once [`fold_constant_callees`] made it one), which the per-block pass, seeing
/// only its own block's values, leaves.
fn fold_on_constants(f: &mut Function, stats: &mut SimplifyStats) {
    for b in f.layout.clone() {
        let insts = f.blocks[b].insts.clone();
        let mut kept = Vec::with_capacity(insts.len());
        for i in insts {
            let cond = match &f.insts[i].kind {
                InstKind::Check { cond, .. } | InstKind::Brif { cond, .. } => Some(*cond),
                _ => None,
            };
            let k = cond.and_then(|c| f.constant(c));
            if k.is_none() || !fold_statement(f, i, &|_| k, stats) {
                kept.push(i);
            }
        }
        f.blocks[b].insts = kept;
    }
}

/// Which blocks use a value: none, one, or several.
#[derive(Clone, Copy)]
enum Uses {
    None,
    One(Block),
    Several,
}

/// The blocks that use each value (by value index).
struct UsedIn(Vec<Uses>);

impl UsedIn {
    fn add(&mut self, v: Value, b: Block) {
        if let Some(u) = self.0.get_mut(v.as_u32() as usize) {
            *u = match *u {
                Uses::None => Uses::One(b),
                Uses::One(x) if x == b => Uses::One(x),
                _ => Uses::Several,
            };
        }
    }

    /// Whether `v` is used in a block other than `b`.
    fn outside(&self, v: Value, b: Block) -> bool {
        match self.0.get(v.as_u32() as usize) {
            Some(Uses::One(x)) => *x != b,
            Some(Uses::Several) => true,
            _ => false,
        }
    }
}

/// Moves every constant to the start of the entry block (where it dominates every use), so that
/// CSE keeps one of each.
fn hoist_constants(f: &mut Function) {
    let Some(entry) = f.entry() else {
        return;
    };
    let mut consts = Vec::new();
    for b in f.layout.clone() {
        let insts = &f.insts;
        let (c, rest): (Vec<Inst>, Vec<Inst>) = f.blocks[b]
            .insts
            .iter()
            .partition(|&&i| matches!(insts[i].kind, InstKind::Const(_)));
        consts.extend(c);
        f.blocks[b].insts = rest;
    }
    consts.extend(f.blocks[entry].insts.iter().copied());
    f.blocks[entry].insts = consts;
}

fn simplify_block(
    f: &mut Function,
    b: Block,
    used_in: &UsedIn,
    rules: &[Rule],
    index: &RuleIndex<'_>,
    replace: &mut FxHashMap<Value, Value>,
    stats: &mut SimplifyStats,
) {
    let insts = f.blocks[b].insts.clone();
    if let Some(plain) = Plain::of(f, &insts, index) {
        plain.rebuild(f, b, &insts, used_in, replace, stats);
        return;
    }
    let mut runner: Runner<Node, IsoAnalysis> = Runner::new(IsoAnalysis::default());
    let mut class: HashMap<Value, Id> = HashMap::new();
    let mut leaf_value: HashMap<Symbol, Value> = HashMap::new();
    // Leaves are added lazily.
    let mut leaf = |runner: &mut Runner<Node, IsoAnalysis>, f: &Function, v: Value| {
        let s = Symbol::from(format!("{v}").as_str());
        let info = VarInfo {
            ty: f.value_type(v),
            kind: VarKind::Pivot,
        };
        runner.egraph.analysis.vars.insert(s, info);
        leaf_value.insert(s, v);
        runner.egraph.add(Node::Var(s))
    };
    let mut pure_values: Vec<Value> = Vec::new();
    for &i in &insts {
        let data = &f.insts[i];
        if !pure(&data.kind) {
            continue;
        }
        let node = match &data.kind {
            InstKind::Const(c) => Node::num(*c),
            InstKind::Prim { op, args } => {
                let ids: Vec<Id> = args
                    .iter()
                    .map(|&a| match (class.get(&a), f.constant(a)) {
                        (Some(&c), _) => c,
                        (None, Some(c)) => runner.egraph.add(Node::num(c)),
                        (None, None) => leaf(&mut runner, f, a),
                    })
                    .collect();
                Node::op(*op, &ids)
            }
            _ => unreachable!(),
        };
        let r = data.results[0];
        let id = runner.egraph.add(node);
        class.insert(r, id);
        pure_values.push(r);
    }
    if pure_values.is_empty() {
        return;
    }
    runner.egraph.rebuild();
    let runner = runner
        .with_iter_limit(8)
        .with_node_limit(4 * pure_values.len() + 64)
        .with_time_limit(std::time::Duration::from_millis(50))
        .run(rules);
    let egraph = &runner.egraph;
    let vars = egraph.analysis.vars.clone();
    let extractor = Extractor::new(
        egraph,
        IsoCost {
            vars: &vars,
            zeros: None,
        },
    );

    // Rebuild: statements in order, pure values on demand.
    f.blocks[b].insts.clear();
    let mut rebuild = Rebuild {
        block: b,
        egraph,
        extractor: &extractor,
        leaf_value: &leaf_value,
        emitted: HashMap::new(),
    };
    let mut emit = |f: &mut Function, c: Id, span| rebuild.emit(f, c, span);
    let konst = |v: Value| -> Option<Const> {
        class
            .get(&v)
            .and_then(|&c| egraph[egraph.find(c)].data.konst)
    };
    let n = insts.len();
    for (k, &i) in insts.iter().enumerate() {
        let is_last = k + 1 == n;
        if pure(&f.insts[i].kind) {
            continue;
        }
        if is_last {
            // Live-out pure values go before the terminator.
            for &v in &pure_values {
                if used_in.outside(v, b) {
                    let span = f.insts[i].span;
                    let nv = emit(f, class[&v], span);
                    if nv != v {
                        replace.insert(v, nv);
                    }
                }
            }
        }
        let span = f.insts[i].span;
        if fold_statement(f, i, &konst, stats) {
            continue;
        }
        let mut kind = f.insts[i].kind.clone();
        kind.map_args(|v| match class.get(&v) {
            Some(&c) => emit(f, c, span),
            None => v,
        });
        f.insts[i].kind = kind;
        f.blocks[b].insts.push(i);
    }
}

/// A node of a block without merges: what the e-graph of a block holds when no rule matches
/// and nothing folds (see [`Plain`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PlainNode {
    /// A value of another block, a block parameter or the result of a statement.
    Leaf(Value),
    Num(Const),
    /// An operation and its operands' classes (every opcode takes at most two; the unused
    /// one is 0).
    Op(pinv_core::ir::Opcode, [usize; 2]),
}

/// The fast path of [`simplify_block`]: the e-graph of a block of generated code rarely does
/// more than merge identical nodes, fold constants and collapse a node into one of its operands
/// (`x · 1.0 = x`, `b | b = b`) or into a constant (`b | true = true`). `Plain` does exactly
/// that, bottom-up while hash-consing, so every class keeps one node (its representative): a
/// node whose operands are constants that fold becomes the constant; a node that a rule
/// rewrites into an operand or a constant becomes that class. The e-graph would put the node in
/// that class, where extraction picks the representative anyway (it is a strict subterm, or a
/// constant), and the node's parents merge by congruence, which hash-consing them after the
/// collapse gives. When the e-graph could do anything else — a rule whose right-hand side is
/// not an operand or a constant, two rules disagreeing, a collapsed node whose operation
/// occurs inside some rule's left-hand side (nested patterns could then match through it) —
/// `Plain` gives up and the e-graph runs. It rebuilds the block the way [`Rebuild`] would. The
/// tests `fast_path_gives_what_the_egraph_gives` and `fast_path_on_random_blocks` compare the
/// two, text for text.
struct Plain {
    nodes: Vec<PlainNode>,
    /// Per class, the instruction of the block that made its node, if one did (not an operand
    /// from elsewhere, a fold or a collapse): emitting the class rewrites that instruction and
    /// moves it to its new place instead of creating a new one. The text is the same (only ids
    /// differ, and compacting renumbers them), and the function's arena does not double.
    home: Vec<Option<Inst>>,
    /// The class of each pure value of the block.
    class: ValueClasses,
    pure_values: Vec<Value>,
}

/// The class of each pure value of a block (a small map: a dense table per block would be
/// as large as the function's values).
struct ValueClasses(FxHashMap<Value, usize>);

impl ValueClasses {
    fn get(&self, v: Value) -> Option<usize> {
        self.0.get(&v).copied()
    }

    fn set(&mut self, v: Value, c: usize) {
        self.0.insert(v, c);
    }
}

impl Plain {
    /// The block's classes, or `None` if the e-graph could do more than `Plain` does.
    fn of(f: &Function, insts: &[Inst], index: &RuleIndex<'_>) -> Option<Plain> {
        if !index.usable || !FAST_PATH.with(std::cell::Cell::get) {
            return None;
        }
        let mut plain = Plain {
            nodes: Vec::new(),
            home: Vec::new(),
            class: ValueClasses(FxHashMap::with_capacity_and_hasher(
                insts.len(),
                Default::default(),
            )),
            pure_values: Vec::new(),
        };
        // Node -> class (for a collapsed node, the class it collapsed into).
        let mut memo: FxHashMap<PlainNode, usize> = FxHashMap::default();
        let add = |nodes: &mut Vec<PlainNode>, memo: &mut FxHashMap<PlainNode, usize>, n| {
            *memo.entry(n).or_insert_with_key(|n| {
                nodes.push(n.clone());
                nodes.len() - 1
            })
        };
        let mut bound = Vec::new();
        for &i in insts {
            let data = &f.insts[i];
            if !pure(&data.kind) {
                continue;
            }
            let node = match &data.kind {
                InstKind::Const(c) => PlainNode::Num(*c),
                InstKind::Prim { op, args } => {
                    if args.len() > 2 || args.len() != op.arity() {
                        return None;
                    }
                    let mut ids = [0; 2];
                    for (k, &a) in args.iter().enumerate() {
                        let id = match (plain.class.get(a), f.constant(a)) {
                            (Some(c), _) => c,
                            (None, Some(c)) => add(&mut plain.nodes, &mut memo, PlainNode::Num(c)),
                            (None, None) => add(&mut plain.nodes, &mut memo, PlainNode::Leaf(a)),
                        };
                        ids[k] = id;
                    }
                    PlainNode::Op(*op, ids)
                }
                _ => return None,
            };
            let r = data.results[0];
            if let Some(&c) = memo.get(&node) {
                plain.class.set(r, c);
                plain.pure_values.push(r);
                continue;
            }
            // Constant operands that fold: the analysis makes the class that constant.
            if let PlainNode::Op(op, args) = &node {
                let arity = op.arity();
                let mut consts = [Const::Bool(false); 2];
                let all_const =
                    args[..arity]
                        .iter()
                        .zip(&mut consts)
                        .all(|(&a, k)| match plain.nodes[a] {
                            PlainNode::Num(c) => {
                                *k = c;
                                true
                            }
                            _ => false,
                        });
                let folded = all_const
                    .then(|| super::analysis::fold(*op, &consts[..arity]))
                    .flatten();
                if let Some(k) = folded {
                    let c = add(&mut plain.nodes, &mut memo, PlainNode::Num(k));
                    memo.insert(node, c);
                    plain.class.set(r, c);
                    plain.pure_values.push(r);
                    continue;
                }
            }
            let id = add(&mut plain.nodes, &mut memo, node.clone());
            // The rules that match the new node, and what they make it.
            let candidates = match &node {
                PlainNode::Op(op, _) => index.by_op.get(op),
                PlainNode::Num(_) => Some(&index.num),
                PlainNode::Leaf(_) => None,
            };
            let mut target: Option<usize> = None;
            for rule in candidates.into_iter().flatten() {
                bound.clear();
                if !plain.matches(rule.lhs, rule.lhs.len() - 1, id, &mut bound)? {
                    continue;
                }
                let collapsible = match &node {
                    PlainNode::Op(op, _) => !index.inner_ops.contains(op),
                    _ => false,
                };
                let t = match rule.rhs {
                    Some([egg::ENodeOrVar::Var(v)]) if collapsible => {
                        bound.iter().find(|(w, _)| w == v).map(|&(_, c)| c)?
                    }
                    Some([egg::ENodeOrVar::ENode(Node::Num(k))]) if collapsible => {
                        add(&mut plain.nodes, &mut memo, PlainNode::Num(k.0))
                    }
                    _ => return None,
                };
                if target.is_some_and(|x| x != t) {
                    return None;
                }
                target = Some(t);
            }
            let c = match target {
                Some(t) => {
                    memo.insert(node, t);
                    t
                }
                None => {
                    plain.set_home(id, i);
                    id
                }
            };
            plain.class.set(r, c);
            plain.pure_values.push(r);
        }
        Some(plain)
    }

    fn set_home(&mut self, c: usize, i: Inst) {
        if self.home.len() <= c {
            self.home.resize(c + 1, None);
        }
        self.home[c] = Some(i);
    }

    /// Whether pattern node `p` of `ast` matches class `c` (with the bindings so far); `None`
    /// if the pattern holds something this check does not know.
    fn matches(
        &self,
        ast: &[egg::ENodeOrVar<Node>],
        p: usize,
        c: usize,
        bound: &mut Vec<(egg::Var, usize)>,
    ) -> Option<bool> {
        match ast.get(p)? {
            egg::ENodeOrVar::Var(v) => Some(match bound.iter().find(|(w, _)| w == v) {
                Some(&(_, b)) => b == c,
                None => {
                    bound.push((*v, c));
                    true
                }
            }),
            egg::ENodeOrVar::ENode(Node::Num(n)) => {
                Some(matches!(&self.nodes[c], PlainNode::Num(k) if *k == n.0))
            }
            egg::ENodeOrVar::ENode(Node::Op(op, children)) => {
                let PlainNode::Op(o, args) = &self.nodes[c] else {
                    return Some(false);
                };
                let args = &args[..o.arity()];
                if o != op || args.len() != children.len() {
                    return Some(false);
                }
                for (&pc, &a) in children.iter().zip(args.iter()) {
                    if !self.matches(ast, usize::from(pc), a, bound)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            egg::ENodeOrVar::ENode(_) => None,
        }
    }

    /// Rebuilds the block as `simplify_block` does after the e-graph (same order, same
    /// instructions): statements in order, each class emitted once right before its first use,
    /// live-out values before the terminator, checks of `true` removed, branches on constants
    /// folded.
    fn rebuild(
        &self,
        f: &mut Function,
        b: Block,
        insts: &[Inst],
        used_in: &UsedIn,
        replace: &mut FxHashMap<Value, Value>,
        stats: &mut SimplifyStats,
    ) {
        if self.pure_values.is_empty() {
            return;
        }
        f.blocks[b].insts.clear();
        let mut emitted: Vec<Option<Value>> = vec![None; self.nodes.len()];
        let konst = |v: Value| -> Option<Const> {
            match self.class.get(v).map(|c| &self.nodes[c]) {
                Some(PlainNode::Num(c)) => Some(*c),
                _ => None,
            }
        };
        let n = insts.len();
        for (k, &i) in insts.iter().enumerate() {
            let is_last = k + 1 == n;
            if pure(&f.insts[i].kind) {
                continue;
            }
            if is_last {
                for &v in &self.pure_values {
                    if used_in.outside(v, b) {
                        let span = f.insts[i].span;
                        let Some(c) = self.class.get(v) else {
                            continue;
                        };
                        let nv = self.emit(f, b, &mut emitted, c, span);
                        if nv != v {
                            replace.insert(v, nv);
                        }
                    }
                }
            }
            let span = f.insts[i].span;
            if fold_statement(f, i, &konst, stats) {
                continue;
            }
            // Taken out while its operands are emitted (emission adds instructions to `f`).
            let mut kind =
                std::mem::replace(&mut f.insts[i].kind, InstKind::Const(Const::Bool(false)));
            kind.map_args(|v| match self.class.get(v) {
                Some(c) => self.emit(f, b, &mut emitted, c, span),
                None => v,
            });
            f.insts[i].kind = kind;
            f.blocks[b].insts.push(i);
        }
    }

    fn emit(
        &self,
        f: &mut Function,
        b: Block,
        emitted: &mut [Option<Value>],
        root: usize,
        span: pinv_core::Span,
    ) -> Value {
        // Operands first, left to right, each class once: a depth-first walk with a work list
        // (a chain of a hundred thousand steps in one block is that deep).
        let mut work = vec![(root, false)];
        while let Some((c, ready)) = work.pop() {
            if emitted[c].is_some() {
                continue;
            }
            if let (PlainNode::Op(op, args), false) = (&self.nodes[c], ready) {
                work.push((c, true));
                work.extend(args[..op.arity()].iter().rev().map(|&a| (a, false)));
                continue;
            }
            let home = self.home.get(c).copied().flatten();
            let v = match (&self.nodes[c], home) {
                (PlainNode::Leaf(v), _) => *v,
                (PlainNode::Num(_), Some(h)) => f.reinsert_inst(b, h, None, span),
                (PlainNode::Num(k), None) => f.ins_const(b, *k, span),
                (PlainNode::Op(op, args), home) => {
                    let args: ValueList = args[..op.arity()]
                        .iter()
                        .map(|&a| emitted[a].expect("operands are emitted first"))
                        .collect();
                    match home {
                        Some(h) => {
                            let kind = InstKind::Prim { op: *op, args };
                            f.reinsert_inst(b, h, Some(kind), span)
                        }
                        None => f.ins_prim(b, *op, args, span),
                    }
                }
            };
            emitted[c] = Some(v);
        }
        emitted[root].expect("the root is emitted")
    }
}

/// A rule as [`Plain`] sees it: its left-hand side, and its right-hand side when that is
/// a pattern tree.
struct IndexedRule<'r> {
    lhs: &'r [egg::ENodeOrVar<Node>],
    rhs: Option<&'r [egg::ENodeOrVar<Node>]>,
}

/// The rules by the operation at the root of their left-hand side, for [`Plain`].
struct RuleIndex<'r> {
    by_op: FxHashMap<pinv_core::ir::Opcode, Vec<IndexedRule<'r>>>,
    num: Vec<IndexedRule<'r>>,
    /// Operations that occur inside some left-hand side (not at its root): a node of one of
    /// them must not be collapsed by `Plain`, or a nested pattern could match through it.
    inner_ops: std::collections::HashSet<pinv_core::ir::Opcode>,
    /// False if some rule's left-hand side is not a pattern of constants and operations (then
    /// every block goes through the e-graph).
    usable: bool,
}

impl<'r> RuleIndex<'r> {
    fn of(rules: &'r [Rule]) -> RuleIndex<'r> {
        let mut index = RuleIndex {
            by_op: FxHashMap::default(),
            num: Vec::new(),
            inner_ops: std::collections::HashSet::new(),
            usable: true,
        };
        for rule in rules {
            let Some(ast) = rule.searcher.get_pattern_ast() else {
                index.usable = false;
                continue;
            };
            let lhs: &[egg::ENodeOrVar<Node>] = ast.as_ref();
            let rhs = rule.applier.get_pattern_ast().map(|a| a.as_ref());
            for n in lhs.iter().take(lhs.len().saturating_sub(1)) {
                if let egg::ENodeOrVar::ENode(Node::Op(op, _)) = n {
                    index.inner_ops.insert(*op);
                }
            }
            let indexed = IndexedRule { lhs, rhs };
            match lhs.last() {
                Some(egg::ENodeOrVar::ENode(Node::Op(op, _))) => {
                    index.by_op.entry(*op).or_default().push(indexed)
                }
                Some(egg::ENodeOrVar::ENode(Node::Num(_))) => index.num.push(indexed),
                _ => index.usable = false,
            }
        }
        index
    }
}

thread_local! {
    /// Whether [`Plain`] may be used (tests turn it off to compare with the e-graph).
    static FAST_PATH: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Emits the best term of e-classes into a block, each class once.
struct Rebuild<'a, 'e> {
    block: Block,
    egraph: &'a egg::EGraph<Node, IsoAnalysis>,
    extractor: &'e Extractor<'a, IsoCost<'a>, Node, IsoAnalysis>,
    leaf_value: &'e HashMap<Symbol, Value>,
    emitted: HashMap<Id, Value>,
}

impl Rebuild<'_, '_> {
    fn emit(&mut self, f: &mut Function, root: Id, span: pinv_core::Span) -> Value {
        // Operands first, left to right, each class once, with a work list (see `Plain::emit`).
        let root = self.egraph.find(root);
        let mut work = vec![(root, false)];
        while let Some((c, ready)) = work.pop() {
            let c = self.egraph.find(c);
            if self.emitted.contains_key(&c) {
                continue;
            }
            let node = self.extractor.find_best_node(c).clone();
            if let (Node::Op(_, args), false) = (&node, ready) {
                work.push((c, true));
                work.extend(args.iter().rev().map(|&a| (a, false)));
                continue;
            }
            let v = match &node {
                Node::Var(s) => self.leaf_value[s],
                Node::Num(n) => f.ins_const(self.block, n.0, span),
                Node::Op(op, args) => {
                    let args: ValueList = args
                        .iter()
                        .map(|&a| self.emitted[&self.egraph.find(a)])
                        .collect();
                    f.ins_prim(self.block, *op, args, span)
                }
                _ => unreachable!("only constants and primitives are simplified"),
            };
            self.emitted.insert(c, v);
        }
        self.emitted[&root]
    }
}

/// Removes pure instructions whose results are unused, until none is left.
fn dce(f: &mut Function) {
    loop {
        let mut used = vec![false; f.values.len()];
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                f.insts[i].kind.for_each_arg(|v| {
                    if let Some(u) = used.get_mut(v.as_u32() as usize) {
                        *u = true;
                    }
                });
            }
        }
        let is_used = |v: Value| used.get(v.as_u32() as usize).copied().unwrap_or(true);
        let mut removed = false;
        for b in f.layout.clone() {
            let before = f.blocks[b].insts.len();
            let insts = &f.insts;
            f.blocks[b].insts.retain(|&i| {
                !(pure(&insts[i].kind) && insts[i].results.iter().all(|&r| !is_used(r)))
            });
            removed |= f.blocks[b].insts.len() != before;
        }
        if !removed {
            return;
        }
    }
}

/// The (role, span start, span end) of a θ read or record.
type Key = (String, u32, u32);

fn key_of(f: &Function, i: Inst) -> Option<Key> {
    let data = &f.insts[i];
    match &data.kind {
        InstKind::Theta(read) => Some((read.role.clone(), data.span.start, data.span.end)),
        InstKind::Choice { role, .. } | InstKind::Record { role, .. } => {
            Some((role.clone(), data.span.start, data.span.end))
        }
        _ => None,
    }
}

/// Removes unused θ reads of inverse `inv`, each with the matching record of its PGF, whose
/// functions are `pgf` (see the module docs, step 4; none: the inverse has no PGF). Returns
/// how many reads were removed.
pub fn dead_thetas(module: &mut Module, inv: FuncId, pgf: &[FuncId]) -> usize {
    let mut removed = 0;
    loop {
        let f = &module.functions[inv];
        // Most inverses read no θ they do not use: then there is nothing to pair up.
        if !reads_unused_theta(f) {
            return removed;
        }
        let mut used: HashSet<Value> = HashSet::new();
        let mut keys: HashMap<Key, usize> = HashMap::new();
        for (_, i) in f.insts_in_layout() {
            f.insts[i].kind.for_each_arg(|v| {
                used.insert(v);
            });
            if let Some(k) = key_of(f, i) {
                *keys.entry(k).or_default() += 1;
            }
        }
        let mut records: HashMap<Key, Vec<(FuncId, Block, Inst)>> = HashMap::new();
        for &p in pgf {
            let g = &module.functions[p];
            for (b, i) in g.insts_in_layout() {
                if let Some(k) = key_of(g, i) {
                    records.entry(k).or_default().push((p, b, i));
                }
            }
        }
        let dead: Option<(Block, Inst, Key)> = f.insts_in_layout().find_map(|(b, i)| {
            let data = &f.insts[i];
            let read = matches!(data.kind, InstKind::Theta(_) | InstKind::Choice { .. });
            if !read || used.contains(&data.results[0]) {
                return None;
            }
            let k = key_of(f, i)?;
            let unique = keys.get(&k) == Some(&1);
            let paired = pgf.is_empty() || records.get(&k).is_some_and(|r| r.len() == 1);
            (unique && paired).then_some((b, i, k))
        });
        let Some((b, i, k)) = dead else {
            return removed;
        };
        module.functions[inv].blocks[b].insts.retain(|&x| x != i);
        if let Some(&(p, rb, ri)) = records.get(&k).and_then(|r| r.first()) {
            let g = &mut module.functions[p];
            g.blocks[rb].insts.retain(|&x| x != ri);
            dce(g);
            g.compact();
        }
        dce(&mut module.functions[inv]);
        module.functions[inv].compact();
        removed += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::ir::parse_module;

    const PAIR: &str = "function %f(x: f64) -> f64 {
block0(v0: f64):
    return v0
}

function %f.inv(y: f64) -> f64 generated_inverse(f) {
block0(v0: f64):
    v1 = theta real \"used\" @1..2
    v2 = theta real \"unused\" @3..4
    v3 = fadd v0, v1
    v4 = fconst 1.0
    v5 = fmul v3, v4
    v6 = feq v5, v5
    v7 = fne v5, v5
    v8 = bor v6, v7
    check v8, \"always\"
    return v5
}

function %f.pgf(x: f64) -> () generated_pgf(f) {
block0(v0: f64):
    v1 = fconst 2.0
    record v1, \"used\" @1..2
    v2 = fmul v0, v1
    record v2, \"unused\" @3..4
    return
}
";

    /// Two calls of a PGF with the same arguments record θ twice, and two calls of an inverse
    /// read it twice: neither is merged into the other, as calls of a forward function are
    /// (`gen_check` seed 251, where removing trivial parameters made the arguments of a PGF's
    /// calls of `g0.pgf` equal, and the inverse then read a tape with records missing).
    #[test]
    fn calls_that_read_or_record_theta_are_not_merged() {
        let text = "function %g(x: f64) -> f64 {
block0(v0: f64):
    return v0
}

function %g.inv(y: f64) -> f64 generated_inverse(g) {
block0(v0: f64):
    v1 = theta real \"x\" @1..2
    return v1
}

function %g.pgf(x: f64) -> () generated_pgf(g) {
block0(v0: f64):
    record v0, \"x\" @1..2
    return
}

function %f.inv(y: f64) -> f64 generated_inverse(f) {
block0(v0: f64):
    v1 = call %g.inv(v0)
    v2 = call %g.inv(v0)
    v3 = call %g(v0)
    v4 = call %g(v0)
    v5 = fadd v1, v2
    v6 = fadd v3, v4
    v7 = fadd v5, v6
    return v7
}

function %f.pgf(x: f64) -> () generated_pgf(f) {
block0(v0: f64):
    v1 = fconst 1.0
    v2 = fgt v0, v1
    call %g.pgf(v0)
    brif v2, block1, block2
block1:
    call %g.pgf(v0)
    return
block2:
    return
}
";
        let mut m = parse_module(text).expect("parses");
        simplify_generated(&mut m, Deadline::none());
        pinv_core::ir::verify::verify_module(&m).expect("verifies");
        let out = pinv_core::ir::write_module(&m, &Default::default());
        assert_eq!(out.matches("call %g.inv(").count(), 2, "{out}");
        assert_eq!(out.matches("call %g.pgf(").count(), 2, "{out}");
        assert_eq!(
            out.matches("call %g(").count(),
            1,
            "a forward call is merged: {out}"
        );
    }

    /// A live-out value replaced by one of an earlier block that was itself replaced (`v3 =
    /// v0 · 1` in block0, `v4 = v3 / 1` in block1, both used further on) ends at the first
    /// value of the chain; following one step left `v4`'s uses reading the dropped `v3`.
    #[test]
    fn chains_of_replacements_are_followed() {
        let text = "function %g(x: f64, c: bool) -> f64 {
block0(v0: f64, v1: bool):
    v2 = fconst 1.0
    v3 = fmul v0, v2
    brif v1, block1, block2
block1:
    v4 = fdiv v3, v2
    brif v1, block3, block4
block2:
    return v0
block3:
    v5 = fadd v4, v4
    return v5
block4:
    return v4
}
";
        for fast in [true, false] {
            FAST_PATH.with(|c| c.set(fast));
            let mut m = parse_module(text).expect("parses");
            let id = m.get("g").expect("g");
            let mut stats = SimplifyStats::default();
            simplify_function(
                &mut m.functions[id],
                &exact_simplifications(),
                &|_| true,
                &mut stats,
            );
            FAST_PATH.with(|c| c.set(true));
            pinv_core::ir::verify::verify_function(&m, id).expect("valid after simplifying");
            let out = pinv_core::ir::write_function(&m, id, &Default::default());
            assert!(
                out.contains("fadd v0, v0") && out.contains("return v0"),
                "{out}"
            );
        }
    }

    /// The fast path ([`Plain`]) gives, block for block, what the e-graph gives: the same
    /// simplified inverse and PGF, text for text, for every function of the corpus.
    #[test]
    fn fast_path_gives_what_the_egraph_gives() {
        let mut compared = 0;
        for (name, program) in crate::test_corpus::programs() {
            let mut options = crate::reorient::ReorientOptions::default();
            options.isolation.simplify = false;
            for (id, f) in program.module().iter() {
                if f.kind != FuncKind::Fn {
                    continue;
                }
                let Ok(inv) =
                    crate::reorient::reorient(program.module(), id, &program.stack(), &options)
                else {
                    continue;
                };
                let run = |fast: bool| {
                    FAST_PATH.with(|c| c.set(fast));
                    let mut m = inv.module.clone();
                    let stats = simplify_generated(&mut m, Deadline::none());
                    FAST_PATH.with(|c| c.set(true));
                    (pinv_core::ir::write_module(&m, &Default::default()), stats)
                };
                let (with, without) = (run(true), run(false));
                assert_eq!(with.1, without.1, "{name}: {}", f.name);
                assert_eq!(with.0, without.0, "{name}: {}", f.name);
                compared += 1;
            }
        }
        assert!(compared > 20, "only {compared} functions compared");
    }

    /// Deferring the PGFs' simplification and finishing them later gives the module that
    /// simplifying everything at once gives, text for text, for every function of the corpus
    /// (from the same unsimplified reorientation: the reorientation itself may number blocks
    /// differently from run to run); and the inverse is final before that.
    #[test]
    fn deferred_pgfs_finish_as_simplifying_everything() {
        let (mut deferred_some, mut compared) = (0, 0);
        for (name, program) in crate::test_corpus::programs() {
            let mut options = crate::reorient::ReorientOptions::default();
            options.isolation.simplify = false;
            for (id, f) in program.module().iter() {
                if f.kind != FuncKind::Fn {
                    continue;
                }
                let stack = program.stack();
                let Ok(raw) = crate::reorient::reorient(program.module(), id, &stack, &options)
                else {
                    continue;
                };
                // What the reorientation does after simplifying.
                let merge = |m: &mut Module, skip: &[FuncId]| {
                    for id in generated(m) {
                        if !skip.contains(&id) {
                            let f = &mut m.functions[id];
                            pinv_core::ir::merge_blocks::merge_blocks(f);
                            f.compact();
                        }
                    }
                };
                let mut eager = raw.module.clone();
                simplify_generated(&mut eager, Deadline::none());
                merge(&mut eager, &[]);
                let mut lazy = raw.module.clone();
                let pgfs = simplify_generated_deferring_pgfs(
                    &mut lazy,
                    Deadline::none(),
                    &HashSet::new(),
                    true,
                )
                .expect("built PGFs can always be finished");
                merge(&mut lazy, &pgfs);
                let write = |m: &Module, id: FuncId| {
                    pinv_core::ir::write_function(m, id, &Default::default())
                };
                assert_eq!(
                    write(&lazy, raw.inverse),
                    write(&eager, raw.inverse),
                    "{name}: {}",
                    f.name
                );
                deferred_some += usize::from(!pgfs.is_empty());
                let unfinished = lazy.clone();
                crate::reorient::finish_deferred_pgfs(&unfinished, &mut lazy, &pgfs);
                assert_eq!(
                    pinv_core::ir::write_module(&lazy, &Default::default()),
                    pinv_core::ir::write_module(&eager, &Default::default()),
                    "{name}: {}",
                    f.name
                );
                compared += 1;
            }
        }
        assert!(
            compared > 20 && deferred_some > 10,
            "{compared} {deferred_some}"
        );
    }

    /// A random generated inverse: one block of pure operations over parameters and the
    /// constants the rules care about (so that rules fire, alone and together, and constants
    /// fold), checks of some of its bools, and a branch to two returns.
    fn random_inverse(seed: u64) -> Module {
        use pinv_core::ir::{BlockCall, Opcode, Signature, Type};
        use pinv_core::Span;
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n.max(1) as u64) as usize
        };
        let sig = Signature {
            params: vec![Type::F64, Type::F64, Type::I64, Type::Bool],
            returns: vec![Type::F64, Type::I64, Type::Bool],
        };
        let kind = FuncKind::GeneratedInverse { of: "f".into() };
        let mut f = Function::new(kind.symbol("f"), kind, sig);
        let entry = f.create_entry();
        let sp = Span::default();
        let mut vals: Vec<Value> = f.blocks[entry].params.clone();
        let consts = [
            Const::F64(0.0),
            Const::F64(-0.0),
            Const::F64(1.0),
            Const::F64(2.5),
            Const::F64(f64::NAN),
            Const::I64(0),
            Const::I64(1),
            Const::I64(-3),
            Const::Bool(true),
            Const::Bool(false),
        ];
        let ops: Vec<Opcode> = Opcode::ALL
            .iter()
            .copied()
            .filter(|op| !op.can_trap() && op.arity() <= 2)
            .collect();
        let n = 4 + next(40);
        for _ in 0..n {
            if next(4) == 0 {
                let c = consts[next(consts.len())];
                vals.push(f.ins_const(entry, c, sp));
                continue;
            }
            let op = ops[next(ops.len())];
            let mut args = Vec::new();
            for &ty in op.arg_types() {
                let of_ty: Vec<Value> = vals
                    .iter()
                    .copied()
                    .filter(|&v| f.value_type(v) == ty)
                    .collect();
                let v = if of_ty.is_empty() || next(3) == 0 {
                    let cs: Vec<Const> = consts.iter().copied().filter(|c| c.ty() == ty).collect();
                    f.ins_const(entry, cs[next(cs.len())], sp)
                } else {
                    of_ty[next(of_ty.len())]
                };
                args.push(v);
            }
            vals.push(f.ins_prim(entry, op, args, sp));
        }
        let pick = |f: &Function, ty: Type, k: usize| {
            let of_ty: Vec<Value> = vals
                .iter()
                .copied()
                .filter(|&v| f.value_type(v) == ty)
                .collect();
            of_ty[k % of_ty.len()]
        };
        for _ in 0..next(3) {
            let cond = pick(&f, Type::Bool, next(100));
            f.ins_void(
                entry,
                InstKind::Check {
                    cond,
                    reason: "r".into(),
                },
                sp,
            );
        }
        let (b1, b2) = (f.create_block(), f.create_block());
        let cond = pick(&f, Type::Bool, next(100));
        let rets = |f: &Function, k: usize| {
            vec![
                pick(f, Type::F64, k),
                pick(f, Type::I64, k + 1),
                pick(f, Type::Bool, k + 2),
            ]
        };
        let (r1, r2) = (rets(&f, next(100)), rets(&f, next(100)));
        f.ins_void(
            entry,
            InstKind::Brif {
                cond,
                then_dest: Box::new(BlockCall::new(b1, vec![])),
                else_dest: Box::new(BlockCall::new(b2, vec![])),
            },
            sp,
        );
        f.ins_return(b1, r1, sp);
        f.ins_return(b2, r2, sp);
        let mut m = Module::new();
        m.add(f).expect("adds");
        m
    }

    /// The fast path gives what the e-graph gives on random blocks full of rule matches,
    /// foldable constants and repeated expressions.
    #[test]
    fn fast_path_on_random_blocks() {
        let mut plain_blocks = 0;
        for seed in 0..3000 {
            let m = random_inverse(seed);
            let run = |fast: bool| {
                FAST_PATH.with(|c| c.set(fast));
                let mut m = m.clone();
                let stats = simplify_generated(&mut m, Deadline::none());
                FAST_PATH.with(|c| c.set(true));
                (pinv_core::ir::write_module(&m, &Default::default()), stats)
            };
            let (with, without) = (run(true), run(false));
            assert_eq!(with.1, without.1, "seed {seed}");
            assert_eq!(with.0, without.0, "seed {seed}");
            let f = &m.functions.values().next().expect("one function");
            let rules = exact_simplifications();
            let index = RuleIndex::of(&rules);
            let entry = f.entry().expect("entry");
            plain_blocks += usize::from(Plain::of(f, &f.blocks[entry].insts, &index).is_some());
        }
        assert!(
            plain_blocks > 1000,
            "the fast path took only {plain_blocks} blocks"
        );
    }

    /// A block whose values form one chain as long as the block (a PGF replaying a
    /// 100,000-statement chain) is rebuilt with work lists, not recursion: on a test thread's
    /// stack a recursive rebuild overflowed at a few thousand steps.
    #[test]
    fn a_block_as_deep_as_it_is_long_is_rebuilt_without_recursion() {
        for (fast, steps) in [(true, 20_000), (false, 5_000)] {
            deep_chain(fast, steps);
        }
    }

    fn deep_chain(fast: bool, steps: usize) {
        let mut text = String::from(
            "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    return v0\n}\n\n\
             function %f.inv(y: f64) -> f64 generated_inverse(f) {\nblock0(v0: f64):\n    \
             v1 = fconst 0.5\n",
        );
        for i in 0..steps {
            let operand = if i == 0 { 0 } else { i + 1 };
            text.push_str(&format!("    v{} = fadd v{operand}, v1\n", i + 2));
        }
        text.push_str(&format!("    return v{}\n}}\n", steps + 1));
        FAST_PATH.with(|c| c.set(fast));
        let mut m = parse_module(&text).expect("parses");
        simplify_generated(&mut m, Deadline::none());
        FAST_PATH.with(|c| c.set(true));
        pinv_core::ir::verify::verify_module(&m).expect("verifies");
        let inv = m.get("f.inv").expect("the inverse");
        let adds = m.functions[inv]
            .insts
            .values()
            .filter(|d| {
                matches!(
                    d.kind,
                    InstKind::Prim {
                        op: pinv_core::ir::Opcode::Fadd,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(adds, steps, "fast path {fast}");
    }

    #[test]
    fn dead_theta_goes_with_its_record() {
        let mut m = parse_module(PAIR).expect("parses");
        let stats = simplify_generated(&mut m, Deadline::none());
        pinv_core::ir::verify::verify_module(&m).expect("verifies");
        let text = pinv_core::ir::write_module(&m, &Default::default());
        assert_eq!(stats.dead_thetas, 1, "{text}");
        assert_eq!(stats.checks_removed, 1, "{text}");
        assert!(!text.contains("unused"), "{text}");
        assert_eq!(text.matches("\"used\"").count(), 2, "{text}");
        assert!(
            !text.contains("fmul"),
            "x·1 and the dead record's value are gone: {text}"
        );
    }

    /// With a θ read to remove together with its record, the PGF cannot wait: it is
    /// simplified at once, as `simplify_generated` does.
    #[test]
    fn dead_theta_reads_are_not_deferred() {
        let eager = {
            let mut m = parse_module(PAIR).expect("parses");
            simplify_generated(&mut m, Deadline::none());
            pinv_core::ir::write_module(&m, &Default::default())
        };
        let defer = |m: &mut Module, pgfs_built: bool| {
            simplify_generated_deferring_pgfs(m, Deadline::none(), &HashSet::new(), pgfs_built)
        };
        let mut m = parse_module(PAIR).expect("parses");
        assert_eq!(defer(&mut m, true), Some(Vec::new()));
        assert_eq!(pinv_core::ir::write_module(&m, &Default::default()), eager);
        // A PGF without its code yet (`lazy_pgf`) cannot finish the inverse: the caller is told.
        let mut m = parse_module(PAIR).expect("parses");
        assert_eq!(defer(&mut m, false), None);
        // Without the dead read, the PGF waits, built or not.
        let used = PAIR.replace("    return v5\n}", "    v9 = fadd v5, v2\n    return v9\n}");
        for built in [true, false] {
            let mut m = parse_module(&used).expect("parses");
            assert_eq!(defer(&mut m, built).map(|p| p.len()), Some(1));
        }
    }

    #[test]
    fn ambiguous_records_keep_the_read() {
        // Two records with the same role and span: which one is the read's is not certain.
        let text = PAIR.replace(
            "    return\n}",
            "    record v2, \"unused\" @3..4\n    return\n}",
        );
        let mut m = parse_module(&text).expect("parses");
        let stats = simplify_generated(&mut m, Deadline::none());
        assert_eq!(stats.dead_thetas, 0);
        let out = pinv_core::ir::write_module(&m, &Default::default());
        assert_eq!(out.matches("\"unused\"").count(), 3, "{out}");
    }
}
