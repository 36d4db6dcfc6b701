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
    /// When a depth-first walk of the dominator tree enters and leaves each block (by
    /// postorder number): `a` dominates `b` exactly when `b`'s interval lies in `a`'s.
    interval: Vec<(u32, u32)>,
}

impl DomTree {
    /// The dominator tree of a function whose blocks all end in a terminator.
    pub fn compute(func: &Function) -> DomTree {
        let Some(entry) = func.entry() else {
            return DomTree::from_postorder(Vec::new(), |_| Vec::new());
        };
        DomTree::of_graph(entry, |b| func.successors(b))
    }

    /// The dominator tree of the graph reached from `root` through `successors` (a reversed CFG
    /// with a virtual exit gives post-dominators).
    pub fn of_graph<S: AsRef<[Block]>>(root: Block, successors: impl Fn(Block) -> S) -> DomTree {
        // Iterative depth-first postorder.
        let mut seen = EntitySet::new();
        let mut postorder = Vec::new();
        let mut stack = vec![(root, 0usize)];
        seen.insert(root);
        while let Some(&mut (block, ref mut next)) = stack.last_mut() {
            let succs = successors(block);
            if let Some(&s) = succs.as_ref().get(*next) {
                *next += 1;
                if seen.insert(s) {
                    stack.push((s, 0));
                }
            } else {
                postorder.push(block);
                stack.pop();
            }
        }
        DomTree::from_postorder(postorder, successors)
    }

    /// The dominator tree of a graph given by its postorder from the entry (the entry last) and
    /// its successor function.
    pub fn from_postorder<S: AsRef<[Block]>>(
        postorder: Vec<Block>,
        successors: impl Fn(Block) -> S,
    ) -> DomTree {
        let n = postorder.len();
        let mut number: SecondaryMap<Block, Option<usize>> = SecondaryMap::new();
        for (i, &b) in postorder.iter().enumerate() {
            number[b] = Some(i);
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, &b) in postorder.iter().enumerate() {
            for &s in successors(b).as_ref() {
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
                interval: Vec::new(),
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
        let interval = intervals(&idom, entry);
        DomTree {
            number,
            postorder,
            idom,
            interval,
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

    /// The reachable blocks in a preorder of the dominator tree (the entry first; every block
    /// after its dominators, and the blocks a block dominates right after it).
    pub fn preorder(&self) -> Vec<Block> {
        let mut order: Vec<(u32, Block)> = self
            .postorder
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| self.interval.get(i).map(|&(enter, _)| (enter, b)))
            .collect();
        order.sort_unstable();
        order.into_iter().map(|(_, b)| b).collect()
    }

    /// The immediate dominator of a reachable block (`None` for the entry).
    pub fn idom(&self, block: Block) -> Option<Block> {
        let i = self.number.get(block).copied().flatten()?;
        let up = self.idom[i];
        (up != i).then(|| self.postorder[up])
    }

    /// Whether `a` dominates `b` (both reachable; every block dominates itself).
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(a), Some(b)) = (
            self.number.get(a).copied().flatten(),
            self.number.get(b).copied().flatten(),
        ) else {
            return false;
        };
        let (Some(&(a_in, a_out)), Some(&(b_in, b_out))) =
            (self.interval.get(a), self.interval.get(b))
        else {
            return false;
        };
        a_in <= b_in && b_out <= a_out
    }
}

/// The enter and leave times of a depth-first walk of the dominator tree given by `idom` (by
/// postorder number; `entry` is its root). A block whose immediate dominator was never found
/// gets an empty interval that no other block's contains.
fn intervals(idom: &[usize], entry: usize) -> Vec<(u32, u32)> {
    let n = idom.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, &d) in idom.iter().enumerate() {
        if b != entry && d < n {
            children[d].push(b);
        }
    }
    let mut interval = vec![(u32::MAX, u32::MAX); n];
    let mut clock = 0u32;
    let mut stack = vec![(entry, 0usize)];
    interval[entry].0 = clock;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&c) = children[b].get(*next) {
            *next += 1;
            clock += 1;
            interval[c].0 = clock;
            stack.push((c, 0));
        } else {
            clock += 1;
            interval[b].1 = clock;
            stack.pop();
        }
    }
    interval
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    /// On random graphs, `dominates` is the definition: every path from the entry to `b` passes
    /// through `a` (removing `a` makes `b` unreachable), or `a == b`.
    #[test]
    fn dominance_is_the_definition_on_random_graphs() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..500 {
            let n = 1 + next(12);
            let succs: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..next(3)).map(|_| next(n)).collect())
                .collect();
            let block = |i: usize| Block::new(i);
            // Depth-first postorder from 0.
            let mut seen = vec![false; n];
            let mut postorder = Vec::new();
            let mut stack = vec![(0usize, 0usize)];
            seen[0] = true;
            while let Some(&mut (b, ref mut k)) = stack.last_mut() {
                if let Some(&s) = succs[b].get(*k) {
                    *k += 1;
                    if !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    postorder.push(block(b));
                    stack.pop();
                }
            }
            let doms = DomTree::from_postorder(postorder, |b| {
                succs[b.index()]
                    .iter()
                    .map(|&s| block(s))
                    .collect::<Vec<Block>>()
            });
            let reach_without = |cut: usize| {
                let mut seen = vec![false; n];
                let mut stack = vec![0usize];
                while let Some(b) = stack.pop() {
                    if b == cut || seen[b] {
                        continue;
                    }
                    seen[b] = true;
                    stack.extend(succs[b].iter().copied());
                }
                seen
            };
            // The preorder: every reachable block once, the entry first, and the blocks each
            // block dominates right after it (its subtree is one run of the order).
            let pre = doms.preorder();
            assert_eq!(pre.len(), seen.iter().filter(|&&s| s).count(), "{succs:?}");
            assert_eq!(pre.first(), Some(&block(0)));
            for (i, &a) in pre.iter().enumerate() {
                let run = pre[i..]
                    .iter()
                    .take_while(|&&b| doms.dominates(a, b))
                    .count();
                let all = pre.iter().filter(|&&b| doms.dominates(a, b)).count();
                assert_eq!(run, all, "{succs:?}: the subtree of {a} is not contiguous");
            }
            for a in (0..n).filter(|&a| seen[a]) {
                let without = reach_without(a);
                for b in (0..n).filter(|&b| seen[b]) {
                    let want = a == b || !without[b];
                    assert_eq!(
                        doms.dominates(block(a), block(b)),
                        want,
                        "{succs:?}: {a} {b}"
                    );
                }
            }
        }
    }
}
