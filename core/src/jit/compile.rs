//! Compiling a *unit*: a root function and every module function it calls, into one
//! `JITModule`, with a trampoline for the host to enter the root.
//!
//! # Invariants
//!
//! - Only verified functions are compiled ([`crate::ir::verify`]); a function that does not
//!   verify is a [`JitError::Invalid`], never a panic.
//! - Every imported symbol is one this module registered (the shared f64 functions of
//!   [`crate::semantics`] and the callbacks of [`abi`](super::abi)); this is checked before
//!   `finalize_definitions`, which would panic on an unresolvable name.
//! - A [`Unit`] owns its `JITModule` and frees its code memory when dropped. Handles
//!   ([`CompiledFunction`]) share the unit through an `Arc`, so the code stays mapped while any
//!   handle (and so any call through it) lives.
//! - Tiers: a large unit is compiled with the single-pass register allocator first
//!   ([`Tier::Quick`]) and recompiled with the backtracking one ([`Tier::Optimized`]) on the
//!   call that reaches [`TIER_UP_CALLS`]. Both are translated from the same IR by the same code,
//!   so they have the same sites and the same behaviour (the recompiled code is used only if
//!   its site table is the same); the unit keeps both until it is dropped.

use super::abi::{self, EntryFn, Site};
use super::translate::{
    cl_type, entry_signature, internal_signature, load_const_args, store_const, translate_function,
};
use super::JitError;
use crate::ir::{FuncId, InstKind, Module, Type};
use crate::semantics;
use cranelift_codegen::ir::{
    types, AbiParam, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind,
};
use cranelift_codegen::isa::{CallConv, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId as ClFuncId, Linkage, Module as _};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, OnceLock};

thread_local! {
    /// A Cranelift context and function-builder context, kept for the next unit on this thread.
    static SCRATCH: RefCell<Option<(cranelift_codegen::Context, FunctionBuilderContext)>> =
        const { RefCell::new(None) };
}

/// Frame size assumed for a function whose frame layout Cranelift does not report.
const UNKNOWN_FRAME: usize = 512;

/// Units with more IR instructions than this are compiled as [`Tier::Quick`] first: compiling a
/// large generated inverse with the backtracking register allocator takes about twice as long.
const SINGLE_PASS_ABOVE: usize = 100;

/// The most blocks one function may have for the JIT to compile it: a larger one runs in the
/// interpreter ([`JitError::TooLarge`]). Register allocation costs about blocks × live values,
/// so a generated inverse of tens of thousands of blocks took longer to compile (20 s for a
/// 10⁴-statement chain's PGF of 120,000 blocks, 75 s for a fuzz mutant's) than the interpreter
/// takes to run it many times, and a compilation cannot be stopped at a time limit.
pub const MAX_JIT_BLOCKS: usize = 20_000;

/// The most instructions the JIT compiles for one function, the functions it calls included
/// (with [`MAX_JIT_BLOCKS`] for each): Cranelift's quick tier takes 4 to 17 µs per instruction
/// of generated code (more where the code is many small functions), so this is 0.4 to 1.7 s.
/// Since jump threading made blocks larger, the block limit alone let through a
/// 3,000-statement chain's inverse and PGF (12,000 and 18,000 blocks, 180,000 and 192,000
/// instructions: `check --cases 10` took 2.8 s compiling them against 0.5 s in the interpreter)
/// and the inverse of 1,000 branches with its 2,000 guards (180,000 instructions: `invert` took
/// 2.0 s against 0.4 s).
pub const MAX_JIT_INSTS: usize = 100_000;

/// The target: the host machine, built once per process (for each register allocator) and
/// shared by every unit.
fn isa(single_pass: bool) -> Result<OwnedTargetIsa, JitError> {
    static ISAS: [OnceLock<Result<OwnedTargetIsa, JitError>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    ISAS[usize::from(single_pass)]
        .get_or_init(|| {
            let mut flags = settings::builder();
            let set = |flags: &mut settings::Builder, name: &str, value: &str| {
                flags.set(name, value).map_err(|e| {
                    JitError::Target(format!("cannot set Cranelift flag {name}={value}: {e}"))
                })
            };
            // The mid-end optimizer only for the recompiled (and small) units, whose compile time
            // matters less; the quick tier is about compile time. See `translate`'s module docs
            // for the one float rewrite that would change NaN bits, and how it is kept away.
            set(
                &mut flags,
                "opt_level",
                if single_pass { "none" } else { "speed" },
            )?;
            set(&mut flags, "use_colocated_libcalls", "false")?;
            set(&mut flags, "is_pic", "false")?;
            set(&mut flags, "unwind_info", "false")?;
            let allocator = if single_pass {
                "single_pass"
            } else {
                "backtracking"
            };
            set(&mut flags, "regalloc_algorithm", allocator)?;
            let verify = if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            };
            set(&mut flags, "enable_verifier", verify)?;
            let builder =
                cranelift_native::builder().map_err(|m| JitError::Target(m.to_string()))?;
            builder
                .finish(settings::Flags::new(flags))
                .map_err(|e| JitError::Target(e.to_string()))
        })
        .clone()
}

/// The name of the read shim of callback `name`.
fn shim_name(name: &str) -> Result<&'static str, JitError> {
    match name {
        abi::SYM_THETA => Ok("pinv_shim_theta"),
        abi::SYM_CHOICE => Ok("pinv_shim_choice"),
        abi::SYM_REFUEL => Ok("pinv_shim_refuel"),
        _ => Err(JitError::UnresolvedSymbol(format!("a read shim of {name}"))),
    }
}

/// The read shims, by name and address: for `pinv_jit_theta`, `pinv_jit_choice` and
/// `pinv_jit_refuel` (which a loop header's slow path calls), a function
/// `(ctx, site) -> ()` in Cranelift's `preserve_all` convention that calls the callback in the
/// platform's convention (saving and restoring around it every register the callback may
/// clobber) and leaves the value read in the context's `scratch`. Compiled code calls them on a
/// θ read's slow path, so the values it keeps in registers across a read are not spilled on the
/// fast path for a call that is rarely made.
///
/// Compiled once per process into a module of their own, whose code is never freed; every unit
/// imports them by address.
fn read_shims() -> Result<&'static [(&'static str, usize)], JitError> {
    static SHIMS: OnceLock<Result<Vec<(&'static str, usize)>, String>> = OnceLock::new();
    SHIMS
        .get_or_init(|| compile_read_shims().map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| JitError::Target(e.clone()))
}

fn compile_read_shims() -> Result<Vec<(&'static str, usize)>, JitError> {
    let mut builder = JITBuilder::with_isa(isa(false)?, default_libcall_names());
    for (name, ptr) in abi::callbacks() {
        builder.symbol(name, ptr);
    }
    let mut jit = JITModule::new(builder);
    let ptr = jit.target_config().pointer_type();
    let codegen = |name: &str, e: &dyn fmt::Display| JitError::Codegen {
        function: name.to_string(),
        message: e.to_string(),
    };
    let mut defined = Vec::new();
    for callback in [abi::SYM_THETA, abi::SYM_CHOICE, abi::SYM_REFUEL] {
        let name = shim_name(callback)?;
        let mut callback_sig = jit.make_signature();
        callback_sig.params.push(AbiParam::new(ptr));
        callback_sig.params.push(AbiParam::new(types::I32));
        callback_sig.returns.push(AbiParam::new(types::I64));
        let callee = jit
            .declare_function(callback, Linkage::Import, &callback_sig)
            .map_err(|e| codegen(name, &e))?;
        let mut sig = callback_sig.clone();
        sig.returns.clear();
        sig.call_conv = CallConv::PreserveAll;
        let id = jit
            .declare_function(name, Linkage::Local, &sig)
            .map_err(|e| codegen(name, &e))?;
        let mut ctx = jit.make_context();
        ctx.func.signature = sig;
        let mut fbc = FunctionBuilderContext::new();
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let block = b.create_block();
            b.append_block_params_for_function_params(block);
            b.switch_to_block(block);
            let p = b.block_params(block).to_vec();
            let r = jit.declare_func_in_func(callee, b.func);
            let call = b.ins().call(r, &[p[0], p[1]]);
            let value = b.inst_results(call)[0];
            b.ins()
                .store(MemFlagsData::trusted(), value, p[0], abi::OFF_SCRATCH);
            b.ins().return_(&[]);
            b.seal_all_blocks();
            b.finalize(jit.target_config());
        }
        jit.define_function(id, &mut ctx)
            .map_err(|e| codegen(name, &e))?;
        defined.push((name, id));
    }
    jit.finalize_definitions()
        .map_err(|e| codegen("read shims", &e))?;
    let shims = defined
        .into_iter()
        .map(|(name, id)| (name, jit.get_finalized_function(id) as usize))
        .collect();
    // The shims' code lives as long as the process: every unit calls it.
    Box::leak(Box::new(jit));
    Ok(shims)
}

/// What translation needs while a unit is being built.
pub(crate) struct UnitBuilder<'m> {
    pub module: &'m Module,
    /// Boxed: the module is large, and moves from the builder to the unit.
    pub jit: Box<JITModule>,
    /// The Cranelift function of each IR function of the unit.
    pub functions: HashMap<FuncId, ClFuncId>,
    /// Functions that can call themselves (directly or not): they check the native stack.
    pub in_cycle: HashSet<FuncId>,
    /// Callees translated in place at every call (see [`inlinable`]), not compiled on their own.
    pub inlined: HashSet<FuncId>,
    sites: Vec<Site>,
    imports: HashMap<&'static str, ClFuncId>,
    registered: HashSet<&'static str>,
}

/// The address space a unit of `instructions` IR instructions reserves for its code and data:
/// generously more than it can need (inlining copies callees within a budget), at most 1 GiB.
/// Reserved, not committed: pages cost memory only once code is written to them.
fn unit_reservation(instructions: usize) -> usize {
    instructions
        .saturating_mul(512)
        .saturating_add(4 << 20)
        .min(1 << 30)
}

impl<'m> UnitBuilder<'m> {
    /// A builder whose code and data go to one reserved region of `reserve` bytes.
    ///
    /// One region, not the system allocator's separate mappings: calls between a unit's
    /// functions are 32-bit PC-relative on x86-64, and mappings made apart can be more than
    /// 2 GiB apart in a process with a large heap (a relocation that does not fit panics in
    /// Cranelift).
    fn new(
        module: &'m Module,
        single_pass: bool,
        reserve: usize,
    ) -> Result<UnitBuilder<'m>, JitError> {
        let mut builder = JITBuilder::with_isa(isa(single_pass)?, default_libcall_names());
        let arena = ArenaMemoryProvider::new_with_size(reserve).map_err(|e| {
            JitError::Target(format!(
                "cannot reserve {reserve} bytes of address space for compiled code: {e}"
            ))
        })?;
        builder.memory_provider(Box::new(arena));
        let mut registered = HashSet::new();
        for sym in semantics::extern_symbols() {
            builder.symbol(sym.name, sym.func.addr());
            registered.insert(sym.name);
        }
        for (name, ptr) in abi::callbacks() {
            builder.symbol(name, ptr);
            registered.insert(name);
        }
        for &(name, addr) in read_shims()? {
            builder.symbol(name, addr as *const u8);
            registered.insert(name);
        }
        // A libcall Cranelift emits for `floor` on machines without SSE4.1: the same function.
        builder.symbol("floor", semantics::pinv_floor as *const u8);
        Ok(UnitBuilder {
            module,
            jit: Box::new(JITModule::new(builder)),
            functions: HashMap::new(),
            in_cycle: HashSet::new(),
            inlined: HashSet::new(),
            sites: Vec::new(),
            imports: HashMap::new(),
            registered,
        })
    }

    /// The shim compiled code calls on a θ read's slow path instead of the callback `name`
    /// (see [`read_shims`]): imported in Cranelift's `preserve_all` convention, which clobbers no
    /// register at the call site.
    pub fn read_shim(&mut self, name: &'static str) -> Result<ClFuncId, JitError> {
        let shim = shim_name(name)?;
        let mut sig = self.jit.make_signature();
        sig.call_conv = CallConv::PreserveAll;
        sig.params.push(AbiParam::new(self.pointer_type()));
        sig.params.push(AbiParam::new(types::I32));
        self.import(shim, sig)
    }

    pub fn pointer_type(&self) -> cranelift_codegen::ir::Type {
        self.jit.target_config().pointer_type()
    }

    /// Adds a site and returns its index.
    pub fn site(&mut self, site: Site) -> u32 {
        self.sites.push(site);
        (self.sites.len() - 1) as u32
    }

    fn import(
        &mut self,
        name: &'static str,
        sig: cranelift_codegen::ir::Signature,
    ) -> Result<ClFuncId, JitError> {
        if let Some(&id) = self.imports.get(name) {
            return Ok(id);
        }
        let id = self
            .jit
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| JitError::Codegen {
                function: name.to_string(),
                message: e.to_string(),
            })?;
        self.imports.insert(name, id);
        Ok(id)
    }

    /// A shared `extern "C"` f64 function of `arity` operands.
    pub fn f64_function(&mut self, name: &'static str, arity: usize) -> Result<ClFuncId, JitError> {
        if let Some(&id) = self.imports.get(name) {
            return Ok(id);
        }
        let mut sig = self.jit.make_signature();
        for _ in 0..arity {
            sig.params.push(AbiParam::new(types::F64));
        }
        sig.returns.push(AbiParam::new(types::F64));
        self.import(name, sig)
    }

    /// One of the callbacks of [`abi`].
    pub fn callback(&mut self, name: &'static str) -> Result<ClFuncId, JitError> {
        if let Some(&id) = self.imports.get(name) {
            return Ok(id);
        }
        let ptr = self.pointer_type();
        let mut sig = self.jit.make_signature();
        sig.params.push(AbiParam::new(ptr));
        sig.params.push(AbiParam::new(types::I32));
        match name {
            abi::SYM_THETA | abi::SYM_CHOICE | abi::SYM_REFUEL => {
                sig.returns.push(AbiParam::new(types::I64))
            }
            abi::SYM_RECORD => {
                sig.params.push(AbiParam::new(types::I64));
                sig.params.push(AbiParam::new(types::I32));
                sig.returns.push(AbiParam::new(types::I32));
            }
            abi::SYM_SEGMENT => {
                sig.params.push(AbiParam::new(types::I32));
                sig.returns.push(AbiParam::new(types::I32));
            }
            abi::SYM_THETA_WITHIN => {
                sig.params.push(AbiParam::new(types::I64));
                sig.params.push(AbiParam::new(types::I64));
                sig.returns.push(AbiParam::new(types::I64));
            }
            abi::SYM_UNWIND => {}
            _ => return Err(JitError::UnresolvedSymbol(name.to_string())),
        }
        self.import(name, sig)
    }

    /// Every imported name must be registered: `finalize_definitions` panics on one it cannot
    /// resolve.
    fn check_imports(&self) -> Result<(), JitError> {
        for (_, decl) in self.jit.declarations().get_functions() {
            if decl.linkage == Linkage::Import {
                let name = decl.name.as_deref().unwrap_or("");
                if !self.registered.contains(name) {
                    return Err(JitError::UnresolvedSymbol(name.to_string()));
                }
            }
        }
        Ok(())
    }
}

/// What a unit's code needs of the native stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StackNeeds {
    /// Whether some function of the unit can call itself.
    pub recursive: bool,
    /// The largest native frame of the unit's functions, in bytes.
    pub max_frame: usize,
    /// The deepest native stack a non-recursive unit can use, in bytes.
    pub static_stack: usize,
}

/// Compiled code for a root function and its callees, and what the host needs to run it.
pub(crate) struct Unit {
    pub module: Arc<Module>,
    pub root: FuncId,
    /// The sites of the unit's code (the same in both tiers: translation does not depend on
    /// the register allocator).
    pub sites: Vec<Site>,
    /// Of the code compiled first.
    pub stack: StackNeeds,
    /// Bytes of machine code (compiled first).
    pub code_size: usize,
    /// Number of functions compiled.
    pub functions: usize,
    code: Mutex<Option<Box<JITModule>>>,
    /// For a [`Tier::Quick`] unit: calls so far, and the recompiled code once there is some.
    pub tier_up: Option<TierUp>,
}

/// The recompilation of a [`Tier::Quick`] unit.
pub(crate) struct TierUp {
    /// Calls so far (counted without atomic read-modify-write: approximate under contention,
    /// which only moves the moment of recompilation).
    pub calls: AtomicU32,
    /// The [`Tier::Optimized`] code, once compiled (`None` if that failed: the quick code stays).
    pub optimized: OnceLock<Option<Optimized>>,
}

/// A unit's [`Tier::Optimized`] code.
pub(crate) struct Optimized {
    pub entry: EntryFn,
    pub stack: StackNeeds,
    code: Mutex<Option<Box<JITModule>>>,
}

fn free(code: &mut Mutex<Option<Box<JITModule>>>) {
    let module = match code.get_mut() {
        Ok(m) => m.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    if let Some(module) = module {
        // SAFETY: the unit is dropped when the last handle is, and a call borrows its handle
        // for as long as compiled code runs, so no code of this module runs or will run.
        unsafe { module.free_memory() };
    }
}

impl Drop for Unit {
    fn drop(&mut self) {
        free(&mut self.code);
        if let Some(Some(optimized)) = self.tier_up.as_mut().and_then(|t| t.optimized.get_mut()) {
            free(&mut optimized.code);
        }
    }
}

impl Unit {
    /// Compiles the unit again as [`Tier::Optimized`] (once; later calls return the result).
    #[cold]
    #[inline(never)]
    pub fn optimize(&self) -> Option<&Optimized> {
        let tier_up = self.tier_up.as_ref()?;
        tier_up
            .optimized
            .get_or_init(|| {
                let m = &*self.module;
                let code =
                    compile_code(m, self.root, reachable(m, self.root), Tier::Optimized).ok()?;
                // The runtime reads errors from the quick code's site table.
                (code.sites == self.sites).then(|| Optimized {
                    entry: code.entry,
                    stack: code.stack,
                    code: Mutex::new(Some(code.jit)),
                })
            })
            .as_ref()
    }
}

/// A compiled function, ready to call ([`CompiledFunction::call_into`] and the other calls).
/// Cloning is cheap and shares the code; the code is freed when the last clone is dropped.
/// `Send + Sync`: calls from several threads at once are independent.
#[derive(Clone)]
pub struct CompiledFunction {
    pub(crate) unit: Arc<Unit>,
    pub(crate) func: FuncId,
    pub(crate) entry: EntryFn,
    /// The function's parameter and return types, at hand for every call.
    pub(crate) params: Arc<[Type]>,
    pub(crate) returns: Arc<[Type]>,
}

impl fmt::Debug for CompiledFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledFunction")
            .field("function", &self.name())
            .field("code", &format_args!("{:#x}", self.code_address()))
            .field("functions", &self.unit.functions)
            .field("code_size", &self.unit.code_size)
            .finish()
    }
}

impl CompiledFunction {
    /// The function's id in [`CompiledFunction::module`].
    pub fn function(&self) -> FuncId {
        self.func
    }

    /// The function's module-level name.
    pub fn name(&self) -> &str {
        &self.unit.module.functions[self.func].name
    }

    /// The module the code was compiled from.
    pub fn module(&self) -> &Arc<Module> {
        &self.unit.module
    }

    /// The address of the entry trampoline: identifies this compiled code.
    pub fn code_address(&self) -> usize {
        self.entry as usize
    }

    /// Bytes of machine code in the unit (the root, its callees and the trampoline).
    pub fn code_size(&self) -> usize {
        self.unit.code_size
    }

    /// Whether two handles share the same compiled code.
    pub fn same_code(&self, other: &CompiledFunction) -> bool {
        Arc::ptr_eq(&self.unit, &other.unit) && self.func == other.func
    }
}

/// Compiles `root` and every function it calls.
///
/// A large unit (more than 100 IR instructions) is compiled quickly first, with Cranelift's
/// single-pass register allocator, and recompiled with the backtracking allocator once it has
/// been called 2,000 times: the first call comes sooner, and a function called often ends up
/// in better code.
pub fn compile(module: Arc<Module>, root: FuncId) -> Result<CompiledFunction, JitError> {
    compile_tier(module, root, None)
}

/// How a unit's code was compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Single-pass register allocation: quick to compile, slower code (spills around most
    /// uses). Recompiled as [`Tier::Optimized`] after [`TIER_UP_CALLS`] calls.
    Quick,
    /// Backtracking register allocation.
    Optimized,
}

/// Calls of a [`Tier::Quick`] unit before it is recompiled as [`Tier::Optimized`]. The
/// recompilation costs about as much as the first compilation, once, on that call; at that
/// point the unit has shown it is called often (a sampler, a benchmark).
pub(crate) const TIER_UP_CALLS: u32 = 2000;

/// [`compile`], with the tier chosen by size unless `tier` says.
pub(crate) fn compile_tier(
    module: Arc<Module>,
    root: FuncId,
    tier: Option<Tier>,
) -> Result<CompiledFunction, JitError> {
    let m = &*module;
    if m.functions.get(root).is_none() {
        return Err(JitError::NoSuchFunction(root.to_string()));
    }
    let reach = reachable(m, root);
    let size: usize = reach
        .iter()
        .map(|&id| {
            let f = &m.functions[id];
            f.layout
                .iter()
                .map(|&b| f.blocks[b].insts.len())
                .sum::<usize>()
        })
        .sum();
    let blocks = |id: FuncId| m.functions[id].layout.len();
    let largest = reach.iter().copied().max_by_key(|&id| blocks(id));
    if let Some(big) = largest.filter(|&id| blocks(id) > MAX_JIT_BLOCKS || size > MAX_JIT_INSTS) {
        return Err(JitError::TooLarge {
            function: m.functions[root].name.clone(),
            blocks: blocks(big),
            instructions: size,
        });
    }
    for &id in &reach {
        crate::ir::verify::verify_function(m, id).map_err(|e| JitError::Invalid {
            function: m.functions[id].name.clone(),
            message: e.to_string(),
        })?;
    }
    let tier = tier.unwrap_or(if size > SINGLE_PASS_ABOVE {
        Tier::Quick
    } else {
        Tier::Optimized
    });
    let code = compile_code(m, root, reach, tier)?;
    let sig = &module.functions[root].sig;
    let entry = code.entry;
    let unit = Unit {
        module: Arc::clone(&module),
        root,
        sites: code.sites,
        stack: code.stack,
        code_size: code.code_size,
        functions: code.functions,
        code: Mutex::new(Some(code.jit)),
        tier_up: (tier == Tier::Quick).then(|| TierUp {
            calls: AtomicU32::new(0),
            optimized: OnceLock::new(),
        }),
    };
    Ok(CompiledFunction {
        params: sig.params.iter().copied().collect(),
        returns: sig.returns.iter().copied().collect(),
        unit: Arc::new(unit),
        func: root,
        entry,
    })
}

/// A unit's machine code and what running it needs.
struct Code {
    jit: Box<JITModule>,
    entry: EntryFn,
    sites: Vec<Site>,
    stack: StackNeeds,
    code_size: usize,
    functions: usize,
}

/// Translates and compiles `root` and the functions of `reach` (verified) as one unit.
fn compile_code(
    m: &Module,
    root: FuncId,
    reach: Vec<FuncId>,
    tier: Tier,
) -> Result<Code, JitError> {
    let instructions: usize = reach.iter().map(|&g| m.functions[g].insts.len()).sum();
    let mut ub = UnitBuilder::new(m, tier == Tier::Quick, unit_reservation(instructions))?;
    let graph = CallGraph::new(m, &reach);
    ub.in_cycle = graph.in_cycles();
    ub.inlined = reach
        .iter()
        .copied()
        .filter(|&g| g != root && inlinable(m, &graph, g))
        .collect();
    let reach: Vec<FuncId> = reach
        .into_iter()
        .filter(|g| !ub.inlined.contains(g))
        .collect();
    // A root that no function of the unit calls is the host's entry itself; otherwise a
    // trampoline calls it.
    let root_entry = !ub.in_cycle.contains(&root);
    for &id in &reach {
        let sig = if id == root && root_entry {
            entry_signature(&ub)
        } else {
            internal_signature(&ub, &m.functions[id])
        };
        let name = format!("pinv_fn{}", cranelift_entity::EntityRef::index(id));
        let cl = ub
            .jit
            .declare_function(&name, Linkage::Local, &sig)
            .map_err(|e| codegen(m, id, e))?;
        ub.functions.insert(id, cl);
    }
    // Callbacks are declared up front, so the translator can always find them.
    for name in [
        abi::SYM_THETA,
        abi::SYM_CHOICE,
        abi::SYM_RECORD,
        abi::SYM_SEGMENT,
        abi::SYM_THETA_WITHIN,
        abi::SYM_UNWIND,
    ] {
        ub.callback(name)?;
    }

    // Cranelift's contexts keep their allocations (the register allocator's above all) between
    // functions: reusing them per thread makes compiling a small unit several times faster.
    let (mut ctx, mut fbc) = SCRATCH
        .with(|s| s.borrow_mut().take())
        .unwrap_or_else(|| (ub.jit.make_context(), FunctionBuilderContext::new()));
    let result = compile_functions(&mut ub, &reach, root, root_entry, &mut ctx, &mut fbc);
    if result.is_ok() {
        // After a failure the builder context may be half-used: it is dropped instead.
        ub.jit.clear_context(&mut ctx);
        SCRATCH.with(|s| *s.borrow_mut() = Some((ctx, fbc)));
    }
    let (entry_id, frames, code_size) = result?;
    ub.check_imports()?;
    ub.jit
        .finalize_definitions()
        .map_err(|e| codegen(m, root, e))?;
    let ptr = ub.jit.get_finalized_function(entry_id);
    // SAFETY: the entry (the root itself, or `build_entry`'s trampoline) was defined with
    // exactly `EntryFn`'s signature in the platform's C calling convention.
    let entry: EntryFn = unsafe { std::mem::transmute::<*const u8, EntryFn>(ptr) };

    let recursive = !ub.in_cycle.is_empty();
    let max_frame = frames.values().copied().max().unwrap_or(0);
    let static_stack = if recursive {
        0
    } else {
        deepest_path(m, root, &frames, &ub.inlined)
    };
    let UnitBuilder { jit, sites, .. } = ub;
    Ok(Code {
        jit,
        entry,
        sites,
        stack: StackNeeds {
            recursive,
            max_frame,
            static_stack,
        },
        code_size,
        functions: reach.len(),
    })
}

/// Whether `PINV_JIT_DUMP` asks for the Cranelift IR and the machine code of every compiled
/// function on stderr.
fn dump() -> bool {
    static DUMP: OnceLock<bool> = OnceLock::new();
    *DUMP.get_or_init(|| std::env::var_os("PINV_JIT_DUMP").is_some_and(|v| !v.is_empty()))
}

/// Translates and defines every function of the unit and, unless the root is compiled as the
/// entry (`root_entry`), the entry trampoline; returns the entry, each function's frame size and
/// the code size.
fn compile_functions(
    ub: &mut UnitBuilder<'_>,
    reach: &[FuncId],
    root: FuncId,
    root_entry: bool,
    ctx: &mut cranelift_codegen::Context,
    fbc: &mut FunctionBuilderContext,
) -> Result<(ClFuncId, HashMap<FuncId, usize>, usize), JitError> {
    let m = ub.module;
    let mut frames: HashMap<FuncId, usize> = HashMap::new();
    let mut code_size = 0;
    for &id in reach {
        ub.jit.clear_context(ctx);
        translate_function(ub, id, root_entry && id == root, &mut ctx.func, fbc)?;
        if dump() {
            eprintln!("; {}\n{}", m.functions[id].name, ctx.func.display());
        }
        let cl = ub.functions[&id];
        ctx.set_disasm(dump());
        ub.jit
            .define_function(cl, ctx)
            .map_err(|e| codegen(m, id, e))?;
        let compiled = ctx.compiled_code();
        if dump() {
            if let Some(v) = compiled.and_then(|c| c.vcode.as_ref()) {
                eprintln!("; asm {}\n{}", m.functions[id].name, v);
            }
        }
        let frame = compiled
            .and_then(|c| c.buffer.frame_layout())
            .map_or(UNKNOWN_FRAME, |l| l.frame_to_fp_offset as usize + 32);
        code_size += compiled.map_or(0, |c| c.buffer.data().len());
        frames.insert(id, frame);
    }

    if root_entry {
        return Ok((ub.functions[&root], frames, code_size));
    }
    ub.jit.clear_context(ctx);
    let entry_id = build_entry(ub, root, ctx, fbc)?;
    code_size += ctx.compiled_code().map_or(0, |c| c.buffer.data().len());
    Ok((entry_id, frames, code_size))
}

fn codegen(m: &Module, id: FuncId, e: impl fmt::Display) -> JitError {
    JitError::Codegen {
        function: m.functions[id].name.clone(),
        message: e.to_string(),
    }
}

/// The trampoline `(ctx, args, out) -> status` that checks and loads the root's arguments from
/// `Const`s, calls it, and writes its results as `Const`s when it finished.
fn build_entry(
    ub: &mut UnitBuilder<'_>,
    root: FuncId,
    ctx: &mut cranelift_codegen::Context,
    fbc: &mut FunctionBuilderContext,
) -> Result<ClFuncId, JitError> {
    let m = ub.module;
    let func = &m.functions[root];
    let sig = entry_signature(ub);
    let id = ub
        .jit
        .declare_function("pinv_entry", Linkage::Local, &sig)
        .map_err(|e| codegen(m, root, e))?;
    ctx.func.signature = sig;
    let callee = ub.functions[&root];
    let flags = MemFlagsData::trusted();
    let returns = &func.sig.returns;
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, fbc);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let p = b.block_params(block).to_vec();
        let (c, args, out) = (p[0], p[1], p[2]);
        let mut cargs = vec![c];
        cargs.extend(load_const_args(&mut b, args, &func.sig.params));
        // Several results come back in 8-byte slots (see `abi`), here on the stack.
        let area = (returns.len() >= 2).then(|| {
            let size = 8 * returns.len() as u32;
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 3));
            b.ins().stack_addr(ub.pointer_type(), slot, 0)
        });
        cargs.extend(area);
        let r = ub.jit.declare_func_in_func(callee, b.func);
        let call = b.ins().call(r, &cargs);
        let rets = b.inst_results(call).to_vec();
        let done = b.create_block();
        let stopped = b.create_block();
        b.set_cold_block(stopped);
        b.ins().brif(rets[0], stopped, &[], done, &[]);
        b.switch_to_block(stopped);
        let status = b.ins().uextend(types::I32, rets[0]);
        b.ins().return_(&[status]);
        b.switch_to_block(done);
        for (i, &ty) in returns.iter().enumerate() {
            let v = match (area, ty) {
                (None, _) => rets[1],
                (Some(a), Type::Bool) => {
                    let w = b.ins().load(types::I64, flags, a, (8 * i) as i32);
                    b.ins().ireduce(types::I8, w)
                }
                (Some(a), ty) => b.ins().load(cl_type(ty), flags, a, (8 * i) as i32),
            };
            store_const(&mut b, out, i, ty, v);
        }
        let ok = b.ins().iconst(types::I32, i64::from(abi::STATUS_OK));
        b.ins().return_(&[ok]);
        b.seal_all_blocks();
        b.finalize(ub.jit.target_config());
    }
    ub.jit
        .define_function(id, ctx)
        .map_err(|e| codegen(m, root, e))?;
    Ok(id)
}

/// The functions called (directly or not) from `root`, root first.
fn reachable(m: &Module, root: FuncId) -> Vec<FuncId> {
    let mut seen = HashSet::from([root]);
    let mut order = vec![root];
    let mut i = 0;
    while i < order.len() {
        for callee in callees(m, order[i]) {
            if seen.insert(callee) {
                order.push(callee);
            }
        }
        i += 1;
    }
    order
}

/// The module functions `id` calls, in order of appearance.
fn callees(m: &Module, id: FuncId) -> Vec<FuncId> {
    let Some(f) = m.functions.get(id) else {
        return Vec::new();
    };
    f.insts_in_layout()
        .filter_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Call { callee, .. } => Some(*callee),
            _ => None,
        })
        .collect()
}

/// The calls among the functions of a unit, each function's callees collected once (a unit
/// of thousands of functions must not collect them once per function: that was quadratic).
struct CallGraph {
    /// The functions, in the unit's order.
    nodes: Vec<FuncId>,
    /// Each function's callees, one entry per call instruction.
    callees: HashMap<FuncId, Vec<FuncId>>,
    /// How many call instructions of the unit call each function.
    calls: HashMap<FuncId, usize>,
}

impl CallGraph {
    fn new(m: &Module, reach: &[FuncId]) -> CallGraph {
        let mut callees_of = HashMap::with_capacity(reach.len());
        let mut calls: HashMap<FuncId, usize> = HashMap::new();
        for &f in reach {
            let list = callees(m, f);
            for &g in &list {
                *calls.entry(g).or_default() += 1;
            }
            callees_of.insert(f, list);
        }
        CallGraph {
            nodes: reach.to_vec(),
            callees: callees_of,
            calls,
        }
    }

    fn callees(&self, f: FuncId) -> &[FuncId] {
        self.callees.get(&f).map_or(&[], Vec::as_slice)
    }

    /// The functions that can reach themselves through calls: those in a strongly connected
    /// component of more than one function, or calling themselves. Tarjan's algorithm with an
    /// explicit stack, linear in the calls.
    fn in_cycles(&self) -> HashSet<FuncId> {
        #[derive(Clone, Copy)]
        struct Node {
            index: usize,
            low: usize,
            on_stack: bool,
        }
        let mut nodes: HashMap<FuncId, Node> = HashMap::with_capacity(self.nodes.len());
        let mut stack: Vec<FuncId> = Vec::new();
        let mut out = HashSet::new();
        let mut next = 0;
        for &start in &self.nodes {
            if nodes.contains_key(&start) {
                continue;
            }
            // (function, how many of its callees are done)
            let mut work: Vec<(FuncId, usize)> = vec![(start, 0)];
            while let Some(&mut (f, ref mut k)) = work.last_mut() {
                if *k == 0 && !nodes.contains_key(&f) {
                    nodes.insert(
                        f,
                        Node {
                            index: next,
                            low: next,
                            on_stack: true,
                        },
                    );
                    next += 1;
                    stack.push(f);
                }
                let callees = self.callees(f);
                if let Some(&g) = callees.get(*k) {
                    *k += 1;
                    if !self.callees.contains_key(&g) {
                        continue; // outside the unit
                    }
                    match nodes.get(&g).copied() {
                        None => work.push((g, 0)),
                        Some(n) if n.on_stack => {
                            let node = nodes.get_mut(&f).expect("visited");
                            node.low = node.low.min(n.index);
                        }
                        Some(_) => {}
                    }
                    continue;
                }
                work.pop();
                let node = nodes[&f];
                if let Some(&(parent, _)) = work.last() {
                    let p = nodes.get_mut(&parent).expect("visited");
                    p.low = p.low.min(node.low);
                }
                if node.low == node.index {
                    let mut component = Vec::new();
                    while let Some(g) = stack.pop() {
                        if let Some(n) = nodes.get_mut(&g) {
                            n.on_stack = false;
                        }
                        component.push(g);
                        if g == f {
                            break;
                        }
                    }
                    if component.len() > 1 || self.callees(f).contains(&f) {
                        out.extend(component);
                    }
                }
            }
        }
        out
    }
}

/// The most native stack a call of `root` can use when no function recurses (an inlined
/// callee's frame is part of its caller's).
fn deepest_path(
    m: &Module,
    root: FuncId,
    frames: &HashMap<FuncId, usize>,
    inlined: &HashSet<FuncId>,
) -> usize {
    fn go(
        m: &Module,
        f: FuncId,
        frames: &HashMap<FuncId, usize>,
        inlined: &HashSet<FuncId>,
        memo: &mut HashMap<FuncId, usize>,
    ) -> usize {
        if let Some(&d) = memo.get(&f) {
            return d;
        }
        let below = callees(m, f)
            .into_iter()
            .filter(|g| !inlined.contains(g))
            .map(|g| crate::stack::ensure_sufficient_stack(|| go(m, g, frames, inlined, memo)))
            .max()
            .unwrap_or(0);
        let d = frames.get(&f).copied().unwrap_or(UNKNOWN_FRAME) + below;
        memo.insert(f, d);
        d
    }
    go(m, root, frames, inlined, &mut HashMap::new())
}

/// IR instructions an inlined callee may have, times the calls of it in the unit.
const INLINE_BUDGET: usize = 256;

/// Whether calls of `g` are translated in place rather than compiled as calls: `g` calls
/// nothing, cannot fail (no check, `fail`, θ read, record or integer division), has no loop
/// (so its only fuel check is at its entry), and is small for the number of calls of it in the
/// unit. The final check of a generated inverse calls the forward function: usually such a
/// callee, compiled on its own for one call.
fn inlinable(m: &Module, graph: &CallGraph, g: FuncId) -> bool {
    let Some(f) = m.functions.get(g) else {
        return false;
    };
    let mut size: usize = 0;
    for (_, i) in f.insts_in_layout() {
        size += 1;
        match &f.insts[i].kind {
            InstKind::Call { .. }
            | InstKind::Theta(_)
            | InstKind::Choice { .. }
            | InstKind::Record { .. }
            | InstKind::Segment(_)
            | InstKind::Check { .. }
            | InstKind::Fail { .. } => return false,
            InstKind::Prim { op, .. } if op.can_trap() => return false,
            _ => {}
        }
    }
    let calls = graph.calls.get(&g).copied().unwrap_or(0);
    size.saturating_mul(calls) <= INLINE_BUDGET
        && crate::jit::translate::reverse_postorder(f).1.is_empty()
}
