//! The e-class analysis: types, constant folding, which unknowns a class depends on, and signs.
//!
//! - **Constant folding** uses [`pinv_core::semantics::eval`], the IR's own semantics, so a folded
//!   constant is bit for bit what the interpreter computes. Only finite f64 results are folded
//!   (an infinity or NaN is left as the expression that makes it).
//! - **Pruning**: a class with a constant keeps only its leaves. Without this, a class such as
//!   `(fadd 0.1 0.2)` keeps matching rules and, with reassociation, classes whose constants differ
//!   by one rounding step get merged and the merges cascade (see the isolation notes: `0 = 1`).
//! - **Conflicts**: merging two classes with different constants (as real numbers: `0.0` and
//!   `-0.0` are the same number) is counted in [`IsoAnalysis::conflicts`]; the runner stops on
//!   the first one and the run's result is not used.
//! - **Unknowns**: a bit set of the unknown leaves a class depends on. Two equal expressions that
//!   depend on different unknowns depend on the intersection (AND on merge).
//! - **Sign**: the set of signs (negative, zero, positive) a real value of the class can have,
//!   for side conditions (`log (a·b) = log a + log b` needs `a, b > 0`; completing the square
//!   needs a nonzero leading coefficient). NaN is not tracked: every rewrite is checked
//!   numerically, and the inverse of a rewritten function checks the original function.

use super::lang::{Node, Num};
use egg::{Analysis, DidMerge, EGraph, Id, Language, Symbol};
use pinv_core::ir::{Const, FuncId, Opcode, Type};
use std::collections::HashMap;

/// The possible signs of a value: bit 0 negative, bit 1 zero, bit 2 positive.
pub type Sign = u8;
pub const NEG: Sign = 1;
pub const ZERO: Sign = 2;
pub const POS: Sign = 4;
pub const ANY: Sign = NEG | ZERO | POS;

/// What a leaf symbol stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct VarInfo {
    pub ty: Type,
    pub kind: VarKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// An unknown of the equation: its bit in [`Data::unknowns`], and how many occurrences of
    /// unknown inputs one occurrence of it stands for (1 for an input; more for an atom).
    Unknown { bit: u32, weight: u64 },
    /// A value treated as known (chosen as θ): rules may move it freely; the cost counts its
    /// occurrences second.
    Pivot,
}

/// What the analysis knows about one e-class.
#[derive(Clone, Debug, PartialEq)]
pub struct Data {
    pub ty: Option<Type>,
    pub konst: Option<Const>,
    pub unknowns: u64,
    /// The signs the class's value may have, as merged: only ever narrowed, so the analysis
    /// reaches a fixed point. Empty (0) after a conflict; read it with [`Data::signs`].
    pub sign: Sign,
}

impl Data {
    /// The signs the value may have: [`ANY`] where merging met two expressions with disjoint
    /// signs (a rounding-only equality went wrong), so that nothing is derived from it.
    pub fn signs(&self) -> Sign {
        if self.sign == 0 {
            ANY
        } else {
            self.sign
        }
    }
}

/// The analysis. `vars` says what each leaf symbol is; `calls` gives the result types of
/// called functions.
#[derive(Clone, Debug, Default)]
pub struct IsoAnalysis {
    pub vars: HashMap<Symbol, VarInfo>,
    pub calls: HashMap<(FuncId, u32), Type>,
    /// Merges of classes holding different constants (see the module docs).
    pub conflicts: usize,
}

pub type IsoGraph = EGraph<Node, IsoAnalysis>;

impl IsoAnalysis {
    pub fn bit(&self, s: Symbol) -> u64 {
        match self.vars.get(&s) {
            Some(VarInfo {
                kind: VarKind::Unknown { bit, .. },
                ..
            }) => 1u64 << (*bit).min(63),
            _ => 0,
        }
    }
}

/// The sign set of a constant.
pub fn sign_of(c: Const) -> Sign {
    match c {
        Const::F64(x) if x.is_nan() => ANY,
        Const::F64(x) if x > 0.0 => POS,
        Const::F64(x) if x < 0.0 => NEG,
        Const::F64(_) => ZERO,
        Const::I64(x) if x > 0 => POS,
        Const::I64(x) if x < 0 => NEG,
        Const::I64(_) => ZERO,
        _ => ANY,
    }
}

fn negate(s: Sign) -> Sign {
    (s & ZERO) | if s & NEG != 0 { POS } else { 0 } | if s & POS != 0 { NEG } else { 0 }
}

fn mul_sign(a: Sign, b: Sign) -> Sign {
    let mut out = 0;
    for (x, sx) in [(NEG, -1i8), (ZERO, 0), (POS, 1)] {
        for (y, sy) in [(NEG, -1i8), (ZERO, 0), (POS, 1)] {
            if a & x != 0 && b & y != 0 {
                out |= match sx * sy {
                    -1 => NEG,
                    0 => ZERO,
                    _ => POS,
                };
            }
        }
    }
    out
}

fn add_sign(a: Sign, b: Sign) -> Sign {
    let mut out = 0;
    for (x, sx) in [(NEG, -1i8), (ZERO, 0), (POS, 1)] {
        for (y, sy) in [(NEG, -1i8), (ZERO, 0), (POS, 1)] {
            if a & x != 0 && b & y != 0 {
                out |= match (sx, sy) {
                    (0, 0) => ZERO,
                    (-1, -1) | (-1, 0) | (0, -1) => NEG,
                    (1, 1) | (1, 0) | (0, 1) => POS,
                    _ => ANY,
                };
            }
        }
    }
    out
}

/// Folds `op` over constant operands when the IR semantics give a finite result.
///
/// A sum or difference that cancels to within [`CANCELLED`] of its operands' size is 0: the
/// operands are one real number reached by two roundings (`c·x − (c·x)` after the rewrites
/// regrouped it), and the rounding residue (`x · −9.1e-13` for `(p − p) · 9.16`) would claim
/// that the result depends on x, which the inverse would then solve x from, losing every other
/// x. The numeric check against the original rejects a rewrite where the residue was real.
pub fn fold(op: Opcode, args: &[Const]) -> Option<Const> {
    match pinv_core::semantics::eval(op, args).ok()? {
        Const::F64(x) if !x.is_finite() => None,
        Const::F64(x) if matches!(op, Opcode::Fadd | Opcode::Fsub) && x != 0.0 => {
            let size = args
                .iter()
                .map(|a| match a {
                    Const::F64(v) => v.abs(),
                    _ => 0.0,
                })
                .fold(0.0, f64::max);
            Some(Const::F64(if x.abs() <= CANCELLED * size {
                0.0
            } else {
                x
            }))
        }
        c => Some(c),
    }
}

/// How small, relative to its operands, a folded sum must be to count as cancelled (2⁻⁴⁰:
/// a few roundings leave about 2⁻⁵⁰).
const CANCELLED: f64 = 1.0 / (1u64 << 40) as f64;

impl Analysis<Node> for IsoAnalysis {
    type Data = Data;

    fn make(egraph: &mut IsoGraph, enode: &Node, _id: Id) -> Data {
        let child = |i: Id| &egraph[i].data;
        let unknowns = enode
            .children()
            .iter()
            .fold(0u64, |acc, &c| acc | child(c).unknowns);
        match enode {
            Node::Num(Num(c)) => Data {
                ty: Some(c.ty()),
                konst: Some(*c),
                unknowns: 0,
                sign: sign_of(*c),
            },
            Node::Var(s) => Data {
                ty: egraph.analysis.vars.get(s).map(|v| v.ty),
                konst: None,
                unknowns: egraph.analysis.bit(*s),
                sign: ANY,
            },
            Node::Sq([a]) => {
                let a = child(*a);
                let konst = match a.konst {
                    Some(Const::F64(x)) => fold(Opcode::Fmul, &[Const::F64(x), Const::F64(x)]),
                    _ => None,
                };
                let sign = if a.signs() & ZERO == 0 {
                    POS
                } else if a.signs() == ZERO {
                    ZERO
                } else {
                    ZERO | POS
                };
                Data {
                    ty: Some(Type::F64),
                    konst,
                    unknowns,
                    sign: konst.map_or(sign, sign_of),
                }
            }
            Node::Odds([a, c]) => {
                let konst = match (child(*a).konst, child(*c).konst) {
                    (Some(a), Some(c)) => crate::solve::odds::eval_consts(&[a, c]),
                    _ => None,
                };
                Data {
                    ty: Some(Type::F64),
                    konst,
                    unknowns,
                    sign: konst.map_or(ANY, sign_of),
                }
            }
            Node::Call { callee, result, .. } => Data {
                ty: egraph.analysis.calls.get(&(*callee, *result)).copied(),
                konst: None,
                unknowns,
                sign: ANY,
            },
            Node::Op(op, args) => {
                let consts: Option<Vec<Const>> = args.iter().map(|&a| child(a).konst).collect();
                let konst = consts.and_then(|cs| fold(*op, &cs));
                let s = |i: usize| child(args[i]).signs();
                let sign = match op {
                    Opcode::Fadd | Opcode::Iadd => add_sign(s(0), s(1)),
                    Opcode::Fsub => add_sign(s(0), negate(s(1))),
                    Opcode::Fmul | Opcode::Fdiv => mul_sign(s(0), s(1)),
                    Opcode::Fneg | Opcode::Ineg => negate(s(0)),
                    Opcode::Exp => POS,
                    Opcode::Sqrt | Opcode::Fabs => {
                        if s(0) & ZERO == 0 && s(0) != NEG {
                            POS
                        } else {
                            ZERO | POS
                        }
                    }
                    Opcode::Cosh => POS,
                    _ => ANY,
                };
                Data {
                    ty: Some(op.result_type()),
                    konst,
                    unknowns,
                    sign: konst.map_or(sign, sign_of),
                }
            }
        }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        let old = a.clone();
        match (a.konst, b.konst) {
            (Some(x), Some(y)) if !same_number(x, y) => self.conflicts += 1,
            (None, Some(y)) => a.konst = Some(y),
            _ => {}
        }
        a.unknowns &= b.unknowns;
        // Two expressions proven equal cannot have disjoint signs: a rounding-only equality
        // went wrong. The empty set stays (it reads as any sign, [`Data::signs`]): widening it
        // back to every sign here would let the next merge narrow it again, and the rebuild
        // would go round for ever (it did, on `-((-p) / ((-p) - (-p)))`).
        let sign = a.sign & b.sign;
        if sign == 0 && a.sign != 0 && b.sign != 0 {
            self.conflicts += 1;
        }
        a.sign = sign;
        if a.ty.is_none() {
            a.ty = b.ty;
        }
        let b_changed = a.konst != b.konst || a.unknowns != b.unknowns || a.sign != b.sign;
        DidMerge(*a != old, b_changed)
    }

    fn modify(egraph: &mut IsoGraph, id: Id) {
        if let Some(c) = egraph[id].data.konst {
            let leaf = egraph.add(Node::num(c));
            egraph.union(id, leaf);
            let id = egraph.find(id);
            egraph[id].nodes.retain(|n| n.is_leaf());
        }
    }
}

/// Equal as numbers (so `0.0` and `-0.0` are the same, and so are two NaNs).
fn same_number(a: Const, b: Const) -> bool {
    match (a, b) {
        (Const::F64(x), Const::F64(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}
