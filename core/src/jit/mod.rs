//! Native code: IR functions compiled with Cranelift, and the code cache.
//!
//! Compiled code is an alternative engine to the [interpreter](crate::interp) with the same
//! contract: for the same module, function, arguments, limits and θ source it gives bit-identical
//! results (NaN bits included) or an error of the same [`RuntimeErrorKind`], at the same
//! function, span and backtrace. The differential tests (`tests/tests/jit_differential.rs`) hold
//! this on the corpus, on generated inverses and PGFs, and on random programs.
//!
//! - `abi`: the context block, error codes, value slots and the callbacks compiled code makes.
//! - `translate`: IR → Cranelift IR for one function (every opcode, calls, several results,
//!   branches and loops, θ reads, checks, step and depth accounting).
//! - `compile`: a root and its callees → one JIT module ([`CompiledFunction`]).
//! - `runtime`: calling compiled code and translating its errors; the native stack.
//! - [`cache`]: [`CodeCache`], keyed by (function, [`Owner`]).
//!
//! [`Engine`] and [`Runner`] let callers pick the interpreter or compiled code behind one API:
//!
//! ```
//! use pinv_core::jit::{Engine, Runner};
//! use pinv_core::ir::Const;
//! use std::sync::Arc;
//!
//! let file = pinv_core::SourceFile::new("demo.pinv", "fn f(x: f64) -> f64 { 2.0 * x + 1.0 }");
//! let module = Arc::new(pinv_core::compile_source(&file).unwrap().module);
//! let f = module.get("f").unwrap();
//! for engine in [Engine::Interp, Engine::Jit] {
//!     let runner = Runner::new(Arc::clone(&module), engine);
//!     assert_eq!(runner.call(f, &[Const::F64(3.0)]).unwrap(), [Const::F64(7.0)]);
//! }
//! ```
//!
//! [`RuntimeErrorKind`]: crate::interp::RuntimeErrorKind

pub(crate) mod abi;
pub mod cache;
mod compile;
pub(crate) mod runtime;
pub(crate) mod translate;

pub use cache::{CacheStats, CodeCache, EntryInfo, InverseDeps, InverseKey, LayerVersion, Owner};
pub use compile::{compile, CompiledFunction, MAX_JIT_BLOCKS, MAX_JIT_INSTS};

use crate::interp::{InterpConfig, Interpreter, Outcome, RuntimeError, ThetaSource};
use crate::ir::{Const, FuncId, Module};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

/// Why a function could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    /// The function does not pass the verifier.
    #[error("cannot compile `{function}`: {message}")]
    Invalid { function: String, message: String },
    /// Cranelift rejected the generated code (a bug in the translation).
    #[error("code generation failed for `{function}`: {message}")]
    Codegen { function: String, message: String },
    /// The translation met something the verifier should have rejected (a bug).
    #[error("internal error compiling `{function}`: {message}")]
    Internal { function: String, message: String },
    /// An imported symbol that is not registered.
    #[error("unresolved symbol `{0}`")]
    UnresolvedSymbol(String),
    /// The host machine is not supported by Cranelift.
    #[error("no native target: {0}")]
    Target(String),
    #[error("no function {0} in the module")]
    NoSuchFunction(String),
    /// A function that, with the functions it calls, has more instructions than
    /// [`MAX_JIT_INSTS`], or one of them more blocks than [`MAX_JIT_BLOCKS`]: compiling it
    /// would take longer than interpreting it, so the interpreter runs it.
    #[error(
        "`{function}` and what it calls have {instructions} instructions and up to {blocks} \
         blocks a function, more than the JIT compiles ({} instructions, {} blocks): the \
         interpreter runs it",
        MAX_JIT_INSTS,
        MAX_JIT_BLOCKS
    )]
    TooLarge {
        /// The function asked for.
        function: String,
        /// The most blocks of a function it needs compiled.
        blocks: usize,
        /// The instructions of every function it needs compiled.
        instructions: usize,
    },
}

/// Which engine runs IR functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The reference interpreter.
    Interp,
    /// Native code compiled with Cranelift (falling back to the interpreter for a function that
    /// cannot be compiled, or that is too large to compile quickly: [`JitError::TooLarge`]).
    #[default]
    Jit,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Interp, Engine::Jit];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an [`Engine`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}` (expected `jit` or `interp`)")]
pub struct UnknownEngine(pub String);

impl FromStr for Engine {
    type Err = UnknownEngine;

    fn from_str(s: &str) -> Result<Engine, UnknownEngine> {
        match s {
            "interp" | "interpreter" => Ok(Engine::Interp),
            "jit" | "native" => Ok(Engine::Jit),
            _ => Err(UnknownEngine(s.to_string())),
        }
    }
}

/// Where a [`Runner`] gets compiled code.
#[derive(Debug)]
enum CodeSource {
    /// Compiled on first use, kept by the runner.
    Own(Mutex<HashMap<FuncId, CompiledFunction>>),
    /// A shared cache, as forward code.
    Cache(Arc<CodeCache>),
}

/// Runs functions of one module with either engine, with the interpreter's signatures.
#[derive(Debug)]
pub struct Runner {
    module: Arc<Module>,
    engine: Engine,
    config: InterpConfig,
    code: CodeSource,
}

impl Runner {
    pub fn new(module: Arc<Module>, engine: Engine) -> Runner {
        Runner {
            module,
            engine,
            config: InterpConfig::default(),
            code: CodeSource::Own(Mutex::new(HashMap::new())),
        }
    }

    /// The limits of each run.
    pub fn with_config(self, config: InterpConfig) -> Runner {
        Runner { config, ..self }
    }

    /// Takes compiled code from `cache` (as [`Owner::Forward`]).
    pub fn with_cache(self, cache: Arc<CodeCache>) -> Runner {
        Runner {
            code: CodeSource::Cache(cache),
            ..self
        }
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub fn config(&self) -> InterpConfig {
        self.config
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// The compiled code of `func`.
    pub fn compiled(&self, func: FuncId) -> Result<CompiledFunction, JitError> {
        match &self.code {
            CodeSource::Cache(cache) => cache.forward(&self.module, func),
            CodeSource::Own(own) => {
                let mut own = own.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(c) = own.get(&func) {
                    return Ok(c.clone());
                }
                let c = compile(Arc::clone(&self.module), func)?;
                own.insert(func, c.clone());
                Ok(c)
            }
        }
    }

    /// Like [`Interpreter::call`].
    pub fn call(&self, func: FuncId, args: &[Const]) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(func, args, None).map(|o| o.results)
    }

    /// Like [`Interpreter::call_with_theta`].
    pub fn call_with_theta(
        &self,
        func: FuncId,
        args: &[Const],
        theta: &mut dyn ThetaSource,
    ) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(func, args, Some(theta)).map(|o| o.results)
    }

    /// Like [`Interpreter::call_traced`].
    pub fn call_traced(
        &self,
        func: FuncId,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
    ) -> Result<Outcome, RuntimeError> {
        if self.engine == Engine::Jit {
            if let Ok(code) = self.compiled(func) {
                return code.call_traced(&self.config, args, theta);
            }
        }
        Interpreter::new(&self.module)
            .with_config(self.config)
            .call_traced(func, args, theta)
    }
}

#[cfg(test)]
mod tests;
