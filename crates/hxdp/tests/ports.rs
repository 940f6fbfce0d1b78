//! The maps module's value ports: at most one access that may load a map value and one that may store one per
//! bundle (an atomic is both). The scheduler keeps the rule, `check_value_ports` verifies it on images, and both
//! agree on every example program.

use hwxdp_hxdp::isa::{Bundle, Image, MapConfig, Op};
use hwxdp_hxdp::{check_value_ports, compile_object, HxdpCore, Options, ValuePort};
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
#[path = "../../../tests/support/examples.rs"]
mod examples;

use examples::example_objects;

/// A program over one ARRAY map of 32-byte values (map 0).
fn object(text: &str) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("assembles");
    let mut spec = ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns));
    spec.maps = vec![MapSpec::new("values", 2, 4, 32, 4)];
    spec
}

/// The bundle index of each op of `image` matching `pred`.
fn bundles_of(image: &Image, pred: impl Fn(&Op) -> bool) -> Vec<usize> {
    image
        .bundles
        .iter()
        .enumerate()
        .flat_map(|(b, bundle)| {
            bundle
                .ops()
                .filter(|(_, o)| pred(o))
                .map(move |_| b)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Two independent loads through a pointer into map 0's value (from `lddw`, pseudo-source 2, in an earlier block, so
/// that no forwarding ties them to one lane), and two through a packet pointer: the packet loads share a bundle, the
/// map-value loads may not.
const TWO_VALUE_LOADS: &str = "
    ld_pseudo r5, 2, 0
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 16
    if r4 > r3 goto out
    r6 = *(u64 *)(r5 + 0)
    r7 = *(u64 *)(r5 + 8)
    r8 = *(u64 *)(r2 + 0)
    r9 = *(u64 *)(r2 + 8)
    r6 += r7
    r6 += r8
    r6 += r9
    *(u64 *)(r5 + 16) = r6
    r0 = 2
    exit
out:
    r0 = 1
    exit
";

#[test]
fn two_map_value_loads_that_could_share_a_bundle_are_split() {
    let spec = object(TWO_VALUE_LOADS);
    for lanes in [2, 4, 8] {
        let options = Options {
            lanes,
            ..Options::default()
        };
        let image = compile_object(&spec, 0, &options).expect("compiles").image;
        let value_loads = bundles_of(&image, |o| o.is_load() && o.src == 5);
        assert_eq!(value_loads.len(), 2, "{lanes} lanes: {value_loads:?}");
        assert_ne!(
            value_loads[0], value_loads[1],
            "{lanes} lanes: the map-value loads share a bundle"
        );
        let packet = bundles_of(&image, |o| {
            o.is_load() && o.src == 2 && matches!(o.off, 0 | 8)
        });
        // at 2 lanes each packet load pairs with a map-value load instead
        if lanes >= 4 {
            assert_eq!(
                packet[0], packet[1],
                "{lanes} lanes: the packet loads should still pair up"
            );
        }
        check_value_ports(&image).unwrap_or_else(|e| panic!("{lanes} lanes: {e}"));
    }
}

#[test]
fn split_program_still_agrees_with_the_reference_machine() {
    let spec = object(TWO_VALUE_LOADS);
    for len in [14usize, 15, 16, 60] {
        let frame: Vec<u8> = (0..len as u8).collect();
        let mut machine = Machine::new(&spec, None, &Config::default()).expect("loads");
        let mut a = XdpBuff::new(&frame).expect("frame");
        let want = machine.run_packet(&mut a, &XdpMd::default()).retval;
        let compiled = compile_object(&spec, 0, &Options::default()).expect("compiles");
        let mut core =
            HxdpCore::new(compiled.image, &spec, None, &Config::default()).expect("loads");
        let mut b = XdpBuff::new(&frame).expect("frame");
        let got = core.run_packet(&mut b, &XdpMd::default()).retval();
        assert_eq!(want, got, "packet of {len} bytes");
    }
}

/// A load and a store of map values (different bytes of one value) may share a bundle: one port each. (Two
/// pointers, so that each access forwards its base from its own lane.)
#[test]
fn one_map_value_load_and_one_store_share_a_bundle() {
    let spec = object(
        "
        ld_pseudo r5, 2, 0
        ld_pseudo r4, 2, 0
        r7 = *(u64 *)(r5 + 0)
        *(u64 *)(r4 + 8) = 7
        r0 = r7
        exit
    ",
    );
    let image = compile_object(&spec, 0, &Options::default())
        .expect("compiles")
        .image;
    let load = bundles_of(&image, |o| o.is_load() && o.src == 5);
    let store = bundles_of(&image, |o| o.is_store() && o.dst == 4);
    assert_eq!(load, store, "the load and the store do not share a bundle");
    check_value_ports(&image).expect("one load and one store per bundle");
}

/// A pointer that is a map value on one path and a stack slot on the other is unknown: its loads count as possible
/// map-value loads, so two of them never share a bundle.
#[test]
fn unknown_pointers_count_as_map_values() {
    let spec = object(
        "
        r2 = *(u32 *)(r1 + 12)
        r3 = r10
        r3 += -16
        if r2 == 0 goto join
        ld_pseudo r3, 2, 0
    join:
        r6 = *(u64 *)(r3 + 0)
        r7 = *(u64 *)(r3 + 8)
        r0 = r6
        r0 += r7
        exit
    ",
    );
    let image = compile_object(&spec, 0, &Options::default())
        .expect("compiles")
        .image;
    let loads = bundles_of(&image, |o| o.is_load() && o.src == 3);
    assert_eq!(loads.len(), 2);
    assert_ne!(
        loads[0], loads[1],
        "loads through an unknown pointer share a bundle"
    );
    check_value_ports(&image).expect("the compiled image keeps the rule");
}

fn lddw_value(dst: u8) -> Op {
    Op {
        code: hwxdp_ebpf::opcode::LD_DW_IMM,
        dst,
        src: 2,
        imm: 0,
        ..Op::default()
    }
}

fn ldx_dw(dst: u8, src: u8, off: i16) -> Op {
    use hwxdp_ebpf::opcode::*;
    Op {
        code: CLASS_LDX | SIZE_DW | MODE_MEM,
        dst,
        src,
        off,
        ..Op::default()
    }
}

fn image_of(rows: Vec<Vec<Option<Op>>>) -> Image {
    let lanes = 4;
    let bundles = rows
        .into_iter()
        .map(|ops| {
            let mut b = Bundle::empty(lanes);
            for (l, op) in ops.into_iter().enumerate() {
                b.lanes[l] = op;
            }
            b
        })
        .collect();
    Image {
        lanes,
        bundles,
        entries: vec![0],
        maps: vec![MapConfig {
            map_type: 2,
            key_size: 4,
            value_size: 32,
            max_entries: 4,
            flags: 0,
        }],
    }
}

fn exit() -> Op {
    Op {
        code: hwxdp_hxdp::isa::EXIT_IMM,
        imm: 2,
        ..Op::default()
    }
}

#[test]
fn check_names_the_bundle_and_lanes_of_a_double_map_value_load() {
    // bundle 0: r5 = &map0.value; bundle 1: two loads through it (lanes 1 and 3) and a stack load (lane 0)
    let image = image_of(vec![
        vec![Some(lddw_value(5)), None],
        vec![
            Some(ldx_dw(1, 10, -8)),
            Some(ldx_dw(6, 5, 0)),
            None,
            Some(ldx_dw(7, 5, 8)),
        ],
        vec![Some(exit())],
    ]);
    let err = check_value_ports(&image).expect_err("two map-value loads in bundle 1");
    assert_eq!(err.conflicts.len(), 1, "{err}");
    let c = &err.conflicts[0];
    assert_eq!(
        (c.bundle, c.port, c.lanes.clone()),
        (1, ValuePort::Read, vec![1, 3])
    );
    assert!(err.to_string().contains("bundle 1"), "{err}");
}

#[test]
fn check_counts_an_atomic_on_both_ports() {
    use hwxdp_ebpf::opcode::*;
    let atomic = Op {
        code: CLASS_STX | SIZE_DW | MODE_ATOMIC,
        dst: 5,
        src: 6,
        off: 0,
        imm: ATOMIC_ADD as i64,
        ..Op::default()
    };
    let store = Op {
        code: CLASS_STX | SIZE_DW | MODE_MEM,
        dst: 5,
        src: 6,
        off: 16,
        ..Op::default()
    };
    // the atomic with a load: the read port twice; with a store: the write port twice
    let with_load = image_of(vec![
        vec![Some(lddw_value(5)), None],
        vec![Some(atomic), Some(ldx_dw(7, 5, 8))],
        vec![Some(exit())],
    ]);
    let with_store = image_of(vec![
        vec![Some(lddw_value(5)), None],
        vec![Some(atomic), Some(store)],
        vec![Some(exit())],
    ]);
    let ports = |image: &Image| -> Vec<ValuePort> {
        check_value_ports(image)
            .expect_err("conflict")
            .conflicts
            .iter()
            .map(|c| c.port)
            .collect()
    };
    assert_eq!(ports(&with_load), [ValuePort::Read]);
    assert_eq!(ports(&with_store), [ValuePort::Write]);
    // alone, or beside stack accesses, an atomic is fine
    let alone = image_of(vec![
        vec![Some(lddw_value(5)), None],
        vec![Some(atomic), Some(ldx_dw(7, 10, -8))],
        vec![Some(exit())],
    ]);
    check_value_ports(&alone).expect("one atomic");
}

/// A map-value pointer spilled to the stack and filled back is still a map value.
#[test]
fn check_follows_pointers_through_stack_spills() {
    use hwxdp_ebpf::opcode::*;
    let spill = Op {
        code: CLASS_STX | SIZE_DW | MODE_MEM,
        dst: 10,
        src: 5,
        off: -8,
        ..Op::default()
    };
    let image = image_of(vec![
        vec![Some(lddw_value(5)), None],
        vec![Some(spill)],
        vec![Some(ldx_dw(4, 10, -8))],
        vec![Some(ldx_dw(6, 4, 0)), Some(ldx_dw(7, 4, 8))],
        vec![Some(exit())],
    ]);
    let err = check_value_ports(&image).expect_err("the filled pointer is a map value");
    assert_eq!(err.conflicts[0].bundle, 3);
}

/// Every example, compiled at every lane count, passes the image check: the scheduler and the check agree.
#[test]
fn every_compiled_example_keeps_the_value_port_rule() {
    let mut checked = 0;
    for path in example_objects() {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let spec =
            hwxdp_object::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for lanes in 1..=8 {
            let options = Options {
                lanes,
                ..Options::default()
            };
            let Ok(compiled) = compile_object(&spec, 0, &options) else {
                continue;
            };
            check_value_ports(&compiled.image)
                .unwrap_or_else(|e| panic!("{} at {lanes} lanes: {e}", path.display()));
            checked += 1;
        }
    }
    assert!(checked >= 8 * 10, "only {checked} images compiled");
}
