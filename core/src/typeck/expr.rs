//! Expressions: literals, names, operators, casts, calls, tuples, `if`, `return` and `fail`.
//!
//! Types are exact (no implicit conversion). An operand of type `Never` fits any operator; when
//! *no* operand has a type (`-fail("x")`, `return 1 + return 2`), the operation can never run and
//! the expression is replaced by its first operand, so no opcode has to be guessed.

use super::body::{blame_block, blame_expr, expect, expect_expr, no_value, BodyChecker, Flow};
use super::hir::{self, Ty};
use super::{ops, types};
use crate::error::CompileError;
use crate::ir::{Const, Opcode};
use crate::span::Span;
use crate::syntax::ast::{self, BinOp, UnOp};

/// Expression trees higher than this are refused, so that no input can exhaust the stack. The
/// parser builds no higher trees, so this only stops hand-built ASTs.
pub(super) const MAX_HEIGHT: usize = crate::syntax::parser::MAX_HEIGHT;

impl BodyChecker<'_> {
    /// An expression standing where `flow` says.
    pub fn expr(&mut self, e: &ast::Expr, flow: Flow) -> Result<hir::Expr, CompileError> {
        if self.depth >= MAX_HEIGHT {
            return Err(CompileError::TooLong {
                limit: MAX_HEIGHT,
                span: e.span,
            });
        }
        self.depth += 1;
        let checked = crate::stack::ensure_sufficient_stack(|| self.expr_kind(e, flow));
        self.depth -= 1;
        let checked = checked?;
        if flow == Flow::Scalar && matches!(checked.ty, Ty::Tuple(_)) {
            return Err(CompileError::NotAllowed {
                what: checked.ty.to_string(),
                why: types::DESTRUCTURE.to_string(),
                span: checked.span,
            });
        }
        Ok(checked)
    }

    /// An expression that may not be a tuple.
    pub fn value(&mut self, e: &ast::Expr) -> Result<hir::Expr, CompileError> {
        self.expr(e, Flow::Scalar)
    }

    /// The condition of an `if` or `while`.
    pub fn condition(&mut self, e: &ast::Expr) -> Result<hir::Expr, CompileError> {
        let cond = self.value(e)?;
        expect_expr(&cond, &Ty::BOOL)?;
        Ok(cond)
    }

    fn expr_kind(&mut self, e: &ast::Expr, flow: Flow) -> Result<hir::Expr, CompileError> {
        use ast::ExprKind as A;
        use hir::ExprKind as H;
        let (kind, ty) = match &e.kind {
            A::Float(x) => (H::Const(Const::F64(*x)), Ty::F64),
            A::Int(x) => (H::Const(Const::I64(*x)), Ty::I64),
            A::Bool(b) => (H::Const(Const::Bool(*b)), Ty::BOOL),
            A::Name(ident) => {
                let local = self.resolve_local(ident)?;
                (H::Local(local), Ty::Scalar(self.scopes.local(local).ty))
            }
            A::Unary(op, operand) => return self.unary(*op, operand, e.span),
            A::Binary(op, lhs, rhs) => {
                let lhs = self.value(lhs)?;
                let rhs = self.value(rhs)?;
                return self.binary_typed(*op, lhs, rhs, e.span);
            }
            A::Cast(operand, to) => return self.cast(operand, to, e.span),
            A::Call { callee, args } => return self.call(callee, args, e.span),
            A::Tuple(elems) => return self.tuple(elems, e.span),
            A::If { cond, then, else_ } => {
                return self.if_expr(cond, then, else_.as_deref(), flow, e.span)
            }
            A::Block(block) => {
                let block = self.block(block, flow)?;
                let ty = block.ty.clone();
                (H::Block(block), ty)
            }
            A::Return(value) => {
                let value = self.return_value(value.as_deref(), e.span)?;
                (H::Return(Box::new(value)), Ty::Never)
            }
            A::Fail(reason) => (H::Fail(reason.clone()), Ty::Never),
        };
        Ok(hir::Expr {
            kind,
            ty,
            span: e.span,
        })
    }

    /// The local a name refers to.
    pub fn resolve_local(&self, ident: &ast::Ident) -> Result<hir::LocalId, CompileError> {
        let name = &ident.name;
        if let Some(local) = self.scopes.lookup(name) {
            return Ok(local);
        }
        let is_function = self.items.function(name).is_some()
            || ops::builtin_arity(name).is_some()
            || name == "fail";
        Err(if is_function {
            CompileError::NotAllowed {
                what: name.clone(),
                why: format!("`{name}` is a function; call it as `{name}(...)`"),
                span: ident.span,
            }
        } else {
            CompileError::UnknownName {
                name: name.clone(),
                span: ident.span,
            }
        })
    }

    fn unary(
        &mut self,
        op: UnOp,
        operand: &ast::Expr,
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let operand = self.value(operand)?;
        let opcode = match &operand.ty {
            Ty::Never => return Ok(operand),
            Ty::Scalar(t) => ops::unary(op, *t),
            _ => None,
        };
        match opcode {
            Some(opcode) => Ok(prim(opcode, vec![operand], span)),
            None => Err(CompileError::BadOperand {
                op: op.symbol().to_string(),
                ty: operand.ty.to_string(),
                span,
            }),
        }
    }

    /// `lhs op rhs` on already checked operands (also used for compound assignments).
    pub fn binary_typed(
        &self,
        op: BinOp,
        lhs: hir::Expr,
        rhs: hir::Expr,
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let bad = |ty: &Ty| CompileError::BadOperand {
            op: op.symbol().to_string(),
            ty: ty.to_string(),
            span,
        };
        // The operand type: the left operand's, or the right's if the left never completes.
        let t = match (&lhs.ty, &rhs.ty) {
            (Ty::Scalar(t), _) | (Ty::Never, Ty::Scalar(t)) => *t,
            (Ty::Never, Ty::Never) => return Ok(lhs),
            (Ty::Never, other) | (other, _) => return Err(bad(other)),
        };
        let operand = Ty::Scalar(t);
        let (kind, ty) = match op {
            BinOp::And | BinOp::Or => {
                if operand != Ty::BOOL {
                    return Err(bad(&operand));
                }
                expect_expr(&lhs, &operand)?;
                expect_expr(&rhs, &operand)?;
                let (lhs, rhs) = (Box::new(lhs), Box::new(rhs));
                let kind = if op == BinOp::And {
                    hir::ExprKind::And(lhs, rhs)
                } else {
                    hir::ExprKind::Or(lhs, rhs)
                };
                (kind, Ty::BOOL)
            }
            _ => {
                let opcode = ops::binary(op, t).ok_or_else(|| bad(&operand))?;
                expect_expr(&lhs, &operand)?;
                expect_expr(&rhs, &operand)?;
                return Ok(prim(opcode, vec![lhs, rhs], span));
            }
        };
        Ok(hir::Expr { kind, ty, span })
    }

    /// `operand as to`; identity casts disappear.
    fn cast(
        &mut self,
        operand: &ast::Expr,
        to: &ast::TypeExpr,
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let operand = self.value(operand)?;
        let bad = |from: &Ty| CompileError::BadCast {
            from: from.to_string(),
            to: types::written(to),
            span,
        };
        let to = match types::resolve(to)? {
            Ty::Scalar(t) => t,
            _ => return Err(bad(&operand.ty)),
        };
        let from = match &operand.ty {
            Ty::Scalar(t) => *t,
            Ty::Never => return Ok(operand),
            other => return Err(bad(other)),
        };
        match ops::cast(from, to) {
            ops::Cast::Identity => Ok(operand),
            ops::Cast::Convert(opcode) => Ok(prim(opcode, vec![operand], span)),
            ops::Cast::Invalid => Err(bad(&operand.ty)),
        }
    }

    /// `name(args)`: a function of the module or a built-in.
    fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let name = callee.name.as_str();
        let items = self.items;
        if let Some((func, header)) = items.function(name) {
            arg_count(name, header.params.len(), args.len(), span)?;
            let mut checked = Vec::with_capacity(args.len());
            for (arg, param) in args.iter().zip(&header.params) {
                let arg = self.value(arg)?;
                expect_expr(&arg, &Ty::Scalar(param.ty))?;
                checked.push(arg);
            }
            return Ok(hir::Expr {
                kind: hir::ExprKind::Call {
                    func,
                    args: checked,
                },
                ty: Ty::from_scalars(&header.returns),
                span,
            });
        }
        if let Some(arity) = ops::builtin_arity(name) {
            return self.builtin(name, arity, args, span);
        }
        Err(if name == "fail" {
            CompileError::NotAllowed {
                what: "fail".to_string(),
                why: "`fail` takes one string literal, as in `fail(\"reason\")`".to_string(),
                span,
            }
        } else if self.scopes.lookup(name).is_some() {
            CompileError::NotAllowed {
                what: format!("{name}(...)"),
                why: format!("`{name}` is a variable, not a function"),
                span: callee.span,
            }
        } else {
            CompileError::UnknownFunction {
                name: name.to_string(),
                span: callee.span,
            }
        })
    }

    /// A built-in call; the first argument with a type chooses the overload, and every argument
    /// must have that type.
    fn builtin(
        &mut self,
        name: &str,
        arity: usize,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        arg_count(name, arity, args.len(), span)?;
        let args = args
            .iter()
            .map(|arg| self.value(arg))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(decider) = args.iter().find(|arg| arg.ty != Ty::Never) else {
            // Every argument never completes: only the first one runs.
            return args.into_iter().next().ok_or(CompileError::WrongArgCount {
                name: name.to_string(),
                expected: arity,
                found: 0,
                span,
            });
        };
        let opcode = match &decider.ty {
            Ty::Scalar(t) => Opcode::for_builtin(name, *t),
            _ => None,
        };
        let Some(opcode) = opcode else {
            return Err(match ops::builtin_types(name).as_slice() {
                [only] => CompileError::MismatchedTypes {
                    expected: only.to_string(),
                    found: decider.ty.to_string(),
                    span: blame_expr(decider),
                },
                _ => CompileError::BadOperand {
                    op: name.to_string(),
                    ty: decider.ty.to_string(),
                    span: blame_expr(decider),
                },
            });
        };
        let operand = decider.ty.clone();
        for arg in &args {
            expect_expr(arg, &operand)?;
        }
        Ok(prim(opcode, args, span))
    }

    /// `(a, b, ...)`; its type is `Never` if an element never completes.
    fn tuple(&mut self, elems: &[ast::Expr], span: Span) -> Result<hir::Expr, CompileError> {
        let mut checked = Vec::with_capacity(elems.len());
        let mut scalars = Vec::with_capacity(elems.len());
        let mut never = false;
        for elem in elems {
            let elem = self.value(elem)?;
            match &elem.ty {
                Ty::Scalar(t) => scalars.push(*t),
                Ty::Never => never = true,
                _ => return Err(no_value(&elem)),
            }
            checked.push(elem);
        }
        let ty = if never {
            Ty::Never
        } else {
            Ty::from_scalars(&scalars)
        };
        Ok(hir::Expr {
            kind: hir::ExprKind::Tuple(checked),
            ty,
            span,
        })
    }

    fn if_expr(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Block,
        else_: Option<&ast::Expr>,
        flow: Flow,
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let cond = Box::new(self.condition(cond)?);
        let then = self.block(then, flow)?;
        let Some(else_) = else_ else {
            expect(&then.ty, &Ty::Unit, || blame_block(&then))?;
            return Ok(hir::Expr {
                kind: hir::ExprKind::If {
                    cond,
                    then,
                    else_: None,
                },
                ty: Ty::Unit,
                span,
            });
        };
        let else_ = self.else_block(else_, flow)?;
        let ty = if then.ty == Ty::Never {
            else_.ty.clone()
        } else {
            expect(&else_.ty, &then.ty, || blame_block(&else_))?;
            then.ty.clone()
        };
        Ok(hir::Expr {
            kind: hir::ExprKind::If {
                cond,
                then,
                else_: Some(else_),
            },
            ty,
            span,
        })
    }

    /// The `else` arm as a block: `else if ...` becomes a block whose tail is the inner `if`.
    fn else_block(&mut self, e: &ast::Expr, flow: Flow) -> Result<hir::Block, CompileError> {
        if let ast::ExprKind::Block(block) = &e.kind {
            return self.block(block, flow);
        }
        let e = self.expr(e, flow)?;
        Ok(hir::Block {
            stmts: Vec::new(),
            ty: e.ty.clone(),
            span: e.span,
            tail: Some(Box::new(e)),
        })
    }

    /// The operand of `return`, which must have the declared return type.
    fn return_value(
        &mut self,
        value: Option<&ast::Expr>,
        span: Span,
    ) -> Result<hir::Expr, CompileError> {
        let Some(value) = value else {
            return Err(CompileError::MismatchedTypes {
                expected: self.ret.to_string(),
                found: Ty::Unit.to_string(),
                span,
            });
        };
        let value = self.expr(value, Flow::Tuple)?;
        expect_expr(&value, &self.ret)?;
        Ok(value)
    }
}

fn prim(op: Opcode, args: Vec<hir::Expr>, span: Span) -> hir::Expr {
    hir::Expr {
        kind: hir::ExprKind::Prim { op, args },
        ty: Ty::Scalar(op.result_type()),
        span,
    }
}

fn arg_count(name: &str, expected: usize, found: usize, span: Span) -> Result<(), CompileError> {
    if expected == found {
        Ok(())
    } else {
        Err(CompileError::WrongArgCount {
            name: name.to_string(),
            expected,
            found,
            span,
        })
    }
}
