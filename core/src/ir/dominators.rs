//! Dominators: which blocks every path from the entry passes through before a given block.
//!
//! Computed with Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance
//! Algorithm") over the reverse postorder of the reachable blocks. Used by the verifier (SSA
//! dominance), by CSE (a value may replace another only where it dominates) and by the θ
//! schema (a read is unconditional when its block dominates every exit).

use super::{Block, Function};
use cranelift_entity::{EntitySet, SecondaryMap};

/// The dominator tree of the reachable blocks of a function.
#[derive(Clone, Debug)]
pub struct DomTree {
    /// The postorder number of each reachable block.
    number: SecondaryMap<Block, Option<usize>>,
    /// The blocks in postorder (the entry is last).
    postorder: Vec<Block>,
    /// The immediate dominator of each block, by postorder number (the entry's is itself).
    idom: Vec<usize>,
}

impl DomTree {
    /// The dominator tree of a function whose blocks all end in a terminator.
    pub fn compute(func: &Function) -> DomTree {
        let Some(entry) = func.entry() else {
            return DomTree::from_postorder(Vec::new(), |_| Vec::new());
        };
        // Iterative depth-first postorder.
        let mut seen = EntitySet::new();
        let mut postorder = Vec::new();
        let mut stack = vec![(entry, 0usize)];
        seen.insert(entry);
        while let Some(&mut (block, ref mut next)) = stack.last_mut() {
            let succs = func.successors(block);
            if let Some(&s) = succs.get(*next) {
                *next += 1;
                if seen.insert(s) {
                    stack.push((s, 0));
                }
            } else {
                postorder.push(block);
                stack.pop();
            }
        }
        DomTree::from_postorder(postorder, |b| func.successors(b))
    }

    /// The dominator tree of a graph given by its postorder from the entry (the entry last) and
    /// its successor function.
    pub fn from_postorder(
        postorder: Vec<Block>,
        successors: impl Fn(Block) -> Vec<Block>,
    ) -> DomTree {
        let n = postorder.len();
        let mut number: SecondaryMap<Block, Option<usize>> = SecondaryMap::new();
        for (i, &b) in postorder.iter().enumerate() {
            number[b] = Some(i);
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, &b) in postorder.iter().enumerate() {
            for s in successors(b) {
                if let Some(j) = number[s] {
                    preds[j].push(i);
                }
            }
        }
        const UNDEF: usize = usize::MAX;
        let mut idom = vec![UNDEF; n];
        if n == 0 {
            return DomTree {
                number,
                postorder,
                idom,
            };
        }
        let entry = n - 1;
        idom[entry] = entry;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while a < b {
                    a = idom[a];
                }
                while b < a {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..entry).rev() {
                let mut new = UNDEF;
                for &p in &preds[b] {
                    if idom[p] == UNDEF {
                        continue;
                    }
                    new = if new == UNDEF {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
                if new != UNDEF && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        DomTree {
            number,
            postorder,
            idom,
        }
    }

    /// Whether `block` is reachable from the entry.
    pub fn is_reachable(&self, block: Block) -> bool {
        self.number.get(block).copied().flatten().is_some()
    }

    /// The reachable blocks in reverse postorder (the entry first; every block after its
    /// immediate dominator).
    pub fn reverse_postorder(&self) -> impl Iterator<Item = Block> + '_ {
        self.postorder.iter().rev().copied()
    }

    /// The immediate dominator of a reachable block (`None` for the entry).
    pub fn idom(&self, block: Block) -> Option<Block> {
        let i = self.number.get(block).copied().flatten()?;
        let up = self.idom[i];
        (up != i).then(|| self.postorder[up])
    }

    /// Whether `a` dominates `b` (both reachable; every block dominates itself).
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(a), Some(mut b)) = (
            self.number.get(a).copied().flatten(),
            self.number.get(b).copied().flatten(),
        ) else {
            return false;
        };
        // Dominators have higher postorder numbers; walk up from b.
        while b < a {
            let up = self.idom[b];
            if up == b {
                return false;
            }
            b = up;
        }
        a == b
    }
}
