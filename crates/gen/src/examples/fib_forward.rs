//! Workload of `fib_forward`: a route table (`fib_forward_routes.json`) and packets reaching every answer of
//! `bpf_fib_lookup` for both families, with and without BPF_FIB_LOOKUP_SKIP_NEIGH.

use super::{malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, L4};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "fib_forward",
    aliases: &[],
    description: "fib_forward: IPv4 and IPv6 through bpf_fib_lookup against a route table of two devices: direct and \
                  gateway routes with and without neighbours (redirect or pass), blackhole/unreachable/prohibit \
                  (drop), overlapping prefixes, equal prefixes with different metrics, unrouted, loopback, link-local \
                  and multicast destinations (pass), packets over the egress MTU, each with and without SKIP_NEIGH; \
                  TTL 1 and 0, ARP, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: Some(ROUTES),
};

/// The `--routes` table the trace is written for; the addresses below refer to it.
pub(crate) const ROUTES: &str = include_str!("fib_forward_routes.json");

/// Destinations whose last byte is at least this are looked up with BPF_FIB_LOOKUP_SKIP_NEIGH (as in the program).
const SKIP_NEIGH_FROM: u8 = 200;

/// IPv4 destinations, one per kind of answer the table gives.
const V4_TARGETS: [[u8; 4]; 17] = [
    [10, 1, 0, 5],        // direct route, the destination is a neighbour
    [10, 1, 0, 6],        // direct route, no neighbour
    [10, 2, 3, 4],        // gateway with a neighbour
    [10, 3, 3, 4],        // gateway without a neighbour, on the MTU-1400 device
    [10, 4, 3, 4],        // blackhole
    [10, 5, 3, 4],        // unreachable
    [10, 6, 3, 4],        // prohibit
    [10, 7, 3, 4],        // the /16 of two overlapping prefixes
    [10, 7, 7, 4],        // the /24 inside it
    [10, 8, 3, 4],        // the lower metric of two routes for one prefix
    [10, 9, 3, 4],        // no route
    [198, 51, 100, 7],    // no route
    [224, 0, 0, 5],       // multicast, no route
    [255, 255, 255, 255], // broadcast, no route
    [127, 0, 0, 1],       // loopback (a local route)
    [127, 9, 9, 9],       // loopback network
    [0, 0, 0, 0],         // unspecified, no route
];

/// IPv6 destinations under 2001:db8::/32 as (third group, last 16 bits), one per kind of answer, like [`V4_TARGETS`].
const V6_TARGETS: [(u16, u16); 12] = [
    (1, 5),
    (1, 6),
    (2, 4),
    (3, 4),
    (4, 4),
    (5, 4),
    (6, 4),
    (7, 4),
    (8, 4),
    (9, 4),
    (0xff, 1),
    (0, 0x77),
];

/// Inside 2001:db8:7:7::/64, the longer of the two overlapping IPv6 prefixes.
const V6_LONGER: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 7, 0, 7, 0, 0, 0, 0, 0, 0, 0, 4];
/// Destinations the kernel never forwards: loopback, link-local, multicast; and a global address of no route.
const V6_SPECIAL: [[u8; 16]; 4] = [
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    [0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
];

/// L3 lengths around the two devices' MTUs (1500 and 1400).
const SIZES: [usize; 5] = [1400, 1401, 1450, 1500, 1501];

fn preload() -> Vec<Preload> {
    Vec::new()
}

fn v6_target(group: u16, low: u16) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a[4..6].copy_from_slice(&group.to_be_bytes());
    a[14..].copy_from_slice(&low.to_be_bytes());
    a
}

/// The same destination, but in the range the program looks up with SKIP_NEIGH.
fn skip_neigh<const N: usize>(mut addr: [u8; N]) -> [u8; N] {
    addr[N - 1] = SKIP_NEIGH_FROM + addr[N - 1] % (u8::MAX - SKIP_NEIGH_FROM + 1);
    addr
}

/// An IPv4 packet to `dst`; with `size`, a UDP datagram of exactly that total length.
fn v4(rng: &mut Rng, dst: [u8; 4], ttl: u8, size: Option<usize>) -> Labeled {
    let ip = Ipv4::new(random_v4(rng, false), dst).ttl(ttl);
    match size {
        Some(total) => {
            let udp = L4::Udp {
                sport: rng.range(1024, 65535) as u16,
                dport: 443,
            };
            let body = rng.bytes(total.saturating_sub(28));
            labeled::v4(&to_dut(), &ip, &udp, &body)
        }
        None => labeled::v4(&to_dut(), &ip, &random_l4(rng, false), &payload(rng, 100)),
    }
}

/// An IPv6 packet from `src` to `dst`; with `size`, a UDP datagram of exactly that L3 length (header included).
fn v6(rng: &mut Rng, src: [u8; 16], dst: [u8; 16], hops: u8, size: Option<usize>) -> Labeled {
    let ip = Ipv6::new(src, dst).hop_limit(hops);
    match size {
        Some(total) => {
            let udp = L4::Udp {
                sport: rng.range(1024, 65535) as u16,
                dport: 443,
            };
            let body = rng.bytes(total.saturating_sub(48));
            labeled::v6(&to_dut(), &ip, &udp, &body)
        }
        None => labeled::v6(&to_dut(), &ip, &random_l4(rng, true), &payload(rng, 100)),
    }
}

fn v6_destinations() -> Vec<[u8; 16]> {
    let mut all: Vec<[u8; 16]> = V6_TARGETS.iter().map(|&(g, l)| v6_target(g, l)).collect();
    all.push(V6_LONGER);
    all
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for dst in V4_TARGETS {
        out.push(v4(rng, dst, 64, None));
        out.push(v4(rng, skip_neigh(dst), 64, None));
    }
    for dst in [
        [10, 2, 3, 4],
        [10, 3, 3, 4],
        [10, 7, 3, 4],
        [10, 7, 7, 4],
        [10, 8, 3, 4],
    ] {
        for size in SIZES {
            out.push(v4(rng, dst, 64, Some(size)));
            out.push(v4(rng, skip_neigh(dst), 64, Some(size)));
        }
    }
    out.push(v4(rng, [10, 4, 3, 4], 64, Some(3000)));
    out.push(v4(rng, [10, 2, 3, 4], 1, None));
    out.push(v4(rng, [10, 2, 3, 4], 0, None));
    out.push(v4(rng, [10, 2, 3, 4], 2, None));
    let ip = Ipv4::new([203, 0, 113, 1], [10, 2, 3, 4])
        .options(&[0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00]);
    out.push(labeled::v4(&eth, &ip, &random_l4(rng, false), &[]));

    for dst in v6_destinations() {
        let src = random_v6(rng);
        out.push(v6(rng, src, dst, 64, None));
        let src = random_v6(rng);
        out.push(v6(rng, src, skip_neigh(dst), 64, None));
    }
    for dst in V6_SPECIAL {
        let src = random_v6(rng);
        out.push(v6(rng, src, dst, 64, None));
    }
    // Sources the kernel never forwards from: link-local, loopback, multicast.
    for src in &V6_SPECIAL[..3] {
        out.push(v6(rng, *src, v6_target(2, 4), 64, None));
    }
    for dst in [v6_target(2, 4), v6_target(3, 4), v6_target(8, 4), V6_LONGER] {
        for size in SIZES {
            let src = random_v6(rng);
            out.push(v6(rng, src, dst, 64, Some(size)));
            let src = random_v6(rng);
            out.push(v6(rng, src, skip_neigh(dst), 64, Some(size)));
        }
    }
    let src = random_v6(rng);
    out.push(v6(rng, src, v6_target(2, 4), 1, None));
    let src = random_v6(rng);
    out.push(v6(rng, src, v6_target(2, 4), 2, None));

    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 254]));
    out.push(labeled::other(&eth, 0x88cc, &payload(rng, 40)));
    out.extend(malformed_set(rng, [203, 0, 113, 1], [10, 2, 3, 4]));
    out
}

/// A random size: mostly small, sometimes around the MTUs.
fn random_size(rng: &mut Rng) -> Option<usize> {
    rng.chance(1, 6).then(|| rng.range(1350, 1550) as usize)
}

fn filler(rng: &mut Rng) -> Labeled {
    let ttl = if rng.chance(1, 12) { 1 } else { 64 };
    let size = random_size(rng);
    if rng.chance(1, 2) {
        let mut dst = *rng.pick(&V4_TARGETS).unwrap_or(&V4_TARGETS[0]);
        if rng.chance(1, 2) {
            dst[3] = rng.below(256) as u8;
        }
        return v4(rng, dst, ttl, size);
    }
    let all = v6_destinations();
    let mut dst = *rng.pick(&all).unwrap_or(&V6_LONGER);
    if rng.chance(1, 2) {
        dst[15] = rng.below(256) as u8;
    }
    let src = random_v6(rng);
    v6(rng, src, dst, ttl, size)
}

#[cfg(test)]
mod tests {
    use super::{core, ROUTES, SKIP_NEIGH_FROM};
    use crate::rng::Rng;
    use serde_json::Value;
    use std::net::IpAddr;

    /// A destination, its L3 length and whether the program looks it up with SKIP_NEIGH.
    struct Lookup {
        dst: IpAddr,
        len: usize,
        skip: bool,
    }

    fn lookups() -> Vec<Lookup> {
        core(&mut Rng::new(3))
            .iter()
            .filter_map(|f| {
                let b = &f.bytes;
                let (dst, len): (IpAddr, usize) = match (b.get(12..14)?, b.len()) {
                    ([0x08, 0x00], n) if n >= 34 => {
                        (<[u8; 4]>::try_from(&b[30..34]).ok()?.into(), n - 14)
                    }
                    ([0x86, 0xdd], n) if n >= 54 => {
                        (<[u8; 16]>::try_from(&b[38..54]).ok()?.into(), n - 14)
                    }
                    _ => return None,
                };
                let last = match dst {
                    IpAddr::V4(a) => a.octets()[3],
                    IpAddr::V6(a) => a.octets()[15],
                };
                Some(Lookup {
                    dst,
                    len,
                    skip: last >= SKIP_NEIGH_FROM,
                })
            })
            .collect()
    }

    fn bits(a: IpAddr) -> (u128, u32) {
        match a {
            IpAddr::V4(a) => (u32::from(a) as u128, 32),
            IpAddr::V6(a) => (u128::from(a), 128),
        }
    }

    /// The table's routes as (prefix, length, route) with the longest match first.
    fn routes(table: &Value) -> Vec<(IpAddr, u32, Value)> {
        let mut all: Vec<(IpAddr, u32, Value)> = table["routes"]
            .as_array()
            .expect("routes")
            .iter()
            .map(|r| {
                let (addr, len) = r["dst"]
                    .as_str()
                    .and_then(|d| d.split_once('/'))
                    .expect("dst a/n");
                (
                    addr.parse().expect("address"),
                    len.parse().expect("length"),
                    r.clone(),
                )
            })
            .collect();
        all.sort_by_key(|r| (std::cmp::Reverse(r.1), r.2["metric"].as_u64().unwrap_or(0)));
        all
    }

    fn best(routes: &[(IpAddr, u32, Value)], dst: IpAddr) -> Option<&(IpAddr, u32, Value)> {
        let (d, width) = bits(dst);
        routes.iter().find(|(p, len, _)| {
            let (p, w) = bits(*p);
            w == width && (*len == 0 || (p >> (w - len)) == (d >> (w - len)))
        })
    }

    #[test]
    fn route_table_names_only_its_devices() {
        let table: Value = serde_json::from_str(ROUTES).expect("routes JSON");
        let devices: Vec<u64> = table["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .map(|d| d["ifindex"].as_u64().expect("ifindex"))
            .collect();
        assert_eq!(devices, [2, 3]);
        let mtus: Vec<u64> = table["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["mtu"].as_u64().unwrap())
            .collect();
        assert_eq!(mtus, [1500, 1400]);
        for r in table["routes"].as_array().unwrap() {
            match r["type"].as_str() {
                None => assert!(devices.contains(&r["dev"].as_u64().expect("dev")), "{r}"),
                Some(kind) => assert!(
                    ["blackhole", "unreachable", "prohibit"].contains(&kind),
                    "{r}"
                ),
            }
        }
        for n in table["neighbors"].as_array().expect("neighbors") {
            assert!(devices.contains(&n["dev"].as_u64().expect("dev")), "{n}");
        }
    }

    #[test]
    fn every_prefix_is_the_best_match_of_some_packet_with_both_flag_settings() {
        let table: Value = serde_json::from_str(ROUTES).expect("routes JSON");
        let routes = routes(&table);
        let lookups = lookups();
        for (prefix, len, route) in &routes {
            for skip in [false, true] {
                let reached = lookups.iter().any(|l| {
                    l.skip == skip
                        && best(&routes, l.dst).is_some_and(|b| b.0 == *prefix && b.1 == *len)
                });
                assert!(reached, "no packet reaches {route} (skip_neigh {skip})");
            }
        }
        let unrouted = lookups
            .iter()
            .filter(|l| best(&routes, l.dst).is_none())
            .count();
        assert!(unrouted >= 10, "only {unrouted} unrouted destinations");
        for loopback in ["127.0.0.1", "::1"] {
            let a: IpAddr = loopback.parse().unwrap();
            assert!(lookups.iter().any(|l| l.dst == a), "no packet to {a}");
        }
    }

    #[test]
    fn packets_exceed_each_devices_mtu_in_both_families() {
        let table: Value = serde_json::from_str(ROUTES).expect("routes JSON");
        let routes = routes(&table);
        let lookups = lookups();
        for dev in table["devices"].as_array().unwrap() {
            let (ifindex, mtu) = (
                dev["ifindex"].as_u64().unwrap(),
                dev["mtu"].as_u64().unwrap() as usize,
            );
            for v4 in [true, false] {
                let through = |l: &&Lookup| {
                    l.dst.is_ipv4() == v4
                        && best(&routes, l.dst)
                            .is_some_and(|b| b.2["dev"].as_u64() == Some(ifindex))
                };
                assert!(
                    lookups.iter().filter(through).any(|l| l.len == mtu + 1),
                    "nothing over {mtu} via {ifindex}"
                );
                assert!(
                    lookups.iter().filter(through).any(|l| l.len == mtu),
                    "nothing at {mtu} via {ifindex}"
                );
            }
        }
    }
}
