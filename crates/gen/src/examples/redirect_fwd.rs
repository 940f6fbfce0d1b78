//! Workload of `redirect_fwd`: populated, empty and out-of-range DEVMAP slots, IPv6 by ingress interface, ARP.

use super::{le32, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "redirect_fwd",
    aliases: &[],
    description: "redirect_fwd: IPv4 to populated DEVMAP slots (redirect), empty and out-of-range slots (fallback \
                  pass), IPv6 keyed by the ingress interface (redirect), ARP (bpf_redirect), other ethertypes (pass), \
                  malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

/// Populated slots: 1 is also the ingress interface (loopback) of a test run.
const SLOTS: [u32; 4] = [1, 2, 7, 20];
/// Every slot points at the loopback interface, which exists in every network namespace.
const TARGET_IFINDEX: u32 = 1;

fn preload() -> Vec<Preload> {
    SLOTS
        .iter()
        .map(|&s| Preload::new("tx_ports", le32(s), le32(TARGET_IFINDEX)))
        .collect()
}

fn to_slot(rng: &mut Rng, last: u8) -> Labeled {
    let mut dst = random_v4(rng, true);
    dst[3] = last;
    labeled::v4(
        &to_dut(),
        &Ipv4::new(random_v4(rng, false), dst),
        &random_l4(rng, false),
        &payload(rng, 64),
    )
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out: Vec<Labeled> = [1u8, 2, 7, 20, 3, 63, 64, 200]
        .iter()
        .map(|&l| to_slot(rng, l))
        .collect();
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    out.push(labeled::other(&eth, 0x88cc, &payload(rng, 40)));
    out.extend(malformed_set(rng, [203, 0, 113, 1], [10, 0, 0, 7]));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let last = rng.below(256) as u8;
    to_slot(rng, last)
}
