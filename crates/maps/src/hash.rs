//! HASH and PERCPU_HASH (kernel/bpf/hashtab.c, preallocated and `BPF_F_NO_PREALLOC` alike).

use crate::abi::{check_exist_flags, errno::*, update_flags::*, Fail, Res};
use crate::keyindex::{sorted, KeyIndex};
use crate::values::{CpuLayout, Values};

/// A hash map whose elements live in numbered slots.
///
/// Replacing the value of an existing key in a shared (non-per-CPU) map moves the key to another element, as the
/// kernel does (it swaps in a per-CPU spare element), so a program still holding the old value's address reads the old
/// value. Per-CPU maps update in place.
#[derive(Clone, Debug)]
pub(crate) struct HashMap {
    max_entries: u32,
    layout: CpuLayout,
    index: KeyIndex,
    /// Elements released by delete, reused last-in first-out like the kernel's free lists.
    free: Vec<u32>,
    /// Elements never used yet: `next_fresh..`.
    next_fresh: u32,
    /// The spare element of each CPU for replacing a value (shared maps only).
    spare: Vec<Option<u32>>,
    /// A per-CPU map (updates its elements in place), whatever the number of copies: one CPU has one.
    percpu: bool,
    pub(crate) values: Values,
}

impl HashMap {
    pub(crate) fn new(
        max_entries: u32,
        value_size: usize,
        copies: usize,
        possible_cpus: usize,
        percpu: bool,
    ) -> HashMap {
        HashMap {
            percpu,
            max_entries,
            layout: CpuLayout { copies, value_size },
            index: KeyIndex::default(),
            free: Vec::new(),
            next_fresh: 0,
            spare: vec![None; if percpu { 0 } else { possible_cpus }],
            values: Values::new(value_size, 0),
        }
    }

    /// Most elements ever in use at once: the entries plus one spare per CPU for shared maps.
    pub(crate) fn capacity(max_entries: u32, percpu: bool, possible_cpus: usize) -> u64 {
        u64::from(max_entries) + if percpu { 0 } else { possible_cpus as u64 }
    }

    fn alloc(&mut self) -> u32 {
        if let Some(e) = self.free.pop() {
            return e;
        }
        let e = self.next_fresh;
        self.next_fresh += 1;
        self.values.ensure((e as usize + 1) * self.layout.copies);
        e
    }

    pub(crate) fn lookup_slot(&self, key: &[u8], cpu: usize) -> Option<u32> {
        self.index.get(key).map(|&e| self.layout.slot(e, cpu))
    }

    /// `htab_map_update_elem` / `__htab_percpu_map_update_elem`; `user` means the syscall view of the value.
    pub(crate) fn update(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u64,
        cpu: usize,
        user: bool,
    ) -> Res {
        let percpu = self.percpu;
        if percpu && flags > EXIST || !percpu && flags & !LOCK > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        if flags & LOCK != 0 {
            return Err(Fail::new(
                EINVAL,
                "bpf_f_lock without a bpf_spin_lock in the value",
            ));
        }
        let old = self.index.get(key).copied();
        check_exist_flags(old.is_some(), flags)?;
        match old {
            Some(e) if percpu => self.write(e, value, cpu, user, false),
            Some(old_elem) => {
                let new_elem = match self.spare.get_mut(cpu).and_then(Option::take) {
                    Some(e) => e,
                    None => self.alloc(),
                };
                self.write(new_elem, value, cpu, user, false);
                if let Some(s) = self.spare.get_mut(cpu) {
                    *s = Some(old_elem);
                }
                if let Some(e) = self.index.get_mut(key) {
                    *e = new_elem;
                }
            }
            None => {
                if self.index.len() >= self.max_entries as usize {
                    return Err(Fail::new(E2BIG, "map is full"));
                }
                let e = self.alloc();
                self.write(e, value, cpu, user, true);
                self.index.insert(key.into(), e);
            }
        }
        Ok(())
    }

    fn write(&mut self, elem: u32, value: &[u8], cpu: usize, user: bool, new: bool) {
        if user {
            self.layout.write_user(&mut self.values, elem, value);
        } else {
            self.layout
                .write_prog(&mut self.values, elem, cpu, value, new);
        }
    }

    pub(crate) fn delete(&mut self, key: &[u8]) -> Res {
        let e = self
            .index
            .remove(key)
            .ok_or(Fail::new(ENOENT, "no such key"))?;
        self.free.push(e);
        Ok(())
    }

    pub(crate) fn user_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.index
            .get(key)
            .map(|&e| self.layout.read_user(&self.values, e))
    }

    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        sorted(&self.index)
            .into_iter()
            .map(|(k, e)| (k.to_vec(), self.layout.read_user(&self.values, e)))
            .collect()
    }
}
