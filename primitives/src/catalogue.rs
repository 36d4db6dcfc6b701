//! The catalogue: every primitive with its inverse rules and θ domains, described by the table
//! itself, so the documentation cannot drift from the code (`pinv primitives`).

use crate::overlay::{Callee, Stack};
use crate::pattern::Pattern;
use crate::rule::RuleDoc;
use pinv_core::ir::{OpClass, Opcode};
use serde::Serialize;
use std::fmt::Write;

/// One primitive and how each pattern of its operands is inverted.
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    pub opcode: String,
    pub signature: String,
    pub class: OpClass,
    pub patterns: Vec<PatternEntry>,
}

/// How one known/unknown pattern is inverted.
#[derive(Clone, Debug, Serialize)]
pub struct PatternEntry {
    /// Such as `(?, k)`.
    pub pattern: String,
    /// The layer and rule that invert it, if any.
    pub layer: Option<String>,
    pub rule: Option<String>,
    pub doc: Option<RuleDoc>,
}

/// Describes every opcode under `stack`, in table order.
pub fn catalogue(stack: &Stack) -> Vec<Entry> {
    Opcode::ALL
        .iter()
        .map(|&op| {
            let args: Vec<&str> = op.arg_types().iter().map(|t| t.name()).collect();
            let patterns = Pattern::every(op.arity())
                .into_iter()
                .map(|pattern| {
                    let found = stack.lookup(&Callee::Prim(op), &pattern).found;
                    PatternEntry {
                        pattern: pattern.to_string(),
                        layer: found.as_ref().map(|f| f.layer_name.clone()),
                        rule: found.as_ref().map(|f| f.rule.name().to_string()),
                        doc: found.as_ref().map(|f| f.rule.doc(&pattern)),
                    }
                })
                .collect();
            Entry {
                opcode: op.name().to_string(),
                signature: format!("({}) -> {}", args.join(", "), op.result_type()),
                class: op.class(),
                patterns,
            }
        })
        .collect()
}

/// The (opcode, pattern) pairs that no rule covers.
pub fn missing(entries: &[Entry]) -> Vec<(String, String)> {
    entries
        .iter()
        .flat_map(|e| {
            e.patterns
                .iter()
                .filter(|p| p.rule.is_none())
                .map(move |p| (e.opcode.clone(), p.pattern.clone()))
        })
        .collect()
}

/// The catalogue as text: one block per opcode, one line per pattern.
pub fn render(entries: &[Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        let _ = writeln!(out, "{} {}", e.opcode, e.signature);
        for p in &e.patterns {
            match (&p.rule, &p.doc) {
                (Some(rule), Some(doc)) => {
                    let thetas: Vec<String> = doc
                        .thetas
                        .iter()
                        .map(|t| match &t.when {
                            Some(when) => format!("{} {} (when {when})", t.kind, t.role),
                            None => format!("{} {}", t.kind, t.role),
                        })
                        .collect();
                    let theta = if thetas.is_empty() {
                        "no θ".to_string()
                    } else {
                        format!("θ: {}", thetas.join("; "))
                    };
                    let exact = if doc.exact { "exact" } else { "up to rounding" };
                    let _ = writeln!(
                        out,
                        "  {:<10} {:<12} {}  [{theta}] [{exact}]",
                        p.pattern, rule, doc.summary
                    );
                    for check in &doc.checks {
                        let _ = writeln!(out, "  {:<10} {:<12}   check: {check}", "", "");
                    }
                }
                _ => {
                    let _ = writeln!(out, "  {:<10} (no rule)", p.pattern);
                }
            }
        }
    }
    out
}
