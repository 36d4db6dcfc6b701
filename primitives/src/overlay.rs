//! The overlay method table: layers of inverse rules, stacked over the standard layer.
//!
//! A [`Layer`] maps callees (a primitive opcode, or a module function by name) to inverse rules.
//! A [`Stack`] is an ordered list of layers, top first; its bottom is always the standard layer
//! ([`crate::standard`]). [`Stack::lookup`] asks each layer in turn for a rule covering the
//! callee and the known/unknown pattern, and the first layer that has one wins. The [`Lookup`]
//! records every layer consulted, misses included, with its version, so that compiled inverses
//! can be invalidated exactly when a layer they depended on changes.
//!
//! Layers are shared (`Arc`) and immutable once in a stack; editing a layer means building a new
//! version of it (same [`LayerId`], higher version) and replacing it in the stack.

use crate::pattern::Pattern;
use crate::rule::InverseRule;
use pinv_core::ir::Opcode;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a rule inverts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Callee {
    /// A primitive operation.
    Prim(Opcode),
    /// A module function, by its module-level name.
    Function(String),
}

impl fmt::Display for Callee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Callee::Prim(op) => write!(f, "{op}"),
            Callee::Function(name) => write!(f, "%{name}"),
        }
    }
}

/// The identity of a layer, kept across its versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LayerId(pub u64);

static NEXT_LAYER: AtomicU64 = AtomicU64::new(1);

/// A layer's identity and version: what a compiled inverse depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LayerStamp {
    pub id: LayerId,
    pub version: u64,
}

/// A table from callees to inverse rules.
#[derive(Clone, Debug)]
pub struct Layer {
    name: String,
    id: LayerId,
    version: u64,
    rules: BTreeMap<Callee, Vec<Arc<dyn InverseRule>>>,
}

impl Layer {
    /// An empty layer with a fresh identity.
    pub fn new(name: impl Into<String>) -> Layer {
        Layer {
            name: name.into(),
            id: LayerId(NEXT_LAYER.fetch_add(1, Ordering::Relaxed)),
            version: 0,
            rules: BTreeMap::new(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn id(&self) -> LayerId {
        self.id
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn stamp(&self) -> LayerStamp {
        LayerStamp {
            id: self.id,
            version: self.version,
        }
    }

    /// Adds a rule for `callee`, after the ones it already has (earlier rules win).
    pub fn add(&mut self, callee: Callee, rule: impl InverseRule + 'static) -> &mut Layer {
        self.add_arc(callee, Arc::new(rule))
    }

    /// Adds a shared rule for `callee`, after the ones it already has.
    pub fn add_arc(&mut self, callee: Callee, rule: Arc<dyn InverseRule>) -> &mut Layer {
        self.rules.entry(callee).or_default().push(rule);
        self.version += 1;
        self
    }

    /// Builder form of [`Layer::add`].
    pub fn with(mut self, callee: Callee, rule: impl InverseRule + 'static) -> Layer {
        self.add(callee, rule);
        self
    }

    /// Removes every rule for `callee`; returns whether there were any.
    pub fn remove(&mut self, callee: &Callee) -> bool {
        let removed = self.rules.remove(callee).is_some();
        if removed {
            self.version += 1;
        }
        removed
    }

    /// The rules for `callee`, in priority order.
    pub fn rules_for(&self, callee: &Callee) -> &[Arc<dyn InverseRule>] {
        self.rules.get(callee).map_or(&[], Vec::as_slice)
    }

    /// The first rule for `callee` that covers `pattern`.
    pub fn find(&self, callee: &Callee, pattern: &Pattern) -> Option<&Arc<dyn InverseRule>> {
        self.rules_for(callee).iter().find(|r| r.covers(pattern))
    }

    /// Every callee with at least one rule.
    pub fn callees(&self) -> impl Iterator<Item = &Callee> {
        self.rules.keys()
    }
}

/// A rule found by [`Stack::lookup`], with the layer it came from.
#[derive(Clone, Debug)]
pub struct Found {
    pub layer: LayerStamp,
    pub layer_name: String,
    pub rule: Arc<dyn InverseRule>,
}

/// The outcome of a lookup: the rule (if any layer had one) and every layer consulted.
#[derive(Clone, Debug)]
pub struct Lookup {
    pub found: Option<Found>,
    /// The layers asked, top first, up to and including the one that answered.
    pub consulted: Vec<LayerStamp>,
}

/// Layers, top first, over the standard layer.
#[derive(Clone, Debug)]
pub struct Stack {
    /// Top first; the last is the standard layer.
    layers: Vec<Arc<Layer>>,
}

impl Default for Stack {
    fn default() -> Stack {
        Stack::standard()
    }
}

impl Stack {
    /// The stack of just the standard layer.
    pub fn standard() -> Stack {
        Stack {
            layers: vec![crate::standard_layer()],
        }
    }

    /// This stack with `layer` on top.
    pub fn with(&self, layer: Layer) -> Stack {
        self.with_arc(Arc::new(layer))
    }

    /// This stack with a shared `layer` on top.
    pub fn with_arc(&self, layer: Arc<Layer>) -> Stack {
        let mut layers = Vec::with_capacity(self.layers.len() + 1);
        layers.push(layer);
        layers.extend(self.layers.iter().cloned());
        Stack { layers }
    }

    /// Puts `layer` on top (builder style).
    pub fn push(&mut self, layer: Layer) -> &mut Stack {
        self.layers.insert(0, Arc::new(layer));
        self
    }

    /// Removes the top layer, never the standard one; returns it.
    pub fn pop(&mut self) -> Option<Arc<Layer>> {
        if self.layers.len() > 1 {
            Some(self.layers.remove(0))
        } else {
            None
        }
    }

    /// Replaces the layer with the same id as `layer` (a new version of it); returns whether one
    /// was found.
    pub fn replace(&mut self, layer: Layer) -> bool {
        match self.layers.iter().position(|l| l.id() == layer.id()) {
            Some(i) => {
                self.layers[i] = Arc::new(layer);
                true
            }
            None => false,
        }
    }

    /// The layers, top first.
    pub fn layers(&self) -> &[Arc<Layer>] {
        &self.layers
    }

    /// What identifies this stack for caching: every layer's id and version, top first.
    pub fn identity(&self) -> Vec<LayerStamp> {
        self.layers.iter().map(|l| l.stamp()).collect()
    }

    /// Finds the rule for `callee` and `pattern`: the first layer, from the top, with a rule
    /// covering them wins.
    pub fn lookup(&self, callee: &Callee, pattern: &Pattern) -> Lookup {
        let mut consulted = Vec::new();
        for layer in &self.layers {
            consulted.push(layer.stamp());
            if let Some(rule) = layer.find(callee, pattern) {
                return Lookup {
                    found: Some(Found {
                        layer: layer.stamp(),
                        layer_name: layer.name().to_string(),
                        rule: Arc::clone(rule),
                    }),
                    consulted,
                };
            }
        }
        Lookup {
            found: None,
            consulted,
        }
    }
}
