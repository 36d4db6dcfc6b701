//! # pinv: parametric inverses of programs
//!
//! For a function `f: X → Y` written in the pinv language, pinv builds `f⁻¹: Y × Θ → X` such that
//!
//! - **soundness**: for every y and θ, `f⁻¹(y, θ)` returns an x with `f(x) = y`, or a domain error
//!   saying that θ (or y) is outside its domain — never a wrong x;
//! - **completeness**: every x with `f(x) = y` is `f⁻¹(y, θ)` for some θ, and the
//!   parameter-generating function finds it: `f⁻¹(f(x), pgf(x)) = x`.
//!
//! ```
//! use pinv::{Const, Program, Sampler};
//!
//! let program = Program::parse("demo.pinv", "
//!     fn mul_add(x: f64, y: f64, z: f64) -> f64 { x * y + z }
//! ")?;
//! let inverse = program.invert("mul_add")?;
//!
//! // θ decides which preimage: here, how 10 splits into x*y and z, and then x and y.
//! println!("{}", inverse.schema());
//!
//! // Any θ gives a preimage (or a domain error); a seeded sampler draws θ from its domains.
//! let mut sampler = Sampler::new(42);
//! let (x, theta) = inverse.sample(&[Const::F64(10.0)], &mut sampler);
//! let x = x?;
//! let y = program.run("mul_add", &x)?;
//! assert!(pinv::check::close(y[0], Const::F64(10.0), 1e-9), "θ = {theta:?}");
//!
//! // The PGF finds the θ of a given preimage, and the inverse gives it back.
//! let x0 = [Const::F64(2.0), Const::F64(3.0), Const::F64(4.0)];
//! let theta = inverse.pgf(&x0)?;
//! assert_eq!(inverse.call_with_tape(&[Const::F64(10.0)], &theta)?, x0);
//! # Ok::<(), pinv::Error>(())
//! ```
//!
//! ## Overlays
//!
//! Inverse rules come from an overlay stack: the standard layer of primitive rules
//! ([`pinv_primitives::standard`]), the module's own `inverse`/`pgf` declarations over it
//! ([`Program::stack`]), and any layers you push from Rust ([`Program::invert_with`]). The first
//! layer with a rule for a callee wins, so a user layer can replace how any primitive or function
//! is inverted.
//!
//! ## Modules
//!
//! - [`program`]: [`Program`] (load, run, invert) and [`Inverse`] (call, sample, PGF, schema).
//! - [`reorient`]: the pass that turns forward IR into inverse and PGF IR; `walk` (private)
//!   holds the order of its walk over a block, which isolation also runs as a dry run.
//! - [`egraph`]: e-graph isolation of reused unknowns before inverting, and simplification of
//!   generated code.
//! - [`solve`]: solvers for what one rule cannot do (systems, bit maps, numeric roots), each
//!   installing a helper function with its own inverse rule.
//! - [`theta`]: θ tapes, the [`ThetaSchema`], the seeded [`Sampler`].
//! - [`mod@bench`]: ns per call, interpreted and native, against hand-written inverses.
//! - [`check`]: soundness, acceptance and completeness, measured (`pinv check`).
//! - [`deadline`]: the time limit of building an inverse, polled by the passes.
//! - [`parallel`]: work over threads in numbered chunks, with results that do not depend on
//!   the number of threads.
//! - [`strategy`]: proptest strategies for θ and inputs, for your own property tests.
//! - [`tutorial`]: a tutorial in pages whose examples run as doctests.
//!
//! ## Words
//!
//! - **θ** (theta): the parameters of an inverse, given as a **tape** of values per call; a
//!   **read** takes one (`theta` for a value, `choice` for a path); the PGF **records** them.
//! - **domain**: the set a read draws from (`real`, `int[lo..=hi]`, `bits[mask]`, ...);
//!   **narrowed** when its bounds are computed at run time.
//! - **rule**: how one primitive or function is inverted for one pattern of known and unknown
//!   operands; **layer**: a set of rules; **stack**: layers searched top first.
//! - **solver**: mathematics one rule cannot do (a system, a bit map, a numeric root), installed
//!   as a helper function with its own rule.
//! - **guard**: code that runs a region's θ-free start to tell whether a path can be taken.
//! - **owner**: whose compiled code a cache entry is (forward code, or an inverse with its stack
//!   and options), so that inverses never disturb forward code.
//! - **acceptance**: the share of θ drawn from their domains that give a preimage.

pub mod bench;
pub mod check;
pub mod deadline;
pub mod egraph;
pub mod error;
pub mod parallel;
pub mod program;
pub mod reorient;
pub mod search;
pub mod solve;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod theta;
pub mod tutorial;
pub(crate) mod walk;

pub use error::{Error, Result};
pub use pinv_core::diagnostic;
pub use pinv_core::frontend::MAX_SOURCE_BYTES;
pub use pinv_core::interp::{
    InterpConfig, RuntimeErrorKind, ThetaAddress, ThetaError, ThetaSource,
};
pub use pinv_core::ir::{Const, Type};
pub use pinv_core::jit::{Engine, UnknownEngine};
pub use pinv_core::SourceFile;

/// The IR as tools built on the library see it: the module and its functions, values and θ
/// domains, and the printers (text, which [`ir::read`] reads back, and Graphviz).
pub mod ir {
    pub use pinv_core::ir::{
        constant, dot, read, write, Const, Domain, FuncId, FuncKind, Function, Module, Opcode, Type,
    };
}
pub use pinv_primitives as primitives;
pub use program::{Inverse, Program, DEFAULT_STEP_LIMIT};
pub use theta::{Sampler, TextTape, ThetaSchema};

/// The corpus programs (`tests/corpus/*.pinv`), for unit tests that run over all of them.
#[cfg(test)]
pub(crate) mod test_corpus {
    /// Every corpus program that parses, with its path, in path order.
    pub fn programs() -> Vec<(String, crate::Program)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("corpus")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "pinv"))
            .collect();
        files.sort();
        files
            .into_iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).expect("reads");
                let name = path.display().to_string();
                let program = crate::Program::parse(&name, &text).ok()?;
                Some((name, program))
            })
            .collect()
    }
}
