//! The contract between the host and compiled code: the context block, the error codes, how
//! values cross the boundary, and the `extern "C"` functions compiled code calls back into.
//!
//! # Calling convention
//!
//! - Every compiled IR function `f(a, b) -> (r…)` becomes a native function
//!   `f(ctx, a, b[, ret]) -> (status: i8[, r])` in the platform's C convention: `ctx` points to a
//!   [`Ctx`]; with one result it is returned after the status; with several, the caller passes
//!   `ret`, a pointer to one 8-byte slot per result (see [`encode`]). A nonzero status means the run
//!   stopped; the results are then meaningless.
//! - The host enters through [`EntryFn`]`(ctx, args, out) -> status` (the root itself when no
//!   function of the unit calls it, otherwise a trampoline that calls it), whose `args` and `out`
//!   are arrays of [`Const`] in its fixed layout ([`CONST_SIZE`] bytes each: the tag byte at
//!   offset 0, the payload at [`CONST_PAYLOAD`]). The entry checks every argument's tag first and
//!   returns [`STATUS_BAD_ARGUMENTS`] before doing anything else if one is not the parameter's
//!   type; on success it writes every result, tag and payload.
//! - f64 is passed as `f64`, i64 as `i64`, bool as an `i8` holding 0 or 1. In slots (θ tapes,
//!   several results of an internal call, callbacks), bool is widened to 0 or 1 and f64 is
//!   stored by its bits.
//!
//! # Errors
//!
//! Compiled code never traps. When it stops it writes [`Ctx::err_kind`] (an [`ErrorCode`]) and
//! [`Ctx::err_site`] (an index into the unit's [`Site`] table) and returns status 1 all the way up;
//! each caller on the way records its call site with [`pinv_jit_unwind`], innermost first. The
//! host turns that into the same [`RuntimeError`](crate::interp::RuntimeError) the interpreter
//! reports.
//!
//! # Invariants
//!
//! - The layout of the first fields of [`Ctx`] is what compiled code assumes (see the `OFF_*`
//!   offsets, checked by a test).
//! - Callbacks never unwind into compiled code: a panic in a θ source is caught, stored in the
//!   [`Host`], reported as a pending failure, and resumed by the host after compiled code returned.

use super::runtime::Host;
use crate::interp::{RuntimeErrorKind, TapeRecorder};
use crate::ir::{Const, FuncId, Inst, SegmentOp, Type};
use std::mem::offset_of;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The block of state shared by compiled code and the host for one call.
#[repr(C)]
pub(crate) struct Ctx {
    /// Steps left: decremented by each block's instruction count (the same count the interpreter
    /// uses); where it is negative at a function entry or a loop header, compiled code asks
    /// [`pinv_jit_refuel`] for more and stops with [`ErrorCode::Fuel`] if it gets none. Compiled
    /// code keeps it in a register and stores it back at calls, returns and errors.
    pub fuel: i64,
    /// Frames on the call stack (the called function is 1).
    pub depth: u64,
    /// A call made at `depth >= depth_limit` fails with [`ErrorCode::Depth`].
    pub depth_limit: u64,
    /// The largest `depth` seen.
    pub max_depth: u64,
    /// Recursive functions stop with [`ErrorCode::Stack`] when the stack pointer is below this.
    pub stack_floor: u64,
    /// Why compiled code stopped (an [`ErrorCode`]), when the status is nonzero.
    pub err_kind: u32,
    /// Where: an index into the unit's site table. Right after `err_kind` (compiled code
    /// writes both with one 8-byte store).
    pub err_site: u32,
    /// Set by a callback that failed; compiled code checks it after each callback.
    pub pending: u32,
    pub _pad: u32,
    /// The [`Host`] of this call (type-erased: its lifetime is the call's).
    pub host: *mut (),
    /// The θ tape compiled code reads directly, when the call's θ source is a plain
    /// [`TapeSource`](crate::interp::TapeSource): two words per value (bits, then type tag, see
    /// [`tape_tag`](crate::interp::tape_tag)), then an end marker
    /// ([`TAPE_END`](crate::interp::TAPE_END)); otherwise [`NO_TAPE`], an end marker alone.
    pub tape: *const u64,
    /// The next value to read: at most the number of values, so the entry there is a value or
    /// the end marker. Compiled code reads a value inline when it has the right type and is in
    /// the read's domain, and otherwise calls back ([`pinv_jit_theta`], [`pinv_jit_choice`],
    /// through the read shims), which gives the source's own answer or error. Compiled code
    /// stores it at every read.
    pub tape_pos: u64,
    /// Where a θ read's slow path finds the value its callback read: the read shims
    /// (`compile::read_shims`), which clobber no register, leave it here.
    pub scratch: u64,
    /// The call's θ source when it is a plain [`TapeRecorder`]: [`pinv_jit_record`] and
    /// [`pinv_jit_segment`] write it without going through the [`Host`] (a recursion's PGF makes
    /// about ten such calls per level). Null otherwise.
    pub recorder: *mut TapeRecorder,
}

/// The tape of a call whose θ source compiled code does not read directly: an end marker.
pub(crate) static NO_TAPE: [u64; 2] = [0, crate::interp::TAPE_END];

pub(crate) const OFF_FUEL: i32 = offset_of!(Ctx, fuel) as i32;
pub(crate) const OFF_DEPTH: i32 = offset_of!(Ctx, depth) as i32;
pub(crate) const OFF_DEPTH_LIMIT: i32 = offset_of!(Ctx, depth_limit) as i32;
pub(crate) const OFF_MAX_DEPTH: i32 = offset_of!(Ctx, max_depth) as i32;
pub(crate) const OFF_STACK_FLOOR: i32 = offset_of!(Ctx, stack_floor) as i32;
pub(crate) const OFF_ERR_KIND: i32 = offset_of!(Ctx, err_kind) as i32;
/// Compiled code writes `err_kind` and `err_site` with one 8-byte store at [`OFF_ERR_KIND`].
#[cfg(test)]
pub(crate) const OFF_ERR_SITE: i32 = offset_of!(Ctx, err_site) as i32;
pub(crate) const OFF_PENDING: i32 = offset_of!(Ctx, pending) as i32;
pub(crate) const OFF_TAPE: i32 = offset_of!(Ctx, tape) as i32;
pub(crate) const OFF_TAPE_POS: i32 = offset_of!(Ctx, tape_pos) as i32;
pub(crate) const OFF_SCRATCH: i32 = offset_of!(Ctx, scratch) as i32;

/// The host's entry into a compiled unit: `(ctx, args, out) -> status`, with `args` and `out`
/// arrays of [`Const`] (one per parameter and result).
pub(crate) type EntryFn = unsafe extern "C" fn(*mut Ctx, *const Const, *mut Const) -> u32;

/// The entry's status when the run finished: every result is written.
pub(crate) const STATUS_OK: u32 = 0;
/// The entry's status when an argument's type is not its parameter's: nothing ran.
pub(crate) const STATUS_BAD_ARGUMENTS: u32 = 2;

/// Bytes per [`Const`] in argument and result arrays.
pub(crate) const CONST_SIZE: i32 = std::mem::size_of::<Const>() as i32;
/// Where a [`Const`]'s payload is (its tag is the byte at offset 0).
pub(crate) const CONST_PAYLOAD: i32 = 8;

/// The tag byte of a [`Const`] of type `ty` (`Const` is `repr(C, u8)`: tags in declaration
/// order).
pub(crate) fn const_tag(ty: Type) -> u8 {
    match ty {
        Type::F64 => 0,
        Type::I64 => 1,
        Type::Bool => 2,
    }
}

/// Why compiled code stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum ErrorCode {
    DivisionByZero = 1,
    Overflow = 2,
    CheckFailed = 3,
    Fail = 4,
    /// Out of fuel: the step limit (the host decides from the exact count).
    Fuel = 5,
    /// A call at the depth limit.
    Depth = 6,
    /// A callback failed; the [`Host`] holds the error.
    Host = 7,
    /// Native stack exhausted in a recursive function.
    Stack = 8,
}

impl ErrorCode {
    pub fn from_u32(code: u32) -> Option<ErrorCode> {
        use ErrorCode::*;
        Some(match code {
            1 => DivisionByZero,
            2 => Overflow,
            3 => CheckFailed,
            4 => Fail,
            5 => Fuel,
            6 => Depth,
            7 => Host,
            8 => Stack,
            _ => return None,
        })
    }
}

/// An instruction compiled code may stop at, or call back from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub func: FuncId,
    /// The instruction (for a step check at a block's start: the block's first instruction).
    pub inst: Inst,
    /// Instructions after this one in its straight-line segment, already charged to the fuel:
    /// the host adds them back to get the interpreter's exact step count at this instruction.
    pub uncharged: u32,
}

/// A value as an 8-byte slot: f64 by its bits, i64 as is, bool as 0 or 1.
pub(crate) fn encode(c: Const) -> u64 {
    c.bits()
}

/// The value of type `ty` in a slot (for bool, any nonzero low byte is `true`).
pub(crate) fn decode(ty: Type, bits: u64) -> Const {
    match ty {
        Type::F64 => Const::F64(f64::from_bits(bits)),
        Type::I64 => Const::I64(bits as i64),
        Type::Bool => Const::Bool(bits & 0xff != 0),
    }
}

// ---------------------------------------------------------------------------------------------
// Callbacks. Names are registered with the JIT under these exact strings.

pub(crate) const SYM_THETA: &str = "pinv_jit_theta";
pub(crate) const SYM_CHOICE: &str = "pinv_jit_choice";
pub(crate) const SYM_RECORD: &str = "pinv_jit_record";
pub(crate) const SYM_SEGMENT: &str = "pinv_jit_segment";
pub(crate) const SYM_THETA_WITHIN: &str = "pinv_jit_theta_within";
pub(crate) const SYM_UNWIND: &str = "pinv_jit_unwind";
pub(crate) const SYM_REFUEL: &str = "pinv_jit_refuel";

/// The callbacks and their addresses, for registration.
pub(crate) fn callbacks() -> [(&'static str, *const u8); 7] {
    [
        (SYM_REFUEL, pinv_jit_refuel as *const u8),
        (SYM_THETA_WITHIN, pinv_jit_theta_within as *const u8),
        (SYM_THETA, pinv_jit_theta as *const u8),
        (SYM_CHOICE, pinv_jit_choice as *const u8),
        (SYM_RECORD, pinv_jit_record as *const u8),
        (SYM_SEGMENT, pinv_jit_segment as *const u8),
        (SYM_UNWIND, pinv_jit_unwind as *const u8),
    ]
}

/// Runs `f` on the call's host; a failure or panic is stored and flagged in `ctx.pending`.
///
/// # Safety
/// `ctx` is the pointer compiled code was given by [`super::runtime`], whose `host` points to the
/// live [`Host`] of the same call; nothing else accesses either while compiled code runs.
///
/// A θ source that compiled code reads directly (a tape) is brought up to date with
/// [`Ctx::tape_pos`] before `f` runs, and the context with the source afterwards.
unsafe fn with_host<T: Default>(
    ctx: *mut Ctx,
    f: impl FnOnce(&mut Host<'_, '_>) -> Result<T, crate::interp::RuntimeErrorKind>,
) -> T {
    // SAFETY: see the function's contract.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `host` was erased from a `&mut Host` that outlives the call.
    let host = unsafe { &mut *(ctx.host as *mut Host<'_, '_>) };
    host.tape_to_source(ctx.tape_pos);
    let result = catch_unwind(AssertUnwindSafe(|| f(host)));
    if let Some(pos) = host.tape_from_source() {
        ctx.tape_pos = pos;
    }
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(kind)) => {
            host.fail(kind);
            ctx.pending = 1;
            T::default()
        }
        Err(payload) => {
            host.panicked(payload);
            ctx.pending = 1;
            T::default()
        }
    }
}

/// The fuel ran out ([`Ctx::fuel`], which compiled code stored, is negative): the fuel to go on
/// with, or the same fuel (still negative) to stop. A run with a deadline gets its fuel in
/// slices ([`super::runtime::FUEL_SLICE`] steps), and a new slice is granted only before the
/// deadline, so that compiled code, which never reads the clock, stops within a slice of it.
/// Called through a read shim (`compile::read_shims`), so the values compiled code keeps in
/// registers across a loop header are not spilled for it. Touches no θ source, so it needs none
/// of [`with_host`]'s bookkeeping.
pub(crate) extern "C" fn pinv_jit_refuel(ctx: *mut Ctx, _site: u32) -> i64 {
    // SAFETY: only compiled code calls this, with its own context, whose `host` points to the
    // live `Host` of the same call, which nothing else touches while compiled code runs.
    unsafe {
        let fuel = (*ctx).fuel;
        let host = &mut *((*ctx).host as *mut Host<'_, '_>);
        host.refuel(fuel)
    }
}

/// `theta`: the next θ value, checked against the read's domain, as slot bits. Compiled code
/// calls this when it cannot read the value from [`Ctx::tape`] itself.
pub(crate) extern "C" fn pinv_jit_theta(ctx: *mut Ctx, site: u32) -> u64 {
    // SAFETY: only compiled code calls this, with its own context.
    unsafe { with_host(ctx, |h| h.theta(site)) }
}

/// `choice n`: the next path choice, checked to be in `0..n` (as for `theta`, when compiled
/// code cannot read it from the tape).
pub(crate) extern "C" fn pinv_jit_choice(ctx: *mut Ctx, site: u32) -> u64 {
    // SAFETY: only compiled code calls this, with its own context.
    unsafe { with_host(ctx, |h| h.choice(site)) }
}

/// `theta … within lo, hi`: the next θ value from the domain narrowed to the bounds (slot
/// bits), as slot bits; a failure is flagged as pending (the value is then 0).
pub(crate) extern "C" fn pinv_jit_theta_within(ctx: *mut Ctx, site: u32, lo: u64, hi: u64) -> u64 {
    // SAFETY: only compiled code calls this, with its own context.
    unsafe { with_host(ctx, |h| h.theta_within(site, lo, hi)) }
}

/// A segment op as compiled code passes it: the op in the low 3 bits, a stash number above.
/// `None` for a stash number too large to pass (the op is then looked up from the site).
pub(crate) fn segment_code(op: SegmentOp) -> Option<u32> {
    let (kind, k) = match op {
        SegmentOp::Open => (0, 0),
        SegmentOp::Cut => (1, 0),
        SegmentOp::Close => (2, 0),
        SegmentOp::Hold => (3, 0),
        SegmentOp::Stash(k) => (4, k),
        SegmentOp::Place(k) => (5, k),
    };
    (k < 1 << 28).then_some(kind | k << 3)
}

/// The op [`segment_code`] gave `code`; `None` for a code it never gives.
pub(crate) fn segment_op(code: u32) -> Option<SegmentOp> {
    let k = code >> 3;
    Some(match code & 7 {
        0 => SegmentOp::Open,
        1 => SegmentOp::Cut,
        2 => SegmentOp::Close,
        3 => SegmentOp::Hold,
        4 => SegmentOp::Stash(k),
        5 => SegmentOp::Place(k),
        _ => return None,
    })
}

/// The type whose [`tape_tag`](crate::interp::tape_tag) is `tag`.
pub(crate) fn tag_type(tag: u32) -> Option<Type> {
    [Type::F64, Type::I64, Type::Bool]
        .into_iter()
        .find(|&ty| crate::interp::tape_tag(ty) == u64::from(tag))
}

/// `segment op`: orders the θ being recorded; returns 1 on failure (also flagged as pending).
/// `op` is the instruction's op ([`segment_code`]), so that a recorder needs no lookup.
pub(crate) extern "C" fn pinv_jit_segment(ctx: *mut Ctx, site: u32, op: u32) -> u32 {
    // SAFETY: only compiled code calls this, with its own context, whose recorder (if any) is
    // the call's source, borrowed for the call and used by nothing else meanwhile.
    unsafe {
        let recorder = (*ctx).recorder;
        if let (false, Some(op)) = (recorder.is_null(), segment_op(op)) {
            return match (*recorder).segment_op(op) {
                Ok(()) => 0,
                Err(e) => with_host(ctx, |_| Err::<u32, _>(RuntimeErrorKind::Theta(e))).max(1),
            };
        }
        with_host(ctx, |h| h.segment(site, op).map(|()| 0)).max((*ctx).pending)
    }
}

/// `record v`: hands a value to the θ source; returns 1 on failure (also flagged as pending).
/// `tag` is v's type's [`tape_tag`](crate::interp::tape_tag).
pub(crate) extern "C" fn pinv_jit_record(ctx: *mut Ctx, site: u32, bits: u64, tag: u32) -> u32 {
    // SAFETY: as for `pinv_jit_segment`.
    unsafe {
        let recorder = (*ctx).recorder;
        if let (false, Some(ty)) = (recorder.is_null(), tag_type(tag)) {
            (*recorder).push(decode(ty, bits));
            return 0;
        }
        with_host(ctx, |h| h.record(site, bits).map(|()| 0)).max(
            // `with_host` returns the default 0 on failure; the flag tells the caller.
            (*ctx).pending,
        )
    }
}

/// An error passes through the call at `site` on its way up: remember it for the backtrace.
pub(crate) extern "C" fn pinv_jit_unwind(ctx: *mut Ctx, site: u32) {
    // SAFETY: only compiled code calls this, with its own context.
    unsafe {
        with_host(ctx, |h| {
            h.unwound(site);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip() {
        for c in [
            Const::F64(-0.0),
            Const::F64(f64::from_bits(0x7ff0_0000_0000_0001)),
            Const::I64(i64::MIN),
            Const::Bool(true),
            Const::Bool(false),
        ] {
            assert_eq!(decode(c.ty(), encode(c)), c);
        }
    }

    #[test]
    fn consts_are_laid_out_as_compiled_code_expects() {
        assert_eq!(CONST_SIZE, 16);
        for c in [
            Const::F64(-1.5),
            Const::I64(-7),
            Const::Bool(true),
            Const::Bool(false),
        ] {
            let p = std::ptr::addr_of!(c).cast::<u8>();
            // SAFETY: reads within the 16 bytes of `c`, of its tag and of its payload (a byte
            // for bool: the rest is padding), whose offsets `repr(C, u8)` fixes.
            let tag = unsafe { p.read() };
            assert_eq!(tag, const_tag(c.ty()));
            let payload = unsafe { p.add(CONST_PAYLOAD as usize) };
            match c {
                Const::Bool(b) => assert_eq!(unsafe { payload.read() }, u8::from(b)),
                _ => assert_eq!(unsafe { payload.cast::<u64>().read_unaligned() }, encode(c)),
            }
        }
    }

    #[test]
    fn context_fields_are_where_compiled_code_expects_them() {
        assert_eq!(OFF_FUEL, 0);
        assert_eq!(OFF_DEPTH, 8);
        assert_eq!(OFF_DEPTH_LIMIT, 16);
        assert_eq!(OFF_MAX_DEPTH, 24);
        assert_eq!(OFF_STACK_FLOOR, 32);
        assert_eq!(OFF_ERR_KIND, 40);
        assert_eq!(OFF_ERR_SITE, 44);
        assert_eq!(OFF_PENDING, 48);
        assert_eq!(OFF_TAPE, 64);
        assert_eq!(OFF_TAPE_POS, 72);
        assert_eq!(OFF_SCRATCH, 80);
    }
}
