//! Workload of `xdp1_drop`: every protocol counter slot the parser reaches, with 0 to 3 VLAN tags.

use super::{malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_frame, random_l4, random_v4, random_v6};
use crate::packet::{Eth, Ipv4, Ipv6, Tag, IPPROTO_IPIP, L4};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "xdp1_drop",
    aliases: &[],
    description: "xdp1_drop: TCP, UDP, ICMP, ICMPv6 and IP-in-IP over IPv4 and IPv6 with 0, 1 and 2 VLAN tags, three \
                  tags, ARP and other ethertypes, IP headers and tags cut short, malformed frames (all dropped, \
                  counted per protocol)",
    preload,
    program_slots: &[],
    core,
    filler: Some(random_frame),
    routes: None,
};

fn preload() -> Vec<Preload> {
    Vec::new()
}

/// Frames of every protocol behind every tag depth; shared with `xdp2_macswap`, which parses the same way.
pub(crate) fn core(rng: &mut Rng) -> Vec<Labeled> {
    let base = to_dut();
    let tag_sets = [
        vec![],
        vec![Tag::dot1q(10)],
        vec![Tag::dot1ad(20), Tag::dot1q(10)],
    ];
    let mut out = Vec::new();
    for tags in &tag_sets {
        let eth = base.tagged(tags);
        for _ in 0..3 {
            let ip = Ipv4::new(random_v4(rng, true), random_v4(rng, false));
            out.push(labeled::v4(
                &eth,
                &ip,
                &random_l4(rng, false),
                &payload(rng, 64),
            ));
            let ip6 = Ipv6::new(random_v6(rng), random_v6(rng));
            out.push(labeled::v6(
                &eth,
                &ip6,
                &random_l4(rng, true),
                &payload(rng, 64),
            ));
        }
        let inner = Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]).build(&[]);
        out.push(labeled::v4(
            &eth,
            &Ipv4::new([10, 0, 0, 3], [10, 0, 0, 4]),
            &L4::Raw(IPPROTO_IPIP),
            &inner,
        ));
        out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
        out.push(labeled::other(&eth, 0x88cc, &payload(rng, 40)));
        out.extend(cut_ip(&eth));
    }
    let three = base.tagged(&[Tag::dot1ad(1), Tag::dot1q(2), Tag::dot1q(3)]);
    out.push(labeled::v4(
        &three,
        &Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]),
        &random_l4(rng, false),
        &[],
    ));
    let mut cut_tag = base
        .tagged(&[Tag::dot1ad(1), Tag::dot1q(2)])
        .frame(0x0800, &[]);
    cut_tag.truncate(14 + 4 + 1);
    out.push(Labeled::malformed(cut_tag));
    out.extend(malformed_set(rng, [10, 0, 0, 1], [192, 0, 2, 1]));
    out
}

/// IPv4 and IPv6 headers cut short behind `eth`'s tags.
fn cut_ip(eth: &Eth) -> Vec<Labeled> {
    let hlen = eth.header_len();
    let mut v4 = eth.ipv4(
        &Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]),
        &L4::Udp { sport: 1, dport: 2 },
        &[],
    );
    v4.truncate(hlen + 19);
    let mut v6 = eth.ipv6(
        &Ipv6::new([0x20; 16], [0x21; 16]),
        &L4::Udp { sport: 1, dport: 2 },
        &[],
    );
    v6.truncate(hlen + 39);
    vec![Labeled::malformed(v4), Labeled::malformed(v6)]
}
