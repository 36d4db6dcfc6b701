//! The verifier: one broken function per invariant of `pinv_core::ir::verify`'s module docs, and
//! the message it must give.

use expect_test::expect;
use pinv_core::ir::read::parse_module;
use pinv_core::ir::verify::{verify_function, verify_module, Entity};
use pinv_core::ir::{
    Block, BlockCall, FuncId, FuncKind, Function, Inst, InstKind, Module, Type, Value, ValueDef,
};

/// Parses (which must succeed) and verifies.
fn verify_text(text: &str) -> Result<(), String> {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&module).map_err(|e| e.to_string())
}

#[track_caller]
fn rejects(text: &str, message: &str) {
    match verify_text(text) {
        Ok(()) => panic!("accepted:\n{text}"),
        Err(e) => assert!(e.contains(message), "expected `{message}`, found:\n{e}"),
    }
}

#[track_caller]
fn accepts(text: &str) {
    if let Err(e) = verify_text(text) {
        panic!("{e}\n{text}");
    }
}

const BASE: &str = "function %f(x: f64) -> f64 {
block0(v0: f64):
    v1 = fneg v0
    jump block1(v1)
block1(v2: f64):
    return v2
}
";

/// Damages the function of `BASE` and returns the verifier's message.
#[track_caller]
fn damaged(damage: impl FnOnce(&mut Function)) -> String {
    let mut module = parse_module(BASE).unwrap();
    verify_module(&module).unwrap();
    damage(&mut module.functions[FuncId::from_u32(0)]);
    match verify_module(&module) {
        Ok(()) => panic!("accepted:\n{module}"),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn damaged_says(message: &str, damage: impl FnOnce(&mut Function)) {
    let e = damaged(damage);
    assert!(e.contains(message), "expected `{message}`, found:\n{e}");
}

const B0: fn() -> Block = || Block::from_u32(0);
const B1: fn() -> Block = || Block::from_u32(1);

#[test]
fn error_names_function_entity_and_instruction() {
    let text = "function %f(x: i64) -> f64 {
block0(v0: i64):
    v1 = fadd v0, v0
    return v1
}
";
    expect!["invalid IR in function %f, inst0 `v1 = fadd v0, v0`: operand 0 (v0) of `fadd` is i64, expected f64"]
        .assert_eq(&verify_text(text).unwrap_err());
    let module = parse_module(text).unwrap();
    let err = verify_function(&module, FuncId::from_u32(0)).unwrap_err();
    assert_eq!(err.function, "f");
    assert_eq!(err.entity, Entity::Inst(Inst::from_u32(0)));
    assert_eq!(err.text.as_deref(), Some("v1 = fadd v0, v0"));
    assert!(verify_function(&module, FuncId::from_u32(7))
        .unwrap_err()
        .to_string()
        .contains("not a function of the module"));
}

#[test]
fn base_is_valid() {
    accepts(BASE);
}

// ---- 1. kind

#[test]
fn inverse_with_more_outputs_than_parameters() {
    damaged_says("an inverse with 3 outputs has only 1 parameters", |f| {
        f.kind = FuncKind::Inverse {
            of: "g".into(),
            outputs: 3,
        }
    });
}

// ---- 2. layout

#[test]
fn no_blocks() {
    rejects("function %f() -> () {\n}\n", "no blocks");
}

#[test]
fn layout_block_that_does_not_exist() {
    damaged_says("block9 is in the layout but does not exist", |f| {
        f.layout.push(Block::from_u32(9))
    });
}

#[test]
fn block_twice_in_layout() {
    damaged_says("block1 appears more than once in the layout", |f| {
        f.layout.push(B1())
    });
}

// ---- 3. instructions and terminators

#[test]
fn instruction_that_does_not_exist() {
    damaged_says("inst9 is listed in the block but does not exist", |f| {
        f.blocks[B0()].insts.insert(0, Inst::from_u32(9))
    });
}

#[test]
fn instruction_in_two_blocks() {
    damaged_says("placed twice, in block0 and in block1", |f| {
        let i = f.blocks[B0()].insts[0];
        f.blocks[B1()].insts.insert(0, i);
    });
}

#[test]
fn instruction_twice_in_one_block() {
    damaged_says("placed twice, in block0 and in block0", |f| {
        let i = f.blocks[B0()].insts[0];
        f.blocks[B0()].insts.insert(0, i);
    });
}

#[test]
fn empty_block() {
    rejects(
        "function %f() -> () {\nblock0:\n    jump block1\nblock1:\n}\n",
        "block1: the block is empty",
    );
}

#[test]
fn missing_terminator() {
    rejects(
        "function %f() -> () {\nblock0:\n    v0 = iconst 1\n}\n",
        "block0 does not end with a terminator",
    );
}

#[test]
fn terminator_in_the_middle() {
    rejects(
        "function %f() -> () {\nblock0:\n    return\n    return\n}\n",
        "a terminator in the middle of block0",
    );
}

// ---- 4. definitions

#[test]
fn def_disagrees() {
    damaged_says(
        "v1 is result 0 of inst0, but its ValueData::def says parameter 0 of block1",
        |f| f.values[Value::from_u32(1)].def = ValueDef::Param(B1(), 0),
    );
}

#[test]
fn value_defined_twice() {
    damaged_says("v2 is defined more than once", |f| {
        let v = f.blocks[B1()].params[0];
        f.blocks[B1()].params.push(v);
    });
}

#[test]
fn defined_value_that_does_not_exist() {
    damaged_says("v40 is defined here but does not exist", |f| {
        f.blocks[B1()].params.push(Value::from_u32(40))
    });
}

// ---- 5. entry block

#[test]
fn entry_params_do_not_match_signature() {
    rejects(
        "function %f(x: f64) -> () {\nblock0(v0: i64):\n    return\n}\n",
        "the entry block's parameters (i64) do not match the signature's parameters (f64)",
    );
    rejects(
        "function %f(x: f64) -> () {\nblock0:\n    return\n}\n",
        "the entry block's parameters () do not match",
    );
}

// ---- 6. each instruction: results

#[test]
fn prim_result_type() {
    damaged_says("result v1 has type i64, but `fneg` produces f64", |f| {
        f.values[Value::from_u32(1)].ty = Type::I64
    });
}

#[test]
fn prim_result_count() {
    damaged_says("`fneg` defines 1 result but the instruction has 0", |f| {
        f.insts[Inst::from_u32(0)].results.clear()
    });
}

#[test]
fn const_result_type() {
    let text = "function %f() -> () {\nblock0:\n    v0 = bconst true\n    return\n}\n";
    let mut module = parse_module(text).unwrap();
    module.functions[FuncId::from_u32(0)].values[Value::from_u32(0)].ty = Type::F64;
    let e = verify_module(&module).unwrap_err().to_string();
    assert!(
        e.contains("result v0 has type f64, but a constant produces bool"),
        "{e}"
    );
}

#[test]
fn call_results_follow_the_callee() {
    let text = "function %f(x: f64) -> f64 {
block0(v0: f64):
    v1, v2 = call %g(v0)
    return v1
}

function %g(x: f64) -> (f64, bool) {
block0(v0: f64):
    v1 = flt v0, v0
    return v0, v1
}
";
    accepts(text);
    let mut module = parse_module(text).unwrap();
    module.functions[FuncId::from_u32(0)].insts[Inst::from_u32(0)]
        .results
        .pop();
    let e = verify_module(&module).unwrap_err().to_string();
    assert!(
        e.contains("`call %g` defines 2 results but the instruction has 1"),
        "{e}"
    );
}

#[test]
fn theta_result_type_and_domain() {
    let inverse = |body: &str| {
        format!("function %inverse:f(y: f64) -> f64 inverse(f) {{\nblock0(v0: f64):\n{body}}}\n")
    };
    accepts(&inverse("    v1 = theta [1.0, 1.0] \"r\"\n    return v1\n"));
    rejects(
        &inverse("    v1 = theta [2.0, 1.0] \"r\"\n    return v1\n"),
        "the theta domain [2.0, 1.0] is empty",
    );
    rejects(
        &inverse("    v1 = theta [nan, 1.0] \"r\"\n    return v0\n"),
        "the theta domain [nan, 1.0] is empty",
    );
    rejects(
        &inverse("    v1 = theta int[3..=1] \"r\"\n    return v0\n"),
        "the theta domain int[3..=1] is empty",
    );
    let mut module = parse_module(&inverse("    v1 = theta int \"r\"\n    return v0\n")).unwrap();
    module.functions[FuncId::from_u32(0)].values[Value::from_u32(1)].ty = Type::F64;
    let e = verify_module(&module).unwrap_err().to_string();
    assert!(
        e.contains("result v1 has type f64, but `theta int` produces i64"),
        "{e}"
    );
}

#[test]
fn choice_needs_an_alternative() {
    rejects(
        "function %inverse:f(y: f64) -> f64 inverse(f) {\nblock0(v0: f64):\n    v1 = choice 0 \"c\"\n    return v0\n}\n",
        "`choice 0` has no alternatives",
    );
}

#[test]
fn check_and_terminators_define_nothing() {
    let text = "function %inverse:f(y: bool) -> bool inverse(f) {\nblock0(v0: bool):\n    check v0, \"c\"\n    return v0\n}\n";
    accepts(text);
    let mut module = parse_module(text).unwrap();
    let f = &mut module.functions[FuncId::from_u32(0)];
    f.insts[Inst::from_u32(0)].results.push(Value::from_u32(0));
    let e = verify_module(&module).unwrap_err().to_string();
    // v0 is now also a result of the check.
    assert!(e.contains("v0 is defined more than once"), "{e}");
    damaged_says(
        "`return` defines 0 results but the instruction has 1",
        |f| {
            let r = f.values.push(pinv_core::ir::ValueData {
                ty: Type::F64,
                def: ValueDef::Result(Inst::from_u32(2), 0),
            });
            f.insts[Inst::from_u32(2)].results.push(r);
        },
    );
}

// ---- 6. each instruction: operands

#[test]
fn prim_operand_count_and_type() {
    rejects(
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    v1 = fadd v0\n    return v1\n}\n",
        "`fadd` takes 2 operands but is given 1",
    );
    rejects(
        "function %f(x: i64) -> bool {\nblock0(v0: i64):\n    v1 = flt v0, v0\n    return v1\n}\n",
        "operand 0 (v0) of `flt` is i64, expected f64",
    );
}

#[test]
fn undefined_operand() {
    damaged_says("v30 is used but not defined in the function", |f| {
        f.insts[Inst::from_u32(0)].kind = InstKind::Prim {
            op: pinv_core::ir::Opcode::Fneg,
            args: vec![Value::from_u32(30)].into(),
        }
    });
    // A value that exists but whose block is not in the layout.
    damaged_says("v2 is used but not defined in the function", |f| {
        f.layout.pop();
        let j = f.blocks[B0()].insts[1];
        f.insts[j].kind = InstKind::Return {
            args: vec![Value::from_u32(2)].into(),
        };
    });
}

#[test]
fn call_operands_and_callee() {
    let text = |args: &str| {
        format!(
            "function %f(x: f64) -> () {{
block0(v0: f64):
    v1 = iconst 1
    call %g({args})
    return
}}

function %g(x: f64, n: i64) -> () {{
block0(v0: f64, v1: i64):
    return
}}
"
        )
    };
    accepts(&text("v0, v1"));
    rejects(&text("v0"), "`call %g` takes 2 operands but is given 1");
    rejects(
        &text("v1, v0"),
        "operand 0 (v1) of `call %g` is i64, expected f64",
    );
    let mut module = parse_module(&text("v0, v1")).unwrap();
    if let InstKind::Call { callee, .. } =
        &mut module.functions[FuncId::from_u32(0)].insts[Inst::from_u32(1)].kind
    {
        *callee = FuncId::from_u32(5);
    }
    let e = verify_module(&module).unwrap_err().to_string();
    assert!(
        e.contains("the callee fn5 is not a function of the module"),
        "{e}"
    );
}

#[test]
fn conditions_are_bool() {
    rejects(
        "function %inverse:f(y: f64) -> f64 inverse(f) {\nblock0(v0: f64):\n    check v0, \"c\"\n    return v0\n}\n",
        "the condition v0 of `check` is f64, expected bool",
    );
    rejects(
        "function %f(x: i64) -> () {\nblock0(v0: i64):\n    brif v0, block1, block1\nblock1:\n    return\n}\n",
        "the condition v0 of `brif` is i64, expected bool",
    );
}

#[test]
fn return_matches_signature() {
    rejects(
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    return\n}\n",
        "`return` in a function returning (f64) takes 1 operand but is given 0",
    );
    rejects(
        "function %f(x: f64) -> (f64, i64) {\nblock0(v0: f64):\n    return v0, v0\n}\n",
        "operand 1 (v0) of `return` in a function returning (f64, i64) is f64, expected i64",
    );
}

#[test]
fn branch_arguments_match_target_parameters() {
    rejects(
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    jump block1\nblock1(v1: f64):\n    return v1\n}\n",
        "the branch passes 0 arguments to block1, which has 1 parameter",
    );
    rejects(
        "function %f(x: i64) -> () {\nblock0(v0: i64):\n    v1 = ilt v0, v0\n    brif v1, block1(v0), block1(v1)\nblock1(v2: i64):\n    return\n}\n",
        "operand 0 (v1) of the branch to block1 (i64) is bool, expected i64",
    );
}

#[test]
fn branch_target_outside_layout() {
    damaged_says(
        "the branch target block1 is not a block of the layout",
        |f| {
            f.layout.pop();
        },
    );
    damaged_says(
        "the branch target block7 is not a block of the layout",
        |f| {
            let j = f.blocks[B0()].insts[1];
            f.insts[j].kind = InstKind::Jump {
                dest: BlockCall::new(Block::from_u32(7), vec![]),
            };
        },
    );
}

#[test]
fn inverse_only_instructions() {
    let body = "block0(v0: bool):
    v1 = theta real \"r\"
    v2 = choice 3 \"c\"
    check v0, \"ok\"
    return v0
}
";
    accepts(&format!(
        "function %inverse:g(y: bool) -> bool inverse(g) {{\n{body}"
    ));
    rejects(
        &format!("function %g(y: bool) -> bool {{\n{body}"),
        "`theta` is only allowed in inverse functions, and this is a `fn`",
    );
    rejects(
        &format!("function %pgf:g(y: bool) -> bool pgf(g) {{\n{body}"),
        "`theta` is only allowed in inverse functions, and this is a `pgf`",
    );
    rejects(
        "function %g(y: bool) -> () {\nblock0(v0: bool):\n    check v0, \"ok\"\n    return\n}\n",
        "`check` is only allowed in inverse functions",
    );
    rejects(
        "function %g() -> () {\nblock0:\n    v0 = choice 2 \"c\"\n    return\n}\n",
        "`choice` is only allowed in inverse functions",
    );
}

#[test]
fn pgf_only_instructions() {
    let body = "block0(v0: f64):
    segment open
    record v0, \"x\"
    segment cut
    segment close
    return
}
";
    accepts(&format!(
        "function %f.pgf(x: f64) -> () generated_pgf(f) {{\n{body}"
    ));
    rejects(
        &format!("function %f.inv(x: f64) -> () generated_inverse(f) {{\n{body}"),
        "`segment` is only allowed in generated PGFs, and this is a generated inverse",
    );
    rejects(
        "function %g() -> () {\nblock0:\n    segment cut\n    return\n}\n",
        "`segment` is only allowed in generated PGFs, and this is a `fn`",
    );
}

// ---- 7. reachability

#[test]
fn unreachable_block() {
    rejects(
        "function %f() -> () {\nblock0:\n    return\nblock1:\n    jump block1\n}\n",
        "block1: block1 is not reachable from the entry block block0",
    );
}

// ---- 8. dominance

#[test]
fn use_before_definition_in_a_block() {
    rejects(
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    v1 = fneg v2\n    v2 = fneg v0\n    return v1\n}\n",
        "v2 is used before it is defined in block0",
    );
    rejects(
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    v1 = fadd v1, v0\n    return v1\n}\n",
        "v1 is used before it is defined in block0",
    );
}

#[test]
fn use_not_dominated() {
    let diamond = |ret: &str| {
        format!(
            "function %f(x: f64, c: bool) -> f64 {{
block0(v0: f64, v1: bool):
    brif v1, block1, block2
block1:
    v2 = fneg v0
    jump block3(v2)
block2:
    jump block3(v0)
block3(v3: f64):
    return {ret}
}}
"
        )
    };
    accepts(&diamond("v3"));
    accepts(&diamond("v0"));
    rejects(
        &diamond("v2"),
        "v2 is defined in block1, which does not dominate this use in block3",
    );
}

#[test]
fn loops_and_textual_order_do_not_matter() {
    // The loop body comes before its header in the text and in the layout, and uses the header's
    // parameter before the text defines it.
    accepts(
        "function %f(n: i64) -> i64 {
block0(v0: i64):
    v1 = iconst 0
    jump block1(v1)
block2:
    v5 = iconst 1
    v6 = iadd v2, v5
    jump block1(v6)
block1(v2: i64):
    v3 = ilt v2, v0
    brif v3, block2, block3
block3:
    return v2
}
",
    );
}

#[test]
fn a_whole_module_is_verified() {
    let mut module = Module::new();
    module
        .add(Function::new("empty", FuncKind::Fn, Default::default()))
        .unwrap();
    let e = verify_module(&module).unwrap_err().to_string();
    expect!["invalid IR in function %empty: the function has no blocks (no entry block)"]
        .assert_eq(&e);
}
