//! The standard rules, one module per family of primitives.
//!
//! Every opcode of `pinv_core::ir::Opcode::ALL` has rules covering every pattern with at least
//! one unknown operand; the all-known pattern (every operand already solved, as after fan-out)
//! is covered for every opcode by [`consistency::Consistency`], which checks that the forward
//! value matches. `catalogue` tests that nothing is missing.

pub mod consistency;
pub mod f64_arith;

use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::rule::RuleError;
use pinv_core::ir::{Opcode, Value};

/// Builds the standard layer.
pub fn standard_rules() -> Layer {
    let mut layer = Layer::new("standard");
    f64_arith::register(&mut layer);
    for &op in Opcode::ALL {
        layer.add(Callee::Prim(op), consistency::Consistency { op });
    }
    layer
}

/// Checks that `op(args)` is `z` (within tolerance for f64): the final guard of every rule whose
/// solution is exact only up to rounding, so that a θ that loses precision is a domain error and
/// never a wrong answer.
pub fn verify_forward(
    e: &mut Emitter<'_>,
    op: Opcode,
    args: &[Value],
    z: Value,
) -> Result<(), RuleError> {
    let again = e.prim(op, args);
    e.check_equal(
        again,
        z,
        &format!("θ loses precision: {op} of the solution is not the output"),
    )
}
