//! The reorientation's hook: isolate before inverting, guard and simplify after.
//!
//! [`crate::reorient::reorient`] works on a copy of the forward module. With isolation on
//! ([`crate::reorient::ReorientOptions::isolation`]) it calls:
//!
//! 1. [`before`] on that copy, before anything is inverted: the function and every `fn` it calls
//!    (transitively) that has no inverse rule of its own is isolated
//!    ([`super::isolate_function`]); where that finds a better body, the body in the copy is
//!    replaced and the helpers it needs are added ([`crate::solve::helpers`]). The reorientation then
//!    inverts the rewritten bodies with its ordinary walk and rules, with the **isolation layer**
//!    (the helpers' rules) on top of its stack ([`Hook::stack`]).
//! 2. [`Hook::after`] on the output module: the original bodies are put back under the same
//!    ids, so the module's `f` is the user's `f` — what callers, `Inverse::forward` and the
//!    reorientation's **final check** run. That check (before every `return` of a generated
//!    inverse, `f(x) ≈ y` by a call of `f`'s id) therefore tests the *original* function on the
//!    answer computed from the rewritten one. Rewrites are exact only up to rounding (or valid
//!    only where nothing overflows), so this is what keeps the inverse sound whatever a rule did.
//!    The PGF records the θ of the rewritten form's inverse, but takes what a rewritten block
//!    passes on from the block's original code ([`Hook::original_blocks`]): the function's
//!    values, which a loop walked back exactly names float for float. Then the
//!    generated functions are simplified ([`super::simplify`]) and the isolation layer's stamp is
//!    removed from the consulted layers (the layer is derived from the module, so it is not a
//!    dependency of its own).

use super::config::{IsolationConfig, IsolationReport};
use super::isolate::isolate_function;
use crate::deadline::Deadline;
use pinv_core::ir::{FuncId, FuncKind, Function, InstKind, Module};
use pinv_primitives::{Callee, Layer, LayerStamp, Pattern, Stack};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// What [`Hook::finish`] does with the generated PGFs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pgfs {
    /// Simplify them with the rest.
    Simplify,
    /// Leave them for later where that changes nothing else.
    Defer,
    /// They have no code yet: leave them, or give up where the inverse needs them.
    Absent,
}

/// What [`before`] did, for [`Hook::after`].
#[derive(Debug)]
pub struct Hook {
    config: IsolationConfig,
    /// Past it, no function is isolated or simplified (the reorientation reports the time-out).
    deadline: Deadline,
    layer: Option<Layer>,
    /// Functions whose bodies were replaced, with their original bodies.
    originals: Vec<(FuncId, Function)>,
    /// Functions with control flow whose blocks were rewritten one by one: the original in
    /// closed block form (block for block the rewritten body's) and the blocks rewritten.
    blocks: HashMap<FuncId, Rc<OriginalBlocks>>,
    reports: Vec<IsolationReport>,
}

/// The original code of the blocks the isolation rewrote in a function with control flow
/// ([`Hook::original_blocks`]).
#[derive(Debug)]
pub struct OriginalBlocks {
    /// The original function in closed block form: its blocks, parameters and edges are the
    /// rewritten body's.
    pub closed: Function,
    /// The blocks whose code was rewritten.
    pub rewritten: Vec<pinv_core::ir::Block>,
}

/// The functions `root` calls, transitively, `root` first.
fn reachable(module: &Module, root: FuncId) -> Vec<FuncId> {
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        order.push(id);
        let f = &module.functions[id];
        for (_, inst) in f.insts_in_layout() {
            if let InstKind::Call { callee, .. } = f.insts[inst].kind {
                stack.push(callee);
            }
        }
    }
    order
}

/// Isolates `function` and its callees in `forward` (see the module docs).
pub fn before(
    forward: &mut Module,
    function: FuncId,
    stack: &Stack,
    config: &IsolationConfig,
    deadline: Deadline,
) -> Hook {
    let mut hook = Hook {
        config: config.clone(),
        deadline,
        layer: None,
        originals: Vec::new(),
        blocks: HashMap::new(),
        reports: Vec::new(),
    };
    if !config.enabled {
        return hook;
    }
    let mut layer = Layer::new("isolation");
    for id in reachable(forward, function) {
        let f = &forward.functions[id];
        if f.kind != FuncKind::Fn || deadline.passed() {
            continue;
        }
        let pattern = Pattern::all_unknown(f.sig.params.len());
        if stack
            .lookup(&Callee::Function(f.name.clone()), &pattern)
            .found
            .is_some()
        {
            hook.reports.push(IsolationReport::skipped(
                &f.name,
                "it has an inverse rule of its own",
            ));
            continue;
        }
        let iso = isolate_function(forward, id, config);
        if let Some(body) = &iso.body {
            let original = crate::solve::helpers::install(body, forward, id, &mut layer, stack);
            hook.originals.push((id, original));
            if let crate::solve::plan::Body::Blocks { closed, plans } = body {
                let rewritten = plans.iter().map(|(b, _)| *b).collect();
                let blocks = OriginalBlocks {
                    closed: closed.clone(),
                    rewritten,
                };
                hook.blocks.insert(id, Rc::new(blocks));
            }
        }
        hook.reports.push(iso.report);
    }
    if layer.callees().next().is_some() {
        hook.layer = Some(layer);
    }
    hook
}

impl Hook {
    /// The stack to invert with: `stack` with the isolation layer on top, if there is one.
    pub fn stack(&self, stack: &Stack) -> Stack {
        match &self.layer {
            Some(layer) => stack.with(layer.clone()),
            None => stack.clone(),
        }
    }

    /// The functions whose bodies the isolation replaced while the reorientation runs: their
    /// rewritten form may round differently from the original (`p / 3 + p` as `p · 1.333…`).
    pub fn rewritten(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.originals.iter().map(|(id, _)| *id)
    }

    /// The original code of the blocks rewritten in functions with control flow, by function.
    /// The rewritten code computes what a block passes on, or returns, in another order, so it
    /// may round differently: the PGF runs the original, as the function does.
    pub fn original_blocks(&self) -> &HashMap<FuncId, Rc<OriginalBlocks>> {
        &self.blocks
    }

    /// The reports, one per function considered.
    pub fn reports(&self) -> &[IsolationReport] {
        &self.reports
    }

    /// Restores the original bodies in `out`, simplifies the generated functions and forgets the
    /// isolation layer in `consulted`. The functions in `done` were simplified on their own
    /// already ([`super::simplify::simplify_alone`]).
    pub fn after(
        self,
        out: &mut Module,
        consulted: &mut BTreeSet<LayerStamp>,
        done: &HashSet<FuncId>,
    ) -> Vec<IsolationReport> {
        self.finish(out, consulted, done, Pgfs::Simplify).0
    }

    /// [`Hook::after`], leaving the PGFs to simplify later when that changes nothing else
    /// ([`super::simplify::simplify_generated_deferring_pgfs`]); returns them too.
    ///
    /// `pgfs_built` is false when the PGFs have no code yet
    /// ([`crate::reorient::ReorientOptions::lazy_pgf`]): where the inverse cannot be finished
    /// without them, nothing is simplified and the PGFs returned are `None`.
    pub fn after_deferring_pgfs(
        self,
        out: &mut Module,
        consulted: &mut BTreeSet<LayerStamp>,
        done: &HashSet<FuncId>,
        pgfs_built: bool,
    ) -> (Vec<IsolationReport>, Option<Vec<FuncId>>) {
        let mode = if pgfs_built {
            Pgfs::Defer
        } else {
            Pgfs::Absent
        };
        self.finish(out, consulted, done, mode)
    }

    fn finish(
        self,
        out: &mut Module,
        consulted: &mut BTreeSet<LayerStamp>,
        done: &HashSet<FuncId>,
        pgfs: Pgfs,
    ) -> (Vec<IsolationReport>, Option<Vec<FuncId>>) {
        if let Some(layer) = &self.layer {
            consulted.remove(&layer.stamp());
        }
        for (id, original) in self.originals {
            out.functions[id] = original;
        }
        let mut deferred = Some(Vec::new());
        if self.config.simplify {
            match pgfs {
                Pgfs::Simplify => {
                    super::simplify::simplify_generated_except(out, self.deadline, done);
                }
                Pgfs::Defer | Pgfs::Absent => {
                    deferred = super::simplify::simplify_generated_deferring_pgfs(
                        out,
                        self.deadline,
                        done,
                        pgfs == Pgfs::Defer,
                    );
                }
            }
        }
        (self.reports, deferred)
    }
}
