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
