//! The maps as userspace sees them: writes go through the module's host port, reads come from a mirror read back slot
//! by slot after packets ran ([`MapStore`] on [`HxdpRtl`]).

use hwxdp_maps::abi::{errno, is_percpu, map_type};
use hwxdp_maps::{Entries, MapError, MapStore};
use hwxdp_object::MapSpec;

use super::{
    layout, read_back, unexpected, Answer, Command, HxdpRtl, HxdpRtlError, Layout, Mirror,
};

impl HxdpRtl {
    /// Reads every slot of every readable map back from the hardware into the mirror.
    fn pull(&mut self) -> Result<(), HxdpRtlError> {
        if !self.stale {
            return Ok(());
        }
        for m in 0..self.image.maps.len() {
            let map = &self.image.maps[m];
            let Some(Layout { slots, .. }) = layout(map).filter(|_| read_back(map.map_type)) else {
                continue;
            };
            let commands: Vec<Command> = (0..slots)
                .map(|slot| Command::HostSlot {
                    map: m,
                    slot: slot as u32,
                })
                .collect();
            let answers = self.harness.batch(&commands)?;
            let old = self.mirror[m].as_ref();
            let now = read_back_slots(&self.specs[m], self.possible_cpus, old, answers)?;
            self.mirror[m] = Some(now);
        }
        self.stale = false;
        Ok(())
    }

    /// The map's definition, or the syscall's error for a missing one.
    fn spec(&self, map: usize) -> Result<&MapSpec, MapError> {
        self.specs.get(map).ok_or_else(|| MapError {
            map: format!("#{map}"),
            errno: errno::EINVAL,
            message: format!(
                "no map with index {map}, the program has {}",
                self.specs.len()
            ),
        })
    }

    /// Checks a key's (and value's) length as the syscall does.
    fn check_sizes(&self, map: usize, key: &[u8], value: Option<&[u8]>) -> Result<(), MapError> {
        let spec = self.spec(map)?;
        let fail = |message: String| MapError {
            map: spec.name.clone(),
            errno: errno::EINVAL,
            message,
        };
        if spec.map_type != map_type::RINGBUF && key.len() != spec.key_size as usize {
            return Err(fail(format!(
                "key of {} bytes, the map's keys have {}",
                key.len(),
                spec.key_size
            )));
        }
        if let Some(v) = value {
            let want = syscall_value_size(spec, self.possible_cpus);
            if v.len() != want {
                return Err(fail(format!(
                    "value of {} bytes, the map's values have {want}",
                    v.len()
                )));
            }
        }
        Ok(())
    }

    /// A harness failure during a map operation, in the syscall's error shape.
    fn map_failure(&self, map: usize, err: HxdpRtlError) -> MapError {
        MapError {
            map: self
                .specs
                .get(map)
                .map_or_else(|| format!("#{map}"), |s| s.name.clone()),
            errno: errno::EINVAL,
            message: err.to_string(),
        }
    }

    /// The host port's return value for `command` on `map`.
    fn host_ret(&mut self, map: usize, command: Command) -> Result<i64, MapError> {
        match self.harness.call(&command) {
            Ok(Answer::Ret(ret)) => Ok(ret),
            Ok(other) => Err(self.map_failure(map, unexpected("host operation", other))),
            Err(e) => Err(self.map_failure(map, e)),
        }
    }

    fn ret_error(&self, map: usize, ret: i64, what: &str) -> MapError {
        MapError {
            map: self.specs[map].name.clone(),
            errno: i32::try_from(-ret).unwrap_or(errno::EINVAL),
            message: format!("the hXDP module refused the {what}"),
        }
    }
}

/// A map's mirror from its `host_slot` answers. For per-CPU maps the hardware's value is CPU 0's; the other CPUs keep
/// what `old` had (what userspace last wrote), zero for a new key.
pub(super) fn read_back_slots(
    spec: &MapSpec,
    possible_cpus: usize,
    old: Option<&Mirror>,
    answers: Vec<Answer>,
) -> Result<Mirror, HxdpRtlError> {
    let key_size = spec.key_size as usize;
    let value_size = spec.value_size as usize;
    let mut now = Mirror::new();
    for answer in answers {
        let Answer::Slot { hit, key, value } = answer else {
            return Err(unexpected("host_slot", answer));
        };
        if !hit {
            continue;
        }
        let (Some(key), Some(value)) = (key.get(..key_size), value.get(..value_size)) else {
            return Err(HxdpRtlError::Image(format!(
                "map {}: the module read back a slot shorter than the map's key or value",
                spec.name
            )));
        };
        let full = if is_percpu(spec.map_type) {
            let mut v = old
                .and_then(|o| o.get(key))
                .cloned()
                .unwrap_or_else(|| vec![0; syscall_value_size(spec, possible_cpus)]);
            v[..value_size].copy_from_slice(value);
            v
        } else {
            value.to_vec()
        };
        now.insert(key.to_vec(), full);
    }
    Ok(now)
}

/// Bytes of a value in the syscall's view: one copy per possible CPU, each padded to 8 bytes, for per-CPU maps.
pub(super) fn syscall_value_size(spec: &MapSpec, possible_cpus: usize) -> usize {
    if is_percpu(spec.map_type) {
        (spec.value_size as usize).next_multiple_of(8) * possible_cpus
    } else {
        spec.value_size as usize
    }
}

/// Userspace may not read a `BPF_F_WRONLY` map.
pub(super) fn readable(spec: &MapSpec) -> Result<(), MapError> {
    if spec.map_flags & hwxdp_maps::abi::map_flags::WRONLY != 0 {
        return Err(MapError {
            map: spec.name.clone(),
            errno: errno::EPERM,
            message: "map is write-only for userspace".into(),
        });
    }
    Ok(())
}

impl MapStore for HxdpRtl {
    fn specs(&self) -> &[MapSpec] {
        &self.specs
    }

    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        self.check_sizes(map, key, None)?;
        if self.mirror[map].is_none() {
            return self.reference.lookup(map, key);
        }
        readable(&self.specs[map])?;
        self.pull().map_err(|e| self.map_failure(map, e))?;
        Ok(self.mirror[map].as_ref().and_then(|m| m.get(key).cloned()))
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        self.check_sizes(map, key, Some(value))?;
        let spec = self.specs[map].clone();
        let readable = self.mirror[map].is_some();
        if readable {
            self.pull().map_err(|e| self.map_failure(map, e))?;
        } else if spec.map_type != map_type::RINGBUF {
            // The reference checks what the hardware cannot (device and program indices) and keeps the contents.
            self.reference.update(map, key, value, flags)?;
        }
        let mut hardware_value = value[..(spec.value_size as usize).min(value.len())].to_vec();
        if spec.map_type == map_type::PROG_ARRAY && hardware_value.len() == 4 {
            let program = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
            if let Some(&moved) = self.order.get(program as usize) {
                hardware_value = moved.to_le_bytes().to_vec();
            }
        }
        let ret = self.host_ret(
            map,
            Command::HostUpdate {
                map,
                flags,
                key,
                value: &hardware_value,
            },
        )?;
        if ret < 0 {
            return Err(self.ret_error(map, ret, "update"));
        }
        if let Some(mirror) = self.mirror[map].as_mut() {
            mirror.insert(key.to_vec(), value.to_vec());
        }
        // An LRU update may evict another entry: read the map back before trusting the mirror again.
        if spec.map_type == map_type::LRU_HASH {
            self.stale = true;
        }
        Ok(())
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        self.check_sizes(map, key, None)?;
        if self.mirror[map].is_some() {
            self.pull().map_err(|e| self.map_failure(map, e))?;
        } else {
            self.reference.delete(map, key)?;
        }
        let ret = self.host_ret(map, Command::HostDelete { map, key })?;
        if ret < 0 {
            return Err(self.ret_error(map, ret, "delete"));
        }
        if let Some(mirror) = self.mirror[map].as_mut() {
            mirror.remove(key);
        }
        Ok(())
    }

    fn entries(&mut self, map: usize) -> Result<Entries, MapError> {
        self.spec(map)?;
        if self.mirror[map].is_none() {
            return self.reference.entries(map);
        }
        readable(&self.specs[map])?;
        self.pull().map_err(|e| self.map_failure(map, e))?;
        Ok(self.mirror[map]
            .as_ref()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_values_read_back_replace_cpu_0_only() {
        let spec = MapSpec::new("counts", map_type::PERCPU_HASH, 2, 4, 8);
        let mut old = Mirror::new();
        old.insert(
            vec![1, 0],
            vec![9, 9, 9, 9, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0],
        );
        old.insert(vec![2, 0], vec![5; 16]);
        let answers = vec![
            Answer::Slot {
                hit: true,
                key: vec![1, 0],
                value: vec![1, 2, 3, 4],
            },
            Answer::Slot {
                hit: false,
                key: vec![],
                value: vec![],
            },
            Answer::Slot {
                hit: true,
                key: vec![3, 0],
                value: vec![4, 3, 2, 1],
            },
        ];
        let now = read_back_slots(&spec, 2, Some(&old), answers).expect("reads");
        assert_eq!(
            now.into_iter().collect::<Vec<_>>(),
            vec![
                (
                    vec![1, 0],
                    vec![1, 2, 3, 4, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0]
                ),
                (
                    vec![3, 0],
                    vec![4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
                ),
            ],
            "key 2 is gone from the hardware, key 3 is new"
        );
        let short = vec![Answer::Slot {
            hit: true,
            key: vec![1],
            value: vec![0; 4],
        }];
        assert!(read_back_slots(&spec, 2, None, short).is_err());
    }
}
