//! Moves between the global lists: rotation of the active and inactive lists and shrinking, as in
//! `bpf_lru_list.c`.

use super::{Evict, Kind, Lru};

impl Lru {
    pub(super) fn is_ref(&self, node: u32) -> bool {
        self.nodes[node as usize].referenced
    }

    pub(super) fn clear_ref(&mut self, node: u32) {
        self.nodes[node as usize].referenced = false;
    }

    pub(super) fn kind(&self, node: u32) -> Kind {
        self.nodes[node as usize].kind
    }

    pub(super) fn count_inc(&mut self, l: usize, kind: Kind) {
        if let Some(c) = self.lists[l].counts.get_mut(kind as usize) {
            *c += 1;
        }
    }

    pub(super) fn count_dec(&mut self, l: usize, kind: Kind) {
        if let Some(c) = self.lists[l].counts.get_mut(kind as usize) {
            *c = c.saturating_sub(1);
        }
    }

    pub(super) fn head(&self, l: usize, kind: Kind) -> u32 {
        self.lists[l].heads[kind as usize]
    }

    /// Keeps the inactive rotation cursor valid when `node` leaves its place.
    pub(super) fn step_rotation_cursor(&mut self, l: usize, node: u32) {
        if self.lists[l].next_inactive_rotation == node {
            self.lists[l].next_inactive_rotation = self.links.prev(node);
        }
    }

    /// `__bpf_lru_node_move_to_free`.
    pub(super) fn move_to_free(&mut self, l: usize, node: u32, free_head: u32, kind: Kind) {
        if self.kind(node).is_local() {
            return;
        }
        self.step_rotation_cursor(l, node);
        self.count_dec(l, self.kind(node));
        self.nodes[node as usize].kind = kind;
        self.links.move_to(node, free_head);
    }

    /// `__bpf_lru_node_move_in`: from a local list into the global lists.
    pub(super) fn move_in(&mut self, l: usize, node: u32, kind: Kind) {
        if !self.kind(node).is_local() || kind.is_local() {
            return;
        }
        self.count_inc(l, kind);
        self.nodes[node as usize].kind = kind;
        self.clear_ref(node);
        let head = self.head(l, kind);
        self.links.move_to(node, head);
    }

    /// `__bpf_lru_node_move`: between or within the global lists.
    pub(super) fn move_node(&mut self, l: usize, node: u32, kind: Kind) {
        let from = self.kind(node);
        if from.is_local() || kind.is_local() {
            return;
        }
        if from != kind {
            self.count_dec(l, from);
            self.count_inc(l, kind);
            self.nodes[node as usize].kind = kind;
        }
        self.clear_ref(node);
        self.step_rotation_cursor(l, node);
        let head = self.head(l, kind);
        self.links.move_to(node, head);
    }

    /// `__bpf_lru_list_rotate_active`: from the tail, referenced nodes go back to the head of active, the others to
    /// the head of inactive.
    pub(super) fn rotate_active(&mut self, l: usize) {
        let active = self.head(l, Kind::Active);
        let first = self.links.next(active);
        let mut node = self.links.prev(active);
        let mut i = 0;
        while node != active {
            let prev = self.links.prev(node);
            let kind = if self.is_ref(node) {
                Kind::Active
            } else {
                Kind::Inactive
            };
            self.move_node(l, node, kind);
            self.steps += 1;
            i += 1;
            if i == self.nr_scans || node == first {
                return;
            }
            node = prev;
        }
        self.steps += 1; // the head reached
    }

    /// `__bpf_lru_list_rotate_inactive`: from the cursor backwards, referenced nodes move to active.
    pub(super) fn rotate_inactive(&mut self, l: usize) {
        let inactive = self.head(l, Kind::Inactive);
        self.steps += 1; // the rotation's set-up
        if self.links.is_empty(inactive) {
            return;
        }
        let cursor = self.lists[l].next_inactive_rotation;
        let mut last = self.links.next(cursor);
        if last == inactive {
            last = self.links.next(last);
        }
        let mut cur = cursor;
        let mut next = inactive;
        let mut i = 0;
        while i < self.nr_scans {
            self.steps += 1;
            if cur == inactive {
                cur = self.links.prev(cur);
                continue;
            }
            next = self.links.prev(cur);
            if self.is_ref(cur) {
                self.move_node(l, cur, Kind::Active);
            }
            if cur == last {
                break;
            }
            cur = next;
            i += 1;
        }
        if i >= self.nr_scans {
            self.steps += 1; // the scan limit seen
        }
        self.lists[l].next_inactive_rotation = next;
    }

    /// `__bpf_lru_list_shrink_inactive`.
    pub(super) fn shrink_inactive(
        &mut self,
        l: usize,
        target: u32,
        free_head: u32,
        kind: Kind,
        table: &mut dyn Evict,
    ) -> u32 {
        let inactive = self.head(l, Kind::Inactive);
        let mut node = self.links.prev(inactive);
        let (mut shrunk, mut i) = (0, 0);
        self.steps += 1; // the shrink's set-up
        while node != inactive {
            self.steps += 1;
            let prev = self.links.prev(node);
            if self.is_ref(node) {
                self.move_node(l, node, Kind::Active);
            } else if table.del_from_htab(node) {
                self.move_to_free(l, node, free_head, kind);
                shrunk += 1;
                if shrunk == target {
                    return shrunk;
                }
            }
            i += 1;
            if i == self.nr_scans {
                break;
            }
            node = prev;
        }
        if node == inactive {
            self.steps += 1; // the head reached
        }
        self.steps += 1; // the shrink's end
        shrunk
    }

    /// `__bpf_lru_list_rotate`.
    pub(super) fn rotate(&mut self, l: usize) {
        let counts = self.lists[l].counts;
        if counts[Kind::Inactive as usize] < counts[Kind::Active as usize] {
            self.rotate_active(l);
        }
        self.rotate_inactive(l);
    }

    /// `__bpf_lru_list_shrink`: honour reference bits first, else evict the oldest node regardless.
    pub(super) fn shrink(
        &mut self,
        l: usize,
        target: u32,
        free_head: u32,
        kind: Kind,
        table: &mut dyn Evict,
    ) -> u32 {
        let shrunk = self.shrink_inactive(l, target, free_head, kind, table);
        if shrunk > 0 {
            return shrunk;
        }
        let inactive = self.head(l, Kind::Inactive);
        let list = if self.links.is_empty(inactive) {
            self.head(l, Kind::Active)
        } else {
            inactive
        };
        let mut node = self.links.prev(list);
        while node != list {
            self.steps += 1;
            let prev = self.links.prev(node);
            if table.del_from_htab(node) {
                self.move_to_free(l, node, free_head, kind);
                return 1;
            }
            node = prev;
        }
        self.steps += 1; // the head reached
        0
    }
}
