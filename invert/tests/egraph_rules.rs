//! Every rule family preserves the value of random expressions (within rounding; exactly for
//! i64): run the family on a random expression, draw random terms from the root's e-class (every
//! one of them is "equal" by the rules), and evaluate them against the original at random
//! points. Each family's rules must also fire on its generator's expressions.
//!
//! The tolerance is relative to the size of the computation, not only to the result: `a·(b+c)`
//! and `a·b + a·c` may differ by a few ulps of `|a|·(|b| + |c|)` even where the result is 0.

use egg::{Extractor, Id, Language, RecExpr, Runner, Symbol};
use pinv::egraph::analysis::{IsoAnalysis, VarInfo, VarKind};
use pinv::egraph::convert::eval_nodes;
use pinv::egraph::cost::IsoCost;
use pinv::egraph::lang::Node;
use pinv::egraph::rules::Family;
use pinv_core::ir::{Const, Module, Opcode, Type};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;

const EXPRESSIONS: usize = 60;
const TERMS: usize = 12;
const POINTS: usize = 16;

fn analysis(ty: Type, names: &[&str]) -> IsoAnalysis {
    let mut a = IsoAnalysis::default();
    for (i, n) in names.iter().enumerate() {
        a.vars.insert(
            Symbol::from(*n),
            VarInfo {
                ty,
                kind: VarKind::Unknown {
                    bit: i as u32,
                    weight: 1,
                },
            },
        );
    }
    a
}

/// A term drawn from class `c`: a random node, recursively; below `depth` 0 the smallest term.
fn random_term(
    eg: &egg::EGraph<Node, IsoAnalysis>,
    ext: &Extractor<IsoCost<'_>, Node, IsoAnalysis>,
    c: Id,
    depth: usize,
    rng: &mut Xoshiro256PlusPlus,
    out: &mut RecExpr<Node>,
) -> Id {
    let c = eg.find(c);
    let node = if depth == 0 {
        ext.find_best_node(c).clone()
    } else {
        let nodes = &eg[c].nodes;
        nodes[rng.random_range(0..nodes.len())].clone()
    };
    let node = node.map_children(|k| random_term(eg, ext, k, depth.saturating_sub(1), rng, out));
    out.add(node)
}

/// The magnitude of a computation: the value with every operand taken absolutely.
fn magnitude(expr: &[Node], env: &HashMap<Symbol, Const>) -> f64 {
    let mut m: Vec<f64> = Vec::with_capacity(expr.len());
    for node in expr {
        let a = |i: usize| m[usize::from(node.children()[i])];
        let v = match node {
            Node::Num(n) => n.0.as_f64().unwrap_or(0.0).abs(),
            Node::Var(s) => env[s].as_f64().unwrap_or(0.0).abs(),
            Node::Sq(_) => a(0) * a(0),
            Node::Odds(_) => a(0) / (a(1) - a(0)).abs().max(1e-300),
            Node::Op(op, _) => match op {
                Opcode::Fadd | Opcode::Fsub => a(0) + a(1),
                Opcode::Fmul => a(0) * a(1),
                Opcode::Fdiv => a(0) / a(1).max(1e-300),
                Opcode::Fneg => a(0),
                Opcode::Exp => a(0).exp(),
                Opcode::Pow => a(0).powf(a(1)),
                Opcode::Log => a(0).ln().abs() + 1.0,
                _ => a(0),
            },
            Node::Call { .. } => 0.0,
        };
        m.push(v);
    }
    m.last().copied().unwrap_or(0.0)
}

fn close(a: Const, b: Const, mag: f64) -> bool {
    match (a, b) {
        (Const::F64(x), Const::F64(y)) => {
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0).max(mag)
        }
        _ => a == b,
    }
}

/// Runs `families` on expressions from `generate`; checks random equal terms.
fn check(families: &[Family], ty: Type, generate: &dyn Fn(&mut Xoshiro256PlusPlus) -> String) {
    let names = ["x", "y", "z"];
    let rules = pinv::egraph::rules::rules(families);
    let module = Module::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(families.len() as u64 * 7 + 1);
    let mut applied: HashMap<String, usize> = HashMap::new();
    for _ in 0..EXPRESSIONS {
        let text = generate(&mut rng);
        let expr: RecExpr<Node> = text.parse().unwrap_or_else(|e| panic!("{text}: {e:?}"));
        let runner: Runner<Node, IsoAnalysis> = Runner::new(analysis(ty, &names))
            .with_expr(&expr)
            .with_iter_limit(6)
            .with_node_limit(3_000)
            .run(&rules);
        for it in &runner.iterations {
            for (rule, n) in &it.applied {
                *applied.entry(rule.to_string()).or_default() += n;
            }
        }
        assert_eq!(
            runner.egraph.analysis.conflicts, 0,
            "{text}: constants merged"
        );
        let eg = &runner.egraph;
        let vars = eg.analysis.vars.clone();
        let extractor = Extractor::new(
            eg,
            IsoCost {
                vars: &vars,
                zeros: None,
            },
        );
        let root = runner.roots[0];
        for _ in 0..TERMS {
            let mut term = RecExpr::default();
            random_term(eg, &extractor, root, 6, &mut rng, &mut term);
            for _ in 0..POINTS {
                let env: HashMap<Symbol, Const> = names
                    .iter()
                    .map(|&n| {
                        let c = match ty {
                            Type::F64 => Const::F64(rng.random_range(-4.0..4.0)),
                            _ => Const::I64(
                                rng.random_range(i64::MIN..=i64::MAX) >> rng.random_range(0..60),
                            ),
                        };
                        (Symbol::from(n), c)
                    })
                    .collect();
                let original = *eval_nodes(expr.as_ref(), &env, &module, &Default::default())
                    .last()
                    .unwrap();
                let Some(original) = original else { continue };
                if matches!(original, Const::F64(v) if !v.is_finite()) {
                    continue;
                }
                let rewritten = eval_nodes(term.as_ref(), &env, &module, &Default::default())
                    .last()
                    .copied()
                    .flatten();
                let mag = magnitude(expr.as_ref(), &env).max(magnitude(term.as_ref(), &env));
                assert!(
                    rewritten.is_some_and(|r| close(original, r, mag)),
                    "{families:?}: {text} = {original} but the equal term {term} = {rewritten:?} at {env:?}"
                );
            }
        }
    }
    let fired: usize = applied.values().sum();
    assert!(fired > 0, "{families:?}: no rule fired");
    eprintln!("{families:?}: {applied:?}");
}

/// A random f64 term over x, y, z with the given operations.
fn term(rng: &mut Xoshiro256PlusPlus, depth: usize, ops: &[&str]) -> String {
    if depth == 0 || rng.random_bool(0.25) {
        return match rng.random_range(0..5u32) {
            0 => format!("{:?}", f64::from(rng.random_range(-3..=3i32))),
            1 => "x".into(),
            2 => "y".into(),
            3 => "z".into(),
            _ => "x".into(),
        };
    }
    let op = ops[rng.random_range(0..ops.len())];
    match op {
        "fneg" | "sq" | "exp" | "log" => format!("({op} {})", term(rng, depth - 1, ops)),
        _ => format!(
            "({op} {} {})",
            term(rng, depth - 1, ops),
            term(rng, depth - 1, ops)
        ),
    }
}

const ARITH: &[&str] = &["fadd", "fsub", "fmul", "fdiv", "fneg", "sq"];

#[test]
fn commutativity() {
    check(&[Family::Comm], Type::F64, &|r| term(r, 4, ARITH));
}

#[test]
fn associativity() {
    check(&[Family::Assoc, Family::Comm], Type::F64, &|r| {
        term(r, 4, ARITH)
    });
}

#[test]
fn canonical_forms() {
    check(&[Family::Canon], Type::F64, &|r| term(r, 4, ARITH));
}

#[test]
fn distribution_and_factoring() {
    check(&[Family::Distribute, Family::Comm], Type::F64, &|r| {
        term(r, 4, &["fadd", "fmul", "fsub"])
    });
}

/// Ratios of affine terms with a known denominator part: `a / (c − a)` and `a / (a + c)` become
/// `odds` calls (bit for bit the same value), `k·a / (c + m·a)` a constant times one (within
/// rounding), Möbius maps a constant plus a ratio.
#[test]
fn ratios() {
    check(&[Family::Distribute, Family::Comm], Type::F64, &|r| {
        let c = [-2.0, 0.5, 1.0, 3.0, 1e-3][r.random_range(0..5usize)];
        let a = term(r, 2, &["fadd", "fmul", "fsub", "exp"]);
        let b = term(r, 1, &["fadd", "fmul"]);
        let m = [-0.7, 0.2, 3.0][r.random_range(0..3usize)];
        match r.random_range(0..4u32) {
            0 => format!("(fdiv {a} (fsub {c:?} {a}))"),
            1 => format!("(fdiv {a} (fadd {a} {c:?}))"),
            2 => format!("(fdiv (fmul {a} 0.9) (fadd {c:?} (fmul {a} {m:?})))"),
            _ => format!("(fdiv (fadd {a} {b}) (fadd {a} {c:?}))"),
        }
    });
}

#[test]
fn squares() {
    check(&[Family::Square], Type::F64, &|r| term(r, 4, ARITH));
}

#[test]
fn completing_the_square() {
    check(&[Family::Csq], Type::F64, &|r| {
        let a = [-2.0, -0.5, 0.25, 1.0, 3.0][r.random_range(0..5usize)];
        let b = [-4.0, -1.0, 0.1, 2.0, 3.0][r.random_range(0..5usize)];
        let c = f64::from(r.random_range(-5..=5i32));
        let t = term(r, 2, &["fadd", "fmul", "fsub"]);
        match r.random_range(0..4u32) {
            0 => format!("(fadd (fadd (fmul {a:?} (sq {t})) (fmul {b:?} {t})) {c:?})"),
            1 => format!("(fadd (sq {t}) (fmul {b:?} {t}))"),
            2 => format!("(fadd (fmul {a:?} (sq {t})) {t})"),
            _ => format!("(fadd (sq {t}) {t})"),
        }
    });
}

#[test]
fn powers() {
    check(&[Family::Power, Family::Comm], Type::F64, &|r| {
        let t = term(r, 2, &["fadd", "fmul"]);
        let p = r.random_range(1..=4i32);
        let q = r.random_range(1..=3i32);
        match r.random_range(0..5u32) {
            0 => format!("(fmul {t} (sq {t}))"),
            1 => format!("(fmul {t} (pow {t} {:?}))", f64::from(p)),
            2 => format!(
                "(fmul (pow {t} {:?}) (pow {t} {:?}))",
                f64::from(p),
                f64::from(q)
            ),
            3 => format!("(pow {t} 1.0)"),
            _ => format!("(fadd (pow {t} 2.0) {t})"),
        }
    });
}

#[test]
fn exp_and_log() {
    check(&[Family::ExpLog, Family::Comm], Type::F64, &|r| {
        let a = term(r, 2, &["fadd", "fmul", "fsub"]);
        let b = term(r, 2, &["fadd", "fsub"]);
        match r.random_range(0..6u32) {
            0 => format!("(fmul (exp {a}) (exp {b}))"),
            1 => format!("(exp (fadd {a} {b}))"),
            2 => format!("(log (fmul (exp {a}) (fadd (sq {b}) 1.0)))"),
            3 => format!("(fadd (log (exp {a})) (log (exp {b})))"),
            4 => format!("(exp (log (exp {a})))"),
            _ => format!("(log (pow (exp {a}) 3.0))"),
        }
    });
}

#[test]
fn integers_exactly() {
    check(&[Family::Int], Type::I64, &|r| {
        fn t(r: &mut Xoshiro256PlusPlus, d: usize) -> String {
            if d == 0 || r.random_bool(0.25) {
                return match r.random_range(0..4u32) {
                    0 => format!("{}", r.random_range(-3..=3i64)),
                    1 => "x".into(),
                    2 => "y".into(),
                    _ => "z".into(),
                };
            }
            let ops = ["iadd", "isub", "imul", "ineg"];
            match ops[r.random_range(0..4usize)] {
                "ineg" => format!("(ineg {})", t(r, d - 1)),
                op => format!("({op} {} {})", t(r, d - 1), t(r, d - 1)),
            }
        }
        t(r, 4)
    });
}

#[test]
fn exact_simplifications_are_bit_exact() {
    // The simplifier's rules must not change a single bit, NaN and signed zeros included.
    let rules = pinv::egraph::rules::exact_simplifications();
    let module = Module::new();
    // `text` of one unknown `x` of type `ty`, and the cheapest term the rules find for it.
    let simplest = |text: &str, ty: Type| -> (RecExpr<Node>, RecExpr<Node>) {
        let expr: RecExpr<Node> = text.parse().unwrap();
        let runner: Runner<Node, IsoAnalysis> = Runner::new(analysis(ty, &["x"]))
            .with_expr(&expr)
            .run(&rules);
        let vars = runner.egraph.analysis.vars.clone();
        let best = Extractor::new(
            &runner.egraph,
            IsoCost {
                vars: &vars,
                zeros: None,
            },
        )
        .find_best(runner.roots[0])
        .1;
        (expr, best)
    };
    let at = |e: &RecExpr<Node>, x: Const| -> Option<Const> {
        let env = HashMap::from([(Symbol::from("x"), x)]);
        eval_nodes(e.as_ref(), &env, &module, &Default::default())
            .last()
            .copied()
            .flatten()
    };
    let cases = [
        "(fmul x 1.0)",
        "(fdiv x 1.0)",
        "(fsub x 0.0)",
        "(fadd x -0.0)",
        "(fneg (fneg x))",
        "(bor (feq x x) (fne x x))",
    ];
    let specials = [
        0.0,
        -0.0,
        1.5,
        -2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-310,
    ];
    for text in cases {
        let (expr, best) = simplest(text, Type::F64);
        assert!(best.as_ref().len() <= 1, "{text} simplifies to {best}");
        for x in specials {
            assert_eq!(
                at(&expr, Const::F64(x)),
                at(&best, Const::F64(x)),
                "{text} at {x}"
            );
        }
    }
    // Identities: each simplifies to `x`, and is `x` at every value tried.
    let bools = [false, true].map(Const::Bool);
    let ints = [i64::MIN, -1, 0, 7, i64::MAX].map(Const::I64);
    let identities: [(Type, &[&str], &[Const]); 2] = [
        (
            Type::Bool,
            &[
                "(beq x true)",
                "(beq true x)",
                "(bne x false)",
                "(bne false x)",
            ],
            &bools,
        ),
        // The ends of i64 under min and max.
        (
            Type::I64,
            &[
                "(imin x 9223372036854775807)",
                "(imin 9223372036854775807 x)",
                "(imax x -9223372036854775808)",
                "(imax -9223372036854775808 x)",
            ],
            &ints,
        ),
    ];
    for (ty, texts, xs) in identities {
        for text in texts {
            let (expr, best) = simplest(text, ty);
            assert_eq!(best.to_string(), "x", "{text}");
            for &x in xs {
                assert_eq!(at(&expr, x), Some(x), "{text} at {x:?}");
            }
        }
    }
    // Comparisons with the ends of i64 that every i64 answers the same way: each simplifies to
    // its constant, and is that constant at every value tried.
    let constant = [
        ("(igt x 9223372036854775807)", false),
        ("(ilt 9223372036854775807 x)", false),
        ("(ilt x -9223372036854775808)", false),
        ("(igt -9223372036854775808 x)", false),
        ("(ile x 9223372036854775807)", true),
        ("(ige 9223372036854775807 x)", true),
        ("(ige x -9223372036854775808)", true),
        ("(ile -9223372036854775808 x)", true),
    ];
    for (text, answer) in constant {
        let (expr, best) = simplest(text, Type::I64);
        assert_eq!(best.to_string(), answer.to_string(), "{text}");
        for &x in &ints {
            assert_eq!(at(&expr, x), Some(Const::Bool(answer)), "{text} at {x:?}");
        }
    }
}
