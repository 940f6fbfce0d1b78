//! One map of each kind the examples use, for the fuzz targets that need maps.

use hwxdp_object::MapSpec;

/// Array, hash, per-CPU array, LRU hash, LPM trie, ring buffer, program array and device map, small.
pub fn one_of_each() -> Vec<MapSpec> {
    vec![
        MapSpec::new("array", 2, 4, 8, 4),
        MapSpec::new("hash", 1, 4, 8, 4),
        MapSpec::new("percpu", 6, 4, 8, 4),
        MapSpec::new("lru", 9, 4, 8, 4),
        MapSpec::new("lpm", 11, 8, 4, 4).with_flags(1),
        MapSpec::new("ring", 27, 0, 0, 4096),
        MapSpec::new("progs", 3, 4, 4, 2),
        MapSpec::new("devs", 14, 4, 4, 4),
    ]
}
