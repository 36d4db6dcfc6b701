//! Installing a rewritten body: helper functions, their inverse rules, and the IR of a plan.
//!
//! The rewritten form may need three things the IR has no instruction for. Each is a small
//! **helper function** added to the module (names contain a `.`, so they never clash with a
//! user's function), with an inverse rule in the **isolation layer**, an overlay layer that the
//! reorientation puts on top of the stack while it inverts (rules for module functions are looked
//! up by name, so the reorientation inverts a call of a helper with the helper's rule, never
//! through its body):
//!
//! | helper | forward | inverse rule | PGF |
//! |---|---|---|---|
//! | `iso.sq(x)` | `x * x` | `check y ≥ 0` (or NaN); `choice 2` for the sign; `x = ±√y`, settled (an offset θ where ±√y does not pin x: y tiny or subnormal); at y = 0 a choice: x = ±0, or `x = θ·2⁻⁵³⁸` (every \|θ\| < √2 squares to 0); `check x·x ≈ y` | records 1 if x's sign bit is set (so `-0.0` round-trips), and the offset, or at y = 0 the choice and `x·2⁵³⁸`, where the inverse reads them |
//! | `iso.mul(a, b)` | `a * b` | both unknown, y finite and nonzero, and not both with a range where one keeps one sign: `a = θ·√|y|` (θ nonzero), `b = y / a`, `check a·b ≈ y`; anything else: the stack's `fmul` rule (which draws a factor whose partner keeps one sign on y's side) | records `a / √|y|`, or what the `fmul` rule records |
//! | `iso.given.N(e, p)` | `e` | `p` unknown: `p = θ` (its whole type), `e = y`; `p` known: `e = y` | records `p` |
//! | `iso.root.N(x, k…)` | the subterm `T(x, k…)` | `s = θ` real; `x = s` where `T(s, k…) ≈ y`, else `iso.root.N.solve(y, k…, s)` (the root nearest s); `check T(x, k…) ≈ y` | records x |
//!
//! A square could have been `x * x` with a special case in the reorientation for a product of
//! a value with itself, or `pow(x, 2.0)` with the standard `pow` rule; a helper keeps the
//! reorientation untouched, makes the sign choice explicit in the θ schema, and costs one call.
//! `iso.mul` replaces `fmul` where the rewritten form splits a product between two unknown
//! factors: the standard rule reads θ for one factor directly, so θ near 0 (or huge) puts the
//! other factor — and with it the inputs — far out, where the original formula may no longer
//! evaluate to y within the tolerance (`reuse`: x ≈ −y ≈ 10⁵ for θ = 10⁻³); scaled by √|y|,
//! θ's usual magnitudes give factors of comparable size.
//! `given` is how a value is read from θ *before* the rest is inverted without touching the
//! reorientation's walk: the walk goes backwards from the outputs, so an output wrapped in
//! `given(out, p)` is the first thing inverted, and its rule reads `p`. `iso.root.N` is
//! described in [`super::numeric`].

use super::numeric;
use super::plan::Body;
use super::plan::{PKind, Plan};
use pinv_core::ir::{
    Block, BlockCall, Const, Domain, FuncId, FuncKind, Function, InstKind, Module, Opcode,
    Signature, Type, Value,
};
use pinv_core::Span;
use pinv_primitives::rules::f64_arith::fmul_splits_within_ranges;
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::rules::settle::{settle, settle_doc, settle_pgf};
use pinv_primitives::{
    Arg, Callee, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, Stack, ThetaDoc,
};

/// The name of the square helper.
pub const SQ: &str = "iso.sq";
/// The name of the balanced-product helper.
pub const MUL: &str = "iso.mul";

/// Emits `plan` into `func` at `block`, with `args` as the plan's parameters; returns the
/// outputs. `helper` gives the function to call instead for an instruction (every helper
/// instruction has one, except a square, which is otherwise `a · a`; a primitive may).
pub fn emit_plan(
    plan: &Plan,
    func: &mut Function,
    block: Block,
    args: &[Value],
    helper: &dyn Fn(usize, &PKind) -> Option<FuncId>,
    module: &Module,
) -> Vec<Value> {
    let mut vals: Vec<Vec<Value>> = Vec::with_capacity(plan.insts.len());
    for (i, inst) in plan.insts.iter().enumerate() {
        let a: Vec<Value> = inst
            .args
            .iter()
            .map(|v| vals[v.inst as usize][v.idx as usize])
            .collect();
        if !matches!(inst.kind, PKind::Param(_) | PKind::Const(_)) {
            if let Some(f) = helper(i, &inst.kind) {
                vals.push(func.ins_call(block, f, a, &inst.tys, inst.span));
                continue;
            }
        }
        let r = match &inst.kind {
            PKind::Param(p) => vec![args[*p as usize]],
            PKind::Const(c) => vec![func.ins_const(block, *c, inst.span)],
            PKind::Prim(op) => vec![func.ins_prim(block, *op, a, inst.span)],
            PKind::Call(f) => {
                let rets = module.functions[*f].sig.returns.clone();
                func.ins_call(block, *f, a, &rets, inst.span)
            }
            // A square no helper inverts (in a body that is only run forward): `a · a`.
            PKind::Sq => vec![func.ins_prim(block, Opcode::Fmul, vec![a[0], a[0]], inst.span)],
            PKind::Odds => super::odds::emit_forward(func, block, &a, inst.span),
            PKind::Given { .. }
            | PKind::Root(_)
            | PKind::Polar { .. }
            | PKind::Linear { .. }
            | PKind::SumProduct
            | PKind::DivMod
            | PKind::Newton(_)
            | PKind::Wrap
            | PKind::Bits(_)
            | PKind::Affine(_)
            | PKind::LinearRt { .. } => {
                unreachable!("helper instructions are calls of helpers")
            }
        };
        vals.push(r);
    }
    plan.outputs
        .iter()
        .map(|v| vals[v.inst as usize][v.idx as usize])
        .collect()
}

/// A function of `params` returning `returns`, with its entry block.
pub fn new_function(
    name: &str,
    params: Vec<Type>,
    returns: Vec<Type>,
    names: Vec<String>,
    span: Span,
) -> (Function, Block) {
    let mut f = Function::new(name, FuncKind::Fn, Signature { params, returns });
    f.param_names = names;
    f.span = span;
    let entry = f.create_entry();
    (f, entry)
}

pub(super) fn add(module: &mut Module, f: Function) -> FuncId {
    let name = f.name.clone();
    match module.add(f) {
        Ok(id) => id,
        Err(id) => {
            debug_assert!(false, "helper `{name}` added twice");
            id
        }
    }
}

/// A name not yet in `module`: `base.N` for the first free N.
pub(crate) fn fresh(module: &Module, base: &str) -> String {
    (0..)
        .map(|n| format!("{base}.{n}"))
        .find(|name| module.get(name).is_none())
        .expect("a free name")
}

/// A helper of fixed name and body, added with its rule if the module does not have it yet:
/// `params` (name and type each), `returns`, and `body(f, entry, params)` giving the returned
/// values. Returns its id.
pub(super) fn fixed_helper(
    module: &mut Module,
    layer: &mut Layer,
    name: &str,
    params: &[(&str, Type)],
    returns: Vec<Type>,
    body: impl FnOnce(&mut Function, Block, &[Value]) -> Vec<Value>,
    rule: impl InverseRule + 'static,
) -> FuncId {
    if let Some(id) = module.get(name) {
        return id;
    }
    let (mut f, b) = new_function(
        name,
        params.iter().map(|&(_, t)| t).collect(),
        returns,
        params.iter().map(|&(n, _)| n.to_string()).collect(),
        Span::default(),
    );
    let values = f.blocks[b].params.clone();
    let results = body(&mut f, b, &values);
    f.ins_return(b, results, Span::default());
    layer.add(Callee::Function(name.to_string()), rule);
    add(module, f)
}

/// A helper `base.N` with parameters `params` (name and type each) and results `returns`,
/// whose body `body` emits (through an [`Emitter`], so that it can share code with the rule's
/// inverse) from its parameters, added with `rule`. The word solvers' ([`super::bits`],
/// [`super::modular`]) and the run-time linear solver's ([`super::linear_rt`]) helpers are these.
pub(super) fn emitted_helper(
    module: &mut Module,
    layer: &mut Layer,
    base: &str,
    (params, returns): (Vec<(String, Type)>, Vec<Type>),
    span: Span,
    body: impl FnOnce(&mut Emitter<'_>, &[Option<Value>]) -> Vec<Value>,
    rule: impl InverseRule + 'static,
) -> FuncId {
    let name = fresh(module, base);
    let (names, types) = params.into_iter().unzip();
    let (mut f, b) = new_function(&name, types, returns, names, span);
    let ps: Vec<Option<Value>> = f.blocks[b].params.iter().copied().map(Some).collect();
    let mut e = Emitter::new(&mut f, b, pinv_primitives::Mode::Inverse, span);
    let rets = body(&mut e, &ps);
    f.ins_return(b, rets, span);
    layer.add(Callee::Function(name), rule);
    add(module, f)
}

/// The signature of a helper of `inputs` i64 words `u0, u1, …` returning `outputs` words.
pub(super) fn words(inputs: usize, outputs: usize) -> (Vec<(String, Type)>, Vec<Type>) {
    let params = (0..inputs).map(|i| (format!("u{i}"), Type::I64)).collect();
    (params, vec![Type::I64; outputs])
}

/// The values a rule solved, in operand order; an operand left unsolved is a bug of the rule.
pub(super) fn solved(out: Vec<Option<Value>>) -> Result<Vec<Value>, RuleError> {
    out.into_iter()
        .map(|v| v.ok_or_else(|| RuleError::Malformed("an atom left unsolved".to_string())))
        .collect()
}

/// The balanced-product helper, added (with its rule) if the module does not have it yet.
fn product(module: &mut Module, layer: &mut Layer, stack: &Stack) -> FuncId {
    let rule = ProductRule {
        stack: stack.clone(),
    };
    let params = [("a", Type::F64), ("b", Type::F64)];
    let body = |f: &mut Function, b: Block, p: &[Value]| {
        vec![f.ins_prim(b, Opcode::Fmul, vec![p[0], p[1]], Span::default())]
    };
    fixed_helper(module, layer, MUL, &params, vec![Type::F64], body, rule)
}

/// The square helper, added (with its rule) if the module does not have it yet.
pub(super) fn square(module: &mut Module, layer: &mut Layer) -> FuncId {
    let body = |f: &mut Function, b: Block, p: &[Value]| {
        vec![f.ins_prim(b, Opcode::Fmul, vec![p[0], p[0]], Span::default())]
    };
    let params = [("x", Type::F64)];
    fixed_helper(
        module,
        layer,
        SQ,
        &params,
        vec![Type::F64],
        body,
        SquareRule,
    )
}

/// Installs a rewritten body of function `id` of `module`: adds the helpers it needs (and their
/// rules to `layer`) and replaces the body. Returns the body it replaced. `stack` is the stack
/// the reorientation inverts with (the balanced product falls back on its `fmul` rule).
pub fn install(
    body: &Body,
    module: &mut Module,
    id: FuncId,
    layer: &mut Layer,
    stack: &Stack,
) -> Function {
    let original = module.functions[id].clone();
    match body {
        Body::Straight(plan) => {
            let helpers = add_helpers(plan, module, layer, stack);
            let f = &module.functions[id];
            let mut new = Function::new(f.name.clone(), f.kind.clone(), f.sig.clone());
            new.param_names = f.param_names.clone();
            new.span = f.span;
            let entry = new.create_entry();
            let span = f
                .entry()
                .and_then(|b| f.terminator(b))
                .map_or(f.span, |t| f.insts[t].span);
            emit_block(plan, &mut new, entry, &helpers, module, span);
            module.functions[id] = new;
        }
        Body::Blocks { closed, plans } => {
            let mut new = closed.clone();
            for (b, plan) in plans {
                let helpers = add_helpers(plan, module, layer, stack);
                let term = new
                    .terminator(*b)
                    .expect("a rewritten block ends in return, jump or brif");
                let mut kind = new.insts[term].kind.clone();
                let span = new.insts[term].span;
                new.blocks[*b].insts.clear();
                let params = new.blocks[*b].params.clone();
                let helper = |i: usize, _: &PKind| helpers[i];
                let outputs = emit_plan(plan, &mut new, *b, &params, &helper, module);
                match &mut kind {
                    InstKind::Jump { dest } => dest.args = outputs.into(),
                    InstKind::Brif { .. } => {
                        // The plan's outputs are the branch's values, each once.
                        let values = super::plan::branch_values(&kind);
                        let new_value = |v: &mut Value| {
                            if let Some(i) = values.iter().position(|w| w == v) {
                                *v = outputs[i];
                            }
                        };
                        if let InstKind::Brif {
                            cond,
                            then_dest,
                            else_dest,
                        } = &mut kind
                        {
                            new_value(cond);
                            then_dest.args.iter_mut().for_each(new_value);
                            else_dest.args.iter_mut().for_each(new_value);
                        }
                    }
                    _ => {
                        kind = InstKind::Return {
                            args: outputs.into(),
                        }
                    }
                }
                new.ins_void(*b, kind, span);
            }
            new.compact();
            module.functions[id] = new;
        }
    }
    original
}

/// Emits `plan` into the empty entry block `b` of `f` (its parameters are the plan's) and
/// returns.
fn emit_block(
    plan: &Plan,
    f: &mut Function,
    b: Block,
    helpers: &[Option<FuncId>],
    module: &Module,
    span: Span,
) {
    let params = f.blocks[b].params.clone();
    let helper = |i: usize, _: &PKind| helpers[i];
    let outputs = emit_plan(plan, f, b, &params, &helper, module);
    f.ins_return(b, outputs, span);
}

/// Adds the helpers `plan` calls to `module` (their rules to `layer`); returns, per plan
/// instruction, the helper it is a call of.
fn add_helpers(
    plan: &Plan,
    module: &mut Module,
    layer: &mut Layer,
    stack: &Stack,
) -> Vec<Option<FuncId>> {
    let mut helpers: Vec<Option<FuncId>> = vec![None; plan.insts.len()];
    let mut root_ids: Vec<Option<FuncId>> = vec![None; plan.roots.len()];
    let (_, splits) = super::plan::simulate_splits(plan);
    for (i, inst) in plan.insts.iter().enumerate() {
        helpers[i] = match &inst.kind {
            PKind::Prim(Opcode::Fmul) if splits.contains(&(i as u32)) => {
                Some(product(module, layer, stack))
            }
            PKind::Sq => Some(square(module, layer)),
            PKind::Odds => Some(super::odds::install(module, layer)),
            PKind::Given {
                pivot,
                nonzero,
                free,
            } => {
                let name = fresh(module, "iso.given");
                let (ety, pty) = (inst.tys[0], plan.ty(inst.args[1]));
                let (mut f, b) = new_function(
                    &name,
                    vec![ety, pty],
                    vec![ety],
                    vec!["e".to_string(), "p".to_string()],
                    inst.span,
                );
                let e = f.blocks[b].params[0];
                f.ins_return(b, vec![e], inst.span);
                layer.add(
                    Callee::Function(name.clone()),
                    GivenRule {
                        role: if *free {
                            format!("{pivot}: chosen first, the system the others solve uses it")
                        } else {
                            format!("chosen as θ so that the other unknowns isolate: {pivot}")
                        },
                        domain: match (pty, nonzero) {
                            (Type::F64, true) => Domain::NonzeroReal,
                            _ => Domain::all(pty),
                        },
                    },
                );
                Some(add(module, f))
            }
            PKind::Root(r) => {
                if root_ids[*r].is_none() {
                    let spec = &plan.roots[*r];
                    root_ids[*r] = Some(if spec.unknown_ty() == Type::I64 {
                        numeric::install_int_root(module, layer, spec, inst.span)
                    } else {
                        let sq = square(module, layer);
                        numeric::install_root(module, layer, spec, sq, inst.span)
                    });
                }
                root_ids[*r]
            }
            PKind::Polar { angles, nonneg } => {
                Some(super::polar::install(module, layer, inst, angles, nonneg))
            }
            PKind::SumProduct => Some(super::sum_product::install(module, layer)),
            PKind::DivMod => Some(super::divmod::install(module, layer)),
            PKind::Newton(r) => Some(super::newton::install(
                module,
                layer,
                &plan.roots[*r],
                inst.span,
            )),
            PKind::Wrap => Some(super::wrap::install(module, layer)),
            PKind::Bits(spec) => Some(super::bits::install(module, layer, inst, spec)),
            PKind::Affine(spec) => Some(super::modular::install(module, layer, inst, spec)),
            PKind::LinearRt { n } => Some(super::linear_rt::install(module, layer, inst, *n)),
            PKind::Linear {
                rows,
                matrix,
                atoms,
            } => Some(super::linear::install(
                module,
                layer,
                inst,
                *rows,
                matrix,
                atoms.clone(),
            )),
            _ => None,
        };
    }
    helpers
}

// ---------------------------------------------------------------------------------------------
// Rules

fn one_output(outputs: &[Value]) -> Result<Value, RuleError> {
    match outputs {
        &[z] => Ok(z),
        _ => Err(RuleError::Malformed(
            "an isolation helper has one output".to_string(),
        )),
    }
}

const SIGN: &str = "sign of the square root (0: +, 1: −)";
/// Where `±√y` does not pin x (y > 0 but tiny: √y within the settle window of 0, where a whole
/// interval squares to y), x is `±√y` plus this offset. y = 0 has its own reads.
const SQ_OFFSET: &str = "offset from ±√y";
/// At y = 0: whether the root is 0 itself (0) or read as [`ZERO_ROOT_SCALED`] (1).
const ZERO_ROOT: &str = "y is 0: the root is 0 (0) or a tiny number (1)";
const ZERO_ROOT_SCALED: &str = "y is 0: the root, in units of 2⁻⁵³⁸";
/// 2⁻⁵³⁸: roots of 0 are below √2 of it.
const ZERO_ROOT_UNIT: f64 = f64::from_bits((1023 - 538) << 52);

/// The rule of `iso.sq` (see the module docs).
#[derive(Debug)]
pub struct SquareRule;

impl InverseRule for SquareRule {
    fn name(&self) -> &str {
        "sqrt-sign"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 1
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let unknown = !pattern.is_known(0);
        RuleDoc {
            thetas: if unknown {
                vec![
                    ThetaDoc::choice(2, SIGN),
                    settle_doc(SQ_OFFSET),
                    ThetaDoc::choice(2, ZERO_ROOT).when("y is 0"),
                    ThetaDoc::value(Domain::Real, ZERO_ROOT_SCALED)
                        .when("y is 0 and the root is not"),
                ]
            } else {
                Vec::new()
            },
            checks: vec![
                "a square is never negative".to_string(),
                "x · x = y".to_string(),
            ],
            exact: false,
            summary: "x = ±√y".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let z = one_output(outputs)?;
        let x = match args {
            [Arg::Unknown] => {
                let zero = e.f64(0.0);
                let nonneg = e.prim(Opcode::Fge, &[z, zero]);
                let nan = e.prim(Opcode::Fne, &[z, z]);
                let ok = e.prim(Opcode::Bor, &[nonneg, nan]);
                e.check(ok, "y is a square, and a square is never negative")?;
                let c = e.choice(2, SIGN)?;
                let at_zero = e.prim(Opcode::Feq, &[z, zero]);
                e.if_value(
                    at_zero,
                    Type::F64,
                    |e| root_of_zero(e, c),
                    |e| {
                        let d = signed_root(e, z, c)?;
                        settle(e, d, z, &square_of, SQ_OFFSET)
                    },
                )?
            }
            [Arg::Known(k)] => *k,
            _ => return Err(RuleError::Uncovered(Pattern::of(args))),
        };
        let again = e.prim(Opcode::Fmul, &[x, x]);
        e.check_step_equal(again, z, "θ loses precision: x · x is not y")?;
        Ok(vec![x])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if pattern.is_known(0) {
            return Ok(());
        }
        let &[x] = args else {
            return Err(RuleError::Malformed("sq has one operand".to_string()));
        };
        // The square the inverse holds ([`Emitter::replayed`]): its root is settled from it.
        let z = e.replayed(one_output(outputs)?);
        let zero = e.f64(0.0);
        let below = e.prim(Opcode::Flt, &[x, zero]);
        let is_zero = e.prim(Opcode::Feq, &[x, zero]);
        let one = e.f64(1.0);
        let inv = e.prim(Opcode::Fdiv, &[one, x]);
        let neg_zero = e.prim(Opcode::Flt, &[inv, zero]);
        let neg_zero = e.prim(Opcode::Band, &[is_zero, neg_zero]);
        let negative = e.prim(Opcode::Bor, &[below, neg_zero]);
        let c = e.prim(Opcode::BoolToI64, &[negative]);
        e.record(c, SIGN)?;
        let at_zero = e.prim(Opcode::Feq, &[z, zero]);
        e.branch(
            at_zero,
            |e| {
                // The root is 0 (choice 0), or x · 2⁵³⁸ (exact: a power of two, and x is at
                // most 2⁻⁵³⁸·√2, far from overflow).
                let nonzero = e.prim(Opcode::Fne, &[x, zero]);
                let k = e.prim(Opcode::BoolToI64, &[nonzero]);
                e.record(k, ZERO_ROOT)?;
                e.branch(
                    nonzero,
                    |e| {
                        let up = e.f64(1.0 / ZERO_ROOT_UNIT);
                        let t = e.prim(Opcode::Fmul, &[x, up]);
                        e.record(t, ZERO_ROOT_SCALED)
                    },
                    |_| Ok(()),
                )
            },
            |e| {
                // The same candidate the inverse settles, from the forward square.
                let d = signed_root(e, z, c)?;
                settle_pgf(e, d, z, x, &square_of, SQ_OFFSET)
            },
        )
    }
}

/// The root of a square that is 0: a whole interval, |x| < 2⁻⁵³⁸·√2, squares to 0 (x² is below
/// half the smallest subnormal). θ chooses 0 itself (choice 0, with the sign choice giving ±0),
/// which is a root whatever the rest of the program needs (an integer, say); or `t · 2⁻⁵³⁸`
/// with t a real θ, which is a root for every |t| < √2, most of what the real sampler draws.
fn root_of_zero(e: &mut Emitter<'_>, sign: Value) -> Result<Value, RuleError> {
    let k = e.choice(2, ZERO_ROOT)?;
    let zero_i = e.i64(0);
    let exactly = e.prim(Opcode::Ieq, &[k, zero_i]);
    e.if_value(
        exactly,
        Type::F64,
        |e| {
            let plus = e.prim(Opcode::Ieq, &[sign, zero_i]);
            let pz = e.f64(0.0);
            let nz = e.f64(-0.0);
            e.select(plus, pz, nz)
        },
        |e| {
            let t = e.theta(Domain::Real, ZERO_ROOT_SCALED)?;
            let unit = e.f64(ZERO_ROOT_UNIT);
            Ok(e.prim(Opcode::Fmul, &[t, unit]))
        },
    )
}

/// `x · x`, the forward function a square's root is settled against.
fn square_of(e: &mut Emitter<'_>, x: Value) -> Value {
    e.prim(Opcode::Fmul, &[x, x])
}

/// `√y` for sign choice 0, `−√y` for 1.
fn signed_root(e: &mut Emitter<'_>, z: Value, c: Value) -> Result<Value, RuleError> {
    let r = e.prim(Opcode::Sqrt, &[z]);
    let neg = e.prim(Opcode::Fneg, &[r]);
    let zero_i = e.i64(0);
    let plus = e.prim(Opcode::Ieq, &[c, zero_i]);
    e.select(plus, r, neg)
}

/// The rule of an `iso.given.N` helper (see the module docs).
#[derive(Debug)]
pub struct GivenRule {
    pub role: String,
    /// The θ domain of the value read (its whole type, or the nonzero reals where zero would
    /// make the rest singular).
    pub domain: Domain,
}

impl InverseRule for GivenRule {
    fn name(&self) -> &str {
        "theta-first"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: if pattern.is_known(1) {
                Vec::new()
            } else {
                vec![ThetaDoc::value(self.domain, &self.role)]
            },
            checks: if pattern.is_known(0) {
                vec!["the known value is the output".to_string()]
            } else {
                Vec::new()
            },
            exact: true,
            summary: "p = θ, then the rest with p known".to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let z = one_output(outputs)?;
        let [a, p] = args else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        let a = match a {
            Arg::Unknown => z,
            Arg::Known(k) => {
                e.check_equal(*k, z, "the known value is not the output")?;
                *k
            }
        };
        let p = match p {
            Arg::Unknown => e.theta(self.domain, &self.role)?,
            Arg::Known(k) => *k,
        };
        Ok(vec![a, p])
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if !pattern.is_known(1) {
            e.record(args[1], &self.role)?;
        }
        // The inverse passes its output on as `e`: what it holds there (the original's y,
        // where the isolation rewrote the function) is what the steps solving `e` start from.
        let held = e.replayed(one_output(outputs)?);
        e.note_replay(args[0], held);
        Ok(())
    }
}

/// The rule of an `iso.root.N` helper: see [`super::numeric`].
#[derive(Debug)]
pub struct RootRule {
    pub body: String,
    /// The term as the program writes it, where `body` is a rewrite of it
    /// ([`RootSpec::written`](super::plan::RootSpec::written)): a start point it takes to y is
    /// a root too.
    pub written: Option<String>,
    pub solve: String,
    pub role: String,
    /// The unknown's type: f64 (a real root) or i64 (an integer one).
    pub ty: Type,
}

impl RootRule {
    /// Whether the term at `at` (x, k…) is `z` within the tolerance, as rewritten or as written.
    fn gives(&self, e: &mut Emitter<'_>, at: &[Value], z: Value) -> Result<Value, RuleError> {
        let t = e.call(&self.body, at)?[0];
        let close = e.close(t, z);
        let Some(written) = &self.written else {
            return Ok(close);
        };
        // Only where the rewrite's value is not y: most calls never compute the second term.
        let gives = e.if_else(
            close,
            &[Type::Bool],
            |e| Ok(vec![e.konst(Const::Bool(true))]),
            |e| {
                let w = e.call(written, at)?[0];
                Ok(vec![e.close(w, z)])
            },
        )?;
        Ok(gives[0])
    }
}

impl InverseRule for RootRule {
    fn name(&self) -> &str {
        "numeric-root"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() >= 1 && !pattern.is_known(0) && pattern.unknowns() == 1
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: vec![ThetaDoc::value(Domain::all(self.ty), &self.role)],
            checks: vec![
                "the equation has a real root in the scanned range".to_string(),
                "T(x) = y at the root found".to_string(),
            ],
            exact: false,
            summary: "x = θ where T(θ) = y, else the real root nearest θ (scanning and bisection)"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let z = one_output(outputs)?;
        let ks: Option<Vec<Value>> = args[1..].iter().map(Arg::known).collect();
        let Some(ks) = ks else {
            return Err(RuleError::Uncovered(Pattern::of(args)));
        };
        let s = e.theta(Domain::all(self.ty), &self.role)?;
        let mut at_s = vec![s];
        at_s.extend(ks.iter().copied());
        let is_root = self.gives(e, &at_s, z)?;
        let x = e.if_else(
            is_root,
            &[self.ty],
            |_| Ok(vec![s]),
            |e| {
                let mut call = vec![z];
                call.extend(ks.iter().copied());
                call.push(s);
                e.call(&self.solve, &call)
            },
        )?[0];
        // Only where step checks are written: `gives` emits calls and a branch.
        if e.writes_step_checks() {
            let mut again = vec![x];
            again.extend(ks.iter().copied());
            let gives = self.gives(e, &again, z)?;
            e.check_step(gives, "the root found does not give the output")?;
        }
        let mut out = vec![x];
        out.extend(ks);
        Ok(out)
    }

    /// θ is x itself: the inverse returns its start point unchanged where it is a root.
    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        _pattern: &Pattern,
    ) -> Result<(), RuleError> {
        e.record(args[0], &self.role)
    }
}

const SPLIT: &str = "left factor ÷ √|y| (a balanced split of the product)";

/// The rule of `iso.mul` (see the module docs): with both factors unknown and `y` finite and
/// nonzero, `a = θ·√|y|`, `b = y / a`; everything else is the stack's `fmul` rule, and so is a
/// product whose factors both have a range, one keeping one sign, which that rule draws so
/// that every θ gives a product of y ([`fmul_splits_within_ranges`]; `v² · sin(2a)`: 31% of θ
/// accepted with the balanced split).
#[derive(Debug)]
pub struct ProductRule {
    pub stack: Stack,
}

impl ProductRule {
    fn fallback(&self, pattern: &Pattern) -> Result<std::sync::Arc<dyn InverseRule>, RuleError> {
        self.stack
            .lookup(&Callee::Prim(Opcode::Fmul), pattern)
            .found
            .map(|f| f.rule)
            .ok_or_else(|| RuleError::Uncovered(pattern.clone()))
    }

    /// `√|y|`, and whether it is finite and nonzero.
    fn scale(e: &mut Emitter<'_>, z: Value) -> (Value, Value) {
        let az = e.prim(Opcode::Fabs, &[z]);
        let s = e.prim(Opcode::Sqrt, &[az]);
        let zero = e.f64(0.0);
        let inf = e.f64(f64::INFINITY);
        let pos = e.prim(Opcode::Fgt, &[s, zero]);
        let fin = e.prim(Opcode::Flt, &[s, inf]);
        (s, e.prim(Opcode::Band, &[pos, fin]))
    }
}

impl InverseRule for ProductRule {
    fn name(&self) -> &str {
        "balanced-split"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == 2
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        let mut doc = self
            .fallback(pattern)
            .map(|r| r.doc(pattern))
            .unwrap_or_else(|_| RuleDoc {
                thetas: Vec::new(),
                checks: Vec::new(),
                exact: false,
                summary: String::new(),
            });
        if pattern.unknowns() == 2 {
            for t in &mut doc.thetas {
                t.when = Some(match &t.when {
                    Some(w) => format!("y is 0 or not finite, and {w}"),
                    None => "y is 0 or not finite".to_string(),
                });
            }
            doc.thetas.insert(
                0,
                ThetaDoc::value(Domain::NonzeroReal, SPLIT).when("y is finite and nonzero"),
            );
            doc.summary = format!("a = θ·√|y|, b = y / a; else {}", doc.summary);
        }
        doc
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let pattern = Pattern::of(args);
        let fallback = self.fallback(&pattern)?;
        if pattern.unknowns() < 2 || fmul_splits_within_ranges(e) {
            return fallback.emit_inverse(e, outputs, args);
        }
        let z = one_output(outputs)?;
        let (s, ok) = Self::scale(e, z);
        e.if_else(
            ok,
            &[Type::F64, Type::F64],
            |e| {
                let t = e.theta(Domain::NonzeroReal, SPLIT)?;
                let a = e.prim(Opcode::Fmul, &[t, s]);
                let b = e.prim(Opcode::Fdiv, &[z, a]);
                let again = e.prim(Opcode::Fmul, &[a, b]);
                e.check_step_equal(again, z, "θ loses precision: a · b is not y")?;
                Ok(vec![a, b])
            },
            |e| fallback.emit_inverse(e, outputs, args),
        )
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        let fallback = self.fallback(pattern)?;
        if pattern.unknowns() < 2 || fmul_splits_within_ranges(e) {
            return fallback.emit_pgf(e, outputs, args, pattern);
        }
        // From the y the inverse holds, as it does; the factors it then holds are what the
        // steps solving them start from (`θ·√|y|` may be an ulp from the forward factor).
        let z = e.replayed(one_output(outputs)?);
        let (s, ok) = Self::scale(e, z);
        let held = e.if_else(
            ok,
            &[Type::F64, Type::F64],
            |e| {
                let t = e.prim(Opcode::Fdiv, &[args[0], s]);
                e.record(t, SPLIT)?;
                let a = e.prim(Opcode::Fmul, &[t, s]);
                let b = e.prim(Opcode::Fdiv, &[z, a]);
                Ok(vec![a, b])
            },
            |e| {
                fallback.emit_pgf(e, outputs, args, pattern)?;
                Ok(vec![args[0], args[1]])
            },
        )?;
        e.note_replay(args[0], held[0]);
        e.note_replay(args[1], held[1]);
        Ok(())
    }
}

/// A function being built by a solver, one block at a time: the generated loops of numeric
/// roots and Newton's method.
pub(super) struct Fb {
    pub f: Function,
    pub block: Block,
    pub span: Span,
}

impl Fb {
    pub(super) fn c(&mut self, x: f64) -> Value {
        self.f.ins_const(self.block, Const::F64(x), self.span)
    }
    pub(super) fn ci(&mut self, x: i64) -> Value {
        self.f.ins_const(self.block, Const::I64(x), self.span)
    }
    pub(super) fn op(&mut self, op: Opcode, args: &[Value]) -> Value {
        self.f.ins_prim(self.block, op, args.to_vec(), self.span)
    }
    pub(super) fn call(&mut self, f: FuncId, args: &[Value]) -> Value {
        self.calls(f, args, 1)[0]
    }
    /// A call with one result of type `ty`.
    pub(super) fn call_as(&mut self, f: FuncId, args: &[Value], ty: Type) -> Value {
        self.f
            .ins_call(self.block, f, args.to_vec(), &[ty], self.span)[0]
    }
    /// A call with `k` f64 results.
    pub(super) fn calls(&mut self, f: FuncId, args: &[Value], k: usize) -> Vec<Value> {
        self.f
            .ins_call(self.block, f, args.to_vec(), &vec![Type::F64; k], self.span)
    }
    pub(super) fn new_block(&mut self, params: &[Type]) -> (Block, Vec<Value>) {
        let b = self.f.create_block();
        let ps = params
            .iter()
            .map(|&t| self.f.append_block_param(b, t))
            .collect();
        (b, ps)
    }
    pub(super) fn jump(&mut self, to: Block, args: &[Value]) {
        self.f.ins_jump(self.block, to, args.to_vec(), self.span);
    }
    pub(super) fn brif(&mut self, c: Value, t: (Block, &[Value]), e: (Block, &[Value])) {
        self.f.ins_void(
            self.block,
            InstKind::Brif {
                cond: c,
                then_dest: Box::new(BlockCall::new(t.0, t.1.to_vec())),
                else_dest: Box::new(BlockCall::new(e.0, e.1.to_vec())),
            },
            self.span,
        );
    }
    pub(super) fn ret(&mut self, v: Value) {
        self.f.ins_return(self.block, vec![v], self.span);
    }
    pub(super) fn fail(&mut self, reason: &str) {
        self.f.ins_void(
            self.block,
            InstKind::Fail {
                reason: reason.to_string(),
            },
            self.span,
        );
    }
    pub(super) fn at(&mut self, b: Block) {
        self.block = b;
    }
}
