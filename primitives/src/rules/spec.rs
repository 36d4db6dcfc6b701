//! Standard rules declared as data: a [`Spec`] is a rule's name, its arity, and closures for
//! what differs from one rule to the next (its doc, how it solves an operand, what its PGF
//! records). The [`InverseRule`] contract, the operand and output counts, and the shape of the
//! patterns are handled here once.
//!
//! Three shapes cover the standard rules:
//! - [`Spec::unary`]: `z = op(a)`; `solve(z)` gives a (reading θ as it needs), and
//!   [`Spec::records`] the θ from `(z, a)`.
//! - [`Spec::binary`]: `z = op(a, b)`, where with both operands unknown θ gives one of them (or
//!   [`Spec::both`] solves the two together) and the other is then solved as if it were known. Each side has a solver and a PGF,
//!   written with [`Spec::operand`], or, for f64 rules that [settle](super::settle)
//!   a closed-form candidate, with [`Spec::settled`]. [`Spec::finish`]
//!   adds what follows either side (for f64 rules, [`Spec::verified`]: the
//!   [`verify_forward`] step check).
//! - [`Spec::new`]: anything else (the inverse and the PGF of every pattern written out), still
//!   without the trait's boilerplate.
//!
//! A setter of one shape on a Spec of another (`.records` on a binary rule, `.operand` on a
//! unary one) panics where the rule is declared: it is a mistake in the declaration, and
//! ignoring it would leave a rule that fails only when the pattern comes up.
//!
//! ```
//! use pinv_core::ir::{Domain, Opcode};
//! use pinv_primitives::rules::ops::Ops;
//! use pinv_primitives::rules::spec::{Side::{Left, Right}, Spec};
//! use pinv_primitives::{RuleDoc, ThetaDoc, InverseRule, Pattern};
//!
//! // i64 `z = a + b` (wrapping): a = z − b, b = z − a; θ is b when both are unknown.
//! let add = Spec::binary("sub")
//!     .theta_first(Right, "right operand", |e, _| e.theta(Domain::Int, "right operand"))
//!     .operand(Left, |e, z, b| Ok(e.isub(z, b)), |_, _, _, _| Ok(()))
//!     .operand(Right, |e, z, a| Ok(e.isub(z, a)), |_, _, _, _| Ok(()))
//!     .doc(|p| {
//!         let thetas = if p.unknowns() == 2 {
//!             vec![ThetaDoc::value(Domain::Int, "right operand")]
//!         } else {
//!             Vec::new()
//!         };
//!         RuleDoc::exact(thetas, &[], "a = z − b")
//!     });
//! assert_eq!(add.name(), "sub");
//! assert!(add.covers(&Pattern::all_unknown(2)));
//! assert!(!add.covers(&Pattern::all_known(2)));
//! ```

use super::settle::{settle_guarded, settle_pgf_guarded};
use super::verify_forward;
use crate::emit::Emitter;
use crate::pattern::{Arg, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Value};
use std::fmt;

/// Declares a trait for closures of one signature (`Send + Sync + 'static`), with its blanket
/// impl: builders take `impl Trait` (closure types are still inferred from it) and keep
/// `Box<dyn Trait>`.
macro_rules! closure_trait {
    ($(#[$doc:meta])* $name:ident: Fn($($arg:ty),*) -> $out:ty) => {
        $(#[$doc])*
        pub trait $name: Fn($($arg),*) -> $out + Send + Sync + 'static {}
        impl<T: Fn($($arg),*) -> $out + Send + Sync + 'static> $name for T {}
    };
}

closure_trait! {
    /// What a rule reads and checks for a pattern.
    DocCode: Fn(&Pattern) -> RuleDoc
}
closure_trait! {
    /// A written-out inverse: `(e, outputs, operands)`.
    InverseCode: Fn(&mut Emitter<'_>, &[Value], &[Arg]) -> Result<Vec<Value>, RuleError>
}
closure_trait! {
    /// A written-out PGF: `(e, outputs, operands, pattern)`.
    PgfCode: Fn(&mut Emitter<'_>, &[Value], &[Value], &Pattern) -> Result<(), RuleError>
}
closure_trait! {
    /// A value from the output: a unary rule's operand, or an operand read from θ, `(e, z)`.
    Solve1: Fn(&mut Emitter<'_>, Value) -> Result<Value, RuleError>
}
closure_trait! {
    /// One operand of a binary rule from the output and the other operand: `(e, z, other)`.
    Solve2: Fn(&mut Emitter<'_>, Value, Value) -> Result<Value, RuleError>
}
closure_trait! {
    /// Both operands of a binary rule from the output: `(e, z)`.
    SolveBoth: Fn(&mut Emitter<'_>, Value) -> Result<(Value, Value), RuleError>
}
closure_trait! {
    /// The θ a unary rule reads, recorded from the output and the operand: `(e, z, a)`.
    Record1: Fn(&mut Emitter<'_>, Value, Value) -> Result<(), RuleError>
}
closure_trait! {
    /// The θ (part of) a binary rule reads, recorded from the forward values: `(e, z, a, b)`;
    /// also a binary rule's last checks, `(e, a, b, z)`.
    Record2: Fn(&mut Emitter<'_>, Value, Value, Value) -> Result<(), RuleError>
}
closure_trait! {
    /// A check of the output, `(e, z)`, returning the z the rule goes on with (z itself, or z
    /// moved onto the range where it is past an end by no more than the tolerance).
    CheckOutput: Fn(&mut Emitter<'_>, Value) -> Result<Value, RuleError>
}

/// `formula(e, z, other)`: an operand in closed form, with no checks and no θ.
type Formula = fn(&mut Emitter<'_>, Value, Value) -> Value;

/// Adds rules to a layer as rows of data, `Opcode => spec;`, one line each: rustfmt leaves
/// macro bodies as written, so a family of rules reads as a table.
macro_rules! rows {
    ($layer:ident; $($op:ident => $spec:expr;)*) => {
        $($layer.add(
            $crate::overlay::Callee::Prim(pinv_core::ir::Opcode::$op),
            $spec,
        );)*
    };
}
pub(crate) use rows;

/// A standard rule declared as data. See the module docs.
pub struct Spec {
    name: &'static str,
    arity: usize,
    /// Whether the rule covers the pattern of known operands only (a consistency check), not
    /// every pattern with an unknown one.
    known_only: bool,
    doc: Box<dyn DocCode>,
    body: Body,
}

enum Body {
    /// Written out: the inverse and the PGF for every pattern.
    Free {
        inverse: Box<dyn InverseCode>,
        pgf: Box<dyn PgfCode>,
    },
    /// `z = op(a)`.
    Unary {
        solve: Box<dyn Solve1>,
        pgf: Box<dyn Record1>,
    },
    /// `z = op(a, b)`: each operand from the other, and both together or one from θ first.
    Binary(Box<Binary>),
}

struct Binary {
    /// With both operands unknown (and no [`Spec::both`]): which operand θ gives, under what
    /// role, and how it is read; the other is then solved as if it were known.
    first: (Side, &'static str, Box<dyn Solve1>),
    left: Box<dyn Solve2>,
    pgf_left: Box<dyn Record2>,
    right: Box<dyn Solve2>,
    pgf_right: Box<dyn Record2>,
    finish: Option<Box<dyn Record2>>,
    /// Both operands unknown, when the rule does not read one of them from θ first.
    both: Option<(Box<dyn SolveBoth>, Box<dyn Record2>)>,
    /// Checks of the output before anything is solved.
    output_check: Option<Box<dyn CheckOutput>>,
}

/// An operand of a binary rule.
#[derive(Clone, Copy, Debug)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    /// The operand's position: 0 for the left, 1 for the right.
    pub fn index(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
}

/// The closed form of one operand of a binary rule, from the output `z` and the other operand,
/// by one primitive.
#[derive(Clone, Copy, Debug)]
pub enum Closed {
    /// `inv(z, other)`, as `a = z − b` for `z = a + b`.
    ZThen(Opcode),
    /// `inv(other, z)`, as `b = a − z` for `z = a − b`.
    OtherThen(Opcode),
    /// `formula(e, z, other)`, for a closed form of more than one primitive.
    By(fn(&mut Emitter<'_>, Value, Value) -> Result<Value, RuleError>),
}

impl Closed {
    /// Emits the closed form.
    pub fn emit(self, e: &mut Emitter<'_>, z: Value, other: Value) -> Result<Value, RuleError> {
        match self {
            Closed::ZThen(inv) => Ok(e.prim(inv, &[z, other])),
            Closed::OtherThen(inv) => Ok(e.prim(inv, &[other, z])),
            Closed::By(formula) => formula(e, z, other),
        }
    }
}

/// When a [`Spec::settled_trusting`] closed form is trusted: `trusted(e, d, other)`, of the
/// candidate `d` and the known operand.
pub type Trusted = fn(&mut Emitter<'_>, Value, Value) -> Value;

fn missing(name: &'static str, what: &str) -> RuleError {
    RuleError::Malformed(format!("the rule `{name}` declares no {what}"))
}

impl Spec {
    /// A rule of `arity` operands whose inverse (`inverse(e, outputs, operands)`) and PGF
    /// (`pgf(e, outputs, operands, pattern)`) are written out. It covers every pattern with an
    /// unknown operand.
    pub fn new(
        name: &'static str,
        arity: usize,
        inverse: impl InverseCode,
        pgf: impl PgfCode,
    ) -> Spec {
        let body = Body::Free {
            inverse: Box::new(inverse),
            pgf: Box::new(pgf),
        };
        Spec::of(name, arity, body)
    }

    fn of(name: &'static str, arity: usize, body: Body) -> Spec {
        Spec {
            name,
            arity,
            known_only: false,
            doc: Box::new(|_| RuleDoc::exact(Vec::new(), &[], "")),
            body,
        }
    }

    /// A unary rule: `solve(e, z)` gives the operand; if it reads θ, [`Spec::records`] says how
    /// the PGF records it.
    pub fn unary(name: &'static str, solve: impl Solve1) -> Spec {
        let body = Body::Unary {
            solve: Box::new(solve),
            pgf: Box::new(|_, _, _| Ok(())),
        };
        Spec::of(name, 1, body)
    }

    /// A binary rule that solves each operand from the output and the other ([`Spec::operand`]);
    /// with both unknown, it reads one from θ first ([`Spec::theta_first`]), or solves both
    /// together ([`Spec::both`]).
    pub fn binary(name: &'static str) -> Spec {
        let absent = move |what: &'static str| -> Box<dyn Solve2> {
            Box::new(move |_, _, _| Err(missing(name, what)))
        };
        Spec::of(
            name,
            2,
            Body::Binary(Box::new(Binary {
                first: (
                    Side::Right,
                    "right operand",
                    Box::new(move |_, _| Err(missing(name, "θ for an operand"))),
                ),
                left: absent("solution for the left operand"),
                pgf_left: Box::new(|_, _, _, _| Ok(())),
                right: absent("solution for the right operand"),
                pgf_right: Box::new(|_, _, _, _| Ok(())),
                finish: None,
                both: None,
                output_check: None,
            })),
        )
    }

    /// A binary i64 rule in which each operand follows from z and the other, as for wrapping
    /// `+`, `−` and `^`: `left(e, z, b)` gives a, `right(e, z, a)` gives b, each with a summary
    /// of how; with both unknown the right operand is read from θ. Exact.
    pub fn each_from_other(
        name: &'static str,
        (left, a): (Formula, &'static str),
        (right, b): (Formula, &'static str),
    ) -> Spec {
        const RIGHT: &str = "right operand";
        let nothing = |_: &mut Emitter<'_>, _, _, _| Ok(());
        Spec::binary(name)
            .theta_first(Side::Right, RIGHT, move |e, _| e.theta(Domain::Int, RIGHT))
            .operand(Side::Left, move |e, z, b| Ok(left(e, z, b)), nothing)
            .operand(Side::Right, move |e, z, a| Ok(right(e, z, a)), nothing)
            .doc(
                move |pattern| match (pattern.is_known(0), pattern.is_known(1)) {
                    (false, false) => RuleDoc::exact(
                        vec![ThetaDoc::value(Domain::Int, RIGHT)],
                        &[],
                        &format!("b = θ, {a}"),
                    ),
                    (false, true) => RuleDoc::exact(Vec::new(), &[], a),
                    _ => RuleDoc::exact(Vec::new(), &[], b),
                },
            )
    }

    /// A unary rule that is a bijection undone by `inverse` (negations): no θ, no checks.
    pub fn bijection(
        name: &'static str,
        inverse: fn(&mut Emitter<'_>, Value) -> Value,
        summary: &'static str,
    ) -> Spec {
        Spec::unary(name, move |e, z| Ok(inverse(e, z)))
            .records(move |e, z, a| {
                // Nothing to record; but where the inverse holds another z than the forward
                // one ([`Emitter::replayed`]), it holds another a too, which the steps before
                // this one in the walk solve from.
                let held_z = e.replayed(z);
                if held_z != z {
                    let held = inverse(e, held_z);
                    e.note_replay(a, held);
                }
                Ok(())
            })
            .doc(move |_| RuleDoc::exact(Vec::new(), &[], summary))
    }

    /// Makes the rule cover the pattern whose operands are all known (and no other).
    pub fn known_operands(mut self) -> Spec {
        self.known_only = true;
        self
    }

    /// What the rule reads and checks, per pattern.
    pub fn doc(mut self, doc: impl DocCode) -> Spec {
        self.doc = Box::new(doc);
        self
    }

    /// The θ a unary rule's `solve` reads, recorded from the output and the operand:
    /// `records(e, z, a)`.
    pub fn records(mut self, f: impl Record1) -> Spec {
        match &mut self.body {
            Body::Unary { pgf, .. } => *pgf = Box::new(f),
            _ => panic!("`{}` is not a Spec::unary rule", self.name),
        }
        self
    }

    /// The binary part of a rule made with [`Spec::binary`]. A binary setter on any other rule
    /// is a mistake in its declaration, not something to ignore.
    fn binary_mut(&mut self) -> &mut Binary {
        match &mut self.body {
            Body::Binary(b) => b,
            _ => panic!("`{}` is not a Spec::binary rule", self.name),
        }
    }

    /// With both operands unknown, the one θ gives (`side`), read by `theta(e, z)`; the PGF
    /// records that operand itself under `role`.
    pub fn theta_first(mut self, side: Side, role: &'static str, theta: impl Solve1) -> Spec {
        let b = self.binary_mut();
        b.first = (side, role, Box::new(theta));
        self
    }

    /// One operand from the output and the other operand (`solve(e, z, other)`), and the θ it
    /// reads, recorded from the forward values (`pgf(e, z, a, b)`).
    pub fn operand(self, side: Side, solve: impl Solve2, pgf: impl Record2) -> Spec {
        self.side(side, Box::new(solve), Box::new(pgf))
    }

    fn side(mut self, side: Side, solve: Box<dyn Solve2>, pgf: Box<dyn Record2>) -> Spec {
        let b = self.binary_mut();
        match side {
            Side::Left => (b.left, b.pgf_left) = (solve, pgf),
            Side::Right => (b.right, b.pgf_right) = (solve, pgf),
        }
        self
    }

    /// One operand of `z = op(a, b)` in the closed form `closed`, [settled](super::settle)
    /// against `op` with the other operand fixed; `role` names the settle offset.
    pub fn settled(self, side: Side, op: Opcode, closed: Closed, role: impl Into<String>) -> Spec {
        self.settled_trusting(side, op, closed, role, None)
    }

    /// [`Spec::settled`], where the closed form is trusted only where `trusted(e, d, other)`
    /// holds ([`super::settle::settle_guarded`]): elsewhere θ gives the whole operand. For an
    /// `op` that is not monotone in the operand for some `other` (`atan2(0, x)` steps from π to
    /// 0 at x = 0), where a probe around the closed form would straddle z for a z that is not
    /// exactly an output.
    pub fn settled_trusting(
        self,
        side: Side,
        op: Opcode,
        closed: Closed,
        role: impl Into<String>,
        trusted: Option<Trusted>,
    ) -> Spec {
        let role: String = role.into();
        let role_pgf = role.clone();
        // `other` is the known operand; `x` the one solved for.
        let forward = move |e: &mut Emitter<'_>, x: Value, other: Value| match side {
            Side::Left => e.prim(op, &[x, other]),
            Side::Right => e.prim(op, &[other, x]),
        };
        let solve = move |e: &mut Emitter<'_>, z: Value, other: Value| {
            let d = closed.emit(e, z, other)?;
            let trust = trusted.map(|t| t(e, d, other));
            let range = e.operand_range(side.index());
            e.solving_within(range, |e| {
                settle_guarded(e, d, z, &|e, x| forward(e, x, other), &role, trust)
            })
        };
        let pgf = move |e: &mut Emitter<'_>, z: Value, a: Value, b: Value| {
            let (x, other) = match side {
                Side::Left => (a, b),
                Side::Right => (b, a),
            };
            // The closed form of what the inverse holds ([`Emitter::replayed`]): its output and
            // its known operand.
            let z = e.replayed(z);
            let other = e.replayed(other);
            let d = closed.emit(e, z, other)?;
            let trust = trusted.map(|t| t(e, d, other));
            let fwd = |e: &mut Emitter<'_>, x| forward(e, x, other);
            let range = e.operand_range(side.index());
            e.solving_within(range, |e| {
                settle_pgf_guarded(e, d, z, x, &fwd, &role_pgf, trust)
            })
        };
        self.side(side, Box::new(solve), Box::new(pgf))
    }

    /// What follows the solution of a binary rule, whichever operands were unknown:
    /// `finish(e, a, b, z)`.
    pub fn finish(mut self, f: impl Record2) -> Spec {
        let b = self.binary_mut();
        b.finish = Some(Box::new(f));
        self
    }

    /// How a binary rule solves both operands together (`both(e, z)`, and its PGF
    /// `pgf(e, z, a, b)`), instead of reading one of them from θ first.
    pub fn both(mut self, solve: impl SolveBoth, pgf: impl Record2) -> Spec {
        let b = self.binary_mut();
        b.both = Some((Box::new(solve), Box::new(pgf)));
        self
    }

    /// A check of a binary rule's output, before any operand is solved: `check(e, z)`, which
    /// returns the z the inverse goes on with. (The PGF's z is a forward output, which such a
    /// check passes and keeps.)
    pub fn output_check(mut self, check: impl CheckOutput) -> Spec {
        let b = self.binary_mut();
        b.output_check = Some(Box::new(check));
        self
    }

    /// Ends a binary rule with the [`verify_forward`] step check of `op`.
    pub fn verified(self, op: Opcode) -> Spec {
        self.finish(move |e, a, b, z| verify_forward(e, op, &[a, b], z))
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spec")
            .field("name", &self.name)
            .field("arity", &self.arity)
            .finish_non_exhaustive()
    }
}

fn counts(kind: &str, outputs: usize, operands: usize) -> RuleError {
    RuleError::Malformed(format!(
        "a {kind} was given {outputs} outputs and {operands} operands"
    ))
}

impl InverseRule for Spec {
    fn name(&self) -> &str {
        self.name
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        if self.known_only {
            pattern.arity() == self.arity && pattern.unknowns() == 0
        } else {
            super::covers_unknown(pattern, self.arity)
        }
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        (self.doc)(pattern)
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        match &self.body {
            Body::Free { inverse, .. } => inverse(e, outputs, args),
            Body::Unary { solve, .. } => match (outputs, args) {
                (&[z], &[Arg::Unknown]) => Ok(vec![solve(e, z)?]),
                (&[_], &[_]) => Err(RuleError::Uncovered(Pattern::of(args))),
                _ => Err(counts("unary rule", outputs.len(), args.len())),
            },
            Body::Binary(rule) => {
                let (z, a, b) = match (outputs, args) {
                    (&[z], &[a, b]) => (z, a, b),
                    _ => return Err(counts("binary rule", outputs.len(), args.len())),
                };
                let z = match &rule.output_check {
                    Some(check) => check(e, z)?,
                    None => z,
                };
                let (a, b) = match (a, b, &rule.both) {
                    (Arg::Unknown, Arg::Unknown, Some((both, _))) => both(e, z)?,
                    (Arg::Unknown, Arg::Unknown, None) => match rule.first {
                        (Side::Right, _, ref theta) => {
                            let b = theta(e, z)?;
                            ((rule.left)(e, z, b)?, b)
                        }
                        (Side::Left, _, ref theta) => {
                            let a = theta(e, z)?;
                            (a, (rule.right)(e, z, a)?)
                        }
                    },
                    (Arg::Unknown, Arg::Known(b), _) => ((rule.left)(e, z, b)?, b),
                    (Arg::Known(a), Arg::Unknown, _) => (a, (rule.right)(e, z, a)?),
                    _ => return Err(RuleError::Uncovered(Pattern::of(args))),
                };
                if let Some(finish) = &rule.finish {
                    finish(e, a, b, z)?;
                }
                Ok(vec![a, b])
            }
        }
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        match &self.body {
            Body::Free { pgf, .. } => pgf(e, outputs, args, pattern),
            Body::Unary { pgf, .. } => match (outputs, args) {
                (&[z], &[a]) => pgf(e, z, a),
                _ => Err(counts("unary PGF", outputs.len(), args.len())),
            },
            Body::Binary(rule) => {
                let (z, a, b) = match (outputs, args) {
                    (&[z], &[a, b]) => (z, a, b),
                    _ => return Err(counts("binary PGF", outputs.len(), args.len())),
                };
                match (!pattern.is_known(0), !pattern.is_known(1), &rule.both) {
                    (true, true, Some((_, pgf))) => pgf(e, z, a, b),
                    (true, true, None) => match rule.first {
                        (Side::Right, role, _) => {
                            e.record(b, role)?;
                            (rule.pgf_left)(e, z, a, b)
                        }
                        (Side::Left, role, _) => {
                            e.record(a, role)?;
                            (rule.pgf_right)(e, z, a, b)
                        }
                    },
                    (true, false, _) => (rule.pgf_left)(e, z, a, b),
                    (false, true, _) => (rule.pgf_right)(e, z, a, b),
                    (false, false, _) => Ok(()),
                }
            }
        }
    }
}
