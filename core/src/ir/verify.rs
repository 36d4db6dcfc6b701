//! The IR verifier.
//!
//! Every pass that builds or rewrites IR (lowering, reorientation, simplification) should leave
//! functions that pass it, and the interpreter and the backend may assume what it checks. An error
//! names the function and the offending block, instruction (printed) or value, and explains.
//!
//! # Invariants checked
//!
//! For each function, in this order (the first that fails is reported):
//!
//! 1. **Kind**: an `inverse` has at most as many outputs as parameters.
//! 2. **Layout**: the function has at least one block; every block of the layout exists and appears
//!    in it once.
//! 3. **Instructions**: every instruction of a layout block exists and belongs to exactly one
//!    block (once). Every block is non-empty and ends with exactly one terminator (`jump`,
//!    `brif`, `return`, `fail`), with no terminator before the end.
//! 4. **Definitions**: every block parameter and instruction result exists, is defined once, and its
//!    `ValueData::def` agrees with where it is defined (block and index, or instruction and index).
//! 5. **Entry block**: its parameters match the signature's parameters, in number and type.
//! 6. **Each instruction**:
//!    - *Results* are as many and of the types the instruction defines: a primitive, its opcode's
//!      result type; a `call`, the callee's returns; a `theta`, its domain's type; a `choice`, one
//!      `i64`; a constant, the constant's type; `check` and terminators, none.
//!    - *Operands* exist, are defined in a layout block, and are as many and of the types the
//!      instruction takes: a primitive, its opcode's operand types; a `call`, the callee's
//!      parameters; the condition of `check` and `brif`, `bool`; `return`, the signature's returns;
//!      a branch's arguments, the parameters of its target block.
//!    - *Callees* exist in the module; *branch targets* exist and are in the layout.
//!    - *Inverse-only* instructions (`theta`, `choice`, `check`) appear only in inverse functions
//!      (declared or generated), never in `fn` or `pgf` functions; `record` appears only in
//!      generated PGFs.
//!    - A `choice` has `n >= 1`; a `theta` domain is not empty (`lo <= hi`, no NaN bound).
//! 7. **Reachability**: every layout block is reachable from the entry block.
//! 8. **SSA dominance**: every use is dominated by its definition. A block's parameters dominate
//!    the block; within a block a definition precedes its uses; across blocks the defining block
//!    strictly dominates the using block (dominators by Cooper, Harvey and Kennedy, "A Simple,
//!    Fast Dominance Algorithm"). A branch argument is a use at the branch.

use super::dominators::DomTree;
use super::write::{write_block_header, write_inst};
use super::{
    Block, Domain, FuncId, FuncKind, Function, Inst, InstKind, Module, Type, Value, ValueDef,
};
use cranelift_entity::SecondaryMap;
use std::fmt;

/// The entity an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entity {
    /// The function as a whole (its signature, kind or layout).
    Function,
    Block(Block),
    Inst(Inst),
    Value(Value),
}

/// An IR invariant that does not hold: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct VerifyError {
    /// The module-level name of the function.
    pub function: String,
    pub entity: Entity,
    /// The instruction (or block header) in the text form, when the error is about one.
    pub text: Option<String>,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid IR in function %{}", self.function)?;
        match self.entity {
            Entity::Function => {}
            // The block's header is in `text`, but the name says enough.
            Entity::Block(b) => write!(f, ", {b}")?,
            Entity::Inst(i) => {
                write!(f, ", {i}")?;
                if let Some(text) = &self.text {
                    write!(f, " `{text}`")?;
                }
            }
            Entity::Value(v) => write!(f, ", {v}")?,
        }
        write!(f, ": {}", self.message)
    }
}

type Result<T = ()> = std::result::Result<T, VerifyError>;

/// Verifies every function of a module, in id order.
pub fn verify_module(module: &Module) -> Result {
    for (id, _) in module.iter() {
        verify_function(module, id)?;
    }
    Ok(())
}

/// Verifies one function of a module.
pub fn verify_function(module: &Module, id: FuncId) -> Result {
    match module.functions.get(id) {
        Some(func) => verify_function_in(module, func),
        None => Err(VerifyError {
            function: id.to_string(),
            entity: Entity::Function,
            text: None,
            message: format!("{id} is not a function of the module"),
        }),
    }
}

/// Verifies a function that need not be in `module` (for instance one being built); `module`
/// provides the callees.
pub fn verify_function_in(module: &Module, func: &Function) -> Result {
    let mut v = Verifier {
        module,
        func,
        inst_block: SecondaryMap::with_capacity(func.insts.len()),
        inst_pos: SecondaryMap::with_capacity(func.insts.len()),
        defined: SecondaryMap::with_capacity(func.values.len()),
        in_layout: SecondaryMap::with_capacity(func.blocks.len()),
    };
    v.kind()?;
    v.layout()?;
    v.placement()?;
    v.definitions()?;
    v.entry()?;
    for &block in &func.layout {
        for &inst in &func.blocks[block].insts {
            v.inst(inst)?;
        }
    }
    let doms = v.reachability_and_dominators()?;
    v.dominance(&doms)
}

struct Verifier<'a> {
    module: &'a Module,
    func: &'a Function,
    /// The block of each placed instruction.
    inst_block: SecondaryMap<Inst, Option<Block>>,
    /// The index of each placed instruction in its block.
    inst_pos: SecondaryMap<Inst, usize>,
    /// Whether a value is defined in a layout block.
    defined: SecondaryMap<Value, bool>,
    in_layout: SecondaryMap<Block, bool>,
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// What an instruction is, for error messages (formatted only when there is an error).
type What<'a> = &'a dyn Fn() -> String;

fn type_list(types: &[Type]) -> String {
    let names: Vec<_> = types.iter().map(|t| t.name()).collect();
    format!("({})", names.join(", "))
}

impl<'a> Verifier<'a> {
    fn error(&self, entity: Entity, message: String) -> VerifyError {
        let text = match entity {
            Entity::Inst(i) if self.func.insts.get(i).is_some() => {
                Some(write_inst(self.module, self.func, i))
            }
            Entity::Block(b) if self.func.blocks.get(b).is_some() => {
                Some(write_block_header(self.func, b))
            }
            _ => None,
        };
        VerifyError {
            function: self.func.name.clone(),
            entity,
            text,
            message,
        }
    }

    fn fail<T>(&self, entity: Entity, message: impl Into<String>) -> Result<T> {
        Err(self.error(entity, message.into()))
    }

    // ---- 1. kind

    fn kind(&self) -> Result {
        if let FuncKind::Inverse { outputs, .. } = self.func.kind {
            let n = self.func.sig.params.len();
            if outputs > n {
                return self.fail(
                    Entity::Function,
                    format!("an inverse with {outputs} outputs has only {n} parameters"),
                );
            }
        }
        Ok(())
    }

    // ---- 2. layout

    fn layout(&mut self) -> Result {
        let func = self.func;
        if func.layout.is_empty() {
            return self.fail(
                Entity::Function,
                "the function has no blocks (no entry block)",
            );
        }
        for &block in &func.layout {
            if func.blocks.get(block).is_none() {
                return self.fail(
                    Entity::Block(block),
                    format!("{block} is in the layout but does not exist"),
                );
            }
            if std::mem::replace(&mut self.in_layout[block], true) {
                return self.fail(
                    Entity::Block(block),
                    format!("{block} appears more than once in the layout"),
                );
            }
        }
        Ok(())
    }

    // ---- 3. placement of instructions and terminators

    fn placement(&mut self) -> Result {
        let func = self.func;
        for &block in &func.layout {
            let insts = &func.blocks[block].insts;
            if insts.is_empty() {
                return self.fail(
                    Entity::Block(block),
                    "the block is empty; it must end with a terminator",
                );
            }
            for (pos, &inst) in insts.iter().enumerate() {
                let Some(data) = func.insts.get(inst) else {
                    return self.fail(
                        Entity::Block(block),
                        format!("{inst} is listed in the block but does not exist"),
                    );
                };
                if let Some(other) = self.inst_block[inst] {
                    return self.fail(
                        Entity::Inst(inst),
                        format!("the instruction is placed twice, in {other} and in {block}"),
                    );
                }
                self.inst_block[inst] = Some(block);
                self.inst_pos[inst] = pos;
                let last = pos + 1 == insts.len();
                match (data.kind.is_terminator(), last) {
                    (true, false) => {
                        return self.fail(
                            Entity::Inst(inst),
                            format!("a terminator in the middle of {block}; it must be the last instruction"),
                        )
                    }
                    (false, true) => {
                        return self.fail(
                            Entity::Inst(inst),
                            format!("{block} does not end with a terminator (`jump`, `brif`, `return` or `fail`)"),
                        )
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    // ---- 4. definitions

    /// `v` is defined at `def`, by `by` (the block or the instruction).
    fn define(&mut self, v: Value, def: ValueDef, by: Entity) -> Result {
        let Some(data) = self.func.values.get(v) else {
            return self.fail(by, format!("{v} is defined here but does not exist"));
        };
        let entity = Entity::Value(v);
        if std::mem::replace(&mut self.defined[v], true) {
            return self.fail(entity, format!("{v} is defined more than once"));
        }
        if data.def != def {
            let actual = match data.def {
                ValueDef::Param(b, i) => format!("parameter {i} of {b}"),
                ValueDef::Result(inst, i) => format!("result {i} of {inst}"),
            };
            let here = match def {
                ValueDef::Param(b, i) => format!("parameter {i} of {b}"),
                ValueDef::Result(inst, i) => format!("result {i} of {inst}"),
            };
            return self.fail(
                entity,
                format!("{v} is {here}, but its ValueData::def says {actual}"),
            );
        }
        Ok(())
    }

    fn definitions(&mut self) -> Result {
        let func = self.func;
        for &block in &func.layout {
            for (i, &p) in func.blocks[block].params.iter().enumerate() {
                self.define(p, ValueDef::Param(block, i as u32), Entity::Block(block))?;
            }
            for &inst in &func.blocks[block].insts {
                for (i, &r) in func.insts[inst].results.iter().enumerate() {
                    self.define(r, ValueDef::Result(inst, i as u32), Entity::Inst(inst))?;
                }
            }
        }
        Ok(())
    }

    // ---- 5. the entry block

    fn entry(&self) -> Result {
        let func = self.func;
        let entry = func.layout[0];
        let params = &func.blocks[entry].params;
        let types: Vec<Type> = params.iter().map(|&p| func.values[p].ty).collect();
        if types != func.sig.params {
            return self.fail(
                Entity::Block(entry),
                format!(
                    "the entry block's parameters {} do not match the signature's parameters {}",
                    type_list(&types),
                    type_list(&func.sig.params)
                ),
            );
        }
        Ok(())
    }

    // ---- 6. each instruction

    /// The type of an operand, which must be a value defined in the layout.
    fn operand(&self, inst: Inst, v: Value) -> Result<Type> {
        match self.func.values.get(v) {
            Some(data) if self.defined[v] => Ok(data.ty),
            _ => self.fail(
                Entity::Inst(inst),
                format!("{v} is used but not defined in the function"),
            ),
        }
    }

    /// Checks operands against expected types: `what` describes the operation for messages (it
    /// is only formatted when there is an error to report).
    fn operands(&self, inst: Inst, args: &[Value], expected: &[Type], what: What<'_>) -> Result {
        for &a in args {
            self.operand(inst, a)?;
        }
        if args.len() != expected.len() {
            return self.fail(
                Entity::Inst(inst),
                format!(
                    "{} takes {} but is given {}",
                    what(),
                    plural(expected.len(), "operand"),
                    args.len()
                ),
            );
        }
        for (i, (&a, &ty)) in args.iter().zip(expected).enumerate() {
            let found = self.operand(inst, a)?;
            if found != ty {
                return self.fail(
                    Entity::Inst(inst),
                    format!("operand {i} ({a}) of {} is {found}, expected {ty}", what()),
                );
            }
        }
        Ok(())
    }

    fn results(&self, inst: Inst, expected: &[Type], what: What<'_>) -> Result {
        let results = &self.func.insts[inst].results;
        if results.len() != expected.len() {
            return self.fail(
                Entity::Inst(inst),
                format!(
                    "{} defines {} but the instruction has {}",
                    what(),
                    plural(expected.len(), "result"),
                    results.len()
                ),
            );
        }
        for (&r, &ty) in results.iter().zip(expected) {
            let found = self.func.values[r].ty;
            if found != ty {
                return self.fail(
                    Entity::Inst(inst),
                    format!("result {r} has type {found}, but {} produces {ty}", what()),
                );
            }
        }
        Ok(())
    }

    fn branch(&self, inst: Inst, call: &super::BlockCall) -> Result {
        let target = call.block;
        if self.func.blocks.get(target).is_none() || !self.in_layout[target] {
            return self.fail(
                Entity::Inst(inst),
                format!("the branch target {target} is not a block of the layout"),
            );
        }
        let params: Vec<Type> = self.func.blocks[target]
            .params
            .iter()
            .map(|&p| self.func.values[p].ty)
            .collect();
        let what = || format!("the branch to {target} {}", type_list(&params));
        for &a in &call.args {
            self.operand(inst, a)?;
        }
        if call.args.len() != params.len() {
            return self.fail(
                Entity::Inst(inst),
                format!(
                    "the branch passes {} to {target}, which has {}",
                    plural(call.args.len(), "argument"),
                    plural(params.len(), "parameter")
                ),
            );
        }
        self.operands(inst, &call.args, &params, &what)
    }

    fn cond(&self, inst: Inst, cond: Value, what: &str) -> Result {
        let ty = self.operand(inst, cond)?;
        if ty != Type::Bool {
            return self.fail(
                Entity::Inst(inst),
                format!("the condition {cond} of `{what}` is {ty}, expected bool"),
            );
        }
        Ok(())
    }

    fn inst(&self, inst: Inst) -> Result {
        let func = self.func;
        let kind = &func.insts[inst].kind;
        if kind.is_theta_related() {
            let name = match kind {
                InstKind::Theta(_) => "theta",
                InstKind::Choice { .. } => "choice",
                InstKind::Record { .. } => "record",
                InstKind::Segment(_) => "segment",
                _ => "check",
            };
            let writes = matches!(kind, InstKind::Record { .. } | InstKind::Segment(_));
            let allowed = match (&func.kind, kind) {
                (FuncKind::GeneratedPgf { .. }, _) if writes => true,
                _ if writes => false,
                (FuncKind::Inverse { .. } | FuncKind::GeneratedInverse { .. }, _) => true,
                _ => false,
            };
            if !allowed {
                let here = match func.kind {
                    FuncKind::Fn => "a `fn`",
                    FuncKind::Pgf { .. } => "a `pgf`",
                    FuncKind::Inverse { .. } => "a declared inverse",
                    FuncKind::GeneratedInverse { .. } => "a generated inverse",
                    FuncKind::GeneratedPgf { .. } => "a generated PGF",
                };
                let only = if writes {
                    "generated PGFs"
                } else {
                    "inverse functions"
                };
                return self.fail(
                    Entity::Inst(inst),
                    format!("`{name}` is only allowed in {only}, and this is {here}"),
                );
            }
        }
        match kind {
            InstKind::Const(c) => self.results(inst, &[c.ty()], &|| "a constant".into()),
            InstKind::Prim { op, args } => {
                let what = || format!("`{}`", op.name());
                self.results(inst, &[op.result_type()], &what)?;
                self.operands(inst, args, op.arg_types(), &what)
            }
            InstKind::Call { callee, args } => {
                let Some(target) = self.module.functions.get(*callee) else {
                    return self.fail(
                        Entity::Inst(inst),
                        format!("the callee {callee} is not a function of the module"),
                    );
                };
                let what = || format!("`call %{}`", target.name);
                self.results(inst, &target.sig.returns, &what)?;
                self.operands(inst, args, &target.sig.params, &what)
            }
            InstKind::Theta(read) => {
                let crate::ir::ThetaRead { domain, within, .. } = &**read;
                if let Some([lo, hi]) = within {
                    if !domain.can_narrow() {
                        return self.fail(
                            Entity::Inst(inst),
                            format!("the theta domain {domain} cannot be narrowed with `within`"),
                        );
                    }
                    let ty = domain.ty();
                    self.operands(inst, &[*lo, *hi], &[ty, ty], &|| {
                        format!("`theta {domain} within`")
                    })?;
                }
                let empty = match *domain {
                    Domain::Interval { lo, hi } | Domain::RealWithin { lo, hi } => {
                        lo.is_nan() || hi.is_nan() || lo > hi
                    }
                    Domain::IntRange { lo, hi } => lo > hi,
                    _ => false,
                };
                if empty {
                    return self.fail(
                        Entity::Inst(inst),
                        format!("the theta domain {domain} is empty"),
                    );
                }
                self.results(inst, &[domain.ty()], &|| format!("`theta {domain}`"))
            }
            InstKind::Choice { n, .. } => {
                if *n == 0 {
                    return self.fail(
                        Entity::Inst(inst),
                        "`choice 0` has no alternatives; n must be at least 1",
                    );
                }
                self.results(inst, &[Type::I64], &|| "`choice`".into())
            }
            InstKind::Check { cond, .. } => {
                self.results(inst, &[], &|| "`check`".into())?;
                self.cond(inst, *cond, "check")
            }
            InstKind::Record { value, .. } => {
                self.results(inst, &[], &|| "`record`".into())?;
                self.operand(inst, *value).map(|_| ())
            }
            InstKind::Segment(_) => self.results(inst, &[], &|| "`segment`".into()),
            InstKind::Jump { dest } => {
                self.results(inst, &[], &|| "`jump`".into())?;
                self.branch(inst, dest)
            }
            InstKind::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                self.results(inst, &[], &|| "`brif`".into())?;
                self.cond(inst, *cond, "brif")?;
                self.branch(inst, then_dest)?;
                self.branch(inst, else_dest)
            }
            InstKind::Return { args } => {
                self.results(inst, &[], &|| "`return`".into())?;
                let what = || {
                    format!(
                        "`return` in a function returning {}",
                        type_list(&func.sig.returns)
                    )
                };
                self.operands(inst, args, &func.sig.returns, &what)
            }
            InstKind::Fail { .. } => self.results(inst, &[], &|| "`fail`".into()),
        }
    }

    // ---- 7. reachability, and dominators

    fn successors(&self, block: Block) -> Vec<Block> {
        let last = *self.func.blocks[block]
            .insts
            .last()
            .expect("blocks are non-empty (checked)");
        self.func.insts[last]
            .kind
            .successors()
            .iter()
            .map(|c| c.block)
            .collect()
    }

    fn reachability_and_dominators(&self) -> Result<DomTree> {
        let func = self.func;
        let entry = func.layout[0];
        // Reverse postorder by an iterative depth-first search.
        // Each block's successors, computed once.
        let mut succs: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        for &block in &func.layout {
            succs[block] = self.successors(block);
        }
        let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut postorder = Vec::new();
        let mut stack = vec![(entry, 0usize)];
        visited[entry] = true;
        while let Some(&mut (block, ref mut next)) = stack.last_mut() {
            if let Some(&s) = succs[block].get(*next) {
                *next += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(block);
                stack.pop();
            }
        }
        for &block in &func.layout {
            if !visited[block] {
                return self.fail(
                    Entity::Block(block),
                    format!("{block} is not reachable from the entry block {entry}"),
                );
            }
        }
        Ok(DomTree::from_postorder(postorder, |b| succs[b].clone()))
    }

    // ---- 8. dominance

    /// Where a value is defined: its block, and the index of its instruction (None for a block
    /// parameter).
    fn def_site(&self, v: Value) -> (Block, Option<usize>) {
        match self.func.values[v].def {
            ValueDef::Param(b, _) => (b, None),
            ValueDef::Result(inst, _) => (
                self.inst_block[inst].expect("defined values are placed (checked)"),
                Some(self.inst_pos[inst]),
            ),
        }
    }

    fn dominance(&self, doms: &DomTree) -> Result {
        let func = self.func;
        for &block in &func.layout {
            for (pos, &inst) in func.blocks[block].insts.iter().enumerate() {
                // The first operand not dominated by its definition, if any.
                let mut bad = None;
                func.insts[inst].kind.for_each_arg(|v| {
                    if bad.is_none() {
                        let (def_block, def_pos) = self.def_site(v);
                        let ok = if def_block == block {
                            !matches!(def_pos, Some(d) if d >= pos)
                        } else {
                            doms.dominates(def_block, block)
                        };
                        if !ok {
                            bad = Some(v);
                        }
                    }
                });
                if let Some(v) = bad {
                    let (def_block, def_pos) = self.def_site(v);
                    if def_block == block {
                        if matches!(def_pos, Some(d) if d >= pos) {
                            return self.fail(
                                Entity::Inst(inst),
                                format!("{v} is used before it is defined in {block}"),
                            );
                        }
                    } else if !doms.dominates(def_block, block) {
                        return self.fail(
                            Entity::Inst(inst),
                            format!(
                                "{v} is defined in {def_block}, which does not dominate this use in {block}"
                            ),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}
