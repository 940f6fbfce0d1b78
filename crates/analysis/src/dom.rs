//! Dominators and post-dominators (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"), dominance
//! frontiers, and control equivalence classes.

use crate::{BlockId, Cfg};

/// A dominator or post-dominator tree over one function's blocks.
///
/// For post-dominators, a virtual exit node succeeds every exit block; a block whose immediate post-dominator is that
/// node has none here. Unreachable blocks (and, for post-dominators, blocks that reach no exit) have no parent and are
/// not in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    /// Immediate (post-)dominator of each block; `None` for the root and for blocks outside the tree.
    pub idom: Vec<Option<BlockId>>,
    /// Whether each block is in the tree.
    pub in_tree: Vec<bool>,
    /// True for a post-dominator tree.
    pub post: bool,
}

impl DomTree {
    /// Dominators of `cfg` from its entry.
    pub fn dominators(cfg: &Cfg) -> Self {
        let n = cfg.blocks.len();
        let succs: Vec<Vec<usize>> = cfg
            .blocks
            .iter()
            .map(|b| b.succs.iter().map(|(s, _)| s.index()).collect())
            .collect();
        let preds: Vec<Vec<usize>> = cfg
            .blocks
            .iter()
            .map(|b| b.preds.iter().map(|p| p.index()).collect())
            .collect();
        let idom = immediate_dominators(n, 0, &succs, &preds);
        DomTree::from_raw(idom, n, false)
    }

    /// Post-dominators of `cfg`, with a virtual node after every exit block.
    pub fn post_dominators(cfg: &Cfg) -> Self {
        let n = cfg.blocks.len();
        let exit = n;
        // The reversed graph: successors are the original predecessors.
        let mut succs: Vec<Vec<usize>> = cfg
            .blocks
            .iter()
            .map(|b| b.preds.iter().map(|p| p.index()).collect())
            .collect();
        let mut preds: Vec<Vec<usize>> = cfg
            .blocks
            .iter()
            .map(|b| b.succs.iter().map(|(s, _)| s.index()).collect())
            .collect();
        succs.push(cfg.exits.iter().map(|e| e.index()).collect());
        preds.push(Vec::new());
        for e in &cfg.exits {
            preds[e.index()].push(exit);
        }
        // Only blocks reachable from the entry count, so that dead code does not shape post-dominance.
        for (b, reachable) in cfg.reachable.iter().enumerate() {
            if !reachable {
                succs[b].clear();
                preds[b].clear();
            }
        }
        for list in succs.iter_mut().chain(preds.iter_mut()) {
            list.retain(|&x| x == exit || cfg.reachable[x]);
        }
        let idom = immediate_dominators(n + 1, exit, &succs, &preds);
        DomTree::from_raw(idom, n, true)
    }

    fn from_raw(raw: Vec<Option<usize>>, n: usize, post: bool) -> Self {
        let root = if post { n } else { 0 };
        let mut idom = vec![None; n];
        let mut in_tree = vec![false; n];
        for b in 0..n {
            if let Some(d) = raw[b] {
                in_tree[b] = true;
                if b != root && d != n {
                    idom[b] = Some(BlockId::new(d));
                }
            }
        }
        DomTree {
            idom,
            in_tree,
            post,
        }
    }

    /// The immediate (post-)dominator of `b`.
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom[b.index()]
    }

    /// Whether `a` (post-)dominates `b`; every block in the tree (post-)dominates itself.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        if !self.in_tree[a.index()] || !self.in_tree[b.index()] {
            return false;
        }
        let mut at = Some(b);
        while let Some(x) = at {
            if x == a {
                return true;
            }
            at = self.idom[x.index()];
        }
        false
    }

    /// Entry and exit times of a depth-first walk of the tree, for constant-time ancestor tests.
    pub fn intervals(&self) -> TreeIntervals {
        let n = self.idom.len();
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for b in 0..n {
            match self.idom[b] {
                Some(d) => children[d.index()].push(b),
                None if self.in_tree[b] => roots.push(b),
                None => {}
            }
        }
        let mut enter = vec![usize::MAX; n];
        let mut leave = vec![0; n];
        let mut clock = 0;
        for root in roots {
            let mut stack = vec![(root, 0usize)];
            enter[root] = clock;
            clock += 1;
            while let Some((node, next)) = stack.last_mut() {
                if let Some(&c) = children[*node].get(*next) {
                    *next += 1;
                    enter[c] = clock;
                    clock += 1;
                    stack.push((c, 0));
                } else {
                    leave[*node] = clock;
                    stack.pop();
                }
            }
        }
        TreeIntervals { enter, leave }
    }

    /// `b` and its (post-)dominators, innermost first.
    pub fn ancestors(&self, b: BlockId) -> Vec<BlockId> {
        if !self.in_tree[b.index()] {
            return Vec::new();
        }
        let mut out = vec![b];
        while let Some(d) = self.idom[out[out.len() - 1].index()] {
            out.push(d);
        }
        out
    }

    /// Dominance frontier of every block (for a dominator tree): the blocks where its dominance ends.
    pub fn frontiers(&self, cfg: &Cfg) -> Vec<Vec<BlockId>> {
        let mut df = vec![Vec::new(); cfg.blocks.len()];
        for b in cfg.block_ids() {
            let preds: Vec<BlockId> = cfg
                .block(b)
                .preds
                .iter()
                .copied()
                .filter(|p| self.in_tree[p.index()])
                .collect();
            if preds.len() < 2 || !self.in_tree[b.index()] {
                continue;
            }
            for p in preds {
                let mut runner = Some(p);
                while let Some(r) = runner {
                    if Some(r) == self.idom[b.index()] {
                        break;
                    }
                    if !df[r.index()].contains(&b) {
                        df[r.index()].push(b);
                    }
                    runner = self.idom[r.index()];
                }
            }
        }
        for list in &mut df {
            list.sort();
        }
        df
    }
}

/// Immediate dominators of a graph of `n` nodes (Lengauer-Tarjan with path compression, near-linear: the iterative
/// Cooper-Harvey-Kennedy algorithm walked the whole depth of the tree per join, quadratic on a ladder of jumps);
/// `None` for nodes `entry` does not reach, `Some(entry)` for it.
pub fn immediate_dominators(
    n: usize,
    entry: usize,
    succs: &[Vec<usize>],
    preds: &[Vec<usize>],
) -> Vec<Option<usize>> {
    // Depth-first preorder numbers; everything below works on them.
    let (vertex, parent) = preorder(n, entry, succs);
    let m = vertex.len();
    let mut number = vec![usize::MAX; n];
    for (k, &v) in vertex.iter().enumerate() {
        number[v] = k;
    }
    let mut semi: Vec<usize> = (0..m).collect();
    let mut label: Vec<usize> = (0..m).collect();
    let mut ancestor = vec![usize::MAX; m];
    let mut idom = vec![0usize; m];
    let mut bucket: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut path = Vec::new();
    for w in (1..m).rev() {
        for &p in &preds[vertex[w]] {
            let v = number[p];
            if v == usize::MAX {
                continue;
            }
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            semi[w] = semi[w].min(semi[u]);
        }
        bucket[semi[w]].push(w);
        ancestor[w] = parent[w];
        for v in std::mem::take(&mut bucket[parent[w]]) {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            idom[v] = if semi[u] < semi[v] { u } else { parent[w] };
        }
    }
    for w in 1..m {
        if idom[w] != semi[w] {
            idom[w] = idom[idom[w]];
        }
    }
    let mut out = vec![None; n];
    out[entry] = Some(entry);
    for w in 1..m {
        out[vertex[w]] = Some(vertex[idom[w]]);
    }
    out
}

/// The node of least semidominator on `v`'s path to its forest root (`v` itself at a root), compressing the path
/// without recursion.
fn eval(
    v: usize,
    ancestor: &mut [usize],
    label: &mut [usize],
    semi: &[usize],
    path: &mut Vec<usize>,
) -> usize {
    if ancestor[v] == usize::MAX {
        return v;
    }
    path.clear();
    let mut x = v;
    while ancestor[ancestor[x]] != usize::MAX {
        path.push(x);
        x = ancestor[x];
    }
    for &y in path.iter().rev() {
        let a = ancestor[y];
        if semi[label[a]] < semi[label[y]] {
            label[y] = label[a];
        }
        ancestor[y] = ancestor[a];
    }
    label[v]
}

/// Depth-first preorder of the nodes `entry` reaches, and each one's parent in the search tree (by preorder number).
fn preorder(n: usize, entry: usize, succs: &[Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut number = vec![usize::MAX; n];
    let mut vertex = vec![entry];
    let mut parent = vec![0];
    number[entry] = 0;
    let mut stack = vec![(entry, 0usize)];
    while let Some((node, next)) = stack.last_mut() {
        if let Some(&s) = succs[*node].get(*next) {
            *next += 1;
            if number[s] == usize::MAX {
                number[s] = vertex.len();
                parent.push(number[*node]);
                vertex.push(s);
                stack.push((s, 0));
            }
        } else {
            stack.pop();
        }
    }
    (vertex, parent)
}

/// Depth-first entry and exit times of a [`DomTree`]'s blocks: `a` is an ancestor of `b` (or `b` itself) exactly
/// when `b`'s interval lies inside `a`'s.
#[derive(Clone, Debug)]
pub struct TreeIntervals {
    enter: Vec<usize>,
    leave: Vec<usize>,
}

impl TreeIntervals {
    /// Whether block `a` (post-)dominates block `b` (both indices; false for blocks outside the tree).
    pub fn contains(&self, a: usize, b: usize) -> bool {
        self.enter[a] != usize::MAX
            && self.enter[b] != usize::MAX
            && self.enter[a] <= self.enter[b]
            && self.leave[b] <= self.leave[a]
    }
}

/// Control equivalence: `a` and `b` are equivalent iff one dominates the other and is post-dominated by it, so that
/// whenever one runs, so does the other (the hXDP compiler's candidates for code motion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlEquivalence {
    /// The classes, each ascending, ordered by their first block. Blocks outside either tree are in no class.
    pub classes: Vec<Vec<BlockId>>,
    /// The class index of each block.
    pub class_of: Vec<Option<usize>>,
}

impl ControlEquivalence {
    /// Classes from the dominator and post-dominator trees of one function, in time linear in its blocks.
    ///
    /// `a` and `b` (a dominating b, b post-dominating a) are joined through `b`'s immediate dominator alone: when
    /// some dominator `a` of `b` is post-dominated by `b`, so is every block between them on the dominator tree, and
    /// each of those post-dominates the ones above it (a path from `a` to the exit through `b` passes them), so the
    /// chain of immediate dominators links the same classes as every pair would.
    pub fn compute(cfg: &Cfg, dom: &DomTree, pdom: &DomTree) -> Self {
        let n = cfg.blocks.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let member = |b: usize| dom.in_tree[b] && pdom.in_tree[b];
        let post = pdom.intervals();
        for b in cfg.block_ids().filter(|b| member(b.index())) {
            let Some(a) = dom.idom(b) else {
                continue;
            };
            if member(a.index()) && post.contains(b.index(), a.index()) {
                let (ra, rb) = (find(&mut parent, a.index()), find(&mut parent, b.index()));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
        let mut classes: Vec<Vec<BlockId>> = Vec::new();
        let mut class_of = vec![None; n];
        let mut class_of_root = vec![None; n];
        for (b, slot) in class_of.iter_mut().enumerate() {
            if !member(b) {
                continue;
            }
            let root = find(&mut parent, b);
            let class = *class_of_root[root].get_or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            });
            classes[class].push(BlockId::new(b));
            *slot = Some(class);
        }
        ControlEquivalence { classes, class_of }
    }

    /// Whether `a` and `b` always run together.
    pub fn equivalent(&self, a: BlockId, b: BlockId) -> bool {
        match (self.class_of[a.index()], self.class_of[b.index()]) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }
}

/// Which blocks lie on a cycle (a strongly connected component of several blocks, or a block jumping to itself), by
/// Tarjan's algorithm without recursion.
pub fn on_cycles(succs: &[Vec<usize>]) -> Vec<bool> {
    let n = succs.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut cyclic = vec![false; n];
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = succs[v].get(*i) {
                *i += 1;
                if w == v {
                    cyclic[v] = true;
                }
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    for w in component {
                        cyclic[w] = true;
                    }
                }
            }
        }
    }
    cyclic
}
