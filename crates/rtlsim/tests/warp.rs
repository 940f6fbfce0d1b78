//! The Warp Engine in Verilog (`rtl/warp/`) against the software engine (`hwxdp_warp::Engine`): per packet, the rule,
//! the verdict or the restored context (slot, r1-r9, stack writes, warped count), and the frame unchanged. On every
//! example's `hwxdp gen` trace, on hand-made rules that exercise the TCAM's priority and every kind of restored
//! value, and one packet per clock at 512 bits with and without downstream back-pressure.

mod common;

use common::{target_dir, workspace_root};
use hwxdp_rtlsim::warp::{Decision, Passed, WarpPaths, WarpRtl};
use hwxdp_warp::rules::{Extractor, KeyEntry, KeyLayout, KeySource};
use hwxdp_warp::{Action, Engine, Extraction, Params, Restore, Rule, StackValue, Value, Warp};

/// Output always ready.
const READY: u64 = u64::MAX;

fn engine(data_width: u32, params: &Params) -> WarpRtl {
    let paths = WarpPaths {
        source_root: Some(workspace_root()),
        data_width,
        ..WarpPaths::embedded(target_dir().join("rtlsim"))
    };
    WarpRtl::new(&paths, params).expect("the Warp Engine model builds and starts")
}

/// What the software engine decides for `packet`.
fn expected(warp: &Warp, packet: &[u8]) -> Decision {
    let e = Engine::new(warp);
    match e.lookup(packet) {
        None => Decision::Miss,
        Some(rule) => match &warp.rules[rule].action {
            Action::Verdict { retval, .. } => Decision::Verdict {
                rule,
                retval: *retval,
            },
            Action::Restore(_) => {
                let mut resume = e.resume(rule, packet).expect("a restore rule resumes");
                // The RTL's record carries r0 = 0 where none is restored: the two are the same to the processor.
                resume.r0 = resume.r0.filter(|&r0| r0 != 0);
                Decision::Restore { rule, resume }
            }
        },
    }
}

/// Runs `packets` through `rtl` (loaded with `warp`) and checks every decision and frame; the rules hit.
fn check(
    rtl: &mut WarpRtl,
    warp: &Warp,
    packets: &[Vec<u8>],
    ready: u64,
    what: &str,
) -> Vec<Passed> {
    let out = rtl
        .run(packets, ready)
        .expect("the engine runs the packets");
    assert_eq!(out.len(), packets.len());
    for (i, (p, o)) in packets.iter().zip(&out).enumerate() {
        assert_eq!(
            o.decision,
            expected(warp, p),
            "{what}: packet {i} ({p:02x?})"
        );
        assert_eq!(o.bytes, *p, "{what}: packet {i} left changed");
        assert_eq!(o.len, p.len(), "{what}: packet {i}'s length");
    }
    out
}

fn rule_of(d: &Decision) -> Option<usize> {
    match d {
        Decision::Miss => None,
        Decision::Verdict { rule, .. } | Decision::Restore { rule, .. } => Some(*rule),
    }
}

#[test]
fn every_example_trace_decides_as_the_software_engine() {
    let dir = workspace_root().join("build/examples/xdp");
    let mut objects: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run `make examples`)", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "o"))
        .collect();
    objects.sort();
    assert!(objects.len() >= 10, "too few examples in {}", dir.display());
    // Table 5's engine, constant r0 restores included (the action line's r0).
    let params = Params::default();
    let mut rtl = engine(64, &params);
    let mut summary = Vec::new();
    for obj in &objects {
        let spec = hwxdp_object::parse(&std::fs::read(obj).expect("object")).expect("parses");
        for program in &spec.programs {
            let warp = hwxdp_warp::optimize_program(program, &spec.maps, &params).expect("warps");
            let mut packets = hwxdp_gen::workload(&spec, program, 200, 1)
                .expect("workload")
                .packets;
            packets.retain(|p| !p.is_empty());
            let built = rule_packets(&warp, &packets[..packets.len().min(4)]);
            packets.extend(built);
            rtl.load(&warp).expect("the rules load");
            let what = format!("{} {}", obj.display(), program.name);
            let out = check(&mut rtl, &warp, &packets, READY, &what);
            let mut hit: Vec<usize> = out.iter().filter_map(|o| rule_of(&o.decision)).collect();
            hit.sort_unstable();
            hit.dedup();
            assert_eq!(hit.len(), warp.rules.len(), "{what}: a rule no packet hits");
            summary.push(format!(
                "{}: {} rules, {} hit by {} packets (trace and built)",
                program.name,
                warp.rules.len(),
                hit.len(),
                packets.len()
            ));
        }
    }
    println!("{}", summary.join("\n"));
}

/// For every TCAM entry of every rule (`0x`-prefixed hex fields), each of `bases` changed to match it: the entry's chunk fields set, and the
/// length chosen to match its length condition (the frame cut or zero-padded to it) when one exists.
fn rule_packets(warp: &Warp, bases: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let unhex = |h: &str| -> Vec<u8> {
        let h = h.trim_start_matches("0x");
        (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).expect("hex"))
            .collect()
    };
    let mut out = Vec::new();
    for m in warp.rules.iter().flat_map(|r| &r.matches) {
        for base in bases {
            let mut p = base.clone();
            if let Some((value, mask)) = m.length {
                let len = (p.len() as u16 & !mask) | value;
                p.resize(usize::from(len).max(14), 0);
            }
            for f in &m.fields {
                let (value, mask) = (unhex(&f.value), unhex(&f.mask));
                let end = f.offset as usize + value.len();
                if p.len() < end {
                    p.resize(end, 0);
                }
                for (i, (v, k)) in value.iter().zip(&mask).enumerate() {
                    let b = &mut p[f.offset as usize + i];
                    *b = (*b & !k) | (v & k);
                }
            }
            out.push(p);
        }
    }
    // The equivalence trace's frames too: each avoids every higher-priority entry, so every rule is hit even where
    // a rule's own entries are covered by an earlier rule's on the bases (hxdp_firewall).
    let trace = hwxdp_warp::trace::equivalence_trace(warp, bases, &Default::default(), 1)
        .expect("every rule can be hit");
    out.extend(trace.into_iter().map(|p| p.bytes));
    out
}

/// One extractor over bytes 12-13 (the ethertype), and `rules` with one entry each over it.
fn ethertype_warp(rules: Vec<(KeyEntry, Action)>) -> Warp {
    let layout = KeyLayout {
        extractors: vec![Extractor {
            source: KeySource::Chunk(12),
            width: 2,
            mask: vec![0xff, 0xff],
            key_offset: 0,
        }],
        key_bytes: 2,
    };
    Warp {
        program: "hand-made".into(),
        params: Params::default(),
        layout,
        rules: rules
            .into_iter()
            .enumerate()
            .map(|(priority, (entry, action))| Rule {
                priority,
                matches: Vec::new(),
                entries: vec![entry],
                action,
                path: Vec::new(),
                stop: None,
                fallback: None,
            })
            .collect(),
        blocks: Vec::new(),
        report: Default::default(),
    }
}

fn entry(value: [u8; 2], mask: [u8; 2]) -> KeyEntry {
    KeyEntry {
        value: value.to_vec(),
        mask: mask.to_vec(),
    }
}

fn verdict(retval: u32) -> Action {
    Action::Verdict {
        retval,
        exit: 0,
        warped: 3,
    }
}

fn frame(ethertype: u16, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
    f[12..14].copy_from_slice(&ethertype.to_be_bytes());
    f
}

/// Every kind of restored value, as registers and as stack writes.
fn restore_everything() -> Action {
    let ex = |offset, length, big_endian, shift, mask| {
        Value::Extract(Extraction {
            offset,
            length,
            big_endian,
            shift,
            mask,
        })
    };
    Action::Restore(Restore {
        slot: 41,
        r0: Some(0x8000_0002),
        regs: vec![
            (1, Value::Context),
            (2, Value::Packet { offset: 34 }),
            (3, Value::PacketEnd { offset: -4 }),
            (4, ex(14, 1, false, 2, 0x3c)),
            (5, ex(12, 2, true, 0, 0xffff)),
            (6, ex(120, 8, false, -3, u64::MAX)),
            (7, Value::Length { offset: -14 }),
            (8, Value::Stack { offset: -16 }),
            (9, Value::Map { map: 2 }),
        ],
        stack: vec![
            StackValue {
                offset: -8,
                size: 4,
                value: ex(26, 4, true, 0, 0xffff_ffff),
            },
            StackValue {
                offset: -16,
                size: 8,
                value: Value::Const {
                    value: 0x1122_3344_5566_7788,
                },
            },
            StackValue {
                offset: -24,
                size: 8,
                value: Value::Packet { offset: 14 },
            },
            StackValue {
                offset: -26,
                size: 2,
                value: ex(125, 8, false, 8, 0xffff),
            },
        ],
        warped: 17,
    })
}

#[test]
fn the_tcam_gives_the_lowest_matching_line_and_restores_every_value_kind() {
    let warp = ethertype_warp(vec![
        (entry([0x08, 0x00], [0xff, 0xff]), restore_everything()),
        (entry([0x08, 0x00], [0xff, 0x00]), verdict(1)),
        (entry([0x86, 0xdd], [0xff, 0xff]), verdict(2)),
        (entry([0x00, 0x00], [0x00, 0x00]), verdict(3)),
    ]);
    let mut rtl = engine(64, &warp.params);
    rtl.load(&warp).expect("loads");
    let packets = vec![
        frame(0x0800, 60),
        frame(0x0806, 60),
        frame(0x86dd, 90),
        frame(0x1234, 14),
        frame(0x0800, 130),
        frame(0x0800, 127),
        frame(0x0800, 20),
        frame(0x0806, 1514),
    ];
    let out = check(&mut rtl, &warp, &packets, READY, "hand-made rules");
    let rules: Vec<Option<usize>> = out.iter().map(|o| rule_of(&o.decision)).collect();
    assert_eq!(
        rules,
        [0, 1, 2, 3, 0, 0, 0, 1].map(Some).to_vec(),
        "priorities"
    );
    // An r0 wider than the action line's 32-bit field is refused, naming the rule.
    let mut wide = warp.clone();
    if let Action::Restore(x) = &mut wide.rules[0].action {
        x.r0 = Some(1 << 40);
    }
    let err = rtl
        .load(&wide)
        .expect_err("a 64-bit r0 does not fit")
        .to_string();
    assert!(err.contains("rule 0") && err.contains("32-bit r0"), "{err}");
    // Without the catch-all, other ethertypes miss; with 64 lines, the last one still matches.
    let mut lines: Vec<(KeyEntry, Action)> = (0..63u16)
        .map(|i| {
            (
                entry((0x9000 + i).to_be_bytes(), [0xff, 0xff]),
                verdict(i.into()),
            )
        })
        .collect();
    lines.push((entry([0x0a, 0x00], [0xff, 0x00]), verdict(99)));
    let full = ethertype_warp(lines);
    rtl.load(&full).expect("64 lines load");
    let packets: Vec<Vec<u8>> = [0x9000, 0x903e, 0x0a55, 0x0800, 0x903f, 0x9017]
        .map(|t| frame(t, 64))
        .to_vec();
    let out = check(&mut rtl, &full, &packets, READY, "64 lines");
    let rules: Vec<Option<usize>> = out.iter().map(|o| rule_of(&o.decision)).collect();
    assert_eq!(
        rules,
        vec![Some(0), Some(62), Some(63), None, None, Some(23)]
    );
}

#[test]
fn one_packet_a_clock_at_512_bits_with_and_without_back_pressure() {
    let warp = ethertype_warp(vec![
        (entry([0x08, 0x00], [0xff, 0xff]), restore_everything()),
        (entry([0x86, 0xdd], [0xff, 0xff]), verdict(2)),
    ]);
    let mut rtl = engine(512, &warp.params);
    rtl.load(&warp).expect("loads");
    let types = [0x0800, 0x86dd, 0x0806];
    let small: Vec<Vec<u8>> = (0..96).map(|i| frame(types[i % 3], 60 + i % 5)).collect();
    let out = check(&mut rtl, &warp, &small, READY, "back to back");
    let latency = out[0].out_at - out[0].in_at;
    for (i, o) in out.iter().enumerate() {
        assert_eq!(o.in_at, out[0].in_at + i as u64, "packet {i} entered late");
        assert_eq!(o.out_at - o.in_at, latency, "packet {i}'s latency");
    }
    println!("latency {latency} clocks from the last input beat to the first output beat");
    assert_eq!(latency, 30);
    // Downstream ready one clock in three, then in bursts; longer frames mixed in.
    let mixed: Vec<Vec<u8>> = (0..80)
        .map(|i| frame(types[i % 3], [60, 64, 65, 128, 129, 300, 1514][i % 7]))
        .collect();
    for ready in [
        0x9249_2492_4924_9249u64,
        0xffff_0000_ff00_f0f0,
        0x0000_0000_0000_0001,
    ] {
        let out = check(&mut rtl, &warp, &mixed, ready, &format!("ready {ready:#x}"));
        for pair in out.windows(2) {
            assert!(pair[1].out_at > pair[0].out_at, "packets left in order");
        }
    }
}
