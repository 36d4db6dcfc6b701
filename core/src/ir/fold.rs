//! Constant folding: a primitive whose operands are all constants becomes the constant it
//! computes.
//!
//! The value is the IR semantics' own ([`crate::semantics::eval`]: what the interpreter runs,
//! and what compiled code matches bit for bit), so folding changes no result; an operation that
//! would stop a run (an integer division by zero, ...) is left as it is and still stops it.
//!
//! The front end folds before it removes dead code ([`super::dce`]), so that a branch on a
//! condition of constants goes one way, and the inverse never treats a value made of constants
//! as something to solve for: with `2.0 - if true && true { 10.0 + 2.0 } else { 1.5 }` it read
//! the `if`'s value from θ and accepted no θ at all.

use super::{Const, Function, InstKind};

/// Folds constants, removes dead code and merges blocks, in turn until nothing changes; returns
/// whether anything did. Merging can make a condition a constant (`if true && true`: folding
/// the `&&`'s own branch leaves its join block, whose parameter is the condition, one
/// predecessor), and folding a branch leaves code dead. The front end runs it on every
/// function, and the inverter on a caller its callees' bodies were copied into (where the
/// constants a helper is called with make its branches one way).
pub fn fold_until_stable(func: &mut Function) -> bool {
    let mut changed = false;
    loop {
        let mut round = fold_constants(func);
        round |= super::dce::remove_dead_code(func);
        round |= super::merge_blocks::merge_blocks_keep_ids(func) > 0;
        if !round {
            return changed;
        }
        changed = true;
    }
}

/// Folds every primitive of `func` whose operands are constants (in an order where operands
/// come first, so that chains fold in one call); returns whether anything changed.
pub fn fold_constants(func: &mut Function) -> bool {
    let mut changed = false;
    // Depth-first preorder from the entry: a block's dominators come before it.
    for b in func.reachable_blocks() {
        for k in 0..func.blocks[b].insts.len() {
            let inst = func.blocks[b].insts[k];
            let InstKind::Prim { op, args } = &func.insts[inst].kind else {
                continue;
            };
            let operands: Option<Vec<Const>> = args.iter().map(|&a| func.constant(a)).collect();
            let Some(operands) = operands else {
                continue;
            };
            let Ok(c) = crate::semantics::eval(*op, &operands) else {
                continue;
            };
            func.insts[inst].kind = InstKind::Const(c);
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_function;
    use crate::ir::write::{write_function, WriteOptions};
    use crate::ir::FuncId;

    fn folded(text: &str) -> (String, bool) {
        let mut m = parse_function(text).expect("parses");
        let f = &mut m.functions[FuncId::from_u32(0)];
        let changed = fold_constants(f);
        (
            write_function(&m, FuncId::from_u32(0), &WriteOptions::default()),
            changed,
        )
    }

    #[test]
    fn a_chain_of_constants_folds_in_one_call_and_the_rest_stays() {
        let (out, changed) = folded(
            "function %f(x: f64) -> f64 {
block0(v0: f64):
    v1 = fconst 10.0
    v2 = fconst 2.0
    v3 = fadd v1, v2
    v4 = iconst 2
    v5 = fcvt_from_i64 v4
    v6 = fsub v5, v3
    v7 = fmul v6, v0
    return v7
}",
        );
        assert!(changed);
        assert!(out.contains("v6 = fconst -10.0"), "{out}");
        assert!(out.contains("v7 = fmul v6, v0"), "{out}");
    }

    #[test]
    fn an_operation_that_stops_a_run_is_not_folded() {
        let text = "function %f(x: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 7
    v2 = iconst 0
    v3 = idiv v1, v2
    return v3
}";
        let (out, changed) = folded(text);
        assert!(!changed);
        assert!(out.contains("v3 = idiv v1, v2"), "{out}");
    }

    #[test]
    fn folding_keeps_the_bits_of_nan_and_signed_zero() {
        let (out, _) = folded(
            "function %f() -> (f64, f64, bool) {
block0:
    v1 = fconst 0.0
    v2 = fneg v1
    v3 = fdiv v1, v1
    v4 = fne v3, v3
    return v2, v3, v4
}",
        );
        assert!(out.contains("v2 = fconst -0.0"), "{out}");
        assert!(out.contains("v4 = bconst true"), "{out}");
    }
}
