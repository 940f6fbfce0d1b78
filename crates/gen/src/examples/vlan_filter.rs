//! Workload of `vlan_filter`: bypassed and other flows behind 0, 1, 2 and 3 VLAN tags.

use super::{cat, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Eth, Ipv4, Ipv6, Tag, IPPROTO_TCP, IPPROTO_UDP, L4, TCP_ACK};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "vlan_filter",
    aliases: &[],
    description: "vlan_filter: preloaded IPv4 and IPv6 bypass flows (counted, drop) and other flows (pass) with 0, 1 \
                  and 2 tags of both kinds, three tags (pass), ICMP and ARP (pass), truncated tags, IP and L4 headers \
                  behind tags (drop), malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const V4_UDP: ([u8; 4], [u8; 4], u16, u16) = ([192, 0, 2, 1], [10, 0, 0, 1], 5353, 9000);
const V4_TCP: ([u8; 4], [u8; 4], u16, u16) = ([192, 0, 2, 2], [10, 0, 0, 2], 40000, 443);
const V6_SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6];
const V6_DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
const V6_PORTS: (u16, u16) = (50000, 80);

fn v4_key(f: ([u8; 4], [u8; 4], u16, u16), proto: u8) -> Vec<u8> {
    cat(&[
        &f.0,
        &f.1,
        &f.2.to_be_bytes(),
        &f.3.to_be_bytes(),
        &[proto, 0, 0, 0],
    ])
}

fn preload() -> Vec<Preload> {
    let zero = [0u8; 16];
    vec![
        Preload::new("flow_table_v4", v4_key(V4_UDP, IPPROTO_UDP), zero),
        Preload::new("flow_table_v4", v4_key(V4_TCP, IPPROTO_TCP), zero),
        Preload::new(
            "flow_table_v6",
            cat(&[
                &V6_SRC,
                &V6_DST,
                &V6_PORTS.0.to_be_bytes(),
                &V6_PORTS.1.to_be_bytes(),
                &[IPPROTO_TCP, 0, 0, 0],
            ]),
            zero,
        ),
    ]
}

fn tag_sets() -> [Vec<Tag>; 5] {
    [
        vec![],
        vec![Tag::dot1q(100)],
        vec![Tag::dot1ad(200)],
        vec![Tag::dot1ad(200), Tag::dot1q(100)],
        vec![Tag::dot1q(300), Tag::dot1q(301)],
    ]
}

fn bypassed(rng: &mut Rng, eth: &Eth, which: usize) -> Labeled {
    let data = payload(rng, 100);
    match which % 3 {
        0 => labeled::v4(
            eth,
            &Ipv4::new(V4_UDP.0, V4_UDP.1),
            &L4::Udp {
                sport: V4_UDP.2,
                dport: V4_UDP.3,
            },
            &data,
        ),
        1 => {
            let l4 = L4::Tcp {
                sport: V4_TCP.2,
                dport: V4_TCP.3,
                flags: TCP_ACK,
            };
            labeled::v4(eth, &Ipv4::new(V4_TCP.0, V4_TCP.1), &l4, &data)
        }
        _ => {
            let l4 = L4::Tcp {
                sport: V6_PORTS.0,
                dport: V6_PORTS.1,
                flags: TCP_ACK,
            };
            labeled::v6(eth, &Ipv6::new(V6_SRC, V6_DST), &l4, &data)
        }
    }
}

fn unknown(rng: &mut Rng, eth: &Eth) -> Labeled {
    let data = payload(rng, 100);
    if rng.chance(1, 2) {
        labeled::v4(
            eth,
            &Ipv4::new(random_v4(rng, false), random_v4(rng, true)),
            &random_l4(rng, false),
            &data,
        )
    } else {
        labeled::v6(
            eth,
            &Ipv6::new(random_v6(rng), random_v6(rng)),
            &random_l4(rng, true),
            &data,
        )
    }
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let base = to_dut();
    let mut out = Vec::new();
    for tags in tag_sets() {
        let eth = base.tagged(&tags);
        for which in 0..3 {
            out.push(bypassed(rng, &eth, which));
        }
        let l4 = L4::Tcp {
            sport: 1234,
            dport: 80,
            flags: TCP_ACK,
        };
        out.push(labeled::v4(
            &eth,
            &Ipv4::new(random_v4(rng, false), random_v4(rng, true)),
            &l4,
            &[],
        ));
        out.push(labeled::v4(
            &eth,
            &Ipv4::new(V4_UDP.1, V4_UDP.0),
            &L4::Udp {
                sport: 9000,
                dport: 5353,
            },
            &[],
        ));
        let l4 = L4::Udp {
            sport: 1234,
            dport: 53,
        };
        out.push(labeled::v6(
            &eth,
            &Ipv6::new(random_v6(rng), random_v6(rng)),
            &l4,
            &[],
        ));
        let echo = L4::IcmpEcho {
            reply: false,
            id: 1,
            seq: 2,
        };
        out.push(labeled::v4(
            &eth,
            &Ipv4::new([192, 0, 2, 1], [10, 0, 0, 1]),
            &echo,
            &[],
        ));
        let echo6 = L4::Icmpv6Echo {
            reply: false,
            id: 1,
            seq: 2,
        };
        out.push(labeled::v6(&eth, &Ipv6::new(V6_SRC, V6_DST), &echo6, &[]));
        out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    }
    let three = base.tagged(&[Tag::dot1ad(1), Tag::dot1q(2), Tag::dot1q(3)]);
    out.push(bypassed(rng, &three, 0));
    let opts = Ipv4::new(V4_TCP.0, V4_TCP.1).options(&[0x94, 0x04, 0, 0]);
    let l4 = L4::Tcp {
        sport: V4_TCP.2,
        dport: V4_TCP.3,
        flags: TCP_ACK,
    };
    out.push(labeled::v4(&base.tagged(&[Tag::dot1q(5)]), &opts, &l4, &[]));
    out.extend(truncated_behind_tags(rng));
    out.extend(malformed_set(rng, V4_UDP.0, V4_UDP.1));
    out
}

/// Frames cut inside the second tag, the IPv4 or IPv6 header, or the L4 header, behind tags.
fn truncated_behind_tags(rng: &mut Rng) -> Vec<Labeled> {
    let two = to_dut().tagged(&[Tag::dot1ad(7), Tag::dot1q(8)]);
    let one = to_dut().tagged(&[Tag::dot1q(8)]);
    let mut out = Vec::new();
    let mut f = bypassed(rng, &two, 0).bytes;
    f.truncate(14 + 4 + 2);
    out.push(Labeled::malformed(f));
    let mut f = bypassed(rng, &one, 1).bytes;
    f.truncate(18 + 12);
    out.push(Labeled::malformed(f));
    let mut f = bypassed(rng, &one, 2).bytes;
    f.truncate(18 + 30);
    out.push(Labeled::malformed(f));
    let mut f = bypassed(rng, &two, 2).bytes;
    f.truncate(22 + 40 + 4);
    out.push(Labeled::malformed(f));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let sets = tag_sets();
    let tags = rng.pick(&sets).cloned().unwrap_or_default();
    let eth = to_dut().tagged(&tags);
    if rng.chance(1, 2) {
        let which = rng.below(3);
        bypassed(rng, &eth, which)
    } else {
        unknown(rng, &eth)
    }
}
