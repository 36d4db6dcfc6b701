//! An independent check of the typed tree's invariants (the module docs of `hir`), run on every
//! program the tests accept: what `crate::lower` may rely on.

use crate::ir::FuncKind;
use crate::typeck::hir::{
    Block, Expr, ExprKind, FnDef, LetPattern, LocalId, Program, StmtKind, Ty,
};

/// Panics with a description of the first broken invariant.
pub(super) fn validate(program: &Program) {
    for f in &program.functions {
        Validator { program, f }.function();
    }
}

struct Validator<'a> {
    program: &'a Program,
    f: &'a FnDef,
}

/// Whether a value of type `found` fits where `expected` is wanted.
fn fits(found: &Ty, expected: &Ty) -> bool {
    found == expected || *found == Ty::Never
}

impl Validator<'_> {
    fn fail(&self, what: &str, e: impl std::fmt::Debug) -> ! {
        panic!("{}: {what}: {e:?}", self.f.symbol)
    }

    fn function(&self) {
        let f = self.f;
        assert_eq!(f.symbol, f.kind.symbol(&f.name));
        assert_eq!(f.params.len(), f.theta_params.len());
        assert!(!f.returns.is_empty(), "{}: no return type", f.symbol);
        if !matches!(f.kind, FuncKind::Inverse { .. }) {
            assert!(f.theta_params.iter().all(|&t| !t), "{}: theta", f.symbol);
        }
        for &p in &f.params {
            self.local(p);
        }
        self.block(&f.body, true);
        if !fits(&f.body.ty, &self.ret()) {
            self.fail("body type", &f.body.ty);
        }
    }

    fn ret(&self) -> Ty {
        Ty::from_scalars(&self.f.returns)
    }

    fn local(&self, id: LocalId) -> Ty {
        match self.f.locals.get(id.0 as usize) {
            Some(local) => Ty::Scalar(local.ty),
            None => self.fail("local out of range", id),
        }
    }

    /// `tuple_ok`: whether a tuple-typed value may stand here.
    fn block(&self, b: &Block, tuple_ok: bool) {
        for stmt in &b.stmts {
            match &stmt.kind {
                StmtKind::Let { pattern, init } => match pattern {
                    LetPattern::Single(local) => {
                        self.expr(init, false);
                        let want = local.map(|l| self.local(l));
                        match (&init.ty, want) {
                            (Ty::Never, _) | (Ty::Scalar(_), None) => {}
                            (ty, Some(want)) if *ty == want => {}
                            (ty, _) => self.fail("let init", ty),
                        }
                    }
                    LetPattern::Tuple(locals) => {
                        self.expr(init, true);
                        match &init.ty {
                            Ty::Never => {}
                            Ty::Tuple(tys) if tys.len() == locals.len() => {
                                for (l, t) in locals.iter().zip(tys) {
                                    if let Some(l) = l {
                                        assert_eq!(self.local(*l), Ty::Scalar(*t));
                                    }
                                }
                            }
                            ty => self.fail("tuple let init", ty),
                        }
                    }
                },
                StmtKind::Assign { local, value } => {
                    self.expr(value, false);
                    let ty = self.local(*local);
                    if !self.f.locals[local.0 as usize].mutable {
                        self.fail("assignment to an immutable local", local);
                    }
                    if !fits(&value.ty, &ty) {
                        self.fail("assigned value", &value.ty);
                    }
                }
                StmtKind::While { cond, body } => {
                    self.cond(cond);
                    self.loop_body(body);
                }
                StmtKind::For {
                    var,
                    start,
                    end,
                    body,
                } => {
                    assert_eq!(self.local(*var), Ty::I64);
                    assert!(!self.f.locals[var.0 as usize].mutable);
                    for bound in [start, end] {
                        self.expr(bound, false);
                        if !fits(&bound.ty, &Ty::I64) {
                            self.fail("range bound", &bound.ty);
                        }
                    }
                    self.loop_body(body);
                }
                StmtKind::Expr(e) => self.expr(e, false),
            }
        }
        match &b.tail {
            Some(tail) => {
                self.expr(tail, tuple_ok);
                assert_eq!(b.ty, tail.ty, "{}: block type", self.f.symbol);
            }
            None => match &b.ty {
                Ty::Unit => {}
                Ty::Never => assert!(
                    block_exits(b),
                    "{}: a Never block without an exit",
                    self.f.symbol
                ),
                ty => self.fail("block without tail", ty),
            },
        }
    }

    fn loop_body(&self, body: &Block) {
        self.block(body, false);
        if !fits(&body.ty, &Ty::Unit) {
            self.fail("loop body", &body.ty);
        }
    }

    fn cond(&self, cond: &Expr) {
        self.expr(cond, false);
        if !fits(&cond.ty, &Ty::BOOL) {
            self.fail("condition", &cond.ty);
        }
    }

    fn expr(&self, e: &Expr, tuple_ok: bool) {
        if matches!(e.ty, Ty::Tuple(_)) && !tuple_ok {
            self.fail("a tuple where none may stand", e);
        }
        if e.ty == Ty::Never && !exits(e) {
            self.fail("a Never expression without an exit", e);
        }
        match &e.kind {
            ExprKind::Const(c) => assert_eq!(e.ty, Ty::Scalar(c.ty())),
            ExprKind::Local(l) => assert_eq!(e.ty, self.local(*l)),
            ExprKind::Prim { op, args } => {
                assert_eq!(args.len(), op.arity(), "{op}");
                for (arg, &t) in args.iter().zip(op.arg_types()) {
                    self.expr(arg, false);
                    if !fits(&arg.ty, &Ty::Scalar(t)) {
                        self.fail("primitive operand", (op, &arg.ty));
                    }
                }
                assert_eq!(e.ty, Ty::Scalar(op.result_type()));
            }
            ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.cond(a);
                self.cond(b);
                assert_eq!(e.ty, Ty::BOOL);
            }
            ExprKind::Call { func, args } => {
                let callee = self
                    .program
                    .functions
                    .get(func.0 as usize)
                    .unwrap_or_else(|| self.fail("callee out of range", func));
                assert_eq!(callee.kind, FuncKind::Fn);
                let params = callee.param_types();
                assert_eq!(args.len(), params.len());
                for (arg, t) in args.iter().zip(params) {
                    self.expr(arg, false);
                    if !fits(&arg.ty, &Ty::Scalar(t)) {
                        self.fail("argument", &arg.ty);
                    }
                }
                assert_eq!(e.ty, Ty::from_scalars(&callee.returns));
            }
            ExprKind::Tuple(elems) => {
                let mut scalars = Vec::new();
                for elem in elems {
                    self.expr(elem, false);
                    match elem.ty {
                        Ty::Scalar(t) => scalars.push(t),
                        Ty::Never => {}
                        ref ty => self.fail("tuple element", ty),
                    }
                }
                if scalars.len() == elems.len() {
                    assert_eq!(e.ty, Ty::from_scalars(&scalars));
                } else {
                    assert_eq!(e.ty, Ty::Never);
                }
            }
            ExprKind::If { cond, then, else_ } => {
                self.cond(cond);
                self.block(then, tuple_ok);
                match else_ {
                    None => {
                        assert!(fits(&then.ty, &Ty::Unit));
                        assert_eq!(e.ty, Ty::Unit);
                    }
                    Some(else_) => {
                        self.block(else_, tuple_ok);
                        let ty = if then.ty == Ty::Never {
                            &else_.ty
                        } else {
                            assert!(fits(&else_.ty, &then.ty));
                            &then.ty
                        };
                        assert_eq!(&e.ty, ty);
                    }
                }
            }
            ExprKind::Block(b) => {
                self.block(b, tuple_ok);
                assert_eq!(e.ty, b.ty);
            }
            ExprKind::Return(value) => {
                self.expr(value, true);
                if !fits(&value.ty, &self.ret()) {
                    self.fail("returned value", &value.ty);
                }
                assert_eq!(e.ty, Ty::Never);
            }
            ExprKind::Fail(_) => assert_eq!(e.ty, Ty::Never),
        }
    }
}

/// Whether a `return` or `fail` occurs anywhere in `e`.
fn exits(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Return(_) | ExprKind::Fail(_) => true,
        ExprKind::Const(_) | ExprKind::Local(_) => false,
        ExprKind::Prim { args, .. } | ExprKind::Call { args, .. } | ExprKind::Tuple(args) => {
            args.iter().any(exits)
        }
        ExprKind::And(a, b) | ExprKind::Or(a, b) => exits(a) || exits(b),
        ExprKind::If { cond, then, else_ } => {
            exits(cond) || block_exits(then) || else_.as_ref().is_some_and(block_exits)
        }
        ExprKind::Block(b) => block_exits(b),
    }
}

fn block_exits(b: &Block) -> bool {
    let stmt_exits = |kind: &StmtKind| match kind {
        StmtKind::Let { init: e, .. } | StmtKind::Assign { value: e, .. } | StmtKind::Expr(e) => {
            exits(e)
        }
        StmtKind::While { cond, body } => exits(cond) || block_exits(body),
        StmtKind::For {
            start, end, body, ..
        } => exits(start) || exits(end) || block_exits(body),
    };
    b.stmts.iter().any(|s| stmt_exits(&s.kind)) || b.tail.as_deref().is_some_and(exits)
}
