//! Outlining: emitting a single-entry, single-exit piece of a function as a function of its
//! own, called in its place.
//!
//! Generated inverses repeat the same computation at every step of a chain or a loop body (the
//! search for the run of floats that give an output is about 300 instructions and 36 blocks
//! each time). A piece is emitted between [`begin`] and [`finish`]: in between, the function's
//! instruction and block arenas are set aside and the piece is built in fresh ones, while its
//! value arena is shared, so the caller's values keep their numbers and the piece can read them.
//! [`finish`] turns the piece into a helper function and leaves one `call` in the caller; equal
//! pieces can share one helper (the caller compares them with [`Function::same_code`]).
//! Nothing of the piece stays in the caller's arenas.
//!
//! Invariants:
//!
//! - The caller's values that the piece reads become the helper's parameters, in the order the
//!   piece first reads them. The piece's values leave the caller's value arena; its results are
//!   new values of the caller, which the `call` defines ([`Outlined::results`]): code emitted
//!   after the piece uses those.
//! - A piece that touches the θ tape, checks or leaves the function (`theta`, `choice`,
//!   `check`, `record`, `segment`, `return`, `fail`) is not outlined: [`finish`] splices it
//!   into the caller instead, as if it had been emitted there.

use super::entities::{Block, FuncId, Inst, Value};
use super::function::{BlockData, FuncKind, Function, Signature, ValueData, ValueDef};
use super::instr::{InstData, InstKind, ValueList};
use super::types::Type;
use cranelift_entity::PrimaryMap;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A piece being emitted: the caller's arenas, set aside by [`begin`].
#[derive(Debug)]
pub struct Piece {
    insts: PrimaryMap<Inst, InstData>,
    blocks: PrimaryMap<Block, BlockData>,
    layout: Vec<Block>,
    /// The caller's block the piece continues.
    block: Block,
    /// The piece's entry block (in the piece's arenas).
    entry: Block,
    /// The number of values when the piece began.
    values: usize,
}

impl Piece {
    /// The block the piece starts in: emit there.
    pub fn entry(&self) -> Block {
        self.entry
    }

    /// How many values the function had when the piece began: the caller's, whose
    /// definitions are in the arenas the piece set aside ([`Piece::caller_inst`]).
    pub fn values_before(&self) -> usize {
        self.values
    }

    /// An instruction of the caller, set aside while the piece is emitted.
    pub fn caller_inst(&self, inst: Inst) -> Option<&InstData> {
        self.insts.get(inst)
    }
}

/// A piece made a helper: the `call` left in the caller (its callee is a placeholder until the
/// caller adds `helper` to the module and calls [`Outlined::set_callee`]) and the helper.
#[derive(Clone, Debug)]
pub struct Outlined {
    pub call: Inst,
    pub helper: Function,
    /// The piece's results in the caller: the call's results.
    pub results: Vec<Value>,
}

/// Points `call`, an outlined piece's call in `func`, at its helper, once the helper is in the
/// module as `id`.
pub fn set_callee(func: &mut Function, call: Inst, id: FuncId) {
    if let InstKind::Call { callee, .. } = &mut func.insts[call].kind {
        *callee = id;
    }
}

/// What [`finish`] did with a piece.
#[derive(Debug)]
pub enum Finished {
    /// The piece is a helper, called at the end of the caller's block.
    Outlined(Box<Outlined>),
    /// The piece stays in the caller (see the module docs): emission continues in `block`;
    /// `insts` maps the piece's instructions to the caller's.
    Spliced {
        block: Block,
        insts: HashMap<Inst, Inst>,
    },
}

/// Starts a piece that continues `block` of `func` (see the module docs).
pub fn begin(func: &mut Function, block: Block) -> Piece {
    let insts = std::mem::take(&mut func.insts);
    let blocks = std::mem::take(&mut func.blocks);
    let layout = std::mem::take(&mut func.layout);
    let entry = func.create_block();
    Piece {
        insts,
        blocks,
        layout,
        block,
        entry,
        values: func.values.len(),
    }
}

/// Ends `piece`, emitted into `func` since [`begin`] and ending in block `end` with `results`:
/// a helper named `name` of kind `kind` where it can be, else spliced into the caller (see the
/// module docs). The caller's arenas are back in `func` either way.
pub fn finish(
    func: &mut Function,
    piece: Piece,
    end: Block,
    results: &[Value],
    name: &str,
    kind: FuncKind,
) -> Finished {
    let (block, piece_entry, values_before) = (piece.block, piece.entry, piece.values);
    let arenas = piece.restore(func);
    let (insts, blocks, layout) = &arenas;
    let movable = insts.values().all(|d| {
        !d.kind.is_theta_related()
            && !matches!(d.kind, InstKind::Return { .. } | InstKind::Fail { .. })
    });
    // The piece's values: its blocks' parameters and its instructions' results.
    let mut defined: HashSet<Value> = HashSet::default();
    for &b in layout {
        defined.extend(blocks[b].params.iter().copied());
        for &i in &blocks[b].insts {
            defined.extend(insts[i].results.iter().copied());
        }
    }
    let mut distinct = results.to_vec();
    distinct.sort();
    distinct.dedup();
    let outlinable = movable
        && distinct.len() == results.len()
        && results.iter().all(|r| defined.contains(r))
        && blocks[piece_entry].params.is_empty();
    if !outlinable {
        return splice(func, block, arenas, piece_entry, end);
    }
    // The caller's values the piece reads, in the order it first reads them.
    let mut inputs: Vec<Value> = Vec::new();
    for &b in layout {
        for &i in &blocks[b].insts {
            insts[i].kind.for_each_arg(|a| {
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
    let mut block_map: HashMap<Block, Block> = HashMap::default();
    block_map.insert(piece_entry, entry);
    for &b in layout {
        if b == piece_entry {
            continue;
        }
        let nb = helper.create_block();
        block_map.insert(b, nb);
        for &p in &blocks[b].params {
            let np = helper.append_block_param(nb, func.value_type(p));
            values.insert(p, np);
        }
    }
    // Results are numbered before any use is copied: layout order need not be a dominance order.
    let mut copies: Vec<(Block, Inst)> = Vec::new();
    for &b in layout {
        for &i in &blocks[b].insts {
            let data = &insts[i];
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

    // The piece's values leave the caller's arena (they are the newest: a piece of a few
    // hundred values at every step of a long loop body would otherwise stay there); the call
    // defines new values for its results.
    let types = helper.sig.returns.clone();
    let mut arena: Vec<ValueData> = std::mem::take(&mut func.values).into();
    arena.truncate(values_before);
    func.values = arena.into();
    let call = func.create_inst(
        InstKind::Call {
            callee: cranelift_entity::packed_option::ReservedValue::reserved_value(),
            args: inputs.into(),
        },
        &types,
        func.span,
    );
    func.blocks[block].insts.push(call);
    let results = func.insts[call].results.to_vec();
    Finished::Outlined(Box::new(Outlined {
        call,
        helper,
        results,
    }))
}

/// Ends `piece` as [`finish`] does where it cannot outline: spliced into the caller, emission
/// continuing in [`Finished::Spliced`]'s block.
pub fn splice_back(func: &mut Function, piece: Piece, end: Block) -> Finished {
    let (block, entry) = (piece.block, piece.entry);
    let arenas = piece.restore(func);
    splice(func, block, arenas, entry, end)
}

/// A piece's own instruction and block arenas, and its layout.
type Arenas = (
    PrimaryMap<Inst, InstData>,
    PrimaryMap<Block, BlockData>,
    Vec<Block>,
);

impl Piece {
    /// Puts the caller's arenas back into `func` and returns the piece's.
    fn restore(self, func: &mut Function) -> Arenas {
        (
            std::mem::replace(&mut func.insts, self.insts),
            std::mem::replace(&mut func.blocks, self.blocks),
            std::mem::replace(&mut func.layout, self.layout),
        )
    }
}

/// Moves a piece's instructions and blocks into the caller (whose arenas are back in `func`):
/// the entry's instructions continue `block`, the other blocks become new blocks.
fn splice(
    func: &mut Function,
    block: Block,
    (mut insts, blocks, layout): Arenas,
    entry: Block,
    end: Block,
) -> Finished {
    let mut block_map: HashMap<Block, Block> = HashMap::default();
    block_map.insert(entry, block);
    for &b in &layout {
        if b != entry {
            let nb = func.create_block();
            block_map.insert(b, nb);
        }
    }
    let mut inst_map: HashMap<Inst, Inst> = HashMap::default();
    for &b in &layout {
        let nb = block_map[&b];
        for (k, &p) in blocks[b].params.iter().enumerate() {
            func.blocks[nb].params.push(p);
            func.values[p].def = ValueDef::Param(nb, k as u32);
        }
        for &i in &blocks[b].insts {
            let mut data = std::mem::replace(
                &mut insts[i],
                InstData {
                    kind: InstKind::Segment(super::instr::SegmentOp::Open),
                    results: ValueList::new(),
                    span: Default::default(),
                },
            );
            for succ in data.kind.successors_mut() {
                succ.block = block_map[&succ.block];
            }
            let results = data.results.clone();
            let ni = func.insts.push(data);
            for (k, &r) in results.iter().enumerate() {
                func.values[r].def = ValueDef::Result(ni, k as u32);
            }
            func.blocks[nb].insts.push(ni);
            inst_map.insert(i, ni);
        }
    }
    Finished::Spliced {
        block: block_map[&end],
        insts: inst_map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;
    use crate::ir::{parse_module, verify_module, BlockCall, Const, Domain, Module, Opcode};

    fn sig(params: usize) -> Signature {
        Signature {
            params: vec![Type::F64; params],
            returns: vec![Type::F64],
        }
    }

    /// `f(a, b)`: `s = a + b`; the piece doubles `s` while it is below 100 and multiplies by
    /// `a`; then `+ 1`.
    #[test]
    fn an_outlined_loop_computes_what_it_did() {
        let mut f = Function::new("f", FuncKind::Fn, sig(2));
        let entry = f.create_entry();
        let (a, b) = (f.blocks[entry].params[0], f.blocks[entry].params[1]);
        let s = f.ins_prim(entry, Opcode::Fadd, vec![a, b], Default::default());
        let piece = begin(&mut f, entry);
        let start = piece.entry();
        let head = f.create_block();
        let p = f.append_block_param(head, Type::F64);
        let body = f.create_block();
        let exit = f.create_block();
        f.ins_jump(start, head, vec![s], Default::default());
        let hundred = f.ins_const(head, Const::F64(100.0), Default::default());
        let below = f.ins_prim(head, Opcode::Flt, vec![p, hundred], Default::default());
        f.ins_void(
            head,
            InstKind::Brif {
                cond: below,
                then_dest: Box::new(BlockCall::new(body, vec![])),
                else_dest: Box::new(BlockCall::new(exit, vec![])),
            },
            Default::default(),
        );
        let two = f.ins_const(body, Const::F64(2.0), Default::default());
        let twice = f.ins_prim(body, Opcode::Fmul, vec![p, two], Default::default());
        f.ins_jump(body, head, vec![twice], Default::default());
        let out = f.ins_prim(exit, Opcode::Fmul, vec![p, a], Default::default());
        let Finished::Outlined(piece) =
            finish(&mut f, piece, exit, &[out], "f.piece", FuncKind::Fn)
        else {
            panic!("not outlined");
        };
        assert_eq!(f.layout, vec![entry], "the caller keeps its one block");
        assert_eq!(piece.helper.sig.params, vec![Type::F64, Type::F64]);
        let one = f.ins_const(entry, Const::F64(1.0), Default::default());
        let out = piece.results[0];
        let r = f.ins_prim(entry, Opcode::Fadd, vec![out, one], Default::default());
        f.ins_return(entry, vec![r], Default::default());
        let mut module = Module::new();
        let id = module.add(f).expect("fresh");
        let hid = module.add(piece.helper.clone()).expect("fresh");
        set_callee(&mut module.functions[id], piece.call, hid);
        verify_module(&module).expect("verifies");
        let text = crate::ir::write_module(&module, &Default::default());
        assert_eq!(
            parse_module(&text).map(|m| m.iter().count()).ok(),
            Some(2),
            "{text}"
        );
        assert!(text.contains("call %f.piece"), "{text}");
        // a = 3, b = 4: s = 7, 112 after four doublings; 112 · 3 + 1.
        let got = Interpreter::new(&module)
            .call(id, &[Const::F64(3.0), Const::F64(4.0)])
            .expect("runs");
        assert_eq!(got, vec![Const::F64(337.0)]);
    }

    /// A piece that reads θ and branches stays in the caller, and runs as emitted there.
    #[test]
    fn a_piece_that_reads_theta_is_spliced_back() {
        let mut f = Function::new(
            "g.inv",
            FuncKind::GeneratedInverse { of: "g".into() },
            sig(1),
        );
        let entry = f.create_entry();
        let x = f.blocks[entry].params[0];
        let piece = begin(&mut f, entry);
        let start = piece.entry();
        let t = f.ins_theta(start, Domain::Real, "t".into(), Default::default());
        let join = f.create_block();
        let j = f.append_block_param(join, Type::F64);
        let sum = f.ins_prim(start, Opcode::Fadd, vec![x, t], Default::default());
        f.ins_jump(start, join, vec![sum], Default::default());
        let Finished::Spliced { block, insts } =
            finish(&mut f, piece, join, &[j], "p", FuncKind::Fn)
        else {
            panic!("outlined a θ read");
        };
        assert_eq!(insts.len(), 3);
        f.ins_return(block, vec![j], Default::default());
        let mut module = Module::new();
        module.add(f).expect("fresh");
        verify_module(&module).expect("verifies");
        let text = crate::ir::write_module(&module, &Default::default());
        assert!(text.contains("theta real \"t\""), "{text}");
    }

    #[test]
    fn equal_pieces_have_one_key() {
        let key = |k: f64| {
            let mut f = Function::new("h", FuncKind::Fn, sig(1));
            let entry = f.create_entry();
            let x = f.blocks[entry].params[0];
            let c = f.ins_const(entry, Const::F64(k), Default::default());
            let piece = begin(&mut f, entry);
            let start = piece.entry();
            let y = f.ins_prim(start, Opcode::Fmul, vec![x, c], Default::default());
            let z = f.ins_prim(start, Opcode::Fadd, vec![y, x], Default::default());
            match finish(&mut f, piece, start, &[z], &format!("h.{k}"), FuncKind::Fn) {
                Finished::Outlined(o) => o.helper,
                Finished::Spliced { .. } => panic!("not outlined"),
            }
        };
        // The constant is the caller's: a parameter of the helper, so the helpers are equal.
        let (two, three) = (key(2.0), key(3.0));
        assert!(two.same_code(&three) && two.code_hash() == three.code_hash());
        let text = |f: &Function| {
            let mut f = f.clone();
            f.name = String::new();
            crate::ir::write::write_function_in(&Module::new(), &f, &Default::default())
        };
        assert_eq!(text(&two), text(&three));
    }
}
