//! pinv: parametric inverses of programs.

pub mod check;
pub mod error;
pub mod program;
pub mod reorient;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod theta;

pub use error::{Error, Result};
pub use pinv_core::ir::{Const, Type};
pub use program::{Inverse, Program};
pub use theta::{Sampler, TextTape, ThetaSchema};
