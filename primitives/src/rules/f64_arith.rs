//! f64 arithmetic: `fadd`, `fsub`, ... (This module is the model the other rule families follow.)

use super::verify_forward;
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::pattern::{Arg, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, Opcode, Value};

pub fn register(layer: &mut Layer) {
    layer.add(Callee::Prim(Opcode::Fadd), Fadd);
}

/// `z = a + b`: with both unknown, θ is the right operand and `a = z − θ`; with one known, the
/// other is `z − known`. Exact only up to rounding, so every solution is checked.
#[derive(Debug)]
pub struct Fadd;

impl InverseRule for Fadd {
    fn name(&self) -> &str {
        "sub"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2 && pattern.unknowns() >= 1
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let (thetas, summary) = match (pattern.is_known(0), pattern.is_known(1)) {
            (false, false) => (
                vec![ThetaDoc::value(Domain::Real, "right operand")],
                "b = θ, a = z − θ",
            ),
            (true, _) => (Vec::new(), "b = z − a"),
            (_, true) => (Vec::new(), "a = z − b"),
        };
        RuleDoc {
            thetas,
            checks: vec!["a + b = z (θ too large for z loses precision)".to_string()],
            exact: false,
            summary: summary.to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let (&[z], &[a, b]) = (outputs, args) else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        let (a, b) = match (a, b) {
            (Arg::Unknown, Arg::Unknown) => {
                let b = e.theta(Domain::Real, "right operand")?;
                (e.prim(Opcode::Fsub, &[z, b]), b)
            }
            (Arg::Known(a), Arg::Unknown) => (a, e.prim(Opcode::Fsub, &[z, a])),
            (Arg::Unknown, Arg::Known(b)) => (e.prim(Opcode::Fsub, &[z, b]), b),
            (Arg::Known(_), Arg::Known(_)) => return Err(RuleError::Uncovered(Pattern::of(args))),
        };
        verify_forward(e, Opcode::Fadd, &[a, b], z)?;
        Ok(vec![a, b])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if pattern.unknowns() == 2 {
            e.record(args[1], "right operand")?;
        }
        Ok(())
    }
}
