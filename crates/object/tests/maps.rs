//! Map declarations of every libbpf style, global data, and the relocations that reference them.

mod common;

use hwxdp_ebpf::{LD_DW_IMM, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use hwxdp_object::{parse, MapKind, MapSpec, ObjectSpec};

const HASH: u32 = 1;
const ARRAY: u32 = 2;
const PERCPU_ARRAY: u32 = 6;
const DEVMAP: u32 = 14;
const BPF_F_NO_PREALLOC: u32 = 1;
const BPF_F_RDONLY_PROG: u32 = 0x80;

fn maps_object() -> (common::Built, ObjectSpec) {
    let built = common::compile("maps");
    let spec = parse(&built.bytes).expect("maps.o parses");
    (built, spec)
}

fn user_map(
    name: &str,
    map_type: u32,
    key: u32,
    value: u32,
    entries: u32,
    flags: u32,
    kind: MapKind,
) -> MapSpec {
    MapSpec {
        name: name.into(),
        map_type,
        key_size: key,
        value_size: value,
        max_entries: entries,
        map_flags: flags,
        kind,
        initial_value: None,
        outer: None,
    }
}

fn global(name: &str, value: Vec<u8>, flags: u32) -> MapSpec {
    MapSpec {
        name: name.into(),
        map_type: ARRAY,
        key_size: 4,
        value_size: value.len() as u32,
        max_entries: 1,
        map_flags: flags,
        kind: MapKind::Global,
        initial_value: Some(value),
        outer: None,
    }
}

#[test]
fn user_maps_come_first_in_symbol_order_then_globals_in_section_order() {
    let (_built, spec) = maps_object();
    let names: Vec<&str> = spec.maps.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "flows",
            "stats",
            "legacy_counts",
            "ports",
            ".rodata",
            ".data",
            ".bss",
            ".rodata.str1.1"
        ]
    );
}

#[test]
fn btf_and_legacy_definitions_are_read() {
    let (_built, spec) = maps_object();
    // struct flow_key is 4 + 4 + 2 + 2 + 1 bytes padded to 16.
    assert_eq!(
        spec.maps[0],
        user_map(
            "flows",
            HASH,
            16,
            8,
            1024,
            BPF_F_NO_PREALLOC,
            MapKind::BtfDefined
        )
    );
    assert_eq!(
        spec.maps[1],
        user_map("stats", ARRAY, 4, 24, 8, 0, MapKind::BtfDefined)
    );
    assert_eq!(
        spec.maps[2],
        user_map("legacy_counts", PERCPU_ARRAY, 4, 8, 4, 0, MapKind::Legacy)
    );
    // struct bpf_devmap_val is an ifindex and a program fd/id union: 8 bytes.
    assert_eq!(
        spec.maps[3],
        user_map("ports", DEVMAP, 4, 8, 16, 0, MapKind::BtfDefined)
    );
}

#[test]
fn global_data_sections_become_single_entry_arrays() {
    let (_built, spec) = maps_object();
    let rodata = [42u32.to_le_bytes(), 3u32.to_le_bytes()].concat();
    assert_eq!(spec.maps[4], global(".rodata", rodata, BPF_F_RDONLY_PROG));
    let data = [
        7u64.to_le_bytes().as_slice(),
        0x1122_3344u32.to_le_bytes().as_slice(),
    ]
    .concat();
    assert_eq!(spec.maps[5], global(".data", data, 0));
    assert_eq!(spec.maps[6], global(".bss", vec![0; 16], 0));
    let strings = b"long packet %d\n\0".to_vec();
    assert_eq!(
        spec.maps[7],
        global(".rodata.str1.1", strings, BPF_F_RDONLY_PROG)
    );
    assert_eq!(spec.license, "Dual BSD/GPL");
    assert_eq!(spec.map_index(".bss"), Some(6));
}

/// Where each symbol of maps.c lives: (map name, offset in the map value) for globals, (map name, None) for maps.
fn expected_reference(symbol: &str) -> (&'static str, Option<u32>) {
    match symbol {
        "flows" => ("flows", None),
        "stats" => ("stats", None),
        "legacy_counts" => ("legacy_counts", None),
        "ports" => ("ports", None),
        "limit" => (".rodata", Some(0)),
        "shift" => (".rodata", Some(4)),
        "seen" => (".data", Some(0)),
        "tag" => (".data", Some(8)),
        "last_len" => (".bss", Some(0)),
        "drops" => (".bss", Some(8)),
        ".rodata.str1.1" => (".rodata.str1.1", Some(0)),
        other => panic!("unexpected relocation against {other}"),
    }
}

#[test]
fn every_lddw_relocation_listed_by_objdump_is_resolved() {
    let (built, spec) = maps_object();
    let prog = spec.program(Some("xdp_maps")).expect("program");
    let relocs = common::objdump_relocs(&built.path);
    assert_eq!(relocs.len(), 11, "{relocs:?}");
    for reloc in relocs {
        assert_eq!(
            (reloc.section.as_str(), reloc.kind.as_str()),
            ("xdp", "R_BPF_64_64")
        );
        let insn = prog.insns[common::insn_at_slot(&prog.insns, reloc.slot)];
        assert_eq!(insn.code, LD_DW_IMM, "slot {}", reloc.slot);
        let (map, offset) = expected_reference(&reloc.symbol);
        let index = spec.map_index(map).expect("map exists") as i64;
        match offset {
            None => {
                assert_eq!(insn.src, PSEUDO_MAP_FD, "{}", reloc.symbol);
                assert_eq!(insn.imm, index, "{}", reloc.symbol);
            }
            Some(off) => {
                assert_eq!(insn.src, PSEUDO_MAP_VALUE, "{}", reloc.symbol);
                assert_eq!(insn.imm & 0xffff_ffff, index, "{}", reloc.symbol);
                assert_eq!(insn.imm >> 32, i64::from(off), "{}", reloc.symbol);
            }
        }
    }
}

#[test]
fn known_slots_carry_the_right_references() {
    let (_built, spec) = maps_object();
    let prog = spec.program(None).expect("the only program");
    assert_eq!(prog.section, "xdp");
    // Slot 2: r1 = &shift, the second u32 of .rodata (map 4).
    let shift = prog.insns[2];
    assert_eq!(
        (shift.dst, shift.src, shift.imm),
        (1, PSEUDO_MAP_VALUE, 4 | (4 << 32))
    );
    // Slot 44 (instruction 40 after four earlier lddw): r1 = &flows.
    let flows = prog.insns[common::insn_at_slot(&prog.insns, 44)];
    assert_eq!((flows.dst, flows.src, flows.imm), (1, PSEUDO_MAP_FD, 0));
    assert_eq!(prog.own_len, prog.insns.len());
    assert_eq!(prog.functions, vec![(0, "xdp_maps".to_string())]);
}

#[test]
fn maps_of_maps_read_their_inner_template_and_initializers() {
    let built = common::compile("map_in_map");
    let spec = parse(&built.bytes).expect("map_in_map.o parses");
    let names: Vec<&str> = spec.maps.iter().map(|m| m.name.as_str()).collect();
    let index = |n: &str| {
        spec.map_index(n)
            .unwrap_or_else(|| panic!("no map {n} in {names:?}"))
    };
    let outer = &spec.maps[index("lru_mapping")];
    assert_eq!(
        (
            outer.map_type,
            outer.key_size,
            outer.value_size,
            outer.max_entries
        ),
        (12, 4, 4, 4)
    );
    let o = outer.outer.as_ref().expect("an inner map template");
    assert_eq!(o.template.name, "lru_mapping.inner");
    assert_eq!(
        (
            o.template.map_type,
            o.template.key_size,
            o.template.value_size,
            o.template.max_entries
        ),
        (9, 4, 8, 64)
    );
    assert_eq!(o.init, vec![(0, index("lru_0")), (2, index("lru_1"))]);
    let by_proto = spec.maps[index("by_proto")]
        .outer
        .as_ref()
        .expect("template");
    assert_eq!(by_proto.template.map_type, ARRAY);
    assert_eq!(
        by_proto.init,
        vec![(6, index("tcp_counts")), (17, index("udp_counts"))]
    );
    assert!(spec.maps[index("lru_0")].outer.is_none());
}
