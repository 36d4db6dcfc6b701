//! Instructions.
//!
//! Forward code contains constants, primitive operations, calls and the terminators `jump`, `brif`,
//! `return` and `fail`. Inverse code may also contain the three inverse-only instructions:
//! `theta` (read the next θ value from the tape), `choice` (read a path choice in `0..n`) and
//! `check` (fail with a reason unless a condition holds). Generated PGF code writes θ with `record`.

use super::{Block, Const, Domain, FuncId, Opcode, Value};
use crate::span::Span;

/// The values an instruction reads or defines, or a branch passes: up to four inline (no
/// allocation, the size of a `Vec`), more on the heap. Build one with [`smallvec::smallvec!`],
/// `collect`, or `from(&[..])`.
pub type ValueList = smallvec::SmallVec<[Value; 4]>;

/// A branch target with the arguments passed to its block parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockCall {
    pub block: Block,
    pub args: ValueList,
}

impl BlockCall {
    pub fn new(block: Block, args: impl Into<ValueList>) -> BlockCall {
        BlockCall {
            block,
            args: args.into(),
        }
    }
}

/// What a `theta` instruction reads: `theta real "role"`, the next value on the θ tape, drawn
/// from `domain`.
///
/// With `within: Some([lo, hi])` (`theta real within v1, v2 "role"`) the domain is narrowed at
/// run time to the values between `lo` and `hi` (see [`Domain::within`]): a θ drawn where it
/// can succeed, from values the inverse has computed (the other operand of `max(a, b) = y`
/// is at most y). An empty range there is a domain error.
#[derive(Clone, Debug, PartialEq)]
pub struct ThetaRead {
    pub domain: Domain,
    pub role: String,
    pub within: Option<[Value; 2]>,
}

/// What an instruction does.
#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// `v = const 1.5` (the type is the constant's).
    Const(Const),
    /// `v = fadd a, b`: a primitive operation.
    Prim { op: Opcode, args: ValueList },
    /// `v0, v1 = call %f(a, b)`: a call of a module function, with one result per return type.
    Call { callee: FuncId, args: ValueList },
    /// `v = theta real "role"`: the next value on the θ tape, drawn from a domain (see
    /// [`ThetaRead`]; boxed: one instruction in tens, and inline it would make every instruction
    /// half as large again). Inverse code only.
    Theta(Box<ThetaRead>),
    /// `v = choice n "role"`: the next path choice on the θ tape, an i64 in `0..n`. Inverse code only.
    Choice { n: u32, role: String },
    /// `check c, "reason"`: a domain error with `reason` unless `c` is true. Inverse code only.
    Check { cond: Value, reason: String },
    /// `record v, "role"`: append `v` to the θ tape being written. PGF code only: a generated PGF
    /// records, in the inverse's reading order, the θ values that reproduce its inputs.
    Record { value: Value, role: String },
    /// `segment open|cut|close`: orders the θ tape being written. PGF code only; see
    /// [`SegmentOp`].
    Segment(SegmentOp),
    /// `jump block1(a, b)`. Terminator.
    Jump { dest: BlockCall },
    /// `brif c, block1(a), block2(b)`: to `then_dest` if `c` is true. Terminator.
    ///
    /// The destinations are boxed: a `brif` is one instruction in ten or so, and inline they
    /// would make every instruction twice as large.
    Brif {
        cond: Value,
        then_dest: Box<BlockCall>,
        else_dest: Box<BlockCall>,
    },
    /// `return a, b`. Terminator.
    Return { args: ValueList },
    /// `fail "reason"`: stop with a domain error (`fail("...")` in source). Terminator.
    Fail { reason: String },
}

/// How a generated PGF orders what it records, so that a loop's PGF can run forward as a loop.
///
/// The inverse walks a loop backwards, so it reads the θ of the last iteration first; the PGF runs
/// forward and knows the first iteration's θ first. Instead of recursing (one call per iteration,
/// recording on the way out), it records each iteration's θ as one **segment** and has the tape
/// put the segments in reverse order:
///
/// - `segment open` starts a frame at the current end of the tape;
/// - `segment cut` ends the frame's current segment (what was recorded since the last `cut` or
///   the `open`) and starts the next;
/// - `segment close` ends the frame: its segments, the last one included, are put in reverse
///   order (each segment's own values keep theirs), and the frame is gone.
///
/// Frames nest: a callee's PGF that opens and closes its own frame inside a segment of its caller
/// only reorders its own values. Only the reordered tape is observable, so a recorder may keep the
/// values anywhere until the outermost `close`.
///
/// A PGF that needs a callee's outputs before the inverse reads the callee's θ (the PGF of
/// `fib(n - 1) + fib(n - 2)` needs both sums to record how y splits, and the inverse reads the
/// split first) runs the callee's PGF once, where its forward code calls it, and moves what it
/// recorded to where the inverse reads it:
///
/// - `segment hold` starts a capture in the current frame at the current end of the tape;
/// - `segment stash k` ends the last capture: the values recorded since its `hold` leave the tape
///   and become the frame's **stash** `k` (replacing what it held);
/// - `segment place k` puts stash `k` back at the current end of the tape (once: a stash placed
///   twice gives nothing the second time).
///
/// The stashes belong to the frame's current segment: a `cut` or `close` forgets those not
/// placed. So the forward call runs once and the PGF costs what the forward code costs, where
/// running the callee forward and then its PGF costs a factor of the call depth (and of the
/// recursion's size, for a function that calls itself twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentOp {
    Open,
    Cut,
    Close,
    Hold,
    Stash(u32),
    Place(u32),
}

impl SegmentOp {
    /// The name in the text form (`segment open`; `segment place 2` is `place`).
    pub fn name(self) -> &'static str {
        match self {
            SegmentOp::Open => "open",
            SegmentOp::Cut => "cut",
            SegmentOp::Close => "close",
            SegmentOp::Hold => "hold",
            SegmentOp::Stash(_) => "stash",
            SegmentOp::Place(_) => "place",
        }
    }

    /// The op named `name` in the text form, for those without an operand (`stash` and `place`
    /// have a stash number).
    pub fn parse(name: &str) -> Option<SegmentOp> {
        [
            SegmentOp::Open,
            SegmentOp::Cut,
            SegmentOp::Close,
            SegmentOp::Hold,
        ]
        .into_iter()
        .find(|op| op.name() == name)
    }

    /// The stash number of `stash` and `place`.
    pub fn stash(self) -> Option<u32> {
        match self {
            SegmentOp::Stash(k) | SegmentOp::Place(k) => Some(k),
            _ => None,
        }
    }
}

impl InstKind {
    /// Whether this instruction ends a block.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstKind::Jump { .. }
                | InstKind::Brif { .. }
                | InstKind::Return { .. }
                | InstKind::Fail { .. }
        )
    }

    /// Whether this is one of the instructions that only inverse code contains.
    pub fn is_inverse_only(&self) -> bool {
        matches!(
            self,
            InstKind::Theta(_) | InstKind::Choice { .. } | InstKind::Check { .. }
        )
    }

    /// Whether this instruction touches the θ tape or checks a domain: what forward code never
    /// contains (`theta`, `choice`, `check`, `record`, `segment`).
    pub fn is_theta_related(&self) -> bool {
        self.is_inverse_only() || matches!(self, InstKind::Record { .. } | InstKind::Segment(_))
    }

    /// Every value this instruction reads, in order (branch arguments included).
    pub fn args(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_arg(|v| out.push(v));
        out
    }

    /// Calls `f` on every value this instruction reads, in order.
    pub fn for_each_arg(&self, mut f: impl FnMut(Value)) {
        match self {
            InstKind::Theta(read) => {
                if let Some([lo, hi]) = read.within {
                    f(lo);
                    f(hi);
                }
            }
            InstKind::Const(_)
            | InstKind::Choice { .. }
            | InstKind::Segment(_)
            | InstKind::Fail { .. } => {}
            InstKind::Prim { args, .. }
            | InstKind::Call { args, .. }
            | InstKind::Return { args } => args.iter().copied().for_each(f),
            InstKind::Check { cond, .. } => f(*cond),
            InstKind::Record { value, .. } => f(*value),
            InstKind::Jump { dest } => dest.args.iter().copied().for_each(f),
            InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                f(*cond);
                then_dest.args.iter().copied().for_each(&mut f);
                else_dest.args.iter().copied().for_each(f);
            }
        }
    }

    /// Calls `f` on every value this instruction reads, allowing it to be replaced.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        let map_all = |args: &mut ValueList, f: &mut dyn FnMut(Value) -> Value| {
            for a in args.iter_mut() {
                *a = f(*a);
            }
        };
        match self {
            InstKind::Theta(read) => {
                if let Some([lo, hi]) = &mut read.within {
                    *lo = f(*lo);
                    *hi = f(*hi);
                }
            }
            InstKind::Const(_)
            | InstKind::Choice { .. }
            | InstKind::Segment(_)
            | InstKind::Fail { .. } => {}
            InstKind::Prim { args, .. }
            | InstKind::Call { args, .. }
            | InstKind::Return { args } => map_all(args, &mut f),
            InstKind::Check { cond, .. } => *cond = f(*cond),
            InstKind::Record { value, .. } => *value = f(*value),
            InstKind::Jump { dest } => map_all(&mut dest.args, &mut f),
            InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                *cond = f(*cond);
                map_all(&mut then_dest.args, &mut f);
                map_all(&mut else_dest.args, &mut f);
            }
        }
    }

    /// The branch targets of a terminator (none for `return` and `fail`, and for non-terminators).
    pub fn successors(&self) -> Vec<&BlockCall> {
        match self {
            InstKind::Jump { dest } => vec![dest],
            InstKind::Brif {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            _ => Vec::new(),
        }
    }

    /// Branch target `d` of a terminator (0: a `jump`'s, or a `brif`'s first; 1: a `brif`'s
    /// second), without collecting them as [`InstKind::successors`] does.
    pub fn successor(&self, d: usize) -> Option<&BlockCall> {
        match (self, d) {
            (InstKind::Jump { dest }, 0) => Some(dest),
            (InstKind::Brif { then_dest, .. }, 0) => Some(then_dest),
            (InstKind::Brif { else_dest, .. }, 1) => Some(else_dest),
            _ => None,
        }
    }

    /// [`InstKind::successor`], mutably.
    pub fn successor_mut(&mut self, d: usize) -> Option<&mut BlockCall> {
        match (self, d) {
            (InstKind::Jump { dest }, 0) => Some(dest),
            (InstKind::Brif { then_dest, .. }, 0) => Some(then_dest),
            (InstKind::Brif { else_dest, .. }, 1) => Some(else_dest),
            _ => None,
        }
    }

    /// The branch targets of a terminator, mutably.
    pub fn successors_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            InstKind::Jump { dest } => vec![dest],
            InstKind::Brif {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            _ => Vec::new(),
        }
    }
}

/// An instruction: what it does, the values it defines, and where in the source it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct InstData {
    pub kind: InstKind,
    pub results: ValueList,
    pub span: Span,
}

// An instruction's size is most of a function's memory (a 10,000-statement inverse has a million
// instructions): keep large, rare payloads boxed, as rustc's `static_assert_size!` keeps its
// IR's sizes. 40 + 24 (results) + 8 (span) bytes on 64-bit targets.
#[cfg(target_pointer_width = "64")]
const _: () =
    assert!(std::mem::size_of::<InstKind>() == 40 && std::mem::size_of::<InstData>() == 72);
