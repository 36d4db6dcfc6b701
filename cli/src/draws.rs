//! Drawing preimages of y with sampled θ: the loop behind `pinv sample` and `pinv plot`.
//!
//! θ is drawn from its domains by the seeded [`Sampler`]; a draw for which the inverse reports a
//! domain error (θ or y outside its domain) is rejected and counted. Drawing stops after `wanted`
//! preimages or `max_draws` draws, whichever comes first, so it always ends.

use crate::progress::Progress;
use pinv::ir::Domain;
use pinv::{Const, Inverse, Sampler};
use pinv::{ThetaAddress, ThetaError, ThetaSource};

/// The default cap on draws for `wanted` preimages: 100 per preimage, and at least 10 000.
pub fn default_max_draws(wanted: usize) -> usize {
    wanted.saturating_mul(100).max(10_000)
}

/// One discrete θ read: a path choice or a bool θ.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscreteRead {
    /// The generated function that read it.
    pub function: String,
    /// What it decides (the θ read's role).
    pub role: String,
    /// The value read: a choice as an i64, or a bool.
    pub value: Const,
}

/// A preimage of y with the θ that gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Preimage {
    pub x: Vec<Const>,
    /// Every θ value read, in order (the tape).
    pub theta: Vec<Const>,
    /// The discrete reads among them (choices and bools), in order.
    pub discrete: Vec<DiscreteRead>,
}

/// What drawing found.
#[derive(Clone, Debug, Default)]
pub struct Draws {
    pub preimages: Vec<Preimage>,
    /// θ drawn in all.
    pub drawn: usize,
    /// Draws the inverse rejected as out of its domain.
    pub rejected: usize,
    /// Draws whose run hit the step or depth limit (a θ that sends the inverse round a loop,
    /// or down a recursion, further than the limits allow): skipped, as rejected ones are.
    pub limited: usize,
    /// Why the first rejected draw was rejected.
    pub first_rejection: Option<pinv::Error>,
}

impl Draws {
    /// How many of the preimages are different x (bit for bit): a sampler that keeps giving
    /// the same point of a continuous family shows here.
    pub fn distinct(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        for p in &self.preimages {
            seen.insert(p.x.iter().map(|c| c.bits()).collect::<Vec<u64>>());
        }
        seen.len()
    }

    /// Accepted draws as a share of all draws, in percent.
    pub fn acceptance(&self) -> f64 {
        if self.drawn == 0 {
            0.0
        } else {
            100.0 * self.preimages.len() as f64 / self.drawn as f64
        }
    }
}

/// Wraps the sampler to note which reads are discrete.
struct Observed<'a> {
    sampler: &'a mut Sampler,
    discrete: Vec<DiscreteRead>,
}

impl Observed<'_> {
    fn note(&mut self, at: &ThetaAddress<'_>, value: Const) {
        self.discrete.push(DiscreteRead {
            function: at.function.to_string(),
            role: at.role.to_string(),
            value,
        });
    }
}

impl ThetaSource for Observed<'_> {
    fn theta(&mut self, domain: Domain, at: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        let value = self.sampler.theta(domain, at)?;
        if domain == Domain::Bool {
            self.note(at, value);
        }
        Ok(value)
    }

    fn choice(&mut self, n: u32, at: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let k = self.sampler.choice(n, at)?;
        self.note(at, Const::I64(i64::from(k)));
        Ok(k)
    }
}

/// Draws θ until `wanted` preimages of `y` are found or `max_draws` θ were drawn. A draw that
/// hits a limit is skipped and counted; an error other than a domain error or a limit (a bug)
/// stops drawing and is returned.
pub fn draw(
    inverse: &Inverse,
    y: &[Const],
    wanted: usize,
    seed: u64,
    max_draws: usize,
    progress: &Progress,
) -> Result<Draws, pinv::Error> {
    let mut sampler = Sampler::new(seed);
    let mut draws = Draws::default();
    while draws.preimages.len() < wanted && draws.drawn < max_draws {
        sampler.take_drawn();
        let mut observed = Observed {
            sampler: &mut sampler,
            discrete: Vec::new(),
        };
        let x = inverse.call(y, &mut observed);
        let discrete = observed.discrete;
        let theta = sampler.take_drawn();
        draws.drawn += 1;
        match x {
            Ok(x) => {
                draws.preimages.push(Preimage { x, theta, discrete });
                progress.set_position(draws.preimages.len() as u64);
            }
            Err(e) if e.is_domain_error() => {
                draws.rejected += 1;
                draws.first_rejection.get_or_insert(e);
                if draws.rejected % 256 == 0 {
                    progress.set_message(format!("{} rejected", draws.rejected));
                }
            }
            Err(e) if e.is_limit() => draws.limited += 1,
            Err(e) => return Err(e),
        }
    }
    progress.finish();
    Ok(draws)
}
