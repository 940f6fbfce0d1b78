//! What programs see: slots, per-CPU copies, reference bits, stale values after replacement, tail-call and redirect
//! lookups.

mod common;

use common::{k, keys_u32, one, spec, v};
use hwxdp_maps::abi::{errno::*, map_type as mt};
use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::MapKind;

#[test]
fn percpu_program_updates_touch_only_the_current_cpu() {
    for t in [mt::PERCPU_HASH, mt::LRU_PERCPU_HASH] {
        let mut m = one(t, 4, 8, 4, 0);
        m.set_cpu(1);
        assert_eq!(m.prog_update(0, &k(1), &v(7), 0), 0);
        let mut both = vec![0; 8];
        both.extend_from_slice(&v(7));
        assert_eq!(
            m.lookup(0, &k(1)),
            Ok(Some(both)),
            "type {t}: new element, other cpu zeroed"
        );
        m.set_cpu(0);
        assert_eq!(m.prog_update(0, &k(1), &v(5), 2), 0);
        let mut expect = v(5).to_vec();
        expect.extend_from_slice(&v(7));
        assert_eq!(
            m.lookup(0, &k(1)),
            Ok(Some(expect)),
            "type {t}: in-place update of cpu 0"
        );
        let slot = m.lookup_slot(0, &k(1)).expect("present");
        assert_eq!(m.value(0, slot), v(5));
        m.set_cpu(1);
        let slot1 = m.lookup_slot(0, &k(1)).expect("present");
        assert_ne!(slot, slot1);
        assert_eq!(m.value(0, slot1), v(7));
    }
    let mut a = one(mt::PERCPU_ARRAY, 4, 8, 2, 0);
    a.set_cpu(1);
    assert_eq!(a.prog_update(0, &k(0), &v(3), 0), 0);
    let mut expect = vec![0; 8];
    expect.extend_from_slice(&v(3));
    assert_eq!(a.lookup(0, &k(0)), Ok(Some(expect)));
}

#[test]
fn slots_are_stable_and_writes_through_them_are_visible() {
    let mut m = one(mt::HASH, 4, 8, 8, 0);
    assert_eq!(m.prog_update(0, &k(3), &v(1), 0), 0);
    let slot = m.lookup_slot(0, &k(3)).expect("present");
    m.value_mut(0, slot).copy_from_slice(&v(99));
    assert_eq!(m.prog_update(0, &k(4), &v(2), 0), 0);
    assert_eq!(m.lookup_slot(0, &k(3)), Some(slot));
    assert_eq!(m.lookup(0, &k(3)), Ok(Some(v(99).to_vec())));
    assert_eq!(m.try_value(0, 1_000_000), None);
    assert_eq!(m.try_value(7, 0), None);
}

#[test]
fn replacing_a_hash_value_leaves_the_old_copy_for_holders_of_its_address() {
    let mut m = one(mt::HASH, 4, 8, 2, 0);
    assert_eq!(m.prog_update(0, &k(1), &v(10), 0), 0);
    let old = m.lookup_slot(0, &k(1)).expect("present");
    assert_eq!(m.prog_update(0, &k(1), &v(20), 0), 0);
    let new = m.lookup_slot(0, &k(1)).expect("present");
    assert_ne!(old, new);
    assert_eq!(m.value(0, old), v(10));
    assert_eq!(m.value(0, new), v(20));
}

#[test]
fn programs_cannot_delete_array_elements_or_write_redirect_maps() {
    let mut m = Maps::new(
        &[
            spec("a", mt::ARRAY, 4, 8, 2, 0),
            spec("devs", mt::DEVMAP, 4, 4, 2, 0),
            spec("lpm", mt::LPM_TRIE, 8, 4, 2, 1),
        ],
        2,
    )
    .expect("maps");
    assert_eq!(m.prog_delete(0, &k(0)), -i64::from(EINVAL));
    assert_eq!(m.prog_update(0, &k(2), &v(1), 0), -i64::from(E2BIG));
    assert_eq!(m.prog_update(1, &k(0), &k(1), 0), -i64::from(EINVAL));
    assert_eq!(m.prog_update(2, &[8, 0, 0, 0, 10, 0, 0, 0], &k(1), 0), 0);
    assert_eq!(m.prog_update(2, &[8, 0, 0, 0, 11, 0, 0, 0], &k(2), 0), 0);
    assert_eq!(
        m.prog_update(2, &[8, 0, 0, 0, 12, 0, 0, 0], &k(3), 0),
        -i64::from(ENOSPC)
    );
    assert_eq!(m.prog_delete(2, &[8, 0, 0, 0, 10, 0, 0, 0]), 0);
    assert_eq!(
        m.prog_delete(2, &[8, 0, 0, 0, 10, 0, 0, 0]),
        -i64::from(ENOENT)
    );
}

#[test]
fn redirect_and_tail_call_lookups() {
    let mut m = Maps::new(
        &[
            spec("devs", mt::DEVMAP, 4, 8, 4, 0),
            spec("devh", mt::DEVMAP_HASH, 4, 4, 4, 0),
            spec("cpus", mt::CPUMAP, 4, 4, 2, 0),
            spec("jmp", mt::PROG_ARRAY, 4, 4, 4, 0),
        ],
        2,
    )
    .expect("maps");
    let mut dev = 3u32.to_le_bytes().to_vec();
    dev.extend_from_slice(&(-1i32).to_le_bytes());
    m.update(0, &k(2), &dev, 0).expect("devmap");
    m.update(1, &k(1000), &k(4), 0).expect("devmap hash");
    m.update(2, &k(1), &k(128), 0).expect("cpumap");
    m.update(3, &k(1), &k(5), 0).expect("prog array");
    assert_eq!(
        m.update(3, &k(1), &k(5), 1).map_err(|e| e.errno),
        Err(EINVAL)
    );
    assert!(m.redirect_lookup(0, 2) && !m.redirect_lookup(0, 1) && !m.redirect_lookup(0, 99));
    assert!(m.redirect_lookup(1, 1000) && !m.redirect_lookup(1, 2));
    assert!(m.redirect_lookup(2, 1) && !m.redirect_lookup(2, 0));
    assert_eq!(m.prog_array_get(3, 1), Some(5));
    assert_eq!(m.prog_array_get(3, 0), None);
    assert_eq!(m.prog_array_get(0, 2), None);
    assert_eq!(m.lookup(3, &k(1)), Ok(Some(k(5).to_vec())));
    assert_eq!(m.delete(3, &k(0)).map_err(|e| e.errno), Err(ENOENT));
    assert_eq!(m.delete(3, &k(9)).map_err(|e| e.errno), Err(E2BIG));
    let slot = m
        .lookup_slot(0, &k(2))
        .expect("devmap lookups give the value");
    assert_eq!(m.value(0, slot), [3, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        m.lookup_slot(2, &k(1)),
        None,
        "programs cannot look up cpumap entries"
    );
    assert_eq!(
        m.entries(0),
        Ok(vec![(k(2).to_vec(), vec![3, 0, 0, 0, 0, 0, 0, 0])])
    );
}

#[test]
fn global_data_maps_start_with_their_initial_value() {
    let mut s = spec(".data", mt::ARRAY, 4, 6, 1, 0);
    s.kind = MapKind::Global;
    s.initial_value = Some(vec![1, 2, 3, 4, 5, 6]);
    let mut m = Maps::new(&[s], 2).expect("maps");
    assert_eq!(m.lookup(0, &k(0)), Ok(Some(vec![1, 2, 3, 4, 5, 6])));
    let slot = m.lookup_slot(0, &k(0)).expect("present");
    assert_eq!(m.value(0, slot), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn userspace_access_flags_are_enforced() {
    let mut m = Maps::new(
        &[
            spec("ro", mt::HASH, 4, 8, 4, 8),
            spec("wo", mt::HASH, 4, 8, 4, 16),
        ],
        2,
    )
    .expect("maps");
    assert_eq!(
        m.update(0, &k(1), &v(1), 0).map_err(|e| e.errno),
        Err(EPERM)
    );
    assert_eq!(m.prog_update(0, &k(1), &v(1), 0), 0);
    assert_eq!(m.lookup(0, &k(1)), Ok(Some(v(1).to_vec())));
    m.update(1, &k(1), &v(1), 0)
        .expect("write-only map takes updates");
    assert_eq!(m.lookup(1, &k(1)).map_err(|e| e.errno), Err(EPERM));
    let e = m.update(1, &k(1), &[0; 3], 0).expect_err("value size");
    assert_eq!(e.message, "value of 3 bytes, the map takes 8");
    let e = m.lookup(0, &[0; 2]).expect_err("key size");
    assert_eq!((e.map.as_str(), e.errno), ("ro", EINVAL));
    assert_eq!(e.message, "key of 2 bytes, the map's keys have 4");
}

/// Common LRU, one CPU, 4 entries: the local free target is 2, so eviction frees the two oldest inactive entries.
fn lru_after(lookup_k0: bool) -> Vec<u32> {
    let mut m = Maps::new(&[spec("lru", mt::LRU_HASH, 4, 8, 4, 0)], 1).expect("maps");
    for i in 0..4 {
        assert_eq!(m.prog_update(0, &k(i), &v(i.into()), 0), 0);
    }
    if lookup_k0 {
        assert!(m.lookup_slot(0, &k(0)).is_some());
    }
    for i in 4..6 {
        assert_eq!(m.prog_update(0, &k(i), &v(i.into()), 0), 0);
    }
    keys_u32(&mut m)
}

#[test]
fn lru_reference_bit_saves_a_looked_up_entry() {
    assert_eq!(lru_after(false), [2, 3, 4, 5]);
    assert_eq!(lru_after(true), [0, 3, 4, 5]);
}

#[test]
fn lru_userspace_lookups_do_not_set_the_reference_bit() {
    let mut m = Maps::new(&[spec("lru", mt::LRU_HASH, 4, 8, 4, 0)], 1).expect("maps");
    for i in 0..4 {
        assert_eq!(m.prog_update(0, &k(i), &v(0), 0), 0);
    }
    assert!(m.lookup(0, &k(0)).expect("lookup").is_some());
    for i in 4..6 {
        assert_eq!(m.prog_update(0, &k(i), &v(0), 0), 0);
    }
    assert_eq!(keys_u32(&mut m), [2, 3, 4, 5]);
}

#[test]
fn lru_insert_twice_max_entries_with_lookups_keeps_the_hot_keys() {
    // 64 entries on 2 CPUs (local free target 16); keys 0-7 are looked up after every insert.
    let mut m = Maps::new(&[spec("flows", mt::LRU_HASH, 4, 8, 64, 0)], 2).expect("maps");
    for i in 0..128u32 {
        m.set_cpu((i % 2) as usize);
        assert_eq!(m.prog_update(0, &k(i), &v(i.into()), 0), 0);
        for hot in 0..8 {
            m.lookup_slot(0, &k(hot));
        }
    }
    let keys = keys_u32(&mut m);
    assert!(keys.len() <= 64);
    assert!(
        (0..8).all(|h| keys.contains(&h)),
        "hot keys survive: {keys:?}"
    );
    assert!(
        keys.contains(&127) && !keys.contains(&8),
        "newest kept, cold oldest evicted: {keys:?}"
    );
}

#[test]
fn per_cpu_hash_values_are_replaced_in_place_even_with_one_cpu() {
    // The kernel updates a per-CPU element in place (no spare element), so a program's pointer from an earlier
    // lookup still reaches the map; with one possible CPU the map has one copy but is no less per-CPU.
    for map_type in [mt::PERCPU_HASH, mt::LRU_PERCPU_HASH] {
        let mut m = Maps::new(&[spec("m", map_type, 4, 8, 4, 0)], 1).expect("valid map");
        assert_eq!(m.prog_update(0, &k(1), &v(10), 0), 0);
        let slot = m.lookup_slot(0, &k(1)).expect("present");
        assert_eq!(m.prog_update(0, &k(1), &v(20), 0), 0);
        assert_eq!(m.lookup_slot(0, &k(1)), Some(slot), "map type {map_type}");
        m.value_mut(0, slot).copy_from_slice(&v(30));
        assert_eq!(
            m.lookup(0, &k(1)),
            Ok(Some(v(30).to_vec())),
            "map type {map_type}"
        );
    }
}
