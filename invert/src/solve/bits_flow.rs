//! Bit maps through branches and loops: a whole function that is GF(2)-affine in its inputs.
//!
//! A CRC step is written `if (r & 1) == 1 { (r >> 1) ^ POLY } else { r >> 1 }` inside
//! `for i in 0..8`. No straight-line block is a bit map on its own, yet the function is one:
//! the loop runs a constant number of times, and the two arms differ by a constant, so the merge
//! is `(r >> 1) ^ (POLY · bit0(r))`, linear in r. [`affine_function`] finds this by evaluating
//! the function **symbolically** over [`Form`](super::bits)s of its parameters:
//!
//! - every instruction is evaluated on forms (constants fold with the IR's own semantics;
//!   `x == 1` of a value that is 0 or 1 is that bit; `b as i64` of a bit is the bit);
//! - a branch on a constant follows its edge (so loops with constant trip counts unroll);
//! - a branch on a bit runs both arms to the branch's immediate post-dominator and merges the
//!   values they bring there: equal forms stay, forms that differ by a constant `k` become
//!   `else ⊕ k·bit`; anything else (arms differing by a non-constant, an arm that returns
//!   early) gives up;
//! - anything not linear (a product of unknowns, a call, a float) gives up, and so does a run
//!   past [`STEPS`] evaluated instructions or [`DEPTH`] nested branches.
//!
//! What it returns is exact: the outputs *are* `M·x ⊕ c` for every x, not only at test points.
//! The function's body is then replaced, for inversion, by one bit-map helper
//! ([`super::bits`]), and the inverse's final check still runs the original function.

use super::bits::{BitsSpec, Form};
use super::plan::{PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::dominators::DomTree;
use pinv_core::ir::{Block, Const, Function, InstKind, Opcode, Type, Value};
use std::collections::HashMap;

/// The most instructions one symbolic evaluation runs (loop iterations included).
pub const STEPS: usize = 50_000;

/// The most branches on unknown bits nested inside each other.
pub const DEPTH: usize = 64;

/// The most parameters (words) a function may have.
const MAX_PARAMS: usize = 8;

/// `f` as one bit-map helper of its parameters, if it is GF(2)-affine (see the module docs),
/// with a description. `names` are the parameters' names.
pub fn affine_function(f: &Function, names: &[String]) -> Option<(Plan, String)> {
    let params = &f.sig.params;
    if params.is_empty()
        || params.len() > MAX_PARAMS
        || params.iter().any(|&t| t != Type::I64)
        || f.sig.returns.is_empty()
        || f.sig.returns.iter().any(|&t| t != Type::I64)
    {
        return None;
    }
    let entry = f.entry()?;
    let (pdom, exit) = post_dominators(f);
    let mut eval = Eval {
        f,
        pdom,
        exit,
        vals: HashMap::new(),
        steps: 0,
    };
    let args: Vec<Form> = (0..params.len())
        .map(|i| {
            Form::atom(PVal {
                inst: i as u32,
                idx: 0,
            })
        })
        .collect();
    let Reached::Return(outputs) = eval.run(entry, args, None, 0)? else {
        return None;
    };
    if outputs.iter().any(|o| !o.clean()) {
        return None;
    }
    let n = params.len();
    let atoms: Vec<PVal> = (0..n as u32).map(|inst| PVal { inst, idx: 0 }).collect();
    let rows: Vec<&Form> = outputs.iter().collect();
    let matrix = super::bits::matrix_of(&rows, &atoms);
    let spec = BitsSpec {
        matrix,
        consts: outputs.iter().map(|o| o.c).collect(),
        zeros: vec![0; n],
        atoms: names.to_vec(),
    };
    let rank = spec.matrix.reduce().rank;
    let mut b = PlanBuilder::new(params.clone());
    let args = (0..n).map(|i| b.param(i)).collect();
    let span = f.terminator(entry).map_or(f.span, |t| f.insts[t].span);
    let h = b.push(PKind::Bits(spec), args, f.sig.returns.clone(), span);
    let mut plan = b.finish();
    plan.outputs = (0..f.sig.returns.len() as u32)
        .map(|idx| PVal { inst: h, idx })
        .collect();
    let text = format!(
        "the whole function as a GF(2)-linear map of {} (rank {rank} of {}; its branches and \
         loops evaluated symbolically)",
        names.join(", "),
        64 * n
    );
    Some((plan, text))
}

/// The post-dominator tree of `f` (a dominator tree of the reversed graph, rooted at a virtual
/// exit block after every `return`), and that exit block.
fn post_dominators(f: &Function) -> (DomTree, Block) {
    let exit = Block::from_u32(f.blocks.len() as u32);
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    let mut returns = Vec::new();
    for &b in &f.layout {
        for s in f.successors(b) {
            preds.entry(s).or_default().push(b);
        }
        if f.ends_in_return(b) {
            returns.push(b);
        }
    }
    let reverse = |b: Block| -> Vec<Block> {
        if b == exit {
            returns.clone()
        } else {
            preds.get(&b).cloned().unwrap_or_default()
        }
    };
    (DomTree::of_graph(exit, reverse), exit)
}

/// How a symbolic run ended.
enum Reached {
    /// The function returned these values.
    Return(Vec<Form>),
    /// The run reached the block it was to stop at, with these arguments.
    Stop(Vec<Form>),
}

struct Eval<'a> {
    f: &'a Function,
    pdom: DomTree,
    exit: Block,
    vals: HashMap<Value, Form>,
    steps: usize,
}

impl Eval<'_> {
    /// Runs from `block` with `args` until a `return` or, with `stop`, until a jump to `stop`.
    fn run(
        &mut self,
        mut block: Block,
        mut args: Vec<Form>,
        stop: Option<Block>,
        depth: usize,
    ) -> Option<Reached> {
        if depth > DEPTH {
            return None;
        }
        loop {
            let f = self.f;
            let params = &f.blocks[block].params;
            if params.len() != args.len() {
                return None;
            }
            for (&p, a) in params.iter().zip(args) {
                self.vals.insert(p, a);
            }
            let (&term, body) = f.blocks[block].insts.split_last()?;
            // The terminator is a step too: a loop of blocks that only jump (`loop {}`) must
            // reach the limit.
            self.steps += 1;
            if self.steps > STEPS {
                return None;
            }
            for &inst in body {
                self.steps += 1;
                if self.steps > STEPS {
                    return None;
                }
                let data = &f.insts[inst];
                let result = *data.results.first()?;
                let form = self.inst(&data.kind, f.value_type(result))?;
                self.vals.insert(result, form);
            }
            let (next, next_args) = match &f.insts[term].kind {
                InstKind::Return { args } if stop.is_none() => {
                    return Some(Reached::Return(self.forms(args)?));
                }
                InstKind::Jump { dest } => (dest.block, self.forms(&dest.args)?),
                InstKind::Brif {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    let c = self.vals.get(cond)?.clone();
                    if let Some(k) = c.constant() {
                        let dest = if k & 1 == 1 { then_dest } else { else_dest };
                        (dest.block, self.forms(&dest.args)?)
                    } else {
                        // Both arms to the merge, then one value per merged parameter.
                        let merge = self.pdom.idom(block).filter(|&m| m != self.exit)?;
                        let mut arm = |dest: &pinv_core::ir::BlockCall| -> Option<Vec<Form>> {
                            let a = self.forms(&dest.args)?;
                            if dest.block == merge {
                                return Some(a);
                            }
                            match self.run(dest.block, a, Some(merge), depth + 1)? {
                                Reached::Stop(v) => Some(v),
                                Reached::Return(_) => None,
                            }
                        };
                        let then_vals = arm(then_dest)?;
                        let else_vals = arm(else_dest)?;
                        let merged = then_vals
                            .iter()
                            .zip(&else_vals)
                            .map(|(t, e)| select(&c, t, e))
                            .collect::<Option<Vec<Form>>>()?;
                        (merge, merged)
                    }
                }
                _ => return None,
            };
            if Some(next) == stop {
                return Some(Reached::Stop(next_args));
            }
            block = next;
            args = next_args;
        }
    }

    fn forms(&self, vs: &[Value]) -> Option<Vec<Form>> {
        vs.iter().map(|v| self.vals.get(v).cloned()).collect()
    }

    /// The form of one instruction's result of type `ty`.
    fn inst(&self, kind: &InstKind, ty: Type) -> Option<Form> {
        match kind {
            InstKind::Const(c) => Some(Form::konst(bits_of(*c)?)),
            InstKind::Prim { op, args } => {
                let a = self.forms(args)?;
                // Every operand a constant: the IR's own semantics (traps give up).
                if a.iter().all(|x| x.constant().is_some()) {
                    let consts: Vec<Const> = args
                        .iter()
                        .zip(&a)
                        .map(|(&v, x)| const_of(self.f.value_type(v), x.c))
                        .collect();
                    let r = pinv_core::semantics::eval(*op, &consts).ok()?;
                    return Some(Form::konst(bits_of(r)?));
                }
                match ty {
                    Type::I64 => super::bits::prim_form(*op, &a),
                    Type::Bool => bool_form(*op, &a),
                    Type::F64 => None,
                }
            }
            _ => None,
        }
    }
}

/// The bits of a constant as a word: an i64 as is, a bool as 0 or 1; no f64.
fn bits_of(c: Const) -> Option<u64> {
    match c {
        Const::I64(x) => Some(x as u64),
        Const::Bool(b) => Some(u64::from(b)),
        Const::F64(_) => None,
    }
}

fn const_of(ty: Type, bits: u64) -> Const {
    match ty {
        Type::Bool => Const::Bool(bits & 1 == 1),
        Type::F64 => Const::F64(f64::from_bits(bits)),
        Type::I64 => Const::I64(bits as i64),
    }
}

/// A bool as a form of bit 0 (the other bits zero): `x == k` and `x != k` where x has one
/// unknown bit (`(r & 1) == 1`, `(c & 0x8000) != 0`), and the bool operators.
fn bool_form(op: Opcode, a: &[Form]) -> Option<Form> {
    let bit = |f: &Form| f.is_bit().then(|| f.clone());
    let one = Form::konst(1);
    match (op, a) {
        (Opcode::Ieq | Opcode::Ine, [x, y]) => {
            let (v, k) = match (x.constant(), y.constant()) {
                (None, Some(k)) => (x, k),
                (Some(k), None) => (y, k),
                _ => return None,
            };
            let j = v.single_bit()?;
            let known = !(1u64 << j);
            // v == k: false if a known bit differs, else bit j of v equals bit j of k.
            let eq = if (v.c ^ k) & known != 0 {
                Form::konst(0)
            } else {
                v.map(|c| (c >> j) & 1).xor(&Form::konst(!(k >> j) & 1))
            };
            Some(if op == Opcode::Ieq { eq } else { eq.xor(&one) })
        }
        (Opcode::Bxor | Opcode::Bne, [x, y]) => Some(x.xor(y)),
        (Opcode::Beq, [x, y]) => Some(x.xor(y).xor(&one)),
        (Opcode::Bnot, [x]) => Some(x.xor(&one)),
        (Opcode::Band, [x, y]) => bit(&x.and(y)),
        (Opcode::Bor, [x, y]) => bit(&x.or(y)),
        _ => None,
    }
}

/// The value at a merge: `then` if the bit `c` is 1, else `other` — linear when the two differ
/// by a constant.
fn select(c: &Form, then: &Form, other: &Form) -> Option<Form> {
    if then == other {
        return Some(then.clone());
    }
    let d = then.xor(other);
    let k = d.constant()?;
    Some(other.xor(&c.times_bit(k)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinv_core::ir::FuncKind;

    fn function(src: &str) -> Function {
        let program = crate::Program::parse("t.pinv", src).expect("compiles");
        let (_, f) = program
            .module()
            .iter()
            .find(|(_, f)| f.kind == FuncKind::Fn)
            .expect("a function");
        f.clone()
    }

    #[test]
    fn loops_of_constant_trips_and_bit_branches_are_maps() {
        let crc = function(
            "fn crc(c: i64) -> i64 {
                let mut r = c & 0xffffffff;
                for i in 0..8 {
                    if (r & 1) == 1 { r = ((r >> 1) & 0x7fffffff) ^ 0xedb88320; }
                    else { r = (r >> 1) & 0x7fffffff; }
                }
                r
            }",
        );
        let (plan, _) = affine_function(&crc, &["c".to_string()]).expect("a bit map");
        let PKind::Bits(spec) = &plan.insts[1].kind else {
            panic!("{plan:?}")
        };
        // The table-driven CRC-32 of one zero byte, and of the value 1.
        let reference = |mut r: u64| {
            r &= 0xffff_ffff;
            for _ in 0..8 {
                r = if r & 1 == 1 {
                    (r >> 1) ^ 0xedb8_8320
                } else {
                    r >> 1
                };
            }
            r
        };
        for x in [0u64, 1, 0xdead_beef, u64::MAX, 0x1234_5678_9abc_def0] {
            let got = spec.eval(&[Const::I64(x as i64)]).expect("evaluates");
            assert_eq!(got, vec![Const::I64(reference(x) as i64)], "{x:#x}");
        }
    }

    #[test]
    fn what_is_not_linear_is_refused() {
        for src in [
            // A branch whose arms differ by a non-constant.
            "fn f(x: i64) -> i64 { if (x & 1) == 1 { x << 1 } else { x } }",
            // A condition that is not one bit.
            "fn f(x: i64) -> i64 { if x > 5 { x ^ 3 } else { x } }",
            // A loop whose count depends on the data.
            "fn f(x: i64) -> i64 { let mut r = x; while (r & 1) == 1 { r = r >> 1; } r }",
            // Arithmetic with carries.
            "fn f(x: i64) -> i64 { if (x & 1) == 1 { x + 1 } else { x } }",
        ] {
            assert!(
                affine_function(&function(src), &["x".to_string()]).is_none(),
                "{src}"
            );
        }
    }
}
