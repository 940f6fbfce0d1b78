//! Workload of `router`: host-table hits, nested prefixes, misses, expiring TTLs.

use super::{cat, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, Mac};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "router",
    aliases: &[],
    description: "router: packets to preloaded hosts and to nested /8, /16, /24 and /12 routes (TTL decrement, MAC \
                  rewrite, TX), unrouted destinations (drop), TTL 1 and 0 (pass), IP options, IPv6 and ARP (pass), \
                  malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const ROUTER_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];

const HOSTS: [[u8; 4]; 2] = [[192, 0, 2, 10], [192, 0, 2, 11]];

/// Routes as (prefix length, address); 10/8, 10.1/16 and 10.1.2/24 nest.
const ROUTES: [(u32, [u8; 4]); 4] = [
    (8, [10, 0, 0, 0]),
    (16, [10, 1, 0, 0]),
    (24, [10, 1, 2, 0]),
    (12, [172, 16, 0, 0]),
];

/// Destinations reaching each table entry: hosts, then each route's most specific match.
const DESTINATIONS: [[u8; 4]; 6] = [
    [192, 0, 2, 10],
    [192, 0, 2, 11],
    [10, 9, 9, 9],
    [10, 1, 9, 9],
    [10, 1, 2, 3],
    [172, 20, 1, 1],
];

const UNROUTED: [[u8; 4]; 2] = [[8, 8, 8, 8], [192, 0, 2, 12]];

fn next_hop(i: u8) -> Vec<u8> {
    cat(&[&[0x02, 0x00, 0x00, 0x00, 0x10, i], &ROUTER_MAC])
}

fn preload() -> Vec<Preload> {
    let mut p: Vec<Preload> = HOSTS
        .iter()
        .enumerate()
        .map(|(i, h)| Preload::new("hosts", h.to_vec(), next_hop(i as u8)))
        .collect();
    for (i, (len, addr)) in ROUTES.iter().enumerate() {
        p.push(Preload::new(
            "routes",
            cat(&[&len.to_le_bytes(), addr]),
            next_hop(0x80 + i as u8),
        ));
    }
    p
}

fn to(rng: &mut Rng, dst: [u8; 4], ttl: u8) -> Labeled {
    let ip = Ipv4::new(random_v4(rng, false), dst).ttl(ttl);
    labeled::v4(&to_dut(), &ip, &random_l4(rng, false), &payload(rng, 100))
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for dst in DESTINATIONS {
        out.push(to(rng, dst, 64));
    }
    for dst in UNROUTED {
        out.push(to(rng, dst, 64));
    }
    out.push(to(rng, DESTINATIONS[2], 1));
    out.push(to(rng, DESTINATIONS[0], 0));
    out.push(to(rng, DESTINATIONS[3], 2));
    let ip = Ipv4::new([203, 0, 113, 1], DESTINATIONS[4])
        .options(&[0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00]);
    out.push(labeled::v4(&eth, &ip, &random_l4(rng, false), &[]));
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 254]));
    out.extend(malformed_set(rng, [203, 0, 113, 1], DESTINATIONS[0]));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let ttl = if rng.chance(1, 10) { 1 } else { 64 };
    if rng.chance(1, 5) {
        let inside = rng.chance(1, 2);
        let dst = random_v4(rng, inside);
        return to(rng, dst, ttl);
    }
    let dst = *rng.pick(&DESTINATIONS).unwrap_or(&DESTINATIONS[0]);
    to(rng, dst, ttl)
}
