//! Workload of `ethertype_counter`: preloaded and new ethertypes, then more ethertypes than the map holds.

use super::{malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, Tag, ETH_P_ARP, ETH_P_IP};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "ethertype_counter",
    aliases: &[],
    description: "ethertype_counter: IPv4 and ARP counters preloaded (atomic add), IPv6 and VLAN inserted then \
                  counted, 40 more ethertypes than the 32-entry map holds (insert fails, drop), malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: None,
    routes: None,
};

/// Ethertypes beyond the usual ones, enough to overflow the 32-entry map.
const EXTRA_TYPES: u16 = 40;

fn preload() -> Vec<Preload> {
    vec![
        Preload::new("stats", ETH_P_IP.to_le_bytes(), 0u64.to_le_bytes()),
        Preload::new("stats", ETH_P_ARP.to_le_bytes(), 5u64.to_le_bytes()),
    ]
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for _ in 0..2 {
        let ip = Ipv4::new(random_v4(rng, true), random_v4(rng, false));
        out.push(labeled::v4(
            &eth,
            &ip,
            &random_l4(rng, false),
            &payload(rng, 32),
        ));
        out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 9]));
        out.push(labeled::v6(
            &eth,
            &Ipv6::new(random_v6(rng), random_v6(rng)),
            &random_l4(rng, true),
            &[],
        ));
        let ip = Ipv4::new(random_v4(rng, true), random_v4(rng, false));
        out.push(labeled::v4(
            &eth.tagged(&[Tag::dot1q(3)]),
            &ip,
            &random_l4(rng, false),
            &[],
        ));
    }
    out.extend(malformed_set(rng, [10, 0, 0, 1], [192, 0, 2, 1]));
    for i in 0..EXTRA_TYPES {
        out.push(labeled::other(&eth, 0x9000 + i, &payload(rng, 32)));
    }
    out
}
