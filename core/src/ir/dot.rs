//! Graphviz output of control-flow graphs: one node per block, labelled with the block's
//! instructions in the text form (left-justified), and one edge per branch, labelled `then` or
//! `else` for `brif` and with the arguments passed to the target block.
//!
//! ```text
//! pinv show --dot f.pinv | dot -Tsvg > f.svg
//! ```

use super::write::{push_block_call, write_block_header, write_inst};
use super::{FuncId, Function, InstKind, Module};
use std::fmt::Write;

/// A `digraph` of one function's blocks.
pub fn function_to_dot(module: &Module, id: FuncId) -> String {
    let mut out = String::new();
    match module.functions.get(id) {
        Some(func) => {
            let _ = writeln!(out, "digraph {} {{", quote(&format!("%{}", func.name)));
            push_graph_attrs(&mut out, "    ");
            push_cfg(&mut out, module, func, "", "    ");
        }
        None => {
            let _ = writeln!(out, "digraph {} {{", quote(&format!("missing {id}")));
        }
    }
    out.push_str("}\n");
    out
}

/// A `digraph` with one cluster per function of the module, in id order.
pub fn module_to_dot(module: &Module) -> String {
    let mut out = String::from("digraph module {\n");
    push_graph_attrs(&mut out, "    ");
    for (id, func) in module.iter() {
        let n = id.as_u32();
        let _ = writeln!(out, "    subgraph cluster_{n} {{");
        let _ = writeln!(out, "        label={};", quote(&format!("%{}", func.name)));
        push_cfg(&mut out, module, func, &format!("f{n}_"), "        ");
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out
}

fn push_graph_attrs(out: &mut String, indent: &str) {
    let _ = writeln!(out, "{indent}node [shape=box, fontname=\"monospace\"];");
}

/// The nodes and edges of one function; node names are `{prefix}blockN`.
fn push_cfg(out: &mut String, module: &Module, func: &Function, prefix: &str, indent: &str) {
    for &block in &func.layout {
        let Some(data) = func.blocks.get(block) else {
            continue;
        };
        // Each line ends with `\l`: left-justified.
        let mut label = escape(&write_block_header(func, block));
        label.push_str("\\l");
        for &inst in &data.insts {
            label.push_str("    ");
            label.push_str(&escape(&write_inst(module, func, inst)));
            label.push_str("\\l");
        }
        let _ = writeln!(out, "{indent}{prefix}{block} [label=\"{label}\"];");
    }
    for &block in &func.layout {
        let Some(last) = func.blocks.get(block).and_then(|b| b.insts.last()) else {
            continue;
        };
        let Some(term) = func.insts.get(*last) else {
            continue;
        };
        let edges: Vec<(&str, &super::BlockCall)> = match &term.kind {
            InstKind::Jump { dest } => vec![("", dest)],
            InstKind::Brif {
                then_dest,
                else_dest,
                ..
            } => vec![("then", then_dest), ("else", else_dest)],
            _ => Vec::new(),
        };
        for (which, call) in edges {
            // `then(v1, v2)`, `else`, or the arguments alone for a jump.
            let mut text = String::new();
            push_block_call(&mut text, call);
            let args = text.strip_prefix(&call.block.to_string()).unwrap_or("");
            let label = format!("{which}{args}");
            let _ = write!(out, "{indent}{prefix}{block} -> {prefix}{}", call.block);
            if !label.is_empty() {
                let _ = write!(out, " [label={}]", quote(&label));
            }
            out.push_str(";\n");
        }
    }
}

/// A DOT string literal.
fn quote(s: &str) -> String {
    format!("\"{}\"", escape(s))
}

/// Escapes text for a DOT string: quotes and backslashes (so that `\n` in a printed string stays
/// two characters), and newlines.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::read::parse_module;
    use expect_test::expect;

    #[test]
    fn loop_with_brif() {
        let module = parse_module(
            r#"function %count(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    jump block1(v1)
block1(v2: i64):
    v3 = ilt v2, v0
    brif v3, block2, block3(v2)
block2:
    check v3, "say \"hi\"\n"
    v4 = iconst 1
    v5 = iadd v2, v4
    jump block1(v5)
block3(v6: i64):
    return v6
}
"#,
        )
        .unwrap();
        expect![[r#"
            digraph "%count" {
                node [shape=box, fontname="monospace"];
                block0 [label="block0(v0: i64):\l    v1 = iconst 0\l    jump block1(v1)\l"];
                block1 [label="block1(v2: i64):\l    v3 = ilt v2, v0\l    brif v3, block2, block3(v2)\l"];
                block2 [label="block2:\l    check v3, \"say \\\"hi\\\"\\n\"\l    v4 = iconst 1\l    v5 = iadd v2, v4\l    jump block1(v5)\l"];
                block3 [label="block3(v6: i64):\l    return v6\l"];
                block0 -> block1 [label="(v1)"];
                block1 -> block2 [label="then"];
                block1 -> block3 [label="else(v2)"];
                block2 -> block1 [label="(v5)"];
            }
        "#]]
        .assert_eq(&function_to_dot(&module, FuncId::from_u32(0)));
        let whole = module_to_dot(&module);
        assert!(whole.contains("subgraph cluster_0 {"), "{whole}");
        assert!(
            whole.contains("f0_block1 -> f0_block3 [label=\"else(v2)\"];"),
            "{whole}"
        );
    }
}
