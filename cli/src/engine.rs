//! `--engine jit|interp`: the option of every command that runs code.

use clap::Args;
use pinv::Engine;

#[derive(Args, Debug, Clone, Copy)]
pub struct EngineArg {
    /// Run native code compiled with Cranelift (`jit`) or the reference interpreter (`interp`).
    /// Both give the same results, bit for bit.
    #[arg(long, value_name = "ENGINE", default_value = "jit", value_parser = parse_engine)]
    pub engine: Engine,
}

fn parse_engine(text: &str) -> Result<Engine, pinv::UnknownEngine> {
    text.trim().parse()
}
