//! Maps too big for the machine are refused when they are made, by name, instead of exhausting memory.

use hwxdp_maps::{Maps, MEMORY_LIMIT};
use hwxdp_object::MapSpec;

fn spec(name: &str, map_type: u32, value_size: u32, max_entries: u32) -> MapSpec {
    MapSpec::new(name, map_type, 4, value_size, max_entries)
}

#[test]
fn a_huge_preallocated_map_is_an_error_naming_it() {
    // An LRU hash of 2^27 entries: what a corrupted object handed to the object fuzz target declared.
    let err = Maps::new(&[spec("flows", 9, 64, 1 << 27)], 2).expect_err("refused");
    assert_eq!(err.map, "flows");
    assert_eq!(err.errno, 12);
    assert!(err.message.contains("MiB"), "{}", err.message);
}

#[test]
fn the_limit_counts_all_maps_of_a_program_together() {
    let entries = (MEMORY_LIMIT / 2 / (4 + 64 + 64)) as u32;
    assert!(Maps::new(&[spec("a", 1, 64, entries)], 1).is_ok());
    let err = Maps::new(
        &[
            spec("a", 1, 64, entries),
            spec("b", 1, 64, entries),
            spec("c", 1, 64, entries),
        ],
        1,
    )
    .expect_err("three halves do not fit");
    assert_eq!(err.map, "c");
}
