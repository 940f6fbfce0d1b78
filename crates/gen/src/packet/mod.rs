//! A small packet builder: Ethernet with 802.1Q/802.1ad tags, ARP, IPv4 (with options), IPv6, TCP, UDP, ICMP and
//! ICMPv6, with correct lengths and checksums. Malformed frames are made by building a correct one and editing bytes.

mod ip;
mod l4;

pub use ip::{ipv4_header_checksum, Ipv4, Ipv6};
pub use l4::{arp, L4, TCP_ACK, TCP_SYN};

/// A MAC address.
pub type Mac = [u8; 6];

/// Ethertype of IPv4.
pub const ETH_P_IP: u16 = 0x0800;
/// Ethertype of IPv6.
pub const ETH_P_IPV6: u16 = 0x86dd;
/// Ethertype of ARP.
pub const ETH_P_ARP: u16 = 0x0806;
/// Tag protocol identifier of an 802.1Q (customer) VLAN tag.
pub const ETH_P_8021Q: u16 = 0x8100;
/// Tag protocol identifier of an 802.1ad (service) VLAN tag.
pub const ETH_P_8021AD: u16 = 0x88a8;
/// Length of an untagged Ethernet header.
pub const ETH_HLEN: usize = 14;

/// IP protocol number of ICMP.
pub const IPPROTO_ICMP: u8 = 1;
/// IP protocol number of IPv4-in-IP.
pub const IPPROTO_IPIP: u8 = 4;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IP protocol number of IPv6-in-IP.
pub const IPPROTO_IPV6: u8 = 41;
/// IP protocol number of ICMPv6.
pub const IPPROTO_ICMPV6: u8 = 58;

/// One VLAN tag: its TPID (0x8100 or 0x88a8) and tag control information (PCP, DEI, VID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// Tag protocol identifier.
    pub tpid: u16,
    /// Tag control information.
    pub tci: u16,
}

impl Tag {
    /// An 802.1Q tag with VLAN id `vid`.
    pub fn dot1q(vid: u16) -> Self {
        Tag {
            tpid: ETH_P_8021Q,
            tci: vid & 0x0fff,
        }
    }

    /// An 802.1ad service tag with VLAN id `vid`.
    pub fn dot1ad(vid: u16) -> Self {
        Tag {
            tpid: ETH_P_8021AD,
            tci: vid & 0x0fff,
        }
    }
}

/// The link layer of a frame: addresses and VLAN tags, outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eth {
    /// Destination MAC.
    pub dst: Mac,
    /// Source MAC.
    pub src: Mac,
    /// VLAN tags, outermost first.
    pub tags: Vec<Tag>,
}

impl Eth {
    /// An untagged link layer.
    pub fn new(dst: Mac, src: Mac) -> Self {
        Eth {
            dst,
            src,
            tags: Vec::new(),
        }
    }

    /// The same addresses with `tags`.
    pub fn tagged(&self, tags: &[Tag]) -> Self {
        Eth {
            dst: self.dst,
            src: self.src,
            tags: tags.to_vec(),
        }
    }

    /// Header length including tags.
    pub fn header_len(&self) -> usize {
        ETH_HLEN + 4 * self.tags.len()
    }

    /// The frame carrying `payload` with `ethertype`.
    pub fn frame(&self, ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.header_len() + payload.len());
        out.extend_from_slice(&self.dst);
        out.extend_from_slice(&self.src);
        for tag in &self.tags {
            out.extend_from_slice(&tag.tpid.to_be_bytes());
            out.extend_from_slice(&tag.tci.to_be_bytes());
        }
        out.extend_from_slice(&ethertype.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// An IPv4 frame: `ip` carrying `l4` (which sets the protocol number) and `payload`.
    pub fn ipv4(&self, ip: &Ipv4, l4: &L4, payload: &[u8]) -> Vec<u8> {
        let mut ip = ip.clone();
        if let Some(proto) = l4.protocol() {
            ip.proto = proto;
        }
        let segment = l4.build(&ip.pseudo_header_v4(), payload);
        self.frame(ETH_P_IP, &ip.build(&segment))
    }

    /// An IPv6 frame: `ip` carrying `l4` (which sets the next header) and `payload`.
    pub fn ipv6(&self, ip: &Ipv6, l4: &L4, payload: &[u8]) -> Vec<u8> {
        let mut ip = ip.clone();
        if let Some(proto) = l4.protocol_v6() {
            ip.next_header = proto;
        }
        let segment = l4.build(&ip.pseudo_header_v6(), payload);
        self.frame(ETH_P_IPV6, &ip.build(&segment))
    }
}

/// The one's-complement sum of `data` as 16-bit big-endian words (odd tail padded with zero), not yet complemented.
pub fn ones_complement_sum(data: &[u8], initial: u32) -> u32 {
    let mut sum = u64::from(initial);
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u64::from(u16::from_be_bytes([*last, 0]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u32
}

/// The Internet checksum of `data` (complemented one's-complement sum), seeded with `initial`.
pub fn internet_checksum(data: &[u8], initial: u32) -> u16 {
    !(ones_complement_sum(data, initial) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_rfc1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(ones_complement_sum(&data, 0), 0xddf2);
        assert_eq!(internet_checksum(&data, 0), !0xddf2);
    }

    #[test]
    fn tagged_frame_layout() {
        let eth = Eth::new([1; 6], [2; 6]).tagged(&[Tag::dot1ad(5), Tag::dot1q(7)]);
        let f = eth.frame(ETH_P_ARP, &[9, 9]);
        assert_eq!(f.len(), 14 + 8 + 2);
        assert_eq!(&f[12..14], &[0x88, 0xa8]);
        assert_eq!(&f[14..16], &[0, 5]);
        assert_eq!(&f[16..18], &[0x81, 0x00]);
        assert_eq!(&f[20..22], &[0x08, 0x06]);
    }
}
