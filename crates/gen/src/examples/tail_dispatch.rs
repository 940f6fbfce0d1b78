//! Workload of `tail_dispatch` (and its tail-called `tail_ipv4`/`tail_ipv6`): every slot of the jump table, filled,
//! empty and out of range.

use super::{malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_frame, random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, Tag};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "tail_dispatch",
    aliases: &["tail_ipv4", "tail_ipv6"],
    description: "tail_dispatch: IPv4 with TTL 64 (tail_ipv4, TX) and 1 (pass), IPv6 with hop limit 64 (tail_ipv6, \
                  pass) and 1 (drop), truncated IP headers (drop in the tail), ARP (empty slot, pass), 802.1Q \
                  (slot beyond the table, drop), other ethertypes (pass), malformed frames",
    preload,
    program_slots: &[("jump_table", 0, "tail_ipv4"), ("jump_table", 1, "tail_ipv6")],
    core,
    filler: Some(random_frame),
    routes: None,
};

fn preload() -> Vec<Preload> {
    Vec::new()
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for ttl in [64, 2, 1, 0] {
        let ip = Ipv4::new(random_v4(rng, false), random_v4(rng, true)).ttl(ttl);
        out.push(labeled::v4(
            &eth,
            &ip,
            &random_l4(rng, false),
            &payload(rng, 64),
        ));
        let ip6 = Ipv6::new(random_v6(rng), random_v6(rng)).hop_limit(ttl);
        out.push(labeled::v6(
            &eth,
            &ip6,
            &random_l4(rng, true),
            &payload(rng, 64),
        ));
    }
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    let ip = Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]);
    out.push(labeled::v4(
        &eth.tagged(&[Tag::dot1q(4)]),
        &ip,
        &random_l4(rng, false),
        &[],
    ));
    out.push(labeled::v4(
        &eth.tagged(&[Tag::dot1ad(4)]),
        &ip,
        &random_l4(rng, false),
        &[],
    ));
    out.push(labeled::other(&eth, 0x88cc, &payload(rng, 40)));
    out.extend(malformed_set(rng, [203, 0, 113, 1], [10, 0, 0, 1]));
    out
}
