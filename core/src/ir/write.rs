//! The IR text printer. [`super::read`] parses what it prints.
//!
//! ```text
//! function %mul_add(x: f64, y: f64, z: f64) -> f64 {
//! block0(v0: f64, v1: f64, v2: f64):
//!     v3 = fmul v0, v1
//!     v4 = fadd v3, v2
//!     return v4
//! }
//! ```
//!
//! - The header gives the module-level name, the parameters with their source names (`p0`, `p1`, ...
//!   when there are none), and the returns: `f64`, `(f64, i64)` or `()`. An inverse marks its θ
//!   parameters `theta t: f64` and ends `inverse(F)`; a PGF ends `pgf(F)`.
//! - Blocks are printed in layout order with their real ids (`v12`, `block3`): run
//!   [`Function::compact`] first for dense numbers.
//! - Instructions: `v3 = fconst 1.5`, `iconst -7`, `bconst true`, `v4 = fadd v3, v2`,
//!   `v5, v6 = call %f(v1, v2)`, `v7 = theta [0.0, 1.0] "role"`, `v8 = choice 2 "role"`,
//!   `check v9, "reason"`, `jump block1(v1)`, `brif v9, block1(v4), block2`, `return v4, v5`,
//!   `fail "reason"`. f64 constants are printed so that they parse back to the same bits.
//! - With [`WriteOptions::spans`], every instruction line (and the header) ends with the source span
//!   ` @START..END` in bytes.
//!
//! The printer never panics, also on functions the verifier would reject: it is what the verifier
//! uses to show the offending instruction.

use super::constant::format_f64;
use super::{Block, BlockCall, FuncId, FuncKind, Function, Inst, InstKind, Module, Value};
use crate::span::Span;
use std::fmt::{self, Write};

/// How to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Append ` @START..END` (the source span in bytes) to each instruction and to each header.
    pub spans: bool,
}

/// Prints every function of a module, in id order, separated by a blank line.
pub fn write_module(module: &Module, opts: &WriteOptions) -> String {
    let mut out = String::new();
    for (i, (_, func)) in module.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        write_func(&mut out, module, func, opts);
    }
    out
}

/// Prints one function of a module. An id that is not in the module prints as a comment.
pub fn write_function(module: &Module, id: FuncId, opts: &WriteOptions) -> String {
    match module.functions.get(id) {
        Some(func) => write_function_in(module, func, opts),
        None => format!("; no function {id} in the module\n"),
    }
}

/// Prints a function that need not be in `module` (for instance one being built); `module` gives the
/// names of the callees.
pub fn write_function_in(module: &Module, func: &Function, opts: &WriteOptions) -> String {
    let mut out = String::new();
    write_func(&mut out, module, func, opts);
    out
}

/// Prints one instruction without indentation, span or newline: `v4 = fadd v3, v2`.
pub fn write_inst(module: &Module, func: &Function, inst: Inst) -> String {
    let mut out = String::new();
    match func.insts.get(inst) {
        Some(_) => write_inst_to(&mut out, module, func, inst),
        None => {
            let _ = write!(out, "<no {inst}>");
        }
    }
    out
}

/// Prints a block header without newline: `block1(v3: f64, v4: i64):` or `block1:`.
pub fn write_block_header(func: &Function, block: Block) -> String {
    let mut out = String::new();
    out.push_str(&block.to_string());
    let params = func
        .blocks
        .get(block)
        .map(|b| b.params.as_slice())
        .unwrap_or(&[]);
    if !params.is_empty() {
        out.push('(');
        for (i, &v) in params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{v}: {}", value_type_name(func, v));
        }
        out.push(')');
    }
    out.push(':');
    out
}

impl fmt::Display for Module {
    /// The text form without spans; `{:#}` prints spans too.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opts = WriteOptions {
            spans: f.alternate(),
        };
        f.write_str(&write_module(self, &opts))
    }
}

fn value_type_name(func: &Function, v: Value) -> &'static str {
    func.values.get(v).map_or("?", |d| d.ty.name())
}

fn write_func(out: &mut String, module: &Module, func: &Function, opts: &WriteOptions) {
    out.push_str("function ");
    push_func_name(out, &func.name);
    out.push('(');
    let theta_from = match func.kind {
        FuncKind::Inverse { outputs, .. } => outputs,
        _ => usize::MAX,
    };
    for (i, ty) in func.sig.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if i >= theta_from {
            out.push_str("theta ");
        }
        match func.param_names.get(i).filter(|n| !n.is_empty()) {
            Some(name) if is_ident(name) => out.push_str(name),
            Some(name) => push_quoted(out, name),
            None => {
                let _ = write!(out, "p{i}");
            }
        }
        let _ = write!(out, ": {ty}");
    }
    out.push_str(") -> ");
    match func.sig.returns.as_slice() {
        [one] => out.push_str(one.name()),
        many => {
            out.push('(');
            for (i, ty) in many.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(ty.name());
            }
            out.push(')');
        }
    }
    match &func.kind {
        FuncKind::Fn => {}
        FuncKind::Inverse { of, .. } => {
            out.push_str(" inverse(");
            push_bare_name(out, of);
            out.push(')');
        }
        FuncKind::Pgf { of } => {
            out.push_str(" pgf(");
            push_bare_name(out, of);
            out.push(')');
        }
        FuncKind::GeneratedInverse { of } => {
            out.push_str(" generated_inverse(");
            push_bare_name(out, of);
            out.push(')');
        }
        FuncKind::GeneratedPgf { of } => {
            out.push_str(" generated_pgf(");
            push_bare_name(out, of);
            out.push(')');
        }
    }
    if opts.spans {
        push_span(out, func.span);
    }
    out.push_str(" {\n");
    for &block in &func.layout {
        out.push_str(&write_block_header(func, block));
        out.push('\n');
        let insts = func
            .blocks
            .get(block)
            .map(|b| b.insts.as_slice())
            .unwrap_or(&[]);
        for &inst in insts {
            out.push_str("    ");
            match func.insts.get(inst) {
                Some(data) => {
                    write_inst_to(out, module, func, inst);
                    if opts.spans {
                        push_span(out, data.span);
                    }
                }
                None => {
                    let _ = write!(out, "; <no {inst}>");
                }
            }
            out.push('\n');
        }
    }
    out.push_str("}\n");
}

fn push_span(out: &mut String, span: Span) {
    let _ = write!(out, " @{}..{}", span.start, span.end);
}

/// Writes an instruction that exists in `func`.
fn write_inst_to(out: &mut String, module: &Module, func: &Function, inst: Inst) {
    let data = &func.insts[inst];
    if !data.results.is_empty() {
        push_values(out, &data.results);
        out.push_str(" = ");
    }
    match &data.kind {
        InstKind::Const(c) => {
            let op = match c {
                super::Const::F64(x) => {
                    let _ = write!(out, "fconst {}", format_f64(*x));
                    return;
                }
                super::Const::I64(_) => "iconst",
                super::Const::Bool(_) => "bconst",
            };
            let _ = write!(out, "{op} {c}");
        }
        InstKind::Prim { op, args } => {
            out.push_str(op.name());
            if !args.is_empty() {
                out.push(' ');
                push_values(out, args);
            }
        }
        InstKind::Call { callee, args } => {
            out.push_str("call ");
            match module.functions.get(*callee) {
                Some(f) => push_func_name(out, &f.name),
                None => push_func_name(out, &format!("<missing {callee}>")),
            }
            out.push('(');
            push_values(out, args);
            out.push(')');
        }
        InstKind::Theta(read) => {
            let crate::ir::ThetaRead {
                domain,
                role,
                within,
            } = &**read;
            let _ = write!(out, "theta {domain} ");
            if let Some([lo, hi]) = within {
                let _ = write!(out, "within {lo}, {hi} ");
            }
            push_quoted(out, role);
        }
        InstKind::Choice { n, role } => {
            let _ = write!(out, "choice {n} ");
            push_quoted(out, role);
        }
        InstKind::Check { cond, reason } => {
            let _ = write!(out, "check {cond}, ");
            push_quoted(out, reason);
        }
        InstKind::Record { value, role } => {
            let _ = write!(out, "record {value}, ");
            push_quoted(out, role);
        }
        InstKind::Segment(op) => {
            let _ = write!(out, "segment {}", op.name());
            if let Some(k) = op.stash() {
                let _ = write!(out, " {k}");
            }
        }
        InstKind::Jump { dest } => {
            out.push_str("jump ");
            push_block_call(out, dest);
        }
        InstKind::Brif {
            cond,
            then_dest,
            else_dest,
        } => {
            let _ = write!(out, "brif {cond}, ");
            push_block_call(out, then_dest);
            out.push_str(", ");
            push_block_call(out, else_dest);
        }
        InstKind::Return { args } => {
            out.push_str("return");
            if !args.is_empty() {
                out.push(' ');
                push_values(out, args);
            }
        }
        InstKind::Fail { reason } => {
            out.push_str("fail ");
            push_quoted(out, reason);
        }
    }
}

fn push_values(out: &mut String, values: &[Value]) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{v}");
    }
}

/// `block1(v1, v2)`, or `block1` without arguments.
pub(crate) fn push_block_call(out: &mut String, call: &BlockCall) {
    let _ = write!(out, "{}", call.block);
    if !call.args.is_empty() {
        out.push('(');
        push_values(out, &call.args);
        out.push(')');
    }
}

/// Whether `c` may appear in an unquoted function name (`%inverse:softplus`, `%f.loop`).
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':')
}

/// Whether `s` may be printed as an unquoted parameter name.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `%name`, quoted (`%"a b"`) if the name has other characters or is empty.
fn push_func_name(out: &mut String, name: &str) {
    out.push('%');
    push_bare_name(out, name);
}

fn push_bare_name(out: &mut String, name: &str) {
    if !name.is_empty() && name.chars().all(is_name_char) {
        out.push_str(name);
    } else {
        push_quoted(out, name);
    }
}

/// A string literal: `"..."` with `\"`, `\\`, `\n`, `\t`, `\r` and `\u{..}` for other control
/// characters.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        push_quoted(&mut s, "a \"b\" \\ c\nd\te\u{1}");
        assert_eq!(s, r#""a \"b\" \\ c\nd\te\u{1}""#);
    }

    #[test]
    fn odd_names_are_quoted() {
        let mut s = String::new();
        push_func_name(&mut s, "inverse:soft.plus_2");
        push_func_name(&mut s, "a b");
        push_func_name(&mut s, "");
        assert_eq!(s, r#"%inverse:soft.plus_2%"a b"%"""#);
    }
}
