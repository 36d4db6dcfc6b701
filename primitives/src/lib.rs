//! pinv-primitives: the overlay method table — every primitive's parametric inverses, their θ
//! domains and their PGFs.
//!
//! - [`pattern`]: which operands are known when an instruction is inverted.
//! - [`rule`]: the [`InverseRule`] contract (inverse, PGF, documentation).
//! - [`emit`]: the [`Emitter`] rules write IR with.
//! - [`overlay`]: [`Layer`]s of rules and the [`Stack`] that looks rules up, top layer first.
//! - [`rules`]: the standard rules, one module per family of primitives.
//! - [`declared`]: a module's own `inverse`/`pgf` declarations as a layer.
//! - [`catalogue`]: the table described from itself (`pinv primitives`).
//! - [`testing`]: the harness that runs rules as IR and checks soundness and completeness.

pub mod catalogue;
pub mod declared;
pub mod emit;
pub mod overlay;
pub mod pattern;
pub mod rule;
pub mod rules;
pub mod testing;

pub use emit::{EmitOptions, Emitter, Mode};
pub use overlay::{Callee, Found, Layer, LayerId, LayerStamp, Lookup, Stack};
pub use pattern::{Arg, Knowledge, Pattern};
pub use rule::{InverseRule, RuleDoc, RuleError, ThetaDoc, ThetaKind};

use std::sync::{Arc, OnceLock};

/// The standard layer: a rule for every primitive opcode and every known/unknown pattern.
///
/// Built once and shared; every [`Stack`] ends with it.
pub fn standard() -> Arc<Layer> {
    standard_layer()
}

pub(crate) fn standard_layer() -> Arc<Layer> {
    static STANDARD: OnceLock<Arc<Layer>> = OnceLock::new();
    Arc::clone(STANDARD.get_or_init(|| Arc::new(rules::standard_rules())))
}
