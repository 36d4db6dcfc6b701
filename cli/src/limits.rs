//! `--step-limit N`, `--time-limit SECONDS` and `--max-instructions N`: the limits of every
//! command that builds an inverse and runs it (`invert`, `sample`, `plot`, `pgf`; `check` has
//! its own, with a default time limit per function, and the same `--max-instructions`).

use clap::Args;
use std::time::{Duration, Instant};

#[derive(Args, Debug, Clone, Copy)]
pub struct LimitsArg {
    /// Each run (forward, inverse, PGF) stops with a limit error after this many executed
    /// instructions; a θ whose run does is skipped and counted.
    #[arg(long, default_value_t = pinv::DEFAULT_STEP_LIMIT, value_parser = crate::values::parse_step_limit)]
    pub step_limit: u64,
    /// Seconds the command may take, building the inverse included (no limit by default):
    /// building past it is an error, and drawing stops there with what it found.
    #[arg(long, value_name = "SECONDS", value_parser = crate::values::parse_seconds)]
    pub time_limit: Option<f64>,
    #[command(flatten)]
    pub size: SizeLimitArg,
}

/// `--max-instructions N`: the largest program an inverse is built for.
#[derive(Args, Debug, Clone, Copy)]
pub struct SizeLimitArg {
    /// The most IR instructions the function inverted and the functions it calls may have
    /// together: a larger one is refused at once (building an inverse takes about 10-40 KB of
    /// memory per instruction).
    #[arg(long, value_name = "N", default_value_t = pinv::reorient::DEFAULT_MAX_INSTRUCTIONS)]
    pub max_instructions: usize,
}

impl LimitsArg {
    /// The interpreter's and native code's limits.
    pub fn interp(&self) -> pinv::InterpConfig {
        pinv::InterpConfig::default().with_step_limit(self.step_limit)
    }

    /// The time limit, if any.
    pub fn time(&self) -> Option<Duration> {
        self.time_limit.map(Duration::from_secs_f64)
    }

    /// When the time limit, counted from `start`, comes.
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.time().map(|limit| start + limit)
    }
}
