//! `bpf_tail_call` against the compiler's passes, each case comparing the hXDP core with the reference machine.
//!
//! Made from inside a bpf-to-bpf function, a successful tail call's program exits back to the function's caller (as
//! the reference machine has it), so what the function returns after the call is not what the caller receives: the
//! compiler must not fold the function's apparent return value into the caller's exit, nor trust it in a bounds
//! check. A failed tail call returns with r0 as it was, so r0 set before it is live. And a program a tail call enters
//! finds the stack as its caller left it, so its zeroing stores stay.

use hwxdp_ebpf::opcode::{LD_DW_IMM, PSEUDO_MAP_FD};
use hwxdp_hxdp::isa::EXIT_IMM;
use hwxdp_hxdp::{compile_object, HxdpCore, Options, Pass};
use hwxdp_object::{MapKind, MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Programs, in the object's order: `tail_tx`, `tail_pass`, `tail_len` and `tail_check` are the tail-call targets;
/// `direct` returns what a function that tail-calls returns (109 when the call fails); `uses` branches on it and writes
/// it into the packet; `bounded` checks the packet against the length such a function returns (20 when the call
/// fails, 40 from `tail_len`) and then reads a fixed byte, which must not let the check go as if the length were
/// known; `remap` turns a DROP it gets back into PASS, so `tail_check`'s failed bounds check (a 32-byte packet) must
/// return DROP to it rather than end the packet.
const SOURCE: &str = r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} jump_table SEC(".maps");

SEC("xdp")
int tail_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

SEC("xdp")
int tail_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int tail_len(struct xdp_md *ctx)
{
	return 40;
}

SEC("xdp")
int tail_check(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *data = (void *)(long)ctx->data;

	if ((void *)(data + 40) > data_end)
		return XDP_DROP;
	return data[39] == 39 ? XDP_TX : XDP_ABORTED;
}

static __attribute__((noinline)) int dispatch(struct xdp_md *ctx, __u32 slot)
{
	int fallback = 109;

	bpf_tail_call(ctx, &jump_table, slot);
	/* Hides the constant from clang, which would otherwise fold it into the callers itself. */
	asm volatile("" : "+r"(fallback));
	return fallback;
}

static __attribute__((noinline)) int measure(struct xdp_md *ctx, __u32 slot)
{
	int fallback = 20;

	bpf_tail_call(ctx, &jump_table, slot);
	asm volatile("" : "+r"(fallback));
	return fallback;
}

SEC("xdp")
int direct(struct xdp_md *ctx)
{
	return dispatch(ctx, ctx->rx_queue_index);
}

SEC("xdp")
int uses(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *data = (void *)(long)ctx->data;
	int v;

	if ((void *)(data + 14) > data_end)
		return XDP_DROP;
	v = dispatch(ctx, data[0]);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if ((void *)(data + 14) > data_end)
		return XDP_DROP;
	data[13] = v;
	if (v == 109)
		return XDP_DROP;
	return v;
}

SEC("xdp")
int bounded(struct xdp_md *ctx)
{
	int len = measure(ctx, ctx->rx_queue_index);
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *data = (void *)(long)ctx->data;

	if ((void *)(data + len) > data_end)
		return XDP_DROP;
	return data[19] == 19 ? XDP_PASS : XDP_ABORTED;
}

SEC("xdp")
int remap(struct xdp_md *ctx)
{
	int v = dispatch(ctx, ctx->rx_queue_index);

	return v == XDP_DROP ? XDP_PASS : v;
}

char _license[] SEC("license") = "GPL";
"#;

/// The object built from [`SOURCE`] with clang, as `examples/xdp/Makefile` builds the examples.
///
/// Built once per test binary: the tests run in parallel threads, and when each wrote the source and ran clang, one
/// test's clang could read the source while another test had just truncated it, and build an object with no
/// programs ("no programs in object", as CI saw).
fn object() -> ObjectSpec {
    static BUILT: OnceLock<ObjectSpec> = OnceLock::new();
    BUILT.get_or_init(build_object).clone()
}

fn build_object() -> ObjectSpec {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tail_call_fold");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let source = dir.join("tail_call_fold.c");
    let obj = dir.join("tail_call_fold.o");
    std::fs::write(&source, SOURCE).expect("write source");
    let clang = Command::new("clang")
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
        .arg(&source)
        .arg("-o")
        .arg(&obj)
        // The uapi headers include <asm/types.h> from the host's multiarch directory.
        .arg(format!(
            "-I/usr/include/{}-linux-gnu",
            std::env::consts::ARCH
        ))
        .output()
        .expect("clang runs (building the examples needs it too)");
    assert!(
        clang.status.success(),
        "clang failed: {}",
        String::from_utf8_lossy(&clang.stderr)
    );
    hwxdp_object::load(&obj).unwrap_or_else(|e| panic!("{}: {e}", obj.display()))
}

fn index(spec: &ObjectSpec, name: &str) -> usize {
    spec.programs
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no program {name}"))
}

/// Slot 0 of `jump_table` holds `tail_tx`, 1 `tail_pass`, 2 `tail_len` and 3 `tail_check`; slots 4 to 7 are empty
/// and 8 on are beyond the table.
fn preload(spec: &ObjectSpec) -> Vec<([u8; 4], [u8; 4])> {
    ["tail_tx", "tail_pass", "tail_len", "tail_check"]
        .iter()
        .enumerate()
        .map(|(slot, name)| {
            (
                (slot as u32).to_le_bytes(),
                (index(spec, name) as u32).to_le_bytes(),
            )
        })
        .collect()
}

/// Slots each packet of [`packets`] picks.
const SLOTS: [u8; 6] = [0, 1, 2, 3, 4, 9];

/// 32-byte packets whose first byte and receive queue pick the slots of [`SLOTS`]; byte `i` is `i` otherwise.
fn packets() -> Vec<(Vec<u8>, XdpMd)> {
    SLOTS
        .iter()
        .map(|&slot| {
            let frame: Vec<u8> = (0..32u8).map(|i| if i == 0 { slot } else { i }).collect();
            let md = XdpMd {
                rx_queue_index: slot as u32,
                ..XdpMd::default()
            };
            (frame, md)
        })
        .collect()
}

/// Runs every packet of [`packets`] through `program` on the reference machine and on the hXDP core compiled with
/// `options`, and asserts that verdicts and packet bytes agree. Returns the verdicts, by packet.
fn compare(spec: &ObjectSpec, program: &str, options: &Options) -> Vec<u32> {
    let jump_table = spec
        .maps
        .iter()
        .position(|m| m.name == "jump_table")
        .expect("jump_table");
    let compiled = compile_object(spec, index(spec, program), options)
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut machine = Machine::new(spec, Some(program), &Config::default()).expect("loads");
    let mut core =
        HxdpCore::new(compiled.image, spec, Some(program), &Config::default()).expect("loads");
    for (key, value) in preload(spec) {
        machine
            .maps_mut()
            .update(jump_table, &key, &value, 0)
            .expect("preload the reference");
        core.machine_mut()
            .maps_mut()
            .update(jump_table, &key, &value, 0)
            .expect("preload the core");
    }
    let mut verdicts = Vec::new();
    for (i, (frame, md)) in packets().iter().enumerate() {
        let mut a = XdpBuff::new(frame).expect("frame");
        let want = machine.run_packet(&mut a, md);
        let mut b = XdpBuff::new(frame).expect("frame");
        let got = core.run_packet(&mut b, md);
        let what = format!("{program}, packet {i} (slot {}), {options:?}", SLOTS[i]);
        assert!(want.fault.is_none(), "{what}: the reference faulted");
        assert_eq!(core.last_fault(), None, "{what}: the core faulted");
        assert_eq!(want.retval, got.retval(), "{what}: verdicts differ");
        assert_eq!(a.data(), b.data(), "{what}: packet bytes differ");
        verdicts.push(want.retval);
    }
    verdicts
}

/// Every pass on, every pass off alone, and the narrowest and widest bundles.
fn option_sets() -> Vec<Options> {
    let mut out = vec![Options::default()];
    out.extend(Pass::ALL.into_iter().map(|p| Options {
        disabled: vec![p],
        ..Options::default()
    }));
    out.extend([1, 8].map(|lanes| Options {
        lanes,
        ..Options::default()
    }));
    out
}

/// Regression: tests asking for the object at the same moment all get the whole object, never a half-written file.
#[test]
fn the_object_loads_whole_when_many_tests_ask_at_once() {
    let names: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..32)
            .map(|_| s.spawn(|| object().programs.into_iter().map(|p| p.name).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("loads"))
            .collect()
    });
    assert!(names[0].iter().any(|n| n == "direct"), "{:?}", names[0]);
    assert!(names.iter().all(|n| *n == names[0]), "{names:?}");
}

#[test]
fn a_function_that_tail_calls_returns_what_the_tail_called_program_returns() {
    let spec = object();
    for options in option_sets() {
        let verdicts = compare(&spec, "direct", &options);
        assert_eq!(verdicts, [3, 2, 40, 1, 109, 109], "{options:?}");
    }
}

#[test]
fn a_caller_that_uses_the_value_sees_the_tail_called_verdict() {
    let spec = object();
    for options in option_sets() {
        let verdicts = compare(&spec, "uses", &options);
        assert_eq!(verdicts, [3, 2, 40, 1, 1, 1], "{options:?}");
    }
}

#[test]
fn a_length_from_a_function_that_tail_calls_keeps_its_bounds_check() {
    let spec = object();
    for options in option_sets() {
        let verdicts = compare(&spec, "bounded", &options);
        // 40 bytes are more than the packet has: the check drops it; 20 and 1 bytes are there.
        assert_eq!(verdicts, [2, 2, 1, 2, 2, 2], "{options:?}");
    }
}

#[test]
fn a_program_tail_called_from_a_function_returns_from_a_failed_bounds_check() {
    let spec = object();
    for options in option_sets() {
        let verdicts = compare(&spec, "remap", &options);
        assert_eq!(verdicts, [3, 2, 40, 2, 109, 109], "{options:?}");
    }
}

/// The compiled image of `direct`: its exit must read r0 (the value the tail-called program left), not carry the
/// function's apparent return value as a constant.
#[test]
fn the_callers_exit_is_not_folded() {
    let spec = object();
    let entry = index(&spec, "direct");
    let compiled = compile_object(&spec, entry, &Options::default()).expect("compiles");
    let entries = &compiled.image.entries;
    let start = entries[entry] as usize;
    // The program's bundles run up to the next program's first bundle.
    let end = entries
        .iter()
        .map(|&e| e as usize)
        .filter(|&e| e > start && e <= compiled.image.bundles.len())
        .min()
        .unwrap_or(compiled.image.bundles.len());
    let folded: Vec<i64> = compiled.image.bundles[start..end]
        .iter()
        .flat_map(|b| b.ops().map(|(_, o)| *o).collect::<Vec<_>>())
        .filter(|o| o.code == EXIT_IMM)
        .map(|o| o.imm)
        .collect();
    assert!(
        !folded.contains(&109),
        "an exit carries the function's return value: {folded:?}"
    );
}

/// A failed tail call returns with r0 as it was: `r0 = 2` just before it is the verdict then, and no pass may drop it
/// as dead (here the removed bounds check makes the dead-code sweep run) or move it elsewhere. The packet's byte 13
/// picks the slot: 0 holds `next` (returns 3), 1 is empty.
const R0_KEPT: &str = "
    r6 = r1
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto drop
    r3 = *(u8 *)(r2 + 13)
    r1 = r6
    r2 = 0x77 ll
    r0 = 2
    call 12
    exit
drop:
    r0 = 1
    exit
";

fn r0_kept_object() -> ObjectSpec {
    let mut main = hwxdp_ebpf::assemble(R0_KEPT).expect("assembles");
    for insn in main
        .iter_mut()
        .filter(|i| i.code == LD_DW_IMM && i.imm == 0x77)
    {
        insn.src = PSEUDO_MAP_FD;
        insn.imm = 0;
    }
    let next = hwxdp_ebpf::assemble("r0 = 3\nexit").expect("assembles");
    ObjectSpec {
        programs: vec![
            ProgramSpec::standalone("main", "xdp", main),
            ProgramSpec::standalone("next", "xdp", next),
        ],
        maps: vec![MapSpec {
            name: "jump_table".into(),
            map_type: 3,
            key_size: 4,
            value_size: 4,
            max_entries: 2,
            map_flags: 0,
            kind: MapKind::BtfDefined,
            initial_value: None,
            outer: None,
        }],
        license: "GPL".into(),
    }
}

#[test]
fn r0_set_before_a_failed_tail_call_is_the_verdict() {
    let spec = r0_kept_object();
    for options in option_sets() {
        let compiled = compile_object(&spec, 0, &options).expect("compiles");
        let mut machine = Machine::new(&spec, Some("main"), &Config::default()).expect("loads");
        let mut core =
            HxdpCore::new(compiled.image, &spec, Some("main"), &Config::default()).expect("loads");
        let (key, value) = (0u32.to_le_bytes(), 1u32.to_le_bytes());
        machine
            .maps_mut()
            .update(0, &key, &value, 0)
            .expect("preload the reference");
        core.machine_mut()
            .maps_mut()
            .update(0, &key, &value, 0)
            .expect("preload the core");
        for (slot, verdict) in [(0u8, 3u32), (1, 2)] {
            let frame: Vec<u8> = (0..14u8).map(|i| if i == 13 { slot } else { i }).collect();
            let mut a = XdpBuff::new(&frame).expect("frame");
            let want = machine.run_packet(&mut a, &XdpMd::default()).retval;
            let mut b = XdpBuff::new(&frame).expect("frame");
            let got = core.run_packet(&mut b, &XdpMd::default()).retval();
            assert_eq!(want, verdict, "slot {slot}: the reference");
            assert_eq!(got, verdict, "slot {slot}, {options:?}: the core");
        }
    }
}

/// A program entered by a tail call finds the stack as its caller left it (as the reference machine has it), not
/// cleared: its zeroing stores must stay. `main` leaves 40 at r10 - 8 and tail-calls `next` (slot 0), which zeroes
/// that slot and returns what it reads there plus 2.
const DIRTY_MAIN: &str = "
    r6 = 40
    *(u64 *)(r10 - 8) = r6
    r2 = 0x77 ll
    r3 = 0
    call 12
    r0 = 9
    exit
";

const ZEROING_NEXT: &str = "
    r1 = 0
    *(u64 *)(r10 - 8) = r1
    r0 = *(u64 *)(r10 - 8)
    r0 += 2
    exit
";

#[test]
fn a_tail_called_program_keeps_its_zeroing() {
    let mut main = hwxdp_ebpf::assemble(DIRTY_MAIN).expect("assembles");
    for insn in main.iter_mut().filter(|i| i.code == LD_DW_IMM) {
        insn.src = PSEUDO_MAP_FD;
        insn.imm = 0;
    }
    let mut spec = r0_kept_object();
    spec.programs = vec![
        ProgramSpec::standalone("main", "xdp", main),
        ProgramSpec::standalone(
            "next",
            "xdp",
            hwxdp_ebpf::assemble(ZEROING_NEXT).expect("assembles"),
        ),
    ];
    for options in option_sets() {
        let compiled = compile_object(&spec, 0, &options).expect("compiles");
        let mut machine = Machine::new(&spec, Some("main"), &Config::default()).expect("loads");
        let mut core =
            HxdpCore::new(compiled.image, &spec, Some("main"), &Config::default()).expect("loads");
        let (key, value) = (0u32.to_le_bytes(), 1u32.to_le_bytes());
        machine
            .maps_mut()
            .update(0, &key, &value, 0)
            .expect("preload the reference");
        core.machine_mut()
            .maps_mut()
            .update(0, &key, &value, 0)
            .expect("preload the core");
        let frame: Vec<u8> = (0..14u8).collect();
        let mut a = XdpBuff::new(&frame).expect("frame");
        let want = machine.run_packet(&mut a, &XdpMd::default()).retval;
        let mut b = XdpBuff::new(&frame).expect("frame");
        let got = core.run_packet(&mut b, &XdpMd::default()).retval();
        assert_eq!(want, 2, "the reference");
        assert_eq!(got, 2, "{options:?}: the core");
    }
}
