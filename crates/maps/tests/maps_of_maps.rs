//! ARRAY_OF_MAPS and HASH_OF_MAPS: the kernel's rules for inner maps, and their userspace view (inner maps by index).

use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::{MapSpec, OuterMap};

fn outer(
    name: &str,
    map_type: u32,
    max_entries: u32,
    template: MapSpec,
    init: Vec<(u32, usize)>,
) -> MapSpec {
    let mut s = MapSpec::new(name, map_type, 4, 4, max_entries);
    s.outer = Some(Box::new(OuterMap { template, init }));
    s
}

fn array(name: &str, max_entries: u32) -> MapSpec {
    MapSpec::new(name, 2, 4, 8, max_entries)
}

#[test]
fn inner_maps_must_match_the_template() {
    let specs = [
        array("a8", 8),
        array("a16", 8 * 2),
        MapSpec::new("h", 1, 4, 8, 8),
        outer("outer", 12, 4, array("outer.inner", 8), vec![(0, 0)]),
        outer(
            "any_size",
            12,
            4,
            array("any_size.inner", 8).with_flags(1 << 12),
            vec![],
        ),
    ];
    // An array must have the template's max_entries (a16 does not fit "outer"), unless the template has
    // BPF_F_INNER_MAP ("any_size", below); its flags must match too.
    let mut maps = Maps::new(&specs[..4], 2).expect("made, with a8 at 0");
    assert_eq!(
        maps.lookup(3, &0u32.to_le_bytes()).unwrap(),
        Some(0u32.to_le_bytes().to_vec())
    );
    assert_eq!(maps.inner_map(3, &0u32.to_le_bytes()), Some(0));
    assert_eq!(maps.inner_map(3, &1u32.to_le_bytes()), None);
    let e = maps
        .update(3, &1u32.to_le_bytes(), &1u32.to_le_bytes(), 0)
        .expect_err("another size");
    assert!(e.message.contains("a16 does not match"), "{}", e.message);
    let e = maps
        .update(3, &1u32.to_le_bytes(), &2u32.to_le_bytes(), 0)
        .expect_err("a hash");
    assert_eq!((e.errno, e.map.as_str()), (22, "outer"));
    assert_eq!(
        maps.update(3, &4u32.to_le_bytes(), &0u32.to_le_bytes(), 0)
            .unwrap_err()
            .errno,
        7
    );
    assert_eq!(
        maps.update(3, &1u32.to_le_bytes(), &0u32.to_le_bytes(), 1)
            .unwrap_err()
            .errno,
        22,
        "bpf_any only"
    );
    maps.update(3, &3u32.to_le_bytes(), &0u32.to_le_bytes(), 0)
        .expect("a8 twice");
    maps.delete(3, &0u32.to_le_bytes()).expect("deleted");
    assert_eq!(
        maps.entries(3).unwrap(),
        vec![(3u32.to_le_bytes().to_vec(), 0u32.to_le_bytes().to_vec())]
    );
    let e =
        Maps::new(&[specs[1].clone(), specs[3].clone()], 2).expect_err("the initializer is a16");
    assert!(
        e.message.contains("does not match the inner map template"),
        "{}",
        e.message
    );
    // With BPF_F_INNER_MAP in the template (and so in the inner map, whose flags must match), any size fits.
    let mut any_size = specs[4].clone();
    any_size.outer.as_mut().unwrap().init = vec![(1, 0)];
    let sized = array("f16", 16).with_flags(1 << 12);
    let maps =
        Maps::new(&[sized.clone(), any_size.clone()], 2).expect("16 entries for a template of 8");
    assert_eq!(maps.inner_map(1, &1u32.to_le_bytes()), Some(0));
    assert!(
        Maps::new(&[array("f16", 16), any_size], 2).is_err(),
        "flags differ"
    );
}

#[test]
fn templates_are_checked_when_the_outer_map_is_made() {
    let no_template = MapSpec::new("o", 12, 4, 4, 4);
    let e = Maps::new(&[no_template], 1).expect_err("no template");
    assert!(e.message.contains("inner map template"), "{}", e.message);
    let nested = outer(
        "o",
        13,
        4,
        outer("o.inner", 12, 1, array("x", 1), vec![]),
        vec![],
    );
    assert_eq!(Maps::new(&[nested], 1).unwrap_err().errno, 22);
    let bad_inner = outer("o", 12, 4, MapSpec::new("o.inner", 2, 8, 8, 4), vec![]);
    assert_eq!(
        Maps::new(&[bad_inner], 1).unwrap_err().errno,
        22,
        "arrays take 4-byte keys"
    );
    let hash = outer("h", 13, 2, array("h.inner", 1), vec![(7, 1), (9, 1)]);
    let mut maps = Maps::new(&[hash, array("one", 1)], 1).expect("two initializers fit");
    let e = maps
        .update(0, &8u32.to_le_bytes(), &1u32.to_le_bytes(), 0)
        .unwrap_err();
    assert_eq!(e.errno, 7, "full: {}", e.message);
    maps.update(0, &7u32.to_le_bytes(), &1u32.to_le_bytes(), 2)
        .expect("BPF_EXIST");
}
