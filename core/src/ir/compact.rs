//! Dense renumbering: after [`Function::compact`], ids equal the order of definition in the text
//! form (blocks in layout order; within a block its parameters, then each instruction and its
//! results), and nothing outside the layout remains.
//!
//! Passes leave holes behind (removed blocks, dead instructions); compacting before printing gives
//! text whose numbers count up from zero, and a function that reads back equal to itself.

use super::{Block, BlockData, Function, Inst, InstData, Module, Type, Value, ValueData, ValueDef};
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
        // Instructions stay in their arena and are moved to their new places by swapping:
        // building a second arena would hold the function's instructions twice (at 10⁴
        // statements, a hundred megabytes). `target` is each old instruction's new index.
        const DEAD: u32 = u32::MAX;
        let mut target: Vec<u32> = vec![DEAD; self.insts.len()];
        let mut live_values = 0;
        for block in self.layout.iter().filter_map(|&b| self.blocks.get(b)) {
            live_values += block.params.len();
            let results = |&i| self.insts.get(i).map_or(0, |d: &InstData| d.results.len());
            live_values += block.insts.iter().map(results).sum::<usize>();
        }
        let mut blocks: PrimaryMap<Block, BlockData> = PrimaryMap::with_capacity(self.layout.len());
        let mut values: PrimaryMap<Value, ValueData> = PrimaryMap::with_capacity(live_values);
        let mut layout = Vec::with_capacity(self.layout.len());
        let mut block_map: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        let mut value_map: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        let mut live_insts: u32 = 0;

        let old_type = |values: &PrimaryMap<Value, ValueData>, v: Value| {
            values.get(v).map_or(Type::F64, |d| d.ty)
        };

        // Definitions, in layout order; each instruction's results are renamed where it is.
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
                let Some(data) = self.insts.get_mut(old_inst) else {
                    continue;
                };
                if target[old_inst.index()] != DEAD {
                    continue;
                }
                target[old_inst.index()] = live_insts;
                let inst = Inst::from_u32(live_insts);
                live_insts += 1;
                for (i, r) in data.results.iter_mut().enumerate() {
                    let v = values.push(ValueData {
                        ty: old_type(&self.values, *r),
                        def: ValueDef::Result(inst, i as u32),
                    });
                    map_once(&mut value_map, self.values.len(), *r, v);
                    *r = v;
                }
                blocks[block].insts.push(inst);
            }
        }
        let mut insts: Vec<InstData> = std::mem::take(&mut self.insts).into();
        permute(&mut insts, &mut target, DEAD);
        insts.truncate(live_insts as usize);
        if insts.capacity() > 2 * insts.len() {
            insts.shrink_to_fit();
        }
        let mut insts: PrimaryMap<Inst, InstData> = insts.into();

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

/// Moves each element `i` of `items` to `target[i]` (its new place) in place, by following
/// cycles: each swap puts one element where it belongs, so this takes at most one swap per
/// element. Elements whose target is `dead` end up past every other (the targets of the rest
/// are exactly `0..live`), where the caller truncates them. `target` is left permuted.
fn permute<T>(items: &mut [T], target: &mut [u32], dead: u32) {
    for i in 0..items.len() {
        loop {
            let t = target[i];
            if t == dead || t as usize == i {
                break;
            }
            items.swap(i, t as usize);
            target.swap(i, t as usize);
        }
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
                args: vec![Value::from_u32(3)].into()
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
