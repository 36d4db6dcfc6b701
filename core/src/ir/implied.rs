//! Checks and branches the path already decided: a `check c` where `c` is known to be true, or a
//! `brif c` where `c` is known, is removed or becomes a `jump`.
//!
//! Generated inverses test a step's precision twice on their usual path: the branch that decides
//! whether θ must supply an offset (`brif (window ∧ precise)`) and, where the paths meet, the
//! step's `check precise` on the merged value. On the path the branch took, the check
//! recomputes what the branch already tested. This pass finds that out in three steps:
//!
//! 1. **Facts.** A block reached only by one edge of a `brif c` knows `c` (true on the
//!    then-edge, false on the else-edge); code after a `check c` knows `c` is true; facts hold in
//!    every block the fact's block dominates. `band` of a true fact gives both operands, `bor` of
//!    a false one both operands, `bnot` the negation; a condition is known if it is a fact, a
//!    constant, or `band`/`bor`/`bnot` of known conditions. Conditions are compared by *shape*
//!    (the same primitives of the same leaves, commutative operands sorted), so a condition
//!    computed twice is recognized without CSE.
//! 2. **Sinking into predecessors, where it pays.** A block that starts with a *check bundle*
//!    (pure, non-trapping instructions and `check`s whose values nothing after the bundle uses)
//!    and is entered only by `jump`s can have the bundle moved to the end of each predecessor,
//!    its parameters replaced by the jump's arguments: every path still runs the same
//!    instructions in the same order, once. That is done when, for some predecessor, the
//!    bundle's check, with the jump's arguments substituted, is a fact at the predecessor's end
//!    (following blocks that hold only a jump, which then pass the bundle on).
//! 3. **Folding.** Checks of known-true conditions are removed, branches on known conditions
//!    become jumps.
//!
//! Nothing here changes what a run computes or which error stops it: removed checks would have
//! passed and folded branches would have gone the same way. Only the step count of a run drops
//! (by the instructions no longer executed), for the interpreter and compiled code alike.
//!
//! The function may have holes in its numbering afterwards (removed instructions); callers
//! compact when they are done.

use super::dominators::DomTree;
use super::{
    Block, BlockCall, Const, Function, Inst, InstKind, Opcode, Type, Value, ValueDef, ValueList,
};
use cranelift_entity::{EntityRef, EntitySet, SecondaryMap};
use rustc_hash::FxHashMap;

/// How far [`remove_implied_checks`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImpliedConfig {
    /// The most instructions in a bundle sunk into predecessors.
    pub max_bundle: usize,
    /// The most predecessors a bundle is copied into.
    pub max_preds: usize,
    /// Rounds of sinking (a bundle moves back one block per round).
    pub rounds: usize,
}

impl Default for ImpliedConfig {
    fn default() -> ImpliedConfig {
        ImpliedConfig {
            max_bundle: 48,
            max_preds: 4,
            rounds: 4,
        }
    }
}

/// What [`remove_implied_checks`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImpliedStats {
    /// Bundles moved into their predecessors.
    pub bundles_sunk: usize,
    pub checks_removed: usize,
    pub branches_folded: usize,
}

/// Removes the checks and branches of `func` that the path already decided (see the module
/// docs). Returns what it did; `func` may need [`Function::compact`] afterwards.
///
/// Sinking copies code; it is done only where it pays: a first walk over the facts finds the
/// blocks whose bundles some predecessor decides, only those are sunk, and a second walk folds.
pub fn remove_implied_checks(func: &mut Function, config: ImpliedConfig) -> ImpliedStats {
    let mut stats = ImpliedStats::default();
    // Only checks are removed, and only checks give facts besides branch edges: a function
    // without them (a PGF, forward code) is left alone.
    let has_checks = func.layout.iter().any(|&b| {
        func.blocks[b]
            .insts
            .iter()
            .any(|&i| matches!(func.insts[i].kind, InstKind::Check { .. }))
    });
    if !has_checks {
        return stats;
    }
    // Shapes stay valid while sinking: it adds instructions but changes none.
    let mut keys = Keys::with_capacity(func.values.len());
    let sinkable = Sinkable::of(func, config);
    // The first walk changes nothing, so the second reuses its tree unless sinking moved code.
    let mut doms = None;
    if !sinkable.bundles.is_empty() {
        let mut worth = EntitySet::new();
        let tree = doms.insert(DomTree::compute(func));
        walk_facts(func, tree, &mut keys, None, &mut |func, keys, facts, b| {
            for target in pays_to_sink(func, keys, facts, &sinkable, b) {
                worth.insert(target);
            }
        });
        if !worth.is_empty() {
            for _ in 0..config.rounds {
                let sunk = sink_bundles(func, config, &worth);
                stats.bundles_sunk += sunk;
                if sunk == 0 {
                    break;
                }
                doms = None;
            }
        }
    }
    let doms = doms.unwrap_or_else(|| DomTree::compute(func));
    walk_facts(
        func,
        &doms,
        &mut keys,
        Some(&mut stats),
        &mut |_, _, _, _| {},
    );
    if stats.branches_folded > 0 {
        func.remove_unreachable_blocks();
    }
    stats
}

/// The blocks that can take part in sinking: those entered only by `jump`s (at most
/// `max_preds`), with their bundle's length, and which of them hold nothing but their jump.
struct Sinkable {
    /// Blocks starting with a check bundle, and its length.
    bundles: FxHashMap<Block, usize>,
    /// Blocks entered only by jumps whose only instruction is a `jump` (bundles pass through).
    empty: FxHashMap<Block, ()>,
}

impl Sinkable {
    fn of(func: &Function, config: ImpliedConfig) -> Sinkable {
        let reachable = func.reachable_blocks();
        let mut preds: SecondaryMap<Block, (bool, u32)> = SecondaryMap::new();
        for &b in &reachable {
            let Some(t) = func.terminator(b) else {
                continue;
            };
            match &func.insts[t].kind {
                InstKind::Jump { dest } if dest.block != b => preds[dest.block].1 += 1,
                k => {
                    for d in k.successors() {
                        preds[d.block].0 = true;
                    }
                }
            }
        }
        let uses = use_counts(func, &reachable);
        let entry = func.entry();
        let mut bundles = FxHashMap::default();
        let mut empty = FxHashMap::default();
        for &b in &reachable {
            let (other, jumps) = preds[b];
            if other || jumps == 0 || jumps as usize > config.max_preds || Some(b) == entry {
                continue;
            }
            if let Some(len) = bundle_len(func, b, &uses, config.max_bundle) {
                bundles.insert(b, len);
            } else if func.blocks[b].insts.len() == 1 {
                empty.insert(b, ());
            }
        }
        Sinkable { bundles, empty }
    }
}

/// The blocks whose bundles should sink for block `p` to gain: `p` ends with a jump that leads,
/// through blocks holding only a jump, to a bundle one of whose checks `facts` (the facts at
/// the end of `p`) already decide. Returns that bundle's block and the blocks passed through.
fn pays_to_sink(
    func: &Function,
    keys: &mut Keys,
    facts: &Facts,
    sinkable: &Sinkable,
    p: Block,
) -> Vec<Block> {
    let mut path = Vec::new();
    // What each parameter of the block reached is, as a shape number.
    let mut subst: FxHashMap<Value, u32> = FxHashMap::default();
    let mut at = p;
    for _ in 0..8 {
        let Some(t) = func.terminator(at) else {
            return Vec::new();
        };
        let InstKind::Jump { dest } = &func.insts[t].kind else {
            return Vec::new();
        };
        let target = dest.block;
        let mut next = FxHashMap::default();
        for (&param, &arg) in func.blocks[target].params.iter().zip(&dest.args) {
            let k = match subst.get(&arg) {
                Some(&k) => k,
                None => keys.key(func, arg),
            };
            next.insert(param, k);
        }
        subst = next;
        path.push(target);
        if let Some(&len) = sinkable.bundles.get(&target) {
            let bundle = &func.blocks[target].insts[..len];
            let decided = keys.bundle_checks(func, bundle, &mut subst);
            return if decided.iter().any(|&k| facts.known.get(&k) == Some(&true)) {
                path
            } else {
                Vec::new()
            };
        }
        if !sinkable.empty.contains_key(&target) {
            return Vec::new();
        }
        at = target;
    }
    Vec::new()
}

/// Step 2, one round: moves the bundles of the blocks in `only` into their predecessors;
/// returns how many moved.
fn sink_bundles(func: &mut Function, config: ImpliedConfig, only: &EntitySet<Block>) -> usize {
    let reachable = func.reachable_blocks();
    let entry = func.entry();
    let mut preds: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
    for &b in &reachable {
        for s in func.successors(b) {
            preds[s].push(b);
        }
    }
    // Kept current as bundles move: a bundle sunk into a block that is itself sinkable adds
    // uses there (its copied check of a parameter's argument), and that block's bundle may
    // then only move if what it defines is used nowhere else.
    let mut uses = use_counts(func, &reachable);
    let mut moved = 0;
    for &b in &reachable {
        if Some(b) == entry || !only.contains(b) {
            continue;
        }
        let ps = preds[b].clone();
        if ps.is_empty() || ps.len() > config.max_preds || ps.contains(&b) {
            continue;
        }
        // Every predecessor jumps here unconditionally (a `brif` to `b` is not a jump).
        let jumps: Option<Vec<(Inst, ValueList)>> = ps
            .iter()
            .map(|&p| {
                let t = func.terminator(p)?;
                match &func.insts[t].kind {
                    InstKind::Jump { dest } if dest.block == b => Some((t, dest.args.clone())),
                    _ => None,
                }
            })
            .collect();
        let Some(jumps) = jumps else { continue };
        let Some(len) = bundle_len(func, b, &uses, config.max_bundle) else {
            continue;
        };
        let bundle: Vec<Inst> = func.blocks[b].insts[..len].to_vec();
        for (&p, (_, args)) in ps.iter().zip(&jumps) {
            let mut map: FxHashMap<Value, Value> = func.blocks[b]
                .params
                .iter()
                .copied()
                .zip(args.iter().copied())
                .collect();
            let mut copies = Vec::with_capacity(bundle.len());
            for &i in &bundle {
                let data = &func.insts[i];
                let mut kind = data.kind.clone();
                kind.map_args(|v| *map.get(&v).unwrap_or(&v));
                let span = data.span;
                let result_types: Vec<_> =
                    data.results.iter().map(|&r| func.values[r].ty).collect();
                let old_results = data.results.clone();
                let copy = func.create_inst(kind, &result_types, span);
                for (&old, &new) in old_results.iter().zip(&func.insts[copy].results) {
                    map.insert(old, new);
                }
                func.insts[copy]
                    .kind
                    .for_each_arg(|v| add_use(&mut uses, v, 1));
                copies.push(copy);
            }
            let insts = &mut func.blocks[p].insts;
            let at = insts.len() - 1;
            insts.splice(at..at, copies);
        }
        for i in func.blocks[b].insts.drain(..len) {
            func.insts[i]
                .kind
                .for_each_arg(|v| add_use(&mut uses, v, -1));
        }
        moved += 1;
    }
    moved
}

/// Uses of each value (by index) in the reachable blocks.
fn use_counts(func: &Function, reachable: &[Block]) -> Vec<u32> {
    let mut uses = vec![0u32; func.values.len()];
    for &b in reachable {
        for &i in &func.blocks[b].insts {
            func.insts[i].kind.for_each_arg(|v| {
                if let Some(u) = uses.get_mut(v.index()) {
                    *u += 1;
                }
            });
        }
    }
    uses
}

/// Counts `delta` more uses of `v` (values made after the counts were taken included).
fn add_use(uses: &mut Vec<u32>, v: Value, delta: i32) {
    if uses.len() <= v.index() {
        uses.resize(v.index() + 1, 0);
    }
    uses[v.index()] = uses[v.index()].saturating_add_signed(delta);
}

/// The length of the check bundle `b` starts with: the longest prefix of pure, non-trapping
/// instructions and checks that ends with a check and whose values are used only inside it.
fn bundle_len(func: &Function, b: Block, uses: &[u32], max: usize) -> Option<usize> {
    let insts = &func.blocks[b].insts;
    let mut end = None;
    for (k, &i) in insts.iter().enumerate().take(max) {
        match &func.insts[i].kind {
            InstKind::Check { .. } => end = Some(k + 1),
            InstKind::Const(_) => {}
            InstKind::Prim { op, .. } if !op.can_trap() => {}
            _ => break,
        }
    }
    let len = end?;
    // Uses inside the bundle, to compare with all uses.
    let mut inside: FxHashMap<Value, u32> = FxHashMap::default();
    for &i in &insts[..len] {
        func.insts[i]
            .kind
            .for_each_arg(|v| *inside.entry(v).or_default() += 1);
    }
    let closed = insts[..len].iter().all(|&i| {
        func.insts[i].results.iter().all(|r| {
            uses.get(r.index()).copied().unwrap_or(0) == inside.get(r).copied().unwrap_or(0)
        })
    });
    closed.then_some(len)
}

/// Walks `doms` (`func`'s dominator tree) depth first with one fact table and an undo log: the
/// facts of a block are those at the end of its immediate dominator plus its own edge's, and
/// within the block each check makes its condition a fact. `at_end(func, keys, facts, block)` runs with the
/// facts at the end of each block (before its terminator).
///
/// With `fold`, the walk also changes the function: checks of known-true conditions are
/// removed and branches on known conditions become jumps (counted in the stats).
fn walk_facts(
    func: &mut Function,
    doms: &DomTree,
    keys: &mut Keys,
    mut fold: Option<&mut ImpliedStats>,
    at_end: &mut dyn FnMut(&Function, &mut Keys, &Facts, Block),
) {
    let order: Vec<Block> = doms.reverse_postorder().collect();
    let mut preds: SecondaryMap<Block, u32> = SecondaryMap::new();
    // The dominator tree's children of each block, as (parent, child) pairs sorted by parent.
    let mut children: Vec<(Block, Block)> = Vec::with_capacity(order.len());
    for &b in &order {
        if let Some(t) = func.terminator(b) {
            for d in func.insts[t].kind.successors() {
                preds[d.block] += 1;
            }
        }
        if let Some(d) = doms.idom(b).filter(|&d| d != b) {
            children.push((d, b));
        }
    }
    // Stable: children keep reverse postorder.
    children.sort_by_key(|&(d, _)| d);
    let Some(&entry) = order.first() else {
        return;
    };
    let mut facts = Facts::default();
    // Blocks to enter, and (with a mark) blocks to leave: undo what they added.
    let mut stack: Vec<(Block, Option<usize>)> = vec![(entry, None)];
    while let Some((b, leave)) = stack.pop() {
        if let Some(mark) = leave {
            facts.undo_to(mark);
            continue;
        }
        stack.push((b, Some(facts.mark())));
        if let Some(d) = doms.idom(b).filter(|&d| d != b) {
            if preds[b] == 1 {
                if let Some((cond, value)) = edge_fact(func, d, b) {
                    facts.assume(func, keys, cond, value);
                }
            }
        }
        let mut k = 0;
        while k < func.blocks[b].insts.len() {
            let i = func.blocks[b].insts[k];
            if let InstKind::Check { cond, .. } = func.insts[i].kind {
                if facts.known(func, keys, cond, 4) == Some(true) {
                    if let Some(stats) = fold.as_deref_mut() {
                        func.blocks[b].insts.remove(k);
                        stats.checks_removed += 1;
                        continue;
                    }
                }
                facts.assume(func, keys, cond, true);
            }
            k += 1;
        }
        at_end(func, keys, &facts, b);
        if let (Some(stats), Some(t)) = (fold.as_deref_mut(), func.terminator(b)) {
            if let InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } = &func.insts[t].kind
            {
                if let Some(c) = facts.known(func, keys, *cond, 4) {
                    let dest: BlockCall = if c {
                        (**then_dest).clone()
                    } else {
                        (**else_dest).clone()
                    };
                    func.insts[t].kind = InstKind::Jump { dest };
                    stats.branches_folded += 1;
                }
            }
        }
        let first = children.partition_point(|&(d, _)| d < b);
        let kids = children[first..].iter().take_while(|&&(d, _)| d == b);
        let at = stack.len();
        stack.extend(kids.map(|&(_, c)| (c, None)));
        stack[at..].reverse();
    }
}

/// What the edge from `pred` to `b` says: `(c, true)` if `pred` ends with `brif c` whose
/// then-edge alone goes to `b`, `(c, false)` for the else-edge.
fn edge_fact(func: &Function, pred: Block, b: Block) -> Option<(Value, bool)> {
    let t = func.terminator(pred)?;
    match &func.insts[t].kind {
        InstKind::Brif {
            cond,
            then_dest,
            else_dest,
        } => match (then_dest.block == b, else_dest.block == b) {
            (true, false) => Some((*cond, true)),
            (false, true) => Some((*cond, false)),
            _ => None,
        },
        _ => None,
    }
}

/// A value's shape, for recognizing a condition computed twice: a leaf (a block parameter or
/// a result of anything but a pure primitive of at most two operands), a constant, or a pure
/// primitive of shapes (a missing second operand is `u32::MAX`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Shape {
    Leaf(Value),
    /// A constant by its type and bits, as two halves: a shape is 12 bytes, 4-aligned, and a
    /// numbered shape 16 (a `u64` would make them 16 and 24, a `Const` 24 and 32). A function of
    /// a million values numbers about as many shapes.
    Const(Type, [u32; 2]),
    Prim(Opcode, u32, u32),
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Shape>() == 12);

impl Shape {
    fn of_const(c: Const) -> Shape {
        let bits = c.bits();
        Shape::Const(c.ty(), [bits as u32, (bits >> 32) as u32])
    }
}

/// Shapes, numbered: two values with the same number compute the same boolean.
///
/// Operands of commutative primitives are sorted, `fadd` and `fmul` included: swapping their
/// operands can change only which NaN payload a NaN result carries, and no operation reads a
/// payload (no bit casts), so every boolean computed from them is the same either way.
#[derive(Default)]
struct Keys {
    /// Each value's number, by value index (`NONE` where not numbered yet): dense, because
    /// nearly every value of a function with checks gets one.
    of: Vec<u32>,
    numbers: FxHashMap<Shape, u32>,
    /// Scratch space for [`Keys::key`].
    stack: Vec<Value>,
}

impl Keys {
    const NONE: u32 = u32::MAX;

    fn with_capacity(n: usize) -> Keys {
        Keys {
            of: vec![Keys::NONE; n],
            numbers: FxHashMap::default(),
            stack: Vec::new(),
        }
    }

    fn get(&self, v: Value) -> Option<u32> {
        self.of.get(v.index()).copied().filter(|&k| k != Keys::NONE)
    }

    fn set(&mut self, v: Value, k: u32) {
        if self.of.len() <= v.index() {
            self.of.resize(v.index() + 1, Keys::NONE);
        }
        self.of[v.index()] = k;
    }

    fn number(&mut self, shape: Shape) -> u32 {
        let next = self.numbers.len() as u32;
        *self.numbers.entry(shape).or_insert(next)
    }

    /// The shape of a primitive `op` of operands numbered `args`.
    fn prim_shape(op: Opcode, args: &[u32]) -> Option<Shape> {
        let (mut a, mut b) = match args {
            [a] => (*a, u32::MAX),
            [a, b] => (*a, *b),
            _ => return None,
        };
        if commutative(op) && b < a {
            std::mem::swap(&mut a, &mut b);
        }
        Some(Shape::Prim(op, a, b))
    }

    /// The number of `v`'s shape (computed without recursion: shapes can be deep).
    fn key(&mut self, func: &Function, v: Value) -> u32 {
        if let Some(k) = self.get(v) {
            return k;
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.push(v);
        while let Some(&top) = stack.last() {
            if self.get(top).is_some() {
                stack.pop();
                continue;
            }
            let mut shape = None;
            if let ValueDef::Result(i, 0) = func.values[top].def {
                match &func.insts[i].kind {
                    InstKind::Const(c) => shape = Some(Shape::of_const(*c)),
                    InstKind::Prim { op, args } if !op.can_trap() && args.len() <= 2 => {
                        let before = stack.len();
                        stack.extend(args.iter().filter(|&&a| self.get(a).is_none()));
                        if stack.len() > before {
                            continue;
                        }
                        let numbered = |a: Option<&Value>| a.and_then(|&a| self.get(a));
                        let a = numbered(args.first()).unwrap_or(u32::MAX);
                        let b = numbered(args.get(1)).unwrap_or(u32::MAX);
                        shape = Keys::prim_shape(*op, &[a, b][..args.len()]);
                    }
                    _ => {}
                }
            }
            let n = self.number(shape.unwrap_or(Shape::Leaf(top)));
            self.set(top, n);
            stack.pop();
        }
        self.stack = stack;
        self.get(v).unwrap_or(Keys::NONE)
    }

    /// The numbers of the conditions `bundle`'s checks would test, with the bundle's block
    /// parameters standing for the numbers in `subst` (which receives the bundle's values).
    fn bundle_checks(
        &mut self,
        func: &Function,
        bundle: &[Inst],
        subst: &mut FxHashMap<Value, u32>,
    ) -> Vec<u32> {
        let mut conds = Vec::new();
        for &i in bundle {
            let key = |keys: &mut Keys, v: Value| match subst.get(&v) {
                Some(&k) => k,
                None => keys.key(func, v),
            };
            match &func.insts[i].kind {
                InstKind::Check { cond, .. } => conds.push(key(self, *cond)),
                InstKind::Const(c) => {
                    let n = self.number(Shape::of_const(*c));
                    subst.insert(func.insts[i].results[0], n);
                }
                InstKind::Prim { op, args } => {
                    let ks: Vec<u32> = args.iter().map(|&a| key(self, a)).collect();
                    let r = func.insts[i].results[0];
                    let n = match Keys::prim_shape(*op, &ks) {
                        Some(shape) => self.number(shape),
                        None => self.number(Shape::Leaf(r)),
                    };
                    subst.insert(r, n);
                }
                _ => {}
            }
        }
        conds
    }
}

/// Whether swapping the operands of `op` keeps every boolean computed from its result.
fn commutative(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fadd | Fmul
            | Feq
            | Fne
            | Iadd
            | Imul
            | Iand
            | Ior
            | Ixor
            | Ieq
            | Ine
            | Imin
            | Imax
            | Band
            | Bor
            | Bxor
            | Beq
            | Bne
    )
}

/// Boolean values known on a path, by shape number, with the order they were learnt in (to
/// undo them).
#[derive(Debug, Default)]
struct Facts {
    known: FxHashMap<u32, bool>,
    log: Vec<u32>,
}

impl Facts {
    fn mark(&self) -> usize {
        self.log.len()
    }

    /// Forgets what was learnt since `mark`.
    fn undo_to(&mut self, mark: usize) {
        for k in self.log.drain(mark..) {
            self.known.remove(&k);
        }
    }

    /// Records that `v` is `value`, and what follows from it through `band`, `bor` and `bnot`.
    fn assume(&mut self, func: &Function, keys: &mut Keys, v: Value, value: bool) {
        let mut work = vec![(v, value)];
        while let Some((v, value)) = work.pop() {
            let k = keys.key(func, v);
            if self.known.contains_key(&k) {
                continue;
            }
            self.known.insert(k, value);
            self.log.push(k);
            match (prim(func, v), value) {
                (Some((Opcode::Band, [a, b])), true) | (Some((Opcode::Bor, [a, b])), false) => {
                    work.push((a, value));
                    work.push((b, value));
                }
                (Some((Opcode::Bnot, [a, _])), _) => work.push((a, !value)),
                _ => {}
            }
        }
    }

    /// Whether `v` is known, looking through `band`, `bor` and `bnot` up to `depth` deep.
    fn known(&self, func: &Function, keys: &mut Keys, v: Value, depth: u32) -> Option<bool> {
        if let Some(&b) = self.known.get(&keys.key(func, v)) {
            return Some(b);
        }
        if let ValueDef::Result(i, _) = func.values[v].def {
            if let InstKind::Const(Const::Bool(b)) = func.insts[i].kind {
                return Some(b);
            }
        }
        let depth = depth.checked_sub(1)?;
        let mut known = |a: Value| self.known(func, keys, a, depth);
        match prim(func, v)? {
            (Opcode::Bnot, [a, _]) => known(a).map(|b| !b),
            (Opcode::Band, [a, b]) => match (known(a), known(b)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            (Opcode::Bor, [a, b]) => match (known(a), known(b)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            _ => None,
        }
    }
}

/// `v`'s defining primitive and its (up to two) operands; a one-operand primitive repeats its
/// operand.
fn prim(func: &Function, v: Value) -> Option<(Opcode, [Value; 2])> {
    let ValueDef::Result(i, _) = func.values[v].def else {
        return None;
    };
    match &func.insts[i].kind {
        InstKind::Prim { op, args } => match args.as_slice() {
            [a] => Some((*op, [*a, *a])),
            [a, b] => Some((*op, [*a, *b])),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_function;
    use crate::ir::{FuncId, Module};

    /// The function of `text` after the pass, printed, and what the pass did.
    fn run(text: &str) -> (Function, ImpliedStats) {
        let mut m: Module = parse_function(text).expect("parses");
        let id = FuncId::new(0);
        let stats = remove_implied_checks(&mut m.functions[id], ImpliedConfig::default());
        m.functions[id].compact();
        crate::ir::verify::verify_function(&m, id).expect("verifies");
        (m.functions[id].clone(), stats)
    }

    #[test]
    fn a_check_the_branch_decided_is_removed_on_that_path_only() {
        let (f, stats) = run("function %f(y: f64, t: f64) -> f64 generated_inverse(f) {
block0(v0: f64, v1: f64):
    v2 = fsub v0, v1
    v3 = fadd v2, v1
    v4 = feq v3, v0
    v5 = fne v0, v0
    v6 = band v4, v5
    brif v6, block1, block2
block1:
    jump block3(v2)
block2:
    v7 = fadd v2, v1
    jump block3(v7)
block3(v8: f64):
    v9 = fadd v8, v1
    v10 = feq v9, v0
    check v10, \"precise\"
    return v8
}");
        assert_eq!(stats.bundles_sunk, 1);
        assert_eq!(stats.checks_removed, 1, "{f:?}");
        // The other path keeps its check.
        let checks = f
            .insts
            .values()
            .filter(|d| matches!(d.kind, InstKind::Check { .. }))
            .count();
        assert_eq!(checks, 1, "{f:?}");
    }

    #[test]
    fn bundles_whose_values_are_used_later_stay() {
        let text = |ret: &str, ty: &str| {
            format!(
                "function %f(y: f64) -> {ty} generated_inverse(f) {{
block0(v0: f64):
    v1 = feq v0, v0
    brif v1, block1, block2
block1:
    jump block3(v0)
block2:
    jump block3(v0)
block3(v2: f64):
    v3 = feq v2, v2
    check v3, \"r\"
    return {ret}
}}"
            )
        };
        // v2 is used by the return, but v3 only by the check: the bundle moves, and the
        // then-path's copy goes.
        let (_, stats) = run(&text("v2", "f64"));
        assert_eq!((stats.bundles_sunk, stats.checks_removed), (1, 1));
        let (_, stats) = run(&text("v3", "bool"));
        assert_eq!((stats.bundles_sunk, stats.checks_removed), (0, 0));
    }

    #[test]
    fn a_condition_computed_with_operands_swapped_is_the_same_condition() {
        let (f, stats) = run("function %f(y: f64, t: f64) -> f64 generated_inverse(f) {
block0(v0: f64, v1: f64):
    v2 = fmul v1, v0
    v3 = feq v2, v0
    brif v3, block1, block2
block1:
    jump block3(v0)
block2:
    jump block3(v1)
block3(v4: f64):
    v5 = fmul v4, v1
    v6 = feq v0, v5
    check v6, \"r\"
    return v4
}");
        assert_eq!((stats.bundles_sunk, stats.checks_removed), (1, 1), "{f:?}");
    }

    #[test]
    fn bundles_that_no_path_decides_stay() {
        let (_, stats) = run("function %f(y: f64) -> f64 generated_inverse(f) {
block0(v0: f64):
    v1 = fne v0, v0
    brif v1, block1, block2
block1:
    jump block3(v0)
block2:
    jump block3(v0)
block3(v2: f64):
    v3 = fle v2, v2
    check v3, \"r\"
    return v2
}");
        assert_eq!((stats.bundles_sunk, stats.checks_removed), (0, 0));
    }

    #[test]
    fn bundles_move_back_through_merges_when_it_pays() {
        // The check at block5 is decided on the path through block1 only, two merges away.
        let (f, stats) = run("function %f(y: f64, t: f64) -> f64 generated_inverse(f) {
block0(v0: f64, v1: f64):
    v2 = fmul v0, v1
    v3 = flt v2, v0
    brif v3, block1, block2
block1:
    jump block3(v0)
block2:
    v8 = fle v1, v0
    brif v8, block6, block4
block6:
    jump block3(v1)
block3(v4: f64):
    jump block5(v4)
block4:
    jump block5(v1)
block5(v5: f64):
    v6 = fmul v5, v1
    v7 = flt v6, v0
    check v7, \"r\"
    return v5
}");
        assert_eq!(stats.checks_removed, 1, "{f:?}");
        assert!(stats.bundles_sunk >= 2, "{stats:?}");
    }

    #[test]
    fn a_bundle_that_gained_a_sunk_check_keeps_what_its_jump_still_uses() {
        // Generated seed 29379 (minimised): block5's bundle sinks first (the depth-first walk
        // meets it through block1, where v2 is known), copying `check v11` into block3;
        // block3's own bundle then uses v11, which its jump still passes. Counted before the
        // copy, v11 looked used only inside the bundle, the bundle moved with v11's definition,
        // and the jump kept a value nothing defined.
        let (f, stats) = run("function %f(y: f64, t: f64) -> f64 generated_inverse(f) {
block0(v0: f64, v1: f64):
    v2 = flt v0, v1
    brif v2, block1, block2
block1:
    jump block5(v2, v0)
block2:
    v8 = fle v1, v0
    brif v8, block6, block4
block6:
    jump block3(v0)
block4:
    jump block3(v1)
block3(v9: f64):
    v10 = fle v1, v9
    check v10, \"r\"
    v11 = flt v9, v1
    jump block5(v11, v9)
block5(v12: bool, v13: f64):
    check v12, \"c\"
    return v13
}");
        // block5's bundle reached block1 and went there (v2 is known); `run` verified the rest.
        let text = crate::ir::write::write_function_in(&Module::default(), &f, &Default::default());
        assert_eq!((stats.bundles_sunk, stats.checks_removed), (1, 1), "{text}");
    }

    #[test]
    fn facts_flow_through_checks_and_dominated_blocks() {
        let (f, stats) = run(
            "function %f(a: bool, b: bool) -> bool generated_inverse(f) {
block0(v0: bool, v1: bool):
    v2 = bor v0, v1
    v3 = bnot v2
    check v3, \"neither\"
    brif v0, block1, block2
block1:
    return v0
block2:
    v4 = bnot v1
    check v4, \"not b\"
    return v1
}",
        );
        // After `check ¬(a ∨ b)`, a and b are false: the branch and the second check fold.
        assert_eq!(stats.branches_folded, 1, "{f:?}");
        assert_eq!(stats.checks_removed, 1, "{f:?}");
    }

    #[test]
    fn a_branch_to_the_same_block_on_both_edges_says_nothing() {
        let (_, stats) = run("function %f(a: bool) -> bool generated_inverse(f) {
block0(v0: bool):
    brif v0, block1, block1
block1:
    check v0, \"a\"
    return v0
}");
        assert_eq!(stats.checks_removed, 0);
    }
}
