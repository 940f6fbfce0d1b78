//! Entry bundles at restore slots (program warping, `docs/warp.md`): a slot compiled as an entry point starts a
//! bundle where r1-r9 and the frame are the eBPF program's at that slot, so the core started there with a restored
//! context computes what the reference machine computes when it resumes at the slot, and, where the context is the
//! one a full run reaches, what the full run computes.

use hwxdp_hxdp::{compile_object, compile_object_with_entries, CompileError, HxdpCore, Options};
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::{Config, Machine, Resume, ResumeValue, StackWrite, XdpBuff, XdpMd};

/// Parses a header, keys an ARRAY map with the ethertype's low nibble, writes byte 1 and returns a verdict from the
/// first byte. Slots are in the comments. Rename, three-operand fusion and code motion all find work in the middle
/// block (slots 7-15), where entries 11 and 13 cut it.
const PROGRAM: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto drop
    r5 = *(u16 *)(r2 + 12)
    r5 &= 15
    r6 = *(u8 *)(r2 + 0)
    r7 = r6
    r7 += 3
    *(u32 *)(r10 - 4) = r5
    r8 = r6
    r8 <<= 2
    r9 = r7
    r9 ^= r8
    *(u8 *)(r2 + 1) = r9
    ld_pseudo r1, 1, 0
    r2 = r10
    r2 += -4
    call 1
    if r0 == 0 goto miss
    r1 = *(u32 *)(r0 + 0)
    r1 += r9
    *(u32 *)(r0 + 0) = r1
    r0 = r9
    r0 &= 1
    r0 += 1
    exit
miss:
    r0 = r7
    r0 &= 3
    exit
drop:
    r0 = 1
    exit
";

/// The entry slots: after the bounds check, inside the middle block, at the packet write, at the `lddw`, at the
/// helper call, at the miss and drop returns.
const SLOTS: [u32; 8] = [5, 11, 13, 15, 16, 20, 29, 32];

/// Slots at or before the packet write, where the context below is the one a full run reaches.
const FULL_RUN_SLOTS: [u32; 4] = [5, 11, 13, 15];

fn object() -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(PROGRAM).expect("assembles");
    let mut spec = ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns));
    // ARRAY of 8 u32: keys 8-15 miss.
    spec.maps = vec![MapSpec::new("counts", 2, 4, 4, 8)];
    spec
}

/// The eBPF state at `slot` for a packet whose first bytes are `p` (registers live there, and the key on the stack).
fn resume_at(slot: u32, p: &[u8]) -> Resume {
    let b0 = p[0] as u64;
    let key = (u16::from_le_bytes([p[12], p[13]]) & 15) as u64;
    let (r6, r7, r8) = (b0, b0 + 3, b0 << 2);
    let r9 = r7 ^ r8;
    let s = ResumeValue::Scalar;
    let mut regs: [Option<ResumeValue>; 9] = [None; 9];
    let mut set = |r: usize, v: ResumeValue| regs[r - 1] = Some(v);
    match slot {
        5 => set(2, ResumeValue::Packet(0)),
        11 => {
            set(2, ResumeValue::Packet(0));
            set(6, s(r6));
            set(7, s(r7));
        }
        13 => {
            set(2, ResumeValue::Packet(0));
            set(7, s(r7));
            set(8, s(r8));
        }
        15 => {
            set(2, ResumeValue::Packet(0));
            set(7, s(r7));
            set(9, s(r9));
        }
        16 => {
            set(7, s(r7));
            set(9, s(r9));
        }
        20 => {
            set(1, ResumeValue::Map(0));
            set(2, ResumeValue::Stack(-4));
            set(7, s(r7));
            set(9, s(r9));
        }
        29 => set(7, s(r7)),
        _ => {}
    }
    let stack = if (11..=20).contains(&slot) {
        vec![StackWrite {
            off: -4,
            size: 4,
            value: s(key),
        }]
    } else {
        Vec::new()
    };
    Resume {
        slot: slot as usize,
        r0: None,
        regs,
        stack,
        skipped: 0,
    }
}

/// Frames: keys that hit and miss, and first bytes giving each verdict.
fn packets() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (b0, ethertype) in [
        (0u8, 0x0008u16),
        (1, 0x0608),
        (2, 0x000f),
        (7, 0x0009),
        (0x80, 0x86dd),
    ] {
        let mut p = vec![0u8; 60];
        p[0] = b0;
        p[12..14].copy_from_slice(&ethertype.to_le_bytes());
        out.push(p);
    }
    out
}

/// What a packet's run leaves behind: the return value, whether it faulted, the packet, and the map.
#[derive(Debug, PartialEq, Eq)]
struct Result_ {
    retval: u32,
    faulted: bool,
    output: Vec<u8>,
    map: Vec<Vec<u8>>,
}

fn map_of(store: &mut dyn MapStore) -> Vec<Vec<u8>> {
    (0u32..8)
        .map(|k| {
            store
                .lookup(0, &k.to_le_bytes())
                .expect("array")
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn each_entry_bundle_resumes_as_the_reference_machine_does_from_its_slot() {
    let spec = object();
    let options = Options::default();
    let compiled = compile_object_with_entries(&spec, 0, &options, &SLOTS).expect("compiles");
    assert_eq!(compiled.entry_points.len(), SLOTS.len());
    for &slot in &SLOTS {
        let bundle = compiled
            .entry_bundle(slot)
            .expect("an entry bundle per slot");
        let mut machine = Machine::new(&spec, None, &Config::default()).expect("loads");
        let mut core =
            HxdpCore::new(compiled.image.clone(), &spec, None, &Config::default()).expect("loads");
        let mut full = Machine::new(&spec, None, &Config::default()).expect("loads");
        // The same packets one after the other, so the map's counts build up alike.
        for frame in packets() {
            let resume = resume_at(slot, &frame);
            let mut a = XdpBuff::new(&frame).expect("frame");
            let o = machine
                .run_resumed(&mut a, &XdpMd::default(), &resume)
                .expect("resumes");
            let want = Result_ {
                retval: o.retval,
                faulted: o.fault.is_some(),
                output: a.output().to_vec(),
                map: map_of(machine.maps_mut()),
            };
            let mut b = XdpBuff::new(&frame).expect("frame");
            let v = core
                .run_resumed(&mut b, &XdpMd::default(), bundle, &resume)
                .expect("resumes");
            let got = Result_ {
                retval: v.retval(),
                faulted: core.last_fault().is_some(),
                output: b.output().to_vec(),
                map: map_of(core.machine_mut().maps_mut()),
            };
            assert_eq!(
                got, want,
                "slot {slot} (bundle {bundle}), frame {frame:02x?}"
            );
            if FULL_RUN_SLOTS.contains(&slot) {
                let mut c = XdpBuff::new(&frame).expect("frame");
                let o = full.run_packet(&mut c, &XdpMd::default());
                let whole = Result_ {
                    retval: o.retval,
                    faulted: o.fault.is_some(),
                    output: c.output().to_vec(),
                    map: map_of(full.maps_mut()),
                };
                assert_eq!(
                    got, whole,
                    "slot {slot}: the resumed run is not the full run's end"
                );
            }
        }
    }
}

#[test]
fn a_resumed_packet_counts_only_the_remainders_cycles() {
    let spec = object();
    let compiled =
        compile_object_with_entries(&spec, 0, &Options::default(), &SLOTS).expect("compiles");
    let frame = &packets()[0];
    let mut core =
        HxdpCore::new(compiled.image.clone(), &spec, None, &Config::default()).expect("loads");
    core.run_packet(&mut XdpBuff::new(frame).expect("frame"), &XdpMd::default());
    let full = core.last_cycles();
    let bundle = compiled.entry_bundle(20).expect("entry");
    core.run_resumed(
        &mut XdpBuff::new(frame).expect("frame"),
        &XdpMd::default(),
        bundle,
        &resume_at(20, frame),
    )
    .expect("resumes");
    let rest = core.last_cycles();
    assert!(
        rest < full,
        "resumed at the call: {rest} cycles, from the start {full}"
    );
}

#[test]
fn without_entry_slots_the_image_is_unchanged_and_with_them_it_computes_the_same() {
    let spec = object();
    let options = Options::default();
    let plain = compile_object(&spec, 0, &options).expect("compiles");
    let none = compile_object_with_entries(&spec, 0, &options, &[]).expect("compiles");
    assert_eq!(plain.image, none.image);
    assert!(none.entry_points.is_empty());
    let with = compile_object_with_entries(&spec, 0, &options, &SLOTS).expect("compiles");
    assert!(with.image.bundles.len() >= plain.image.bundles.len());
    let mut a = HxdpCore::new(plain.image, &spec, None, &Config::default()).expect("loads");
    let mut b = HxdpCore::new(with.image, &spec, None, &Config::default()).expect("loads");
    for frame in packets() {
        let mut x = XdpBuff::new(&frame).expect("frame");
        let mut y = XdpBuff::new(&frame).expect("frame");
        let va = a.run_packet(&mut x, &XdpMd::default());
        let vb = b.run_packet(&mut y, &XdpMd::default());
        assert_eq!((va, x.output()), (vb, y.output()));
    }
}

#[test]
fn a_slot_inside_an_lddw_is_refused() {
    let err = compile_object_with_entries(&object(), 0, &Options::default(), &[17])
        .expect_err("slot 17 is the lddw's second half");
    assert!(matches!(err, CompileError::Entry { slot: 17, .. }), "{err}");
}
