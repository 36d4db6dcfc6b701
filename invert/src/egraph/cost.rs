//! The extraction cost: occurrences of unknowns first, occurrences of pivots second, size third.
//!
//! egg sums child costs once per use, so the cost is a **tree** cost: in `(x+y)·(x+y)` the
//! subterm is counted twice even though the e-graph (and the RecExpr extracted) stores it once.
//! That is what isolation needs: the reorientation solves an unknown once per path from the
//! output, so every extra occurrence on the tree is a potential consistency check.
//!
//! - **unknown**: occurrences of unknown leaves (an atom — an opaque subterm — counts for the
//!   inputs it contains);
//! - **pivot**: occurrences of values chosen as θ. Fewer is better: `a·(y + a + 2)` (two) lets the
//!   reorientation solve `a` with the θ of the product and then `y`, where `y·a + a² + 2a` (four)
//!   does not;
//! - **size**: AST size (`pow` counts 2, so `sq x` wins over `pow(x, 2)`).
//!
//! The tuple is compared lexicographically (a derived `PartialOrd` on the struct).

use super::analysis::{VarInfo, VarKind};
use super::lang::Node;
use egg::{CostFunction, EGraph, Id, Language, Symbol};
use pinv_core::ir::Opcode;
use std::collections::HashMap;

/// See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Cost {
    pub unknown: u64,
    pub pivot: u64,
    pub size: u64,
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            unknown: self.unknown.saturating_add(o.unknown),
            pivot: self.pivot.saturating_add(o.pivot),
            size: self.size.saturating_add(o.size),
        }
    }
}

/// The cost function, given what each leaf symbol is. With `zeros` (the constant-zero classes
/// of the e-graph), a product with a constant 0 costs as much as an unknown occurring
/// [`ZERO_FACTOR`] extra times: `x·0` stands for `x − x` (the e-graph finds `x − x = x·(1 − 1)`),
/// which is not 0 for an infinite x, so no rule removes it, and it keeps x's unknowns in the
/// term where no value can solve them.
pub struct IsoCost<'a> {
    pub vars: &'a HashMap<Symbol, VarInfo>,
    pub zeros: Option<&'a std::collections::HashSet<Id>>,
}

/// See [`IsoCost`].
pub const ZERO_FACTOR: u64 = 64;

impl CostFunction<Node> for IsoCost<'_> {
    type Cost = Cost;

    fn cost<C>(&mut self, enode: &Node, mut costs: C) -> Cost
    where
        C: FnMut(Id) -> Cost,
    {
        let base = match enode {
            Node::Var(s) => match self.vars.get(s).map(|v| v.kind) {
                Some(VarKind::Unknown { weight, .. }) => Cost {
                    unknown: weight,
                    pivot: 0,
                    size: 1,
                },
                Some(VarKind::Pivot) => Cost {
                    unknown: 0,
                    pivot: 1,
                    size: 1,
                },
                None => Cost {
                    size: 1,
                    ..Cost::default()
                },
            },
            Node::Op(Opcode::Pow, _) => Cost {
                size: 2,
                ..Cost::default()
            },
            Node::Op(Opcode::Fmul, args)
                if self
                    .zeros
                    .is_some_and(|z| args.iter().any(|a| z.contains(a))) =>
            {
                Cost {
                    unknown: ZERO_FACTOR,
                    pivot: 0,
                    size: 1,
                }
            }
            _ => Cost {
                size: 1,
                ..Cost::default()
            },
        };
        enode.fold(base, |acc, id| acc + costs(id))
    }
}

/// An extracted term: a RecExpr-like list (children before parents, shared parts stored once)
/// with the e-class each node came from.
#[derive(Clone, Debug)]
pub struct Extracted {
    pub nodes: Vec<Node>,
    pub classes: Vec<Id>,
    /// The node of each root, in root order.
    pub roots: Vec<usize>,
    pub cost: Cost,
}

impl Extracted {
    /// Extracts the best term of every root class.
    pub fn best(
        egraph: &EGraph<Node, super::analysis::IsoAnalysis>,
        vars: &HashMap<Symbol, VarInfo>,
        roots: &[Id],
    ) -> Extracted {
        let zeros: std::collections::HashSet<Id> = egraph
            .classes()
            .filter(|c| matches!(c.data.konst, Some(pinv_core::ir::Const::F64(z)) if z == 0.0))
            .map(|c| c.id)
            .collect();
        let extractor = egg::Extractor::new(
            egraph,
            IsoCost {
                vars,
                zeros: Some(&zeros),
            },
        );
        let mut out = Extracted {
            nodes: Vec::new(),
            classes: Vec::new(),
            roots: Vec::new(),
            cost: Cost::default(),
        };
        let mut memo: HashMap<Id, usize> = HashMap::new();
        for &root in roots {
            let root = egraph.find(root);
            out.cost = out.cost + extractor.find_best_cost(root);
            let i = Self::walk(egraph, &extractor, root, &mut memo, &mut out);
            out.roots.push(i);
        }
        out
    }

    fn walk(
        egraph: &EGraph<Node, super::analysis::IsoAnalysis>,
        extractor: &egg::Extractor<IsoCost<'_>, Node, super::analysis::IsoAnalysis>,
        class: Id,
        memo: &mut HashMap<Id, usize>,
        out: &mut Extracted,
    ) -> usize {
        let class = egraph.find(class);
        if let Some(&i) = memo.get(&class) {
            return i;
        }
        // Iterative on the children would be safer for deep terms; terms here are small
        // (isolation works on one expression at a time, atoms keep the rest out).
        let node = extractor.find_best_node(class).clone();
        let node = node.map_children(|c| {
            let i = Self::walk(egraph, extractor, c, memo, out);
            Id::from(i)
        });
        out.nodes.push(node);
        out.classes.push(class);
        let i = out.nodes.len() - 1;
        memo.insert(class, i);
        i
    }

    /// The terms as written: the e-graph's input itself (`expr`, whose nodes come before
    /// their parents, with `roots`), each node with the class `class_of` gives it.
    pub fn as_written(
        expr: &egg::RecExpr<Node>,
        roots: &[Id],
        class_of: &dyn Fn(usize) -> Id,
    ) -> Extracted {
        let nodes: Vec<Node> = expr.as_ref().to_vec();
        Extracted {
            classes: (0..nodes.len()).map(class_of).collect(),
            nodes,
            roots: roots.iter().map(|&r| usize::from(r)).collect(),
            cost: Cost::default(),
        }
    }

    /// Tree occurrences of every leaf symbol under each node (saturating).
    pub fn occurrences(&self, symbol: Symbol) -> Vec<u64> {
        let mut occ = vec![0u64; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            occ[i] = match n {
                Node::Var(s) if *s == symbol => 1,
                _ => n
                    .children()
                    .iter()
                    .fold(0u64, |a, &c| a.saturating_add(occ[usize::from(c)])),
            };
        }
        occ
    }

    /// The tree of root `k` as an s-expression (for reports), cut after `limit` characters.
    pub fn text(&self, k: usize, limit: usize) -> String {
        super::lang::tree_text(&self.nodes, self.roots[k], limit)
    }
}
