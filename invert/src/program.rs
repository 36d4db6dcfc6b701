//! The library API: load a program, run it, invert its functions, call the inverses.
//!
//! Forward code, inverses and PGFs run as native code by default ([`Engine::Jit`]), compiled on
//! first use and kept in the program's [`CodeCache`]: forward code under [`Owner::Forward`],
//! an inverse and its PGF under [`Owner::Inverse`] keyed by the overlay stack's identity and the
//! options, with the layers consulted as dependencies. [`Program::with_engine`] picks the
//! interpreter instead; both give the same results bit for bit. A function the backend cannot
//! compile runs in the interpreter.
//!
//! [`Owner::Forward`]: pinv_core::jit::Owner::Forward
//! [`Owner::Inverse`]: pinv_core::jit::Owner::Inverse

use crate::egraph::IsolationReport;
use crate::error::{Error, Result};
use crate::reorient::{reorient_deferring_pgfs, Inversion, ReorientOptions};
use crate::theta::{Sampler, TapeRecorder, ThetaSchema};
use pinv_core::interp::{InterpConfig, Interpreter, Outcome, TapeSource, ThetaSource};
use pinv_core::ir::write::{write_function, WriteOptions};
use pinv_core::ir::{Const, FuncId, FuncKind, Function, Module, Type};
use pinv_core::jit::{
    CodeCache, CompiledFunction, Engine, InverseDeps, InverseKey, JitError, LayerVersion,
};
use pinv_core::span::SourceFile;
use pinv_core::Compiled;
use pinv_primitives::declared::declared_layer;
use pinv_primitives::{Layer, LayerStamp, Stack};
use std::collections::BTreeSet;
use std::hash::Hasher;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The step limit of every run (forward, inverse, PGF) unless one is set: a billion executed
/// instructions, about a second of compiled code. It is a guard against runs that never end,
/// set high enough for loops of 10⁷ iterations, whose inverse and PGF do several times the
/// forward work per iteration.
pub const DEFAULT_STEP_LIMIT: u64 = 1_000_000_000;

/// A compiled `.pinv` module: its functions can be run forward and inverted.
///
/// ```
/// let program = pinv::Program::parse("demo.pinv", "fn f(x: f64) -> f64 { 2.0 * x + 1.0 }")?;
/// let y = program.run("f", &[pinv::Const::F64(3.0)])?;
/// assert_eq!(y, [pinv::Const::F64(7.0)]);
/// # Ok::<(), pinv::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Program {
    file: SourceFile,
    compiled: Compiled,
    declared: Arc<Layer>,
    config: InterpConfig,
    /// The forward module, shared with compiled code.
    shared: Arc<Module>,
    engine: Engine,
    cache: Arc<CodeCache>,
}

impl Program {
    /// Compiles source text; `name` is used in error locations.
    pub fn parse(name: &str, text: &str) -> Result<Program> {
        Program::from_source(SourceFile::new(name, text))
    }

    /// Reads and compiles a file.
    pub fn load(path: impl AsRef<Path>) -> Result<Program> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Program::parse(&path.display().to_string(), &text)
    }

    /// Compiles a source file.
    pub fn from_source(file: SourceFile) -> Result<Program> {
        let compiled = match pinv_core::compile_source(&file) {
            Ok(c) => c,
            Err(pinv_core::Error::Compile(e)) => return Err(Error::Compile(e)),
            Err(e) => return Err(Error::Internal(e.to_string())),
        };
        let declared = Arc::new(declared_layer(&compiled.module));
        let shared = Arc::new(compiled.module.clone());
        Ok(Program {
            file,
            compiled,
            declared,
            config: InterpConfig::default().with_step_limit(DEFAULT_STEP_LIMIT),
            shared,
            engine: Engine::default(),
            cache: Arc::new(CodeCache::new()),
        })
    }

    /// Sets the interpreter limits used by [`Program::run`] and by inverses built afterwards.
    pub fn with_config(mut self, config: InterpConfig) -> Program {
        self.config = config;
        self
    }

    /// Sets the engine used by [`Program::run`] and by inverses built afterwards (the default is
    /// [`Engine::Jit`]).
    pub fn with_engine(mut self, engine: Engine) -> Program {
        self.engine = engine;
        self
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// This program with a code cache of its own (its clones share the one they were made
    /// with): for a thread that checks functions apart from the others and frees its code as
    /// it goes.
    pub fn with_own_code_cache(mut self) -> Program {
        self.cache = Arc::new(CodeCache::new());
        self
    }

    /// The cache of this program's compiled code (shared by its clones and inverses).
    pub fn code_cache(&self) -> &Arc<CodeCache> {
        &self.cache
    }

    pub fn source(&self) -> &SourceFile {
        &self.file
    }

    /// The IR of every function, declarations included.
    pub fn module(&self) -> &Module {
        &self.compiled.module
    }

    /// The names of the module's `fn`s, in source order.
    pub fn function_names(&self) -> Vec<&str> {
        self.module()
            .iter()
            .filter(|(_, f)| f.kind == FuncKind::Fn)
            .map(|(_, f)| f.name.as_str())
            .collect()
    }

    /// A function by its module-level name (`f`, or `inverse:f` for a declaration).
    pub fn function(&self, name: &str) -> Result<(FuncId, &Function)> {
        let module = self.module();
        module
            .get(name)
            .map(|id| (id, &module.functions[id]))
            .ok_or_else(|| Error::NoSuchFunction {
                name: name.to_string(),
                available: self.function_names().join(", "),
            })
    }

    /// Runs a function forward, with the program's engine. Native code that cannot be compiled
    /// is [`Error::Jit`] (a bug: the verifier accepted the function), not a quiet change of
    /// engine; [`Engine::Interp`] runs the reference interpreter.
    pub fn run(&self, name: &str, args: &[Const]) -> Result<Vec<Const>> {
        let (id, f) = self.function(name)?;
        check_values("input", &f.name, &f.sig.params, args)?;
        if self.engine == Engine::Jit {
            let code = self.cache.forward(&self.shared, id)?;
            return Ok(code.call_traced(&self.config, args, None)?.results);
        }
        Ok(Interpreter::new(self.module())
            .with_config(self.config)
            .call(id, args)?)
    }

    /// The native code of a function (compiled now, or taken from the cache); [`Error::Jit`]
    /// when it cannot be compiled.
    pub fn native(&self, name: &str) -> Result<CompiledFunction> {
        let (id, _) = self.function(name)?;
        self.cache.forward(&self.shared, id).map_err(Error::Jit)
    }

    /// The overlay stack of this program: the standard layer, and the module's own
    /// `inverse`/`pgf` declarations over it.
    pub fn stack(&self) -> Stack {
        Stack::standard().with_arc(Arc::clone(&self.declared))
    }

    /// Inverts a function under [`Program::stack`].
    ///
    /// ```
    /// use pinv::{Const, Program, Sampler};
    /// let program = Program::parse("demo.pinv", "fn f(x: f64, y: f64) -> f64 { x + y }")?;
    /// let inverse = program.invert("f")?;
    /// // One θ on every path: how y = 5 is split between x and y (a rounding fix-up is read on
    /// // the rare paths where the split loses precision).
    /// let always = inverse.schema().slots.iter().filter(|s| !s.conditional).count();
    /// assert_eq!(always, 1);
    /// let x = inverse.call_with_tape(&[Const::F64(5.0)], &[Const::F64(2.0)])?;
    /// assert_eq!(x, [Const::F64(3.0), Const::F64(2.0)]);
    /// # Ok::<(), pinv::Error>(())
    /// ```
    pub fn invert(&self, name: &str) -> Result<Inverse> {
        self.invert_with(name, &self.stack(), &ReorientOptions::default())
    }

    /// Inverts a function under `stack` (push user layers onto [`Program::stack`] to override
    /// rules).
    pub fn invert_with(
        &self,
        name: &str,
        stack: &Stack,
        options: &ReorientOptions,
    ) -> Result<Inverse> {
        let (id, f) = self.function(name)?;
        let (
            Inversion {
                module,
                forward,
                inverse,
                pgf,
                pgf_built,
                consulted,
                isolation,
                phases,
            },
            deferred,
        ) = reorient_deferring_pgfs(self.module(), id, stack, options)?;
        // Left out for now: built by inverting again, when first needed (`Inverse::full`).
        let rebuild = (!pgf_built).then(|| Rebuild {
            module: Arc::clone(&self.shared),
            function: id,
            stack: stack.clone(),
            options: ReorientOptions {
                lazy_pgf: false,
                ..options.clone()
            },
        });
        let started = std::time::Instant::now();
        let schema = ThetaSchema::of(&module, inverse, Some(&self.file));
        let mut phases = phases;
        phases.0.push(("schema", started.elapsed()));
        let key = inverse_key(stack, options);
        let deps = InverseDeps {
            functions: forward_callees(self.module(), id),
            layers: consulted
                .iter()
                .map(|s| LayerVersion {
                    layer: s.id.0,
                    version: s.version,
                })
                .collect(),
        };
        Ok(Inverse {
            function: f.name.clone(),
            forward,
            inputs: f.sig.params.clone(),
            outputs: f.sig.returns.clone(),
            module: Arc::new(module),
            inverse,
            pgf,
            schema,
            consulted,
            isolation,
            phases,
            config: self.config,
            engine: self.engine,
            deferred: Arc::new(Deferred {
                pgfs: deferred,
                rebuild,
                full: OnceLock::new(),
            }),
            native: Arc::new(Native {
                cache: Arc::clone(&self.cache),
                key,
                deps,
                inverse: OnceLock::new(),
                pgf: OnceLock::new(),
                forward: OnceLock::new(),
            }),
        })
    }
}

/// The cache key of inverse code: the stack's identity (every layer's id and version, top
/// first) and the options.
fn inverse_key(stack: &Stack, options: &ReorientOptions) -> InverseKey {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    options.hash_key(&mut h);
    InverseKey::new(
        stack
            .identity()
            .iter()
            .flat_map(|s| [s.id.0, s.version])
            .chain([h.finish()]),
    )
}

/// `f` and every module function it calls, by name: what an inverse of `f` is derived from.
fn forward_callees(module: &Module, f: FuncId) -> Vec<String> {
    let mut seen = BTreeSet::from([f]);
    let mut stack = vec![f];
    while let Some(id) = stack.pop() {
        let func = &module.functions[id];
        for (_, i) in func.insts_in_layout() {
            if let pinv_core::ir::InstKind::Call { callee, .. } = &func.insts[i].kind {
                if seen.insert(*callee) {
                    stack.push(*callee);
                }
            }
        }
    }
    seen.into_iter()
        .map(|id| module.functions[id].name.clone())
        .collect()
}

/// An inverse's native code: compiled on first use under the inversion's owner.
#[derive(Debug)]
struct Native {
    cache: Arc<CodeCache>,
    key: InverseKey,
    deps: InverseDeps,
    inverse: OnceLock<std::result::Result<CompiledFunction, JitError>>,
    pgf: OnceLock<std::result::Result<CompiledFunction, JitError>>,
    forward: OnceLock<std::result::Result<CompiledFunction, JitError>>,
}

impl Native {
    fn get<'a>(
        &'a self,
        slot: &'a OnceLock<std::result::Result<CompiledFunction, JitError>>,
        module: &Arc<Module>,
        func: FuncId,
    ) -> std::result::Result<&'a CompiledFunction, &'a JitError> {
        slot.get_or_init(|| self.cache.inverse(&self.key, module, func, &self.deps))
            .as_ref()
    }
}

/// What the reorientation left for when a PGF is first needed, and the module once it is done:
/// PGFs to simplify ([`crate::reorient::reorient_deferring_pgfs`]), or PGFs to build, by
/// inverting again with them ([`ReorientOptions::lazy_pgf`]).
#[derive(Debug)]
struct Deferred {
    pgfs: Vec<FuncId>,
    rebuild: Option<Rebuild>,
    full: OnceLock<Full>,
}

/// How to invert again with the PGFs: the inversion's inputs.
#[derive(Debug)]
struct Rebuild {
    module: Arc<Module>,
    function: FuncId,
    stack: Stack,
    options: ReorientOptions,
}

/// The module with every generated function final, and the PGF's id in it.
#[derive(Debug)]
struct Full {
    module: Arc<Module>,
    pgf: Result<FuncId, crate::reorient::NoPgf>,
}

/// The parametric inverse of one function: `f⁻¹(y, θ)` and its PGF.
#[derive(Clone, Debug)]
pub struct Inverse {
    function: String,
    forward: FuncId,
    inputs: Vec<Type>,
    outputs: Vec<Type>,
    /// The module as the reorientation made it: the inverse is final; PGFs in `deferred` are
    /// not simplified yet (see [`Inverse::full_module`]).
    module: Arc<Module>,
    deferred: Arc<Deferred>,
    inverse: FuncId,
    pgf: Result<FuncId, crate::reorient::NoPgf>,
    schema: ThetaSchema,
    consulted: BTreeSet<LayerStamp>,
    isolation: Vec<IsolationReport>,
    phases: crate::reorient::Phases,
    config: InterpConfig,
    engine: Engine,
    native: Arc<Native>,
}

impl Inverse {
    /// The name of the inverted function.
    pub fn function(&self) -> &str {
        &self.function
    }

    /// The types of the function's inputs (what the inverse returns).
    pub fn input_types(&self) -> &[Type] {
        &self.inputs
    }

    /// The types of the function's outputs (what the inverse takes).
    pub fn output_types(&self) -> &[Type] {
        &self.outputs
    }

    /// What each θ read means.
    pub fn schema(&self) -> &ThetaSchema {
        &self.schema
    }

    /// The module holding the forward functions and the generated inverse and PGF. For an
    /// inverse built with [`ReorientOptions::lazy_pgf`], the first call builds the PGF.
    pub fn module(&self) -> &Module {
        self.full_module()
    }

    /// The module with every generated function final: the reorientation's module, or (made the
    /// first time something needs a PGF) a copy with the deferred PGFs simplified, or the module
    /// of a second inversion that builds the PGFs. The inverse is the same in all, so inverse
    /// code is compiled and run from the first.
    fn full_module(&self) -> &Arc<Module> {
        match self.full() {
            Some(full) => &full.module,
            None => &self.module,
        }
    }

    /// The PGF's id in [`Inverse::full_module`], or why there is none.
    fn pgf_in_full(&self) -> std::result::Result<FuncId, &crate::reorient::NoPgf> {
        match self.full() {
            Some(full) => full.pgf.as_ref().copied(),
            None => self.pgf.as_ref().copied(),
        }
    }

    /// What [`Inverse::full_module`] needs beyond the reorientation's module, made once.
    fn full(&self) -> Option<&Full> {
        let deferred = &*self.deferred;
        if deferred.pgfs.is_empty() && deferred.rebuild.is_none() {
            return None;
        }
        Some(deferred.full.get_or_init(|| match &deferred.rebuild {
            Some(rebuild) => self.rebuilt(rebuild),
            None => {
                let mut module = (*self.module).clone();
                crate::reorient::finish_deferred_pgfs(&self.module, &mut module, &deferred.pgfs);
                Full {
                    module: Arc::new(module),
                    pgf: self.pgf.clone(),
                }
            }
        }))
    }

    /// Inverts again, with the PGFs ([`ReorientOptions::lazy_pgf`]). Should that fail (a time
    /// limit), the inverse has no PGF, and says why.
    fn rebuilt(&self, rebuild: &Rebuild) -> Full {
        let Rebuild {
            module,
            function,
            stack,
            options,
        } = rebuild;
        let failed = |reason: String| Full {
            module: Arc::clone(&self.module),
            pgf: Err(crate::reorient::NoPgf { reason }),
        };
        let inversion = match crate::reorient::reorient(module, *function, stack, options) {
            Ok(inversion) => inversion,
            Err(e) => return failed(format!("building it failed: {e}")),
        };
        // The θ tape the PGF writes is the one this inverse reads.
        let text = |m: &Module, id: FuncId| write_function(m, id, &WriteOptions::default());
        let same = text(&inversion.module, inversion.inverse) == text(&self.module, self.inverse);
        debug_assert!(same, "the inverse built again differs");
        if !same {
            return failed("the inverse built again with it differs (an internal error)".into());
        }
        Full {
            module: Arc::new(inversion.module),
            pgf: inversion.pgf,
        }
    }

    /// The generated inverse function's id in [`Inverse::module`].
    pub fn inverse_id(&self) -> FuncId {
        self.inverse
    }

    /// The generated PGF's id, or why there is none.
    pub fn pgf_id(&self) -> std::result::Result<FuncId, &str> {
        self.pgf_in_full().map_err(|why| why.reason.as_str())
    }

    /// The layers consulted while inverting (misses included).
    pub fn consulted(&self) -> &BTreeSet<LayerStamp> {
        &self.consulted
    }

    /// What e-graph isolation did to the function and the functions it calls
    /// ([`crate::egraph`]).
    pub fn isolation(&self) -> &[IsolationReport] {
        &self.isolation
    }

    /// How long each phase of building this inverse took ([`crate::reorient::Phases`]), the
    /// θ schema last. Native code is compiled later, on first use ([`Inverse::native`]).
    pub fn phases(&self) -> &crate::reorient::Phases {
        &self.phases
    }

    /// The engine this inverse runs with.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// This inverse, run with `engine` (compiled code is shared with the original).
    pub fn with_engine(mut self, engine: Engine) -> Inverse {
        self.engine = engine;
        self
    }

    /// The native code of the inverse (compiled now, or taken from the program's cache).
    pub fn native(&self) -> std::result::Result<CompiledFunction, JitError> {
        self.native
            .get(&self.native.inverse, &self.module, self.inverse)
            .cloned()
            .map_err(Clone::clone)
    }

    /// The native code of the PGF: [`Error::Jit`] when it cannot be compiled, as
    /// [`Inverse::native`] says, and the reason when the inverse has no PGF.
    pub fn native_pgf(&self) -> Result<CompiledFunction> {
        let id = self.pgf_or_error()?;
        self.native
            .get(&self.native.pgf, self.full_module(), id)
            .cloned()
            .map_err(|e| Error::Jit(e.clone()))
    }

    /// Runs `func` of `module` (the inverse's, see [`Inverse::full_module`]) with the inverse's
    /// engine.
    fn run(
        &self,
        module: &Arc<Module>,
        slot: &OnceLock<std::result::Result<CompiledFunction, JitError>>,
        func: FuncId,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
    ) -> Result<Vec<Const>> {
        Ok(self
            .run_outcome(&self.config, module, slot, func, args, theta)?
            .results)
    }

    /// [`Inverse::run`] with limits `config`, and what the run cost.
    fn run_outcome(
        &self,
        config: &InterpConfig,
        module: &Arc<Module>,
        slot: &OnceLock<std::result::Result<CompiledFunction, JitError>>,
        func: FuncId,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
    ) -> Result<Outcome> {
        if self.engine == Engine::Jit {
            // Native code was asked for: a function that cannot be compiled is an error that
            // says so (the interpreter, `Engine::Interp`, runs it), not a silent fall back. One
            // too large to compile quickly is the JIT's documented limit, and the interpreter
            // (bit for bit the same) runs it.
            match self.native.get(slot, module, func) {
                Ok(code) => return Ok(code.call_traced(config, args, theta)?),
                Err(JitError::TooLarge { .. }) => {}
                Err(e) => return Err(Error::Jit(e.clone())),
            }
        }
        Ok(Interpreter::new(module)
            .with_config(*config)
            .call_traced(func, args, theta)?)
    }

    /// Runs the function forward.
    pub fn forward(&self, x: &[Const]) -> Result<Vec<Const>> {
        check_values("input", &self.function, &self.inputs, x)?;
        self.run(&self.module, &self.native.forward, self.forward, x, None)
    }

    /// Runs the function forward: its outputs and how many instructions the run took.
    pub fn forward_counted(&self, x: &[Const]) -> Result<(Vec<Const>, u64)> {
        check_values("input", &self.function, &self.inputs, x)?;
        let o = self.run_outcome(
            &self.config,
            &self.module,
            &self.native.forward,
            self.forward,
            x,
            None,
        )?;
        Ok((o.results, o.steps))
    }

    /// The limits every run of this inverse (forward, inverse and PGF) has.
    pub fn limits(&self) -> InterpConfig {
        self.config
    }

    /// This inverse with other limits. Cheap: the copies share their compiled code.
    pub fn with_limits(&self, config: InterpConfig) -> Inverse {
        Inverse {
            config,
            ..self.clone()
        }
    }

    /// `f⁻¹(y, θ)` with θ read from `theta`. A θ or y outside the inverse's domain is an
    /// [`Error::Runtime`] for which [`Error::is_domain_error`] holds; so is a θ that makes the
    /// program's own arithmetic trap ([`Error::in_inverse`]).
    pub fn call(&self, y: &[Const], theta: &mut dyn ThetaSource) -> Result<Vec<Const>> {
        check_values("output", &self.function, &self.outputs, y)?;
        self.run(
            &self.module,
            &self.native.inverse,
            self.inverse,
            y,
            Some(theta),
        )
        .map_err(Error::in_inverse)
    }

    /// [`Inverse::call`] with at most `step_limit` steps (and the inverse's other limits).
    pub fn call_limited(
        &self,
        y: &[Const],
        theta: &mut dyn ThetaSource,
        step_limit: u64,
    ) -> Result<Vec<Const>> {
        check_values("output", &self.function, &self.outputs, y)?;
        let config = self
            .config
            .with_step_limit(step_limit.min(self.config.step_limit.unwrap_or(u64::MAX)));
        self.run_outcome(
            &config,
            &self.module,
            &self.native.inverse,
            self.inverse,
            y,
            Some(theta),
        )
        .map(|o| o.results)
        .map_err(Error::in_inverse)
    }

    /// `f⁻¹(y, θ)` with an explicit tape, which must be read to its end.
    pub fn call_with_tape(&self, y: &[Const], tape: &[Const]) -> Result<Vec<Const>> {
        let mut source = TapeSource::new(tape.to_vec());
        let x = self.call(y, &mut source)?;
        if source.pos() != tape.len() {
            return Err(Error::BadValues(format!(
                "θ has {} values but the inverse of `{}` read {}",
                tape.len(),
                self.function,
                source.pos()
            )));
        }
        Ok(x)
    }

    /// `f⁻¹(y, θ)` with θ drawn by `sampler`; returns the preimage and the θ drawn.
    pub fn sample(&self, y: &[Const], sampler: &mut Sampler) -> (Result<Vec<Const>>, Vec<Const>) {
        sampler.take_drawn();
        let x = self.call(y, sampler);
        (x, sampler.take_drawn())
    }

    fn pgf_or_error(&self) -> Result<FuncId> {
        match self.pgf_in_full() {
            Ok(id) => Ok(id),
            Err(why) => Err(Error::Unsupported {
                function: self.function.clone(),
                reason: format!("it has no PGF: {why}"),
                span: self.module.functions[self.forward].span,
            }),
        }
    }

    /// The PGF: the θ tape with `f⁻¹(f(x), θ) = x`.
    pub fn pgf(&self, x: &[Const]) -> Result<Vec<Const>> {
        let pgf = self.pgf_or_error()?;
        check_values("input", &self.function, &self.inputs, x)?;
        let mut recorder = TapeRecorder::new();
        let module = self.full_module();
        self.run(module, &self.native.pgf, pgf, x, Some(&mut recorder))?;
        Ok(recorder.into_values())
    }

    /// The generated inverse (and the inverses of callees it calls) as IR text.
    pub fn inverse_ir(&self) -> String {
        self.generated_ir(|k| matches!(k, FuncKind::GeneratedInverse { .. }))
    }

    /// The generated PGFs as IR text.
    pub fn pgf_ir(&self) -> String {
        self.generated_ir(|k| matches!(k, FuncKind::GeneratedPgf { .. }))
    }

    /// The helper functions the inverse and the PGF call (the solvers' `iso.…` helpers and the
    /// pieces shared between steps, `piece.…`) as IR text: the `fn`s whose names no source
    /// function can have.
    pub fn helpers_ir(&self) -> String {
        self.generated_ir_where(|f| f.kind == FuncKind::Fn && f.name.contains('.'))
    }

    fn generated_ir(&self, which: impl Fn(&FuncKind) -> bool) -> String {
        self.generated_ir_where(|f| which(&f.kind))
    }

    fn generated_ir_where(&self, which: impl Fn(&pinv_core::ir::Function) -> bool) -> String {
        let opts = WriteOptions::default();
        let module = self.full_module();
        module
            .iter()
            .filter(|(_, f)| which(f))
            .map(|(id, _)| write_function(module, id, &opts))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Checks a list of values against the types a function wants.
pub(crate) fn check_values(
    what: &str,
    function: &str,
    types: &[Type],
    values: &[Const],
) -> Result<()> {
    let found: Vec<Type> = values.iter().map(|v| v.ty()).collect();
    if found == types {
        return Ok(());
    }
    let list = |ts: &[Type]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
    Err(Error::BadValues(format!(
        "`{function}` has {} {what}(s) ({}) but was given {} ({})",
        types.len(),
        list(types),
        values.len(),
        list(&found)
    )))
}

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}
    #[test]
    fn programs_and_inverses_cross_threads() {
        assert_send_sync::<super::Program>();
        assert_send_sync::<super::Inverse>();
    }
}

#[cfg(test)]
mod lazy_pgf {
    use super::{Inverse, Program};
    use crate::reorient::ReorientOptions;
    use pinv_core::ir::{Const, FuncKind, Type};

    fn inputs(types: &[Type]) -> Vec<Vec<Const>> {
        let of = |t: Type, k: usize| match t {
            Type::F64 => Const::F64([0.75, -2.5, 13.0][k]),
            Type::I64 => Const::I64([3, -7, 40][k]),
            Type::Bool => Const::Bool(k == 1),
        };
        (0..3)
            .map(|k| types.iter().map(|&t| of(t, k)).collect())
            .collect()
    }

    /// `name` of `program` inverted with [`ReorientOptions::lazy_pgf`] (`None` where the eager
    /// build fails), after checking that it is the eager inverse: the same θ schema, PGF tapes
    /// and preimages (the inverse built again is compared with the first, text for text, by a
    /// debug assertion in `Inverse::rebuilt`). Returns the tapes compared too.
    fn lazy_as_eager(program: &Program, name: &str, at: &str) -> Option<(Inverse, usize)> {
        let eager = program.invert(name).ok()?;
        let options = ReorientOptions {
            lazy_pgf: true,
            ..ReorientOptions::default()
        };
        let lazy = program
            .invert_with(name, &program.stack(), &options)
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(
            lazy.schema().to_string(),
            eager.schema().to_string(),
            "{at}"
        );
        assert_eq!(lazy.pgf_id().is_ok(), eager.pgf_id().is_ok(), "{at}");
        let mut tapes = 0;
        for x in inputs(eager.input_types()) {
            let tape = eager.pgf(&x);
            assert_eq!(
                lazy.pgf(&x).ok(),
                tape.as_ref().ok().cloned(),
                "{at}: {x:?}"
            );
            let (Ok(y), Ok(tape)) = (eager.forward(&x), tape) else {
                continue;
            };
            assert_eq!(
                lazy.call_with_tape(&y, &tape).ok(),
                eager.call_with_tape(&y, &tape).ok(),
                "{at}: {x:?}"
            );
            tapes += 1;
        }
        Some((lazy, tapes))
    }

    /// Inverting with the PGFs left out and building them when first needed gives what
    /// inverting with them gives, for every function of the corpus.
    #[test]
    fn lazy_pgfs_are_the_eager_ones() {
        let (mut compared, mut tapes) = (0, 0);
        for (name, program) in crate::test_corpus::programs() {
            let program = program.with_engine(crate::Engine::Interp);
            for (_, f) in program.module().iter() {
                if f.kind != FuncKind::Fn || f.name.contains('.') {
                    continue;
                }
                let at = format!("{name}: {}", f.name);
                if let Some((_, n)) = lazy_as_eager(&program, &f.name, &at) {
                    compared += 1;
                    tapes += n;
                }
            }
        }
        assert!(
            compared > 40 && tapes > 100,
            "{compared} functions, {tapes} tapes"
        );
    }

    /// Where the inverse is finished together with its PGF (a θ read that simplification finds
    /// unused is removed with the PGF's record of it: here the branch of a `%` whose result
    /// nothing uses, behind a condition only the simplifier decides, `n > i64::MAX`, as the
    /// front end folds conditions of constants), the PGF cannot be left out and is built at
    /// once, with the same outcome.
    #[test]
    fn lazy_pgfs_are_built_at_once_where_the_inverse_needs_them() {
        // `f` is not the program's first function, as it is in the module the build works on.
        let text = "fn first(a: i64) -> i64 {
    a
}

fn f(x: f64, n: i64) -> f64 {
    if ((n > 9223372036854775807) as i64 > 0) {
        if true {
            let unused = (if n > 0 { n } else { 7 - n }) % (x as i64);
        }
    } else {
    }
    x * pow(x, x)
}
";
        let program = Program::parse("unused.pinv", text).expect("compiles");
        let program = program.with_engine(crate::Engine::Interp);
        let (lazy, tapes) = lazy_as_eager(&program, "f", "f").expect("inverts");
        assert!(tapes > 0);
        assert!(
            lazy.deferred.rebuild.is_none(),
            "the PGF was left out where the inverse needs it"
        );
    }
}
