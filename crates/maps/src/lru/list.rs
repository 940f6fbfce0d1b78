//! Intrusive doubly linked lists over numbered nodes, with the list heads as sentinel nodes, as `struct list_head`.

/// `prev`/`next` links of every node and sentinel.
#[derive(Clone, Debug)]
pub(crate) struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    /// `nodes` unlinked nodes followed by `heads` empty list heads.
    pub(crate) fn new(nodes: u32, heads: u32) -> Links {
        let total = (nodes + heads) as usize;
        let mut links = Links {
            prev: vec![0; total],
            next: vec![0; total],
        };
        for h in nodes..nodes + heads {
            links.prev[h as usize] = h;
            links.next[h as usize] = h;
        }
        links
    }

    pub(crate) fn next(&self, x: u32) -> u32 {
        self.next[x as usize]
    }

    pub(crate) fn prev(&self, x: u32) -> u32 {
        self.prev[x as usize]
    }

    pub(crate) fn is_empty(&self, head: u32) -> bool {
        self.next(head) == head
    }

    /// `list_del`.
    pub(crate) fn del(&mut self, x: u32) {
        let (p, n) = (self.prev(x), self.next(x));
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// `list_add`: insert right after `head`.
    pub(crate) fn add(&mut self, x: u32, head: u32) {
        let n = self.next(head);
        self.prev[x as usize] = head;
        self.next[x as usize] = n;
        self.prev[n as usize] = x;
        self.next[head as usize] = x;
    }

    /// `list_move`.
    pub(crate) fn move_to(&mut self, x: u32, head: u32) {
        self.del(x);
        self.add(x, head);
    }
}
