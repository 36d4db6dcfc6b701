//! Checking one function body: the [`BodyChecker`], blocks and statements (`let`, assignment,
//! `while`, `for`), the rule that the body's type is the declared return type, and two facts about
//! typed code used by both: whether it [`diverges`] and which span to [blame](blame_expr) for its type.
//!
//! Expressions are in [`super::expr`].

use super::decl::Items;
use super::hir::{self, LetPattern, LocalId, Ty};
use super::scope::Scopes;
use super::types;
use crate::error::CompileError;
use crate::ir::{FuncKind, Type};
use crate::span::Span;
use crate::syntax::ast::{self, PatternKind, StmtKind};

/// Where an expression stands, which decides whether it may have a tuple type: tuple values only
/// flow into destructuring `let`s and out of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flow {
    /// An operand, argument, condition, statement or single-name `let`: no tuples.
    Scalar,
    /// The function's result (the body's tail, a `return` operand, and the `if` arms and block
    /// tails in those places) or the value of a destructuring `let`.
    Tuple,
}

pub(super) struct BodyChecker<'a> {
    pub items: &'a Items,
    pub scopes: Scopes,
    /// The declared return type.
    pub ret: Ty,
    /// How deeply expressions are nested at the moment.
    pub depth: usize,
}

/// Checks item `index` of the module, whose kind was already checked.
pub(super) fn check_function(
    item: &ast::Item,
    index: usize,
    kind: FuncKind,
    items: &Items,
) -> Result<hir::FnDef, CompileError> {
    let header = items.header_at(index);
    let mut scopes = Scopes::new();
    let params = header
        .params
        .iter()
        .map(|p| scopes.declare(&p.name, p.ty, false, p.span))
        .collect();
    let mut checker = BodyChecker {
        items,
        scopes,
        ret: Ty::from_scalars(&header.returns),
        depth: 0,
    };
    let body = checker.block(&item.body, Flow::Tuple)?;
    expect(&body.ty, &checker.ret, || blame_block(&body))?;
    let name = item.name.name.clone();
    Ok(hir::FnDef {
        symbol: kind.symbol(&name),
        name,
        kind,
        params,
        theta_params: header.params.iter().map(|p| p.theta).collect(),
        returns: header.returns.clone(),
        locals: checker.scopes.into_locals(),
        body,
        span: item.span,
    })
}

/// Fails unless a value of type `found` fits where `expected` is wanted (`Never` fits anywhere).
pub(super) fn expect(
    found: &Ty,
    expected: &Ty,
    blame: impl FnOnce() -> Span,
) -> Result<(), CompileError> {
    if found == expected || *found == Ty::Never {
        Ok(())
    } else {
        Err(CompileError::MismatchedTypes {
            expected: expected.to_string(),
            found: found.to_string(),
            span: blame(),
        })
    }
}

/// Fails unless `e` fits where `expected` is wanted.
pub(super) fn expect_expr(e: &hir::Expr, expected: &Ty) -> Result<(), CompileError> {
    expect(&e.ty, expected, || blame_expr(e))
}

impl BodyChecker<'_> {
    /// A block, in a scope of its own.
    pub fn block(&mut self, block: &ast::Block, flow: Flow) -> Result<hir::Block, CompileError> {
        self.scopes.push();
        let checked = self.block_in_scope(block, flow);
        self.scopes.pop();
        checked
    }

    fn block_in_scope(
        &mut self,
        block: &ast::Block,
        flow: Flow,
    ) -> Result<hir::Block, CompileError> {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        let mut diverged = false;
        for stmt in &block.stmts {
            let stmt = self.stmt(stmt)?;
            diverged |= stmt_diverges(&stmt);
            stmts.push(stmt);
        }
        let tail = match &block.tail {
            Some(tail) => Some(Box::new(self.expr(tail, flow)?)),
            None => None,
        };
        let ty = match &tail {
            Some(tail) => tail.ty.clone(),
            None if diverged => Ty::Never,
            None => Ty::Unit,
        };
        Ok(hir::Block {
            stmts,
            tail,
            ty,
            span: block.span,
        })
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> Result<hir::Stmt, CompileError> {
        let kind = match &stmt.kind {
            StmtKind::Let { pat, ty, init } => self.let_stmt(pat, ty.as_ref(), init)?,
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value, stmt.span)?,
            StmtKind::While { cond, body } => {
                let cond = self.condition(cond)?;
                let body = self.loop_body(body)?;
                hir::StmtKind::While { cond, body }
            }
            StmtKind::For {
                var,
                start,
                end,
                body,
            } => {
                let start = self.value(start)?;
                expect_expr(&start, &Ty::I64)?;
                let end = self.value(end)?;
                expect_expr(&end, &Ty::I64)?;
                self.scopes.push();
                let var = self.scopes.declare(&var.name, Type::I64, false, var.span);
                let body = self.loop_body(body);
                self.scopes.pop();
                hir::StmtKind::For {
                    var,
                    start,
                    end,
                    body: body?,
                }
            }
            StmtKind::Expr(e) => hir::StmtKind::Expr(self.value(e)?),
        };
        Ok(hir::Stmt {
            kind,
            span: stmt.span,
        })
    }

    /// The body of a `while` or `for`, which has no value.
    fn loop_body(&mut self, body: &ast::Block) -> Result<hir::Block, CompileError> {
        let body = self.block(body, Flow::Scalar)?;
        expect(&body.ty, &Ty::Unit, || blame_block(&body))?;
        Ok(body)
    }

    fn let_stmt(
        &mut self,
        pat: &ast::Pattern,
        annotation: Option<&ast::TypeExpr>,
        init: &ast::Expr,
    ) -> Result<hir::StmtKind, CompileError> {
        match &pat.kind {
            // `(a)` is `a`, as in Rust.
            PatternKind::Tuple(elems) if elems.len() == 1 => {
                self.let_stmt(&elems[0], annotation, init)
            }
            PatternKind::Tuple(elems) => self.let_tuple(pat, elems, annotation, init),
            PatternKind::Bind { .. } | PatternKind::Wild => {
                let annotation = match annotation {
                    Some(te) => Some(types::scalar(te, types::DESTRUCTURE)?),
                    None => None,
                };
                let init = self.value(init)?;
                // `None` if the value never completes and no annotation says what it would be.
                let ty = match (annotation, &init.ty) {
                    (Some(t), _) => {
                        expect_expr(&init, &Ty::Scalar(t))?;
                        Some(t)
                    }
                    (None, Ty::Scalar(t)) => Some(*t),
                    (None, Ty::Never) => None,
                    (None, _) => return Err(no_value(&init)),
                };
                let local = match (&pat.kind, ty) {
                    (PatternKind::Bind { .. }, None) => return Err(cannot_infer(pat)),
                    (_, Some(ty)) => self.bind(pat, ty),
                    (_, None) => None,
                };
                Ok(hir::StmtKind::Let {
                    pattern: LetPattern::Single(local),
                    init,
                })
            }
        }
    }

    /// `let (a, _, mut c): (T, U, V) = init;`
    fn let_tuple(
        &mut self,
        pat: &ast::Pattern,
        elems: &[ast::Pattern],
        annotation: Option<&ast::TypeExpr>,
        init: &ast::Expr,
    ) -> Result<hir::StmtKind, CompileError> {
        if elems.is_empty() {
            return Err(CompileError::NotAllowed {
                what: "()".to_string(),
                why: "a pattern binds at least one value".to_string(),
                span: pat.span,
            });
        }
        for (i, elem) in elems.iter().enumerate() {
            match &elem.kind {
                PatternKind::Tuple(_) => {
                    return Err(CompileError::NotAllowed {
                        what: "nested tuple pattern".to_string(),
                        why: "tuples cannot be nested".to_string(),
                        span: elem.span,
                    })
                }
                PatternKind::Bind { name, .. } => {
                    let earlier = elems[..i].iter().any(|e| {
                        matches!(&e.kind, PatternKind::Bind { name: n, .. } if n.name == name.name)
                    });
                    if earlier {
                        return Err(CompileError::NotAllowed {
                            what: name.name.clone(),
                            why: format!("`{}` is bound more than once in this pattern", name.name),
                            span: name.span,
                        });
                    }
                }
                PatternKind::Wild => {}
            }
        }
        let annotation_span = annotation.map_or(pat.span, |te| te.span);
        let annotation = match annotation {
            Some(te) => Some(types::resolve(te)?),
            None => None,
        };
        let init = self.expr(init, Flow::Tuple)?;
        if let Some(annotation) = &annotation {
            expect_expr(&init, annotation)?;
        }
        // The type of the value: the initializer's, or the annotation's if it never completes.
        let (ty, blame) = match (&init.ty, &annotation) {
            (Ty::Never, Some(annotation)) => (annotation.clone(), annotation_span),
            (Ty::Never, None) => return Err(cannot_infer(pat)),
            (ty, _) => (ty.clone(), blame_expr(&init)),
        };
        let Ty::Tuple(tys) = ty else {
            let shape = vec!["_"; elems.len()].join(", ");
            return Err(CompileError::MismatchedTypes {
                expected: format!("({shape})"),
                found: ty.to_string(),
                span: blame,
            });
        };
        if tys.len() != elems.len() {
            return Err(CompileError::PatternArity {
                expected: elems.len(),
                found: tys.len(),
                span: pat.span,
            });
        }
        let locals = elems
            .iter()
            .zip(tys)
            .map(|(e, t)| self.bind(e, t))
            .collect();
        Ok(hir::StmtKind::Let {
            pattern: LetPattern::Tuple(locals),
            init,
        })
    }

    /// Declares the local of a single-name pattern (`None` for `_`).
    fn bind(&mut self, pat: &ast::Pattern, ty: Type) -> Option<LocalId> {
        match &pat.kind {
            PatternKind::Bind { name, mutable } => {
                Some(self.scopes.declare(&name.name, ty, *mutable, pat.span))
            }
            PatternKind::Wild | PatternKind::Tuple(_) => None,
        }
    }

    /// `x = value`, or `x op= value` desugared to `x = x op value`.
    fn assign(
        &mut self,
        target: &ast::Ident,
        op: Option<ast::BinOp>,
        value: &ast::Expr,
        span: Span,
    ) -> Result<hir::StmtKind, CompileError> {
        let local = self.resolve_local(target)?;
        let decl = self.scopes.local(local);
        if !decl.mutable {
            return Err(CompileError::AssignImmutable {
                name: target.name.clone(),
                span,
                decl: decl.span,
            });
        }
        let ty = Ty::Scalar(decl.ty);
        let value = self.value(value)?;
        let value = match op {
            None => value,
            Some(op) => {
                let current = hir::Expr {
                    kind: hir::ExprKind::Local(local),
                    ty: ty.clone(),
                    span: target.span,
                };
                self.binary_typed(op, current, value, span)?
            }
        };
        expect_expr(&value, &ty)?;
        Ok(hir::StmtKind::Assign { local, value })
    }
}

fn cannot_infer(pat: &ast::Pattern) -> CompileError {
    CompileError::NotAllowed {
        what: "let".to_string(),
        why: "the value never completes, so its type cannot be inferred; add a type annotation"
            .to_string(),
        span: pat.span,
    }
}

/// The error for binding or storing an expression that has no value (type `()`).
pub(super) fn no_value(e: &hir::Expr) -> CompileError {
    CompileError::NotAllowed {
        what: e.ty.to_string(),
        why: "this expression has no value".to_string(),
        span: blame_expr(e),
    }
}

/// Whether evaluating `e` certainly never completes: it has type `Never`, or it unconditionally
/// evaluates something that never completes (such as the operand in `x + fail("no")`).
fn diverges(e: &hir::Expr) -> bool {
    if e.ty == Ty::Never {
        return true;
    }
    crate::stack::ensure_sufficient_stack(|| diverges_kind(e))
}

fn diverges_kind(e: &hir::Expr) -> bool {
    use hir::ExprKind::*;
    match &e.kind {
        Const(_) | Local(_) => false,
        Return(_) | Fail(_) => true,
        Prim { args, .. } | Call { args, .. } | Tuple(args) => args.iter().any(diverges),
        And(a, _) | Or(a, _) => diverges(a),
        If { cond, then, else_ } => {
            diverges(cond)
                || else_
                    .as_ref()
                    .is_some_and(|else_| block_diverges(then) && block_diverges(else_))
        }
        Block(b) => block_diverges(b),
    }
}

fn block_diverges(b: &hir::Block) -> bool {
    b.ty == Ty::Never
        || b.stmts.iter().any(stmt_diverges)
        || b.tail.as_deref().is_some_and(diverges)
}

fn stmt_diverges(stmt: &hir::Stmt) -> bool {
    match &stmt.kind {
        hir::StmtKind::Let { init: e, .. }
        | hir::StmtKind::Assign { value: e, .. }
        | hir::StmtKind::While { cond: e, .. }
        | hir::StmtKind::Expr(e) => diverges(e),
        hir::StmtKind::For { start, end, .. } => diverges(start) || diverges(end),
    }
}

/// The span that decides `e`'s type: the tail of a block, the (first completing) arm of an `if`.
pub(super) fn blame_expr(e: &hir::Expr) -> Span {
    match &e.kind {
        hir::ExprKind::Block(b) => blame_block(b),
        hir::ExprKind::If {
            then,
            else_: Some(else_),
            ..
        } => {
            if then.ty == Ty::Never {
                blame_block(else_)
            } else {
                blame_block(then)
            }
        }
        _ => e.span,
    }
}

/// The span that decides a block's type: its tail, else its last statement, else its closing brace.
pub(super) fn blame_block(b: &hir::Block) -> Span {
    match (&b.tail, b.stmts.last()) {
        (Some(tail), _) => blame_expr(tail),
        (None, Some(last)) => last.span,
        (None, None) => {
            let end = b.span.end as usize;
            Span::new(end.saturating_sub(1).max(b.span.start as usize), end)
        }
    }
}
