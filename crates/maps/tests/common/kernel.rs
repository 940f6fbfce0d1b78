//! Just enough of the `bpf()` syscall to run map operations in the running kernel, the oracle of these tests.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_MAP_GET_NEXT_KEY: libc::c_long = 4;

/// A map created in the kernel.
pub struct KernelMap {
    fd: OwnedFd,
    key_size: usize,
}

fn bpf(cmd: libc::c_long, attr: &mut [u64; 16]) -> Result<i64, i32> {
    // SAFETY: `attr` is a zero-initialised `union bpf_attr` prefix that outlives the call; pointers in it reference
    // buffers the caller keeps alive.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(attr),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(r)
    }
}

/// Runs the calling thread on `cpu` only, so that per-CPU LRU lists are the ones the model uses.
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: plain libc calls on a local, fully initialised cpu set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let r = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(r, 0, "sched_setaffinity to cpu {cpu}");
    }
}

impl KernelMap {
    /// `BPF_MAP_CREATE`; panics (failing the test) if the kernel refuses.
    pub fn create(
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
    ) -> KernelMap {
        Self::try_create(map_type, key_size, value_size, max_entries, map_flags)
            .unwrap_or_else(|e| panic!("bpf map create failed: errno {e}"))
    }

    /// `BPF_MAP_CREATE`: the map or the positive errno.
    pub fn try_create(
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
    ) -> Result<KernelMap, i32> {
        let mut attr = [0u64; 16];
        attr[0] = u64::from(map_type) | u64::from(key_size) << 32;
        attr[1] = u64::from(value_size) | u64::from(max_entries) << 32;
        attr[2] = u64::from(map_flags);
        let fd = bpf(BPF_MAP_CREATE, &mut attr)?;
        // SAFETY: the kernel returned a fresh file descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Ok(KernelMap {
            fd,
            key_size: key_size as usize,
        })
    }

    /// `BPF_MAP_LOOKUP_ELEM` into a buffer of `value_len` bytes: the value or the positive errno.
    pub fn lookup(&self, key: &[u8], value_len: usize) -> Result<Vec<u8>, i32> {
        let mut value = vec![0u8; value_len];
        let mut attr = [0u64; 16];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        attr[2] = value.as_mut_ptr() as u64;
        bpf(BPF_MAP_LOOKUP_ELEM, &mut attr).map(|_| value)
    }

    /// `BPF_MAP_UPDATE_ELEM`: Ok or the positive errno.
    pub fn update(&self, key: &[u8], value: &[u8], flags: u64) -> Result<(), i32> {
        let mut attr = [0u64; 16];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        attr[2] = value.as_ptr() as u64;
        attr[3] = flags;
        bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(|_| ())
    }

    /// `BPF_MAP_DELETE_ELEM`: Ok or the positive errno.
    pub fn delete(&self, key: &[u8]) -> Result<(), i32> {
        let mut attr = [0u64; 16];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        bpf(BPF_MAP_DELETE_ELEM, &mut attr).map(|_| ())
    }

    /// Every key, by `BPF_MAP_GET_NEXT_KEY`, sorted.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut next = vec![0u8; self.key_size];
        let mut attr = [0u64; 16];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = 0;
        attr[2] = next.as_mut_ptr() as u64;
        while bpf(BPF_MAP_GET_NEXT_KEY, &mut attr).is_ok() {
            out.push(next.clone());
            let cur = out.last().expect("just pushed").as_ptr();
            attr = [0u64; 16];
            attr[0] = self.fd.as_raw_fd() as u64;
            attr[1] = cur as u64;
            attr[2] = next.as_mut_ptr() as u64;
        }
        out.sort();
        out
    }
}
