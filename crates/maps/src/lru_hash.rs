//! LRU_HASH and LRU_PERCPU_HASH (htab_lru_* in kernel/bpf/hashtab.c): preallocated elements recycled through
//! [`Lru`].

use crate::abi::{check_exist_flags, errno::*, update_flags::*, Fail, Res};
use crate::keyindex::{sorted, KeyIndex};
use crate::lru::{Evict, Lru};
use crate::values::{CpuLayout, Values};

/// The hash-table side: which element holds which key.
#[derive(Clone, Debug)]
struct Table {
    index: KeyIndex,
    key_size: usize,
    /// Key bytes of every element, `key_size` each.
    keys: Vec<u8>,
    in_table: Vec<bool>,
    /// The keys the last update's `bpf_lru_pop_free` evicted, in order (a cycle model times each one's removal).
    evicted: Vec<Vec<u8>>,
}

impl Table {
    fn insert(&mut self, node: u32, key: &[u8]) {
        let start = node as usize * self.key_size;
        if let Some(dst) = self.keys.get_mut(start..start + self.key_size) {
            dst.copy_from_slice(key);
        }
        self.index.insert(key.into(), node);
        self.in_table[node as usize] = true;
    }

    /// Unlinks `node` from the table if its key still maps to it.
    fn remove(&mut self, node: u32) -> bool {
        if !self.in_table.get(node as usize).copied().unwrap_or(false) {
            return false;
        }
        self.in_table[node as usize] = false;
        let start = node as usize * self.key_size;
        let key = self.keys.get(start..start + self.key_size).unwrap_or(&[]);
        if self.index.get(key) == Some(&node) {
            self.index.remove(key);
        }
        true
    }
}

impl Evict for Table {
    fn del_from_htab(&mut self, node: u32) -> bool {
        let start = node as usize * self.key_size;
        let key = self
            .keys
            .get(start..start + self.key_size)
            .map(<[u8]>::to_vec);
        let removed = self.remove(node);
        if let (true, Some(key)) = (removed, key) {
            self.evicted.push(key);
        }
        removed
    }
}

impl crate::Maps {
    /// Steps the last update of LRU map `map` took in `bpf_lru_pop_free` (see the LRU's `pop_steps`: one per node
    /// examined or moved, list end and phase, as rtl/sephirot/maps.sv's LRU engine takes them one a cycle); 0 when
    /// it popped nothing (an update refused before, or the per-CPU LRU); `None` for a map that is not an LRU map.
    pub fn lru_pop_steps(&self, map: usize) -> Option<u64> {
        match self.maps.get(map)? {
            crate::MapImpl::Lru(l) => Some(l.lru.pop_steps()),
            _ => None,
        }
    }

    /// The keys the last update of LRU map `map` evicted from its table, in the order `bpf_lru_pop_free` evicted
    /// them (empty when it evicted none); `None` for a map that is not an LRU map.
    pub fn lru_evicted(&self, map: usize) -> Option<&[Vec<u8>]> {
        match self.maps.get(map)? {
            crate::MapImpl::Lru(l) => Some(&l.table.evicted),
            _ => None,
        }
    }
}

/// An LRU hash map of `nodes` preallocated elements.
#[derive(Clone, Debug)]
pub(crate) struct LruHash {
    layout: CpuLayout,
    lru: Lru,
    table: Table,
    pub(crate) values: Values,
    /// A per-CPU map (updates existing elements in place), whatever the number of copies: one CPU has one.
    percpu: bool,
}

impl LruHash {
    /// Elements the kernel preallocates: `max_entries`, rounded to a multiple of the CPUs for a per-CPU LRU.
    pub(crate) fn nodes(max_entries: u32, possible_cpus: usize, percpu_lru: bool) -> u32 {
        let cpus = possible_cpus.max(1) as u64;
        let max = u64::from(max_entries);
        if !percpu_lru {
            return max_entries;
        }
        let up = max.div_ceil(cpus) * cpus;
        if up <= u64::from(u32::MAX) {
            up as u32
        } else {
            (max / cpus * cpus) as u32
        }
    }

    pub(crate) fn new(
        nodes: u32,
        key_size: usize,
        value_size: usize,
        copies: usize,
        possible_cpus: usize,
        percpu_lru: bool,
        percpu: bool,
    ) -> LruHash {
        LruHash {
            percpu,
            layout: CpuLayout { copies, value_size },
            lru: Lru::new(nodes, possible_cpus, percpu_lru),
            table: Table {
                index: KeyIndex::default(),
                key_size,
                keys: vec![0; nodes as usize * key_size],
                in_table: vec![false; nodes as usize],
                evicted: Vec::new(),
            },
            values: Values::new(value_size, nodes as usize * copies),
        }
    }

    /// A program's lookup marks the element referenced.
    pub(crate) fn lookup_slot(&mut self, key: &[u8], cpu: usize) -> Option<u32> {
        let node = *self.table.index.get(key)?;
        self.lru.set_ref(node);
        Some(self.layout.slot(node, cpu))
    }

    /// `htab_lru_map_update_elem` or `__htab_lru_percpu_map_update_elem`.
    pub(crate) fn update(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u64,
        cpu: usize,
        user: bool,
    ) -> Res {
        self.lru.reset_steps();
        self.table.evicted.clear();
        if flags > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        if self.percpu {
            return self.update_percpu(key, value, flags, cpu, user);
        }
        // The kernel takes a free node before looking for the key, so even replacing a value can evict.
        let node = self
            .lru
            .pop_free(cpu, &mut self.table)
            .ok_or(Fail::new(ENOMEM, "no free lru node"))?;
        let old = self.table.index.get(key).copied();
        if let Err(e) = check_exist_flags(old.is_some(), flags) {
            self.lru.push_free(node);
            return Err(e);
        }
        self.values.set(node as usize, value);
        if let Some(old) = old {
            self.table.remove(old);
            self.table.insert(node, key);
            self.lru.set_ref(node);
            self.lru.push_free(old);
        } else {
            self.table.insert(node, key);
        }
        Ok(())
    }

    fn update_percpu(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u64,
        cpu: usize,
        user: bool,
    ) -> Res {
        let node = if flags == EXIST {
            None
        } else {
            let n = self.lru.pop_free(cpu, &mut self.table);
            Some(n.ok_or(Fail::new(ENOMEM, "no free lru node"))?)
        };
        let old = self.table.index.get(key).copied();
        let result = check_exist_flags(old.is_some(), flags);
        let mut unused = node;
        if result.is_ok() {
            let target = match old {
                Some(old) => {
                    self.lru.set_ref(old);
                    Some((old, false))
                }
                None => unused.take().map(|n| (n, true)),
            };
            if let Some((elem, new)) = target {
                if user {
                    self.layout.write_user(&mut self.values, elem, value);
                } else {
                    self.layout
                        .write_prog(&mut self.values, elem, cpu, value, new);
                }
                if new {
                    self.table.insert(elem, key);
                }
            }
        }
        if let Some(n) = unused {
            self.lru.push_free(n);
        }
        result
    }

    pub(crate) fn delete(&mut self, key: &[u8]) -> Res {
        let node = *self
            .table
            .index
            .get(key)
            .ok_or(Fail::new(ENOENT, "no such key"))?;
        self.table.remove(node);
        self.lru.push_free(node);
        Ok(())
    }

    /// Userspace lookups leave the reference bit alone, as `htab_lru_map_lookup_elem_sys` does.
    pub(crate) fn user_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        let node = *self.table.index.get(key)?;
        Some(self.layout.read_user(&self.values, node))
    }

    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        sorted(&self.table.index)
            .into_iter()
            .map(|(k, e)| (k.to_vec(), self.layout.read_user(&self.values, e)))
            .collect()
    }
}
