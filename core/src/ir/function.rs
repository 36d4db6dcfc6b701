//! Functions: blocks with block parameters (no phi nodes), instructions and values in dense maps.
//!
//! A [`Function`] owns its blocks, instructions and values. `layout` gives the order of blocks;
//! its first block is the entry, whose parameters are the function's parameters. Each block's
//! instruction list ends with exactly one terminator once the function is complete; the verifier
//! (`crate::ir::verify`) checks this and the other invariants.
//!
//! The building methods (`create_block`, `append_block_param`, `append_inst`, ...) keep the maps
//! consistent: every value records its type and its definition.

use super::{
    Block, BlockCall, Const, Domain, FuncId, Inst, InstData, InstKind, Opcode, Type, Value,
    ValueList,
};
use crate::span::Span;
use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The types a function takes and returns. Several returns are a tuple in the language.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Signature {
    pub params: Vec<Type>,
    pub returns: Vec<Type>,
}

/// Where a function came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FuncKind {
    /// A `fn` of the module.
    Fn,
    /// An `inverse F(...)` declaration: its first `outputs` parameters are F's outputs, the rest are
    /// its θ parameters; it returns F's inputs.
    Inverse { of: String, outputs: usize },
    /// A `pgf F(...)` declaration: F's inputs in, the θ values of F's inverse out.
    Pgf { of: String },
    /// An inverse built by pinv for function `of`: F's outputs in, F's inputs out; θ is read from
    /// the tape with `theta` and `choice`, and domains are enforced with `check`.
    GeneratedInverse { of: String },
    /// A PGF built by pinv for function `of`: F's inputs in, nothing out; it writes the θ tape that
    /// makes the generated inverse reproduce those inputs, with `record`.
    GeneratedPgf { of: String },
}

impl FuncKind {
    /// The module-level name of a declaration of this kind for function `name`: `f`, `inverse:f`,
    /// `pgf:f`, or for generated code `f.inv` and `f.pgf`. The `:` and `.` keep them apart from
    /// every identifier.
    pub fn symbol(&self, name: &str) -> String {
        match self {
            FuncKind::Fn => name.to_string(),
            FuncKind::Inverse { .. } => format!("inverse:{name}"),
            FuncKind::Pgf { .. } => format!("pgf:{name}"),
            FuncKind::GeneratedInverse { .. } => format!("{name}.inv"),
            FuncKind::GeneratedPgf { .. } => format!("{name}.pgf"),
        }
    }
}

/// The successors of a block ([`Function::successors`]): up to two, kept inline (it derefs to
/// a slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Successors {
    blocks: [Block; 2],
    len: u8,
}

impl Default for Successors {
    fn default() -> Successors {
        Successors {
            blocks: [Block::from_u32(0); 2],
            len: 0,
        }
    }
}

impl Successors {
    fn push(&mut self, b: Block) {
        if let Some(slot) = self.blocks.get_mut(self.len as usize) {
            *slot = b;
            self.len += 1;
        }
    }
}

impl std::ops::Deref for Successors {
    type Target = [Block];
    fn deref(&self) -> &[Block] {
        &self.blocks[..self.len as usize]
    }
}

impl AsRef<[Block]> for Successors {
    fn as_ref(&self) -> &[Block] {
        self
    }
}

impl IntoIterator for Successors {
    type Item = Block;
    type IntoIter = std::iter::Take<std::array::IntoIter<Block, 2>>;
    fn into_iter(self) -> Self::IntoIter {
        self.blocks.into_iter().take(self.len as usize)
    }
}

/// How a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// The `index`-th parameter of a block.
    Param(Block, u32),
    /// The `index`-th result of an instruction.
    Result(Inst, u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockData {
    pub params: Vec<Value>,
    /// The instructions in order; the last is the terminator in a complete function.
    pub insts: Vec<Inst>,
}

/// A function in SSA form.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The module-level name (see [`FuncKind::symbol`]).
    pub name: String,
    pub kind: FuncKind,
    pub sig: Signature,
    /// The source names of the parameters, for printing and diagnostics.
    pub param_names: Vec<String>,
    /// The span of the whole declaration.
    pub span: Span,
    pub blocks: PrimaryMap<Block, BlockData>,
    pub insts: PrimaryMap<Inst, InstData>,
    pub values: PrimaryMap<Value, ValueData>,
    /// The order of blocks; `layout[0]` is the entry block.
    pub layout: Vec<Block>,
}

impl Function {
    /// Whether `self` and `other` are the same code: what their text form says (signature, kind,
    /// blocks, instructions, values, layout), name, parameter names and spans aside. Numbering
    /// counts: this is for functions built the same way, such as outlined helpers, which are
    /// numbered in the order they are made. See [`Function::code_hash`].
    pub fn same_code(&self, other: &Function) -> bool {
        let insts_equal = self.insts.len() == other.insts.len()
            && self
                .insts
                .values()
                .zip(other.insts.values())
                .all(|(a, b)| a.kind == b.kind && a.results == b.results);
        self.sig == other.sig
            && self.kind == other.kind
            && self.layout == other.layout
            && self.blocks == other.blocks
            && self.values == other.values
            && insts_equal
    }

    /// A hash of what [`Function::same_code`] compares (constants by bits, instructions by
    /// kind, operation, operands and targets): equal code, equal hash.
    pub fn code_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        (&self.sig, &self.kind, &self.layout).hash(&mut h);
        for data in self.insts.values() {
            std::mem::discriminant(&data.kind).hash(&mut h);
            match &data.kind {
                InstKind::Const(c) => c.hash(&mut h),
                InstKind::Prim { op, .. } => op.hash(&mut h),
                InstKind::Call { callee, .. } => callee.hash(&mut h),
                _ => {}
            }
            data.kind.for_each_arg(|v| v.hash(&mut h));
            for call in data.kind.successors().iter() {
                call.block.hash(&mut h);
            }
            data.results.as_slice().hash(&mut h);
        }
        h.finish()
    }

    /// An empty function with no blocks. Call [`Function::create_entry`] (or create blocks by hand)
    /// before appending instructions.
    pub fn new(name: impl Into<String>, kind: FuncKind, sig: Signature) -> Function {
        Function {
            name: name.into(),
            kind,
            sig,
            param_names: Vec::new(),
            span: Span::default(),
            blocks: PrimaryMap::new(),
            insts: PrimaryMap::new(),
            values: PrimaryMap::new(),
            layout: Vec::new(),
        }
    }

    /// Creates the entry block, with one parameter per signature parameter, and returns it.
    pub fn create_entry(&mut self) -> Block {
        let block = self.create_block();
        for ty in self.sig.params.clone() {
            self.append_block_param(block, ty);
        }
        block
    }

    /// The entry block, if there is one.
    pub fn entry(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    /// Creates a block at the end of the layout.
    pub fn create_block(&mut self) -> Block {
        let block = self.blocks.push(BlockData::default());
        self.layout.push(block);
        block
    }

    /// Adds a parameter of type `ty` to `block` and returns its value.
    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let index = self.blocks[block].params.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Param(block, index),
        });
        self.blocks[block].params.push(v);
        v
    }

    /// Appends an instruction to `block`, creating one result per entry of `result_types`.
    pub fn append_inst(
        &mut self,
        block: Block,
        kind: InstKind,
        result_types: &[Type],
        span: Span,
    ) -> Inst {
        let inst = self.create_inst(kind, result_types, span);
        self.blocks[block].insts.push(inst);
        inst
    }

    /// Creates an instruction in no block (the caller places it in a block's list), with one
    /// result per entry of `result_types`.
    pub fn create_inst(&mut self, kind: InstKind, result_types: &[Type], span: Span) -> Inst {
        let inst = self.insts.push(InstData {
            kind,
            results: ValueList::new(),
            span,
        });
        let results = result_types
            .iter()
            .enumerate()
            .map(|(i, &ty)| {
                self.values.push(ValueData {
                    ty,
                    def: ValueDef::Result(inst, i as u32),
                })
            })
            .collect();
        self.insts[inst].results = results;
        inst
    }

    /// Appends the existing single-result instruction `inst` to `block` again (a pass that
    /// rebuilds a block moves it to its new place), with its kind replaced by `kind` if given
    /// and its span by `span`; returns its result. The caller removes it from where it was.
    pub fn reinsert_inst(
        &mut self,
        block: Block,
        inst: Inst,
        kind: Option<InstKind>,
        span: Span,
    ) -> Value {
        let data = &mut self.insts[inst];
        if let Some(kind) = kind {
            data.kind = kind;
        }
        data.span = span;
        let v = data.results[0];
        self.blocks[block].insts.push(inst);
        v
    }

    /// Appends `const c` and returns its value.
    pub fn ins_const(&mut self, block: Block, c: Const, span: Span) -> Value {
        let inst = self.append_inst(block, InstKind::Const(c), &[c.ty()], span);
        self.insts[inst].results[0]
    }

    /// Appends a primitive operation and returns its value.
    pub fn ins_prim(
        &mut self,
        block: Block,
        op: Opcode,
        args: impl Into<ValueList>,
        span: Span,
    ) -> Value {
        let inst = self.append_inst(
            block,
            InstKind::Prim {
                op,
                args: args.into(),
            },
            &[op.result_type()],
            span,
        );
        self.insts[inst].results[0]
    }

    /// Appends a call of `callee`, whose signature returns `returns`, and returns its results.
    pub fn ins_call(
        &mut self,
        block: Block,
        callee: FuncId,
        args: impl Into<ValueList>,
        returns: &[Type],
        span: Span,
    ) -> Vec<Value> {
        let args = args.into();
        let inst = self.append_inst(block, InstKind::Call { callee, args }, returns, span);
        self.insts[inst].results.to_vec()
    }

    /// Appends `theta domain "role"` and returns its value.
    pub fn ins_theta(&mut self, block: Block, domain: Domain, role: String, span: Span) -> Value {
        self.append_theta(block, domain, None, role, span)
    }

    /// Appends `theta domain within lo, hi "role"`: a θ from `domain` narrowed at run time to
    /// the values between `lo` and `hi` ([`Domain::within`]).
    pub fn ins_theta_within(
        &mut self,
        block: Block,
        domain: Domain,
        bounds: [Value; 2],
        role: String,
        span: Span,
    ) -> Value {
        self.append_theta(block, domain, Some(bounds), role, span)
    }

    fn append_theta(
        &mut self,
        block: Block,
        domain: Domain,
        within: Option<[Value; 2]>,
        role: String,
        span: Span,
    ) -> Value {
        let kind = InstKind::Theta(Box::new(crate::ir::ThetaRead {
            domain,
            role,
            within,
        }));
        let inst = self.append_inst(block, kind, &[domain.ty()], span);
        self.insts[inst].results[0]
    }

    /// Appends `choice n "role"` and returns its (i64) value.
    pub fn ins_choice(&mut self, block: Block, n: u32, role: String, span: Span) -> Value {
        let inst = self.append_inst(block, InstKind::Choice { n, role }, &[Type::I64], span);
        self.insts[inst].results[0]
    }

    /// Whether `block` ends in `return`.
    pub fn ends_in_return(&self, block: Block) -> bool {
        self.terminator(block)
            .is_some_and(|t| matches!(self.insts[t].kind, InstKind::Return { .. }))
    }

    /// Appends `record value "role"` (generated PGF code only).
    pub fn ins_record(&mut self, block: Block, value: Value, role: String, span: Span) -> Inst {
        self.ins_void(block, InstKind::Record { value, role }, span)
    }

    /// Appends an instruction with no results (`check`, `record`, or a terminator).
    pub fn ins_void(&mut self, block: Block, kind: InstKind, span: Span) -> Inst {
        self.append_inst(block, kind, &[], span)
    }

    /// Appends `jump dest(args)`.
    pub fn ins_jump(
        &mut self,
        block: Block,
        dest: Block,
        args: impl Into<ValueList>,
        span: Span,
    ) -> Inst {
        self.ins_void(
            block,
            InstKind::Jump {
                dest: BlockCall::new(dest, args),
            },
            span,
        )
    }

    /// Appends `return args`.
    pub fn ins_return(&mut self, block: Block, args: impl Into<ValueList>, span: Span) -> Inst {
        let args = args.into();
        self.ins_void(block, InstKind::Return { args }, span)
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// The constant `v` is defined as by a `const` instruction, if it is one.
    pub fn constant(&self, v: Value) -> Option<Const> {
        match self.values.get(v)?.def {
            ValueDef::Result(inst, _) => match self.insts[inst].kind {
                InstKind::Const(c) => Some(c),
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    /// The one value `v` has, whatever the inputs, apart from NaN, where it is an operation of
    /// a value with itself ([`Opcode::with_itself`]: `a − a` is 0 unless `a` is infinite or NaN).
    pub fn value_with_itself(&self, v: Value) -> Option<Const> {
        match self.values.get(v)?.def {
            ValueDef::Result(inst, _) => match &self.insts[inst].kind {
                InstKind::Prim { op, args } if args.len() == 2 && args[0] == args[1] => {
                    op.with_itself()
                }
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    /// The terminator of a block: its last instruction, if that is a terminator.
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        let last = *self.blocks[block].insts.last()?;
        self.insts[last].kind.is_terminator().then_some(last)
    }

    /// Whether `block` has a terminator.
    pub fn is_terminated(&self, block: Block) -> bool {
        self.terminator(block).is_some()
    }

    /// The blocks a block branches to, in order (a block appears twice if both edges go there).
    /// At most two, so without allocating: CFG walks call this once per block and edge.
    pub fn successors(&self, block: Block) -> Successors {
        let mut out = Successors::default();
        if let Some(t) = self.terminator(block) {
            match &self.insts[t].kind {
                InstKind::Jump { dest } => out.push(dest.block),
                InstKind::Brif {
                    then_dest,
                    else_dest,
                    ..
                } => {
                    out.push(then_dest.block);
                    out.push(else_dest.block);
                }
                _ => {}
            }
        }
        out
    }

    /// The heads of the function's loops: the targets of the edges that go back to a block
    /// still on the stack of a depth-first walk from the entry. A cycle's blocks cannot all be
    /// left before one of them is reached again, so every cycle has such an edge. (A work
    /// list: no recursion as deep as the graph.)
    pub fn loop_heads(&self) -> BTreeSet<Block> {
        let mut heads = BTreeSet::new();
        let Some(entry) = self.entry() else {
            return heads;
        };
        let mut state: BTreeMap<Block, bool> = BTreeMap::new(); // true: on the stack
        let mut stack = vec![(entry, self.successors(entry), 0usize)];
        state.insert(entry, true);
        while let Some((b, succs, next)) = stack.last_mut() {
            let Some(&s) = succs.get(*next) else {
                state.insert(*b, false);
                stack.pop();
                continue;
            };
            *next += 1;
            match state.get(&s) {
                Some(true) => {
                    heads.insert(s);
                }
                Some(false) => {}
                None => {
                    state.insert(s, true);
                    let ss = self.successors(s);
                    stack.push((s, ss, 0));
                }
            }
        }
        heads
    }

    /// The blocks reachable from the entry, in depth-first preorder.
    pub fn reachable_blocks(&self) -> Vec<Block> {
        match self.entry() {
            Some(entry) => self.blocks_reachable_from(entry),
            None => Vec::new(),
        }
    }

    /// The edges that leave `blocks`, by the block they enter: see [`IncomingEdges`].
    pub fn incoming_edges(&self, blocks: &[Block]) -> IncomingEdges {
        let mut count: SecondaryMap<Block, u32> = SecondaryMap::new();
        let terminators = || blocks.iter().filter_map(|&b| self.terminator(b));
        for t in terminators() {
            for call in self.insts[t].kind.successors() {
                count[call.block] += 1;
            }
        }
        let mut first: SecondaryMap<Block, u32> = SecondaryMap::new();
        let mut total = 0;
        for (b, &c) in count.iter() {
            first[b] = total;
            total += c;
        }
        let mut edges = vec![(Inst::new(0), 0); total as usize];
        let mut filled: SecondaryMap<Block, u32> = SecondaryMap::new();
        for t in terminators() {
            for (d, call) in self.insts[t].kind.successors().iter().enumerate() {
                edges[(first[call.block] + filled[call.block]) as usize] = (t, d);
                filled[call.block] += 1;
            }
        }
        IncomingEdges {
            first,
            count,
            edges,
        }
    }

    /// The blocks reachable from `start` (itself included), in depth-first preorder.
    pub fn blocks_reachable_from(&self, start: Block) -> Vec<Block> {
        let mut seen = cranelift_entity::EntitySet::with_capacity(self.blocks.len());
        let mut order = Vec::new();
        let mut stack = vec![start];
        while let Some(b) = stack.pop() {
            if !seen.insert(b) {
                continue;
            }
            order.push(b);
            for s in self.successors(b).into_iter().rev() {
                if !seen.contains(s) {
                    stack.push(s);
                }
            }
        }
        order
    }

    /// Removes unreachable blocks from the layout. Their instructions and values stay allocated
    /// (ids are never reused) but no longer appear in the function.
    pub fn remove_unreachable_blocks(&mut self) {
        let reachable: std::collections::HashSet<Block> =
            self.reachable_blocks().into_iter().collect();
        self.layout.retain(|b| reachable.contains(b));
    }

    /// The instructions in layout order, with their block.
    pub fn insts_in_layout(&self) -> impl Iterator<Item = (Block, Inst)> + '_ {
        self.layout
            .iter()
            .flat_map(move |&b| self.blocks[b].insts.iter().map(move |&i| (b, i)))
    }

    /// Whether the function contains no inverse-only instruction (`theta`, `choice`, `check`).
    pub fn is_forward_code(&self) -> bool {
        self.insts_in_layout()
            .all(|(_, i)| !self.insts[i].kind.is_inverse_only())
    }
}

/// The edges leaving a set of blocks, by the block they enter ([`Function::incoming_edges`]):
/// for each, the branch that takes it and which of the branch's destinations it is ([`InstKind::successor`]). Kept flat, one
/// slice per block, since a large generated function has hundreds of thousands of blocks.
pub struct IncomingEdges {
    first: SecondaryMap<Block, u32>,
    count: SecondaryMap<Block, u32>,
    edges: Vec<(Inst, usize)>,
}

impl IncomingEdges {
    /// The edges into `b` from the set's blocks.
    pub fn of(&self, b: Block) -> &[(Inst, usize)] {
        let start = self.first[b] as usize;
        &self.edges[start..start + self.count[b] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x · k + x`, named `name`, with every span `span`.
    fn helper(name: &str, k: f64, op: Opcode, span: Span) -> Function {
        let sig = Signature {
            params: vec![Type::F64],
            returns: vec![Type::F64],
        };
        let mut f = Function::new(name, FuncKind::Fn, sig);
        let entry = f.create_entry();
        let x = f.blocks[entry].params[0];
        let c = f.ins_const(entry, Const::F64(k), span);
        let y = f.ins_prim(entry, op, vec![x, c], span);
        let z = f.ins_prim(entry, Opcode::Fadd, vec![y, x], span);
        f.ins_return(entry, vec![z], span);
        f
    }

    #[test]
    fn same_code_ignores_names_and_spans_only() {
        let a = helper("a", 2.0, Opcode::Fmul, Span::new(1, 2));
        let b = helper("b", 2.0, Opcode::Fmul, Span::new(5, 9));
        assert!(a.same_code(&b) && a.code_hash() == b.code_hash());
        for other in [
            helper("a", -2.0, Opcode::Fmul, Span::new(1, 2)),
            helper("a", 2.0, Opcode::Fsub, Span::new(1, 2)),
        ] {
            assert!(!a.same_code(&other));
            assert_ne!(a.code_hash(), other.code_hash());
        }
        // Constants by bits: 0.0 and -0.0 are different code.
        let zero = helper("a", 0.0, Opcode::Fmul, Span::new(1, 2));
        assert!(!zero.same_code(&helper("a", -0.0, Opcode::Fmul, Span::new(1, 2))));
    }
}
