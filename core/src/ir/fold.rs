//! Constant folding: a primitive whose operands are all constants becomes the constant it
//! computes.
//!
//! Some values are one of a few constants whatever the input: `x − x` is +0 or NaN (∞ − ∞),
//! `x · 0` is ±0 or NaN, `x / x` is 1 or NaN, for i64 `x − x` and `x ^ x` are 0, and an
//! operand can decide the result alone (`x | -1`, `x & 0`, `x * 0`, `b & false`, `b | true`). Folding
//! carries these **value sets** forward, and an instruction that gives one value for every
//! member of its operands' sets becomes that constant: `0.5 < p − p` is false for every p, so
//! `if 0.5 < p - p { … }` is dead code, and the inverse no longer reads θ for a branch that never
//! runs (a random program with it recovered 19 of 30 inputs: the branch's merge needed the
//! inverse's value to equal the forward one bit for bit). A NaN stands for every NaN: a set
//! holding one never folds to an f64, and no set reaches `f64_bits`, which would tell NaNs apart.
//!
//! The value is the IR semantics' own ([`crate::semantics::eval`]: what the interpreter runs,
//! and what compiled code matches bit for bit), so folding changes no result; an operation that
//! would stop a run (an integer division by zero, ...) is left as it is and still stops it.
//!
//! The front end folds before it removes dead code ([`super::dce`]), so that a branch on a
//! condition of constants goes one way, and the inverse never treats a value made of constants
//! as something to solve for: with `2.0 - if true && true { 10.0 + 2.0 } else { 1.5 }` it read
//! the `if`'s value from θ and accepted no θ at all.

use super::{Const, Function, InstKind, Opcode, Value};
use std::collections::HashMap;

/// Folds constants, removes dead code and merges blocks, in turn until nothing changes; returns
/// whether anything did. Merging can make a condition a constant (`if true && true`: folding
/// the `&&`'s own branch leaves its join block, whose parameter is the condition, one
/// predecessor), and folding a branch leaves code dead. The front end runs it on every
/// function, and the inverter on a caller its callees' bodies were copied into (where the
/// constants a helper is called with make its branches one way).
pub fn fold_until_stable(func: &mut Function) -> bool {
    fold_until_stable_calling(func, &cranelift_entity::EntitySet::new())
}

/// [`fold_until_stable`], where a call of a function in `total` whose results nothing needs is
/// dead code ([`super::dce::remove_dead_code_calling`]).
pub fn fold_until_stable_calling(
    func: &mut Function,
    total: &cranelift_entity::EntitySet<super::FuncId>,
) -> bool {
    let mut changed = false;
    loop {
        let mut round = fold_constants(func);
        round |= super::dce::remove_dead_code_calling(func, total);
        round |= super::merge_blocks::merge_blocks_keep_ids(func) > 0;
        if !round {
            return changed;
        }
        changed = true;
    }
}

/// Folds every primitive of `func` whose operands are constants, or one of a few constants
/// each (the module docs' value sets), into the one constant it computes (in an order where
/// operands come first, so that chains fold in one call); returns whether anything changed.
pub fn fold_constants(func: &mut Function) -> bool {
    let mut changed = false;
    let mut sets: HashMap<Value, Vec<Const>> = HashMap::new();
    // Depth-first preorder from the entry: a block's dominators come before it.
    for b in func.reachable_blocks() {
        for k in 0..func.blocks[b].insts.len() {
            let inst = func.blocks[b].insts[k];
            let InstKind::Prim { op, args } = &func.insts[inst].kind else {
                continue;
            };
            let op = *op;
            let operands: Option<Vec<Const>> = args.iter().map(|&a| func.constant(a)).collect();
            if let Some(operands) = operands {
                let Ok(c) = crate::semantics::eval(op, &operands) else {
                    continue;
                };
                func.insts[inst].kind = InstKind::Const(c);
                changed = true;
                continue;
            }
            let Some(set) = value_set(func, &sets, op, args.as_slice()) else {
                continue;
            };
            let [only] = set.as_slice() else {
                if let Some(&result) = func.insts[inst].results.first() {
                    sets.insert(result, set);
                }
                continue;
            };
            // One value for every input; an f64 NaN stands for every NaN, so it stays.
            if !matches!(only, Const::F64(x) if x.is_nan()) {
                func.insts[inst].kind = InstKind::Const(*only);
                changed = true;
            }
        }
    }
    changed
}

/// The most members a value set keeps (and the most operand combinations it evaluates).
const MAX_SET: usize = 16;

/// The values `op(args)` can have, where that is a small set: from the operands' constants and
/// sets, or from an identity of the operation itself (`x − x`); `None` where it is not known.
fn value_set(
    func: &Function,
    sets: &HashMap<Value, Vec<Const>>,
    op: Opcode,
    args: &[Value],
) -> Option<Vec<Const>> {
    if let [a, b] = args {
        if let (true, Some(c)) = (a == b, op.with_itself()) {
            let nan = op.nan_with_itself().then_some(Const::F64(f64::NAN));
            return Some(std::iter::once(c).chain(nan).collect());
        }
        // An operand that decides the result alone: `x | -1`, `x & 0` and `x * 0` in i64,
        // `b & false` and `b | true`.
        let either = |c: Const| func.constant(*a) == Some(c) || func.constant(*b) == Some(c);
        let absorbing = match op {
            Opcode::Ior => Some(Const::I64(-1)),
            Opcode::Iand | Opcode::Imul => Some(Const::I64(0)),
            Opcode::Band => Some(Const::Bool(false)),
            Opcode::Bor => Some(Const::Bool(true)),
            _ => None,
        };
        if let Some(c) = absorbing.filter(|&c| either(c)) {
            return Some(vec![c]);
        }
        if op == Opcode::Fmul {
            let zero = |v: &Value| matches!(func.constant(*v), Some(Const::F64(c)) if c == 0.0);
            if zero(a) || zero(b) {
                return Some(vec![
                    Const::F64(0.0),
                    Const::F64(-0.0),
                    Const::F64(f64::NAN),
                ]);
            }
        }
    }
    if op == Opcode::F64Bits {
        return None;
    }
    // Operands all constant are folded before this is asked; here one at least is a set.
    let members: Vec<Vec<Const>> = args
        .iter()
        .map(|&a| match func.constant(a) {
            Some(c) => Some(vec![c]),
            None => sets.get(&a).cloned(),
        })
        .collect::<Option<_>>()?;
    let combinations: usize = members.iter().map(Vec::len).product();
    if combinations > MAX_SET {
        return None;
    }
    let mut out: Vec<Const> = Vec::new();
    let mut pick = vec![0usize; members.len()];
    for _ in 0..combinations {
        let operands: Vec<Const> = pick.iter().zip(&members).map(|(&i, m)| m[i]).collect();
        let c = match crate::semantics::eval(op, &operands).ok()? {
            Const::F64(x) if x.is_nan() => Const::F64(f64::NAN),
            c => c,
        };
        if !out.contains(&c) {
            out.push(c);
        }
        // The next combination, the first operand fastest.
        for (i, m) in pick.iter_mut().zip(&members) {
            *i += 1;
            if *i < m.len() {
                break;
            }
            *i = 0;
        }
    }
    Some(out)
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
    fn an_operand_that_decides_the_result_alone_folds_it() {
        let (out, changed) = folded(
            "function %f(x: i64, b: bool) -> (i64, i64, i64, bool, bool, i64) {
block0(v0: i64, v1: bool):
    v2 = iconst -1
    v3 = iconst 0
    v4 = bconst false
    v5 = bconst true
    v6 = ior v0, v2
    v7 = iand v3, v0
    v8 = imul v0, v3
    v9 = band v1, v4
    v10 = bor v5, v1
    v11 = iadd v0, v3
    return v6, v7, v8, v9, v10, v11
}",
        );
        assert!(changed);
        for folded in [
            "v6 = iconst -1",
            "v7 = iconst 0",
            "v8 = iconst 0",
            "v9 = bconst false",
            "v10 = bconst true",
        ] {
            assert!(out.contains(folded), "{folded}: {out}");
        }
        assert!(out.contains("v11 = iadd v0, v3"), "{out}");
    }

    /// A comparison of a value with itself is one value where NaN cannot change it: `x < x` is
    /// false for every f64, NaN too; `n <= n` is true for every i64. `x <= x` and `x == x` in f64
    /// are false for NaN, so they stay. (`if p < p` left the branch to θ: half of θ rejected.)
    #[test]
    fn a_comparison_of_a_value_with_itself_folds_where_nan_cannot_change_it() {
        let (out, changed) = folded(
            "function %f(x: f64, n: i64, b: bool) -> (bool, bool, bool, bool, bool, bool, bool) {
block0(v0: f64, v1: i64, v2: bool):
    v3 = flt v0, v0
    v4 = fgt v0, v0
    v5 = ile v1, v1
    v6 = ine v1, v1
    v7 = bxor v2, v2
    v8 = fle v0, v0
    v9 = feq v0, v0
    return v3, v4, v5, v6, v7, v8, v9
}",
        );
        assert!(changed);
        for folded in [
            "v3 = bconst false",
            "v4 = bconst false",
            "v5 = bconst true",
            "v6 = bconst false",
            "v7 = bconst false",
        ] {
            assert!(out.contains(folded), "{folded}: {out}");
        }
        assert!(out.contains("v8 = fle v0, v0"), "{out}");
        assert!(out.contains("v9 = feq v0, v0"), "{out}");
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

    #[test]
    fn a_value_that_is_one_of_a_few_constants_folds_what_it_decides() {
        let (out, changed) = folded(
            "function %f(x: f64, n: i64) -> (bool, f64, bool, i64, i64, bool, bool) {
block0(v0: f64, v1: i64):
    v2 = fsub v0, v0
    v3 = fconst 0.5
    v4 = flt v3, v2
    v5 = fadd v2, v3
    v6 = feq v2, v2
    v7 = isub v1, v1
    v8 = f64_bits v2
    v9 = fconst 0.0
    v10 = fmul v0, v9
    v11 = fle v10, v9
    v12 = fdiv v0, v0
    v13 = fgt v12, v3
    return v4, v5, v6, v7, v8, v11, v13
}",
        );
        assert!(changed);
        // 0.5 < x − x is false for every x (+0, or NaN).
        assert!(out.contains("v4 = bconst false"), "{out}");
        // An f64 of the set stays: one of its members is NaN.
        assert!(out.contains("v5 = fadd v2, v3"), "{out}");
        // x − x = x − x is true for +0 and false for NaN.
        assert!(out.contains("v6 = feq v2, v2"), "{out}");
        assert!(out.contains("v7 = iconst 0"), "{out}");
        // The bits tell NaNs apart.
        assert!(out.contains("v8 = f64_bits v2"), "{out}");
        // x · 0 ≤ 0 is false for NaN, and x / x > 0.5 too.
        assert!(out.contains("v11 = fle v10, v9"), "{out}");
        assert!(out.contains("v13 = fgt v12, v3"), "{out}");
    }
}
