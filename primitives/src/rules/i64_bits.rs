//! (being written)
use crate::overlay::Layer;

pub fn register(_: &mut Layer) {}
