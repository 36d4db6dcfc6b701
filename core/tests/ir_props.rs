//! Property tests of the IR text form and the verifier:
//!
//! - random small functions, built from a random list of opcodes, verify and round-trip;
//! - malformed text (random mutations and truncations of printed IR) never makes the parser panic,
//!   and whatever it accepts prints back stably;
//! - broken functions (random damage to valid ones) never make the verifier, the printer, the
//!   Graphviz writer or `compact` panic.

use pinv_core::ir::dot::{function_to_dot, module_to_dot};
use pinv_core::ir::read::parse_module;
use pinv_core::ir::verify::verify_module;
use pinv_core::ir::write::{write_module, WriteOptions};
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncId, FuncKind, Function, Inst, InstKind, Module, Opcode,
    Signature, Type, Value, ValueDef,
};
use pinv_core::Span;
use proptest::prelude::*;

const SPANS: WriteOptions = WriteOptions { spans: true };
const PLAIN: WriteOptions = WriteOptions { spans: false };

/// One step of a random function body.
#[derive(Clone, Debug)]
enum Step {
    /// A primitive, with operands picked (modulo) from the values of the right type.
    Op(usize, [usize; 2]),
    Const(u8, u64),
    /// A call of `%callee(f64, i64) -> (f64, bool)`.
    Call([usize; 2]),
    /// theta / choice / check: only in an inverse.
    Inverse(u8, u64, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..Opcode::ALL.len(), any::<[usize; 2]>()).prop_map(|(o, a)| Step::Op(o, a)),
        2 => (any::<u8>(), any::<u64>()).prop_map(|(k, b)| Step::Const(k, b)),
        1 => any::<[usize; 2]>().prop_map(Step::Call),
        1 => (any::<u8>(), any::<u64>(), any::<usize>()).prop_map(|(k, b, a)| Step::Inverse(k, b, a)),
    ]
}

#[derive(Clone, Debug)]
struct Shape {
    head: Vec<Step>,
    /// With `Some`, a diamond: `brif` to a block running these steps, or to a block that forwards
    /// an argument; both join in a block with a parameter.
    arm: Option<(Vec<Step>, usize)>,
    inverse: bool,
    spans: Vec<(u32, u32)>,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop::collection::vec(step(), 0..16),
        prop::option::of((prop::collection::vec(step(), 0..8), any::<usize>())),
        any::<bool>(),
        prop::collection::vec((any::<u32>(), any::<u32>()), 0..8),
    )
        .prop_map(|(head, arm, inverse, spans)| Shape {
            head,
            arm,
            inverse,
            spans,
        })
}

/// The values available, by type.
#[derive(Clone, Default)]
struct Pools([Vec<Value>; 3]);

impl Pools {
    fn slot(ty: Type) -> usize {
        match ty {
            Type::F64 => 0,
            Type::I64 => 1,
            Type::Bool => 2,
        }
    }
    fn add(&mut self, f: &Function, v: Value) {
        self.0[Self::slot(f.value_type(v))].push(v);
    }
    fn pick(&self, ty: Type, k: usize) -> Value {
        let pool = &self.0[Self::slot(ty)];
        pool[k % pool.len()]
    }
}

struct Builder<'a> {
    f: Function,
    spans: &'a [(u32, u32)],
    n: usize,
}

impl Builder<'_> {
    fn span(&mut self) -> Span {
        self.n += 1;
        match self.spans.get(self.n % (self.spans.len() + 1)) {
            Some(&(start, end)) => Span { start, end },
            None => Span::default(),
        }
    }

    fn steps(&mut self, block: Block, steps: &[Step], pools: &mut Pools, inverse: bool) {
        for s in steps {
            let span = self.span();
            match *s {
                Step::Op(o, picks) => {
                    let op = Opcode::ALL[o];
                    let args = op
                        .arg_types()
                        .iter()
                        .zip(picks)
                        .map(|(&t, k)| pools.pick(t, k))
                        .collect::<Vec<_>>();
                    let v = self.f.ins_prim(block, op, args, span);
                    pools.add(&self.f, v);
                }
                Step::Const(k, bits) => {
                    let c = match k % 3 {
                        0 => Const::F64(f64::from_bits(bits)),
                        1 => Const::I64(bits as i64),
                        _ => Const::Bool(bits & 1 == 1),
                    };
                    let v = self.f.ins_const(block, c, span);
                    pools.add(&self.f, v);
                }
                Step::Call([a, b]) => {
                    let args = vec![pools.pick(Type::F64, a), pools.pick(Type::I64, b)];
                    let rs = self.f.ins_call(
                        block,
                        FuncId::from_u32(1),
                        args,
                        &[Type::F64, Type::Bool],
                        span,
                    );
                    for r in rs {
                        pools.add(&self.f, r);
                    }
                }
                Step::Inverse(_, _, _) if !inverse => {}
                Step::Inverse(k, bits, a) => {
                    let role = format!("role {k} \"{bits}\"\n");
                    match k % 3 {
                        0 => {
                            let x = f64::from_bits(bits);
                            let domain = match bits % 7 {
                                0 => Domain::Real,
                                1 => Domain::NonzeroReal,
                                2 if !x.is_nan() => Domain::Interval {
                                    lo: -x.abs(),
                                    hi: x.abs(),
                                },
                                3 => Domain::Int,
                                4 => Domain::IntRange {
                                    lo: -((bits >> 40) as i64),
                                    hi: (bits >> 40) as i64,
                                },
                                5 => Domain::Bits { mask: bits },
                                _ => Domain::Bool,
                            };
                            let v = self.f.ins_theta(block, domain, role, span);
                            pools.add(&self.f, v);
                        }
                        1 => {
                            let v = self.f.ins_choice(block, (bits % 5) as u32 + 1, role, span);
                            pools.add(&self.f, v);
                        }
                        _ => {
                            let cond = pools.pick(Type::Bool, a);
                            self.f
                                .ins_void(block, InstKind::Check { cond, reason: role }, span);
                        }
                    }
                }
            }
        }
    }
}

fn callee() -> Function {
    let mut f = Function::new(
        "callee",
        FuncKind::Fn,
        Signature {
            params: vec![Type::F64, Type::I64],
            returns: vec![Type::F64, Type::Bool],
        },
    );
    let entry = f.create_entry();
    let [x, n] = f.blocks[entry].params[..] else {
        unreachable!()
    };
    let nf = f.ins_prim(entry, Opcode::FcvtFromI64, vec![n], Span::default());
    let c = f.ins_prim(entry, Opcode::Flt, vec![x, nf], Span::default());
    f.ins_return(entry, vec![x, c], Span::default());
    f
}

fn build(shape: &Shape) -> Module {
    let kind = if shape.inverse {
        FuncKind::Inverse {
            of: "g".into(),
            outputs: 2,
        }
    } else {
        FuncKind::Fn
    };
    let sig = Signature {
        params: vec![Type::F64, Type::I64, Type::Bool],
        returns: vec![Type::F64, Type::I64],
    };
    let mut b = Builder {
        f: Function::new("f", kind, sig),
        spans: &shape.spans,
        n: 0,
    };
    b.f.param_names = vec!["x".into(), "n".into(), "t".into()];
    let entry = b.f.create_entry();
    let mut pools = Pools::default();
    for v in b.f.blocks[entry].params.clone() {
        pools.add(&b.f, v);
    }
    b.steps(entry, &shape.head, &mut pools, shape.inverse);
    let last = match &shape.arm {
        None => entry,
        Some((steps, k)) => {
            let cond = pools.pick(Type::Bool, *k);
            let arm = b.f.create_block();
            let other = b.f.create_block();
            let p = b.f.append_block_param(other, Type::F64);
            let span = b.span();
            b.f.ins_void(
                entry,
                InstKind::Brif {
                    cond,
                    then_dest: Box::new(BlockCall::new(arm, vec![])),
                    else_dest: Box::new(BlockCall::new(other, vec![pools.pick(Type::F64, *k)])),
                },
                span,
            );
            let mut arm_pools = pools.clone();
            b.steps(arm, steps, &mut arm_pools, shape.inverse);
            let join = b.f.create_block();
            let r = b.f.append_block_param(join, Type::F64);
            let span = b.span();
            b.f.ins_jump(arm, join, vec![arm_pools.pick(Type::F64, *k)], span);
            let span = b.span();
            b.f.ins_jump(other, join, vec![p], span);
            pools.add(&b.f, r);
            join
        }
    };
    let span = b.span();
    let ret = vec![pools.pick(Type::F64, usize::MAX), pools.pick(Type::I64, 7)];
    b.f.ins_return(last, ret, span);
    let mut f = b.f;
    f.compact();
    let mut m = Module::new();
    m.add(f).unwrap();
    m.add(callee()).unwrap();
    m
}

/// The texts the mutation test starts from.
fn seeds() -> Vec<String> {
    let mut texts = vec![
        "function %f(x: f64) -> f64 {\nblock0(v0: f64):\n    v1 = fconst -0.0\n    v2 = fadd v0, v1\n    return v2\n}\n".to_string(),
    ];
    let s = Shape {
        head: vec![
            Step::Op(0, [0, 1]),
            Step::Const(0, 0x7ff0_0000_0000_0001),
            Step::Inverse(0, 2, 0),
            Step::Inverse(1, 3, 0),
            Step::Inverse(2, 3, 0),
            Step::Call([1, 2]),
        ],
        arm: Some((vec![Step::Op(3, [1, 1]), Step::Const(1, 5)], 3)),
        inverse: true,
        spans: vec![(1, 2), (30, 40)],
    };
    texts.push(write_module(&build(&s), &SPANS));
    texts.push(write_module(&build(&s), &PLAIN));
    texts
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Truncate(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
}

const FRAGMENTS: &[&str] = &[
    "v",
    "v0",
    "v999",
    "block",
    "block7",
    "(",
    ")",
    ",",
    ":",
    "=",
    "\"",
    "\\",
    "\n",
    " ",
    "%",
    "@",
    "..",
    ";",
    "-",
    "0",
    "1e999",
    "nan:0x",
    "theta",
    "inverse(",
    "{",
    "}",
    "é",
    "\u{0}",
    "iadd",
    "call %f(",
    "jump block0",
    "brif",
    "return",
    "4294967296",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..6usize).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), prop::sample::select(FRAGMENTS)).prop_map(|(p, s)| Mutation::Insert(p, s)),
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
    ]
}

fn boundary(text: &str, p: usize) -> usize {
    let mut p = p % (text.len() + 1);
    while !text.is_char_boundary(p) {
        p -= 1;
    }
    p
}

fn mutate(text: &str, m: &Mutation) -> String {
    let mut t = text.to_string();
    match *m {
        Mutation::Delete(p, n) => {
            let a = boundary(&t, p);
            let b = boundary(&t, (a + n).min(t.len()));
            t.replace_range(a..b.max(a), "");
        }
        Mutation::Insert(p, s) => {
            let a = boundary(&t, p);
            t.insert_str(a, s);
        }
        Mutation::Truncate(p) => {
            let a = boundary(&t, p);
            t.truncate(a);
        }
        Mutation::DuplicateLine(i) | Mutation::SwapLines(i, _) if t.is_empty() => {
            let _ = i;
        }
        Mutation::DuplicateLine(i) => {
            let mut lines: Vec<&str> = t.lines().collect();
            let i = i % lines.len().max(1);
            if let Some(&l) = lines.get(i) {
                lines.insert(i, l);
            }
            t = lines.join("\n");
        }
        Mutation::SwapLines(i, j) => {
            let mut lines: Vec<&str> = t.lines().collect();
            let n = lines.len().max(1);
            if !lines.is_empty() {
                lines.swap(i % n, j % n);
            }
            t = lines.join("\n");
        }
    }
    t
}

/// Everything that must not panic on a parsed (possibly invalid) module.
fn exercise(module: &Module) {
    let _ = verify_module(module);
    let _ = write_module(module, &SPANS);
    let _ = module_to_dot(module);
    for (id, _) in module.iter() {
        let _ = function_to_dot(module, id);
    }
    let mut compact = module.clone();
    compact.compact_all();
    let _ = verify_module(&compact);
    let _ = write_module(&compact, &PLAIN);
}

/// Random damage to a valid function.
#[derive(Clone, Debug)]
enum Damage {
    ReplaceArg(usize, u32),
    DropInst(usize),
    DuplicateInst(usize),
    ShuffleLayout(usize, usize),
    DuplicateBlock(usize),
    DropBlock(usize),
    AddBlock(u32),
    RetargetBranch(u32),
    ChangeDef(usize, u32),
    ChangeType(usize, u8),
    ChangeCallee(u32),
    AddResult(usize, u32),
    ChangeKind(u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 0..40u32).prop_map(|(i, v)| Damage::ReplaceArg(i, v)),
        any::<usize>().prop_map(Damage::DropInst),
        any::<usize>().prop_map(Damage::DuplicateInst),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::ShuffleLayout(a, b)),
        any::<usize>().prop_map(Damage::DuplicateBlock),
        any::<usize>().prop_map(Damage::DropBlock),
        (0..10u32).prop_map(Damage::AddBlock),
        prop_oneof![0..8u32, Just(u32::MAX - 1)].prop_map(Damage::RetargetBranch),
        (any::<usize>(), 0..40u32).prop_map(|(v, i)| Damage::ChangeDef(v, i)),
        (any::<usize>(), any::<u8>()).prop_map(|(v, t)| Damage::ChangeType(v, t)),
        prop_oneof![0..3u32, Just(u32::MAX - 1)].prop_map(Damage::ChangeCallee),
        (any::<usize>(), 0..40u32).prop_map(|(i, v)| Damage::AddResult(i, v)),
        any::<u8>().prop_map(Damage::ChangeKind),
    ]
}

fn apply(f: &mut Function, d: &Damage) {
    // Not `insts_in_layout`, which expects the layout's blocks to exist.
    let placed: Vec<(Block, Inst)> = f
        .layout
        .iter()
        .filter_map(|&b| f.blocks.get(b).map(|d| (b, d)))
        .flat_map(|(b, d)| d.insts.iter().map(move |&i| (b, i)))
        .filter(|&(_, i)| f.insts.get(i).is_some())
        .collect();
    let pick_inst = |i: usize| placed.get(i % placed.len().max(1)).copied();
    match *d {
        Damage::ReplaceArg(i, v) => {
            if let Some((_, inst)) = pick_inst(i) {
                let mut first = true;
                f.insts[inst].kind.map_args(|a| {
                    if std::mem::take(&mut first) {
                        Value::from_u32(v)
                    } else {
                        a
                    }
                });
            }
        }
        Damage::DropInst(i) => {
            if let Some((b, inst)) = pick_inst(i) {
                f.blocks[b].insts.retain(|&x| x != inst);
            }
        }
        Damage::DuplicateInst(i) => {
            if let Some((b, inst)) = pick_inst(i) {
                f.blocks[b].insts.insert(0, inst);
            }
        }
        Damage::ShuffleLayout(a, b) => {
            let n = f.layout.len();
            if n > 0 {
                f.layout.swap(a % n, b % n);
            }
        }
        Damage::DuplicateBlock(a) => {
            if let Some(&b) = f.layout.get(a % f.layout.len().max(1)) {
                f.layout.push(b);
            }
        }
        Damage::DropBlock(a) => {
            let n = f.layout.len();
            if n > 0 {
                f.layout.remove(a % n);
            }
        }
        Damage::AddBlock(b) => f.layout.push(Block::from_u32(b)),
        Damage::RetargetBranch(b) => {
            for (_, inst) in &placed {
                if let Some(c) = f.insts[*inst].kind.successors_mut().into_iter().next() {
                    c.block = Block::from_u32(b);
                    break;
                }
            }
        }
        Damage::ChangeDef(v, i) => {
            let n = f.values.len();
            if n > 0 {
                let v = Value::from_u32((v % n) as u32);
                f.values[v].def = if i % 2 == 0 {
                    ValueDef::Param(Block::from_u32(i / 4), i)
                } else {
                    ValueDef::Result(Inst::from_u32(i / 2), i % 3)
                };
            }
        }
        Damage::ChangeType(v, t) => {
            let n = f.values.len();
            if n > 0 {
                let v = Value::from_u32((v % n) as u32);
                f.values[v].ty = Type::ALL[t as usize % 3];
            }
        }
        Damage::ChangeCallee(c) => {
            for (_, inst) in &placed {
                if let InstKind::Call { callee, .. } = &mut f.insts[*inst].kind {
                    *callee = FuncId::from_u32(c);
                }
            }
        }
        Damage::AddResult(i, v) => {
            if let Some((_, inst)) = pick_inst(i) {
                f.insts[inst].results.push(Value::from_u32(v));
            }
        }
        Damage::ChangeKind(k) => {
            f.kind = match k % 3 {
                0 => FuncKind::Fn,
                1 => FuncKind::Pgf { of: "g".into() },
                _ => FuncKind::Inverse {
                    of: "g".into(),
                    outputs: k as usize % 5,
                },
            };
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_functions_verify_and_round_trip(shape in shape()) {
        let module = build(&shape);
        if let Err(e) = verify_module(&module) {
            panic!("{e}\n{}", write_module(&module, &PLAIN));
        }
        let text = write_module(&module, &SPANS);
        let parsed = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert!(parsed == module, "parse(write(f)) != f:\n{}", text);
        prop_assert_eq!(write_module(&parsed, &SPANS), text);
        let plain = write_module(&module, &PLAIN);
        let parsed = parse_module(&plain).unwrap_or_else(|e| panic!("{e}\n{plain}"));
        prop_assert_eq!(write_module(&parsed, &PLAIN), plain);
    }

    #[test]
    fn malformed_text_never_panics(
        seed in 0..3usize,
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let mut text = seeds()[seed].clone();
        for m in &mutations {
            text = mutate(&text, m);
        }
        if let Ok(module) = parse_module(&text) {
            exercise(&module);
            // Whatever parses prints back stably.
            let printed = write_module(&module, &SPANS);
            let again = parse_module(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
            prop_assert_eq!(write_module(&again, &SPANS), printed);
        }
    }

    #[test]
    fn damaged_functions_never_panic(
        shape in shape(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let mut module = build(&shape);
        let f = &mut module.functions[FuncId::from_u32(0)];
        for d in &damages {
            apply(f, d);
        }
        exercise(&module);
    }
}
