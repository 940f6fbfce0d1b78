//! `hwxdp stf` end to end: a hand-written XDP program that follows the map layout of docs/p4.md (what the P4 code
//! generator emits), with the checked program it stands for built by hand, runs STF scripts on the reference machine
//! and in the kernel; both must judge every script alike.

mod support;

use hwxdp_cli::stf_run::{run_script, StfReport};
use hwxdp_p4::ir::{
    Action, Arch, Checked, Control, Counter, Expr, ExprKind, Local, MatchKind, Parser, Table,
    TableImpl, TableKey, Ty,
};
use hwxdp_p4::{FileId, SourceMap, Span};
use std::path::PathBuf;
use support::*;

/// A switch with the maps of a P4 control `pipe` holding: `fwd` (exact on the destination MAC), `acl` (ternary on
/// the ethertype, 4 slots), their default-action maps, and `CounterArray(4) pkts` counting packets per ingress port.
/// Actions, in both tables' lists: 0 `tx(bit<32> tag)` writes the tag over the first 4 bytes of the source MAC and
/// sends the packet back; 1 `drop()`; 2 `to_host()` passes it. Without an entry or a set default it drops.
const SWITCH_C: &str = r#"
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct mac { __u8 b[6]; };
struct act { __u32 action; __u8 tag[4]; };
struct defact { __u32 set; struct act act; };
struct acl_slot { __u32 rank; __u8 key[2]; __u8 mask[2]; struct act act; };

struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 64); __type(key, struct mac); __type(value, struct act); } fwd SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, struct defact); } fwd_defact SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, struct acl_slot); } acl SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } pkts SEC(".maps");

SEC("xdp")
int stf_switch(struct xdp_md *ctx)
{
	__u8 *p = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	struct act *chosen = 0;
	__u32 best = 0, zero = 0, port = ctx->ingress_ifindex & 3;
	__u32 *count;
	struct defact *d;
	struct mac m;

	if (p + 14 > end)
		return XDP_DROP;
	count = bpf_map_lookup_elem(&pkts, &port);
	if (count)
		__sync_fetch_and_add(count, 1);
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < 4; i++) {
		__u32 k = i;
		struct acl_slot *s = bpf_map_lookup_elem(&acl, &k);
		if (!s || s->rank <= best)
			continue;
		if ((p[12] & s->mask[0]) == s->key[0] && (p[13] & s->mask[1]) == s->key[1]) {
			best = s->rank;
			chosen = &s->act;
		}
	}
	if (!chosen) {
		__builtin_memcpy(m.b, p, 6);
		chosen = bpf_map_lookup_elem(&fwd, &m);
	}
	if (!chosen) {
		d = bpf_map_lookup_elem(&fwd_defact, &zero);
		if (d && d->set)
			chosen = &d->act;
	}
	if (!chosen)
		return XDP_DROP;
	switch (chosen->action) {
	case 0:
		__builtin_memcpy(p + 6, chosen->tag, 4);
		return XDP_TX;
	case 1:
		return XDP_DROP;
	case 2:
		return XDP_PASS;
	}
	return XDP_ABORTED;
}

char _license[] SEC("license") = "GPL";
"#;

const SPAN: Span = Span {
    file: FileId(0),
    lo: 0,
    hi: 0,
};

/// The checked program `SWITCH_C` stands for; `tag_width` is the width of `tx`'s parameter (32 in the program).
fn checked(arch: Arch, tag_width: u32) -> Checked {
    let key = |name: &str, kind, width| TableKey {
        name: name.to_string(),
        expr: Expr {
            kind: ExprKind::Const(0),
            ty: Ty::Bit(width),
            span: SPAN,
        },
        kind,
        width,
        annotated: None,
    };
    let table = |name: &str, keys: Vec<TableKey>, size| Table {
        name: name.to_string(),
        keys,
        actions: vec![0, 1, 2],
        default_action: (1, vec![]),
        default_is_const: false,
        entries: vec![],
        bindings: vec![],
        size,
        implementation: TableImpl::Default,
        annotated: None,
        span: SPAN,
    };
    let action = |name: &str, params: Vec<usize>| Action {
        name: name.to_string(),
        params,
        body: vec![],
        annotated: None,
        span: SPAN,
    };
    Checked {
        arch,
        headers: vec![],
        structs: vec![],
        enums: vec![],
        errors: vec![],
        headers_ty: 0,
        locals: vec![Local {
            name: "tag".into(),
            ty: Ty::Bit(tag_width),
            span: SPAN,
        }],
        parser: Parser {
            name: "prs".into(),
            states: vec![],
            value_sets: vec![],
        },
        control: Control {
            name: "pipe".into(),
            actions: vec![
                action("tx", vec![0]),
                action("drop", vec![]),
                action("to_host", vec![]),
            ],
            tables: vec![
                table(
                    "fwd",
                    vec![key("hd.ethernet.dstAddr", MatchKind::Exact, 48)],
                    64,
                ),
                table(
                    "acl",
                    vec![key("hd.ethernet.etherType", MatchKind::Ternary, 16)],
                    4,
                ),
            ],
            counters: vec![Counter {
                name: "pkts".into(),
                size: 4,
                sparse: false,
            }],
            apply: vec![],
        },
        deparser: vec![],
        c_externs: vec![],
        sources: SourceMap::default(),
    }
}

/// Builds `SWITCH_C` with clang as the examples are built.
fn switch_object(tag: &str) -> PathBuf {
    let dir = PathBuf::from(scratch_dir(&format!("stf-{tag}")));
    let src = dir.join("stf_switch.c");
    let obj = dir.join("stf_switch.o");
    std::fs::write(&src, SWITCH_C).expect("scratch source");
    let include = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let out = std::process::Command::new("clang")
        .args([
            "-O2", "-g", "-target", "bpf", "-Wall", "-Werror", &include, "-c",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("clang runs");
    assert!(
        out.status.success(),
        "clang failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    obj
}

fn run(tag: &str, arch: Arch, text: &str, backend: &str) -> anyhow::Result<StfReport> {
    let script = hwxdp_p4::stf::parse("test.stf", text)?;
    run_script(
        &switch_object(tag),
        &checked(arch, 32),
        "test.stf",
        &script,
        backend,
    )
}

/// Exact, ternary (priorities, wildcards), default actions, counters; expectations written before their packets.
const PASSING: &str = "\
# forwarding by destination MAC
add fwd dstAddr:0x0000000000aa pipe.tx(tag:0x01020304)
add fwd hd.ethernet.dstAddr:0x0000000000bb drop()
add acl 1 etherType:0x88** to_host()
add acl 9 etherType:0x88b5 tx(tag:0xcafef00d)
add acl 5 etherType:0x88b5&&&0xffff drop()

expect 1 0000000000aa 01020304 1111 0800 deadbeef $
packet 1 0000000000aa 111111111111 0800 deadbeef
packet 2 0000000000bb 111111111111 0800
packet 2 0000000000cc 111111111111 0800
setdefault fwd tx(tag:0xa5a5a5a5)
expect 2 0000000000cc a5a5a5a5 **** 08
packet 2 0000000000cc 111111111111 0800
expect 2 ffffffffffff cafef00d 1111 88b5 $
packet 2 ffffffffffff 111111111111 88b5
# test port 0 (interface 1); passed (XDP_PASS), so it is expected back on its input port
packet 0 ffffffffffff 111111111111 88cc
expect 0 ffffffffffff 111111111111 88cc $
expect 1
packet 1 0000000000aa 222222222222 0800
wait
check_counter pkts(2) packets == 2
check_counter pipe.pkts(3) == 4
check_counter pkts(1) bytes >= 1
check_counter pkts(0) < 1
";

fn passing_on(backend: &str) {
    let report =
        run(&format!("pass-{backend:?}"), Arch::Xdp, PASSING, backend).expect("the script runs");
    let failures: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert!(failures.is_empty(), "{backend:?}: {}", failures.join("\n"));
    assert_eq!(
        (report.packets, report.met, report.to_host),
        (7, 9, 1),
        "{backend:?}"
    );
}

#[test]
fn passing_script_on_the_reference_machine() {
    passing_on("interp");
}

#[test]
fn passing_script_in_the_kernel() {
    require_kernel();
    passing_on("kernel");
}

/// Every kind of failure, each at its line.
const FAILING: &str = "\
add fwd dstAddr:0xaa tx(tag:0x01020304)
expect 1 0000000000aa 0102 0305
packet 1 0000000000aa 111111111111 0800
packet 2 0000000000aa 111111111111 0800
expect 3 00
check_counter pkts(2) == 7
";

fn failing_on(backend: &str) {
    let report =
        run(&format!("fail-{backend:?}"), Arch::Xdp, FAILING, backend).expect("the script runs");
    let text: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        vec![
            "test.stf:2: packet out on port 1 (from line 3) does not match\n    expected: 00 00 00 00 00 aa 01 02 03 05\n    got:      00 00 00 00 00 aa 01 02 03 04 11 11 08 00\n    differing bytes at offsets 9",
            "test.stf:4: unexpected packet out on port 2 (14 bytes)\n    got:      00 00 00 00 00 aa 01 02 03 04 11 11 08 00",
            "test.stf:5: expected packet on port 3 never came\n    expected: 00",
            "test.stf:6: counter pkts(2) is 1, expected == 7",
        ],
        "{backend:?}"
    );
    assert_eq!((report.packets, report.met), (2, 0));
}

#[test]
fn failing_script_on_the_reference_machine() {
    failing_on("interp");
}

#[test]
fn failing_script_in_the_kernel() {
    require_kernel();
    failing_on("kernel");
}

#[test]
fn filter_model_accepted_packets_leave_unchanged() {
    let text = "add acl etherType:0x8800&&&0xff00 to_host()\nadd fwd dstAddr:0xaa tx(tag:1)\n\
                expect 2 ffffffffffff 111111111111 88cc $\npacket 2 ffffffffffff 111111111111 88cc\n\
                packet 2 0000000000aa 111111111111 0800\n";
    let report = run("filter", Arch::EbpfFilter, text, "interp").expect("the script runs");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!((report.packets, report.met, report.to_host), (2, 1, 0));
}

#[test]
fn script_errors_end_the_run() {
    let err = |text: &str| match run("errors", Arch::Xdp, text, "interp") {
        Ok(r) => panic!("ran: {r:?}"),
        Err(e) => format!("{e:#}"),
    };
    assert_eq!(
        err("packet 256 0000000000aa111111111111 0800\n"),
        "test.stf:1: port 256: test ports go from 0 to 255"
    );
    assert_eq!(
        err("\nadd nat dstAddr:1 drop()\n"),
        "test.stf:2: unknown table `nat`"
    );
    // An entry the program's maps cannot hold: the layout and the object disagree.
    let script = hwxdp_p4::stf::parse("test.stf", "add fwd dstAddr:1 tx(tag:1)\n").unwrap();
    let e = run_script(
        &switch_object("mismatch"),
        &checked(Arch::Xdp, 16),
        "test.stf",
        &script,
        "interp",
    )
    .expect_err("sizes differ");
    assert_eq!(
        format!("{e:#}"),
        "test.stf:1: map `fwd` has 6-byte keys and 8-byte values, but the entry has a 6-byte key and a 6-byte value"
    );
}

#[test]
fn command_line_help_and_errors() {
    let help = hwxdp(&["stf", "--help"]);
    assert!(help.ok, "{}", help.all);
    for needle in [
        "check_counter NAME(INDEX)",
        "highest PRIO wins",
        "XDP_REDIRECT",
        "Exit status",
    ] {
        assert!(
            help.stdout.contains(needle),
            "{needle:?} missing from:\n{}",
            help.stdout
        );
    }
    let dir = scratch_dir("stf-cli");
    let stf = format!("{dir}/bad.stf");
    std::fs::write(&stf, "packet 1 00\nfrobnicate\n").unwrap();
    let out = hwxdp(&["stf", "examples/p4/xdp_eth_drop.p4", &stf]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert_eq!(
        out.stderr.trim(),
        format!("hwxdp: {stf}:2: unknown command `frobnicate`")
    );
    let out = hwxdp(&[
        "stf",
        "/no/such.p4",
        "--backend",
        "kernel",
        &stf.replace("bad", "none"),
    ]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert!(out.stderr.contains("none.stf: cannot read"), "{}", out.all);
}

/// Every P4 example with its STF script, compiled by `hwxdp stf` (with the code-generation `flags`) and run on
/// `backend`; all failures reported at once.
fn examples_pass_on(backend: &str, flags: &[&str]) {
    let dir = repo_root().join("examples/p4");
    let mut failed = Vec::new();
    let mut ran = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/p4")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    entries.sort();
    for p4 in entries {
        let stf = p4.with_extension("stf");
        assert!(stf.exists(), "{} has no STF script", p4.display());
        let name = p4.file_stem().unwrap().to_string_lossy().into_owned();
        let out = scratch_dir(&format!("stf-example-{backend}{}-{name}", flags.join("")));
        let (p4, stf) = (p4.display().to_string(), stf.display().to_string());
        let mut argv = vec!["stf", "--backend", backend, &p4, &stf, "-o", &out];
        argv.extend_from_slice(flags);
        let run = hwxdp(&argv);
        ran += 1;
        if !run.ok || !run.stdout.contains(", 0 failures") {
            failed.push(run.all);
        }
    }
    assert!(ran > 0, "no P4 examples in {}", dir.display());
    assert!(
        failed.is_empty(),
        "{} of {ran} examples failed on {backend}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn p4_examples_on_the_reference_machine() {
    examples_pass_on("interp", &[]);
}

#[test]
fn p4_examples_in_the_kernel() {
    require_kernel();
    examples_pass_on("kernel", &[]);
}

#[test]
fn p4_examples_on_the_hxdp_core() {
    examples_pass_on("hxdp", &[]);
}

/// The unoptimised code (every field converted, every header written back) must behave identically: the two
/// optimisations change cost, never results.
#[test]
fn p4_examples_with_the_papers_code_generation() {
    require_kernel();
    examples_pass_on("kernel", &["--convert-all-fields", "--writeback-all"]);
    examples_pass_on("interp", &["--convert-all-fields"]);
    examples_pass_on("interp", &["--writeback-all"]);
}
