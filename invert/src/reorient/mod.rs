//! Reorientation: a forward function → its inverse and its PGF, as IR functions.
//!
//! For `f: X → Y` the pass builds, in one walk so that they agree by construction:
//! - `f.inv` (`FuncKind::GeneratedInverse`): Y in, X out, reading θ from the tape;
//! - `f.pgf` (`FuncKind::GeneratedPgf`): X in, recording the θ tape that makes `f.inv` give X
//!   back (a loop as a loop, ordering its θ with `segment`s when `f` has control flow), and
//!   returning f(X), so that a caller's PGF runs a call once (`region.rs`, `record_call`).
//!
//! The function is first put in closed block form (`pinv_core::ir::closed`), so that each block is a
//! straight-line function of its parameters. The inverse then walks the control-flow graph
//! backwards (`blocks.rs`): it picks the `return` that produced y, inverts that block (`region.rs`),
//! and at the start of every block picks the edge it was entered by, passing the block's
//! parameters back as the predecessor's outgoing arguments, until it reaches the entry block,
//! whose parameters are the inputs. A pick is computed from facts about the values along each
//! edge (`facts.rs`) when they decide it, and read from θ (`choice`) when they do not. A loop
//! whose trip count a forward scan can find (`trips.rs`) is skipped: the scan gives its values
//! where it was entered.
//!
//! Code the inverse runs over its own results (a recursive function, a loop walked back) settles
//! its f64 steps exactly ([`pinv_primitives::EmitOptions::exact_floats`]): θ names the float
//! among those that give a step's output, because walking back amplifies each step's rounding.
//!
//! Before all that, recomputations are merged (CSE), because `(x + 1, exp(x + 1))` uses `x` twice
//! while `let v = x + 1; (v, exp(v))` does not. A rule for the function itself in the overlay
//! stack (a declared `inverse`, a user layer) is used instead of its body.

mod blocks;
mod facts;
mod int_ranges;
mod ranges;
mod recursion;
mod region;
mod trips;

use crate::deadline::Deadline;
use crate::egraph::config::RecursionAsLoop;
use crate::error::Error;
use pinv_core::ir::{FuncId, FuncKind, Function, InstKind, Module, Signature};
use pinv_core::Span;
use pinv_primitives::{Arg, Callee, EmitOptions, InverseRule, LayerStamp, Pattern, Stack};
use region::{rule_error, Region};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub use pinv_core::ir::closed::close_blocks;

/// Options of the reorientation pass.
#[derive(Clone, Debug, PartialEq)]
pub struct ReorientOptions {
    /// What rules emit (the tolerance of consistency checks).
    pub emit: EmitOptions,
    /// How many loop iterations the inverse may walk back over before it reports a domain error.
    pub iteration_limit: i64,
    /// E-graph isolation of reused unknowns before inverting, and simplification after
    /// ([`crate::egraph`]); on by default.
    pub isolation: crate::egraph::IsolationConfig,
    /// Keep every step's own precision check (`θ loses precision: fadd of the solution is not
    /// the output`) in the inverse. Off by default: the inverse checks `f(x) = y` before it
    /// returns, which is what makes it sound, so a step check only names the step where a θ went
    /// wrong earlier and at a cost on every run. The dispatch guards keep the step checks they
    /// decide by either way, so this changes no choice, only which θ fail and with what reason.
    pub step_checks: bool,
    /// The most IR instructions the forward functions being inverted (the function and every
    /// function it calls) may have together; a larger program is refused with an error that
    /// says so, before any work. Inversion takes time and memory in proportion to it: on the
    /// 2-core machine, 0.1–0.5 ms and 10–40 KB per instruction (a chain of 10⁵ statements,
    /// 200,000 instructions, in 19 s and 2.2 GB without its PGF, 38 s and 4.9 GB with it).
    /// [`DEFAULT_MAX_INSTRUCTIONS`] by default.
    pub max_instructions: usize,
    /// How long building the inverse may take (none by default): past it, the build ends in
    /// [`Error::TimedOut`]. It cannot change the code of a build that finishes, so it is not
    /// part of the cache key.
    pub time_limit: Option<std::time::Duration>,
    /// Leave the PGFs' code out (off by default): the rules write only inverse code, and each
    /// PGF is a stub that fails ([`Inversion::pgf_built`] is false). Building takes up to a
    /// third less time and memory (least for branchy code, whose PGF is mostly the choices it
    /// records) for what never runs a PGF (`pinv invert`, `sample`,
    /// `plot`); [`crate::Inverse`] builds them when one is first needed, by inverting again with
    /// this off. Where the PGFs are needed to finish the inverse (an inverse that reads a θ
    /// it does not use, which goes together with its PGF's record), this is ignored.
    pub lazy_pgf: bool,
}

impl ReorientOptions {
    /// Feeds every option that can change the generated code to `h` (the code cache's key).
    /// Every field is named, so a new option cannot be left out of the key unnoticed.
    pub fn hash_key(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        let ReorientOptions {
            emit:
                EmitOptions {
                    tolerance,
                    exact_floats,
                    wide_runs,
                    outline_settles,
                },
            iteration_limit,
            isolation,
            step_checks,
            max_instructions,
            time_limit: _,
            lazy_pgf,
        } = self;
        tolerance.to_bits().hash(h);
        exact_floats.hash(h);
        wide_runs.hash(h);
        outline_settles.hash(h);
        iteration_limit.hash(h);
        step_checks.hash(h);
        max_instructions.hash(h);
        lazy_pgf.hash(h);
        let crate::egraph::IsolationConfig {
            enabled,
            node_limit,
            iter_limit,
            run_time_limit,
            function_time_limit,
            max_pivots,
            families,
            numeric,
            simplify,
            check_points,
            check_tolerance,
            seed,
        } = isolation;
        (
            enabled,
            node_limit,
            iter_limit,
            run_time_limit,
            function_time_limit,
        )
            .hash(h);
        (max_pivots, families, numeric, simplify, check_points).hash(h);
        (check_tolerance.to_bits(), seed).hash(h);
    }
}

/// The default [`ReorientOptions::max_instructions`]: a function of this size takes 3–8 GB to
/// invert (`pinv invert`, which builds no PGF: 2–6 GB).
pub const DEFAULT_MAX_INSTRUCTIONS: usize = 250_000;

impl Default for ReorientOptions {
    fn default() -> ReorientOptions {
        ReorientOptions {
            emit: EmitOptions::default(),
            iteration_limit: 100_000_000,
            isolation: crate::egraph::IsolationConfig::default(),
            step_checks: false,
            max_instructions: DEFAULT_MAX_INSTRUCTIONS,
            time_limit: None,
            lazy_pgf: false,
        }
    }
}

impl ReorientOptions {
    pub fn with_iteration_limit(mut self, limit: i64) -> ReorientOptions {
        self.iteration_limit = limit;
        self
    }

    /// Limits how long building the inverse may take; see [`ReorientOptions::time_limit`].
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> ReorientOptions {
        self.time_limit = Some(limit);
        self
    }

    /// Keeps (or drops) the steps' own precision checks; see [`ReorientOptions::step_checks`].
    pub fn with_step_checks(mut self, keep: bool) -> ReorientOptions {
        self.step_checks = keep;
        self
    }
}

/// The outcome of inverting one function: a module holding the forward functions and the
/// generated ones, and which generated functions are the inverse and the PGF.
#[derive(Clone, Debug)]
pub struct Inversion {
    /// The functions the inverse and PGF use: the function inverted and what it reaches, the
    /// program's declared inverses and PGFs, and the generated functions. Ids are this
    /// module's own, not the program's.
    pub module: Module,
    /// The function inverted, in `module`.
    pub forward: FuncId,
    pub inverse: FuncId,
    /// The PGF, or why there is none (a declared inverse with θ parameters and no `pgf`).
    pub pgf: Result<FuncId, NoPgf>,
    /// Whether the PGFs have their code: false when [`ReorientOptions::lazy_pgf`] left it out
    /// (each PGF then fails, saying so; inverting again without the option gives them).
    pub pgf_built: bool,
    /// Every layer consulted while inverting (misses included), for cache invalidation.
    pub consulted: BTreeSet<LayerStamp>,
    /// What e-graph isolation did, per function considered ([`crate::egraph`]).
    pub isolation: Vec<crate::egraph::IsolationReport>,
    /// Where the time went, phase by phase, in order.
    pub phases: Phases,
}

/// The wall-clock time of each phase of one inversion, in the order they ran: what makes the
/// cost of inverting a large program measurable without a profiler (`pinv show --inverse
/// --timings`, the scaling benchmark).
///
/// - `prepare`: copying what the function reaches, inlining small calls, dropping redundant
///   guards, recursion as a loop, unrolling constant loops, scheduling the outputs;
/// - `isolation`: the e-graph isolation and the solvers ([`crate::egraph::hook`]), and CSE;
/// - `walk`: the reorientation proper, rule by rule and block by block, with the dispatch
///   guards it simplifies as it goes;
/// - `simplify`: the simplifier over the generated code, the isolation's bodies put back;
/// - `finish`: the user's bodies put back, blocks merged, values compacted;
/// - `verify`: the verifier over every function generated or changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phases(pub Vec<(&'static str, std::time::Duration)>);

impl Phases {
    /// Appends `name` with the time since `*since`, and restarts `*since`.
    fn lap(&mut self, name: &'static str, since: &mut std::time::Instant) {
        let now = std::time::Instant::now();
        self.0.push((name, now - *since));
        *since = now;
    }

    /// The total of every phase.
    pub fn total(&self) -> std::time::Duration {
        self.0.iter().map(|(_, t)| *t).sum()
    }
}

impl std::fmt::Display for Phases {
    /// `prepare 0.12 ms, isolation 3.40 ms, …` in milliseconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, t)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name} {:.2} ms", t.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }
}

/// Inverts `function` of `module` under `stack`.
pub fn reorient(
    module: &Module,
    function: FuncId,
    stack: &Stack,
    options: &ReorientOptions,
) -> Result<Inversion, Error> {
    let deadline = Deadline::after(options.time_limit);
    reorient_in(module, function, stack, options, false, deadline).map(|(inversion, _)| inversion)
}

/// [`reorient`], leaving the simplification of the PGFs for later when it cannot change the
/// inverse (see [`crate::egraph::simplify::simplify_generated_deferring_pgfs`]): the inverse
/// is final, and the PGFs returned are finished with [`finish_deferred_pgfs`], which gives
/// exactly what `reorient` gives.
pub fn reorient_deferring_pgfs(
    module: &Module,
    function: FuncId,
    stack: &Stack,
    options: &ReorientOptions,
) -> Result<(Inversion, Vec<FuncId>), Error> {
    reorient_in(
        module,
        function,
        stack,
        options,
        true,
        Deadline::after(options.time_limit),
    )
}

/// Finishes the PGFs [`reorient_deferring_pgfs`] left in `module`: simplified, then merged and
/// compacted as `reorient` does. `module` is a copy of `unfinished`, the module
/// `reorient_deferring_pgfs` returned; a finished PGF the verifier rejects (a bug in the
/// simplifier) is replaced by its unfinished one from there, which is correct, only slower.
pub fn finish_deferred_pgfs(unfinished: &Module, module: &mut Module, pgfs: &[FuncId]) {
    crate::egraph::simplify::finish_pgfs(module, pgfs);
    for &id in pgfs {
        let f = &mut module.functions[id];
        pinv_core::ir::merge_blocks::merge_blocks(f);
        f.compact();
        if let Err(e) = pinv_core::ir::verify::verify_function(module, id) {
            debug_assert!(
                false,
                "the simplifier broke {}: {e}",
                module.functions[id].name
            );
            module.functions[id] = unfinished.functions[id].clone();
        }
    }
}

fn reorient_in(
    input: &Module,
    function: FuncId,
    stack: &Stack,
    options: &ReorientOptions,
    defer_pgfs: bool,
    deadline: Deadline,
) -> Result<(Inversion, Vec<FuncId>), Error> {
    let mut phases = Phases::default();
    let mut since = std::time::Instant::now();
    let size: usize = input
        .reachable_from(&[function])
        .into_iter()
        .map(|id| input.functions[id].insts_in_layout().count())
        .sum();
    if size > options.max_instructions {
        let f = &input.functions[function];
        return Err(Error::TooLarge {
            function: f.name.clone(),
            size,
            limit: options.max_instructions,
            span: f.span,
        });
    }
    // A value computed twice would look like fan-out: merge recomputations first. Only what
    // the function reaches is copied (a program of thousands of functions is not copied
    // whole for each one inverted).
    // Declared inverses and PGFs are roots too: the inverse may call them, and they may call
    // functions `function` does not.
    let mut roots = vec![function];
    roots.extend(
        input
            .iter()
            .filter(|(_, f)| f.kind != FuncKind::Fn)
            .map(|(id, _)| id),
    );
    // Renumbered: `function` is the first.
    let (mut forward, _) = input.extract_reaching(&roots);
    let (requested, function) = (function, FuncId::from_u32(0));
    let inlined = inline_small_calls(&mut forward, function, stack);
    let guarded = drop_redundant_guards(&mut forward, function, stack);
    let iterated = iterate_recursion(&mut forward, function, stack, options);
    let rolled = unroll_constant_loops(&mut forward, function, stack);
    let copied = duplicate_constant_tails(&mut forward, function, stack);
    // Outputs hard to walk back computed first, so that the easy ones are solved first
    // (`pinv_core::ir::schedule`).
    let scheduled = rewrite_bodies(&mut forward, function, stack, |f, _| {
        let cost = |f: &Function, inst| theta_cost(stack, f, inst);
        pinv_core::ir::schedule::schedule_outputs(f, &cost).map(|g| (g, ()))
    });
    phases.lap("prepare", &mut since);
    // ---- e-graph isolation hook (crate::egraph::hook): rewrite bodies, push the helpers' layer
    let isolation =
        crate::egraph::hook::before(&mut forward, function, stack, &options.isolation, deadline);
    let stack = &isolation.stack(stack);
    // ---- end of hook
    for id in forward.reachable_from(&[function]) {
        let f = &mut forward.functions[id];
        if f.kind == FuncKind::Fn {
            pinv_core::ir::cse::cse(f);
        }
    }
    let mut pass = Reorienter {
        forward: &forward,
        stack,
        options,
        out: forward.clone(),
        done: HashMap::new(),
        in_progress: HashSet::new(),
        consulted: BTreeSet::new(),
        call_ranges: HashMap::new(),
        step_checks: Vec::new(),
        returning: None,
        recursive: None,
        int_returns: int_ranges::IntReturns::default(),
        bodies: HashMap::new(),
        outlined: HashMap::new(),
        simplified: HashSet::new(),
        isolated: isolation.rewritten().collect(),
        original_blocks: isolation.original_blocks().clone(),
        deadline,
    };
    phases.lap("isolation", &mut since);
    let (inverse, pgf) = pass.invert(function)?;
    phases.lap("walk", &mut since);
    let mut module = pass.out;
    let mut consulted = pass.consulted;
    // ---- e-graph isolation hook: original bodies back, simplification
    let simplified = pass.simplified;
    let pgf_built = !options.lazy_pgf;
    let (isolation, deferred) = if defer_pgfs || !pgf_built {
        let (isolation, deferred) =
            isolation.after_deferring_pgfs(&mut module, &mut consulted, &simplified, pgf_built);
        let Some(deferred) = deferred else {
            // The inverse is finished together with its PGFs: built with them, within what
            // is left of the time limit.
            let eager = ReorientOptions {
                lazy_pgf: false,
                ..options.clone()
            };
            return reorient_in(input, requested, stack, &eager, defer_pgfs, deadline);
        };
        (isolation, deferred)
    } else {
        (
            isolation.after(&mut module, &mut consulted, &simplified),
            Vec::new(),
        )
    };
    let deferred = if pgf_built {
        deferred
    } else {
        // The PGFs the rules did not write: stubs that say so (the module stays well formed).
        for (_, f) in module.functions.iter_mut() {
            if matches!(f.kind, FuncKind::GeneratedPgf { .. }) {
                let reason = "this PGF is built when it is first needed (lazy_pgf)";
                stub_pgf(f, reason.to_string());
            }
        }
        Vec::new()
    };
    // ---- end of hook
    phases.lap("simplify", &mut since);
    let mut isolation = isolation;
    // The last rewrite's originals first: each pass recorded the body it was given, so the
    // user's own bodies go back last.
    restore_bodies(&mut module, &mut isolation, scheduled, |_, ()| {});
    restore_bodies(&mut module, &mut isolation, copied, |r, &tails| {
        r.tails_copied = tails
    });
    restore_bodies(&mut module, &mut isolation, rolled, |r, &trips| {
        r.unrolled = trips
    });
    restore_bodies(&mut module, &mut isolation, iterated, |r, how| {
        r.recursion_as_loop = Some(how.clone())
    });
    restore_bodies(&mut module, &mut isolation, guarded, |r, ()| {
        r.redundant_guard_dropped = true
    });
    restore_bodies(&mut module, &mut isolation, inlined, |r, &calls| {
        r.inlined = calls
    });
    let inverted = &forward.functions[function];
    deadline.check(&inverted.name, inverted.span)?;
    for (id, f) in module.functions.iter_mut() {
        if matches!(
            f.kind,
            FuncKind::GeneratedInverse { .. } | FuncKind::GeneratedPgf { .. }
        ) && !deferred.contains(&id)
        {
            pinv_core::ir::merge_blocks::merge_blocks(f);
            f.compact();
        }
    }
    phases.lap("finish", &mut since);
    // What the reorientation added or changed is verified; a function it left as it was is
    // the input's (a `Program`'s module is verified when it is built).
    for (id, f) in module.iter() {
        let placeholder = f.kind == FuncKind::Fn && f.layout.is_empty();
        if !placeholder && input.functions.get(id) != Some(f) {
            deadline.check(&inverted.name, inverted.span)?;
            pinv_core::ir::verify::verify_function(&module, id)
                .map_err(|e| Error::Internal(e.to_string()))?;
        }
    }
    // The forward functions neither the inverse, its PGF nor f call are left out (emptied):
    // the inverse's module, its compiled code and every cache entry holding it keep only
    // what they use.
    let mut used = vec![function, inverse];
    used.extend(pgf.as_ref().ok().copied());
    used.extend(deferred.iter().copied());
    module.clear_unreachable(&used);
    phases.lap("verify", &mut since);
    let inversion = Inversion {
        module,
        forward: function,
        inverse,
        pgf,
        pgf_built,
        consulted,
        isolation,
        phases,
    };
    Ok((inversion, deferred))
}

/// Empties generated PGF `f` into a block that fails with `reason`: what a function without a
/// PGF gets, and what [`ReorientOptions::lazy_pgf`] leaves.
fn stub_pgf(f: &mut Function, reason: String) {
    let span = f.span;
    let mut stub = Function::new(f.name.clone(), f.kind.clone(), f.sig.clone());
    stub.span = span;
    stub.param_names = std::mem::take(&mut f.param_names);
    let entry = stub.create_entry();
    stub.ins_void(entry, InstKind::Fail { reason }, span);
    *f = stub;
}

/// Rewrites, in `forward`, `function` and every `fn` it calls that has no rule of its own (a
/// declared inverse wins over any rewrite of the body), with `rewrite`; returns each rewritten
/// function's original (which goes back after inversion: the user's body is what runs, is
/// shown and makes the final check) with what `rewrite` said of it.
fn rewrite_bodies<T>(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
    mut rewrite: impl FnMut(&Function, FuncId) -> Option<(Function, T)>,
) -> Vec<(FuncId, Function, T)> {
    let mut originals = Vec::new();
    for id in forward.reachable_from(&[function]) {
        let f = &forward.functions[id];
        if f.kind != FuncKind::Fn {
            continue;
        }
        if has_own_rule(stack, f) {
            continue;
        }
        if let Some((g, said)) = rewrite(f, id) {
            let original = std::mem::replace(&mut forward.functions[id], g);
            originals.push((id, original, said));
        }
    }
    originals
}

/// Whether `stack` has a rule for `f` itself (a declared inverse, a user layer): then its body
/// is neither rewritten nor copied into callers, since the rule wins over it.
fn has_own_rule(stack: &Stack, f: &Function) -> bool {
    let pattern = Pattern::all_unknown(f.sig.params.len());
    let callee = Callee::Function(f.name.clone());
    stack.lookup(&callee, &pattern).found.is_some()
}

/// Puts back into `module` the bodies a [`rewrite_bodies`] pass replaced, and notes in each
/// function's isolation report what the pass said of it.
fn restore_bodies<T>(
    module: &mut Module,
    isolation: &mut [crate::egraph::IsolationReport],
    originals: Vec<(FuncId, Function, T)>,
    note: impl Fn(&mut crate::egraph::IsolationReport, &T),
) {
    for (id, original, said) in originals {
        for report in isolation.iter_mut().filter(|r| r.function == original.name) {
            note(report, &said);
        }
        module.functions[id] = original;
    }
}

/// Copies the bodies of small functions that do not recurse into the functions that call them
/// ([`pinv_core::ir::inline`]): walked back through its own inverse, `clamp(x * 2.0, 0.0,
/// 1.0)` reads the bounds from θ; copied in, they are constants. A function with a declared
/// inverse (or any rule) stays a call: its rule wins.
fn inline_small_calls(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
) -> Vec<(FuncId, Function, usize)> {
    let limits = pinv_core::ir::inline::InlineLimits::default();
    let has_rule = |f: &Function| has_own_rule(stack, f);
    // From `function` down the calls that stay: a function whose every call was inlined is
    // not visited (a chain of 10⁴ small functions is copied into a few, not each into all).
    let mut originals = Vec::new();
    let mut seen = HashSet::new();
    let mut work = vec![function];
    while let Some(id) = work.pop() {
        if !seen.insert(id) {
            continue;
        }
        let f = &forward.functions[id];
        if f.kind != FuncKind::Fn || has_rule(f) {
            continue;
        }
        let inlinable = |callee: FuncId| {
            let g = &forward.functions[callee];
            g.kind == FuncKind::Fn && !has_rule(g)
        };
        if let Some(mut done) = pinv_core::ir::inline::inline_calls(forward, id, limits, inlinable)
        {
            // What the constants passed make constant is folded (a helper's branch on them).
            pinv_core::ir::fold::fold_until_stable(&mut done.function);
            done.function.compact();
            let original = std::mem::replace(&mut forward.functions[id], done.function);
            originals.push((id, original, done.calls));
        }
        let f = &forward.functions[id];
        for (_, i) in f.insts_in_layout() {
            if let InstKind::Call { callee, .. } = &f.insts[i].kind {
                work.push(*callee);
            }
        }
    }
    originals
}

/// Drops guard clauses that the rest of the function makes redundant
/// ([`pinv_core::ir::guard_clauses`]): `if n <= 0 { return 0; }` before a loop that returns 0
/// for those n too is, to an inverse, a second path to y = 0 that θ must choose between.
fn drop_redundant_guards(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
) -> Vec<(FuncId, Function, ())> {
    rewrite_bodies(forward, function, stack, |f, _| {
        pinv_core::ir::guard_clauses::drop_redundant_guard(f).map(|g| (g, ()))
    })
}

/// Unrolls the loops of constant trip count ([`pinv_core::ir::unroll`]), so that isolation and
/// the solvers see the straight-line sum or product they compute (walked back as loops, every
/// value they carry that the exit does not determine would come from θ); returns the trips
/// each unrolling took.
fn unroll_constant_loops(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
) -> Vec<(FuncId, Function, usize)> {
    let limits = pinv_core::ir::unroll::UnrollLimits::default();
    rewrite_bodies(forward, function, stack, |f, _| {
        pinv_core::ir::unroll::unroll_loops(f, limits).map(|u| (u.function, u.trips))
    })
}

/// Copies the returning blocks that are entered with constants into the places that enter them
/// ([`pinv_core::ir::tail_dup`]), and folds what the constants make constant: walked back, a
/// join of constants is a value θ must hit exactly (`x * if b { 2.0 } else { 3.0 }`), where
/// each copy is a path the inverse solves and θ only chooses between. Returns how many blocks
/// each copying took.
fn duplicate_constant_tails(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
) -> Vec<(FuncId, Function, usize)> {
    let limits = pinv_core::ir::tail_dup::TailLimits::default();
    rewrite_bodies(forward, function, stack, |f, _| {
        let returns = |g: &Function| g.layout.iter().filter(|&&b| g.ends_in_return(b)).count();
        let mut g = pinv_core::ir::tail_dup::duplicate_tails(f, limits)?;
        let copied = returns(&g).saturating_sub(returns(f));
        pinv_core::ir::fold::fold_constants(&mut g);
        pinv_core::ir::dce::remove_dead_code(&mut g);
        pinv_core::ir::merge_blocks::merge_blocks_keep_ids(&mut g);
        g.compact();
        Some((g, copied))
    })
}

/// The θ values the rule for instruction `inst` declares, with its constant operands (and an
/// operand's repetitions) known and the others not (0 without a rule): how hard the instruction is to walk back, for the
/// order of a block's outputs ([`pinv_core::ir::schedule`]). So a rule's documented θ list is
/// an input to the walk, not only its documentation: a θ read instead of another (atan2's
/// larger coordinate where steps are exact, instead of the radius) belongs in that θ's entry;
/// listed as one more, it reordered `gen_check` seed 5297's outputs (98.7% → 0% accepted).
fn theta_cost(stack: &Stack, f: &Function, inst: pinv_core::ir::Inst) -> usize {
    let InstKind::Prim { op, args } = &f.insts[inst].kind else {
        return 0;
    };
    // An operand repeated (`a + a`) counts once: isolation makes it one unknown.
    let operands: Vec<Arg> = args
        .iter()
        .enumerate()
        .map(|(k, &a)| match f.constant(a) {
            None if !args[..k].contains(&a) => Arg::Unknown,
            _ => Arg::Known(a),
        })
        .collect();
    let pattern = Pattern::of(&operands);
    stack
        .lookup(&Callee::Prim(*op), &pattern)
        .found
        .map_or(0, |found| found.rule.doc(&pattern).thetas.len())
}

/// Runs recursions as loops, where that inverts better:
/// - a counted recursion folds from its base case up ([`pinv_core::ir::counted_recursion`]),
///   where the trip-count scan takes the loop, so that the scan finds the counter from y
///   instead of θ splitting every level (a loop walked back would read the trips from θ, and
///   the counter would have to match them);
/// - otherwise, calls of itself whose results it returns become jumps back to its start
///   ([`pinv_core::ir::tail_calls`]): walked back, the loop's exit tells each trip what the
///   test left, where a level of a recursive inverse reads its base case blind.
fn iterate_recursion(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
    options: &ReorientOptions,
) -> Vec<(FuncId, Function, RecursionAsLoop)> {
    rewrite_bodies(forward, function, stack, |f, id| {
        let counted = pinv_core::ir::counted_recursion::counted_recursion_as_loop(f, id)
            .filter(|it| trips::scans_every_loop(&it.function, options.iteration_limit));
        match counted {
            Some(it) => {
                let counter = f
                    .param_names
                    .get(it.counter)
                    .cloned()
                    .unwrap_or_else(|| format!("#{}", it.counter));
                Some((it.function, RecursionAsLoop::Counted { counter }))
            }
            None => pinv_core::ir::tail_calls::tail_calls_as_loop(f, id)
                .map(|g| (g, RecursionAsLoop::TailCalls)),
        }
    })
}

/// How deeply the functions being inverted may call each other: inverting `f1`, which calls
/// `f2`, … down to `f{N}`, inverts each inside its caller.
pub const MAX_CALL_NESTING: usize = 20_000;

/// A generated PGF, or why there is none.
type PgfId = Result<FuncId, NoPgf>;

/// Why an inversion has no PGF: somewhere in it is a declared inverse with θ parameters and
/// no `pgf` declaration, so nothing can say which θ gives a given x.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NoPgf {
    /// What lacks a PGF, in the user's terms.
    pub reason: String,
}

pub(crate) struct Reorienter<'a> {
    forward: &'a Module,
    stack: &'a Stack,
    options: &'a ReorientOptions,
    /// The forward module plus every generated function so far.
    out: Module,
    /// Generated (inverse, pgf) per forward function.
    done: HashMap<FuncId, (FuncId, PgfId)>,
    in_progress: HashSet<FuncId>,
    consulted: BTreeSet<LayerStamp>,
    /// The ranges of the results of each function, once analysed.
    call_ranges: ranges::ReturnRanges,
    /// The step checks ([`pinv_primitives::Emitter::check_step`]) of the inverses being built,
    /// innermost function last: each inversion of a body pops its own before it returns.
    step_checks: Vec<pinv_core::ir::Inst>,
    /// The forward functions some input takes to a `return` ([`recursion::returning`]), worked
    /// out the first time a body is inverted.
    returning: Option<HashSet<FuncId>>,
    /// The forward functions on a cycle of calls ([`recursion::recursive`]), worked out the
    /// first time a body is inverted.
    recursive: Option<HashSet<FuncId>>,
    /// The i64 intervals of each function's results ([`int_ranges`]).
    int_returns: int_ranges::IntReturns,
    /// Generated inverse → its unchecked body, for the functions other inverses call
    /// ([`Reorienter::reserve_inversion`]).
    bodies: HashMap<FuncId, FuncId>,
    /// The helpers of outlined pieces, by [`Function::code_hash`] (equal ones by
    /// [`Function::same_code`]; [`Reorienter::install_outlined`]).
    outlined: HashMap<u64, Vec<FuncId>>,
    /// Generated functions simplified as they were built (dispatch guards), which the
    /// simplification at the end leaves alone.
    simplified: HashSet<FuncId>,
    /// The functions the e-graph isolation rewrote ([`crate::egraph::hook::Hook::rewritten`]):
    /// the reorientation walks the rewritten body back, but y is the original's output, which
    /// may differ from the rewritten one's by rounding; their PGFs solve from y.
    isolated: HashSet<FuncId>,
    /// The original code of the blocks the isolation rewrote, by function
    /// ([`crate::egraph::hook::Hook::original_blocks`]): the PGF runs it for what such a block
    /// passes on.
    original_blocks: HashMap<FuncId, std::rc::Rc<crate::egraph::hook::OriginalBlocks>>,
    /// When the build gives up ([`ReorientOptions::time_limit`]): polled per function, block
    /// and instruction inverted.
    deadline: Deadline,
}

impl<'a> Reorienter<'a> {
    /// The generated inverse and PGF of a forward function, generating them the first time.
    ///
    /// A callee is inverted while its caller is (so the recursion is as deep as the chain of
    /// calls): each level runs on a stack that grows on the heap
    /// ([`pinv_core::stack::ensure_sufficient_stack`]), and more than
    /// [`MAX_CALL_NESTING`] levels is an error.
    fn invert(&mut self, id: FuncId) -> Result<(FuncId, PgfId), Error> {
        pinv_core::stack::ensure_sufficient_stack(|| self.invert_at_depth(id))
    }

    fn invert_at_depth(&mut self, id: FuncId) -> Result<(FuncId, PgfId), Error> {
        if let Some(pair) = self.done.get(&id) {
            return Ok(pair.clone());
        }
        let f = &self.forward.functions[id];
        self.deadline.check(&f.name, f.span)?;
        if self.in_progress.len() >= MAX_CALL_NESTING {
            return Err(Error::Unsupported {
                function: f.name.clone(),
                reason: format!(
                    "calls nest more than {MAX_CALL_NESTING} deep below the function inverted"
                ),
                span: f.span,
            });
        }
        if self.in_progress.contains(&id) {
            // A recursive call, direct or through other functions: it is a call of the inverse
            // being built (and the PGF records through a call of the PGF being built), whose
            // names were reserved before the body was walked.
            let inv = self.out.get(&Self::inverse_name(f));
            let pgf = self.out.get(&Self::pgf_name(f));
            return match (inv, pgf) {
                (Some(inv), Some(pgf)) => Ok((inv, Ok(pgf))),
                _ => Err(Error::Internal(format!(
                    "`{}` calls itself but its inverse was not reserved",
                    f.name
                ))),
            };
        }
        // A function some inverse being built calls gets an unchecked body (below).
        let called = !self.in_progress.is_empty();
        self.in_progress.insert(id);
        let pattern = Pattern::all_unknown(f.sig.params.len());
        let lookup = self
            .stack
            .lookup(&Callee::Function(f.name.clone()), &pattern);
        self.consulted.extend(lookup.consulted.iter().copied());
        let result = match lookup.found {
            // A rule for the function itself (a declared inverse, a user layer) wins over its body.
            Some(found) => self.wrap_rule(id, f, &found.rule),
            None => self
                .check_returns(id, f)
                .and_then(|()| self.reserve_inversion(id, f, called))
                .and_then(|()| self.invert_body(id, f)),
        };
        self.in_progress.remove(&id);
        let pair = result?;
        self.done.insert(id, pair.clone());
        Ok(pair)
    }

    /// An error if `f` has a `return` but no input reaches one, because every path to it calls
    /// (itself, or through others) a function that never returns: recursion with no base case.
    fn check_returns(&mut self, id: FuncId, f: &Function) -> Result<(), Error> {
        let forward = self.forward;
        let returning = self
            .returning
            .get_or_insert_with(|| recursion::returning(forward));
        let has_return = f.layout.iter().any(|&b| f.ends_in_return(b));
        if returning.contains(&id) || !has_return {
            return Ok(());
        }
        Err(Self::unsupported(
            f,
            "it never returns: every path to its `return` goes through a recursive call that \
             never ends (recursion with no base case), so nothing is in its image",
            f.span,
        ))
    }

    /// The name of `f`'s generated inverse (`f.inv`).
    fn inverse_name(f: &Function) -> String {
        FuncKind::GeneratedInverse { of: f.name.clone() }.symbol(&f.name)
    }

    /// The name of `f`'s generated PGF (`f.pgf`).
    fn pgf_name(f: &Function) -> String {
        FuncKind::GeneratedPgf { of: f.name.clone() }.symbol(&f.name)
    }

    /// Reserves `f`'s inverse and PGF before its body is inverted, so that a recursive call met
    /// on the way can call them; [`Reorienter::add`] fills them in.
    ///
    /// A function that other inverses call (`called`, or itself: it is recursive) also gets an
    /// unchecked body, `f.inv.body`: the inverse without its last check that f(x) = y, which
    /// `f.inv` wraps. Callers call the body. Their own last check runs f forward, which runs
    /// the callee's; checking at every level too would run each level's forward code once
    /// per level above it (a recursion like `fib`'s would cost n·fib(n) steps). Soundness is
    /// the outermost check's: f(x) = y for the x returned, whatever the levels below did.
    fn reserve_inversion(&mut self, id: FuncId, f: &Function, called: bool) -> Result<(), Error> {
        let inv = Self::new_inverse(f);
        let sig = inv.sig.clone();
        let inv_id = self.reserve(inv.name, inv.kind.clone(), inv.sig)?;
        let pgf = Self::new_pgf(f, Self::pgf_name(f), f.sig.params.clone(), Vec::new());
        self.reserve(pgf.name, pgf.kind, pgf.sig)?;
        let forward = self.forward;
        let recursive = self
            .recursive
            .get_or_insert_with(|| recursion::recursive(forward))
            .contains(&id);
        if called || recursive {
            let body = self.reserve(Self::body_name(f), inv.kind, sig)?;
            self.bodies.insert(inv_id, body);
        }
        Ok(())
    }

    /// The name of the unchecked body of `f`'s generated inverse (`f.inv.body`).
    fn body_name(f: &Function) -> String {
        format!("{}.body", Self::inverse_name(f))
    }

    /// What a caller's inverse calls to invert a call of the function whose inverse is `inv`:
    /// its unchecked body where it has one.
    fn callee_inverse(&self, inv: FuncId) -> FuncId {
        self.bodies.get(&inv).copied().unwrap_or(inv)
    }

    /// The function reserved under `name`, or a new reservation.
    fn reserved_or_new(
        &mut self,
        name: String,
        kind: FuncKind,
        sig: Signature,
    ) -> Result<FuncId, Error> {
        match self.out.get(&name) {
            Some(id) if self.out.functions[id].layout.is_empty() => Ok(id),
            _ => self.reserve(name, kind, sig),
        }
    }

    /// Adds a function to the output module, or replaces the placeholder of that name.
    fn add(&mut self, f: Function) -> Result<FuncId, Error> {
        if let Some(id) = self.out.get(&f.name) {
            if self.out.functions[id].layout.is_empty() {
                self.out.functions[id] = f;
                return Ok(id);
            }
            return Err(Error::Internal(format!("`{}` is generated twice", f.name)));
        }
        let name = f.name.clone();
        self.out
            .add(f)
            .map_err(|_| Error::Internal(format!("`{name}` is generated twice")))
    }

    /// Reserves a name for a function generated later, so that calls to it can be emitted now.
    fn reserve(&mut self, name: String, kind: FuncKind, sig: Signature) -> Result<FuncId, Error> {
        let f = Function::new(name, kind, sig);
        let name = f.name.clone();
        self.out
            .add(f)
            .map_err(|_| Error::Internal(format!("`{name}` is generated twice")))
    }

    /// Reserves the guard function of inverse block `target` (see `blocks::extract_guard`).
    fn reserve_guard(
        &mut self,
        of: &str,
        target: pinv_core::ir::Block,
        params: Vec<pinv_core::ir::Type>,
    ) -> Result<FuncId, Error> {
        self.reserve(
            format!("{of}.guard.{target}"),
            FuncKind::GeneratedInverse { of: of.to_string() },
            Signature {
                params,
                returns: vec![pinv_core::ir::Type::Bool],
            },
        )
    }

    fn unsupported(f: &Function, reason: &str, span: Span) -> Error {
        Error::Unsupported {
            function: f.name.clone(),
            reason: reason.to_string(),
            span,
        }
    }

    /// Checks, before the inverse returns `x`, that `f(x)` is `y` (within the tolerance for f64).
    ///
    /// Rules check their own steps, but tolerances do not compose: a long chain of steps each
    /// within tolerance (a loop halving a number a thousand times) can drift far from y. This
    /// last check makes the whole inverse sound by construction: a θ that loses too much
    /// precision is a domain error, never a wrong x. It is also why the steps' own precision
    /// checks can go ([`ReorientOptions::step_checks`]).
    fn final_check(
        &self,
        inv: &mut Function,
        at: pinv_core::ir::Block,
        forward: FuncId,
        x: &[pinv_core::ir::Value],
        y: &[pinv_core::ir::Value],
        span: Span,
    ) -> Result<pinv_core::ir::Block, Error> {
        let returns = self.out.functions[forward].sig.returns.clone();
        let fx = inv.ins_call(at, forward, x.to_vec(), &returns, span);
        let mut e = pinv_primitives::Emitter::new(inv, at, pinv_primitives::Mode::Inverse, span)
            .with_options(self.options.emit);
        for (&a, &b) in fx.iter().zip(y) {
            // Integers and bools are exact: there, only a step that is not (a declared inverse
            // that is wrong) can fail the check, and no tolerance is involved.
            let reason = match e.value_type(b) {
                pinv_core::ir::Type::F64 => "θ loses precision: f(x) is not y within the tolerance",
                _ => "this θ gives inputs that the function does not take to y",
            };
            e.check_equal(a, b, reason)
                .map_err(|err| Error::Internal(err.to_string()))?;
        }
        Ok(e.block())
    }

    /// `f.inv` for a function with an unchecked body ([`Reorienter::reserve_inversion`]): the
    /// body, then the check that f(x) = y.
    fn checked_wrapper(
        &self,
        f: &Function,
        forward: FuncId,
        body: FuncId,
    ) -> Result<Function, Error> {
        let mut inv = Self::new_inverse(f);
        let entry = inv.layout[0];
        let ys = inv.blocks[entry].params.clone();
        let returns = inv.sig.returns.clone();
        let x = inv.ins_call(entry, body, ys.clone(), &returns, f.span);
        let at = self.final_check(&mut inv, entry, forward, &x, &ys, f.span)?;
        inv.ins_return(at, x, f.span);
        Ok(inv)
    }

    /// Deletes `checks`, step checks of `inv`, unless the options keep them: `inv` checks
    /// `f(x) = y` before every return ([`Reorienter::final_check`]), so they stop no θ that would
    /// give a wrong x. Call it after the dispatch guards are copied from `inv`, so that they keep
    /// the checks they decide by. The values only the checks used are left for dead-code
    /// elimination.
    fn drop_step_checks(&self, inv: &mut Function, checks: &[pinv_core::ir::Inst]) {
        if self.options.step_checks || checks.is_empty() {
            return;
        }
        let checks: BTreeSet<pinv_core::ir::Inst> = checks.iter().copied().collect();
        for b in inv.layout.clone() {
            inv.blocks[b].insts.retain(|i| !checks.contains(i));
        }
    }

    /// An empty inverse function for `f`, with its entry block.
    fn new_inverse(f: &Function) -> Function {
        let of = f.name.clone();
        let kind = FuncKind::GeneratedInverse { of: of.clone() };
        let mut inv = Function::new(
            Self::inverse_name(f),
            kind,
            Signature {
                params: f.sig.returns.clone(),
                returns: f.sig.params.clone(),
            },
        );
        inv.span = f.span;
        inv.param_names = match f.sig.returns.len() {
            1 => vec!["y".to_string()],
            n => (0..n).map(|i| format!("y{i}")).collect(),
        };
        inv.create_entry();
        inv
    }

    /// An empty PGF function for `f` named `name` with parameters `params`, with its entry block.
    /// It returns what `f` returns.
    fn new_pgf(
        f: &Function,
        name: String,
        params: Vec<pinv_core::ir::Type>,
        param_names: Vec<String>,
    ) -> Function {
        let mut pgf = Function::new(
            name,
            FuncKind::GeneratedPgf { of: f.name.clone() },
            Signature {
                params,
                returns: f.sig.returns.clone(),
            },
        );
        pgf.span = f.span;
        pgf.param_names = param_names;
        pgf.create_entry();
        pgf
    }

    /// The inverse and PGF of `f` made from a rule for `f` itself: the inverse applies the rule
    /// to its outputs; the PGF runs `f` forward and records the rule's θ.
    fn wrap_rule(
        &mut self,
        id: FuncId,
        f: &Function,
        rule: &Arc<dyn InverseRule>,
    ) -> Result<(FuncId, PgfId), Error> {
        let mut inv = Self::new_inverse(f);
        let pgf_name = FuncKind::GeneratedPgf { of: f.name.clone() }.symbol(&f.name);
        let mut pgf = Self::new_pgf(f, pgf_name, f.sig.params.clone(), f.param_names.clone());
        let (inv_entry, pgf_entry) = (inv.layout[0], pgf.layout[0]);
        let outputs = inv.blocks[inv_entry].params.clone();
        let inputs = pgf.blocks[pgf_entry].params.clone();
        let forward_outputs = pgf.ins_call(pgf_entry, id, inputs.clone(), &f.sig.returns, f.span);
        let args = vec![Arg::Unknown; inputs.len()];
        let pattern = Pattern::all_unknown(inputs.len());
        let mut region = Region::new(
            &mut inv,
            inv_entry,
            &mut pgf,
            pgf_entry,
            std::collections::BTreeMap::new(),
        );
        let (solved, pgf_result) = region
            .emit(self.options, f.span, &f.name, Some(&self.out), |ie, pe| {
                let solved = rule.emit_inverse(ie, &outputs, &args)?;
                let pgf = rule.emit_pgf(pe, &forward_outputs, &inputs, &pattern);
                Ok((solved, pgf))
            })
            .map_err(|e| rule_error(f, e))?;
        let (inv_block, pgf_block) = (region.inv_block, region.pgf_block);
        let step_checks = std::mem::take(&mut region.step_checks);
        self.install_outlined(&mut region)?;
        let inv_block = self.final_check(&mut inv, inv_block, id, &solved, &outputs, f.span)?;
        inv.ins_return(inv_block, solved, f.span);
        self.drop_step_checks(&mut inv, &step_checks);
        let inv_id = self.add(inv)?;
        let pgf_id = match pgf_result {
            Ok(()) => {
                pgf.ins_return(pgf_block, forward_outputs, f.span);
                Ok(self.add(pgf)?)
            }
            Err(pinv_primitives::RuleError::NoPgf(why)) => Err(NoPgf { reason: why }),
            Err(e) => return Err(rule_error(f, e)),
        };
        Ok((inv_id, pgf_id))
    }
}

/// The module of a source text, for the unit tests of this module's analyses.
#[cfg(test)]
pub(crate) fn test_module(src: &str) -> Module {
    let file = pinv_core::SourceFile::new("t.pinv", src);
    pinv_core::compile_source(&file)
        .unwrap_or_else(|e| panic!("{e}"))
        .module
}

#[cfg(test)]
mod options_tests {
    use super::ReorientOptions;
    use std::hash::Hasher;

    fn key(o: &ReorientOptions) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        o.hash_key(&mut h);
        h.finish()
    }

    /// Equal options give equal keys, and every option that changes the code changes the key.
    #[test]
    fn the_cache_key_follows_every_option() {
        let base = ReorientOptions::default();
        assert_eq!(key(&base), key(&base.clone()));
        let mut changed = Vec::new();
        let mut o = base.clone();
        o.emit.tolerance = 1e-6;
        changed.push(o);
        changed.push(base.clone().with_iteration_limit(7));
        let mut o = base.clone();
        o.step_checks = !o.step_checks;
        changed.push(o);
        let mut o = base.clone();
        o.isolation.numeric = !o.isolation.numeric;
        changed.push(o);
        let mut o = base.clone();
        o.isolation.families.pop();
        changed.push(o);
        let mut o = base.clone();
        o.isolation.check_tolerance *= 2.0;
        changed.push(o);
        for o in &changed {
            assert_ne!(key(o), key(&base), "{o:?}");
        }
    }
}
