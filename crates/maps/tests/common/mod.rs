//! Shared helpers for the map tests.
#![allow(dead_code)]

pub mod kernel;

use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::MapSpec;

/// A user-defined map definition.
pub fn spec(
    name: &str,
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
) -> MapSpec {
    MapSpec::new(name, map_type, key_size, value_size, max_entries).with_flags(map_flags)
}

/// One map alone.
pub fn one(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
) -> Maps {
    Maps::new(
        &[spec(
            "m",
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags,
        )],
        2,
    )
    .expect("valid map")
}

/// Keys of map 0 as u32s, in key-byte order.
pub fn keys_u32(maps: &mut Maps) -> Vec<u32> {
    let mut keys: Vec<u32> = maps
        .entries(0)
        .expect("entries")
        .into_iter()
        .map(|(k, _)| u32::from_le_bytes(k[..4].try_into().expect("4-byte key")))
        .collect();
    keys.sort_unstable();
    keys
}

/// A u32 key.
pub fn k(i: u32) -> [u8; 4] {
    i.to_le_bytes()
}

/// A u64 value.
pub fn v(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}
