//! Truncated and malformed frames every trace includes: programs must bounds-check, and their drop paths must run.
//!
//! The kernel refuses test runs of frames shorter than an Ethernet header, so the shortest frame here is a bare
//! 14-byte header.

use crate::labeled::Labeled;
use crate::packet::{
    internet_checksum, ipv4_header_checksum, Eth, Ipv4, Ipv6, ETH_P_8021Q, ETH_P_IP, ETH_P_IPV6,
    L4, TCP_ACK,
};
use crate::rng::Rng;

/// Offset of the IPv4 header in an untagged frame.
const IP: usize = 14;

/// The standard set, with addresses and ports from `rng` and the given link layer and IPv4 addresses.
pub(crate) fn frames(rng: &mut Rng, eth: &Eth, src: [u8; 4], dst: [u8; 4]) -> Vec<Labeled> {
    let eth = Eth::new(eth.dst, eth.src);
    let sport = rng.range(1024, 65535) as u16;
    let ip = Ipv4::new(src, dst);
    let tcp = L4::Tcp {
        sport,
        dport: 80,
        flags: TCP_ACK,
    };
    let udp = L4::Udp { sport, dport: 53 };
    let payload = rng.bytes(16);
    let mut out = Vec::new();

    // Ethernet header only, claiming IPv4 and IPv6.
    out.push(Labeled::malformed(eth.frame(ETH_P_IP, &[])));
    out.push(Labeled::malformed(eth.frame(ETH_P_IPV6, &[])));

    // IPv4 header cut at 10 bytes.
    let mut f = eth.ipv4(&ip, &tcp, &payload);
    f.truncate(IP + 10);
    out.push(Labeled::malformed(f));

    // IHL below 5 (checksum recomputed so only the IHL is wrong).
    let mut f = eth.ipv4(&ip, &udp, &payload);
    f[IP] = 0x44;
    fix_checksum_20(&mut f);
    out.push(Labeled::malformed(f));

    // IHL of 15 (60 bytes) on a packet whose whole IP part is 28 bytes.
    let mut f = eth.ipv4(&ip, &udp, &[]);
    f[IP] = 0x4f;
    out.push(Labeled::malformed(f));

    // Total length larger than the frame.
    let mut f = eth.ipv4(&ip, &udp, &payload);
    f[IP + 2..IP + 4].copy_from_slice(&1400u16.to_be_bytes());
    ipv4_header_checksum(&mut f[IP..]);
    out.push(Labeled::malformed(f));

    // Total length smaller than the header.
    let mut f = eth.ipv4(&ip, &udp, &payload);
    f[IP + 2..IP + 4].copy_from_slice(&12u16.to_be_bytes());
    ipv4_header_checksum(&mut f[IP..]);
    out.push(Labeled::malformed(f));

    // TCP with a 12-byte header (total length consistent with it).
    let mut f = eth.ipv4(&ip, &tcp, &[]);
    f.truncate(IP + 20 + 12);
    f[IP + 2..IP + 4].copy_from_slice(&32u16.to_be_bytes());
    ipv4_header_checksum(&mut f[IP..]);
    out.push(Labeled::malformed(f));

    // TCP with a data offset of 3 words.
    let mut f = eth.ipv4(&ip, &tcp, &payload);
    f[IP + 20 + 12] = 3 << 4;
    out.push(Labeled::malformed(f));

    // UDP header cut at 4 bytes.
    let mut f = eth.ipv4(&ip, &udp, &[]);
    f.truncate(IP + 24);
    f[IP + 2..IP + 4].copy_from_slice(&24u16.to_be_bytes());
    ipv4_header_checksum(&mut f[IP..]);
    out.push(Labeled::malformed(f));

    // A VLAN tag cut in half.
    let mut f = eth.frame(ETH_P_8021Q, &[0x00]);
    f.push(0x07);
    out.push(Labeled::malformed(f));

    // IPv6 header cut at 20 bytes.
    let ip6 = Ipv6::new(v4_mapped(src), v4_mapped(dst));
    let mut f = eth.ipv6(&ip6, &L4::Udp { sport, dport: 53 }, &payload);
    f.truncate(IP + 20);
    out.push(Labeled::malformed(f));

    out
}

/// Recomputes the checksum over the first 20 bytes of the IPv4 header whatever its IHL says.
fn fix_checksum_20(frame: &mut [u8]) {
    if let Some(h) = frame.get_mut(IP..IP + 20) {
        h[10] = 0;
        h[11] = 0;
        let check = internet_checksum(h, 0);
        h[10..12].copy_from_slice(&check.to_be_bytes());
    }
}

/// An IPv6 address embedding an IPv4 one (`::ffff:a.b.c.d`).
pub(crate) fn v4_mapped(a: [u8; 4]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[10] = 0xff;
    out[11] = 0xff;
    out[12..].copy_from_slice(&a);
    out
}
