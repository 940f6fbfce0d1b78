//! The Sephirot core's one shared divider: at most one division or modulo (32- or 64-bit, signed or unsigned) per
//! bundle. The scheduler splits divisions that could otherwise share a bundle, `ports::check_divider` verifies the
//! rule on images, and the split program still computes what the reference machine computes.

use hwxdp_ebpf::opcode::*;
use hwxdp_hxdp::isa::{Bundle, Image, Op, EXIT_IMM};
use hwxdp_hxdp::ports::check_divider;
use hwxdp_hxdp::sched::is_div;
use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};

/// Four independent divisions and moduli of packet-dependent values: every lane could take one in the same bundle
/// but for the divider rule.
const FOUR_DIVISIONS: &str = "
    r2 = *(u32 *)(r1 + 12)
    r3 = *(u32 *)(r1 + 16)
    r2 += 7
    r3 += 3
    r4 = r2
    r5 = r2
    r6 = r2
    r7 = r2
    r4 /= r3
    r5 s%= r3
    w6 %= w3
    w7 s/= 2
    r0 = r4
    r0 += r5
    r0 += r6
    r0 += r7
    exit
";

fn object(text: &str) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("assembles");
    ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
}

/// The bundle index of every division or modulo of `image`.
fn division_bundles(image: &Image) -> Vec<usize> {
    image
        .bundles
        .iter()
        .enumerate()
        .flat_map(|(b, bundle)| {
            bundle
                .ops()
                .filter(|(_, o)| is_div(o))
                .map(move |_| b)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn independent_divisions_get_a_bundle_each() {
    let spec = object(FOUR_DIVISIONS);
    for lanes in [2usize, 4, 8] {
        let options = Options {
            lanes,
            ..Options::default()
        };
        let image = compile_object(&spec, 0, &options).expect("compiles").image;
        let mut at = division_bundles(&image);
        assert_eq!(at.len(), 4, "{lanes} lanes: four divisions");
        at.dedup();
        assert_eq!(
            at.len(),
            4,
            "{lanes} lanes: two divisions share a bundle: {at:?}"
        );
        check_divider(&image).unwrap_or_else(|e| panic!("{lanes} lanes: {e}"));
    }
}

#[test]
fn split_divisions_agree_with_the_reference_machine() {
    let spec = object(FOUR_DIVISIONS);
    for (ifindex, rxq) in [(0u32, 0u32), (5, 1), (1000, 7), (u32::MAX - 7, 2)] {
        let md = XdpMd {
            ingress_ifindex: ifindex,
            rx_queue_index: rxq,
        };
        let frame = vec![0u8; 64];
        let mut machine = Machine::new(&spec, None, &Config::default()).expect("loads");
        let mut a = XdpBuff::new(&frame).expect("frame");
        let want = machine.run_packet(&mut a, &md).retval;
        let compiled = compile_object(&spec, 0, &Options::default()).expect("compiles");
        let mut core =
            HxdpCore::new(compiled.image, &spec, None, &Config::default()).expect("loads");
        let mut b = XdpBuff::new(&frame).expect("frame");
        let got = core.run_packet(&mut b, &md).retval();
        assert_eq!(want, got, "ifindex {ifindex}, rx queue {rxq}");
    }
}

fn alu(code: u8, dst: u8, src: u8, off: i16, imm: i64) -> Op {
    Op {
        code,
        dst,
        src,
        a: None,
        off,
        imm,
    }
}

#[test]
fn check_names_the_bundle_and_lanes_of_two_divisions() {
    let lanes = 4;
    let mut rows = vec![
        Bundle::empty(lanes),
        Bundle::empty(lanes),
        Bundle::empty(lanes),
    ];
    // bundle 0: one signed 64-bit division and an addition: fine
    rows[0].lanes[0] = Some(alu(CLASS_ALU64 | ALU_DIV | SRC_K, 2, 0, 1, 3));
    rows[0].lanes[1] = Some(alu(CLASS_ALU64 | ALU_ADD | SRC_K, 3, 0, 0, 3));
    // bundle 1: a 32-bit modulo (lane 1) and a 64-bit division (lane 3)
    rows[1].lanes[1] = Some(alu(CLASS_ALU | ALU_MOD | SRC_X, 4, 5, 0, 0));
    rows[1].lanes[3] = Some(alu(CLASS_ALU64 | ALU_DIV | SRC_X, 6, 7, 0, 0));
    rows[2].lanes[0] = Some(Op {
        code: EXIT_IMM,
        imm: 2,
        ..Op::default()
    });
    let image = Image {
        lanes,
        bundles: rows,
        entries: vec![0],
        maps: Vec::new(),
    };
    let err = check_divider(&image).expect_err("two divisions in bundle 1");
    assert_eq!(err.conflicts, vec![(1, vec![1, 3])]);
    assert!(err.to_string().contains("bundle 1: lanes [1, 3]"), "{err}");
}
