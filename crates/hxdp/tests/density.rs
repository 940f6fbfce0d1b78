//! The passes that make clang's code dense: byte-load fusion, six-byte fusion of interleaved copies, speculation past
//! branches; each fires on clang's shapes and computes what the reference machine does.

mod common;

use common::object;
use hwxdp_hxdp::compile::optimize;
use hwxdp_hxdp::isa::{LDX6, STX6};
use hwxdp_hxdp::{compile_object, Options, Pass};

fn ops_with(text: &str, disabled: Vec<Pass>) -> Vec<hwxdp_hxdp::Op> {
    let options = Options { lanes: 4, disabled };
    let ir = optimize(&object(text), 0, &options).expect("compiles").0;
    ir.blocks
        .iter()
        .flat_map(|b| b.ops.iter().map(|o| o.op))
        .collect()
}

/// Verdict and packet bytes of the compiled program against the reference machine, on frames of each length.
fn agrees(text: &str, lengths: std::ops::RangeInclusive<usize>) {
    common::agrees_on_lengths(text, lengths, |i| (i * 7 + 3) as u8);
}

/// clang's MAC swap through 4- and 2-byte words, interleaved.
const SWAP: &str = "
    r0 = 1
    r2 = *(u32 *)(r1 + 4)
    r1 = *(u32 *)(r1 + 0)
    r3 = r1
    r3 += 14
    if r3 > r2 goto out
    r2 = *(u16 *)(r1 + 10)
    r3 = *(u16 *)(r1 + 4)
    *(u16 *)(r1 + 10) = r3
    r3 = *(u32 *)(r1 + 6)
    r4 = *(u32 *)(r1 + 0)
    *(u32 *)(r1 + 6) = r4
    *(u16 *)(r1 + 4) = r2
    *(u32 *)(r1 + 0) = r3
    r0 = 3
out:
    exit
";

#[test]
fn interleaved_mac_swap_becomes_two_six_byte_copies() {
    let ops = ops_with(SWAP, vec![]);
    assert_eq!(ops.iter().filter(|o| o.code == LDX6).count(), 2, "{ops:?}");
    assert_eq!(ops.iter().filter(|o| o.code == STX6).count(), 2, "{ops:?}");
    assert!(
        !ops.iter().any(|o| o.is_cond_jump()),
        "the 14-byte check stays"
    );
    agrees(SWAP, 14..=20);
}

#[test]
fn copy_whose_bytes_an_interleaved_store_overwrites_is_not_fused() {
    // The store to bytes 4..6 comes before the 2-byte load of them: the load may not move up past it.
    let text = SWAP.replace(
        "    r2 = *(u16 *)(r1 + 10)\n    r3 = *(u16 *)(r1 + 4)\n",
        "    r2 = *(u16 *)(r1 + 10)\n    *(u16 *)(r1 + 4) = r2\n    r3 = *(u16 *)(r1 + 4)\n",
    );
    let ops = ops_with(&text, vec![]);
    assert!(ops.iter().filter(|o| o.code == LDX6).count() < 2, "{ops:?}");
    agrees(&text, 14..=20);
}

/// clang's read of the ethertype of a packed `struct ethhdr`.
const ETHERTYPE: &str = "
    r0 = 0
    r2 = *(u32 *)(r1 + 4)
    r1 = *(u32 *)(r1 + 0)
    r3 = r1
    r3 += 14
    if r3 > r2 goto out
    r2 = *(u8 *)(r1 + 12)
    r1 = *(u8 *)(r1 + 13)
    r1 <<= 8
    r1 |= r2
    r0 = 2
    if r1 == 1544 goto out
    r0 = 1
out:
    exit
";

#[test]
fn two_byte_loads_a_shift_and_an_or_become_one_two_byte_load() {
    let ops = ops_with(ETHERTYPE, vec![]);
    assert!(ops.iter().any(|o| o.code == 0x69 && o.off == 12), "{ops:?}");
    assert!(!ops.iter().any(|o| o.code == 0x71), "{ops:?}");
    let off = ops_with(ETHERTYPE, vec![Pass::ByteLoads]);
    assert_eq!(off.iter().filter(|o| o.code == 0x71).count(), 2);
    let mut arp = ETHERTYPE.to_string();
    agrees(&arp, 14..=16);
    // The frame's bytes 12 and 13 as ARP's ethertype take the other way.
    arp = arp.replace("1544", "4");
    agrees(&arp, 14..=16);
}

#[test]
fn speculation_fills_the_lanes_beside_a_branch_and_keeps_the_result() {
    // The additions after the branch only feed the taken way's verdict; they may run on both ways.
    let text = "
        r2 = *(u32 *)(r1 + 0)
        r3 = *(u32 *)(r1 + 4)
        r6 = 5
        r7 = 9
        if r6 > r7 goto big
        r8 = r6
        r8 += 2
        r9 = r7
        r9 *= 3
        r0 = r8
        r0 += r9
        r0 &= 3
        exit
    big:
        r0 = 1
        exit
    ";
    let count = |disabled: Vec<Pass>| {
        let options = Options { lanes: 4, disabled };
        compile_object(&object(text), 0, &options)
            .expect("compiles")
            .image
            .bundles
            .len()
    };
    assert!(count(vec![]) < count(vec![Pass::Speculate]));
    agrees(text, 14..=14);
}
