//! The e-graph language: the IR's pure operations as e-nodes.
//!
//! One e-node per pure IR instruction, named as in the IR text form, so rules read like IR:
//! `(fadd ?a (fmul 2.0 ?b))`.
//!
//! - [`Node::Num`]: a constant of any type. f64 constants are compared and hashed **by bits**
//!   ([`Num`]), so `0.0` and `-0.0` are different e-nodes (they are different values) and a NaN
//!   equals itself. In the text form an f64 always has a `.`, an exponent, `inf` or `nan`
//!   (`2.0`, `1e300`), an i64 is a plain integer (`7`), a bool is `true`/`false`.
//! - [`Node::Var`]: a leaf: an unknown input, a value chosen as θ (a *pivot*), or a part of the
//!   expression kept opaque (an *atom*). What each symbol is lives in the analysis
//!   ([`super::analysis::IsoAnalysis::vars`]), not in the node.
//! - [`Node::Op`]: a primitive opcode with its operands.
//! - [`Node::Sq`]: `sq x = x * x`, the one operation the IR has no opcode for. It exists so that
//!   `x * x` can be written with `x` once; it becomes a call of the helper `iso.sq`, whose inverse
//!   rule takes a square root with a sign choice (see [`crate::solve::helpers`]).
//! - [`Node::Odds`]: `odds a c = a / (c − a)`, a ratio of affine terms with `a` once; it becomes
//!   a call of the helper `iso.odds`, whose rule picks the closed form stable for the ratio
//!   (see [`crate::solve::odds`]).
//! - [`Node::Call`]: result `r` of a call of a module function (pure and deterministic): rewrites
//!   treat it as an uninterpreted function of its operands.

use egg::{FromOp, Id, Language, Symbol};
use pinv_core::ir::constant::parse_f64;
use pinv_core::ir::{Const, FuncId, Opcode};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A constant e-node payload: equal and hashed by type and bits, ordered by type then value.
#[derive(Clone, Copy, Debug)]
pub struct Num(pub Const);

impl Num {
    pub fn f64(x: f64) -> Num {
        Num(Const::F64(x))
    }

    fn rank(&self) -> u8 {
        match self.0 {
            Const::F64(_) => 0,
            Const::I64(_) => 1,
            Const::Bool(_) => 2,
        }
    }
}

impl PartialEq for Num {
    fn eq(&self, other: &Num) -> bool {
        self.0 == other.0
    }
}

impl Eq for Num {}

impl Hash for Num {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl PartialOrd for Num {
    fn partial_cmp(&self, other: &Num) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Num {
    fn cmp(&self, other: &Num) -> Ordering {
        match (self.0, other.0) {
            (Const::F64(a), Const::F64(b)) => a.total_cmp(&b),
            (Const::I64(a), Const::I64(b)) => a.cmp(&b),
            (Const::Bool(a), Const::Bool(b)) => a.cmp(&b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::solve::plan::const_text(self.0))
    }
}

impl Num {
    /// Parses the text form (see the module docs); `None` if `s` is not a constant.
    pub fn parse(s: &str) -> Option<Num> {
        match s {
            "true" => return Some(Num(Const::Bool(true))),
            "false" => return Some(Num(Const::Bool(false))),
            _ => {}
        }
        let first = s.chars().next()?;
        if !(first.is_ascii_digit() || first == '-' || first == '+' || s == "inf" || s == "nan") {
            return None;
        }
        if let Ok(i) = s.parse::<i64>() {
            return Some(Num(Const::I64(i)));
        }
        parse_f64(s).map(|x| Num(Const::F64(x)))
    }
}

/// An e-node. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    Num(Num),
    Var(Symbol),
    Op(Opcode, Box<[Id]>),
    Sq([Id; 1]),
    Odds([Id; 2]),
    Call {
        callee: FuncId,
        result: u32,
        args: Box<[Id]>,
    },
}

/// What kind of e-node, for [`Language::Discriminant`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Num,
    Var,
    Op(Opcode),
    Sq,
    Odds,
    Call(FuncId, u32, usize),
}

impl Node {
    pub fn op(op: Opcode, args: &[Id]) -> Node {
        Node::Op(op, args.to_vec().into_boxed_slice())
    }

    pub fn num(c: Const) -> Node {
        Node::Num(Num(c))
    }

    /// The constant, if this is one.
    pub fn constant(&self) -> Option<Const> {
        match self {
            Node::Num(n) => Some(n.0),
            _ => None,
        }
    }
}

impl Language for Node {
    type Discriminant = Kind;

    fn discriminant(&self) -> Kind {
        match self {
            Node::Num(_) => Kind::Num,
            Node::Var(_) => Kind::Var,
            Node::Op(op, _) => Kind::Op(*op),
            Node::Sq(_) => Kind::Sq,
            Node::Odds(_) => Kind::Odds,
            Node::Call {
                callee,
                result,
                args,
            } => Kind::Call(*callee, *result, args.len()),
        }
    }

    fn matches(&self, other: &Node) -> bool {
        match (self, other) {
            (Node::Num(a), Node::Num(b)) => a == b,
            (Node::Var(a), Node::Var(b)) => a == b,
            (Node::Op(a, x), Node::Op(b, y)) => a == b && x.len() == y.len(),
            (Node::Sq(_), Node::Sq(_)) | (Node::Odds(_), Node::Odds(_)) => true,
            (
                Node::Call {
                    callee: a,
                    result: r,
                    args: x,
                },
                Node::Call {
                    callee: b,
                    result: s,
                    args: y,
                },
            ) => a == b && r == s && x.len() == y.len(),
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            Node::Num(_) | Node::Var(_) => &[],
            Node::Op(_, args) | Node::Call { args, .. } => args,
            Node::Sq(a) => a,
            Node::Odds(a) => a,
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            Node::Num(_) | Node::Var(_) => &mut [],
            Node::Op(_, args) | Node::Call { args, .. } => args,
            Node::Sq(a) => a,
            Node::Odds(a) => a,
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Num(n) => write!(f, "{n}"),
            Node::Var(s) => write!(f, "{s}"),
            Node::Op(op, _) => write!(f, "{op}"),
            Node::Sq(_) => f.write_str("sq"),
            Node::Odds(_) => f.write_str("odds"),
            Node::Call { callee, result, .. } => write!(f, "call.{}.{result}", callee.as_u32()),
        }
    }
}

/// Why text is not an e-node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseNodeError(pub String);

impl FromOp for Node {
    type Error = ParseNodeError;

    fn from_op(op: &str, children: Vec<Id>) -> Result<Node, ParseNodeError> {
        if children.is_empty() {
            if let Some(n) = Num::parse(op) {
                return Ok(Node::Num(n));
            }
        }
        if op == "sq" {
            return match children.as_slice() {
                &[a] => Ok(Node::Sq([a])),
                _ => Err(ParseNodeError(format!("`sq` takes one operand: {op}"))),
            };
        }
        if op == "odds" {
            return match children.as_slice() {
                &[a, c] => Ok(Node::Odds([a, c])),
                _ => Err(ParseNodeError(format!("`odds` takes two operands: {op}"))),
            };
        }
        if let Some(opcode) = Opcode::from_name(op) {
            if opcode.arity() != children.len() {
                return Err(ParseNodeError(format!(
                    "`{op}` takes {} operands, not {}",
                    opcode.arity(),
                    children.len()
                )));
            }
            return Ok(Node::op(opcode, &children));
        }
        if let Some(rest) = op.strip_prefix("call.") {
            let (f, r) = rest
                .split_once('.')
                .ok_or_else(|| ParseNodeError(format!("`{op}` is not `call.F.R`")))?;
            let f: u32 = f.parse().map_err(|_| ParseNodeError(op.to_string()))?;
            let r: u32 = r.parse().map_err(|_| ParseNodeError(op.to_string()))?;
            return Ok(Node::Call {
                callee: FuncId::from_u32(f),
                result: r,
                args: children.into_boxed_slice(),
            });
        }
        if children.is_empty() {
            return Ok(Node::Var(Symbol::from(op)));
        }
        Err(ParseNodeError(format!("unknown operation `{op}`")))
    }
}

/// The tree under `root` of a `RecExpr`, in s-expression form with shared parts repeated (what
/// the cost counts). Stops with `…` beyond `limit` characters.
pub fn tree_text(expr: &[Node], root: usize, limit: usize) -> String {
    fn go(expr: &[Node], i: usize, out: &mut String, limit: usize) {
        if out.len() > limit {
            return;
        }
        let node = &expr[i];
        if node.is_leaf() {
            out.push_str(&node.to_string());
            return;
        }
        out.push('(');
        out.push_str(&node.to_string());
        for &c in node.children() {
            out.push(' ');
            go(expr, usize::from(c), out, limit);
        }
        out.push(')');
    }
    let mut out = String::new();
    go(expr, root, &mut out, limit);
    if out.len() > limit {
        let mut cut = limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        let e: egg::RecExpr<Node> = "(fadd (fmul 2.0 x) (sq (fneg -0.0)))".parse().unwrap();
        assert_eq!(e.to_string(), "(fadd (fmul 2.0 x) (sq (fneg -0.0)))");
        let i: egg::RecExpr<Node> = "(iadd 7 (imul -3 n))".parse().unwrap();
        assert_eq!(i.to_string(), "(iadd 7 (imul -3 n))");
        assert!(matches!(i.as_ref()[0], Node::Num(Num(Const::I64(7)))));
        assert!("(fadd 1.0)".parse::<egg::RecExpr<Node>>().is_err());
    }

    #[test]
    fn zeros_are_different_constants() {
        assert_ne!(Num::f64(0.0), Num::f64(-0.0));
        assert_eq!(Num::f64(f64::NAN), Num::f64(f64::NAN));
        assert!(Num::f64(-1.0) < Num::f64(2.0));
    }
}
