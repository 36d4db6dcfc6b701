//! Drawing preimages of y with sampled θ: the loop behind `pinv sample` and `pinv plot`.
//!
//! θ is drawn from its domains by the seeded [`Sampler`]; a draw for which the inverse reports a
//! domain error (θ or y outside its domain) is rejected and counted. Drawing stops after `wanted`
//! preimages or `max_draws` draws, whichever comes first, so it always ends.
//!
//! The draws are cut into chunks of [`DRAWS_PER_CHUNK`], each with its own sampler, drawn on
//! `jobs` threads and used in order ([`pinv::parallel::ordered`]): the preimages, their order
//! and the counts are the same for any number of threads.

use crate::progress::Progress;
use pinv::ir::Domain;
use pinv::{Const, Inverse, Sampler};
use pinv::{ThetaAddress, ThetaError, ThetaSource};
use std::ops::ControlFlow;

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
    /// The preimages found, when they were kept ([`draw`]; [`draw_each`] hands them on).
    pub preimages: Vec<Preimage>,
    /// Preimages found.
    pub accepted: usize,
    /// θ drawn in all.
    pub drawn: usize,
    /// Draws the inverse rejected as out of its domain.
    pub rejected: usize,
    /// Draws whose run hit the step or depth limit (a θ that sends the inverse round a loop,
    /// or down a recursion, further than the limits allow): skipped, as rejected ones are.
    pub limited: usize,
    /// Why the first rejected draw was rejected.
    pub first_rejection: Option<pinv::Error>,
    /// Drawing stopped at the time limit ([`DrawConfig::deadline`]).
    pub timed_out: bool,
}

impl Draws {
    /// Accepted draws as a share of all draws, in percent.
    pub fn acceptance(&self) -> f64 {
        if self.drawn == 0 {
            0.0
        } else {
            100.0 * self.accepted as f64 / self.drawn as f64
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

/// Draws per chunk of work: each chunk has its own sampler, seeded from the seed and the
/// chunk's number ([`pinv::parallel::chunk_seed`]), so the draws do not depend on the threads.
pub const DRAWS_PER_CHUNK: usize = 4096;

/// What to draw, and on how many threads.
#[derive(Clone, Copy, Debug)]
pub struct DrawConfig {
    /// Preimages wanted.
    pub wanted: usize,
    pub seed: u64,
    /// Draws at most.
    pub max_draws: usize,
    /// Threads drawing at once (the draws are the same for any number).
    pub jobs: usize,
    /// When drawing stops, whatever it found (`--time-limit`); polled before every draw.
    pub deadline: Option<std::time::Instant>,
}

impl DrawConfig {
    /// `wanted` preimages from `seed` on `jobs` threads, with at most `max_draws` draws, by
    /// default [`default_max_draws`].
    pub fn new(wanted: usize, seed: u64, max_draws: Option<usize>, jobs: usize) -> DrawConfig {
        DrawConfig {
            wanted,
            seed,
            max_draws: max_draws.unwrap_or_else(|| default_max_draws(wanted)),
            jobs,
            deadline: None,
        }
    }

    /// Stops drawing at `deadline` (none: no limit).
    pub fn until(self, deadline: Option<std::time::Instant>) -> DrawConfig {
        DrawConfig { deadline, ..self }
    }
}

/// One draw's outcome (an accepted one as the caller's map made it).
enum Drawn<T> {
    Accepted(T),
    Rejected,
    Limited,
}

/// The draws of one chunk, in order.
struct Chunk<T> {
    drawn: Vec<Drawn<T>>,
    /// What `map` wrote for the chunk's preimages (one buffer per chunk: the thread that drew
    /// them allocates and the one that uses them frees it once).
    text: String,
    first_rejection: Option<pinv::Error>,
    /// An error that stops drawing (neither a domain error nor a limit: a bug), after the draws.
    error: Option<pinv::Error>,
    /// The time limit came before the chunk was done.
    timed_out: bool,
}

/// Draws chunk `k`: its share of the draws, stopping early once it alone has `wanted`
/// preimages (no chunk is asked for more); each preimage goes through `map`.
fn draw_chunk<T>(
    inverse: &Inverse,
    y: &[Const],
    config: &DrawConfig,
    k: usize,
    map: &impl Fn(Preimage, &mut String) -> T,
) -> Chunk<T> {
    let start = k.saturating_mul(DRAWS_PER_CHUNK);
    let end = start.saturating_add(DRAWS_PER_CHUNK).min(config.max_draws);
    let mut sampler = Sampler::new(pinv::parallel::chunk_seed(config.seed, k));
    let mut chunk = Chunk {
        drawn: Vec::new(),
        text: String::new(),
        first_rejection: None,
        error: None,
        timed_out: false,
    };
    let mut accepted = 0;
    for _ in start..end {
        if accepted >= config.wanted {
            break;
        }
        if config
            .deadline
            .is_some_and(|at| std::time::Instant::now() >= at)
        {
            chunk.timed_out = true;
            break;
        }
        sampler.take_drawn();
        let mut observed = Observed {
            sampler: &mut sampler,
            discrete: Vec::new(),
        };
        let x = inverse.call(y, &mut observed);
        let discrete = observed.discrete;
        let theta = sampler.take_drawn();
        chunk.drawn.push(match x {
            Ok(x) => {
                accepted += 1;
                Drawn::Accepted(map(Preimage { x, theta, discrete }, &mut chunk.text))
            }
            Err(e) if e.is_domain_error() => {
                chunk.first_rejection.get_or_insert(e);
                Drawn::Rejected
            }
            Err(e) if e.is_limit() => Drawn::Limited,
            Err(e) => {
                chunk.error = Some(e);
                break;
            }
        });
    }
    chunk
}

/// Draws θ until `wanted` preimages of `y` are found or `max_draws` θ were drawn, handing each
/// preimage to `sink` as it is found (in the same order whatever `jobs`; a `sink` that breaks
/// stops drawing), and returns the counts (`preimages` is left empty). `map` turns a preimage
/// into what `sink` takes on the thread that drew it, so that work is shared out too; it may
/// write text to its chunk's buffer, which `sink` gets with each (formatted lines, say, as
/// ranges of it). A draw that hits a limit is skipped and counted; an
/// error other than a domain error or a limit (a bug) stops drawing and is returned.
pub fn draw_each<T: Send>(
    inverse: &Inverse,
    y: &[Const],
    config: &DrawConfig,
    progress: &Progress,
    map: impl Fn(Preimage, &mut String) -> T + Sync,
    mut sink: impl FnMut(T, &str) -> ControlFlow<()>,
) -> Result<Draws, pinv::Error> {
    let mut draws = Draws::default();
    let mut failed = None;
    let chunks = config.max_draws.div_ceil(DRAWS_PER_CHUNK);
    pinv::parallel::ordered(
        config.jobs,
        chunks,
        |k| draw_chunk(inverse, y, config, k, &map),
        |_, chunk| {
            for drawn in chunk.drawn {
                if draws.accepted >= config.wanted {
                    return ControlFlow::Break(());
                }
                draws.drawn += 1;
                match drawn {
                    Drawn::Accepted(p) => {
                        draws.accepted += 1;
                        progress.set_position(draws.accepted as u64);
                        sink(p, &chunk.text)?;
                    }
                    Drawn::Rejected => {
                        draws.rejected += 1;
                        if draws.rejected % 256 == 0 {
                            progress.set_message(format!("{} rejected", draws.rejected));
                        }
                    }
                    Drawn::Limited => draws.limited += 1,
                }
            }
            if draws.first_rejection.is_none() {
                draws.first_rejection = chunk.first_rejection;
            }
            if let Some(e) = chunk.error {
                failed = Some(e);
                return ControlFlow::Break(());
            }
            if chunk.timed_out {
                draws.timed_out = true;
                return ControlFlow::Break(());
            }
            if draws.accepted >= config.wanted {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    progress.finish();
    match failed {
        Some(e) => Err(e),
        None => Ok(draws),
    }
}

/// [`draw_each`], keeping the preimages.
pub fn draw(
    inverse: &Inverse,
    y: &[Const],
    config: &DrawConfig,
    progress: &Progress,
) -> Result<Draws, pinv::Error> {
    let mut preimages = Vec::new();
    let mut draws = draw_each(
        inverse,
        y,
        config,
        progress,
        |p, _| p,
        |p, _| {
            preimages.push(p);
            ControlFlow::Continue(())
        },
    )?;
    draws.preimages = preimages;
    Ok(draws)
}
