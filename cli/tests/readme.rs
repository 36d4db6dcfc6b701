//! Every `pinv` command in README.md's console blocks, run as written: its output must be what
//! the README shows, so that the README cannot go stale.
//!
//! A console block is a run of `$ command` lines, each followed by the output it prints (stdout,
//! then stderr). Only commands that start with `pinv ` are run (not `cargo …`, and not commands
//! that use the shell: `<(`, `>`, `|`). `pinv` is this build's binary. A plot's `--out FILE` is
//! written to a temporary directory instead, and its name is put back in the output. In the
//! expected output a line `...` stands for any number of lines.

mod common;

use common::{stderr, stdout, temp_dir, workspace};
use std::process::Command;

struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: command.to_string(),
                expected: Vec::new(),
            });
        } else if let Some(last) = out.last_mut() {
            last.expected.push(line.to_string());
        }
    }
    out
}

/// Splits a command line into words, with single and double quotes.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// Whether `actual` is `expected`, where an expected line `...` matches any lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|k| matches(rest, &actual[k..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a.trim_end() == e.trim_end() && matches(rest, more)),
    }
}

#[test]
fn every_console_example_in_the_readme_prints_what_it_shows() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).expect("README.md");
    let scratch = temp_dir();
    let mut ran = 0;
    let mut failures = Vec::new();
    for ex in examples(&readme) {
        let shell = ["<(", ">", "|"].iter().any(|s| ex.command.contains(s));
        if !ex.command.starts_with("pinv ") || shell {
            continue;
        }
        let mut args = words(&ex.command);
        args.remove(0);
        // A plot writes into the temporary directory, under the same file name.
        let mut renamed: Option<(String, String)> = None;
        if let Some(i) = args.iter().position(|a| a == "--out") {
            if let Some(path) = args.get(i + 1).cloned() {
                let name = std::path::Path::new(&path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let temp = scratch.join(name).to_string_lossy().into_owned();
                args[i + 1] = temp.clone();
                renamed = Some((temp, path));
            }
        }
        let o = Command::new(env!("CARGO_BIN_EXE_pinv"))
            .args(&args)
            .current_dir(workspace())
            .output()
            .expect("the pinv binary runs");
        ran += 1;
        let mut text = stdout(&o) + &stderr(&o);
        if let Some((temp, original)) = &renamed {
            text = text.replace(temp.as_str(), original);
        }
        let mut expected = ex.expected.clone();
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let actual: Vec<&str> = text.trim_end().lines().collect();
        if !matches(&expected, &actual) {
            failures.push(format!(
                "README.md:{}: $ {}\n--- README shows:\n{}\n--- it prints:\n{}",
                ex.line,
                ex.command,
                expected.join("\n"),
                text.trim_end()
            ));
        }
    }
    assert!(ran >= 20, "only {ran} examples ran: is the README parsed?");
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn the_matcher_and_the_word_splitter() {
    let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(matches(&lines("a\n...\nd"), &["a", "b", "c", "d"]));
    assert!(matches(&lines("a\n...\nd"), &["a", "d"]));
    assert!(!matches(&lines("a\n...\nd"), &["a", "b"]));
    assert!(!matches(&lines("a\nb"), &["a", "b", "c"]));
    assert_eq!(
        words("pinv invert f.pinv g --y '(1, 2)' --theta \"\""),
        ["pinv", "invert", "f.pinv", "g", "--y", "(1, 2)", "--theta", ""]
    );
}
