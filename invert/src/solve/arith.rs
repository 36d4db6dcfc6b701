//! Arithmetic the numeric solvers' kernels are written in once: on plain floats ([`Plain`], over
//! any [`num_traits::Float`]) or as IR (the function builder [`Fb`], for the code the inverse
//! runs).
//!
//! A kernel written over [`Arith`] performs the same operations in the same order on both, so
//! a run on `Plain<f64>` gives the generated code's results bit for bit (the tests of
//! [`super::newton`] compare them), and the mathematics can be tested on its own, in f64 and in
//! f32, without building IR.
//!
//! The operations are IR's: [`Arith::max`] ignores a NaN operand as `fmax` does (and as
//! [`num_traits::Float::max`] does); comparisons with a NaN are false.
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
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// The larger of `a` and `b`; a NaN operand is ignored.
    fn max(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn le(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn gt(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn eq(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn ne(&mut self, a: Self::F, b: Self::F) -> Self::B;
    fn and(&mut self, a: Self::B, b: Self::B) -> Self::B;
    fn or(&mut self, a: Self::B, b: Self::B) -> Self::B;
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
        a.max(b)
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
    fn eq(&mut self, a: F, b: F) -> bool {
        a == b
    }
    fn ne(&mut self, a: F, b: F) -> bool {
        a != b
    }
    fn and(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    fn or(&mut self, a: bool, b: bool) -> bool {
        a || b
    }
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
    fn add(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fadd, &[a, b])
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fsub, &[a, b])
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fmul, &[a, b])
    }
    fn div(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fdiv, &[a, b])
    }
    fn abs(&mut self, a: Value) -> Value {
        self.op(Opcode::Fabs, &[a])
    }
    fn max(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fmax, &[a, b])
    }
    fn lt(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Flt, &[a, b])
    }
    fn le(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fle, &[a, b])
    }
    fn gt(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fgt, &[a, b])
    }
    fn eq(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Feq, &[a, b])
    }
    fn ne(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Fne, &[a, b])
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Band, &[a, b])
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.op(Opcode::Bor, &[a, b])
    }
}
