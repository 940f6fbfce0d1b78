//! Workload of `hxdp_firewall`: a preloaded established flow both ways, internal flows then their replies (insert,
//! then a lookup that hits), unsolicited external packets (a lookup that misses), then the other kinds of frame.

use super::{cat, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::random_v4;
use crate::packet::{Ipv4, IPPROTO_TCP, L4, TCP_ACK, TCP_SYN};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "hxdp_firewall",
    aliases: &[],
    description: "hxdp_firewall: a preloaded established TCP flow both ways, TCP/UDP flows from 10/8 (insert, pass) \
                  and their replies (lookup hits, pass), unsolicited external packets (drop), ICMP, ARP, IPv6, IP \
                  options, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

/// The preloaded flow: an internal host talking to a web server.
const ESTABLISHED: ([u8; 4], [u8; 4], u16, u16) = ([10, 0, 0, 5], [198, 51, 100, 7], 5000, 443);

/// The key `hxdp_firewall` builds for a flow: the lower address with its port first (network order), protocol,
/// three zero bytes.
fn key(a: [u8; 4], b: [u8; 4], pa: u16, pb: u16, proto: u8) -> Vec<u8> {
    let (lo, hi) = if u32::from_le_bytes(a) < u32::from_le_bytes(b)
        || (a == b && u16::from_le_bytes(pa.to_be_bytes()) < u16::from_le_bytes(pb.to_be_bytes()))
    {
        ((a, pa), (b, pb))
    } else {
        ((b, pb), (a, pa))
    };
    cat(&[
        &lo.0,
        &hi.0,
        &lo.1.to_be_bytes(),
        &hi.1.to_be_bytes(),
        &[proto, 0, 0, 0],
    ])
}

fn preload() -> Vec<Preload> {
    let (a, b, pa, pb) = ESTABLISHED;
    vec![Preload::new(
        "fw_flows",
        key(a, b, pa, pb, IPPROTO_TCP),
        1u64.to_le_bytes(),
    )]
}

/// A packet of the established flow, from the internal host (`out`) or from the server.
fn established(out: bool) -> Labeled {
    let (a, b, pa, pb) = ESTABLISHED;
    let (ip, l4) = if out {
        (
            Ipv4::new(a, b),
            L4::Tcp {
                sport: pa,
                dport: pb,
                flags: TCP_ACK,
            },
        )
    } else {
        (
            Ipv4::new(b, a),
            L4::Tcp {
                sport: pb,
                dport: pa,
                flags: TCP_ACK,
            },
        )
    };
    labeled::v4(&to_dut(), &ip, &l4, &[])
}

/// A flow from an internal host and its reply.
fn flow_pair(rng: &mut Rng) -> (Labeled, Labeled) {
    let inside = random_v4(rng, true);
    let outside = random_v4(rng, false);
    let sport = rng.range(1024, 65535) as u16;
    let dport = *rng.pick(&[53u16, 80, 443]).unwrap_or(&80);
    let tcp = rng.chance(1, 2);
    let l4 = |sport, dport, flags| {
        if tcp {
            L4::Tcp {
                sport,
                dport,
                flags,
            }
        } else {
            L4::Udp { sport, dport }
        }
    };
    let data = payload(rng, 64);
    (
        labeled::v4(
            &to_dut(),
            &Ipv4::new(inside, outside),
            &l4(sport, dport, TCP_SYN),
            &data,
        ),
        labeled::v4(
            &to_dut(),
            &Ipv4::new(outside, inside),
            &l4(dport, sport, TCP_ACK),
            &data,
        ),
    )
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let mut out = vec![established(false), established(true), established(false)];
    let pairs: Vec<_> = (0..6).map(|_| flow_pair(rng)).collect();
    out.extend(pairs.iter().map(|p| p.1.clone()));
    out.extend(pairs.iter().map(|p| p.0.clone()));
    out.extend(pairs.iter().map(|p| p.1.clone()));
    out.extend((0..8).map(|_| super::firewall::unsolicited(rng)));
    out.extend(super::firewall::odd_frames(rng));
    out
}

/// Mostly the established flow (the paper's single-flow workload), with new flows and unsolicited packets.
fn filler(rng: &mut Rng) -> Labeled {
    match rng.below(6) {
        0 | 1 => established(false),
        2 => established(true),
        3 => flow_pair(rng).0,
        4 => flow_pair(rng).1,
        _ => super::firewall::unsolicited(rng),
    }
}
