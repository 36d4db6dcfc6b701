//! Scopes and locals of one function being checked.
//!
//! [`Scopes`] owns the function's [`hir::Local`] table and a stack of lexical scopes mapping names
//! to [`LocalId`]s. Every declaration creates a new local, so a shadowing `let` gets a fresh id while
//! the shadowed one stays in the table (and in the typed tree that already refers to it). A scope
//! ends with its block (or `for` body), which makes the names declared in it invisible again.

use super::hir::{Local, LocalId};
use crate::ir::Type;
use crate::span::Span;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub(super) struct Scopes {
    locals: Vec<Local>,
    /// Innermost scope last.
    frames: Vec<HashMap<String, LocalId>>,
}

impl Scopes {
    pub(super) fn new() -> Scopes {
        Scopes {
            locals: Vec::new(),
            frames: vec![HashMap::new()],
        }
    }

    pub(super) fn push(&mut self) {
        self.frames.push(HashMap::new());
    }

    pub(super) fn pop(&mut self) {
        self.frames.pop();
    }

    /// Declares a new local in the innermost scope, shadowing any earlier one of the same name.
    pub(super) fn declare(&mut self, name: &str, ty: Type, mutable: bool, span: Span) -> LocalId {
        let id = LocalId(u32::try_from(self.locals.len()).unwrap_or(u32::MAX));
        self.locals.push(Local {
            name: name.to_string(),
            ty,
            mutable,
            span,
        });
        if self.frames.is_empty() {
            self.frames.push(HashMap::new());
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.insert(name.to_string(), id);
        }
        id
    }

    /// The innermost visible local called `name`.
    pub(super) fn lookup(&self, name: &str) -> Option<LocalId> {
        self.frames
            .iter()
            .rev()
            .find_map(|frame| frame.get(name).copied())
    }

    pub(super) fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }

    pub(super) fn into_locals(self) -> Vec<Local> {
        self.locals
    }
}
