//! The typed tree: the AST after name resolution and type checking.
//!
//! Invariants (established by `crate::typeck`, relied on by `crate::lower`):
//! - every expression has a type ([`Ty`]) and the types of operands fit their operation;
//! - every variable is a [`LocalId`] into its function's `locals`, every call names a function of
//!   the program by [`FnIndex`], every operator and built-in call is an [`Opcode`];
//! - assignments only target `mutable` locals;
//! - compound assignments (`s += 1`) are already desugared to `s = s + 1`, identity casts removed,
//!   and `else if` chains are nested `If`s;
//! - an expression of type [`Ty::Never`] does not complete (`return`, `fail`, or a construct all of
//!   whose paths end in one). The converse does not hold: `x + fail("no")` has type `f64` (a `Prim`
//!   always has its opcode's result type, a `Call` its callee's return type), and any operand or
//!   argument may have type `Never`; a `Tuple` with an element of type `Never` has type `Never`;
//! - tuple-typed expressions only stand as the `init` of a [`LetPattern::Tuple`], as the operand of a
//!   `Return`, or as the tail of the function body (and, there, as `if` arms and block tails);
//! - a block's type is its tail's type; without a tail, `Never` if a statement certainly never
//!   completes, else `Unit`. The body's type is the function's return type, or `Never`.

use crate::ir::{Const, FuncKind, Opcode, Type};
use crate::span::Span;

/// The type of an expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(Type),
    /// Two or more scalars, from a tuple expression or a call of a function returning a tuple.
    Tuple(Vec<Type>),
    /// The type of statements and of `if` without `else`.
    Unit,
    /// The type of expressions that never complete; it fits wherever a type is expected.
    Never,
}

impl Ty {
    pub const F64: Ty = Ty::Scalar(Type::F64);
    pub const I64: Ty = Ty::Scalar(Type::I64);
    pub const BOOL: Ty = Ty::Scalar(Type::Bool);

    /// The scalar types this type is made of: one for a scalar, several for a tuple, none otherwise.
    pub fn scalars(&self) -> Vec<Type> {
        match self {
            Ty::Scalar(t) => vec![*t],
            Ty::Tuple(ts) => ts.clone(),
            Ty::Unit | Ty::Never => Vec::new(),
        }
    }

    /// The type of a list of scalars: one scalar, or a tuple.
    pub fn from_scalars(ts: &[Type]) -> Ty {
        match ts {
            [] => Ty::Unit,
            [t] => Ty::Scalar(*t),
            _ => Ty::Tuple(ts.to_vec()),
        }
    }
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Scalar(t) => write!(f, "{t}"),
            Ty::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            Ty::Unit => f.write_str("()"),
            Ty::Never => f.write_str("!"),
        }
    }
}

/// The index of a function in [`Program::functions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnIndex(pub u32);

/// The index of a local variable in [`FnDef::locals`]. Every `let` binding (and every shadowing
/// re-binding) gets its own id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// A checked module.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// In source order: `fn`s, `inverse`s and `pgf`s as they appear.
    pub functions: Vec<FnDef>,
}

impl Program {
    pub fn function(&self, index: FnIndex) -> &FnDef {
        &self.functions[index.0 as usize]
    }
}

/// A checked function, inverse or pgf declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct FnDef {
    /// The source name (`f` for `fn f`, `inverse f` and `pgf f` alike).
    pub name: String,
    /// The module-level name: `kind.symbol(&name)`, such as `inverse:f`.
    pub symbol: String,
    pub kind: FuncKind,
    /// The parameters, in order, as locals.
    pub params: Vec<LocalId>,
    /// Which parameters are `theta` parameters (only in inverse declarations).
    pub theta_params: Vec<bool>,
    /// The scalar return types (several for a tuple).
    pub returns: Vec<Type>,
    pub locals: Vec<Local>,
    pub body: Block,
    pub span: Span,
}

impl FnDef {
    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }

    pub fn param_types(&self) -> Vec<Type> {
        self.params.iter().map(|&p| self.local(p).ty).collect()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    /// The tail's type; `Unit` without a tail, or `Never` if a statement never completes.
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let x = init;` binds one local (`None` for `_`); `let (a, _) = init;` binds each element of
    /// a tuple.
    Let {
        pattern: LetPattern,
        init: Expr,
    },
    /// `x = value;`
    Assign {
        local: LocalId,
        value: Expr,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for var in start..end { body }`: `start` and `end` are evaluated once, before the loop.
    For {
        var: LocalId,
        start: Expr,
        end: Expr,
        body: Block,
    },
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub enum LetPattern {
    Single(Option<LocalId>),
    Tuple(Vec<Option<LocalId>>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Const(Const),
    Local(LocalId),
    /// A primitive operation: an operator, a cast or a built-in call.
    Prim {
        op: Opcode,
        args: Vec<Expr>,
    },
    /// `a && b` (short-circuit).
    And(Box<Expr>, Box<Expr>),
    /// `a || b` (short-circuit).
    Or(Box<Expr>, Box<Expr>),
    /// A call of a module function.
    Call {
        func: FnIndex,
        args: Vec<Expr>,
    },
    Tuple(Vec<Expr>),
    If {
        cond: Box<Expr>,
        then: Block,
        else_: Option<Block>,
    },
    Block(Block),
    /// `return value` (a function always returns a value).
    Return(Box<Expr>),
    /// `fail("reason")`
    Fail(String),
}
