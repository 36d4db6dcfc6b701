//! The reference interpreter: runs an [`ir::Module`](crate::ir::Module) function on [`Const`] values.
//!
//! - Primitive operations mean what [`crate::semantics::eval`] says, so f64 results are bit-identical
//!   with the semantics (and with the JIT, which calls the same `extern "C"` functions).
//! - Branches bind the target block's parameters from their arguments (all arguments are read before
//!   any parameter is written, so a loop may pass its parameters back in another order).
//! - Calls use an explicit stack of frames, not Rust recursion: recursion deeper than
//!   [`InterpConfig::depth_limit`] is a [`RuntimeErrorKind::DepthLimit`] error, never a stack overflow.
//! - Every executed instruction (terminators and calls included) is one step; more than
//!   [`InterpConfig::step_limit`] steps is a [`RuntimeErrorKind::StepLimit`] error.
//! - `theta` and `choice` read the next value from a [`ThetaSource`]; each read gets a
//!   [`ThetaAddress`] whose `index` counts the θ reads before it in the run. The interpreter checks
//!   that what the source gives is of the right type and in the domain. `check` with a false
//!   condition, and `fail`, stop the run with their reason.
//! - IR that the verifier would reject (a block without a terminator, a use of an undefined value,
//!   operands of the wrong type, ...) is a [`RuntimeErrorKind::Malformed`] error, never a panic.
//!
//! ```
//! use pinv_core::interp::Interpreter;
//! use pinv_core::ir::{Const, FuncKind, Function, Module, Opcode, Signature, Type};
//! use pinv_core::span::Span;
//!
//! let sig = Signature { params: vec![Type::F64, Type::F64], returns: vec![Type::F64] };
//! let mut f = Function::new("f", FuncKind::Fn, sig);
//! let entry = f.create_entry();
//! let (x, y) = (f.blocks[entry].params[0], f.blocks[entry].params[1]);
//! let s = f.ins_prim(entry, Opcode::Fmul, vec![x, y], Span::default());
//! f.ins_return(entry, vec![s], Span::default());
//! let mut module = Module::new();
//! let id = module.add(f).unwrap();
//!
//! let out = Interpreter::new(&module).call(id, &[Const::F64(1.5), Const::F64(4.0)]).unwrap();
//! assert_eq!(out, vec![Const::F64(6.0)]);
//! ```

use crate::diagnostic::Located;
use crate::ir::{
    Block, BlockCall, Const, Domain, FuncId, Function, Inst, InstKind, Module, SegmentOp, Type,
    Value,
};
use crate::semantics::{self, type_list, EvalError};
use crate::span::Span;
use cranelift_entity::EntityRef;
use std::fmt;

mod recorder;
pub use recorder::TapeRecorder;

// ---------------------------------------------------------------------------------------------
// Configuration

/// Limits on one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterpConfig {
    /// The most instructions a run may execute (`None`: no limit).
    pub step_limit: Option<u64>,
    /// The most frames on the call stack at once (the called function counts as one).
    pub depth_limit: usize,
    /// When a run stops with [`RuntimeErrorKind::TimeLimit`] (none by default). The interpreter
    /// polls it every [`DEADLINE_POLL`] steps; compiled code, which never reads the clock, gets
    /// its fuel in slices that the host grants only before the deadline
    /// (`jit::runtime::FUEL_SLICE` steps, about a tenth of a second).
    pub deadline: Option<std::time::Instant>,
}

/// Steps between two looks at [`InterpConfig::deadline`] (a power of two).
pub const DEADLINE_POLL: u64 = 1 << 16;

impl Default for InterpConfig {
    fn default() -> InterpConfig {
        InterpConfig {
            step_limit: None,
            depth_limit: 10_000,
            deadline: None,
        }
    }
}

impl InterpConfig {
    pub fn with_step_limit(self, limit: u64) -> InterpConfig {
        InterpConfig {
            step_limit: Some(limit),
            ..self
        }
    }

    pub fn with_depth_limit(self, limit: usize) -> InterpConfig {
        InterpConfig {
            depth_limit: limit,
            ..self
        }
    }

    /// Stops interpreted runs at `deadline` (see [`InterpConfig::deadline`]).
    pub fn with_deadline(self, deadline: Option<std::time::Instant>) -> InterpConfig {
        InterpConfig { deadline, ..self }
    }
}

// ---------------------------------------------------------------------------------------------
// θ sources

/// Where a θ read happens: the data a [`ThetaSource`] gets with each read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThetaAddress<'a> {
    /// The module-level name of the function that reads.
    pub function: &'a str,
    /// The `theta` or `choice` instruction.
    pub inst: Inst,
    /// The instruction's role string (what this θ means).
    pub role: &'a str,
    /// The instruction's source span.
    pub span: Span,
    /// How many θ reads (`theta` and `choice`) came before this one in the run.
    pub index: usize,
}

/// Why a θ source could not give a value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ThetaError {
    /// The source has no more values; `needed_index` is the position of the missing one.
    #[error("the θ tape is exhausted: no value at position {needed_index}")]
    Exhausted { needed_index: usize },
    /// The value is not in the read's domain.
    #[error("θ value {value} is outside its domain {domain}")]
    OutOfDomain { value: String, domain: Domain },
    /// The value has the wrong type.
    #[error("θ value has type {found}, expected {expected}")]
    WrongType { expected: Type, found: Type },
    #[error("{0}")]
    Other(String),
}

/// Gives the values of `theta` and `choice` instructions, in execution order.
pub trait ThetaSource {
    /// The value of a `theta` read from `domain`.
    fn theta(&mut self, domain: Domain, at: &ThetaAddress<'_>) -> Result<Const, ThetaError>;
    /// The value of a `choice n` read, in `0..n`.
    fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError>;
    /// Takes the value of a `record` (generated PGF code writes the θ tape with it). Sources
    /// that only read refuse.
    fn record(&mut self, value: Const, at: &ThetaAddress<'_>) -> Result<(), ThetaError> {
        let _ = (value, at);
        Err(ThetaError::Other(
            "this θ source only reads; `record` needs a recorder".to_string(),
        ))
    }

    /// Orders what was recorded ([`SegmentOp`]: generated PGFs of loops write each iteration's
    /// θ as a segment). Sources that only read refuse.
    fn segment(&mut self, op: SegmentOp) -> Result<(), ThetaError> {
        let _ = op;
        Err(ThetaError::Other(
            "this θ source only reads; `segment` needs a recorder".to_string(),
        ))
    }

    /// The plain [`TapeSource`] this source is, if it is one. Compiled code then reads the tape
    /// directly instead of calling [`ThetaSource::theta`] and [`ThetaSource::choice`] (with the
    /// same results and errors). A source that wraps a tape but adds behaviour of its own must
    /// keep the default, `None`.
    fn as_tape(&mut self) -> Option<&mut TapeSource> {
        None
    }

    /// The plain [`TapeRecorder`] this source is, if it is one. Compiled code then records into it
    /// directly instead of calling [`ThetaSource::record`] and [`ThetaSource::segment`] (with the
    /// same results). A source that adds behaviour of its own must keep the default, `None`.
    fn as_recorder(&mut self) -> Option<&mut TapeRecorder> {
        None
    }
}

impl<T: ThetaSource + ?Sized> ThetaSource for &mut T {
    fn theta(&mut self, domain: Domain, at: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        (**self).theta(domain, at)
    }

    fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        (**self).choice(n, at)
    }

    fn record(&mut self, value: Const, at: &ThetaAddress<'_>) -> Result<(), ThetaError> {
        (**self).record(value, at)
    }

    fn segment(&mut self, op: SegmentOp) -> Result<(), ThetaError> {
        (**self).segment(op)
    }

    fn as_tape(&mut self) -> Option<&mut TapeSource> {
        (**self).as_tape()
    }

    fn as_recorder(&mut self) -> Option<&mut TapeRecorder> {
        (**self).as_recorder()
    }
}

/// Whether `value` is in `domain`: the right type and, for f64, i64 ranges and nonzero, in the set.
///
/// `Real` holds every f64 (NaN included), `NonzeroReal` every f64 but ±0, `Interval { lo, hi }` the x
/// with `lo <= x <= hi` (so not NaN), `RealWithin { lo, hi }` those and NaN, `IntRange { lo, hi }`
/// the i64s in `lo..=hi`, `Bits { mask }`
/// the i64s with no bit outside `mask`.
pub fn check_domain(domain: Domain, value: Const) -> Result<(), ThetaError> {
    if value.ty() != domain.ty() {
        return Err(ThetaError::WrongType {
            expected: domain.ty(),
            found: value.ty(),
        });
    }
    let inside = match (domain, value) {
        (Domain::NonzeroReal, Const::F64(x)) => x != 0.0,
        (Domain::Interval { lo, hi }, Const::F64(x)) => lo <= x && x <= hi,
        (Domain::RealWithin { lo, hi }, Const::F64(x)) => x.is_nan() || lo <= x && x <= hi,
        (Domain::IntRange { lo, hi }, Const::I64(x)) => lo <= x && x <= hi,
        (Domain::Bits { mask }, Const::I64(x)) => x as u64 & !mask == 0,
        _ => true,
    };
    if inside {
        Ok(())
    } else {
        Err(ThetaError::OutOfDomain {
            value: value.to_string(),
            domain,
        })
    }
}

/// The domain of a `theta … within lo, hi` at run time: `domain` narrowed to `[lo, hi]`, or the
/// domain error of a θ with no value left to take (θ cannot succeed here, whatever it is).
pub fn narrowed(domain: Domain, lo: Const, hi: Const) -> Result<Domain, RuntimeErrorKind> {
    domain
        .within(lo, hi)
        .ok_or_else(|| RuntimeErrorKind::CheckFailed {
            reason: format!(
                "no value is left for this θ: its domain {domain} narrowed to [{lo}, {hi}] is empty"
            ),
        })
}

/// Checks a `choice n` value: an i64 in `0..n`, returned as a `u32`.
pub fn check_choice(n: u32, value: Const) -> Result<u32, ThetaError> {
    let domain = Domain::IntRange {
        lo: 0,
        hi: i64::from(n) - 1,
    };
    check_domain(domain, value)?;
    match value {
        Const::I64(k) => u32::try_from(k).map_err(|_| ThetaError::Other(format!("bad choice {k}"))),
        other => Err(ThetaError::WrongType {
            expected: Type::I64,
            found: other.ty(),
        }),
    }
}

/// The simplest θ source: an explicit list of values, read front to back. Each value is checked
/// against the read's domain; a `choice n` takes an `I64` in `0..n`.
///
/// Compiled code reads a `TapeSource` without calling back into it (see
/// [`ThetaSource::as_tape`]), so it also keeps its values encoded for that.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TapeSource {
    values: Vec<Const>,
    /// `values` encoded for compiled code: two words per value, its bits ([`Const::bits`]) and
    /// its type's [`tape_tag`], then an end marker ([`TAPE_END`]). `pos <= values.len()` always
    /// holds, so the entry at `pos` is a value or the end marker.
    slots: Vec<u64>,
    pos: usize,
}

/// The tag after the last value of [`TapeSource`]'s encoded slots (no type has it).
pub(crate) const TAPE_END: u64 = 3;

/// The tag of a value's type in [`TapeSource`]'s encoded slots.
pub(crate) fn tape_tag(ty: Type) -> u64 {
    match ty {
        Type::F64 => 0,
        Type::I64 => 1,
        Type::Bool => 2,
    }
}

impl TapeSource {
    pub fn new(values: Vec<Const>) -> TapeSource {
        let slots = values
            .iter()
            .flat_map(|c| [c.bits(), tape_tag(c.ty())])
            .chain([0, TAPE_END])
            .collect();
        TapeSource {
            values,
            slots,
            pos: 0,
        }
    }

    /// How many values have been read.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The values not read yet.
    pub fn remaining(&self) -> &[Const] {
        &self.values[self.pos.min(self.values.len())..]
    }

    /// Starts again from the first value.
    pub fn rewind(&mut self) {
        self.pos = 0;
    }

    /// The encoded values: value `i` is `slots[2 i]` (bits) and `slots[2 i + 1]` (type tag),
    /// followed by the end marker.
    pub(crate) fn slots(&self) -> &[u64] {
        &self.slots
    }

    /// Moves the read position (compiled code reads ahead of the source and reports back); at
    /// most to the end of the tape.
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.values.len());
    }

    fn next(&mut self) -> Result<Const, ThetaError> {
        let value = *self.values.get(self.pos).ok_or(ThetaError::Exhausted {
            needed_index: self.pos,
        })?;
        self.pos += 1;
        Ok(value)
    }
}

impl ThetaSource for TapeSource {
    fn theta(&mut self, domain: Domain, _at: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let value = self.next()?;
        check_domain(domain, value)?;
        Ok(value)
    }

    fn choice(&mut self, n: u32, _at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let value = self.next()?;
        check_choice(n, value)
    }

    fn as_tape(&mut self) -> Option<&mut TapeSource> {
        Some(self)
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// What went wrong in a run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RuntimeErrorKind {
    #[error("division by zero")]
    DivisionByZero,
    #[error("integer overflow (i64::MIN divided by -1)")]
    Overflow,
    #[error("check failed: {reason}")]
    CheckFailed { reason: String },
    #[error("failed: {reason}")]
    Fail { reason: String },
    #[error("step limit of {limit} exceeded")]
    StepLimit { limit: u64 },
    #[error("call depth limit of {limit} exceeded")]
    DepthLimit { limit: usize },
    #[error("time limit reached")]
    TimeLimit,
    #[error("this function reads θ but no θ source was given")]
    NoThetaSource,
    #[error(transparent)]
    Theta(ThetaError),
    #[error(
        "wrong arguments: expected ({}), found ({})",
        type_list(expected),
        type_list(found)
    )]
    BadArguments {
        expected: Vec<Type>,
        found: Vec<Type>,
    },
    #[error("malformed IR: {message}")]
    Malformed { message: String },
}

/// A call on the stack when an error happened: the calling function and the call's span.
#[derive(Clone, Debug, PartialEq)]
pub struct CallSite {
    pub function: String,
    pub span: Span,
}

/// A failure while running, with the function and the instruction's source span where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub kind: RuntimeErrorKind,
    /// The module-level name of the function that was running.
    pub function: String,
    /// The span of the instruction that failed (of the function, for [`RuntimeErrorKind::BadArguments`]).
    pub span: Span,
    /// The calls that led here, innermost first (at most [`RuntimeError::BACKTRACE_LEN`]).
    pub backtrace: Vec<CallSite>,
}

impl RuntimeError {
    /// The most call sites kept in [`RuntimeError::backtrace`].
    pub const BACKTRACE_LEN: usize = 16;

    fn new(kind: RuntimeErrorKind, function: impl Into<String>, span: Span) -> RuntimeError {
        RuntimeError {
            kind,
            function: function.into(),
            span,
            backtrace: Vec::new(),
        }
    }
}

impl std::error::Error for RuntimeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            RuntimeErrorKind::Theta(e) => Some(e),
            _ => None,
        }
    }
}

/// A module function's name as a user knows it: the generated `f.inv` (and its unchecked body,
/// `f.inv.body`) is "the inverse of `f`", `f.pgf` "the PGF of `f`", the helpers an inverse calls
/// (`f.guard.…`, `f.trips.…`) are part of f's inverse, and a solver's helper (`iso.…`) says it is one.
pub fn user_name(function: &str) -> String {
    if let Some(f) = function.strip_prefix("inverse:") {
        return format!("the declared inverse of `{f}`");
    }
    if let Some(f) = function.strip_prefix("pgf:") {
        return format!("the declared PGF of `{f}`");
    }
    if function.starts_with("iso.") {
        return format!("a solver's helper (`{function}`)");
    }
    for (suffix, what) in [
        (".inv", "the inverse"),
        (".inv.body", "the inverse"),
        (".pgf", "the PGF"),
        (".guard.", "the inverse"),
        (".trips.", "the inverse"),
    ] {
        if let Some(at) = function.find(suffix) {
            let f = &function[..at];
            if !f.is_empty() && (suffix.ends_with('.') || at + suffix.len() == function.len()) {
                return format!("{what} of `{f}`");
            }
        }
    }
    format!("`{function}`")
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RuntimeErrorKind::*;
        let func = user_name(&self.function);
        match &self.kind {
            CheckFailed { reason } => write!(f, "check failed in {func}: {reason}"),
            Fail { reason } => write!(f, "failed in {func}: {reason}"),
            NoThetaSource => write!(f, "{func} reads θ but no θ source was given"),
            Theta(e) => write!(f, "bad θ in {func}: {e}"),
            BadArguments { expected, found } => write!(
                f,
                "wrong arguments for {func}: expected ({}), found ({})",
                type_list(expected),
                type_list(found)
            ),
            Malformed { message } => write!(f, "malformed IR in {func}: {message}"),
            kind => write!(f, "{kind} in {func}"),
        }
    }
}

impl Located for RuntimeError {
    fn span(&self) -> Span {
        self.span
    }

    fn label(&self) -> String {
        use RuntimeErrorKind::*;
        match &self.kind {
            DivisionByZero => "the divisor is zero".into(),
            Overflow => "i64::MIN divided by -1".into(),
            CheckFailed { reason } | Fail { reason } => reason.clone(),
            StepLimit { .. } => "running here when the limit was reached".into(),
            DepthLimit { .. } => "this call is too deep".into(),
            TimeLimit => "running here when the time limit came".into(),
            NoThetaSource | Theta(_) => "θ is read here".into(),
            BadArguments { .. } => "this function".into(),
            Malformed { .. } => "here".into(),
        }
    }

    /// The call sites, a run of calls from the same place folded into one
    /// ("called from `fact` × 16"). The backtrace keeps the innermost
    /// [`RuntimeError::BACKTRACE_LEN`] calls, so a run that reaches its end may go on deeper.
    /// The call of a generated inverse's unchecked body by the inverse (`f.inv` calls
    /// `f.inv.body`) is one function to the user, not a call.
    fn secondary(&self) -> Vec<(Span, String)> {
        let mut out: Vec<(Span, String)> = Vec::new();
        let mut i = 0;
        while i < self.backtrace.len() {
            let site = &self.backtrace[i];
            let callee = match i {
                0 => &self.function,
                _ => &self.backtrace[i - 1].function,
            };
            if callee.strip_suffix(".body") == Some(site.function.as_str()) {
                i += 1;
                continue;
            }
            let run = self.backtrace[i..]
                .iter()
                .take_while(|c| *c == site)
                .count();
            let full = self.backtrace.len() == Self::BACKTRACE_LEN;
            let from = user_name(&site.function);
            let label = match (run, full && i + run == self.backtrace.len()) {
                (1, _) => format!("called from {from}"),
                (n, false) => format!("called from {from} × {n}"),
                (n, true) => format!("called from {from} × {n} or more"),
            };
            out.push((site.span, label));
            i += run;
        }
        out
    }
}

impl From<EvalError> for RuntimeErrorKind {
    fn from(e: EvalError) -> RuntimeErrorKind {
        match e {
            EvalError::DivisionByZero => RuntimeErrorKind::DivisionByZero,
            EvalError::Overflow => RuntimeErrorKind::Overflow,
            e @ EvalError::Mismatch { .. } => RuntimeErrorKind::Malformed {
                message: e.to_string(),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The interpreter

/// The result of a run, with what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The called function's results.
    pub results: Vec<Const>,
    /// Instructions executed.
    pub steps: u64,
    /// θ reads (`theta` and `choice`) made.
    pub theta_reads: usize,
    /// The deepest the call stack was (1: no calls).
    pub max_depth: usize,
}

/// Runs functions of one module. Cheap to create; holds no state between runs.
#[derive(Clone, Copy, Debug)]
pub struct Interpreter<'m> {
    module: &'m Module,
    config: InterpConfig,
}

/// One activation: a function, its values so far and where it is.
struct Frame<'m> {
    func: &'m Function,
    values: Vec<Option<Const>>,
    block: Block,
    /// The index in `block` of the instruction to run next (in a caller: the call).
    pc: usize,
}

/// The state of one run.
/// Where a θ-tape instruction is, for its [`ThetaAddress`].
struct TapeAt<'a> {
    function: &'a str,
    inst: Inst,
    role: &'a str,
    span: Span,
}

/// Runs one θ-tape operation (a `theta`, `choice` or `record`) against the run's source, with the
/// instruction's address, and counts it; a missing source or a θ error is a fault at `at`.
fn on_tape<T>(
    source: Option<&mut (dyn ThetaSource + '_)>,
    reads: &mut usize,
    at: TapeAt<'_>,
    op: impl FnOnce(&mut dyn ThetaSource, &ThetaAddress<'_>) -> Result<T, ThetaError>,
) -> Result<T, Fault> {
    let span = at.span;
    let Some(source) = source else {
        return Err(Fault {
            kind: RuntimeErrorKind::NoThetaSource,
            span,
        });
    };
    let address = ThetaAddress {
        function: at.function,
        inst: at.inst,
        role: at.role,
        span,
        index: *reads,
    };
    let value = op(source, &address).map_err(|e| Fault {
        kind: RuntimeErrorKind::Theta(e),
        span,
    })?;
    *reads += 1;
    Ok(value)
}

struct Run<'m, 't> {
    frames: Vec<Frame<'m>>,
    theta: Option<&'t mut dyn ThetaSource>,
    steps: u64,
    theta_reads: usize,
    max_depth: usize,
    /// Reused for branch and call arguments.
    scratch: Vec<Const>,
}

/// An error before the function name and call stack are attached.
struct Fault {
    kind: RuntimeErrorKind,
    span: Span,
}

fn malformed(message: impl Into<String>, span: Span) -> Fault {
    Fault {
        kind: RuntimeErrorKind::Malformed {
            message: message.into(),
        },
        span,
    }
}

/// What one step did to the frame stack.
enum Step {
    Continue,
    Done(Vec<Const>),
}

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m Module) -> Interpreter<'m> {
        Interpreter {
            module,
            config: InterpConfig::default(),
        }
    }

    pub fn with_config(self, config: InterpConfig) -> Interpreter<'m> {
        Interpreter { config, ..self }
    }

    pub fn config(&self) -> InterpConfig {
        self.config
    }

    pub fn module(&self) -> &'m Module {
        self.module
    }

    /// Runs `func` on `args`. A `theta` or `choice` is an error ([`RuntimeErrorKind::NoThetaSource`]).
    pub fn call(&self, func: FuncId, args: &[Const]) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(func, args, None).map(|o| o.results)
    }

    /// Runs `func` on `args`, reading θ from `theta`.
    pub fn call_with_theta(
        &self,
        func: FuncId,
        args: &[Const],
        theta: &mut dyn ThetaSource,
    ) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(func, args, Some(theta)).map(|o| o.results)
    }

    /// Runs `func` on `args`, reading θ from `theta` if given, and reports the steps and θ reads.
    pub fn call_traced(
        &self,
        func: FuncId,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
    ) -> Result<Outcome, RuntimeError> {
        let Some(function) = self.module.functions.get(func) else {
            return Err(RuntimeError::new(
                RuntimeErrorKind::Malformed {
                    message: format!("{func} is not a function of this module"),
                },
                func.to_string(),
                Span::default(),
            ));
        };
        let found: Vec<Type> = args.iter().map(|c| c.ty()).collect();
        if found != function.sig.params {
            return Err(RuntimeError::new(
                RuntimeErrorKind::BadArguments {
                    expected: function.sig.params.clone(),
                    found,
                },
                function.name.clone(),
                function.span,
            ));
        }
        let mut run = Run {
            frames: Vec::new(),
            theta,
            steps: 0,
            theta_reads: 0,
            max_depth: 0,
            scratch: Vec::new(),
        };
        if let Err(fault) = self.push_frame(&mut run, function, args, function.span) {
            return Err(RuntimeError::new(
                fault.kind,
                function.name.clone(),
                fault.span,
            ));
        }
        loop {
            match self.step(&mut run) {
                Ok(Step::Continue) => {}
                Ok(Step::Done(results)) => {
                    return Ok(Outcome {
                        results,
                        steps: run.steps,
                        theta_reads: run.theta_reads,
                        max_depth: run.max_depth,
                    })
                }
                Err(fault) => return Err(self.locate(&run.frames, fault)),
            }
        }
    }

    /// Attaches the running function's name and the call stack to a fault.
    fn locate(&self, frames: &[Frame<'m>], fault: Fault) -> RuntimeError {
        let function = frames.last().map_or("", |f| f.func.name.as_str());
        let mut error = RuntimeError::new(fault.kind, function, fault.span);
        let callers = frames.len().saturating_sub(1);
        error.backtrace = frames[..callers]
            .iter()
            .rev()
            .take(RuntimeError::BACKTRACE_LEN)
            .map(|frame| CallSite {
                function: frame.func.name.clone(),
                span: frame
                    .func
                    .blocks
                    .get(frame.block)
                    .and_then(|b| b.insts.get(frame.pc))
                    .and_then(|&i| frame.func.insts.get(i))
                    .map_or(frame.func.span, |d| d.span),
            })
            .collect();
        error
    }

    /// Pushes a frame for `func` with its entry block's parameters bound to `args`. `span` is where
    /// the call is, for errors.
    fn push_frame(
        &self,
        run: &mut Run<'m, '_>,
        func: &'m Function,
        args: &[Const],
        span: Span,
    ) -> Result<(), Fault> {
        if run.frames.len() >= self.config.depth_limit {
            return Err(Fault {
                kind: RuntimeErrorKind::DepthLimit {
                    limit: self.config.depth_limit,
                },
                span,
            });
        }
        let Some(entry) = func.entry() else {
            return Err(malformed(format!("`{}` has no blocks", func.name), span));
        };
        let mut frame = Frame {
            func,
            values: vec![None; func.values.len()],
            block: entry,
            pc: 0,
        };
        frame
            .bind_params(entry, args)
            .map_err(|m| malformed(format!("entering `{}`: {m}", func.name), span))?;
        run.frames.push(frame);
        run.max_depth = run.max_depth.max(run.frames.len());
        Ok(())
    }

    /// Executes one instruction of the innermost frame.
    fn step(&self, run: &mut Run<'m, '_>) -> Result<Step, Fault> {
        let Some(frame) = run.frames.last_mut() else {
            return Err(malformed("no frame to run", Span::default()));
        };
        let func = frame.func;
        let Some(block_data) = func.blocks.get(frame.block) else {
            return Err(malformed(
                format!("{} does not exist", frame.block),
                func.span,
            ));
        };
        let Some(&inst) = block_data.insts.get(frame.pc) else {
            return Err(malformed(
                format!("{} ends without a terminator", frame.block),
                func.span,
            ));
        };
        let Some(data) = func.insts.get(inst) else {
            return Err(malformed(format!("{inst} does not exist"), func.span));
        };
        let span = data.span;
        run.steps += 1;
        if let Some(limit) = self.config.step_limit {
            if run.steps > limit {
                return Err(Fault {
                    kind: RuntimeErrorKind::StepLimit { limit },
                    span,
                });
            }
        }
        if run.steps & (DEADLINE_POLL - 1) == 0
            && self
                .config
                .deadline
                .is_some_and(|at| std::time::Instant::now() >= at)
        {
            return Err(Fault {
                kind: RuntimeErrorKind::TimeLimit,
                span,
            });
        }
        let fault = |m: String| malformed(m, span);
        let frame_fault = |f: FrameFault| malformed(f.to_string(), span);
        let one_result = || match data.results.as_slice() {
            &[v] => Ok(v),
            rs => Err(malformed(
                format!("{inst} should have one result, has {}", rs.len()),
                span,
            )),
        };

        match &data.kind {
            InstKind::Const(c) => {
                frame.set(one_result()?, *c).map_err(frame_fault)?;
            }
            InstKind::Prim { op, args } => {
                run.scratch.clear();
                for &a in args {
                    run.scratch.push(frame.get(a).map_err(frame_fault)?);
                }
                let r = semantics::eval(*op, &run.scratch).map_err(|e| Fault {
                    kind: e.into(),
                    span,
                })?;
                frame.set(one_result()?, r).map_err(frame_fault)?;
            }
            InstKind::Theta(read) => {
                let crate::ir::ThetaRead {
                    domain,
                    role,
                    within,
                } = &**read;
                let domain = match within {
                    None => *domain,
                    Some([lo, hi]) => {
                        let (lo, hi) = (
                            frame.get(*lo).map_err(frame_fault)?,
                            frame.get(*hi).map_err(frame_fault)?,
                        );
                        narrowed(*domain, lo, hi).map_err(|kind| Fault { kind, span })?
                    }
                };
                let domain = &domain;
                let at = TapeAt {
                    function: &func.name,
                    inst,
                    role,
                    span,
                };
                let value = on_tape(
                    run.theta.as_deref_mut(),
                    &mut run.theta_reads,
                    at,
                    |s, a| {
                        let value = s.theta(*domain, a)?;
                        check_domain(*domain, value)?;
                        Ok(value)
                    },
                )?;
                frame.set(one_result()?, value).map_err(frame_fault)?;
            }
            InstKind::Choice { n, role } => {
                let at = TapeAt {
                    function: &func.name,
                    inst,
                    role,
                    span,
                };
                let value = on_tape(
                    run.theta.as_deref_mut(),
                    &mut run.theta_reads,
                    at,
                    |s, a| {
                        let k = s.choice(*n, a)?;
                        let k = check_choice(*n, Const::I64(i64::from(k)))?;
                        Ok(Const::I64(i64::from(k)))
                    },
                )?;
                frame.set(one_result()?, value).map_err(frame_fault)?;
            }
            InstKind::Record { value, role } => {
                let value = frame.get(*value).map_err(frame_fault)?;
                let at = TapeAt {
                    function: &func.name,
                    inst,
                    role,
                    span,
                };
                on_tape(
                    run.theta.as_deref_mut(),
                    &mut run.theta_reads,
                    at,
                    |s, a| s.record(value, a),
                )?;
            }
            InstKind::Segment(op) => {
                let source = run.theta.as_deref_mut().ok_or(Fault {
                    kind: RuntimeErrorKind::NoThetaSource,
                    span,
                })?;
                source.segment(*op).map_err(|e| Fault {
                    kind: RuntimeErrorKind::Theta(e),
                    span,
                })?;
            }
            InstKind::Check { cond, reason } => {
                if !frame.get_bool(*cond).map_err(frame_fault)? {
                    return Err(Fault {
                        kind: RuntimeErrorKind::CheckFailed {
                            reason: reason.clone(),
                        },
                        span,
                    });
                }
            }
            InstKind::Call { callee, args } => {
                let Some(target) = self.module.functions.get(*callee) else {
                    return Err(fault(format!("{callee} is not a function of this module")));
                };
                run.scratch.clear();
                for &a in args {
                    run.scratch.push(frame.get(a).map_err(frame_fault)?);
                }
                if data.results.len() != target.sig.returns.len() {
                    return Err(fault(format!(
                        "the call of `{}` has {} results but it returns {}",
                        target.name,
                        data.results.len(),
                        target.sig.returns.len()
                    )));
                }
                let found: Vec<Type> = run.scratch.iter().map(|c| c.ty()).collect();
                if found != target.sig.params {
                    return Err(fault(format!(
                        "`{}` takes ({}) but is called with ({})",
                        target.name,
                        type_list(&target.sig.params),
                        type_list(&found)
                    )));
                }
                // The caller stays at the call; the return writes its results and moves on.
                let args = std::mem::take(&mut run.scratch);
                let pushed = self.push_frame(run, target, &args, span);
                run.scratch = args;
                pushed?;
                return Ok(Step::Continue);
            }
            InstKind::Jump { dest } => {
                frame.branch(dest, &mut run.scratch).map_err(frame_fault)?;
                return Ok(Step::Continue);
            }
            InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                let dest = if frame.get_bool(*cond).map_err(frame_fault)? {
                    then_dest
                } else {
                    else_dest
                };
                frame.branch(dest, &mut run.scratch).map_err(frame_fault)?;
                return Ok(Step::Continue);
            }
            InstKind::Return { args } => {
                let mut results = Vec::with_capacity(args.len());
                for &a in args {
                    results.push(frame.get(a).map_err(frame_fault)?);
                }
                let found: Vec<Type> = results.iter().map(|c| c.ty()).collect();
                if found != func.sig.returns {
                    return Err(fault(format!(
                        "returns ({}) but the signature says ({})",
                        type_list(&found),
                        type_list(&func.sig.returns)
                    )));
                }
                run.frames.pop();
                let Some(caller) = run.frames.last_mut() else {
                    return Ok(Step::Done(results));
                };
                caller.finish_call(&results)?;
                return Ok(Step::Continue);
            }
            InstKind::Fail { reason } => {
                return Err(Fault {
                    kind: RuntimeErrorKind::Fail {
                        reason: reason.clone(),
                    },
                    span,
                });
            }
        }
        frame.pc += 1;
        Ok(Step::Continue)
    }
}

/// What is wrong with the IR a frame reads or writes. Only IR that skipped the verifier gets
/// here; it becomes a [`RuntimeErrorKind::Malformed`] error with the instruction's span.
#[derive(Debug)]
enum FrameFault {
    UsedBeforeDefined(Value),
    NoValue(Value),
    NotACondition(Value, Type),
    WrongType {
        value: Value,
        declared: Type,
        given: Const,
    },
    NoBlock(Block),
    Arity {
        block: Block,
        takes: usize,
        given: usize,
    },
}

impl fmt::Display for FrameFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameFault::UsedBeforeDefined(v) => write!(f, "{v} is used before it is defined"),
            FrameFault::NoValue(v) => write!(f, "{v} does not exist"),
            FrameFault::NotACondition(v, ty) => write!(f, "{v} is a condition but has type {ty}"),
            FrameFault::WrongType {
                value,
                declared,
                given,
            } => write!(
                f,
                "{value} has type {declared} but is given a {} ({given})",
                given.ty()
            ),
            FrameFault::NoBlock(b) => write!(f, "{b} does not exist"),
            FrameFault::Arity {
                block,
                takes,
                given,
            } => write!(f, "{block} takes {takes} argument(s) but is given {given}"),
        }
    }
}

impl Frame<'_> {
    fn get(&self, v: Value) -> Result<Const, FrameFault> {
        match self.values.get(v.index()) {
            Some(Some(c)) => Ok(*c),
            Some(None) => Err(FrameFault::UsedBeforeDefined(v)),
            None => Err(FrameFault::NoValue(v)),
        }
    }

    fn get_bool(&self, v: Value) -> Result<bool, FrameFault> {
        match self.get(v)? {
            Const::Bool(b) => Ok(b),
            other => Err(FrameFault::NotACondition(v, other.ty())),
        }
    }

    fn set(&mut self, v: Value, c: Const) -> Result<(), FrameFault> {
        let declared = self
            .func
            .values
            .get(v)
            .map(|d| d.ty)
            .ok_or(FrameFault::NoValue(v))?;
        if declared != c.ty() {
            return Err(FrameFault::WrongType {
                value: v,
                declared,
                given: c,
            });
        }
        match self.values.get_mut(v.index()) {
            Some(slot) => {
                *slot = Some(c);
                Ok(())
            }
            None => Err(FrameFault::NoValue(v)),
        }
    }

    /// Binds the parameters of `block` to `args`.
    fn bind_params(&mut self, block: Block, args: &[Const]) -> Result<(), FrameFault> {
        let func = self.func;
        let Some(data) = func.blocks.get(block) else {
            return Err(FrameFault::NoBlock(block));
        };
        if data.params.len() != args.len() {
            return Err(FrameFault::Arity {
                block,
                takes: data.params.len(),
                given: args.len(),
            });
        }
        for (&p, &a) in data.params.iter().zip(args) {
            self.set(p, a)?;
        }
        Ok(())
    }

    /// Jumps to `dest`: reads every argument, then binds the parameters.
    fn branch(&mut self, dest: &BlockCall, scratch: &mut Vec<Const>) -> Result<(), FrameFault> {
        scratch.clear();
        for &a in &dest.args {
            scratch.push(self.get(a)?);
        }
        self.bind_params(dest.block, scratch)?;
        self.block = dest.block;
        self.pc = 0;
        Ok(())
    }

    /// Writes a callee's results into the results of the call this frame is at, and moves past it.
    fn finish_call(&mut self, results: &[Const]) -> Result<(), Fault> {
        let func = self.func;
        // The frame has not moved since it ran the call, so these lookups succeeded then.
        let Some(data) = func
            .blocks
            .get(self.block)
            .and_then(|b| b.insts.get(self.pc))
            .and_then(|&i| func.insts.get(i))
        else {
            return Err(malformed("returned to a missing call", func.span));
        };
        let span = data.span;
        if data.results.len() != results.len() {
            return Err(malformed(
                format!(
                    "the call has {} results but {} were returned",
                    data.results.len(),
                    results.len()
                ),
                span,
            ));
        }
        for (&v, &c) in data.results.iter().zip(results) {
            self.set(v, c).map_err(|f| malformed(f.to_string(), span))?;
        }
        self.pc += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
