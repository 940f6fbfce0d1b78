//! The kernel's LRU lists for LRU hash maps (kernel/bpf/bpf_lru_list.c), ported step by step so that the same
//! sequence of operations evicts the same entries.
//!
//! Common LRU: one global list set (active, inactive, free) plus, per CPU, a local free list and a local pending list
//! that new elements sit on until the CPU next refills its free list. Per-CPU LRU (`BPF_F_NO_COMMON_LRU`): one global
//! list set per CPU and no local lists.

mod list;
mod moves;

use list::Links;

/// Scans per rotation/shrink for the common LRU (`LOCAL_NR_SCANS`); also the cap of the local free target.
const LOCAL_FREE_TARGET: u32 = 128;
/// Free nodes to shrink at once, and scans, for the per-CPU LRU (`PERCPU_FREE_TARGET`, `PERCPU_NR_SCANS`).
const PERCPU_FREE_TARGET: u32 = 4;

/// `enum bpf_lru_list_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Active = 0,
    Inactive = 1,
    Free = 2,
    LocalFree = 3,
    LocalPending = 4,
}

impl Kind {
    fn is_local(self) -> bool {
        matches!(self, Kind::LocalFree | Kind::LocalPending)
    }
}

/// What the hash table does when the LRU evicts a node (`del_from_htab`).
pub(crate) trait Evict {
    /// Removes the element of `node` from the table; false when it is not there.
    fn del_from_htab(&mut self, node: u32) -> bool;
}

#[derive(Clone, Copy, Debug)]
struct NodeState {
    kind: Kind,
    referenced: bool,
    cpu: u32,
}

/// `struct bpf_lru_list`: three list heads, the active/inactive counts and the inactive rotation cursor.
#[derive(Clone, Debug)]
struct LruList {
    /// Sentinels of the active, inactive and free lists, indexed by `Kind`.
    heads: [u32; 3],
    counts: [u32; 2],
    next_inactive_rotation: u32,
}

/// `struct bpf_lru_locallist`.
#[derive(Clone, Debug)]
struct LocalList {
    free: u32,
    pending: u32,
    next_steal: usize,
}

/// `struct bpf_lru` over nodes `0..nodes`, populated with every node free.
#[derive(Clone, Debug)]
pub(crate) struct Lru {
    links: Links,
    nodes: Vec<NodeState>,
    /// One list set for the common LRU, one per CPU otherwise.
    lists: Vec<LruList>,
    /// Per-CPU local lists (common LRU only).
    locals: Vec<LocalList>,
    percpu: bool,
    nr_scans: u32,
    target_free: u32,
    /// Steps of the last common-LRU `bpf_lru_pop_free`, as an engine that examines or moves one node a step walks
    /// it ([`Lru::pop_steps`]).
    steps: u64,
}

impl Lru {
    /// `bpf_lru_init` then `bpf_lru_populate` with `nodes` elements.
    pub(crate) fn new(nodes: u32, possible_cpus: usize, percpu: bool) -> Lru {
        let cpus = possible_cpus.max(1);
        let (nlists, nlocals) = if percpu { (cpus, 0) } else { (1, cpus) };
        let heads = (nlists * 3 + nlocals * 2) as u32;
        let mut lru = Lru {
            links: Links::new(nodes, heads),
            nodes: vec![
                NodeState {
                    kind: Kind::Free,
                    referenced: false,
                    cpu: 0,
                };
                nodes as usize
            ],
            lists: Vec::with_capacity(nlists),
            locals: Vec::with_capacity(nlocals),
            percpu,
            nr_scans: if percpu {
                PERCPU_FREE_TARGET
            } else {
                LOCAL_FREE_TARGET
            },
            target_free: 1,
            steps: 0,
        };
        let mut next_head = nodes;
        let mut take = || {
            next_head += 1;
            next_head - 1
        };
        for _ in 0..nlists {
            let heads = [take(), take(), take()];
            lru.lists.push(LruList {
                heads,
                counts: [0; 2],
                next_inactive_rotation: heads[Kind::Inactive as usize],
            });
        }
        for cpu in 0..nlocals {
            lru.locals.push(LocalList {
                free: take(),
                pending: take(),
                next_steal: cpu,
            });
        }
        if percpu {
            lru.populate_percpu(nodes, cpus);
        } else {
            let free = lru.lists[0].heads[Kind::Free as usize];
            for n in 0..nodes {
                lru.links.add(n, free);
            }
            lru.target_free = ((nodes / cpus as u32) / 2).clamp(1, LOCAL_FREE_TARGET);
        }
        lru
    }

    /// `bpf_percpu_lru_populate`: consecutive runs of `nodes / cpus` nodes to each CPU.
    fn populate_percpu(&mut self, nodes: u32, cpus: usize) {
        let per_cpu = (nodes / cpus as u32).max(1);
        let mut i = 0;
        'cpus: for cpu in 0..cpus {
            let free = self.lists[cpu].heads[Kind::Free as usize];
            loop {
                if i == nodes {
                    break 'cpus;
                }
                self.nodes[i as usize].cpu = cpu as u32;
                self.links.add(i, free);
                i += 1;
                if i % per_cpu == 0 {
                    break;
                }
            }
        }
    }

    /// `bpf_lru_node_set_ref`: a program looked the element up.
    pub(crate) fn set_ref(&mut self, node: u32) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.referenced = true;
        }
    }

    /// `__local_list_flush`: pending nodes of a CPU join the global lists, referenced ones as active.
    fn flush_local(&mut self, cpu: usize) {
        let pending = self.locals[cpu].pending;
        let mut node = self.links.prev(pending);
        while node != pending {
            let prev = self.links.prev(node);
            let kind = if self.is_ref(node) {
                Kind::Active
            } else {
                Kind::Inactive
            };
            self.move_in(0, node, kind);
            self.steps += 1;
            node = prev;
        }
        self.steps += 1;
    }

    /// `bpf_lru_list_pop_free_to_local`.
    fn pop_free_to_local(&mut self, cpu: usize, table: &mut dyn Evict) {
        self.flush_local(cpu);
        self.steps += 1; // the rotation's choice
        self.rotate(0);
        let free = self.head(0, Kind::Free);
        let local_free = self.locals[cpu].free;
        let mut moved = 0;
        let mut node = self.links.next(free);
        while node != free {
            let next = self.links.next(node);
            self.move_to_free(0, node, local_free, Kind::LocalFree);
            self.steps += 1;
            moved += 1;
            if moved == self.target_free {
                break;
            }
            node = next;
        }
        if moved < self.target_free {
            self.steps += 1; // the free list's end
        }
        if moved < self.target_free {
            self.shrink(
                0,
                self.target_free - moved,
                local_free,
                Kind::LocalFree,
                table,
            );
        }
    }

    /// `__local_list_add_pending`.
    fn add_pending(&mut self, cpu: usize, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.cpu = cpu as u32;
        n.kind = Kind::LocalPending;
        n.referenced = false;
        let pending = self.locals[cpu].pending;
        self.links.add(node, pending);
    }

    /// `__local_list_pop_free`.
    fn pop_local_free(&mut self, cpu: usize) -> Option<u32> {
        let free = self.locals[cpu].free;
        let node = self.links.next(free);
        if node == free {
            return None;
        }
        self.links.del(node);
        Some(node)
    }

    /// `__local_list_pop_pending`: the oldest unreferenced pending node, else the oldest pending node.
    fn pop_local_pending(&mut self, cpu: usize, table: &mut dyn Evict) -> Option<u32> {
        let pending = self.locals[cpu].pending;
        for force in [false, true] {
            let mut node = self.links.prev(pending);
            while node != pending {
                if (!self.is_ref(node) || force) && table.del_from_htab(node) {
                    self.links.del(node);
                    return Some(node);
                }
                node = self.links.prev(node);
            }
        }
        None
    }

    /// `bpf_lru_pop_free`: a node for a new element on `cpu`, evicting as the kernel does; None when none can be had.
    pub(crate) fn pop_free(&mut self, cpu: usize, table: &mut dyn Evict) -> Option<u32> {
        if self.percpu {
            self.percpu_pop_free(cpu, table)
        } else {
            self.common_pop_free(cpu, table)
        }
    }

    fn common_pop_free(&mut self, cpu: usize, table: &mut dyn Evict) -> Option<u32> {
        let cpus = self.locals.len();
        let cpu = cpu % cpus;
        self.steps = 1;
        let mut node = self.pop_local_free(cpu);
        if node.is_none() {
            self.pop_free_to_local(cpu, table);
            self.steps += 1;
            node = self.pop_local_free(cpu);
        }
        if let Some(n) = node {
            self.add_pending(cpu, n);
            self.steps += 1; // the node handed over
            return node;
        }
        let first_steal = self.locals[cpu].next_steal;
        let mut steal = first_steal;
        loop {
            node = self
                .pop_local_free(steal)
                .or_else(|| self.pop_local_pending(steal, table));
            steal = (steal + 1) % cpus;
            if node.is_some() || steal == first_steal {
                break;
            }
        }
        self.locals[cpu].next_steal = steal;
        if let Some(n) = node {
            self.add_pending(cpu, n);
        }
        node
    }

    fn percpu_pop_free(&mut self, cpu: usize, table: &mut dyn Evict) -> Option<u32> {
        let l = cpu % self.lists.len();
        self.rotate(l);
        let free = self.head(l, Kind::Free);
        if self.links.is_empty(free) {
            self.shrink(l, PERCPU_FREE_TARGET, free, Kind::Free, table);
        }
        if self.links.is_empty(free) {
            return None;
        }
        let node = self.links.next(free);
        self.clear_ref(node);
        self.move_node(l, node, Kind::Inactive);
        Some(node)
    }

    /// Steps of the last `bpf_lru_pop_free` of a common LRU, counted as an engine that examines or moves one list
    /// node a step takes them (rtl/sephirot/maps.sv's LRU, one cycle a step): one for the local free list, and on a
    /// refill one per pending node flushed, per node rotated, scanned or moved to the local free list, per list
    /// head reached or skipped, per scan limit reached, and one for each phase (flush end, rotation, inactive
    /// rotation, shrink, its end, the second local pop), and one to hand a node over. 0 before any, and for the
    /// per-CPU LRU.
    pub(crate) fn pop_steps(&self) -> u64 {
        self.steps
    }

    /// Forgets the last pop's steps (an operation that may not pop starts with this).
    pub(crate) fn reset_steps(&mut self) {
        self.steps = 0;
    }

    /// `bpf_lru_push_free`: the element of `node` left the table.
    pub(crate) fn push_free(&mut self, node: u32) {
        let Some(state) = self.nodes.get(node as usize).copied() else {
            return;
        };
        if self.percpu {
            let l = state.cpu as usize % self.lists.len();
            self.move_node(l, node, Kind::Free);
            return;
        }
        match state.kind {
            Kind::Free | Kind::LocalFree => {}
            Kind::LocalPending => {
                let n = &mut self.nodes[node as usize];
                n.kind = Kind::LocalFree;
                n.referenced = false;
                let free = self.locals[state.cpu as usize].free;
                self.links.move_to(node, free);
            }
            Kind::Active | Kind::Inactive => self.move_node(0, node, Kind::Free),
        }
    }
}
