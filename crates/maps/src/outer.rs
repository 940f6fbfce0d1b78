//! ARRAY_OF_MAPS and HASH_OF_MAPS (kernel/bpf/map_in_map.c, arraymap.c, hashtab.c): values are maps. hwxdp keeps
//! the index of the inner map among the program's maps; userspace sees that index where the kernel's syscall takes a
//! map fd and returns a map id.

use crate::abi::{errno::*, key_u32, update_flags::*, Fail, Res};
use hwxdp_object::MapSpec;
use std::collections::BTreeMap;

/// `BPF_MAP_TYPE_ARRAY`, `PERCPU_ARRAY`: the inner types whose `max_entries` must match the template's.
const ARRAYS: [u32; 2] = [2, 6];
/// `BPF_F_INNER_MAP`: inner arrays of any size.
const INNER_MAP: u32 = 1 << 12;

/// An outer map: inner map indices by key.
#[derive(Clone, Debug)]
pub(crate) struct OuterMap {
    array: bool,
    max_entries: u32,
    template: MapSpec,
    inner: BTreeMap<Vec<u8>, u32>,
}

/// `bpf_map_meta_alloc`: what an inner map template may be.
pub(crate) fn check_template(template: &MapSpec) -> Res {
    if matches!(template.map_type, 12 | 13) {
        return Err(Fail::new(EINVAL, "an inner map cannot itself hold maps"));
    }
    if matches!(template.map_type, 3 | 4 | 27) {
        // The kernel takes some of these; hwxdp's consumers and tail calls only know the object's own.
        return Err(Fail::new(
            ENOTSUPP,
            "program arrays, perf event arrays and ring buffers as inner maps are not supported by hwxdp",
        ));
    }
    Ok(())
}

impl OuterMap {
    pub(crate) fn new(spec: &MapSpec, template: &MapSpec) -> OuterMap {
        OuterMap {
            array: spec.map_type == 12,
            max_entries: spec.max_entries,
            template: template.clone(),
            inner: BTreeMap::new(),
        }
    }

    /// `bpf_map_meta_equal` (and `array_map_meta_equal` for arrays): whether `inner` may go into this map.
    pub(crate) fn fits(&self, inner: &MapSpec) -> bool {
        let t = &self.template;
        let same = t.map_type == inner.map_type
            && t.key_size == inner.key_size
            && t.value_size == inner.value_size
            && t.map_flags == inner.map_flags;
        let sized = !ARRAYS.contains(&t.map_type)
            || t.map_flags & INNER_MAP != 0
            || t.max_entries == inner.max_entries;
        same && sized
    }

    fn check_key(&self, key: &[u8]) -> Res {
        if self.array {
            let i = key_u32(key).ok_or(Fail::new(EINVAL, "key is not 4 bytes"))?;
            if i >= self.max_entries {
                return Err(Fail::new(E2BIG, "index beyond max_entries"));
            }
        }
        Ok(())
    }

    /// The inner map at `key`, as a program's `bpf_map_lookup_elem` finds it.
    pub(crate) fn lookup(&self, key: &[u8]) -> Option<u32> {
        self.inner.get(key).copied()
    }

    /// `BPF_MAP_UPDATE_ELEM` with the inner map `inner` (already checked with [`OuterMap::fits`]).
    pub(crate) fn update(&mut self, key: &[u8], inner: u32, flags: u64) -> Res {
        if self.array && flags != ANY {
            return Err(Fail::new(EINVAL, "arrays of maps take bpf_any only"));
        }
        if flags > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        self.check_key(key)?;
        let exists = self.inner.contains_key(key);
        if !self.array {
            crate::abi::check_exist_flags(exists, flags)?;
            if !exists && self.inner.len() >= self.max_entries as usize {
                return Err(Fail::new(E2BIG, "map is full"));
            }
        }
        self.inner.insert(key.to_vec(), inner);
        Ok(())
    }

    /// `BPF_MAP_DELETE_ELEM`.
    pub(crate) fn delete(&mut self, key: &[u8]) -> Res {
        self.check_key(key)?;
        match self.inner.remove(key) {
            Some(_) => Ok(()),
            None => Err(Fail::new(ENOENT, "no such key")),
        }
    }

    /// Every entry as (key, inner map index little-endian).
    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.inner
            .iter()
            .map(|(k, v)| (k.clone(), v.to_le_bytes().to_vec()))
            .collect()
    }
}
