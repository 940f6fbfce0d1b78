//! Issue 26: clang's select shape around a bounds check. `r3 = 0; if p > end goto +1; r3 = data + 14; if p > end
//! goto drop` leaves r3 a packet pointer or 0 at the second check (the analysis joins the two to the pointer, as
//! the kernel's verifier may, since the load through r3 only runs where it is one). A removed check's probe or
//! verdict load runs on the short packets too, so it must not go through r3.

mod common;

use hwxdp_hxdp::compile::optimize;
use hwxdp_hxdp::{Options, Pass};

/// The shape of `ddos.c`'s IPv4 header read: a 14-byte check, then the select of the header pointer, then the
/// check the select hangs on and a read of the header through the selected pointer (`READ`).
fn select_program(read: &str) -> String {
    format!(
        "
    r2 = *(u32 *)(r1 + 4)
    r1 = *(u32 *)(r1 + 0)
    r7 = 1
    r4 = r1
    r4 += 14
    if r4 > r2 goto out
    r1 += 34
    r3 = 0
    if r1 > r2 goto skip
    r3 = r4
skip:
    if r1 > r2 goto out
    {read}
    r7 = r0
    r7 &= 3
out:
    r0 = r7
    exit
"
    )
}

/// The compiled program (default options) returns what the reference machine does on a packet of every length from
/// an Ethernet header to 64 bytes.
fn agrees_on_every_length(text: &str) {
    common::agrees_on_lengths(text, 14..=64, |i| (i as u8).wrapping_mul(7));
}

#[test]
fn probe_of_a_select_checked_read_keeps_short_packets_verdict() {
    // The read ends at byte 15 of the 34 checked: the check becomes a probe of byte 33.
    agrees_on_every_length(&select_program("r0 = *(u8 *)(r3 + 0)"));
}

#[test]
fn verdict_load_through_a_selected_pointer_keeps_short_packets_verdict() {
    // The read ends exactly at byte 34: it would carry the verdict itself.
    agrees_on_every_length(&select_program("r0 = *(u8 *)(r3 + 19)"));
}

#[test]
fn select_read_past_the_checked_bytes_keeps_short_packets_verdict() {
    // Two reads, the second ending at byte 34 through the pointer the check tests.
    agrees_on_every_length(&select_program(
        "r0 = *(u8 *)(r3 + 0)
    r5 = *(u8 *)(r1 - 1)
    r0 += r5",
    ));
}

#[test]
fn select_checked_read_still_loses_its_check_to_a_probe_through_a_sure_pointer() {
    // Not refused outright: the probe goes through r4 (`data + 14` on every path), not the selected r3.
    let text = select_program("r0 = *(u8 *)(r3 + 0)");
    let spec = common::object(&text);
    let disabled = Pass::ALL
        .into_iter()
        .filter(|&p| p != Pass::Bounds)
        .collect();
    let options = Options { lanes: 4, disabled };
    let ir = optimize(&spec, 0, &options).expect("compiles").0;
    let ops: Vec<_> = ir.blocks.iter().flat_map(|b| b.ops.iter()).collect();
    let probe = ops
        .iter()
        .find(|o| o.op.fault_verdict().is_some())
        .expect("a probe");
    assert_eq!((probe.op.src, probe.op.off), (4, 19), "{probe:?}");
    // The first check of the select stays (its failure side is the second check, not a return); the second goes.
    let checks = ops.iter().filter(|o| o.op.is_cond_jump()).count();
    assert_eq!(checks, 1, "{ops:?}");
}
