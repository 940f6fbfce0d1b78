//! Workload of `tunnel`: the four IP-in-IP decapsulations and encapsulation toward preloaded endpoints.

use super::{cat, malformed_set, payload, to_dut, Example, DUT_MAC, PEER_MAC};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, IPPROTO_IPIP, IPPROTO_IPV6, L4};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "tunnel",
    aliases: &[],
    description: "tunnel: IPv4-in-IPv4, IPv6-in-IPv4, IPv4-in-IPv6 and IPv6-in-IPv6 decapsulation (pass), IPv4 and \
                  IPv6 to preloaded tunnel endpoints (encapsulate, TX) and to other destinations (pass), IPIP with \
                  outer options or an empty inner packet, ARP, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const TUN4_DST: [u8; 4] = [192, 0, 2, 50];
const TUN6_DST: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50,
];
const OUTER4_SRC: [u8; 4] = [198, 51, 100, 1];
const OUTER4_DST: [u8; 4] = [198, 51, 100, 99];
const OUTER6_SRC: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
];
const OUTER6_DST: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x99,
];

fn preload() -> Vec<Preload> {
    vec![
        Preload::new(
            "tun4",
            TUN4_DST.to_vec(),
            cat(&[&OUTER4_SRC, &OUTER4_DST, &PEER_MAC, &DUT_MAC]),
        ),
        Preload::new(
            "tun6",
            TUN6_DST.to_vec(),
            cat(&[&OUTER6_SRC, &OUTER6_DST, &PEER_MAC, &DUT_MAC]),
        ),
    ]
}

fn inner4(rng: &mut Rng) -> Vec<u8> {
    let mut ip = Ipv4::new(random_v4(rng, true), random_v4(rng, true));
    let l4 = random_l4(rng, false);
    let data = payload(rng, 64);
    if let Some(p) = l4.protocol() {
        ip.proto = p;
    }
    ip.build(&l4.build(&ip.pseudo_header_v4(), &data))
}

fn inner6(rng: &mut Rng) -> Vec<u8> {
    let mut ip = Ipv6::new(random_v6(rng), random_v6(rng));
    let l4 = random_l4(rng, true);
    let data = payload(rng, 64);
    if let Some(p) = l4.protocol_v6() {
        ip.next_header = p;
    }
    ip.build(&l4.build(&ip.pseudo_header_v6(), &data))
}

fn decap(rng: &mut Rng, outer_v6: bool, inner_v6: bool) -> Labeled {
    let (proto, inner) = if inner_v6 {
        (IPPROTO_IPV6, inner6(rng))
    } else {
        (IPPROTO_IPIP, inner4(rng))
    };
    if outer_v6 {
        labeled::v6(
            &to_dut(),
            &Ipv6::new(OUTER6_DST, OUTER6_SRC),
            &L4::Raw(proto),
            &inner,
        )
    } else {
        labeled::v4(
            &to_dut(),
            &Ipv4::new(OUTER4_DST, OUTER4_SRC),
            &L4::Raw(proto),
            &inner,
        )
    }
}

fn encap(rng: &mut Rng, v6: bool) -> Labeled {
    let data = payload(rng, 200);
    if v6 {
        labeled::v6(
            &to_dut(),
            &Ipv6::new(random_v6(rng), TUN6_DST),
            &random_l4(rng, true),
            &data,
        )
    } else {
        labeled::v4(
            &to_dut(),
            &Ipv4::new(random_v4(rng, true), TUN4_DST),
            &random_l4(rng, false),
            &data,
        )
    }
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for (outer_v6, inner_v6) in [(false, false), (false, true), (true, false), (true, true)] {
        out.push(decap(rng, outer_v6, inner_v6));
    }
    out.push(encap(rng, false));
    out.push(encap(rng, true));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([10, 0, 0, 1], [192, 0, 2, 51]),
        &random_l4(rng, false),
        &[],
    ));
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    let opts = Ipv4::new(OUTER4_DST, OUTER4_SRC).options(&[0x94, 0x04, 0, 0]);
    let inner = inner4(rng);
    out.push(labeled::v4(&eth, &opts, &L4::Raw(IPPROTO_IPIP), &inner));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(OUTER4_DST, OUTER4_SRC),
        &L4::Raw(IPPROTO_IPIP),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    out.extend(malformed_set(rng, [10, 0, 0, 1], TUN4_DST));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    match rng.below(3) {
        0 => {
            let (o, i) = (rng.chance(1, 2), rng.chance(1, 2));
            decap(rng, o, i)
        }
        1 => {
            let v6 = rng.chance(1, 2);
            encap(rng, v6)
        }
        _ => labeled::v4(
            &to_dut(),
            &Ipv4::new(random_v4(rng, true), random_v4(rng, false)),
            &random_l4(rng, false),
            &[],
        ),
    }
}
