//! ARRAY and PERCPU_ARRAY (kernel/bpf/arraymap.c).

use crate::abi::{errno::*, key_u32, update_flags::*, Fail, Res};
use crate::values::{CpuLayout, Values};

/// Arrays whose values would take more bytes than this keep them in chunks allocated as they are written.
pub(crate) const SPARSE_BYTES: u64 = 16 << 20;

/// Arrays of more entries than this list (dump, compare) only their entries with a non-zero value.
pub const HUGE_ARRAY_ENTRIES: u32 = 1 << 20;

/// An array of `max_entries` values, keyed by a 4-byte index; entries always exist (as zeros until written).
#[derive(Clone, Debug)]
pub(crate) struct ArrayMap {
    max_entries: u32,
    layout: CpuLayout,
    pub(crate) values: Values,
}

impl ArrayMap {
    pub(crate) fn new(max_entries: u32, value_size: usize, copies: usize) -> ArrayMap {
        ArrayMap {
            max_entries,
            layout: CpuLayout { copies, value_size },
            values: if Self::is_sparse(max_entries, value_size, copies) {
                Values::sparse(value_size, max_entries as usize * copies)
            } else {
                Values::new(value_size, max_entries as usize * copies)
            },
        }
    }

    /// Whether an array of this shape keeps its values in chunks allocated as written.
    pub(crate) fn is_sparse(max_entries: u32, value_size: usize, copies: usize) -> bool {
        u64::from(max_entries) * (value_size * copies) as u64 > SPARSE_BYTES
    }

    /// Bytes writing element `key` (this CPU's copy, or every copy with `cpu` None) would allocate.
    pub(crate) fn cost_of_writing(&self, key: &[u8], cpu: Option<usize>) -> u64 {
        let Some(i) = self.index(key) else {
            return 0;
        };
        let slots = match cpu {
            Some(c) => vec![self.layout.slot(i, c) as usize],
            None => (0..self.layout.copies)
                .map(|c| self.layout.slot(i, c) as usize)
                .collect(),
        };
        self.values.cost_of_writing_all(&slots)
    }

    fn index(&self, key: &[u8]) -> Option<u32> {
        key_u32(key).filter(|&i| i < self.max_entries)
    }

    pub(crate) fn lookup_slot(&self, key: &[u8], cpu: usize) -> Option<u32> {
        self.index(key).map(|i| self.layout.slot(i, cpu))
    }

    /// The checks of `array_map_update_elem` / `bpf_percpu_array_update`, in the kernel's order.
    fn check_update(&self, key: &[u8], flags: u64) -> Res<u32> {
        if flags & !LOCK > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        let index = key_u32(key).ok_or(Fail::new(EINVAL, "key is not 4 bytes"))?;
        if index >= self.max_entries {
            return Err(Fail::new(E2BIG, "index beyond max_entries"));
        }
        if flags & NOEXIST != 0 {
            return Err(Fail::new(EEXIST, "array elements always exist"));
        }
        if flags & LOCK != 0 {
            return Err(Fail::new(
                EINVAL,
                "bpf_f_lock without a bpf_spin_lock in the value",
            ));
        }
        Ok(index)
    }

    pub(crate) fn prog_update(&mut self, key: &[u8], value: &[u8], flags: u64, cpu: usize) -> Res {
        let index = self.check_update(key, flags)?;
        self.layout
            .write_prog(&mut self.values, index, cpu, value, false);
        Ok(())
    }

    pub(crate) fn user_update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Res {
        let index = self.check_update(key, flags)?;
        self.layout.write_user(&mut self.values, index, value);
        Ok(())
    }

    pub(crate) fn user_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.index(key)
            .map(|i| self.layout.read_user(&self.values, i))
    }

    /// Bytes of the written chunks of sparse storage (0 for a flat array, whose cost was counted when it was made).
    pub(crate) fn sparse_allocated(&self) -> u64 {
        if Self::is_sparse(self.max_entries, self.layout.value_size, self.layout.copies) {
            self.values.allocated()
        } else {
            0
        }
    }

    /// Whether listings show only the entries holding a non-zero value (arrays above [`HUGE_ARRAY_ENTRIES`]).
    pub(crate) fn lists_nonzero_only(&self) -> bool {
        self.max_entries > HUGE_ARRAY_ENTRIES
    }

    /// Every entry in the syscall view, or with `nonzero_only` those with a non-zero byte (found among the written
    /// chunks only, so a huge sparse array lists fast).
    pub(crate) fn entries(&self, nonzero_only: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
        let entry = |i: u32| {
            (
                i.to_le_bytes().to_vec(),
                self.layout.read_user(&self.values, i),
            )
        };
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = if nonzero_only {
            let copies = self.layout.copies;
            let mut elems: Vec<u32> = self
                .values
                .touched_slots()
                .map(|s| (s / copies) as u32)
                .collect();
            elems.dedup();
            elems
                .into_iter()
                .map(entry)
                .filter(|(_, v)| v.iter().any(|&b| b != 0))
                .collect()
        } else {
            (0..self.max_entries).map(entry).collect()
        };
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
