//! θ: the tape an inverse reads its parameters from, what each read means, and where θ comes from.
//!
//! θ is a **tape**: the inverse reads typed values from it in execution order. Straight-line
//! inverses read a fixed number, except where a rule branches on the output (as `x * y` does at
//! `y = 0`), so the layout can depend on the path. Each read has an **address** (the function,
//! the role, the source location of the forward instruction) and a **domain**.
//!
//! - [`ThetaSchema`] lists the reads of an inverse statically, marking the ones that happen only on
//!   some paths, so users can see what each θ means.
//! - Sources ([`pinv_core::interp::ThetaSource`]): an explicit [`Tape`] of values, a [`TextTape`] of
//!   values as users type them (parsed by the type each read wants), the seeded [`Sampler`] that
//!   draws each read from its domain, and the PGF's recorder
//!   ([`pinv_core::interp::TapeRecorder`]).

use pinv_core::interp::{ThetaAddress, ThetaError, ThetaSource};
use pinv_core::ir::constant::{format_f64, parse_f64};
use pinv_core::ir::dominators::DomTree;
use pinv_core::ir::{Block, Const, Domain, FuncId, FuncKind, Function, InstKind, Module, Type};
use pinv_core::span::SourceFile;
use pinv_core::Span;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;

pub use pinv_core::interp::{TapeRecorder, TapeSource as Tape};

/// The role prefix of the choices the reorientation reads for control flow.
pub const CONTROL_FLOW: &str = "control flow:";

/// What one θ read is: a value from a domain, or a path choice.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SlotKind {
    /// A value from `domain`; `narrowed`: the inverse narrows the domain at run time, from values
    /// it has computed (`theta … within lo, hi`), and draws only from what is left.
    Value {
        domain: Domain,
        narrowed: bool,
    },
    Choice {
        n: u32,
    },
}

impl SlotKind {
    /// The type of the value read (a choice is an i64).
    pub fn ty(&self) -> Type {
        match self {
            SlotKind::Value { domain, .. } => domain.ty(),
            SlotKind::Choice { .. } => Type::I64,
        }
    }
}

impl fmt::Display for SlotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotKind::Value {
                domain,
                narrowed: false,
            } => write!(f, "{} {domain}", domain.ty()),
            SlotKind::Value {
                domain,
                narrowed: true,
            } => write!(f, "{} {domain}, narrowed", domain.ty()),
            SlotKind::Choice { n } => write!(f, "choice 0..{n}"),
        }
    }
}

/// One θ read of an inverse, as the schema shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThetaSlot {
    /// The generated function that reads it (a callee's inverse for reads inside calls).
    pub function: String,
    pub kind: SlotKind,
    pub role: String,
    /// The forward instruction it belongs to.
    pub span: Span,
    /// `file:line:col` of the span, when the source is known.
    pub location: Option<String>,
    /// Whether the read happens only on some paths through the inverse.
    pub conditional: bool,
    /// Where on the tape the read can be: the positions (from 0) it has on the paths that make
    /// it, or `None` where they vary without a small bound (a read in a loop, or after one).
    /// On straight code with no conditional read before it, the slot's own number.
    pub positions: Option<Vec<usize>>,
}

/// The reads of an inverse, in the order of the code (the tape order on every path that makes
/// them all; conditional reads are skipped on paths that do not reach them).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ThetaSchema {
    pub slots: Vec<ThetaSlot>,
}

impl ThetaSchema {
    /// The schema of the generated inverse `inverse` of `module`, following calls into other
    /// generated inverses (their reads are conditional if the call is).
    pub fn of(module: &Module, inverse: FuncId, source: Option<&SourceFile>) -> ThetaSchema {
        let mut collector = Collector {
            module,
            source,
            out: Vec::new(),
            stack: Vec::new(),
            memo: Memo {
                readers: theta_readers(module, inverse),
                ..Memo::default()
            },
        };
        collector.collect(inverse, false, &Positions::zero());
        ThetaSchema {
            slots: collector.out,
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The choices of control flow left to θ (which `return`, which edge into a merge or loop
    /// header) — those the edge facts could not decide.
    pub fn control_choices(&self) -> Vec<&ThetaSlot> {
        self.slots
            .iter()
            .filter(|s| s.role.starts_with(CONTROL_FLOW))
            .collect()
    }

    /// Whether every read happens on every path: then the tape always has `len()` values.
    pub fn is_fixed(&self) -> bool {
        self.slots.iter().all(|s| !s.conditional)
    }
}

impl fmt::Display for ThetaSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.slots.is_empty() {
            return writeln!(f, "no θ: the inverse is a function of y alone");
        }
        for (i, s) in self.slots.iter().enumerate() {
            // Where the read is on the tape, where that is not the slot's own number.
            let tape = match s.positions.as_deref() {
                Some([p]) if *p == i => None,
                Some([p]) => Some(format!("tape position {p}")),
                Some(ps) => {
                    let (last, rest) = ps.split_last().unwrap_or((&0, &[]));
                    let rest: Vec<String> = rest.iter().map(usize::to_string).collect();
                    Some(format!("tape position {} or {last}", rest.join(", ")))
                }
                None => Some("tape position varies".to_string()),
            };
            let when = match (s.conditional, tape) {
                (false, None) => String::new(),
                (true, None) => " (on some paths)".to_string(),
                (false, Some(t)) => format!(" ({t})"),
                (true, Some(t)) => format!(" (on some paths; {t})"),
            };
            let at = s
                .location
                .clone()
                .unwrap_or_else(|| format!("@{}..{}", s.span.start, s.span.end));
            writeln!(
                f,
                "θ{i:<3} {:<22} {}{when}  [{at}]",
                s.kind.to_string(),
                s.role
            )?;
        }
        Ok(())
    }
}

/// What the schema's walk over the inverse and its callees carries.
struct Collector<'a> {
    module: &'a Module,
    source: Option<&'a SourceFile>,
    out: Vec<ThetaSlot>,
    /// The functions being walked (a recursion's reads are listed once).
    stack: Vec<FuncId>,
    memo: Memo,
}

impl Collector<'_> {
    /// The reads of `id` and of the generated inverses it calls, in the order of the code;
    /// `conditional` where the call is, and after reads made at `at`.
    fn collect(&mut self, id: FuncId, conditional: bool, at: &Positions) {
        if self.stack.contains(&id) {
            return;
        }
        self.stack.push(id);
        let module = self.module;
        let f = &module.functions[id];
        let always = unconditional_blocks(f, &self.memo.doms(module, id));
        let relative = relative_positions(module, id, &mut self.memo);
        for (block, inst) in f.insts_in_layout() {
            let data = &f.insts[inst];
            let cond = conditional || !always.contains(&block);
            let here = at.then(relative.at.get(&inst).unwrap_or(&Positions::Varies));
            let slot = |kind, role: &str| ThetaSlot {
                function: f.name.clone(),
                kind,
                role: role.to_string(),
                span: data.span,
                location: self.source.map(|s| s.location(data.span)),
                conditional: cond,
                positions: here.list(),
            };
            match &data.kind {
                InstKind::Theta(read) => {
                    let pinv_core::ir::ThetaRead {
                        domain,
                        role,
                        within,
                    } = &**read;
                    let slot = slot(
                        SlotKind::Value {
                            domain: *domain,
                            narrowed: within.is_some(),
                        },
                        role,
                    );
                    self.out.push(slot);
                }
                InstKind::Choice { n, role } => {
                    let slot = slot(SlotKind::Choice { n: *n }, role);
                    self.out.push(slot);
                }
                InstKind::Call { callee, .. } if self.memo.readers.contains(callee) => {
                    self.collect(*callee, cond, &here);
                }
                _ => {}
            }
        }
        self.stack.pop();
    }
}

/// Whether the schema follows a call into `callee`: a generated inverse's reads are the
/// caller's.
fn follows(module: &Module, callee: FuncId) -> bool {
    matches!(
        module.functions[callee].kind,
        FuncKind::GeneratedInverse { .. }
    )
}

/// The functions the schema follows from `root` (see [`follows`]) that read θ, themselves or
/// through a function they call: the others (a dispatch guard) add no slot and move no tape
/// position, so their calls are passed over. Linear in the code reached.
fn theta_readers(module: &Module, root: FuncId) -> HashSet<FuncId> {
    let mut reached = vec![root];
    let mut seen = HashSet::from([root]);
    let mut callers: std::collections::HashMap<FuncId, Vec<FuncId>> = Default::default();
    let mut readers = Vec::new();
    let mut i = 0;
    while let Some(&id) = reached.get(i) {
        i += 1;
        let f = &module.functions[id];
        let mut reads = false;
        for (_, inst) in f.insts_in_layout() {
            match &f.insts[inst].kind {
                InstKind::Theta(_) | InstKind::Choice { .. } => reads = true,
                InstKind::Call { callee, .. } if follows(module, *callee) => {
                    callers.entry(*callee).or_default().push(id);
                    if seen.insert(*callee) {
                        reached.push(*callee);
                    }
                }
                _ => {}
            }
        }
        if reads {
            readers.push(id);
        }
    }
    let mut out: HashSet<FuncId> = readers.iter().copied().collect();
    while let Some(id) = readers.pop() {
        for &caller in callers.get(&id).into_iter().flatten() {
            if out.insert(caller) {
                readers.push(caller);
            }
        }
    }
    out
}

/// The possible counts of θ reads made so far: a small set, or "varies" (a loop, a recursion,
/// or more than [`MAX_POSITIONS`] possibilities).
#[derive(Clone, Debug, PartialEq)]
enum Positions {
    Known(std::collections::BTreeSet<usize>),
    Varies,
}

/// The most positions a slot lists before the schema says they vary.
const MAX_POSITIONS: usize = 6;

impl Positions {
    fn zero() -> Positions {
        Positions::Known([0].into())
    }

    /// Counts after `self` and then `then` more reads.
    fn then(&self, then: &Positions) -> Positions {
        match (self, then) {
            (Positions::Known(a), Positions::Known(b)) => Positions::capped(
                a.iter()
                    .flat_map(|x| b.iter().map(move |y| x + y))
                    .collect(),
            ),
            _ => Positions::Varies,
        }
    }

    fn union(&self, other: &Positions) -> Positions {
        match (self, other) {
            (Positions::Known(a), Positions::Known(b)) => {
                Positions::capped(a.union(b).copied().collect())
            }
            _ => Positions::Varies,
        }
    }

    fn capped(set: std::collections::BTreeSet<usize>) -> Positions {
        if set.len() > MAX_POSITIONS {
            Positions::Varies
        } else {
            Positions::Known(set)
        }
    }

    fn list(&self) -> Option<Vec<usize>> {
        match self {
            Positions::Known(set) => Some(set.iter().copied().collect()),
            Positions::Varies => None,
        }
    }
}

/// For a generated function: the reads made before each θ read and each call that reads θ,
/// counted from its entry, and the reads made by the time it returns.
struct Relative {
    at: std::collections::HashMap<pinv_core::ir::Inst, Positions>,
    total: Positions,
}

/// The [`Relative`] of each function counted so far, and the functions being counted.
#[derive(Default)]
struct Memo {
    done: std::collections::HashMap<FuncId, std::rc::Rc<Relative>>,
    stack: Vec<FuncId>,
    /// The functions whose calls move the position ([`theta_readers`]).
    readers: HashSet<FuncId>,
    /// Dominator trees, each computed once for both of its uses (an inverse may have a million
    /// instructions).
    doms: std::collections::HashMap<FuncId, std::rc::Rc<DomTree>>,
}

impl Memo {
    fn doms(&mut self, module: &Module, id: FuncId) -> std::rc::Rc<DomTree> {
        std::rc::Rc::clone(
            self.doms
                .entry(id)
                .or_insert_with(|| std::rc::Rc::new(DomTree::compute(&module.functions[id]))),
        )
    }
}

/// [`Relative`] of `id`: along the blocks in reverse postorder, each block starting with the
/// counts its predecessors end with, until nothing changes (a loop that reads θ ends up with
/// "varies"). A function already being counted (a recursion) reads a number that varies.
fn relative_positions(module: &Module, id: FuncId, memo: &mut Memo) -> std::rc::Rc<Relative> {
    if let Some(done) = memo.done.get(&id) {
        return std::rc::Rc::clone(done);
    }
    let f = &module.functions[id];
    let mut at = std::collections::HashMap::new();
    if memo.stack.contains(&id) {
        return std::rc::Rc::new(Relative {
            at,
            total: Positions::Varies,
        });
    }
    memo.stack.push(id);
    let order: Vec<Block> = memo.doms(module, id).reverse_postorder().collect();
    let mut preds: std::collections::HashMap<Block, Vec<Block>> = std::collections::HashMap::new();
    for &b in &order {
        for s in f.successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    // To a fixed point: a loop whose body reads θ adds a position per pass until there are
    // too many to list ("varies"); one that reads none settles at once.
    let mut end: std::collections::HashMap<Block, Positions> = std::collections::HashMap::new();
    let mut total: Option<Positions> = None;
    for _ in 0..MAX_POSITIONS + 3 {
        let mut changed = false;
        total = None;
        for (k, &b) in order.iter().enumerate() {
            let mut cur = if k == 0 {
                Some(Positions::zero())
            } else {
                None
            };
            for p in preds.get(&b).into_iter().flatten() {
                if let Some(from) = end.get(p) {
                    cur = Some(match cur {
                        None => from.clone(),
                        Some(c) => c.union(from),
                    });
                }
            }
            let Some(mut cur) = cur else { continue };
            for &i in &f.blocks[b].insts {
                match &f.insts[i].kind {
                    InstKind::Theta(_) | InstKind::Choice { .. } => {
                        at.insert(i, cur.clone());
                        cur = cur.then(&Positions::Known([1].into()));
                    }
                    InstKind::Call { callee, .. } if memo.readers.contains(callee) => {
                        at.insert(i, cur.clone());
                        let inner = relative_positions(module, *callee, memo);
                        cur = cur.then(&inner.total);
                    }
                    _ => {}
                }
            }
            if f.ends_in_return(b) {
                total = Some(match total {
                    None => cur.clone(),
                    Some(t) => t.union(&cur),
                });
            }
            if end.get(&b) != Some(&cur) {
                changed = true;
                end.insert(b, cur);
            }
        }
        if !changed {
            break;
        }
    }
    memo.stack.pop();
    let relative = std::rc::Rc::new(Relative {
        at,
        total: total.unwrap_or(Positions::Varies),
    });
    memo.done.insert(id, std::rc::Rc::clone(&relative));
    relative
}

/// The blocks every run that returns passes through: those that dominate every `return`.
fn unconditional_blocks(f: &Function, doms: &DomTree) -> HashSet<Block> {
    let order: Vec<Block> = doms.reverse_postorder().collect();
    let returns: Vec<Block> = order
        .iter()
        .copied()
        .filter(|&b| f.ends_in_return(b))
        .collect();
    order
        .into_iter()
        .filter(|&b| returns.iter().all(|&r| doms.dominates(b, r)))
        .collect()
}

/// θ values as users write them (`1.5`, `-2`, `true`, `inf`), parsed by the type each read
/// wants: a choice reads an integer in `0..n`.
#[derive(Clone, Debug, Default)]
pub struct TextTape {
    values: Vec<String>,
    pos: usize,
    read: Vec<Const>,
}

impl TextTape {
    pub fn new(values: Vec<String>) -> TextTape {
        TextTape {
            values,
            pos: 0,
            read: Vec::new(),
        }
    }

    /// Splits `1.5,2,true` at commas.
    pub fn parse(list: &str) -> TextTape {
        let values = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        TextTape::new(values)
    }

    /// How many values were read.
    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values as given.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The values read so far, as the reads typed them.
    pub fn read(&self) -> &[Const] {
        &self.read
    }

    fn next(&mut self, ty: Type) -> Result<Const, ThetaError> {
        let text = self.values.get(self.pos).ok_or(ThetaError::Exhausted {
            needed_index: self.pos,
        })?;
        let value = match ty {
            Type::F64 => parse_f64(text).map(Const::F64),
            Type::I64 => pinv_core::ir::constant::parse_i64(text).map(Const::I64),
            Type::Bool => match text.as_str() {
                "true" => Some(Const::Bool(true)),
                "false" => Some(Const::Bool(false)),
                _ => None,
            },
        }
        .ok_or_else(|| {
            ThetaError::Other(format!(
                "θ{} is `{text}`, which is not a valid {ty}",
                self.pos
            ))
        })?;
        self.pos += 1;
        self.read.push(value);
        Ok(value)
    }
}

impl ThetaSource for TextTape {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let value = self.next(domain.ty())?;
        pinv_core::interp::check_domain(domain, value)?;
        Ok(value)
    }

    fn choice(&mut self, n: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let value = self.next(Type::I64)?;
        pinv_core::interp::check_choice(n, value)
    }
}

/// Draws every θ read from its domain, reproducibly from a seed, and keeps what it drew (so a
/// preimage can be shown with the θ that produced it).
///
/// Reals spread over several orders of magnitude, log-normally around 1 (and are sometimes 0 or
/// small integers);
/// integers are small and often zero; bools and choices are uniform.
#[derive(Clone, Debug)]
pub struct Sampler {
    rng: Xoshiro256PlusPlus,
    drawn: Vec<Const>,
}

impl Sampler {
    pub fn new(seed: u64) -> Sampler {
        Sampler {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            drawn: Vec::new(),
        }
    }

    /// The values drawn since the last [`Sampler::take_drawn`], in order: the tape that was read.
    pub fn drawn(&self) -> &[Const] {
        &self.drawn
    }

    /// Returns and forgets the values drawn so far.
    pub fn take_drawn(&mut self) -> Vec<Const> {
        std::mem::take(&mut self.drawn)
    }

    /// A real spread over magnitudes 1e-3 … 1e3, sometimes 0 or a small integer.
    pub fn real(&mut self) -> f64 {
        match self.rng.random_range(0..10u32) {
            0 => 0.0,
            1 | 2 => f64::from(self.rng.random_range(-5..=5i32)),
            _ => {
                let magnitude = self.magnitude();
                if self.rng.random_bool(0.5) {
                    magnitude
                } else {
                    -magnitude
                }
            }
        }
    }

    /// A positive real: log-normal around 1, one decade per standard deviation, so that most
    /// draws are within 1e-2 … 1e2 and some reach 1e-4 … 1e4.
    pub fn magnitude(&mut self) -> f64 {
        // Box–Muller.
        let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
        let v: f64 = self.rng.random_range(0.0..1.0);
        let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        10f64.powf(normal.clamp(-4.0, 4.0))
    }

    /// A positive real, sometimes a small integer, never 0.
    fn positive(&mut self) -> f64 {
        if self.rng.random_range(0..5u32) == 0 {
            f64::from(self.rng.random_range(1..=5i32))
        } else {
            self.magnitude()
        }
    }

    /// An integer, small and often zero.
    pub fn int(&mut self) -> i64 {
        match self.rng.random_range(0..8u32) {
            0 | 1 => 0,
            2..=5 => self.rng.random_range(-3..=3),
            6 => self.rng.random_range(-100..=100),
            _ => self.rng.random_range(-10_000..=10_000),
        }
    }

    /// A value of `domain`.
    pub fn draw(&mut self, domain: Domain) -> Const {
        match domain {
            Domain::Real => Const::F64(self.real()),
            Domain::NonzeroReal => loop {
                let x = self.real();
                if x != 0.0 {
                    break Const::F64(x);
                }
            },
            Domain::Interval { lo, hi } | Domain::RealWithin { lo, hi } => {
                Const::F64(self.interval(lo, hi))
            }
            Domain::Int => Const::I64(self.int()),
            Domain::IntRange { lo, hi } => {
                let x = self.int();
                let v = if lo <= x && x <= hi {
                    x
                } else if hi.wrapping_sub(lo) >= 0 && hi - lo <= 1 << 20 {
                    self.rng.random_range(lo..=hi)
                } else if x < lo {
                    lo.saturating_add(x.unsigned_abs().min(1 << 20) as i64)
                } else {
                    hi.saturating_sub(x.unsigned_abs().min(1 << 20) as i64)
                };
                Const::I64(v.clamp(lo, hi))
            }
            Domain::Bool => Const::Bool(self.rng.random_bool(0.5)),
            // Every free bit is equally likely 0 or 1: each choice is as good as any other.
            Domain::Bits { mask } => Const::I64((self.rng.random::<u64>() & mask) as i64),
        }
    }

    fn interval(&mut self, lo: f64, hi: f64) -> f64 {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return f64::NAN;
        }
        match (lo.is_finite(), hi.is_finite()) {
            (true, true) => {
                let t: f64 = self.rng.random_range(0.0..=1.0);
                (lo + t * (hi - lo)).clamp(lo, hi)
            }
            // Beyond the finite bound (a bound of a narrowed domain often stands for an open end),
            // at the bound's own scale, so that a large bound does not absorb the step.
            (true, false) => lo + self.positive() * lo.abs().max(1.0),
            (false, true) => hi - self.positive() * hi.abs().max(1.0),
            (false, false) => self.real(),
        }
    }
}

impl ThetaSource for Sampler {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let value = self.draw(domain);
        self.drawn.push(value);
        Ok(value)
    }

    fn choice(&mut self, n: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let k = self.rng.random_range(0..n.max(1));
        self.drawn.push(Const::I64(i64::from(k)));
        Ok(k)
    }
}

/// A tape as users write it: `1.5, 2, true`.
pub fn format_tape(values: &[Const]) -> String {
    values
        .iter()
        .map(|v| match v {
            Const::F64(x) => format_f64(*x),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A tape for a message: the whole tape when it is short, else its first `keep` values and how
/// many there are (the PGF of a deep recursion records millions).
pub fn format_tape_brief(values: &[Const], keep: usize) -> String {
    if values.len() <= keep {
        return format_tape(values);
    }
    format!(
        "{}, … ({} values)",
        format_tape(&values[..keep]),
        values.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_says_where_each_read_can_be_on_the_tape() {
        let program = crate::Program::parse(
            "t.pinv",
            "fn mul_add(x: f64, y: f64, z: f64) -> f64 { x * y + z }
             fn walk(x: f64, n: i64) -> f64 {
                 let mut a = x;
                 let mut i = 0;
                 while i < n { a = a * 0.5; i = i + 1; }
                 a
             }",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let inverse = program.invert("mul_add").unwrap_or_else(|e| panic!("{e}"));
        let slots = &inverse.schema().slots;
        // z's read comes first on every path; x's (a nonzero factor) after z's and, on the
        // paths where the settle check fails, after z's offset.
        assert_eq!(slots[0].positions, Some(vec![0]));
        let x = slots
            .iter()
            .find(|s| {
                matches!(
                    s.kind,
                    SlotKind::Value {
                        domain: Domain::NonzeroReal,
                        ..
                    }
                )
            })
            .expect("a nonzero factor");
        assert_eq!(x.positions, Some(vec![1, 2]));
        // The sampled tape agrees: with the settle check passing, x is the second value.
        let x0 = [Const::F64(2.0), Const::F64(3.0), Const::F64(4.0)];
        let theta = inverse.pgf(&x0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(theta, [Const::F64(4.0), Const::F64(2.0)]);
        // Reads in a loop, and after one, are at positions that vary.
        let inverse = program.invert("walk").unwrap_or_else(|e| panic!("{e}"));
        let after_loop = inverse
            .schema()
            .slots
            .iter()
            .filter(|s| s.positions.is_none())
            .count();
        assert!(after_loop > 0, "{}", inverse.schema());
    }

    #[test]
    fn a_long_tape_is_cut_short_in_messages() {
        let tape: Vec<Const> = (0..100).map(Const::I64).collect();
        assert_eq!(format_tape_brief(&tape[..3], 3), "0, 1, 2");
        assert_eq!(format_tape_brief(&tape, 3), "0, 1, 2, … (100 values)");
    }

    /// The previous implementation (dominator sets by iteration): the reference.
    fn unconditional_by_sets(module: &Module, id: FuncId) -> HashSet<Block> {
        let f = &module.functions[id];
        let order = f.reachable_blocks();
        let index = |b: Block| order.iter().position(|&x| x == b);
        let n = order.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, &b) in order.iter().enumerate() {
            for s in f.successors(b) {
                if let Some(j) = index(s) {
                    preds[j].push(i);
                }
            }
        }
        let mut dom: Vec<Vec<bool>> = vec![vec![true; n]; n];
        if n > 0 {
            dom[0] = (0..n).map(|i| i == 0).collect();
        }
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..n {
                let mut new: Vec<bool> = vec![!preds[i].is_empty(); n];
                for &p in &preds[i] {
                    for k in 0..n {
                        new[k] = new[k] && dom[p][k];
                    }
                }
                new[i] = true;
                if new != dom[i] {
                    dom[i] = new;
                    changed = true;
                }
            }
        }
        let returns: Vec<usize> = (0..n).filter(|&i| f.ends_in_return(order[i])).collect();
        (0..n)
            .filter(|&k| returns.iter().all(|&r| dom[r][k]))
            .map(|k| order[k])
            .collect()
    }

    /// The blocks every returning run passes through, by the dominator tree, are those the
    /// dominator sets gave, for every generated inverse of the corpus.
    #[test]
    fn unconditional_blocks_by_the_dominator_tree() {
        let mut compared = 0;
        for (_, program) in crate::test_corpus::programs() {
            for (_, f) in program.module().iter() {
                if f.kind != FuncKind::Fn {
                    continue;
                }
                let Ok(inverse) = program.invert(&f.name) else {
                    continue;
                };
                let m = inverse.module();
                for (id, g) in m.iter() {
                    if matches!(g.kind, FuncKind::GeneratedInverse { .. }) {
                        assert_eq!(
                            unconditional_blocks(g, &DomTree::compute(g)),
                            unconditional_by_sets(m, id),
                            "{}",
                            g.name
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 20, "{compared}");
    }
}
