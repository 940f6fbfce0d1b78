//! The `bpf()` syscall's view of [`Maps`]: lookups, updates, deletes and listings with the syscall's errno values.

use crate::abi::{errno::*, is_percpu, map_flags as mf, round8, update_flags, Fail};
use crate::create::MapImpl;
use crate::{MapError, MapStore, Maps};
use hwxdp_object::MapSpec;

fn error(spec: &MapSpec, f: Fail) -> MapError {
    MapError {
        map: spec.name.clone(),
        errno: f.errno,
        message: f.why.to_string(),
    }
}

/// Userspace lookups of a perf event array: the kernel has no `map_fd_sys_lookup_elem` for it.
const PERF_LOOKUP: Fail = Fail::new(ENOTSUPP, "perf event arrays cannot be read from userspace");
/// Userspace updates of a perf event array take perf event fds, which hwxdp's consumer opens itself.
const PERF_UPDATE: Fail = Fail::new(
    EINVAL,
    "perf event arrays hold the events hwxdp opens on each cpu; they cannot be set",
);

const RINGBUF_OPS: Fail = Fail::new(
    ENOTSUPP,
    "ring buffers have no elements to look up, update or delete",
);

impl Maps {
    fn checked(&mut self, map: usize, key: &[u8]) -> Result<(&MapSpec, &mut MapImpl), MapError> {
        let (Some(spec), Some(m)) = (self.specs.get(map), self.maps.get_mut(map)) else {
            return Err(MapError {
                map: format!("#{map}"),
                errno: EINVAL,
                message: format!(
                    "no map with index {map}, the program has {}",
                    self.specs.len()
                ),
            });
        };
        if key.len() != spec.key_size as usize && !matches!(m, MapImpl::RingBuf(_)) {
            return Err(MapError {
                map: spec.name.clone(),
                errno: EINVAL,
                message: format!(
                    "key of {} bytes, the map's keys have {}",
                    key.len(),
                    spec.key_size
                ),
            });
        }
        Ok((spec, m))
    }

    /// Bytes of a value in the syscall view.
    fn syscall_value_size(&self, spec: &MapSpec) -> usize {
        if is_percpu(spec.map_type) {
            round8(spec.value_size as usize) * self.possible_cpus
        } else {
            spec.value_size as usize
        }
    }
}

impl MapStore for Maps {
    fn specs(&self) -> &[MapSpec] {
        &self.specs
    }

    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        let (spec, m) = self.checked(map, key)?;
        if spec.map_flags & mf::WRONLY != 0 {
            return Err(error(
                spec,
                Fail::new(EPERM, "map is write-only for userspace"),
            ));
        }
        let found = match m {
            MapImpl::Array(a) => a.user_lookup(key),
            MapImpl::Hash(h) => h.user_lookup(key),
            MapImpl::Lru(l) => l.user_lookup(key),
            MapImpl::Lpm(t) => t.user_lookup(key),
            MapImpl::Slots(s) => s.user_lookup(key).map_err(|f| error(spec, f))?,
            MapImpl::DevHash(d) => d.user_lookup(key),
            MapImpl::RingBuf(_) => return Err(error(spec, RINGBUF_OPS)),
            MapImpl::Perf(_) => return Err(error(spec, PERF_LOOKUP)),
            MapImpl::Outer(o) => o.lookup(key).map(|i| i.to_le_bytes().to_vec()),
        };
        Ok(found)
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        let want = self.specs.get(map).map(|s| self.syscall_value_size(s));
        let cpu = self.cpu;
        if self.specs.get(map).is_some() && key.len() == self.specs[map].key_size as usize {
            self.check_user_write(map, key)?;
        }
        let (spec, m) = self.checked(map, key)?;
        if spec.map_flags & mf::RDONLY != 0 {
            return Err(error(
                spec,
                Fail::new(EPERM, "map is read-only for userspace"),
            ));
        }
        if let (Some(want), false) = (want, matches!(m, MapImpl::RingBuf(_))) {
            if value.len() != want {
                return Err(MapError {
                    map: spec.name.clone(),
                    errno: EINVAL,
                    message: format!("value of {} bytes, the map takes {want}", value.len()),
                });
            }
        }
        if flags & update_flags::LOCK != 0 {
            return Err(error(
                spec,
                Fail::new(EINVAL, "bpf_f_lock without a bpf_spin_lock in the value"),
            ));
        }
        if matches!(m, MapImpl::Outer(_)) {
            let inner = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
            return self.set_inner(map, key, inner, flags);
        }
        let r = match m {
            MapImpl::Array(a) => a.user_update(key, value, flags),
            MapImpl::Hash(h) => h.update(key, value, flags, cpu, true),
            MapImpl::Lru(l) => l.update(key, value, flags, cpu, true),
            MapImpl::Lpm(t) => t.update(key, value, flags),
            MapImpl::Slots(s) => s.user_update(key, value, flags),
            MapImpl::DevHash(d) => d.user_update(key, value, flags),
            MapImpl::RingBuf(_) => Err(RINGBUF_OPS),
            MapImpl::Perf(_) => Err(PERF_UPDATE),
            MapImpl::Outer(_) => unreachable!("outer maps are updated above"),
        };
        r.map_err(|f| error(spec, f))
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        let (spec, m) = self.checked(map, key)?;
        if spec.map_flags & mf::RDONLY != 0 {
            return Err(error(
                spec,
                Fail::new(EPERM, "map is read-only for userspace"),
            ));
        }
        let r = match m {
            MapImpl::Array(_) => Err(Fail::new(EINVAL, "array elements cannot be deleted")),
            MapImpl::Hash(h) => h.delete(key),
            MapImpl::Lru(l) => l.delete(key),
            MapImpl::Lpm(t) => t.delete(key),
            MapImpl::Slots(s) => s.user_delete(key),
            MapImpl::DevHash(d) => d.user_delete(key),
            MapImpl::RingBuf(_) => Err(RINGBUF_OPS),
            MapImpl::Perf(_) => Err(PERF_UPDATE),
            MapImpl::Outer(o) => o.delete(key),
        };
        r.map_err(|f| error(spec, f))
    }

    fn entries_all(&mut self, map: usize) -> Result<crate::Entries, MapError> {
        match self.maps.get(map) {
            Some(MapImpl::Array(a)) if a.lists_nonzero_only() => Ok(a.entries(false)),
            _ => self.entries(map),
        }
    }

    fn entries(&mut self, map: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>, MapError> {
        let key_size = self.specs.get(map).map_or(0, |s| s.key_size as usize);
        let (spec, m) = self.checked(map, &vec![0; key_size])?;
        if spec.map_flags & mf::WRONLY != 0 {
            return Err(error(
                spec,
                Fail::new(EPERM, "map is write-only for userspace"),
            ));
        }
        Ok(match m {
            MapImpl::Array(a) => a.entries(a.lists_nonzero_only()),
            MapImpl::Hash(h) => h.entries(),
            MapImpl::Lru(l) => l.entries(),
            MapImpl::Lpm(t) => t.entries(),
            MapImpl::Slots(s) => s.entries(),
            MapImpl::DevHash(d) => d.entries(),
            MapImpl::RingBuf(_) | MapImpl::Perf(_) => Vec::new(),
            MapImpl::Outer(o) => o.entries(),
        })
    }
}
