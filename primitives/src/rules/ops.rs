//! Shorthand for the instructions rules write most, as an extension of [`Emitter`].
//!
//! Every method appends primitive operations (or, for [`Ops::select`], a small diamond of
//! blocks) at the emitter's current position. None of them traps: integer helpers that divide
//! or shift are written so that every operand value is defined, and the bit-twiddling helpers
//! ([`Ops::ctz`], [`Ops::clz`], [`Ops::lshr`], ...) are branch-free.

use crate::emit::Emitter;
use crate::rule::RuleError;
use pinv_core::ir::{Opcode, Type, Value};

/// Declares a provided method of [`Ops`] per primitive: `name = Opcode;` writes
/// `fn name(&mut self, a, b) -> Value { self.op2(Opcode::Opcode, a, b) }` (`op1` for unary).
macro_rules! shorthand {
    (binary [$($b:ident = $bop:ident;)*] unary [$($u:ident = $uop:ident;)*]) => {
        $(
            #[doc = concat!("`", stringify!($b), "(a, b)`.")]
            fn $b(&mut self, a: Value, b: Value) -> Value {
                self.op2(Opcode::$bop, a, b)
            }
        )*
        $(
            #[doc = concat!("`", stringify!($u), "(a)`.")]
            fn $u(&mut self, a: Value) -> Value {
                self.op1(Opcode::$uop, a)
            }
        )*
    };
}

/// Shorthand instructions for rules. See the module docs.
pub trait Ops {
    /// `op(a)`.
    fn op1(&mut self, op: Opcode, a: Value) -> Value;
    /// `op(a, b)`.
    fn op2(&mut self, op: Opcode, a: Value, b: Value) -> Value;
    /// `cond ? a : b` (both already computed); the values must have one type.
    fn select(&mut self, cond: Value, a: Value, b: Value) -> Result<Value, RuleError>;

    shorthand! {
        binary [
            fadd = Fadd; fsub = Fsub; fmul = Fmul; fdiv = Fdiv;
            feq = Feq; fne = Fne; flt = Flt; fle = Fle; fgt = Fgt; fge = Fge;
            band = Band; bor = Bor;
            iadd = Iadd; isub = Isub; imul = Imul; iand = Iand; ior = Ior; ixor = Ixor;
            ishl = Ishl; ishr = Ishr;
            ieq = Ieq; ine = Ine; ilt = Ilt; ile = Ile; igt = Igt; ige = Ige;
        ]
        unary [fneg = Fneg; fabs = Fabs; floor = Floor; bnot = Bnot; inot = Inot; ineg = Ineg;]
    }

    // ---- f64
    /// The f64 constant `x`.
    fn fc(&mut self, x: f64) -> Value;
    /// `|x| op bound` for a comparison `op` (`Flt`, `Fge`, ...).
    fn abs_cmp(&mut self, x: Value, op: Opcode, bound: f64) -> Value {
        let a = self.fabs(x);
        let b = self.fc(bound);
        self.op2(op, a, b)
    }
    /// Whether `x` is a NaN.
    fn is_nan(&mut self, x: Value) -> Value {
        self.fne(x, x)
    }
    /// Whether `x` is finite (not ±inf, not NaN).
    fn is_finite(&mut self, x: Value) -> Value {
        let a = self.fabs(x);
        let inf = self.fc(f64::INFINITY);
        self.flt(a, inf)
    }
    /// Whether `x` has its sign bit set and is not a NaN (so `-0.0` is negative; the sign of a
    /// NaN cannot be observed with the primitives and reads as positive).
    fn sign_bit(&mut self, x: Value) -> Value {
        let zero = self.fc(0.0);
        let neg = self.flt(x, zero);
        let is_zero = self.feq(x, zero);
        let one = self.fc(1.0);
        let inv = self.fdiv(one, x);
        let inv_neg = self.flt(inv, zero);
        let neg_zero = self.band(is_zero, inv_neg);
        self.bor(neg, neg_zero)
    }
    /// `|x|` with the sign of `s` (by [`Ops::sign_bit`]).
    fn with_sign_of(&mut self, x: Value, s: Value) -> Result<Value, RuleError> {
        let mag = self.fabs(x);
        let neg = self.fneg(mag);
        let sb = self.sign_bit(s);
        self.select(sb, neg, mag)
    }
    /// `floor(x + 0.5)`: the nearest integer (ties up), as an f64.
    fn round(&mut self, x: Value) -> Value {
        let half = self.fc(0.5);
        let y = self.fadd(x, half);
        self.floor(y)
    }
    /// `round(x)` as an i64 (saturating; NaN gives 0).
    fn round_to_i64(&mut self, x: Value) -> Value {
        let r = self.round(x);
        self.op1(Opcode::FcvtToI64, r)
    }
    fn i_to_f(&mut self, x: Value) -> Value {
        self.op1(Opcode::FcvtFromI64, x)
    }

    // ---- bool
    fn bc(&mut self, b: bool) -> Value;

    // ---- i64
    fn ic(&mut self, x: i64) -> Value;
    /// `b as i64`.
    fn b_to_i(&mut self, b: Value) -> Value {
        self.op1(Opcode::BoolToI64, b)
    }
    /// The bits of `x` that are 1 in the mask of the low `k` bits, for `k` in `0..=64`
    /// (`(1 << k) - 1`; `k = 64` gives all ones).
    fn low_mask(&mut self, k: Value) -> Value {
        // !((-1 << (k - 1)) << 1) would misbehave at k = 0; use !(-1 << k) with k = 64 special.
        let minus_one = self.ic(-1);
        let shifted = self.ishl(minus_one, k);
        let mask = self.inot(shifted);
        let sixty_four = self.ic(64);
        let all = self.ige(k, sixty_four);
        let all = self.b_to_i(all);
        // all ? -1 : mask  ==  mask | -all
        let all = self.ineg(all);
        self.ior(mask, all)
    }
    /// `x << k` for `k` in `0..=64` (`k = 64` gives 0), unlike `ishl`, which takes `k mod 64`.
    fn shl_full(&mut self, x: Value, k: Value) -> Value {
        // (x << (k - 1)) << 1 for k >= 1; x for k = 0.
        let one = self.ic(1);
        let zero = self.ic(0);
        let is_zero = self.ieq(k, zero);
        let k1 = self.isub(k, one);
        let a = self.ishl(x, k1);
        let a = self.ishl(a, one);
        // k = 0: keep x.
        let keep = self.b_to_i(is_zero);
        let keep = self.ineg(keep); // -1 if k = 0
        let x_part = self.iand(x, keep);
        let not_keep = self.inot(keep);
        let a_part = self.iand(a, not_keep);
        self.ior(x_part, a_part)
    }
    /// Logical (unsigned) `x >> k` for `k` in `0..=64` (`k = 64` gives 0).
    fn lshr(&mut self, x: Value, k: Value) -> Value {
        let shifted = self.ishr(x, k);
        let sixty_four = self.ic(64);
        let width = self.isub(sixty_four, k);
        let mask = self.low_mask(width);
        let r = self.iand(shifted, mask);
        // k = 64: ishr takes k mod 64 = 0, and the mask of width 0 clears everything.
        r
    }
    /// The number of trailing zero bits of `x` (64 for 0).
    fn ctz(&mut self, x: Value) -> Value {
        // Isolate the lowest set bit, then binary-search its position.
        let neg = self.ineg(x);
        let low = self.iand(x, neg);
        let zero = self.ic(0);
        let mut k = self.ic(0);
        for (mask, step) in [
            (0xFFFF_FFFF_0000_0000u64 as i64, 32),
            (0xFFFF_0000_FFFF_0000u64 as i64, 16),
            (0xFF00_FF00_FF00_FF00u64 as i64, 8),
            (0xF0F0_F0F0_F0F0_F0F0u64 as i64, 4),
            (0xCCCC_CCCC_CCCC_CCCCu64 as i64, 2),
            (0xAAAA_AAAA_AAAA_AAAAu64 as i64, 1),
        ] {
            let m = self.ic(mask);
            let hit = self.iand(low, m);
            let hit = self.ine(hit, zero);
            let hit = self.b_to_i(hit);
            let s = self.ic(step);
            let add = self.imul(hit, s);
            k = self.iadd(k, add);
        }
        let is_zero = self.ieq(x, zero);
        let is_zero = self.b_to_i(is_zero);
        let sixty_four = self.ic(64);
        let extra = self.imul(is_zero, sixty_four);
        self.iadd(k, extra)
    }
    /// The number of leading zero bits of `x` (64 for 0).
    fn clz(&mut self, x: Value) -> Value {
        // Binary search from the top: if the high half is empty, count it and shift up.
        let zero = self.ic(0);
        let mut v = x;
        let mut n = self.ic(0);
        for step in [32i64, 16, 8, 4, 2, 1] {
            // top `step` bits of v zero?  (v >>u (64 - step)) == 0
            let sh = self.ic(64 - step);
            let top = self.lshr(v, sh);
            let empty = self.ieq(top, zero);
            let empty = self.b_to_i(empty);
            let s = self.ic(step);
            let amount = self.imul(empty, s);
            n = self.iadd(n, amount);
            v = self.ishl(v, amount);
        }
        // v is now 0 only if x was 0 (then n = 63 so far).
        let is_zero = self.ieq(x, zero);
        let is_zero = self.b_to_i(is_zero);
        self.iadd(n, is_zero)
    }
    /// The inverse of odd `m` modulo 2^64 (Newton's iteration; garbage for even `m`).
    fn mul_inverse(&mut self, m: Value) -> Value {
        let two = self.ic(2);
        let mut y = m;
        for _ in 0..5 {
            let my = self.imul(m, y);
            let t = self.isub(two, my);
            y = self.imul(y, t);
        }
        y
    }
}

impl Ops for Emitter<'_> {
    fn op1(&mut self, op: Opcode, a: Value) -> Value {
        self.prim(op, &[a])
    }

    fn op2(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        self.prim(op, &[a, b])
    }

    fn select(&mut self, cond: Value, a: Value, b: Value) -> Result<Value, RuleError> {
        let ty: Type = self.value_type(a);
        let r = self.if_else(cond, &[ty], |_| Ok(vec![a]), |_| Ok(vec![b]))?;
        Ok(r[0])
    }

    fn fc(&mut self, x: f64) -> Value {
        self.f64(x)
    }

    fn bc(&mut self, b: bool) -> Value {
        self.bool(b)
    }

    fn ic(&mut self, x: i64) -> Value {
        self.i64(x)
    }
}
