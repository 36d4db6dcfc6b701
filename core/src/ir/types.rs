//! The scalar types of the IR (and of the language): `f64`, `i64`, `bool`.

use serde::Serialize;
use std::fmt;

/// A scalar type. Tuples exist only at the language level and in signatures (several results).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    F64,
    I64,
    Bool,
}

impl Type {
    pub const ALL: [Type; 3] = [Type::F64, Type::I64, Type::Bool];

    pub fn name(self) -> &'static str {
        match self {
            Type::F64 => "f64",
            Type::I64 => "i64",
            Type::Bool => "bool",
        }
    }

    pub fn from_name(name: &str) -> Option<Type> {
        Type::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
