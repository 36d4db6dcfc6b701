use pinv_core::ir::{Const, Opcode, Type};
use pinv_primitives::pattern::Knowledge;
use pinv_primitives::testing::{case_name, Case};
use pinv_primitives::{Pattern, Stack};

fn consts(ty: Type) -> Vec<Const> {
    match ty {
        Type::F64 => vec![
            Const::F64(0.0),
            Const::F64(1.0),
            Const::F64(-1.0),
            Const::F64(2.0),
            Const::F64(0.5),
            Const::F64(3.0),
            Const::F64(-0.0),
            Const::F64(f64::INFINITY),
        ],
        Type::I64 => vec![
            Const::I64(0),
            Const::I64(1),
            Const::I64(-1),
            Const::I64(2),
            Const::I64(3),
            Const::I64(64),
            Const::I64(6),
            Const::I64(i64::MIN),
        ],
        Type::Bool => vec![Const::Bool(true), Const::Bool(false)],
    }
}

fn main() {
    let stack = Stack::standard();
    for &op in Opcode::ALL {
        for pattern in Pattern::every(op.arity()) {
            let name = case_name(op, &pattern);
            let found = stack
                .lookup(&pinv_primitives::Callee::Prim(op), &pattern)
                .found
                .expect("rule");
            println!(
                "#### {name} rule={} doc={:?}",
                found.rule.name(),
                found.rule.doc(&pattern)
            );
            match Case::new(&stack, op, pattern.clone()) {
                Ok(c) => println!("{}", c.text()),
                Err(e) => println!("ERR {e}"),
            }
            let known: Vec<usize> = (0..op.arity())
                .filter(|&i| pattern.0[i] == Knowledge::Known)
                .collect();
            if known.len() == 1 {
                let ty = op.arg_types()[known[0]];
                for c in consts(ty) {
                    println!("#### {name} const {c:?}");
                    match Case::with_constants(&stack, op, pattern.clone(), &[c]) {
                        Ok(c) => println!("{}", c.text()),
                        Err(e) => println!("ERR {e}"),
                    }
                }
            }
            if op.arg_types().iter().all(|t| *t == Type::F64) {
                for r in [(0.0, 1.0), (-2.0, 5.0), (1.0, 1e9)] {
                    println!("#### {name} range {r:?}");
                    match Case::with_operand_ranges(
                        &stack,
                        op,
                        pattern.clone(),
                        vec![Some(r); op.arity()],
                    ) {
                        Ok(c) => println!("{}", c.text()),
                        Err(e) => println!("ERR {e}"),
                    }
                }
            }
        }
    }
}
