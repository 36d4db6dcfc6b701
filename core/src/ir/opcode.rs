//! One opcode per primitive operation of the language, for each type.
//!
//! Every operator (`+`, `<`, `as`, `!`, ...) and every built-in function (`sin`, `pow`, `min`, ...)
//! of LANGUAGE.md lowers to exactly one [`Opcode`]; `&&` and `||` are the exception, as they lower to
//! control flow. The table below is the single list of opcodes: the text names, signatures and the
//! [`Opcode::ALL`] list that the overlay table's coverage test walks are all generated from it.
//! The meaning of each opcode is in [`crate::semantics`].

use super::{Const, Type};
use serde::Serialize;
use std::fmt;

macro_rules! opcodes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal : ( $($arg:ident),* ) -> $ret:ident, $class:ident; )*) => {
        /// A primitive operation. See the module docs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Opcode {
            $( $(#[$doc])* $variant, )*
        }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[ $(Opcode::$variant,)* ];

            /// The name in the IR text format, such as `fadd` or `fcvt_to_i64`.
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$variant => $name,)* }
            }

            /// The operand types.
            pub fn arg_types(self) -> &'static [Type] {
                match self { $(Opcode::$variant => &[$(Type::$arg),*],)* }
            }

            /// The result type (every opcode has exactly one result).
            pub fn result_type(self) -> Type {
                match self { $(Opcode::$variant => Type::$ret,)* }
            }

            /// What kind of operation this is.
            pub fn class(self) -> OpClass {
                match self { $(Opcode::$variant => OpClass::$class,)* }
            }
        }
    };
}

/// A coarse grouping of opcodes, used by the catalogue and by passes that treat a class alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum OpClass {
    /// Arithmetic on one type (`fadd`, `imul`, `sin`, `pow`, ...).
    Arith,
    /// Bitwise and logical operations (`iand`, `ishl`, `band`, `bnot`, ...).
    Bitwise,
    /// Comparisons, with a `bool` result.
    Compare,
    /// Conversions between types (`as`).
    Convert,
}

opcodes! {
    // f64 arithmetic
    /// `a + b` on f64.
    Fadd = "fadd": (F64, F64) -> F64, Arith;
    /// `a - b` on f64.
    Fsub = "fsub": (F64, F64) -> F64, Arith;
    /// `a * b` on f64.
    Fmul = "fmul": (F64, F64) -> F64, Arith;
    /// `a / b` on f64 (IEEE: ±inf or NaN on division by zero).
    Fdiv = "fdiv": (F64, F64) -> F64, Arith;
    /// `a % b` on f64 (truncated remainder, the sign of `a`, as Rust's `%`).
    Frem = "frem": (F64, F64) -> F64, Arith;
    /// `-a` on f64 (flips the sign bit, also of NaN and zero).
    Fneg = "fneg": (F64) -> F64, Arith;
    Sin = "sin": (F64) -> F64, Arith;
    Cos = "cos": (F64) -> F64, Arith;
    Tan = "tan": (F64) -> F64, Arith;
    Asin = "asin": (F64) -> F64, Arith;
    Acos = "acos": (F64) -> F64, Arith;
    Atan = "atan": (F64) -> F64, Arith;
    Sinh = "sinh": (F64) -> F64, Arith;
    Cosh = "cosh": (F64) -> F64, Arith;
    Tanh = "tanh": (F64) -> F64, Arith;
    Exp = "exp": (F64) -> F64, Arith;
    /// Natural logarithm.
    Log = "log": (F64) -> F64, Arith;
    Sqrt = "sqrt": (F64) -> F64, Arith;
    /// `abs` on f64.
    Fabs = "fabs": (F64) -> F64, Arith;
    Floor = "floor": (F64) -> F64, Arith;
    /// `pow(x, y)` = x^y.
    Pow = "pow": (F64, F64) -> F64, Arith;
    /// `atan2(y, x)`.
    Atan2 = "atan2": (F64, F64) -> F64, Arith;
    /// `min` on f64: a NaN operand is ignored; `min(-0.0, 0.0)` is `-0.0`.
    Fmin = "fmin": (F64, F64) -> F64, Arith;
    /// `max` on f64: a NaN operand is ignored; `max(-0.0, 0.0)` is `0.0`.
    Fmax = "fmax": (F64, F64) -> F64, Arith;
    // f64 comparisons
    Feq = "feq": (F64, F64) -> Bool, Compare;
    Fne = "fne": (F64, F64) -> Bool, Compare;
    Flt = "flt": (F64, F64) -> Bool, Compare;
    Fle = "fle": (F64, F64) -> Bool, Compare;
    Fgt = "fgt": (F64, F64) -> Bool, Compare;
    Fge = "fge": (F64, F64) -> Bool, Compare;
    // i64 arithmetic (wrapping, except division)
    Iadd = "iadd": (I64, I64) -> I64, Arith;
    Isub = "isub": (I64, I64) -> I64, Arith;
    Imul = "imul": (I64, I64) -> I64, Arith;
    /// Truncating division; division by zero and `i64::MIN / -1` are runtime errors.
    Idiv = "idiv": (I64, I64) -> I64, Arith;
    /// Truncating remainder; remainder by zero and `i64::MIN % -1` are runtime errors (as in Rust).
    Irem = "irem": (I64, I64) -> I64, Arith;
    /// `-a`, wrapping at `i64::MIN`.
    Ineg = "ineg": (I64) -> I64, Arith;
    /// `abs(a)`, wrapping at `i64::MIN`.
    Iabs = "iabs": (I64) -> I64, Arith;
    Imin = "imin": (I64, I64) -> I64, Arith;
    Imax = "imax": (I64, I64) -> I64, Arith;
    // i64 bitwise
    Iand = "iand": (I64, I64) -> I64, Bitwise;
    Ior = "ior": (I64, I64) -> I64, Bitwise;
    Ixor = "ixor": (I64, I64) -> I64, Bitwise;
    /// `!a` on i64.
    Inot = "inot": (I64) -> I64, Bitwise;
    /// `a << b`, the count taken modulo 64.
    Ishl = "ishl": (I64, I64) -> I64, Bitwise;
    /// `a >> b`, arithmetic, the count taken modulo 64.
    Ishr = "ishr": (I64, I64) -> I64, Bitwise;
    // i64 comparisons
    Ieq = "ieq": (I64, I64) -> Bool, Compare;
    Ine = "ine": (I64, I64) -> Bool, Compare;
    Ilt = "ilt": (I64, I64) -> Bool, Compare;
    Ile = "ile": (I64, I64) -> Bool, Compare;
    Igt = "igt": (I64, I64) -> Bool, Compare;
    Ige = "ige": (I64, I64) -> Bool, Compare;
    // bool
    /// `a & b` on bool (not short-circuit; `&&` is control flow).
    Band = "band": (Bool, Bool) -> Bool, Bitwise;
    Bor = "bor": (Bool, Bool) -> Bool, Bitwise;
    Bxor = "bxor": (Bool, Bool) -> Bool, Bitwise;
    Bnot = "bnot": (Bool) -> Bool, Bitwise;
    Beq = "beq": (Bool, Bool) -> Bool, Compare;
    Bne = "bne": (Bool, Bool) -> Bool, Compare;
    // conversions
    /// `x as i64` for f64 x: truncates toward zero, saturates, NaN gives 0.
    FcvtToI64 = "fcvt_to_i64": (F64) -> I64, Convert;
    /// `x as f64` for i64 x: rounds to nearest, ties to even.
    FcvtFromI64 = "fcvt_from_i64": (I64) -> F64, Convert;
    /// `b as i64` for bool b: 0 or 1.
    BoolToI64 = "bool_to_i64": (Bool) -> I64, Convert;
    /// The bits of an f64 as an i64 (`x.to_bits() as i64`): not in the language; inverses use it
    /// to step between neighbouring floats.
    F64Bits = "f64_bits": (F64) -> I64, Convert;
    /// The f64 with these bits (`f64::from_bits(a as u64)`): the inverse of `f64_bits`.
    F64FromBits = "f64_from_bits": (I64) -> F64, Convert;
}

impl Opcode {
    /// The opcode with this text name.
    pub fn from_name(name: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|op| op.name() == name)
    }

    pub fn arity(self) -> usize {
        self.arg_types().len()
    }

    /// Whether the operation can fail at run time (integer division and remainder).
    pub fn can_trap(self) -> bool {
        matches!(self, Opcode::Idiv | Opcode::Irem)
    }

    /// What `op(a, a)` is for every `a`, where that is one value: `a − a` is 0 and `a / a` is 1
    /// in f64 (or NaN: for an infinite or NaN `a`, and `0 / 0`, which [`Opcode::nan_with_itself`]
    /// says), `a − a` and `a ^ a` are 0 in i64; a strict comparison of a value with itself is
    /// false (`a < a` for NaN too), a non-strict one of integers or bools true. (`a <= a` and
    /// `a == a` in f64 are false for NaN: two values.)
    pub fn with_itself(self) -> Option<Const> {
        match self {
            Opcode::Fsub => Some(Const::F64(0.0)),
            Opcode::Fdiv => Some(Const::F64(1.0)),
            Opcode::Isub | Opcode::Ixor => Some(Const::I64(0)),
            Opcode::Flt
            | Opcode::Fgt
            | Opcode::Ilt
            | Opcode::Igt
            | Opcode::Ine
            | Opcode::Bne
            | Opcode::Bxor => Some(Const::Bool(false)),
            Opcode::Ile | Opcode::Ige | Opcode::Ieq | Opcode::Beq => Some(Const::Bool(true)),
            _ => None,
        }
    }

    /// Whether `op(a, a)` may be NaN where [`Opcode::with_itself`] has a value.
    pub fn nan_with_itself(self) -> bool {
        matches!(self, Opcode::Fsub | Opcode::Fdiv)
    }

    /// The built-in function (as called in source) that lowers to this opcode, for `types`.
    ///
    /// `min`, `max` and `abs` are overloaded on f64 and i64; every other built-in has one type.
    pub fn for_builtin(name: &str, arg_ty: Type) -> Option<Opcode> {
        use Opcode::*;
        let op = match (name, arg_ty) {
            ("sin", Type::F64) => Sin,
            ("cos", Type::F64) => Cos,
            ("tan", Type::F64) => Tan,
            ("asin", Type::F64) => Asin,
            ("acos", Type::F64) => Acos,
            ("atan", Type::F64) => Atan,
            ("sinh", Type::F64) => Sinh,
            ("cosh", Type::F64) => Cosh,
            ("tanh", Type::F64) => Tanh,
            ("exp", Type::F64) => Exp,
            ("log", Type::F64) => Log,
            ("sqrt", Type::F64) => Sqrt,
            ("floor", Type::F64) => Floor,
            ("abs", Type::F64) => Fabs,
            ("abs", Type::I64) => Iabs,
            ("pow", Type::F64) => Pow,
            ("atan2", Type::F64) => Atan2,
            ("min", Type::F64) => Fmin,
            ("min", Type::I64) => Imin,
            ("max", Type::F64) => Fmax,
            ("max", Type::I64) => Imax,
            _ => return None,
        };
        Some(op)
    }
}

/// The names of the built-in functions of LANGUAGE.md. A module may not define a function with
/// one of these names (nor `fail`).
pub const BUILTIN_NAMES: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "sqrt",
    "abs", "floor", "pow", "atan2", "min", "max",
];

impl Opcode {
    /// How the operation is written in the source language: `+`, `<=`, `sin`, `as i64`. For
    /// messages a user reads, where the IR name (`fadd`, `ile`) would be our insides.
    pub fn spelling(self) -> &'static str {
        use Opcode::*;
        match self {
            Fadd | Iadd => "+",
            Fsub | Isub => "-",
            Fmul | Imul => "*",
            Fdiv | Idiv => "/",
            Frem | Irem => "%",
            Fneg | Ineg => "unary -",
            Fabs | Iabs => "abs",
            Fmin | Imin => "min",
            Fmax | Imax => "max",
            Feq | Ieq | Beq => "==",
            Fne | Ine | Bne => "!=",
            Flt | Ilt => "<",
            Fle | Ile => "<=",
            Fgt | Igt => ">",
            Fge | Ige => ">=",
            Iand | Band => "&",
            Ior | Bor => "|",
            Ixor | Bxor => "^",
            Inot | Bnot => "!",
            Ishl => "<<",
            Ishr => ">>",
            FcvtToI64 => "as i64",
            FcvtFromI64 => "as f64",
            BoolToI64 => "as i64 (of a bool)",
            F64Bits => "the bits of an f64",
            F64FromBits => "the f64 of bits",
            // The built-in functions are written as their IR names (`sin`, `pow`, ...).
            other => other.name(),
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {

    /// Messages name operations as the source writes them: every comparison, bitwise operation
    /// and conversion has a spelling other than its IR name.
    #[test]
    fn operators_are_spelled_as_the_source_writes_them() {
        assert_eq!(Opcode::Ile.spelling(), "<=");
        assert_eq!(Opcode::Fadd.spelling(), "+");
        assert_eq!(Opcode::Ishl.spelling(), "<<");
        assert_eq!(Opcode::Sin.spelling(), "sin");
        for &op in Opcode::ALL {
            if matches!(
                op.class(),
                OpClass::Compare | OpClass::Bitwise | OpClass::Convert
            ) {
                assert_ne!(op.spelling(), op.name(), "{op:?}");
            }
        }
    }
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
        let mut names: Vec<_> = Opcode::ALL.iter().map(|op| op.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Opcode::ALL.len());
    }

    #[test]
    fn every_builtin_has_an_opcode() {
        for name in BUILTIN_NAMES {
            let found = Type::ALL
                .iter()
                .any(|&t| Opcode::for_builtin(name, t).is_some());
            assert!(found, "{name}");
        }
    }
}
