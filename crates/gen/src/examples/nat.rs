//! Workload of `nat`: new bindings, reuse, NOEXIST collisions (one and four), replies, unknown ports.

use super::{cat, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, IPPROTO_TCP, IPPROTO_UDP, L4, TCP_ACK, TCP_SYN};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "nat",
    aliases: &[],
    description: "nat: new outbound TCP/UDP flows allocate bindings (NOEXIST inserts), repeats reuse them, a flow \
                  colliding with an earlier binding, one colliding with a preloaded port, one whose four candidate \
                  ports are all taken (drop), a preloaded binding, replies (rewrite back), unknown inbound ports \
                  (drop), UDP without checksum, ICMP, IPv6, ARP, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const EXTERNAL: [u8; 4] = [198, 51, 100, 1];
const PORT_BASE: u16 = 40000;
const PORT_TRIES: u16 = 4;
const SERVER: [u8; 4] = [93, 184, 216, 34];

/// An inside endpoint: address, port, protocol.
type Endpoint = ([u8; 4], u16, u8);

/// First candidate port the program tries for `inside`, as `allocate_port` computes it.
fn base_port(inside: Endpoint) -> u16 {
    let host = u32::from_be_bytes(inside.0);
    PORT_BASE + ((host ^ (host >> 16) ^ u32::from(inside.1)) & 0xff) as u16
}

fn endpoint_bytes(addr: [u8; 4], port: u16, proto: u8) -> Vec<u8> {
    cat(&[&addr, &port.to_be_bytes(), &[proto, 0]])
}

const FIRST: Endpoint = ([10, 0, 0, 1], 1111, IPPROTO_TCP);
const ONE_TAKEN: Endpoint = ([10, 0, 0, 3], 3333, IPPROTO_TCP);
const ALL_TAKEN: Endpoint = ([10, 0, 0, 4], 4444, IPPROTO_UDP);
const BOUND: Endpoint = ([10, 0, 0, 9], 9999, IPPROTO_TCP);
const BOUND_PORT: u16 = 50000;
/// Inside endpoint the preloaded `nat_in` entries that block candidates point to.
const BLOCKER: Endpoint = ([10, 0, 0, 250], 250, IPPROTO_TCP);

/// An inside TCP endpoint whose first candidate equals `FIRST`'s, so its NOEXIST insert collides.
fn twin_of_first() -> Endpoint {
    let target = base_port(FIRST);
    let addr = [10, 0, 0, 2];
    let port = (1024u16..u16::MAX)
        .find(|&p| base_port((addr, p, IPPROTO_TCP)) == target)
        .unwrap_or(1024);
    (addr, port, IPPROTO_TCP)
}

fn preload() -> Vec<Preload> {
    let blocker = endpoint_bytes(BLOCKER.0, BLOCKER.1, BLOCKER.2);
    let mut p = vec![Preload::new(
        "nat_in",
        endpoint_bytes(EXTERNAL, base_port(ONE_TAKEN), ONE_TAKEN.2),
        blocker.clone(),
    )];
    for i in 0..PORT_TRIES {
        p.push(Preload::new(
            "nat_in",
            endpoint_bytes(EXTERNAL, base_port(ALL_TAKEN) + i, ALL_TAKEN.2),
            blocker.clone(),
        ));
    }
    let bound_ext = endpoint_bytes(EXTERNAL, BOUND_PORT, BOUND.2);
    let bound_in = endpoint_bytes(BOUND.0, BOUND.1, BOUND.2);
    p.push(Preload::new("nat_out", bound_in.clone(), bound_ext.clone()));
    p.push(Preload::new("nat_in", bound_ext, bound_in));
    p
}

fn l4_for(proto: u8, sport: u16, dport: u16, checksum: bool) -> L4 {
    match (proto, checksum) {
        (IPPROTO_TCP, _) => L4::Tcp {
            sport,
            dport,
            flags: TCP_SYN,
        },
        (_, true) => L4::Udp { sport, dport },
        (_, false) => L4::UdpNoChecksum { sport, dport },
    }
}

fn outbound(rng: &mut Rng, inside: Endpoint, checksum: bool) -> Labeled {
    let l4 = l4_for(inside.2, inside.1, 80, checksum);
    labeled::v4(
        &to_dut(),
        &Ipv4::new(inside.0, SERVER),
        &l4,
        &payload(rng, 64),
    )
}

/// A reply to external `port`.
fn inbound(rng: &mut Rng, port: u16, proto: u8) -> Labeled {
    let l4 = match proto {
        IPPROTO_TCP => L4::Tcp {
            sport: 80,
            dport: port,
            flags: TCP_ACK,
        },
        _ => L4::Udp {
            sport: 80,
            dport: port,
        },
    };
    labeled::v4(
        &to_dut(),
        &Ipv4::new(SERVER, EXTERNAL),
        &l4,
        &payload(rng, 64),
    )
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let twin = twin_of_first();
    let udp_flow: Endpoint = ([10, 0, 0, 5], 5555, IPPROTO_UDP);
    let bare_udp: Endpoint = ([10, 0, 0, 6], 6666, IPPROTO_UDP);
    let mut out = vec![
        outbound(rng, FIRST, true),
        outbound(rng, FIRST, true),
        outbound(rng, twin, true),
        outbound(rng, ONE_TAKEN, true),
        outbound(rng, ALL_TAKEN, true),
        outbound(rng, udp_flow, true),
        outbound(rng, bare_udp, false),
        outbound(rng, BOUND, true),
    ];
    out.push(inbound(rng, base_port(FIRST), IPPROTO_TCP));
    out.push(inbound(rng, base_port(FIRST) + 1, IPPROTO_TCP));
    out.push(inbound(rng, base_port(ONE_TAKEN) + 1, IPPROTO_TCP));
    out.push(inbound(rng, BOUND_PORT, IPPROTO_TCP));
    out.push(inbound(rng, base_port(udp_flow), IPPROTO_UDP));
    out.push(inbound(rng, 39999, IPPROTO_TCP));
    out.push(inbound(rng, BOUND_PORT, IPPROTO_UDP));
    let transit = L4::Udp {
        sport: 1000,
        dport: 2000,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 5], [192, 0, 2, 1]),
        &transit,
        &[],
    ));
    let echo = L4::IcmpEcho {
        reply: false,
        id: 7,
        seq: 1,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([10, 0, 0, 1], SERVER),
        &echo,
        &[],
    ));
    let opts = Ipv4::new([10, 0, 0, 8], SERVER).options(&[0x94, 0x04, 0, 0]);
    out.push(labeled::v4(
        &eth,
        &opts,
        &L4::Tcp {
            sport: 8888,
            dport: 80,
            flags: TCP_SYN,
        },
        &[],
    ));
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &L4::Udp { sport: 1, dport: 2 },
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 254]));
    out.extend(malformed_set(rng, [10, 0, 0, 1], SERVER));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let inside = random_v4(rng, true);
    let port = rng.range(1024, 65535) as u16;
    let proto = if rng.chance(1, 2) {
        IPPROTO_TCP
    } else {
        IPPROTO_UDP
    };
    if rng.chance(2, 3) {
        let checksum = rng.chance(3, 4);
        outbound(rng, (inside, port, proto), checksum)
    } else {
        let ext = PORT_BASE + rng.below(260) as u16;
        inbound(rng, ext, proto)
    }
}
