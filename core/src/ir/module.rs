//! Modules: the functions of one program, looked up by id or by name.

use super::{FuncId, Function};
use cranelift_entity::PrimaryMap;
use std::collections::HashMap;

/// A set of functions that may call each other. Names are unique within a module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub functions: PrimaryMap<FuncId, Function>,
    by_name: HashMap<String, FuncId>,
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    /// Adds a function. Returns `Err` with the existing id if the name is taken.
    pub fn add(&mut self, function: Function) -> Result<FuncId, FuncId> {
        if let Some(&id) = self.by_name.get(&function.name) {
            return Err(id);
        }
        let name = function.name.clone();
        let id = self.functions.push(function);
        self.by_name.insert(name, id);
        Ok(id)
    }

    /// The function with this module-level name (`f`, `inverse:f`, `pgf:f`).
    pub fn get(&self, name: &str) -> Option<FuncId> {
        self.by_name.get(name).copied()
    }

    /// The function with this name, if any.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.get(name).map(|id| &self.functions[id])
    }

    /// The functions in id order.
    pub fn iter(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions.iter()
    }

    /// The functions `roots` call, directly or not, and the roots themselves; in the order
    /// first reached.
    pub fn reachable_from(&self, roots: &[FuncId]) -> Vec<FuncId> {
        let mut seen = cranelift_entity::EntitySet::with_capacity(self.functions.len());
        let mut order = Vec::new();
        let mut stack: Vec<FuncId> = roots.iter().rev().copied().collect();
        while let Some(id) = stack.pop() {
            if !self.functions.is_valid(id) || !seen.insert(id) {
                continue;
            }
            order.push(id);
            let f = &self.functions[id];
            for (_, i) in f.insts_in_layout() {
                if let super::InstKind::Call { callee, .. } = &f.insts[i].kind {
                    stack.push(*callee);
                }
            }
        }
        order
    }

    /// Empties the bodies of the program's own functions (`fn`s) that `roots` never call,
    /// keeping their ids, names and signatures: a module derived for one purpose (the inverse
    /// of one function) then holds only what it uses, so that a thousand of them for a
    /// program of a thousand functions take linear memory, not quadratic. An emptied function
    /// has no blocks; nothing may call or run it (nothing does: `roots` do not reach it).
    pub fn clear_unreachable(&mut self, roots: &[FuncId]) {
        let mut keep = cranelift_entity::EntitySet::with_capacity(self.functions.len());
        for id in self.reachable_from(roots) {
            keep.insert(id);
        }
        for (id, f) in self.functions.iter_mut() {
            if f.kind == super::FuncKind::Fn && !keep.contains(id) && !f.layout.is_empty() {
                let mut empty = Function::new(f.name.clone(), f.kind.clone(), f.sig.clone());
                empty.param_names = std::mem::take(&mut f.param_names);
                empty.span = f.span;
                *f = empty;
            }
        }
    }

    /// The functions `roots` reach, and the roots, as a module of their own: ids are
    /// renumbered in the order [`Module::reachable_from`] gives (so `roots[0]` is the first),
    /// calls follow, and the map from old ids to new is returned. Work on one function of a
    /// program of thousands copies only what it uses, in time and memory proportional to that.
    pub fn extract_reaching(&self, roots: &[FuncId]) -> (Module, HashMap<FuncId, FuncId>) {
        let order = self.reachable_from(roots);
        let remap: HashMap<FuncId, FuncId> = order
            .iter()
            .enumerate()
            .map(|(new, &old)| (old, FuncId::from_u32(new as u32)))
            .collect();
        let mut module = Module::new();
        for &old in &order {
            let mut f = self.functions[old].clone();
            for data in f.insts.values_mut() {
                if let super::InstKind::Call { callee, .. } = &mut data.kind {
                    // Every callee of a reached function is reached.
                    *callee = remap.get(callee).copied().unwrap_or(*callee);
                }
            }
            // Names are unique here as in `self`.
            let _ = module.add(f);
        }
        (module, remap)
    }

    /// Structural equality: same functions, same names, same bodies (spans included).
    pub fn same_as(&self, other: &Module) -> bool {
        self.functions.len() == other.functions.len()
            && self
                .functions
                .values()
                .zip(other.functions.values())
                .all(|(a, b)| a == b)
    }
}

impl PartialEq for Module {
    fn eq(&self, other: &Module) -> bool {
        self.same_as(other)
    }
}
