//! Random ASTs, well-formed or not (any spans, names, nesting, types): the checker never panics,
//! and what it accepts satisfies the typed tree's invariants.

use super::invariants::validate;
use crate::span::Span;
use crate::syntax::ast::*;
use crate::typeck::check;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

/// Parameters, locals, functions, built-ins, and a name nobody defines.
const NAMES: &[&str] = &[
    "x", "x", "y", "y", "n", "p", "f", "g", "sin", "min", "abs", "fail", "zz",
];
const TYPES: &[&str] = &["f64", "f64", "f64", "i64", "i64", "bool", "u8"];
const BINOPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::BitAnd,
    BinOp::BitXor,
    BinOp::BitOr,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
];

fn span() -> impl Strategy<Value = Span> + Clone {
    (0usize..60, 0usize..60).prop_map(|(a, b)| Span::new(a, b))
}

fn ident(names: &'static [&'static str]) -> impl Strategy<Value = Ident> + Clone {
    (select(names), span()).prop_map(|(name, span)| Ident {
        name: name.to_string(),
        span,
    })
}

fn type_expr() -> impl Strategy<Value = TypeExpr> + Clone {
    let scalar = (select(TYPES), span()).prop_map(|(name, span)| TypeExpr {
        kind: TypeExprKind::Name(name.to_string()),
        span,
    });
    scalar.prop_recursive(2, 6, 3, |inner| {
        (vec(inner, 0..4), span()).prop_map(|(elems, span)| TypeExpr {
            kind: TypeExprKind::Tuple(elems),
            span,
        })
    })
}

fn pattern() -> impl Strategy<Value = Pattern> + Clone {
    let single = prop_oneof![
        4 => (ident(NAMES), any::<bool>())
            .prop_map(|(name, mutable)| PatternKind::Bind { name, mutable }),
        1 => Just(PatternKind::Wild),
    ];
    let single = (single, span()).prop_map(|(kind, span)| Pattern { kind, span });
    single.prop_recursive(2, 6, 3, |inner| {
        (vec(inner, 0..4), span()).prop_map(|(elems, span)| Pattern {
            kind: PatternKind::Tuple(elems),
            span,
        })
    })
}

fn expr() -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        2 => (-3.0f64..3.0).prop_map(ExprKind::Float),
        2 => (-3i64..3).prop_map(ExprKind::Int),
        1 => any::<bool>().prop_map(ExprKind::Bool),
        5 => ident(NAMES).prop_map(ExprKind::Name),
        1 => Just(ExprKind::Fail("reason".to_string())),
        1 => Just(ExprKind::Return(None)),
    ];
    let leaf = (leaf, span()).prop_map(|(kind, span)| Expr { kind, span });
    leaf.prop_recursive(4, 48, 4, |e| {
        let block = block_of(e.clone());
        let block_expr = (block.clone(), span()).prop_map(|(b, span)| Expr {
            kind: ExprKind::Block(b),
            span,
        });
        let kind = prop_oneof![
            1 => (select(&[UnOp::Neg, UnOp::Not][..]), e.clone())
                .prop_map(|(op, a)| ExprKind::Unary(op, Box::new(a))),
            4 => (select(BINOPS), e.clone(), e.clone())
                .prop_map(|(op, a, b)| ExprKind::Binary(op, Box::new(a), Box::new(b))),
            1 => (e.clone(), type_expr()).prop_map(|(a, t)| ExprKind::Cast(Box::new(a), t)),
            2 => (ident(NAMES), vec(e.clone(), 0..3))
                .prop_map(|(callee, args)| ExprKind::Call { callee, args }),
            1 => vec(e.clone(), 0..4).prop_map(ExprKind::Tuple),
            2 => (e.clone(), block.clone(), option::of(block_expr)).prop_map(|(c, then, else_)| {
                ExprKind::If {
                    cond: Box::new(c),
                    then,
                    else_: else_.map(Box::new),
                }
            }),
            1 => block.prop_map(ExprKind::Block),
            1 => e.prop_map(|a| ExprKind::Return(Some(Box::new(a)))),
        ];
        (kind, span()).prop_map(|(kind, span)| Expr { kind, span })
    })
    .boxed()
}

/// A block whose statements use `e`; loop bodies inside hold only expression statements, which
/// keeps the strategy finite.
fn block_of(e: BoxedStrategy<Expr>) -> BoxedStrategy<Block> {
    let simple_block =
        (vec(e.clone(), 0..2), option::of(e.clone()), span()).prop_map(|(stmts, tail, span)| {
            Block {
                stmts: stmts
                    .into_iter()
                    .map(|e| Stmt {
                        span: e.span,
                        kind: StmtKind::Expr(e),
                    })
                    .collect(),
                tail: tail.map(Box::new),
                span,
            }
        });
    let stmt_kind = prop_oneof![
        3 => (pattern(), option::of(type_expr()), e.clone())
            .prop_map(|(pat, ty, init)| StmtKind::Let { pat, ty, init }),
        2 => (ident(NAMES), option::of(select(BINOPS)), e.clone())
            .prop_map(|(target, op, value)| StmtKind::Assign { target, op, value }),
        1 => (e.clone(), simple_block.clone()).prop_map(|(cond, body)| StmtKind::While { cond, body }),
        1 => (ident(NAMES), e.clone(), e.clone(), simple_block).prop_map(|(var, start, end, body)| {
            StmtKind::For {
                var,
                start,
                end,
                body,
            }
        }),
        2 => e.clone().prop_map(StmtKind::Expr),
    ];
    let stmt = (stmt_kind, span()).prop_map(|(kind, span)| Stmt { kind, span });
    (vec(stmt, 0..4), option::of(e), span())
        .prop_map(|(stmts, tail, span)| Block {
            stmts,
            tail: tail.map(Box::new),
            span,
        })
        .boxed()
}

fn item() -> impl Strategy<Value = Item> {
    let param = (
        ident(&["x", "y", "n", "p"]),
        type_expr(),
        prop::bool::weighted(0.15),
        span(),
    )
        .prop_map(|(name, ty, theta, span)| Param {
            name,
            ty,
            theta,
            span,
        });
    let kind = select(&[ItemKind::Fn, ItemKind::Fn, ItemKind::Inverse, ItemKind::Pgf][..]);
    (
        kind,
        ident(&["f", "g", "h", "sin"]),
        vec(param, 0..3),
        type_expr(),
        block_of(expr()),
        span(),
    )
        .prop_map(|(kind, name, params, ret, body, span)| Item {
            kind,
            name,
            params,
            ret,
            body,
            span,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_asts_never_panic(items in vec(item(), 1..4)) {
        if let Ok(program) = check(&Module { items }) {
            validate(&program);
        }
    }
}
