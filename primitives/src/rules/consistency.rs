//! The all-known pattern of every opcode: every operand is already solved (as after fan-out),
//! so the inverse only checks that the forward value matches the output.

use crate::emit::Emitter;
use crate::pattern::{Arg, Knowledge, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError};
use pinv_core::ir::{Opcode, Value};

/// Checks `op(args) = z` (within tolerance for f64). Reads no θ; records nothing.
#[derive(Debug)]
pub struct Consistency {
    pub op: Opcode,
}

impl InverseRule for Consistency {
    fn name(&self) -> &str {
        "consistency"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.op.arity() && pattern.0.iter().all(|k| *k == Knowledge::Known)
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: Vec::new(),
            checks: vec![format!(
                "`{}` of the known operands is the output",
                self.op.spelling()
            )],
            exact: self.op.result_type() != pinv_core::ir::Type::F64,
            summary: "check op(known operands) = z".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let known: Option<Vec<Value>> = args.iter().map(Arg::known).collect();
        let (Some(known), [z]) = (known, outputs) else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        if self.op.can_trap() {
            // Integer division: check the divisor before dividing, so that a known divisor of 0
            // (or i64::MIN / -1) is a domain error, not a trap.
            super::i64_arith::check_division(e, self.op, known[0], known[1], *z)?;
            return Ok(known);
        }
        let again = e.prim(self.op, &known);
        e.check_equal(
            again,
            *z,
            &format!(
                "`{}` here, of values already known, is not what this path needs",
                self.op.spelling()
            ),
        )?;
        Ok(known)
    }

    fn emit_pgf(
        &self,
        _: &mut Emitter<'_>,
        _: &[Value],
        _: &[Value],
        _: &Pattern,
    ) -> Result<(), RuleError> {
        Ok(())
    }
}
