//! The redirect and program maps: DEVMAP, CPUMAP, XSKMAP and PROG_ARRAY (array-like, keyed by a 4-byte index) and
//! DEVMAP_HASH (kernel/bpf/{devmap,cpumap,arraymap}.c, net/xdp/xskmap.c).
//!
//! hwxdp has no devices, CPUs' queues, sockets or program fds: values are stored as userspace gives them, except that
//! a program fd that is not positive reads back as program id 0, as in the kernel.

use crate::abi::{errno::*, key_u32, update_flags::*, Fail, Res};
use crate::keyindex::{sorted, KeyIndex};
use crate::values::Values;

/// Largest CPUMAP queue size the kernel accepts.
const CPUMAP_MAX_QSIZE: u32 = 16384;

/// Which array-like map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotKind {
    ProgArray,
    Devmap,
    Cpumap,
    Xskmap,
}

fn word(value: &[u8], i: usize) -> u32 {
    value.get(i * 4..i * 4 + 4).and_then(key_u32).unwrap_or(0)
}

/// The value the kernel shows for a device or CPU entry: first word as given, then the program id (0 without one).
fn with_prog_id(value: &[u8]) -> Vec<u8> {
    let mut out = value.to_vec();
    if out.len() >= 8 {
        let fd = word(value, 1) as i32;
        let id = if fd > 0 { fd as u32 } else { 0 };
        out[4..8].copy_from_slice(&id.to_le_bytes());
    }
    out
}

/// An array of optional entries.
#[derive(Clone, Debug)]
pub(crate) struct SlotArray {
    kind: SlotKind,
    max_entries: u32,
    possible_cpus: usize,
    present: Vec<bool>,
    pub(crate) values: Values,
}

impl SlotArray {
    pub(crate) fn new(
        kind: SlotKind,
        max_entries: u32,
        value_size: usize,
        possible_cpus: usize,
    ) -> SlotArray {
        SlotArray {
            kind,
            max_entries,
            possible_cpus,
            present: vec![false; max_entries as usize],
            values: Values::new(value_size, max_entries as usize),
        }
    }

    fn present_index(&self, key: u32) -> Option<u32> {
        self.present
            .get(key as usize)
            .copied()
            .unwrap_or(false)
            .then_some(key)
    }

    /// Programs may look up DEVMAP and XSKMAP entries only.
    pub(crate) fn lookup_slot(&self, key: &[u8]) -> Option<u32> {
        match self.kind {
            SlotKind::Devmap | SlotKind::Xskmap => self.present_index(key_u32(key)?),
            SlotKind::Cpumap | SlotKind::ProgArray => None,
        }
    }

    pub(crate) fn contains(&self, key: u32) -> bool {
        self.present_index(key).is_some()
    }

    /// The u32 stored at `index`, if any.
    pub(crate) fn get_u32(&self, index: u32) -> Option<u32> {
        let i = self.present_index(index)?;
        self.values.get(i as usize).map(|v| word(v, 0))
    }

    fn store(&mut self, index: u32, value: Vec<u8>) {
        self.values.set(index as usize, &value);
        self.present[index as usize] = true;
    }

    /// The syscall's `BPF_MAP_UPDATE_ELEM`, with each map type's checks in the kernel's order.
    pub(crate) fn user_update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Res {
        let index = key_u32(key).ok_or(Fail::new(EINVAL, "key is not 4 bytes"))?;
        if self.kind == SlotKind::ProgArray {
            if flags != ANY {
                return Err(Fail::new(EINVAL, "program arrays take only bpf_any"));
            }
            if index >= self.max_entries {
                return Err(Fail::new(E2BIG, "index beyond max_entries"));
            }
            self.store(index, value.to_vec());
            return Ok(());
        }
        if flags > EXIST {
            return Err(Fail::new(EINVAL, "unknown update flags"));
        }
        if index >= self.max_entries {
            return Err(Fail::new(E2BIG, "index beyond max_entries"));
        }
        match self.kind {
            SlotKind::Devmap => {
                if flags == NOEXIST {
                    return Err(Fail::new(EEXIST, "device map entries always exist"));
                }
                if word(value, 0) == 0 {
                    if word(value, 1) as i32 > 0 {
                        return Err(Fail::new(EINVAL, "program fd without an ifindex"));
                    }
                    self.present[index as usize] = false;
                } else {
                    self.store(index, with_prog_id(value));
                }
            }
            SlotKind::Cpumap => {
                if flags == NOEXIST {
                    return Err(Fail::new(EEXIST, "cpu map entries always exist"));
                }
                let qsize = word(value, 0);
                if qsize > CPUMAP_MAX_QSIZE {
                    return Err(Fail::new(EOVERFLOW, "queue size above 16384"));
                }
                if index as usize >= self.possible_cpus {
                    return Err(Fail::new(ENODEV, "cpu is not possible"));
                }
                if qsize == 0 {
                    self.present[index as usize] = false;
                } else {
                    self.store(index, with_prog_id(value));
                }
            }
            SlotKind::Xskmap => {
                let old = self
                    .present_index(index)
                    .and_then(|i| self.values.get(i as usize));
                if old == Some(value) {
                    return Err(Fail::new(EBUSY, "socket already at this index"));
                }
                if old.is_some() && flags == NOEXIST {
                    return Err(Fail::new(EEXIST, "key exists"));
                }
                if old.is_none() && flags == EXIST {
                    return Err(Fail::new(ENOENT, "no such key"));
                }
                self.store(index, value.to_vec());
            }
            SlotKind::ProgArray => {}
        }
        Ok(())
    }

    pub(crate) fn user_delete(&mut self, key: &[u8]) -> Res {
        let index = key_u32(key).ok_or(Fail::new(EINVAL, "key is not 4 bytes"))?;
        if index >= self.max_entries {
            return Err(if self.kind == SlotKind::ProgArray {
                Fail::new(E2BIG, "index beyond max_entries")
            } else {
                Fail::new(EINVAL, "index beyond max_entries")
            });
        }
        let was = std::mem::replace(&mut self.present[index as usize], false);
        if !was && self.kind == SlotKind::ProgArray {
            return Err(Fail::new(ENOENT, "no program at this index"));
        }
        Ok(())
    }

    pub(crate) fn user_lookup(&self, key: &[u8]) -> Res<Option<Vec<u8>>> {
        if self.kind == SlotKind::Xskmap {
            return Err(Fail::new(EOPNOTSUPP, "xskmap entries cannot be read"));
        }
        let Some(i) = key_u32(key).and_then(|k| self.present_index(k)) else {
            return Ok(None);
        };
        Ok(self.values.get(i as usize).map(<[u8]>::to_vec))
    }

    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        if self.kind == SlotKind::Xskmap {
            return Vec::new();
        }
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = (0..self.max_entries)
            .filter_map(|i| {
                let v = self.values.get(self.present_index(i)? as usize)?;
                Some((i.to_le_bytes().to_vec(), v.to_vec()))
            })
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// DEVMAP_HASH: up to `max_entries` devices under arbitrary 4-byte keys.
#[derive(Clone, Debug)]
pub(crate) struct DevHash {
    max_entries: u32,
    index: KeyIndex,
    free: Vec<u32>,
    pub(crate) values: Values,
}

impl DevHash {
    pub(crate) fn new(max_entries: u32, value_size: usize) -> DevHash {
        DevHash {
            max_entries,
            index: KeyIndex::default(),
            free: Vec::new(),
            values: Values::new(value_size, 0),
        }
    }

    pub(crate) fn lookup_slot(&self, key: &[u8]) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// `__dev_map_hash_update_elem`: note that the kernel ignores `BPF_EXIST` here, so it also inserts.
    pub(crate) fn user_update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Res {
        if flags > EXIST || word(value, 0) == 0 {
            return Err(Fail::new(EINVAL, "unknown update flags or ifindex 0"));
        }
        let old = self.index.get(key).copied();
        if old.is_some() && flags & NOEXIST != 0 {
            return Err(Fail::new(EEXIST, "key exists"));
        }
        if old.is_none() && self.index.len() >= self.max_entries as usize {
            return Err(Fail::new(E2BIG, "map is full"));
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            let s = self.values.len() as u32;
            self.values.ensure(s as usize + 1);
            s
        });
        self.values.set(slot as usize, &with_prog_id(value));
        if let Some(old) = self.index.insert(key.into(), slot) {
            self.free.push(old);
        }
        Ok(())
    }

    pub(crate) fn user_delete(&mut self, key: &[u8]) -> Res {
        let slot = self
            .index
            .remove(key)
            .ok_or(Fail::new(ENOENT, "no such key"))?;
        self.free.push(slot);
        Ok(())
    }

    pub(crate) fn user_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        let slot = *self.index.get(key)?;
        self.values.get(slot as usize).map(<[u8]>::to_vec)
    }

    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        sorted(&self.index)
            .into_iter()
            .map(|(k, s)| {
                (
                    k.to_vec(),
                    self.values.get(s as usize).unwrap_or(&[]).to_vec(),
                )
            })
            .collect()
    }
}
