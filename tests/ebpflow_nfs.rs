//! The eBPFlow thesis's network functions (Table 5.1) as the example programs of `examples/ebpflow/` (wire, stateful
//! firewall, LPM forwarding, DDoS mitigation) and the regex ones of `examples/dpi/` (BitTorrent, SQL injection by
//! tautology and with sleep, and snort): each on a short trace over the NIC's 4 ports, checked packet by packet
//! against what the function is meant to do (verdict and output port on `--backend ebpflow`, 4 ports x 4 engines, the
//! rewritten bytes where it rewrites), then verified against the kernel on `--backend interp`, `hxdp` and `ebpflow`
//! with 0 differences. Traces are built here (`hwxdp_gen::packet`) where a function needs a particular mix, e.g.
//! connections opened from the inside and their replies for the firewall; `hwxdp gen` writes the rest.

mod support;

use hwxdp_gen::packet::{arp, Eth, Ipv4, Ipv6, ETH_P_ARP, L4, TCP_ACK, TCP_SYN};
use support::{hwxdp, repo_root, require_kernel, scratch_dir};

/// The NIC's ports: ifindex 1 + p is port p (`--ifindex` 1, the default).
const PORTS: u32 = 4;

/// What a packet should come to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// XDP_REDIRECT to this ifindex.
    Out(u32),
    /// XDP_PASS (the host queue).
    Pass,
    /// XDP_DROP.
    Drop,
}

/// A frame of a hand-made trace: the port it arrives on, its bytes, what it should come to.
struct Packet {
    port: u32,
    bytes: Vec<u8>,
    expect: Expect,
}

impl Packet {
    fn new(port: u32, bytes: Vec<u8>, expect: Expect) -> Self {
        Packet {
            port,
            bytes,
            expect,
        }
    }
}

/// The ifindex of the port paired with `port` (examples/ebpflow/nf.h): 0 <-> 1, 2 <-> 3.
fn peer(port: u32) -> Expect {
    Expect::Out((port ^ 1) + 1)
}

/// The object of `examples/<dir>/<name>` as `make examples` builds it.
fn object(dir: &str, name: &str) -> String {
    let path = repo_root().join(format!("build/examples/{dir}/{name}.o"));
    assert!(
        path.exists(),
        "{} is missing: run `make examples` (make test does)",
        path.display()
    );
    path.display().to_string()
}

fn eth() -> Eth {
    Eth::new([0x02, 0, 0, 0, 0, 0xaa], [0x02, 0, 0, 0, 0, 0xbb])
}

fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let l4 = L4::Tcp {
        sport,
        dport,
        flags,
    };
    eth().ipv4(&Ipv4::new(src, dst), &l4, payload)
}

fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    eth().ipv4(&Ipv4::new(src, dst), &L4::Udp { sport, dport }, payload)
}

fn icmp(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let l4 = L4::IcmpEcho {
        reply: false,
        id: 7,
        seq: 1,
    };
    eth().ipv4(&Ipv4::new(src, dst), &l4, b"ping")
}

fn arp_frame() -> Vec<u8> {
    let a = arp(
        false,
        [0x02, 0, 0, 0, 0, 0xbb],
        [10, 0, 0, 1],
        [0; 6],
        [10, 0, 0, 2],
    );
    eth().frame(ETH_P_ARP, &a)
}

/// An IPv4 frame cut in its IP header (frames shorter than an Ethernet header are not run at all).
fn truncated_ipv4() -> Vec<u8> {
    let mut frame = udp([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"");
    frame.truncate(14 + 12);
    frame
}

fn ipv6_frame() -> Vec<u8> {
    let ip = Ipv6::new([0xfd; 16], [0xfe; 16]);
    eth().ipv6(&ip, &L4::Udp { sport: 1, dport: 2 }, b"six")
}

/// Writes `packets` as a pcapng file with an interface per port, each packet on its own port's.
fn write_trace(path: &str, packets: &[Packet]) {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    use pcap_file::pcapng::PcapNgWriter;
    let file = std::fs::File::create(path).expect("create the trace");
    let mut writer = PcapNgWriter::new(file).expect("pcapng header");
    for _ in 0..PORTS {
        let idb = InterfaceDescriptionBlock {
            linktype: pcap_file::DataLink::ETHERNET,
            snaplen: 65535,
            options: Vec::new(),
        };
        writer.write_pcapng_block(idb).expect("interface block");
    }
    for (i, p) in packets.iter().enumerate() {
        let epb = EnhancedPacketBlock {
            interface_id: p.port,
            timestamp: std::time::Duration::from_micros(i as u64),
            original_len: p.bytes.len() as u32,
            data: std::borrow::Cow::Borrowed(&p.bytes),
            options: Vec::new(),
        };
        writer.write_pcapng_block(epb).expect("packet block");
    }
}

/// The frames of a pcap file `hwxdp run` wrote; none when it wrote none.
fn read_pcap(path: &str) -> Vec<Vec<u8>> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut reader = pcap_file::pcap::PcapReader::new(file).expect("a pcap header");
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        frames.push(packet.expect("a pcap record").data.into_owned());
    }
    frames
}

/// `hwxdp verify OBJ TRACE` on the reference machine, the hXDP model and the eBPFlow model (4 x 4) against the
/// kernel: every backend reports all `packets` identical (verdicts, bytes, maps).
fn verify_everywhere(obj: &str, trace: &[&str], packets: usize) {
    require_kernel();
    let mut args = vec!["verify", obj];
    args.extend(trace);
    args.extend([
        "--backend",
        "interp",
        "--backend",
        "hxdp",
        "--backend",
        "ebpflow",
    ]);
    args.extend([
        "--ports",
        "4",
        "--engines-per-port",
        "4",
        "--clock-mhz",
        "166.67",
    ]);
    let verify = hwxdp(&args);
    assert!(verify.ok, "{}", verify.all);
    let want = format!("{packets} packets identical");
    for backend in ["interp", "hxdp", "ebpflow"] {
        let line = verify
            .stdout
            .lines()
            .find(|l| l.contains(&format!("; {backend}:")))
            .unwrap_or_else(|| panic!("no report of {backend}:\n{}", verify.all));
        assert!(
            line.contains(&want) && line.contains("maps identical"),
            "{backend}: {line}\n{}",
            verify.all
        );
    }
}

/// What `hwxdp run --backend ebpflow -o OUT` logged: per packet its verdict as an [`Expect`].
fn ebpflow_outcomes(obj: &str, trace: &[&str], out: &str) -> Vec<Expect> {
    let mut args = vec!["run", obj];
    args.extend(trace);
    args.extend([
        "--backend",
        "ebpflow",
        "--ports",
        "4",
        "--engines-per-port",
        "4",
    ]);
    args.extend(["-o", out]);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    let log = std::fs::read_to_string(format!("{out}/packets.jsonl")).expect("packets.jsonl");
    log.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            match v["verdict"].as_str().expect("a verdict") {
                "XDP_REDIRECT" => {
                    Expect::Out(v["redirect"]["ifindex"].as_u64().expect("ifindex") as u32)
                }
                "XDP_PASS" => Expect::Pass,
                "XDP_DROP" => Expect::Drop,
                other => panic!("packet {l}: unexpected verdict {other}"),
            }
        })
        .collect()
}

/// Runs hand-made `packets` through `obj`: on `--backend ebpflow` each comes to what it should and leaves by that
/// port's TX queue (a redirect to a port of the NIC); then the same trace against the kernel everywhere. Returns the
/// ebpflow run's directory.
fn check(obj: &str, tag: &str, packets: &[Packet], maps: Option<&str>) -> String {
    let dir = scratch_dir(&format!("ebpflow-nfs-{tag}"));
    let pcap = format!("{dir}/trace.pcapng");
    write_trace(&pcap, packets);
    let mut trace = vec!["--pcap", pcap.as_str()];
    if let Some(m) = maps {
        trace.extend(["--maps", m]);
    }
    let out = format!("{dir}/ebpflow");
    let got = ebpflow_outcomes(obj, &trace, &out);
    assert_eq!(got.len(), packets.len(), "{tag}: packets lost");
    for (i, (p, g)) in packets.iter().zip(&got).enumerate() {
        assert_eq!(p.expect, *g, "{tag}: packet {i} (port {})", p.port);
    }
    for q in 0..PORTS {
        let meant = got.iter().filter(|g| **g == Expect::Out(q + 1)).count();
        let sent = read_pcap(&format!("{out}/queues/tx{q}.pcap")).len();
        assert_eq!(meant, sent, "{tag}: TX queue {q}");
    }
    verify_everywhere(obj, &trace, packets.len());
    out
}

/// Each verdict of `packets` at least once, so a function that always forwards (or drops) cannot pass.
fn assert_mixed(packets: &[Packet], kinds: &[fn(&Expect) -> bool]) {
    for (k, kind) in kinds.iter().enumerate() {
        assert!(
            packets.iter().any(|p| kind(&p.expect)),
            "the trace lacks outcome {k}"
        );
    }
}

fn is_out(e: &Expect) -> bool {
    matches!(e, Expect::Out(_))
}

fn is_drop(e: &Expect) -> bool {
    *e == Expect::Drop
}

fn is_pass(e: &Expect) -> bool {
    *e == Expect::Pass
}

#[test]
fn wire_sends_every_packet_out_of_the_paired_port() {
    let obj = object("ebpflow", "wire");
    let dir = scratch_dir("ebpflow-nfs-wire-gen");
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "400", "--ports", "4"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcapng");
    let got = ebpflow_outcomes(&obj, &["--pcap", &pcap], &format!("{dir}/ebpflow"));
    assert_eq!(got.len(), 400);
    // gen --ports 4: packet i arrives on port i mod 4.
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, peer(i as u32 % PORTS), "packet {i}");
    }
    for q in 0..PORTS {
        let sent = read_pcap(&format!("{dir}/ebpflow/queues/tx{q}.pcap")).len();
        assert_eq!(sent, 100, "TX queue {q}");
    }
    verify_everywhere(&obj, &["--pcap", &pcap], 400);
}

/// Connections opened from the inside ports (0 and 2) and their replies on the paired outside ports, then what the
/// firewall must keep out or hand to the host.
fn firewall_trace() -> Vec<Packet> {
    let mut t = Vec::new();
    for c in 0..40u8 {
        let (inside, outside) = if c % 2 == 0 { (0, 1) } else { (2, 3) };
        let host = [10, 0, c, 1];
        let server = [203, 0, 113, c + 1];
        let sport = 10_000 + u16::from(c);
        if c % 4 == 3 {
            // UDP: a query and its answer.
            t.push(Packet::new(
                inside,
                udp(host, server, sport, 53, b"q"),
                peer(inside),
            ));
            t.push(Packet::new(
                outside,
                udp(server, host, 53, sport, b"a"),
                peer(outside),
            ));
            continue;
        }
        // A reply that comes before its connection is opened is dropped; after, it passes.
        t.push(Packet::new(
            outside,
            tcp(server, host, 80, sport, TCP_ACK, b""),
            Expect::Drop,
        ));
        t.push(Packet::new(
            inside,
            tcp(host, server, sport, 80, TCP_SYN, b""),
            peer(inside),
        ));
        t.push(Packet::new(
            outside,
            tcp(server, host, 80, sport, TCP_SYN | TCP_ACK, b""),
            peer(outside),
        ));
        t.push(Packet::new(
            inside,
            tcp(host, server, sport, 80, TCP_ACK, b"GET /"),
            peer(inside),
        ));
        // The same hosts on another port, or the other protocol: not this connection.
        t.push(Packet::new(
            outside,
            tcp(server, host, 81, sport, TCP_ACK, b""),
            Expect::Drop,
        ));
        t.push(Packet::new(
            outside,
            udp(server, host, 80, sport, b""),
            Expect::Drop,
        ));
    }
    t.push(Packet::new(
        1,
        tcp([198, 51, 100, 9], [10, 0, 9, 9], 4444, 22, TCP_SYN, b""),
        Expect::Drop,
    ));
    t.push(Packet::new(
        0,
        icmp([10, 0, 0, 1], [203, 0, 113, 1]),
        peer(0),
    ));
    t.push(Packet::new(
        3,
        icmp([203, 0, 113, 1], [10, 0, 0, 1]),
        Expect::Drop,
    ));
    t.push(Packet::new(0, arp_frame(), Expect::Pass));
    t.push(Packet::new(1, ipv6_frame(), Expect::Pass));
    let mut short = tcp([10, 0, 0, 1], [203, 0, 113, 1], 1, 2, TCP_SYN, b"");
    short.truncate(14 + 20 + 10);
    t.push(Packet::new(2, short, Expect::Drop));
    t.push(Packet::new(3, truncated_ipv4(), Expect::Drop));
    t
}

#[test]
fn stateful_firewall_lets_in_only_replies_to_connections_opened_inside() {
    let obj = object("ebpflow", "stateful_firewall");
    let trace = firewall_trace();
    assert_mixed(&trace, &[is_out, is_drop, is_pass]);
    check(&obj, "firewall", &trace, None);
    // And the generic mix over 4 ports.
    let dir = scratch_dir("ebpflow-nfs-firewall-gen");
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "300", "--ports", "4"]);
    assert!(gen.ok, "{}", gen.all);
    verify_everywhere(&obj, &["--pcap", &format!("{dir}/trace.pcapng")], 300);
}

/// `examples/ebpflow/lpm_forward.maps.json`.
fn lpm_maps() -> String {
    repo_root()
        .join("examples/ebpflow/lpm_forward.maps.json")
        .display()
        .to_string()
}

#[test]
fn lpm_forward_rewrites_the_macs_and_forwards_by_the_longest_prefix() {
    let obj = object("ebpflow", "lpm_forward");
    // Destination, and the route's port (lpm_forward.maps.json): /8, /9 and /10 nested in 10/8, 203.0.0.0/17; a
    // route to port 5, which out_ports lacks; no route.
    let cases: [([u8; 4], Option<u32>); 8] = [
        ([10, 1, 2, 3], Some(1)),
        ([10, 200, 0, 1], Some(2)),
        ([10, 70, 0, 1], Some(3)),
        ([10, 127, 255, 255], Some(3)),
        ([10, 128, 0, 0], Some(2)),
        ([203, 0, 5, 5], Some(0)),
        ([198, 51, 100, 7], None),
        ([203, 0, 200, 1], None),
    ];
    let mut trace = Vec::new();
    for i in 0..200u32 {
        let (dst, port) = cases[i as usize % cases.len()];
        let expect = port.map_or(Expect::Drop, |p| Expect::Out(p + 1));
        let frame = udp([192, 0, 2, i as u8], dst, 1000, 2000, b"payload");
        trace.push(Packet::new(i % PORTS, frame, expect));
    }
    trace.push(Packet::new(0, arp_frame(), Expect::Pass));
    trace.push(Packet::new(1, ipv6_frame(), Expect::Pass));
    trace.push(Packet::new(2, truncated_ipv4(), Expect::Drop));
    let maps = lpm_maps();
    let out = check(&obj, "lpm", &trace, Some(&maps));
    // Every forwarded frame carries its route's MAC addresses: 02:00:00:00:10:<port>, 02:00:00:00:00:<port>.
    for q in 0..PORTS {
        for frame in read_pcap(&format!("{out}/queues/tx{q}.pcap")) {
            let port = q as u8;
            assert_eq!(
                frame[..12],
                [2, 0, 0, 0, 0x10, port, 2, 0, 0, 0, 0, port],
                "TX queue {q}"
            );
        }
    }
    // The generic mix over 4 ports.
    let dir = scratch_dir("ebpflow-nfs-lpm-gen");
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "300", "--ports", "4"]);
    assert!(gen.ok, "{}", gen.all);
    verify_everywhere(
        &obj,
        &["--pcap", &format!("{dir}/trace.pcapng"), "--maps", &maps],
        300,
    );
}

/// UDP sources over their budget (16 packets, examples/ebpflow/ddos.c), sources under it, other traffic.
fn ddos_trace() -> Vec<Packet> {
    let mut t = Vec::new();
    let mut sent = std::collections::HashMap::new();
    for i in 0..300u32 {
        let port = i % PORTS;
        // Source 1 floods, sources 2..6 send 1 packet in 5 and stay near the budget, 7.. are new each time.
        let src = match i % 10 {
            0..=4 => [198, 51, 100, 1],
            5..=7 => [198, 51, 100, 2 + (i / 10 % 5) as u8],
            _ => [192, 0, 2, (i / 10) as u8],
        };
        if i % 25 == 24 {
            // TCP from the flooding source is not counted.
            t.push(Packet::new(
                port,
                tcp(src, [10, 0, 0, 1], 1, 80, TCP_SYN, b""),
                peer(port),
            ));
            continue;
        }
        let n = sent.entry(src).or_insert(0u32);
        *n += 1;
        let expect = if *n > 16 { Expect::Drop } else { peer(port) };
        t.push(Packet::new(
            port,
            udp(src, [10, 0, 0, 1], 40_000, 53, b"x"),
            expect,
        ));
    }
    t.push(Packet::new(0, arp_frame(), peer(0)));
    t.push(Packet::new(
        1,
        icmp([198, 51, 100, 1], [10, 0, 0, 1]),
        peer(1),
    ));
    t.push(Packet::new(2, truncated_ipv4(), Expect::Drop));
    t
}

#[test]
fn ddos_drops_the_udp_of_sources_over_their_budget() {
    let obj = object("ebpflow", "ddos");
    let trace = ddos_trace();
    assert_mixed(&trace, &[is_out, is_drop]);
    check(&obj, "ddos", &trace, None);
    // gen --flows: the generic mix's frames over 24 zipf-popular flows, so popular sources run over the budget.
    let dir = scratch_dir("ebpflow-nfs-ddos-gen");
    let gen = hwxdp(&[
        "gen", &obj, "-o", &dir, "-n", "300", "--ports", "4", "--flows", "24",
    ]);
    assert!(gen.ok, "{}", gen.all);
    verify_everywhere(&obj, &["--pcap", &format!("{dir}/trace.pcapng")], 300);
}

/// Payloads for the DPI examples and which of them drop each (by object name); the rest pass.
fn dpi_payloads() -> Vec<(bool, u16, Vec<u8>, &'static [&'static str])> {
    let tcp80 = |p: &[u8], drops: &'static [&'static str]| (true, 80, p.to_vec(), drops);
    let mut handshake = vec![19u8];
    handshake.extend_from_slice(b"BitTorrent protocol");
    handshake.extend_from_slice(&[0; 8]);
    vec![
        tcp80(
            b"GET /users?id=' OR 1=1 HTTP/1.1\r\n\r\n",
            &["sql_tautology"],
        ),
        tcp80(b"name=\"  or 1 = 1 --", &["sql_tautology"]),
        tcp80(b"GET /users?id=42 HTTP/1.1\r\nHost: a\r\n\r\n", &[]),
        tcp80(b"it's or 12=1 nothing", &[]),
        tcp80(
            b"GET / HTTP/1.1\r\nUser-Agent: x'; SLEEP(5)\r\n\r\n",
            &["sql_sleep"],
        ),
        tcp80(
            b"GET / HTTP/1.1\r\nUser-Agent: curl\r\nX: sleep(1)\r\n\r\n",
            &[],
        ),
        tcp80(
            b"GET /announce?info_hash=abc HTTP/1.0\r\n\r\n",
            &["bittorrent"],
        ),
        (true, 6881, handshake, &["bittorrent"]),
        (
            false,
            6881,
            b"d1:ad2:id20:abcdefghij0123456789e".to_vec(),
            &["bittorrent"],
        ),
        (
            false,
            53,
            b"\x00\x00\x04\x17\x27\x10\x19\x80\x00\x00\x00\x00".to_vec(),
            &["bittorrent"],
        ),
        (false, 53, b"an ordinary datagram".to_vec(), &[]),
    ]
}

#[test]
fn dpi_examples_on_ebpflow_drop_what_their_rules_match() {
    for name in ["bittorrent", "sql_tautology", "sql_sleep", "snort"] {
        let obj = object("dpi", name);
        let mut trace = Vec::new();
        for i in 0..120u32 {
            let payloads = dpi_payloads();
            let (is_tcp, dport, payload, drops) = &payloads[i as usize % payloads.len()];
            let (src, dst) = ([192, 0, 2, 1 + i as u8], [10, 0, 0, 80]);
            let frame = if *is_tcp {
                tcp(src, dst, 40_000, *dport, TCP_ACK, payload)
            } else {
                udp(src, dst, 40_000, *dport, payload)
            };
            let expect = if drops.contains(&name) {
                Expect::Drop
            } else {
                Expect::Pass
            };
            trace.push(Packet::new(i % PORTS, frame, expect));
        }
        if name == "snort" {
            // snort.rules has rules of its own: checked against the kernel only.
            let dir = scratch_dir("ebpflow-nfs-dpi-snort");
            let pcap = format!("{dir}/trace.pcapng");
            write_trace(&pcap, &trace);
            verify_everywhere(&obj, &["--pcap", &pcap], trace.len());
            continue;
        }
        assert_mixed(&trace, &[is_drop, is_pass]);
        check(&obj, &format!("dpi-{name}"), &trace, None);
    }
}
