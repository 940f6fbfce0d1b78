//! Packets together with what a parser should see in them, so tests can check every generated frame is the one
//! intended (a valid TCP-over-IPv4 frame, a frame that is malformed on purpose...).

use crate::packet::{arp, Eth, Ipv4, Ipv6, ETH_P_ARP, L4};

/// What a parser must find in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// The frame is truncated or malformed on purpose: parsing must fail.
    Malformed,
    /// The frame parses with this many VLAN tags (at most 2 are parsed), network layer and transport.
    Parsed {
        vlans: usize,
        net: Net,
        l4: Transport,
    },
}

/// Network layer of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Net {
    /// Not IP: the ethertype after the parsed tags.
    Ether(u16),
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// Transport layer of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// None a parser decodes (other protocol, IP-in-IP, a fragment, or not IP).
    None,
    Tcp,
    Udp,
    Icmp,
    Icmpv6,
}

/// A frame and its expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Labeled {
    pub bytes: Vec<u8>,
    pub expect: Expect,
}

impl Labeled {
    /// A frame that must not parse.
    pub fn malformed(bytes: Vec<u8>) -> Self {
        Labeled {
            bytes,
            expect: Expect::Malformed,
        }
    }
}

fn transport(l4: &L4) -> Transport {
    match l4 {
        L4::Tcp { .. } => Transport::Tcp,
        L4::Udp { .. } | L4::UdpNoChecksum { .. } => Transport::Udp,
        L4::IcmpEcho { .. } => Transport::Icmp,
        L4::Icmpv6Echo { .. } => Transport::Icmpv6,
        L4::Raw(_) => Transport::None,
    }
}

/// The expectation for a frame with `eth`'s tags carrying `ethertype`: a parser stops after two tags.
fn parsed(eth: &Eth, ethertype_net: Net, l4: Transport) -> Expect {
    match eth.tags.get(2) {
        Some(third) => Expect::Parsed {
            vlans: 2,
            net: Net::Ether(third.tpid),
            l4: Transport::None,
        },
        None => Expect::Parsed {
            vlans: eth.tags.len(),
            net: ethertype_net,
            l4,
        },
    }
}

/// An IPv4 frame.
pub(crate) fn v4(eth: &Eth, ip: &Ipv4, l4: &L4, payload: &[u8]) -> Labeled {
    let fragment = ip.frag & 0x3fff != 0;
    let t = if fragment {
        Transport::None
    } else {
        transport(l4)
    };
    Labeled {
        bytes: eth.ipv4(ip, l4, payload),
        expect: parsed(eth, Net::V4, t),
    }
}

/// An IPv6 frame.
pub(crate) fn v6(eth: &Eth, ip: &Ipv6, l4: &L4, payload: &[u8]) -> Labeled {
    Labeled {
        bytes: eth.ipv6(ip, l4, payload),
        expect: parsed(eth, Net::V6, transport(l4)),
    }
}

/// An ARP request from `spa` asking for `tpa`.
pub(crate) fn arp_request(eth: &Eth, spa: [u8; 4], tpa: [u8; 4]) -> Labeled {
    let payload = arp(false, eth.src, spa, [0; 6], tpa);
    Labeled {
        bytes: eth.frame(ETH_P_ARP, &payload),
        expect: parsed(eth, Net::Ether(ETH_P_ARP), Transport::None),
    }
}

/// A frame of another ethertype.
pub(crate) fn other(eth: &Eth, ethertype: u16, payload: &[u8]) -> Labeled {
    Labeled {
        bytes: eth.frame(ethertype, payload),
        expect: parsed(eth, Net::Ether(ethertype), Transport::None),
    }
}
