//! bool operations: `band bor bxor beq bne bnot`. Every preimage is reachable through a choice.
//!
//! The binary rules are generated from the truth table: for each value of z (and of the known
//! operand) the emitted code lists the operand values that give z, in a fixed order; none is a
//! failed check, one is returned as is, several are picked by a `choice`. So `z = a & b` false
//! with both unknown is a choice among (false, false), (false, true), (true, false).

use super::ops::Ops;
use super::spec::Spec;
use super::{binary, binary_pgf, unknowns2};
use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::pattern::{Arg, Pattern};
use crate::rule::{RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Const, Opcode, Type, Value};
use pinv_core::semantics;

pub fn register(layer: &mut Layer) {
    for op in [
        Opcode::Band,
        Opcode::Bor,
        Opcode::Bxor,
        Opcode::Beq,
        Opcode::Bne,
    ] {
        layer.add(Callee::Prim(op), Spec::from(Table { op }));
    }
    layer.add(
        Callee::Prim(Opcode::Bnot),
        Spec::bijection("not", |e, z| e.bnot(z), "a = !z"),
    );
}

fn apply(op: Opcode, a: bool, b: bool) -> bool {
    matches!(
        semantics::eval(op, &[Const::Bool(a), Const::Bool(b)]),
        Ok(Const::Bool(true))
    )
}

const BOTH_ROLE: &str = "which operand pair gives z";
const ONE_ROLE: &str = "the operand (0: false, 1: true)";

/// A binary bool operation inverted by its truth table. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub op: Opcode,
}

impl Table {
    /// The pairs `(a, b)` with `op(a, b) = z`.
    fn pairs(&self, z: bool) -> Vec<(bool, bool)> {
        let mut out = Vec::new();
        for a in [false, true] {
            for b in [false, true] {
                if apply(self.op, a, b) == z {
                    out.push((a, b));
                }
            }
        }
        out
    }

    /// The values of the unknown operand with `op = z` given the known one (`known_left`: the
    /// known one is a).
    fn values(&self, z: bool, k: bool, known_left: bool) -> Vec<bool> {
        [false, true]
            .into_iter()
            .filter(|&x| {
                let (a, b) = if known_left { (k, x) } else { (x, k) };
                apply(self.op, a, b) == z
            })
            .collect()
    }

    fn describe(pairs: &[(bool, bool)]) -> String {
        let items: Vec<String> = pairs
            .iter()
            .enumerate()
            .map(|(i, (a, b))| format!("{i}: ({a}, {b})"))
            .collect();
        items.join(", ")
    }

    /// Both unknown.
    fn solve_both(&self, e: &mut Emitter<'_>, z: Value) -> Result<Vec<Value>, RuleError> {
        let zi = e.b_to_i(z);
        e.switch(zi, 2, &[Type::Bool, Type::Bool], |e, arm| {
            let pairs = self.pairs(arm == 1);
            match pairs.len() {
                0 => {
                    let no = e.bc(false);
                    e.check(
                        no,
                        &format!("`{}` is never {} here", self.op.spelling(), arm == 1),
                    )?;
                    let f = e.bc(false);
                    Ok(vec![f, f])
                }
                1 => {
                    let (a, b) = pairs[0];
                    Ok(vec![e.bc(a), e.bc(b)])
                }
                n => {
                    let c = e.choice(
                        n as u32,
                        &format!("{BOTH_ROLE} ({})", Table::describe(&pairs)),
                    )?;
                    e.switch(c, n as u32, &[Type::Bool, Type::Bool], |e, k| {
                        let (a, b) = pairs[k as usize];
                        Ok(vec![e.bc(a), e.bc(b)])
                    })
                }
            }
        })
    }

    fn pgf_both(&self, e: &mut Emitter<'_>, z: Value, a: Value, b: Value) -> Result<(), RuleError> {
        let zi = e.b_to_i(z);
        e.switch(zi, 2, &[], |e, arm| {
            let pairs = self.pairs(arm == 1);
            if pairs.len() >= 2 {
                let mut index = e.ic(0);
                for (i, &(pa, pb)) in pairs.iter().enumerate() {
                    let ca = e.bc(pa);
                    let cb = e.bc(pb);
                    let ma = e.op2(Opcode::Beq, a, ca);
                    let mb = e.op2(Opcode::Beq, b, cb);
                    let m = e.band(ma, mb);
                    let m = e.b_to_i(m);
                    let iv = e.ic(i as i64);
                    let add = e.imul(m, iv);
                    index = e.iadd(index, add);
                }
                e.record(index, &format!("{BOTH_ROLE} ({})", Table::describe(&pairs)))?;
            }
            Ok(vec![])
        })?;
        Ok(())
    }

    /// One unknown, the other `k` (known_left: k is a).
    fn solve_one(
        &self,
        e: &mut Emitter<'_>,
        z: Value,
        k: Value,
        known_left: bool,
    ) -> Result<Value, RuleError> {
        // index = 2·z + k
        let zi = e.b_to_i(z);
        let ki = e.b_to_i(k);
        let two = e.ic(2);
        let hi = e.imul(zi, two);
        let idx = e.iadd(hi, ki);
        let r = e.switch(idx, 4, &[Type::Bool], |e, arm| {
            let (zv, kv) = (arm >= 2, arm % 2 == 1);
            let values = self.values(zv, kv, known_left);
            match values.len() {
                0 => {
                    let no = e.bc(false);
                    e.check(
                        no,
                        &format!(
                            "no operand gives `{}` = {zv} with the other {kv}",
                            self.op.spelling()
                        ),
                    )?;
                    Ok(vec![e.bc(false)])
                }
                1 => Ok(vec![e.bc(values[0])]),
                _ => {
                    let c = e.choice(2, ONE_ROLE)?;
                    let one = e.ic(1);
                    Ok(vec![e.ieq(c, one)])
                }
            }
        })?;
        Ok(r[0])
    }

    fn pgf_one(
        &self,
        e: &mut Emitter<'_>,
        z: Value,
        k: Value,
        x: Value,
        known_left: bool,
    ) -> Result<(), RuleError> {
        let zi = e.b_to_i(z);
        let ki = e.b_to_i(k);
        let two = e.ic(2);
        let hi = e.imul(zi, two);
        let idx = e.iadd(hi, ki);
        e.switch(idx, 4, &[], |e, arm| {
            let (zv, kv) = (arm >= 2, arm % 2 == 1);
            if self.values(zv, kv, known_left).len() == 2 {
                let c = e.b_to_i(x);
                e.record(c, ONE_ROLE)?;
            }
            Ok(vec![])
        })?;
        Ok(())
    }
}

impl From<Table> for Spec {
    fn from(r: Table) -> Spec {
        Spec::new(
            "truth-table",
            2,
            move |e, outputs, args| {
                let (z, a, b) = binary(outputs, args)?;
                Ok(match (a, b) {
                    (Arg::Unknown, Arg::Unknown) => r.solve_both(e, z)?,
                    (Arg::Unknown, Arg::Known(b)) => vec![r.solve_one(e, z, b, false)?, b],
                    (Arg::Known(a), Arg::Unknown) => vec![a, r.solve_one(e, z, a, true)?],
                    _ => return Err(RuleError::Uncovered(Pattern::of(args))),
                })
            },
            move |e, outputs, args, pattern| {
                let (z, a, b) = binary_pgf(outputs, args)?;
                match unknowns2(pattern) {
                    (true, true) => r.pgf_both(e, z, a, b),
                    (true, false) => r.pgf_one(e, z, b, a, false),
                    (false, true) => r.pgf_one(e, z, a, b, true),
                    (false, false) => Ok(()),
                }
            },
        )
        .doc(move |pattern| {
            let mut thetas = Vec::new();
            let mut checks = Vec::new();
            match unknowns2(pattern) {
                (true, true) => {
                    for z in [false, true] {
                        let pairs = r.pairs(z);
                        if pairs.len() >= 2 {
                            thetas.push(
                                ThetaDoc::choice(
                                    pairs.len() as u32,
                                    &format!("{BOTH_ROLE} ({})", Table::describe(&pairs)),
                                )
                                .when(&format!("z is {z}")),
                            );
                        }
                        if pairs.is_empty() {
                            checks.push(format!("`{}` is never {z} here", r.op.spelling()));
                        }
                    }
                }
                (left, _) => {
                    let known_left = !left;
                    let mut whens = Vec::new();
                    for z in [false, true] {
                        for k in [false, true] {
                            match r.values(z, k, known_left).len() {
                                2 => whens.push(format!("z is {z} and the known operand {k}")),
                                0 => checks.push(format!(
                                    "no operand gives {} = {z} with the other {k}",
                                    r.op
                                )),
                                _ => {}
                            }
                        }
                    }
                    if !whens.is_empty() {
                        thetas.push(ThetaDoc::choice(2, ONE_ROLE).when(&whens.join(", or ")));
                    }
                }
            }
            RuleDoc {
                thetas,
                checks,
                exact: true,
                summary: "the operands that give z, from the truth table".into(),
            }
        })
    }
}
