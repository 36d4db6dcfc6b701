//! The control-flow part of the reorientation: the inverse walks the forward CFG backwards.
//!
//! With `f` in closed block form, the inverse is built from three kinds of block:
//! - the **start**, which picks the `return` that produced y (computed from facts about the
//!   returned values when they decide it, read from θ otherwise), and jumps to that return
//!   site's region;
//! - one **region** per return site and per CFG edge `P → B`, which knows the values at the end of
//!   P — the returned values, or B's parameters as P's outgoing arguments, and P's branch
//!   condition (true or false, by which side was taken) — inverts P's instructions backwards
//!   ([`super::region`]), and goes on with P's parameters: to the **dispatch** of P, or, when P is
//!   the entry block, returns them as the inputs;
//! - one **dispatch** per block with predecessors, which picks the edge P was entered by, from the
//!   edge facts of [`super::facts`] or from θ, and jumps to that edge's region. In a function with
//!   loops it also counts steps and stops with a domain error past the iteration limit.
//!
//! The PGF mirrors this in one function with one block per forward block: it runs the forward
//! code as it runs (a loop is a loop, so the PGF needs no stack however long the loop runs) and
//! writes, for each forward block it leaves, the θ the inverse will read in that block's region
//! and at last the dispatch choice for the edge the block was entered by. Each block's records
//! are one `segment`; the PGF opens a frame on entry and closes it at its return, which puts the
//! segments in reverse order — the order the inverse, walking back, reads them in.
//!
//! A function without loops and of a few blocks ([`PER_BLOCK_MOST`]) gets a PGF of one function
//! per block instead (`f.pgf` for the entry, `f.pgf.blockN` for the others): each runs its
//! block forward, calls the helper of the block it goes on to, which records the θ of the
//! regions after it and returns what the inverse holds for the values the edge passed, and then
//! records its own region's θ from those values. The records come out in the inverse's order
//! with no segments, and every region's PGF knows the inverse's values, as the `return`'s does.

use super::facts::{all_exclusive, Cfg, Fact, Facts};
use super::region::{pair_fwd, rule_error, Region};
use super::trips::ExitBounds;
use super::{close_blocks, NoPgf, PgfId, Reorienter};
use crate::error::Error;
use pinv_core::ir::{
    Block, BlockCall, Const, FuncId, FuncKind, Function, InstKind, Opcode, SegmentOp, Signature,
    Type, Value,
};
use pinv_core::Span;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// From how many forward instructions a function's settle steps call a shared helper for their
/// test ([`pinv_primitives::EmitOptions::outline_settles`]). Only functions whose inverse the
/// JIT leaves to the interpreter anyway ([`pinv_core::jit::MAX_JIT_INSTS`]; an inverse has
/// several instructions for each forward one): compiled, a call at every step makes the
/// single-pass register allocator's work grow faster than the steps (a 3,000-statement chain
/// took 6 s to invert with the helpers from 1,000 instructions on, 0.26 s without).
const OUTLINE_SETTLES_FROM: usize = 20_000;

/// Up to how many blocks a function without loops (and not recursive) gets a PGF of one function
/// per block, each calling the next block's and then recording its own block's θ: the call
/// returns what the inverse holds for the values the edge passes (solved from y by the regions
/// after it), so each region's PGF steps start from the inverse's values, not the forward ones,
/// which an inverse that kept a closed form holds an ulp away (then an earlier region's
/// "nonzero factor" or "which float" θ, decided from the forward value, is not the one the
/// inverse needs: `gen_check` seed 43363). The calls nest as deep as the path is long, so
/// larger functions, and functions with loops, keep the PGF of one function whose frame puts
/// the blocks' segments in reverse order (the module docs).
const PER_BLOCK_MOST: usize = 64;

/// What a region of block P needs to know about P.
struct BlockCtx {
    cont: Continue,
    ranges: std::rc::Rc<super::ranges::Ranges>,
    /// P's loop counters: parameter → (start, step ±1).
    counters: BTreeMap<Value, (i64, i64)>,
    /// When P is a loop head whose trip count is scanned: the scan, and the inverse block of
    /// the region of the edge that enters the loop (where the inverse goes on after the scan).
    trip: Option<(Rc<Trip>, Block)>,
    /// P is a block of a loop whose trip count is scanned: the inverse never walks it back, so
    /// its PGF records nothing (but the scan's own θ at the loop's exit).
    muted: bool,
    /// When P is a loop head whose test compares a value with a constant: what its exit and a
    /// trip round it leave in that value.
    exit_bounds: Option<Rc<ExitBounds>>,
    /// P's f64 steps settle exactly (P is in a loop walked back, or the function is recursive).
    exact_floats: bool,
    /// Where steps in P's regions may name exact floats though the region is not the
    /// `return`'s: the inverse's values an exact step solved from forward floats, one set for
    /// all of the function's regions ([`super::region::Region::forward_floats`]).
    forward_floats: Option<Rc<std::cell::RefCell<rustc_hash::FxHashSet<Value>>>>,
    /// The PGF block with P's forward copy.
    copy_block: Block,
    /// The inverse checks f(x) = y before it returns (else its wrapper does).
    final_check: bool,
    /// Where the e-graph isolation rewrote the function ([`Reorienter::isolated`]): the
    /// original's outputs, computed once at the PGF's entry ([`original_outputs`]).
    original: Option<Rc<[Value]>>,
    /// Where the isolation rewrote P and P is in a loop: the original code
    /// ([`Reorienter::name_against_original`]).
    original_block: Option<Rc<crate::egraph::hook::OriginalBlocks>>,
}

/// The original function's outputs, run by the PGF at its entry block `entry` on x (that
/// block's first parameters; it dominates every block of the PGF).
///
/// The inverse starts from y, the original's outputs; the PGF computes the body the isolation
/// rewrote, whose outputs may be an ulp away (`p / 3 + p` as `p · 1.333…`). What the PGF
/// decides from the returned values (which `return` or which branch gave y) it decides from
/// these, and the steps that solve the returned values solve from them, as from any value the
/// inverse holds ([`Region::replay`]).
fn original_outputs(c: &Function, id: FuncId, h: &mut Function, entry: Block) -> Rc<[Value]> {
    let n = c.entry().map_or(0, |b| c.blocks[b].params.len());
    let xs = h.blocks[entry].params[..n].to_vec();
    h.ins_call(entry, id, xs, &c.sig.returns, c.span).into()
}

/// The output of `c` that value `v` of block `b` is returned as, unchanged, on every path from
/// `b`: returned there, or passed on as the argument of a jump (or of both sides of a branch)
/// to a block that returns it so, within [`RETURNED_DEPTH`] blocks in all. The inverse holds y
/// for such a value, whatever the blocks in between do: they pass it on.
fn returned_as(c: &Function, b: Block, v: Value) -> Option<usize> {
    let mut budget = RETURNED_DEPTH;
    returned_within(c, b, v, &mut budget)
}

/// [`returned_as`], visiting at most `budget` more blocks (the budget is shared by both sides of
/// every branch, so a loop that passes the value round ends it).
fn returned_within(c: &Function, b: Block, v: Value, budget: &mut usize) -> Option<usize> {
    let mut at = (b, v);
    loop {
        *budget = budget.checked_sub(1)?;
        let (b, v) = at;
        let passed = |call: &BlockCall| -> Option<(Block, Value)> {
            let i = call.args.iter().position(|&a| a == v)?;
            Some((call.block, c.blocks[call.block].params[i]))
        };
        at = match &c.insts[c.terminator(b)?].kind {
            InstKind::Return { args } => return args.iter().position(|&a| a == v),
            InstKind::Jump { dest } => passed(dest)?,
            InstKind::Brif {
                then_dest,
                else_dest,
                ..
            } => {
                let (t, e) = (passed(then_dest)?, passed(else_dest)?);
                if t == e {
                    t
                } else {
                    let k = returned_within(c, t.0, t.1, budget)?;
                    return (returned_within(c, e.0, e.1, budget)? == k).then_some(k);
                }
            }
            _ => return None,
        };
    }
}

/// How far [`returned_as`] follows a value passed on.
const RETURNED_DEPTH: usize = 64;

/// A loop whose trip count the inverse scans for ([`super::trips`]).
pub(super) struct Trip {
    pub plan: super::trips::Plan,
    /// The function the loop is in.
    pub of: String,
}

impl Trip {
    /// The module name of the scan function for `mode`.
    pub fn scan(&self, mode: super::trips::ScanMode) -> String {
        mode.name(&self.of, self.plan.head())
    }
}

/// Where the inverse walks back to, from a region.
enum Continue {
    /// P is the entry block: check f(x) = y and return its parameters (x); carries f and y.
    Return(FuncId, Vec<Value>),
    /// Go on at the dispatch of P.
    Dispatch(Block),
}

impl Reorienter<'_> {
    pub(super) fn invert_body(
        &mut self,
        id: FuncId,
        f0: &Function,
    ) -> Result<(FuncId, PgfId), Error> {
        // The step checks of callees inverted on the way are theirs: keep them apart, also when
        // this inversion fails.
        let mark = self.step_checks.len();
        let result = self.invert_blocks(id, f0, mark);
        self.step_checks.truncate(mark);
        result
    }

    /// [`Reorienter::invert_body`], whose regions' step checks go on `self.step_checks` after
    /// `mark`.
    fn invert_blocks(
        &mut self,
        id: FuncId,
        f0: &Function,
        mark: usize,
    ) -> Result<(FuncId, PgfId), Error> {
        if f0.entry().is_none() {
            return Err(Self::unsupported(f0, "it has no body", f0.span));
        }
        let mut c = close_blocks(f0);
        c.compact();
        let c = c;
        let cfg = Cfg::new(&c);
        if cfg.returns.is_empty() {
            return Err(Self::unsupported(
                f0,
                "it never returns, so nothing is in its image",
                f0.span,
            ));
        }
        let entry = c.layout[0];
        let blocks = c.reachable_blocks();
        let int_ranges = super::int_ranges::analyze(self.forward, &c, &mut self.int_returns);
        let ranges = std::rc::Rc::new(super::ranges::analyze(
            self.forward,
            &c,
            &mut self.call_ranges,
        ));
        // A counter each trip computes from itself and constants (`i = i + 1.0`) takes known
        // values round the loop: the edges back carry one of them.
        let trajectories: BTreeMap<Block, super::trips::Trajectory> = cfg
            .loop_heads
            .iter()
            .filter_map(|&h| Some((h, super::trips::test_trajectory(&c, &cfg, h)?)))
            .collect();
        let mut counter_facts: BTreeMap<(Block, usize), Vec<Fact>> = BTreeMap::new();
        for (&h, tr) in &trajectories {
            let Some(round) = tr.round.as_ref().filter(|r| !r.is_empty()) else {
                continue;
            };
            let inside = super::trips::loop_blocks(&c, h);
            for e in cfg.preds[&h].iter().filter(|e| inside.contains(&e.from)) {
                counter_facts
                    .entry((e.from, e.slot))
                    .or_default()
                    .push(Fact::In(tr.param, round.iter().copied().collect()));
            }
        }
        let mut facts = Facts::new(&c, &cfg)
            .with_int_ranges(int_ranges)
            .with_ranges(ranges.clone())
            .with_edge_facts(counter_facts);
        let cyclic = cfg.cyclic;
        let trips = self.plan_trips(&c, &cfg)?;
        // Code the inverse runs many times over its own results (a recursive function, a loop
        // walked back) settles its f64 steps exactly: there each step's rounding is amplified
        // by the steps before it ([`pinv_primitives::EmitOptions::exact_floats`]).
        let forward = self.forward;
        let recursive = self
            .recursive
            .get_or_insert_with(|| super::recursion::recursive(forward))
            .contains(&id);
        let in_cycle: BTreeSet<Block> = cfg
            .loop_heads
            .iter()
            .flat_map(|&h| super::trips::loop_blocks(&c, h))
            .collect();
        let exit_bounds: BTreeMap<Block, Rc<ExitBounds>> = cfg
            .loop_heads
            .iter()
            .filter_map(|&h| {
                let eb = super::trips::exit_bounds(&c, &cfg, h, trajectories.get(&h))?;
                Some((h, Rc::new(eb)))
            })
            .collect();

        // The PGF: one function, one block per forward block, run forward as the forward code
        // runs (a loop is a loop). Each block records its θ as one segment, and the segments end
        // up in reverse order (`segment open` here, `segment close` at the return), which is the
        // order the inverse, walking back, reads them in.
        let pgf_name = FuncKind::GeneratedPgf { of: c.name.clone() }.symbol(&c.name);
        let entry_types: Vec<Type> = c.blocks[entry]
            .params
            .iter()
            .map(|&p| c.value_type(p))
            .collect();
        let mut h = Self::new_pgf(&c, pgf_name, entry_types, c.param_names.clone());
        let pgf_id = self.reserved_or_new(h.name.clone(), h.kind.clone(), h.sig.clone())?;
        let h_start = h.layout[0];
        // A PGF of one function per block where that is bounded ([`PER_BLOCK_MOST`]).
        let per_block = blocks.len() > 1
            && blocks.len() <= PER_BLOCK_MOST
            && !cyclic
            && !recursive
            && !self.options.lazy_pgf;
        // One block records in the inverse's order as it is; so does a PGF of one function per
        // block.
        let segmented = blocks.len() > 1 && !per_block;
        if segmented {
            h.ins_void(h_start, InstKind::Segment(SegmentOp::Open), c.span);
        }
        let isolated = self.isolated.contains(&id);
        let mut helpers: BTreeMap<Block, (FuncId, Function)> = BTreeMap::new();
        if per_block {
            for &b in blocks.iter().filter(|&&b| b != entry) {
                let types: Vec<Type> = c.blocks[b]
                    .params
                    .iter()
                    .map(|&q| c.value_type(q))
                    .collect();
                let mut params = types.clone();
                params.push(Type::I64);
                if isolated {
                    params.extend(c.sig.returns.iter().copied());
                }
                let mut returns = types;
                returns.extend(c.sig.returns.iter().copied());
                let sig = Signature { params, returns };
                let name = format!("{}.{b}", h.name);
                let kind = FuncKind::GeneratedPgf { of: c.name.clone() };
                let fid = self.reserved_or_new(name.clone(), kind.clone(), sig.clone())?;
                let mut g = Function::new(name, kind, sig);
                g.span = c.span;
                g.create_entry();
                helpers.insert(b, (fid, g));
            }
        }
        let mut pgf_blocks: BTreeMap<Block, Block> = BTreeMap::new();
        for &b in &blocks {
            let pb = if b == entry {
                h_start
            } else if let Some((_, g)) = helpers.get(&b) {
                g.layout[0]
            } else {
                let pb = h.create_block();
                for &q in &c.blocks[b].params {
                    h.append_block_param(pb, c.value_type(q));
                }
                // The index of the edge this block was entered by.
                h.append_block_param(pb, Type::I64);
                pb
            };
            pgf_blocks.insert(b, pb);
        }

        let mut inv = Self::new_inverse(&c);
        // Built as the unchecked body when other inverses call it (`reserve_inversion`).
        let body = self
            .out
            .get(&inv.name)
            .and_then(|i| self.bodies.get(&i).copied());
        let inv_entry = inv.layout[0];
        let ys = inv.blocks[inv_entry].params.clone();
        let param_types = |b: Block| -> Vec<Type> {
            let mut ts: Vec<Type> = Vec::new();
            if cyclic {
                ts.push(Type::I64);
            }
            ts.extend(c.blocks[b].params.iter().map(|&p| c.value_type(p)));
            ts
        };
        let new_block = |inv: &mut Function, types: &[Type]| -> Block {
            let b = inv.create_block();
            for &t in types {
                inv.append_block_param(b, t);
            }
            b
        };
        let mut dispatch: BTreeMap<Block, Block> = BTreeMap::new();
        for &b in &blocks {
            if b != entry && !cfg.preds[&b].is_empty() {
                dispatch.insert(b, new_block(&mut inv, &param_types(b)));
            }
        }
        let steps_only: Vec<Type> = if cyclic { vec![Type::I64] } else { Vec::new() };
        let mut starts: Vec<Block> = Vec::new();
        for _ in &cfg.returns {
            starts.push(new_block(&mut inv, &steps_only));
        }
        let mut regions: BTreeMap<(Block, usize), Block> = BTreeMap::new();
        for edges in cfg.preds.values() {
            for e in edges {
                regions.insert((e.from, e.slot), new_block(&mut inv, &param_types(e.to)));
            }
        }

        // Guards: for every target of a dispatch that the facts alone do not decide, a function of
        // the dispatch's values that runs the target's θ-free start (its first checks) and says
        // whether it can pass — so a `return x` that needs `x > 100` is not taken for y ≤ 100.
        let site_facts = facts.return_facts();
        let mut guards: BTreeMap<Block, (FuncId, bool)> = BTreeMap::new();
        if starts.len() >= 2 && !all_exclusive(&site_facts) {
            for &s in &starts {
                let mut params: Vec<Type> = c.sig.returns.clone();
                params.extend(steps_only.iter().copied());
                let id = self.reserve_guard(&c.name, s, params)?;
                guards.insert(s, (id, true));
            }
        }
        for &b in dispatch.keys() {
            let edges = &cfg.preds[&b];
            if edges.len() >= 2 && !all_exclusive(&facts.edge_facts(b)) {
                for e in edges {
                    let target = regions[&(e.from, e.slot)];
                    let id = self.reserve_guard(&c.name, target, param_types(b))?;
                    guards.insert(target, (id, false));
                }
            }
        }

        // The start: which return produced y.
        let span = c.span;
        let steps0 = cyclic.then(|| inv.ins_const(inv_entry, Const::I64(0), span));
        let start_guards: Vec<Option<(FuncId, Vec<Value>)>> = starts
            .iter()
            .map(|s| {
                guards.get(s).map(|&(id, _)| {
                    let mut args = ys.clone();
                    args.extend(steps0);
                    (id, args)
                })
            })
            .collect();
        emit_dispatch(
            &mut inv,
            inv_entry,
            &starts,
            &steps0.into_iter().collect::<Vec<_>>(),
            &ys,
            &site_facts,
            &start_guards,
            "control flow: which `return` produced y",
            "no `return` of the function can produce this y",
            self.options.emit.tolerance,
            span,
        );

        // The dispatch of every block with predecessors.
        for (&b, &d) in &dispatch {
            let edges = &cfg.preds[&b];
            let params = inv.blocks[d].params.clone();
            let (steps, values) = split_steps(cyclic, &params);
            let mut payload = Vec::new();
            let at = d;
            // Walks round a cycle are counted where they pass a loop head, once per iteration.
            if let Some(steps) = steps.filter(|_| !cfg.loop_heads.contains(&b)) {
                payload.push(steps);
            } else if let Some(steps) = steps {
                let one = inv.ins_const(at, Const::I64(1), span);
                let next = inv.ins_prim(at, Opcode::Iadd, vec![steps, one], span);
                let limit = inv.ins_const(at, Const::I64(self.options.iteration_limit), span);
                let ok = inv.ins_prim(at, Opcode::Ile, vec![next, limit], span);
                inv.ins_void(
                    at,
                    InstKind::Check {
                        cond: ok,
                        reason: format!(
                            "more than {} loop iterations: θ keeps going round",
                            self.options.iteration_limit
                        ),
                    },
                    span,
                );
                payload.push(next);
            }
            payload.extend_from_slice(values);
            let targets: Vec<Block> = edges.iter().map(|e| regions[&(e.from, e.slot)]).collect();
            let edge_facts = facts.edge_facts(b);
            let edge_guards: Vec<Option<(FuncId, Vec<Value>)>> = targets
                .iter()
                .map(|t| guards.get(t).map(|&(id, _)| (id, payload.clone())))
                .collect();
            emit_dispatch(
                &mut inv,
                at,
                &targets,
                &payload,
                values,
                &edge_facts,
                &edge_guards,
                &entry_role(&c, b, cfg.loop_heads.contains(&b)),
                &no_way_in(&c, b, cfg.loop_heads.contains(&b)),
                self.options.emit.tolerance,
                block_span(&c, b),
            );
        }

        // The regions, with the PGF helpers written beside them.
        let mut no_pgf: Option<String> = None;
        let local_index: BTreeMap<(Block, usize), usize> = cfg
            .preds
            .values()
            .flat_map(|edges| edges.iter().enumerate().map(|(i, e)| ((e.from, e.slot), i)))
            .collect();
        // Straight-line code too: a step that names the exact float among those that give its
        // output (a sum that cancels after it, `1 − v²/c²`) must name it among the floats that
        // give the inverse's y, not the rewritten body's.
        let original = self
            .isolated
            .contains(&id)
            .then(|| original_outputs(&c, id, &mut h, pgf_blocks[&entry]));
        // Exact steps outside the `return`'s region: with one `return`, where the isolation
        // did not rewrite the function ([`super::region::Region::forward_floats`]).
        let forward_floats = (cfg.returns.len() == 1 && original.is_none())
            .then(|| Rc::new(std::cell::RefCell::new(rustc_hash::FxHashSet::default())));
        // Each helper's function and the types it returns, for its callers.
        let helper_calls: BTreeMap<Block, (FuncId, Vec<Type>)> = helpers
            .iter()
            .map(|(&b, (fid, g))| (b, (*fid, g.sig.returns.clone())))
            .collect();
        for &p in &blocks {
            let h_entry = pgf_blocks[&p];
            // The function P's PGF code goes into: the PGF, or P's helper.
            let h: &mut Function = match helpers.get_mut(&p) {
                Some((_, g)) => g,
                None => &mut h,
            };
            let mut fwd: BTreeMap<Value, Value> = BTreeMap::new();
            let h_params = h.blocks[h_entry].params.clone();
            let n_params = c.blocks[p].params.len();
            for (&q, &v) in c.blocks[p].params.iter().zip(&h_params) {
                fwd.insert(q, v);
            }
            let in_edge = (p != entry).then(|| h_params[n_params]);
            // The original's outputs: computed at the PGF's entry, passed to each helper.
            let original: Option<Rc<[Value]>> = match &original {
                Some(_) if p != entry && per_block => Some(h_params[n_params + 1..].into()),
                o => o.clone(),
            };
            copy_block(&c, p, h, h_entry, &mut fwd)?;
            // Where the isolation rewrote P: its original code.
            let original_p = self
                .original_blocks
                .get(&id)
                .filter(|o| o.rewritten.contains(&p))
                .cloned();
            if let Some(original) = &original_p {
                original_block_values(&c, &original.closed, p, h, h_entry, &mut fwd)?;
            }
            let Some(term) = c.terminator(p) else {
                return Err(Error::Internal(format!("{p} has no terminator")));
            };
            let term_span = c.insts[term].span;
            let counters = facts
                .inductions(p)
                .into_iter()
                .filter_map(|(k, ind)| {
                    let step = ind.unit_step()?;
                    Some((c.blocks[p].params[k], (ind.start, step)))
                })
                .collect();
            let muted = trips.values().any(|t| t.plan.contains(p));
            let ctx = BlockCtx {
                trip: trips.get(&p).map(|t| (t.clone(), regions[&t.plan.entry])),
                muted,
                exact_floats: !muted && (recursive || in_cycle.contains(&p)),
                forward_floats: forward_floats.clone(),
                copy_block: h_entry,
                final_check: body.is_none(),
                original: original.clone(),
                original_block: original_p.filter(|_| in_cycle.contains(&p)),
                exit_bounds: exit_bounds.get(&p).cloned(),
                ranges: ranges.clone(),
                cont: match dispatch.get(&p) {
                    Some(&d) => Continue::Dispatch(d),
                    None => Continue::Return(id, ys.clone()),
                },
                counters,
            };
            // What the inverse holds for each value, in the PGF: the original's output for a
            // value block P returns, where the isolation rewrote the function; else the
            // forward value.
            let held = |v: Value| -> Result<Value, Error> {
                let j = original.as_ref().and_then(|_| returned_as(&c, p, v));
                match (j, &original) {
                    (Some(j), Some(ys)) => Ok(ys[j]),
                    _ => pair_fwd(&fwd, v),
                }
            };
            // After a region's records: the dispatch choice for the edge this block was entered
            // by, which ends the block's segment.
            let in_edge_values: Vec<Value> = c.blocks[p]
                .params
                .iter()
                .map(|&q| held(q))
                .collect::<Result<_, _>>()?;
            let edge_facts = facts.edge_facts(p);
            let tolerance = self.options.emit.tolerance;
            let muted = ctx.muted;
            let record_in_edge = |h: &mut Function, at: Block, values: &[Value]| -> Block {
                let Some(edge) = in_edge.filter(|_| !muted) else {
                    return at;
                };
                let mut guard_args: Vec<Value> = Vec::new();
                if cyclic {
                    guard_args.push(h.ins_const(at, Const::I64(0), term_span));
                }
                guard_args.extend(values.iter().copied());
                let edge_guards: Vec<Option<(FuncId, Vec<Value>)>> = cfg.preds[&p]
                    .iter()
                    .map(|e| {
                        let target = regions[&(e.from, e.slot)];
                        guards.get(&target).map(|&(id, _)| (id, guard_args.clone()))
                    })
                    .collect();
                emit_record_choice(
                    h,
                    at,
                    values,
                    &edge_facts,
                    &edge_guards,
                    edge,
                    &entry_role(&c, p, cfg.loop_heads.contains(&p)),
                    tolerance,
                    block_span(&c, p),
                )
            };
            // With a helper per block, after P's region: the in-edge choice from what the inverse
            // holds for P's parameters, then P's helper returns those (but the entry's) and f(x).
            let return_held =
                |h: &mut Function, end: Block, held: Vec<Value>, outputs: Vec<Value>| {
                    let end = record_in_edge(h, end, &held);
                    let mut results = if p == entry { Vec::new() } else { held };
                    results.extend(outputs);
                    h.ins_return(end, results, term_span);
                };
            match c.insts[term].kind.clone() {
                InstKind::Return { args } => {
                    let site = cfg.returns.iter().position(|&r| r == p).unwrap_or(0);
                    let fwd_args: Vec<Value> = args
                        .iter()
                        .map(|&a| pair_fwd(&fwd, a))
                        .collect::<Result<_, _>>()?;
                    let held_args: Vec<Value> =
                        args.iter().map(|&a| held(a)).collect::<Result<_, _>>()?;
                    let index = h.ins_const(h_entry, Const::I64(site as i64), term_span);
                    let mut guard_args = held_args.clone();
                    if cyclic {
                        guard_args.push(h.ins_const(h_entry, Const::I64(0), term_span));
                    }
                    let site_guards: Vec<Option<(FuncId, Vec<Value>)>> = starts
                        .iter()
                        .map(|s| guards.get(s).map(|&(id, _)| (id, guard_args.clone())))
                        .collect();
                    let at = emit_record_choice(
                        h,
                        h_entry,
                        &held_args,
                        &site_facts,
                        &site_guards,
                        index,
                        "control flow: which `return` produced y",
                        self.options.emit.tolerance,
                        term_span,
                    );
                    let start = starts[site];
                    let steps = inv.blocks[start].params.first().copied();
                    let seed: Vec<(Value, Value)> =
                        args.iter().copied().zip(ys.iter().copied()).collect();
                    let replays: Vec<(Value, Value)> = match &original {
                        Some(ys) => args.iter().copied().zip(ys.iter().copied()).collect(),
                        None => Vec::new(),
                    };
                    let (end, held_params) = self.emit_region(
                        &c,
                        p,
                        &mut inv,
                        start,
                        h,
                        at,
                        fwd.clone(),
                        seed,
                        replays,
                        None,
                        steps,
                        &ctx,
                        // The one `return`: no guard has to tell it from another.
                        cfg.returns.len() == 1,
                        &mut no_pgf,
                        term_span,
                    )?;
                    if per_block {
                        return_held(h, end, held_params, fwd_args);
                    } else {
                        let end = record_in_edge(h, end, &in_edge_values);
                        if segmented {
                            h.ins_void(end, InstKind::Segment(SegmentOp::Close), term_span);
                        }
                        h.ins_return(end, fwd_args, term_span);
                    }
                }
                InstKind::Jump { .. } | InstKind::Brif { .. } => {
                    // Each edge: its side, its call, where its PGF goes, the condition taken.
                    type Out = (usize, BlockCall, Block, Option<(Value, bool)>);
                    let edges: Vec<Out> = match c.insts[term].kind.clone() {
                        InstKind::Brif {
                            cond,
                            then_dest,
                            else_dest,
                        } => {
                            let (tb, eb) = (h.create_block(), h.create_block());
                            let fc = pair_fwd(&fwd, cond)?;
                            h.ins_void(
                                h_entry,
                                InstKind::Brif {
                                    cond: fc,
                                    then_dest: Box::new(BlockCall::new(tb, Vec::new())),
                                    else_dest: Box::new(BlockCall::new(eb, Vec::new())),
                                },
                                term_span,
                            );
                            vec![
                                (0, *then_dest, tb, Some((cond, true))),
                                (1, *else_dest, eb, Some((cond, false))),
                            ]
                        }
                        InstKind::Jump { dest } => vec![(0, dest, h_entry, None)],
                        _ => Vec::new(),
                    };
                    for (slot, dest, at, cond) in edges {
                        // What the PGF passes on: `dest`'s own arguments, then the edge's index
                        // among `dest`'s predecessors.
                        let mut args: Vec<Value> = dest
                            .args
                            .iter()
                            .map(|&a| pair_fwd(&fwd, a))
                            .collect::<Result<_, _>>()?;
                        let index = local_index.get(&(p, slot)).copied().unwrap_or(0);
                        args.push(h.ins_const(at, Const::I64(index as i64), term_span));
                        // With a helper per block: the call of the next block's helper first
                        // (its records are the inverse's first), then this edge's region,
                        // from what the inverse holds for the values the edge passes.
                        let mut outputs = Vec::new();
                        let mut replays = None;
                        if let Some((callee, returns)) = helper_calls.get(&dest.block) {
                            let mut call_args = args.clone();
                            call_args.extend(original.iter().flat_map(|ys| ys.iter().copied()));
                            let results = h.ins_call(at, *callee, call_args, returns, term_span);
                            let n = c.blocks[dest.block].params.len();
                            replays = Some(
                                dest.args
                                    .iter()
                                    .copied()
                                    .zip(results[..n].to_vec())
                                    .collect(),
                            );
                            outputs = results[n..].to_vec();
                        }
                        let (end, held_params) = self.edge(
                            &c,
                            p,
                            slot,
                            &dest,
                            cond,
                            &mut inv,
                            &regions,
                            h,
                            at,
                            &fwd,
                            &ctx,
                            replays,
                            &mut no_pgf,
                            term_span,
                        )?;
                        if per_block {
                            return_held(h, end, held_params, outputs);
                        } else {
                            let end = record_in_edge(h, end, &in_edge_values);
                            h.ins_void(end, InstKind::Segment(SegmentOp::Cut), term_span);
                            h.ins_jump(end, pgf_blocks[&dest.block], args, term_span);
                        }
                    }
                }
                _ => {
                    // A block that fails: no path through it produces any y.
                    h.ins_void(
                        h_entry,
                        InstKind::Fail {
                            reason: "this input makes the function fail".to_string(),
                        },
                        term_span,
                    );
                }
            }
        }
        h.remove_unreachable_blocks();
        if !segmented {
            frame_stashes(&mut h);
        }
        let helpers: Vec<Function> = helpers
            .into_values()
            .map(|(_, mut g)| {
                g.remove_unreachable_blocks();
                frame_stashes(&mut g);
                g
            })
            .collect();

        let mut shapes = BranchShapes::new(&inv);
        let pieces: FxHashSet<FuncId> = self.outlined.values().flatten().copied().collect();
        for (&target, &(id, is_start)) in &guards {
            let shell = self.out.functions[id].clone();
            let mut guard = extract_guard(&inv, target, is_start, shell, &mut shapes, &pieces);
            guard.span = c.span;
            if self.options.isolation.simplify {
                // Simplified now, as the end would (a guard calls nothing), so that thousands
                // of guards are not all held at their copied size.
                crate::egraph::simplify::simplify_alone(&mut guard);
                self.simplified.insert(id);
            }
            self.add(guard)?;
        }
        let step_checks = self.step_checks.split_off(mark);
        self.drop_step_checks(&mut inv, &step_checks);
        inv.remove_unreachable_blocks();
        let inv_id = match body {
            None => self.add(inv)?,
            Some(body) => {
                let wrapper = self.checked_wrapper(&c, id, body)?;
                inv.name = self.out.functions[body].name.clone();
                self.add(inv)?;
                self.add(wrapper)?
            }
        };
        let pgf = match no_pgf {
            None => {
                self.add(h)?;
                for g in helpers {
                    self.add(g)?;
                }
                Ok(pgf_id)
            }
            Some(why) => {
                // The reserved PGF gets a body that says why, so the module stays well formed.
                for mut g in std::iter::once(h).chain(helpers) {
                    super::stub_pgf(&mut g, format!("no PGF: {why}"));
                    self.add(g)?;
                }
                Err(NoPgf { reason: why })
            }
        };
        Ok((inv_id, pgf))
    }

    /// The region of the edge from `p` (side `slot`) to `dest`, with its PGF at `at` of `h`.
    /// `held` is what the inverse holds for the values the edge passes, where the PGF knows
    /// it ([`PER_BLOCK_MOST`]). Returns where the PGF continues and what the inverse holds, in
    /// the PGF, for `p`'s parameters after the region.
    #[allow(clippy::too_many_arguments)]
    fn edge(
        &mut self,
        c: &Function,
        p: Block,
        slot: usize,
        dest: &BlockCall,
        cond: Option<(Value, bool)>,
        inv: &mut Function,
        regions: &BTreeMap<(Block, usize), Block>,
        h: &mut Function,
        at: Block,
        fwd: &BTreeMap<Value, Value>,
        ctx: &BlockCtx,
        held: Option<Vec<(Value, Value)>>,
        no_pgf: &mut Option<String>,
        span: Span,
    ) -> Result<(Block, Vec<Value>), Error> {
        let region = regions[&(p, slot)];
        let params = inv.blocks[region].params.clone();
        let cyclic = params.len() > c.blocks[dest.block].params.len();
        let (steps, values) = split_steps(cyclic, &params);
        let seed: Vec<(Value, Value)> = dest
            .args
            .iter()
            .copied()
            .zip(values.iter().copied())
            .collect();
        // Into a block that returns its parameters, or passes them on to one (the merge after
        // an `if` that gives the result): the inverse holds y for what the edge passes them.
        let dest_params = &c.blocks[dest.block].params;
        let replays: Vec<(Value, Value)> = match (held, &ctx.original) {
            (Some(held), _) => held,
            (None, Some(ys)) => dest_params
                .iter()
                .zip(&dest.args)
                .filter_map(|(&q, &a)| Some((a, *ys.get(returned_as(c, dest.block, q)?)?)))
                .collect(),
            (None, None) => Vec::new(),
        };
        let (end, held) = self.emit_region(
            c,
            p,
            inv,
            region,
            h,
            at,
            fwd.clone(),
            seed,
            replays,
            cond,
            steps,
            ctx,
            false,
            no_pgf,
            span,
        )?;
        Ok((end, held))
    }

    /// Inverts block `p` in the inverse block `start`, knowing `seed` (forward value, inverse
    /// value) pairs and the branch condition; writes the matching PGF at `at` of helper `h`. Then
    /// continues with p's parameters as `cont` says. Returns where the PGF continues, and the
    /// PGF's values for what the inverse holds for p's parameters ([`Region::held`]).
    #[allow(clippy::too_many_arguments)]
    fn emit_region(
        &mut self,
        c: &Function,
        p: Block,
        inv: &mut Function,
        start: Block,
        h: &mut Function,
        at: Block,
        fwd: BTreeMap<Value, Value>,
        seed: Vec<(Value, Value)>,
        replays: Vec<(Value, Value)>,
        cond: Option<(Value, bool)>,
        steps: Option<Value>,
        ctx: &BlockCtx,
        anchored: bool,
        no_pgf: &mut Option<String>,
        span: Span,
    ) -> Result<(Block, Vec<Value>), Error> {
        self.deadline.check(&c.name, span)?;
        // Whether this region is the edge leaving P's loop on side `slot` (0: the `then` side).
        let leaving = |slot: usize| cond.is_some_and(|(_, taken)| taken == (slot == 0));
        // The exit of a loop whose trip count is scanned for.
        let trip = ctx.trip.as_ref().filter(|(t, _)| leaving(t.plan.exit_slot));
        let known_after: Vec<(Value, Value)> = seed.clone();
        let mut region = Region::new(inv, start, h, at, fwd);
        region.replay.extend(replays);
        region.mute_pgf = ctx.muted && trip.is_none();
        region.exact_floats = ctx.exact_floats;
        region.anchored = anchored;
        region.forward_floats = ctx.forward_floats.clone();
        region.outline_settles = c.insts.len() >= OUTLINE_SETTLES_FROM;
        // Step checks serve only the dispatch guards (`drop_step_checks` deletes them after):
        // a function of one block has none, so its rules need not write them.
        region.step_checks_wanted = self.options.step_checks || c.layout.len() > 1;
        region.copy_block = Some(ctx.copy_block);
        region.counters = ctx.counters.clone();
        region.ranges = ctx.ranges.clone();
        for (v, y) in seed {
            self.solve(
                c,
                &mut region,
                v,
                y,
                span,
                "one value leaves this block twice, with different values",
            )?;
        }
        if let Some((cond, taken)) = cond {
            region.fixed.insert(cond, Const::Bool(taken));
            let k = region
                .inv
                .ins_const(region.inv_block, Const::Bool(taken), span);
            self.solve(
                c,
                &mut region,
                cond,
                k,
                span,
                "the branch condition disagrees with the side taken",
            )?;
        }
        let mut entered = None;
        if let Some((trip, entry_region)) = trip {
            let init = self.emit_trip_scan(c, &mut region, trip, &known_after, span)?;
            entered = Some((*entry_region, init));
        } else if let Some(eb) = ctx.exit_bounds.as_ref().filter(|eb| leaving(eb.exit_slot)) {
            self.emit_exit_bounds(c, p, &mut region, eb, &known_after, span)?;
        }
        // A rewritten block's carried value, named again against its original code after the
        // rewritten steps (which still name their own floats: their θ stays narrowed).
        let rename = ctx
            .original_block
            .as_ref()
            .filter(|_| ctx.exact_floats)
            .and_then(|o| Some((o, carried_step(c, p, &known_after)?)));
        self.invert_block(c, p, &mut region)?;
        if let Some((original, step)) = rename {
            self.name_against_original(c, p, &original.closed, &mut region, step, span)?;
        }
        // The block's parameters: solved, or free along this path.
        let is_entry = matches!(ctx.cont, Continue::Return(..));
        let mut values = Vec::new();
        for (i, &q) in c.blocks[p].params.iter().enumerate() {
            let v = match region.known.get(&q) {
                Some(&v) => v,
                None => {
                    let role = if is_entry {
                        let name = c.param_names.get(i).cloned().unwrap_or_default();
                        if ctx.ranges.divided_by_itself(q) {
                            format!(
                                "input `{name}`, which the outputs see only as `{name} / {name}`"
                            )
                        } else {
                            format!("input `{name}`, which no output depends on")
                        }
                    } else {
                        format!("{p} parameter {i}, which this path does not determine")
                    };
                    let ty = c.value_type(q);
                    let fv = pair_fwd(&region.fwd, q)?;
                    region
                        .emit(self.options, span, "", None, |ie, pe| {
                            let domain = super::ranges::free_domain(&ctx.ranges, q, ty);
                            let v = ie.theta(domain, &role)?;
                            pe.record(fv, &role)?;
                            Ok(v)
                        })
                        .map_err(|e| rule_error(c, e))?
                }
            };
            values.push(v);
        }
        let held: Vec<Value> = c.blocks[p]
            .params
            .iter()
            .map(|&q| region.held(q))
            .collect::<Result<_, _>>()?;
        if let Some(why) = region.no_pgf.take() {
            no_pgf.get_or_insert(why);
        }
        self.step_checks.append(&mut region.step_checks);
        self.install_outlined(&mut region)?;
        let (inv_block, pgf_block) = (region.inv_block, region.pgf_block);
        match &ctx.cont {
            Continue::Return(forward, ys) if ctx.final_check => {
                let at = self.final_check(inv, inv_block, *forward, &values, ys, span)?;
                inv.ins_return(at, values, span);
            }
            Continue::Return(..) => {
                inv.ins_return(inv_block, values, span);
            }
            Continue::Dispatch(d) => {
                let mut args: Vec<Value> = steps.into_iter().collect();
                // After a scan, on before the loop: its values when it was entered are known.
                let (to, state) = entered.unwrap_or((*d, values));
                args.extend(state);
                inv.ins_jump(inv_block, to, args, span);
            }
        }
        Ok((pgf_block, held))
    }
}

impl Reorienter<'_> {
    /// In a loop walked back float for float ([`BlockCtx::exact_floats`]) whose block `p` the
    /// isolation rewrote: names the value the block carries again, among the floats that the
    /// block's original code (in `closed`) takes to what the inverse holds for its output. The
    /// rewritten form rounds differently (`v − k·v·0.01` as `v·(1 − 0.01·k)`, `3.2·x·(1 − x)` as
    /// a square), so the forward value need not be among the floats it gives, and the PGF named
    /// another than the inverse took (a third of the inputs of an Euler step lost). Only where
    /// one f64 parameter is solved and one f64 value computed is passed on (`seed`: what the
    /// inverse holds for what the edge passes): a loop's state and its step.
    fn name_against_original(
        &mut self,
        c: &Function,
        p: Block,
        closed: &Function,
        region: &mut Region<'_>,
        step: CarriedStep,
        span: Span,
    ) -> Result<(), Error> {
        let params = c.blocks[p].params.clone();
        let CarriedStep {
            param: qi,
            output: o,
            held: o_inv,
            position: pos,
        } = step;
        let q = params[qi];
        let Some(helper) = self.original_block_helper(c, p, closed, pos)? else {
            return Ok(());
        };
        let Some(args_inv) = params
            .iter()
            .map(|a| region.known.get(a).copied())
            .collect::<Option<Vec<Value>>>()
        else {
            return Ok(());
        };
        let args_pgf: Vec<Value> = params
            .iter()
            .map(|&a| region.held(a))
            .collect::<Result<_, _>>()?;
        let target_pgf = region.held(o)?;
        let x_fwd = pair_fwd(&region.fwd, q)?;
        let role = "the value the loop carries, as its own code computes it (the rewritten form \
                    rounds differently)";
        let options = self.options;
        let (named, replayed) = region
            .emit(options, span, "", Some(&self.out), |ie, pe| {
                let fwd_inv = call_varying(&helper, &args_inv, qi);
                let named = pinv_primitives::rules::settle::name_exactly(
                    ie,
                    args_inv[qi],
                    o_inv,
                    &fwd_inv,
                    role,
                )?;
                let fwd_pgf = call_varying(&helper, &args_pgf, qi);
                let replayed = pinv_primitives::rules::settle::name_exactly_pgf(
                    pe,
                    args_pgf[qi],
                    target_pgf,
                    x_fwd,
                    &fwd_pgf,
                    role,
                )?;
                Ok((named, replayed))
            })
            .map_err(|e| rule_error(c, e))?;
        region.known.insert(q, named);
        region.replay.insert(q, replayed);
        Ok(())
    }

    /// The name of a function computing value `pos` of what block `p` of `closed` passes on
    /// ([`terminator_values`]) from the block's parameters, added to the output module the first
    /// time; `None` where the block does not fit `c`'s.
    fn original_block_helper(
        &mut self,
        c: &Function,
        p: Block,
        closed: &Function,
        pos: usize,
    ) -> Result<Option<String>, Error> {
        let name = format!("{}.original.{p}.{pos}", c.name);
        if self.out.get(&name).is_some() {
            return Ok(Some(name));
        }
        let Some(oterm) = closed.blocks.get(p).and_then(|_| closed.terminator(p)) else {
            return Ok(None);
        };
        let params = &closed.blocks[p].params;
        let types = value_types(closed, params);
        let Some(&out) = terminator_values(&closed.insts[oterm].kind).get(pos) else {
            return Ok(None);
        };
        if types != value_types(c, &c.blocks[p].params) || closed.value_type(out) != Type::F64 {
            return Ok(None);
        }
        let sig = pinv_core::ir::Signature {
            params: types.clone(),
            returns: vec![Type::F64],
        };
        let mut g = Function::new(name.clone(), pinv_core::ir::FuncKind::Fn, sig);
        let entry = g.create_entry();
        let mut map: BTreeMap<Value, Value> = params
            .iter()
            .copied()
            .zip(g.blocks[entry].params.clone())
            .collect();
        copy_block(closed, p, &mut g, entry, &mut map)?;
        let r = pair_fwd(&map, out)?;
        g.ins_return(entry, vec![r], span_of(closed, p));
        self.add(g)?;
        Ok(Some(name))
    }
}

/// The step [`Reorienter::name_against_original`] names a block's carried value by.
#[derive(Clone, Copy)]
struct CarriedStep {
    /// The index of the one f64 parameter the block's region solves (one it does not pass on).
    param: usize,
    /// The one f64 value the block computes and passes on along the edge, and what the inverse
    /// holds for it.
    output: Value,
    held: Value,
    /// Where the terminator passes it ([`terminator_values`]).
    position: usize,
}

/// Block `p`'s [`CarriedStep`] along the edge whose values the inverse holds as `seed`: one f64
/// parameter solved, one f64 value computed and passed on; `None` otherwise.
fn carried_step(c: &Function, p: Block, seed: &[(Value, Value)]) -> Option<CarriedStep> {
    let params = &c.blocks[p].params;
    let passed = terminator_values(&c.insts[c.terminator(p)?].kind);
    let solved: Vec<usize> = (0..params.len())
        .filter(|&i| c.value_type(params[i]) == Type::F64 && !passed.contains(&params[i]))
        .collect();
    let computed: Vec<&(Value, Value)> = seed
        .iter()
        .filter(|(o, _)| c.value_type(*o) == Type::F64 && !params.contains(o))
        .collect();
    let ([param], [&(output, held)]) = (solved.as_slice(), computed.as_slice()) else {
        return None;
    };
    Some(CarriedStep {
        param: *param,
        output,
        held,
        position: passed.iter().position(|&v| v == output)?,
    })
}

/// A call of `helper` on `args` with argument `i` varying: the forward function of a run
/// search. The helper was added to the module just before ([`Reorienter::original_block_helper`]),
/// so the call is found; were it not, the search would see `x` itself and find no usable run.
fn call_varying<'a>(
    helper: &'a str,
    args: &'a [Value],
    i: usize,
) -> impl Fn(&mut pinv_primitives::Emitter<'_>, Value) -> Value + 'a {
    move |e, x| {
        let mut a = args.to_vec();
        a[i] = x;
        e.call(helper, &a).map_or(x, |r| r[0])
    }
}

/// What a terminator passes on, in order: a `return`'s values, a `jump`'s arguments, or a
/// branch's condition and then both sides' arguments.
fn terminator_values(k: &InstKind) -> Vec<Value> {
    match k {
        InstKind::Return { args } => args.to_vec(),
        InstKind::Jump { dest } => dest.args.to_vec(),
        InstKind::Brif {
            cond,
            then_dest,
            else_dest,
        } => std::iter::once(*cond)
            .chain(then_dest.args.iter().copied())
            .chain(else_dest.args.iter().copied())
            .collect(),
        _ => Vec::new(),
    }
}

/// The types of values `vs` of `f`.
fn value_types(f: &Function, vs: &[Value]) -> Vec<Type> {
    vs.iter().map(|&v| f.value_type(v)).collect()
}

/// The span of block `p`'s terminator in `f`, else the function's.
fn span_of(f: &Function, p: Block) -> Span {
    f.terminator(p).map_or(f.span, |t| f.insts[t].span)
}

/// The θ role of the choice of the edge a block was entered by, in the user's terms (the schema
/// adds the place: [`block_span`]).
fn entry_role(c: &Function, b: Block, loop_head: bool) -> String {
    let returns = c.ends_in_return(b);
    if loop_head {
        "control flow: whether the loop went round again here, or was entered".to_string()
    } else if returns {
        "control flow: which branch gave the returned value".to_string()
    } else {
        "control flow: which branch of an `if` reached this point".to_string()
    }
}

/// Where a block is in the source: its first instruction with a place, else its terminator's,
/// else the function's.
fn block_span(c: &Function, b: Block) -> Span {
    c.blocks[b]
        .insts
        .iter()
        .map(|&i| c.insts[i].span)
        .find(|s| *s != Span::default())
        .unwrap_or(c.span)
}

/// The domain error of a dispatch none of whose edges can bring its values, in the user's
/// terms: what the block is in their code (where the branches of the returned value meet, a
/// loop, or a merge after `if`), not its number.
fn no_way_in(c: &Function, b: Block, loop_head: bool) -> String {
    let returns = c.ends_in_return(b);
    if loop_head {
        format!(
            "neither entering a loop of `{}` nor going round it again brings these values",
            c.name
        )
    } else if returns {
        format!("no branch of `{}` returns this y", c.name)
    } else {
        format!(
            "no branch of `{}` that meets after an `if` brings these values",
            c.name
        )
    }
}

/// Splits a block's parameters into the step counter (in functions with loops) and the rest.
fn split_steps(cyclic: bool, params: &[Value]) -> (Option<Value>, &[Value]) {
    if cyclic {
        match params.split_first() {
            Some((&s, rest)) => (Some(s), rest),
            None => (None, params),
        }
    } else {
        (None, params)
    }
}

/// Gives a PGF that stashes records (`record_call`) but opens no frame of its own one frame
/// round its whole body: stashes belong to a frame. One segment reversed is itself.
fn frame_stashes(h: &mut Function) {
    let holds = h
        .insts_in_layout()
        .any(|(_, i)| matches!(h.insts[i].kind, InstKind::Segment(SegmentOp::Hold)));
    let Some(entry) = h.entry().filter(|_| holds) else {
        return;
    };
    for b in h.layout.clone() {
        if let Some(ret) = h.terminator(b).filter(|_| h.ends_in_return(b)) {
            let close = h.create_inst(InstKind::Segment(SegmentOp::Close), &[], h.insts[ret].span);
            let insts = &mut h.blocks[b].insts;
            insts.insert(insts.len() - 1, close);
        }
    }
    let open = h.create_inst(InstKind::Segment(SegmentOp::Open), &[], h.span);
    h.blocks[entry].insts.insert(0, open);
}

/// Where the isolation rewrote block `p` of `c`: runs the block's original code (from `closed`,
/// the original function in closed block form, block for block `c`'s) in the PGF block `at`,
/// and makes what `p` passes on, returns or branches on the original's values in `fwd`. The
/// rewritten code may round differently (`(p + p + p) · p` as `p² · 3`), and a loop after it,
/// walked back float for float from y, holds the function's values, not the rewritten ones:
/// from those the PGF named floats the inverse's runs do not hold. Blocks whose shapes do not
/// match are left as they are.
fn original_block_values(
    c: &Function,
    closed: &Function,
    p: Block,
    h: &mut Function,
    at: Block,
    fwd: &mut BTreeMap<Value, Value>,
) -> Result<(), Error> {
    let (Some(term), Some(oterm)) = (
        c.terminator(p),
        closed.blocks.get(p).and_then(|_| closed.terminator(p)),
    ) else {
        return Ok(());
    };
    let params = &c.blocks[p].params;
    let oparams = &closed.blocks[p].params;
    let (new, old) = (
        terminator_values(&c.insts[term].kind),
        terminator_values(&closed.insts[oterm].kind),
    );
    if value_types(c, params) != value_types(closed, oparams)
        || c.successors(p) != closed.successors(p)
        || value_types(c, &new) != value_types(closed, &old)
    {
        return Ok(());
    }
    let mut ofwd: BTreeMap<Value, Value> = BTreeMap::new();
    for (&o, q) in oparams.iter().zip(params) {
        ofwd.insert(o, pair_fwd(fwd, *q)?);
    }
    copy_block(closed, p, h, at, &mut ofwd)?;
    for (n, o) in new.into_iter().zip(old) {
        if params.contains(&n) {
            continue;
        }
        if let Some(&w) = ofwd.get(&o) {
            fwd.insert(n, w);
        }
    }
    Ok(())
}

/// Copies block `p`'s instructions (not its terminator) into helper `h` at `at`.
pub(super) fn copy_block(
    c: &Function,
    p: Block,
    h: &mut Function,
    at: Block,
    fwd: &mut BTreeMap<Value, Value>,
) -> Result<(), Error> {
    for &inst in &c.blocks[p].insts {
        let data = &c.insts[inst];
        if data.kind.is_terminator() {
            continue;
        }
        if data.kind.is_theta_related() {
            return Err(Error::Unsupported {
                function: c.name.clone(),
                reason: "it contains inverse-only instructions".to_string(),
                span: data.span,
            });
        }
        let mut kind = data.kind.clone();
        let mut missing = None;
        kind.map_args(|v| match fwd.get(&v) {
            Some(&w) => w,
            None => {
                missing = Some(v);
                v
            }
        });
        if let Some(v) = missing {
            return Err(Error::Internal(format!("{v} is used before it is defined")));
        }
        let types: Vec<Type> = data.results.iter().map(|&r| c.value_type(r)).collect();
        let new = h.append_inst(at, kind, &types, data.span);
        for (&r, &n) in data.results.iter().zip(&h.insts[new].results.clone()) {
            fwd.insert(r, n);
        }
    }
    Ok(())
}

/// A bool value: whether `v` is the f64 constant `c`, within `tolerance` relative (absolute
/// below magnitude 1), as every f64 check in an inverse compares: values the inverse computes
/// backwards carry rounding (a sum taken apart term by term ends near 0, not at 0), and an
/// exact comparison would turn them away from the edge the forward run took.
fn near_constant(
    f: &mut Function,
    at: Block,
    v: Value,
    c: f64,
    tolerance: f64,
    span: Span,
) -> Value {
    let k = f.ins_const(at, Const::F64(c), span);
    if c.is_nan() {
        return f.ins_prim(at, Opcode::Fne, vec![v, v], span);
    }
    let exact = f.ins_prim(at, Opcode::Feq, vec![v, k], span);
    if !c.is_finite() {
        return exact;
    }
    let diff = f.ins_prim(at, Opcode::Fsub, vec![v, k], span);
    let diff = f.ins_prim(at, Opcode::Fabs, vec![diff], span);
    let bound = f.ins_const(at, Const::F64(tolerance * c.abs().max(1.0)), span);
    let near = f.ins_prim(at, Opcode::Fle, vec![diff, bound], span);
    f.ins_prim(at, Opcode::Bor, vec![exact, near], span)
}

/// A bool value: whether the facts hold of `values` (f64 values within `tolerance`).
fn facts_hold(
    f: &mut Function,
    at: Block,
    facts: &[Fact],
    values: &[Value],
    tolerance: f64,
    span: Span,
) -> Value {
    let mut all = f.ins_const(at, Const::Bool(true), span);
    for fact in facts {
        let holds = match fact {
            Fact::In(k, set) => {
                let v = values[*k];
                let mut any = f.ins_const(at, Const::Bool(false), span);
                for &c in set {
                    let eq = match c {
                        Const::F64(x) => near_constant(f, at, v, x, tolerance, span),
                        _ => {
                            let k = f.ins_const(at, c, span);
                            let op = match c.ty() {
                                Type::I64 => Opcode::Ieq,
                                _ => Opcode::Beq,
                            };
                            f.ins_prim(at, op, vec![v, k], span)
                        }
                    };
                    any = f.ins_prim(at, Opcode::Bor, vec![any, eq], span);
                }
                any
            }
            Fact::AtLeast(k, a) => {
                let bound = f.ins_const(at, Const::I64(*a), span);
                f.ins_prim(at, Opcode::Ige, vec![values[*k], bound], span)
            }
            Fact::AtMost(k, a) => {
                let bound = f.ins_const(at, Const::I64(*a), span);
                f.ins_prim(at, Opcode::Ile, vec![values[*k], bound], span)
            }
            Fact::Within(k, lo, hi) => {
                // Within the interval widened by the tolerance (values computed backwards
                // carry rounding), or NaN, which no interval holds.
                let v = values[*k];
                let slack = |b: f64| tolerance * b.abs().max(1.0);
                let nan = f.ins_prim(at, Opcode::Fne, vec![v, v], span);
                let mut within = f.ins_const(at, Const::Bool(true), span);
                if lo.is_finite() {
                    let b = f.ins_const(at, Const::F64(lo - slack(*lo)), span);
                    let ge = f.ins_prim(at, Opcode::Fge, vec![v, b], span);
                    within = f.ins_prim(at, Opcode::Band, vec![within, ge], span);
                }
                if hi.is_finite() {
                    let b = f.ins_const(at, Const::F64(hi + slack(*hi)), span);
                    let le = f.ins_prim(at, Opcode::Fle, vec![v, b], span);
                    within = f.ins_prim(at, Opcode::Band, vec![within, le], span);
                }
                f.ins_prim(at, Opcode::Bor, vec![nan, within], span)
            }
        };
        all = f.ins_prim(at, Opcode::Band, vec![all, holds], span);
    }
    all
}

/// Ends `at` by going to one of `targets` (each with `payload` as arguments): by the facts when
/// they exclude each other, else to the only target whose facts hold, else by a `choice` that
/// must pick a target whose facts hold.
#[allow(clippy::too_many_arguments)]
fn emit_dispatch(
    f: &mut Function,
    at: Block,
    targets: &[Block],
    payload: &[Value],
    values: &[Value],
    facts: &[Vec<Fact>],
    guards: &[Option<(FuncId, Vec<Value>)>],
    role: &str,
    none_reason: &str,
    tolerance: f64,
    span: Span,
) {
    let go = |f: &mut Function, from: Block, target: Block| {
        f.ins_jump(from, target, payload.to_vec(), span);
    };
    match targets {
        [] => {
            let reason = none_reason.to_string();
            f.ins_void(at, InstKind::Fail { reason }, span);
            return;
        }
        [only] => {
            go(f, at, *only);
            return;
        }
        _ => {}
    }
    let conds = conditions(f, at, facts, guards, values, tolerance, span);
    // Tests the conditions in order, taking the first that holds, failing if none does.
    let chain = |f: &mut Function, mut from: Block, conds: &[Value]| {
        for (i, &target) in targets.iter().enumerate() {
            let next = f.create_block();
            f.ins_void(
                from,
                InstKind::Brif {
                    cond: conds[i],
                    then_dest: Box::new(BlockCall::new(target, payload.to_vec())),
                    else_dest: Box::new(BlockCall::new(next, Vec::new())),
                },
                span,
            );
            from = next;
        }
        f.ins_void(
            from,
            InstKind::Fail {
                reason: none_reason.to_string(),
            },
            span,
        );
    };
    if all_exclusive(facts) {
        chain(f, at, &conds);
        return;
    }
    let many = several_hold(f, at, &conds, span);
    let (decided, chosen) = (f.create_block(), f.create_block());
    f.ins_void(
        at,
        InstKind::Brif {
            cond: many,
            then_dest: Box::new(BlockCall::new(chosen, Vec::new())),
            else_dest: Box::new(BlockCall::new(decided, Vec::new())),
        },
        span,
    );
    chain(f, decided, &conds);
    // θ picks among the possible targets. A `choice` gives only values in its range, so the
    // last target is what is left when θ named none before it.
    let k = f.ins_choice(chosen, targets.len() as u32, role.to_string(), span);
    let mut from = chosen;
    for (i, &target) in targets.iter().enumerate() {
        let check = if i + 1 == targets.len() {
            from
        } else {
            let (check, next) = (f.create_block(), f.create_block());
            let idx = f.ins_const(from, Const::I64(i as i64), span);
            let is = f.ins_prim(from, Opcode::Ieq, vec![k, idx], span);
            f.ins_void(
                from,
                InstKind::Brif {
                    cond: is,
                    then_dest: Box::new(BlockCall::new(check, Vec::new())),
                    else_dest: Box::new(BlockCall::new(next, Vec::new())),
                },
                span,
            );
            from = next;
            check
        };
        f.ins_void(
            check,
            InstKind::Check {
                cond: conds[i],
                reason: format!("θ chose a path ({role}: {i}) that cannot bring these values"),
            },
            span,
        );
        go(f, check, target);
    }
}

/// For each target: whether its facts hold of `values` and, if it has a guard, whether the guard
/// lets it through.
fn conditions(
    f: &mut Function,
    at: Block,
    facts: &[Vec<Fact>],
    guards: &[Option<(FuncId, Vec<Value>)>],
    values: &[Value],
    tolerance: f64,
    span: Span,
) -> Vec<Value> {
    facts
        .iter()
        .enumerate()
        .map(|(i, fs)| {
            let holds = facts_hold(f, at, fs, values, tolerance, span);
            match guards.get(i).cloned().flatten() {
                Some((guard, args)) => {
                    let passes = f.ins_call(at, guard, args, &[Type::Bool], span)[0];
                    f.ins_prim(at, Opcode::Band, vec![holds, passes], span)
                }
                None => holds,
            }
        })
        .collect()
}

/// A bool value: whether two or more of `conds` hold (then the inverse reads a choice, and the
/// PGF records one).
fn several_hold(f: &mut Function, at: Block, conds: &[Value], span: Span) -> Value {
    // Of two, both: a conjunction, from which the implied checks know each (the checks of the
    // target θ picks then go).
    if let [a, b] = conds {
        return f.ins_prim(at, Opcode::Band, vec![*a, *b], span);
    }
    let mut count = f.ins_const(at, Const::I64(0), span);
    for &c in conds {
        let one = f.ins_prim(at, Opcode::BoolToI64, vec![c], span);
        count = f.ins_prim(at, Opcode::Iadd, vec![count, one], span);
    }
    let two = f.ins_const(at, Const::I64(2), span);
    f.ins_prim(at, Opcode::Ige, vec![count, two], span)
}

/// In a PGF helper at `at`: records `index` (the target the forward run took) if the inverse's
/// dispatch over these facts will read a choice for `values`. Returns where the helper continues.
#[allow(clippy::too_many_arguments)]
fn emit_record_choice(
    f: &mut Function,
    at: Block,
    values: &[Value],
    facts: &[Vec<Fact>],
    guards: &[Option<(FuncId, Vec<Value>)>],
    index: Value,
    role: &str,
    tolerance: f64,
    span: Span,
) -> Block {
    if facts.len() < 2 || all_exclusive(facts) {
        return at;
    }
    let conds = conditions(f, at, facts, guards, values, tolerance, span);
    let many = several_hold(f, at, &conds, span);
    let (record, after) = (f.create_block(), f.create_block());
    f.ins_void(
        at,
        InstKind::Brif {
            cond: many,
            then_dest: Box::new(BlockCall::new(record, Vec::new())),
            else_dest: Box::new(BlockCall::new(after, Vec::new())),
        },
        span,
    );
    f.ins_record(record, index, role.to_string(), span);
    f.ins_jump(record, after, Vec::new(), span);
    after
}

/// The guard of inverse block `target`: a copy of the θ-free code the inverse runs from
/// `target` on, with every `check` turned into "return false", so it tells, without θ, whether
/// `target` can be taken with these values. What θ (or a call) gives is unknown to it: code that
/// needs an unknown value is left out and a check of one passes, and the walk goes on for the
/// checks that need only known values (a loop's test further back). Branches on known values
/// are followed on both sides, each copied up to where the sides join and joined there when
/// they know the same values (else each side goes on alone); branches on unknown values and
/// small loops that only come back to their head (a rule's search) are stepped over, their
/// results unknown. A path ends at a `return` (passes), a `fail`, or a block it has seen, or
/// when the budget of copied instructions runs out (passes). `shell` is the reserved function
/// (name, kind, signature) to fill; for a start block its first parameters are y.
/// Instructions a guard copies at most (paths through branches are copied separately).
const GUARD_BUDGET: usize = 2000;

/// The state of [`extract_guard`]'s walk.
struct GuardWalk<'a> {
    inv: &'a Function,
    g: &'a mut Function,
    shapes: &'a mut BranchShapes,
    /// The guard's block that returns false.
    no: Block,
    budget: usize,
    /// The helpers of pieces the rules outlined ([`pinv_primitives::Emitter::outlined`]): a
    /// call of one is code like any other (no θ, no check), which the guard copies.
    pieces: &'a FxHashSet<FuncId>,
}

/// Where a walk that stops at a join arrived: the guard block it ended in, what it knew, and
/// the guard values of the join's arguments (`None`: not known).
type Arrival = (Block, FxHashMap<Value, Value>, Vec<Option<Value>>);

impl GuardWalk<'_> {
    /// Copies the θ-free code from inverse block `block` on, into guard block `cur`, with `map`
    /// from inverse values to guard values; `visited` are the inverse blocks on this path. A
    /// walk given a `stop` block returns where it arrives at it (a branch's side, up to the
    /// join); every other end of a path is written out (returning true or false).
    fn path(
        &mut self,
        mut cur: Block,
        mut block: Block,
        mut map: FxHashMap<Value, Value>,
        mut visited: FxHashSet<Block>,
        stop: Option<Block>,
    ) -> Option<Arrival> {
        let span = Span::default();
        let inv = self.inv;
        let pass = 'walk: loop {
            for &inst in &inv.blocks[block].insts {
                if self.budget == 0 {
                    break 'walk true;
                }
                self.budget -= 1;
                let data = &inv.insts[inst];
                let mapped = |v: &Value| map.get(v).copied();
                match &data.kind {
                    InstKind::Const(k) => {
                        let v = self.g.ins_const(cur, *k, data.span);
                        map.insert(data.results[0], v);
                    }
                    InstKind::Prim { op, args } => {
                        // An operand the guard does not know (θ went into it) leaves the
                        // result unknown; the walk goes on, for the checks that do not need it.
                        if let Some(args) = args.iter().map(mapped).collect::<Option<Vec<_>>>() {
                            let v = self.g.ins_prim(cur, *op, args, data.span);
                            map.insert(data.results[0], v);
                        }
                    }
                    InstKind::Check { cond, .. } => {
                        // A check of an unknown value may pass.
                        let Some(c) = mapped(cond) else {
                            continue;
                        };
                        let next = self.g.create_block();
                        self.g.ins_void(
                            cur,
                            InstKind::Brif {
                                cond: c,
                                then_dest: Box::new(BlockCall::new(next, Vec::new())),
                                else_dest: Box::new(BlockCall::new(self.no, Vec::new())),
                            },
                            data.span,
                        );
                        cur = next;
                    }
                    InstKind::Call { callee, args } if self.pieces.contains(callee) => {
                        if let Some(args) = args.iter().map(mapped).collect::<Option<Vec<_>>>() {
                            let types: Vec<Type> =
                                data.results.iter().map(|&r| inv.value_type(r)).collect();
                            let vs = self.g.ins_call(cur, *callee, args, &types, data.span);
                            for (&r, v) in data.results.iter().zip(vs) {
                                map.insert(r, v);
                            }
                        }
                    }
                    // θ and other calls give values the guard does not know (a call may also
                    // fail, which a guard may overlook: it only tells when a path cannot pass).
                    InstKind::Theta(_) | InstKind::Choice { .. } | InstKind::Call { .. } => {}
                    InstKind::Jump { dest } => {
                        let args: Vec<Option<Value>> = dest.args.iter().map(mapped).collect();
                        if Some(dest.block) == stop {
                            return Some((cur, map, args));
                        }
                        if !visited.insert(dest.block) {
                            break 'walk true;
                        }
                        bind(&mut map, &inv.blocks[dest.block].params, args);
                        block = dest.block;
                        continue 'walk;
                    }
                    InstKind::Brif {
                        cond,
                        then_dest,
                        else_dest,
                    } => {
                        // A loop that only comes back here (the search of a run of floats) is
                        // stepped over: the walk goes on after it, with its results unknown.
                        let exit = match self.shapes.of(block, then_dest, else_dest) {
                            BranchShape::LoopExit(exit) => Some((exit, None)),
                            // Two sides that meet again: where the condition is unknown,
                            // both are stepped over; where it is known, each side is
                            // copied up to the join, once.
                            BranchShape::Join(join) => Some((join, mapped(cond))),
                            BranchShape::Apart => None,
                        };
                        let Some((next, known_cond)) = exit else {
                            let Some(c) = mapped(cond) else {
                                break 'walk true;
                            };
                            if stop.is_some() {
                                // Sides that never meet again inside a side: not followed.
                                break 'walk true;
                            }
                            self.both_sides(cur, c, (then_dest, else_dest), &map, &visited);
                            return None;
                        };
                        if Some(next) == stop || !visited.insert(next) {
                            break 'walk true;
                        }
                        match known_cond {
                            None => {
                                for q in &inv.blocks[next].params {
                                    map.remove(q);
                                }
                            }
                            Some(c) => {
                                let (join, params) = self.diamond(
                                    cur,
                                    c,
                                    (then_dest, else_dest),
                                    next,
                                    &map,
                                    &visited,
                                    stop,
                                )?;
                                cur = join;
                                bind(&mut map, &inv.blocks[next].params, params);
                            }
                        }
                        block = next;
                        continue 'walk;
                    }
                    InstKind::Fail { .. } => break 'walk false,
                    // A return: the path passes.
                    _ => break 'walk true,
                }
            }
            // A block without a terminator cannot be reached in a verified function.
            break true;
        };
        if pass {
            let t = self.g.ins_const(cur, Const::Bool(true), span);
            self.g.ins_return(cur, vec![t], span);
        } else {
            self.g.ins_jump(cur, self.no, Vec::new(), span);
        }
        None
    }

    /// Ends guard block `cur` with a branch on `c` to two new blocks: (`then`, `else`).
    fn branch(&mut self, cur: Block, c: Value) -> (Block, Block) {
        let (t, e) = (self.g.create_block(), self.g.create_block());
        self.g.ins_void(
            cur,
            InstKind::Brif {
                cond: c,
                then_dest: Box::new(BlockCall::new(t, Vec::new())),
                else_dest: Box::new(BlockCall::new(e, Vec::new())),
            },
            Span::default(),
        );
        (t, e)
    }

    /// Branches on `c` in guard block `cur` and follows each side to its own end.
    fn both_sides(
        &mut self,
        cur: Block,
        c: Value,
        (then_dest, else_dest): (&BlockCall, &BlockCall),
        map: &FxHashMap<Value, Value>,
        visited: &FxHashSet<Block>,
    ) {
        let span = Span::default();
        let (t, e) = self.branch(cur, c);
        for (arm, dest) in [(t, then_dest), (e, else_dest)] {
            let mut seen = visited.clone();
            if !seen.insert(dest.block) {
                let yes = self.g.ins_const(arm, Const::Bool(true), span);
                self.g.ins_return(arm, vec![yes], span);
                continue;
            }
            let mut m = map.clone();
            let args: Vec<Option<Value>> = dest.args.iter().map(|a| map.get(a).copied()).collect();
            bind(&mut m, &self.inv.blocks[dest.block].params, args);
            self.path(arm, dest.block, m, seen, None);
        }
    }

    /// Branches on `c` in guard block `cur`, copies each side up to inverse block `join`, and
    /// joins them in a new guard block: that block and the guard values of `join`'s parameters
    /// (known where every side that arrives gives a known value), or `None` where no side
    /// arrives (each ended on its own). Outside any other branch's side (`stop` is `None`), sides
    /// that know different things are not joined: each goes on alone (and `None`).
    #[allow(clippy::too_many_arguments)]
    fn diamond(
        &mut self,
        cur: Block,
        c: Value,
        (then_dest, else_dest): (&BlockCall, &BlockCall),
        join: Block,
        map: &FxHashMap<Value, Value>,
        visited: &FxHashSet<Block>,
        stop: Option<Block>,
    ) -> Option<(Block, Vec<Option<Value>>)> {
        let span = Span::default();
        let (t, e) = self.branch(cur, c);
        let mut arrivals: Vec<(Block, Vec<Option<Value>>)> = Vec::new();
        for (arm, dest) in [(t, then_dest), (e, else_dest)] {
            let args: Vec<Option<Value>> = dest.args.iter().map(|a| map.get(a).copied()).collect();
            if dest.block == join {
                arrivals.push((arm, args));
                continue;
            }
            let mut seen = visited.clone();
            seen.insert(dest.block);
            let mut m = map.clone();
            bind(&mut m, &self.inv.blocks[dest.block].params, args);
            if let Some((end, _, args)) = self.path(arm, dest.block, m, seen, Some(join)) {
                arrivals.push((end, args));
            }
        }
        if arrivals.is_empty() {
            return None;
        }
        let n = self.inv.blocks[join].params.len();
        let known: Vec<usize> = (0..n)
            .filter(|&i| {
                arrivals
                    .iter()
                    .all(|(_, a)| a.get(i).copied().flatten().is_some())
            })
            .collect();
        let some_known = |i: usize| {
            arrivals
                .iter()
                .any(|(_, a)| a.get(i).copied().flatten().is_some())
        };
        if stop.is_none()
            && arrivals.len() > 1
            && (0..n).any(|i| !known.contains(&i) && some_known(i))
        {
            // One side knows what the other does not (`ok ? d : d + θ`): joining would forget
            // it, so each side goes on alone, as far as the walk goes.
            for (end, args) in arrivals {
                let mut m = map.clone();
                bind(&mut m, &self.inv.blocks[join].params, args);
                let mut seen = visited.clone();
                seen.insert(join);
                self.path(end, join, m, seen, None);
            }
            return None;
        }
        let g_join = self.g.create_block();
        let mut params = vec![None; n];
        for &i in &known {
            let ty = self.inv.value_type(self.inv.blocks[join].params[i]);
            params[i] = Some(self.g.append_block_param(g_join, ty));
        }
        for (end, args) in arrivals {
            let pass: Vec<Value> = known.iter().filter_map(|&i| args[i]).collect();
            self.g.ins_jump(end, g_join, pass, span);
        }
        Some((g_join, params))
    }
}

/// What a guard walk does at a block's closing branch, which depends only on the inverse:
/// worked out once per inverse, for all its guards (each walks up to [`GUARD_BUDGET`]
/// instructions, mostly through the same branches as the guards of its neighbours).
#[derive(Clone, Copy)]
enum BranchShape {
    /// A small loop that only comes back (see [`loop_exit`]), left at this block.
    LoopExit(Block),
    /// Two sides that meet again here (see [`join_of`]).
    Join(Block),
    /// Neither.
    Apart,
}

/// The [`BranchShape`]s of an inverse's branches, by the block they close, and the inverse's
/// control-flow graph as their searches read it ([`FlatCfg`]).
struct BranchShapes {
    known: FxHashMap<Block, BranchShape>,
    cfg: FlatCfg,
}

impl BranchShapes {
    fn new(inv: &Function) -> BranchShapes {
        BranchShapes {
            known: FxHashMap::default(),
            cfg: FlatCfg::new(inv),
        }
    }

    fn of(&mut self, block: Block, then_dest: &BlockCall, else_dest: &BlockCall) -> BranchShape {
        let cfg = &mut self.cfg;
        *self.known.entry(block).or_insert_with(|| {
            if let Some(exit) = loop_exit(cfg, block, then_dest.block, else_dest.block) {
                BranchShape::LoopExit(exit)
            } else {
                join_of(cfg, block, then_dest.block, else_dest.block)
                    .map_or(BranchShape::Apart, BranchShape::Join)
            }
        })
    }
}

/// An inverse's control-flow graph in flat tables for the branch-shape searches, which run once
/// per branch a guard meets (tens of thousands in a large inverse, each visiting up to a
/// thousand blocks): each block's successors in order and whether it returns, read without
/// going through the block's instructions, and sets of visited blocks kept as marks that a new
/// search starts afresh by taking a new stamp, not by clearing.
struct FlatCfg {
    /// Each block's successors, in order; [`FlatCfg::NONE`] past the last.
    succ: Vec<[u32; 2]>,
    returns: Vec<bool>,
    /// Two sets of blocks: `marks[k][b] == stamp` holds `b` in set `k`.
    marks: [Vec<u32>; 2],
    stamp: u32,
}

impl FlatCfg {
    const NONE: u32 = u32::MAX;

    fn new(f: &Function) -> FlatCfg {
        let n = f.blocks.len();
        let mut succ = vec![[Self::NONE; 2]; n];
        let mut returns = vec![false; n];
        for (b, out) in f.blocks.keys().zip(succ.iter_mut()) {
            for (slot, s) in out.iter_mut().zip(f.successors(b)) {
                *slot = s.as_u32();
            }
            returns[b.as_u32() as usize] = f.ends_in_return(b);
        }
        FlatCfg {
            succ,
            returns,
            marks: [vec![0; n], vec![0; n]],
            stamp: 0,
        }
    }

    /// Starts two new, empty sets.
    fn fresh(&mut self) {
        if self.stamp == u32::MAX {
            for m in &mut self.marks {
                m.fill(0);
            }
            self.stamp = 0;
        }
        self.stamp += 1;
    }

    /// Puts `b` in set `k`; whether it was not there.
    fn insert(&mut self, k: usize, b: Block) -> bool {
        let m = &mut self.marks[k][b.as_u32() as usize];
        let new = *m != self.stamp;
        *m = self.stamp;
        new
    }

    fn contains(&self, k: usize, b: Block) -> bool {
        self.marks[k][b.as_u32() as usize] == self.stamp
    }

    fn successors(&self, b: Block) -> impl Iterator<Item = Block> {
        self.succ[b.as_u32() as usize]
            .into_iter()
            .take_while(|&s| s != Self::NONE)
            .map(Block::from_u32)
    }

    fn ends_in_return(&self, b: Block) -> bool {
        self.returns[b.as_u32() as usize]
    }
}

/// Binds inverse block parameters `params` to guard values `args` in `map` (an unknown one is
/// unbound).
fn bind(map: &mut FxHashMap<Value, Value>, params: &[Value], args: Vec<Option<Value>>) {
    for (&q, a) in params.iter().zip(args) {
        match a {
            Some(v) => map.insert(q, v),
            None => map.remove(&q),
        };
    }
}

/// Where the two sides of the branch ending block `branch`, starting at `a` and `b`, meet again:
/// the first block both reach without going back through `branch` (so that a loop round the
/// whole branch does not make the other side look like a join; for the structured branches rules
/// write, the join), provided neither side can reach a `return` before it. Branches of up to 1,024 blocks
/// a side.
fn join_of(cfg: &mut FlatCfg, branch: Block, a: Block, b: Block) -> Option<Block> {
    const MAX_BLOCKS: usize = 1024;
    if a == b {
        return Some(a);
    }
    // Whether no block `from` reaches without going through `stop` returns (and at most
    // `MAX_BLOCKS` are reached), breadth first.
    let reach = |cfg: &mut FlatCfg, from: Block, stop: Block| -> Option<()> {
        cfg.fresh();
        cfg.insert(0, from);
        let mut seen = 1;
        let mut order = vec![from];
        let mut i = 0;
        while let Some(&x) = order.get(i) {
            i += 1;
            if x == stop {
                continue;
            }
            if cfg.ends_in_return(x) {
                return None;
            }
            for s in cfg.successors(x) {
                if cfg.insert(0, s) {
                    seen += 1;
                    if seen > MAX_BLOCKS {
                        return None;
                    }
                    order.push(s);
                }
            }
        }
        Some(())
    };
    // Both sides breadth first, a block at a time each, until one reaches a block the other
    // has seen: the join is near both, however far the code after it goes.
    cfg.fresh();
    cfg.insert(0, a);
    cfg.insert(1, b);
    let mut seen = [1, 1];
    let mut queue = [
        std::collections::VecDeque::from([a]),
        std::collections::VecDeque::from([b]),
    ];
    let join = 'search: loop {
        let mut moved = false;
        for side in 0..2 {
            let Some(x) = queue[side].pop_front() else {
                continue;
            };
            moved = true;
            for s in cfg.successors(x) {
                if s == branch {
                    continue;
                }
                if cfg.contains(1 - side, s) {
                    break 'search s;
                }
                if cfg.insert(side, s) {
                    seen[side] += 1;
                    if seen[side] > MAX_BLOCKS {
                        return None;
                    }
                    queue[side].push_back(s);
                }
            }
        }
        if !moved {
            return None;
        }
    };
    // Neither side returns before the join.
    reach(cfg, a, join)?;
    reach(cfg, b, join)?;
    Some(join)
}

/// Where a loop headed by `header` exits, when `header` ends in a branch one of whose sides
/// (`then` or `else`) can only come back to `header` or fail (it reaches no `return` and no
/// block it cannot come back from): the other side's block call. Small loops only (64 blocks),
/// the kind rules write ([`pinv_primitives::Emitter::while_loop`]).
fn loop_exit(cfg: &mut FlatCfg, header: Block, then: Block, other: Block) -> Option<Block> {
    const MAX_BLOCKS: usize = 64;
    let only_back = |cfg: &mut FlatCfg, from: Block| -> bool {
        cfg.fresh();
        cfg.insert(0, from);
        let mut seen = 1;
        let mut work = vec![from];
        let mut back = false;
        while let Some(b) = work.pop() {
            if cfg.ends_in_return(b) {
                return false;
            }
            for s in cfg.successors(b) {
                if s == header {
                    back = true;
                } else if cfg.insert(0, s) {
                    seen += 1;
                    if seen > MAX_BLOCKS {
                        return false;
                    }
                    work.push(s);
                }
            }
        }
        back
    };
    if then != header && only_back(cfg, then) {
        Some(other)
    } else if other != header && only_back(cfg, other) {
        Some(then)
    } else {
        None
    }
}

fn extract_guard(
    inv: &Function,
    target: Block,
    is_start: bool,
    shell: Function,
    shapes: &mut BranchShapes,
    pieces: &FxHashSet<FuncId>,
) -> Function {
    let mut g = Function::new(shell.name, shell.kind, shell.sig);
    let entry = g.create_entry();
    let params = g.blocks[entry].params.clone();
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    let mut rest = params.as_slice();
    if is_start {
        if let Some(inv_entry) = inv.entry() {
            let ys = &inv.blocks[inv_entry].params;
            for (&y, &p) in ys.iter().zip(rest) {
                map.insert(y, p);
            }
            rest = &rest[ys.len().min(rest.len())..];
        }
    }
    for (&q, &p) in inv.blocks[target].params.iter().zip(rest) {
        map.insert(q, p);
    }
    let span = Span::default();
    let no = g.create_block();
    let f = g.ins_const(no, Const::Bool(false), span);
    g.ins_return(no, vec![f], span);
    let mut walk = GuardWalk {
        inv,
        g: &mut g,
        shapes,
        no,
        budget: GUARD_BUDGET,
        pieces,
    };
    walk.path(entry, target, map, FxHashSet::from_iter([target]), None);
    g.remove_unreachable_blocks();
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::ir::read::parse_function;

    fn value(f: &Function, block: u32, param: usize) -> (Block, Value) {
        let b = Block::from_u32(block);
        (b, f.blocks[b].params[param])
    }

    /// A value passed on through jumps and through both sides of a branch is returned as the
    /// output it reaches; one that a side changes, or that only one path returns, is not; and a
    /// loop that passes it round forever ends within the budget.
    #[test]
    fn a_value_passed_on_to_a_return_is_returned_as_its_output() {
        let module = parse_function(
            "function %f(x: f64, c: bool) -> (f64, f64) {
             block0(v0: f64, v1: bool):
                 jump block1(v0, v0)
             block1(v2: f64, v3: f64):
                 brif v1, block2(v2, v3), block3(v2, v3)
             block2(v4: f64, v5: f64):
                 v6 = fneg v5
                 jump block4(v4, v6)
             block3(v7: f64, v8: f64):
                 jump block4(v7, v8)
             block4(v9: f64, v10: f64):
                 return v10, v9
             }",
        )
        .expect("parses");
        let f = &module.functions[FuncId::from_u32(0)];
        let (b, v) = value(f, 1, 0);
        assert_eq!(returned_as(f, b, v), Some(1));
        let (b, v) = value(f, 4, 1);
        assert_eq!(returned_as(f, b, v), Some(0));
        // One side negates it: not returned unchanged on every path.
        let (b, v) = value(f, 1, 1);
        assert_eq!(returned_as(f, b, v), None);
        let looping = parse_function(
            "function %g(x: f64, c: bool) -> f64 {
             block0(v0: f64, v1: bool):
                 jump block1(v0)
             block1(v2: f64):
                 brif v1, block1(v2), block2(v2)
             block2(v3: f64):
                 brif v1, block1(v3), block2(v3)
             }",
        )
        .expect("parses");
        let g = &looping.functions[FuncId::from_u32(0)];
        let (b, v) = value(g, 1, 0);
        assert_eq!(returned_as(g, b, v), None);
    }
}
