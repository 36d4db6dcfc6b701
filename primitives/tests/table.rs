//! The overlay table itself: coverage of every opcode and pattern, layers and stacks, a module's
//! declarations as a layer, and outputs that have no preimage.

use pinv_core::interp::{Interpreter, RuntimeError, RuntimeErrorKind, TapeRecorder, TapeSource};
use pinv_core::ir::{Const, Domain, FuncKind, Function, Module, Opcode, Signature, Type, Value};
use pinv_core::Span;
use pinv_primitives::catalogue::{catalogue, missing, render};
use pinv_primitives::declared::declared_layer;
use pinv_primitives::rules::spec::Spec;
use pinv_primitives::testing::{Case, RandomTheta, Trial};
use pinv_primitives::{
    Arg, Callee, Emitter, InverseRule, Layer, Mode, Pattern, RuleDoc, RuleError, Stack, ThetaDoc,
};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Coverage

#[test]
fn every_opcode_and_pattern_has_a_rule() {
    let entries = catalogue(&Stack::standard());
    assert_eq!(missing(&entries), Vec::<(String, String)>::new());
    assert_eq!(entries.len(), Opcode::ALL.len());
    for (entry, &op) in entries.iter().zip(Opcode::ALL) {
        assert_eq!(entry.patterns.len(), 1 << op.arity(), "{op}");
        for p in &entry.patterns {
            let rule = p.rule.as_deref().unwrap_or("");
            // The all-known pattern is the consistency check; every other pattern has a real rule.
            let all_known = !p.pattern.contains('?');
            assert_eq!(
                rule == "consistency",
                all_known,
                "{op} {}: {rule}",
                p.pattern
            );
            assert_eq!(p.layer.as_deref(), Some("standard"));
        }
    }
}

#[test]
fn the_catalogue_renders_every_opcode() {
    let text = render(&catalogue(&Stack::standard()));
    for op in Opcode::ALL {
        assert!(
            text.contains(&format!("{op} (")),
            "{op} missing from\n{text}"
        );
    }
    assert!(!text.contains("(no rule)"));
    // A taste of the content: sin's θ is a branch choice and whole periods.
    assert!(text.contains("whole periods"), "{text}");
}

#[test]
fn a_layer_without_an_opcode_is_missing_it() {
    // A stack whose only rules are a user layer's would miss everything else: `missing` sees it.
    let entries = catalogue(&Stack::standard());
    let mut fake = entries.clone();
    fake[0].patterns[0].rule = None;
    assert_eq!(missing(&fake).len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Layers

/// A rule that covers only `(?, k)` and returns the known operand for the unknown one.
#[derive(Debug)]
struct Copy;

impl InverseRule for Copy {
    fn name(&self) -> &str {
        "copy"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern
            == &Pattern(vec![
                pinv_primitives::Knowledge::Unknown,
                pinv_primitives::Knowledge::Known,
            ])
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: vec![ThetaDoc::value(Domain::Real, "nothing")],
            checks: Vec::new(),
            exact: false,
            summary: "a = b".into(),
        }
    }

    fn emit_inverse(
        &self,
        _: &mut Emitter<'_>,
        _: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        match args {
            [Arg::Unknown, Arg::Known(b)] => Ok(vec![*b, *b]),
            _ => Err(RuleError::Uncovered(Pattern::of(args))),
        }
    }

    fn emit_pgf(
        &self,
        _: &mut Emitter<'_>,
        _: &[Value],
        _: &[Value],
        _: &Pattern,
    ) -> Result<(), RuleError> {
        Ok(())
    }
}

fn uk() -> Pattern {
    Pattern::every(2)[1].clone()
}

fn uu() -> Pattern {
    Pattern::all_unknown(2)
}

#[test]
fn a_user_layer_overrides_the_standard_rule() {
    let fadd = Callee::Prim(Opcode::Fadd);
    let user = Layer::new("user").with(fadd.clone(), Copy);
    let user_stamp = user.stamp();
    let stack = Stack::standard().with(user);

    let found = stack.lookup(&fadd, &uk());
    let rule = found.found.expect("a rule");
    assert_eq!(rule.layer_name, "user");
    assert_eq!(rule.rule.name(), "copy");
    assert_eq!(rule.layer, user_stamp);
    assert_eq!(found.consulted, vec![user_stamp]);

    // A pattern the user rule does not cover falls through to the standard layer, and both
    // layers are recorded.
    let through = stack.lookup(&fadd, &uu());
    let rule = through.found.expect("a rule");
    assert_eq!(rule.layer_name, "standard");
    assert_eq!(rule.rule.name(), "sub");
    assert_eq!(
        through.consulted,
        vec![user_stamp, pinv_primitives::standard().stamp()]
    );

    // And the user rule really is what a case is built from.
    let case = Case::new(&stack, Opcode::Fadd, uk()).unwrap();
    assert_eq!(case.rule.name(), "copy");
}

#[test]
fn removing_the_user_rule_restores_the_base() {
    let fadd = Callee::Prim(Opcode::Fadd);
    let mut user = Layer::new("user").with(fadd.clone(), Copy);
    let mut stack = Stack::standard().with(user.clone());
    assert_eq!(stack.lookup(&fadd, &uk()).found.unwrap().layer_name, "user");

    // Edit the layer: remove the rule, and replace the old version in the stack.
    let before = user.version();
    assert!(user.remove(&fadd));
    assert!(user.version() > before);
    assert!(stack.replace(user.clone()));
    let found = stack.lookup(&fadd, &uk());
    assert_eq!(found.found.unwrap().layer_name, "standard");
    // The (now empty) user layer was still consulted: a miss, recorded with its new version.
    assert_eq!(found.consulted[0], user.stamp());
    assert_eq!(found.consulted.len(), 2);

    // Popping the layer restores the standard stack; the standard layer is never popped.
    assert!(stack.pop().is_some());
    assert!(stack.pop().is_none());
    assert_eq!(stack.layers().len(), 1);
    assert_eq!(stack.identity(), Stack::standard().identity());
}

#[test]
fn lookup_records_misses() {
    let a = Layer::new("a").with(Callee::Prim(Opcode::Fadd), Copy);
    let b = Layer::new("b");
    let (sa, sb) = (a.stamp(), b.stamp());
    let stack = Stack::standard().with(a).with(b);
    assert_eq!(stack.identity()[..2], [sb, sa]);

    // sin: neither user layer has it; all three layers are consulted.
    let sin = stack.lookup(&Callee::Prim(Opcode::Sin), &Pattern::all_unknown(1));
    assert_eq!(sin.found.unwrap().layer_name, "standard");
    assert_eq!(
        sin.consulted,
        vec![sb, sa, pinv_primitives::standard().stamp()]
    );

    // A module function nobody knows: a miss everywhere, every layer consulted.
    let f = stack.lookup(&Callee::Function("f".into()), &Pattern::all_unknown(1));
    assert!(f.found.is_none());
    assert_eq!(f.consulted.len(), 3);
}

#[test]
fn versions_bump_on_edit_and_replace_needs_the_same_layer() {
    let mut layer = Layer::new("user");
    let id = layer.id();
    assert_eq!(layer.version(), 0);
    layer.add(Callee::Prim(Opcode::Fadd), Copy);
    assert_eq!(layer.version(), 1);
    layer.add(Callee::Prim(Opcode::Fsub), Copy);
    assert_eq!(layer.version(), 2);
    assert!(!layer.remove(&Callee::Prim(Opcode::Fmul)));
    assert_eq!(layer.version(), 2, "removing nothing is not an edit");
    assert!(layer.remove(&Callee::Prim(Opcode::Fsub)));
    assert_eq!(layer.version(), 3);
    assert_eq!(layer.id(), id, "edits keep the identity");

    let mut stack = Stack::standard().with(layer.clone());
    let old = stack.identity();
    layer.add(Callee::Prim(Opcode::Fsub), Copy);
    assert!(stack.replace(layer.clone()));
    assert_ne!(stack.identity(), old);
    assert_eq!(stack.identity()[0], layer.stamp());
    assert_eq!(stack.layers().len(), 2);

    // A different layer (another identity) is not a version of it.
    assert!(!stack.replace(Layer::new("user")));
    // Two fresh layers never share an identity.
    assert_ne!(Layer::new("x").id(), Layer::new("x").id());
}

#[test]
fn earlier_rules_of_a_layer_win() {
    let fadd = Callee::Prim(Opcode::Fadd);
    let layer = Layer::new("user").with(fadd.clone(), Copy).with(
        fadd.clone(),
        Spec::new("sub", 2, |_, _, _| Ok(Vec::new()), |_, _, _, _| Ok(())),
    );
    assert_eq!(layer.find(&fadd, &uk()).unwrap().name(), "copy");
    assert_eq!(layer.find(&fadd, &uu()).unwrap().name(), "sub");
    assert_eq!(layer.rules_for(&fadd).len(), 2);
    assert_eq!(layer.callees().count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Declarations

/// `fn sq(x) = x * x`, `inverse sq(y, theta s: bool) = if s { sqrt y } else { -sqrt y }`,
/// `pgf sq(x) = x >= 0`, built by hand.
fn square_module() -> Module {
    let span = Span::default();
    let mut module = Module::new();

    let sig = Signature {
        params: vec![Type::F64],
        returns: vec![Type::F64],
    };
    let mut f = Function::new("sq", FuncKind::Fn, sig.clone());
    let b = f.create_entry();
    let x = f.blocks[b].params[0];
    let v = f.ins_prim(b, Opcode::Fmul, vec![x, x], span);
    f.ins_return(b, vec![v], span);
    module.add(f).unwrap();

    let kind = FuncKind::Inverse {
        of: "sq".into(),
        outputs: 1,
    };
    let mut inv = Function::new(
        kind.symbol("sq"),
        kind,
        Signature {
            params: vec![Type::F64, Type::Bool],
            returns: vec![Type::F64],
        },
    );
    inv.param_names = vec!["y".into(), "s".into()];
    let b = inv.create_entry();
    let (y, s) = (inv.blocks[b].params[0], inv.blocks[b].params[1]);
    let r = inv.ins_prim(b, Opcode::Sqrt, vec![y], span);
    let nr = inv.ins_prim(b, Opcode::Fneg, vec![r], span);
    let then = inv.create_block();
    let other = inv.create_block();
    let join = inv.create_block();
    let out = inv.append_block_param(join, Type::F64);
    inv.ins_void(
        b,
        pinv_core::ir::InstKind::Brif {
            cond: s,
            then_dest: Box::new(pinv_core::ir::BlockCall::new(then, vec![])),
            else_dest: Box::new(pinv_core::ir::BlockCall::new(other, vec![])),
        },
        span,
    );
    inv.ins_jump(then, join, vec![r], span);
    inv.ins_jump(other, join, vec![nr], span);
    inv.ins_return(join, vec![out], span);
    module.add(inv).unwrap();

    let kind = FuncKind::Pgf { of: "sq".into() };
    let mut pgf = Function::new(
        kind.symbol("sq"),
        kind,
        Signature {
            params: vec![Type::F64],
            returns: vec![Type::Bool],
        },
    );
    let b = pgf.create_entry();
    let x = pgf.blocks[b].params[0];
    let zero = pgf.ins_const(b, Const::F64(0.0), span);
    let ge = pgf.ins_prim(b, Opcode::Fge, vec![x, zero], span);
    pgf.ins_return(b, vec![ge], span);
    module.add(pgf).unwrap();
    module
}

#[test]
fn declarations_form_a_layer_that_calls_them() {
    let mut module = square_module();
    let layer = declared_layer(&module);
    let sq = Callee::Function("sq".into());
    let stack = Stack::standard().with(layer);
    let found = stack
        .lookup(&sq, &Pattern::all_unknown(1))
        .found
        .expect("declared rule");
    assert_eq!(found.layer_name, "declarations");
    let rule = found.rule;
    let doc = rule.doc(&Pattern::all_unknown(1));
    assert_eq!(doc.thetas.len(), 1);
    assert_eq!(doc.thetas[0].role, "s");

    // The inverse of a caller: (y) -> x, through the declared rule.
    let span = Span::default();
    let kind = FuncKind::GeneratedInverse { of: "sq".into() };
    let mut inv = Function::new(
        kind.symbol("sq"),
        kind,
        Signature {
            params: vec![Type::F64],
            returns: vec![Type::F64],
        },
    );
    let entry = inv.create_entry();
    let y = inv.blocks[entry].params[0];
    let mut e = Emitter::new(&mut inv, entry, Mode::Inverse, span).with_module(&module);
    let xs = rule.emit_inverse(&mut e, &[y], &[Arg::Unknown]).unwrap();
    let end = e.block();
    inv.ins_return(end, xs, span);
    let emitted_call = inv
        .insts_in_layout()
        .any(|(_, i)| matches!(inv.insts[i].kind, pinv_core::ir::InstKind::Call { .. }));
    assert!(emitted_call, "the declared rule calls `inverse:sq`");

    // Its PGF: (x) -> (), recording what `pgf:sq` returns.
    let kind = FuncKind::GeneratedPgf { of: "sq".into() };
    let mut pgf = Function::new(
        kind.symbol("sq"),
        kind,
        Signature {
            params: vec![Type::F64],
            returns: vec![],
        },
    );
    let entry = pgf.create_entry();
    let x = pgf.blocks[entry].params[0];
    let mut e = Emitter::new(&mut pgf, entry, Mode::Pgf, span).with_module(&module);
    let z = e.prim(Opcode::Fmul, &[x, x]);
    rule.emit_pgf(&mut e, &[z], &[x], &Pattern::all_unknown(1))
        .unwrap();
    let end = e.block();
    pgf.ins_return(end, vec![], span);

    let inv = module.add(inv).unwrap();
    let pgf = module.add(pgf).unwrap();
    pinv_core::ir::verify::verify_module(&module).unwrap();
    let interp = Interpreter::new(&module);
    for x in [3.0, -2.5, 0.0] {
        let mut recorder = TapeRecorder::new();
        interp
            .call_with_theta(pgf, &[Const::F64(x)], &mut recorder)
            .unwrap();
        let tape = recorder.into_values();
        assert_eq!(tape, vec![Const::Bool(x >= 0.0)]);
        let out = interp
            .call_with_theta(inv, &[Const::F64(x * x)], &mut TapeSource::new(tape))
            .unwrap();
        assert_eq!(out, vec![Const::F64(x)]);
    }

    // A known operand that disagrees with the declaration's answer is a failed check.
    let kind = FuncKind::GeneratedInverse {
        of: "sq_known".into(),
    };
    let mut check = Function::new(
        kind.symbol("sq_known"),
        kind,
        Signature {
            params: vec![Type::F64, Type::F64],
            returns: vec![Type::F64],
        },
    );
    let entry = check.create_entry();
    let (y, known) = (check.blocks[entry].params[0], check.blocks[entry].params[1]);
    let mut e = Emitter::new(&mut check, entry, Mode::Inverse, span).with_module(&module);
    let xs = rule
        .emit_inverse(&mut e, &[y], &[Arg::Known(known)])
        .unwrap();
    let end = e.block();
    check.ins_return(end, xs, span);
    let check = module.add(check).unwrap();
    let interp = Interpreter::new(&module);
    let ok = interp.call_with_theta(
        check,
        &[Const::F64(4.0), Const::F64(2.0)],
        &mut TapeSource::new(vec![Const::Bool(true)]),
    );
    assert_eq!(ok.unwrap(), vec![Const::F64(2.0)]);
    let bad = interp.call_with_theta(
        check,
        &[Const::F64(4.0), Const::F64(2.0)],
        &mut TapeSource::new(vec![Const::Bool(false)]),
    );
    assert!(matches!(
        bad,
        Err(RuntimeError {
            kind: RuntimeErrorKind::CheckFailed { .. },
            ..
        })
    ));
}

#[test]
fn a_declared_inverse_with_theta_but_no_pgf_has_no_pgf() {
    let mut module = square_module();
    // Drop `pgf:sq` by rebuilding the module without it.
    let mut without = Module::new();
    for (_, f) in module.iter() {
        if f.name != "pgf:sq" {
            without.add(f.clone()).unwrap();
        }
    }
    module = without;
    let layer = declared_layer(&module);
    let rule = layer
        .find(&Callee::Function("sq".into()), &Pattern::all_unknown(1))
        .unwrap()
        .clone();
    let mut f = Function::new(
        "p",
        FuncKind::GeneratedPgf { of: "sq".into() },
        Signature {
            params: vec![Type::F64],
            returns: vec![],
        },
    );
    let entry = f.create_entry();
    let x = f.blocks[entry].params[0];
    let mut e = Emitter::new(&mut f, entry, Mode::Pgf, Span::default()).with_module(&module);
    let err = rule.emit_pgf(&mut e, &[x], &[x], &Pattern::all_unknown(1));
    assert!(matches!(err, Err(RuleError::NoPgf(_))), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// Outputs without a preimage

#[test]
fn outputs_without_a_preimage_fail_a_check() {
    use Const::{Bool as B, F64 as F, I64 as I};
    use Opcode::*;
    let u1 = Pattern::all_unknown(1);
    let uu = Pattern::all_unknown(2);
    let uk = Pattern::every(2)[1].clone();
    let ku = Pattern::every(2)[2].clone();
    let cases: Vec<(Opcode, Pattern, Const, Vec<Const>)> = vec![
        (Sin, u1.clone(), F(2.0), vec![]),
        (Cos, u1.clone(), F(-1.5), vec![]),
        (Asin, u1.clone(), F(2.0), vec![]),
        (Acos, u1.clone(), F(-0.1), vec![]),
        (Atan, u1.clone(), F(2.0), vec![]),
        (Sqrt, u1.clone(), F(-1.0), vec![]),
        (Exp, u1.clone(), F(-1.0), vec![]),
        (Exp, u1.clone(), F(-0.0), vec![]),
        (Log, u1.clone(), F(800.0), vec![]),
        (Cosh, u1.clone(), F(0.5), vec![]),
        (Tanh, u1.clone(), F(1.5), vec![]),
        (Fabs, u1.clone(), F(-1.0), vec![]),
        (Floor, u1.clone(), F(0.5), vec![]),
        (Atan2, uu.clone(), F(4.0), vec![]),
        (Pow, uk.clone(), F(-1.0), vec![F(2.0)]),
        (Fmul, uk.clone(), F(1.0), vec![F(0.0)]),
        (Fdiv, ku.clone(), F(1.0), vec![F(0.0)]),
        (Frem, uk.clone(), F(5.0), vec![F(3.0)]),
        (Fmin, uk.clone(), F(5.0), vec![F(3.0)]),
        (Fmax, ku.clone(), F(3.0), vec![F(5.0)]),
        (Flt, ku.clone(), B(true), vec![F(f64::INFINITY)]),
        (Feq, uk.clone(), B(true), vec![F(f64::NAN)]),
        (FcvtFromI64, u1.clone(), F(0.5), vec![]),
        (FcvtFromI64, u1.clone(), F(1e300), vec![]),
        (FcvtFromI64, u1.clone(), F(f64::NAN), vec![]),
        (FcvtToI64, u1.clone(), I(i64::MAX - 1), vec![]),
        (BoolToI64, u1.clone(), I(2), vec![]),
        (Iabs, u1.clone(), I(-5), vec![]),
        (Imul, uk.clone(), I(1), vec![I(2)]),
        (Imul, uk.clone(), I(1), vec![I(0)]),
        (Idiv, uk.clone(), I(1), vec![I(0)]),
        (Idiv, ku.clone(), I(5), vec![I(3)]),
        (Irem, uk.clone(), I(5), vec![I(3)]),
        (Irem, uk.clone(), I(5), vec![I(0)]),
        (Iand, uk.clone(), I(3), vec![I(1)]),
        (Ior, uk.clone(), I(1), vec![I(2)]),
        (Ishl, uk.clone(), I(1), vec![I(1)]),
        (Ishr, uk.clone(), I(i64::MAX), vec![I(1)]),
        (Imin, uk.clone(), I(5), vec![I(3)]),
        (Ilt, ku.clone(), B(true), vec![I(i64::MAX)]),
        (Band, uk.clone(), B(true), vec![B(false)]),
        (Bor, uk.clone(), B(false), vec![B(true)]),
        (Idiv, Pattern::all_known(2), I(1), vec![I(1), I(0)]),
    ];
    let stack = Stack::standard();
    for (op, pattern, z, known) in cases {
        let case = Case::new(&stack, op, pattern.clone()).unwrap();
        for seed in 0..200 {
            let mut theta = RandomTheta::new(seed);
            let trial = case
                .soundness(z, &known, &mut theta)
                .unwrap_or_else(|f| panic!("{f}"));
            assert!(
                matches!(trial, Trial::Rejected(_)),
                "{op} {pattern} z = {z}, known = {known:?}: {trial:?} (θ = {:?})",
                theta.given
            );
        }
    }
}

/// The θ of every rule are documented and the documentation is well formed.
#[test]
fn every_rule_documents_itself() {
    let stack = Stack::standard();
    for &op in Opcode::ALL {
        for pattern in Pattern::every(op.arity()) {
            let rule: Arc<dyn InverseRule> = stack
                .lookup(&Callee::Prim(op), &pattern)
                .found
                .unwrap()
                .rule;
            let doc = rule.doc(&pattern);
            assert!(!doc.summary.is_empty(), "{op} {pattern}");
            for t in &doc.thetas {
                assert!(!t.role.is_empty(), "{op} {pattern}");
            }
            if op.result_type() != Type::F64 {
                assert!(doc.exact, "{op} {pattern}: i64 and bool rules are exact");
            }
        }
    }
}

/// The generated inverses and PGFs print in the IR text form and parse back to the same IR.
#[test]
fn generated_code_round_trips_through_the_text_form() {
    let cases = Case::all(&Stack::standard(), Opcode::ALL).unwrap();
    for case in &cases {
        let text = case.text();
        let back = pinv_core::ir::read::parse_module(&text)
            .unwrap_or_else(|e| panic!("{case:?}: {e}\n{text}"));
        let again = pinv_core::ir::write::write_module(&back, &Default::default());
        assert_eq!(text, again, "{case:?}");
    }
}

/// The same through the front end: LANGUAGE.md's `square` with its `inverse` and `pgf`.
#[test]
fn declarations_from_source_form_a_layer() {
    let source = pinv_core::SourceFile::new(
        "square.pinv",
        "fn square(x: f64) -> f64 { x * x }
         inverse square(y: f64, theta s: bool) -> f64 {
             if s { sqrt(y) } else { -sqrt(y) }
         }
         pgf square(x: f64) -> bool { x >= 0.0 }
         fn plain(x: f64) -> f64 { x + 1.0 }",
    );
    let mut module = pinv_core::compile_source(&source).expect("compiles").module;
    let layer = declared_layer(&module);
    assert_eq!(
        layer.callees().count(),
        1,
        "only `square` has a declaration"
    );
    let rule = layer
        .find(&Callee::Function("square".into()), &Pattern::all_unknown(1))
        .expect("a rule for square")
        .clone();
    assert_eq!(rule.doc(&Pattern::all_unknown(1)).thetas[0].role, "s");

    let span = Span::default();
    let sig = |params: Vec<Type>, returns: Vec<Type>| Signature { params, returns };
    let kind = FuncKind::GeneratedInverse {
        of: "square".into(),
    };
    let mut inv = Function::new(
        kind.symbol("square"),
        kind,
        sig(vec![Type::F64], vec![Type::F64]),
    );
    let entry = inv.create_entry();
    let y = inv.blocks[entry].params[0];
    let mut e = Emitter::new(&mut inv, entry, Mode::Inverse, span).with_module(&module);
    let xs = rule.emit_inverse(&mut e, &[y], &[Arg::Unknown]).unwrap();
    let end = e.block();
    inv.ins_return(end, xs, span);

    let kind = FuncKind::GeneratedPgf {
        of: "square".into(),
    };
    let mut pgf = Function::new(kind.symbol("square"), kind, sig(vec![Type::F64], vec![]));
    let entry = pgf.create_entry();
    let x = pgf.blocks[entry].params[0];
    let mut e = Emitter::new(&mut pgf, entry, Mode::Pgf, span).with_module(&module);
    let z = e.prim(Opcode::Fmul, &[x, x]);
    rule.emit_pgf(&mut e, &[z], &[x], &Pattern::all_unknown(1))
        .unwrap();
    let end = e.block();
    pgf.ins_return(end, vec![], span);

    let inv = module.add(inv).unwrap();
    let pgf = module.add(pgf).unwrap();
    pinv_core::ir::verify::verify_module(&module).unwrap();
    let interp = Interpreter::new(&module);
    for x in [1.5, -4.0, 0.0] {
        let mut recorder = TapeRecorder::new();
        interp
            .call_with_theta(pgf, &[Const::F64(x)], &mut recorder)
            .unwrap();
        let tape = recorder.into_values();
        assert_eq!(tape, vec![Const::Bool(x >= 0.0)]);
        let out = interp
            .call_with_theta(inv, &[Const::F64(x * x)], &mut TapeSource::new(tape))
            .unwrap();
        assert_eq!(out, vec![Const::F64(x)]);
    }
}

#[test]
#[should_panic(expected = "is not a Spec::binary rule")]
fn a_binary_setter_on_a_unary_spec_is_refused_where_it_is_declared() {
    let _ = Spec::unary("neg", |_, z| Ok(z)).operand(
        pinv_primitives::rules::spec::Side::Left,
        |_, z, _| Ok(z),
        |_, _, _, _| Ok(()),
    );
}
