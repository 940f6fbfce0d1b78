//! LPM_TRIE (kernel/bpf/lpm_trie.c): the kernel's binary trie with intermediate nodes, walked the same way, so the
//! longest match, `-ENOSPC` when full and the stored key bytes agree with the kernel.

use crate::abi::{errno::*, update_flags::*, Fail, Res};
use crate::values::Values;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    prefixlen: u32,
    child: [u32; 2],
    /// `LPM_TREE_NODE_FLAG_IM`: a branching point without a value.
    intermediate: bool,
    /// Value slot of a real node.
    slot: u32,
}

/// A parsed `struct bpf_lpm_trie_key { u32 prefixlen; u8 data[]; }`.
struct Key<'a> {
    prefixlen: u32,
    data: &'a [u8],
}

fn extract_bit(data: &[u8], index: u32) -> usize {
    data.get(index as usize / 8)
        .map_or(0, |b| usize::from((b >> (7 - index % 8)) & 1))
}

/// An LPM trie map.
#[derive(Clone, Debug)]
pub(crate) struct LpmTrie {
    data_size: usize,
    max_entries: u32,
    max_prefixlen: u32,
    root: u32,
    nodes: Vec<Node>,
    /// `data_size` bytes per node.
    node_data: Vec<u8>,
    free_nodes: Vec<u32>,
    free_slots: Vec<u32>,
    n_entries: u32,
    pub(crate) values: Values,
}

impl LpmTrie {
    pub(crate) fn new(key_size: usize, value_size: usize, max_entries: u32) -> LpmTrie {
        let data_size = key_size - 4;
        LpmTrie {
            data_size,
            max_entries,
            max_prefixlen: data_size as u32 * 8,
            root: NONE,
            nodes: Vec::new(),
            node_data: Vec::new(),
            free_nodes: Vec::new(),
            free_slots: Vec::new(),
            n_entries: 0,
            values: Values::new(value_size, 0),
        }
    }

    fn parse<'a>(&self, key: &'a [u8]) -> Res<Key<'a>> {
        let (len, data) = key
            .split_first_chunk::<4>()
            .ok_or(Fail::new(EINVAL, "lpm key shorter than 4 bytes"))?;
        if data.len() != self.data_size {
            return Err(Fail::new(EINVAL, "lpm key of the wrong size"));
        }
        Ok(Key {
            prefixlen: u32::from_le_bytes(*len),
            data,
        })
    }

    fn data(&self, node: u32) -> &[u8] {
        let start = node as usize * self.data_size;
        self.node_data
            .get(start..start + self.data_size)
            .unwrap_or(&[])
    }

    fn node(&self, n: u32) -> Node {
        self.nodes[n as usize]
    }

    /// `longest_prefix_match`: leading bits that agree, up to the shorter prefix.
    fn match_len(&self, node: u32, key: &Key<'_>) -> u32 {
        let limit = self.node(node).prefixlen.min(key.prefixlen);
        let mut len = 0;
        for (a, b) in self.data(node).iter().zip(key.data) {
            if len >= limit {
                break;
            }
            let diff = a ^ b;
            if diff != 0 {
                len += diff.leading_zeros();
                break;
            }
            len += 8;
        }
        len.min(limit)
    }

    fn alloc_node(&mut self, node: Node, data: &[u8]) -> u32 {
        let n = match self.free_nodes.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                self.node_data.resize(self.nodes.len() * self.data_size, 0);
                (self.nodes.len() - 1) as u32
            }
        };
        let start = n as usize * self.data_size;
        self.node_data[start..start + self.data_size].copy_from_slice(data);
        n
    }

    fn alloc_slot(&mut self, value: &[u8]) -> u32 {
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            let s = self.values.len() as u32;
            self.values.ensure(s as usize + 1);
            s
        });
        self.values.set(slot as usize, value);
        slot
    }

    /// Frees a node and, for a real node, its value slot.
    fn free_node(&mut self, n: u32) {
        let node = self.node(n);
        if !node.intermediate {
            self.free_slots.push(node.slot);
        }
        self.free_nodes.push(n);
    }

    /// `trie_lookup_elem`: the value slot of the longest prefix matching `key`.
    pub(crate) fn lookup_slot(&self, key: &[u8]) -> Option<u32> {
        let key = self.parse(key).ok()?;
        let mut found = None;
        let mut n = self.root;
        while n != NONE {
            let node = self.node(n);
            let matchlen = self.match_len(n, &key);
            if matchlen == self.max_prefixlen {
                found = Some(node.slot);
                break;
            }
            if matchlen < node.prefixlen {
                break;
            }
            if !node.intermediate {
                found = Some(node.slot);
            }
            n = node.child[extract_bit(key.data, node.prefixlen)];
        }
        found
    }

    /// `trie_check_add_elem`.
    fn check_add(&mut self, flags: u64) -> Res {
        if flags == EXIST {
            return Err(Fail::new(ENOENT, "no such prefix"));
        }
        if self.n_entries == self.max_entries {
            return Err(Fail::new(ENOSPC, "trie is full"));
        }
        self.n_entries += 1;
        Ok(())
    }

    /// Writes `value` into the link `at`: the root when `parent` is NONE, else the parent's child `bit`.
    fn set_link(&mut self, parent: u32, bit: usize, value: u32) {
        if parent == NONE {
            self.root = value;
        } else {
            self.nodes[parent as usize].child[bit] = value;
        }
    }

    /// `trie_update_elem`.
    pub(crate) fn update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Res {
        if flags > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        let key = self.parse(key)?;
        if key.prefixlen > self.max_prefixlen {
            return Err(Fail::new(EINVAL, "prefix length beyond the key's bits"));
        }
        let slot = self.alloc_slot(value);
        let fresh = Node {
            prefixlen: key.prefixlen,
            child: [NONE; 2],
            intermediate: false,
            slot,
        };
        let new = self.alloc_node(fresh, key.data);
        let result = self.attach(new, &key, flags);
        if result.is_err() {
            self.free_node(new);
        }
        result
    }

    fn attach(&mut self, new: u32, key: &Key<'_>, flags: u64) -> Res {
        let (mut parent, mut bit) = (NONE, 0);
        let mut n = self.root;
        let mut matchlen = 0;
        while n != NONE {
            let node = self.node(n);
            matchlen = self.match_len(n, key);
            if node.prefixlen != matchlen || node.prefixlen == key.prefixlen {
                break;
            }
            parent = n;
            bit = extract_bit(key.data, node.prefixlen);
            n = node.child[bit];
        }
        if n == NONE {
            self.check_add(flags)?;
            self.set_link(parent, bit, new);
            return Ok(());
        }
        let node = self.node(n);
        if node.prefixlen == matchlen {
            if !node.intermediate {
                if flags == NOEXIST {
                    return Err(Fail::new(EEXIST, "prefix exists"));
                }
            } else {
                self.check_add(flags)?;
            }
            self.nodes[new as usize].child = node.child;
            self.set_link(parent, bit, new);
            self.free_node(n);
            return Ok(());
        }
        self.check_add(flags)?;
        if matchlen == key.prefixlen {
            let next_bit = extract_bit(self.data(n), matchlen);
            self.nodes[new as usize].child[next_bit] = n;
            self.set_link(parent, bit, new);
            return Ok(());
        }
        let branch = Node {
            prefixlen: matchlen,
            child: if extract_bit(key.data, matchlen) == 1 {
                [n, new]
            } else {
                [new, n]
            },
            intermediate: true,
            slot: NONE,
        };
        let data = self.data(n).to_vec();
        let im = self.alloc_node(branch, &data);
        self.set_link(parent, bit, im);
        Ok(())
    }

    /// `trie_delete_elem`: exact prefix length and bits only.
    pub(crate) fn delete(&mut self, key: &[u8]) -> Res {
        let key = self.parse(key)?;
        if key.prefixlen > self.max_prefixlen {
            return Err(Fail::new(EINVAL, "prefix length beyond the key's bits"));
        }
        // Links are (parent, bit); `grand` is the link to `parent`.
        let (mut link, mut grand) = ((NONE, 0), (NONE, 0));
        let mut parent = NONE;
        let mut n = self.root;
        let mut matchlen = 0;
        while n != NONE {
            let node = self.node(n);
            matchlen = self.match_len(n, &key);
            if node.prefixlen != matchlen || node.prefixlen == key.prefixlen {
                break;
            }
            parent = n;
            grand = link;
            let bit = extract_bit(key.data, node.prefixlen);
            link = (n, bit);
            n = node.child[bit];
        }
        if n == NONE {
            return Err(Fail::new(ENOENT, "no such prefix"));
        }
        let node = self.node(n);
        if node.prefixlen != key.prefixlen || node.prefixlen != matchlen || node.intermediate {
            return Err(Fail::new(ENOENT, "no such prefix"));
        }
        self.n_entries -= 1;
        if node.child[0] != NONE && node.child[1] != NONE {
            self.free_slots.push(node.slot);
            let m = &mut self.nodes[n as usize];
            m.intermediate = true;
            m.slot = NONE;
            return Ok(());
        }
        let leaf = node.child == [NONE; 2];
        if parent != NONE && self.node(parent).intermediate && leaf {
            let p = self.node(parent);
            let other = if p.child[0] == n {
                p.child[1]
            } else {
                p.child[0]
            };
            self.set_link(grand.0, grand.1, other);
            self.free_node(parent);
            self.free_node(n);
            return Ok(());
        }
        let replacement = if node.child[0] != NONE {
            node.child[0]
        } else {
            node.child[1]
        };
        self.set_link(link.0, link.1, replacement);
        self.free_node(n);
        Ok(())
    }

    pub(crate) fn user_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        let slot = self.lookup_slot(key)?;
        self.values.get(slot as usize).map(<[u8]>::to_vec)
    }

    /// Every prefix with its key bytes as last given, sorted by key bytes.
    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            if n == NONE {
                continue;
            }
            let node = self.node(n);
            stack.extend(node.child);
            if !node.intermediate {
                let mut key = node.prefixlen.to_le_bytes().to_vec();
                key.extend_from_slice(self.data(n));
                let value = self.values.get(node.slot as usize).unwrap_or(&[]).to_vec();
                out.push((key, value));
            }
        }
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
