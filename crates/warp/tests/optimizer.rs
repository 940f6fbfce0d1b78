//! The Warp Optimizer and Engine on small programs: one per block class and per case that must stay in the
//! processor, each checked against the reference machine on a generic traffic mix (appendix D's equivalence).

use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_warp::check::{compare_trace, TracePacket};
use hwxdp_warp::{optimize_program, Action, BlockClass, Params, Stop, Warp};
use hwxdp_xdp::{Config, XdpMd};
use std::path::PathBuf;

/// A program from assembler text.
fn asm(text: &str) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("test program assembles");
    ObjectSpec {
        programs: vec![ProgramSpec::standalone("test", "xdp", insns)],
        maps: Vec::new(),
        license: "GPL".into(),
    }
}

/// A program from C, built as the examples are (`clang -O2 -g -target bpf`).
fn c(name: &str, body: &str) -> ObjectSpec {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("warp-tests");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let src = dir.join(format!("{name}.c"));
    let obj = dir.join(format!("{name}.o"));
    let text = format!(
        "#include <linux/bpf.h>\n#include <linux/if_ether.h>\n#include <bpf/bpf_helpers.h>\n\
         #include <bpf/bpf_endian.h>\n{body}\nchar _license[] SEC(\"license\") = \"GPL\";\n"
    );
    std::fs::write(&src, text).expect("write source");
    let out = std::process::Command::new("clang")
        .args(["-O2", "-g", "-target", "bpf", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .arg(format!(
            "-I/usr/include/{}-linux-gnu",
            std::env::consts::ARCH
        ))
        .output()
        .expect("clang runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    hwxdp_object::parse(&std::fs::read(&obj).expect("object")).expect("object parses")
}

fn warp(spec: &ObjectSpec, params: &Params) -> Warp {
    optimize_program(&spec.programs[0], &spec.maps, params).expect("program warps")
}

/// The generic mix plus frames of every length from 14 to 80, checked plain against warped.
fn equivalent(spec: &ObjectSpec, w: &Warp) -> usize {
    let mut frames = hwxdp_gen::generic_mix(400, 7);
    let template = frames[0].clone();
    frames.extend((14..80.min(template.len())).map(|n| template[..n].to_vec()));
    let packets: Vec<TracePacket> = frames
        .into_iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, bytes)| TracePacket {
            time: 1_000 * i as u64,
            bytes,
            md: XdpMd {
                ingress_ifindex: 1,
                rx_queue_index: 0,
            },
        })
        .collect();
    let name = &spec.programs[0].name;
    let cmp = compare_trace(spec, name, &Config::default(), None, w, &packets).expect("trace runs");
    assert_eq!(cmp.difference, None, "{name}: warped differs from plain");
    cmp.packets.iter().filter(|p| p.rule.is_some()).count()
}

fn stops(w: &Warp) -> Vec<(Stop, u32)> {
    w.rules
        .iter()
        .filter_map(|r| match (&r.action, r.stop) {
            (Action::Restore(x), Some(s)) => Some((s, x.slot)),
            _ => None,
        })
        .collect()
}

const ACL: &str = r#"
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16); __type(key, __u32); __type(value, __u32); } acl SEC(".maps");
SEC("xdp")
int acl_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 key;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	key = eth->h_source[5];
	return bpf_map_lookup_elem(&acl, &key) ? XDP_PASS : XDP_DROP;
}
"#;

#[test]
fn every_block_class_of_the_running_example() {
    let spec = c("acl", ACL);
    let w = warp(&spec, &Params::default());
    let classes: Vec<BlockClass> = w.blocks.iter().map(|b| b.1).collect();
    assert_eq!(classes[0], BlockClass::Start);
    for want in [
        BlockClass::Matching,
        BlockClass::Exit,
        BlockClass::Terminal(Stop::Helper),
    ] {
        assert!(classes.contains(&want), "no {want:?} block in {classes:?}");
    }
    // Table 1 of the paper: IPv6 dropped, IPv4 to the processor at the lookup, other ethertypes passed. (Frames
    // shorter than an Ethernet header never reach XDP, so the bounds check is decided statically.)
    assert_eq!(w.rules.len(), 3, "{}", hwxdp_warp::render::rules_table(&w));
    let on = |value: &str| {
        w.rules
            .iter()
            .find(|r| {
                r.matches[0]
                    .fields
                    .first()
                    .is_some_and(|f| (f.offset, f.length) == (12, 2) && f.value == value)
            })
            .unwrap_or_else(|| panic!("no rule on ethertype {value}"))
    };
    assert!(matches!(
        on("0x86dd").action,
        Action::Verdict { retval: 1, .. }
    ));
    let Action::Restore(r) = &on("0x0800").action else {
        panic!("IPv4 goes to the processor");
    };
    assert_eq!(on("0x0800").stop, Some(Stop::Helper));
    // r1 holds the map and the key byte is on the stack.
    assert!(
        r.regs
            .iter()
            .any(|(n, v)| *n == 1 && v.to_string() == "map0"),
        "{r:?}"
    );
    assert_eq!(r.stack.len(), 1, "{r:?}");
    let last = w.rules.last().unwrap();
    assert!(
        last.matches[0].fields.is_empty()
            && matches!(last.action, Action::Verdict { retval: 2, .. })
    );
    assert_eq!(stops(&w).len(), 1);
    assert!(equivalent(&spec, &w) > 0);
}

#[test]
fn a_map_lookup_before_the_branch_keeps_the_branch_in_the_processor() {
    let spec = c(
        "lookup_first",
        r#"
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, __u32); } cfg SEC(".maps");
SEC("xdp")
int lookup_first(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, *mode = bpf_map_lookup_elem(&cfg, &zero);
	struct ethhdr *eth = data;
	if (!mode || (void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	return eth->h_proto == *mode ? XDP_DROP : XDP_PASS;
}
"#,
    );
    let w = warp(&spec, &Params::default());
    assert_eq!(w.rules.len(), 1, "one rule: everything from the lookup on");
    assert_eq!(w.rules[0].stop, Some(Stop::Helper));
    assert!(w.rules[0].matches[0].fields.is_empty());
    assert_eq!(w.report.key_bytes, 0);
    equivalent(&spec, &w);
}

#[test]
fn a_packet_write_ends_the_walk_at_the_store() {
    let spec = asm(
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto drop\n\
         r5 = *(u8 *)(r2 + 0)\nif r5 != 1 goto pass\n*(u8 *)(r2 + 1) = 7\npass:\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit",
    );
    let w = warp(&spec, &Params::default());
    assert_eq!(stops(&w), vec![(Stop::PacketWrite, 7)]);
    let write = w.rules.iter().find(|r| r.stop.is_some()).unwrap();
    assert_eq!(write.matches[0].fields[0].value, "0x01");
    assert!(equivalent(&spec, &w) > 0);
}

#[test]
fn a_branch_on_bytes_past_the_chunk_stays_in_the_processor() {
    let body = "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 64\nif r4 > r3 goto drop\n\
                r5 = *(u8 *)(r2 + 12)\nif r5 == 8 goto pass\nr5 = *(u8 *)(r2 + 40)\nif r5 == 6 goto drop\n\
                pass:\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit";
    let spec = asm(body);
    let deep = warp(&spec, &Params::default());
    assert!(stops(&deep).is_empty(), "byte 40 is in a 128-byte chunk");
    let small = Params {
        chunk: 32,
        ..Params::default()
    };
    let w = warp(&spec, &small);
    assert_eq!(stops(&w), vec![(Stop::PastChunk, 7)]);
    equivalent(&spec, &w);
    equivalent(&spec, &deep);
}

#[test]
fn a_helper_call_is_terminal_and_r0_is_never_restored() {
    let spec = c(
        "coin",
        r#"
SEC("xdp")
int coin(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_dest[0] & 1)
		return bpf_get_prandom_u32() & 1 ? XDP_DROP : XDP_PASS;
	return XDP_TX;
}
"#,
    );
    let w = warp(&spec, &Params::default());
    assert!(
        stops(&w).iter().all(|s| s.0 == Stop::Helper),
        "{:?}",
        stops(&w)
    );
    assert_eq!(stops(&w).len(), 1);
    for r in &w.rules {
        if let Action::Restore(x) = &r.action {
            assert!(x.regs.iter().all(|(n, _)| (1..=9).contains(n)));
        }
    }
    equivalent(&spec, &w);
}

#[test]
fn a_loop_stays_in_the_processor() {
    let spec = asm(
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto drop\n\
         r6 = 0\nr7 = 0\nloop:\nr5 = *(u8 *)(r2 + 0)\nr7 += r5\nr2 += 1\nr6 += 1\nif r6 < 4 goto loop\n\
         r0 = 2\nif r7 > 100 goto out\nr0 = 1\nout:\nexit\ndrop:\nr0 = 1\nexit",
    );
    let w = warp(&spec, &Params::default());
    assert!(w
        .blocks
        .iter()
        .any(|b| b.1 == BlockClass::Terminal(Stop::Loop)));
    assert_eq!(stops(&w), vec![(Stop::Loop, 7)]);
    equivalent(&spec, &w);
}

#[test]
fn a_stack_store_through_a_computed_pointer_stays_in_the_processor() {
    let spec = asm(
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto drop\n\
         r5 = *(u8 *)(r2 + 0)\nr5 &= 7\nr6 = r10\nr6 += -16\nr6 += r5\n*(u8 *)(r6 + 0) = 1\n\
         r0 = *(u8 *)(r10 - 16)\nr0 += 1\nexit\ndrop:\nr0 = 1\nexit",
    );
    let w = warp(&spec, &Params::default());
    // The store is slot 10, but the restore there cannot hold r6 (a computed pointer): it falls back to the last
    // instruction where it could, slot 9 (`r6 += r5`: r6 is still r10 - 16 and r5 an extraction).
    assert_eq!(stops(&w), vec![(Stop::UnknownPointer, 9)]);
    assert!(w
        .blocks
        .iter()
        .any(|b| b.1 == BlockClass::Terminal(Stop::UnknownPointer)));
    let r = w.rules.iter().find(|r| r.stop.is_some()).unwrap();
    assert!(r.fallback.is_some());
    equivalent(&spec, &w);
}

#[test]
fn a_program_too_big_for_the_tcam_is_warped_less_deeply_and_stays_equivalent() {
    let spec = c("acl_small", ACL);
    let mut p = Params {
        tcam_entries: 2,
        ..Params::default()
    };
    let w = warp(&spec, &p);
    assert!(w.report.tcam_entries <= 2, "{:?}", w.report);
    assert!(!w.report.limited_by.is_empty());
    assert!(w.report.depth.is_some());
    equivalent(&spec, &w);
    p.key_bytes = 0;
    let w = warp(&spec, &p);
    assert_eq!(w.report.key_bytes, 0);
    equivalent(&spec, &w);
}

#[test]
fn the_check_finds_a_wrong_rule() {
    let spec = c("acl_wrong", ACL);
    let mut w = warp(&spec, &Params::default());
    let ipv6 = w
        .rules
        .iter()
        .position(|r| {
            r.matches[0]
                .fields
                .first()
                .is_some_and(|f| f.value == "0x86dd")
        })
        .expect("a rule for IPv6");
    let Action::Verdict { retval, .. } = &mut w.rules[ipv6].action else {
        panic!("IPv6 is dropped by the engine");
    };
    *retval = 2;
    let mut frame = vec![0u8; 60];
    frame[12..14].copy_from_slice(&[0x86, 0xdd]);
    let packets = vec![TracePacket {
        time: 0,
        bytes: frame,
        md: XdpMd::default(),
    }];
    let cmp = compare_trace(&spec, "acl_prog", &Config::default(), None, &w, &packets).unwrap();
    let d = cmp.difference.expect("the changed verdict is found");
    assert!(
        d.what.starts_with("return value 1 plain, 2 warped"),
        "{}",
        d.what
    );
}

const DEEP: &str = r#"
SEC("xdp")
int deep(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned char *p = data;
	if (data + 40 > end)
		return XDP_PASS;
	if (p[20] == 1) {
		if (p[21] == 2) {
			if (p[22] == 3)
				return p[23] == 4 ? XDP_DROP : XDP_TX;
			return XDP_PASS;
		}
		return XDP_DROP;
	}
	if (p[30] == 1) {
		if (p[31] == 2) {
			if (p[32] == 3)
				return p[33] == 4 ? XDP_DROP : XDP_TX;
			return XDP_PASS;
		}
		return XDP_DROP;
	}
	return XDP_PASS;
}
"#;

/// Instructions the engine warps over `frames` with `w`'s rules.
fn warped_over(w: &Warp, frames: &[Vec<u8>]) -> u64 {
    let engine = hwxdp_warp::Engine::new(w);
    frames
        .iter()
        .filter_map(|f| engine.lookup(f))
        .map(|r| w.rules[r].action.warped())
        .sum()
}

#[test]
fn a_profile_spends_the_tcam_on_its_frequent_paths() {
    let spec = c("deep", DEEP);
    let params = Params {
        tcam_entries: 8,
        ..Params::default()
    };
    let plain = warp(&spec, &params);
    assert!(!plain.report.limited_by.is_empty(), "{:?}", plain.report);
    // Every frame of the profile takes the second chain to its end.
    let frames: Vec<Vec<u8>> = (0..40u8)
        .map(|i| {
            let mut f = vec![i; 60];
            f[20] = 0;
            f[30..34].copy_from_slice(&[1, 2, 3, 4]);
            f
        })
        .collect();
    let profile = hwxdp_warp::Profile {
        frames: frames.clone(),
    };
    let fitted = hwxdp_warp::optimize_profiled(&spec.programs[0], &spec.maps, &params, &profile)
        .expect("program warps");
    assert!(fitted.report.tcam_entries <= 8, "{:?}", fitted.report);
    assert_eq!(fitted.report.profile_frames, frames.len());
    assert_eq!(
        fitted.report.rule_frames.iter().sum::<usize>(),
        frames.len()
    );
    let (before, after) = (warped_over(&plain, &frames), warped_over(&fitted, &frames));
    assert!(
        after > before,
        "profiled {after} against {before} instructions warped"
    );
    // The profile's path ends in the engine: its frames need no processor.
    let engine = hwxdp_warp::Engine::new(&fitted);
    let rule = engine.lookup(&frames[0]).expect("a rule");
    assert!(
        matches!(fitted.rules[rule].action, Action::Verdict { retval: 1, .. }),
        "{}\n{}",
        hwxdp_warp::render::rules_table(&fitted),
        hwxdp_warp::render::rules_table(&plain)
    );
    equivalent(&spec, &fitted);
    equivalent(&spec, &plain);
}

#[test]
fn a_constant_r0_is_restored_unless_the_engine_cannot() {
    // r0 = 2 (the verdict the checks fall through to) is live from the first instruction to the packet write.
    let spec = asm(
        "r0 = 2\nr2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto out\n\
         r5 = *(u8 *)(r2 + 0)\nif r5 != 1 goto out\n*(u8 *)(r2 + 1) = 7\nout:\nexit",
    );
    let restore = |w: &Warp| {
        w.rules
            .iter()
            .find_map(|r| match &r.action {
                Action::Restore(x) => Some(x.clone()),
                _ => None,
            })
            .expect("a restore rule")
    };
    let w = warp(&spec, &Params::default());
    let at_write = restore(&w);
    assert_eq!((at_write.slot, at_write.r0), (8, Some(2)), "{at_write:?}");
    assert!(equivalent(&spec, &w) > 0);
    let without = Params {
        r0_const: 0,
        ..Params::default()
    };
    let w = warp(&spec, &without);
    let back = restore(&w);
    assert_eq!((back.slot, back.r0), (0, None), "{back:?}");
    equivalent(&spec, &w);
}

#[test]
fn a_variable_header_length_splits_per_value_the_profile_carries() {
    // data + (pkt[14] & 15) * 4, then a bounds check and a branch on the byte there, then a packet write.
    let spec = asm(
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 15\nif r4 > r3 goto drop\n\
         r5 = *(u8 *)(r2 + 14)\nr5 &= 15\nr5 <<= 2\nr2 += r5\nr4 = r2\nr4 += 2\nif r4 > r3 goto drop\n\
         r6 = *(u8 *)(r2 + 0)\nif r6 == 9 goto drop\n*(u8 *)(r2 + 1) = 7\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit",
    );
    let plain = warp(&spec, &Params::default());
    let frame = |ihl: u8, at: u8| {
        let mut f = vec![0u8; 64];
        f[14] = 0x40 | ihl;
        f[4 * ihl as usize] = at;
        f
    };
    let profile = hwxdp_warp::Profile {
        frames: vec![frame(5, 9), frame(5, 3), frame(6, 9), frame(5, 9)],
    };
    let split =
        hwxdp_warp::optimize_profiled(&spec.programs[0], &spec.maps, &Params::default(), &profile)
            .expect("program warps");
    let drops_at = |w: &Warp| -> Vec<u16> {
        w.rules
            .iter()
            .filter(|r| matches!(r.action, Action::Verdict { retval: 1, .. }))
            .flat_map(|r| {
                r.matches
                    .iter()
                    .flat_map(|m| m.fields.iter().map(|f| f.offset))
            })
            .collect()
    };
    assert!(
        !drops_at(&plain).contains(&20),
        "unprofiled: {:?}",
        plain.rules
    );
    let at = drops_at(&split);
    assert!(
        at.contains(&20) && at.contains(&24),
        "per header length: {at:?}"
    );
    assert!(
        stops(&split).contains(&(Stop::PacketWrite, 14)),
        "{:?}",
        stops(&split)
    );
    equivalent(&spec, &split);
    equivalent(&spec, &plain);
}

/// The slots (as `hwxdp disasm` numbers them: an `lddw` takes two) of the program's calls to helper `id`.
fn helper_slots(spec: &ObjectSpec, id: i64) -> Vec<u32> {
    let mut slot = 0;
    let mut out = Vec::new();
    for insn in &spec.programs[0].insns {
        if insn.code == 0x85 && insn.src == 0 && insn.imm == id {
            out.push(slot);
        }
        slot += if insn.code == 0x18 { 2 } else { 1 };
    }
    out
}

#[test]
fn the_engine_makes_bpf_xdp_load_bytes_itself_where_the_path_decides_it() {
    let spec = c(
        "load_bytes",
        r#"
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 8); __type(key, __u32); __type(value, __u32); } hits SEC(".maps");
SEC("xdp")
int load_bytes(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u16 p[2] = {};
	__u32 key, *hit;
	if (data + 38 > data_end)
		return bpf_xdp_load_bytes(ctx, 36, p, sizeof(p)) ? XDP_PASS : XDP_ABORTED;
	if (bpf_xdp_load_bytes(ctx, 34, p, sizeof(p)))
		return XDP_ABORTED;
	if (p[1] == bpf_htons(53))
		return XDP_DROP;
	key = p[0] & 7;
	hit = bpf_map_lookup_elem(&hits, &key);
	return hit && *hit ? XDP_TX : XDP_PASS;
}
"#,
    );
    let w = warp(&spec, &Params::default());
    let table = hwxdp_warp::render::rules_table(&w);
    // Frames shorter than 38 bytes: -EINVAL, a verdict; port 53 in the copied bytes: a verdict after the copy.
    assert!(
        w.rules
            .iter()
            .any(|r| matches!(r.action, Action::Verdict { retval: 2, .. })),
        "{table}"
    );
    let drop = w
        .rules
        .iter()
        .find(|r| matches!(r.action, Action::Verdict { retval: 1, .. }))
        .unwrap_or_else(|| panic!("no engine DROP after the copy:\n{table}"));
    assert!(drop.matches[0]
        .fields
        .iter()
        .any(|f| (f.offset, f.length) == (36, 2) && f.value == "0x0035"));
    // Everything else goes to the processor at the map lookup, not at the copy.
    let lookups = helper_slots(&spec, 1);
    assert_eq!(stops(&w), vec![(Stop::Helper, lookups[0])], "{table}");
    assert!(equivalent(&spec, &w) > 0);
}

#[test]
fn bpf_xdp_load_bytes_of_unproven_bytes_stays_in_the_processor() {
    let spec = asm(
        "r6 = r1\nr2 = 60\nr3 = r10\nr3 += -8\nr4 = 4\ncall 189\nif r0 != 0 goto drop\n\
         r0 = *(u32 *)(r10 - 8)\nif r0 == 7 goto drop\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit",
    );
    let w = warp(&spec, &Params::default());
    assert_eq!(stops(&w), vec![(Stop::Helper, 5)]);
    equivalent(&spec, &w);
}

#[test]
fn the_engine_makes_bpf_xdp_get_buff_len_itself() {
    let spec = asm("call 188\nif r0 > 100 goto drop\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit");
    let w = warp(&spec, &Params::default());
    assert!(
        stops(&w).is_empty(),
        "{}",
        hwxdp_warp::render::rules_table(&w)
    );
    assert!(w
        .rules
        .iter()
        .all(|r| matches!(r.action, Action::Verdict { .. })));
    assert!(equivalent(&spec, &w) > 0);
}
