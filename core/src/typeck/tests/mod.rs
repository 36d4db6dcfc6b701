//! Tests of the checker, written as `.pinv` sources (plus a few hand-built ASTs for shapes the
//! parser never produces).

use super::check;
use super::hir::{self, ExprKind, LetPattern, LocalId, Program, StmtKind, Ty};
use crate::error::CompileError;
use crate::ir::{Const, FuncKind, Opcode, Type};
use crate::span::{SourceFile, Span};
use crate::syntax::{ast, parse};

// ---------------------------------------------------------------- helpers

mod invariants;
mod random_ast;
mod well_typed;

fn check_src(src: &str) -> Result<Program, CompileError> {
    let module = parse(src).unwrap_or_else(|e| panic!("parse error: {e}\n{src}"));
    check(&module)
}

#[track_caller]
fn ok(src: &str) -> Program {
    match check_src(src) {
        Ok(program) => {
            invariants::validate(&program);
            program
        }
        Err(e) => {
            let file = SourceFile::new("test.pinv", src);
            panic!("{}: {e}\n{src}", file.location(e.span()))
        }
    }
}

/// The 1-based line a span starts on.
fn line_at(src: &str, span: Span) -> usize {
    SourceFile::new("test.pinv", src).line_col(span.start).line
}

/// The 1-based line an error points at.
fn line_of(src: &str, e: &CompileError) -> usize {
    line_at(src, e.span())
}

/// Checks `src`, expecting an error on `line` whose message contains `fragment`.
#[track_caller]
fn err(src: &str, line: usize, fragment: &str) -> CompileError {
    let e = match check_src(src) {
        Ok(_) => panic!("expected an error containing {fragment:?}:\n{src}"),
        Err(e) => e,
    };
    let message = e.to_string();
    assert!(
        message.contains(fragment),
        "message {message:?} lacks {fragment:?}"
    );
    assert_eq!(line_of(src, &e), line, "wrong line for {message:?}\n{src}");
    e
}

fn function<'p>(program: &'p Program, symbol: &str) -> &'p hir::FnDef {
    program
        .functions
        .iter()
        .find(|f| f.symbol == symbol)
        .unwrap_or_else(|| panic!("no function {symbol}"))
}

/// The tail expression of a function's body.
fn tail<'p>(program: &'p Program, symbol: &str) -> &'p hir::Expr {
    function(program, symbol)
        .body
        .tail
        .as_deref()
        .unwrap_or_else(|| panic!("{symbol} has no tail"))
}

fn opcode_of(e: &hir::Expr) -> Opcode {
    match &e.kind {
        ExprKind::Prim { op, .. } => *op,
        other => panic!("not a primitive: {other:?}"),
    }
}

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn pinv_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "pinv"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .pinv files in {}", dir.display());
    files
}

// ---------------------------------------------------------------- LANGUAGE.md and the corpus

#[test]
fn language_md_functions_sample() {
    let program = ok(r#"
// A comment runs to the end of the line.
fn f(x: f64, y: f64, z: f64) -> f64 {
    x * y + z
}

fn kin2(a1: f64, a2: f64) -> (f64, f64) {      // several outputs: a tuple
    let x = cos(a1) + cos(a1 + a2);
    let y = sin(a1) + sin(a1 + a2);
    (x, y)
}
"#);
    assert_eq!(
        function(&program, "kin2").returns,
        vec![Type::F64, Type::F64]
    );
    assert_eq!(
        tail(&program, "kin2").ty,
        Ty::Tuple(vec![Type::F64, Type::F64])
    );
}

#[test]
fn language_md_statements_sample() {
    // The statements of LANGUAGE.md, with their `...` filled in.
    ok(r#"
fn kin2(a1: f64, a2: f64) -> (f64, f64) {
    (cos(a1) + cos(a1 + a2), sin(a1) + sin(a1 + a2))
}

fn statements(x: f64, c: bool, d: bool, n: i64) -> f64 {
    let a = x * 2.0;            // immutable binding, type inferred
    let b: f64 = a + 1.0;        // with an annotation
    let mut s = 0;              // mutable
    s = s + 1;                  // assignment, only to a `mut` binding
    s += 1;                     // also -=, *=, /=, %=
    s -= 1;
    s *= 2;
    s /= 2;
    s %= 5;
    let (p, q) = kin2(a, b);    // destructure a tuple result
    if c { s += 1; } else if d { s -= 1; } else { s = 0; }   // as a statement
    let m = if c { p } else if d { q } else { 0.0 };        // or as an expression with an else
    let mut i = 0;
    while i < n { i += 1; }
    for i in 0..n { s += i; }       // i64 range, end exclusive; n is evaluated once
    if s > 100 {
        return m;               // early return, from anywhere
    }
    let a = a + p;              // shadowing
    let a = a * q;
    a
}
"#);
}

#[test]
fn language_md_expressions_sample() {
    ok(r#"
fn literals() -> f64 {
    let a = 1.5;
    let b = 2.0e-3;
    let c = 1e9;
    let i = 3;
    let j = -7;
    let k = 0xff;
    let t = true;
    let u = false;
    if t && !u { a + b + c } else { (i + j + k) as f64 }
}

fn no_implicit_conversion() -> f64 {
    1 as f64 + 2.0
}

fn choose(c: bool, a: f64, b: f64) -> f64 {
    if c { a } else { b }
}

fn operators(x: i64, y: i64, p: bool, q: bool, f: f64) -> bool {
    let a = -x + !y * 2 / 3 % 4 - 1;
    let b = a << 2 >> 1 & x ^ y | 7;
    let r = (p & q) ^ (p | !q);
    let g = f as i64 as f64;
    let c = x == y || x != y && x < y || x <= y || x > y || x >= y;
    c || r || f < g || f <= g || f > g || f >= g || f == g || f != g || p == q || p != q || b == a
}

fn primitives(x: f64, y: f64, i: i64, j: i64) -> f64 {
    let a = sin(x) + cos(x) + tan(x) + asin(x) + acos(x) + atan(x) + exp(x) + log(x);
    let b = sqrt(x) + abs(x) + floor(x) + sinh(x) + cosh(x) + tanh(x);
    let c = pow(x, y) + atan2(y, x) + min(x, y) + max(x, y);
    let d = min(i, j) + max(i, j) + abs(i);
    a + b + c + d as f64
}
"#);
}

#[test]
fn language_md_inverse_sample() {
    let program = ok(r#"
fn softplus(x: f64) -> f64 { log(1.0 + exp(x)) }
inverse softplus(y: f64) -> f64 { log(exp(y) - 1.0) }

fn square(x: f64) -> f64 { x * x }
inverse square(y: f64, theta s: bool) -> f64 {
    if s { sqrt(y) } else { -sqrt(y) }
}
pgf square(x: f64) -> bool { x >= 0.0 }     // the θ that gives x back: square⁻¹(square(x), pgf(x)) = x
"#);
    let symbols: Vec<_> = program
        .functions
        .iter()
        .map(|f| f.symbol.as_str())
        .collect();
    assert_eq!(
        symbols,
        [
            "softplus",
            "inverse:softplus",
            "square",
            "inverse:square",
            "pgf:square"
        ]
    );
    let inverse = function(&program, "inverse:square");
    assert_eq!(inverse.name, "square");
    assert_eq!(
        inverse.kind,
        FuncKind::Inverse {
            of: "square".to_string(),
            outputs: 1
        }
    );
    assert_eq!(inverse.theta_params, vec![false, true]);
    assert_eq!(inverse.param_types(), vec![Type::F64, Type::Bool]);
    let pgf = function(&program, "pgf:square");
    assert_eq!(
        pgf.kind,
        FuncKind::Pgf {
            of: "square".to_string()
        }
    );
    assert_eq!(pgf.returns, vec![Type::Bool]);
    assert_eq!(function(&program, "square").kind, FuncKind::Fn);
}

#[test]
fn corpus_checks() {
    for path in pinv_files(&corpus_dir()) {
        let src = std::fs::read_to_string(&path).expect("readable corpus file");
        let module = parse(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match check(&module) {
            Ok(program) => invariants::validate(&program),
            Err(e) => {
                let file = SourceFile::new(path.display().to_string(), src.as_str());
                panic!("{}: {e}", file.location(e.span()));
            }
        }
    }
}

#[test]
fn bad_corpus_errors_point_at_their_header_line() {
    for path in pinv_files(&corpus_dir().join("bad")) {
        let src = std::fs::read_to_string(&path).expect("readable corpus file");
        let header = src
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// error: "))
            .unwrap_or_else(|| panic!("{}: no `// error:` header", path.display()));
        let (line, fragment) = header
            .split_once(": ")
            .unwrap_or_else(|| panic!("{}: malformed header", path.display()));
        let file = SourceFile::new(path.display().to_string(), src.as_str());
        let e = match parse(&src).and_then(|module| check(&module)) {
            Ok(_) => panic!("{}: no error", path.display()),
            Err(e) => e,
        };
        let expected_line = match line {
            "eof" => {
                file.line_col(u32::try_from(src.len()).expect("small file"))
                    .line
            }
            n => n.parse().expect("a line number"),
        };
        let found = file.line_col(e.span().start).line;
        assert!(
            e.to_string().contains(fragment),
            "{}: {e:?} lacks {fragment:?}",
            path.display()
        );
        assert_eq!(found, expected_line, "{}: {e}", path.display());
    }
}

// ---------------------------------------------------------------- one test per error

#[test]
fn unknown_name() {
    err("fn f(x: f64) -> f64 {\n    x + y\n}", 2, "unknown name `y`");
    // A block's bindings end with it, and a loop variable with the loop.
    err(
        "fn f(x: f64) -> f64 {\n    { let y = x; }\n    y\n}",
        3,
        "unknown name `y`",
    );
    err(
        "fn f(n: i64) -> i64 {\n    for i in 0..n { }\n    i\n}",
        3,
        "unknown name `i`",
    );
    // A `let` does not see its own name.
    err(
        "fn f() -> f64 {\n    let a = a;\n    a\n}",
        2,
        "unknown name `a`",
    );
    // Assigning to an unknown name.
    err(
        "fn f() -> f64 {\n    z = 1.0;\n    1.0\n}",
        2,
        "unknown name `z`",
    );
}

#[test]
fn unknown_function() {
    err(
        "fn f(x: f64) -> f64 {\n    g(x)\n}",
        2,
        "unknown function `g`",
    );
}

#[test]
fn unknown_type() {
    err("fn f(x: f32) -> f64 { 1.0 }", 1, "unknown type `f32`");
    err("fn f(x: f64) -> int { 1 }", 1, "unknown type `int`");
    err(
        "fn f(x: f64) -> f64 {\n    let y: u8 = 1;\n    x\n}",
        2,
        "unknown type `u8`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    x as f32\n}",
        2,
        "unknown type `f32`",
    );
}

#[test]
fn duplicate_function() {
    let e = err(
        "fn f(x: f64) -> f64 { x }\nfn g(x: f64) -> f64 { x }\nfn f(x: i64) -> i64 { x }",
        3,
        "the function `f` is defined more than once",
    );
    let CompileError::DuplicateFunction { first, .. } = e else {
        panic!("{e:?}")
    };
    assert_eq!(first, Span::new(3, 4));
}

#[test]
fn reserved_name() {
    err(
        "fn g(x: f64) -> f64 { x }\nfn sin(x: f64) -> f64 { x }",
        2,
        "`sin` is a primitive and cannot be redefined",
    );
    err("fn fail(x: f64) -> f64 { x }", 1, "`fail` is a primitive");
    err("fn max(x: i64) -> i64 { x }", 1, "`max` is a primitive");
}

#[test]
fn duplicate_param() {
    err(
        "fn f(x: f64,\n     x: f64) -> f64 { x }",
        2,
        "the parameter `x` appears more than once",
    );
    err(
        "fn f(x: f64) -> f64 { x }\ninverse f(y: f64, theta y: bool) -> f64 { y }",
        2,
        "the parameter `y` appears more than once",
    );
}

#[test]
fn assign_immutable() {
    let src = "fn f(x: f64) -> f64 {\n    let a = x;\n    a = a + 1.0;\n    a\n}";
    let e = err(src, 3, "cannot assign twice to immutable `a`");
    // The secondary location is the binding.
    let (decl, _) = e.secondary()[0].clone();
    assert_eq!(line_at(src, decl), 2);
    // Parameters, `for` variables and compound assignments too.
    err(
        "fn f(x: f64) -> f64 {\n    x = 2.0;\n    x\n}",
        2,
        "cannot assign twice to immutable `x`",
    );
    err(
        "fn f(x: i64) -> i64 {\n    for i in 0..x {\n        i += 1;\n    }\n    x\n}",
        3,
        "cannot assign twice to immutable `i`",
    );
    // Shadowing a `mut` binding with an immutable one.
    err(
        "fn f(x: f64) -> f64 {\n    let mut a = x;\n    let a = a;\n    a *= 2.0;\n    a\n}",
        4,
        "immutable `a`",
    );
}

#[test]
fn mismatched_types() {
    err(
        "fn f(x: f64) -> f64 {\n    x + 1\n}",
        2,
        "mismatched types: expected `f64`, found `i64`",
    );
    err(
        "fn f(x: i64) -> i64 {\n    x +\n        1.0\n}",
        3,
        "expected `i64`, found `f64`",
    );
    // Annotations, assignments, arguments, conditions, ranges.
    err(
        "fn f() -> f64 {\n    let a: f64 = 1;\n    a\n}",
        2,
        "expected `f64`, found `i64`",
    );
    err(
        "fn f() -> f64 {\n    let mut a = 1.0;\n    a = true;\n    a\n}",
        3,
        "expected `f64`, found `bool`",
    );
    err(
        "fn f() -> f64 {\n    let mut a = 1.0;\n    a += 1;\n    a\n}",
        3,
        "expected `f64`, found `i64`",
    );
    err(
        "fn g(x: f64) -> f64 { x }\nfn f() -> f64 {\n    g(1)\n}",
        3,
        "expected `f64`, found `i64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    if x { x } else { x }\n}",
        2,
        "expected `bool`, found `f64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    while x { }\n    x\n}",
        2,
        "expected `bool`, found `f64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    for i in 0..x { }\n    x\n}",
        2,
        "expected `i64`, found `f64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    sin(1)\n}",
        2,
        "expected `f64`, found `i64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    min(x, 1)\n}",
        2,
        "expected `f64`, found `i64`",
    );
    // `if` arms.
    err(
        "fn f(c: bool) -> f64 {\n    if c {\n        1.0\n    } else {\n        2\n    }\n}",
        5,
        "expected `f64`, found `i64`",
    );
    // An `if` without `else` has no value.
    err(
        "fn f(c: bool) -> f64 {\n    if c {\n        1.0\n    }\n}",
        3,
        "expected `()`, found `f64`",
    );
    // Returns, and the body's type.
    err(
        "fn f(x: f64) -> f64 {\n    if x > 0.0 {\n        return 1;\n    }\n    x\n}",
        3,
        "expected `f64`, found `i64`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    return;\n}",
        2,
        "expected `f64`, found `()`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    let y = x;\n    x * 2.0;\n}",
        3,
        "expected `f64`, found `()`",
    );
    err("fn f(x: f64) -> f64 {\n}", 2, "expected `f64`, found `()`");
    err(
        "fn f(x: f64) -> i64 {\n    x\n}",
        2,
        "expected `i64`, found `f64`",
    );
    err(
        "fn f(x: f64) -> (f64, f64) {\n    x\n}",
        2,
        "expected `(f64, f64)`, found `f64`",
    );
    err(
        "fn f(x: f64) -> (f64, i64) {\n    (x, x)\n}",
        2,
        "expected `(f64, i64)`, found `(f64, f64)`",
    );
    // Destructuring a scalar.
    err(
        "fn f(x: f64) -> f64 {\n    let (a, b) = x;\n    a\n}",
        2,
        "expected `(_, _)`, found `f64`",
    );
    // Loop bodies have no value.
    err(
        "fn f(x: f64) -> f64 {\n    while false {\n        x\n    }\n    x\n}",
        3,
        "expected `()`, found `f64`",
    );
}

#[test]
fn bad_operand() {
    err(
        "fn f(a: bool) -> bool {\n    a < a\n}",
        2,
        "cannot apply `<` to `bool`",
    );
    err(
        "fn f(a: bool) -> bool {\n    a + a\n}",
        2,
        "cannot apply `+` to `bool`",
    );
    err(
        "fn f(a: f64) -> f64 {\n    a << 1.0\n}",
        2,
        "cannot apply `<<` to `f64`",
    );
    err(
        "fn f(a: f64) -> f64 {\n    a & a\n}",
        2,
        "cannot apply `&` to `f64`",
    );
    err(
        "fn f(a: f64) -> bool {\n    a && a\n}",
        2,
        "cannot apply `&&` to `f64`",
    );
    err(
        "fn f(a: bool) -> bool {\n    -a\n}",
        2,
        "cannot apply `-` to `bool`",
    );
    err(
        "fn f(a: f64) -> f64 {\n    !a\n}",
        2,
        "cannot apply `!` to `f64`",
    );
    err(
        "fn f(a: bool) -> bool {\n    abs(a)\n}",
        2,
        "cannot apply `abs` to `bool`",
    );
    err(
        "fn f(c: bool) -> f64 {\n    (if c { }) + 1.0\n}",
        2,
        "cannot apply `+` to `()`",
    );
}

#[test]
fn bad_cast() {
    err(
        "fn f(a: bool) -> f64 {\n    a as f64\n}",
        2,
        "cannot cast `bool` as `f64`",
    );
    err(
        "fn f(a: i64) -> bool {\n    a as bool\n}",
        2,
        "cannot cast `i64` as `bool`",
    );
    err(
        "fn f(a: f64) -> bool {\n    a as bool\n}",
        2,
        "cannot cast `f64` as `bool`",
    );
}

#[test]
fn wrong_arg_count() {
    err(
        "fn g(x: f64, y: f64) -> f64 { x }\nfn f() -> f64 {\n    g(1.0)\n}",
        3,
        "`g` takes 2 argument(s) but 1 were given",
    );
    err(
        "fn f() -> f64 {\n    pow(1.0)\n}",
        2,
        "`pow` takes 2 argument(s) but 1 were given",
    );
    err(
        "fn f() -> f64 {\n    sin(1.0, 2.0)\n}",
        2,
        "`sin` takes 1 argument(s) but 2 were given",
    );
}

#[test]
fn pattern_arity() {
    err(
        "fn g(x: f64) -> (f64, f64, f64) { (x, x, x) }\nfn f() -> f64 {\n    let (a, b) = g(1.0);\n    a\n}",
        3,
        "a tuple of 3 values cannot be destructured into 2 names",
    );
}

#[test]
fn not_allowed() {
    // Tuples must be destructured.
    let tuple_fn = "fn g(x: f64) -> (f64, f64) { (x, x) }\n";
    err(
        &format!("{tuple_fn}fn f() -> f64 {{\n    let t = g(1.0);\n    1.0\n}}"),
        3,
        "tuples must be destructured",
    );
    err(
        &format!("{tuple_fn}fn f() -> f64 {{\n    let t: (f64, f64) = g(1.0);\n    1.0\n}}"),
        3,
        "tuples must be destructured",
    );
    err(
        &format!("{tuple_fn}fn f() -> f64 {{\n    g(1.0) + 1.0\n}}"),
        3,
        "`(f64, f64)` is not allowed here",
    );
    err(
        &format!("{tuple_fn}fn f() -> (f64, f64) {{\n    let x = 1.0;\n    g((x, x))\n}}"),
        4,
        "tuples must be destructured",
    );
    // `theta` only in inverses.
    err(
        "fn f(x: f64,\n     theta s: bool) -> f64 { x }",
        2,
        "only the parameters of an `inverse` declaration can be `theta` parameters",
    );
    // Tuple types: no nesting, none as a parameter.
    err(
        "fn f(x: f64) -> (f64, (f64, f64)) { x }",
        1,
        "tuples cannot be nested",
    );
    err(
        "fn f(x: (f64, f64)) -> f64 { 1.0 }",
        1,
        "a parameter has one type",
    );
    // A variable called as a function, and a function used as a variable.
    err(
        "fn f(x: f64) -> f64 {\n    x(1.0)\n}",
        2,
        "`x` is a variable, not a function",
    );
    err(
        "fn g(x: f64) -> f64 { x }\nfn f(x: f64) -> f64 {\n    g + x\n}",
        3,
        "`g` is a function; call it as `g(...)`",
    );
    err(
        "fn f(x: f64) -> f64 {\n    sin\n}",
        2,
        "`sin` is a function",
    );
    // A value with no type to bind.
    err(
        "fn f(c: bool) -> f64 {\n    let a = if c { };\n    1.0\n}",
        2,
        "this expression has no value",
    );
    err(
        "fn f(c: bool) -> f64 {\n    let a = fail(\"no\");\n    1.0\n}",
        2,
        "its type cannot be inferred",
    );
    // `_` needs no type.
    ok("fn f(c: bool) -> f64 {\n    let _ = fail(\"no\");\n}");
    // Bad tuple patterns.
    err(
        &format!("{tuple_fn}fn f() -> f64 {{\n    let (a, a) = g(1.0);\n    a\n}}"),
        3,
        "`a` is bound more than once",
    );
}

#[test]
fn declaration_of_unknown() {
    err(
        "fn f(x: f64) -> f64 { x }\ninverse g(y: f64) -> f64 { y }",
        2,
        "inverse of unknown function `g`",
    );
    err(
        "fn f(x: f64) -> f64 { x }\npgf g(x: f64) -> f64 { x }",
        2,
        "pgf of unknown function `g`",
    );
}

#[test]
fn duplicate_declaration() {
    let src =
        "fn f(x: f64) -> f64 { x }\ninverse f(y: f64) -> f64 { y }\ninverse f(y: f64) -> f64 { y }";
    let e = err(src, 3, "`f` has more than one inverse declaration");
    let CompileError::DuplicateDeclaration { first, .. } = e else {
        panic!("{e:?}")
    };
    assert_eq!(line_at(src, first), 2);
    err(
        "fn f(x: f64) -> f64 { x }\ninverse f(y: f64, theta s: bool) -> f64 { y }\npgf f(x: f64) -> bool { true }\npgf f(x: f64) -> bool { true }",
        4,
        "`f` has more than one pgf declaration",
    );
}

#[test]
fn inverse_signature() {
    let g = "fn g(x: f64, y: f64) -> f64 { x + y }\n";
    // The return type must be g's inputs.
    err(
        &format!("{g}inverse g(z: f64) -> f64 {{ z }}"),
        2,
        "inverse of `g` has the wrong signature: it must return the inputs of `g`, `(f64, f64)`, but returns `f64`",
    );
    // The outputs.
    err(
        &format!("{g}inverse g(z: i64) -> (f64, f64) {{ (1.0, 2.0) }}"),
        2,
        "expected 1 output parameter of type `f64` (the output of `g`) but found 1 parameter of type `i64`",
    );
    err(
        &format!("{g}inverse g(z: f64, w: f64) -> (f64, f64) {{ (z, w) }}"),
        2,
        "but found 2 parameters of types `f64`, `f64`",
    );
    err(
        &format!("{g}inverse g(theta s: f64) -> (f64, f64) {{ (s, s) }}"),
        2,
        "but found no parameters",
    );
    // θ parameters come last.
    err(
        &format!("{g}inverse g(theta s: f64, z: f64) -> (f64, f64) {{ (s, z) }}"),
        2,
        "the output parameter `z` comes after a theta parameter",
    );
    // Several outputs.
    err(
        "fn h(x: f64) -> (f64, i64) { (x, 1) }\ninverse h(a: f64, b: f64) -> f64 { a }",
        2,
        "expected 2 output parameters of types `f64`, `i64` (the outputs of `h`)",
    );
}

#[test]
fn pgf_signature() {
    err(
        "fn f(x: f64) -> f64 { x }\npgf f(x: f64) -> bool { true }",
        2,
        "pgf of `f` has the wrong signature: `f` has no inverse declaration",
    );
    err(
        "fn f(x: f64) -> f64 { x }\ninverse f(y: f64) -> f64 { y }\npgf f(x: f64) -> bool { true }",
        3,
        "the inverse of `f` has no theta parameters",
    );
    let f = "fn f(x: f64, n: i64) -> f64 { x }\ninverse f(y: f64, theta a: f64, theta b: bool) -> (f64, i64) { (a, 1) }\n";
    err(
        &format!("{f}pgf f(x: f64) -> (f64, bool) {{ (x, true) }}"),
        3,
        "expected 2 parameters of types `f64`, `i64` (the inputs of `f`) but found 1 parameter of type `f64`",
    );
    err(
        &format!("{f}pgf f(x: f64, n: i64) -> f64 {{ x }}"),
        3,
        "it must return the theta values of the inverse of `f`, `(f64, bool)`, but returns `f64`",
    );
    // The pgf may come before the inverse.
    ok("fn f(x: f64) -> f64 { x * x }\npgf f(x: f64) -> bool { x >= 0.0 }\ninverse f(y: f64, theta s: bool) -> f64 { if s { sqrt(y) } else { -sqrt(y) } }");
    ok(&format!(
        "{f}pgf f(x: f64, n: i64) -> (f64, bool) {{ (x, true) }}"
    ));
}

#[test]
fn too_deep() {
    // Built by hand: the parser has its own limit.
    let span = Span::new(0, 1);
    let mut e = ast::Expr {
        kind: ast::ExprKind::Float(1.0),
        span,
    };
    for _ in 0..10_000 {
        e = ast::Expr {
            kind: ast::ExprKind::Unary(ast::UnOp::Neg, Box::new(e)),
            span,
        };
    }
    let module = one_fn(
        vec![],
        ast::Block {
            stmts: vec![],
            tail: Some(Box::new(e)),
            span,
        },
    );
    let result = check(&module);
    assert!(
        matches!(result, Err(CompileError::TooLong { .. })),
        "{result:?}"
    );
}

#[test]
fn deep_nesting_below_the_limit_fits_the_stack() {
    // Each level is an `if` whose arms are blocks holding a `let` and a binary operation: the
    // deepest recursion the checker does per level of nesting. Test threads have 2 MiB of stack.
    let span = Span::new(0, 1);
    let expr = |kind| ast::Expr { kind, span };
    let mut e = expr(ast::ExprKind::Float(1.0));
    // Two expression levels per iteration (the `if` and the `+`), plus the leaf.
    for _ in 0..(super::expr::MAX_HEIGHT / 2 - 1) {
        let block = |tail: ast::Expr| ast::Block {
            stmts: vec![ast::Stmt {
                kind: ast::StmtKind::Let {
                    pat: ast::Pattern {
                        kind: ast::PatternKind::Wild,
                        span,
                    },
                    ty: None,
                    init: expr(ast::ExprKind::Float(2.0)),
                },
                span,
            }],
            tail: Some(Box::new(tail)),
            span,
        };
        let arm = expr(ast::ExprKind::Binary(
            ast::BinOp::Add,
            Box::new(e),
            Box::new(expr(ast::ExprKind::Float(1.0))),
        ));
        e = expr(ast::ExprKind::If {
            cond: Box::new(expr(ast::ExprKind::Bool(true))),
            then: block(arm),
            else_: Some(Box::new(expr(ast::ExprKind::Block(block(expr(
                ast::ExprKind::Float(0.0),
            )))))),
        });
    }
    let module = one_fn(
        vec![],
        ast::Block {
            stmts: vec![],
            tail: Some(Box::new(e)),
            span,
        },
    );
    let program = check(&module).expect("checks");
    invariants::validate(&program);
}

// ---------------------------------------------------------------- typing

#[test]
fn binary_operator_opcodes() {
    use Opcode::*;
    let table: &[(&str, &str, Opcode)] = &[
        ("f64", "+", Fadd),
        ("f64", "-", Fsub),
        ("f64", "*", Fmul),
        ("f64", "/", Fdiv),
        ("f64", "%", Frem),
        ("f64", "==", Feq),
        ("f64", "!=", Fne),
        ("f64", "<", Flt),
        ("f64", "<=", Fle),
        ("f64", ">", Fgt),
        ("f64", ">=", Fge),
        ("i64", "+", Iadd),
        ("i64", "-", Isub),
        ("i64", "*", Imul),
        ("i64", "/", Idiv),
        ("i64", "%", Irem),
        ("i64", "<<", Ishl),
        ("i64", ">>", Ishr),
        ("i64", "&", Iand),
        ("i64", "^", Ixor),
        ("i64", "|", Ior),
        ("i64", "==", Ieq),
        ("i64", "!=", Ine),
        ("i64", "<", Ilt),
        ("i64", "<=", Ile),
        ("i64", ">", Igt),
        ("i64", ">=", Ige),
        ("bool", "&", Band),
        ("bool", "^", Bxor),
        ("bool", "|", Bor),
        ("bool", "==", Beq),
        ("bool", "!=", Bne),
    ];
    for &(ty, op, opcode) in table {
        let ret = opcode.result_type();
        let src = format!("fn t(a: {ty}, b: {ty}) -> {ret} {{ a {op} b }}");
        let program = ok(&src);
        let e = tail(&program, "t");
        assert_eq!(opcode_of(e), opcode, "{src}");
        assert_eq!(e.ty, Ty::Scalar(ret), "{src}");
    }
}

#[test]
fn short_circuit_operators() {
    let program =
        ok("fn t(a: bool, b: bool) -> bool { a && b }\nfn u(a: bool, b: bool) -> bool { a || b }");
    assert!(matches!(tail(&program, "t").kind, ExprKind::And(..)));
    assert!(matches!(tail(&program, "u").kind, ExprKind::Or(..)));
    assert_eq!(tail(&program, "u").ty, Ty::BOOL);
}

#[test]
fn unary_operator_and_cast_opcodes() {
    use Opcode::*;
    let table: &[(&str, &str, &str, Opcode)] = &[
        ("f64", "-a", "f64", Fneg),
        ("i64", "-a", "i64", Ineg),
        ("bool", "!a", "bool", Bnot),
        ("i64", "!a", "i64", Inot),
        ("f64", "a as i64", "i64", FcvtToI64),
        ("i64", "a as f64", "f64", FcvtFromI64),
        ("bool", "a as i64", "i64", BoolToI64),
    ];
    for &(ty, expr, ret, opcode) in table {
        let src = format!("fn t(a: {ty}) -> {ret} {{ {expr} }}");
        assert_eq!(opcode_of(tail(&ok(&src), "t")), opcode, "{src}");
    }
}

#[test]
fn builtin_opcodes() {
    use Opcode::*;
    let table: &[(&str, &str, Opcode)] = &[
        ("f64", "sin(a)", Sin),
        ("f64", "cos(a)", Cos),
        ("f64", "tan(a)", Tan),
        ("f64", "asin(a)", Asin),
        ("f64", "acos(a)", Acos),
        ("f64", "atan(a)", Atan),
        ("f64", "sinh(a)", Sinh),
        ("f64", "cosh(a)", Cosh),
        ("f64", "tanh(a)", Tanh),
        ("f64", "exp(a)", Exp),
        ("f64", "log(a)", Log),
        ("f64", "sqrt(a)", Sqrt),
        ("f64", "floor(a)", Floor),
        ("f64", "abs(a)", Fabs),
        ("i64", "abs(a)", Iabs),
        ("f64", "pow(a, a)", Pow),
        ("f64", "atan2(a, a)", Atan2),
        ("f64", "min(a, a)", Fmin),
        ("i64", "min(a, a)", Imin),
        ("f64", "max(a, a)", Fmax),
        ("i64", "max(a, a)", Imax),
    ];
    for &(ty, call, opcode) in table {
        let src = format!("fn t(a: {ty}) -> {ty} {{ {call} }}");
        assert_eq!(opcode_of(tail(&ok(&src), "t")), opcode, "{src}");
    }
}

#[test]
fn literals_are_constants() {
    let program = ok("fn t() -> f64 { 2.5 }\nfn u() -> i64 { 0xff }\nfn v() -> bool { true }");
    assert!(matches!(tail(&program, "t").kind, ExprKind::Const(Const::F64(x)) if x == 2.5));
    assert!(matches!(
        tail(&program, "u").kind,
        ExprKind::Const(Const::I64(255))
    ));
    assert!(matches!(
        tail(&program, "v").kind,
        ExprKind::Const(Const::Bool(true))
    ));
}

#[test]
fn identity_casts_are_removed() {
    let program = ok("fn t(a: f64) -> f64 { a as f64 }\nfn u(a: i64) -> i64 { (a as i64) + 1 }");
    let t = function(&program, "t");
    assert!(matches!(tail(&program, "t").kind, ExprKind::Local(l) if l == t.params[0]));
    let ExprKind::Prim { op, args } = &tail(&program, "u").kind else {
        panic!()
    };
    assert_eq!(*op, Opcode::Iadd);
    assert!(matches!(args[0].kind, ExprKind::Local(_)));
}

#[test]
fn tuple_destructuring() {
    let program = ok(r#"
fn pair(x: f64) -> (f64, i64, bool) { (x, 1, true) }
fn t(x: f64) -> i64 {
    let (a, _, mut c) = pair(x);
    c = !c;
    if c { 0 } else { 1 }
}
"#);
    let t = function(&program, "t");
    let StmtKind::Let { pattern, init } = &t.body.stmts[0].kind else {
        panic!()
    };
    let LetPattern::Tuple(locals) = pattern else {
        panic!("{pattern:?}")
    };
    assert_eq!(locals.len(), 3);
    assert!(locals[1].is_none());
    let (a, c) = (
        t.local(locals[0].expect("a")),
        t.local(locals[2].expect("c")),
    );
    assert_eq!((a.name.as_str(), a.ty, a.mutable), ("a", Type::F64, false));
    assert_eq!((c.name.as_str(), c.ty, c.mutable), ("c", Type::Bool, true));
    assert!(matches!(init.kind, ExprKind::Call { func, .. } if func == hir::FnIndex(0)));
    assert_eq!(init.ty, Ty::Tuple(vec![Type::F64, Type::I64, Type::Bool]));
    // With an annotation, and returned whole through `if` arms and `return`.
    ok(r#"
fn pair(x: f64) -> (f64, f64) { (x, x) }
fn swap(x: f64) -> (f64, f64) {
    let (a, b): (f64, f64) = pair(x);
    if a > 0.0 {
        return pair(b);
    }
    if b > 0.0 { (b, a) } else { pair(a) }
}
"#);
}

#[test]
fn shadowing_gives_distinct_locals() {
    let program = ok(r#"
fn t(a: f64) -> f64 {
    let a = a + 1.0;
    let a = a * 2.0;
    {
        let a = 3;
    }
    a
}
"#);
    let t = function(&program, "t");
    let let_local = |i: usize| match &t.body.stmts[i].kind {
        StmtKind::Let {
            pattern: LetPattern::Single(Some(l)),
            init,
        } => (*l, init),
        other => panic!("{other:?}"),
    };
    let (first, first_init) = let_local(0);
    let (second, second_init) = let_local(1);
    let param = t.params[0];
    assert_eq!(t.locals.len(), 4);
    assert!(param != first && first != second && param != second);
    // Each `let` reads the binding before it.
    let reads = |e: &hir::Expr| match &e.kind {
        ExprKind::Prim { args, .. } => match args[0].kind {
            ExprKind::Local(l) => l,
            _ => panic!(),
        },
        _ => panic!(),
    };
    assert_eq!(reads(first_init), param);
    assert_eq!(reads(second_init), first);
    // The inner block's `a` (an i64) is gone at the tail.
    assert!(matches!(tail(&program, "t").kind, ExprKind::Local(l) if l == second));
    assert_eq!(t.local(LocalId(3)).ty, Type::I64);
}

#[test]
fn compound_assignment_is_desugared() {
    let program = ok("fn t(x: i64) -> i64 {\n    let mut s = x;\n    s <<= 2;\n    s\n}");
    let t = function(&program, "t");
    let StmtKind::Assign { local, value } = &t.body.stmts[1].kind else {
        panic!()
    };
    let ExprKind::Prim { op, args } = &value.kind else {
        panic!("{value:?}")
    };
    assert_eq!(*op, Opcode::Ishl);
    assert!(matches!(args[0].kind, ExprKind::Local(l) if l == *local));
    assert!(matches!(args[1].kind, ExprKind::Const(Const::I64(2))));
    assert_eq!(value.ty, Ty::I64);
    assert!(t.local(*local).mutable);
    // Every compound operator, on f64 and bool.
    ok("fn t(x: f64) -> f64 { let mut s = x; s += 1.0; s -= 1.0; s *= 2.0; s /= 2.0; s %= 3.0; s }");
    ok("fn t(p: bool) -> bool { let mut s = p; s &= p; s |= p; s ^= p; s }");
    ok("fn t(x: i64) -> i64 { let mut s = x; s &= 1; s |= 2; s ^= 3; s >>= 1; s }");
}

#[test]
fn never_typing() {
    let program = ok(r#"
fn arms(x: f64) -> f64 {
    if x > 0.0 { return x; } else { fail("negative") }
}
fn one_arm(x: f64) -> f64 {
    let y = if x > 0.0 { x } else { fail("negative") };
    y
}
fn early(x: f64) -> f64 {
    if x > 0.0 {
        return x;
    }
    fail("no")
}
fn statements_only(x: f64) -> f64 {
    return x * 2.0;
}
fn in_operand(x: f64) -> f64 {
    let y = x + fail("never");
}
fn everywhere(x: f64) -> (f64, f64) {
    let z: f64 = fail("z");
    let (a, b): (f64, f64) = return (x, x);
    if x > 0.0 { fail("t") } else { fail("u") }
}
"#);
    let arms = tail(&program, "arms");
    assert_eq!(arms.ty, Ty::Never);
    let ExprKind::If { then, else_, .. } = &arms.kind else {
        panic!()
    };
    assert_eq!(then.ty, Ty::Never);
    assert_eq!(else_.as_ref().expect("else").ty, Ty::Never);
    let one_arm = function(&program, "one_arm");
    let StmtKind::Let { init, .. } = &one_arm.body.stmts[0].kind else {
        panic!()
    };
    assert_eq!(init.ty, Ty::F64);
    assert_eq!(tail(&program, "early").ty, Ty::Never);
    assert_eq!(function(&program, "statements_only").body.ty, Ty::Never);
    assert_eq!(function(&program, "in_operand").body.ty, Ty::Never);
    // A `Never` operand gets the operator of the other operand's type.
    let y = &function(&program, "in_operand").body.stmts[0];
    let StmtKind::Let { init, .. } = &y.kind else {
        panic!()
    };
    assert_eq!(opcode_of(init), Opcode::Fadd);
    assert_eq!(init.ty, Ty::F64);
    // `fail` fits any type, in any position.
    ok("fn f(x: i64) -> bool { let a: f64 = -fail(\"a\"); let b: i64 = fail(\"b\") as i64; sin(fail(\"c\")) > 1.0 }");
    // An `if` without `else` whose arm never completes has type `()`.
    let program = ok("fn f(x: f64) -> f64 {\n    if x > 0.0 { return x; }\n    x\n}");
    let StmtKind::Expr(e) = &function(&program, "f").body.stmts[0].kind else {
        panic!()
    };
    assert_eq!(e.ty, Ty::Unit);
    // A `while` body may never complete, but the loop does (it may run zero times): the body
    // has type `()`, blamed on its last statement.
    err(
        "fn f(x: f64) -> f64 {\n    while x > 0.0 {\n        return x;\n    }\n}",
        2,
        "expected `f64`, found `()`",
    );
}

#[test]
fn calls_resolve_in_any_order_and_recursively() {
    let program = ok(r#"
fn even(n: i64) -> bool { if n == 0 { true } else { odd(n - 1) } }
fn odd(n: i64) -> bool { if n == 0 { false } else { even(n - 1) } }
fn fact(n: i64) -> i64 { if n <= 1 { 1 } else { n * fact(n - 1) } }
fn f(x: f64) -> f64 { x }
inverse f(y: f64) -> f64 { f(y) }
"#);
    let call_in = |symbol: &str| {
        let ExprKind::If { else_, .. } = &tail(&program, symbol).kind else {
            panic!()
        };
        let tail = else_
            .as_ref()
            .and_then(|b| b.tail.as_deref())
            .expect("tail");
        match &tail.kind {
            ExprKind::Call { func, .. } => *func,
            ExprKind::Prim { args, .. } => match &args[1].kind {
                ExprKind::Call { func, .. } => *func,
                _ => panic!(),
            },
            _ => panic!(),
        }
    };
    assert_eq!(call_in("even"), hir::FnIndex(1));
    assert_eq!(call_in("odd"), hir::FnIndex(0));
    assert_eq!(call_in("fact"), hir::FnIndex(2));
    // In an inverse, `f` is the function, not the inverse.
    assert!(matches!(
        tail(&program, "inverse:f").kind,
        ExprKind::Call {
            func: hir::FnIndex(3),
            ..
        }
    ));
}

#[test]
fn else_if_chains_nest() {
    let program =
        ok("fn sign(x: i64) -> i64 {\n    if x > 0 { 1 } else if x < 0 { -1 } else { 0 }\n}");
    let e = tail(&program, "sign");
    assert_eq!(e.ty, Ty::I64);
    let ExprKind::If { else_, .. } = &e.kind else {
        panic!()
    };
    let else_ = else_.as_ref().expect("else");
    assert!(else_.stmts.is_empty());
    let inner = else_.tail.as_deref().expect("inner if");
    assert!(matches!(inner.kind, ExprKind::If { else_: Some(_), .. }));
    assert_eq!(else_.ty, Ty::I64);
}

#[test]
fn for_loop_variable() {
    let program =
        ok("fn f(n: i64) -> i64 {\n    let mut s = 0;\n    for i in 0..n { s += i; }\n    s\n}");
    let f = function(&program, "f");
    let StmtKind::For { var, .. } = &f.body.stmts[1].kind else {
        panic!()
    };
    let var = f.local(*var);
    assert_eq!(
        (var.name.as_str(), var.ty, var.mutable),
        ("i", Type::I64, false)
    );
}

#[test]
fn spans_are_copied() {
    let src = "fn f(x: f64) -> f64 {\n    x * 2.0\n}";
    let program = ok(src);
    let e = tail(&program, "f");
    assert_eq!(&src[e.span.range()], "x * 2.0");
    let f = function(&program, "f");
    assert_eq!(f.span, Span::new(0, src.len()));
    assert_eq!(&src[f.locals[0].span.range()], "x: f64");
}

// ---------------------------------------------------------------- hand-built ASTs

fn one_fn(params: Vec<ast::Param>, body: ast::Block) -> ast::Module {
    let span = Span::new(0, 1);
    ast::Module {
        items: vec![ast::Item {
            kind: ast::ItemKind::Fn,
            name: ast::Ident {
                name: "f".to_string(),
                span,
            },
            params,
            ret: ast::TypeExpr {
                kind: ast::TypeExprKind::Name("f64".to_string()),
                span,
            },
            body,
            span,
        }],
    }
}

#[test]
fn odd_asts_give_errors_not_panics() {
    let span = Span::new(0, 1);
    let ty = |kind| ast::TypeExpr { kind, span };
    let name = |n: &str| ty(ast::TypeExprKind::Name(n.to_string()));
    let expr = |kind| ast::Expr { kind, span };
    let block = |tail: Option<ast::Expr>| ast::Block {
        stmts: vec![],
        tail: tail.map(Box::new),
        span: Span::new(5, 5),
    };
    let ident = |n: &str| ast::Ident {
        name: n.to_string(),
        span,
    };
    let param = |te| ast::Param {
        name: ident("x"),
        ty: te,
        theta: false,
        span,
    };
    let pattern = |kind| ast::Pattern { kind, span };
    // `{ let pat = 1.0; }`
    let let_block = |kind| ast::Block {
        stmts: vec![ast::Stmt {
            kind: ast::StmtKind::Let {
                pat: pattern(kind),
                ty: None,
                init: expr(ast::ExprKind::Float(1.0)),
            },
            span,
        }],
        tail: None,
        span,
    };
    let cases = vec![
        // `()` and `(f64, ())` as parameter types.
        one_fn(
            vec![param(ty(ast::TypeExprKind::Tuple(vec![])))],
            block(None),
        ),
        one_fn(
            vec![param(ty(ast::TypeExprKind::Tuple(vec![
                name("f64"),
                ty(ast::TypeExprKind::Tuple(vec![])),
            ])))],
            block(None),
        ),
        // An empty block body (its span is empty).
        one_fn(vec![], block(None)),
        // Empty and one-element tuple expressions.
        one_fn(vec![], block(Some(expr(ast::ExprKind::Tuple(vec![]))))),
        // A `let ()` pattern, a nested tuple pattern.
        one_fn(vec![], let_block(ast::PatternKind::Tuple(vec![]))),
        one_fn(
            vec![],
            let_block(ast::PatternKind::Tuple(vec![
                pattern(ast::PatternKind::Wild),
                pattern(ast::PatternKind::Tuple(vec![])),
            ])),
        ),
        // `fail(x)` as an ordinary call; a compound `&&=`.
        one_fn(
            vec![],
            block(Some(expr(ast::ExprKind::Call {
                callee: ident("fail"),
                args: vec![],
            }))),
        ),
        one_fn(
            vec![param(name("bool"))],
            ast::Block {
                stmts: vec![ast::Stmt {
                    kind: ast::StmtKind::Assign {
                        target: ident("x"),
                        op: Some(ast::BinOp::And),
                        value: expr(ast::ExprKind::Bool(true)),
                    },
                    span,
                }],
                tail: None,
                span,
            },
        ),
        // An `else` that is neither a block nor an `if`.
        one_fn(
            vec![],
            block(Some(expr(ast::ExprKind::If {
                cond: Box::new(expr(ast::ExprKind::Bool(true))),
                then: block(Some(expr(ast::ExprKind::Float(1.0)))),
                else_: Some(Box::new(expr(ast::ExprKind::Float(2.0)))),
            }))),
        ),
    ];
    for (i, module) in cases.iter().enumerate() {
        // Errors or not, but never a panic.
        let result = check(module);
        if i != cases.len() - 1 {
            assert!(result.is_err(), "case {i}: {result:?}");
        } else {
            assert!(result.is_ok(), "case {i}: {result:?}");
        }
    }
}
