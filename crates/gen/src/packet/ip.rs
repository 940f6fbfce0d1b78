//! IPv4 and IPv6 headers.

use super::{internet_checksum, IPPROTO_UDP};

/// An IPv4 header to build; lengths and checksum are computed by [`Ipv4::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Protocol number (set from the L4 header by [`super::Eth::ipv4`]).
    pub proto: u8,
    /// Time to live.
    pub ttl: u8,
    /// Identification.
    pub id: u16,
    /// Flags and fragment offset, as on the wire.
    pub frag: u16,
    /// Options, padded to a multiple of 4 bytes with end-of-options bytes.
    pub options: Vec<u8>,
}

impl Ipv4 {
    /// A header with TTL 64, no options, not fragmented.
    pub fn new(src: [u8; 4], dst: [u8; 4]) -> Self {
        Ipv4 {
            src,
            dst,
            proto: IPPROTO_UDP,
            ttl: 64,
            id: 0,
            frag: 0,
            options: Vec::new(),
        }
    }

    /// The same header with another TTL.
    pub fn ttl(mut self, ttl: u8) -> Self {
        self.ttl = ttl;
        self
    }

    /// The same header with options (a router-alert option plus padding is a typical choice).
    pub fn options(mut self, options: &[u8]) -> Self {
        self.options = options.to_vec();
        while !self.options.len().is_multiple_of(4) {
            self.options.push(0);
        }
        self
    }

    /// The same header with flags and fragment offset (`0x2000` is more-fragments, low 13 bits the offset).
    pub fn frag(mut self, frag: u16) -> Self {
        self.frag = frag;
        self
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        20 + self.options.len().min(40)
    }

    /// The pseudo header for TCP/UDP checksums, its length field zero (the L4 builder fills it).
    pub fn pseudo_header_v4(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(12);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(&[0, self.proto, 0, 0]);
        p
    }

    /// Header followed by `payload`, with total length and checksum filled in.
    pub fn build(&self, payload: &[u8]) -> Vec<u8> {
        let hlen = self.header_len();
        let total = (hlen + payload.len()).min(usize::from(u16::MAX)) as u16;
        let mut h = Vec::with_capacity(hlen + payload.len());
        h.push(0x40 | (hlen / 4) as u8);
        h.push(0);
        h.extend_from_slice(&total.to_be_bytes());
        h.extend_from_slice(&self.id.to_be_bytes());
        h.extend_from_slice(&self.frag.to_be_bytes());
        h.push(self.ttl);
        h.push(self.proto);
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&self.src);
        h.extend_from_slice(&self.dst);
        h.extend_from_slice(&self.options[..hlen - 20]);
        let check = internet_checksum(&h, 0);
        h[10..12].copy_from_slice(&check.to_be_bytes());
        h.extend_from_slice(payload);
        h
    }
}

/// Recomputes the checksum of the IPv4 header at the start of `header` (its IHL says how long it is); does nothing
/// when the header is shorter than its IHL claims.
pub fn ipv4_header_checksum(header: &mut [u8]) {
    let Some(first) = header.first() else { return };
    let hlen = usize::from(first & 0x0f) * 4;
    if hlen < 12 || header.len() < hlen {
        return;
    }
    header[10] = 0;
    header[11] = 0;
    let check = internet_checksum(&header[..hlen], 0);
    header[10..12].copy_from_slice(&check.to_be_bytes());
}

/// An IPv6 header to build (no extension headers); the payload length is computed by [`Ipv6::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ipv6 {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Next header (set from the L4 header by [`super::Eth::ipv6`]).
    pub next_header: u8,
    /// Hop limit.
    pub hop_limit: u8,
}

impl Ipv6 {
    /// A header with hop limit 64.
    pub fn new(src: [u8; 16], dst: [u8; 16]) -> Self {
        Ipv6 {
            src,
            dst,
            next_header: IPPROTO_UDP,
            hop_limit: 64,
        }
    }

    /// The same header with another hop limit.
    pub fn hop_limit(mut self, hop_limit: u8) -> Self {
        self.hop_limit = hop_limit;
        self
    }

    /// The pseudo header for TCP/UDP/ICMPv6 checksums (the upper-layer length is added by the L4 builder).
    pub fn pseudo_header_v6(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(40);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, self.next_header]);
        p
    }

    /// Header followed by `payload`.
    pub fn build(&self, payload: &[u8]) -> Vec<u8> {
        let len = payload.len().min(usize::from(u16::MAX)) as u16;
        let mut h = Vec::with_capacity(40 + payload.len());
        h.extend_from_slice(&[0x60, 0, 0, 0]);
        h.extend_from_slice(&len.to_be_bytes());
        h.push(self.next_header);
        h.push(self.hop_limit);
        h.extend_from_slice(&self.src);
        h.extend_from_slice(&self.dst);
        h.extend_from_slice(payload);
        h
    }
}
