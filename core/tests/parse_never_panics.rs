//! `parse` must return `Ok` or `Err` on any input: it never panics and never overflows the stack.
//!
//! Property tests over random text, random token soup and mutated corpus files, plus pathological
//! nesting. The number of cases is proptest's default (256), overridden by `PROPTEST_CASES`.

use pinv_core::syntax::parse;
use pinv_core::CompileError;
use proptest::prelude::*;

const CORPUS: [&str; 11] = [
    include_str!("../../tests/corpus/branches.pinv"),
    include_str!("../../tests/corpus/fanout.pinv"),
    include_str!("../../tests/corpus/ints.pinv"),
    include_str!("../../tests/corpus/loops.pinv"),
    include_str!("../../tests/corpus/straight.pinv"),
    include_str!("../../tests/corpus/unary.pinv"),
    include_str!("../../tests/corpus/bad/assign_immutable.pinv"),
    include_str!("../../tests/corpus/bad/inverse_mismatch.pinv"),
    include_str!("../../tests/corpus/bad/mixed_types.pinv"),
    include_str!("../../tests/corpus/bad/unclosed.pinv"),
    include_str!("../../tests/corpus/bad/unknown_name.pinv"),
];

const TOKENS: &[&str] = &[
    "fn",
    "inverse",
    "pgf",
    "theta",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "return",
    "true",
    "false",
    "as",
    "fail",
    "x",
    "y",
    "f",
    "f64",
    "i64",
    "bool",
    "_",
    "0",
    "1",
    "-7",
    "1.5",
    "2.0e-3",
    "1e9",
    "0xff",
    "0b101",
    "9223372036854775808",
    "\"why\"",
    "(",
    ")",
    "{",
    "}",
    ",",
    ";",
    ":",
    "->",
    "..",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "&&",
    "|",
    "||",
    "^",
    "!",
    "<<",
    ">>",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "<<=",
    ">>=",
    "//",
    "/*",
    "*/",
    "\n",
];

/// Parses, checking that any error's span lies within the text (or at its end).
fn check(text: &str) {
    if let Err(e) = parse(text) {
        let span = e.span();
        assert!(span.start <= span.end, "{e:?}");
        assert!(
            span.end as usize <= text.len(),
            "{e:?} in {} bytes",
            text.len()
        );
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Insert(usize, char),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let chars = prop::sample::select(
        "(){};,:-+*/%<>=!&|^._\"\\ \n0123456789abcxyzé"
            .chars()
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), chars).prop_map(|(at, c)| Mutation::Insert(at, c)),
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for m in mutations {
        let n = chars.len();
        match *m {
            Mutation::Delete(at) if n > 0 => {
                chars.remove(at % n);
            }
            Mutation::Delete(_) => {}
            Mutation::Insert(at, c) => chars.insert(at % (n + 1), c),
            Mutation::Duplicate(at, len) if n > 0 => {
                let start = at % n;
                let end = (start + len).min(n);
                let copy: Vec<char> = chars[start..end].to_vec();
                chars.splice(end..end, copy);
            }
            Mutation::Duplicate(..) => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_text(text in "\\PC{0,256}") {
        check(&text);
    }

    #[test]
    fn random_tokens(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..200)) {
        check(&tokens.join(" "));
    }

    #[test]
    fn random_tokens_in_a_function(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..100)) {
        check(&format!("fn f(x: f64) -> f64 {{ {} }}", tokens.join(" ")));
    }

    #[test]
    fn mutated_corpus(
        file in prop::sample::select(&CORPUS[..]),
        mutations in prop::collection::vec(mutation(), 1..12),
    ) {
        check(&apply(file, &mutations));
    }
}

#[test]
fn corpus_is_unchanged_by_no_mutation() {
    for file in CORPUS {
        assert_eq!(apply(file, &[]), file);
    }
}

fn assert_too_deep(text: &str) {
    match parse(text) {
        Err(CompileError::TooDeep { .. }) => {}
        other => panic!("expected TooDeep, got {other:?}"),
    }
}

fn assert_too_long(text: &str) {
    match parse(text) {
        Err(CompileError::TooLong { .. }) => {}
        other => panic!("expected TooLong, got {other:?}"),
    }
}

#[test]
fn hundred_thousand_open_parens() {
    let n = 100_000;
    let text = "(".repeat(n);
    assert_too_deep(&format!("fn f() -> f64 {{ {text}"));
    assert_too_deep(&format!("fn f() -> f64 {{ {text}x{} }}", ")".repeat(n)));
    // At the top level it is not even an item.
    assert!(parse(&text).is_err());
}

#[test]
fn hundred_thousand_minus_signs() {
    let n = 100_000;
    assert_too_deep(&format!("fn f() -> f64 {{ {}x }}", "-".repeat(n)));
    assert_too_deep(&format!("fn f() -> f64 {{ {}1 }}", "-".repeat(n)));
    assert_too_deep(&format!("fn f() -> f64 {{ {}x }}", "- ".repeat(n)));
    // `--` is not a token: a long run of `-` is still unary minus signs.
    assert!(parse(&"-".repeat(n)).is_err());
}

#[test]
fn hundred_thousand_of_other_things() {
    let n = 100_000;
    assert_too_deep(&format!("fn f() -> f64 {{ {} }}", "{".repeat(n)));
    assert_too_long(&format!("fn f() -> f64 {{ 1{} }}", " + 1".repeat(n)));
    assert_too_long(&format!("fn f() -> f64 {{ 1{} }}", " as f64".repeat(n)));
    assert_too_deep(&format!("fn f() -> f64 {{ {}", "if x {".repeat(n)));
    assert_too_deep(&format!("fn f() -> {} {{ 1 }}", "(".repeat(n)));
    assert_too_deep(&format!("fn f() -> f64 {{ let {} = 1; 1 }}", "(".repeat(n)));
    // Nested comments are not nesting in the tree, and cost no stack.
    assert!(parse(&"/*".repeat(n)).is_err());
    assert!(parse(&format!("{}{}", "/*".repeat(n), "*/".repeat(n))).is_ok());
}
