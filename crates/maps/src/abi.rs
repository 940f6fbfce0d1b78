//! Numbers of the kernel's BPF ABI that map semantics depend on.

/// `BPF_MAP_TYPE_*` values hwxdp models.
pub mod map_type {
    /// `BPF_MAP_TYPE_HASH`.
    pub const HASH: u32 = 1;
    /// `BPF_MAP_TYPE_ARRAY`.
    pub const ARRAY: u32 = 2;
    /// `BPF_MAP_TYPE_PROG_ARRAY`.
    pub const PROG_ARRAY: u32 = 3;
    /// `BPF_MAP_TYPE_PERF_EVENT_ARRAY`.
    pub const PERF_EVENT_ARRAY: u32 = 4;
    /// `BPF_MAP_TYPE_PERCPU_HASH`.
    pub const PERCPU_HASH: u32 = 5;
    /// `BPF_MAP_TYPE_PERCPU_ARRAY`.
    pub const PERCPU_ARRAY: u32 = 6;
    /// `BPF_MAP_TYPE_LRU_HASH`.
    pub const LRU_HASH: u32 = 9;
    /// `BPF_MAP_TYPE_LRU_PERCPU_HASH`.
    pub const LRU_PERCPU_HASH: u32 = 10;
    /// `BPF_MAP_TYPE_LPM_TRIE`.
    pub const LPM_TRIE: u32 = 11;
    /// `BPF_MAP_TYPE_ARRAY_OF_MAPS`.
    pub const ARRAY_OF_MAPS: u32 = 12;
    /// `BPF_MAP_TYPE_HASH_OF_MAPS`.
    pub const HASH_OF_MAPS: u32 = 13;
    /// `BPF_MAP_TYPE_DEVMAP`.
    pub const DEVMAP: u32 = 14;
    /// `BPF_MAP_TYPE_CPUMAP`.
    pub const CPUMAP: u32 = 16;
    /// `BPF_MAP_TYPE_XSKMAP`.
    pub const XSKMAP: u32 = 17;
    /// `BPF_MAP_TYPE_DEVMAP_HASH`.
    pub const DEVMAP_HASH: u32 = 25;
    /// `BPF_MAP_TYPE_RINGBUF`.
    pub const RINGBUF: u32 = 27;
}

/// Whether userspace sees one value per possible CPU for maps of this type.
pub fn is_percpu(map_type: u32) -> bool {
    matches!(
        map_type,
        map_type::PERCPU_HASH | map_type::PERCPU_ARRAY | map_type::LRU_PERCPU_HASH
    )
}

/// `map_flags` bits of `BPF_MAP_CREATE`.
pub mod map_flags {
    /// `BPF_F_NO_PREALLOC`.
    pub const NO_PREALLOC: u32 = 1;
    /// `BPF_F_NO_COMMON_LRU`.
    pub const NO_COMMON_LRU: u32 = 1 << 1;
    /// `BPF_F_NUMA_NODE`.
    pub const NUMA_NODE: u32 = 1 << 2;
    /// `BPF_F_RDONLY`: userspace may not write.
    pub const RDONLY: u32 = 1 << 3;
    /// `BPF_F_WRONLY`: userspace may not read.
    pub const WRONLY: u32 = 1 << 4;
    /// `BPF_F_ZERO_SEED`.
    pub const ZERO_SEED: u32 = 1 << 6;
    /// `BPF_F_RDONLY_PROG`.
    pub const RDONLY_PROG: u32 = 1 << 7;
    /// `BPF_F_WRONLY_PROG`.
    pub const WRONLY_PROG: u32 = 1 << 8;
    /// `BPF_F_MMAPABLE`.
    pub const MMAPABLE: u32 = 1 << 10;
    /// `BPF_F_PRESERVE_ELEMS`.
    pub const PRESERVE_ELEMS: u32 = 1 << 11;
    /// `BPF_F_INNER_MAP`.
    pub const INNER_MAP: u32 = 1 << 12;
    /// `BPF_F_ACCESS_MASK`.
    pub const ACCESS_MASK: u32 = RDONLY | RDONLY_PROG | WRONLY | WRONLY_PROG;
}

/// Flags of `BPF_MAP_UPDATE_ELEM` and `bpf_map_update_elem`.
pub mod update_flags {
    /// `BPF_ANY`: create or replace.
    pub const ANY: u64 = 0;
    /// `BPF_NOEXIST`: create only.
    pub const NOEXIST: u64 = 1;
    /// `BPF_EXIST`: replace only.
    pub const EXIST: u64 = 2;
    /// `BPF_F_LOCK`: update under the value's `bpf_spin_lock`.
    pub const LOCK: u64 = 4;
}

/// Positive errno values, as the kernel returns them negated.
pub mod errno {
    /// Operation not permitted.
    pub const EPERM: i32 = 1;
    /// No such entry.
    pub const ENOENT: i32 = 2;
    /// Bad file descriptor: no such map to put in a map of maps.
    pub const EBADF: i32 = 9;
    /// Argument list too long: index out of range, map full.
    pub const E2BIG: i32 = 7;
    /// Try again: ring buffer full.
    pub const EAGAIN: i32 = 11;
    /// Out of memory: no free LRU node.
    pub const ENOMEM: i32 = 12;
    /// Busy: the same socket is already at this XSKMAP index.
    pub const EBUSY: i32 = 16;
    /// Entry exists.
    pub const EEXIST: i32 = 17;
    /// No such device: CPU not possible.
    pub const ENODEV: i32 = 19;
    /// Invalid argument.
    pub const EINVAL: i32 = 22;
    /// No space left: LPM trie full.
    pub const ENOSPC: i32 = 28;
    /// Value too large: CPUMAP queue size.
    pub const EOVERFLOW: i32 = 75;
    /// Operation not supported on the socket-like XSKMAP.
    pub const EOPNOTSUPP: i32 = 95;
    /// The kernel-internal "not supported" of ring buffer map operations.
    pub const ENOTSUPP: i32 = 524;
}

/// A failed map operation before the map's name is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    /// Positive errno.
    pub errno: i32,
    /// A few lower-case words.
    pub why: &'static str,
}

impl Fail {
    pub(crate) const fn new(errno: i32, why: &'static str) -> Fail {
        Fail { errno, why }
    }
}

/// Result of one map operation.
pub(crate) type Res<T = ()> = Result<T, Fail>;

/// `check_flags` of hashtab.c: whether `exists` satisfies `BPF_NOEXIST`/`BPF_EXIST` (with `BPF_F_LOCK` masked off).
pub(crate) fn check_exist_flags(exists: bool, flags: u64) -> Res {
    let flags = flags & !update_flags::LOCK;
    if exists && flags == update_flags::NOEXIST {
        return Err(Fail::new(errno::EEXIST, "key exists"));
    }
    if !exists && flags == update_flags::EXIST {
        return Err(Fail::new(errno::ENOENT, "no such key"));
    }
    Ok(())
}

/// Reads a 4-byte little-endian key (array indices, device map keys).
pub(crate) fn key_u32(key: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = key.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// Rounds up to a multiple of 8, as per-CPU values are padded in the syscall view.
pub(crate) fn round8(n: usize) -> usize {
    n.div_ceil(8) * 8
}
