//! Lowering: the typed tree ([`hir`]) → SSA IR ([`ir`](crate::ir)), one IR function per `fn`, `inverse` and
//! `pgf` declaration, with the same index (`FnIndex(i)` becomes `FuncId` i).
//!
//! SSA is built directly, without stack slots: every local's current value is tracked in an
//! environment, and where control flow merges (after `if`, `&&`, `||`, at loop headers) a block
//! parameter is added for each local (and each result value) that differs between the incoming
//! edges. Loop headers get a parameter for every local the loop assigns, found by a syntactic scan
//! of the loop before its body is lowered.
//!
//! Invariants of the output (checked by `ir::verify` in `compile`): every block in the layout is
//! reachable, ends in exactly one terminator, and every use is dominated by its definition. Code
//! after a `return` or `fail` is not lowered (the checker has already typed it). The function is
//! compact: ids follow the layout order of the text form.

use crate::ir::{
    Block, BlockCall, Const, FuncId, Function, InstKind, Module, Opcode, Signature, Type, Value,
};
use crate::span::Span;
use crate::typeck::hir::{self, FnDef, LocalId};
use cranelift_entity::EntityRef;
use std::collections::HashSet;

/// Lowers a checked program to an IR module, one function per `fn`, `inverse` and `pgf`.
pub fn lower(program: &hir::Program) -> Module {
    let mut module = Module::new();
    for def in &program.functions {
        let function = FnLowerer::new(program, def).lower();
        // The checker guarantees unique symbols (`f`, `inverse:f`, `pgf:f`).
        let added = module.add(function);
        debug_assert!(added.is_ok(), "duplicate function `{}`", def.symbol);
    }
    // Number values and blocks in layout order, so the text form reads top to bottom.
    module.compact_all();
    module
}

/// The IR id of a program function: functions keep their index.
pub fn func_id(index: hir::FnIndex) -> FuncId {
    FuncId::new(index.0 as usize)
}

/// The current SSA value of each local (`None`: not bound on this path, or out of scope).
type Env = Vec<Option<Value>>;

/// How an edge into a merge block leaves its predecessor.
enum EdgeExit {
    /// The predecessor ends with `jump join(args)`.
    Jump,
    /// The predecessor ends with `brif cond, …` where one side goes to the join and the other
    /// to `other`.
    Brif {
        cond: Value,
        other: Block,
        join_is_then: bool,
    },
}

/// One incoming edge of a merge: the predecessor block, the locals at its end, and the values
/// the merged expression has along it.
struct Edge {
    from: Block,
    env: Env,
    values: Vec<Value>,
    exit: EdgeExit,
}

struct FnLowerer<'p> {
    program: &'p hir::Program,
    def: &'p FnDef,
    func: Function,
    /// The block being filled, or `None` when control cannot reach this point.
    cur: Option<Block>,
    env: Env,
}

impl<'p> FnLowerer<'p> {
    fn new(program: &'p hir::Program, def: &'p FnDef) -> FnLowerer<'p> {
        let sig = Signature {
            params: def.param_types(),
            returns: def.returns.clone(),
        };
        let mut func = Function::new(def.symbol.clone(), def.kind.clone(), sig);
        func.span = def.span;
        func.param_names = def
            .params
            .iter()
            .map(|&p| def.local(p).name.clone())
            .collect();
        FnLowerer {
            program,
            def,
            func,
            cur: None,
            env: vec![None; def.locals.len()],
        }
    }

    fn lower(mut self) -> Function {
        let entry = self.func.create_entry();
        let params = self.func.blocks[entry].params.clone();
        for (&local, value) in self.def.params.iter().zip(params) {
            self.env[local.0 as usize] = Some(value);
        }
        self.cur = Some(entry);
        let body = &self.def.body;
        if let Some(values) = self.block(body) {
            self.terminate(
                InstKind::Return {
                    args: values.into(),
                },
                body.span,
            );
        }
        self.func.remove_unreachable_blocks();
        self.func
    }

    // ---- emitting

    fn block_now(&self) -> Option<Block> {
        self.cur
    }

    fn konst(&mut self, block: Block, c: Const, span: Span) -> Value {
        self.func.ins_const(block, c, span)
    }

    /// Ends the current block with `kind`; control does not continue.
    fn terminate(&mut self, kind: InstKind, span: Span) {
        if let Some(block) = self.cur.take() {
            self.func.ins_void(block, kind, span);
        }
    }

    fn set_local(&mut self, local: LocalId, value: Value) {
        self.env[local.0 as usize] = Some(value);
    }

    fn local_type(&self, local: usize) -> Type {
        self.def.locals[local].ty
    }

    // ---- merging

    /// Joins the incoming edges: creates a block with a parameter for every local and result
    /// position that differs between them, ends each predecessor with its branch, and continues
    /// there. Returns the merged values, or `None` if no edge reaches the join.
    fn merge(&mut self, edges: Vec<Edge>, result_types: &[Type], span: Span) -> Option<Vec<Value>> {
        if edges.is_empty() {
            self.cur = None;
            return None;
        }
        if edges.len() == 1 && matches!(edges[0].exit, EdgeExit::Jump) {
            // A single fall-through edge: just continue in the predecessor.
            let edge = edges.into_iter().next()?;
            self.cur = Some(edge.from);
            self.env = edge.env;
            return Some(edge.values);
        }
        let join = self.func.create_block();
        let mut env: Env = vec![None; self.env.len()];
        let mut param_locals = Vec::new();
        for (i, slot) in env.iter_mut().enumerate() {
            let first = edges[0].env[i];
            if edges.iter().any(|e| e.env[i].is_none()) {
                continue;
            }
            if edges.iter().all(|e| e.env[i] == first) {
                *slot = first;
            } else {
                let ty = self.local_type(i);
                *slot = Some(self.func.append_block_param(join, ty));
                param_locals.push(i);
            }
        }
        let mut values = Vec::with_capacity(result_types.len());
        let mut param_values = Vec::new();
        for (k, &ty) in result_types.iter().enumerate() {
            let first = edges[0].values.get(k).copied();
            if first.is_some() && edges.iter().all(|e| e.values.get(k).copied() == first) {
                values.extend(first);
            } else {
                values.push(self.func.append_block_param(join, ty));
                param_values.push(k);
            }
        }
        for edge in edges {
            let mut args: Vec<Value> = param_locals.iter().filter_map(|&i| edge.env[i]).collect();
            args.extend(
                param_values
                    .iter()
                    .filter_map(|&k| edge.values.get(k).copied()),
            );
            let to_join = BlockCall::new(join, args);
            let kind = match edge.exit {
                EdgeExit::Jump => InstKind::Jump { dest: to_join },
                EdgeExit::Brif {
                    cond,
                    other,
                    join_is_then,
                } => {
                    let other = BlockCall::new(other, Vec::new());
                    let (then_dest, else_dest) = if join_is_then {
                        (to_join, other)
                    } else {
                        (other, to_join)
                    };
                    InstKind::Brif {
                        cond,
                        then_dest: Box::new(then_dest),
                        else_dest: Box::new(else_dest),
                    }
                }
            };
            self.func.ins_void(edge.from, kind, span);
        }
        self.cur = Some(join);
        self.env = env;
        Some(values)
    }

    /// The edge from the current block by a plain jump, carrying `values`; `None` if unreachable.
    fn fallthrough(&mut self, values: Option<Vec<Value>>) -> Option<Edge> {
        let values = values?;
        let from = self.cur.take()?;
        Some(Edge {
            from,
            env: self.env.clone(),
            values,
            exit: EdgeExit::Jump,
        })
    }

    // ---- statements and blocks

    /// Lowers a block; returns its value(s), or `None` if control does not reach its end.
    fn block(&mut self, block: &hir::Block) -> Option<Vec<Value>> {
        for stmt in &block.stmts {
            self.block_now()?;
            self.stmt(stmt);
        }
        self.block_now()?;
        match &block.tail {
            Some(tail) => self.expr(tail),
            None => Some(Vec::new()),
        }
    }

    fn stmt(&mut self, stmt: &hir::Stmt) {
        match &stmt.kind {
            hir::StmtKind::Let { pattern, init } => {
                let Some(values) = self.expr(init) else {
                    return;
                };
                match pattern {
                    hir::LetPattern::Single(local) => {
                        if let (Some(local), Some(&v)) = (local, values.first()) {
                            self.set_local(*local, v);
                        }
                    }
                    hir::LetPattern::Tuple(locals) => {
                        for (local, v) in locals.iter().zip(values) {
                            if let Some(local) = local {
                                self.set_local(*local, v);
                            }
                        }
                    }
                }
            }
            hir::StmtKind::Assign { local, value } => {
                if let Some(&v) = self.expr(value).as_ref().and_then(|vs| vs.first()) {
                    self.set_local(*local, v);
                }
            }
            hir::StmtKind::While { cond, body } => self.while_loop(cond, body, stmt.span),
            hir::StmtKind::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(*var, start, end, body, stmt.span),
            hir::StmtKind::Expr(e) => {
                self.expr(e);
            }
        }
    }

    /// The locals (bound before the loop) that a loop assigns: the loop header's parameters.
    fn loop_carried(&self, parts: &[&hir::Expr], body: &hir::Block) -> Vec<usize> {
        let mut assigned = HashSet::new();
        for e in parts {
            assigned_in_expr(e, &mut assigned);
        }
        assigned_in_block(body, &mut assigned);
        let mut carried: Vec<usize> = assigned
            .into_iter()
            .map(|l| l.0 as usize)
            .filter(|&i| self.env[i].is_some())
            .collect();
        carried.sort_unstable();
        carried
    }

    /// Creates a loop header with `extra` leading parameters and one per carried local, jumps to it
    /// from the current block, and continues in it. Returns the header and its extra parameters.
    fn enter_loop(
        &mut self,
        extra: &[(Type, Value)],
        carried: &[usize],
        span: Span,
    ) -> Option<(Block, Vec<Value>)> {
        let pre = self.cur.take()?;
        let header = self.func.create_block();
        let mut args: Vec<Value> = extra.iter().map(|&(_, v)| v).collect();
        let extra_params: Vec<Value> = extra
            .iter()
            .map(|&(ty, _)| self.func.append_block_param(header, ty))
            .collect();
        for &i in carried {
            let ty = self.local_type(i);
            args.extend(self.env[i]);
            let p = self.func.append_block_param(header, ty);
            self.env[i] = Some(p);
        }
        self.func.ins_jump(pre, header, args, span);
        self.cur = Some(header);
        Some((header, extra_params))
    }

    /// Jumps from the current block (the end of a loop body) back to the header.
    fn back_edge(&mut self, header: Block, mut extra: Vec<Value>, carried: &[usize], span: Span) {
        if let Some(block) = self.cur.take() {
            extra.extend(carried.iter().filter_map(|&i| self.env[i]));
            self.func.ins_jump(block, header, extra, span);
        }
    }

    fn while_loop(&mut self, cond: &hir::Expr, body: &hir::Block, span: Span) {
        let carried = self.loop_carried(&[cond], body);
        let Some((header, _)) = self.enter_loop(&[], &carried, span) else {
            return;
        };
        let Some(c) = self.expr(cond).and_then(|v| v.first().copied()) else {
            return;
        };
        let Some(test) = self.cur.take() else {
            return;
        };
        let exit_env = self.env.clone();
        let body_block = self.func.create_block();
        let exit = self.func.create_block();
        self.func.ins_void(
            test,
            InstKind::Brif {
                cond: c,
                then_dest: Box::new(BlockCall::new(body_block, Vec::new())),
                else_dest: Box::new(BlockCall::new(exit, Vec::new())),
            },
            cond.span,
        );
        self.cur = Some(body_block);
        self.block(body);
        self.back_edge(header, Vec::new(), &carried, span);
        self.cur = Some(exit);
        self.env = exit_env;
    }

    fn for_loop(
        &mut self,
        var: LocalId,
        start: &hir::Expr,
        end: &hir::Expr,
        body: &hir::Block,
        span: Span,
    ) {
        let Some(first) = self.expr(start).and_then(|v| v.first().copied()) else {
            return;
        };
        let Some(limit) = self.expr(end).and_then(|v| v.first().copied()) else {
            return;
        };
        let carried = self.loop_carried(&[], body);
        let Some((header, params)) = self.enter_loop(&[(Type::I64, first)], &carried, span) else {
            return;
        };
        let i = params[0];
        let exit_env = self.env.clone();
        let c = self
            .func
            .ins_prim(header, Opcode::Ilt, vec![i, limit], span);
        let body_block = self.func.create_block();
        let exit = self.func.create_block();
        self.func.ins_void(
            header,
            InstKind::Brif {
                cond: c,
                then_dest: Box::new(BlockCall::new(body_block, Vec::new())),
                else_dest: Box::new(BlockCall::new(exit, Vec::new())),
            },
            span,
        );
        self.cur = Some(body_block);
        self.set_local(var, i);
        self.block(body);
        if let Some(block) = self.cur {
            let one = self.konst(block, Const::I64(1), span);
            let next = self.func.ins_prim(block, Opcode::Iadd, vec![i, one], span);
            self.back_edge(header, vec![next], &carried, span);
        }
        self.cur = Some(exit);
        self.env = exit_env;
    }

    // ---- expressions

    /// Lowers an expression to its scalar values (none for unit, several for a tuple), or `None`
    /// if control does not continue after it.
    fn expr(&mut self, e: &hir::Expr) -> Option<Vec<Value>> {
        crate::stack::ensure_sufficient_stack(|| self.expr_here(e))
    }

    fn expr_here(&mut self, e: &hir::Expr) -> Option<Vec<Value>> {
        let block = self.cur?;
        match &e.kind {
            hir::ExprKind::Const(c) => Some(vec![self.konst(block, *c, e.span)]),
            hir::ExprKind::Local(local) => self.env[local.0 as usize].map(|v| vec![v]),
            hir::ExprKind::Prim { op, args } => {
                let args = self.scalar_args(args)?;
                let block = self.cur?;
                Some(vec![self.func.ins_prim(block, *op, args, e.span)])
            }
            hir::ExprKind::Call { func, args } => {
                let args = self.scalar_args(args)?;
                let block = self.cur?;
                let returns = self.program.function(*func).returns.clone();
                Some(
                    self.func
                        .ins_call(block, func_id(*func), args, &returns, e.span),
                )
            }
            hir::ExprKind::Tuple(elems) => {
                let mut out = Vec::with_capacity(elems.len());
                for elem in elems {
                    out.extend(self.expr(elem)?);
                }
                Some(out)
            }
            hir::ExprKind::And(a, b) => self.short_circuit(a, b, false, e.span),
            hir::ExprKind::Or(a, b) => self.short_circuit(a, b, true, e.span),
            hir::ExprKind::If { cond, then, else_ } => {
                self.if_expr(cond, then, else_.as_ref(), &e.ty, e.span)
            }
            hir::ExprKind::Block(b) => self.block(b),
            hir::ExprKind::Return(value) => {
                let values = self.expr(value)?;
                self.terminate(
                    InstKind::Return {
                        args: values.into(),
                    },
                    e.span,
                );
                None
            }
            hir::ExprKind::Fail(reason) => {
                self.terminate(
                    InstKind::Fail {
                        reason: reason.clone(),
                    },
                    e.span,
                );
                None
            }
        }
    }

    fn scalar_args(&mut self, args: &[hir::Expr]) -> Option<Vec<Value>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            out.extend(self.expr(a)?);
        }
        Some(out)
    }

    /// `a && b` (`is_or` false) or `a || b`: `b` runs only when `a` does not decide the result.
    fn short_circuit(
        &mut self,
        a: &hir::Expr,
        b: &hir::Expr,
        is_or: bool,
        span: Span,
    ) -> Option<Vec<Value>> {
        let va = *self.expr(a)?.first()?;
        let from = self.cur.take()?;
        let env_a = self.env.clone();
        let rhs = self.func.create_block();
        self.cur = Some(rhs);
        // When `a` decides, the result is `a` itself (false for `&&`, true for `||`).
        let decided = Edge {
            from,
            env: env_a,
            values: vec![va],
            exit: EdgeExit::Brif {
                cond: va,
                other: rhs,
                join_is_then: is_or,
            },
        };
        let vb = self.expr(b);
        let mut edges = vec![decided];
        edges.extend(self.fallthrough(vb));
        self.merge(edges, &[Type::Bool], span)
    }

    fn if_expr(
        &mut self,
        cond: &hir::Expr,
        then: &hir::Block,
        else_: Option<&hir::Block>,
        ty: &hir::Ty,
        span: Span,
    ) -> Option<Vec<Value>> {
        let c = *self.expr(cond)?.first()?;
        let from = self.cur.take()?;
        let env_c = self.env.clone();
        let result_types = ty.scalars();
        let then_block = self.func.create_block();
        let mut edges = Vec::new();
        match else_ {
            None => {
                // The false edge goes straight to the join.
                edges.push(Edge {
                    from,
                    env: env_c,
                    values: Vec::new(),
                    exit: EdgeExit::Brif {
                        cond: c,
                        other: then_block,
                        join_is_then: false,
                    },
                });
                self.cur = Some(then_block);
                let values = self.block(then);
                edges.extend(self.fallthrough(values));
            }
            Some(else_) => {
                let else_block = self.func.create_block();
                self.func.ins_void(
                    from,
                    InstKind::Brif {
                        cond: c,
                        then_dest: Box::new(BlockCall::new(then_block, Vec::new())),
                        else_dest: Box::new(BlockCall::new(else_block, Vec::new())),
                    },
                    cond.span,
                );
                self.cur = Some(then_block);
                let values = self.block(then);
                edges.extend(self.fallthrough(values));
                self.cur = Some(else_block);
                self.env = env_c;
                let values = self.block(else_);
                edges.extend(self.fallthrough(values));
            }
        }
        self.merge(edges, &result_types, span)
    }
}

/// Adds every local assigned anywhere in `block` (nested blocks and expressions included).
fn assigned_in_block(block: &hir::Block, out: &mut HashSet<LocalId>) {
    for stmt in &block.stmts {
        match &stmt.kind {
            hir::StmtKind::Let { init, .. } => assigned_in_expr(init, out),
            hir::StmtKind::Assign { local, value } => {
                out.insert(*local);
                assigned_in_expr(value, out);
            }
            hir::StmtKind::While { cond, body } => {
                assigned_in_expr(cond, out);
                assigned_in_block(body, out);
            }
            hir::StmtKind::For {
                start, end, body, ..
            } => {
                assigned_in_expr(start, out);
                assigned_in_expr(end, out);
                assigned_in_block(body, out);
            }
            hir::StmtKind::Expr(e) => assigned_in_expr(e, out),
        }
    }
    if let Some(tail) = &block.tail {
        assigned_in_expr(tail, out);
    }
}

fn assigned_in_expr(e: &hir::Expr, out: &mut HashSet<LocalId>) {
    crate::stack::ensure_sufficient_stack(|| assigned_in_expr_here(e, out))
}

fn assigned_in_expr_here(e: &hir::Expr, out: &mut HashSet<LocalId>) {
    match &e.kind {
        hir::ExprKind::Const(_) | hir::ExprKind::Local(_) | hir::ExprKind::Fail(_) => {}
        hir::ExprKind::Prim { args, .. }
        | hir::ExprKind::Call { args, .. }
        | hir::ExprKind::Tuple(args) => args.iter().for_each(|a| assigned_in_expr(a, out)),
        hir::ExprKind::And(a, b) | hir::ExprKind::Or(a, b) => {
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
        }
        hir::ExprKind::If { cond, then, else_ } => {
            assigned_in_expr(cond, out);
            assigned_in_block(then, out);
            if let Some(b) = else_ {
                assigned_in_block(b, out);
            }
        }
        hir::ExprKind::Block(b) => assigned_in_block(b, out),
        hir::ExprKind::Return(v) => assigned_in_expr(v, out),
    }
}
