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

#[test]
fn a_huge_array_costs_what_is_written_and_lists_its_non_zero_entries() {
    use hwxdp_maps::MapStore;
    // Katran's QUIC/GUE server-id table: 2^24 entries the kernel preallocates (64 MiB, over 1 GiB by the estimate
    // of preallocated maps).
    let mut maps = Maps::new(&[spec("server_id_map", 2, 4, 1 << 24)], 2).expect("made");
    let before = maps.memory_used();
    assert!(before < 1 << 20, "declared, not allocated: {before} bytes");
    for index in [7u32, 1 << 23, (1 << 24) - 1] {
        maps.update(0, &index.to_le_bytes(), &index.to_le_bytes(), 0)
            .expect("written");
    }
    // Zeros written cost nothing and list nothing.
    maps.update(0, &5u32.to_le_bytes(), &[0; 4], 0)
        .expect("written");
    let used = maps.memory_used() - before;
    assert!(used <= 3 * (64 << 10), "three chunks at most: {used} bytes");
    let entries = maps.entries(0).expect("listed");
    assert_eq!(entries.len(), 3);
    // Sorted by key bytes, as every listing: little-endian 2^23 before 7.
    let keys: Vec<&[u8]> = entries.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, [[0, 0, 128, 0], [7, 0, 0, 0], [255, 255, 255, 0]]);
    assert_eq!(
        maps.lookup(0, &9u32.to_le_bytes()).unwrap(),
        Some(vec![0; 4])
    );
    assert_eq!(
        maps.lookup(0, &(1u32 << 23).to_le_bytes()).unwrap(),
        Some((1u32 << 23).to_le_bytes().to_vec())
    );
    // The program's view: a slot of an unwritten chunk reads as zeros.
    let slot = maps
        .lookup_slot(0, &100u32.to_le_bytes())
        .expect("in bounds");
    assert_eq!(maps.value(0, slot), [0; 4]);
    assert!(Maps::lists_nonzero_only(&maps.specs()[0]));
}

#[test]
fn every_entry_of_a_huge_array_is_listed_when_asked() {
    use hwxdp_maps::MapStore;
    let entries = hwxdp_maps::HUGE_ARRAY_ENTRIES + 1;
    let mut maps = Maps::new(&[spec("big", 6, 8, entries)], 2).expect("made");
    let mut value = vec![0u8; 16];
    value[8] = 3;
    maps.update(0, &42u32.to_le_bytes(), &value, 0)
        .expect("written");
    let nonzero = maps.entries(0).expect("listed");
    assert_eq!(nonzero, vec![(42u32.to_le_bytes().to_vec(), value)]);
    assert_eq!(maps.entries_all(0).expect("listed").len(), entries as usize);
}

#[test]
fn writing_a_huge_array_past_the_limit_is_an_error_naming_it() {
    use hwxdp_maps::MapStore;
    // A hash map whose preallocation estimate leaves 8 MiB (it allocates as it fills, so nothing here), then an array
    // of 1 MiB values: each first write of an entry takes 1 MiB.
    let hash_entries = ((MEMORY_LIMIT - (8 << 20)) / (4 + 64 + 64)) as u32;
    let mut maps = Maps::new(
        &[
            spec("flows", 1, 64, hash_entries),
            spec("tables", 2, 1 << 20, 64),
        ],
        1,
    )
    .expect("declared, not allocated");
    let value = vec![1u8; 1 << 20];
    let mut written = 0u32;
    let err = loop {
        match maps.update(1, &written.to_le_bytes(), &value[..], 0) {
            Ok(()) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 64, "the limit was never reached");
    };
    assert!(written >= 6, "only {written} entries fitted");
    assert!(maps.memory_used() + (1 << 20) > MEMORY_LIMIT);
    assert_eq!(err.map, "tables");
    assert_eq!(err.errno, 12);
    assert!(err.message.contains("1024 MiB"), "{}", err.message);
    // Rewriting an entry already written needs nothing new.
    maps.update(1, &0u32.to_le_bytes(), &value[..], 0)
        .expect("rewritten");
}
