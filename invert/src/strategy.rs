//! proptest strategies for θ and for inputs, so users can write their own
//! `f(f⁻¹(y, θ)) = y` and `f⁻¹(f(x), pgf(x)) = x` property tests in a few lines.
//!
//! ```
//! use pinv::strategy::{inputs, theta};
//! use pinv::{check::close, Const, Program};
//! use proptest::prelude::*;
//!
//! let program = Program::parse("f.pinv", "fn f(x: f64, y: f64) -> f64 { x + y }").unwrap();
//! let inverse = program.invert("f").unwrap();
//! let y = [Const::F64(3.0)];
//! proptest!(|(mut t in theta(inverse.schema().len()), x in inputs(inverse.input_types()))| {
//!     // Soundness: every θ gives a preimage of y, or a domain error.
//!     if let Ok(x) = inverse.call(&y, &mut t) {
//!         let fx = inverse.forward(&x).unwrap();
//!         prop_assert!(close(fx[0], y[0], 1e-9));
//!     }
//!     // Completeness: the PGF's θ gives x back.
//!     let fx = inverse.forward(&x).unwrap();
//!     let back = inverse.call_with_tape(&fx, &inverse.pgf(&x).unwrap()).unwrap();
//!     prop_assert!(close(back[0], x[0], 1e-6));
//! });
//! ```

use crate::theta::Sampler;
use pinv_core::interp::{ThetaAddress, ThetaError, ThetaSource};
use pinv_core::ir::{Const, Domain, Type};
use proptest::prelude::*;

/// A θ source that proptest can generate and shrink: each read is drawn from its domain by a
/// sampler seeded with the next word (0 once the words run out), so the tape adapts to whatever
/// path the inverse takes.
#[derive(Clone, Debug, PartialEq)]
pub struct ThetaWords {
    words: Vec<u64>,
    pos: usize,
    drawn: Vec<Const>,
}

impl ThetaWords {
    pub fn new(words: Vec<u64>) -> ThetaWords {
        ThetaWords {
            words,
            pos: 0,
            drawn: Vec::new(),
        }
    }

    /// The values read so far: the tape the inverse saw.
    pub fn drawn(&self) -> &[Const] {
        &self.drawn
    }

    fn sampler(&mut self) -> Sampler {
        let word = self.words.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        Sampler::new(word)
    }
}

impl ThetaSource for ThetaWords {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let value = self.sampler().draw(domain);
        self.drawn.push(value);
        Ok(value)
    }

    fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let k = self.sampler().choice(n, at)?;
        self.drawn.push(Const::I64(i64::from(k)));
        Ok(k)
    }
}

/// θ for an inverse whose schema has `slots` reads (a few more words are drawn, for paths that
/// read more).
pub fn theta(slots: usize) -> impl Strategy<Value = ThetaWords> {
    proptest::collection::vec(any::<u64>(), slots..=slots + 4).prop_map(ThetaWords::new)
}

/// Inputs of the given types, as `pinv check` samples them: f64 in [−10, 10], i64 in
/// [−100, 100], bools fair.
pub fn inputs(types: &[Type]) -> impl Strategy<Value = Vec<Const>> {
    let parts: Vec<BoxedStrategy<Const>> = types
        .iter()
        .map(|ty| match ty {
            Type::F64 => (-10.0..=10.0f64).prop_map(Const::F64).boxed(),
            Type::I64 => (-100..=100i64).prop_map(Const::I64).boxed(),
            Type::Bool => any::<bool>().prop_map(Const::Bool).boxed(),
        })
        .collect();
    parts
}
