//! A harness that runs inverse rules the way inversion will: as IR, in the reference interpreter.
//!
//! For one opcode and one known/unknown [`Pattern`], a [`Case`] builds two IR functions with the
//! rule the stack finds:
//!
//! - the **inverse** (`FuncKind::GeneratedInverse`), written by the rule in [`Mode::Inverse`]:
//!   parameters `z` and then the known operands in operand order; it returns every operand;
//! - the **PGF** (`FuncKind::GeneratedPgf`), written in [`Mode::Pgf`]: parameters every operand;
//!   it computes `z` with the forward opcode, then lets the rule record θ; it returns nothing.
//!
//! Both are checked with the IR verifier, then run with [`Interpreter`]. The two properties of
//! the rule contract (see [`crate::rule`]) are then one call each:
//!
//! - [`Case::soundness`]: for an output `z`, known operands and a θ source (usually
//!   [`RandomTheta`]), the inverse either fails a `check` or returns operands whose forward value
//!   is `z` ([`close`]: exact for i64 and bool and for rules that say they are exact, within the
//!   tolerance for other f64 rules), with the known operands given back unchanged. Any other
//!   error (a trap, malformed IR, a θ outside its domain) is a failure.
//! - [`Case::round_trip`]: for operands `x`, the PGF records a tape, and the inverse run on
//!   `op(x)` with that tape reads all of it and returns `x` again (within the tolerance for f64).
//!   Every θ it reads must be one the rule documents ([`RuleDoc::thetas`], same role and
//!   domain), so the catalogue cannot drift from the code.
//!
//! The samplers ([`Rng`], [`sample_f64`], [`sample_i64`], [`sample_operands`],
//! [`sample_domain`], [`edge_values`]) draw values over many orders of magnitude, with zeros,
//! signed zeros, infinities, NaN, integer extremes and domain bounds often enough to matter. They
//! are deterministic given a seed, so a failure can be replayed.

use crate::emit::{Emitter, Mode};
use crate::overlay::{Callee, Stack};
use crate::pattern::{Arg, Knowledge, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError, ThetaKind};
use pinv_core::interp::{
    Interpreter, RuntimeError, RuntimeErrorKind, TapeRecorder, TapeSource, ThetaAddress,
    ThetaError, ThetaSource,
};
use pinv_core::ir::{Const, Domain, FuncId, FuncKind, Function, Module, Opcode, Signature, Type};
use pinv_core::semantics;
use pinv_core::Span;
use std::fmt;
use std::sync::Arc;

/// The default relative tolerance of f64 comparisons: `|a − b| ≤ TOLERANCE · max(1, |b|)`.
pub const TOLERANCE: f64 = 1e-9;

// ---------------------------------------------------------------------------------------------
// Random numbers

pub use pinv_core::rng::Rng;

// ---------------------------------------------------------------------------------------------
// Values

/// The f64 values every f64 rule is tried on: zeros, infinities, NaN, the extremes, the domain
/// bounds of asin/acos/log/sqrt and their neighbours, saturation points of exp/tanh/cosh, large
/// integers, and a few ordinary numbers.
pub const F64_EDGES: &[f64] = &[
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    -7.0,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    1.0 - f64::EPSILON / 2.0,
    1.0 + f64::EPSILON,
    -1.0 - f64::EPSILON,
    std::f64::consts::FRAC_PI_2,
    -std::f64::consts::FRAC_PI_2,
    std::f64::consts::PI,
    1e-300,
    1e300,
    709.8,
    -745.2,
    20.0,
    1e10,
    9007199254740993.0,
    9_223_372_036_854_775_808.0,
    -9_223_372_036_854_775_808.0,
];

/// The i64 values every i64 rule is tried on.
pub const I64_EDGES: &[i64] = &[
    0,
    1,
    -1,
    2,
    -2,
    3,
    7,
    -8,
    63,
    64,
    65,
    -64,
    1 << 32,
    (1 << 53) + 1,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    i64::MAX - 1,
    i64::MIN / 2,
    0x5555_5555_5555_5555,
];

/// The edge values of a type, as constants.
pub fn edge_values(ty: Type) -> Vec<Const> {
    match ty {
        Type::F64 => F64_EDGES.iter().map(|&x| Const::F64(x)).collect(),
        Type::I64 => I64_EDGES.iter().map(|&x| Const::I64(x)).collect(),
        Type::Bool => vec![Const::Bool(false), Const::Bool(true)],
    }
}

/// An f64 over many orders of magnitude: often ordinary, sometimes 0, ±0, ±inf, NaN, tiny,
/// huge, an integer, or any bit pattern.
pub fn sample_f64(rng: &mut Rng) -> f64 {
    let sign = if rng.chance(0.5) { -1.0 } else { 1.0 };
    match rng.below(100) {
        0..=7 => *rng.pick(F64_EDGES),
        8..=11 => sign * 0.0,
        12..=19 => rng.range(-10, 10) as f64,
        20..=24 => rng.range(-40, 40) as f64 / 8.0,
        25..=79 => sign * (1.0 + 9.0 * rng.unit()) * 10f64.powi(rng.range(-8, 8) as i32),
        80..=91 => sign * (1.0 + 9.0 * rng.unit()) * 10f64.powi(rng.range(-310, 307) as i32),
        92..=95 => f64::from_bits(rng.next_u64()),
        96 | 97 => sign * f64::INFINITY,
        _ => f64::NAN,
    }
}

/// An i64: often small or 0, sometimes an extreme, a power of two, or any bit pattern.
pub fn sample_i64(rng: &mut Rng) -> i64 {
    match rng.below(100) {
        0..=14 => 0,
        15..=39 => rng.range(-10, 10),
        40..=49 => *rng.pick(I64_EDGES),
        50..=59 => {
            let p = 1i64.wrapping_shl(rng.below(64) as u32);
            p.wrapping_add(rng.range(-2, 2))
        }
        60..=79 => {
            let v = (rng.next_u64() >> rng.below(64)) as i64;
            if rng.chance(0.5) {
                v.wrapping_neg()
            } else {
                v
            }
        }
        _ => rng.next_u64() as i64,
    }
}

/// A value of type `ty` (see [`sample_f64`], [`sample_i64`]).
pub fn sample_value(rng: &mut Rng, ty: Type) -> Const {
    match ty {
        Type::F64 => Const::F64(sample_f64(rng)),
        Type::I64 => Const::I64(sample_i64(rng)),
        Type::Bool => Const::Bool(rng.chance(0.5)),
    }
}

/// Operands for `op`, biased towards its interesting inputs: the domain of asin/acos/log/sqrt,
/// the unsaturated range of exp/sinh/cosh/tanh, integer exponents of negative bases, shift
/// counts below 64, related pairs (equal, opposite, nearly equal) for binary operations, ...
pub fn sample_operands(rng: &mut Rng, op: Opcode) -> Vec<Const> {
    use Opcode::*;
    let mut xs: Vec<Const> = op
        .arg_types()
        .iter()
        .map(|&t| sample_value(rng, t))
        .collect();
    let biased = rng.chance(0.7);
    let f = |rng: &mut Rng, lo: f64, hi: f64| Const::F64(lo + (hi - lo) * rng.unit());
    if biased {
        match op {
            Asin | Acos => {
                xs[0] = if rng.chance(0.2) {
                    Const::F64(*rng.pick(&[1.0, -1.0, 1.0 - 1e-16, -1.0 + 1e-16, 0.0]))
                } else {
                    f(rng, -1.0, 1.0)
                }
            }
            Log | Sqrt => {
                if let Const::F64(x) = xs[0] {
                    xs[0] = Const::F64(x.abs());
                }
            }
            Exp | Sinh | Cosh | Tanh | Sin | Cos | Tan => {
                xs[0] = f(rng, -30.0, 30.0);
            }
            Pow => {
                let choice = rng.below(4);
                let base = f(rng, -10.0, 10.0).as_f64().unwrap_or(0.0);
                let exp = match choice {
                    0 => rng.range(-6, 6) as f64,
                    1 => rng.range(-40, 40) as f64 / 8.0,
                    _ => sample_f64(rng),
                };
                let base = if choice == 1 { base.abs() } else { base };
                xs = vec![Const::F64(base), Const::F64(exp)];
            }
            FcvtToI64 => {
                xs[0] = if rng.chance(0.5) {
                    f(rng, -100.0, 100.0)
                } else {
                    Const::F64(sample_f64(rng).clamp(-1e19, 1e19))
                }
            }
            Ishl | Ishr => xs[1] = Const::I64(rng.range(0, 63)),
            _ => {}
        }
    }
    if xs.len() == 2 && rng.chance(0.3) {
        let a = xs[0];
        xs[1] = match (a, rng.below(3)) {
            (Const::F64(a), 0) => Const::F64(a),
            (Const::F64(a), 1) => Const::F64(-a),
            (Const::F64(a), _) => Const::F64(a * (1.0 + 4.0 * f64::EPSILON)),
            (Const::I64(a), 0) => Const::I64(a),
            (Const::I64(a), 1) => Const::I64(a.wrapping_neg()),
            (Const::I64(a), _) => Const::I64(a.wrapping_add(1)),
            (other, _) => other,
        };
        if op == Opcode::Ishl || op == Opcode::Ishr {
            xs[1] = Const::I64(rng.range(0, 70));
        }
    }
    xs
}

/// A value drawn from `domain`, with its bounds often.
pub fn sample_domain(rng: &mut Rng, domain: Domain) -> Const {
    match domain {
        Domain::Real => Const::F64(sample_f64(rng)),
        Domain::NonzeroReal => loop {
            let x = sample_f64(rng);
            if x != 0.0 {
                return Const::F64(x);
            }
        },
        // NaN is always in a narrowed real, and alone where no number is left.
        Domain::RealWithin { lo, hi }
            if rng.below(20) == 0 || lo.is_nan() || hi.is_nan() || lo > hi =>
        {
            Const::F64(f64::NAN)
        }
        Domain::Interval { lo, hi } | Domain::RealWithin { lo, hi } => {
            let x = match rng.below(10) {
                0 => lo,
                1 => hi,
                _ => {
                    let mag = sample_f64(rng).abs();
                    let mag = if mag.is_finite() { mag } else { 1.0 };
                    match (lo.is_finite(), hi.is_finite()) {
                        (true, true) => {
                            let u = rng.unit();
                            lo * (1.0 - u) + hi * u
                        }
                        (true, false) => lo + mag,
                        (false, true) => hi - mag,
                        (false, false) => sample_f64(rng),
                    }
                }
            };
            let x = if x.is_nan() { lo } else { x.clamp(lo, hi) };
            Const::F64(x)
        }
        Domain::Int => Const::I64(sample_i64(rng)),
        Domain::Bits { mask } => Const::I64((sample_i64(rng) as u64 & mask) as i64),
        Domain::IntRange { lo, hi } => {
            let x = match rng.below(10) {
                0 => lo,
                1 => hi,
                2..=4 => lo.saturating_add(rng.range(0, 10)).min(hi),
                5 | 6 => sample_i64(rng).clamp(lo, hi),
                _ => rng.range(lo, hi),
            };
            Const::I64(x)
        }
        Domain::Bool => Const::Bool(rng.chance(0.5)),
    }
}

/// A θ source that draws every read from its domain ([`sample_domain`]) and choices uniformly,
/// and remembers what it gave (for failure reports).
#[derive(Clone, Debug)]
pub struct RandomTheta {
    rng: Rng,
    /// The values given so far, in order (choices as `I64`).
    pub given: Vec<Const>,
}

impl RandomTheta {
    pub fn new(seed: u64) -> RandomTheta {
        RandomTheta {
            rng: Rng::new(seed),
            given: Vec::new(),
        }
    }
}

impl ThetaSource for RandomTheta {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let v = sample_domain(&mut self.rng, domain);
        self.given.push(v);
        Ok(v)
    }

    fn choice(&mut self, n: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let k = self.rng.below(u64::from(n.max(1))) as u32;
        self.given.push(Const::I64(i64::from(k)));
        Ok(k)
    }
}

/// A [`TapeSource`] that also notes the role and kind of every read.
#[derive(Clone, Debug)]
pub struct TracingTape {
    pub tape: TapeSource,
    /// Every read so far: its role and its domain or choice count.
    pub reads: Vec<(String, ThetaKind)>,
}

impl TracingTape {
    pub fn new(values: Vec<Const>) -> TracingTape {
        TracingTape {
            tape: TapeSource::new(values),
            reads: Vec::new(),
        }
    }
}

impl ThetaSource for TracingTape {
    fn theta(&mut self, domain: Domain, at: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        self.reads
            .push((at.role.to_string(), ThetaKind::Value { domain }));
        self.tape.theta(domain, at)
    }

    fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        self.reads
            .push((at.role.to_string(), ThetaKind::Choice { n }));
        self.tape.choice(n, at)
    }
}

/// Whether `doc` lists a θ read with this role and kind. A documented domain covers reads from
/// any domain inside it: rules narrow domains for constant operands and known operand ranges
/// (a remainder of a constant divisor `c` is read from `-(|c|-1)..=|c|-1`, documented as `int`).
pub fn documents(doc: &RuleDoc, role: &str, kind: &ThetaKind) -> bool {
    doc.thetas.iter().any(|t| {
        t.role == role
            && match (&t.kind, kind) {
                (ThetaKind::Value { domain: outer }, ThetaKind::Value { domain: inner }) => {
                    domain_within(*inner, *outer)
                }
                (a, b) => a == b,
            }
    })
}

/// Whether every value of `inner` is in `outer`.
pub fn domain_within(inner: Domain, outer: Domain) -> bool {
    use Domain::*;
    match (inner, outer) {
        (a, b) if a == b => true,
        (NonzeroReal | Interval { .. } | RealWithin { .. }, Real) => true,
        (Interval { lo, hi } | RealWithin { lo, hi }, RealWithin { lo: l, hi: h }) => {
            l <= lo && hi <= h
        }
        (Interval { lo, hi }, NonzeroReal) => lo > 0.0 || hi < 0.0,
        (Interval { lo, hi }, Interval { lo: l, hi: h }) => l <= lo && hi <= h,
        (IntRange { .. } | Bits { .. }, Int) => true,
        (Bits { mask: inner }, Bits { mask: outer }) => inner & !outer == 0,
        (IntRange { lo, hi }, IntRange { lo: l, hi: h }) => l <= lo && hi <= h,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing

/// `actual` equals `expected`: exactly for i64 and bool; for f64 equal as numbers (±0 alike,
/// equal infinities), both NaN, or (with `tol`) `|a − b| ≤ tol · max(1, |b|)`.
pub fn close(actual: Const, expected: Const, tol: f64) -> bool {
    actual.close_to(expected, tol)
}

fn show(values: &[Const]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Cases

/// Why a case could not be built, or a property that does not hold, with what to replay it.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl From<RuleError> for Failure {
    fn from(e: RuleError) -> Failure {
        Failure(format!("the rule failed to emit: {e}"))
    }
}

/// How one soundness trial ended (both are fine).
#[derive(Clone, Debug, PartialEq)]
pub enum Trial {
    /// The inverse returned operands whose forward value is the output.
    Solved(Vec<Const>),
    /// The inverse failed a domain check.
    Rejected(String),
}

/// How one round trip ended when it did not fail.
#[derive(Clone, Debug, PartialEq)]
pub enum RoundTrip {
    /// The inverse gave the operands back.
    Reached,
    /// The forward operation has no value for these operands (an integer division trap).
    NoOutput,
}

/// One (opcode, pattern) with its rule, and the inverse and PGF built from it.
pub struct Case {
    pub op: Opcode,
    pub pattern: Pattern,
    pub rule: Arc<dyn InverseRule>,
    /// The rule's documentation of this pattern.
    pub doc: RuleDoc,
    /// Whether the rule's documentation says it reproduces the output exactly.
    pub exact: bool,
    /// The known operands, if they are baked in as constants ([`Case::with_constants`]).
    pub constants: Option<Vec<Const>>,
    pub module: Module,
    pub inverse: FuncId,
    pub pgf: FuncId,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({})", self.op, self.pattern, self.rule.name())
    }
}

/// The name of the generated functions of `op` and `pattern`, such as `fadd_uk`.
pub fn case_name(op: Opcode, pattern: &Pattern) -> String {
    let code: String = pattern
        .0
        .iter()
        .map(|k| match k {
            Knowledge::Known => 'k',
            Knowledge::Unknown => 'u',
        })
        .collect();
    format!("{}_{code}", op.name())
}

impl Case {
    /// The case for `op` and `pattern` with the rule `stack` finds.
    pub fn new(stack: &Stack, op: Opcode, pattern: Pattern) -> Result<Case, Failure> {
        let found = stack
            .lookup(&Callee::Prim(op), &pattern)
            .found
            .ok_or_else(|| Failure(format!("no rule for {op} {pattern}")))?;
        Case::with_rule(found.rule, op, pattern)
    }

    /// The case for `op` and `pattern` with a given rule.
    pub fn with_rule(
        rule: Arc<dyn InverseRule>,
        op: Opcode,
        pattern: Pattern,
    ) -> Result<Case, Failure> {
        Case::build(rule, op, pattern, None, Vec::new())
    }

    /// The case for `op` and `pattern` with the known operands fixed to the constants `known` (in
    /// operand order), written into both functions as `const` instructions, as they are when
    /// inversion meets a literal: rules may specialise on them (a constant divisor's remainder
    /// range, ...). The inverse then takes only `z`, and the PGF only the unknown operands;
    /// [`Case::run_inverse`], [`Case::run_pgf`], [`Case::soundness`] and [`Case::round_trip`]
    /// still take all of them and check that the known ones are the constants.
    pub fn with_constants(
        stack: &Stack,
        op: Opcode,
        pattern: Pattern,
        known: &[Const],
    ) -> Result<Case, Failure> {
        let found = stack
            .lookup(&Callee::Prim(op), &pattern)
            .found
            .ok_or_else(|| Failure(format!("no rule for {op} {pattern}")))?;
        Case::build(found.rule, op, pattern, Some(known.to_vec()), Vec::new())
    }

    /// The case for `op` and `pattern`, with the inverse told the range of each operand
    /// ([`Emitter::with_operand_ranges`]); rules may narrow the domains of θ that give operands.
    /// Round trips then hold for operands in those ranges.
    pub fn with_operand_ranges(
        stack: &Stack,
        op: Opcode,
        pattern: Pattern,
        ranges: Vec<Option<(f64, f64)>>,
    ) -> Result<Case, Failure> {
        let found = stack
            .lookup(&Callee::Prim(op), &pattern)
            .found
            .ok_or_else(|| Failure(format!("no rule for {op} {pattern}")))?;
        Case::build(found.rule, op, pattern, None, ranges)
    }

    fn build(
        rule: Arc<dyn InverseRule>,
        op: Opcode,
        pattern: Pattern,
        constants: Option<Vec<Const>>,
        ranges: Vec<Option<(f64, f64)>>,
    ) -> Result<Case, Failure> {
        if pattern.arity() != op.arity() || !rule.covers(&pattern) {
            return Err(Failure(format!(
                "rule `{}` does not cover {op} {pattern}",
                rule.name()
            )));
        }
        let types = op.arg_types();
        let known_types: Vec<Type> = types
            .iter()
            .zip(&pattern.0)
            .filter(|(_, k)| **k == Knowledge::Known)
            .map(|(t, _)| *t)
            .collect();
        if let Some(cs) = &constants {
            let ts: Vec<Type> = cs.iter().map(|c| c.ty()).collect();
            if ts != known_types {
                return Err(Failure(format!(
                    "{op} {pattern}: constants {} for known operands of types {known_types:?}",
                    show(cs)
                )));
            }
        }
        let baked = constants.is_some();
        let name = if baked {
            format!("{}_const", case_name(op, &pattern))
        } else {
            case_name(op, &pattern)
        };
        let span = Span::default();

        // The inverse: (z, known operands unless baked...) -> operands.
        let mut params = vec![op.result_type()];
        if !baked {
            params.extend(known_types.iter().copied());
        }
        let kind = FuncKind::GeneratedInverse { of: name.clone() };
        let mut inv = Function::new(
            kind.symbol(&name),
            kind,
            Signature {
                params,
                returns: types.to_vec(),
            },
        );
        let entry = inv.create_entry();
        let entry_params = inv.blocks[entry].params.clone();
        let z = entry_params[0];
        let known_values: Vec<pinv_core::ir::Value> = match &constants {
            Some(cs) => cs.iter().map(|&c| inv.ins_const(entry, c, span)).collect(),
            None => entry_params[1..].to_vec(),
        };
        let mut known = known_values.iter();
        let args: Vec<Arg> = pattern
            .0
            .iter()
            .map(|k| match k {
                Knowledge::Known => Arg::Known(*known.next().expect("a value per known")),
                Knowledge::Unknown => Arg::Unknown,
            })
            .collect();
        let mut e =
            Emitter::new(&mut inv, entry, Mode::Inverse, span).with_operand_ranges(ranges.clone());
        let outs = rule.emit_inverse(&mut e, &[z], &args)?;
        let end = e.block();
        if outs.len() != types.len() {
            return Err(Failure(format!(
                "rule `{}` returned {} operands for {op}, which has {}",
                rule.name(),
                outs.len(),
                types.len()
            )));
        }
        inv.ins_return(end, outs, span);

        // The PGF: (operands..., or the unknown ones if baked) -> (), recording θ.
        let pgf_params: Vec<Type> = if baked {
            types
                .iter()
                .zip(&pattern.0)
                .filter(|(_, k)| **k == Knowledge::Unknown)
                .map(|(t, _)| *t)
                .collect()
        } else {
            types.to_vec()
        };
        let kind = FuncKind::GeneratedPgf { of: name.clone() };
        let mut pgf = Function::new(
            kind.symbol(&name),
            kind,
            Signature {
                params: pgf_params,
                returns: Vec::new(),
            },
        );
        let entry = pgf.create_entry();
        let params = pgf.blocks[entry].params.clone();
        let xs: Vec<pinv_core::ir::Value> = match &constants {
            None => params,
            Some(cs) => {
                let mut cs = cs.iter();
                let mut ps = params.iter();
                let mut xs = Vec::new();
                for k in &pattern.0 {
                    xs.push(match k {
                        Knowledge::Known => {
                            let c = *cs.next().expect("a constant per known");
                            pgf.ins_const(entry, c, span)
                        }
                        Knowledge::Unknown => *ps.next().expect("a parameter per unknown"),
                    });
                }
                xs
            }
        };
        let mut e = Emitter::new(&mut pgf, entry, Mode::Pgf, span).with_operand_ranges(ranges);
        let z = e.prim(op, &xs);
        rule.emit_pgf(&mut e, &[z], &xs, &pattern)?;
        let end = e.block();
        pgf.ins_return(end, Vec::new(), span);

        let mut module = Module::new();
        let inverse = module
            .add(inv)
            .map_err(|_| Failure("duplicate function".into()))?;
        let pgf = module
            .add(pgf)
            .map_err(|_| Failure("duplicate function".into()))?;
        pinv_core::ir::verify::verify_module(&module).map_err(|e| {
            Failure(format!(
                "{op} {pattern}: the generated IR does not verify: {e}"
            ))
        })?;
        let doc = rule.doc(&pattern);
        let exact = doc.exact;
        Ok(Case {
            op,
            pattern,
            rule,
            doc,
            exact,
            constants,
            module,
            inverse,
            pgf,
        })
    }

    /// Every case of the opcodes in `ops`: every pattern of each, all-known included.
    pub fn all(stack: &Stack, ops: &[Opcode]) -> Result<Vec<Case>, Failure> {
        let mut cases = Vec::new();
        for &op in ops {
            for pattern in Pattern::every(op.arity()) {
                cases.push(Case::new(stack, op, pattern)?);
            }
        }
        Ok(cases)
    }

    /// The inverse and the PGF in the IR text form.
    pub fn text(&self) -> String {
        pinv_core::ir::write::write_module(&self.module, &Default::default())
    }

    /// The known operands of `x` under this case's pattern.
    pub fn known_of(&self, x: &[Const]) -> Vec<Const> {
        x.iter()
            .zip(&self.pattern.0)
            .filter(|(_, k)| **k == Knowledge::Known)
            .map(|(v, _)| *v)
            .collect()
    }

    /// Runs the inverse on `z` and the known operands.
    pub fn run_inverse(
        &self,
        z: Const,
        known: &[Const],
        theta: &mut dyn ThetaSource,
    ) -> Result<Vec<Const>, RuntimeError> {
        let mut args = vec![z];
        if self.constants.is_none() {
            args.extend_from_slice(known);
        }
        Interpreter::new(&self.module).call_with_theta(self.inverse, &args, theta)
    }

    /// Runs the PGF on operands `x` and returns the tape it records.
    pub fn run_pgf(&self, x: &[Const]) -> Result<Vec<Const>, RuntimeError> {
        let args: Vec<Const> = if self.constants.is_some() {
            x.iter()
                .zip(&self.pattern.0)
                .filter(|(_, k)| **k == Knowledge::Unknown)
                .map(|(v, _)| *v)
                .collect()
        } else {
            x.to_vec()
        };
        let mut recorder = TapeRecorder::new();
        Interpreter::new(&self.module).call_with_theta(self.pgf, &args, &mut recorder)?;
        Ok(recorder.into_values())
    }

    /// Whether `known` are the baked constants (always true without them).
    fn matches_constants(&self, known: &[Const]) -> bool {
        self.constants.as_deref().is_none_or(|cs| cs == known)
    }

    /// The case, for failure messages; with the environment variable `PINV_SHOW_IR` set, also
    /// the IR.
    fn context(&self) -> String {
        let mut s = format!("{} {} (rule `{}`)", self.op, self.pattern, self.rule.name());
        if std::env::var_os("PINV_SHOW_IR").is_some() {
            s.push_str(&format!("\n{}\n", self.text()));
        }
        s
    }

    /// One soundness trial: runs the inverse on `z` and `known` with θ from `theta`, and checks
    /// that it either fails a check or returns operands that give back `z` (see the module docs).
    pub fn soundness(
        &self,
        z: Const,
        known: &[Const],
        theta: &mut RandomTheta,
    ) -> Result<Trial, Failure> {
        let fail = |what: String, theta: &RandomTheta| {
            Failure(format!(
                "soundness of {}: z = {z}, known = {}, θ = {}: {what}",
                self.context(),
                show(known),
                show(&theta.given)
            ))
        };
        if !self.matches_constants(known) {
            return Err(fail(
                "the known operands are not the constants of the case".to_string(),
                theta,
            ));
        }
        let out = match self.run_inverse(z, known, theta) {
            Ok(out) => out,
            Err(RuntimeError {
                kind: RuntimeErrorKind::CheckFailed { reason },
                ..
            }) => return Ok(Trial::Rejected(reason)),
            Err(e) => {
                return Err(fail(
                    format!("the inverse failed without a check: {e}"),
                    theta,
                ))
            }
        };
        let types: Vec<Type> = out.iter().map(|c| c.ty()).collect();
        if types != self.op.arg_types() {
            return Err(fail(format!("returned {}", show(&out)), theta));
        }
        if self.known_of(&out) != known {
            return Err(fail(
                format!("returned {}, which changes a known operand", show(&out)),
                theta,
            ));
        }
        let again = semantics::eval(self.op, &out).map_err(|e| {
            fail(
                format!(
                    "returned {}, where {} has no value: {e}",
                    show(&out),
                    self.op
                ),
                theta,
            )
        })?;
        let tol = if self.exact { 0.0 } else { TOLERANCE };
        if !close(again, z, tol) {
            return Err(fail(
                format!("returned {}, whose {} is {again}", show(&out), self.op),
                theta,
            ));
        }
        Ok(Trial::Solved(out))
    }

    /// The round trip: the inverse, run on `op(x)` with the tape the PGF records for `x`, reads
    /// the whole tape and returns `x` (within the tolerance for f64).
    pub fn round_trip(&self, x: &[Const]) -> Result<RoundTrip, Failure> {
        let Ok(z) = semantics::eval(self.op, x) else {
            return Ok(RoundTrip::NoOutput);
        };
        let fail = |what: String| {
            Failure(format!(
                "round trip of {}: x = {}, z = {z}: {what}",
                self.context(),
                show(x)
            ))
        };
        if !self.matches_constants(&self.known_of(x)) {
            return Err(fail(
                "the known operands are not the constants of the case".into(),
            ));
        }
        let tape = self
            .run_pgf(x)
            .map_err(|e| fail(format!("the PGF failed: {e}")))?;
        let mut source = TracingTape::new(tape.clone());
        let out = self
            .run_inverse(z, &self.known_of(x), &mut source)
            .map_err(|e| fail(format!("with θ = {}, the inverse failed: {e}", show(&tape))))?;
        if !source.tape.remaining().is_empty() {
            return Err(fail(format!(
                "the inverse read {} of the {} θ values {}",
                source.tape.pos(),
                tape.len(),
                show(&tape)
            )));
        }
        if let Some((role, kind)) = source
            .reads
            .iter()
            .find(|(role, kind)| !documents(&self.doc, role, kind))
        {
            return Err(fail(format!(
                "the inverse read θ `{role}` ({kind}), which the rule's documentation does not list"
            )));
        }
        let same =
            out.len() == x.len() && out.iter().zip(x).all(|(&o, &xi)| close(o, xi, TOLERANCE));
        if !same {
            return Err(fail(format!(
                "with θ = {}, the inverse returned {}",
                show(&tape),
                show(&out)
            )));
        }
        Ok(RoundTrip::Reached)
    }
}
