//! The code generator's two optimisations, seen in the C they write: what each leaves out, and that each can be
//! switched off. (That the generated programs behave right, optimised or not, is the STF suite's job: tests/stf.rs.)

mod common;

use hwxdp_p4::codegen::{generate, Options};
use std::path::PathBuf;

fn example(name: &str) -> hwxdp_p4::ir::Checked {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/p4/{name}.p4"));
    hwxdp_p4::check_file(&path).unwrap_or_else(|d| panic!("{d}"))
}

/// The generated function's body (the prelude defines every conversion whether used or not).
fn c(name: &str, options: Options) -> String {
    let text = generate(&example(name), &options).unwrap_or_else(|d| panic!("{d}"));
    let start = text.find("int p4_xdp(").expect("the XDP function");
    text[start..].to_string()
}

#[test]
fn copied_mac_addresses_stay_in_network_order() {
    // The MAC swap only copies addresses and compares the EtherType with a constant: nothing needs host order.
    let optimised = c("xdp_mac_swap", Options::default());
    let baseline = c("xdp_mac_swap", Options::baseline());
    assert!(!optimised.contains("hwxdp_ntoh64("), "{optimised}");
    assert!(!optimised.contains("hwxdp_hton64("), "{optimised}");
    assert!(baseline.contains("hwxdp_ntoh64("), "{baseline}");
    assert!(baseline.contains("hwxdp_hton64("), "{baseline}");
}

#[test]
fn fields_the_program_never_names_stay_in_network_order() {
    // MAC swap never reads the IPv4 total length or identification: they go back to the packet as they came.
    let optimised = c("xdp_mac_swap", Options::default());
    assert!(
        !optimised.contains("hdr.ipv4.totalLen = hwxdp_ntoh16("),
        "{optimised}"
    );
    let baseline = c("xdp_mac_swap", Options::baseline());
    assert!(
        baseline.contains("hdr.ipv4.totalLen = hwxdp_ntoh16("),
        "{baseline}"
    );
}

#[test]
fn fields_used_as_numbers_are_converted() {
    // The TTL table decrements the TTL and recomputes the checksum: those fields must be numbers.
    let optimised = c("xdp_ttl_table", Options::default());
    assert!(optimised.contains("hwxdp_ntoh16("), "{optimised}");
}

#[test]
fn only_changed_headers_are_written_back_in_place() {
    // MAC swap changes Ethernet only: with an unchanged layout the IPv4 header is skipped, not rewritten.
    let optimised = c("xdp_mac_swap", Options::default());
    let in_place = &optimised[optimised.find("if (same) {").expect("the in-place path")..];
    let in_place = &in_place[..in_place
        .find("} else {")
        .expect("the end of the in-place path")];
    assert!(in_place.contains("hdr.ethernet.dstAddr"), "{in_place}");
    assert!(!in_place.contains("hdr.ipv4.ttl"), "{in_place}");
    assert!(
        in_place.contains("if (hdr.ipv4.hwxdp_valid) woff += 20;"),
        "{in_place}"
    );
    let all = c(
        "xdp_mac_swap",
        Options {
            writeback_changed_only: false,
            ..Options::default()
        },
    );
    assert!(!all.contains("if (same) {"), "{all}");
}

#[test]
fn every_example_generates_under_every_option_set() {
    let sets = [
        Options::default(),
        Options::baseline(),
        Options {
            keep_network_order: false,
            writeback_changed_only: true,
        },
        Options {
            keep_network_order: true,
            writeback_changed_only: false,
        },
    ];
    for path in common::examples() {
        let checked = hwxdp_p4::check_file(&path).unwrap_or_else(|d| panic!("{d}"));
        for options in sets {
            let text =
                generate(&checked, &options).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
            assert!(
                text.contains("int p4_xdp(struct xdp_md *ctx)"),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn only_changed_fields_are_written_back_in_place() {
    // The router rewrites the TTL and the checksum of IPv4, not its addresses.
    let optimised = c("xdp_lpm_router", Options::default());
    let in_place = &optimised[optimised.find("if (same) {").expect("the in-place path")..];
    let in_place = &in_place[..in_place
        .find("} else {")
        .expect("the end of the in-place path")];
    assert!(in_place.contains("hdr.ipv4.ttl"), "{in_place}");
    assert!(in_place.contains("hdr.ipv4.hdrChecksum"), "{in_place}");
    assert!(!in_place.contains("hdr.ipv4.srcAddr"), "{in_place}");
    assert!(!in_place.contains("hdr.ipv4.totalLen"), "{in_place}");
}
