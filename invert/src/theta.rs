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
use pinv_core::ir::{Block, Const, Domain, FuncId, FuncKind, InstKind, Module, Type};
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
        let mut schema = ThetaSchema::default();
        let mut stack = Vec::new();
        collect(
            module,
            inverse,
            false,
            source,
            &mut schema.slots,
            &mut stack,
        );
        schema
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
            let when = if s.conditional {
                " (on some paths)"
            } else {
                ""
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

fn collect(
    module: &Module,
    id: FuncId,
    conditional: bool,
    source: Option<&SourceFile>,
    out: &mut Vec<ThetaSlot>,
    stack: &mut Vec<FuncId>,
) {
    if stack.contains(&id) {
        return;
    }
    stack.push(id);
    let f = &module.functions[id];
    let always = unconditional_blocks(module, id);
    for (block, inst) in f.insts_in_layout() {
        let data = &f.insts[inst];
        let cond = conditional || !always.contains(&block);
        let slot = |kind, role: &str| ThetaSlot {
            function: f.name.clone(),
            kind,
            role: role.to_string(),
            span: data.span,
            location: source.map(|s| s.location(data.span)),
            conditional: cond,
        };
        match &data.kind {
            InstKind::Theta {
                domain,
                role,
                within,
            } => out.push(slot(
                SlotKind::Value {
                    domain: *domain,
                    narrowed: within.is_some(),
                },
                role,
            )),
            InstKind::Choice { n, role } => out.push(slot(SlotKind::Choice { n: *n }, role)),
            InstKind::Call { callee, .. } => {
                if matches!(
                    module.functions[*callee].kind,
                    FuncKind::GeneratedInverse { .. }
                ) {
                    collect(module, *callee, cond, source, out, stack);
                }
            }
            _ => {}
        }
    }
    stack.pop();
}

/// The blocks every run that returns passes through: those that dominate every `return`.
fn unconditional_blocks(module: &Module, id: FuncId) -> HashSet<Block> {
    let f = &module.functions[id];
    let doms = pinv_core::ir::dominators::DomTree::compute(f);
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
                            unconditional_blocks(m, id),
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
