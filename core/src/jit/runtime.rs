//! Calling compiled code: arguments in, results or the interpreter's error out.
//!
//! A call builds a [`Ctx`] and a [`Host`] on the host's stack, enters the unit's trampoline, and
//! translates what comes back:
//!
//! - results are decoded from their slots;
//! - the exact step count is recovered (see [`translate`](super::translate)'s module docs), and
//!   a run that went over [`InterpConfig::step_limit`] is a
//!   [`StepLimit`](RuntimeErrorKind::StepLimit), as in the interpreter;
//! - an error code and site become the [`RuntimeError`] the interpreter reports for the same run:
//!   the same kind, function, span and backtrace (a step-limit error may name a different
//!   instruction than the interpreter's, since compiled code notices it later);
//! - θ reads go through the [`ThetaSource`], and the host re-checks each value exactly as the
//!   interpreter does (`check_domain`, `check_choice`), so the same tape gives the same results
//!   and the same errors. One difference is visible only to the source: compiled code notices the
//!   step limit at segment boundaries, so a run stopped by the limit may have made the θ reads
//!   (or records) of its last straight-line segment, which the interpreter would not have made.
//! - When the source is a plain [`TapeSource`] ([`ThetaSource::as_tape`]), compiled code reads
//!   its encoded values itself (see [`Ctx::tape`](super::abi::Ctx)): a value that is there, of the
//!   right type and in its domain is taken inline; anything else goes through the callback, which
//!   first moves the tape to where compiled code is, so the tape gives its own value or error.
//!   The tape's position is written back when the call returns.
//!
//! # The native stack
//!
//! The interpreter keeps frames on the heap; compiled code uses the native stack. Before a call
//! the host makes sure the stack can hold the deepest run the depth limit allows (for a
//! recursive unit, `depth_limit` frames of the unit's largest size; otherwise the deepest chain of
//! calls) plus room for callbacks. When there is not enough (a recursive function with large
//! frames, or a thread with a small stack), the call runs on a stack of its own of the size it
//! needs: an uncommitted anonymous mapping with a guard page, kept per thread for the next deep
//! call ([`stack::OwnStack`]). When that cannot be had either (the need is over
//! [`MAX_OWN_STACK`], the system refuses the mapping, or the stack's bounds are unknown on this
//! system), the call runs in the interpreter instead, which gives the same outcome by
//! construction. Recursive functions also check the stack pointer at entry, so compiled code
//! never overflows the stack. Compiled code never runs the host's calls of other compiled
//! functions from inside a call, so an own stack's bounds never meet the thread's.

use super::abi::{
    decode, encode, segment_op, Ctx, EntryFn, ErrorCode, Site, NO_TAPE, STATUS_BAD_ARGUMENTS,
    STATUS_OK,
};
use super::compile::{CompiledFunction, Unit};
use super::compile::{StackNeeds, TIER_UP_CALLS};
use crate::interp::{
    check_choice, check_domain, CallSite, InterpConfig, Interpreter, Outcome, RuntimeError,
    RuntimeErrorKind, TapeRecorder, TapeSource, ThetaAddress, ThetaSource,
};
use crate::ir::{Const, InstKind};
use crate::span::Span;
use std::any::Any;
use std::sync::atomic::Ordering;

/// Stack kept free below compiled code for callbacks (θ sources run here).
const CALLBACK_STACK: usize = 96 * 1024;
/// Stack a call needs beyond its frames: the callbacks' room and slack for the host.
const STACK_MARGIN: usize = 192 * 1024;
/// The largest stack a call gets of its own when the thread's is too small
/// ([`CompiledFunction::run_on_own_stack`]): address space reserved without commitment, of
/// which a run touches only what its depth uses. Deeper needs run in the interpreter.
const MAX_OWN_STACK: usize = 16 << 30;

/// What callbacks need during one call: the unit, the θ source, and what went wrong.
pub(crate) struct Host<'u, 't> {
    unit: &'u Unit,
    source: Source<'t>,
    /// θ reads so far, when compiled code does not read a tape directly.
    theta_reads: usize,
    /// What went wrong (boxed: it is rare, and the host is built on every call).
    failure: Option<Box<Failure>>,
    /// The fuel given to compiled code so far (steps are this minus what is left), the most it
    /// may be given (the step limit), and the deadline before which more is given.
    granted: i64,
    limit: i64,
    deadline: Option<std::time::Instant>,
    /// A refuel came after the deadline: the run stopped at the time limit.
    timed_out: bool,
}

/// The steps compiled code gets at a time when its run has a deadline: about a tenth of a
/// second of compiled code, so that it stops that soon after the deadline; runs without one
/// get their whole step limit at once.
pub(crate) const FUEL_SLICE: i64 = 1 << 24;

impl Host<'_, '_> {
    /// See [`super::abi::pinv_jit_refuel`].
    pub(crate) fn refuel(&mut self, fuel: i64) -> i64 {
        let room = self.limit.saturating_sub(self.granted);
        if room <= 0 {
            return fuel;
        }
        if self
            .deadline
            .is_some_and(|at| std::time::Instant::now() >= at)
        {
            self.timed_out = true;
            return fuel;
        }
        let more = room.min(FUEL_SLICE);
        self.granted += more;
        fuel.saturating_add(more)
    }
}

/// The θ source of a call.
enum Source<'t> {
    None,
    /// A plain tape, which compiled code reads itself: where it was when the call started
    /// (reads so far are the context's position minus this).
    Tape {
        tape: &'t mut TapeSource,
        start: usize,
    },
    /// A plain recorder, which compiled code's `record` and `segment` write directly (see
    /// [`Ctx::recorder`](super::abi::Ctx)); how many values it had recorded when the call
    /// started. Held as the pointer compiled code also uses, so that no borrow outlives another.
    Recorder {
        recorder: *mut TapeRecorder,
        start: usize,
    },
    /// Any other source: every read is a callback.
    Other(&'t mut dyn ThetaSource),
}

impl<'t> Source<'t> {
    fn of(theta: Option<&'t mut dyn ThetaSource>) -> Source<'t> {
        let Some(theta) = theta else {
            return Source::None;
        };
        let p: *mut (dyn ThetaSource + 't) = theta;
        // SAFETY: `p` comes from `theta`, a unique borrow for `'t`, and exactly one of the two
        // borrows made from it below is kept: the tape if the source is one, else the source
        // itself (the borrow checker cannot see that the first ended when it is `None`).
        if let Some(tape) = unsafe { (*p).as_tape() } {
            return Source::Tape {
                start: tape.pos(),
                tape,
            };
        }
        // SAFETY: as above, the borrow `as_tape` made has ended.
        match unsafe { (*p).as_recorder() } {
            Some(recorder) => Source::Recorder {
                start: recorder.recorded(),
                recorder,
            },
            // SAFETY: as above.
            None => Source::Other(unsafe { &mut *p }),
        }
    }

    fn get(&mut self) -> Option<&mut dyn ThetaSource> {
        match self {
            Source::None => None,
            Source::Tape { tape, .. } => Some(&mut **tape),
            // SAFETY: the pointer comes from a unique borrow for `'t`; compiled code, the only
            // other user, does not run while this borrow lives (callbacks end it before they
            // return).
            Source::Recorder { recorder, .. } => Some(unsafe { &mut **recorder }),
            Source::Other(t) => Some(&mut **t),
        }
    }
}

#[derive(Default)]
struct Failure {
    error: Option<RuntimeErrorKind>,
    /// Call sites an error passed through, innermost first.
    backtrace: Vec<u32>,
    panic: Option<Box<dyn Any + Send>>,
}

fn malformed(message: impl Into<String>) -> RuntimeErrorKind {
    RuntimeErrorKind::Malformed {
        message: message.into(),
    }
}

impl<'u> Host<'u, '_> {
    fn failure(&mut self) -> &mut Failure {
        self.failure.get_or_insert_with(Box::default)
    }

    /// Records the first failure of the call.
    pub fn fail(&mut self, kind: RuntimeErrorKind) {
        self.failure().error.get_or_insert(kind);
    }

    pub fn panicked(&mut self, payload: Box<dyn Any + Send>) {
        self.failure().panic.get_or_insert(payload);
        self.fail(malformed("a θ source panicked"));
    }

    pub fn unwound(&mut self, site: u32) {
        let backtrace = &mut self.failure().backtrace;
        if backtrace.len() < RuntimeError::BACKTRACE_LEN {
            backtrace.push(site);
        }
    }

    /// Before a callback: the tape source reads on from where compiled code is.
    pub fn tape_to_source(&mut self, pos: u64) {
        if let Source::Tape { tape, start } = &mut self.source {
            let pos = usize::try_from(pos).unwrap_or(usize::MAX);
            self.theta_reads = pos.saturating_sub(*start);
            tape.set_pos(pos);
        }
    }

    /// After a callback: where the tape source is now, for compiled code.
    pub fn tape_from_source(&mut self) -> Option<u64> {
        match &self.source {
            Source::Tape { tape, .. } => Some(tape.pos() as u64),
            _ => None,
        }
    }

    /// The site, its function and its instruction.
    fn lookup(
        &self,
        site: u32,
    ) -> Result<(&'u crate::ir::Function, &'u crate::ir::InstData, Site), RuntimeErrorKind> {
        let unit = self.unit;
        let s = *unit
            .sites
            .get(site as usize)
            .ok_or_else(|| malformed(format!("unknown site {site}")))?;
        let f = unit
            .module
            .functions
            .get(s.func)
            .ok_or_else(|| malformed(format!("unknown function {}", s.func)))?;
        let data = f
            .insts
            .get(s.inst)
            .ok_or_else(|| malformed(format!("unknown instruction {}", s.inst)))?;
        Ok((f, data, s))
    }

    pub fn theta(&mut self, site: u32) -> Result<u64, RuntimeErrorKind> {
        self.read_theta(site, None)
    }

    /// A `theta … within lo, hi`: the domain narrowed to the bounds (slot bits of the read's
    /// type), then read as [`Host::theta`] reads.
    pub fn theta_within(&mut self, site: u32, lo: u64, hi: u64) -> Result<u64, RuntimeErrorKind> {
        self.read_theta(site, Some((lo, hi)))
    }

    /// A θ read from the read's domain, narrowed to `bounds` (slot bits) when given.
    fn read_theta(
        &mut self,
        site: u32,
        bounds: Option<(u64, u64)>,
    ) -> Result<u64, RuntimeErrorKind> {
        let (f, data, s) = self.lookup(site)?;
        let InstKind::Theta(read) = &data.kind else {
            return Err(malformed("a θ read at a site that is not `theta`"));
        };
        let (domain, role) = (&read.domain, &read.role);
        let domain = match bounds {
            None => *domain,
            Some((lo, hi)) => {
                let ty = domain.ty();
                crate::interp::narrowed(*domain, decode(ty, lo), decode(ty, hi))?
            }
        };
        let source = self.source.get().ok_or(RuntimeErrorKind::NoThetaSource)?;
        let at = ThetaAddress {
            function: &f.name,
            inst: s.inst,
            role,
            span: data.span,
            index: self.theta_reads,
        };
        let value = source.theta(domain, &at).map_err(RuntimeErrorKind::Theta)?;
        check_domain(domain, value).map_err(RuntimeErrorKind::Theta)?;
        self.theta_reads += 1;
        Ok(encode(value))
    }

    pub fn choice(&mut self, site: u32) -> Result<u64, RuntimeErrorKind> {
        let (f, data, s) = self.lookup(site)?;
        let InstKind::Choice { n, role } = &data.kind else {
            return Err(malformed("a choice at a site that is not `choice`"));
        };
        let source = self.source.get().ok_or(RuntimeErrorKind::NoThetaSource)?;
        let at = ThetaAddress {
            function: &f.name,
            inst: s.inst,
            role,
            span: data.span,
            index: self.theta_reads,
        };
        let k = source.choice(*n, &at).map_err(RuntimeErrorKind::Theta)?;
        let k = check_choice(*n, Const::I64(i64::from(k))).map_err(RuntimeErrorKind::Theta)?;
        self.theta_reads += 1;
        Ok(u64::from(k))
    }

    /// `segment op`; `op` is the instruction's op as compiled code passes it
    /// ([`segment_code`](super::abi::segment_code)).
    pub fn segment(&mut self, site: u32, op: u32) -> Result<(), RuntimeErrorKind> {
        if let Some(op) = segment_op(op) {
            let source = self.source.get().ok_or(RuntimeErrorKind::NoThetaSource)?;
            return source.segment(op).map_err(RuntimeErrorKind::Theta);
        }
        let (_, data, _) = self.lookup(site)?;
        let InstKind::Segment(op) = data.kind else {
            return Err(malformed("a segment at a site that is not `segment`"));
        };
        let source = self.source.get().ok_or(RuntimeErrorKind::NoThetaSource)?;
        source.segment(op).map_err(RuntimeErrorKind::Theta)
    }

    pub fn record(&mut self, site: u32, bits: u64) -> Result<(), RuntimeErrorKind> {
        let (f, data, s) = self.lookup(site)?;
        let InstKind::Record { value, role } = &data.kind else {
            return Err(malformed("a record at a site that is not `record`"));
        };
        let ty = f
            .values
            .get(*value)
            .map(|d| d.ty)
            .ok_or_else(|| malformed(format!("{value} does not exist")))?;
        let source = self.source.get().ok_or(RuntimeErrorKind::NoThetaSource)?;
        let at = ThetaAddress {
            function: &f.name,
            inst: s.inst,
            role,
            span: data.span,
            index: self.theta_reads,
        };
        source
            .record(decode(ty, bits), &at)
            .map_err(RuntimeErrorKind::Theta)?;
        self.theta_reads += 1;
        Ok(())
    }
}

/// What a successful run cost, as the run left it (the steps are worked out when asked for:
/// most calls do not ask).
struct Ran {
    /// The fuel the run started with, and what was left.
    fuel: i64,
    fuel_left: i64,
    theta_reads: usize,
    max_depth: usize,
}

impl Ran {
    fn steps(&self) -> u64 {
        steps(self.fuel, self.fuel_left)
    }
}

/// Whether a run that started with `fuel` and left `left` (negative) went over the step limit:
/// out of line, since runs rarely get there.
#[cold]
#[inline(never)]
fn over_limit(config: &InterpConfig, fuel: i64, left: i64) -> bool {
    config
        .step_limit
        .is_some_and(|limit| steps(fuel, left) > limit)
}

/// Steps taken by a run that started with `fuel` and left `left`.
fn steps(fuel: i64, left: i64) -> u64 {
    fuel.saturating_sub(left).max(0) as u64
}

impl CompiledFunction {
    /// Runs the function on `args`. A `theta` or `choice` is an error
    /// ([`RuntimeErrorKind::NoThetaSource`]). Like [`Interpreter::call`], with the default limits.
    pub fn call(&self, args: &[Const]) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(&InterpConfig::default(), args, None)
            .map(|o| o.results)
    }

    /// Runs the function on `args`, reading θ from `theta`. Like
    /// [`Interpreter::call_with_theta`], with the default limits.
    pub fn call_with_theta(
        &self,
        args: &[Const],
        theta: &mut dyn ThetaSource,
    ) -> Result<Vec<Const>, RuntimeError> {
        self.call_traced(&InterpConfig::default(), args, Some(theta))
            .map(|o| o.results)
    }

    /// Runs the function under `config`'s limits and reports what it cost, like
    /// [`Interpreter::call_traced`]: the same results, steps, θ reads and deepest call stack, or
    /// the same error.
    pub fn call_traced(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
    ) -> Result<Outcome, RuntimeError> {
        let mut results: Vec<Const> = self.returns.iter().map(|&t| Const::zero(t)).collect();
        let cost = self.run(config, args, theta, &mut results)?;
        Ok(Outcome {
            results,
            steps: cost.steps(),
            theta_reads: cost.theta_reads,
            max_depth: cost.max_depth,
        })
    }

    /// Runs the function and writes its results into `out` (one per return), without
    /// allocating: the fastest way to call compiled code. With a [`TapeSource`] as θ source,
    /// compiled code reads the tape without calling back. After an error, `out` holds
    /// unspecified values of the right types.
    pub fn call_into(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
        out: &mut [Const],
    ) -> Result<(), RuntimeError> {
        self.run(config, args, theta, out).map(|_| ())
    }

    /// The shared body of the calls: compiled code reads `args` and writes `out` itself (see
    /// [`abi`](super::abi)), so the host only checks the counts and the limits.
    #[inline(always)]
    fn run(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
        out: &mut [Const],
    ) -> Result<Ran, RuntimeError> {
        if args.len() != self.params.len()
            || out.len() != self.returns.len()
            || config.depth_limit == 0
        {
            return Err(self.bad_call(config, args, out));
        }
        let (entry, stack) = self.code_to_run();
        let Some(stack_floor) = stack_floor(stack, config) else {
            // Not enough native stack for the depth the limit allows.
            return self.run_on_own_stack(config, args, theta, out, entry, stack);
        };
        self.run_native(config, args, theta, out, entry, stack_floor)
    }

    /// [`CompiledFunction::run`] where this thread's stack is too small for the deepest run
    /// the limits allow (a recursive function with large frames): the code runs on a stack of
    /// its own, of at least the size it needs, kept per thread for the next deep call (address
    /// space, mostly never touched). Past [`MAX_OWN_STACK`], or where no such stack can be
    /// mapped, the interpreter runs it instead, with the same outcome.
    #[cold]
    #[inline(never)]
    fn run_on_own_stack(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
        out: &mut [Const],
        entry: EntryFn,
        stack: &StackNeeds,
    ) -> Result<Ran, RuntimeError> {
        let need = stack_need(stack, config).filter(|&need| need <= MAX_OWN_STACK);
        match need.and_then(stack::OwnStack::take) {
            Some(own) => {
                let ran = own.run(|low| {
                    self.run_native(config, args, theta, out, entry, low + CALLBACK_STACK)
                });
                own.give_back();
                ran
            }
            None => self.interpret(config, args, theta, out),
        }
    }

    /// Runs `entry` natively, with compiled code stopping before the stack pointer goes below
    /// `stack_floor`.
    #[inline(always)]
    fn run_native(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
        out: &mut [Const],
        entry: EntryFn,
        stack_floor: usize,
    ) -> Result<Ran, RuntimeError> {
        let unit = &*self.unit;
        let limit = match config.step_limit {
            None => i64::MAX,
            Some(l) => i64::try_from(l).unwrap_or(i64::MAX),
        };
        let fuel = match config.deadline {
            Some(_) => limit.min(FUEL_SLICE),
            None => limit,
        };
        // A plain tape is read by compiled code directly (see `abi::Ctx::tape`).
        let source = Source::of(theta);
        let (tape, tape_pos) = match &source {
            Source::Tape { tape, start } => (tape.slots().as_ptr(), *start as u64),
            _ => (NO_TAPE.as_ptr(), 0),
        };
        let recorder = match source {
            Source::Recorder { recorder, .. } => recorder,
            _ => std::ptr::null_mut(),
        };
        let mut host = Host {
            unit,
            source,
            theta_reads: 0,
            failure: None,
            granted: fuel,
            limit,
            deadline: config.deadline,
            timed_out: false,
        };
        let mut ctx = Ctx {
            fuel,
            depth: 1,
            depth_limit: config.depth_limit as u64,
            max_depth: 1,
            stack_floor: stack_floor as u64,
            err_kind: 0,
            err_site: 0,
            pending: 0,
            _pad: 0,
            host: std::ptr::addr_of_mut!(host).cast(),
            tape,
            tape_pos,
            scratch: 0,
            recorder,
        };
        // SAFETY: `entry` is the unit's entry, whose code lives as long as `self.unit`;
        // `ctx.host` points to `host`, which outlives the call and which nothing else touches
        // until it returns; `ctx.tape` points to the encoded values of the tape `host.theta`
        // holds, which nothing changes during the call (callbacks only move its position);
        // `args` and `out` hold a `Const` per parameter and result (checked above), which
        // compiled code reads and writes in `Const`'s fixed layout.
        let status = unsafe { entry(&mut ctx, args.as_ptr(), out.as_mut_ptr()) };
        let theta_reads = match &mut host.source {
            Source::Tape { tape, start } => {
                let pos = usize::try_from(ctx.tape_pos).unwrap_or(usize::MAX);
                tape.set_pos(pos);
                pos.saturating_sub(*start)
            }
            // SAFETY: compiled code has returned; the pointer is the source's unique borrow.
            Source::Recorder { recorder, start } => unsafe { (**recorder).recorded() - *start },
            _ => host.theta_reads,
        };
        // The fuel given in all: the limit, or the slices granted before the deadline.
        let fuel = host.granted;
        if status == STATUS_OK {
            // Compiled code notices the step limit only at segment boundaries. The fuel given
            // is at most the limit (capped at i64::MAX), so a run over it has negative fuel
            // left: the step count is needed only then.
            let over = ctx.fuel < 0 && over_limit(config, fuel, ctx.fuel);
            if !over {
                return Ok(Ran {
                    fuel,
                    fuel_left: ctx.fuel,
                    theta_reads,
                    max_depth: ctx.max_depth as usize,
                });
            }
        } else if let Some(payload) = host.failure.as_mut().and_then(|f| f.panic.take()) {
            // A θ source panicked (its callback then stopped compiled code): resumed here.
            std::panic::resume_unwind(payload);
        }
        if status == STATUS_BAD_ARGUMENTS {
            return Err(self.bad_arguments(args));
        }
        Err(self.failure(config, &ctx, &mut host, status, fuel))
    }

    /// The code to run and its stack needs: the unit's code, or its recompiled code (see
    /// [`super::compile::Tier`]), recompiling it when this call is the one that reaches
    /// [`TIER_UP_CALLS`].
    #[inline]
    fn code_to_run(&self) -> (EntryFn, &StackNeeds) {
        let unit = &*self.unit;
        if let Some(tier_up) = &unit.tier_up {
            if let Some(Some(o)) = tier_up.optimized.get() {
                return (o.entry, &o.stack);
            }
            let calls = tier_up.calls.load(Ordering::Relaxed);
            if calls < TIER_UP_CALLS {
                tier_up.calls.store(calls + 1, Ordering::Relaxed);
            } else if let Some(o) = unit.optimize() {
                return (o.entry, &o.stack);
            }
        }
        (self.entry, &unit.stack)
    }

    /// Recompiles the function's unit now if it was compiled quickly (see
    /// [`super::compile::Tier`]), instead of after enough calls; returns whether calls now run
    /// the recompiled code. For tests that want to run both.
    #[doc(hidden)]
    pub fn tier_up_now(&self) -> bool {
        self.unit.optimize().is_some()
    }

    /// Runs the interpreter instead, with the results as slots.
    #[cold]
    #[inline(never)]
    fn interpret(
        &self,
        config: &InterpConfig,
        args: &[Const],
        theta: Option<&mut dyn ThetaSource>,
        out: &mut [Const],
    ) -> Result<Ran, RuntimeError> {
        let outcome = Interpreter::new(&self.unit.module)
            .with_config(*config)
            .call_traced(self.func, args, theta)?;
        out.copy_from_slice(&outcome.results);
        // The interpreter's own count, as fuel.
        Ok(Ran {
            fuel: i64::try_from(outcome.steps).unwrap_or(i64::MAX),
            fuel_left: 0,
            theta_reads: outcome.theta_reads,
            max_depth: outcome.max_depth,
        })
    }

    #[cold]
    fn bad_results(&self, out: &[Const]) -> RuntimeError {
        let function = &self.unit.module.functions[self.func];
        RuntimeError {
            kind: RuntimeErrorKind::BadArguments {
                expected: self.returns.to_vec(),
                found: out.iter().map(|c| c.ty()).collect(),
            },
            function: function.name.clone(),
            span: function.span,
            backtrace: Vec::new(),
        }
    }

    /// The error of a call that cannot start: wrong results, wrong arguments, or no depth
    /// allowed.
    #[cold]
    #[inline(never)]
    fn bad_call(&self, config: &InterpConfig, args: &[Const], out: &[Const]) -> RuntimeError {
        let wrong = args.len() != self.params.len()
            || args.iter().zip(&*self.params).any(|(a, &t)| a.ty() != t);
        if out.len() != self.returns.len() {
            self.bad_results(out)
        } else if wrong {
            self.bad_arguments(args)
        } else {
            debug_assert_eq!(config.depth_limit, 0);
            self.no_depth()
        }
    }

    #[cold]
    fn no_depth(&self) -> RuntimeError {
        let function = &self.unit.module.functions[self.func];
        RuntimeError {
            kind: RuntimeErrorKind::DepthLimit { limit: 0 },
            function: function.name.clone(),
            span: function.span,
            backtrace: Vec::new(),
        }
    }

    #[cold]
    fn bad_arguments(&self, args: &[Const]) -> RuntimeError {
        let function = &self.unit.module.functions[self.func];
        RuntimeError {
            kind: RuntimeErrorKind::BadArguments {
                expected: function.sig.params.clone(),
                found: args.iter().map(|c| c.ty()).collect(),
            },
            function: function.name.clone(),
            span: function.span,
            backtrace: Vec::new(),
        }
    }

    /// The error of a run that stopped (status ≠ 0) or went over the step limit.
    #[cold]
    #[inline(never)]
    fn failure(
        &self,
        config: &InterpConfig,
        ctx: &Ctx,
        host: &mut Host<'_, '_>,
        status: u32,
        fuel: i64,
    ) -> RuntimeError {
        let unit = &*self.unit;
        let function = &unit.module.functions[self.func];
        let site = (status != 0)
            .then(|| unit.sites.get(ctx.err_site as usize).copied())
            .flatten();
        let uncharged = site.map_or(0, |s| i64::from(s.uncharged));
        let steps = fuel
            .saturating_sub(ctx.fuel.saturating_add(uncharged))
            .max(0) as u64;
        let failure = host.failure.take().unwrap_or_default();
        let backtrace: Vec<CallSite> = failure
            .backtrace
            .iter()
            .filter_map(|&b| unit.sites.get(b as usize))
            .filter_map(|&s| describe(unit, s))
            .map(|(function, span)| CallSite { function, span })
            .collect();
        let located = |kind: RuntimeErrorKind| -> RuntimeError {
            let (name, span) = site
                .and_then(|s| describe(unit, s))
                .unwrap_or_else(|| (function.name.clone(), function.span));
            RuntimeError {
                kind,
                function: name,
                span,
                backtrace: backtrace.clone(),
            }
        };
        if host.timed_out {
            return located(RuntimeErrorKind::TimeLimit);
        }
        if let Some(limit) = config.step_limit {
            if steps > limit {
                return located(RuntimeErrorKind::StepLimit { limit });
            }
        }
        let reason = || {
            site.and_then(|s| unit.module.functions.get(s.func)?.insts.get(s.inst))
                .and_then(|d| match &d.kind {
                    InstKind::Check { reason, .. } | InstKind::Fail { reason } => {
                        Some(reason.clone())
                    }
                    _ => None,
                })
                .unwrap_or_default()
        };
        let kind = match ErrorCode::from_u32(ctx.err_kind) {
            Some(ErrorCode::DivisionByZero) => RuntimeErrorKind::DivisionByZero,
            Some(ErrorCode::Overflow) => RuntimeErrorKind::Overflow,
            Some(ErrorCode::CheckFailed) => RuntimeErrorKind::CheckFailed { reason: reason() },
            Some(ErrorCode::Fail) => RuntimeErrorKind::Fail { reason: reason() },
            Some(ErrorCode::Depth | ErrorCode::Stack) => RuntimeErrorKind::DepthLimit {
                limit: config.depth_limit,
            },
            Some(ErrorCode::Host) => failure
                .error
                .unwrap_or_else(|| malformed("a callback failed without an error")),
            Some(ErrorCode::Fuel) | None => malformed(format!(
                "compiled code stopped with code {} at step {steps}",
                ctx.err_kind
            )),
        };
        located(kind)
    }
}

/// The native stack a call of code with `stack` needs under `config`: the deepest run the
/// depth limit allows, and the margin.
#[inline]
fn stack_need(stack: &StackNeeds, config: &InterpConfig) -> Option<usize> {
    if stack.recursive {
        config
            .depth_limit
            .checked_mul(stack.max_frame)?
            .checked_add(STACK_MARGIN)
    } else {
        Some(stack.static_stack.saturating_add(STACK_MARGIN))
    }
}

/// A site's function name and instruction span.
fn describe(unit: &Unit, site: Site) -> Option<(String, Span)> {
    let f = unit.module.functions.get(site.func)?;
    let span = f.insts.get(site.inst).map_or(f.span, |d| d.span);
    Some((f.name.clone(), span))
}

/// The stack floor for a call of code with `stack` needs under `config`, or `None` when the
/// native stack may be too small for the deepest run the limits allow.
#[inline]
fn stack_floor(stack: &StackNeeds, config: &InterpConfig) -> Option<usize> {
    let need = stack_need(stack, config)?;
    let (low, sp) = stack::bounds()?;
    (sp.checked_sub(low)? >= need).then_some(low + CALLBACK_STACK)
}

/// The current thread's stack, and stacks of its own for deep calls.
pub(crate) mod stack {
    use std::cell::Cell;

    thread_local! {
        static LOW: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// (lowest usable address, current stack pointer), if known.
    #[inline]
    pub fn bounds() -> Option<(usize, usize)> {
        // The address of a local: the stack pointer, near enough.
        let marker = 0u8;
        let sp = std::ptr::addr_of!(marker) as usize;
        let low = match LOW.with(Cell::get) {
            Some(low) => low,
            None => first_bounds()?,
        };
        Some((low, sp))
    }

    /// The lowest usable address of this thread's stack, the first time it is asked for.
    #[cold]
    #[inline(never)]
    fn first_bounds() -> Option<usize> {
        let low = lowest_address()?;
        LOW.with(|c| c.set(Some(low)));
        Some(low)
    }

    /// The lowest address of this thread's stack, above a guard allowance.
    #[cfg(target_os = "linux")]
    fn lowest_address() -> Option<usize> {
        /// Room for a guard page area that the reported bounds may include.
        const GUARD: usize = 64 * 1024;
        // SAFETY: plain libc queries on the calling thread, with an attribute object that is
        // initialized by `pthread_getattr_np` and destroyed once read.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
                return None;
            }
            let mut addr: *mut libc::c_void = std::ptr::null_mut();
            let mut size: libc::size_t = 0;
            let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
            libc::pthread_attr_destroy(&mut attr);
            (ok && !addr.is_null()).then(|| addr as usize + GUARD)
        }
    }

    /// Unknown elsewhere: calls that could go deep run in the interpreter.
    #[cfg(not(target_os = "linux"))]
    fn lowest_address() -> Option<usize> {
        None
    }

    thread_local! {
        /// The own stack of this thread's last deep call, kept for the next one.
        static SPARE: Cell<Option<OwnStack>> = const { Cell::new(None) };
        /// How many own stacks this thread has mapped (for tests).
        static MAPPED: Cell<usize> = const { Cell::new(0) };
    }

    /// How many own stacks the calling thread has mapped so far.
    #[cfg(test)]
    pub fn mapped_on_this_thread() -> usize {
        MAPPED.with(Cell::get)
    }

    /// A stack for calls deeper than the thread's own: an anonymous mapping reserved without
    /// commitment (`MAP_NORESERVE`), with a guard page below it, unmapped when dropped.
    pub struct OwnStack {
        #[cfg(target_os = "linux")]
        addr: *mut libc::c_void,
        len: usize,
    }

    /// Bytes kept above the need, for the frames between the switch and the code.
    const SLACK: usize = 64 * 1024;
    const PAGE: usize = 4096;

    impl OwnStack {
        /// A stack with at least `need` bytes usable: this thread's spare one if it is large
        /// enough, else a new mapping; `None` if the system refuses one.
        pub fn take(need: usize) -> Option<OwnStack> {
            let size = need.checked_add(SLACK)?.checked_next_multiple_of(PAGE)?;
            match SPARE.with(Cell::take) {
                Some(spare) if spare.size() >= size => Some(spare),
                _ => {
                    let own = OwnStack::map(size)?;
                    MAPPED.with(|n| n.set(n.get() + 1));
                    Some(own)
                }
            }
        }

        /// Keeps this stack for the next deep call on this thread.
        pub fn give_back(self) {
            SPARE.with(|spare| spare.set(Some(self)));
        }

        #[cfg(target_os = "linux")]
        fn map(size: usize) -> Option<OwnStack> {
            let len = size.checked_add(PAGE)?;
            // SAFETY: a fresh anonymous mapping that nothing else refers to; its lowest page
            // becomes the guard, and it is unmapped (whole) only by `drop`.
            unsafe {
                let addr = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                    -1,
                    0,
                );
                if addr == libc::MAP_FAILED {
                    return None;
                }
                if libc::mprotect(addr, PAGE, libc::PROT_NONE) != 0 {
                    libc::munmap(addr, len);
                    return None;
                }
                Some(OwnStack { addr, len })
            }
        }

        #[cfg(not(target_os = "linux"))]
        fn map(_size: usize) -> Option<OwnStack> {
            None
        }

        fn size(&self) -> usize {
            self.len - PAGE
        }

        /// Runs `f` on this stack, passing the lowest usable address; a panic inside is
        /// resumed after switching back.
        pub fn run<R>(&self, f: impl FnOnce(usize) -> R) -> R {
            #[cfg(target_os = "linux")]
            {
                let low = self.addr as usize + PAGE;
                let caught = std::panic::AssertUnwindSafe(|| f(low));
                // SAFETY: `low..low + size` is mapped read-write, page aligned, and used by
                // nothing else while `f` runs; the callback cannot unwind (caught here).
                let result = unsafe {
                    psm::on_stack(low as *mut u8, self.size(), || {
                        std::panic::catch_unwind(caught)
                    })
                };
                match result {
                    Ok(r) => r,
                    Err(payload) => std::panic::resume_unwind(payload),
                }
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = f;
                unreachable!("no own stack is mapped on this system")
            }
        }
    }

    impl Drop for OwnStack {
        fn drop(&mut self) {
            #[cfg(target_os = "linux")]
            // SAFETY: the mapping `map` made, unmapped once.
            unsafe {
                libc::munmap(self.addr, self.len);
            }
        }
    }
}
