//! Flow traces: packets of a workload turned into `N` flows (distinct 5-tuples) and drawn by popularity, Zipf or
//! uniform. They are what a stateful pipeline's hazards depend on (the eHDL paper, appendix A): how often two packets
//! of one flow follow each other closely.
//!
//! A flow is a template packet of the workload (an IPv4 or IPv6 TCP or UDP frame, possibly VLAN-tagged) with its
//! source address's low bytes and its source port rewritten from the flow's number, checksums updated incrementally
//! (RFC 1624), so every flow keeps the template's path through the program but owns its own map entries.

use crate::rng::Rng;
use thiserror::Error;

/// How packets are spread over flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Popularity {
    /// Flow `i` (from 1) has frequency proportional to `1 / i^exponent` (1.0: the paper's `f_i ∝ 1/i`).
    Zipf {
        /// The exponent `s`.
        exponent: f64,
    },
    /// Every flow equally likely.
    Uniform,
}

/// A flow trace cannot be made.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum FlowError {
    /// No packet of the workload is a well-formed IPv4/IPv6 TCP/UDP frame (of at most the given bytes).
    #[error(
        "no packet of the trace is a well-formed IPv4 or IPv6 TCP/UDP frame{} to make flows from",
        .0.map(|n| format!(" of at most {n} bytes")).unwrap_or_default()
    )]
    NoTemplate(Option<usize>),
    /// Zero flows asked for.
    #[error("a flow trace needs at least one flow")]
    NoFlows,
    /// More flows than source addresses and ports can tell apart.
    #[error("{0} flows: at most {max} can be told apart by source address and port", max = MAX_FLOWS)]
    TooManyFlows(usize),
}

/// Flows are numbered in 32 bits: 16 in the source address, 16 in the source port.
pub const MAX_FLOWS: usize = 1 << 32;

/// Where a frame's IP and transport headers are.
struct Layout {
    /// Offset of the IP header.
    ip: usize,
    v6: bool,
    /// Offset of the TCP/UDP header.
    l4: usize,
    /// Offset of the transport checksum.
    checksum: usize,
    /// UDP over IPv4 with checksum 0: no checksum to update.
    no_checksum: bool,
}

const ETH_HEADER: usize = 14;
const VLAN_TAG: usize = 4;
const TCP: u8 = 6;
const UDP: u8 = 17;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The layout of `frame` when it is an untruncated, unfragmented IPv4/IPv6 TCP/UDP frame.
fn layout(frame: &[u8]) -> Option<Layout> {
    if frame.len() < ETH_HEADER {
        return None;
    }
    let mut at = ETH_HEADER - 2;
    let mut ethertype = Some(be16(frame, at));
    while matches!(ethertype, Some(0x8100 | 0x88a8)) {
        at += VLAN_TAG;
        ethertype = (frame.len() >= at + 2).then(|| be16(frame, at));
    }
    let ip = at + 2;
    let (v6, proto, l4, end) = match ethertype? {
        0x0800 if frame.len() >= ip + 20 => {
            let ihl = 4 * (frame[ip] & 0x0f) as usize;
            let fragmented = be16(frame, ip + 6) & 0x3fff != 0;
            if frame[ip] >> 4 != 4 || ihl < 20 || fragmented {
                return None;
            }
            (
                false,
                frame[ip + 9],
                ip + ihl,
                ip + be16(frame, ip + 2) as usize,
            )
        }
        0x86dd if frame.len() >= ip + 40 => {
            if frame[ip] >> 4 != 6 {
                return None;
            }
            (
                true,
                frame[ip + 6],
                ip + 40,
                ip + 40 + be16(frame, ip + 4) as usize,
            )
        }
        _ => return None,
    };
    let header = match proto {
        TCP => 20,
        UDP => 8,
        _ => return None,
    };
    if end > frame.len() || l4 + header > end {
        return None;
    }
    let checksum = l4 + if proto == TCP { 16 } else { 6 };
    Some(Layout {
        ip,
        v6,
        l4,
        checksum,
        no_checksum: proto == UDP && !v6 && be16(frame, checksum) == 0,
    })
}

/// Replaces the 16-bit word at `at` with `new`, keeping the checksum at `sum` right (RFC 1624, eq. 3).
fn patch(frame: &mut [u8], at: usize, new: u16, sums: &[usize]) {
    let old = be16(frame, at);
    frame[at..at + 2].copy_from_slice(&new.to_be_bytes());
    for &sum in sums {
        let hc = be16(frame, sum);
        let mut s = (!hc as u32) + (!old as u32) + new as u32;
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        frame[sum..sum + 2].copy_from_slice(&(!(s as u16)).to_be_bytes());
    }
}

/// `template` as flow `id`: source address low 16 bits and source port from `id`, checksums updated.
fn as_flow(template: &[u8], l: &Layout, id: u32) -> Vec<u8> {
    let mut frame = template.to_vec();
    let src_low = l.ip + if l.v6 { 8 + 14 } else { 12 + 2 };
    let mut sums = Vec::new();
    if !l.v6 {
        sums.push(l.ip + 10);
    }
    let transport = if l.no_checksum {
        None
    } else {
        Some(l.checksum)
    };
    // The address is in the transport checksum's pseudo-header as well.
    sums.extend(transport);
    patch(&mut frame, src_low, (id as u16).wrapping_add(1), &sums);
    let port = 1024u16.wrapping_add((id >> 16) as u16);
    patch(&mut frame, l.l4, port, &Vec::from_iter(transport));
    if !l.v6 && !l.no_checksum && l.checksum == l.l4 + 6 && be16(&frame, l.checksum) == 0 {
        // A UDP checksum that comes out 0 is sent as all ones (RFC 768).
        frame[l.checksum..l.checksum + 2].copy_from_slice(&[0xff, 0xff]);
    }
    frame
}

/// Cumulative popularity of flows `0..flows`, normalised to 1.
fn cdf(flows: usize, popularity: Popularity) -> Vec<f64> {
    let weights = (1..=flows).map(|i| match popularity {
        Popularity::Zipf { exponent } => (i as f64).powf(-exponent),
        Popularity::Uniform => 1.0,
    });
    let mut acc = 0.0;
    let mut out: Vec<f64> = weights
        .map(|w| {
            acc += w;
            acc
        })
        .collect();
    for c in &mut out {
        *c /= acc;
    }
    out
}

/// `packets` frames over `flows` flows made from the well-formed TCP/UDP frames of `workload` (of at most
/// `max_bytes` bytes, when given: 64 keeps every packet in one 512-bit beat): flow `i` is template `i mod T`,
/// rewritten; each frame's flow is drawn by `popularity` (flow 0 the most popular), deterministic from `seed`. Also
/// returns how many distinct flows the frames hold.
pub fn flow_trace(
    workload: &[Vec<u8>],
    flows: usize,
    popularity: Popularity,
    packets: usize,
    seed: u64,
    max_bytes: Option<usize>,
) -> Result<(Vec<Vec<u8>>, usize), FlowError> {
    if flows == 0 {
        return Err(FlowError::NoFlows);
    }
    if flows > MAX_FLOWS {
        return Err(FlowError::TooManyFlows(flows));
    }
    let templates: Vec<(&Vec<u8>, Layout)> = workload
        .iter()
        .filter(|f| max_bytes.is_none_or(|n| f.len() <= n))
        .filter_map(|f| layout(f).map(|l| (f, l)))
        .collect();
    if templates.is_empty() {
        return Err(FlowError::NoTemplate(max_bytes));
    }
    let cdf = cdf(flows, popularity);
    let mut rng = Rng::new(seed);
    let mut seen = std::collections::HashSet::new();
    let frames = (0..packets)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let id = cdf.partition_point(|&c| c <= u).min(flows - 1);
            seen.insert(id);
            let (template, l) = &templates[id % templates.len()];
            as_flow(template, l, id as u32)
        })
        .collect();
    Ok((frames, seen.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Eth, Ipv4, Ipv6, Tag, L4};
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn templates() -> Vec<Vec<u8>> {
        let eth = Eth::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        vec![
            vec![0xff; 10], // truncated: skipped
            eth.ipv4(
                &Ipv4::new([10, 0, 0, 1], [10, 9, 9, 9]),
                &L4::Tcp {
                    sport: 1,
                    dport: 80,
                    flags: 2,
                },
                b"hello",
            ),
            eth.tagged(&[Tag::dot1q(5)]).ipv4(
                &Ipv4::new([10, 0, 0, 1], [10, 9, 9, 9]),
                &L4::Udp {
                    sport: 1,
                    dport: 53,
                },
                b"q",
            ),
            eth.ipv6(
                &Ipv6::new([0x20; 16], [0x30; 16]),
                &L4::Udp {
                    sport: 1,
                    dport: 53,
                },
                b"six",
            ),
        ]
    }

    /// Checksums verified independently (etherparse recomputes them) and the 5-tuple of each frame.
    fn tuple(frame: &[u8]) -> (Vec<u8>, u16) {
        let p = SlicedPacket::from_ethernet(frame).expect("parses");
        let src = match p.net.expect("ip") {
            NetSlice::Ipv4(ip) => {
                let h = ip.header();
                assert_eq!(
                    h.to_header().calc_header_checksum(),
                    h.header_checksum(),
                    "IPv4 header checksum"
                );
                h.source().to_vec()
            }
            NetSlice::Ipv6(ip) => ip.header().source().to_vec(),
        };
        let sport = match p.transport.expect("l4") {
            TransportSlice::Tcp(t) => t.source_port(),
            TransportSlice::Udp(u) => u.source_port(),
            _ => panic!("not tcp/udp"),
        };
        (src, sport)
    }

    fn transport_checksum_ok(frame: &[u8]) -> bool {
        let l = layout(frame).expect("layout");
        let (src, dst, len) = if l.v6 {
            (l.ip + 8, l.ip + 24, 16)
        } else {
            (l.ip + 12, l.ip + 16, 4)
        };
        let end = if l.v6 {
            l.ip + 40 + be16(frame, l.ip + 4) as usize
        } else {
            l.ip + be16(frame, l.ip + 2) as usize
        };
        let proto = if l.v6 {
            frame[l.ip + 6]
        } else {
            frame[l.ip + 9]
        };
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&frame[src..src + len]);
        pseudo.extend_from_slice(&frame[dst..dst + len]);
        pseudo.extend_from_slice(&[0, proto]);
        pseudo.extend_from_slice(&((end - l.l4) as u16).to_be_bytes());
        let sum = crate::packet::ones_complement_sum(&frame[l.l4..end], 0);
        let sum = crate::packet::ones_complement_sum(&pseudo, sum);
        (sum & 0xffff) as u16 == 0xffff
    }

    #[test]
    fn flows_are_distinct_tuples_with_valid_checksums() {
        let (frames, distinct) =
            flow_trace(&templates(), 1000, Popularity::Uniform, 3000, 7, None).unwrap();
        assert_eq!(frames.len(), 3000);
        let mut tuples = std::collections::HashSet::new();
        for f in &frames {
            assert!(transport_checksum_ok(f), "transport checksum of {f:02x?}");
            tuples.insert(tuple(f));
        }
        assert_eq!(tuples.len(), distinct);
        assert!(
            distinct > 900,
            "3000 uniform draws over 1000 flows: {distinct}"
        );
    }

    #[test]
    fn zipf_favours_the_first_flows_and_one_flow_repeats_one_frame() {
        let (frames, _) = flow_trace(
            &templates(),
            50_000,
            Popularity::Zipf { exponent: 1.0 },
            20_000,
            1,
            None,
        )
        .unwrap();
        let top = frames.iter().filter(|f| **f == frames_of(0)).count();
        // P(flow 0) = 1 / H(50000) ≈ 0.088.
        assert!((1400..2100).contains(&top), "flow 0 drawn {top} times");
        let (single, distinct) =
            flow_trace(&templates(), 1, Popularity::Uniform, 50, 1, Some(64)).unwrap();
        assert_eq!(distinct, 1);
        assert!(single.iter().all(|f| *f == single[0] && f.len() <= 64));
    }

    fn frames_of(id: u32) -> Vec<u8> {
        let t = templates();
        let usable: Vec<_> = t.iter().filter(|f| layout(f).is_some()).collect();
        let f = usable[id as usize % usable.len()];
        as_flow(f, &layout(f).unwrap(), id)
    }

    #[test]
    fn bad_requests_are_errors() {
        assert_eq!(
            flow_trace(&[vec![0; 60]], 10, Popularity::Uniform, 5, 1, None),
            Err(FlowError::NoTemplate(None))
        );
        let err = flow_trace(&templates(), 10, Popularity::Uniform, 5, 1, Some(40)).unwrap_err();
        assert_eq!(err, FlowError::NoTemplate(Some(40)));
        assert!(err.to_string().contains("of at most 40 bytes"), "{err}");
        assert_eq!(
            flow_trace(&templates(), 0, Popularity::Uniform, 5, 1, None),
            Err(FlowError::NoFlows)
        );
    }
}
