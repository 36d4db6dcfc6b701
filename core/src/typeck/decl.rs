//! Item headers, the function namespace, and the signature rules of `inverse` and `pgf`.
//!
//! [`Items::collect`] reads every item's header (parameters and return type) before any body is
//! checked, so that functions may call each other in any order. It owns the module-level name rules:
//! no `fn` twice, none named like a primitive or `fail`, no duplicate parameters, `theta` parameters
//! only in `inverse` declarations. [`Items::kind`] then checks an `inverse` or `pgf` declaration
//! against the `fn` it declares:
//! - `inverse F(outputs of F..., theta params...) -> inputs of F`;
//! - `pgf F(inputs of F) -> theta types of F's inverse`;
//! - at most one of each per `F`.

use super::hir::{FnIndex, Ty};
use super::types;
use crate::error::CompileError;
use crate::ir::opcode::BUILTIN_NAMES;
use crate::ir::{FuncKind, Type};
use crate::span::Span;
use crate::syntax::ast::{self, ItemKind};
use std::collections::HashMap;

/// A resolved parameter.
#[derive(Clone, Debug)]
pub(super) struct ParamSig {
    pub name: String,
    pub ty: Type,
    pub theta: bool,
    pub span: Span,
}

/// A resolved item header.
#[derive(Clone, Debug)]
pub(super) struct Header {
    pub params: Vec<ParamSig>,
    /// The scalar return types (several for a tuple).
    pub returns: Vec<Type>,
    /// From the keyword to the name: where errors about the whole declaration point.
    pub span: Span,
    pub name_span: Span,
}

impl Header {
    pub fn param_types(&self) -> Vec<Type> {
        self.params.iter().map(|p| p.ty).collect()
    }

    fn types_where(&self, theta: bool) -> Vec<Type> {
        self.params
            .iter()
            .filter(|p| p.theta == theta)
            .map(|p| p.ty)
            .collect()
    }
}

/// The headers of all items (indexed like the module's items, and like
/// [`super::hir::Program::functions`]) and the module's names.
#[derive(Debug)]
pub(super) struct Items {
    headers: Vec<Header>,
    fns: HashMap<String, FnIndex>,
    first_inverse: HashMap<String, usize>,
    first_pgf: HashMap<String, usize>,
}

impl Items {
    /// Reads every header, in source order; the first error wins.
    pub fn collect(module: &ast::Module) -> Result<Items, CompileError> {
        let mut items = Items {
            headers: Vec::with_capacity(module.items.len()),
            fns: HashMap::new(),
            first_inverse: HashMap::new(),
            first_pgf: HashMap::new(),
        };
        for (index, item) in module.items.iter().enumerate() {
            let name = &item.name.name;
            match item.kind {
                ItemKind::Fn => {
                    if BUILTIN_NAMES.contains(&name.as_str()) || name == "fail" {
                        return Err(CompileError::ReservedName {
                            name: name.clone(),
                            span: item.name.span,
                        });
                    }
                    if let Some(&first) = items.fns.get(name) {
                        return Err(CompileError::DuplicateFunction {
                            name: name.clone(),
                            span: item.name.span,
                            first: items.fn_header(first).name_span,
                        });
                    }
                    items.fns.insert(name.clone(), fn_index(index));
                }
                ItemKind::Inverse => {
                    items.first_inverse.entry(name.clone()).or_insert(index);
                }
                ItemKind::Pgf => {
                    items.first_pgf.entry(name.clone()).or_insert(index);
                }
            }
            items.headers.push(header(item)?);
        }
        Ok(items)
    }

    /// The `fn` called `name`.
    pub fn function(&self, name: &str) -> Option<(FnIndex, &Header)> {
        let index = *self.fns.get(name)?;
        Some((index, self.fn_header(index)))
    }

    /// The header of item `index`.
    pub fn header_at(&self, index: usize) -> &Header {
        &self.headers[index]
    }

    fn fn_header(&self, index: FnIndex) -> &Header {
        &self.headers[index.0 as usize]
    }

    /// What item `index` is, after checking an `inverse` or `pgf` against its function.
    pub fn kind(&self, index: usize, item: &ast::Item) -> Result<FuncKind, CompileError> {
        let name = &item.name.name;
        let this = self.header_at(index);
        match item.kind {
            ItemKind::Fn => Ok(FuncKind::Fn),
            ItemKind::Inverse => {
                let f = self.target(item, "inverse")?;
                self.unique(index, item, &self.first_inverse, "inverse")?;
                let outputs = check_inverse(name, this, f)?;
                Ok(FuncKind::Inverse {
                    of: name.clone(),
                    outputs,
                })
            }
            ItemKind::Pgf => {
                let f = self.target(item, "pgf")?;
                self.unique(index, item, &self.first_pgf, "pgf")?;
                let inverse = self.first_inverse.get(name).map(|&i| self.header_at(i));
                check_pgf(name, this, f, inverse)?;
                Ok(FuncKind::Pgf { of: name.clone() })
            }
        }
    }

    /// The `fn` an `inverse` or `pgf` declaration is about.
    fn target(&self, item: &ast::Item, kind: &'static str) -> Result<&Header, CompileError> {
        match self.function(&item.name.name) {
            Some((_, header)) => Ok(header),
            None => Err(CompileError::DeclarationOfUnknown {
                kind,
                name: item.name.name.clone(),
                span: header_span(item),
            }),
        }
    }

    /// Fails unless item `index` is the first declaration of its kind for its function.
    fn unique(
        &self,
        index: usize,
        item: &ast::Item,
        firsts: &HashMap<String, usize>,
        kind: &'static str,
    ) -> Result<(), CompileError> {
        match firsts.get(&item.name.name) {
            Some(&first) if first != index => Err(CompileError::DuplicateDeclaration {
                kind,
                name: item.name.name.clone(),
                span: header_span(item),
                first: self.header_at(first).span,
            }),
            _ => Ok(()),
        }
    }
}

fn fn_index(index: usize) -> FnIndex {
    FnIndex(u32::try_from(index).unwrap_or(u32::MAX))
}

fn header_span(item: &ast::Item) -> Span {
    Span::new(item.span.start as usize, item.name.span.end as usize)
}

/// Resolves an item's parameters and return type.
fn header(item: &ast::Item) -> Result<Header, CompileError> {
    let mut params: Vec<ParamSig> = Vec::with_capacity(item.params.len());
    for param in &item.params {
        if param.theta && item.kind != ItemKind::Inverse {
            return Err(CompileError::NotAllowed {
                what: "theta".to_string(),
                why: "only the parameters of an `inverse` declaration can be `theta` parameters"
                    .to_string(),
                span: param.span,
            });
        }
        if params.iter().any(|p| p.name == param.name.name) {
            return Err(CompileError::DuplicateParam {
                name: param.name.name.clone(),
                span: param.name.span,
            });
        }
        params.push(ParamSig {
            name: param.name.name.clone(),
            ty: types::scalar(&param.ty, types::PARAM_IS_SCALAR)?,
            theta: param.theta,
            span: param.span,
        });
    }
    let returns = types::resolve(&item.ret)?.scalars();
    Ok(Header {
        params,
        returns,
        span: header_span(item),
        name_span: item.name.span,
    })
}

/// Checks `inverse F(outputs of F..., theta params...) -> inputs of F`; returns the number of
/// output parameters.
fn check_inverse(name: &str, inverse: &Header, f: &Header) -> Result<usize, CompileError> {
    let wrong = |detail: String| CompileError::InverseSignature {
        name: name.to_string(),
        detail,
        span: inverse.span,
    };
    if let Some(first_theta) = inverse.params.iter().position(|p| p.theta) {
        if let Some(late) = inverse.params[first_theta..].iter().find(|p| !p.theta) {
            return Err(wrong(format!(
                "the output parameter `{}` comes after a theta parameter; theta parameters come last",
                late.name
            )));
        }
    }
    let outputs = inverse.types_where(false);
    if outputs != f.returns {
        return Err(wrong(format!(
            "expected {} (the {} of `{name}`) but found {}",
            describe(&f.returns, "output parameter"),
            if f.returns.len() == 1 {
                "output"
            } else {
                "outputs"
            },
            describe(&outputs, "parameter"),
        )));
    }
    let want = Ty::from_scalars(&f.param_types());
    let got = Ty::from_scalars(&inverse.returns);
    if want != got {
        return Err(wrong(format!(
            "it must return the inputs of `{name}`, `{want}`, but returns `{got}`"
        )));
    }
    Ok(outputs.len())
}

/// Checks `pgf F(inputs of F) -> theta types of F's inverse`.
fn check_pgf(
    name: &str,
    pgf: &Header,
    f: &Header,
    inverse: Option<&Header>,
) -> Result<(), CompileError> {
    let wrong = |detail: String| CompileError::PgfSignature {
        name: name.to_string(),
        detail,
        span: pgf.span,
    };
    let Some(inverse) = inverse else {
        return Err(wrong(format!(
            "`{name}` has no inverse declaration, so there are no theta values to give"
        )));
    };
    let thetas = inverse.types_where(true);
    if thetas.is_empty() {
        return Err(wrong(format!(
            "the inverse of `{name}` has no theta parameters, so there are no theta values to give"
        )));
    }
    let inputs = f.param_types();
    let params = pgf.param_types();
    if params != inputs {
        return Err(wrong(format!(
            "expected {} (the inputs of `{name}`) but found {}",
            describe(&inputs, "parameter"),
            describe(&params, "parameter"),
        )));
    }
    let want = Ty::from_scalars(&thetas);
    let got = Ty::from_scalars(&pgf.returns);
    if want != got {
        return Err(wrong(format!(
            "it must return the theta values of the inverse of `{name}`, `{want}`, but returns `{got}`"
        )));
    }
    Ok(())
}

/// "1 parameter of type `f64`", "2 parameters of types `f64`, `i64`", "no parameters".
fn describe(types: &[Type], noun: &str) -> String {
    let list: Vec<String> = types.iter().map(|t| format!("`{t}`")).collect();
    match types.len() {
        0 => format!("no {noun}s"),
        1 => format!("1 {noun} of type {}", list.join(", ")),
        n => format!("{n} {noun}s of types {}", list.join(", ")),
    }
}
