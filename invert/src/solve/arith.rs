//! Arithmetic the numeric solvers' kernels are written in once: on plain floats ([`Plain`], over
//! any [`num_traits::Float`]) or as IR (the function builder [`Fb`] of generated solver
//! functions, and a rule's [`Emitter`]), for the code the inverse runs.
//!
//! A kernel written over [`Arith`] performs the same operations in the same order on both, so
//! a run on `Plain<f64>` gives the generated code's results bit for bit (the tests of
//! [`super::newton`], [`super::numeric`] and [`super::linear_rt`] compare them), and the
//! mathematics can be tested on its own, in f64 and in f32, without building IR.
//!
//! The operations are IR's: [`Arith::max`] and [`Arith::min`] ignore a NaN operand and pick
//! +0 over −0 (−0 for min) as `fmax` and `fmin` do; comparisons with a NaN are false.
//!
//! ```
//! use pinv::solve::arith::{Arith, Plain};
//!
//! // |a − b| ≤ 1e-9 · max(1, |b|), written once.
//! fn near<A: Arith>(e: &mut A, a: A::F, b: A::F) -> A::B {
//!     let d = e.sub(a, b);
//!     let d = e.abs(d);
//!     let one = e.c(1.0);
//!     let m = e.abs(b);
//!     let scale = e.max(one, m);
//!     let tol = e.c(1e-9);
//!     let bound = e.mul(tol, scale);
//!     e.le(d, bound)
//! }
//! assert!(near(&mut Plain::<f64>::new(), 1.0, 1.0 + 1e-12));
//! assert!(!near(&mut Plain::<f32>::new(), 1.0, 1.001));
//! ```

use super::helpers::Fb;
use num_traits::Float;
use pinv_core::ir::{Const, Opcode, Value};
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::Emitter;
use std::marker::PhantomData;

/// Floating-point arithmetic and comparisons, on values of type [`Arith::F`] (floats) and
/// [`Arith::B`] (truth values).
pub trait Arith {
    /// A float: `F` itself, or an IR value.
    type F: Copy;
    /// A truth value: `bool`, or an IR value.
    type B: Copy;

    /// The constant `x` (rounded to the type's precision).
    fn c(&mut self, x: f64) -> Self::F;
    /// The type's machine epsilon (`f64::EPSILON` for IR), for steps that depend on precision.
    fn epsilon(&self) -> f64;
    /// The constant true.
    fn yes(&mut self) -> Self::B;
    /// The constant false.
    fn no(&mut self) -> Self::B;
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// The larger of `a` and `b`; a NaN operand is ignored, and +0 is larger than −0.
    fn max(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// The smaller of `a` and `b`; a NaN operand is ignored, and −0 is smaller than +0.
    fn min(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn le(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn gt(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn ge(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn eq(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn ne(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn and(&mut self, a: Self::B, b: Self::B) -> Self::B;
    fn or(&mut self, a: Self::B, b: Self::B) -> Self::B;
    fn not(&mut self, a: Self::B) -> Self::B;
    /// `c ? x : y` for truth values already computed.
    fn pick(&mut self, c: Self::B, x: Self::B, y: Self::B) -> Self::B;
    /// `c ? x : y` for floats already computed.
    fn choose(&mut self, c: Self::B, x: Self::F, y: Self::F) -> Self::F;
}

/// Plain arithmetic on `F`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain<F>(PhantomData<F>);

impl<F: Float> Plain<F> {
    pub fn new() -> Plain<F> {
        Plain(PhantomData)
    }
}

impl<F: Float> Arith for Plain<F> {
    type F = F;
    type B = bool;

    fn c(&mut self, x: f64) -> F {
        F::from(x).unwrap_or_else(F::nan)
    }
    fn epsilon(&self) -> f64 {
        F::epsilon().to_f64().unwrap_or(f64::EPSILON)
    }
    fn yes(&mut self) -> bool {
        true
    }
    fn no(&mut self) -> bool {
        false
    }
    fn add(&mut self, a: F, b: F) -> F {
        a + b
    }
    fn sub(&mut self, a: F, b: F) -> F {
        a - b
    }
    fn mul(&mut self, a: F, b: F) -> F {
        a * b
    }
    fn div(&mut self, a: F, b: F) -> F {
        a / b
    }
    fn abs(&mut self, a: F) -> F {
        a.abs()
    }
    fn max(&mut self, a: F, b: F) -> F {
        match (a.is_nan(), b.is_nan()) {
            (true, _) => b,
            (_, true) => a,
            // Equal, or ±0: the positive one, as IR's `fmax`.
            _ if a == b => {
                if a.is_sign_positive() {
                    a
                } else {
                    b
                }
            }
            _ if a > b => a,
            _ => b,
        }
    }
    fn min(&mut self, a: F, b: F) -> F {
        match (a.is_nan(), b.is_nan()) {
            (true, _) => b,
            (_, true) => a,
            // Equal, or ±0: the negative one, as IR's `fmin`.
            _ if a == b => {
                if a.is_sign_negative() {
                    a
                } else {
                    b
                }
            }
            _ if a < b => a,
            _ => b,
        }
    }
    fn lt(&mut self, a: F, b: F) -> bool {
        a < b
    }
    fn le(&mut self, a: F, b: F) -> bool {
        a <= b
    }
    fn gt(&mut self, a: F, b: F) -> bool {
        a > b
    }
    fn ge(&mut self, a: F, b: F) -> bool {
        a >= b
    }
    fn eq(&mut self, a: F, b: F) -> bool {
        a == b
    }
    fn ne(&mut self, a: F, b: F) -> bool {
        a != b
    }
    fn and(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    fn not(&mut self, a: bool) -> bool {
        !a
    }
    fn pick(&mut self, c: bool, x: bool, y: bool) -> bool {
        if c {
            x
        } else {
            y
        }
    }
    fn choose(&mut self, c: bool, x: F, y: F) -> F {
        if c {
            x
        } else {
            y
        }
    }
    fn or(&mut self, a: bool, b: bool) -> bool {
        a || b
    }
}

/// The operations of [`Arith`] that are one IR instruction each, for an implementation whose
/// `Value`s are IR values and that emits an instruction with `$emit(self, opcode, operands)`.
macro_rules! one_instruction_each {
    ($emit:expr; binary [$($b:ident = $bop:ident),*]; unary [$($u:ident = $uop:ident),*]) => {
        $(
            fn $b(&mut self, a: Value, b: Value) -> Value {
                $emit(self, Opcode::$bop, &[a, b])
            }
        )*
        $(
            fn $u(&mut self, a: Value) -> Value {
                $emit(self, Opcode::$uop, &[a])
            }
        )*
    };
}

/// The float, comparison and logic operations of [`Arith`] in IR, as `one_instruction_each!`
/// takes them.
macro_rules! ir_arith {
    ($emit:expr) => {
        one_instruction_each! {
            $emit;
            binary [
                add = Fadd, sub = Fsub, mul = Fmul, div = Fdiv, max = Fmax, min = Fmin,
                lt = Flt, le = Fle, gt = Fgt, ge = Fge, eq = Feq, ne = Fne,
                and = Band, or = Bor
            ];
            unary [abs = Fabs, not = Bnot]
        }
    };
}

/// IR, emitted into the builder's current block.
impl Arith for Fb {
    type F = Value;
    type B = Value;

    fn c(&mut self, x: f64) -> Value {
        Fb::c(self, x)
    }
    fn epsilon(&self) -> f64 {
        f64::EPSILON
    }
    fn yes(&mut self) -> Value {
        self.f.ins_const(self.block, Const::Bool(true), self.span)
    }
    fn no(&mut self) -> Value {
        self.f.ins_const(self.block, Const::Bool(false), self.span)
    }
    fn pick(&mut self, c: Value, x: Value, y: Value) -> Value {
        self.select(c, x, y)
    }
    fn choose(&mut self, c: Value, x: Value, y: Value) -> Value {
        self.select(c, x, y)
    }
    ir_arith!(|b: &mut Fb, op, args: &[Value]| b.op(op, args));
}

/// IR emitted by a rule ([`Emitter`]).
impl Arith for Emitter<'_> {
    type F = Value;
    type B = Value;

    fn c(&mut self, x: f64) -> Value {
        self.fc(x)
    }
    fn epsilon(&self) -> f64 {
        f64::EPSILON
    }
    fn yes(&mut self) -> Value {
        self.bc(true)
    }
    fn no(&mut self) -> Value {
        self.bc(false)
    }
    fn pick(&mut self, c: Value, x: Value, y: Value) -> Value {
        emitted_select(self, c, x, y)
    }
    fn choose(&mut self, c: Value, x: Value, y: Value) -> Value {
        emitted_select(self, c, x, y)
    }
    ir_arith!(|e: &mut Emitter<'_>, op, args: &[Value]| e.prim(op, args));
}

/// `c ? x : y` as an `if` whose arms give `x` and `y`. Both values exist and have one type,
/// so the join cannot fail; were it to, that is a bug in the emitter.
fn emitted_select(e: &mut Emitter<'_>, c: Value, x: Value, y: Value) -> Value {
    Ops::select(e, c, x, y).expect("a select of two values of one type joins")
}
