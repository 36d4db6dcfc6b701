//! Typed ids for the entities of the IR, stored in dense maps (`cranelift_entity::PrimaryMap`).
//!
//! A [`Value`] can never be used where a [`Block`] is meant. Ids are only meaningful inside the
//! function (or, for [`FuncId`], the module) that allocated them.

use cranelift_entity::entity_impl;

/// A function of a [`super::Module`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// A basic block of a function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// An SSA value: a block parameter or an instruction result.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");
