//! One region of the inverse: the instructions of one forward block, inverted backwards from the
//! values known at its end, with the matching PGF code written beside it.
//!
//! An instruction is inverted when one of its results is known, by the rule the overlay stack
//! finds for its callee and the known/unknown pattern of its operands (constants and values
//! already solved are known). The walk runs in reverse program order, so every use of a value in
//! the block is inverted before its definition.
//!
//! - **Forward propagation**: an instruction whose operands are all known is computed forward in
//!   the inverse instead of being inverted (`exp(v)` once `v` is known needs no θ).
//! - **Fan-out**: a value solved by one use is known to every other use, whose rule then checks
//!   consistency (the all-known pattern); a value appearing twice among one instruction's unknown
//!   operands is solved once and checked against itself. Sound, but most θ fail those checks.
//!   A comparison of an unknown with itself (`p <= p`) reads p once and checks it forward.
//! - **Calls** go through the stack too (declared `inverse`/`pgf` and user layers); a module
//!   function without a rule is inverted by recursing into its body, and its generated inverse
//!   and PGF are called, reading and writing the same θ tape.

use super::ranges::Ranges;
use super::{ReorientOptions, Reorienter};
use crate::error::Error;
use pinv_core::ir::outline::{self, Outlined};
use pinv_core::ir::{
    Block, Domain, FuncId, FuncKind, Function, Inst, InstKind, Module, OpClass, Opcode, SegmentOp,
    Type, Value, ValueDef,
};
use pinv_core::Span;
use pinv_primitives::{Arg, Callee, Emitter, Mode, Pattern};
use rustc_hash::FxHashSet;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Whether the inverse goes on from `v` through a step that reads its magnitude, not just its
/// value within the tolerance: `v` is the result of `pow`, `exp`, a division, a conversion from
/// an integer or its bits, `floor`, or `atan2` (an angle, at most π: beside a large addend the
/// sum cancels to it, `p2⁸ + atan2(p1, p2)`, and the angle within the tolerance of the sum is
/// no angle at all); or of a step that keeps relative precision (a product,
/// `sqrt`, `abs`, a negation: solving its operand turns the relative precision of `v` into the
/// operand's) of something for which this holds or that is the function's input (an isolation
/// helper among them, `iso.sq v`, counts as its operands). A step solving `v` then names the
/// exact float where its solutions are wide ([`pinv_primitives::EmitOptions::wide_runs`]): in
/// `−0.1 + pow(0.1, n as f64)` the sum gives `b` only to 1.4e-17, which for n = 13 is 1e-4 of
/// it, and for n = 72 all of it; in `x · 1e-20 + 1` it gives the product only to 1.1e-16, all
/// of it for |x| < 1e4. Not `2 · sqrt(x − 1) + 3`, whose root is squared back into a
/// difference, which needs it only within the tolerance (there, naming one of the floats that
/// give 3 would reject the θ that name a product no x gives). Not a call's result itself:
/// isolation's helpers are calls, and every step solving one would carry the test.
fn solved_by_magnitude(f: &Function, v: Value) -> bool {
    read_by_magnitude(f, v, false, MAGNITUDE_DEPTH)
}

/// How many steps that keep relative precision [`solved_by_magnitude`] looks through.
const MAGNITUDE_DEPTH: u32 = 8;

/// [`solved_by_magnitude`], where an input of the function and a call count too (`through`: `v`
/// is an operand of a step that keeps relative precision), through at most `depth` more steps.
fn read_by_magnitude(f: &Function, v: Value, through: bool, depth: u32) -> bool {
    let def = match f.values[v].def {
        ValueDef::Result(def, _) => def,
        ValueDef::Param(b, _) => return through && f.entry() == Some(b),
    };
    let any_operand = |args: &[Value]| {
        depth > 0
            && args
                .iter()
                .any(|&a| f.constant(a).is_none() && read_by_magnitude(f, a, true, depth - 1))
    };
    match &f.insts[def].kind {
        InstKind::Prim { op, args } => match op {
            Opcode::Pow
            | Opcode::Exp
            | Opcode::Fdiv
            | Opcode::FcvtFromI64
            | Opcode::F64FromBits
            | Opcode::Floor
            | Opcode::Atan2 => true,
            Opcode::Fmul | Opcode::Sqrt | Opcode::Fabs | Opcode::Fneg => any_operand(args),
            _ => false,
        },
        InstKind::Call { args, .. } if through => any_operand(args),
        _ => false,
    }
}

/// Whether the inverse solves a sum from `v`, directly or through steps that keep relative
/// precision (a product, a quotient, `sqrt`, `abs`, a negation) or that flatten (`atan` near
/// ±π/2, `tanh` near ±1, whose one float of output is thousands of floats of input: solving
/// through them spreads a difference of an ulp over all of those), and an addend of that sum is
/// [`solved_by_magnitude`]. Solving an addend from its sum subtracts the other, and where they
/// nearly cancel (`1 − v²/c²` for v ≪ c) one float of the sum decides millions of the addend,
/// of which such a step names one: only within the run of the sum the inverse holds, which
/// must therefore be the forward one to the bit. So the step solving `v` names the exact float
/// where several give its output (`1 / y` has two), and so does every step before it. (Not
/// every sum: an addend that is not solved by magnitude takes the closed form within the
/// tolerance, and exact steps all along a chain of sums double its code and its θ.)
fn solved_into_sum(f: &Function, ranges: &Ranges, v: Value, known: &dyn Fn(Value) -> bool) -> bool {
    let unknown = |a: Value| f.constant(a).is_none() && !known(a);
    let look = |op: Opcode, args: &[Value]| match op {
        Opcode::Fadd | Opcode::Fsub => Look::found_if(
            args.iter()
                .any(|&a| unknown(a) && solved_by_magnitude(f, a)),
        ),
        Opcode::Fmul
        | Opcode::Fdiv
        | Opcode::Sqrt
        | Opcode::Fabs
        | Opcode::Fneg
        | Opcode::Atan
        | Opcode::Tanh => Look::Through,
        _ => Look::Stop,
    };
    Back::search(f, ranges, &unknown, &look, false, v, MAGNITUDE_DEPTH)
}

/// Whether the inverse's value `v` is the forward float to the bit wherever the PGF's is: a θ
/// read (which the PGF records from the forward value), a constant, a parameter of the
/// inverse (y), a value in `known` (what an exact step solved from such values:
/// [`Region::forward_floats`]), or a block parameter every edge into its block passes such a
/// value. What a rule computes otherwise may be an ulp off where it kept a closed form. Follows at most
/// [`FORWARD_FLOAT_BUDGET`] values, in an inverse of at most [`FORWARD_FLOAT_BLOCKS`] blocks
/// (a block parameter's search scans the blocks for the edges into its block).
fn forward_float(inv: &Function, known: Option<&FxHashSet<Value>>, v: Value) -> bool {
    if inv.layout.len() > FORWARD_FLOAT_BLOCKS {
        return false;
    }
    let solved = |v: Value| known.is_some_and(|k| k.contains(&v));
    let mut todo = vec![v];
    let mut seen = FxHashSet::default();
    while let Some(v) = todo.pop() {
        if !seen.insert(v) || seen.len() > FORWARD_FLOAT_BUDGET {
            return seen.len() <= FORWARD_FLOAT_BUDGET;
        }
        match inv.values[v].def {
            _ if solved(v) => {}
            ValueDef::Param(b, _) if inv.entry() == Some(b) => {}
            ValueDef::Param(b, k) => {
                let mut edges = 0;
                for &p in &inv.layout {
                    let Some(t) = inv.terminator(p) else { continue };
                    for dest in inv.insts[t].kind.successors() {
                        if dest.block == b {
                            edges += 1;
                            todo.extend(dest.args.get(k as usize).copied());
                        }
                    }
                }
                if edges == 0 {
                    return false;
                }
            }
            ValueDef::Result(i, _) => {
                if !matches!(inv.insts[i].kind, InstKind::Theta(_) | InstKind::Const(_)) {
                    return false;
                }
            }
        }
    }
    true
}

/// How many values [`forward_float`] looks through.
const FORWARD_FLOAT_BUDGET: usize = 16;

/// The most blocks an inverse may have for [`forward_float`] to look through its block
/// parameters.
const FORWARD_FLOAT_BLOCKS: usize = 1024;

/// What a backward search ([`Back`]) does at the instruction defining a value.
enum Look {
    /// It found what it looks for.
    Found,
    /// It goes on through the unknown f64 operands.
    Through,
    /// It stops there.
    Stop,
}

impl Look {
    fn found_if(found: bool) -> Look {
        if found {
            Look::Found
        } else {
            Look::Stop
        }
    }
}

/// A search from a value back through what it is computed from, for the exact-step criteria
/// ([`solved_into_sum`], [`solved_into_discrete`]): `look` says what to do at each primitive;
/// a block parameter leads to what the edges into its block pass it ([`Ranges::sources`]), and
/// where one passes an f64 constant, the search finds what it looks for if `constants` says so;
/// only unknown f64 values are followed, each once (a value seen again led nowhere, or the
/// search would have stopped), so a search is linear in what it visits however the values are
/// shared.
struct Back<'a> {
    f: &'a Function,
    ranges: &'a Ranges,
    unknown: &'a dyn Fn(Value) -> bool,
    look: &'a dyn Fn(Opcode, &[Value]) -> Look,
    constants: bool,
    seen: FxHashSet<Value>,
}

impl<'a> Back<'a> {
    /// Whether `look` finds what it looks for from `v`, through at most `depth` steps.
    fn search(
        f: &'a Function,
        ranges: &'a Ranges,
        unknown: &'a dyn Fn(Value) -> bool,
        look: &'a dyn Fn(Opcode, &[Value]) -> Look,
        constants: bool,
        v: Value,
        depth: u32,
    ) -> bool {
        let mut back = Back {
            f,
            ranges,
            unknown,
            look,
            constants,
            seen: FxHashSet::default(),
        };
        back.reaches(v, depth)
    }

    /// Whether the search finds what it looks for from `v`, through at most `depth` steps.
    fn reaches(&mut self, v: Value, depth: u32) -> bool {
        let f = self.f;
        match f.values[v].def {
            ValueDef::Param(..) => {
                let sources = self.ranges.sources(v);
                let constant = |&s: &Value| f.value_type(s) == Type::F64 && f.constant(s).is_some();
                (self.constants && sources.iter().any(constant)) || self.through(sources, depth)
            }
            ValueDef::Result(def, _) => match &f.insts[def].kind {
                InstKind::Prim { op, args } => match (self.look)(*op, args) {
                    Look::Found => true,
                    Look::Through => self.through(args, depth),
                    Look::Stop => false,
                },
                _ => false,
            },
        }
    }

    fn through(&mut self, args: &[Value], depth: u32) -> bool {
        depth > 0
            && args.iter().any(|&a| {
                self.f.value_type(a) == Type::F64
                    && (self.unknown)(a)
                    && self.seen.insert(a)
                    && self.reaches(a, depth - 1)
            })
    }
}

/// Whether the inverse solves, from `v`, a value that only some floats can be: a conversion
/// from an integer or from bits, `floor`, or a join where one branch passes a constant
/// (directly, or through f64 operations on it: a sum, a product, a logarithm, an iterated
/// map). In `tanh(if c { p2 } else { 0.0 } − p2)` the near-flat end keeps the difference only
/// within the tolerance, and the else side needs the sum back at 0.0 to the bit (gen_check
/// seed 44352). The step solving it must then name the exact float
/// where several give its output: `a · ((100 << n) as f64)` gives the same y for the product's
/// two floats 25·2⁵² and 25·2⁵² + 16, of which only the first is a shift of 100, and within the
/// tolerance the step would keep the closed form, the second, whatever x was. Through as many
/// steps as an unrolled loop has: `v = c · log(v)` twelve times from `1.5 · (p as f64)` undoes
/// its contraction by 3.5 a step, and a closed form an ulp off at the end is millions of ulps
/// off at the conversion (`gen_check` seed 4343).
fn solved_into_discrete(
    f: &Function,
    ranges: &Ranges,
    v: Value,
    known: &dyn Fn(Value) -> bool,
) -> bool {
    let unknown = |a: Value| f.constant(a).is_none() && !known(a);
    let look = |op: Opcode, args: &[Value]| match op {
        Opcode::FcvtFromI64 | Opcode::F64FromBits | Opcode::Floor => {
            Look::found_if(args.iter().any(|&a| unknown(a)))
        }
        _ if op.result_type() == Type::F64 => Look::Through,
        _ => Look::Stop,
    };
    Back::search(f, ranges, &unknown, &look, true, v, DISCRETE_DEPTH)
}

/// How many f64 steps [`solved_into_discrete`] looks through.
const DISCRETE_DEPTH: u32 = 64;

/// The value `v` is taken to have where it is an operation of a value with itself whose
/// operand has no other use (`p − p` in `q + (p − p)`: [`Reorienter::operand`]). Where the
/// operand is used elsewhere, it is solved there and the operation is left to the rules.
fn alone_with_itself(
    f: &Function,
    ranges: &super::ranges::Ranges,
    v: Value,
) -> Option<pinv_core::ir::Const> {
    let ValueDef::Result(def, _) = f.values[v].def else {
        return None;
    };
    match &f.insts[def].kind {
        InstKind::Prim { args, .. } if args.len() == 2 && ranges.only_with_itself(args[0]) => {
            f.value_with_itself(v)
        }
        _ => None,
    }
}

/// A comparison that decides an operation of a value with itself
/// ([`Reorienter::deciding_comparison`]).
#[derive(Clone, Copy)]
struct Deciding {
    op: Opcode,
    /// The operation's side of the comparison (0, 1, or [`BOTH_SIDES`]: compared with itself).
    slot: usize,
    /// The other operand, where it is known, and the comparison's result, in the inverse.
    inverse: (Option<Value>, Value),
    /// The same as the PGF holds them.
    pgf: (Option<Value>, Value),
}

/// [`Deciding::slot`] of a comparison of a value with itself.
const BOTH_SIDES: usize = 2;

/// Which of its two values an operation of a value with itself (0 or NaN for `p − p`) can
/// have, as a comparison with a constant (or itself) whose result the region fixes says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NanSide {
    /// The value it has for a finite operand (`p − p <= 0.0` on its then-side).
    Value,
    /// NaN (its else-side).
    Nan,
    /// Either (`p − p != 1.0`).
    Either,
}

/// A comparison of `v` ([`Ranges::comparisons_of`]): its opcode, `v`'s side (0, 1, or
/// [`BOTH_SIDES`]: compared with itself), the other operand and the result.
fn comparison_of(f: &Function, v: Value, inst: Inst) -> Option<(Opcode, usize, Value, Value)> {
    let data = &f.insts[inst];
    let InstKind::Prim { op, ref args } = data.kind else {
        return None;
    };
    let (&[a, b], Type::Bool) = (args.as_slice(), op.result_type()) else {
        return None;
    };
    let (other, slot) = match (a == v, b == v) {
        (true, false) => (b, 0),
        (false, true) => (a, 1),
        (true, true) => (v, BOTH_SIDES),
        (false, false) => return None,
    };
    Some((op, slot, other, data.results[0]))
}

/// The operands of a comparison with `x` on `slot`'s side ([`comparison_of`]) and `other`.
fn sides<T: Copy>(slot: usize, x: T, other: T) -> [T; 2] {
    match slot {
        0 => [x, other],
        1 => [other, x],
        _ => [x, x],
    }
}

/// [`NanSide`] of `v` in `region`, where a comparison of `v` in its block with a constant or
/// itself has a result the region fixes (a branch's condition); `None` elsewhere.
fn static_side(f: &Function, region: &Region<'_>, v: Value) -> Option<NanSide> {
    use pinv_core::ir::Const;
    use pinv_core::semantics::eval;
    let c = f.value_with_itself(v)?;
    region.ranges.comparisons_of(v).iter().find_map(|&inst| {
        let (op, slot, other, result) = comparison_of(f, v, inst)?;
        let z = *region.fixed.get(&result)?;
        let other = match slot {
            BOTH_SIDES => c,
            _ => f.constant(other)?,
        };
        let gives = |x: Const| eval(op, &sides(slot, x, other)).ok().map(|r| r == z);
        match (gives(c)?, gives(Const::F64(f64::NAN))?) {
            (true, false) => Some(NanSide::Value),
            (false, true) => Some(NanSide::Nan),
            _ => Some(NanSide::Either),
        }
    })
}

/// Whether `v`, an operation of a value with itself whose NaN decides something, is made known
/// by θ's choice, or by a comparison, as its value or NaN ([`Reorienter::value_or_nan`]), and
/// its operand solved from that (`log(p) − log(p) <= 0`: p from a finite logarithm, never
/// negative); otherwise it is taken as its one value, as where its NaN decides nothing and
/// its operand is free. Where a branch needs the NaN (`static_side`), always; elsewhere only
/// where solving its operand from it cannot disagree with another solution of its inputs
/// ([`Ranges::solitary_operand`]).
fn takes_nan(f: &Function, region: &Region<'_>, v: Value) -> bool {
    let ranges = &region.ranges;
    if !ranges.nan_decides(v) || alone_with_itself(f, ranges, v).is_none() {
        return false;
    }
    match static_side(f, region, v) {
        Some(NanSide::Nan | NanSide::Either) => true,
        Some(NanSide::Value) | None => ranges.solitary_operand(v),
    }
}

/// The value [`Reorienter::operand`] takes `v` to have before anything solves it: a constant,
/// or an operation of a value with itself whose operand has no other use ([`alone_with_itself`]:
/// its one value, or, where its NaN decides something, that value or NaN by
/// [`Reorienter::value_or_nan`]).
fn own_value(f: &Function, ranges: &Ranges, v: Value) -> Option<pinv_core::ir::Const> {
    match f.values[v].def {
        ValueDef::Result(def, _) => match f.insts[def].kind {
            InstKind::Const(c) => Some(c),
            _ => alone_with_itself(f, ranges, v),
        },
        ValueDef::Param(..) => None,
    }
}

/// Whether a call of `callee` cannot trap, so that the PGF may replay it on the values the
/// inverse holds ([`Reorienter::replay_forward`]): a small function of arithmetic that cannot
/// trap (an isolation helper such as `iso.sq`), with no call, check or θ.
fn trap_free(module: &Module, callee: FuncId) -> bool {
    const MAX_INSTS: usize = 64;
    let Some(g) = module.functions.get(callee) else {
        return false;
    };
    let mut insts = g.insts_in_layout();
    insts
        .by_ref()
        .take(MAX_INSTS)
        .all(|(_, i)| match &g.insts[i].kind {
            InstKind::Prim { op, .. } => !op.can_trap(),
            InstKind::Const(_) | InstKind::Jump { .. } | InstKind::Brif { .. } => true,
            InstKind::Return { .. } => true,
            _ => false,
        })
        && insts.next().is_none()
}

/// Why a value whose two uses each solved it is rejected, when the solutions differ.
const USED_TWICE: &str = "a value used twice gets two different solutions";

/// The inverse and PGF code being written for one forward block, and where each continues.
pub(super) struct Region<'p> {
    pub inv: &'p mut Function,
    pub inv_block: Block,
    pub pgf: &'p mut Function,
    pub pgf_block: Block,
    /// Forward value → its solved value in the inverse.
    pub known: BTreeMap<Value, Value>,
    /// Forward value → its value in the PGF (which recomputed the block forward).
    pub fwd: BTreeMap<Value, Value>,
    /// Forward value → the value the inverse holds for it, computed in the PGF, where a rule
    /// noted that it may differ from `fwd` ([`pinv_primitives::Emitter::note_replay`]: a closed
    /// form that pins a step's answer within the tolerance but not to the bit). The rule that
    /// solves the value's definition can ask for it ([`pinv_primitives::Emitter::replayed`]),
    /// so that it records the θ that gives the forward operands back from the inverse's own
    /// value.
    pub replay: BTreeMap<Value, Value>,
    /// Forward constants, emitted once each in the inverse.
    pub consts: BTreeMap<Value, Value>,
    /// Set when some rule has no PGF: then the function has none either.
    pub no_pgf: Option<String>,
    /// Forward instructions whose results the inverse computed forward instead of inverting.
    pub computed: BTreeSet<Inst>,
    /// Forward values known to be a constant in this region (the branch condition).
    pub fixed: BTreeMap<Value, pinv_core::ir::Const>,
    /// Loop counters among the block's parameters: (start, step ±1).
    pub counters: BTreeMap<Value, (i64, i64)>,
    /// The ranges of the function's f64 values.
    pub ranges: std::rc::Rc<super::ranges::Ranges>,
    /// The ranges of the operands of the instruction being inverted, for its rule.
    operand_ranges: Vec<Option<(f64, f64)>>,
    /// Bounds the inverse computed at run time for forward values (a loop's exit).
    pub bounds: BTreeMap<Value, (Value, Value)>,
    /// The bounds of the operands of the instruction being inverted, for its rule.
    operand_bounds: Vec<Option<(Value, Value)>>,
    /// The step checks the rules wrote into `inv` ([`pinv_primitives::Emitter::check_step`]).
    pub step_checks: Vec<Inst>,
    /// The PGF records nothing here: the inverse never walks this block back (it is in a loop
    /// whose trip count it scans for).
    pub mute_pgf: bool,
    /// The rules settle f64 steps exactly here ([`pinv_primitives::EmitOptions::exact_floats`]),
    /// whatever the options say.
    pub exact_floats: bool,
    /// The step being emitted names the exact float where its solutions are wide for their
    /// magnitude ([`pinv_primitives::EmitOptions::wide_runs`]).
    wide_runs: bool,
    /// The rules call a shared helper for each settle step's test
    /// ([`pinv_primitives::EmitOptions::outline_settles`]): the function is large.
    pub outline_settles: bool,
    /// The step being emitted names the exact float wherever several give its output
    /// ([`pinv_primitives::EmitOptions::exact_floats`]): its solution goes on into a sum
    /// ([`solved_into_sum`]).
    exact_step: bool,
    /// This region starts from y and is the only one that does: the region of the function's
    /// one `return`. The PGF then computes its steps from what the inverse holds (y, and the
    /// replays of the steps before: [`Region::replay`]), as in straight-line code, so its f64
    /// steps may name exact floats ([`Region::exact_step`]). Elsewhere the values a region
    /// starts from come from the regions after it in forward order, which the PGF, running
    /// forward, has not replayed: it computes the steps from forward values, an ulp off where
    /// a step after them kept a closed form, and an exact step could find a run of another
    /// length and read θ where the PGF recorded none (`gen_check` seeds 1078, 1601). And where
    /// the inverse chooses among regions (several `return`s), their guards copy only θ-free
    /// code, so a run read from θ hides the checks after it that tell them apart (a loop
    /// unrolled into seven returns: 97% → 17% accepted).
    pub anchored: bool,
    /// Where steps solved into a cancelling sum ([`solved_into_sum`]) may name exact floats
    /// ([`Region::exact_step`]) though the region is not [`Region::anchored`]: the values of the
    /// inverse, beyond [`forward_float`]'s, that are the forward floats to the bit (those an
    /// exact step solved from forward floats), one set shared by the regions of one function.
    /// Present where the function has one `return` (no guard has to tell regions apart by
    /// θ-free code) and the isolation did not rewrite it (a rewritten form rounds otherwise
    /// than the function). A step does where what it starts from (its outputs and known
    /// operands) is the forward float in the inverse too ([`forward_float`]: a θ read, y, what
    /// an exact step solved from such values), so that the PGF, which computes the step from
    /// forward values, finds the inverse's run. Without it, a cancelling sum in a branch
    /// (`atan(p − exp(p − q))` near ±π/2, where one float of the angle is 27,000 floats of
    /// its operand) loses its input by the tolerance times what the cancellation multiplies
    /// (`gen_check` seed 3873). Not from a value a rule computed (`v + p` solved from the
    /// larger coordinate of an `atan2`, `r · sin z`, an ulp from the forward one: the runs
    /// differ, and the inverse reads θ where the PGF recorded none), nor the exact steps for
    /// a conversion to an integer or a periodic function (`p1 as f64 == p0`, `gen_check`
    /// seed 17875).
    pub forward_floats: Option<std::rc::Rc<std::cell::RefCell<FxHashSet<Value>>>>,
    /// The PGF block holding the forward copy of this block's instructions (where `fwd` points),
    /// whose calls of functions with generated PGFs can become calls of those PGFs
    /// ([`Reorienter::record_call`]).
    pub copy_block: Option<Block>,
    /// The rules write step checks here ([`Emitter::without_step_checks`]): the inverse has
    /// dispatch guards that copy them, or the options keep them.
    pub step_checks_wanted: bool,
    /// Pieces the rules moved into helpers ([`Emitter::outlined`]):
    /// [`Reorienter::install_outlined`] adds the helpers to the module.
    pub outlined: Outlines,
}

/// The pieces a region's rules outlined, with one helper per distinct piece: the run search of
/// every `fmul` step of a loop body is the same function, and keeping one copy per step (three
/// hundred instructions each) made the memory of a long body grow with its steps.
#[derive(Default)]
pub struct Outlines {
    /// Each piece's call: in the PGF (`true`) or the inverse, and the index of its helper.
    calls: Vec<(bool, Inst, usize)>,
    /// The distinct helpers ([`Function::same_code`]), with their [`Function::code_hash`].
    helpers: Vec<(u64, Function)>,
    by_hash: HashMap<u64, Vec<usize>>,
}

impl Outlines {
    fn add(&mut self, in_pgf: bool, piece: Outlined) {
        let hash = piece.helper.code_hash();
        let same = self.by_hash.entry(hash).or_default();
        let found = same
            .iter()
            .copied()
            .find(|&i| self.helpers[i].1.same_code(&piece.helper));
        let index = found.unwrap_or_else(|| {
            self.helpers.push((hash, piece.helper));
            same.push(self.helpers.len() - 1);
            self.helpers.len() - 1
        });
        self.calls.push((in_pgf, piece.call, index));
    }
}

impl<'p> Region<'p> {
    pub fn new(
        inv: &'p mut Function,
        inv_block: Block,
        pgf: &'p mut Function,
        pgf_block: Block,
        fwd: BTreeMap<Value, Value>,
    ) -> Region<'p> {
        Region {
            inv,
            inv_block,
            pgf,
            pgf_block,
            known: BTreeMap::new(),
            fwd,
            replay: BTreeMap::new(),
            consts: BTreeMap::new(),
            no_pgf: None,
            computed: BTreeSet::new(),
            fixed: BTreeMap::new(),
            counters: BTreeMap::new(),
            ranges: Default::default(),
            operand_ranges: Vec::new(),
            bounds: BTreeMap::new(),
            operand_bounds: Vec::new(),
            step_checks: Vec::new(),
            mute_pgf: false,
            exact_floats: false,
            wide_runs: false,
            outline_settles: false,
            exact_step: false,
            anchored: false,
            forward_floats: None,
            copy_block: None,
            step_checks_wanted: true,
            outlined: Outlines::default(),
        }
    }
}

impl Reorienter<'_> {
    /// Adds the helpers of the pieces `region`'s rules outlined to the module, one per distinct
    /// piece (equal pieces, by [`Function::same_code`], share a helper: the run search of every
    /// `fmul` step of a loop is one function), and points their calls at them.
    pub(super) fn install_outlined(&mut self, region: &mut Region<'_>) -> Result<(), Error> {
        let Outlines { calls, helpers, .. } = std::mem::take(&mut region.outlined);
        let mut ids = Vec::with_capacity(helpers.len());
        for (hash, mut helper) in helpers {
            let out = &self.out;
            let same = self.outlined.entry(hash).or_default();
            let installed = same
                .iter()
                .copied()
                .find(|&id| out.functions[id].same_code(&helper));
            let id = match installed {
                Some(id) => id,
                None => {
                    helper.name = crate::solve::helpers::fresh(&self.out, "piece");
                    let name = helper.name.clone();
                    let id = self
                        .out
                        .add(helper)
                        .map_err(|_| Error::Internal(format!("`{name}` is generated twice")))?;
                    same.push(id);
                    id
                }
            };
            ids.push(id);
        }
        for (in_pgf, call, index) in calls {
            let func = if in_pgf {
                &mut *region.pgf
            } else {
                &mut *region.inv
            };
            outline::set_callee(func, call, ids[index]);
        }
        Ok(())
    }

    /// Inverts the instructions of `block` (not its terminator) backwards, from what `region`
    /// knows; leaves every value it could solve in `region.known`.
    pub(super) fn invert_block(
        &mut self,
        f: &Function,
        block: Block,
        region: &mut Region<'_>,
    ) -> Result<(), Error> {
        let insts = &f.blocks[block].insts;
        let body = match insts.split_last() {
            Some((&last, body)) if f.insts[last].kind.is_terminator() => body,
            _ => insts.as_slice(),
        };
        let in_body: BTreeSet<Inst> = body.iter().copied().collect();
        let mut steps = Emit {
            r: self,
            f,
            region,
            in_body,
        };
        crate::walk::walk(&mut steps, body)
    }

    /// Before an f64 instruction with several unknown operands is inverted: where some of them
    /// are computed (in this block) from unknown integers or bools alone (`(n as f64) * 0.5 +
    /// x`), reads θ for those integers (from their own domain) and says whether it did, so that
    /// they and what they compute are known before the rule reads θ for the rest.
    ///
    /// The rule would otherwise read a real for one operand, and the other must then come out
    /// as an exact integer: `n = (y − x) / 0.5` for a drawn x almost never is one. Drawing n
    /// gives x for every n. Where every unknown operand is so computed, the last keeps its
    /// rule's θ (its integers are solved from the others').
    fn discrete_first(
        &mut self,
        f: &Function,
        in_body: &BTreeSet<Inst>,
        inst: Inst,
        unknown: &[Value],
        region: &mut Region<'_>,
    ) -> Result<bool, Error> {
        let data = &f.insts[inst];
        let InstKind::Prim { op, args } = &data.kind else {
            return Ok(false);
        };
        // The one factor of a product whose other factor is a zero (`(n as f64) · (q − q)`,
        // a constant 0, a product with a zero factor: the range analysis knows each as [0, 0]):
        // free, and θ for its integers gives it as exactly as for two unknowns.
        let zero = |b: Value| region.ranges.get(b) == Some((0.0, 0.0));
        let free = *op == Opcode::Fmul
            && unknown.len() == 1
            && args.iter().any(|&b| b != unknown[0] && zero(b));
        if (unknown.len() < 2 && !free)
            || op.result_type() != Type::F64
            || data.results.iter().all(|r| !region.known.contains_key(r))
        {
            return Ok(false);
        }
        let slices: Vec<Option<Vec<Value>>> = unknown
            .iter()
            .map(|&a| discrete_leaves(f, in_body, a, region))
            .collect();
        let leaves = crate::walk::discrete_choice(slices, free);
        if leaves.is_empty() {
            return Ok(false);
        }
        let role = format!(
            "`{}`: an integer an operand is computed from, chosen first",
            op.spelling()
        );
        for leaf in leaves {
            let ty = f.value_type(leaf);
            let fv = pair_fwd(&region.fwd, leaf)?;
            let v = region
                .emit(self.options, data.span, "", None, |ie, pe| {
                    let v = ie.theta(Domain::all(ty), &role)?;
                    pe.record(fv, &role)?;
                    Ok(v)
                })
                .map_err(|e| rule_error(f, e))?;
            self.solve(
                f,
                region,
                leaf,
                v,
                data.span,
                "an integer chosen first disagrees",
            )?;
        }
        Ok(true)
    }

    /// Records that forward value `v` is `solved` in the inverse; if it was already solved (fan-out),
    /// checks that both agree instead.
    pub(super) fn solve(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        v: Value,
        solved: Value,
        span: Span,
        reason: &str,
    ) -> Result<(), Error> {
        if pair.consts.get(&v) == Some(&solved) {
            // A constant operand, handed back as given: nothing was solved.
            return Ok(());
        }
        match pair.known.get(&v) {
            None => {
                pair.known.insert(v, solved);
                Ok(())
            }
            Some(&earlier) if earlier == solved => Ok(()),
            Some(&earlier) => pair
                .emit(self.options, span, "", None, |ie, _| {
                    ie.check_equal(solved, earlier, reason)
                })
                .map_err(|e| rule_error(f, e)),
        }
    }

    /// The operand as the rule sees it: a constant or a solved value is known, and so is an
    /// operation of a value with itself whose operand has no other use ([`alone_with_itself`]):
    /// `q + (p − p)` gives `q = y` and p free, where reading θ for `p − p` and solving `q` from
    /// it would leave `p − p` to be 0 by chance, and the e-graph's way out, `p + (q − p)`,
    /// cancels where `p ≫ q`. (A NaN there gives a NaN y, which no finite x has.)
    pub(super) fn operand(
        &self,
        f: &Function,
        pair: &mut Region<'_>,
        v: Value,
    ) -> Result<Arg, Error> {
        if let Some(&k) = pair.known.get(&v) {
            return Ok(Arg::Known(k));
        }
        let (Some(c), ValueDef::Result(def, _)) = (own_value(f, &pair.ranges, v), f.values[v].def)
        else {
            return Ok(Arg::Unknown);
        };
        if takes_nan(f, pair, v) {
            return self.value_or_nan(f, pair, v, c).map(Arg::Known);
        }
        let k = *pair
            .consts
            .entry(v)
            .or_insert_with(|| pair.inv.ins_const(pair.inv_block, c, f.insts[def].span));
        Ok(Arg::Known(k))
    }

    /// `v`, an operation of a value with itself ([`alone_with_itself`]) whose NaN decides
    /// something (`if p − p <= 0.0`: [`Ranges::nan_decides`]), made known: `c`, the value it
    /// has for a finite operand, or NaN. Where a comparison of `v` has a known result (the
    /// branch it decides), `v` is whichever of the two can give that result, and θ chooses
    /// only where both can (with an unknown other operand, `c` always can, and NaN gives
    /// false but for `!=`); elsewhere θ chooses. The operation's operand is then solved from
    /// it ([`Reorienter::op_with_itself`]). Taking `v` as `c` would lose every input whose
    /// NaN takes the other side.
    fn value_or_nan(
        &self,
        f: &Function,
        pair: &mut Region<'_>,
        v: Value,
        c: pinv_core::ir::Const,
    ) -> Result<Value, Error> {
        let pinv_core::ir::Const::F64(c) = c else {
            return Err(Error::Internal(format!("{v} with itself is not an f64")));
        };
        let ValueDef::Result(def, _) = f.values[v].def else {
            return Err(Error::Internal(format!("{v} with itself is a parameter")));
        };
        let span = f.insts[def].span;
        let deciding = self.deciding_comparison(f, pair, v)?;
        let fv = pair_fwd(&pair.fwd, v)?;
        let role = format!("an operation of a value with itself: {c:?} (0) or NaN (1)");
        let reason = format!("neither {c:?} nor NaN there gives this side of the comparison");
        // Whether `v = c` and `v = NaN` can give the comparison's known result `z` (with the
        // other operand `o`, or any other where it is not known yet).
        let outcomes = |e: &mut Emitter<'_>, d: &Deciding, (o, z): (Option<Value>, Value)| {
            // A comparison with NaN does not depend on the other operand (nor does one of `v`
            // with itself), and some other operand gives any result with `c`.
            let any = o.unwrap_or_else(|| e.f64(0.0));
            let gives = |e: &mut Emitter<'_>, x: f64| {
                let x = e.f64(x);
                let r = e.prim(d.op, &sides(d.slot, x, any));
                e.prim(Opcode::Beq, &[r, z])
            };
            let by_value = match o.is_some() || d.slot == BOTH_SIDES {
                true => gives(e, c),
                false => e.bool(true),
            };
            (by_value, gives(e, f64::NAN))
        };
        let value = pair
            .emit(self.options, span, "", None, |ie, pe| {
                use pinv_primitives::rules::ops::Ops;
                let choose = |e: &mut Emitter<'_>| {
                    let k = e.choice(2, &role)?;
                    let one = e.ic(1);
                    let is_nan = e.ieq(k, one);
                    let (nan, value) = (e.fc(f64::NAN), e.fc(c));
                    e.select(is_nan, nan, value)
                };
                let forward_nan = pe.is_nan(fv);
                let index = pe.b_to_i(forward_nan);
                let Some(d) = deciding else {
                    pe.record(index, &role)?;
                    return choose(ie);
                };
                let (by_value, by_nan) = outcomes(ie, &d, d.inverse);
                let both = ie.band(by_value, by_nan);
                let value = ie.if_value(both, Type::F64, choose, |e| {
                    let either = e.bor(by_value, by_nan);
                    e.check(either, &reason)?;
                    let (nan, value) = (e.fc(f64::NAN), e.fc(c));
                    e.select(by_value, value, nan)
                })?;
                let (by_value, by_nan) = outcomes(pe, &d, d.pgf);
                let both = pe.band(by_value, by_nan);
                pe.branch(both, |e| e.record(index, &role), |_| Ok(()))?;
                Ok(value)
            })
            .map_err(|e| rule_error(f, e))?;
        pair.known.insert(v, value);
        Ok(value)
    }

    /// A comparison of `v`, in `v`'s block, whose result is known ([`Reorienter::value_or_nan`]).
    fn deciding_comparison(
        &self,
        f: &Function,
        pair: &mut Region<'_>,
        v: Value,
    ) -> Result<Option<Deciding>, Error> {
        let ranges = pair.ranges.clone();
        for &inst in ranges.comparisons_of(v) {
            let Some((op, slot, other, result)) = comparison_of(f, v, inst) else {
                continue;
            };
            let Some(&z) = pair.known.get(&result) else {
                continue;
            };
            let z_pgf = pair.held(result)?;
            // The other operand where it is known (a constant or solved), in the inverse and as
            // the PGF holds it.
            let ready = slot != BOTH_SIDES
                && (f.constant(other).is_some() || pair.known.contains_key(&other));
            let (o, o_pgf) = match ready {
                true => match self.operand(f, pair, other)? {
                    Arg::Known(o) => (Some(o), Some(pair.held(other)?)),
                    Arg::Unknown => (None, None),
                },
                false => (None, None),
            };
            return Ok(Some(Deciding {
                op,
                slot,
                inverse: (o, z),
                pgf: (o_pgf, z_pgf),
            }));
        }
        Ok(None)
    }

    /// Computes `inst` forward, in the inverse, if its operands are all known and its results
    /// are not: `exp(v)` once `v` is known needs no inverting (and no θ). Results that were
    /// already known are checked against the computed ones. Returns whether it computed it.
    fn propagate_one(
        &mut self,
        f: &Function,
        inst: Inst,
        pair: &mut Region<'_>,
    ) -> Result<bool, Error> {
        {
            let data = &f.insts[inst];
            if pair.computed.contains(&inst)
                || data.results.iter().all(|r| pair.known.contains_key(r))
                || !matches!(data.kind, InstKind::Prim { .. } | InstKind::Call { .. })
            {
                return Ok(false);
            }
            // Known, or made known by θ's choice ([`Reorienter::value_or_nan`]), which is read
            // only where it lets the whole instruction be computed.
            let args = data.kind.args();
            let ready = |pair: &Region<'_>, a: Value| {
                pair.known.contains_key(&a) || own_value(f, &pair.ranges, a).is_some()
            };
            if !args.iter().all(|&a| ready(pair, a)) {
                return Ok(false);
            }
            let operands: Vec<Arg> = args
                .into_iter()
                .map(|a| self.operand(f, pair, a))
                .collect::<Result<_, _>>()?;
            let Some(known) = operands
                .iter()
                .map(Arg::known)
                .collect::<Option<Vec<Value>>>()
            else {
                return Ok(false);
            };
            let span = data.span;
            let mut kind = data.kind.clone();
            let mut it = known.iter();
            kind.map_args(|v| *it.next().unwrap_or(&v));
            if let InstKind::Prim {
                op: op @ (Opcode::Idiv | Opcode::Irem),
                args,
            } = &kind
            {
                // Only a y outside the image can make these trap here: a domain error, not a crash.
                let (a, b) = (args[0], args[1]);
                let op = *op;
                pair.emit(self.options, span, "", None, |ie, _| {
                    let zero = ie.i64(0);
                    let nonzero = ie.prim(Opcode::Ine, &[b, zero]);
                    let min = ie.i64(i64::MIN);
                    let minus_one = ie.i64(-1);
                    let a_min = ie.prim(Opcode::Ieq, &[a, min]);
                    let b_m1 = ie.prim(Opcode::Ieq, &[b, minus_one]);
                    let overflow = ie.prim(Opcode::Band, &[a_min, b_m1]);
                    let no_overflow = ie.prim(Opcode::Bnot, &[overflow]);
                    let ok = ie.prim(Opcode::Band, &[nonzero, no_overflow]);
                    ie.check(
                        ok,
                        &format!("y is not in the image: {op} by zero or overflow"),
                    )
                })
                .map_err(|e| rule_error(f, e))?;
            }
            let types: Vec<_> = data.results.iter().map(|&r| f.value_type(r)).collect();
            self.replay_forward(f, inst, pair, &types)?;
            let new = pair.inv.append_inst(pair.inv_block, kind, &types, span);
            let values = pair.inv.insts[new].results.clone();
            for (&r, v) in data.results.iter().zip(values) {
                self.solve(
                    f,
                    pair,
                    r,
                    v,
                    span,
                    "a known output disagrees with the value computed from known inputs",
                )?;
            }
            pair.computed.insert(inst);
        }
        Ok(true)
    }

    /// PGF side of computing `inst` forward: where the inverse holds another value than the
    /// forward one for an operand ([`Region::replay`]), the PGF computes the instruction from
    /// what the inverse holds too, and that is the replay of its results, so that the steps
    /// solving from them decide as the inverse does (`1 / p` from a `p` an ulp off, where a
    /// step after it names its exact float among those around the inverse's value). Only for
    /// primitives that cannot trap (not integer division) and not in a muted region.
    fn replay_forward(
        &mut self,
        f: &Function,
        inst: Inst,
        pair: &mut Region<'_>,
        types: &[Type],
    ) -> Result<(), Error> {
        let data = &f.insts[inst];
        let (args, traps) = match &data.kind {
            InstKind::Prim { op, args } => (args, op.can_trap()),
            InstKind::Call { callee, args } => (args, !trap_free(&self.out, *callee)),
            _ => return Ok(()),
        };
        if pair.mute_pgf || traps || !args.iter().any(|a| pair.replay.contains_key(a)) {
            return Ok(());
        }
        let held: Vec<Value> = args
            .iter()
            .map(|&a| pair.held(a))
            .collect::<Result<_, _>>()?;
        let mut kind = data.kind.clone();
        let mut it = held.into_iter();
        kind.map_args(|v| it.next().unwrap_or(v));
        let new = pair.pgf.append_inst(pair.pgf_block, kind, types, data.span);
        let values = pair.pgf.insts[new].results.clone();
        for (&r, v) in data.results.iter().zip(values) {
            pair.replay.entry(r).or_insert(v);
        }
        Ok(())
    }

    fn invert_inst(
        &mut self,
        f: &Function,
        inst: Inst,
        pair: &mut Region<'_>,
    ) -> Result<(), Error> {
        let data = &f.insts[inst];
        let span = data.span;
        self.deadline.check(&f.name, span)?;
        if data.results.iter().all(|r| !pair.known.contains_key(r)) {
            // No output depends on this instruction.
            return Ok(());
        }
        match &data.kind {
            InstKind::Const(c) => {
                let r = data.results[0];
                let y = pair.known[&r];
                pair.emit(self.options, span, "", None, |ie, _| {
                    let k = ie.konst(*c);
                    ie.check_equal(y, k, &format!("this output is always {c}"))
                })
                .map_err(|e| rule_error(f, e))
            }
            InstKind::Prim { op, args } => {
                if self.op_with_itself(f, pair, *op, args, data.results[0], span)? {
                    return Ok(());
                }
                self.solve_loop_exit(f, pair, *op, args, data.results[0], span)?;
                let callee = Callee::Prim(*op);
                self.apply_rule(f, pair, &callee, op.name(), &data.results, args, span)
            }
            InstKind::Call { callee, args } => {
                self.invert_call(f, pair, *callee, &data.results, args, span)
            }
            _ => Err(Self::unsupported(
                f,
                "it contains an instruction that forward code never has",
                span,
            )),
        }
    }

    /// An operation of an unknown with itself, `op(p, p) = z`: p is read once from θ and the
    /// operation checked forward, and says whether it did. Its rule would read each operand
    /// (or each side of a comparison) from θ and then find the two solutions of p different
    /// for almost every θ.
    /// - A comparison (`p <= p`, left by `p <= min(p, p)` once `min(p, p)` is p): p from
    ///   every value of its type.
    /// - An operation with one value apart from NaN (`p − p`, `p / p`, `p ^ p`:
    ///   [`Opcode::with_itself`]): where z is that value, p from θ (nonzero for `p / p`);
    ///   where z is NaN, θ chooses which operand gives it (±inf or NaN for `p − p`, ±0 among
    ///   them for `p / p`), which a branch on `p − p` may need.
    fn op_with_itself(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        op: Opcode,
        args: &[Value],
        result: Value,
        span: Span,
    ) -> Result<bool, Error> {
        let &[a, b] = args else {
            return Ok(false);
        };
        let compare = op.result_type() == Type::Bool;
        if a != b || !(compare || op.with_itself().is_some()) {
            return Ok(false);
        }
        if !matches!(self.operand(f, pair, a)?, Arg::Unknown) {
            return Ok(false);
        }
        let Some(&z) = pair.known.get(&result) else {
            return Ok(false);
        };
        let ty = f.value_type(a);
        let fv = pair_fwd(&pair.fwd, a)?;
        let (domain, specials): (Domain, &[f64]) = match op {
            _ if compare => (Domain::all(ty), &[]),
            Opcode::Fdiv => (
                Domain::NonzeroReal,
                &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN],
            ),
            Opcode::Fsub => (Domain::Real, &[f64::INFINITY, f64::NEG_INFINITY, f64::NAN]),
            _ => (Domain::all(ty), &[]),
        };
        let how = if compare { "compared" } else { "taken" };
        let value_role = format!("{}: the operand, {how} with itself", op.name());
        let mismatch = format!("the operand {how} with itself does not give z");
        let nan_role = format!(
            "{}: which operand, taken with itself, gives NaN ({})",
            op.name(),
            specials
                .iter()
                .enumerate()
                .map(|(k, x)| format!("{k}: {x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let v = pair
            .emit(self.options, span, "", None, |ie, pe| {
                use pinv_primitives::rules::ops::Ops;
                let v = if specials.is_empty() {
                    let v = ie.theta(domain, &value_role)?;
                    pe.record(fv, &value_role)?;
                    v
                } else {
                    let n = specials.len() as u32;
                    let nan = ie.is_nan(z);
                    let v = ie.if_value(
                        nan,
                        Type::F64,
                        |e| {
                            let k = e.choice(n, &nan_role)?;
                            let picked = e.switch(k, n, &[Type::F64], |e, arm| {
                                Ok(vec![e.fc(specials[arm as usize])])
                            })?;
                            Ok(picked[0])
                        },
                        |e| e.theta(domain, &value_role),
                    )?;
                    // The PGF tells the cases apart by the operand itself: z is NaN exactly
                    // where it is one of the specials.
                    let fz = pe.op2(op, fv, fv);
                    let fnan = pe.is_nan(fz);
                    pe.branch(
                        fnan,
                        |e| {
                            // The index of the special the operand is (the last, NaN, if none
                            // of the others: ±0 told apart by the sign bit).
                            let mut index = e.ic(n as i64 - 1);
                            for (k, &x) in specials.iter().enumerate().rev().skip(1) {
                                let c = e.fc(x);
                                let equal = e.feq(fv, c);
                                let same = if x == 0.0 {
                                    let neg = e.sign_bit(fv);
                                    let want = e.bc(x.is_sign_negative());
                                    let sign = e.op2(Opcode::Beq, neg, want);
                                    e.band(equal, sign)
                                } else {
                                    equal
                                };
                                let kv = e.ic(k as i64);
                                index = e.select(same, kv, index)?;
                            }
                            e.record(index, &nan_role)
                        },
                        |e| e.record(fv, &value_role),
                    )?;
                    v
                };
                let c = ie.prim(op, &[v, v]);
                ie.check_equal(c, z, &mismatch)?;
                Ok(v)
            })
            .map_err(|e| rule_error(f, e))?;
        self.solve(f, pair, a, v, span, USED_TWICE)?;
        Ok(true)
    }

    /// A loop counter leaving its loop has a known value: counting up by one from `start` and
    /// leaving when `p < n` fails, it is `max(start, n)` (`max(start, n + 1)` for `p <= n`), and
    /// symmetrically counting down. Solving it here, before the comparison's rule would read a
    /// gap from θ, leaves a `for` loop's trip count with no θ at all.
    fn solve_loop_exit(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        op: Opcode,
        args: &[Value],
        result: Value,
        span: Span,
    ) -> Result<(), Error> {
        use pinv_core::ir::Const;
        let (&[a, b], Some(&Const::Bool(false))) = (args, pair.fixed.get(&result)) else {
            return Ok(());
        };
        // Normalise to "p OP n is false" with p the counter.
        let (p, n, strict_up) = match op {
            Opcode::Ilt | Opcode::Igt if pair.counters.contains_key(&a) => {
                (a, b, op == Opcode::Ilt)
            }
            Opcode::Ile | Opcode::Ige if pair.counters.contains_key(&a) => {
                (a, b, op == Opcode::Ile)
            }
            Opcode::Igt | Opcode::Ilt if pair.counters.contains_key(&b) => {
                (b, a, op == Opcode::Igt)
            }
            Opcode::Ige | Opcode::Ile if pair.counters.contains_key(&b) => {
                (b, a, op == Opcode::Ige)
            }
            _ => return Ok(()),
        };
        let Some(&(start, step)) = pair.counters.get(&p) else {
            return Ok(());
        };
        if pair.known.contains_key(&p) {
            return Ok(());
        }
        let limit = match self.operand(f, pair, n)? {
            Arg::Known(limit) => limit,
            Arg::Unknown => {
                // The bound is free too: read it, and the counter follows from it (one θ, where
                // the comparison's rule would read the bound and a gap).
                let fv = pair_fwd(&pair.fwd, n)?;
                let role = "the bound the loop counter ran to";
                let v = pair
                    .emit(self.options, span, "", None, |ie, pe| {
                        let v = ie.theta(Domain::Int, role)?;
                        pe.record(fv, role)?;
                        Ok(v)
                    })
                    .map_err(|e| rule_error(f, e))?;
                self.solve(f, pair, n, v, span, "the loop bound has two values")?;
                v
            }
        };
        // `strict_up` is true for p < n and p <= n (the counter runs up to n); the shapes that
        // run a counter up are ilt/ile with p on the left and igt/ige with p on the right.
        let counts_up = matches!(
            (op, p == a),
            (Opcode::Ilt | Opcode::Ile, true) | (Opcode::Igt | Opcode::Ige, false)
        );
        if (step == 1) != counts_up {
            return Ok(());
        }
        let inclusive = matches!(op, Opcode::Ile | Opcode::Ige);
        let _ = strict_up;
        let value = pair
            .emit(self.options, span, "", None, |ie, _| {
                let bound = if inclusive {
                    let one = ie.i64(step);
                    ie.prim(Opcode::Iadd, &[limit, one])
                } else {
                    limit
                };
                let s = ie.i64(start);
                let pick = if step == 1 {
                    Opcode::Imax
                } else {
                    Opcode::Imin
                };
                Ok(ie.prim(pick, &[s, bound]))
            })
            .map_err(|e| rule_error(f, e))?;
        self.solve(
            f,
            pair,
            p,
            value,
            span,
            "the loop counter leaves the loop at one value",
        )
    }

    /// Inverts one instruction with the rule the stack finds; `Ok(false)` if there is none.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn try_rule(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        callee: &Callee,
        prefix: &str,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<bool, Error> {
        let mut operands: Vec<Arg> = Vec::with_capacity(args.len());
        for &a in args {
            operands.push(self.operand(f, pair, a)?);
        }
        let pattern = Pattern::of(&operands);
        let lookup = self.stack.lookup(callee, &pattern);
        self.consulted.extend(lookup.consulted.iter().copied());
        let Some(found) = lookup.found else {
            return Ok(false);
        };
        let rule = found.rule;
        let outputs = self.outputs(f, pair, results, span, prefix)?;
        let fwd_outputs: Vec<Value> = results
            .iter()
            .map(|&r| pair_fwd(&pair.fwd, r))
            .collect::<Result<_, _>>()?;
        let fwd_args: Vec<Value> = args
            .iter()
            .map(|&a| pair_fwd(&pair.fwd, a))
            .collect::<Result<_, _>>()?;
        // The outputs, and the known operands, whose value in the inverse may differ from the
        // forward one: the PGF computes the step from what the inverse holds.
        let replayed_outputs: Vec<(Value, Value)> = results
            .iter()
            .zip(&fwd_outputs)
            .chain(
                args.iter()
                    .zip(&fwd_args)
                    .zip(&operands)
                    .filter(|(_, o)| o.known().is_some())
                    .map(|(a, _)| a),
            )
            .filter_map(|(r, &fr)| pair.replay.get(r).map(|&rr| (fr, rr)))
            .collect();
        // Without a PGF (the rule had none), or leaving it for later.
        let no_pgf = pair.no_pgf.is_some() || self.options.lazy_pgf;
        pair.operand_ranges = args.iter().map(|&a| pair.ranges.get(a)).collect();
        pair.operand_bounds = args.iter().map(|a| pair.bounds.get(a).copied()).collect();
        // Where the PGF computes the step from what the inverse holds: straight-line code and
        // the region of a function's one `return` ([`Region::anchored`]); elsewhere where what
        // the step starts from is the forward float in the inverse too ([`forward_float`]).
        let anchored = f.layout.len() == 1 || pair.anchored;
        // Asked at most once per step (it may scan the inverse's blocks).
        let starts = std::cell::OnceCell::new();
        let starts_forward = |pair: &Region<'_>| {
            *starts.get_or_init(|| {
                let set = pair.forward_floats.as_ref().map(|s| s.borrow());
                outputs
                    .iter()
                    .copied()
                    .chain(operands.iter().filter_map(|o| o.known()))
                    .all(|v| forward_float(pair.inv, set.as_deref(), v))
            })
        };
        pair.wide_runs = operands
            .iter()
            .zip(args)
            .any(|(o, &a)| o.known().is_none() && solved_by_magnitude(f, a))
            && (anchored || starts_forward(pair));
        // A sum that cancels after the step wherever it starts from forward floats
        // ([`Region::forward_floats`]); the other exact steps only where it is anchored.
        pair.exact_step = operands.iter().zip(args).any(|(o, &a)| {
            let known = |v: Value| pair.known.contains_key(&v);
            o.known().is_none()
                && (solved_into_sum(f, &pair.ranges, a, &known)
                    || anchored
                        && (solved_into_discrete(f, &pair.ranges, a, &known)
                            || pair.ranges.feeds_periodic(a)
                            || pair.ranges.feeds_conversion(a)))
        }) && (anchored || pair.forward_floats.is_some() && starts_forward(pair));
        // What an exact step solves from forward floats is the forward float too.
        let solves_forward = pair.forward_floats.is_some()
            && (pair.exact_step || pair.exact_floats)
            && starts_forward(pair);
        let emitted = pair
            .emit(self.options, span, prefix, Some(&self.out), |ie, pe| {
                let solved = rule.emit_inverse(ie, &outputs, &operands)?;
                let pgf = if no_pgf {
                    Ok(())
                } else {
                    pe.keep_replays_for(fwd_args.clone());
                    pe.set_replayed_outputs(replayed_outputs);
                    rule.emit_pgf(pe, &fwd_outputs, &fwd_args, &pattern)
                };
                Ok((solved, pgf, pe.take_replays()))
            })
            .map_err(|e| rule_error(f, e));
        pair.wide_runs = false;
        pair.exact_step = false;
        let (solved, pgf, replays) = emitted?;
        // What the inverse holds for each operand it solves here, where that may not be the
        // forward value: the first solution is the one the inverse keeps (a second use is
        // checked against it).
        for (&a, &fa) in args.iter().zip(&fwd_args) {
            if pair.known.contains_key(&a) || pair.replay.contains_key(&a) {
                continue;
            }
            if let Some(&(_, replayed)) = replays.iter().find(|(x, _)| *x == fa) {
                pair.replay.insert(a, replayed);
            }
        }
        pair.operand_ranges.clear();
        pair.operand_bounds.clear();
        match pgf {
            Ok(()) => {}
            Err(pinv_primitives::RuleError::NoPgf(why)) => pair.no_pgf = Some(why),
            Err(e) => return Err(rule_error(f, e)),
        }
        if solved.len() != args.len() {
            return Err(Error::Internal(format!(
                "the rule `{}` for {callee} gave {} values for {} operands",
                rule.name(),
                solved.len(),
                args.len()
            )));
        }
        for (&a, s) in args.iter().zip(solved) {
            if solves_forward && !pair.known.contains_key(&a) {
                if let Some(set) = &pair.forward_floats {
                    set.borrow_mut().insert(s);
                }
            }
            self.solve(f, pair, a, s, span, USED_TWICE)?;
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_rule(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        callee: &Callee,
        prefix: &str,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<(), Error> {
        if self.try_rule(f, pair, callee, prefix, results, args, span)? {
            return Ok(());
        }
        let operands: Vec<Arg> = args
            .iter()
            .map(|&a| self.operand(f, pair, a))
            .collect::<Result<_, _>>()?;
        Err(Error::NoRule {
            function: f.name.clone(),
            callee: callee.to_string(),
            pattern: Pattern::of(&operands).to_string(),
            span,
        })
    }

    /// The solved values of an instruction's results; a result no output depends on is free, so
    /// it is read from θ (and the PGF records its forward value).
    fn outputs(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        results: &[Value],
        span: Span,
        prefix: &str,
    ) -> Result<Vec<Value>, Error> {
        let mut out = Vec::with_capacity(results.len());
        for (i, &r) in results.iter().enumerate() {
            match pair.known.get(&r) {
                Some(&v) => out.push(v),
                None => {
                    let role = format!("result {i}, which no output depends on");
                    let fv = pair_fwd(&pair.fwd, r)?;
                    let ty = f.value_type(r);
                    let domain = super::ranges::free_domain(&pair.ranges, r, ty);
                    let v = pair
                        .emit(self.options, span, prefix, None, |ie, pe| {
                            let v = ie.theta(domain, &role)?;
                            pe.record(fv, &role)?;
                            Ok(v)
                        })
                        .map_err(|e| rule_error(f, e))?;
                    pair.known.insert(r, v);
                    out.push(v);
                }
            }
        }
        Ok(out)
    }

    fn invert_call(
        &mut self,
        f: &Function,
        pair: &mut Region<'_>,
        callee: FuncId,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<(), Error> {
        let target = &self.forward.functions[callee];
        let name = target.name.clone();
        // θ roles name the user's function a declared inverse belongs to; the solvers' helpers
        // (`iso.…`, a name no user function can have) are ours, and their roles say enough.
        let prefix = match name.as_str() {
            crate::solve::helpers::MUL => Opcode::Fmul.name(),
            helper if helper.starts_with("iso.") => "",
            user => user,
        };
        if self.try_rule(
            f,
            pair,
            &Callee::Function(name.clone()),
            prefix,
            results,
            args,
            span,
        )? {
            return Ok(());
        }
        if target.kind != FuncKind::Fn {
            return Err(Self::unsupported(
                f,
                &format!("`{name}` is not an ordinary function and has no inverse rule"),
                span,
            ));
        }
        let (inv_id, pgf_id) = self.invert(callee)?;
        let inv_id = self.callee_inverse(inv_id);
        if let Err(why) = &pgf_id {
            pair.no_pgf.get_or_insert_with(|| why.reason.clone());
        }
        let outputs = self.outputs(f, pair, results, span, &name)?;
        let inv_sig = self.out.functions[inv_id].sig.clone();
        let solved = pair
            .inv
            .ins_call(pair.inv_block, inv_id, outputs, &inv_sig.returns, span);
        let fwd_args: Vec<Value> = args
            .iter()
            .map(|&a| pair_fwd(&pair.fwd, a))
            .collect::<Result<_, _>>()?;
        if let Ok(pgf_id) = pgf_id {
            self.record_call(pair, pgf_id, results, fwd_args, span);
        }
        for (&a, s) in args.iter().zip(solved) {
            // A known operand (constant or solved elsewhere) is checked against the callee's answer.
            let arg = self.operand(f, pair, a)?;
            match arg {
                Arg::Known(k) => {
                    let reason = format!(
                        "the inverse of `{name}` gave an input that disagrees with a known one"
                    );
                    pair.emit(self.options, span, "", None, |ie, _| {
                        ie.check_equal(s, k, &reason)
                    })
                    .map_err(|e| rule_error(f, e))?;
                }
                Arg::Unknown => self.solve(f, pair, a, s, span, USED_TWICE)?,
            }
        }
        Ok(())
    }
}

impl Reorienter<'_> {
    /// Writes the PGF code that records a call's θ where the inverse reads them: the callee's
    /// PGF, on the call's forward operands.
    ///
    /// The PGF's copy of the forward block already called the callee, for outputs it needed
    /// before here (the PGF of `fib(n - 1) + fib(n - 2)` records how y splits, which needs both
    /// calls' outputs, before the calls' own θ). Calling the callee's PGF here as well would run
    /// the callee twice, and so every level of a call chain once per level above it: the PGF of
    /// a recursion as deep as `fib`'s would cost n·fib(n) steps. So the forward call becomes the
    /// call of the callee's PGF (a generated PGF returns the callee's outputs), its records
    /// stashed (`segment hold`, `segment stash k`), and here they are placed (`segment place
    /// k`). Where the copy is not that call (or the PGF records nothing here), the PGF is called
    /// here as before.
    fn record_call(
        &self,
        pair: &mut Region<'_>,
        pgf_id: FuncId,
        results: &[Value],
        fwd_args: Vec<Value>,
        span: Span,
    ) {
        let returns = self.out.functions[pgf_id].sig.returns.clone();
        let copy = pair
            .copy_block
            .filter(|_| !pair.mute_pgf)
            .and_then(|block| {
                let &v = pair.fwd.get(results.first()?)?;
                let ValueDef::Result(inst, 0) = pair.pgf.values[v].def else {
                    return None;
                };
                let data = &pair.pgf.insts[inst];
                let InstKind::Call { args, .. } = &data.kind else {
                    return None;
                };
                let types: Vec<_> = data
                    .results
                    .iter()
                    .map(|&r| pair.pgf.value_type(r))
                    .collect();
                (args[..] == fwd_args[..] && types == returns).then_some((block, inst))
            });
        let Some((block, inst)) = copy else {
            pair.pgf
                .ins_call(pair.pgf_block, pgf_id, fwd_args, &returns, span);
            return;
        };
        let k = stash_call(pair.pgf, block, inst, pgf_id);
        pair.pgf
            .ins_void(pair.pgf_block, InstKind::Segment(SegmentOp::Place(k)), span);
    }
}

/// The unknown i64 and bool values that `v`, an unknown f64, is computed from by instructions of
/// `body` alone (with constants and known values), or `None` where it also depends on an
/// unknown f64 (a block parameter, a call, a value from elsewhere). At most a few dozen
/// instructions are followed: a long chain is no candidate.
fn discrete_leaves(
    f: &Function,
    body: &BTreeSet<Inst>,
    v: Value,
    region: &Region<'_>,
) -> Option<Vec<Value>> {
    const MOST: usize = 32;
    let mut leaves = Vec::new();
    let mut work = vec![v];
    let mut seen = BTreeSet::new();
    while let Some(x) = work.pop() {
        if !seen.insert(x) || region.known.contains_key(&x) {
            continue;
        }
        if seen.len() > MOST {
            return None;
        }
        let ty = f.value_type(x);
        if x != v && ty != Type::F64 {
            // A 0 or 1 from a bool: the bool is the smaller domain to draw from.
            let from_bool = match f.values[x].def {
                ValueDef::Result(def, _) if body.contains(&def) => match &f.insts[def].kind {
                    InstKind::Prim {
                        op: Opcode::BoolToI64,
                        args,
                    } => Some(args[0]),
                    _ => None,
                },
                _ => None,
            };
            match from_bool {
                Some(b) => work.push(b),
                None => leaves.push(x),
            }
            continue;
        }
        let ValueDef::Result(def, _) = f.values[x].def else {
            return None;
        };
        if !body.contains(&def) {
            return None;
        }
        match &f.insts[def].kind {
            InstKind::Const(_) => {}
            InstKind::Prim { args, .. } => work.extend(args.iter().copied()),
            _ => return None,
        }
    }
    (!leaves.is_empty()).then_some(leaves)
}

/// Makes `inst`, a call in `block` of `pgf`, a call of `callee` whose records are stashed; the
/// stash's number. A call already made so (by the region of another edge out of the same
/// block) keeps its number; a new one gets the next free number in the block.
fn stash_call(pgf: &mut Function, block: Block, inst: Inst, callee: FuncId) -> u32 {
    let insts = &pgf.blocks[block].insts;
    let at = insts.iter().position(|&i| i == inst);
    let stash_of = |i: Inst| match pgf.insts[i].kind {
        InstKind::Segment(op @ SegmentOp::Stash(_)) => op.stash(),
        _ => None,
    };
    if let Some(k) = at.and_then(|a| insts.get(a + 1)).and_then(|&i| stash_of(i)) {
        return k;
    }
    let k = insts
        .iter()
        .filter_map(|&i| stash_of(i))
        .max()
        .map_or(0, |k| k + 1);
    let span = pgf.insts[inst].span;
    if let InstKind::Call { callee: c, .. } = &mut pgf.insts[inst].kind {
        *c = callee;
    }
    let hold = pgf.create_inst(InstKind::Segment(SegmentOp::Hold), &[], span);
    let stash = pgf.create_inst(InstKind::Segment(SegmentOp::Stash(k)), &[], span);
    let insts = &mut pgf.blocks[block].insts;
    let a = at.unwrap_or(insts.len());
    insts.insert(a + 1, stash);
    insts.insert(a, hold);
    k
}

impl Region<'_> {
    /// What the inverse holds for `v`, as the PGF computes it: its replay where a step noted
    /// one ([`Region::replay`]), else its forward value.
    pub(super) fn held(&self, v: Value) -> Result<Value, Error> {
        match self.replay.get(&v) {
            Some(&r) => Ok(r),
            None => pair_fwd(&self.fwd, v),
        }
    }

    /// Runs `body` with emitters for the inverse and the PGF at their current blocks, and
    /// continues both where the emitters left off.
    pub(super) fn emit<R>(
        &mut self,
        options: &ReorientOptions,
        span: Span,
        prefix: &str,
        module: Option<&Module>,
        body: impl FnOnce(&mut Emitter<'_>, &mut Emitter<'_>) -> R,
    ) -> R {
        let emit = pinv_primitives::EmitOptions {
            exact_floats: options.emit.exact_floats || self.exact_floats || self.exact_step,
            wide_runs: options.emit.wide_runs || self.wide_runs,
            outline_settles: options.emit.outline_settles || self.outline_settles,
            ..options.emit
        };
        let mut ie = Emitter::new(self.inv, self.inv_block, Mode::Inverse, span);
        if !self.step_checks_wanted {
            ie = ie.without_step_checks();
        }
        let mut ie = ie
            .with_role_prefix(prefix)
            .with_options(emit)
            .with_operand_ranges(self.operand_ranges.clone())
            .with_operand_bounds(self.operand_bounds.clone());
        let mut pe = Emitter::new(self.pgf, self.pgf_block, Mode::Pgf, span)
            .with_role_prefix(prefix)
            .with_options(emit)
            .with_operand_ranges(self.operand_ranges.clone())
            .with_muted_records(self.mute_pgf);
        if let Some(module) = module {
            ie = ie.with_module(module);
            pe = pe.with_module(module);
        }
        let result = body(&mut ie, &mut pe);
        self.step_checks.extend(ie.take_step_checks());
        for piece in ie.take_outlined() {
            self.outlined.add(false, piece);
        }
        for piece in pe.take_outlined() {
            self.outlined.add(true, piece);
        }
        let (inv_block, pgf_block) = (ie.block(), pe.block());
        self.inv_block = inv_block;
        self.pgf_block = pgf_block;
        result
    }
}

pub(super) fn pair_fwd(fwd: &BTreeMap<Value, Value>, v: Value) -> Result<Value, Error> {
    fwd.get(&v)
        .copied()
        .ok_or_else(|| Error::Internal(format!("no forward value for {v}")))
}

pub(super) fn rule_error(f: &Function, e: pinv_primitives::RuleError) -> Error {
    Error::Internal(format!("a rule failed while inverting `{}`: {e}", f.name))
}

/// The reorientation's steps of the inversion walk ([`crate::walk`]) over one block: each step
/// emits inverse and PGF code into `region`.
struct Emit<'r, 'a, 'b> {
    r: &'r mut Reorienter<'a>,
    f: &'r Function,
    region: &'r mut Region<'b>,
    /// The block's instructions, for [`Reorienter::discrete_first`].
    in_body: BTreeSet<Inst>,
}

impl crate::walk::Steps for Emit<'_, '_, '_> {
    type Inst = Inst;
    type Value = Value;
    type Error = Error;

    fn args(&self, inst: Inst) -> Vec<Value> {
        self.f.insts[inst].kind.args()
    }

    fn results(&self, inst: Inst) -> Vec<Value> {
        self.f.insts[inst].results.to_vec()
    }

    fn is_known(&self, v: Value) -> bool {
        // A shared constant is known all along (and its users are no news), as is `p − p`
        // ([`Reorienter::operand`]) unless θ is to say whether it is NaN
        // ([`Reorienter::value_or_nan`]).
        self.region.known.contains_key(&v)
            || (own_value(self.f, &self.region.ranges, v).is_some()
                && !takes_nan(self.f, self.region, v))
    }

    fn is_computed(&self, inst: Inst) -> bool {
        self.region.computed.contains(&inst)
    }

    fn is_comparison(&self, inst: Inst) -> bool {
        matches!(&self.f.insts[inst].kind,
            InstKind::Prim { op, .. } if op.class() == OpClass::Compare)
    }

    fn known_count(&self) -> usize {
        self.region.known.len()
    }

    fn propagate(&mut self, inst: Inst) -> Result<bool, Error> {
        self.r.propagate_one(self.f, inst, self.region)
    }

    fn discrete_first(&mut self, inst: Inst, unknown: &[Value]) -> Result<bool, Error> {
        self.r
            .discrete_first(self.f, &self.in_body, inst, unknown, self.region)
    }

    fn invert(&mut self, inst: Inst) -> Result<(), Error> {
        self.r.invert_inst(self.f, inst, self.region)
    }

    /// A comparison that decides whether `p − p` is 0 or NaN ([`Reorienter::value_or_nan`]):
    /// p, and what it is computed from, are solved from that, not read from θ apart.
    fn reopens(&self, inst: Inst) -> bool {
        self.f.insts[inst]
            .kind
            .args()
            .into_iter()
            .any(|a| takes_nan(self.f, self.region, a))
    }
}
