//! Translation of one IR function into Cranelift IR.
//!
//! The function gets the signature of [`abi`](super::abi) (context first, status first). Its
//! layout:
//!
//! - a *prologue* block takes the native parameters, loads the fuel, checks the stack (recursive
//!   functions only) and the fuel, and jumps to the IR entry block (so the IR entry may be a
//!   branch target like any block);
//! - one Cranelift block per IR block, with the same parameters (IR block parameters map one to
//!   one to Cranelift block parameters), translated in reverse postorder so that every value is
//!   defined before it is used (the verifier guarantees dominance);
//! - cold blocks for every place that can stop, which store the error code, site and fuel and
//!   jump to one shared *error exit* (return status 1) or, after a failed call, to one shared
//!   *propagate* block (note the call site; return status 1).
//!
//! Three things are not translated one for one:
//!
//! - θ reads take the next value from the tape in the context block when it has the right type
//!   and domain, and call back otherwise ([`Translator::tape_read`]), through a shim that
//!   clobbers no register (`compile::read_shims`), so the fast path spills nothing for it; a
//!   function that reads θ keeps the tape's base and position in variables ([`Tape`]);
//! - a call of a small leaf callee that cannot fail is translated in place
//!   ([`Translator::inline_call`]), with the call's depth bookkeeping and the callee's steps;
//! - a `brif` whose two edges go to the same block (a choice of values, after
//!   [`thread_jumps`](crate::ir::thread_jumps)) is a select of the arguments and a jump.
//!
//! # Steps
//!
//! The interpreter counts every executed instruction as a step. Compiled code charges each
//! straight-line *segment* (a block's instructions up to and including a call, or up to the
//! terminator) to the fuel when the segment starts, and checks the fuel only at function entries
//! and loop headers (targets of retreating edges), so every loop and every recursion is bounded.
//! At those checks the count is exact; at an error site the host adds back the instructions of
//! the segment not run yet ([`Site::uncharged`](super::abi::Site)). So the host knows the
//! interpreter's exact step count wherever compiled code stops, and reports
//! [`StepLimit`](crate::interp::RuntimeErrorKind::StepLimit) exactly when the interpreter would.
//!
//! # Exactness
//!
//! `fadd fsub fmul fdiv fneg fabs sqrt floor` are native instructions, which give the same bits as
//! the shared `extern "C"` functions of [`crate::semantics`] (IEEE operations; `fneg`/`fabs` only
//! touch the sign bit; a NaN operand propagates as the first NaN operand, quieted; `floor` of a NaN
//! is whatever the shared `floor` gives, probed once: unchanged or quieted). `fmin`/`fmax` are the
//! native IEEE minimum/maximum (-0 below +0) with a NaN operand replaced by the other operand, which
//! is exactly `semantics`' rule. Everything else on f64 (`frem`, `pow`, the libm functions) calls
//! the shared functions. An `fmin`/`fmax` with a constant operand other than NaN and other
//! than the zero it prefers is a comparison and a select (the same bits).
//!
//! The quick tier ([`Tier::Quick`](super::compile::Tier)) is compiled without Cranelift's mid-end
//! optimizer (`opt_level=none`, for compile time), the optimized tier with it (`speed`). Of its
//! float rewrites, one changes the bits of a NaN result: `fmul(fneg x, fneg y) → fmul(x, y)` (x's
//! sign instead of the flipped one); an `fneg` that is an operand of such a product is compiled as
//! an integer flip of the sign bit, which the rule does not see ([`negated_factors`]). The others
//! fold constants only to results that are not NaN, and `fneg`/`fabs`/`fcopysign` exactly.

use super::abi::{
    self, ErrorCode, Site, OFF_DEPTH, OFF_DEPTH_LIMIT, OFF_ERR_KIND, OFF_FUEL, OFF_MAX_DEPTH,
    OFF_PENDING, OFF_STACK_FLOOR, OFF_TAPE, OFF_TAPE_POS,
};
use super::compile::UnitBuilder;
use super::JitError;
use crate::ir::{Block, Const, Domain, FuncId, Function, Inst, InstKind, Opcode, Type, Value};
use crate::semantics;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{
    self as cl, types, AbiParam, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind,
};
use cranelift_entity::EntityRef;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{FuncId as ClFuncId, Module as _};
use std::collections::HashMap;

/// The Cranelift type of an IR type.
pub(crate) fn cl_type(ty: Type) -> cl::Type {
    match ty {
        Type::F64 => types::F64,
        Type::I64 => types::I64,
        Type::Bool => types::I8,
    }
}

/// The signature of the host's entry into a unit, [`abi::EntryFn`]: `(ctx, args, out) -> status`.
pub(crate) fn entry_signature(ub: &UnitBuilder<'_>) -> cl::Signature {
    let ptr = ub.pointer_type();
    let mut sig = ub.jit.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(ptr));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// The native signature of a compiled IR function (see [`abi`](super::abi)).
pub(crate) fn internal_signature(ub: &UnitBuilder<'_>, func: &Function) -> cl::Signature {
    let ptr = ub.pointer_type();
    let mut sig = ub.jit.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params
        .extend(func.sig.params.iter().map(|&t| AbiParam::new(cl_type(t))));
    if func.sig.returns.len() >= 2 {
        sig.params.push(AbiParam::new(ptr));
    }
    sig.returns.push(AbiParam::new(types::I8));
    if let [ty] = func.sig.returns.as_slice() {
        sig.returns.push(AbiParam::new(cl_type(*ty)));
    }
    sig
}

/// Memory flags for the context block and result slots: aligned, never trapping.
fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// The start of an entry ([`abi::EntryFn`]): checks the tag of every argument in `args` (an
/// array of [`Const`]) against `params`, returning [`abi::STATUS_BAD_ARGUMENTS`] if one differs,
/// and loads their payloads. Leaves `b` in the block where the checks passed.
pub(crate) fn load_const_args(
    b: &mut FunctionBuilder<'_>,
    args: cl::Value,
    params: &[Type],
) -> Vec<cl::Value> {
    let flags = flags();
    let mut wrong = None;
    for (i, &ty) in params.iter().enumerate() {
        let tag = b
            .ins()
            .load(types::I8, flags, args, abi::CONST_SIZE * i as i32);
        let ne = b
            .ins()
            .icmp_imm_u(IntCC::NotEqual, tag, i64::from(abi::const_tag(ty)));
        wrong = Some(match wrong {
            None => ne,
            Some(w) => b.ins().bor(w, ne),
        });
    }
    if let Some(wrong) = wrong {
        let reject = b.create_block();
        b.set_cold_block(reject);
        let ok = b.create_block();
        b.ins().brif(wrong, reject, &[], ok, &[]);
        b.switch_to_block(reject);
        let status = b
            .ins()
            .iconst(types::I32, i64::from(abi::STATUS_BAD_ARGUMENTS));
        b.ins().return_(&[status]);
        b.switch_to_block(ok);
    }
    params
        .iter()
        .enumerate()
        .map(|(i, &ty)| {
            let at = abi::CONST_SIZE * i as i32 + abi::CONST_PAYLOAD;
            b.ins().load(cl_type(ty), flags, args, at)
        })
        .collect()
}

/// Writes result `i` of type `ty`, `v`, as a [`Const`] into `out` (an array of `Const`).
pub(crate) fn store_const(
    b: &mut FunctionBuilder<'_>,
    out: cl::Value,
    i: usize,
    ty: Type,
    v: cl::Value,
) {
    let flags = flags();
    let at = abi::CONST_SIZE * i as i32;
    let tag = b.ins().iconst(types::I8, i64::from(abi::const_tag(ty)));
    b.ins().store(flags, tag, out, at);
    b.ins().store(flags, v, out, at + abi::CONST_PAYLOAD);
}

/// A θ read: `theta` from a domain, or `choice n`.
#[derive(Clone, Copy)]
enum Read {
    Theta(Domain),
    Choice(u32),
}

/// A cold block to fill in at the end.
enum Cold {
    /// Stop with an error at a site.
    Error(ErrorCode, u32),
    /// A call at a site failed: pass the error up.
    Propagate(u32),
    /// Stop with an error at a site of an inlined callee, called at the second site.
    InlinedError(ErrorCode, u32, u32),
}

/// The variables of a function that reads θ: the tape's base address (loaded once, at entry)
/// and the position of the next value. The context's `tape_pos` is kept current too (each read
/// stores it, so error exits, returns and calls need not), and the variable is loaded again from
/// it after calls and callbacks, which move it.
#[derive(Clone, Copy)]
struct Tape {
    base: Variable,
    pos: Variable,
}

struct Translator<'t, 'm> {
    ub: &'t mut UnitBuilder<'m>,
    b: FunctionBuilder<'t>,
    id: FuncId,
    func: &'m Function,
    ctx: cl::Value,
    /// Where results go: the return area (several results), or the host's `Const`s (`entry`).
    ret_ptr: Option<cl::Value>,
    /// Whether the function is compiled as the unit's entry ([`entry_signature`]): arguments
    /// come from the host's `Const`s, every result goes to its `Const`, and the status is an
    /// `i32`.
    entry: bool,
    /// While an inlined callee is translated: where its `return` jumps (with the results), and
    /// the call site.
    inlined: Option<(cl::Block, u32)>,
    fuel: Variable,
    /// The tape and the position in it, kept in variables by a function that reads θ (see
    /// [`Tape`]).
    tape: Option<Tape>,
    values: Vec<Option<cl::Value>>,
    blocks: cranelift_entity::SecondaryMap<Block, Option<cl::Block>>,
    /// `fneg`s compiled as a flip of the sign bit in an integer register (see
    /// [`negated_factors`]).
    int_fnegs: std::collections::HashSet<Value>,
    err_exit: cl::Block,
    propagate: cl::Block,
    cold: Vec<(cl::Block, Cold)>,
    refs: HashMap<ClFuncId, cl::FuncRef>,
}

/// Translates IR function `id` into `out` (whose signature is set here), with the internal
/// signature or, with `entry`, as the unit's entry (see [`entry_signature`]; only for a function
/// that no function of the unit calls).
pub(crate) fn translate_function(
    ub: &mut UnitBuilder<'_>,
    id: FuncId,
    entry: bool,
    out: &mut cl::Function,
    fbc: &mut FunctionBuilderContext,
) -> Result<(), JitError> {
    let module = ub.module;
    let func = &module.functions[id];
    out.signature = if entry {
        entry_signature(ub)
    } else {
        internal_signature(ub, func)
    };
    let mut b = FunctionBuilder::new(out, fbc);
    let prologue = b.create_block();
    b.append_block_params_for_function_params(prologue);
    b.switch_to_block(prologue);
    let mut params = b.block_params(prologue).to_vec();
    let ctx = params[0];
    let ret_ptr = if entry {
        // The arguments, from the host's array of `Const`.
        let (args, out) = (params[1], params[2]);
        params.truncate(1);
        params.extend(load_const_args(&mut b, args, &func.sig.params));
        Some(out)
    } else {
        (func.sig.returns.len() >= 2).then(|| params[params.len() - 1])
    };
    let fuel = b.declare_var(types::I64);
    let reads = func.insts_in_layout().any(|(_, i)| {
        matches!(
            func.insts[i].kind,
            InstKind::Theta(_) | InstKind::Choice { .. }
        )
    });
    let tape = reads.then(|| Tape {
        base: b.declare_var(ub.pointer_type()),
        pos: b.declare_var(types::I64),
    });
    let err_exit = b.create_block();
    b.set_cold_block(err_exit);
    let propagate = b.create_block();
    b.append_block_param(propagate, types::I32);
    b.set_cold_block(propagate);
    let mut t = Translator {
        ub,
        b,
        id,
        func,
        ctx,
        ret_ptr,
        entry,
        inlined: None,
        fuel,
        tape,
        values: vec![None; func.values.len()],
        blocks: cranelift_entity::SecondaryMap::new(),
        int_fnegs: negated_factors(func),
        err_exit,
        propagate,
        cold: Vec::new(),
        refs: HashMap::new(),
    };
    t.body(&params[1..1 + func.sig.params.len()])?;
    t.b.seal_all_blocks();
    let target = t.ub.jit.target_config();
    t.b.finalize(target);
    Ok(())
}

impl<'t, 'm> Translator<'t, 'm> {
    fn internal(&self, message: impl Into<String>) -> JitError {
        JitError::Internal {
            function: self.func.name.clone(),
            message: message.into(),
        }
    }

    fn site(&mut self, inst: Inst, uncharged: u32) -> u32 {
        self.ub.site(Site {
            func: self.id,
            inst,
            uncharged,
        })
    }

    fn value(&self, v: Value) -> Result<cl::Value, JitError> {
        self.values
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| self.internal(format!("{v} is used before it is defined")))
    }

    fn values_of(&self, vs: &[Value]) -> Result<Vec<cl::Value>, JitError> {
        vs.iter().map(|&v| self.value(v)).collect()
    }

    fn define(&mut self, v: Value, x: cl::Value) -> Result<(), JitError> {
        match self.values.get_mut(v.index()) {
            Some(slot) => {
                *slot = Some(x);
                Ok(())
            }
            None => Err(self.internal(format!("{v} does not exist"))),
        }
    }

    fn func_ref(&mut self, id: ClFuncId) -> cl::FuncRef {
        if let Some(&r) = self.refs.get(&id) {
            return r;
        }
        let r = self.ub.jit.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    /// A cold block that stops with `code` at `site`.
    fn error_block(&mut self, code: ErrorCode, site: u32) -> cl::Block {
        let block = self.b.create_block();
        self.b.set_cold_block(block);
        self.cold.push((block, Cold::Error(code, site)));
        block
    }

    /// Continues in a new block if `cond` is false; stops with `code` at `site` if it is true.
    fn stop_if(&mut self, cond: cl::Value, code: ErrorCode, site: u32) {
        let stop = self.error_block(code, site);
        let cont = self.b.create_block();
        self.b.ins().brif(cond, stop, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    fn load_ctx(&mut self, ty: cl::Type, offset: i32) -> cl::Value {
        self.b.ins().load(ty, flags(), self.ctx, offset)
    }

    fn store_ctx(&mut self, v: cl::Value, offset: i32) {
        self.b.ins().store(flags(), v, self.ctx, offset);
    }

    /// Takes the tape position back after a call or callback moved it (see [`Tape`]).
    fn reload_tape_pos(&mut self) {
        if let Some(t) = self.tape {
            let pos = self.load_ctx(types::I64, OFF_TAPE_POS);
            self.b.def_var(t.pos, pos);
        }
    }

    /// Charges `n` steps to the fuel.
    fn charge(&mut self, n: u32) {
        let f = self.b.use_var(self.fuel);
        let f = self.b.ins().iadd_imm_s(f, -i64::from(n));
        self.b.def_var(self.fuel, f);
    }

    /// Stops with [`ErrorCode::Fuel`] if the fuel is negative and the host gives no more.
    fn check_fuel(&mut self, site: u32) {
        self.refuel_or(site, |t, still| t.stop_if(still, ErrorCode::Fuel, site));
    }

    /// Where the fuel is negative, asks the host for more ([`abi::pinv_jit_refuel`], through
    /// its shim) in a cold block, and there calls `stop` with the condition that none came (the
    /// fuel is still negative); `stop` continues in a block of its own. The path that has fuel
    /// left is one compare, as without slices.
    fn refuel_or(&mut self, site: u32, stop: impl FnOnce(&mut Self, cl::Value)) {
        let f = self.b.use_var(self.fuel);
        let out = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, f, 0);
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let cont = self.b.create_block();
        self.b.ins().brif(out, slow, &[], cont, &[]);
        self.b.switch_to_block(slow);
        // Through the shim, which clobbers no register; the fuel goes by the context. Compiled
        // once per process, so this cannot fail; without it, no more fuel.
        let more = match self.ub.read_shim(abi::SYM_REFUEL) {
            Ok(shim) => {
                self.store_ctx(f, OFF_FUEL);
                let r = self.func_ref(shim);
                let s = self.b.ins().iconst(types::I32, i64::from(site));
                self.b.ins().call(r, &[self.ctx, s]);
                self.load_ctx(types::I64, abi::OFF_SCRATCH)
            }
            Err(_) => f,
        };
        self.b.def_var(self.fuel, more);
        let still = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, more, 0);
        stop(self, still);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// Continues in a new block if `cond` is false; stops with `code` at `site` (of an inlined
    /// callee) if it is true, as the callee would have, and then passes the error up through the
    /// call at `call_site`.
    fn stop_inlined_if(&mut self, cond: cl::Value, code: ErrorCode, site: u32, call_site: u32) {
        let stop = self.b.create_block();
        self.b.set_cold_block(stop);
        self.cold
            .push((stop, Cold::InlinedError(code, site, call_site)));
        let cont = self.b.create_block();
        self.b.ins().brif(cond, stop, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    fn zero(&mut self, ty: Type) -> cl::Value {
        match ty {
            Type::F64 => self.b.ins().f64const(Ieee64::with_bits(0)),
            Type::I64 => self.b.ins().iconst(types::I64, 0),
            Type::Bool => self.b.ins().iconst(types::I8, 0),
        }
    }

    /// Returns `status` (and a zero result when the function has exactly one).
    fn return_status(&mut self, status: i64) {
        if self.entry {
            let s = self.b.ins().iconst(types::I32, status);
            self.b.ins().return_(&[s]);
            return;
        }
        let s = self.b.ins().iconst(types::I8, status);
        let mut rets = vec![s];
        if let [ty] = self.func.sig.returns.as_slice() {
            rets.push(self.zero(*ty));
        }
        self.b.ins().return_(&rets);
    }

    fn body(&mut self, params: &[cl::Value]) -> Result<(), JitError> {
        let func = self.func;
        let Some(entry) = func.entry() else {
            return Err(self.internal("no entry block"));
        };
        let (order, headers) = reverse_postorder(func);
        for &block in &order {
            let cb = self.b.create_block();
            for &p in &func.blocks[block].params {
                self.b.append_block_param(cb, cl_type(func.value_type(p)));
            }
            self.blocks[block] = Some(cb);
        }
        let first = first_inst(func, entry).ok_or_else(|| self.internal("empty entry block"))?;

        // Prologue.
        let fuel = self.load_ctx(types::I64, OFF_FUEL);
        self.b.def_var(self.fuel, fuel);
        if let Some(t) = self.tape {
            let ptr = self.ub.pointer_type();
            let base = self.load_ctx(ptr, OFF_TAPE);
            self.b.def_var(t.base, base);
            self.reload_tape_pos();
        }
        let entry_site = self.site(first, 0);
        if self.ub.in_cycle.contains(&self.id) {
            let ptr = self.ub.pointer_type();
            let sp = self.b.ins().get_stack_pointer(ptr);
            let floor = self.load_ctx(ptr, OFF_STACK_FLOOR);
            let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, floor);
            self.stop_if(low, ErrorCode::Stack, entry_site);
        }
        self.check_fuel(entry_site);
        let args: Vec<cl::BlockArg> = params.iter().map(|&v| v.into()).collect();
        let entry_block = self.target(entry)?;
        self.b.ins().jump(entry_block, &args);

        for &block in &order {
            self.block(block, headers.contains(block))?;
        }
        self.exits();
        Ok(())
    }

    fn block(&mut self, block: Block, header: bool) -> Result<(), JitError> {
        let func = self.func;
        let cb = self.target(block)?;
        self.b.switch_to_block(cb);
        let cparams = self.b.block_params(cb).to_vec();
        for (&p, &c) in func.blocks[block].params.iter().zip(&cparams) {
            self.define(p, c)?;
        }
        let insts = &func.blocks[block].insts;
        let segments = Segments::of(func, insts);
        if header {
            if let Some(&first) = insts.first() {
                let site = self.site(first, 0);
                self.check_fuel(site);
            }
        }
        self.charge(segments.len_from(0));
        for (i, &inst) in insts.iter().enumerate() {
            let uncharged = segments.uncharged(i);
            self.inst(inst, uncharged)?;
            if matches!(func.insts[inst].kind, InstKind::Call { .. }) && i + 1 < insts.len() {
                self.charge(segments.len_from(i + 1));
            }
        }
        Ok(())
    }

    fn inst(&mut self, inst: Inst, uncharged: u32) -> Result<(), JitError> {
        let func = self.func;
        let data = &func.insts[inst];
        let result = |i: usize| -> Result<Value, JitError> {
            data.results
                .get(i)
                .copied()
                .ok_or_else(|| JitError::Internal {
                    function: func.name.clone(),
                    message: format!("{inst} lacks result {i}"),
                })
        };
        match &data.kind {
            InstKind::Const(c) => {
                let v = match *c {
                    Const::F64(x) => self.b.ins().f64const(Ieee64::with_bits(x.to_bits())),
                    Const::I64(x) => self.b.ins().iconst(types::I64, x),
                    Const::Bool(x) => self.b.ins().iconst(types::I8, i64::from(x)),
                };
                self.define(result(0)?, v)?;
            }
            InstKind::Prim { op, args } => {
                let consts: Vec<Option<f64>> =
                    args.iter().map(|&a| f64_constant(func, a)).collect();
                let args = self.values_of(args)?;
                let v = self.prim(*op, &args, &consts, inst, uncharged)?;
                self.define(result(0)?, v)?;
            }
            InstKind::Call { callee, args } => {
                let args = self.values_of(args)?;
                let results = self.call(*callee, args, inst)?;
                for (i, v) in results.into_iter().enumerate() {
                    self.define(result(i)?, v)?;
                }
            }
            InstKind::Theta(read) => {
                let within = match read.within {
                    Some([lo, hi]) => Some((self.value(lo)?, self.value(hi)?)),
                    None => None,
                };
                let v = self.tape_read_within(Read::Theta(read.domain), within, inst, uncharged)?;
                self.define(result(0)?, v)?;
            }
            InstKind::Choice { n, .. } => {
                let v = self.tape_read(Read::Choice(*n), inst, uncharged)?;
                self.define(result(0)?, v)?;
            }
            InstKind::Record { value, .. } => {
                let ty = func.value_type(*value);
                let v = self.value(*value)?;
                let bits = self.as_slot_bits(ty, v);
                let site = self.site(inst, uncharged);
                let s = self.b.ins().iconst(types::I32, i64::from(site));
                let tag = crate::interp::tape_tag(ty) as i64;
                let tag = self.b.ins().iconst(types::I32, tag);
                let callee = self.ub.callback(abi::SYM_RECORD)?;
                let r = self.func_ref(callee);
                let call = self.b.ins().call(r, &[self.ctx, s, bits, tag]);
                let failed = self.b.inst_results(call)[0];
                self.reload_tape_pos();
                self.stop_if(failed, ErrorCode::Host, site);
            }
            InstKind::Segment(op) => {
                let site = self.site(inst, uncharged);
                let s = self.b.ins().iconst(types::I32, i64::from(site));
                // A code no op has (7) makes the runtime look the op up from the site.
                let code = abi::segment_code(*op).unwrap_or(7);
                let code = self.b.ins().iconst(types::I32, i64::from(code));
                let callee = self.ub.callback(abi::SYM_SEGMENT)?;
                let r = self.func_ref(callee);
                let call = self.b.ins().call(r, &[self.ctx, s, code]);
                let failed = self.b.inst_results(call)[0];
                self.reload_tape_pos();
                self.stop_if(failed, ErrorCode::Host, site);
            }
            InstKind::Check { cond, .. } => {
                let c = self.value(*cond)?;
                let site = self.site(inst, uncharged);
                let stop = self.error_block(ErrorCode::CheckFailed, site);
                let cont = self.b.create_block();
                self.b.ins().brif(c, cont, &[], stop, &[]);
                self.b.switch_to_block(cont);
            }
            InstKind::Jump { dest } => {
                let target = self.target(dest.block)?;
                let args = self.block_args(&dest.args)?;
                self.b.ins().jump(target, &args);
            }
            InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                let c = self.value(*cond)?;
                if then_dest.block == else_dest.block {
                    // Two edges to one block (where jump threading took a choice of values):
                    // the block, with the arguments selected.
                    let x = self.values_of(&then_dest.args)?;
                    let y = self.values_of(&else_dest.args)?;
                    let args: Vec<cl::BlockArg> = x
                        .into_iter()
                        .zip(y)
                        .map(|(a, b)| self.b.ins().select(c, a, b).into())
                        .collect();
                    let target = self.target(then_dest.block)?;
                    self.b.ins().jump(target, &args);
                    return Ok(());
                }
                let t = self.target(then_dest.block)?;
                let ta = self.block_args(&then_dest.args)?;
                let e = self.target(else_dest.block)?;
                let ea = self.block_args(&else_dest.args)?;
                self.b.ins().brif(c, t, &ta, e, &ea);
            }
            InstKind::Return { args } => {
                let vals = self.values_of(args)?;
                if let Some((cont, _)) = self.inlined {
                    let args: Vec<cl::BlockArg> = vals.into_iter().map(Into::into).collect();
                    self.b.ins().jump(cont, &args);
                    return Ok(());
                }
                let f = self.b.use_var(self.fuel);
                self.store_ctx(f, OFF_FUEL);
                let ok = if self.entry {
                    self.b.ins().iconst(types::I32, 0)
                } else {
                    self.b.ins().iconst(types::I8, 0)
                };
                match (self.ret_ptr, vals.as_slice()) {
                    (None, []) => {
                        self.b.ins().return_(&[ok]);
                    }
                    (None, [v]) => {
                        self.b.ins().return_(&[ok, *v]);
                    }
                    (Some(ptr), _) => {
                        for (i, (&v, &ty)) in vals.iter().zip(&func.sig.returns).enumerate() {
                            if self.entry {
                                store_const(&mut self.b, ptr, i, ty, v);
                            } else {
                                let slot = self.widen(ty, v);
                                self.b.ins().store(flags(), slot, ptr, (8 * i) as i32);
                            }
                        }
                        self.b.ins().return_(&[ok]);
                    }
                    (None, _) => return Err(self.internal("several results without a return area")),
                }
            }
            InstKind::Fail { .. } => {
                let site = self.site(inst, uncharged);
                let stop = self.error_block(ErrorCode::Fail, site);
                self.b.ins().jump(stop, &[]);
            }
        }
        Ok(())
    }

    fn target(&self, block: Block) -> Result<cl::Block, JitError> {
        self.blocks
            .get(block)
            .copied()
            .flatten()
            .ok_or_else(|| self.internal(format!("{block} is not in the layout")))
    }

    fn block_args(&self, args: &[Value]) -> Result<Vec<cl::BlockArg>, JitError> {
        Ok(self.values_of(args)?.into_iter().map(Into::into).collect())
    }

    /// A value as an i64 slot (f64 by its bits, bool zero-extended), for callbacks.
    fn as_slot_bits(&mut self, ty: Type, v: cl::Value) -> cl::Value {
        match ty {
            Type::F64 => self.b.ins().bitcast(types::I64, MemFlagsData::new(), v),
            Type::I64 => v,
            Type::Bool => self.b.ins().uextend(types::I64, v),
        }
    }

    /// A value as stored in an 8-byte slot (bool zero-extended).
    fn widen(&mut self, ty: Type, v: cl::Value) -> cl::Value {
        match ty {
            Type::Bool => self.b.ins().uextend(types::I64, v),
            _ => v,
        }
    }

    /// A θ read (`theta` or `choice`): from the tape in [`Ctx`](super::abi::Ctx) when the
    /// next value is there, of the right type and in the read's domain; otherwise from the
    /// callback, which reads the θ source (or gives its error). Returns the value as `ty`.
    fn tape_read(&mut self, read: Read, inst: Inst, uncharged: u32) -> Result<cl::Value, JitError> {
        self.tape_read_within(read, None, inst, uncharged)
    }

    /// [`Self::tape_read`], for a `theta … within lo, hi` where `within` holds `lo` and `hi`:
    /// the tape's value is taken where it also lies between them (ordered comparisons, so a NaN
    /// value or bound is left to the host), and the callback otherwise narrows the domain the
    /// way the interpreter does ([`crate::ir::Domain::within`]), with the same value or error.
    /// The fast test only ever accepts what the host would: the narrowed domain of `real` holds
    /// `[lo, hi]`, and of an interval or range the values in both.
    fn tape_read_within(
        &mut self,
        read: Read,
        within: Option<(cl::Value, cl::Value)>,
        inst: Inst,
        uncharged: u32,
    ) -> Result<cl::Value, JitError> {
        let site = self.site(inst, uncharged);
        let (symbol, ty) = match read {
            Read::Theta(domain) => (abi::SYM_THETA, domain.ty()),
            Read::Choice(_) => (abi::SYM_CHOICE, Type::I64),
        };
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let join = self.b.create_block();
        let bits = self.b.append_block_param(join, types::I64);

        // Fast path: the right tag (the end marker has none), in the domain.
        let tape = self
            .tape
            .ok_or_else(|| self.internal("a θ read in a function without tape variables"))?;
        let pos = self.b.use_var(tape.pos);
        let base = self.b.use_var(tape.base);
        let offset = self.b.ins().ishl_imm_u(pos, 4);
        let addr = self.b.ins().iadd(base, offset);
        let value = self.b.ins().load(types::I64, flags(), addr, 0);
        let tag = self.b.ins().load(types::I64, flags(), addr, 8);
        let tag_ok = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, tag, crate::interp::tape_tag(ty) as i64);
        let ok = match read {
            Read::Theta(domain) => match domain {
                Domain::Real | Domain::Int | Domain::Bool => tag_ok,
                Domain::NonzeroReal => {
                    let x = self.b.ins().bitcast(types::F64, MemFlagsData::new(), value);
                    let zero = self.b.ins().f64const(Ieee64::with_bits(0));
                    let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, x, zero);
                    self.b.ins().band(tag_ok, nonzero)
                }
                // A narrowed read goes through the host; a `real[lo, hi]` written in the IR is
                // checked here as its interval, with NaN in it.
                Domain::Interval { lo, hi } | Domain::RealWithin { lo, hi } => {
                    let x = self.b.ins().bitcast(types::F64, MemFlagsData::new(), value);
                    let lo = self.b.ins().f64const(Ieee64::with_bits(lo.to_bits()));
                    let hi = self.b.ins().f64const(Ieee64::with_bits(hi.to_bits()));
                    let above = self.b.ins().fcmp(FloatCC::LessThanOrEqual, lo, x);
                    let below = self.b.ins().fcmp(FloatCC::LessThanOrEqual, x, hi);
                    let mut inside = self.b.ins().band(above, below);
                    if matches!(domain, Domain::RealWithin { .. }) {
                        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                        inside = self.b.ins().bor(inside, nan);
                    }
                    self.b.ins().band(tag_ok, inside)
                }
                Domain::IntRange { lo, hi } => {
                    let above = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, value, lo);
                    let below = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::SignedLessThanOrEqual, value, hi);
                    let inside = self.b.ins().band(above, below);
                    self.b.ins().band(tag_ok, inside)
                }
                Domain::Bits { mask } => {
                    let outside = self.b.ins().band_imm_u(value, !mask as i64);
                    let inside = self.b.ins().icmp_imm_u(IntCC::Equal, outside, 0);
                    self.b.ins().band(tag_ok, inside)
                }
            },
            // 0 <= k < n, as one unsigned comparison.
            Read::Choice(n) => {
                let inside = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::UnsignedLessThan, value, i64::from(n));
                self.b.ins().band(tag_ok, inside)
            }
        };
        let ok = match within {
            None => ok,
            Some((lo, hi)) => {
                let (above, below) = match ty {
                    Type::F64 => {
                        let x = self.b.ins().bitcast(types::F64, MemFlagsData::new(), value);
                        (
                            self.b.ins().fcmp(FloatCC::LessThanOrEqual, lo, x),
                            self.b.ins().fcmp(FloatCC::LessThanOrEqual, x, hi),
                        )
                    }
                    _ => (
                        self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, value),
                        self.b.ins().icmp(IntCC::SignedLessThanOrEqual, value, hi),
                    ),
                };
                let inside = self.b.ins().band(above, below);
                self.b.ins().band(ok, inside)
            }
        };
        let take = self.b.create_block();
        self.b.ins().brif(ok, take, &[], slow, &[]);
        self.b.switch_to_block(take);
        let next = self.b.ins().iadd_imm_s(pos, 1);
        self.b.def_var(tape.pos, next);
        self.store_ctx(next, OFF_TAPE_POS);
        self.b.ins().jump(join, &[value.into()]);

        // Slow path: the callback.
        self.b.switch_to_block(slow);
        let s = self.b.ins().iconst(types::I32, i64::from(site));
        let slow_bits = match within {
            None => {
                let shim = self.ub.read_shim(symbol)?;
                let r = self.func_ref(shim);
                self.b.ins().call(r, &[self.ctx, s]);
                self.reload_tape_pos();
                self.load_ctx(types::I64, abi::OFF_SCRATCH)
            }
            // A domain known only now: the host narrows it.
            Some((lo, hi)) => {
                let lo = self.as_slot_bits(ty, lo);
                let hi = self.as_slot_bits(ty, hi);
                let callee = self.ub.callback(abi::SYM_THETA_WITHIN)?;
                let r = self.func_ref(callee);
                let call = self.b.ins().call(r, &[self.ctx, s, lo, hi]);
                let bits = self.b.inst_results(call)[0];
                self.reload_tape_pos();
                bits
            }
        };
        let pending = self.load_ctx(types::I32, OFF_PENDING);
        let stop = self.error_block(ErrorCode::Host, site);
        self.b
            .ins()
            .brif(pending, stop, &[], join, &[slow_bits.into()]);

        self.b.switch_to_block(join);
        Ok(match ty {
            Type::F64 => self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits),
            Type::I64 => bits,
            Type::Bool => self.b.ins().ireduce(types::I8, bits),
        })
    }

    /// A call of a module function: depth check, fuel handed over, status checked.
    fn call(
        &mut self,
        callee: FuncId,
        args: Vec<cl::Value>,
        inst: Inst,
    ) -> Result<Vec<cl::Value>, JitError> {
        let module = self.ub.module;
        let target = module
            .functions
            .get(callee)
            .ok_or_else(|| self.internal(format!("{callee} is not a function of this module")))?;
        if self.ub.inlined.contains(&callee) {
            return self.inline_call(callee, args, inst);
        }
        let cl_callee = self
            .ub
            .functions
            .get(&callee)
            .copied()
            .ok_or_else(|| self.internal(format!("`{}` was not declared", target.name)))?;
        let r = self.func_ref(cl_callee);
        let site = self.site(inst, 0);
        let n = target.sig.returns.len();
        let mut cargs = Vec::with_capacity(args.len() + 2);
        cargs.push(self.ctx);
        cargs.extend(args);
        let area = if n >= 2 {
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                8 * n as u32,
                3,
            ));
            let ptr = self.ub.pointer_type();
            let a = self.b.ins().stack_addr(ptr, slot, 0);
            cargs.push(a);
            Some(a)
        } else {
            None
        };

        let depth = self.load_ctx(types::I64, OFF_DEPTH);
        let limit = self.load_ctx(types::I64, OFF_DEPTH_LIMIT);
        let over = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, depth, limit);
        self.stop_if(over, ErrorCode::Depth, site);
        let deeper = self.b.ins().iadd_imm_s(depth, 1);
        self.store_ctx(deeper, OFF_DEPTH);
        let max = self.load_ctx(types::I64, OFF_MAX_DEPTH);
        let max = self.b.ins().umax(max, deeper);
        self.store_ctx(max, OFF_MAX_DEPTH);
        let f = self.b.use_var(self.fuel);
        self.store_ctx(f, OFF_FUEL);

        let call = self.b.ins().call(r, &cargs);
        let rets = self.b.inst_results(call).to_vec();
        self.store_ctx(depth, OFF_DEPTH);
        let failed = rets[0];
        let up = self.b.create_block();
        self.b.set_cold_block(up);
        self.cold.push((up, Cold::Propagate(site)));
        let cont = self.b.create_block();
        self.b.ins().brif(failed, up, &[], cont, &[]);
        self.b.switch_to_block(cont);
        let f = self.load_ctx(types::I64, OFF_FUEL);
        self.b.def_var(self.fuel, f);
        self.reload_tape_pos();

        match area {
            None => Ok(rets[1..].to_vec()),
            Some(a) => {
                let mut out = Vec::with_capacity(n);
                for (i, &ty) in target.sig.returns.iter().enumerate() {
                    let offset = (8 * i) as i32;
                    let v = match ty {
                        Type::F64 => self.b.ins().load(types::F64, flags(), a, offset),
                        Type::I64 => self.b.ins().load(types::I64, flags(), a, offset),
                        Type::Bool => {
                            let w = self.b.ins().load(types::I64, flags(), a, offset);
                            self.b.ins().ireduce(types::I8, w)
                        }
                    };
                    out.push(v);
                }
                Ok(out)
            }
        }
    }

    /// A call of a callee that is translated in place (see [`UnitBuilder::inlined`]): the
    /// depth check and the deepest-depth update of a call, the callee's fuel check at its entry,
    /// then its blocks, whose `return`s jump to a block that continues the caller. Steps are
    /// charged as the callee would charge them, and its only possible error (the step limit at
    /// its entry) is reported as from the callee, through the call.
    fn inline_call(
        &mut self,
        callee: FuncId,
        args: Vec<cl::Value>,
        inst: Inst,
    ) -> Result<Vec<cl::Value>, JitError> {
        let module = self.ub.module;
        let g = &module.functions[callee];
        let site = self.site(inst, 0);
        let Some(g_entry) = g.entry() else {
            return Err(self.internal(format!("`{}` has no entry block", g.name)));
        };
        let first = first_inst(g, g_entry)
            .ok_or_else(|| self.internal(format!("`{}` has an empty entry block", g.name)))?;

        // What a call does to the depth: no frame deeper than the limit; the deepest so far.
        let depth = self.load_ctx(types::I64, OFF_DEPTH);
        let limit = self.load_ctx(types::I64, OFF_DEPTH_LIMIT);
        let over = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, depth, limit);
        self.stop_if(over, ErrorCode::Depth, site);
        let deeper = self.b.ins().iadd_imm_s(depth, 1);
        let max = self.load_ctx(types::I64, OFF_MAX_DEPTH);
        let max = self.b.ins().umax(max, deeper);
        self.store_ctx(max, OFF_MAX_DEPTH);

        // The callee's entry: its fuel check, as from the callee.
        let saved = (
            self.func,
            self.id,
            std::mem::replace(&mut self.values, vec![None; g.values.len()]),
            std::mem::take(&mut self.blocks),
            std::mem::replace(&mut self.int_fnegs, negated_factors(g)),
            self.inlined,
        );
        self.func = g;
        self.id = callee;
        let entry_site = self.site(first, 0);
        self.refuel_or(entry_site, |t, still| {
            t.stop_inlined_if(still, ErrorCode::Fuel, entry_site, site);
        });

        let cont = self.b.create_block();
        for &ty in &g.sig.returns {
            self.b.append_block_param(cont, cl_type(ty));
        }
        self.inlined = Some((cont, site));
        let (order, _) = reverse_postorder(g);
        for &block in &order {
            let cb = self.b.create_block();
            for &p in &g.blocks[block].params {
                self.b.append_block_param(cb, cl_type(g.value_type(p)));
            }
            self.blocks[block] = Some(cb);
        }
        let entry_args: Vec<cl::BlockArg> = args.iter().map(|&v| v.into()).collect();
        let g_block = self.target(g_entry)?;
        self.b.ins().jump(g_block, &entry_args);
        let result = order.iter().try_for_each(|&block| self.block(block, false));
        let (func, id, values, blocks, int_fnegs, inlined) = saved;
        self.func = func;
        self.id = id;
        self.values = values;
        self.blocks = blocks;
        self.int_fnegs = int_fnegs;
        self.inlined = inlined;
        result?;
        self.b.switch_to_block(cont);
        Ok(self.b.block_params(cont).to_vec())
    }

    /// A primitive operation; `consts[i]` is operand `i` when it is an f64 constant.
    fn prim(
        &mut self,
        op: Opcode,
        args: &[cl::Value],
        consts: &[Option<f64>],
        inst: Inst,
        uncharged: u32,
    ) -> Result<cl::Value, JitError> {
        use Opcode::*;
        let arg = |i: usize| {
            args.get(i)
                .copied()
                .ok_or_else(|| self.internal(format!("`{op}` lacks operand {i}")))
        };
        let a = arg(0)?;
        let b = if op.arity() == 2 { arg(1)? } else { a };
        let fcmp = |t: &mut Self, cc| t.b.ins().fcmp(cc, a, b);
        let icmp = |t: &mut Self, cc| t.b.ins().icmp(cc, a, b);
        let v = match op {
            Fadd => self.b.ins().fadd(a, b),
            Fsub => self.b.ins().fsub(a, b),
            Fmul => self.b.ins().fmul(a, b),
            Fdiv => self.b.ins().fdiv(a, b),
            Fneg => {
                let negated = self.func.insts[inst].results.first();
                if negated.is_some_and(|r| self.int_fnegs.contains(r)) {
                    let bits = self.b.ins().bitcast(types::I64, MemFlagsData::new(), a);
                    let flipped = self.b.ins().bxor_imm_u(bits, i64::MIN);
                    self.b
                        .ins()
                        .bitcast(types::F64, MemFlagsData::new(), flipped)
                } else {
                    self.b.ins().fneg(a)
                }
            }
            Fabs => self.b.ins().fabs(a),
            Sqrt => self.b.ins().sqrt(a),
            Floor => {
                let r = self.b.ins().floor(a);
                if floor_keeps_nan_bits() {
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
                    self.b.ins().select(nan, a, r)
                } else {
                    r
                }
            }
            Fmin | Fmax => {
                // With one operand a constant c that is not NaN and not the zero the operation
                // prefers (-0 for fmax, +0 for fmin), the result is `x > c ? x : c` (fmax) or
                // `x < c ? x : c` (fmin) for the other operand x: a NaN x gives c, as does an x
                // equal to c (the same bits, or the other zero, which c wins over).
                let preferred_zero = if op == Fmax { -0.0f64 } else { 0.0f64 }.to_bits();
                let usable = |c: Option<f64>| {
                    c.filter(|x| !x.is_nan() && x.to_bits() != preferred_zero)
                        .is_some()
                };
                let cmp = if op == Fmax {
                    FloatCC::GreaterThan
                } else {
                    FloatCC::LessThan
                };
                if usable(consts.get(1).copied().flatten()) {
                    let take = self.b.ins().fcmp(cmp, a, b);
                    return Ok(self.b.ins().select(take, a, b));
                }
                if usable(consts.first().copied().flatten()) {
                    let take = self.b.ins().fcmp(cmp, b, a);
                    return Ok(self.b.ins().select(take, b, a));
                }
                let not_nan = |i: usize| {
                    consts
                        .get(i)
                        .copied()
                        .flatten()
                        .is_some_and(|x| !x.is_nan())
                };
                // The IEEE minimum/maximum (with -0 < +0) where neither operand is NaN; a NaN
                // operand yields the other one, as in `semantics`.
                let m = if op == Fmin {
                    self.b.ins().fmin(a, b)
                } else {
                    self.b.ins().fmax(a, b)
                };
                let m = if not_nan(1) {
                    m
                } else {
                    let b_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
                    self.b.ins().select(b_nan, a, m)
                };
                if not_nan(0) {
                    m
                } else {
                    let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
                    self.b.ins().select(a_nan, b, m)
                }
            }
            Frem | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Exp | Log | Pow
            | Atan2 => {
                let sym = semantics::extern_symbol(op)
                    .ok_or_else(|| self.internal(format!("no shared function for `{op}`")))?;
                let callee = self.ub.f64_function(sym.name, sym.func.arity())?;
                let r = self.func_ref(callee);
                let call = self.b.ins().call(r, &args[..sym.func.arity()]);
                self.b.inst_results(call)[0]
            }
            Feq => fcmp(self, FloatCC::Equal),
            Fne => fcmp(self, FloatCC::NotEqual),
            Flt => fcmp(self, FloatCC::LessThan),
            Fle => fcmp(self, FloatCC::LessThanOrEqual),
            Fgt => fcmp(self, FloatCC::GreaterThan),
            Fge => fcmp(self, FloatCC::GreaterThanOrEqual),
            Iadd => self.b.ins().iadd(a, b),
            Isub => self.b.ins().isub(a, b),
            Imul => self.b.ins().imul(a, b),
            Idiv | Irem => {
                let site = self.site(inst, uncharged);
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
                self.stop_if(zero, ErrorCode::DivisionByZero, site);
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN);
                let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
                let overflow = self.b.ins().band(min, minus_one);
                self.stop_if(overflow, ErrorCode::Overflow, site);
                if op == Idiv {
                    self.b.ins().sdiv(a, b)
                } else {
                    self.b.ins().srem(a, b)
                }
            }
            Ineg => self.b.ins().ineg(a),
            Iabs => self.b.ins().iabs(a),
            Imin => self.b.ins().smin(a, b),
            Imax => self.b.ins().smax(a, b),
            Iand | Band => self.b.ins().band(a, b),
            Ior | Bor => self.b.ins().bor(a, b),
            Ixor | Bxor => self.b.ins().bxor(a, b),
            Inot => self.b.ins().bnot(a),
            Ishl => self.b.ins().ishl(a, b),
            Ishr => self.b.ins().sshr(a, b),
            Ieq | Beq => icmp(self, IntCC::Equal),
            Ine | Bne => icmp(self, IntCC::NotEqual),
            Ilt => icmp(self, IntCC::SignedLessThan),
            Ile => icmp(self, IntCC::SignedLessThanOrEqual),
            Igt => icmp(self, IntCC::SignedGreaterThan),
            Ige => icmp(self, IntCC::SignedGreaterThanOrEqual),
            Bnot => self.b.ins().bxor_imm_u(a, 1),
            FcvtToI64 => self.b.ins().fcvt_to_sint_sat(types::I64, a),
            FcvtFromI64 => self.b.ins().fcvt_from_sint(types::F64, a),
            BoolToI64 => self.b.ins().uextend(types::I64, a),
            F64Bits => self.b.ins().bitcast(types::I64, MemFlagsData::new(), a),
            F64FromBits => self.b.ins().bitcast(types::F64, MemFlagsData::new(), a),
        };
        Ok(v)
    }

    /// Stores the fuel, and the error code and site in one store (the two `u32`s are adjacent).
    fn store_error(&mut self, code: ErrorCode, site: u32) {
        let f = self.b.use_var(self.fuel);
        self.store_ctx(f, OFF_FUEL);
        let (low, high) = if cfg!(target_endian = "little") {
            (code as u32, site)
        } else {
            (site, code as u32)
        };
        let both = (u64::from(high) << 32 | u64::from(low)) as i64;
        let both = self.b.ins().iconst(types::I64, both);
        self.store_ctx(both, OFF_ERR_KIND);
    }

    /// Fills the cold blocks, the error exit and the propagate block.
    fn exits(&mut self) {
        for (block, what) in std::mem::take(&mut self.cold) {
            self.b.switch_to_block(block);
            match what {
                Cold::Error(code, site) => {
                    self.store_error(code, site);
                    self.b.ins().jump(self.err_exit, &[]);
                }
                Cold::Propagate(site) => {
                    let s = self.b.ins().iconst(types::I32, i64::from(site));
                    self.b.ins().jump(self.propagate, &[s.into()]);
                }
                Cold::InlinedError(code, site, call_site) => {
                    self.store_error(code, site);
                    let s = self.b.ins().iconst(types::I32, i64::from(call_site));
                    self.b.ins().jump(self.propagate, &[s.into()]);
                }
            }
        }

        self.b.switch_to_block(self.err_exit);
        self.return_status(1);

        self.b.switch_to_block(self.propagate);
        let site = self.b.block_params(self.propagate)[0];
        // Declared in `UnitBuilder::new`, so this cannot fail.
        if let Ok(unwind) = self.ub.callback(abi::SYM_UNWIND) {
            let r = self.func_ref(unwind);
            self.b.ins().call(r, &[self.ctx, site]);
        }
        self.return_status(1);
    }
}

/// Whether the shared `floor` returns a NaN operand unchanged (Rust's software `floor` does,
/// even for a signalling NaN) rather than quieted (as a hardware rounding instruction does). The
/// native `floor` is wrapped to match, so both engines agree however `semantics` was compiled.
fn floor_keeps_nan_bits() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| {
        let signalling = f64::from_bits(0x7ff0_0000_0000_0001);
        semantics::pinv_floor(std::hint::black_box(signalling)).to_bits() == signalling.to_bits()
    })
}

/// `v`'s value, if it is an f64 constant.
fn f64_constant(func: &Function, v: Value) -> Option<f64> {
    match func.values.get(v).map(|d| d.def) {
        Some(crate::ir::ValueDef::Result(i, _)) => match func.insts.get(i).map(|d| &d.kind) {
            Some(InstKind::Const(Const::F64(x))) => Some(*x),
            _ => None,
        },
        _ => None,
    }
}

/// The first instruction of a block.
fn first_inst(func: &Function, block: Block) -> Option<Inst> {
    func.blocks.get(block)?.insts.first().copied()
}

/// The blocks reachable from the entry in reverse postorder, and the loop headers: targets of
/// edges that go back to a block still on the depth-first search stack.
pub(crate) fn reverse_postorder(
    func: &Function,
) -> (Vec<Block>, cranelift_entity::EntitySet<Block>) {
    use cranelift_entity::EntitySet;
    let mut order = Vec::new();
    let mut headers = EntitySet::new();
    let Some(entry) = func.entry() else {
        return (order, headers);
    };
    let n = func.blocks.len();
    let mut visited = EntitySet::with_capacity(n);
    let mut on_stack = EntitySet::with_capacity(n);
    // (block, index of the next successor to visit)
    let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
    visited.insert(entry);
    on_stack.insert(entry);
    while let Some(&mut (block, ref mut next)) = stack.last_mut() {
        if let Some(s) = successor(func, block, *next) {
            *next += 1;
            if on_stack.contains(s) {
                headers.insert(s);
            } else if visited.insert(s) {
                on_stack.insert(s);
                stack.push((s, 0));
            }
        } else {
            stack.pop();
            on_stack.remove(block);
            order.push(block);
        }
    }
    order.reverse();
    (order, headers)
}

/// The `k`-th successor of `block` (as [`Function::successors`] lists them), without
/// allocating.
fn successor(func: &Function, block: Block, k: usize) -> Option<Block> {
    let t = func.terminator(block)?;
    match (&func.insts[t].kind, k) {
        (InstKind::Jump { dest }, 0) => Some(dest.block),
        (InstKind::Brif { then_dest, .. }, 0) => Some(then_dest.block),
        (InstKind::Brif { else_dest, .. }, 1) => Some(else_dest.block),
        _ => None,
    }
}

/// The `fneg` results that are both operands of an `fmul`: Cranelift's mid-end rewrites
/// `fmul(fneg x, fneg y)` to `fmul(x, y)`, which for a NaN x gives x's sign instead of the
/// flipped one. Such an `fneg` is compiled as an integer flip of the sign bit, which the rule
/// does not see (the same bits).
fn negated_factors(func: &Function) -> std::collections::HashSet<Value> {
    let is_fneg = |v: Value| match func.values.get(v).map(|d| d.def) {
        Some(crate::ir::ValueDef::Result(i, _)) => matches!(
            func.insts.get(i).map(|d| &d.kind),
            Some(InstKind::Prim {
                op: Opcode::Fneg,
                ..
            })
        ),
        _ => false,
    };
    let mut out = std::collections::HashSet::new();
    for (_, i) in func.insts_in_layout() {
        if let InstKind::Prim {
            op: Opcode::Fmul,
            args,
        } = &func.insts[i].kind
        {
            if let [a, b] = args.as_slice() {
                if is_fneg(*a) && is_fneg(*b) {
                    out.insert(*a);
                    out.insert(*b);
                }
            }
        }
    }
    out
}

/// The straight-line segments of a block: each ends after a call or at the terminator.
struct Segments {
    /// For each instruction, the index of the last instruction of its segment.
    end: Vec<usize>,
}

impl Segments {
    fn of(func: &Function, insts: &[Inst]) -> Segments {
        let mut end = vec![0; insts.len()];
        let mut start = 0;
        for (i, &inst) in insts.iter().enumerate() {
            let last = i + 1 == insts.len();
            if last || matches!(func.insts[inst].kind, InstKind::Call { .. }) {
                end[start..=i].fill(i);
                start = i + 1;
            }
        }
        Segments { end }
    }

    /// The number of instructions in the segment starting at `i`.
    fn len_from(&self, i: usize) -> u32 {
        self.end.get(i).map_or(0, |&e| (e + 1 - i) as u32)
    }

    /// Instructions after `i` in its segment.
    fn uncharged(&self, i: usize) -> u32 {
        (self.end[i] - i) as u32
    }
}
