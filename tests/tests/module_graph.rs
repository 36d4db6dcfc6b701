//! The house rule of `invert/`: its top-level modules (`egraph`, `solve`, `reorient`, `walk`,
//! `program`, ...) import each other without a circle, so that each can be read knowing only
//! the ones below it. A module's imports are the `crate::NAME` paths in its files' code (not in
//! comments, nor in its `#[cfg(test)]` part).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::NAME` heads used by `code`.
fn imports(code: &str) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = BTreeSet::new();
    for line in code.lines() {
        // Code only: the part before a comment.
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The modules of `invert/src` and what each imports of the others.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../invert/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module = |p: &Path| -> String {
        let rel = p.strip_prefix(&src).unwrap_or(p);
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().to_string());
        first
            .unwrap_or_default()
            .trim_end_matches(".rs")
            .to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| module(p)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &files {
        let m = module(p);
        let code = std::fs::read_to_string(p).unwrap_or_default();
        let deps = imports(&code)
            .into_iter()
            .filter(|d| *d != m && modules.contains(d));
        let deps: Vec<String> = deps.collect();
        graph.entry(m).or_default().extend(deps);
    }
    graph
}

/// A circle of imports, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search with the path kept.
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        m: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut c = path[at..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if !done.insert(m.to_string()) {
            return None;
        }
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(graph, m, &mut Vec::new(), &mut done))
}

#[test]
fn invert_modules_import_each_other_without_a_circle() {
    let g = graph();
    assert!(
        g.contains_key("reorient") && g.contains_key("solve"),
        "{g:?}"
    );
    if let Some(c) = circle(&g) {
        panic!(
            "modules of invert/ import each other in a circle: {}",
            c.join(" → ")
        );
    }
}

#[test]
fn a_circle_is_found() {
    let mut g = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a")] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
    }
    assert_eq!(circle(&g).map(|c| c.join(" ")), Some("a b c a".to_string()));
    assert_eq!(
        imports("use crate::x::Y; // crate::z\n"),
        ["x".to_string()].into()
    );
}
