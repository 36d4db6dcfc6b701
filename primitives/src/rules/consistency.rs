//! The all-known pattern of every opcode: every operand is already solved (as after fan-out),
//! so the inverse only checks that the forward value matches the output.

use super::spec::Spec;
use crate::pattern::{Arg, Pattern};
use crate::rule::{RuleDoc, RuleError};
use pinv_core::ir::{Opcode, Type};

/// Checks `op(args) = z` (within tolerance for f64). Reads no θ; records nothing.
pub fn consistency(op: Opcode) -> Spec {
    let inverse = move |e: &mut crate::Emitter<'_>, outputs: &[_], args: &[Arg]| {
        let known: Option<Vec<_>> = args.iter().map(Arg::known).collect();
        let (Some(known), [z]) = (known, outputs) else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        if op.can_trap() {
            // Integer division: check the divisor before dividing, so that a known divisor of 0
            // (or i64::MIN / -1) is a domain error, not a trap.
            super::i64_arith::check_division(e, op, known[0], known[1], *z)?;
            return Ok(known);
        }
        let again = e.prim(op, &known);
        let reason = format!(
            "`{}` here, of values already known, is not what this path needs",
            op.spelling()
        );
        e.check_equal(again, *z, &reason)?;
        Ok(known)
    };
    Spec::new("consistency", op.arity(), inverse, |_, _, _, _| Ok(()))
        .known_operands()
        .doc(move |_| RuleDoc {
            thetas: Vec::new(),
            checks: vec![format!(
                "`{}` of the known operands is the output",
                op.spelling()
            )],
            exact: op.result_type() != Type::F64,
            summary: "check op(known operands) = z".to_string(),
        })
}
