//! Outlining: moving a single-entry, single-exit piece of a function into a function of its own,
//! called in its place.
//!
//! Generated inverses repeat the same computation at every step of a chain or a loop body (the
//! search for the run of floats that give an output is about 300 instructions and 36 blocks
//! each time). [`outline`] cuts such a piece out of the function being built, so that the caller
//! holds one `call`, and the piece becomes a function that identical pieces can share (the
//! caller compares them by their text, [`Outlined::key`]).
//!
//! The piece is what was appended since a mark ([`Mark`]): the instructions added to the mark's
//! block after it, and every block created after it, ending in the block `end` (not yet
//! terminated) with the piece's results. Invariants it keeps:
//!
//! - The caller's values that the piece reads become the helper's parameters, in the order the
//!   piece first reads them; the results keep their value ids in the caller (the `call` defines
//!   them), so code emitted after the piece is unchanged.
//! - Nothing that touches the θ tape, checks or leaves the function (`theta`, `choice`, `check`,
//!   `record`, `segment`, `return`, `fail`) is ever moved: [`outline`] then leaves the function
//!   as it was and returns `None`.
//! - The blocks the piece created are taken out of the layout (their ids stay allocated, empty,
//!   until [`Function::compact`]).

use super::entities::{Block, FuncId, Inst, Value};
use super::function::{FuncKind, Function, Signature, ValueDef};
use super::instr::InstKind;
use super::types::Type;
use std::collections::HashMap;

/// Where a piece to outline starts: a block and how many instructions it had, and how many
/// blocks the function had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    block: Block,
    insts: usize,
    blocks: usize,
}

impl Mark {
    /// The current end of `func`, appending to `block`.
    pub fn at(func: &Function, block: Block) -> Mark {
        Mark {
            block,
            insts: func.blocks[block].insts.len(),
            blocks: func.blocks.len(),
        }
    }
}

/// A piece cut out of a function: the `call` left in its place (its callee is a placeholder
/// until the caller adds `helper` to the module and sets it) and the helper itself.
#[derive(Clone, Debug)]
pub struct Outlined {
    pub call: Inst,
    pub helper: Function,
}

impl Outlined {
    /// The helper's text without its name: equal for pieces that compute the same thing the
    /// same way, so that one helper serves them all.
    pub fn key(&self) -> String {
        let mut f = self.helper.clone();
        f.name = String::new();
        let module = super::module::Module::new();
        super::write::write_function_in(&module, &f, &super::write::WriteOptions::default())
    }

    /// Points the call at the helper, once the helper is in the module as `id`.
    pub fn set_callee(&self, func: &mut Function, id: FuncId) {
        if let InstKind::Call { callee, .. } = &mut func.insts[self.call].kind {
            *callee = id;
        }
    }
}

/// Moves the piece appended to `func` since `mark`, which ends in block `end` with `results`,
/// into a helper named `name` of kind `kind` (see the module docs). Returns `None`, changing
/// nothing, where the piece cannot be moved: it holds an instruction that must stay, a result is
/// not computed inside it (or is given twice), or it is empty.
pub fn outline(
    func: &mut Function,
    mark: Mark,
    end: Block,
    results: &[Value],
    name: &str,
    kind: FuncKind,
) -> Option<Outlined> {
    let new_block = |b: Block| cranelift_entity::EntityRef::index(b) >= mark.blocks;
    if end != mark.block && !new_block(end) {
        return None;
    }
    // The piece's blocks: the mark's block (from the mark on), then the new ones in layout order.
    let mut blocks: Vec<Block> = vec![mark.block];
    blocks.extend(func.layout.iter().copied().filter(|&b| new_block(b)));
    let insts_of = |func: &Function, b: Block| -> Vec<Inst> {
        let all = &func.blocks[b].insts;
        if b == mark.block {
            all[mark.insts.min(all.len())..].to_vec()
        } else {
            all.clone()
        }
    };
    let mut defined: std::collections::HashSet<Value> = std::collections::HashSet::new();
    let mut count = 0;
    for &b in &blocks {
        if b != mark.block {
            defined.extend(func.blocks[b].params.iter().copied());
        }
        for i in insts_of(func, b) {
            count += 1;
            let kind = &func.insts[i].kind;
            if kind.is_theta_related()
                || matches!(kind, InstKind::Return { .. } | InstKind::Fail { .. })
            {
                return None;
            }
            defined.extend(func.insts[i].results.iter().copied());
        }
    }
    let mut distinct = results.to_vec();
    distinct.sort();
    distinct.dedup();
    if count == 0 || distinct.len() != results.len() || results.iter().any(|r| !defined.contains(r))
    {
        return None;
    }
    // The caller's values the piece reads, in the order it first reads them.
    let mut inputs: Vec<Value> = Vec::new();
    for &b in &blocks {
        for i in insts_of(func, b) {
            func.insts[i].kind.for_each_arg(|a| {
                if !defined.contains(&a) && !inputs.contains(&a) {
                    inputs.push(a);
                }
            });
        }
    }
    let sig = Signature {
        params: inputs.iter().map(|&v| func.value_type(v)).collect(),
        returns: results.iter().map(|&v| func.value_type(v)).collect(),
    };
    let mut helper = Function::new(name, kind, sig);
    helper.span = func.span;
    let entry = helper.create_entry();
    let mut values: HashMap<Value, Value> = inputs
        .iter()
        .copied()
        .zip(helper.blocks[entry].params.clone())
        .collect();
    let mut block_map: HashMap<Block, Block> = HashMap::new();
    block_map.insert(mark.block, entry);
    for &b in &blocks[1..] {
        let nb = helper.create_block();
        block_map.insert(b, nb);
        for &p in &func.blocks[b].params.clone() {
            let np = helper.append_block_param(nb, func.value_type(p));
            values.insert(p, np);
        }
    }
    // Copy in layout order; a value is always defined before its uses in a dominance order, but
    // not necessarily in layout order, so the results are allocated first.
    let mut copies: Vec<(Block, Inst)> = Vec::new();
    for &b in &blocks {
        for i in insts_of(func, b) {
            let data = &func.insts[i];
            let tys: Vec<Type> = data.results.iter().map(|&r| func.value_type(r)).collect();
            let ni = helper.create_inst(data.kind.clone(), &tys, data.span);
            for (&old, &new) in data.results.iter().zip(&helper.insts[ni].results.clone()) {
                values.insert(old, new);
            }
            copies.push((block_map[&b], ni));
        }
    }
    for &(nb, ni) in &copies {
        let kind = &mut helper.insts[ni].kind;
        kind.map_args(|a| values[&a]);
        for succ in kind.successors_mut() {
            succ.block = block_map[&succ.block];
        }
        helper.blocks[nb].insts.push(ni);
    }
    let returned: Vec<Value> = results.iter().map(|r| values[r]).collect();
    helper.ins_return(block_map[&end], returned, func.span);

    // The caller: the piece goes, a call takes its place and defines its results. The moved
    // instructions stay allocated (ids are not reused) but let go of their operand lists.
    let moved: Vec<Inst> = blocks.iter().flat_map(|&b| insts_of(func, b)).collect();
    for i in moved {
        let data = &mut func.insts[i];
        data.kind = InstKind::Segment(super::instr::SegmentOp::Open);
        data.results = Vec::new();
    }
    func.blocks[mark.block].insts.truncate(mark.insts);
    for &b in &blocks[1..] {
        func.blocks[b] = super::function::BlockData::default();
    }
    func.layout.retain(|&b| !new_block(b));
    let call = func.create_inst(
        InstKind::Call {
            callee: cranelift_entity::packed_option::ReservedValue::reserved_value(),
            args: inputs,
        },
        &[],
        func.span,
    );
    for (k, &r) in results.iter().enumerate() {
        func.values[r].def = ValueDef::Result(call, k as u32);
    }
    func.insts[call].results = results.to_vec();
    func.blocks[mark.block].insts.push(call);
    Some(Outlined { call, helper })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_module, Const, Module, Opcode};

    /// `f(a, b)`: `s = a + b`, then a loop doubling `s` while it is below 100, then `s * a`.
    /// Everything after `a + b` is the piece.
    fn build() -> (Module, FuncId, Value, Value) {
        let mut f = Function::new(
            "f",
            FuncKind::Fn,
            Signature {
                params: vec![Type::F64, Type::F64],
                returns: vec![Type::F64],
            },
        );
        let entry = f.create_entry();
        let (a, b) = (f.blocks[entry].params[0], f.blocks[entry].params[1]);
        let s = f.ins_prim(entry, Opcode::Fadd, vec![a, b], Default::default());
        let mark = Mark::at(&f, entry);
        let head = f.create_block();
        let p = f.append_block_param(head, Type::F64);
        let body = f.create_block();
        let exit = f.create_block();
        f.ins_jump(entry, head, vec![s], Default::default());
        let hundred = f.ins_const(head, Const::F64(100.0), Default::default());
        let below = f.ins_prim(head, Opcode::Flt, vec![p, hundred], Default::default());
        f.ins_void(
            head,
            InstKind::Brif {
                cond: below,
                then_dest: crate::ir::BlockCall::new(body, vec![]),
                else_dest: crate::ir::BlockCall::new(exit, vec![]),
            },
            Default::default(),
        );
        let two = f.ins_const(body, Const::F64(2.0), Default::default());
        let twice = f.ins_prim(body, Opcode::Fmul, vec![p, two], Default::default());
        f.ins_jump(body, head, vec![twice], Default::default());
        let out = f.ins_prim(exit, Opcode::Fmul, vec![p, a], Default::default());
        let mut module = Module::new();
        let id = module.add(f.clone()).expect("fresh");
        let piece = outline(&mut f, mark, exit, &[out], "f.piece", FuncKind::Fn).expect("outlined");
        let end = f.layout[0];
        let plus_one = f.ins_const(end, Const::F64(1.0), Default::default());
        let r = f.ins_prim(end, Opcode::Fadd, vec![out, plus_one], Default::default());
        f.ins_return(end, vec![r], Default::default());
        let hid = module.add(piece.helper.clone()).expect("fresh");
        piece.set_callee(&mut f, hid);
        assert_eq!(piece.helper.sig.params, vec![Type::F64, Type::F64]);
        let g = module.get("f").expect("f");
        module.functions[g] = f;
        (module, id, s, out)
    }

    #[test]
    fn an_outlined_loop_computes_what_it_did() {
        let (module, id, _, _) = build();
        verify_module(&module).expect("verifies");
        let text = crate::ir::write_module(&module, &Default::default());
        assert_eq!(
            parse_module(&text).map(|m| m.iter().count()).ok(),
            Some(2),
            "{text}"
        );
        assert!(text.contains("call %f.piece"), "{text}");
        let interp = Interpreter::new(&module);
        // a = 3, b = 4: s = 7 → 112 after four doublings; 112 · 3 + 1.
        let got = interp
            .call(id, &[Const::F64(3.0), Const::F64(4.0)])
            .expect("runs");
        assert_eq!(got, vec![Const::F64(337.0)]);
    }

    #[test]
    fn theta_reads_and_checks_stay_where_they_are() {
        let mut f = Function::new(
            "g.inv",
            FuncKind::GeneratedInverse { of: "g".into() },
            Signature {
                params: vec![Type::F64],
                returns: vec![Type::F64],
            },
        );
        let entry = f.create_entry();
        let mark = Mark::at(&f, entry);
        let t = f.ins_theta(
            entry,
            crate::ir::Domain::Real,
            "t".into(),
            Default::default(),
        );
        let before = f.clone();
        assert!(outline(&mut f, mark, entry, &[t], "g.piece", FuncKind::Fn).is_none());
        assert_eq!(f, before);
    }

    #[test]
    fn identical_pieces_have_one_key() {
        let key = |k: f64| {
            let mut f = Function::new(
                "h",
                FuncKind::Fn,
                Signature {
                    params: vec![Type::F64],
                    returns: vec![Type::F64],
                },
            );
            let entry = f.create_entry();
            let x = f.blocks[entry].params[0];
            let c = f.ins_const(entry, Const::F64(k), Default::default());
            let mark = Mark::at(&f, entry);
            let y = f.ins_prim(entry, Opcode::Fmul, vec![x, c], Default::default());
            let z = f.ins_prim(entry, Opcode::Fadd, vec![y, x], Default::default());
            outline(&mut f, mark, entry, &[z], &format!("h.{k}"), FuncKind::Fn)
                .expect("outlined")
                .key()
        };
        // The constant is the caller's: a parameter of the helper, so the helpers are equal.
        assert_eq!(key(2.0), key(3.0));
    }
}
