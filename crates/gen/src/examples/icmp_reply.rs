//! Workload of `icmp_reply`: echo requests below, at and above the trim size, and everything the program passes.

use super::{malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, L4, TCP_SYN};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "icmp_reply",
    aliases: &[],
    description: "icmp_reply: echo requests with 0 to 1400 bytes of payload (at most 98-byte frames answered with an \
                  incremental checksum, longer ones trimmed then answered), echo replies, TCP and UDP, fragments, IP \
                  options, padded frames (pass), IPv6 and ARP (pass), malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

/// Payload sizes around the 98-byte frame limit (56 bytes of payload), odd and even.
const SIZES: [usize; 9] = [0, 1, 55, 56, 57, 58, 200, 1001, 1400];

fn preload() -> Vec<Preload> {
    Vec::new()
}

fn echo(rng: &mut Rng, size: usize) -> Labeled {
    let ip = Ipv4::new(random_v4(rng, false), [10, 0, 0, 1]);
    let l4 = L4::IcmpEcho {
        reply: false,
        id: rng.range(1, 65535) as u16,
        seq: rng.range(0, 100) as u16,
    };
    let data = rng.bytes(size);
    labeled::v4(&to_dut(), &ip, &l4, &data)
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out: Vec<Labeled> = SIZES.iter().map(|&s| echo(rng, s)).collect();
    let src = [203, 0, 113, 3];
    let dst = [10, 0, 0, 1];
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(src, dst),
        &L4::IcmpEcho {
            reply: true,
            id: 1,
            seq: 1,
        },
        &[1; 8],
    ));
    let request = L4::IcmpEcho {
        reply: false,
        id: 2,
        seq: 2,
    };
    let opts = Ipv4::new(src, dst).options(&[0x94, 0x04, 0, 0]);
    out.push(labeled::v4(&eth, &opts, &request, &[2; 8]));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(src, dst).frag(0x2000),
        &request,
        &[3; 16],
    ));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(src, dst).frag(0x0004),
        &request,
        &[4; 16],
    ));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(src, dst),
        &L4::Tcp {
            sport: 1,
            dport: 2,
            flags: TCP_SYN,
        },
        &[],
    ));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new(src, dst),
        &L4::Udp { sport: 1, dport: 2 },
        &[],
    ));
    let mut padded = labeled::v4(&eth, &Ipv4::new(src, dst), &request, &[5; 4]);
    padded.bytes.extend_from_slice(&[0; 14]);
    out.push(padded);
    let echo6 = L4::Icmpv6Echo {
        reply: false,
        id: 3,
        seq: 3,
    };
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &echo6,
        &payload(rng, 56),
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 9], dst));
    let mut cut = echo(rng, 8).bytes;
    cut.truncate(14 + 20 + 4);
    out.push(Labeled::malformed(cut));
    out.extend(malformed_set(rng, src, dst));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let size = if rng.chance(1, 2) {
        rng.below(57)
    } else {
        rng.below(1400)
    };
    echo(rng, size)
}
