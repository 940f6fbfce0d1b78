//! Transport headers (TCP, UDP, ICMP, ICMPv6) and ARP.

use super::{
    internet_checksum, ones_complement_sum, Mac, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_TCP,
    IPPROTO_UDP,
};

/// TCP SYN flag.
pub const TCP_SYN: u8 = 0x02;
/// TCP ACK flag.
pub const TCP_ACK: u8 = 0x10;

/// What an IP packet carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L4 {
    /// TCP with a 20-byte header.
    Tcp {
        /// Source port.
        sport: u16,
        /// Destination port.
        dport: u16,
        /// Flags byte.
        flags: u8,
    },
    /// UDP with a checksum.
    Udp {
        /// Source port.
        sport: u16,
        /// Destination port.
        dport: u16,
    },
    /// UDP with checksum 0 (allowed over IPv4).
    UdpNoChecksum {
        /// Source port.
        sport: u16,
        /// Destination port.
        dport: u16,
    },
    /// ICMP echo request (`reply == false`) or reply, over IPv4.
    IcmpEcho {
        /// Reply rather than request.
        reply: bool,
        /// Identifier.
        id: u16,
        /// Sequence number.
        seq: u16,
    },
    /// ICMPv6 echo request or reply, over IPv6.
    Icmpv6Echo {
        /// Reply rather than request.
        reply: bool,
        /// Identifier.
        id: u16,
        /// Sequence number.
        seq: u16,
    },
    /// The payload as is, with this protocol number (e.g. an inner IP packet for IP-in-IP).
    Raw(u8),
}

impl L4 {
    /// The IPv4 protocol number, or `None` to keep the header's.
    pub fn protocol(&self) -> Option<u8> {
        match self {
            L4::Tcp { .. } => Some(IPPROTO_TCP),
            L4::Udp { .. } | L4::UdpNoChecksum { .. } => Some(IPPROTO_UDP),
            L4::IcmpEcho { .. } => Some(IPPROTO_ICMP),
            L4::Icmpv6Echo { .. } => Some(IPPROTO_ICMPV6),
            L4::Raw(p) => Some(*p),
        }
    }

    /// The IPv6 next header.
    pub fn protocol_v6(&self) -> Option<u8> {
        self.protocol()
    }

    /// The segment with `payload`; `pseudo` is the IP pseudo header without the length (12 bytes for IPv4, 40 for
    /// IPv6), the length being added here.
    pub fn build(&self, pseudo: &[u8], payload: &[u8]) -> Vec<u8> {
        match *self {
            L4::Tcp {
                sport,
                dport,
                flags,
            } => {
                let mut s = Vec::with_capacity(20 + payload.len());
                s.extend_from_slice(&sport.to_be_bytes());
                s.extend_from_slice(&dport.to_be_bytes());
                s.extend_from_slice(&0x1000_0000u32.wrapping_add(u32::from(sport)).to_be_bytes());
                let ack = if flags & TCP_ACK != 0 {
                    0x2000_0000u32
                } else {
                    0
                };
                s.extend_from_slice(&ack.to_be_bytes());
                s.push(5 << 4);
                s.push(flags);
                s.extend_from_slice(&0xfaf0u16.to_be_bytes());
                s.extend_from_slice(&[0, 0, 0, 0]);
                s.extend_from_slice(payload);
                let c = transport_checksum(pseudo, &s);
                s[16..18].copy_from_slice(&c.to_be_bytes());
                s
            }
            L4::Udp { sport, dport } | L4::UdpNoChecksum { sport, dport } => {
                let len = (8 + payload.len()).min(usize::from(u16::MAX)) as u16;
                let mut s = Vec::with_capacity(8 + payload.len());
                s.extend_from_slice(&sport.to_be_bytes());
                s.extend_from_slice(&dport.to_be_bytes());
                s.extend_from_slice(&len.to_be_bytes());
                s.extend_from_slice(&[0, 0]);
                s.extend_from_slice(payload);
                if matches!(self, L4::Udp { .. }) {
                    let mut c = transport_checksum(pseudo, &s);
                    if c == 0 {
                        c = 0xffff;
                    }
                    s[6..8].copy_from_slice(&c.to_be_bytes());
                }
                s
            }
            L4::IcmpEcho { reply, id, seq } => {
                let mut s = echo(if reply { 0 } else { 8 }, id, seq, payload);
                let c = internet_checksum(&s, 0);
                s[2..4].copy_from_slice(&c.to_be_bytes());
                s
            }
            L4::Icmpv6Echo { reply, id, seq } => {
                let mut s = echo(if reply { 129 } else { 128 }, id, seq, payload);
                let c = transport_checksum(pseudo, &s);
                s[2..4].copy_from_slice(&c.to_be_bytes());
                s
            }
            L4::Raw(_) => payload.to_vec(),
        }
    }
}

fn echo(ty: u8, id: u16, seq: u16, payload: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(8 + payload.len());
    s.extend_from_slice(&[ty, 0, 0, 0]);
    s.extend_from_slice(&id.to_be_bytes());
    s.extend_from_slice(&seq.to_be_bytes());
    s.extend_from_slice(payload);
    s
}

/// Checksum over a pseudo header (IPv4: 12 bytes with a 16-bit length; IPv6: 40 bytes with a 32-bit length) and the
/// segment.
fn transport_checksum(pseudo: &[u8], segment: &[u8]) -> u16 {
    let len = segment.len() as u32;
    let mut p = pseudo.to_vec();
    if p.len() == 12 {
        p[8] = 0;
        p[10..12].copy_from_slice(&(len as u16).to_be_bytes());
        p.truncate(12);
    } else if p.len() == 40 {
        p[32..36].copy_from_slice(&len.to_be_bytes());
    }
    internet_checksum(segment, ones_complement_sum(&p, 0))
}

/// An ARP request (`reply == false`) or reply for IPv4 over Ethernet, as the payload of an ARP frame.
pub fn arp(reply: bool, sha: Mac, spa: [u8; 4], tha: Mac, tpa: [u8; 4]) -> Vec<u8> {
    let mut a = Vec::with_capacity(28);
    a.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4, 0, if reply { 2 } else { 1 }]);
    a.extend_from_slice(&sha);
    a.extend_from_slice(&spa);
    a.extend_from_slice(&tha);
    a.extend_from_slice(&tpa);
    a
}
