//! Written types (`f64`, `(f64, i64)`) resolved to [`Ty`], with the rules of each place a type is
//! written: a parameter, a `let` binding and a cast take one scalar; a return type and the
//! annotation of a destructuring `let` may also be a tuple of two or more scalars. Tuples never nest.

use super::hir::Ty;
use crate::error::CompileError;
use crate::ir::Type;
use crate::syntax::ast::{TypeExpr, TypeExprKind};

/// A type as written, for messages.
pub(super) fn written(te: &TypeExpr) -> String {
    match &te.kind {
        TypeExprKind::Name(name) => name.clone(),
        TypeExprKind::Tuple(elems) => {
            let elems: Vec<String> = elems.iter().map(written).collect();
            format!("({})", elems.join(", "))
        }
    }
}

/// A scalar type name.
fn scalar_name(te: &TypeExpr, name: &str) -> Result<Type, CompileError> {
    Type::from_name(name).ok_or_else(|| CompileError::UnknownType {
        name: name.to_string(),
        span: te.span,
    })
}

/// A scalar, or a tuple of scalars (`(f64)` is just `f64`, as in Rust).
pub(super) fn resolve(te: &TypeExpr) -> Result<Ty, CompileError> {
    match &te.kind {
        TypeExprKind::Name(name) => scalar_name(te, name).map(Ty::Scalar),
        TypeExprKind::Tuple(elems) => {
            if elems.is_empty() {
                return Err(CompileError::NotAllowed {
                    what: "()".to_string(),
                    why: "a type is `f64`, `i64`, `bool` or a tuple of them".to_string(),
                    span: te.span,
                });
            }
            let mut scalars = Vec::with_capacity(elems.len());
            for elem in elems {
                match &elem.kind {
                    TypeExprKind::Name(name) => scalars.push(scalar_name(elem, name)?),
                    TypeExprKind::Tuple(_) => {
                        return Err(CompileError::NotAllowed {
                            what: written(elem),
                            why: "tuples cannot be nested".to_string(),
                            span: elem.span,
                        })
                    }
                }
            }
            Ok(Ty::from_scalars(&scalars))
        }
    }
}

/// The one scalar type of a parameter or of a single-name `let`; `why` says why a tuple is wrong.
pub(super) fn scalar(te: &TypeExpr, why: &str) -> Result<Type, CompileError> {
    match resolve(te)? {
        Ty::Scalar(t) => Ok(t),
        _ => Err(CompileError::NotAllowed {
            what: written(te),
            why: why.to_string(),
            span: te.span,
        }),
    }
}

/// What a parameter's type must be.
pub(super) const PARAM_IS_SCALAR: &str = "a parameter has one type: `f64`, `i64` or `bool`";

/// Why a tuple value cannot be bound to one name.
pub(super) const DESTRUCTURE: &str =
    "tuples must be destructured, as in `let (a, b) = ...`, or returned";
