//! The userspace view of a program's maps, shared by every backend.

use hwxdp_object::MapSpec;
use thiserror::Error;

/// A map operation failed; `errno` is what the kernel's `bpf()` syscall or helper would return (positive). The
/// message says what went wrong in words; only a system call that really failed (the kernel backend's) adds its
/// errno to the message.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("map {map}: {message}")]
pub struct MapError {
    /// Name of the map.
    pub map: String,
    /// The kernel errno (e.g. 2 for ENOENT, 7 for E2BIG, 17 for EEXIST, 22 for EINVAL).
    pub errno: i32,
    /// What went wrong, in a few lower-case words.
    pub message: String,
}

/// A map's entries as `(key, value)` byte pairs, value in the syscall view.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The maps of one program as userspace sees them through `bpf()`: keys and values as bytes.
///
/// Per-CPU maps show, as the syscall does, one value per possible CPU, each padded to a multiple of 8 bytes, back to
/// back. Map indices follow [`hwxdp_object::ObjectSpec::maps`].
pub trait MapStore {
    /// The map definitions, in object order.
    fn specs(&self) -> &[MapSpec];
    /// Number of possible CPUs per-CPU values are shown for.
    fn possible_cpus(&self) -> usize;
    /// `BPF_MAP_LOOKUP_ELEM`.
    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError>;
    /// `BPF_MAP_UPDATE_ELEM` with `BPF_ANY`/`BPF_NOEXIST`/`BPF_EXIST` flags.
    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError>;
    /// `BPF_MAP_DELETE_ELEM`.
    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError>;
    /// Every entry, sorted by key bytes. Maps whose contents userspace cannot list (RINGBUF, XSKMAP) give an empty list;
    /// arrays of more than [`crate::HUGE_ARRAY_ENTRIES`] entries list only their non-zero entries
    /// ([`crate::Maps::lists_nonzero_only`]).
    fn entries(&mut self, map: usize) -> Result<Entries, MapError>;
    /// Every entry, the zero entries of huge arrays included (the same as [`MapStore::entries`] for other maps).
    fn entries_all(&mut self, map: usize) -> Result<Entries, MapError> {
        self.entries(map)
    }
}
