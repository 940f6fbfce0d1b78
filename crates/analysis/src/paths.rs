//! Entry-to-exit paths through one function's CFG.
//!
//! In an acyclic function every path ends at an exit. With loops, the retreating edges of a depth-first search
//! (back edges) are reported and treated as path ends, so that the enumeration stays finite.

use crate::{BlockId, Cfg};
use std::fmt;

/// How many paths [`crate::report`] lists per function.
pub const DEFAULT_PATH_CAP: usize = 64;

/// Where a path ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathEnd {
    /// At an `exit`.
    Exit,
    /// Where a back edge to the given block would start another iteration.
    BackEdge(BlockId),
}

/// One path: blocks from the entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    /// The blocks, entry first.
    pub blocks: Vec<BlockId>,
    /// How it ends.
    pub end: PathEnd,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let blocks: Vec<String> = self.blocks.iter().map(|b| b.to_string()).collect();
        f.write_str(&blocks.join(" "))?;
        match self.end {
            PathEnd::Exit => f.write_str(" exit"),
            PathEnd::BackEdge(to) => write!(f, " loop->{to}"),
        }
    }
}

/// The paths of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// Back edges `(from, to)`, ascending; empty for an acyclic function.
    pub back_edges: Vec<(BlockId, BlockId)>,
    /// How many paths there are in all (saturating).
    pub count: u128,
    /// The first paths in depth-first order (successors in edge order), at most the cap.
    pub paths: Vec<Path>,
}

impl Paths {
    /// Counts the paths of `cfg` and lists up to `cap` of them.
    pub fn compute(cfg: &Cfg, cap: usize) -> Self {
        let n = cfg.blocks.len();
        let succs: Vec<Vec<BlockId>> = cfg
            .blocks
            .iter()
            .map(|b| {
                let mut list: Vec<BlockId> = Vec::new();
                for (s, _) in &b.succs {
                    if !list.contains(s) {
                        list.push(*s);
                    }
                }
                list
            })
            .collect();
        // Depth-first search: back edges and a post-order of the forward graph.
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut is_back: Vec<Vec<bool>> = succs.iter().map(|s| vec![false; s.len()]).collect();
        let mut post = Vec::with_capacity(n);
        let mut stack = vec![(Cfg::ENTRY, 0usize)];
        state[0] = 1;
        while let Some((b, next)) = stack.last_mut() {
            let b = *b;
            if let Some(&s) = succs[b.index()].get(*next) {
                let edge = *next;
                *next += 1;
                match state[s.index()] {
                    0 => {
                        state[s.index()] = 1;
                        stack.push((s, 0));
                    }
                    1 => is_back[b.index()][edge] = true,
                    _ => {}
                }
            } else {
                state[b.index()] = 2;
                post.push(b);
                stack.pop();
            }
        }
        let mut back_edges = Vec::new();
        for b in 0..n {
            for (e, &s) in succs[b].iter().enumerate() {
                if is_back[b][e] {
                    back_edges.push((BlockId::new(b), s));
                }
            }
        }
        back_edges.sort();
        let mut count = vec![0u128; n];
        for &b in &post {
            let bi = b.index();
            let mut c: u128 = if succs[bi].is_empty() { 1 } else { 0 };
            for (e, s) in succs[bi].iter().enumerate() {
                let add = if is_back[bi][e] { 1 } else { count[s.index()] };
                c = c.saturating_add(add);
            }
            count[bi] = c;
        }
        let mut paths = Vec::new();
        let mut walk: Vec<(BlockId, usize)> = vec![(Cfg::ENTRY, 0)];
        while paths.len() < cap {
            let Some(top) = walk.last_mut() else { break };
            let (b, edge) = (top.0, top.1);
            top.1 += 1;
            let bi = b.index();
            let here = || walk.iter().map(|(b, _)| *b).collect::<Vec<_>>();
            if succs[bi].is_empty() {
                if edge == 0 {
                    paths.push(Path {
                        blocks: here(),
                        end: PathEnd::Exit,
                    });
                } else {
                    walk.pop();
                }
                continue;
            }
            match succs[bi].get(edge) {
                None => {
                    walk.pop();
                }
                Some(&s) if is_back[bi][edge] => paths.push(Path {
                    blocks: here(),
                    end: PathEnd::BackEdge(s),
                }),
                Some(&s) => walk.push((s, 0)),
            }
        }
        Paths {
            back_edges,
            count: count[0],
            paths,
        }
    }

    /// Whether the function loops.
    pub fn has_loops(&self) -> bool {
        !self.back_edges.is_empty()
    }

    /// Whether more paths exist than were listed.
    pub fn truncated(&self) -> bool {
        self.count > self.paths.len() as u128
    }
}
