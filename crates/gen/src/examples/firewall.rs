//! Workload of `firewall`: outbound flows then their replies, a preloaded flow, unsolicited inbound traffic that fills
//! the drop log.

use super::{cat, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, IPPROTO_TCP, L4, TCP_ACK, TCP_SYN};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "firewall",
    aliases: &[],
    description: "firewall: outbound TCP/UDP flows from 10/8 create state, their replies pass, replies to a \
                  preloaded flow pass, 180 unsolicited inbound packets drop and overflow the 4 KiB drop log, ICMP, \
                  ARP, IPv6, IP options, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

/// More unsolicited packets than the drop log holds (4096 bytes / 24-byte records).
const UNSOLICITED: usize = 180;

const PRELOADED: ([u8; 4], [u8; 4], u16, u16) = ([10, 0, 0, 5], [198, 51, 100, 7], 5000, 443);

fn preload() -> Vec<Preload> {
    let (src, dst, sport, dport) = PRELOADED;
    let key = cat(&[
        &src,
        &dst,
        &sport.to_be_bytes(),
        &dport.to_be_bytes(),
        &[IPPROTO_TCP, 0, 0, 0],
    ]);
    vec![Preload::new("flows", key, 0u64.to_le_bytes())]
}

/// A flow from an inside host and its reply.
fn flow_pair(rng: &mut Rng) -> (Labeled, Labeled) {
    let inside = random_v4(rng, true);
    let outside = random_v4(rng, false);
    let sport = rng.range(1024, 65535) as u16;
    let dport = *rng.pick(&[53u16, 80, 443]).unwrap_or(&80);
    let (out_l4, back_l4) = if rng.chance(1, 2) {
        (
            L4::Tcp {
                sport,
                dport,
                flags: TCP_SYN,
            },
            L4::Tcp {
                sport: dport,
                dport: sport,
                flags: TCP_ACK,
            },
        )
    } else {
        (
            L4::Udp { sport, dport },
            L4::Udp {
                sport: dport,
                dport: sport,
            },
        )
    };
    let data = payload(rng, 64);
    (
        labeled::v4(&to_dut(), &Ipv4::new(inside, outside), &out_l4, &data),
        labeled::v4(&to_dut(), &Ipv4::new(outside, inside), &back_l4, &data),
    )
}

/// A TCP SYN to port 22 from outside to inside, which no flow expects (also the hXDP paper's firewall's).
pub(crate) fn unsolicited(rng: &mut Rng) -> Labeled {
    let l4 = L4::Tcp {
        sport: rng.range(1024, 65535) as u16,
        dport: 22,
        flags: TCP_SYN,
    };
    labeled::v4(
        &to_dut(),
        &Ipv4::new(random_v4(rng, false), random_v4(rng, true)),
        &l4,
        &[],
    )
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    let pairs: Vec<_> = (0..6).map(|_| flow_pair(rng)).collect();
    out.extend(pairs.iter().map(|p| p.0.clone()));
    out.extend(pairs.iter().map(|p| p.1.clone()));
    out.extend(pairs.iter().map(|p| p.0.clone()));
    let (src, dst, sport, dport) = PRELOADED;
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(dst, src),
        &L4::Tcp {
            sport: dport,
            dport: sport,
            flags: TCP_ACK,
        },
        &[],
    ));
    out.extend(odd_frames(rng));
    out.extend((0..UNSOLICITED).map(|_| unsolicited(rng)));
    out
}

/// The frames every firewall trace has besides its flows: IPv4 with options, ICMP, ARP, IPv6 and malformed frames
/// (also used by the hXDP paper's firewall, `hxdp_firewall`).
pub(crate) fn odd_frames(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    let opts = Ipv4::new([10, 0, 0, 7], [198, 51, 100, 9]).options(&[0x94, 0x04, 0, 0]);
    out.push(labeled::v4(
        &eth,
        &opts,
        &L4::Udp {
            sport: 4000,
            dport: 53,
        },
        &[1, 2, 3],
    ));
    let echo = L4::IcmpEcho {
        reply: false,
        id: 1,
        seq: 1,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(random_v4(rng, false), [10, 0, 0, 1]),
        &echo,
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    let l4 = L4::Tcp {
        sport: 1234,
        dport: 80,
        flags: TCP_SYN,
    };
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &l4,
        &[],
    ));
    out.extend(malformed_set(rng, [203, 0, 113, 9], [10, 0, 0, 1]));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let (out, back) = flow_pair(rng);
    match rng.below(3) {
        0 => out,
        1 => back,
        _ => unsolicited(rng),
    }
}
