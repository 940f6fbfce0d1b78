//! BPF maps with the Linux kernel's semantics, and the JSON shape `bpftool map dump -j` prints.

pub mod json;
mod store;

pub use store::*;

use hwxdp_object::MapSpec;

/// All maps of one program, indexed like [`hwxdp_object::ObjectSpec::maps`].
pub struct Maps {
    specs: Vec<MapSpec>,
    possible_cpus: usize,
    cpu: usize,
}

impl Maps {
    /// Creates the maps, validating each definition as `BPF_MAP_CREATE` does.
    pub fn new(specs: &[MapSpec], possible_cpus: usize) -> Result<Maps, MapError> {
        Ok(Maps {
            specs: specs.to_vec(),
            possible_cpus,
            cpu: 0,
        })
    }
    /// Sets the CPU the program runs on.
    pub fn set_cpu(&mut self, cpu: usize) {
        self.cpu = cpu;
    }
    /// `bpf_map_lookup_elem`: the slot of the value.
    pub fn lookup_slot(&mut self, _map: usize, _key: &[u8]) -> Option<u32> {
        None
    }
    /// The bytes of a slot.
    pub fn value(&self, _map: usize, _slot: u32) -> &[u8] {
        &[]
    }
    /// The bytes of a slot, writable.
    pub fn value_mut(&mut self, _map: usize, _slot: u32) -> &mut [u8] {
        &mut []
    }
    /// The bytes of a slot, if the map and slot exist.
    pub fn try_value(&self, _map: usize, _slot: u32) -> Option<&[u8]> {
        None
    }
    /// The bytes of a slot, writable, if the map and slot exist.
    pub fn try_value_mut(&mut self, _map: usize, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    /// `bpf_map_update_elem` from a program.
    pub fn prog_update(&mut self, _map: usize, _key: &[u8], _value: &[u8], _flags: u64) -> i64 {
        -22
    }
    /// `bpf_map_delete_elem` from a program.
    pub fn prog_delete(&mut self, _map: usize, _key: &[u8]) -> i64 {
        -22
    }
    /// Whether a redirect map holds `key`.
    pub fn redirect_lookup(&mut self, _map: usize, _key: u32) -> bool {
        false
    }
    /// PROG_ARRAY: program index stored at `index`.
    pub fn prog_array_get(&self, _map: usize, _index: u32) -> Option<u32> {
        None
    }
    /// `bpf_ringbuf_reserve`.
    pub fn ringbuf_reserve(&mut self, _map: usize, _size: u64, _flags: u64) -> Option<u32> {
        None
    }
    /// `bpf_ringbuf_submit` / `bpf_ringbuf_discard`.
    pub fn ringbuf_commit(&mut self, _map: usize, _slot: u32, _discard: bool) {}
    /// `bpf_ringbuf_output`.
    pub fn ringbuf_output(&mut self, _map: usize, _data: &[u8], _flags: u64) -> i64 {
        -22
    }
    /// Consumer side of a ring buffer.
    pub fn ringbuf_drain(&mut self, _map: usize) -> Vec<Vec<u8>> {
        Vec::new()
    }
}

fn unsupported(spec: &MapSpec) -> MapError {
    MapError {
        map: spec.name.clone(),
        errno: 22,
        message: "not yet available".into(),
    }
}

impl MapStore for Maps {
    fn specs(&self) -> &[MapSpec] {
        &self.specs
    }
    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }
    fn lookup(&mut self, map: usize, _key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        Err(unsupported(&self.specs[map]))
    }
    fn update(
        &mut self,
        map: usize,
        _key: &[u8],
        _value: &[u8],
        _flags: u64,
    ) -> Result<(), MapError> {
        Err(unsupported(&self.specs[map]))
    }
    fn delete(&mut self, map: usize, _key: &[u8]) -> Result<(), MapError> {
        Err(unsupported(&self.specs[map]))
    }
    fn entries(&mut self, map: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>, MapError> {
        Err(unsupported(&self.specs[map]))
    }
}
