//! The reference semantics of every opcode, in one place.
//!
//! [`eval`] gives the meaning of each [`Opcode`] on [`Const`] operands. The interpreter
//! ([`crate::interp`]) calls it for every primitive instruction, and the JIT registers the
//! `extern "C"` functions below (see [`extern_symbol`]) for the f64 operations, so that both run the
//! same machine code and agree bit for bit.
//!
//! # f64 (IEEE-754 binary64, round to nearest, ties to even)
//!
//! | opcode | meaning |
//! |---|---|
//! | `fadd fsub fmul fdiv` | IEEE `+ - * /`; division by zero gives ±inf, `0/0` gives NaN |
//! | `frem` | Rust's `%`: the truncated remainder `a - b·trunc(a/b)`, exact, with the sign of `a`; `x % 0`, `inf % y` are NaN, `x % inf` is `x` |
//! | `fneg` | flips the sign bit (also of zeros and NaNs) |
//! | `fabs` | clears the sign bit |
//! | `sin cos tan asin acos atan sinh cosh tanh exp log sqrt floor` | Rust std (`log` is `ln`); `sqrt` and `floor` are exact, the others are the platform's libm |
//! | `pow(x, y)` | `x.powf(y)` |
//! | `atan2(y, x)` | `y.atan2(x)` |
//! | `fmin fmax` | a NaN operand is ignored (both NaN gives a NaN); `fmin(-0, +0) = -0` and `fmax(-0, +0) = +0` in either order; otherwise the smaller / larger |
//! | `feq fne flt fle fgt fge` | IEEE comparisons: with a NaN operand all are false except `fne` |
//!
//! # i64 (two's complement)
//!
//! | opcode | meaning |
//! |---|---|
//! | `iadd isub imul ineg iabs` | wrap around (`ineg`/`iabs` of `i64::MIN` is `i64::MIN`) |
//! | `idiv irem` | truncate toward zero (the remainder has the sign of the dividend); a zero divisor is [`EvalError::DivisionByZero`], and `i64::MIN / -1`, `i64::MIN % -1` are [`EvalError::Overflow`] (as in Rust, where they panic) |
//! | `imin imax` | the smaller / larger |
//! | `iand ior ixor inot` | bitwise |
//! | `ishl ishr` | the count is taken modulo 64 (`b & 63`, so `-1` shifts by 63); `ishr` is arithmetic |
//! | `ieq ine ilt ile igt ige` | signed comparisons |
//!
//! # bool
//!
//! `band bor bxor bnot beq bne` are the logical operations (not short-circuit: `&&` and `||` are
//! control flow in the IR).
//!
//! # Conversions
//!
//! | opcode | meaning |
//! |---|---|
//! | `fcvt_to_i64` | Rust's `x as i64`: truncates toward zero, saturates at `i64::MIN`/`i64::MAX` (±inf too), NaN gives 0 |
//! | `fcvt_from_i64` | Rust's `x as f64`: round to nearest, ties to even |
//! | `bool_to_i64` | `false` → 0, `true` → 1 |
//!
//! Operands of the wrong number or type are [`EvalError::Mismatch`] (the verifier rejects such IR,
//! but [`eval`] never panics on it).

use crate::ir::{Const, Opcode, Type};

/// Why an operation has no result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Integer division or remainder by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// `i64::MIN / -1` or `i64::MIN % -1`.
    #[error("integer overflow in division (i64::MIN by -1)")]
    Overflow,
    /// The operands do not have the opcode's number or types.
    #[error(
        "`{op}` takes ({}) but was given ({})",
        type_list(expected),
        type_list(found)
    )]
    Mismatch {
        op: Opcode,
        expected: Vec<Type>,
        found: Vec<Type>,
    },
}

/// `f64, i64` for a list of types.
pub(crate) fn type_list(types: &[Type]) -> String {
    types
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// f64 primitives, shared with the JIT.

macro_rules! f64_unary {
    ($( $(#[$doc:meta])* $name:ident = |$x:ident| $body:expr; )*) => {
        $( $(#[$doc])* pub extern "C" fn $name($x: f64) -> f64 { $body } )*
    };
}

// Never inlined: with two NaN operands, x86 returns the first one (quieted), and an inlined
// `a + b` or `a * b` is commutative to the optimizer, which may swap the operands. Out of line,
// the first operand is `a`, as in compiled code (see `jit::translate`).
macro_rules! f64_binary {
    ($( $(#[$doc:meta])* $name:ident = |$a:ident, $b:ident| $body:expr; )*) => {
        $( $(#[$doc])* #[inline(never)] pub extern "C" fn $name($a: f64, $b: f64) -> f64 { $body } )*
    };
}

f64_binary! {
    /// `fadd`: IEEE `a + b`.
    pinv_fadd = |a, b| a + b;
    /// `fsub`: IEEE `a - b`.
    pinv_fsub = |a, b| a - b;
    /// `fmul`: IEEE `a * b`.
    pinv_fmul = |a, b| a * b;
    /// `fdiv`: IEEE `a / b`.
    pinv_fdiv = |a, b| a / b;
    /// `frem`: Rust's `a % b` (truncated remainder, the sign of `a`).
    pinv_frem = |a, b| a % b;
    /// `pow`: `a.powf(b)`.
    pinv_pow = |a, b| a.powf(b);
    /// `atan2(y, x)`: `y.atan2(x)`.
    pinv_atan2 = |y, x| y.atan2(x);
    /// `fmin`: see the module docs.
    pinv_fmin = |a, b| fmin(a, b);
    /// `fmax`: see the module docs.
    pinv_fmax = |a, b| fmax(a, b);
}

f64_unary! {
    /// `fneg`: flips the sign bit.
    pinv_fneg = |x| f64::from_bits(x.to_bits() ^ (1 << 63));
    /// `fabs`: clears the sign bit.
    pinv_fabs = |x| f64::from_bits(x.to_bits() & !(1 << 63));
    pinv_sin = |x| x.sin();
    pinv_cos = |x| x.cos();
    pinv_tan = |x| x.tan();
    pinv_asin = |x| x.asin();
    pinv_acos = |x| x.acos();
    pinv_atan = |x| x.atan();
    pinv_sinh = |x| x.sinh();
    pinv_cosh = |x| x.cosh();
    pinv_tanh = |x| x.tanh();
    pinv_exp = |x| x.exp();
    /// `log`: the natural logarithm.
    pinv_log = |x| x.ln();
    pinv_sqrt = |x| x.sqrt();
    pinv_floor = |x| x.floor();
}

fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        // Equal, or ±0: the negative one if there is one.
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        // Equal, or ±0: the positive one if there is one.
        if a.is_sign_positive() {
            a
        } else {
            b
        }
    } else if a > b {
        a
    } else {
        b
    }
}

/// `fcvt_to_i64`: Rust's `x as i64` (truncates, saturates, NaN gives 0).
pub extern "C" fn pinv_fcvt_to_i64(x: f64) -> i64 {
    x as i64
}

/// `fcvt_from_i64`: Rust's `x as f64` (round to nearest, ties to even).
pub extern "C" fn pinv_fcvt_from_i64(x: i64) -> f64 {
    x as f64
}

/// An `extern "C"` f64 function that implements one opcode.
#[derive(Clone, Copy, Debug)]
pub enum F64Fn {
    Unary(extern "C" fn(f64) -> f64),
    Binary(extern "C" fn(f64, f64) -> f64),
}

impl F64Fn {
    /// The function's address, for registering it as a JIT symbol.
    pub fn addr(self) -> *const u8 {
        match self {
            F64Fn::Unary(f) => f as *const u8,
            F64Fn::Binary(f) => f as *const u8,
        }
    }

    pub fn arity(self) -> usize {
        match self {
            F64Fn::Unary(_) => 1,
            F64Fn::Binary(_) => 2,
        }
    }
}

/// The symbol a JIT registers for an f64 opcode: its name (`pinv_` + the opcode's name) and function.
#[derive(Clone, Copy, Debug)]
pub struct ExternSymbol {
    pub op: Opcode,
    pub name: &'static str,
    pub func: F64Fn,
}

/// The shared `extern "C"` implementation of an opcode whose operands and result are all f64
/// (`fadd` … `fmax`), or `None` for every other opcode.
pub fn extern_symbol(op: Opcode) -> Option<ExternSymbol> {
    use F64Fn::{Binary, Unary};
    use Opcode::*;
    let (name, func) = match op {
        Fadd => ("pinv_fadd", Binary(pinv_fadd)),
        Fsub => ("pinv_fsub", Binary(pinv_fsub)),
        Fmul => ("pinv_fmul", Binary(pinv_fmul)),
        Fdiv => ("pinv_fdiv", Binary(pinv_fdiv)),
        Frem => ("pinv_frem", Binary(pinv_frem)),
        Fneg => ("pinv_fneg", Unary(pinv_fneg)),
        Sin => ("pinv_sin", Unary(pinv_sin)),
        Cos => ("pinv_cos", Unary(pinv_cos)),
        Tan => ("pinv_tan", Unary(pinv_tan)),
        Asin => ("pinv_asin", Unary(pinv_asin)),
        Acos => ("pinv_acos", Unary(pinv_acos)),
        Atan => ("pinv_atan", Unary(pinv_atan)),
        Sinh => ("pinv_sinh", Unary(pinv_sinh)),
        Cosh => ("pinv_cosh", Unary(pinv_cosh)),
        Tanh => ("pinv_tanh", Unary(pinv_tanh)),
        Exp => ("pinv_exp", Unary(pinv_exp)),
        Log => ("pinv_log", Unary(pinv_log)),
        Sqrt => ("pinv_sqrt", Unary(pinv_sqrt)),
        Fabs => ("pinv_fabs", Unary(pinv_fabs)),
        Floor => ("pinv_floor", Unary(pinv_floor)),
        Pow => ("pinv_pow", Binary(pinv_pow)),
        Atan2 => ("pinv_atan2", Binary(pinv_atan2)),
        Fmin => ("pinv_fmin", Binary(pinv_fmin)),
        Fmax => ("pinv_fmax", Binary(pinv_fmax)),
        _ => return None,
    };
    Some(ExternSymbol { op, name, func })
}

/// Every [`ExternSymbol`], in opcode table order.
pub fn extern_symbols() -> impl Iterator<Item = ExternSymbol> {
    Opcode::ALL.iter().filter_map(|&op| extern_symbol(op))
}

// ---------------------------------------------------------------------------------------------
// The evaluator.

/// Applies `op` to `args`. See the module docs for the meaning of each opcode.
pub fn eval(op: Opcode, args: &[Const]) -> Result<Const, EvalError> {
    use Const::{Bool as B, F64 as F, I64 as I};
    use Opcode::*;
    let r = match (op, args) {
        // f64 arithmetic
        (Fadd, &[F(a), F(b)]) => F(pinv_fadd(a, b)),
        (Fsub, &[F(a), F(b)]) => F(pinv_fsub(a, b)),
        (Fmul, &[F(a), F(b)]) => F(pinv_fmul(a, b)),
        (Fdiv, &[F(a), F(b)]) => F(pinv_fdiv(a, b)),
        (Frem, &[F(a), F(b)]) => F(pinv_frem(a, b)),
        (Fneg, &[F(x)]) => F(pinv_fneg(x)),
        (Sin, &[F(x)]) => F(pinv_sin(x)),
        (Cos, &[F(x)]) => F(pinv_cos(x)),
        (Tan, &[F(x)]) => F(pinv_tan(x)),
        (Asin, &[F(x)]) => F(pinv_asin(x)),
        (Acos, &[F(x)]) => F(pinv_acos(x)),
        (Atan, &[F(x)]) => F(pinv_atan(x)),
        (Sinh, &[F(x)]) => F(pinv_sinh(x)),
        (Cosh, &[F(x)]) => F(pinv_cosh(x)),
        (Tanh, &[F(x)]) => F(pinv_tanh(x)),
        (Exp, &[F(x)]) => F(pinv_exp(x)),
        (Log, &[F(x)]) => F(pinv_log(x)),
        (Sqrt, &[F(x)]) => F(pinv_sqrt(x)),
        (Fabs, &[F(x)]) => F(pinv_fabs(x)),
        (Floor, &[F(x)]) => F(pinv_floor(x)),
        (Pow, &[F(a), F(b)]) => F(pinv_pow(a, b)),
        (Atan2, &[F(y), F(x)]) => F(pinv_atan2(y, x)),
        (Fmin, &[F(a), F(b)]) => F(pinv_fmin(a, b)),
        (Fmax, &[F(a), F(b)]) => F(pinv_fmax(a, b)),
        // f64 comparisons
        (Feq, &[F(a), F(b)]) => B(a == b),
        (Fne, &[F(a), F(b)]) => B(a != b),
        (Flt, &[F(a), F(b)]) => B(a < b),
        (Fle, &[F(a), F(b)]) => B(a <= b),
        (Fgt, &[F(a), F(b)]) => B(a > b),
        (Fge, &[F(a), F(b)]) => B(a >= b),
        // i64 arithmetic
        (Iadd, &[I(a), I(b)]) => I(a.wrapping_add(b)),
        (Isub, &[I(a), I(b)]) => I(a.wrapping_sub(b)),
        (Imul, &[I(a), I(b)]) => I(a.wrapping_mul(b)),
        (Idiv, &[I(a), I(b)]) => I(int_div(a, b, i64::checked_div)?),
        (Irem, &[I(a), I(b)]) => I(int_div(a, b, i64::checked_rem)?),
        (Ineg, &[I(a)]) => I(a.wrapping_neg()),
        (Iabs, &[I(a)]) => I(a.wrapping_abs()),
        (Imin, &[I(a), I(b)]) => I(a.min(b)),
        (Imax, &[I(a), I(b)]) => I(a.max(b)),
        // i64 bitwise
        (Iand, &[I(a), I(b)]) => I(a & b),
        (Ior, &[I(a), I(b)]) => I(a | b),
        (Ixor, &[I(a), I(b)]) => I(a ^ b),
        (Inot, &[I(a)]) => I(!a),
        (Ishl, &[I(a), I(b)]) => I(a.wrapping_shl((b & 63) as u32)),
        (Ishr, &[I(a), I(b)]) => I(a.wrapping_shr((b & 63) as u32)),
        // i64 comparisons
        (Ieq, &[I(a), I(b)]) => B(a == b),
        (Ine, &[I(a), I(b)]) => B(a != b),
        (Ilt, &[I(a), I(b)]) => B(a < b),
        (Ile, &[I(a), I(b)]) => B(a <= b),
        (Igt, &[I(a), I(b)]) => B(a > b),
        (Ige, &[I(a), I(b)]) => B(a >= b),
        // bool
        (Band, &[B(a), B(b)]) => B(a & b),
        (Bor, &[B(a), B(b)]) => B(a | b),
        (Bxor, &[B(a), B(b)]) => B(a ^ b),
        (Bnot, &[B(a)]) => B(!a),
        (Beq, &[B(a), B(b)]) => B(a == b),
        (Bne, &[B(a), B(b)]) => B(a != b),
        // conversions
        (FcvtToI64, &[F(x)]) => I(pinv_fcvt_to_i64(x)),
        (FcvtFromI64, &[I(x)]) => F(pinv_fcvt_from_i64(x)),
        (BoolToI64, &[B(b)]) => I(b as i64),
        (F64Bits, &[F(x)]) => I(x.to_bits() as i64),
        (F64FromBits, &[I(a)]) => F(f64::from_bits(a as u64)),
        _ => {
            return Err(EvalError::Mismatch {
                op,
                expected: op.arg_types().to_vec(),
                found: args.iter().map(|c| c.ty()).collect(),
            })
        }
    };
    Ok(r)
}

/// Integer division or remainder: a zero divisor first, then overflow.
fn int_div(a: i64, b: i64, f: fn(i64, i64) -> Option<i64>) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    f(a, b).ok_or(EvalError::Overflow)
}

#[cfg(test)]
mod tests;
