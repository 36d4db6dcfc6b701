//! The IR verifier. (Being written.)

/// An IR invariant that does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("verifier error")]
pub struct VerifyError;

/// Verifies every function of a module.
pub fn verify_module(module: &super::Module) -> Result<(), VerifyError> {
    let _ = module;
    Ok(())
}
