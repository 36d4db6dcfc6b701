//! `--jobs N`: the option of every command that splits its work over threads.

use clap::Args;

#[derive(Args, Debug, Clone, Copy)]
pub struct JobsArg {
    /// Threads to work on (default: one per core). The results are the same whatever the
    /// number: the work is cut into chunks seeded from the seed and their number alone.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

impl JobsArg {
    /// The threads to use.
    pub fn get(self) -> usize {
        self.jobs
            .map_or_else(pinv::parallel::default_jobs, |j| j as usize)
    }
}
