//! The generic traffic mix for programs we do not know: every common shape of frame, plus the malformed set.

use crate::labeled::{self, Labeled};
use crate::malformed;
use crate::packet::{Eth, Ipv4, Ipv6, Tag, IPPROTO_IPIP, L4, TCP_ACK, TCP_SYN};
use crate::rng::Rng;

/// Every how many frames of the generic mix one is malformed.
const MALFORMED_EVERY: usize = 8;

/// A random unicast MAC with the locally administered bit set.
pub(crate) fn random_mac(rng: &mut Rng) -> [u8; 6] {
    let b = rng.bytes(6);
    [0x02, b[1], b[2], b[3], b[4], b[5]]
}

/// A random IPv4 address in 10.0.0.0/8 (`inside`) or in 203.0.113.0/24-like public space.
pub(crate) fn random_v4(rng: &mut Rng, inside: bool) -> [u8; 4] {
    let b = rng.bytes(3);
    if inside {
        [10, b[0], b[1], b[2].max(1)]
    } else {
        [203, 0, b[1], b[2].max(1)]
    }
}

/// A random IPv6 address in 2001:db8::/32.
pub(crate) fn random_v6(rng: &mut Rng) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0x20;
    a[1] = 0x01;
    a[2] = 0x0d;
    a[3] = 0xb8;
    a[4..].copy_from_slice(&rng.bytes(12));
    a
}

/// A random transport header for IPv4 (`v6 == false`) or IPv6.
pub(crate) fn random_l4(rng: &mut Rng, v6: bool) -> L4 {
    let sport = rng.range(1024, 65535) as u16;
    let dport = *rng.pick(&[22u16, 53, 80, 443, 8080, 123]).unwrap_or(&80);
    match rng.below(4) {
        0 => L4::Tcp {
            sport,
            dport,
            flags: if rng.chance(1, 2) { TCP_SYN } else { TCP_ACK },
        },
        1 => L4::Udp { sport, dport },
        2 if v6 => L4::Icmpv6Echo {
            reply: rng.chance(1, 2),
            id: sport,
            seq: dport,
        },
        2 => L4::IcmpEcho {
            reply: rng.chance(1, 2),
            id: sport,
            seq: dport,
        },
        _ if v6 => L4::Udp { sport, dport },
        _ => L4::UdpNoChecksum { sport, dport },
    }
}

/// One random well-formed frame of any common shape.
pub(crate) fn random_frame(rng: &mut Rng) -> Labeled {
    let eth = Eth::new(random_mac(rng), random_mac(rng));
    // Sizes in the proportions of Simple IMIX (7:4:1 small, medium, large), so that programs that treat big packets
    // differently (adjust_tail, MTU checks) see some.
    let payload_len = match rng.below(12) {
        0..=6 => rng.below(40),
        7..=10 => 500 + rng.below(80),
        _ => 1380 + rng.below(40),
    };
    let payload = rng.bytes(payload_len);
    let inside = rng.chance(1, 2);
    let (src, dst) = (random_v4(rng, inside), random_v4(rng, false));
    match rng.below(10) {
        0..=2 => labeled::v4(&eth, &Ipv4::new(src, dst), &random_l4(rng, false), &payload),
        3..=4 => labeled::v6(
            &eth,
            &Ipv6::new(random_v6(rng), random_v6(rng)),
            &random_l4(rng, true),
            &payload,
        ),
        5 => labeled::arp_request(&eth, src, dst),
        6 => {
            let tags = [
                Tag::dot1ad(rng.range(1, 4094) as u16),
                Tag::dot1q(rng.range(1, 4094) as u16),
            ];
            let count = 1 + rng.below(2);
            let eth = eth.tagged(&tags[2 - count..]);
            labeled::v4(&eth, &Ipv4::new(src, dst), &random_l4(rng, false), &payload)
        }
        7 => {
            let ip = Ipv4::new(src, dst).options(&[0x94, 0x04, 0x00, 0x00]);
            labeled::v4(&eth, &ip, &random_l4(rng, false), &payload)
        }
        8 => {
            let inner = Ipv4::new(random_v4(rng, true), random_v4(rng, true)).build(&payload);
            labeled::v4(&eth, &Ipv4::new(src, dst), &L4::Raw(IPPROTO_IPIP), &inner)
        }
        _ => labeled::other(&eth, 0x88cc, &payload),
    }
}

/// The generic mix as labeled frames: random frames with a malformed one every [`MALFORMED_EVERY`].
pub(crate) fn labeled_mix(packets: usize, seed: u64) -> Vec<Labeled> {
    let mut rng = Rng::new(seed);
    let eth = Eth::new(random_mac(&mut rng), random_mac(&mut rng));
    let (src, dst) = (random_v4(&mut rng, true), random_v4(&mut rng, false));
    let bad = malformed::frames(&mut rng, &eth, src, dst);
    (0..packets)
        .map(|i| {
            if i % MALFORMED_EVERY == MALFORMED_EVERY - 1 {
                bad[(i / MALFORMED_EVERY) % bad.len()].clone()
            } else {
                random_frame(&mut rng)
            }
        })
        .collect()
}
