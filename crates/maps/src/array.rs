//! ARRAY and PERCPU_ARRAY (kernel/bpf/arraymap.c).

use crate::abi::{errno::*, key_u32, update_flags::*, Fail, Res};
use crate::values::{CpuLayout, Values};

/// A preallocated array of `max_entries` values, keyed by a 4-byte index; entries always exist.
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
            values: Values::new(value_size, max_entries as usize * copies),
        }
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

    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = (0..self.max_entries)
            .map(|i| {
                (
                    i.to_le_bytes().to_vec(),
                    self.layout.read_user(&self.values, i),
                )
            })
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
