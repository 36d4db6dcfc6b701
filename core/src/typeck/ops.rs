//! Which [`Opcode`] each operator and cast is on each operand type: the typing table of
//! LANGUAGE.md's operators, as pure functions. `&&` and `||` have no opcode (they become control
//! flow), and built-in calls go through [`Opcode::for_builtin`].

use crate::ir::{Opcode, Type};
use crate::syntax::ast::{BinOp, UnOp};

/// The opcode of `a op b` with both operands of type `t`, if the operator applies to `t`.
pub(super) fn binary(op: BinOp, t: Type) -> Option<Opcode> {
    use Opcode::*;
    let opcode = match (t, op) {
        (Type::F64, BinOp::Add) => Fadd,
        (Type::F64, BinOp::Sub) => Fsub,
        (Type::F64, BinOp::Mul) => Fmul,
        (Type::F64, BinOp::Div) => Fdiv,
        (Type::F64, BinOp::Rem) => Frem,
        (Type::F64, BinOp::Eq) => Feq,
        (Type::F64, BinOp::Ne) => Fne,
        (Type::F64, BinOp::Lt) => Flt,
        (Type::F64, BinOp::Le) => Fle,
        (Type::F64, BinOp::Gt) => Fgt,
        (Type::F64, BinOp::Ge) => Fge,

        (Type::I64, BinOp::Add) => Iadd,
        (Type::I64, BinOp::Sub) => Isub,
        (Type::I64, BinOp::Mul) => Imul,
        (Type::I64, BinOp::Div) => Idiv,
        (Type::I64, BinOp::Rem) => Irem,
        (Type::I64, BinOp::Shl) => Ishl,
        (Type::I64, BinOp::Shr) => Ishr,
        (Type::I64, BinOp::BitAnd) => Iand,
        (Type::I64, BinOp::BitXor) => Ixor,
        (Type::I64, BinOp::BitOr) => Ior,
        (Type::I64, BinOp::Eq) => Ieq,
        (Type::I64, BinOp::Ne) => Ine,
        (Type::I64, BinOp::Lt) => Ilt,
        (Type::I64, BinOp::Le) => Ile,
        (Type::I64, BinOp::Gt) => Igt,
        (Type::I64, BinOp::Ge) => Ige,

        (Type::Bool, BinOp::BitAnd) => Band,
        (Type::Bool, BinOp::BitXor) => Bxor,
        (Type::Bool, BinOp::BitOr) => Bor,
        (Type::Bool, BinOp::Eq) => Beq,
        (Type::Bool, BinOp::Ne) => Bne,
        _ => return None,
    };
    Some(opcode)
}

/// The opcode of `op a` with `a` of type `t`, if the operator applies to `t`.
pub(super) fn unary(op: UnOp, t: Type) -> Option<Opcode> {
    match (op, t) {
        (UnOp::Neg, Type::F64) => Some(Opcode::Fneg),
        (UnOp::Neg, Type::I64) => Some(Opcode::Ineg),
        (UnOp::Not, Type::Bool) => Some(Opcode::Bnot),
        (UnOp::Not, Type::I64) => Some(Opcode::Inot),
        _ => None,
    }
}

/// How `e as to` converts a value of type `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cast {
    /// `from` is `to`: the cast does nothing and is removed.
    Identity,
    Convert(Opcode),
    Invalid,
}

pub(super) fn cast(from: Type, to: Type) -> Cast {
    match (from, to) {
        _ if from == to => Cast::Identity,
        (Type::F64, Type::I64) => Cast::Convert(Opcode::FcvtToI64),
        (Type::I64, Type::F64) => Cast::Convert(Opcode::FcvtFromI64),
        (Type::Bool, Type::I64) => Cast::Convert(Opcode::BoolToI64),
        _ => Cast::Invalid,
    }
}

/// The number of arguments of a built-in function, or `None` if `name` is not one.
pub(super) fn builtin_arity(name: &str) -> Option<usize> {
    // Every form of a built-in takes as many arguments.
    Type::ALL
        .into_iter()
        .find_map(|t| Opcode::for_builtin(name, t))
        .map(Opcode::arity)
}

/// The argument types a built-in has a form for (`[f64, i64]` for `min`, `max`, `abs`).
pub(super) fn builtin_types(name: &str) -> Vec<Type> {
    Type::ALL
        .into_iter()
        .filter(|&t| Opcode::for_builtin(name, t).is_some())
        .collect()
}
