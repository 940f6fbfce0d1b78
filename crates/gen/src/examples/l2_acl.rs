//! Workload of `l2_acl`: IPv4 from allowed and unknown MACs, IPv6, other ethertypes.

use super::{cat, malformed_set, payload, Example, DUT_MAC};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_mac, random_v4, random_v6};
use crate::packet::{Eth, Ipv4, Ipv6, Mac, Tag};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "l2_acl",
    aliases: &[],
    description: "l2_acl: IPv4 from MACs preloaded in acl (pass) and unknown MACs (drop), IPv6 (drop), ARP, VLAN and \
                  other ethertypes (pass), truncated and malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const ALLOWED: [Mac; 3] = [
    [0x02, 0xac, 0, 0, 0, 1],
    [0x02, 0xac, 0, 0, 0, 2],
    [0x02, 0xac, 0, 0, 0, 3],
];

fn preload() -> Vec<Preload> {
    ALLOWED
        .iter()
        .map(|mac| Preload::new("acl", mac.to_vec(), cat(&[&1u32.to_le_bytes()])))
        .collect()
}

fn v4_from(rng: &mut Rng, src: Mac) -> Labeled {
    let data = payload(rng, 64);
    let ip = Ipv4::new(random_v4(rng, true), random_v4(rng, false));
    labeled::v4(&Eth::new(DUT_MAC, src), &ip, &random_l4(rng, false), &data)
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let mut out = Vec::new();
    for mac in ALLOWED {
        out.push(v4_from(rng, mac));
    }
    for _ in 0..3 {
        let mac = random_mac(rng);
        out.push(v4_from(rng, mac));
    }
    let eth = Eth::new(DUT_MAC, ALLOWED[0]);
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    out.push(labeled::other(&eth, 0x88cc, &payload(rng, 40)));
    let ip = Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]);
    out.push(labeled::v4(
        &eth.tagged(&[Tag::dot1q(10)]),
        &ip,
        &random_l4(rng, false),
        &[],
    ));
    out.extend(malformed_set(rng, [10, 0, 0, 1], [192, 0, 2, 1]));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    match rng.below(4) {
        0 | 1 => {
            let mac = *rng.pick(&ALLOWED).unwrap_or(&ALLOWED[0]);
            v4_from(rng, mac)
        }
        2 => {
            let mac = random_mac(rng);
            v4_from(rng, mac)
        }
        _ => {
            let eth = Eth::new(DUT_MAC, random_mac(rng));
            labeled::v6(
                &eth,
                &Ipv6::new(random_v6(rng), random_v6(rng)),
                &random_l4(rng, true),
                &[],
            )
        }
    }
}
