//! The emitter: how rules write inverse and PGF code into an IR function.
//!
//! A rule never touches blocks directly. It asks the [`Emitter`] for constants, primitive
//! operations, θ reads, checks and structured branches (`if_else`, `switch`), and the emitter keeps
//! the function well formed: every branch it opens is closed at a join block whose parameters
//! carry the arms' results, and emission continues in that join block.
//!
//! An emitter is in one of two modes. In [`Mode::Inverse`] it may read θ (`theta`, `choice`) and
//! check domains; in [`Mode::Pgf`] it may only `record` θ values. Asking for the other mode's
//! instructions is a bug in the rule, reported as [`RuleError::WrongMode`].

use crate::rule::RuleError;
use pinv_core::ir::outline::{self, Finished, Outlined};
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncId, Function, Inst, InstKind, Module, Opcode, Signature,
    Type, Value, ValueList,
};
use pinv_core::Span;

/// Where an arm of a branch ends, the values it gives the join, and the replays it noted
/// ([`Emitter::note_replay`]).
type NotedEnd = (Block, Vec<Value>, Vec<(Value, Value)>);

/// Which kind of code an emitter writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// An inverse: reads θ, checks domains.
    Inverse,
    /// A PGF: records θ.
    Pgf,
}

/// Options that change what rules emit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmitOptions {
    /// Relative tolerance of f64 consistency checks: `|a − b| ≤ tol · max(1, |b|)`.
    pub tolerance: f64,
    /// f64 steps name the exact float: where several floats give a step's output, θ picks one
    /// of them (an integer offset among them) instead of taking the closed form, which is only
    /// within the tolerance ([`crate::rules::settle`]). Code that runs many times over its own
    /// results (a loop walked back, a recursive function) needs it: there each step's error is
    /// amplified by the steps before it, and only exact steps keep the inverse complete. Off by
    /// default: elsewhere the tolerance absorbs it and no θ is spent on it.
    pub exact_floats: bool,
    /// An f64 step whose closed form pins the solution within the tolerance still names the
    /// exact float where the solutions are wide for their magnitude (`a + b = a` for every tiny
    /// `b`): set by the reorientation for a step whose solution is then the output of a step
    /// that reads its magnitude (`pow`, `exp`, a division, a conversion from i64), where the
    /// closed form `0` or `1e-13 ± 1.4e-17` would lose the input ([`crate::rules::settle`]).
    /// Off by default: it costs code at every step.
    pub wide_runs: bool,
    /// A settle step's test of whether its closed form pins the solution (about twenty
    /// instructions: the probe window, the forward step at its ends, the tolerance) is a call
    /// of a helper that every step of the same operation shares ([`Emitter::outlined`]), not
    /// code of its own. Set by the reorientation for large functions, where it halves the code
    /// of each step (and so the time and memory of building and compiling it); off for small
    /// ones, whose steps then run without the call.
    pub outline_settles: bool,
}

impl Default for EmitOptions {
    fn default() -> EmitOptions {
        EmitOptions {
            tolerance: 1e-9,
            exact_floats: false,
            wide_runs: false,
            outline_settles: false,
        }
    }
}

/// Writes instructions at the end of a current block of `func`. See the module docs.
pub struct Emitter<'f> {
    func: &'f mut Function,
    module: Option<&'f Module>,
    block: Block,
    span: Span,
    role_prefix: String,
    mode: Mode,
    options: EmitOptions,
    /// What the caller knows of the range of each operand (by position), if anything.
    operand_ranges: Vec<Option<(f64, f64)>>,
    /// Bounds of operands (by position) computed at run time by the inverse, if any.
    operand_bounds: Vec<Option<(Value, Value)>>,
    /// Records nothing (PGF mode): the inverse does not walk this code, so it reads no θ here.
    muted: bool,
    /// The step checks written so far ([`Emitter::check_step`]).
    step_checks: Vec<Inst>,
    /// Pieces moved into helpers ([`Emitter::outlined`]), whose calls wait for a callee.
    outlined: Vec<Outlined>,
    /// The pieces being emitted, outermost first (each holds the arenas it set aside).
    pieces: Vec<outline::Piece>,
    /// Step checks are written ([`Emitter::without_step_checks`]).
    step_checks_on: bool,
    /// PGF: (forward value of an operand, the value the inverse holds for it), noted by the
    /// rules ([`Emitter::note_replay`]) in the arm being emitted; a join passes its arms' notes
    /// on as block parameters.
    replays: Vec<(Value, Value)>,
    /// PGF: the forward values whose replays the caller wants (none: notes are not kept).
    replay_for: Vec<Value>,
    /// PGF: (forward value of an output, the value the inverse holds for it), where they may
    /// differ ([`Emitter::replayed`]).
    replayed_outputs: Vec<(Value, Value)>,
    /// PGF: the rule asked for an output's replayed value ([`Emitter::replayed`]), so its
    /// closed forms are the inverse's, and so are the replays it notes.
    replayed_used: bool,
    /// How many loop bodies and outlined pieces the code being emitted is inside: a replay noted
    /// there would not reach the code after them.
    nesting: u32,
    /// The known range of the value a settle step is solving, while [`Emitter::solving_within`]
    /// runs: the run of floats θ names is narrowed to it.
    solving_range: Option<(f64, f64)>,
}

impl<'f> Emitter<'f> {
    /// An emitter appending to `block` of `func`. Every instruction gets `span` (the forward
    /// instruction being inverted).
    pub fn new(func: &'f mut Function, block: Block, mode: Mode, span: Span) -> Emitter<'f> {
        Emitter {
            func,
            module: None,
            block,
            span,
            role_prefix: String::new(),
            mode,
            options: EmitOptions::default(),
            operand_ranges: Vec::new(),
            operand_bounds: Vec::new(),
            muted: false,
            step_checks: Vec::new(),
            outlined: Vec::new(),
            pieces: Vec::new(),
            step_checks_on: true,
            replays: Vec::new(),
            replay_for: Vec::new(),
            replayed_outputs: Vec::new(),
            replayed_used: false,
            nesting: 0,
            solving_range: None,
        }
    }

    /// Tells rules the range `[lo, hi]` each operand's forward value is known to lie in (the
    /// caller's range analysis; `None` for no knowledge). A rule that reads an operand from θ
    /// can then draw it from that range only ([`Emitter::theta_for_operand`]), so that θ is not
    /// wasted on values the operand can never have (a negative `exp(x)`).
    pub fn with_operand_ranges(mut self, ranges: Vec<Option<(f64, f64)>>) -> Emitter<'f> {
        self.operand_ranges = ranges;
        self
    }

    /// The constant `v` is, if the function being written defines it with a `const`.
    pub fn constant_of(&self, v: Value) -> Option<Const> {
        match self.defining(v)? {
            InstKind::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// The instruction that defines `v` in the function being written, if an instruction does
    /// (also while a piece is emitted for [`Emitter::outlined`], when the caller's instructions
    /// are set aside).
    pub fn defining(&self, v: Value) -> Option<&InstKind> {
        let pinv_core::ir::ValueDef::Result(inst, _) = self.func.values.get(v)?.def else {
            return None;
        };
        let index = v.as_u32() as usize;
        match self.pieces.iter().find(|p| index < p.values_before()) {
            Some(piece) => piece.caller_inst(inst).map(|d| &d.kind),
            None => self.func.insts.get(inst).map(|d| &d.kind),
        }
    }

    /// Tells rules bounds `[lo, hi]` (values of the inverse, computed before the rule) that
    /// each operand's forward value lies in, where the caller knows some at run time: what a
    /// loop's exit and a trip round it leave in a value its test compares. A rule that reads an
    /// operand from θ from a narrowed domain intersects it with these ([`Emitter::operand_bound`]).
    pub fn with_operand_bounds(mut self, bounds: Vec<Option<(Value, Value)>>) -> Emitter<'f> {
        self.operand_bounds = bounds;
        self
    }

    /// A PGF emitter whose `record`s write nothing: for forward code the inverse solves without
    /// walking it (a loop whose trip count it scans for), and so reads no θ for.
    pub fn with_muted_records(mut self, muted: bool) -> Emitter<'f> {
        self.muted = muted;
        self
    }

    /// The run-time bounds of operand `i`, if any.
    pub fn operand_bound(&self, i: usize) -> Option<(Value, Value)> {
        self.operand_bounds.get(i).copied().flatten()
    }

    /// The known range of operand `i`, if any.
    pub fn operand_range(&self, i: usize) -> Option<(f64, f64)> {
        self.operand_ranges.get(i).copied().flatten()
    }

    /// Runs `solve` with `range` as the known range of the value it settles (an operand's
    /// [`Emitter::operand_range`]): where θ names one of the floats that give the output
    /// ([`crate::rules::exact`]), it names one in the range (`2·sqrt(x)` is never below 0, so of
    /// the floats `p` with `p + 3 = 3`, from −2.2e-16 to 2.2e-16, only those from 0 up).
    pub fn solving_within<T>(
        &mut self,
        range: Option<(f64, f64)>,
        solve: impl FnOnce(&mut Emitter<'f>) -> T,
    ) -> T {
        let outer = std::mem::replace(&mut self.solving_range, range);
        let r = solve(self);
        self.solving_range = outer;
        r
    }

    /// The range [`Emitter::solving_within`] gives, if any.
    pub fn solving_range(&self) -> Option<(f64, f64)> {
        self.solving_range
    }

    /// Reads operand `i` itself from θ: from `domain`, narrowed to the operand's known range.
    pub fn theta_for_operand(
        &mut self,
        i: usize,
        domain: Domain,
        role: &str,
    ) -> Result<Value, RuleError> {
        let narrowed = match self.operand_range(i) {
            Some(range) => narrow(domain, range),
            None => domain,
        };
        self.theta(narrowed, role)
    }

    /// Lets rules call functions of `module` by name (`call`). The function being written must be
    /// added to the same module afterwards.
    pub fn with_module(mut self, module: &'f Module) -> Emitter<'f> {
        self.module = Some(module);
        self
    }

    /// Prefixes every θ role, as in `"fmul: which factor is 0"`.
    pub fn with_role_prefix(mut self, prefix: impl Into<String>) -> Emitter<'f> {
        self.role_prefix = prefix.into();
        self
    }

    pub fn with_options(mut self, options: EmitOptions) -> Emitter<'f> {
        self.options = options;
        self
    }

    pub fn options(&self) -> &EmitOptions {
        &self.options
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The block emission continues in.
    pub fn block(&self) -> Block {
        self.block
    }

    /// Sets the span given to the following instructions.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    /// Sets the role prefix of the following θ reads.
    pub fn set_role_prefix(&mut self, prefix: impl Into<String>) {
        self.role_prefix = prefix.into();
    }

    /// The function being written (read-only; use the emitting methods to change it). While a
    /// piece is emitted ([`Emitter::outlined`]) it holds only the piece's instructions: look
    /// definitions up with [`Emitter::defining`].
    pub fn func(&self) -> &Function {
        self.func
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.func.value_type(v)
    }

    fn role(&self, role: &str) -> String {
        if self.role_prefix.is_empty() {
            role.to_string()
        } else {
            format!("{}: {role}", self.role_prefix)
        }
    }

    // ---- values

    pub fn konst(&mut self, c: Const) -> Value {
        self.func.ins_const(self.block, c, self.span)
    }

    pub fn f64(&mut self, x: f64) -> Value {
        self.konst(Const::F64(x))
    }

    pub fn i64(&mut self, x: i64) -> Value {
        self.konst(Const::I64(x))
    }

    pub fn bool(&mut self, b: bool) -> Value {
        self.konst(Const::Bool(b))
    }

    /// A primitive operation. The operand types must fit the opcode (checked by the verifier).
    pub fn prim(&mut self, op: Opcode, args: &[Value]) -> Value {
        self.func
            .ins_prim(self.block, op, ValueList::from(args), self.span)
    }

    /// A call of a module function by its module-level name.
    pub fn call(&mut self, name: &str, args: &[Value]) -> Result<Vec<Value>, RuleError> {
        let module = self
            .module
            .ok_or_else(|| RuleError::UnknownFunction(name.to_string()))?;
        let (id, sig): (FuncId, Signature) = module
            .get(name)
            .map(|id| (id, module.functions[id].sig.clone()))
            .ok_or_else(|| RuleError::UnknownFunction(name.to_string()))?;
        Ok(self
            .func
            .ins_call(self.block, id, args.to_vec(), &sig.returns, self.span))
    }

    // ---- θ

    /// Reads the next θ value from `domain` (inverse mode).
    pub fn theta(&mut self, domain: Domain, role: &str) -> Result<Value, RuleError> {
        self.require(Mode::Inverse, "theta")?;
        let role = self.role(role);
        Ok(self.func.ins_theta(self.block, domain, role, self.span))
    }

    /// Reads the next θ value from `domain` narrowed at run time to the values between `lo` and
    /// `hi` (inverse mode): where the values the inverse has computed bound what can succeed,
    /// θ is drawn only from there. An empty range is a domain error.
    pub fn theta_within(
        &mut self,
        domain: Domain,
        lo: Value,
        hi: Value,
        role: &str,
    ) -> Result<Value, RuleError> {
        self.require(Mode::Inverse, "theta")?;
        let role = self.role(role);
        Ok(self
            .func
            .ins_theta_within(self.block, domain, [lo, hi], role, self.span))
    }

    /// Reads the next path choice, an i64 in `0..n` (inverse mode).
    pub fn choice(&mut self, n: u32, role: &str) -> Result<Value, RuleError> {
        self.require(Mode::Inverse, "choice")?;
        let role = self.role(role);
        Ok(self.func.ins_choice(self.block, n, role, self.span))
    }

    /// Fails with a domain error with `reason` unless `cond` is true (inverse mode).
    pub fn check(&mut self, cond: Value, reason: &str) -> Result<(), RuleError> {
        self.require(Mode::Inverse, "check")?;
        self.func.ins_void(
            self.block,
            InstKind::Check {
                cond,
                reason: reason.to_string(),
            },
            self.span,
        );
        Ok(())
    }

    /// A check of one step's own precision: that the f64 solution of a step gives the step's
    /// output back (`θ loses precision: …`). It is a domain check like [`Emitter::check`], and
    /// it is also the kind the reorientation may drop: an inverse that ends by checking
    /// `f(x) = y` as a whole needs it for no soundness, so once the dispatch guards have copied
    /// the checks they decide by, it deletes the step checks from the inverse itself
    /// ([`Emitter::take_step_checks`]). Nothing but a check may read `cond`'s meaning: a rule
    /// that branches on whether its step is precise uses [`Emitter::close`] and [`Emitter::check`].
    pub fn check_step(&mut self, cond: Value, reason: &str) -> Result<(), RuleError> {
        self.require(Mode::Inverse, "check")?;
        if !self.step_checks_on {
            return Ok(());
        }
        let inst = self.func.ins_void(
            self.block,
            InstKind::Check {
                cond,
                reason: reason.to_string(),
            },
            self.span,
        );
        self.step_checks.push(inst);
        Ok(())
    }

    /// [`Emitter::check_equal`] as a step check ([`Emitter::check_step`]): that a step's
    /// solution gives its output back.
    pub fn check_step_equal(
        &mut self,
        actual: Value,
        expected: Value,
        reason: &str,
    ) -> Result<(), RuleError> {
        let ok = self.close(actual, expected);
        self.check_step(ok, reason)
    }

    /// An emitter that writes no step checks ([`Emitter::check_step`] does nothing): for code
    /// whose caller would delete them unread (an inverse with no dispatch guard to copy them
    /// into, which checks f(x) = y before it returns).
    pub fn without_step_checks(mut self) -> Emitter<'f> {
        self.step_checks_on = false;
        self
    }

    /// Whether step checks are written: a rule can skip computing what only its step check
    /// would read.
    pub fn writes_step_checks(&self) -> bool {
        self.step_checks_on
    }

    /// The step checks ([`Emitter::check_step`]) written since the last call.
    pub fn take_step_checks(&mut self) -> Vec<Inst> {
        std::mem::take(&mut self.step_checks)
    }

    /// PGF: notes that where the PGF holds `forward` (an operand's forward value, as the rule
    /// was given it), the inverse, reading what the PGF recorded, holds `replayed`: `forward`
    /// itself where θ names it, the closed form where the closed form pins it within the
    /// tolerance. The reorientation solves the steps before this one (later in the walk) for
    /// `replayed`, the value the inverse has there, so that an ill-conditioned step (`atanh`
    /// near ±1) records the θ that gives the forward value back from the inverse's own value.
    /// An operand with no note is taken to come back exactly. Notes made in the arms of a
    /// branch reach its join as block parameters (an arm without one passes `forward`); notes
    /// made in a loop or an outlined piece are dropped. Only the forward values
    /// [`Emitter::keep_replays_for`] names are noted.
    ///
    /// Where an output's replay differs from its forward value, a rule that did not ask for it
    /// ([`Emitter::replayed`]) computed its closed forms from the forward value, not from what
    /// the inverse holds: its notes are dropped.
    pub fn note_replay(&mut self, forward: Value, replayed: Value) {
        let faithful = self.replayed_outputs.is_empty() || self.replayed_used;
        if self.mode == Mode::Pgf
            && faithful
            && self.nesting == 0
            && self.replay_for.contains(&forward)
        {
            self.replays.retain(|&(f, _)| f != forward);
            self.replays.push((forward, replayed));
        }
    }

    /// PGF: keeps the replays of these forward values ([`Emitter::note_replay`]), which must be
    /// defined before the rule's code (they are passed through joins).
    pub fn keep_replays_for(&mut self, forward: Vec<Value>) {
        self.replay_for = forward;
    }

    /// PGF: the outputs whose value in the inverse may differ from the forward value, with the
    /// value the inverse holds ([`Emitter::note_replay`] of the step that solved them).
    pub fn set_replayed_outputs(&mut self, outputs: Vec<(Value, Value)>) {
        self.replayed_outputs = outputs;
    }

    /// PGF: the value the inverse holds for the forward output `z`: `z` itself unless the step
    /// that solved it pinned it by a closed form ([`Emitter::note_replay`]). A rule computes
    /// what the inverse computes (its closed form, its settle decision) from this, and decides
    /// what to record (which operand was the minimum) from the forward values.
    pub fn replayed(&mut self, z: Value) -> Value {
        match self.replayed_outputs.iter().find(|(f, _)| *f == z) {
            Some(&(_, r)) => {
                self.replayed_used = true;
                r
            }
            None => z,
        }
    }

    /// The replays noted so far ([`Emitter::note_replay`]).
    pub fn take_replays(&mut self) -> Vec<(Value, Value)> {
        std::mem::take(&mut self.replays)
    }

    /// Emits `body`, then moves what it emitted into a helper function called here
    /// ([`pinv_core::ir::outline`]): the code being built holds one `call` however long the
    /// piece, and equal pieces can share one helper. The caller of the emitter adds the helpers
    /// to the module and sets the calls' callees ([`Emitter::take_outlined`]). A piece that reads
    /// θ, records, checks or ends the function stays where it is. Returns `body`'s results: the
    /// call's, where the piece was outlined (the values `body` made are gone from the function
    /// then; use only what this returns).
    pub fn outlined(
        &mut self,
        body: impl FnOnce(&mut Emitter<'_>) -> Result<Vec<Value>, RuleError>,
    ) -> Result<Vec<Value>, RuleError> {
        let caller = self.block;
        let piece = outline::begin(self.func, caller);
        self.block = piece.entry();
        self.pieces.push(piece);
        let checks = self.step_checks.len();
        self.nesting += 1;
        let results = body(self);
        self.nesting -= 1;
        let piece = self.pieces.pop().expect("the piece begun above");
        // After an error the caller is put back together too; the error is returned below.
        let end = self.block;
        let values = match &results {
            Ok(v) => v.clone(),
            Err(_) => Vec::new(),
        };
        let name = format!("{}.piece", self.func.name);
        let kind = pinv_core::ir::FuncKind::Fn;
        let outlinable = results.is_ok() && self.step_checks.len() == checks;
        let finished = if outlinable {
            outline::finish(self.func, piece, end, &values, &name, kind)
        } else {
            // A step check (kept by instruction id) stays with its instruction in the caller.
            outline::splice_back(self.func, piece, end)
        };
        match finished {
            Finished::Outlined(piece) => {
                self.block = caller;
                // The body's values are the helper's now; the call defines new ones.
                let results = Ok(piece.results.clone());
                self.outlined.push(*piece);
                return results;
            }
            Finished::Spliced { block, insts } => {
                self.block = block;
                for c in &mut self.step_checks[checks..] {
                    if let Some(&moved) = insts.get(c) {
                        *c = moved;
                    }
                }
            }
        }
        results
    }

    /// The pieces [`Emitter::outlined`] moved out since the last call: each helper must be added
    /// to the module and its call pointed at it ([`Outlined::set_callee`]).
    pub fn take_outlined(&mut self) -> Vec<Outlined> {
        std::mem::take(&mut self.outlined)
    }

    /// Checks that `actual` equals `expected`: exactly for i64 and bool, within the relative
    /// tolerance for f64 (equal infinities are equal, and so are two NaNs: a NaN output is
    /// reproduced by a NaN). Where either value is not finite the comparison is exact, as
    /// [`pinv_core::ir::f64_close`] defines it.
    pub fn check_equal(
        &mut self,
        actual: Value,
        expected: Value,
        reason: &str,
    ) -> Result<(), RuleError> {
        let ok = self.close(actual, expected);
        self.check(ok, reason)
    }

    /// A bool value: `actual` equals `expected` as [`Emitter::check_equal`] means it.
    pub fn close(&mut self, actual: Value, expected: Value) -> Value {
        match self.value_type(expected) {
            Type::F64 => {
                // exact || both NaN || |a − b| ≤ tol · max(1, |b|) with |a − b| finite
                // (f64_close). The scale is clamped to f64::MAX, so with a tolerance of at most 1
                // the bound is finite and an infinite difference (y = ±inf, x finite) is never
                // near; a larger tolerance tests the difference for finiteness itself.
                let exact = self.prim(Opcode::Feq, &[actual, expected]);
                let a_nan = self.prim(Opcode::Fne, &[actual, actual]);
                let b_nan = self.prim(Opcode::Fne, &[expected, expected]);
                let both_nan = self.prim(Opcode::Band, &[a_nan, b_nan]);
                let exact = self.prim(Opcode::Bor, &[exact, both_nan]);
                let diff = self.prim(Opcode::Fsub, &[actual, expected]);
                let diff = self.prim(Opcode::Fabs, &[diff]);
                let mag = self.prim(Opcode::Fabs, &[expected]);
                let one = self.f64(1.0);
                let scale = self.prim(Opcode::Fmax, &[mag, one]);
                let largest = self.f64(f64::MAX);
                let scale = self.prim(Opcode::Fmin, &[scale, largest]);
                let tolerance = self.options.tolerance;
                let tol = self.f64(tolerance);
                let bound = self.prim(Opcode::Fmul, &[tol, scale]);
                let mut near = self.prim(Opcode::Fle, &[diff, bound]);
                if tolerance.is_nan() || tolerance > 1.0 {
                    let inf = self.f64(f64::INFINITY);
                    let finite = self.prim(Opcode::Flt, &[diff, inf]);
                    near = self.prim(Opcode::Band, &[near, finite]);
                }
                self.prim(Opcode::Bor, &[exact, near])
            }
            Type::I64 => self.prim(Opcode::Ieq, &[actual, expected]),
            Type::Bool => self.prim(Opcode::Beq, &[actual, expected]),
        }
    }

    /// Appends `value` to the θ tape being written (PGF mode).
    pub fn record(&mut self, value: Value, role: &str) -> Result<(), RuleError> {
        self.require(Mode::Pgf, "record")?;
        if self.muted {
            return Ok(());
        }
        let role = self.role(role);
        self.func.ins_record(self.block, value, role, self.span);
        Ok(())
    }

    fn require(&self, mode: Mode, what: &'static str) -> Result<(), RuleError> {
        if self.mode == mode {
            Ok(())
        } else {
            Err(RuleError::WrongMode { what })
        }
    }

    // ---- control flow

    /// `if cond { then } else { else_ }`: each arm returns one value per entry of `types`; the
    /// results are the join block's parameters, and emission continues there.
    pub fn if_else(
        &mut self,
        cond: Value,
        types: &[Type],
        then: impl FnOnce(&mut Emitter<'f>) -> Result<Vec<Value>, RuleError>,
        else_: impl FnOnce(&mut Emitter<'f>) -> Result<Vec<Value>, RuleError>,
    ) -> Result<Vec<Value>, RuleError> {
        let then_block = self.func.create_block();
        let else_block = self.func.create_block();
        self.func.ins_void(
            self.block,
            InstKind::Brif {
                cond,
                then_dest: Box::new(BlockCall::new(then_block, Vec::new())),
                else_dest: Box::new(BlockCall::new(else_block, Vec::new())),
            },
            self.span,
        );
        self.block = then_block;
        let outer = std::mem::take(&mut self.replays);
        let then_values = then(self);
        let then_notes = std::mem::take(&mut self.replays);
        let then_end = self.block;
        self.block = else_block;
        let else_values = then_values.and_then(|t| Ok((t, else_(self)?)));
        let else_notes = std::mem::replace(&mut self.replays, outer);
        let (then_values, else_values) = else_values?;
        let else_end = self.block;
        self.join_noted(
            types,
            vec![
                (then_end, then_values, then_notes),
                (else_end, else_values, else_notes),
            ],
        )
    }

    /// `if cond { then } else { else_ }` for code that gives no value (checks, θ records).
    pub fn branch(
        &mut self,
        cond: Value,
        then: impl FnOnce(&mut Emitter<'f>) -> Result<(), RuleError>,
        else_: impl FnOnce(&mut Emitter<'f>) -> Result<(), RuleError>,
    ) -> Result<(), RuleError> {
        let then = |e: &mut Emitter<'f>| then(e).map(|()| Vec::new());
        let else_ = |e: &mut Emitter<'f>| else_(e).map(|()| Vec::new());
        self.if_else(cond, &[], then, else_).map(|_| ())
    }

    /// `if cond { then } else { else_ }` for code that gives one value of type `ty`.
    pub fn if_value(
        &mut self,
        cond: Value,
        ty: Type,
        then: impl FnOnce(&mut Emitter<'f>) -> Result<Value, RuleError>,
        else_: impl FnOnce(&mut Emitter<'f>) -> Result<Value, RuleError>,
    ) -> Result<Value, RuleError> {
        let then = |e: &mut Emitter<'f>| then(e).map(|v| vec![v]);
        let else_ = |e: &mut Emitter<'f>| else_(e).map(|v| vec![v]);
        let values = self.if_else(cond, &[ty], then, else_)?;
        values
            .first()
            .copied()
            .ok_or_else(|| RuleError::Malformed("an if gave no value".into()))
    }

    /// Runs `arm(k)` for the case `index == k`, for k in `0..n` (the last arm also takes every
    /// other index); each arm returns one value per entry of `types`. Emission continues at the
    /// join, whose parameters are returned.
    pub fn switch(
        &mut self,
        index: Value,
        n: u32,
        types: &[Type],
        mut arm: impl FnMut(&mut Emitter<'f>, u32) -> Result<Vec<Value>, RuleError>,
    ) -> Result<Vec<Value>, RuleError> {
        let mut ends = Vec::new();
        let outer = std::mem::take(&mut self.replays);
        let mut arms = |e: &mut Emitter<'f>| -> Result<(), RuleError> {
            for k in 0..n {
                if k + 1 == n {
                    let values = arm(e, k)?;
                    ends.push((e.block, values, std::mem::take(&mut e.replays)));
                    break;
                }
                let kv = e.i64(i64::from(k));
                let is_k = e.prim(Opcode::Ieq, &[index, kv]);
                let arm_block = e.func.create_block();
                let rest = e.func.create_block();
                e.func.ins_void(
                    e.block,
                    InstKind::Brif {
                        cond: is_k,
                        then_dest: Box::new(BlockCall::new(arm_block, Vec::new())),
                        else_dest: Box::new(BlockCall::new(rest, Vec::new())),
                    },
                    e.span,
                );
                e.block = arm_block;
                let values = arm(e, k)?;
                ends.push((e.block, values, std::mem::take(&mut e.replays)));
                e.block = rest;
            }
            Ok(())
        };
        let done = arms(self);
        self.replays = outer;
        done?;
        self.join_noted(types, ends)
    }

    /// `while cond(state) { state = body(state) }` over loop-carried values of `types`, from
    /// `init`; emission continues after the loop, whose final state is returned. The caller
    /// bounds the trip count (every loop a rule writes halves or doubles something).
    pub fn while_loop(
        &mut self,
        types: &[Type],
        init: &[Value],
        cond: impl FnOnce(&mut Emitter<'f>, &[Value]) -> Result<Value, RuleError>,
        body: impl FnOnce(&mut Emitter<'f>, &[Value]) -> Result<Vec<Value>, RuleError>,
    ) -> Result<Vec<Value>, RuleError> {
        if init.len() != types.len() {
            return Err(RuleError::Malformed(format!(
                "a loop was given {} initial values for {} loop values",
                init.len(),
                types.len()
            )));
        }
        let header = self.func.create_block();
        let state: Vec<Value> = types
            .iter()
            .map(|&ty| self.func.append_block_param(header, ty))
            .collect();
        let body_block = self.func.create_block();
        let exit = self.func.create_block();
        let out: Vec<Value> = types
            .iter()
            .map(|&ty| self.func.append_block_param(exit, ty))
            .collect();
        self.func
            .ins_jump(self.block, header, init.to_vec(), self.span);
        self.block = header;
        self.nesting += 1;
        let go_on = cond(self, &state);
        self.nesting -= 1;
        let go_on = go_on?;
        self.func.ins_void(
            self.block,
            InstKind::Brif {
                cond: go_on,
                then_dest: Box::new(BlockCall::new(body_block, Vec::new())),
                else_dest: Box::new(BlockCall::new(exit, state.clone())),
            },
            self.span,
        );
        self.block = body_block;
        self.nesting += 1;
        let next = body(self, &state);
        self.nesting -= 1;
        let next = next?;
        if next.len() != types.len() {
            return Err(RuleError::Malformed(format!(
                "a loop body gave {} values for {} loop values",
                next.len(),
                types.len()
            )));
        }
        self.func.ins_jump(self.block, header, next, self.span);
        self.block = exit;
        Ok(out)
    }

    /// [`Emitter::join`] of arms that each noted replays ([`Emitter::note_replay`]): every
    /// forward value an arm noted gets a parameter of the join (an arm that noted none passes
    /// the forward value itself), noted in turn where emission continues.
    fn join_noted(&mut self, types: &[Type], ends: Vec<NotedEnd>) -> Result<Vec<Value>, RuleError> {
        let mut noted: Vec<Value> = Vec::new();
        for (_, _, notes) in &ends {
            for &(f, _) in notes {
                if !noted.contains(&f) {
                    noted.push(f);
                }
            }
        }
        if noted.is_empty() {
            return self.join(types, ends.into_iter().map(|(b, v, _)| (b, v)).collect());
        }
        let mut all_types = types.to_vec();
        all_types.extend(noted.iter().map(|&f| self.func.value_type(f)));
        let ends = ends
            .into_iter()
            .map(|(block, mut values, notes)| {
                for &f in &noted {
                    let r = notes.iter().find(|(g, _)| *g == f).map_or(f, |&(_, r)| r);
                    values.push(r);
                }
                (block, values)
            })
            .collect();
        let mut params = self.join(&all_types, ends)?;
        let replayed = params.split_off(types.len());
        for (f, r) in noted.into_iter().zip(replayed) {
            self.note_replay(f, r);
        }
        Ok(params)
    }

    fn join(
        &mut self,
        types: &[Type],
        ends: Vec<(Block, Vec<Value>)>,
    ) -> Result<Vec<Value>, RuleError> {
        let join = self.func.create_block();
        let params: Vec<Value> = types
            .iter()
            .map(|&ty| self.func.append_block_param(join, ty))
            .collect();
        for (block, values) in ends {
            if values.len() != types.len() {
                return Err(RuleError::Malformed(format!(
                    "a branch gave {} values for {} results",
                    values.len(),
                    types.len()
                )));
            }
            self.func.ins_jump(block, join, values, self.span);
        }
        self.block = join;
        Ok(params)
    }
}

/// `domain` intersected with `[lo, hi]`, when the intersection is again a domain (f64 domains
/// only; others are returned as they are).
fn narrow(domain: Domain, (lo, hi): (f64, f64)) -> Domain {
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return domain;
    }
    let tiny = f64::from_bits(1); // the smallest positive f64
    match domain {
        Domain::Real => Domain::Interval { lo, hi },
        Domain::Interval { lo: a, hi: b } => {
            let (l, h) = (a.max(lo), b.min(hi));
            if l <= h {
                Domain::Interval { lo: l, hi: h }
            } else {
                domain
            }
        }
        // A range that is only zero leaves no nonzero value: the domain stays as it is (an
        // empty one is not a domain; the step's own check then rejects the θ).
        Domain::NonzeroReal if lo >= 0.0 && hi >= tiny => Domain::Interval {
            lo: lo.max(tiny),
            hi,
        },
        Domain::NonzeroReal if hi <= 0.0 && lo <= -tiny => Domain::Interval {
            lo,
            hi: hi.min(-tiny),
        },
        // A finite range on both sides of 0 (`sin(t)` in [−1, 1]): the interval, with 0 in it.
        // The nonzero reals outside it are values the operand never has, and an interval has
        // no hole, so 0 stays in; a draw of exactly 0 (vanishingly rare from a finite interval)
        // fails the step's own check, as any bad θ does, and the PGF never records it. A
        // half-line is drawn at its end's scale, which can give 0 (`3 − 3`): it stays nonzero.
        Domain::NonzeroReal if lo < 0.0 && hi > 0.0 && lo.is_finite() && hi.is_finite() => {
            Domain::Interval { lo, hi }
        }
        other => other,
    }
}

#[cfg(test)]
mod narrow_tests {
    use super::*;

    #[test]
    fn narrowing_to_zero_alone_leaves_a_nonzero_domain_as_it_is() {
        for range in [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0)] {
            assert_eq!(narrow(Domain::NonzeroReal, range), Domain::NonzeroReal);
        }
    }

    #[test]
    fn narrowing_keeps_the_operand_values() {
        assert_eq!(
            narrow(Domain::NonzeroReal, (0.0, f64::INFINITY)),
            Domain::Interval {
                lo: f64::from_bits(1),
                hi: f64::INFINITY
            }
        );
        assert_eq!(
            narrow(Domain::Real, (-1.0, 1.0)),
            Domain::Interval { lo: -1.0, hi: 1.0 }
        );
        // Both sides of 0: the interval, 0 included (a draw of 0 fails the step's check);
        // a half-line on both sides stays nonzero.
        assert_eq!(
            narrow(Domain::NonzeroReal, (-1.0, 1.0)),
            Domain::Interval { lo: -1.0, hi: 1.0 }
        );
        assert_eq!(
            narrow(Domain::NonzeroReal, (f64::NEG_INFINITY, 3.0)),
            Domain::NonzeroReal
        );
        assert_eq!(narrow(Domain::Int, (0.0, 1.0)), Domain::Int);
    }
}
