//! The abstract syntax tree: what the parser produces, before names and types are resolved.
//!
//! Every node carries the [`Span`] of the source it was parsed from. The tree is exactly what was
//! written (compound assignments, `else if` chains, casts and parentheses-free precedence are all
//! kept); `crate::typeck` resolves it into the typed tree of `crate::typeck::hir`.

use crate::span::Span;

/// A parsed `.pinv` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub items: Vec<Item>,
}

/// What kind of declaration an [`Item`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// `fn f(...) -> T { ... }`
    Fn,
    /// `inverse f(outputs..., theta params...) -> inputs { ... }`
    Inverse,
    /// `pgf f(inputs...) -> thetas { ... }`
    Pgf,
}

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: TypeExpr,
    pub body: Block,
    /// From the keyword to the closing brace.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A parameter: `x: f64`, or `theta s: bool` in an inverse declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub theta: bool,
    pub span: Span,
}

/// A written type: a name (`f64`, `i64`, `bool`, or anything else, rejected by the checker) or a
/// tuple `(T, U)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    Name(String),
    Tuple(Vec<TypeExpr>),
}

/// `{ statements; tail }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The final expression without a semicolon, whose value is the block's value.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let pat: ty = init;`
    Let {
        pat: Pattern,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    /// `x = value;` (`op` is `None`) or `x += value;` (`op` is `Some(Add)`), and so on for
    /// `-= *= /= %= &= |= ^= <<= >>=`.
    Assign {
        target: Ident,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `while cond { body }`
    While { cond: Expr, body: Block },
    /// `for var in start..end { body }`
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        body: Block,
    },
    /// An expression followed by `;`, or a block-like expression (`if`, `{}`) standing alone.
    Expr(Expr),
}

/// The left-hand side of a `let`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// `x` or `mut x`.
    Bind { name: Ident, mutable: bool },
    /// `_`
    Wild,
    /// `(p, q, ...)`
    Tuple(Vec<Pattern>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An f64 literal (`1.5`, `2.0e-3`, `1e9`).
    Float(f64),
    /// An i64 literal (`3`, `0xff`); a minus sign directly before a literal is folded into it, so
    /// `-9223372036854775808` is `Int(i64::MIN)`.
    Int(i64),
    Bool(bool),
    /// A variable.
    Name(Ident),
    Unary(UnOp, Box<Expr>),
    /// Every binary operator, `&&` and `||` included.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`
    Cast(Box<Expr>, TypeExpr),
    /// `name(args)`: a module function or a primitive.
    Call {
        callee: Ident,
        args: Vec<Expr>,
    },
    /// `(a, b)`: a tuple of two or more elements.
    Tuple(Vec<Expr>),
    /// `if cond { then } else else_`; `else_` is a `Block` or another `If`.
    If {
        cond: Box<Expr>,
        then: Block,
        else_: Option<Box<Expr>>,
    },
    Block(Block),
    /// `return e` (`None` for a bare `return`).
    Return(Option<Box<Expr>>),
    /// `fail("reason")`
    Fail(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `!e` (logical on bool, bitwise on i64)
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitXor,
    BitOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// Binding strength: higher binds tighter (`*` is 10, `||` is 1). All are left-associative.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Rem => 10,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Shl | BinOp::Shr => 8,
            BinOp::BitAnd => 7,
            BinOp::BitXor => 6,
            BinOp::BitOr => 5,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::And => 3,
            BinOp::Or => 2,
        }
    }

    pub fn is_comparison(self) -> bool {
        self.precedence() == 4
    }
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
        }
    }
}
