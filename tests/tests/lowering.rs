//! Control flow, mutation and calls, end to end: programs with loops, early returns, nested
//! branches, short-circuits, shadowing, compound assignment and recursion run in the interpreter
//! and agree with the same functions written in Rust, over a range of inputs.

use pinv_core::interp::{InterpConfig, Interpreter};
use pinv_core::ir::Const;
use pinv_core::SourceFile;

const PROGRAM: &str = r#"
fn collatz(n: i64) -> i64 {
    let mut steps = 0;
    let mut x = n;
    while x > 1 {
        if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
        steps += 1;
    }
    steps
}

fn early(x: i64) -> i64 {
    for i in 0..100 {
        if i * i > x {
            return i;
        }
    }
    -1
}

fn nested(n: i64) -> i64 {
    let mut s = 0;
    for i in 0..n {
        for j in 0..i {
            if (i + j) % 3 == 0 { s += i * j; } else if j > 5 { s -= 1; }
        }
    }
    s
}

fn fib(n: i64) -> i64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

fn even(n: i64) -> bool { if n == 0 { true } else { odd(n - 1) } }
fn odd(n: i64) -> bool { if n == 0 { false } else { even(n - 1) } }

fn parity(n: i64) -> i64 { if even(abs(n)) { 0 } else { 1 } }

fn shadow(x: i64) -> i64 {
    let a = x;
    let a = a * 2;
    {
        let a = a + 1000;
        let _unused = a;
    }
    let mut b = a;
    if b > 10 {
        let b = 0;
        let _ignored = b;
    } else {
        b = b + 1;
    }
    a + b
}

fn fib_pair(n: i64) -> (i64, i64) {
    let mut a = 0;
    let mut b = 1;
    for _i in 0..n {
        let t = a;
        a = b;
        b = t + b;
    }
    (a, b)
}

fn fib_loop(n: i64) -> i64 {
    let (a, _) = fib_pair(n);
    a
}

fn short_circuit(x: i64) -> i64 {
    if x != 0 && 100 / x > 2 || x == 0 { 1 } else { 0 }
}

fn compound(x: i64) -> i64 {
    let mut y = x;
    y += 3; y -= 1; y *= 5; y /= 2; y %= 7; y <<= 2; y >>= 1;
    y &= 0xff; y |= 1; y ^= 0x10;
    y
}

fn alternating(n: i64) -> i64 {
    let mut acc = 0;
    let mut i = 0;
    while i < n {
        acc = acc + if i % 2 == 0 { 3 } else { -1 };
        i += 1;
    }
    acc
}

fn first_break(n: i64) -> i64 {
    let mut i = 0;
    let mut found = -1;
    while i < n && found < 0 {
        if i * 7 % 11 == 5 { found = i; }
        i += 1;
    }
    found
}

fn guarded(x: i64) -> i64 {
    if x < 0 {
        return fail("negative input");
    }
    x + 1
}
"#;

fn collatz(n: i64) -> i64 {
    let (mut steps, mut x) = (0, n);
    while x > 1 {
        x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
        steps += 1;
    }
    steps
}

fn early(x: i64) -> i64 {
    (0..100).find(|i| i * i > x).unwrap_or(-1)
}

fn nested(n: i64) -> i64 {
    let mut s = 0;
    for i in 0..n {
        for j in 0..i {
            if (i + j) % 3 == 0 {
                s += i * j;
            } else if j > 5 {
                s -= 1;
            }
        }
    }
    s
}

fn fib(n: i64) -> i64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn shadow(x: i64) -> i64 {
    let a = x * 2;
    let b = if a > 10 { a } else { a + 1 };
    a + b
}

fn short_circuit(x: i64) -> i64 {
    #[allow(clippy::nonminimal_bool)] // mirrors the .pinv source
    let r = x != 0 && 100 / x > 2 || x == 0;
    i64::from(r)
}

fn compound(x: i64) -> i64 {
    let mut y = x;
    y += 3;
    y -= 1;
    y *= 5;
    y /= 2;
    y %= 7;
    y <<= 2;
    y >>= 1;
    y &= 0xff;
    y |= 1;
    y ^= 0x10;
    y
}

fn alternating(n: i64) -> i64 {
    (0..n.max(0)).map(|i| if i % 2 == 0 { 3 } else { -1 }).sum()
}

fn first_break(n: i64) -> i64 {
    (0..n.max(0)).find(|i| i * 7 % 11 == 5).unwrap_or(-1)
}

#[test]
fn control_flow_agrees_with_rust() {
    let file = SourceFile::new("control.pinv", PROGRAM);
    let compiled = match pinv_core::compile_source(&file) {
        Ok(c) => c,
        Err(pinv_core::Error::Compile(e)) => panic!("{}", pinv_core::diagnostic::render(&file, &e)),
        Err(e) => panic!("{e}"),
    };
    let module = &compiled.module;
    let interp =
        Interpreter::new(module).with_config(InterpConfig::default().with_step_limit(10_000_000));
    let run = |name: &str, x: i64| -> Vec<Const> {
        let id = module.get(name).unwrap_or_else(|| panic!("no {name}"));
        interp
            .call(id, &[Const::I64(x)])
            .unwrap_or_else(|e| panic!("{name}({x}): {e}"))
    };
    let one = |name: &str, x: i64| run(name, x)[0];
    type Reference = fn(i64) -> i64;
    let cases: &[(&str, Reference)] = &[
        ("collatz", collatz),
        ("early", early),
        ("nested", nested),
        ("shadow", shadow),
        ("short_circuit", short_circuit),
        ("compound", compound),
        ("alternating", alternating),
        ("first_break", first_break),
    ];
    for x in -20..=40 {
        for &(name, reference) in cases {
            assert_eq!(one(name, x), Const::I64(reference(x)), "{name}({x})");
        }
        if (0..=20).contains(&x) {
            assert_eq!(one("fib", x), Const::I64(fib(x)), "fib({x})");
            assert_eq!(one("fib_loop", x), Const::I64(fib(x)), "fib_loop({x})");
            assert_eq!(
                run("fib_pair", x),
                [Const::I64(fib(x)), Const::I64(fib(x + 1))],
                "fib_pair({x})"
            );
        }
        assert_eq!(one("parity", x), Const::I64(x.rem_euclid(2)), "parity({x})");
        assert_eq!(one("even", x.abs()), Const::Bool(x % 2 == 0), "even({x})");
    }
    let id = module.get("guarded").expect("guarded");
    assert_eq!(interp.call(id, &[Const::I64(4)]), Ok(vec![Const::I64(5)]));
    let err = interp.call(id, &[Const::I64(-4)]).expect_err("fails");
    assert!(err.to_string().contains("negative input"), "{err}");
}
