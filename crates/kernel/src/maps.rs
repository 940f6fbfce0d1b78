//! The userspace view of the loaded maps, through the `bpf()` syscall.

use crate::error::errno_text;
use crate::KernelProgram;
use hwxdp_maps::{MapError, MapStore};
use hwxdp_object::MapSpec;
use libbpf_rs::libbpf_sys;
use std::os::fd::AsRawFd;

const PROG_ARRAY: u32 = libbpf_sys::BPF_MAP_TYPE_PROG_ARRAY;

/// Maps whose values are maps: the syscall takes a map fd and returns a map id, hwxdp shows the map's index.
fn is_outer(map_type: u32) -> bool {
    matches!(
        map_type,
        libbpf_sys::BPF_MAP_TYPE_ARRAY_OF_MAPS | libbpf_sys::BPF_MAP_TYPE_HASH_OF_MAPS
    )
}

/// Map types whose values the syscall shows once per possible CPU.
fn is_percpu(map_type: u32) -> bool {
    matches!(
        map_type,
        libbpf_sys::BPF_MAP_TYPE_PERCPU_HASH
            | libbpf_sys::BPF_MAP_TYPE_PERCPU_ARRAY
            | libbpf_sys::BPF_MAP_TYPE_LRU_PERCPU_HASH
            | libbpf_sys::BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE
    )
}

/// Map types whose contents userspace cannot list with lookups.
fn is_unlistable(map_type: u32) -> bool {
    matches!(
        map_type,
        libbpf_sys::BPF_MAP_TYPE_RINGBUF
            | libbpf_sys::BPF_MAP_TYPE_USER_RINGBUF
            | libbpf_sys::BPF_MAP_TYPE_XSKMAP
            | libbpf_sys::BPF_MAP_TYPE_PERF_EVENT_ARRAY
    )
}

fn map_error(spec: &MapSpec, errno: i32, message: impl Into<String>) -> MapError {
    MapError {
        map: spec.name.clone(),
        errno,
        message: message.into(),
    }
}

/// A map system call `command` (`BPF_MAP_LOOKUP_ELEM`, ...) that failed with `errno`: the only map errors whose
/// message carries the errno.
fn syscall_error(spec: &MapSpec, errno: i32, command: &str) -> MapError {
    map_error(
        spec,
        errno,
        format!("{command} failed: {} (errno {errno})", errno_text(errno)),
    )
}

impl KernelProgram {
    fn map_spec(&self, map: usize) -> Result<&MapSpec, MapError> {
        self.specs.get(map).ok_or_else(|| MapError {
            map: format!("#{map}"),
            errno: libc::EINVAL,
            message: format!(
                "no map with index {map}, the object has {}",
                self.specs.len()
            ),
        })
    }

    /// Bytes of a value as the syscall shows it: per-CPU values are padded to 8 bytes, once per possible CPU.
    fn syscall_value_size(&self, spec: &MapSpec) -> usize {
        let value_size = spec.value_size as usize;
        if is_percpu(spec.map_type) {
            value_size.div_ceil(8) * 8 * self.possible_cpus
        } else {
            value_size
        }
    }

    fn check_key(&self, spec: &MapSpec, key: &[u8]) -> Result<(), MapError> {
        if key.len() != spec.key_size as usize {
            return Err(map_error(
                spec,
                libc::EINVAL,
                format!(
                    "key of {} bytes, the map's keys have {}",
                    key.len(),
                    spec.key_size
                ),
            ));
        }
        Ok(())
    }

    /// A `PROG_ARRAY` value from hwxdp's program index (into `ObjectSpec::programs`) to the kernel's program fd.
    fn program_fd_value(&self, spec: &MapSpec, value: &[u8]) -> Result<Vec<u8>, MapError> {
        let index = value_u32(spec, value)?;
        let program = self
            .programs
            .get(index as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                map_error(
                    spec,
                    libc::EINVAL,
                    format!("program index {index} is not a loaded xdp program"),
                )
            })?;
        Ok((program.fd.as_raw_fd() as u32).to_ne_bytes().to_vec())
    }

    /// A `PROG_ARRAY` value from the kernel's program id back to hwxdp's program index.
    fn program_index_value(&self, spec: &MapSpec, value: &[u8]) -> Result<Vec<u8>, MapError> {
        let id = value_u32(spec, value)?;
        let index = self
            .programs
            .iter()
            .position(|p| p.as_ref().is_some_and(|p| p.id == id))
            .ok_or_else(|| {
                map_error(
                    spec,
                    libc::EINVAL,
                    format!("program id {id} is not one of the object's"),
                )
            })?;
        Ok((index as u32).to_ne_bytes().to_vec())
    }

    /// A map-of-maps value from hwxdp's map index (into `ObjectSpec::maps`) to that map's fd.
    fn map_fd_value(&self, spec: &MapSpec, value: &[u8]) -> Result<Vec<u8>, MapError> {
        let index = value_u32(spec, value)? as usize;
        let fd = self.maps.get(index).ok_or_else(|| {
            map_error(
                spec,
                libc::EBADF,
                format!("no map with index {index} to put in it"),
            )
        })?;
        Ok((fd.as_raw_fd() as u32).to_ne_bytes().to_vec())
    }

    /// A map-of-maps value from the kernel's map id back to hwxdp's map index.
    fn map_index_value(&self, spec: &MapSpec, value: &[u8]) -> Result<Vec<u8>, MapError> {
        let id = value_u32(spec, value)?;
        let index = self
            .maps
            .iter()
            .position(|fd| map_id(fd.as_raw_fd()) == Some(id))
            .ok_or_else(|| {
                map_error(
                    spec,
                    libc::EINVAL,
                    format!("map id {id} is not one of the object's maps"),
                )
            })?;
        Ok((index as u32).to_ne_bytes().to_vec())
    }

    fn fd(&self, map: usize) -> Result<i32, MapError> {
        let spec = self.map_spec(map)?;
        self.maps
            .get(map)
            .map(|fd| fd.as_raw_fd())
            .ok_or_else(|| map_error(spec, libc::EBADF, "map has no fd"))
    }

    /// The next key after `key` (the first with `None`), or `None` at the end.
    fn next_key(&self, map: usize, key: Option<&[u8]>) -> Result<Option<Vec<u8>>, MapError> {
        let spec = self.map_spec(map)?;
        let fd = self.fd(map)?;
        let mut next = vec![0u8; spec.key_size as usize];
        let key_ptr = key.map_or(std::ptr::null(), |k| k.as_ptr().cast());
        // SAFETY: `key` (when given) and `next` are live buffers of the map's key size.
        let rc = unsafe { libbpf_sys::bpf_map_get_next_key(fd, key_ptr, next.as_mut_ptr().cast()) };
        match rc {
            0 => Ok(Some(next)),
            rc if -rc == libc::ENOENT => Ok(None),
            rc => Err(syscall_error(spec, -rc, "BPF_MAP_GET_NEXT_KEY")),
        }
    }
}

/// Elements read per `BPF_MAP_LOOKUP_BATCH` when listing a huge array.
const BATCH: u32 = 1 << 16;

impl KernelProgram {
    /// The entries of a huge array ([`hwxdp_maps::Maps::lists_nonzero_only`]; without `all` only those holding a
    /// non-zero value), read with `BPF_MAP_LOOKUP_BATCH`: millions of single lookups would take a minute.
    fn batch_entries(&self, map: usize, all: bool) -> Result<hwxdp_maps::Entries, MapError> {
        let spec = self.map_spec(map)?;
        let fd = self.fd(map)?;
        let value_size = self.syscall_value_size(spec);
        let mut keys = vec![0u32; BATCH as usize];
        let mut values = vec![0u8; value_size * BATCH as usize];
        let mut entries = Vec::new();
        let (mut at, mut next) = (0u32, 0u32);
        let mut first = true;
        loop {
            let mut count = BATCH;
            let in_batch: *const libc::c_void = if first {
                std::ptr::null()
            } else {
                (&at as *const u32).cast()
            };
            // SAFETY: `keys` and `values` hold `count` keys and values of the map's sizes, the batch cursors are u32
            // as arrays take them, and a null `opts` asks for the defaults.
            let rc = unsafe {
                libbpf_sys::bpf_map_lookup_batch(
                    fd,
                    in_batch.cast_mut(),
                    (&mut next as *mut u32).cast(),
                    keys.as_mut_ptr().cast(),
                    values.as_mut_ptr().cast(),
                    &mut count,
                    std::ptr::null(),
                )
            };
            if rc < 0 && -rc != libc::ENOENT {
                return Err(syscall_error(spec, -rc, "BPF_MAP_LOOKUP_BATCH"));
            }
            for (i, key) in keys.iter().take(count as usize).enumerate() {
                let value = &values[i * value_size..(i + 1) * value_size];
                if all || value.iter().any(|&b| b != 0) {
                    entries.push((key.to_ne_bytes().to_vec(), value.to_vec()));
                }
            }
            if rc < 0 || count == 0 {
                break;
            }
            (at, first) = (next, false);
        }
        entries.sort();
        Ok(entries)
    }
}

/// The kernel's id of the map behind `fd`.
fn map_id(fd: i32) -> Option<u32> {
    // SAFETY: bpf_map_info is plain data; zeroed asks for the fixed fields only, and the pointers are to live locals
    // of the sizes given.
    unsafe {
        let mut info: libbpf_sys::bpf_map_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libbpf_sys::bpf_map_info>() as u32;
        let rc = libbpf_sys::bpf_map_get_info_by_fd(fd, &mut info, &mut len);
        (rc == 0).then_some(info.id)
    }
}

fn value_u32(spec: &MapSpec, value: &[u8]) -> Result<u32, MapError> {
    let bytes: [u8; 4] = value.try_into().map_err(|_| {
        map_error(
            spec,
            libc::EINVAL,
            format!("value of {} bytes, expected 4", value.len()),
        )
    })?;
    Ok(u32::from_ne_bytes(bytes))
}

impl MapStore for KernelProgram {
    fn entries_all(&mut self, map: usize) -> Result<hwxdp_maps::Entries, MapError> {
        match self.map_spec(map) {
            Ok(spec) if hwxdp_maps::Maps::lists_nonzero_only(spec) => self.batch_entries(map, true),
            _ => self.entries(map),
        }
    }

    fn specs(&self) -> &[MapSpec] {
        &self.specs
    }

    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        let spec = self.map_spec(map)?;
        self.check_key(spec, key)?;
        let fd = self.fd(map)?;
        let mut value = vec![0u8; self.syscall_value_size(spec)];
        // SAFETY: `key` has the map's key size and `value` the size the syscall writes for this map.
        let rc = unsafe {
            libbpf_sys::bpf_map_lookup_elem(fd, key.as_ptr().cast(), value.as_mut_ptr().cast())
        };
        match rc {
            0 if spec.map_type == PROG_ARRAY => self.program_index_value(spec, &value).map(Some),
            0 if is_outer(spec.map_type) => self.map_index_value(spec, &value).map(Some),
            0 => Ok(Some(value)),
            rc if -rc == libc::ENOENT => Ok(None),
            rc => Err(syscall_error(spec, -rc, "BPF_MAP_LOOKUP_ELEM")),
        }
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        let spec = self.map_spec(map)?;
        self.check_key(spec, key)?;
        let expected = self.syscall_value_size(spec);
        if value.len() != expected {
            return Err(map_error(
                spec,
                libc::EINVAL,
                format!(
                    "value of {} bytes, the syscall takes {expected}",
                    value.len()
                ),
            ));
        }
        let value = if spec.map_type == PROG_ARRAY {
            self.program_fd_value(spec, value)?
        } else if is_outer(spec.map_type) {
            self.map_fd_value(spec, value)?
        } else {
            value.to_vec()
        };
        let fd = self.fd(map)?;
        // SAFETY: `key` has the map's key size and `value` the size the syscall reads for this map.
        let rc = unsafe {
            libbpf_sys::bpf_map_update_elem(fd, key.as_ptr().cast(), value.as_ptr().cast(), flags)
        };
        if rc < 0 {
            return Err(syscall_error(spec, -rc, "BPF_MAP_UPDATE_ELEM"));
        }
        Ok(())
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        let spec = self.map_spec(map)?;
        self.check_key(spec, key)?;
        let fd = self.fd(map)?;
        // SAFETY: `key` has the map's key size.
        let rc = unsafe { libbpf_sys::bpf_map_delete_elem(fd, key.as_ptr().cast()) };
        if rc < 0 {
            return Err(syscall_error(spec, -rc, "BPF_MAP_DELETE_ELEM"));
        }
        Ok(())
    }

    fn entries(&mut self, map: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>, MapError> {
        let spec = self.map_spec(map)?;
        if is_unlistable(spec.map_type) {
            return Ok(Vec::new());
        }
        if hwxdp_maps::Maps::lists_nonzero_only(spec) {
            return self.batch_entries(map, false);
        }
        let max_entries = spec.max_entries as usize;
        let mut entries = Vec::new();
        let mut visited = 0usize;
        let mut key = self.next_key(map, None)?;
        while let Some(k) = key {
            visited += 1;
            // Empty slots of PROG_ARRAY and DEVMAP have keys but no value.
            if let Some(value) = self.lookup(map, &k)? {
                entries.push((k.clone(), value));
            }
            // A map changing under us could make get_next_key cycle; a map never holds more than max_entries.
            if visited > max_entries {
                return Err(map_error(
                    self.map_spec(map)?,
                    libc::EAGAIN,
                    "map changed while being listed",
                ));
            }
            key = self.next_key(map, Some(&k))?;
        }
        entries.sort();
        Ok(entries)
    }
}
