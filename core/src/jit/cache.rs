//! The code cache: compiled functions keyed by (function, owner), with exact invalidation.
//!
//! - **Owners.** [`Owner::Forward`] is normal code. [`Owner::Inverse`] is inverse (and PGF) code
//!   compiled under an opaque [`InverseKey`] that the caller supplies — pinv's `invert` crate
//!   passes the overlay stack's identity and its options; this crate knows nothing of layers
//!   beyond [`LayerVersion`] stamps. Forward and inverse entries live in separate maps:
//!   [`CodeCache::inverse`] never reads, writes or evicts a forward entry, and no forward entry
//!   depends on a layer. Two different keys never share an entry.
//! - **Dependencies.** A forward entry depends on the functions compiled into it (the root and
//!   every function it calls). An inverse entry depends on those, on the forward functions it
//!   was derived from, and on every layer consulted while deriving it, misses included (all
//!   given by the caller in [`InverseDeps`]).
//! - **World.** A counter that advances whenever definitions change: [`CodeCache::redefine`]
//!   (a function's body changed) drops every entry that depends on that function, forward and
//!   inverse, and nothing else; [`CodeCache::edit_layer`] (a layer changed) drops exactly the
//!   inverse entries that consulted it. Each entry records the world it was compiled in.
//! - **Staleness.** Each entry remembers a fingerprint (the IR text, spans included) of every
//!   function compiled into it. A forward lookup whose module disagrees is a redefinition of the
//!   functions that differ (and invalidates their dependants); an inverse lookup whose module
//!   disagrees replaces only its own entry.
//! - **Memory.** Entries hold [`CompiledFunction`] handles; the JIT memory of an entry is freed
//!   when it is dropped or invalidated and no handle to it is left.
//! - **Threads.** The cache is `Send + Sync`; one mutex guards the maps (compilation happens
//!   under it, so a function is never compiled twice for the same key).

use super::{compile, CompiledFunction, JitError};
use crate::ir::{FuncId, InstKind, Module};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

/// An opaque identity for inverse code: equal keys mean the same inversion (stack and options).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InverseKey(Arc<[u64]>);

impl InverseKey {
    pub fn new(words: impl IntoIterator<Item = u64>) -> InverseKey {
        InverseKey(words.into_iter().collect())
    }

    pub fn words(&self) -> &[u64] {
        &self.0
    }
}

/// Who compiled an entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// Normal (forward) code.
    Forward,
    /// Inverse or PGF code of one inversion.
    Inverse(InverseKey),
}

/// A layer's identity and version, as the caller numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LayerVersion {
    pub layer: u64,
    pub version: u64,
}

/// What inverse code depends on besides the functions compiled into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InverseDeps {
    /// The forward functions (module-level names) the inverse was derived from.
    pub functions: Vec<String>,
    /// Every layer consulted while deriving it, misses included.
    pub layers: Vec<LayerVersion>,
}

/// Counters and sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that compiled.
    pub misses: u64,
    /// Entries dropped by invalidation.
    pub invalidated: u64,
    pub forward_entries: usize,
    pub inverse_entries: usize,
    /// The current world.
    pub world: u64,
}

/// One entry, as [`CodeCache::entries`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    /// The root function's module-level name.
    pub function: String,
    pub owner: Owner,
    /// The address of the compiled code.
    pub code: usize,
    /// The world it was compiled in.
    pub world: u64,
    /// The functions it depends on (compiled into it, or derived from).
    pub functions: Vec<String>,
    /// The layers it depends on (inverse entries only).
    pub layers: Vec<LayerVersion>,
}

struct Entry {
    code: CompiledFunction,
    world: u64,
    /// Fingerprint of every function compiled into the entry, by name.
    contains: BTreeMap<String, u64>,
    /// Forward functions it was derived from (inverse entries).
    derived_from: BTreeSet<String>,
    layers: BTreeSet<LayerVersion>,
}

impl Entry {
    fn depends_on(&self, function: &str) -> bool {
        self.contains.contains_key(function) || self.derived_from.contains(function)
    }

    fn info(&self, function: &str, owner: Owner) -> EntryInfo {
        let mut functions: BTreeSet<String> = self.contains.keys().cloned().collect();
        functions.extend(self.derived_from.iter().cloned());
        EntryInfo {
            function: function.to_string(),
            owner,
            code: self.code.code_address(),
            world: self.world,
            functions: functions.into_iter().collect(),
            layers: self.layers.iter().copied().collect(),
        }
    }
}

#[derive(Default)]
struct State {
    world: u64,
    hits: u64,
    misses: u64,
    invalidated: u64,
    forward: HashMap<String, Entry>,
    inverse: HashMap<(InverseKey, String), Entry>,
}

impl State {
    fn redefine(&mut self, function: &str) -> usize {
        self.world += 1;
        let before = self.forward.len() + self.inverse.len();
        self.forward.retain(|_, e| !e.depends_on(function));
        self.inverse.retain(|_, e| !e.depends_on(function));
        let dropped = before - self.forward.len() - self.inverse.len();
        self.invalidated += dropped as u64;
        dropped
    }
}

/// Compiled code by (function, owner). See the module docs.
#[derive(Default)]
pub struct CodeCache {
    state: Mutex<State>,
}

impl std::fmt::Debug for CodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl CodeCache {
    pub fn new() -> CodeCache {
        CodeCache::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps inconsistent (every update is a
        // single insert or retain), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forward code for `func` of `module`: cached, or compiled now.
    pub fn forward(
        &self,
        module: &Arc<Module>,
        func: FuncId,
    ) -> Result<CompiledFunction, JitError> {
        let name = function_name(module, func)?;
        let prints = fingerprints(module, func);
        let mut state = self.lock();
        if let Some(code) = state
            .forward
            .get(&name)
            .filter(|e| e.contains == prints)
            .map(|e| e.code.clone())
        {
            state.hits += 1;
            return Ok(code);
        }
        if let Some(entry) = state.forward.get(&name) {
            // The module redefines some function this entry was compiled from.
            let changed: Vec<String> = prints
                .iter()
                .filter(|(n, p)| entry.contains.get(*n) != Some(*p))
                .map(|(n, _)| n.clone())
                .chain(
                    entry
                        .contains
                        .keys()
                        .filter(|n| !prints.contains_key(*n))
                        .cloned(),
                )
                .collect();
            for n in changed {
                state.redefine(&n);
            }
        }
        state.misses += 1;
        let code = compile(Arc::clone(module), func)?;
        let world = state.world;
        state.forward.insert(
            name,
            Entry {
                code: code.clone(),
                world,
                contains: prints,
                derived_from: BTreeSet::new(),
                layers: BTreeSet::new(),
            },
        );
        Ok(code)
    }

    /// Inverse (or PGF) code for `func` of `module` under `key`: cached, or compiled now. Never
    /// touches forward entries.
    pub fn inverse(
        &self,
        key: &InverseKey,
        module: &Arc<Module>,
        func: FuncId,
        deps: &InverseDeps,
    ) -> Result<CompiledFunction, JitError> {
        let name = function_name(module, func)?;
        let prints = fingerprints(module, func);
        let derived_from: BTreeSet<String> = deps.functions.iter().cloned().collect();
        let layers: BTreeSet<LayerVersion> = deps.layers.iter().copied().collect();
        let slot = (key.clone(), name);
        let mut state = self.lock();
        if let Some(code) = state
            .inverse
            .get(&slot)
            .filter(|e| {
                e.contains == prints && e.derived_from == derived_from && e.layers == layers
            })
            .map(|e| e.code.clone())
        {
            state.hits += 1;
            return Ok(code);
        }
        state.misses += 1;
        let code = compile(Arc::clone(module), func)?;
        let world = state.world;
        state.inverse.insert(
            slot,
            Entry {
                code: code.clone(),
                world,
                contains: prints,
                derived_from,
                layers,
            },
        );
        Ok(code)
    }

    /// A function's body changed: drops every entry, forward or inverse, that depends on it, and
    /// advances the world. Returns how many entries were dropped.
    pub fn redefine(&self, function: &str) -> usize {
        self.lock().redefine(function)
    }

    /// A layer changed: drops the inverse entries that consulted it (any version), and advances
    /// the world. Returns how many entries were dropped.
    pub fn edit_layer(&self, layer: u64) -> usize {
        let mut state = self.lock();
        state.world += 1;
        let before = state.inverse.len();
        state
            .inverse
            .retain(|_, e| !e.layers.iter().any(|l| l.layer == layer));
        let dropped = before - state.inverse.len();
        state.invalidated += dropped as u64;
        dropped
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let mut state = self.lock();
        state.world += 1;
        let dropped = state.forward.len() + state.inverse.len();
        state.invalidated += dropped as u64;
        state.forward.clear();
        state.inverse.clear();
    }

    /// The current world.
    pub fn world(&self) -> u64 {
        self.lock().world
    }

    pub fn stats(&self) -> CacheStats {
        let state = self.lock();
        CacheStats {
            hits: state.hits,
            misses: state.misses,
            invalidated: state.invalidated,
            forward_entries: state.forward.len(),
            inverse_entries: state.inverse.len(),
            world: state.world,
        }
    }

    /// Every entry, forward ones first, each group sorted by function (then owner).
    pub fn entries(&self) -> Vec<EntryInfo> {
        let state = self.lock();
        let mut forward: Vec<EntryInfo> = state
            .forward
            .iter()
            .map(|(n, e)| e.info(n, Owner::Forward))
            .collect();
        forward.sort_by(|a, b| a.function.cmp(&b.function));
        let mut inverse: Vec<EntryInfo> = state
            .inverse
            .iter()
            .map(|((k, n), e)| e.info(n, Owner::Inverse(k.clone())))
            .collect();
        inverse.sort_by(|a, b| (&a.function, &a.owner).cmp(&(&b.function, &b.owner)));
        forward.extend(inverse);
        forward
    }

    /// The forward entries: (function, code address), sorted. What inverse compilation must
    /// leave unchanged.
    pub fn forward_snapshot(&self) -> Vec<(String, usize)> {
        let state = self.lock();
        let mut snap: Vec<(String, usize)> = state
            .forward
            .iter()
            .map(|(n, e)| (n.clone(), e.code.code_address()))
            .collect();
        snap.sort();
        snap
    }
}

fn function_name(module: &Module, func: FuncId) -> Result<String, JitError> {
    module
        .functions
        .get(func)
        .map(|f| f.name.clone())
        .ok_or_else(|| JitError::NoSuchFunction(func.to_string()))
}

/// A fingerprint of every function `root` reaches through calls, by name.
fn fingerprints(module: &Module, root: FuncId) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut seen = HashSet::from([root]);
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let Some(f) = module.functions.get(id) else {
            continue;
        };
        out.insert(f.name.clone(), fingerprint(module, f));
        for (_, i) in f.insts_in_layout() {
            if let InstKind::Call { callee, .. } = &f.insts[i].kind {
                if seen.insert(*callee) {
                    stack.push(*callee);
                }
            }
        }
    }
    out
}

/// A hash of everything the text form of `f` (with spans) shows: its header, and every block
/// and instruction in layout order with their ids, types, operands, constants (by bits),
/// domains, strings and spans (a callee by name). Computed directly, without printing.
fn fingerprint(module: &Module, f: &crate::ir::Function) -> u64 {
    let mut h = DefaultHasher::new();
    f.name.hash(&mut h);
    f.kind.hash(&mut h);
    f.sig.hash(&mut h);
    f.param_names.hash(&mut h);
    f.span.hash(&mut h);
    let ty = |v: crate::ir::Value| f.values.get(v).map(|d| d.ty);
    for &b in &f.layout {
        b.hash(&mut h);
        let Some(data) = f.blocks.get(b) else {
            continue;
        };
        for &p in &data.params {
            (p, ty(p)).hash(&mut h);
        }
        for &i in &data.insts {
            let Some(inst) = f.insts.get(i) else {
                continue;
            };
            for &r in &inst.results {
                (r, ty(r)).hash(&mut h);
            }
            inst.span.hash(&mut h);
            std::mem::discriminant(&inst.kind).hash(&mut h);
            let call = |c: &crate::ir::BlockCall, h: &mut DefaultHasher| {
                c.block.hash(h);
                c.args.hash(h);
            };
            match &inst.kind {
                InstKind::Const(c) => c.hash(&mut h),
                InstKind::Prim { op, args } => (op.name(), args).hash(&mut h),
                InstKind::Call { callee, args } => {
                    module.functions.get(*callee).map(|g| &g.name).hash(&mut h);
                    args.hash(&mut h);
                }
                InstKind::Theta(read) => {
                    let crate::ir::ThetaRead {
                        domain,
                        role,
                        within,
                    } = &**read;
                    // The domain as printed (f64 bounds by their text).
                    domain.to_string().hash(&mut h);
                    role.hash(&mut h);
                    within.hash(&mut h);
                }
                InstKind::Choice { n, role } => (n, role).hash(&mut h),
                InstKind::Check { cond, reason } => (cond, reason).hash(&mut h),
                InstKind::Record { value, role } => (value, role).hash(&mut h),
                InstKind::Segment(op) => op.hash(&mut h),
                InstKind::Jump { dest } => call(dest, &mut h),
                InstKind::Brif {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    cond.hash(&mut h);
                    call(then_dest, &mut h);
                    call(else_dest, &mut h);
                }
                InstKind::Return { args } => args.hash(&mut h),
                InstKind::Fail { reason } => reason.hash(&mut h),
            }
        }
    }
    h.finish()
}
