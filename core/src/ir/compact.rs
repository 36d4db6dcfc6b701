//! Dense renumbering: after [`Function::compact`], ids equal the order of definition in the text
//! form (blocks in layout order; within a block its parameters, then each instruction and its
//! results), and nothing outside the layout remains.
//!
//! Passes leave holes behind (removed blocks, dead instructions); compacting before printing gives
//! text whose numbers count up from zero, and a function that reads back equal to itself.

use super::{
    Block, BlockData, Const, Function, Inst, InstData, InstKind, Module, Type, Value, ValueData,
    ValueDef,
};
use cranelift_entity::packed_option::ReservedValue;
use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};

impl Function {
    /// Renumbers blocks, instructions and values densely in layout order, dropping every block,
    /// instruction and value that the layout does not reach.
    ///
    /// On a function the verifier would reject this does not panic, and keeps it broken: a block
    /// listed twice in the layout keeps its first place; a use of a value the layout never defines
    /// (or a branch to a block outside the layout) is kept as a use of a new value (block) that
    /// nothing defines (that is not in the layout).
    pub fn compact(&mut self) {
        if self.already_compact() {
            return;
        }
        // Instructions are moved out of the old arena (which is dropped), not cloned.
        let mut old_insts = std::mem::take(&mut self.insts);
        let mut blocks: PrimaryMap<Block, BlockData> = PrimaryMap::new();
        let mut insts: PrimaryMap<Inst, InstData> = PrimaryMap::new();
        let mut values: PrimaryMap<Value, ValueData> = PrimaryMap::new();
        let mut layout = Vec::with_capacity(self.layout.len());
        let mut block_map: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        let mut value_map: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        let mut inst_seen: SecondaryMap<Inst, bool> = SecondaryMap::new();

        let old_type = |values: &PrimaryMap<Value, ValueData>, v: Value| {
            values.get(v).map_or(Type::F64, |d| d.ty)
        };

        // Definitions, in layout order.
        for &old_block in &self.layout {
            let Some(old) = self.blocks.get(old_block) else {
                continue;
            };
            if block_map[old_block].is_some() {
                continue;
            }
            let block = blocks.push(BlockData::default());
            block_map[old_block] = Some(block);
            layout.push(block);
            for (i, &p) in old.params.iter().enumerate() {
                let v = values.push(ValueData {
                    ty: old_type(&self.values, p),
                    def: ValueDef::Param(block, i as u32),
                });
                map_once(&mut value_map, self.values.len(), p, v);
                blocks[block].params.push(v);
            }
            for &old_inst in &old.insts {
                let Some(data) = old_insts.get_mut(old_inst) else {
                    continue;
                };
                if std::mem::replace(&mut inst_seen[old_inst], true) {
                    continue;
                }
                let inst = insts.next_key();
                let results = data
                    .results
                    .iter()
                    .enumerate()
                    .map(|(i, &r)| {
                        let v = values.push(ValueData {
                            ty: old_type(&self.values, r),
                            def: ValueDef::Result(inst, i as u32),
                        });
                        map_once(&mut value_map, self.values.len(), r, v);
                        v
                    })
                    .collect();
                insts.push(InstData {
                    kind: std::mem::replace(&mut data.kind, InstKind::Const(Const::Bool(false))),
                    results,
                    span: data.span,
                });
                blocks[block].insts.push(inst);
            }
        }

        // Uses: values and branch targets.
        for data in insts.values_mut() {
            data.kind.map_args(|old| match value_map[old] {
                Some(v) => v,
                None => {
                    let v = values.push(ValueData {
                        ty: old_type(&self.values, old),
                        def: ValueDef::Param(Block::reserved_value(), u32::MAX),
                    });
                    map_once(&mut value_map, self.values.len(), old, v);
                    v
                }
            });
            for call in data.kind.successors_mut() {
                call.block = match block_map[call.block] {
                    Some(b) => b,
                    None => {
                        let b = blocks.push(BlockData::default());
                        map_once(&mut block_map, self.blocks.len(), call.block, b);
                        b
                    }
                };
            }
        }

        self.blocks = blocks;
        self.insts = insts;
        self.values = values;
        self.layout = layout;
    }

    /// Whether the ids already are what [`Function::compact`] would give (checked in one pass,
    /// without allocating): blocks, instructions and values numbered in layout order, nothing
    /// outside the layout, every definition recorded where it is, every use and branch target
    /// defined.
    fn already_compact(&self) -> bool {
        if self.blocks.len() != self.layout.len() {
            return false;
        }
        let (mut insts, mut values) = (0, 0);
        for (i, &block) in self.layout.iter().enumerate() {
            if block.index() != i {
                return false;
            }
            let data = &self.blocks[block];
            for (k, &p) in data.params.iter().enumerate() {
                let def = ValueDef::Param(block, k as u32);
                if p.index() != values || self.values.get(p).map(|d| d.def) != Some(def) {
                    return false;
                }
                values += 1;
            }
            for &inst in &data.insts {
                let Some(idata) = self.insts.get(inst) else {
                    return false;
                };
                if inst.index() != insts {
                    return false;
                }
                insts += 1;
                for (k, &r) in idata.results.iter().enumerate() {
                    let def = ValueDef::Result(inst, k as u32);
                    if r.index() != values || self.values.get(r).map(|d| d.def) != Some(def) {
                        return false;
                    }
                    values += 1;
                }
            }
        }
        if self.insts.len() != insts || self.values.len() != values {
            return false;
        }
        let blocks = self.blocks.len();
        self.insts.values().all(|data| {
            let mut uses_defined = true;
            data.kind
                .for_each_arg(|v| uses_defined &= v.index() < values);
            uses_defined
                && data
                    .kind
                    .successors()
                    .iter()
                    .all(|call| call.block.index() < blocks)
        })
    }

    /// Whether [`Function::compact`] would leave the function as it is.
    pub fn is_compact(&self) -> bool {
        let mut copy = self.clone();
        copy.compact();
        copy == *self
    }
}

/// Records `old → new` unless `old` is already mapped. Ids beyond the old map (which a broken
/// function may use) are not recorded, so that a stray huge id does not grow the map.
fn map_once<K: EntityRef, V: Copy>(
    map: &mut SecondaryMap<K, Option<V>>,
    old_len: usize,
    old: K,
    new: V,
) {
    if old.index() < old_len && map[old].is_none() {
        map[old] = Some(new);
    }
}

impl Module {
    /// Compacts every function (function ids do not change).
    pub fn compact_all(&mut self) {
        for func in self.functions.values_mut() {
            func.compact();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Const, FuncKind, Opcode, Signature};
    use super::*;
    use crate::span::Span;

    /// Blocks created out of layout order, a dead block and a dead value.
    fn scrambled() -> Function {
        let sig = Signature {
            params: vec![Type::F64],
            returns: vec![Type::F64],
        };
        let mut f = Function::new("f", FuncKind::Fn, sig);
        let entry = f.create_entry();
        let exit = f.create_block();
        let dead = f.create_block();
        let mid = f.create_block();
        let x = f.blocks[entry].params[0];
        let r = f.append_block_param(exit, Type::F64);
        f.ins_const(dead, Const::I64(1), Span::default());
        f.ins_return(dead, vec![], Span::default());
        let _unused = f.ins_const(entry, Const::F64(2.0), Span::default());
        f.ins_jump(entry, mid, vec![], Span::default());
        let y = f.ins_prim(mid, Opcode::Fneg, vec![x], Span::default());
        f.ins_jump(mid, exit, vec![y], Span::default());
        f.ins_return(exit, vec![r], Span::default());
        f.layout = vec![entry, mid, exit];
        f
    }

    #[test]
    fn renumbers_in_layout_order() {
        let mut f = scrambled();
        assert!(!f.is_compact());
        assert!(!f.already_compact());
        f.compact();
        assert!(f.is_compact());
        assert!(f.already_compact());
        assert_eq!(f.blocks.len(), 3);
        assert_eq!(f.layout, (0..3).map(Block::from_u32).collect::<Vec<_>>());
        // v0 param, v1 const, v2 fneg, v3 exit param.
        assert_eq!(f.values.len(), 4);
        assert_eq!(f.insts.len(), 5);
        assert_eq!(
            f.values[Value::from_u32(3)].def,
            ValueDef::Param(Block::from_u32(2), 0)
        );
        let last = f.blocks[Block::from_u32(2)].insts[0];
        assert_eq!(
            f.insts[last].kind,
            super::super::InstKind::Return {
                args: vec![Value::from_u32(3)]
            }
        );
    }

    #[test]
    fn keeps_broken_functions_broken() {
        let mut f = scrambled();
        // A use of a value that nothing defines, and a branch to a block outside the layout.
        let exit = Block::from_u32(1);
        let ret = *f.blocks[exit].insts.last().unwrap();
        f.insts[ret].kind = super::super::InstKind::Jump {
            dest: super::super::BlockCall::new(Block::from_u32(2), vec![Value::from_u32(77)]),
        };
        f.compact();
        assert_eq!(f.layout.len(), 3);
        assert_eq!(f.blocks.len(), 4);
        assert_eq!(f.values.len(), 5);
    }
}
