//! `hwxdp dpi` end to end: each example of examples/dpi compiled by the binary, run on the reference machine over
//! thousands of frames (crafted and random payloads, every port class, IPv4, IPv6 and VLAN, payloads past the scan
//! limit), every verdict and hit counter compared with what the `regex` crate says of the scanned payload; then the
//! same trace verified against the kernel on the reference machine, the hXDP model and eBPFlow. The same again for
//! the trace `hwxdp gen` makes of the object, in which every rule must be hit.

mod support;

use hwxdp_dpi::{Action, Proto, Rule, Scope};
use regex::bytes::{Regex, RegexBuilder};
use support::{hwxdp, identical_count, repo_root, require_kernel, scratch_dir};

/// The scan limit the examples are built with (`hwxdp dpi`'s default).
const MAX_PAYLOAD: usize = 1500;

/// xorshift64*, so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One test frame and what it carries.
struct Frame {
    bytes: Vec<u8>,
    proto: Proto,
    dport: u16,
    payload: Vec<u8>,
}

/// Ethernet (optionally a VLAN tag), IPv4 or IPv6, TCP or UDP to `dport`, then `payload`.
fn frame(proto: Proto, dport: u16, payload: &[u8], ipv6: bool, vlan: bool) -> Frame {
    let mut l4 = Vec::new();
    l4.extend_from_slice(&40000u16.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    match proto {
        Proto::Tcp => {
            l4.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        }
        Proto::Udp => {
            l4.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
            l4.extend_from_slice(&[0, 0]);
        }
    }
    l4.extend_from_slice(payload);
    let mut bytes = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    if vlan {
        bytes.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    }
    if ipv6 {
        bytes.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        bytes.extend_from_slice(&(l4.len() as u16).to_be_bytes());
        bytes.extend_from_slice(&[proto.number(), 64]);
        bytes.extend_from_slice(&[0xfd; 16]);
        bytes.extend_from_slice(&[0xfe; 16]);
    } else {
        bytes.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        bytes.extend_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
        bytes.extend_from_slice(&[
            0,
            1,
            0x40,
            0,
            64,
            proto.number(),
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2,
        ]);
    }
    bytes.extend_from_slice(&l4);
    Frame {
        bytes,
        proto,
        dport,
        payload: payload.to_vec(),
    }
}

/// A classic pcap file of `frames`.
fn write_pcap(path: &str, frames: &[Frame]) {
    let mut out = Vec::new();
    for word in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    // The two 16-bit version fields were written as one word: major 2, minor 4, little-endian.
    out[4..8].copy_from_slice(&[2, 0, 4, 0]);
    for (i, f) in frames.iter().enumerate() {
        let len = f.bytes.len() as u32;
        for word in [1_700_000_000u32, i as u32, len, len] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&f.bytes);
    }
    std::fs::write(path, out).expect("write the trace");
}

/// The bytes of the payload a rule's patterns are matched against (docs/dpi.md).
fn regions<'a>(scope: &Scope, window: &'a [u8]) -> Vec<&'a [u8]> {
    let line_end = |s: &'a [u8]| {
        &s[..s
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap_or(s.len())]
    };
    match scope {
        Scope::Payload => vec![window],
        Scope::RequestLine => vec![line_end(window)],
        Scope::Header(name) => window
            .split(|&b| b == b'\n')
            .filter(|l| {
                l.len() > name.len() && l[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            })
            .filter(|l| l[name.len()] == b':')
            .map(|l| line_end(&l[name.len() + 1..]))
            .collect(),
    }
}

/// What `regex` says: per rule whether it matches the frame, and the verdict (XDP_DROP 1, XDP_PASS 2).
fn reference(rules: &[Rule], regexes: &[Vec<Regex>], f: &Frame, limit: usize) -> (Vec<bool>, u32) {
    let window = &f.payload[..f.payload.len().min(limit)];
    let mut verdict = None;
    let mut matched = vec![false; rules.len()];
    for (r, rule) in rules.iter().enumerate() {
        if rule.proto != f.proto || rule.dport.is_some_and(|p| p != f.dport) {
            continue;
        }
        let all = regexes[r].iter().all(|re| {
            regions(&rule.scope, window)
                .iter()
                .any(|region| re.is_match(region))
        });
        matched[r] = all;
        if all && verdict.is_none() {
            verdict = match rule.action {
                Action::Drop => Some(1),
                Action::Pass => Some(2),
                Action::Count => None,
            };
        }
    }
    (matched, verdict.unwrap_or(2))
}

/// Payloads: the crafted ones, random ones built from pieces, and long ones with a piece around the scan limit.
fn payloads(rng: &mut Rng, crafted: &[&[u8]], count: usize, limit: usize) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = crafted.iter().map(|c| c.to_vec()).collect();
    let filler = [
        &b" "[..],
        b"\r\n",
        b"\n",
        b"'",
        b"=",
        b"1",
        b"User-Agent: ",
        b"GET /",
        b"x",
    ];
    for n in 0..count {
        let mut p = Vec::new();
        if n % 10 == 9 {
            // Past the limit: a crafted piece that starts or ends near the scan limit.
            let piece = crafted[rng.below(crafted.len())];
            let at = limit - piece.len() + rng.below(2 * piece.len());
            p.extend((0..at).map(|_| b'a' + rng.below(26) as u8));
            p.extend_from_slice(piece);
        } else {
            for _ in 0..rng.below(8) {
                match rng.below(4) {
                    0 => p.push(rng.next() as u8),
                    1 => p.extend_from_slice(filler[rng.below(filler.len())]),
                    _ => {
                        let piece = crafted[rng.below(crafted.len())];
                        let cut = piece.len() - rng.below(piece.len() / 2 + 1);
                        p.extend_from_slice(&piece[..cut]);
                    }
                }
            }
        }
        out.push(p);
    }
    out
}

/// The trace for `rules`: each payload in turn to each port a rule names and to a port none does, over IPv4, IPv6
/// and VLAN-tagged IPv4, TCP or UDP by the rules' protocols.
fn frames(rules: &[Rule], payloads: &[Vec<u8>]) -> Vec<Frame> {
    let mut targets: Vec<(Proto, u16)> = rules
        .iter()
        .map(|r| (r.proto, r.dport.unwrap_or(4242)))
        .collect();
    targets.extend(rules.iter().map(|r| (r.proto, 31337)));
    targets.sort();
    targets.dedup();
    payloads
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (proto, port) = targets[i % targets.len()];
            frame(proto, port, p, i % 7 == 3, i % 5 == 2)
        })
        .collect()
}

/// Builds `example` with `hwxdp dpi`, runs the trace, checks every verdict and counter, then verifies it.
fn check_example(example: &str, crafted: &[&[u8]]) {
    check_built(example, crafted, &[], MAX_PAYLOAD);
}

/// [`check_example`] with more `hwxdp dpi` arguments and the scan limit they set.
fn check_built(example: &str, crafted: &[&[u8]], args: &[&str], limit: usize) {
    let dir = scratch_dir(&format!("dpi-{example}-{}", args.join("")));
    let rules_path = repo_root().join(format!("examples/dpi/{example}.rules"));
    let text = std::fs::read_to_string(&rules_path).expect("the example's rules");
    let rules = hwxdp_dpi::parse::parse_rules(&text).expect("the rules parse");
    let obj = format!("{dir}/{example}.o");
    let rules_arg = rules_path.display().to_string();
    let mut command = vec!["dpi", &rules_arg, "-o", &obj];
    command.extend_from_slice(args);
    let built = hwxdp(&command);
    assert!(built.ok, "{}", built.all);
    // eBPFlow's instruction memory (4096 slots) holds the table form; the branch form at 1500 bytes is longer, and
    // refused with that reason.
    let branch = built.stdout.contains("fast scan: branch form");
    let regexes: Vec<Vec<Regex>> = rules
        .iter()
        .map(|r| {
            r.patterns
                .iter()
                .map(|p| {
                    RegexBuilder::new(&p.to_regex())
                        .unicode(false)
                        .build()
                        .unwrap()
                })
                .collect()
        })
        .collect();
    let mut rng = Rng(0x5eed ^ example.len() as u64);
    let frames = frames(&rules, &payloads(&mut rng, crafted, 2000, limit));
    let pcap = format!("{dir}/trace.pcap");
    write_pcap(&pcap, &frames);
    let out = format!("{dir}/run");
    let run = hwxdp(&["run", &obj, "--pcap", &pcap, "-o", &out, "--dump-maps"]);
    assert!(run.ok, "{}", run.all);
    let log = std::fs::read_to_string(format!("{out}/packets.jsonl")).unwrap();
    let mut hits = vec![0u64; rules.len()];
    let mut drops = 0;
    for (f, line) in frames.iter().zip(log.lines()) {
        let (matched, verdict) = reference(&rules, &regexes, f, limit);
        let got: serde_json::Value = serde_json::from_str(line).unwrap();
        let want = if verdict == 1 { "XDP_DROP" } else { "XDP_PASS" };
        assert_eq!(
            got["verdict"],
            want,
            "{example}: {:?} port {}: payload {:?}",
            f.proto,
            f.dport,
            String::from_utf8_lossy(&f.payload)
        );
        drops += usize::from(verdict == 1);
        for (h, m) in hits.iter_mut().zip(matched) {
            *h += u64::from(m);
        }
    }
    assert_eq!(log.lines().count(), frames.len());
    assert_eq!(
        dumped_hits(&format!("{out}/maps.json")),
        hits,
        "{example}: dpi_hits per rule"
    );
    assert!(
        hits.iter().all(|&h| h > 0),
        "{example}: every rule matches some frame: {hits:?}"
    );
    assert!(
        drops > 0 && drops < frames.len(),
        "{example}: {drops} of {} dropped",
        frames.len()
    );
    if branch {
        verify_on(example, &obj, &pcap, frames.len(), &["interp", "hxdp"]);
        let e = hwxdp(&["verify", &obj, "--pcap", &pcap, "--backend", "ebpflow"]);
        assert!(
            !e.ok && e.stderr.contains("the instruction memory holds 4096"),
            "{}",
            e.all
        );
    } else {
        verify(example, &obj, &pcap, frames.len());
    }
    check_gen_trace(example, &obj, &rules, &regexes, limit, &dir, branch);
}

/// The trace `hwxdp gen` makes for the object (from the rules it carries): every verdict and counter is what `regex`
/// says, every rule is hit, and the reference machine and eBPFlow agree with the kernel.
fn check_gen_trace(
    example: &str,
    obj: &str,
    rules: &[Rule],
    regexes: &[Vec<Regex>],
    limit: usize,
    dir: &str,
    branch: bool,
) {
    let gen_dir = format!("{dir}/gen");
    let made = hwxdp(&["gen", obj, "-o", &gen_dir, "-n", "1500", "--seed", "3"]);
    assert!(made.ok, "{}", made.all);
    assert!(made.stdout.contains("dpi trace for"), "{}", made.all);
    let pcap = format!("{gen_dir}/trace.pcap");
    let frames: Vec<Frame> = read_pcap(&pcap).iter().map(|b| parse(b)).collect();
    assert_eq!(frames.len(), 1500);
    let out = format!("{dir}/gen-run");
    let run = hwxdp(&["run", obj, "--pcap", &pcap, "-o", &out, "--dump-maps"]);
    assert!(run.ok, "{}", run.all);
    let log = std::fs::read_to_string(format!("{out}/packets.jsonl")).unwrap();
    let mut hits = vec![0u64; rules.len()];
    let mut at_limit = 0;
    for (f, line) in frames.iter().zip(log.lines()) {
        let (matched, verdict) = reference(rules, regexes, f, limit);
        let got: serde_json::Value = serde_json::from_str(line).unwrap();
        let want = if verdict == 1 { "XDP_DROP" } else { "XDP_PASS" };
        assert_eq!(
            got["verdict"],
            want,
            "{example}: gen frame {:?}",
            String::from_utf8_lossy(&f.payload)
        );
        at_limit += usize::from(f.payload.len() == limit || f.payload.len() == limit + 1);
        for (h, m) in hits.iter_mut().zip(matched) {
            *h += u64::from(m);
        }
    }
    assert_eq!(
        dumped_hits(&format!("{out}/maps.json")),
        hits,
        "{example}: gen trace dpi_hits"
    );
    assert!(
        hits.iter().all(|&h| h > 0),
        "{example}: every rule is hit by the gen trace: {hits:?}"
    );
    assert!(at_limit > 0, "{example}: payloads at the scan limit");
    // The crafted trace has been verified on hXDP too; its compiler takes minutes on the branch form in a debug build.
    let backends: &[&str] = if branch {
        &["interp"]
    } else {
        &["interp", "ebpflow"]
    };
    verify_on(example, obj, &pcap, frames.len(), backends);
}

/// The frames of a pcap file `hwxdp gen` wrote.
fn read_pcap(path: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).expect("the trace");
    // Either byte order: the magic number (microsecond or nanosecond) says which.
    let big = matches!(
        bytes[..4],
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d]
    );
    let word = |b: &[u8]| {
        let b: [u8; 4] = b.try_into().unwrap();
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = word(&bytes[at + 8..at + 12]) as usize;
        out.push(bytes[at + 16..at + 16 + len].to_vec());
        at += 16 + len;
    }
    out
}

/// A frame's protocol, destination port and payload, parsed as the program parses it (the gen trace has only
/// IPv4 without options, IPv6 and one 802.1Q tag).
fn parse(bytes: &[u8]) -> Frame {
    let mut l3 = 14;
    let mut ethertype = u16::from_be_bytes([bytes[12], bytes[13]]);
    if ethertype == 0x8100 {
        ethertype = u16::from_be_bytes([bytes[16], bytes[17]]);
        l3 = 18;
    }
    let (proto, l4) = match ethertype {
        0x0800 => (bytes[l3 + 9], l3 + usize::from(bytes[l3] & 0xf) * 4),
        0x86dd => (bytes[l3 + 6], l3 + 40),
        other => panic!("ethertype {other:#x}"),
    };
    let (proto, start) = match proto {
        6 => (Proto::Tcp, l4 + usize::from(bytes[l4 + 12] >> 4) * 4),
        17 => (Proto::Udp, l4 + 8),
        other => panic!("protocol {other}"),
    };
    Frame {
        bytes: bytes.to_vec(),
        proto,
        dport: u16::from_be_bytes([bytes[l4 + 2], bytes[l4 + 3]]),
        payload: bytes[start..].to_vec(),
    }
}

/// The counters of map dpi_hits in a `--dump-maps` file, by key.
fn dumped_hits(path: &str) -> Vec<u64> {
    let maps: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let byte = |v: &serde_json::Value| {
        u8::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    };
    let mut entries: Vec<(u32, u64)> = maps["dpi_hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let key: Vec<u8> = e["key"].as_array().unwrap().iter().map(byte).collect();
            let value: Vec<u8> = e["value"].as_array().unwrap().iter().map(byte).collect();
            (
                u32::from_le_bytes(key.try_into().unwrap()),
                u64::from_le_bytes(value.try_into().unwrap()),
            )
        })
        .collect();
    entries.sort();
    entries.into_iter().map(|(_, v)| v).collect()
}

/// `hwxdp verify` against the kernel: the reference machine, the hXDP model and eBPFlow.
fn verify(example: &str, obj: &str, pcap: &str, packets: usize) {
    verify_on(example, obj, pcap, packets, &["interp", "hxdp", "ebpflow"]);
}

/// `hwxdp verify` against the kernel on `backends`.
fn verify_on(example: &str, obj: &str, pcap: &str, packets: usize, backends: &[&str]) {
    require_kernel();
    for &backend in backends {
        let v = hwxdp(&["verify", obj, "--pcap", pcap, "--backend", backend]);
        assert!(v.ok, "{example} on {backend}:\n{}", v.all);
        assert_eq!(identical_count(&v.stdout), Some(packets), "{}", v.all);
    }
}

#[test]
fn sql_tautology_verdicts_are_regexs() {
    check_example(
        "sql_tautology",
        &[
            b"id=' OR 1=1 --",
            b"name=\"x\" or  1 = 1",
            b"' or 1=2",
            b"'or 1=1",
        ],
    );
}

/// `--form auto` builds the examples in the table form (their branch form is over 4096 instructions), so the branch
/// form is checked here, forced.
#[test]
fn sql_tautology_in_the_branch_form_verdicts_are_regexs() {
    check_built(
        "sql_tautology",
        &[
            b"id=' OR 1=1 --",
            b"name=\"x\" or  1 = 1",
            b"' or 1=2",
            b"'or 1=1",
        ],
        &["--form", "branch", "--max-payload", "600"],
        600,
    );
}

#[test]
fn sql_sleep_verdicts_are_regexs() {
    check_example(
        "sql_sleep",
        &[
            b"GET / HTTP/1.1\r\nUser-Agent: sqlmap sleep(5)\r\n\r\n",
            b"GET / HTTP/1.1\r\nUser-Agent: sleep\r\n(5)\r\n",
            b"GET /sleep(1) HTTP/1.1\r\nHost: a\r\n",
            b"\nuser-agent:SLEEP (3)",
        ],
    );
}

#[test]
fn bittorrent_verdicts_are_regexs() {
    check_example(
        "bittorrent",
        &[
            b"\x13BitTorrent protocol\x00\x00",
            b"GET /announce?info_hash=%12",
            b"GET /scrape.php?info_hash=",
            b"d1:ad2:id20:abcdefghij0123456789e",
            b"\x00\x00\x04\x17\x27\x10\x19\x80\x00\x00\x00\x00",
            b"x\x13BitTorrent protocol",
        ],
    );
}

#[test]
fn snort_verdicts_are_regexs() {
    check_example(
        "snort",
        &[
            b"GET /healthz HTTP/1.1\r\n",
            b"GET /../../etc/passwd HTTP/1.0",
            b"id=1 UNION ALL SELECT pw",
            b"User-Agent: () { :; }; /bin/sh",
            b"USER Root\r\n",
            b"\x07EXAMPLE\x03com\x00\x00\x01",
            b"run CMD.EXE /c",
            b"POST /login HTTP/1.1",
            b"POST   /login x",
        ],
    );
}

#[test]
fn bad_rules_give_one_error_naming_the_line() {
    let dir = scratch_dir("dpi-bad");
    for (text, want) in [
        (
            "alert tcp any any -> any 80 (content:\"a\"; flow:established; sid:1;)\n",
            "line 1: unsupported Snort keyword `flow`",
        ),
        (
            "count tcp content \"a\"\ndrop tcp regex \"a[ab]{24}\"\n",
            "line 2: the DFA of this rule exceeds the size limit",
        ),
    ] {
        let path = format!("{dir}/bad.rules");
        std::fs::write(&path, text).unwrap();
        let out = hwxdp(&["dpi", &path, "-o", &format!("{dir}/bad.o")]);
        assert_eq!(out.code, Some(2), "{}", out.all);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.all);
        assert!(out.stderr.contains(want), "{}", out.all);
    }
    let path = format!("{dir}/ok.rules");
    std::fs::write(&path, "drop tcp content \"a\"\n").unwrap();
    let out = hwxdp(&[
        "dpi",
        &path,
        "-o",
        &format!("{dir}/ok.o"),
        "--max-payload",
        "5000",
    ]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert!(
        out.stderr
            .contains("--max-payload 5000: the kernel verifier refuses a scan over 4096 bytes"),
        "{}",
        out.all
    );
}

#[test]
fn ehdl_pipelines_a_dpi_object_and_names_what_stops_its_verilog() {
    // A scan bounded to the first frame's bytes (64): the scan and the verdict are bpf-to-bpf functions using r6-r8
    // and a frame of their own, which eHDL's front end inlines, so `hwxdp compile --target ehdl` writes the
    // pipeline; its Verilog is refused at the scan's first load from the `.rodata` transition table at a run-time
    // offset, naming the instruction.
    let dir = scratch_dir("dpi-ehdl");
    let rules = repo_root().join("examples/dpi/sql_tautology.rules");
    let obj = format!("{dir}/t64.o");
    let built = hwxdp(&[
        "dpi",
        &rules.display().to_string(),
        "-o",
        &obj,
        "--max-payload",
        "64",
    ]);
    assert!(built.ok, "{}", built.all);
    let out = hwxdp(&[
        "compile",
        "--target",
        "ehdl",
        &obj,
        "-o",
        &format!("{dir}/ehdl"),
    ]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert!(
        std::path::Path::new(&format!("{dir}/ehdl/sql_tautology.pipeline.txt")).exists(),
        "{}",
        out.all
    );
    let reason = "a value of map .rodata, which is not an ARRAY map the program looks up";
    assert!(
        !out.all.contains("cannot inline")
            && out.stderr.contains("no Verilog module")
            && out.stderr.contains("program sql_tautology: instruction ")
            && out.stderr.contains(reason),
        "{}",
        out.all
    );
    let made = hwxdp(&["gen", &obj, "-o", &format!("{dir}/gen"), "-n", "20"]);
    assert!(made.ok, "{}", made.all);
    let pcap = format!("{dir}/gen/trace.pcap");
    let rtl = hwxdp(&["verify", &obj, "--pcap", &pcap, "--backend", "ehdl-rtl"]);
    assert_eq!(rtl.code, Some(2), "{}", rtl.all);
    assert!(
        rtl.stderr.contains("--backend ehdl-rtl") && rtl.stderr.contains(reason),
        "{}",
        rtl.all
    );
}
