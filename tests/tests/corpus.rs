//! Every corpus program compiles, verifies, round-trips through the IR text form, and computes
//! hand-checked results in the interpreter; every bad program fails with the error it names.

use pinv_core::interp::Interpreter;
use pinv_core::ir::read::parse_module;
use pinv_core::ir::write::{write_module, WriteOptions};
use pinv_core::ir::{verify::verify_module, Const};
use pinv_core::span::SourceFile;
use pinv_tests::{compile_corpus, corpus_dir, expected_error, pinv_files};

#[test]
fn every_program_compiles_verifies_and_round_trips() {
    let files = pinv_files(&corpus_dir());
    assert!(files.len() >= 6, "corpus missing: {files:?}");
    for path in files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (_, compiled) = compile_corpus(name);
        let module = &compiled.module;
        verify_module(module).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(module.iter().count() > 0, "{name} has no functions");
        for opts in [WriteOptions { spans: false }, WriteOptions { spans: true }] {
            let text = write_module(module, &opts);
            let parsed = parse_module(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            verify_module(&parsed).unwrap_or_else(|e| panic!("{name} reparsed: {e}"));
            assert_eq!(
                write_module(&parsed, &opts),
                text,
                "{name}: text round trip"
            );
            if opts.spans {
                assert!(parsed == *module, "{name}: the reparsed module differs");
            }
        }
    }
}

/// One hand-computed case: file, function, inputs, expected outputs.
type Case = (
    &'static str,
    &'static str,
    &'static [Const],
    &'static [Const],
);

use Const::{Bool as B, F64 as F, I64 as I};

const CASES: &[Case] = &[
    // systems.pinv, bits.pinv, recursion.pinv: computed by hand (and checked in Python).
    (
        "systems.pinv",
        "scale_rotate",
        &[F(1.0), F(0.0), F(2.0), F(0.0)],
        &[F(2.0), F(0.0)],
    ),
    (
        "systems.pinv",
        "scale_rotate",
        &[F(1.0), F(2.0), F(1.0), F(std::f64::consts::FRAC_PI_2)],
        &[F(-2.0), F(1.0000000000000002)],
    ),
    (
        "systems.pinv",
        "mid_half",
        &[F(3.0), F(1.0)],
        &[F(2.0), F(1.0)],
    ),
    (
        "systems.pinv",
        "mid_half",
        &[F(-1.0), F(2.0)],
        &[F(0.5), F(-1.5)],
    ),
    (
        "systems.pinv",
        "mean_var2",
        &[F(3.0), F(1.0)],
        &[F(2.0), F(1.0)],
    ),
    (
        "systems.pinv",
        "mean_var2",
        &[F(0.0), F(4.0)],
        &[F(2.0), F(4.0)],
    ),
    ("systems.pinv", "softmax2", &[F(0.0), F(0.0)], &[F(0.5)]),
    (
        "systems.pinv",
        "softmax2",
        &[F(1.0), F(0.0)],
        &[F(0.7310585786300049)],
    ),
    ("systems.pinv", "log_ratio", &[F(1.0)], &[F(0.0)]),
    (
        "systems.pinv",
        "log_ratio",
        &[F(0.5)],
        &[F(-1.0986122886681098)],
    ),
    (
        "systems.pinv",
        "polar_noise",
        &[F(4.0), F(0.0)],
        &[F(2.0), F(0.0)],
    ),
    (
        "systems.pinv",
        "polar_noise",
        &[F(1.0), F(std::f64::consts::FRAC_PI_2)],
        &[F(6.123233995736766e-17), F(1.0)],
    ),
    ("systems.pinv", "spread", &[F(3.0), F(1.0)], &[F(2.0)]),
    ("systems.pinv", "spread", &[F(-2.0), F(0.5)], &[F(2.5)]),
    ("systems.pinv", "tri_wave", &[F(0.5)], &[F(0.5)]),
    ("systems.pinv", "tri_wave", &[F(1.5)], &[F(0.5)]),
    ("systems.pinv", "tri_wave", &[F(3.0)], &[F(1.0)]),
    ("systems.pinv", "bucket", &[I(37)], &[I(3)]),
    ("systems.pinv", "bucket", &[I(-37)], &[I(-3)]),
    ("systems.pinv", "split100", &[I(1234)], &[I(12), I(34)]),
    ("systems.pinv", "split100", &[I(-1234)], &[I(-12), I(-34)]),
    ("bits.pinv", "splitmix", &[I(1)], &[I(6238072747940578789)]),
    (
        "bits.pinv",
        "splitmix",
        &[I(-1)],
        &[I(-5417735806833148549)],
    ),
    ("bits.pinv", "rotl13", &[I(1)], &[I(8192)]),
    ("bits.pinv", "rotl13", &[I(12345)], &[I(101130240)]),
    ("bits.pinv", "xor_fold", &[I(1)], &[I(1)]),
    ("bits.pinv", "xor_fold", &[I(-1)], &[I(-4294967296)]),
    ("bits.pinv", "halves", &[I(1)], &[I(1), I(0)]),
    (
        "bits.pinv",
        "halves",
        &[I(-1)],
        &[I(4294967295), I(4294967295)],
    ),
    ("bits.pinv", "crc_byte", &[I(0), I(0x61)], &[I(984961486)]),
    ("bits.pinv", "crc_byte", &[I(-1), I(0x61)], &[I(390611388)]),
    ("bits.pinv", "mulxs", &[I(1)], &[I(2685821653807757719)]),
    ("bits.pinv", "mulxs", &[I(12345)], &[I(7669264287009288845)]),
    ("recursion.pinv", "fact", &[I(5)], &[I(120)]),
    ("recursion.pinv", "fact", &[I(0)], &[I(1)]),
    ("recursion.pinv", "power", &[F(2.0), I(10)], &[F(1024.0)]),
    ("recursion.pinv", "power", &[F(1.5), I(3)], &[F(3.375)]),
    ("recursion.pinv", "halve_until", &[F(10.0), I(3)], &[F(3.0)]),
    ("recursion.pinv", "halve_until", &[F(0.0), I(1)], &[F(1.0)]),
    ("recursion.pinv", "ping", &[I(3)], &[I(4)]),
    ("recursion.pinv", "ping", &[I(4)], &[I(6)]),
    ("recursion.pinv", "pong", &[I(3)], &[I(5)]),
    ("recursion.pinv", "pong", &[I(1)], &[I(2)]),
    ("recursion.pinv", "steps_to", &[F(0.5)], &[I(0)]),
    ("recursion.pinv", "steps_to", &[F(1.01)], &[I(9951)]),
    (
        "straight.pinv",
        "mul_add",
        &[F(2.0), F(3.0), F(4.0)],
        &[F(10.0)],
    ),
    (
        "straight.pinv",
        "mul_add",
        &[F(-1.5), F(2.0), F(0.5)],
        &[F(-2.5)],
    ),
    ("straight.pinv", "lin", &[F(1.0), F(1.0)], &[F(5.0)]),
    ("straight.pinv", "lin", &[F(0.5), F(-2.0)], &[F(-5.0)]),
    (
        "straight.pinv",
        "easy",
        &[F(1.0), F(2.0), F(3.0)],
        &[F(9.0)],
    ),
    (
        "straight.pinv",
        "easy",
        &[F(-1.0), F(0.5), F(4.0)],
        &[F(-2.0)],
    ),
    ("straight.pinv", "double", &[F(3.0)], &[F(6.0)]),
    ("straight.pinv", "double", &[F(-0.25)], &[F(-0.5)]),
    (
        "straight.pinv",
        "nested",
        &[F(1.0), F(2.0), F(0.5)],
        &[F(6.0)],
    ),
    (
        "straight.pinv",
        "nested",
        &[F(0.0), F(0.0), F(-1.0)],
        &[F(-6.0)],
    ),
    ("straight.pinv", "ratio", &[F(4.0)], &[F(2.5)]),
    ("straight.pinv", "ratio", &[F(0.0)], &[F(f64::INFINITY)]),
    (
        "straight.pinv",
        "shifted_exp",
        &[F(0.0), F(1.0)],
        &[F(1.0), F(3.718281828459045)],
    ),
    (
        "straight.pinv",
        "shifted_exp",
        &[F(-1.0), F(2.0)],
        &[F(0.0), F(3.0)],
    ),
    ("unary.pinv", "square", &[F(3.0)], &[F(9.0)]),
    ("unary.pinv", "square", &[F(-1.5)], &[F(2.25)]),
    ("unary.pinv", "wave", &[F(0.0)], &[F(0.0)]),
    (
        "unary.pinv",
        "wave",
        &[F(std::f64::consts::FRAC_PI_2)],
        &[F(1.0)],
    ),
    ("unary.pinv", "grow", &[F(0.5)], &[F(1.0)]),
    ("unary.pinv", "grow", &[F(0.0)], &[F(0.36787944117144233)]),
    ("unary.pinv", "root", &[F(4.0)], &[F(3.0)]),
    ("unary.pinv", "root", &[F(0.0)], &[F(1.0)]),
    ("unary.pinv", "magnitude", &[F(-2.0)], &[F(6.0)]),
    ("unary.pinv", "magnitude", &[F(0.5)], &[F(1.5)]),
    (
        "unary.pinv",
        "softplus",
        &[F(0.0)],
        &[F(std::f64::consts::LN_2)],
    ),
    (
        "unary.pinv",
        "softplus",
        &[F(1.0)],
        &[F(1.3132616875182228)],
    ),
    (
        "unary.pinv",
        "uses_softplus",
        &[F(0.0), F(2.0)],
        &[F(1.3862943611198906)],
    ),
    (
        "unary.pinv",
        "uses_softplus",
        &[F(1.0), F(-1.0)],
        &[F(-1.3132616875182228)],
    ),
    (
        "unary.pinv",
        "inverse:softplus",
        &[F(std::f64::consts::LN_2)],
        &[F(0.0)],
    ),
    ("fanout.pinv", "twice", &[F(1.5)], &[F(3.0)]),
    ("fanout.pinv", "twice", &[F(-2.0)], &[F(-4.0)]),
    ("fanout.pinv", "fdupl", &[F(2.0), F(4.0)], &[F(2.5)]),
    ("fanout.pinv", "fdupl", &[F(3.0), F(-1.0)], &[F(0.0)]),
    ("fanout.pinv", "xy_plus_x", &[F(2.0), F(3.0)], &[F(8.0)]),
    ("fanout.pinv", "xy_plus_x", &[F(-1.0), F(0.5)], &[F(-1.5)]),
    ("fanout.pinv", "reuse", &[F(1.0), F(2.0)], &[F(21.0)]),
    ("fanout.pinv", "reuse", &[F(2.0), F(1.0)], &[F(18.0)]),
    ("fanout.pinv", "quad", &[F(2.0)], &[F(10.0)]),
    ("fanout.pinv", "quad", &[F(-3.0)], &[F(0.0)]),
    ("ints.pinv", "add5", &[I(3)], &[I(8)]),
    (
        "ints.pinv",
        "add5",
        &[I(i64::MAX)],
        &[I(-9223372036854775804)],
    ),
    ("ints.pinv", "mod17", &[I(40)], &[I(6)]),
    ("ints.pinv", "mod17", &[I(-40)], &[I(-6)]),
    ("ints.pinv", "odd_mul", &[I(5)], &[I(15)]),
    (
        "ints.pinv",
        "odd_mul",
        &[I(i64::MAX)],
        &[I(9223372036854775805)],
    ),
    ("ints.pinv", "mix", &[I(3), I(5)], &[I(27)]),
    ("ints.pinv", "mix", &[I(-1), I(0)], &[I(-8)]),
    ("ints.pinv", "halve", &[I(7)], &[I(3)]),
    ("ints.pinv", "halve", &[I(-7)], &[I(-3)]),
    (
        "ints.pinv",
        "sat",
        &[B(false), B(true), B(true), B(false), B(false), B(false)],
        &[B(false)],
    ),
    (
        "ints.pinv",
        "sat",
        &[B(true), B(true), B(true), B(true), B(false), B(false)],
        &[B(false)],
    ),
    (
        "ints.pinv",
        "sat",
        &[B(false), B(false), B(true), B(true), B(false), B(true)],
        &[B(true)],
    ),
    ("branches.pinv", "f2", &[F(1.0), F(1.0), F(2.0)], &[F(7.5)]),
    (
        "branches.pinv",
        "f2",
        &[F(-2.0), F(0.0), F(1.0)],
        &[F(-1.0)],
    ),
    ("branches.pinv", "mid", &[F(150.0)], &[F(150.0)]),
    ("branches.pinv", "mid", &[F(3.0)], &[F(9.0)]),
    ("branches.pinv", "complex", &[F(200.0)], &[F(40000.0)]),
    ("branches.pinv", "complex", &[F(2.0)], &[F(6.0)]),
    ("branches.pinv", "relu", &[F(-1.0)], &[F(0.0)]),
    ("branches.pinv", "relu", &[F(2.5)], &[F(2.5)]),
    ("branches.pinv", "sign", &[I(5)], &[I(1)]),
    ("branches.pinv", "sign", &[I(-3)], &[I(-1)]),
    ("branches.pinv", "sign", &[I(0)], &[I(0)]),
    ("loops.pinv", "while1", &[F(1.0), F(2.0)], &[F(11.0)]),
    ("loops.pinv", "while1", &[F(0.0), F(0.1)], &[F(0.5)]),
    ("loops.pinv", "while2", &[F(1.5), I(3)], &[F(12.0)]),
    ("loops.pinv", "while2", &[F(1.0), I(-2)], &[F(1.0)]),
    ("loops.pinv", "triangle", &[I(4)], &[I(10)]),
    ("loops.pinv", "triangle", &[I(-3)], &[I(0)]),
    (
        "loops.pinv",
        "arm3",
        &[F(0.0), F(0.0), F(0.0)],
        &[F(3.5), F(0.0)],
    ),
    (
        "loops.pinv",
        "arm3",
        &[F(1.0), F(0.5), F(-0.25)],
        &[F(0.8394378904011799), F(3.3109532676937983)],
    ),
];

fn close(a: Const, b: Const) -> bool {
    match (a, b) {
        // Transcendental results may differ from the hand computation in the last bit.
        (Const::F64(x), Const::F64(y)) => {
            x.to_bits() == y.to_bits() || (x - y).abs() <= 1e-15 * y.abs().max(1.0)
        }
        _ => a == b,
    }
}

#[test]
fn hand_computed_results() {
    for &(file, func, inputs, expected) in CASES {
        let (_, compiled) = compile_corpus(file);
        let module = &compiled.module;
        let id = module
            .get(func)
            .unwrap_or_else(|| panic!("{file}: no function {func}"));
        let got = Interpreter::new(module)
            .call(id, inputs)
            .unwrap_or_else(|e| panic!("{file}:{func}{inputs:?}: {e}"));
        assert_eq!(got.len(), expected.len(), "{func}{inputs:?}");
        for (g, e) in got.iter().zip(expected) {
            assert!(
                close(*g, *e),
                "{file}: {func}{inputs:?} = {got:?}, expected {expected:?}"
            );
        }
    }
}

#[test]
fn every_corpus_function_has_two_cases() {
    for path in pinv_files(&corpus_dir()) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (_, compiled) = compile_corpus(name);
        for (_, f) in compiled.module.iter() {
            if f.name.contains(':') {
                continue;
            }
            let n = CASES
                .iter()
                .filter(|c| c.0 == name && c.1 == f.name)
                .count();
            assert!(n >= 2, "{name}: `{}` has {n} hand-computed case(s)", f.name);
        }
    }
}

#[test]
fn runtime_errors_are_values() {
    let (file, compiled) = compile_corpus("unary.pinv");
    let module = &compiled.module;
    let id = module.get("inverse:softplus").expect("declared inverse");
    let err = Interpreter::new(module)
        .call(id, &[F(-1.0)])
        .expect_err("softplus is positive");
    let rendered = pinv_core::diagnostic::render(&file, &err);
    assert!(rendered.contains("softplus is positive"), "{rendered}");
    assert!(rendered.contains("unary.pinv:26:"), "{rendered}");
}

#[test]
fn every_bad_program_fails_with_its_error() {
    let dir = corpus_dir().join("bad");
    let files = pinv_files(&dir);
    assert!(files.len() >= 5);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let name = path.display().to_string();
        let expected = expected_error(&text).unwrap_or_else(|| panic!("{name}: no header"));
        let file = SourceFile::new(name.clone(), text.clone());
        let err = match pinv_core::compile_source(&file) {
            Err(pinv_core::Error::Compile(e)) => e,
            other => panic!("{name}: expected a compile error, got {other:?}"),
        };
        let message = err.to_string();
        assert!(
            message.contains(&expected.fragment),
            "{name}: `{message}` does not contain `{}`",
            expected.fragment
        );
        let line = file.line_col(err.span().start).line;
        let want = expected.line.unwrap_or_else(|| text.lines().count().max(1));
        match expected.line {
            Some(_) => assert_eq!(line, want, "{name}: error on line {line}"),
            // At end of file: on the last line, or just past it.
            None => assert!(line >= want, "{name}: eof error on line {line}"),
        }
        let rendered = pinv_core::diagnostic::render(&file, &err);
        assert!(rendered.contains(&format!(":{line}:")), "{rendered}");
        assert!(rendered.contains('^'), "no caret: {rendered}");
    }
}
