//! Traces for deep packet inspection programs (`hwxdp dpi` objects): frames that carry, for every rule, payloads in
//! which it matches and near misses in which it does not, a match cut over two segments of one flow, matches that
//! end at the last byte the scan looks at and one byte past it, a match sent to a port the rule does not look at,
//! then random payloads.
//!
//! The payloads come from the rules (`hwxdp_dpi::witness`, glued by the CLI); this module puts them in frames:
//! IPv4, IPv6 and VLAN-tagged IPv4 in turn, TCP or UDP by the rule's protocol, each payload to each port the rule
//! looks at. The scan is per packet (no reassembly), so a match split over two segments matches in neither.

use crate::packet::{Eth, Ipv4, Ipv6, Tag, L4, TCP_ACK};
use crate::rng::Rng;
use crate::Workload;

/// The payloads of one rule, as `hwxdp_dpi::witness` makes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DpiRule {
    /// A name for the description.
    pub name: String,
    /// IP protocol number: 6 (TCP) or 17 (UDP).
    pub proto: u8,
    /// Destination ports the rule looks at.
    pub ports: Vec<u16>,
    /// A destination port of its protocol that it does not look at.
    pub other_port: Option<u16>,
    /// Payloads in which it matches.
    pub matching: Vec<Vec<u8>>,
    /// Payloads in which it does not.
    pub missing: Vec<Vec<u8>>,
    /// A match cut in two, neither part matching.
    pub split: Option<(Vec<u8>, Vec<u8>)>,
    /// A payload of exactly the scan limit whose match ends at its last byte.
    pub inside: Option<Vec<u8>>,
    /// A payload one byte longer whose match ends past the scan limit.
    pub outside: Option<Vec<u8>>,
}

/// The rules of a dpi object and its scan limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DpiSpec {
    /// The rules in file order.
    pub rules: Vec<DpiRule>,
    /// Payload bytes the program scans at most.
    pub max_payload: usize,
}

/// What a frame of the trace is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The rule matches its payload.
    Match,
    /// A near miss: the rule does not match.
    Miss,
    /// One of the two segments of a split match.
    Split,
    /// A match ending at the scan limit's last byte.
    Inside,
    /// A match ending one byte past the scan limit.
    Outside,
    /// A matching payload to a port the rule does not look at.
    OtherPort,
    /// Random traffic.
    Random,
}

/// One frame and what it was made for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DpiPacket {
    /// The frame.
    pub bytes: Vec<u8>,
    /// The rule it was made for (`None` for random traffic).
    pub rule: Option<usize>,
    /// Why.
    pub kind: Kind,
}

/// The frames for `spec`: the coverage sequence of every rule in file order, then random payloads up to
/// `packets` frames (fewer: the coverage sequence's first ones). Deterministic from `seed`.
pub fn dpi_trace(spec: &DpiSpec, packets: usize, seed: u64) -> Vec<DpiPacket> {
    let mut rng = Rng::new(seed ^ 0x6470_6900);
    let mut out = Vec::new();
    for (r, rule) in spec.rules.iter().enumerate() {
        coverage(&mut out, r, rule, &mut rng);
    }
    let targets: Vec<(u8, u16)> = spec
        .rules
        .iter()
        .flat_map(|r| {
            r.ports
                .iter()
                .chain(&r.other_port)
                .map(move |&p| (r.proto, p))
        })
        .collect();
    while out.len() < packets && !targets.is_empty() {
        let (proto, port) = targets[rng.below(targets.len())];
        let payload = random_payload(spec, &mut rng);
        let sport = 1024 + rng.below(60_000) as u16;
        let bytes = frame(proto, port, &payload, out.len(), sport);
        out.push(DpiPacket {
            bytes,
            rule: None,
            kind: Kind::Random,
        });
    }
    out.truncate(packets);
    out
}

/// The trace as a [`Workload`] (no preloads: the tables are in the object's `.rodata`).
pub fn dpi_workload(spec: &DpiSpec, packets: usize, seed: u64) -> Workload {
    let trace = dpi_trace(spec, packets, seed);
    let covered = trace.iter().filter(|p| p.kind != Kind::Random).count();
    let limit = |k: Kind| trace.iter().filter(|p| p.kind == k).count();
    let description = format!(
            "dpi trace for {} rules (scan limit {} bytes): {covered} frames of matching payloads, near misses, \
             split matches ({} segments), matches ending at the scan limit ({} inside, {} one byte past) and \
             matches to ports the rule does not look at, over IPv4, IPv6 and VLAN; then random payloads",
            spec.rules.len(),
            spec.max_payload,
            limit(Kind::Split),
            limit(Kind::Inside),
            limit(Kind::Outside),
        );
    Workload {
        packets: trace.into_iter().map(|p| p.bytes).collect(),
        preload: Vec::new(),
        description,
        routes: None,
    }
}

/// Every payload of `rule` (index `r`) in frames.
fn coverage(out: &mut Vec<DpiPacket>, r: usize, rule: &DpiRule, rng: &mut Rng) {
    let mut push =
        |out: &mut Vec<DpiPacket>, port: u16, payload: &[u8], kind: Kind, sport: Option<u16>| {
            let sport = sport.unwrap_or_else(|| 1024 + rng.below(60_000) as u16);
            let bytes = frame(rule.proto, port, payload, out.len(), sport);
            out.push(DpiPacket {
                bytes,
                rule: Some(r),
                kind,
            });
        };
    for (i, m) in rule.matching.iter().enumerate() {
        for &port in &rule.ports {
            push(out, port, m, Kind::Match, None);
        }
        if let Some(miss) = rule.missing.get(i) {
            push(
                out,
                rule.ports[i % rule.ports.len()],
                miss,
                Kind::Miss,
                None,
            );
        }
    }
    for miss in rule.missing.iter().skip(rule.matching.len()) {
        push(out, rule.ports[0], miss, Kind::Miss, None);
    }
    if let Some((a, b)) = &rule.split {
        // Two segments of one flow (the same addresses and ports), back to back.
        for part in [a, b] {
            push(
                out,
                rule.ports[0],
                part,
                Kind::Split,
                Some(40_000 + r as u16),
            );
        }
    }
    for (p, kind) in [(&rule.inside, Kind::Inside), (&rule.outside, Kind::Outside)] {
        if let Some(p) = p {
            push(out, rule.ports[0], p, kind, None);
        }
    }
    if let (Some(port), Some(m)) = (rule.other_port, rule.matching.first()) {
        push(out, port, m, Kind::OtherPort, None);
    }
}

/// Random bytes, printable text, or pieces of the rules' payloads strung together (some past the scan limit).
fn random_payload(spec: &DpiSpec, rng: &mut Rng) -> Vec<u8> {
    let pieces: Vec<&Vec<u8>> = spec
        .rules
        .iter()
        .flat_map(|r| r.matching.iter().chain(&r.missing))
        .collect();
    let mut p = Vec::new();
    match rng.below(4) {
        0 => {
            let len = rng.below(200);
            p = rng.bytes(len);
        }
        1 => p.extend((0..rng.below(300)).map(|_| b' ' + rng.below(95) as u8)),
        2 if !pieces.is_empty() => {
            for _ in 0..1 + rng.below(4) {
                let piece = pieces[rng.below(pieces.len())];
                let cut = piece.len() - rng.below(piece.len() / 2 + 1);
                p.extend_from_slice(&piece[..cut]);
                let len = rng.below(8);
                p.extend(rng.bytes(len));
            }
        }
        _ => {
            // Long: a piece that ends around the scan limit.
            let len = spec.max_payload.saturating_sub(24) + rng.below(48);
            p.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
            if let Some(piece) = rng.pick(&pieces) {
                let at = len.saturating_sub(rng.below(piece.len() + 1));
                p.truncate(at);
                p.extend_from_slice(piece);
            }
        }
    }
    p
}

/// The frame number `n` of the trace carrying `payload` from `sport` to `port`: IPv4, IPv6 and 802.1Q-tagged IPv4
/// in turn.
fn frame(proto: u8, port: u16, payload: &[u8], n: usize, sport: u16) -> Vec<u8> {
    let l4 = if proto == 6 {
        L4::Tcp {
            sport,
            dport: port,
            flags: TCP_ACK | 0x08,
        }
    } else {
        L4::Udp { sport, dport: port }
    };
    let eth = Eth::new([0x02, 0, 0, 0, 0, 1], [0x02, 0, 0, 0, 0, 2]);
    let v4 = Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]);
    match n % 3 {
        0 => eth.ipv4(&v4, &l4, payload),
        1 => {
            let mut src = [0u8; 16];
            src[..2].copy_from_slice(&[0xfd, 0]);
            src[15] = 1;
            let mut dst = src;
            dst[15] = 2;
            eth.ipv6(&Ipv6::new(src, dst), &l4, payload)
        }
        _ => eth.tagged(&[Tag::dot1q(7)]).ipv4(&v4, &l4, payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn spec() -> DpiSpec {
        DpiSpec {
            max_payload: 100,
            rules: vec![
                DpiRule {
                    name: "a".into(),
                    proto: 6,
                    ports: vec![80],
                    other_port: Some(4242),
                    matching: vec![b"GET x".to_vec(), b"GET yy".to_vec()],
                    missing: vec![b"GET".to_vec()],
                    split: Some((b"GE".to_vec(), b"T x".to_vec())),
                    inside: Some(vec![b'a'; 100]),
                    outside: Some(vec![b'a'; 101]),
                },
                DpiRule {
                    name: "b".into(),
                    proto: 17,
                    ports: vec![4242, 53],
                    matching: vec![b"\x00\x01".to_vec()],
                    ..DpiRule::default()
                },
            ],
        }
    }

    /// (protocol, source port, destination port, payload) of a frame, read with etherparse.
    fn read(bytes: &[u8]) -> (u8, u16, u16, Vec<u8>) {
        let p = SlicedPacket::from_ethernet(bytes).expect("a well-formed frame");
        assert!(matches!(
            p.net,
            Some(NetSlice::Ipv4(_)) | Some(NetSlice::Ipv6(_))
        ));
        match p.transport.expect("a transport header") {
            TransportSlice::Tcp(t) => (
                6,
                t.source_port(),
                t.destination_port(),
                t.payload().to_vec(),
            ),
            TransportSlice::Udp(u) => (
                17,
                u.source_port(),
                u.destination_port(),
                u.payload().to_vec(),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_payload_goes_to_its_rules_ports_then_random_traffic_follows() {
        let s = spec();
        let trace = dpi_trace(&s, 60, 5);
        assert_eq!(trace.len(), 60);
        let of = |k: Kind, r: usize| {
            trace
                .iter()
                .filter(|p| p.kind == k && p.rule == Some(r))
                .count()
        };
        // Rule 0: two matches to port 80, one miss, two segments, inside, outside, one to another port.
        assert_eq!(
            (of(Kind::Match, 0), of(Kind::Miss, 0), of(Kind::Split, 0)),
            (2, 1, 2)
        );
        assert_eq!(
            (
                of(Kind::Inside, 0),
                of(Kind::Outside, 0),
                of(Kind::OtherPort, 0)
            ),
            (1, 1, 1)
        );
        // Rule 1: its match to both its ports.
        assert_eq!(of(Kind::Match, 1), 2);
        for p in trace
            .iter()
            .filter(|p| p.kind == Kind::Match && p.rule == Some(1))
        {
            let (proto, _, dport, payload) = read(&p.bytes);
            assert_eq!((proto, payload.as_slice()), (17, &b"\x00\x01"[..]));
            assert!(dport == 4242 || dport == 53);
        }
        let segments: Vec<_> = trace
            .iter()
            .filter(|p| p.kind == Kind::Split)
            .map(|p| read(&p.bytes))
            .collect();
        assert_eq!(segments[0].1, segments[1].1, "one flow");
        assert_eq!(
            [segments[0].3.clone(), segments[1].3.clone()].concat(),
            b"GET x"
        );
        let inside = trace.iter().find(|p| p.kind == Kind::Inside).unwrap();
        assert_eq!(read(&inside.bytes).3.len(), 100);
        assert!(trace[trace.len() - 1].kind == Kind::Random);
        assert_eq!(dpi_trace(&s, 60, 5), trace, "deterministic");
        assert_eq!(dpi_trace(&s, 3, 5), trace[..3].to_vec());
    }
}
