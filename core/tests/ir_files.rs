//! File-based IR tests: every `tests/ir/*.ir` file is parsed, verified, printed, and the printed
//! text compared with the file's own text.
//!
//! A file starts with a header of `;` comment lines (and blank lines); the rest is the IR exactly as
//! the printer writes it. Header lines that mean something:
//!
//! - `; error: SUBSTRING`: parsing or verification must fail with a message containing SUBSTRING.
//!   (If the text parses, it must still print back as written.)
//! - `; spans: true`: print with source spans (` @START..END`).
//!
//! `UPDATE_EXPECT=1 cargo test -p pinv-core --test ir_files` rewrites each file's IR with what the
//! printer writes, keeping the header.

use pinv_core::ir::read::parse_module;
use pinv_core::ir::verify::verify_module;
use pinv_core::ir::write::{write_module, WriteOptions};
use std::path::{Path, PathBuf};

struct Header {
    /// The header's text, kept when blessing.
    text: String,
    error: Option<String>,
    spans: bool,
}

/// Splits a file into its header and its IR.
fn split(text: &str) -> (Header, &str) {
    let mut header = Header {
        text: String::new(),
        error: None,
        spans: false,
    };
    let mut rest = text;
    while !rest.is_empty() {
        let (line, after) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let trimmed = line.trim();
        if !(trimmed.is_empty() || trimmed.starts_with(';')) {
            break;
        }
        let comment = trimmed.trim_start_matches(';').trim();
        if let Some(e) = comment.strip_prefix("error:") {
            header.error = Some(e.trim().to_string());
        } else if let Some(s) = comment.strip_prefix("spans:") {
            header.spans = s.trim() == "true";
        }
        header.text.push_str(line);
        header.text.push('\n');
        rest = after;
    }
    (header, rest)
}

/// Runs one file; returns what went wrong, if anything.
fn run(path: &Path, bless: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (header, body) = split(&text);
    let opts = WriteOptions {
        spans: header.spans,
    };
    let parsed = parse_module(&text);
    let outcome = match &parsed {
        Err(e) => Err(e.to_string()),
        Ok(module) => verify_module(module).map_err(|e| e.to_string()),
    };
    match (&header.error, &outcome) {
        (None, Err(e)) => return Err(format!("unexpected error: {e}")),
        (Some(want), Ok(())) => return Err(format!("expected an error containing `{want}`")),
        (Some(want), Err(e)) if !e.contains(want.as_str()) => {
            return Err(format!("expected an error containing `{want}`, found: {e}"))
        }
        _ => {}
    }
    let Ok(module) = parsed else {
        return Ok(());
    };
    let printed = write_module(&module, &opts);
    if printed != body {
        if bless {
            std::fs::write(path, format!("{}{printed}", header.text)).map_err(|e| e.to_string())?;
        } else {
            return Err(format!(
                "printed text differs (UPDATE_EXPECT=1 to update):\n--- file\n{body}--- printed\n{printed}"
            ));
        }
    }
    // The printer's text reads back to the same text.
    let again = parse_module(&printed).map_err(|e| format!("printed text does not parse: {e}"))?;
    if write_module(&again, &opts) != printed {
        return Err("printed text does not print back the same".to_string());
    }
    Ok(())
}

#[test]
fn ir_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ir");
    // One variable re-blesses every expected output of the project (expect-test's own name);
    // PINV_BLESS, this file's earlier name for it, still works.
    let bless = ["UPDATE_EXPECT", "PINV_BLESS"]
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|v| v == "1"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .ir files in {}", dir.display());
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| run(p, bless).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
