//! The pipeline IR executed the way the hardware will run it, stage by stage, against the reference machine.
//!
//! Each stage reads its input boundary and writes the next; an op runs only when its predicate holds; predicates
//! form at their `ready` boundary from the carried predicates and condition outputs. At every boundary whatever the
//! pruning says is dead is overwritten with poison (registers, stack bytes) or dropped (predicates, conditions, which
//! then fail loudly when read), so a schedule that reads a value too early or a live set that misses a value gives a
//! different verdict or packet. Programs without helper calls only (helper blocks are the Verilog session's), except
//! the PROG_ARRAY slot read of inlined tail calls, which the simulator answers from the slots the test gives.

mod common;

use hwxdp_ebpf::{AluOp, ByteOrder, InsnKind, Source, ALU_MOV, ALU_NEG};
use hwxdp_ehdl::tailcall::TAIL_SLOT;
use hwxdp_ehdl::{ArgConst, Label, OpKind, Pipeline};
use hwxdp_maps::MapStore;
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::alu::{alu32, alu64, condition, endian};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};

const CTX: u64 = 0x1000_0000;
const PKT: u64 = 0x2000_0000;
const STACK_TOP: u64 = 0x3000_0000;
const POISON: u64 = 0xdead_beef_0bad_f00d;

#[derive(Clone)]
struct Boundary {
    regs: [u64; 11],
    stack: Vec<u8>,
    preds: Vec<Option<bool>>,
    conds: Vec<Option<bool>>,
    verdict: Option<u64>,
}

struct Sim<'a> {
    p: &'a Pipeline,
    flat: &'a ProgramSpec,
    pkt: Vec<u8>,
    /// The PROG_ARRAY's slots (program indices) the tail-call slot read sees.
    slots: &'a [Option<u32>],
}

impl Sim<'_> {
    fn kind(&self, insn: u32) -> InsnKind {
        hwxdp_ebpf::kind(&self.flat.insns[insn as usize]).expect("valid")
    }

    fn load(&self, st: &Boundary, addr: u64, size: u32) -> u64 {
        let mut v = 0u64;
        for i in 0..size as u64 {
            let a = addr + i;
            let byte = if (PKT..PKT + self.pkt.len() as u64).contains(&a) {
                self.pkt[(a - PKT) as usize]
            } else if (STACK_TOP - 512..STACK_TOP).contains(&a) {
                st.stack[(a - (STACK_TOP - 512)) as usize]
            } else {
                panic!("load from {a:#x} outside packet and stack")
            };
            v |= (byte as u64) << (8 * i);
        }
        v
    }

    fn ctx_load(&self, off: i64) -> u64 {
        match off {
            0 | 8 => PKT,
            4 => PKT + self.pkt.len() as u64,
            _ => 0,
        }
    }

    /// The address of a memory op: the label's constant, or the base register.
    fn addr(&self, st: &Boundary, label: Label, base: u8, off: i16) -> u64 {
        match label {
            Label::Packet { offset: Some(o) } => PKT.wrapping_add(o as u64),
            Label::Stack { offset: Some(o) } => STACK_TOP.wrapping_add(o as u64),
            _ => st.regs[base as usize].wrapping_add(off as i64 as u64),
        }
    }

    fn enabled(&self, st: &Boundary, pred: u32) -> bool {
        st.preds[pred as usize].unwrap_or_else(|| panic!("p{pred} is not carried where it is used"))
    }

    fn run(&mut self) -> (u64, Vec<u8>) {
        let mut st = Boundary {
            regs: [POISON; 11],
            stack: vec![0xa5; 512],
            preds: vec![None; self.p.preds.len()],
            conds: vec![None; self.p.ops.len()],
            verdict: None,
        };
        st.regs[1] = CTX;
        st.regs[10] = STACK_TOP;
        for k in 0..self.p.stages.len() {
            self.form_preds(&mut st, k as u32);
            let mut next = st.clone();
            let mut pkt_writes = Vec::new();
            for &o in &self.p.stages[k].ops {
                let op = &self.p.ops[o as usize];
                let on = self.enabled(&st, op.pred);
                if matches!(op.kind, OpKind::Cond | OpKind::LenCheck { .. }) {
                    next.conds[o as usize] = Some(on && self.cond(&st, op));
                    continue;
                }
                if on {
                    self.exec(&st, &mut next, &mut pkt_writes, op);
                }
            }
            for (at, byte) in pkt_writes {
                self.pkt[at] = byte;
            }
            st = next;
            if let Some(nb) = self.p.stages.get(k + 1) {
                prune(&mut st, nb, k as u64);
            }
        }
        (
            st.verdict.expect("some exit ran"),
            std::mem::take(&mut self.pkt),
        )
    }

    fn form_preds(&self, st: &mut Boundary, k: u32) {
        for d in &self.p.preds {
            if d.ready != k {
                continue;
            }
            let v = if d.terms.is_empty() {
                true
            } else {
                d.terms.iter().any(|&(src, cond)| {
                    self.enabled(st, src)
                        && cond.is_none_or(|(c, pol)| {
                            st.conds[c as usize]
                                .unwrap_or_else(|| panic!("c{c} not carried to p{}", d.id))
                                == pol
                        })
                })
            };
            st.preds[d.id as usize] = Some(v);
        }
    }

    fn cond(&self, st: &Boundary, op: &hwxdp_ehdl::Op) -> bool {
        match (&op.kind, self.kind(op.insn)) {
            (
                OpKind::LenCheck {
                    ensured,
                    taken_if_short,
                    ..
                },
                _,
            ) => ((self.pkt.len() as i64) < *ensured) == *taken_if_short,
            (
                _,
                InsnKind::Branch {
                    wide,
                    cond,
                    dst,
                    src,
                    ..
                },
            ) => {
                let b = match src {
                    Source::Reg(r) => st.regs[r as usize],
                    Source::Imm(i) => i as i64 as u64,
                };
                condition(cond.bits(), wide, st.regs[dst as usize], b).expect("condition")
            }
            k => panic!("not a condition: {k:?}"),
        }
    }

    fn exec(
        &self,
        st: &Boundary,
        next: &mut Boundary,
        pkt_writes: &mut Vec<(usize, u8)>,
        op: &hwxdp_ehdl::Op,
    ) {
        let r = |x: u8| st.regs[x as usize];
        let alu = |wide: bool, op: AluOp, d: u64, s: u64| {
            let (code, off) = op.encoding();
            if wide {
                alu64(code, off, d, s)
            } else {
                alu32(code, off, d, s)
            }
            .expect("alu")
        };
        match (&op.kind, self.kind(op.insn)) {
            (OpKind::Exit { reg, imm }, _) => {
                next.verdict = Some(imm.map_or(r(*reg), |v| v as u64));
            }
            (
                OpKind::Alu3 { a },
                InsnKind::Alu {
                    wide,
                    op: o,
                    dst,
                    src,
                },
            ) => {
                let s = match src {
                    Source::Reg(x) => r(x),
                    Source::Imm(i) => i as i64 as u64,
                };
                next.regs[dst as usize] = alu(wide, o, r(*a), s);
            }
            (OpKind::Alu3 { a }, InsnKind::Neg { wide, dst }) => {
                next.regs[dst as usize] = if wide {
                    alu64(ALU_NEG, 0, r(*a), 0)
                } else {
                    alu32(ALU_NEG, 0, r(*a), 0)
                }
                .expect("neg");
            }
            (OpKind::Alu3 { a }, InsnKind::Endian { order, bits, dst }) => {
                next.regs[dst as usize] = swap(r(*a), order, bits);
            }
            (
                OpKind::Alu,
                InsnKind::Alu {
                    wide,
                    op: o,
                    dst,
                    src,
                },
            ) => {
                let s = match src {
                    Source::Reg(x) => r(x),
                    Source::Imm(i) if wide || o != AluOp::Mov => i as i64 as u64,
                    Source::Imm(i) => i as u32 as u64,
                };
                next.regs[dst as usize] = alu(wide, o, r(dst), s);
            }
            (OpKind::Alu, InsnKind::Neg { wide, dst }) => {
                next.regs[dst as usize] = if wide {
                    alu64(ALU_NEG, 0, r(dst), 0)
                } else {
                    alu32(ALU_NEG, 0, r(dst), 0)
                }
                .expect("neg");
            }
            (OpKind::Alu, InsnKind::Endian { order, bits, dst }) => {
                next.regs[dst as usize] = swap(r(dst), order, bits);
            }
            (
                OpKind::Alu,
                InsnKind::MovSx {
                    wide,
                    from,
                    dst,
                    src,
                },
            ) => {
                let off = (from.bytes() * 8) as i16;
                next.regs[dst as usize] = if wide {
                    alu64(ALU_MOV, off, 0, r(src))
                } else {
                    alu32(ALU_MOV, off, 0, r(src))
                }
                .expect("movsx");
            }
            (
                OpKind::Alu,
                InsnKind::LoadImm64 {
                    dst,
                    pseudo: 0,
                    imm,
                },
            ) => {
                next.regs[dst as usize] = imm as u64;
            }
            (
                OpKind::Load,
                InsnKind::Load {
                    size,
                    signed,
                    dst,
                    base,
                    off,
                },
            ) => {
                let v = match op.label {
                    Label::Context { offset: Some(o) } => self.ctx_load(o),
                    l => self.load(st, self.addr(st, l, base, off), size.bytes()),
                };
                let bits = size.bytes() * 8;
                next.regs[dst as usize] = if signed && bits < 64 {
                    (((v << (64 - bits)) as i64) >> (64 - bits)) as u64
                } else {
                    v
                };
            }
            (
                OpKind::Store,
                InsnKind::Store {
                    size,
                    base,
                    off,
                    src,
                },
            ) => {
                let v = match src {
                    Source::Reg(x) => r(x),
                    Source::Imm(i) => i as i64 as u64,
                };
                let a = self.addr(st, op.label, base, off);
                for i in 0..size.bytes() as u64 {
                    let byte = (v >> (8 * i)) as u8;
                    let at = a + i;
                    if (PKT..PKT + self.pkt.len() as u64).contains(&at) {
                        pkt_writes.push(((at - PKT) as usize, byte));
                    } else if (STACK_TOP - 512..STACK_TOP).contains(&at) {
                        next.stack[(at - (STACK_TOP - 512)) as usize] = byte;
                    } else {
                        panic!("store to {at:#x}");
                    }
                }
            }
            (
                OpKind::Helper {
                    id: TAIL_SLOT,
                    consts,
                    ..
                },
                _,
            ) => {
                let index = consts
                    .iter()
                    .find_map(|c| match c {
                        (3, ArgConst::Scalar(v)) => Some(*v as u64),
                        _ => None,
                    })
                    .unwrap_or(r(3));
                // 1 + the program index, 0 for an empty slot or an index out of range.
                let word = usize::try_from(index)
                    .ok()
                    .and_then(|i| self.slots.get(i).copied().flatten())
                    .map_or(0, |p| p as u64 + 1);
                next.regs[0] = word;
                for x in 1..=5 {
                    next.regs[x] = POISON;
                }
            }
            (k, i) => panic!("the simulator does not run {k:?} ({i:?})"),
        }
    }
}

fn swap(v: u64, order: ByteOrder, bits: u8) -> u64 {
    let swap = matches!(order, ByteOrder::Be | ByteOrder::Swap);
    endian(v, bits as i64, swap).expect("endian")
}

/// Overwrites what boundary `nb` does not carry.
fn prune(st: &mut Boundary, nb: &hwxdp_ehdl::Stage, k: u64) {
    for r in 0..10u8 {
        if !nb.live_regs.contains(r) {
            st.regs[r as usize] = POISON ^ k;
        }
    }
    for (i, b) in st.stack.iter_mut().enumerate() {
        if !nb.live_stack.contains(i as i64 - 512) {
            *b = 0x5a;
        }
    }
    for (p, v) in st.preds.iter_mut().enumerate() {
        if !nb.live_preds.contains(&(p as u32)) {
            *v = None;
        }
    }
    for (c, v) in st.conds.iter_mut().enumerate() {
        if !nb.live_conds.contains(&(c as u32)) {
            *v = None;
        }
    }
}

fn packets() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for len in [14usize, 20, 33, 34, 42, 54, 60, 64, 65, 90, 128] {
        for proto in [6u8, 17, 1] {
            for ethertype in [[0x08, 0x00], [0x86, 0xdd], [0x81, 0x00]] {
                let mut p: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                p[12] = ethertype[0];
                p[13] = ethertype[1];
                if len > 23 {
                    p[14] = 0x45;
                    p[23] = proto;
                }
                if len > 20 && ethertype == [0x86, 0xdd] {
                    p[20] = proto;
                }
                out.push(p);
            }
        }
    }
    out
}

/// Runs `program` of `object` in the pipeline and on the reference machine on every test packet.
fn agree(object: &ObjectSpec, program: &ProgramSpec) {
    let p = hwxdp_ehdl::compile(program, &object.maps, &hwxdp_ehdl::Options::default())
        .expect("compiles");
    let flat = hwxdp_ehdl::flatten(program, &object.maps, 16384).expect("flattens");
    for packet in packets() {
        let mut machine =
            Machine::new(object, Some(&program.name), &Config::default()).expect("loads");
        let mut buff = XdpBuff::new(&packet).expect("fits");
        let want = machine.run_packet(&mut buff, &XdpMd::default());
        let mut sim = Sim {
            p: &p,
            flat: &flat.spec,
            pkt: packet.clone(),
            slots: &[],
        };
        let (verdict, bytes) = sim.run();
        assert_eq!(
            (verdict as u32, bytes.as_slice()),
            (want.retval, buff.data()),
            "{}: packet of {} bytes\n{}",
            program.name,
            packet.len(),
            hwxdp_ehdl::text(&p)
        );
    }
}

fn object(text: &str) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("assembles");
    ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
}

#[test]
fn hand_written_pipelines_agree_with_the_reference_machine() {
    for text in [
        // Bounds checks, if/else, a join, a loop over packet bytes, a swap of MAC bytes.
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 34\nif r4 > r3 goto drop\n\
         r5 = *(u8 *)(r2 + 23)\nif r5 == 6 goto tcp\nr0 = 2\nr6 = *(u16 *)(r2 + 12)\ngoto out\n\
         tcp: r0 = 3\nr6 = *(u16 *)(r2 + 14)\nout: r6 &= 255\nr0 += r6\nr0 &= 3\nexit\ndrop: r0 = 1\nexit",
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 12\nif r4 > r3 goto out\n\
         r0 = 0\nr1 = 0\ntop: r5 = *(u8 *)(r2 + 0)\nr0 += r5\nr2 += 1\nr1 += 1\nif r1 < 12 goto top\n\
         r0 &= 3\nexit\nout: r0 = 1\nexit",
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto out\n\
         r5 = *(u16 *)(r2 + 0)\nr6 = *(u16 *)(r2 + 6)\n*(u16 *)(r2 + 0) = r6\n*(u16 *)(r2 + 6) = r5\n\
         r7 = *(u32 *)(r2 + 2)\n*(u64 *)(r10 - 8) = r7\nr8 = *(u32 *)(r10 - 8)\n*(u32 *)(r2 + 8) = r8\n\
         r0 = 3\nexit\nout: r0 = 1\nexit",
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 100\nif r4 > r3 goto out\n\
         r0 = *(u8 *)(r2 + 99)\nr0 &= 3\nexit\nout: r0 = 2\nexit",
    ] {
        let obj = object(text);
        agree(&obj, &obj.programs[0]);
    }
}

#[test]
fn inlined_callees_with_their_own_registers_and_frames_agree_with_the_reference_machine() {
    for text in [
        // The callee writes r6-r8 while the caller still needs r6 and r7: both spilled around the callee.
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 20\nif r4 > r3 goto out\n\
         r6 = *(u8 *)(r2 + 12)\nr7 = *(u8 *)(r2 + 13)\nr1 = r2\ncall mix\nr0 += r6\nr0 += r7\nr0 &= 3\nexit\n\
         out: r0 = 1\nexit\n\
         mix: r6 = *(u8 *)(r1 + 14)\nr7 = *(u8 *)(r1 + 15)\nr8 = r6\nr8 ^= r7\nr0 = r8\nexit",
        // Three frames: the caller's stack and r6 live across the call, the callee's own stack slot at the same
        // r10 offset, a copy of its r10 passed to a nested callee that reads through it and has a frame of its own.
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 20\nif r4 > r3 goto out\n\
         r5 = *(u32 *)(r2 + 0)\n*(u64 *)(r10 - 8) = r5\nr6 = *(u8 *)(r2 + 16)\nr1 = *(u32 *)(r2 + 4)\n\
         call outer\nr5 = *(u64 *)(r10 - 8)\nr0 += r5\nr0 += r6\nr0 &= 3\nexit\nout: r0 = 2\nexit\n\
         outer: r6 = r1\n*(u64 *)(r10 - 8) = r1\nr2 = r10\nr2 += -8\nr1 = r2\ncall inner\nr0 += r6\n\
         r1 = *(u64 *)(r10 - 8)\nr0 ^= r1\nexit\n\
         inner: r6 = *(u64 *)(r1 + 0)\n*(u32 *)(r10 - 4) = r6\nr7 = *(u32 *)(r10 - 4)\nr0 = r7\nr0 += r6\n\
         *(u64 *)(r1 + 0) = r0\nexit",
    ] {
        let obj = object(text);
        agree(&obj, &obj.programs[0]);
    }
}

#[test]
fn example_pipelines_without_helpers_agree_with_the_reference_machine() {
    let obj = common::example_object("tail_dispatch");
    let mut ran = 0;
    for program in &obj.programs {
        let p = hwxdp_ehdl::compile(program, &obj.maps, &hwxdp_ehdl::Options::default())
            .expect("compiles");
        if p.summary.helper_stages == 0 {
            agree(&obj, program);
            ran += 1;
        }
    }
    assert_eq!(ran, 2, "tail_ipv4 and tail_ipv6 have no helper calls");
}

/// tail_dispatch with its callees inlined (the PROG_ARRAY slot read answered from the slots) against the reference
/// machine making real tail calls, with the table as the workload fills it, empty, full, and with the ARP slot
/// filled; the 802.1Q slot (9) is always beyond the table.
#[test]
fn inlined_tail_calls_agree_with_the_reference_machine() {
    let obj = common::example_object("tail_dispatch");
    let index = |name: &str| common::program_index(&obj, name);
    let (v4, v6) = (Some(index("tail_ipv4")), Some(index("tail_ipv6")));
    let program = &obj.programs[index("tail_dispatch") as usize];
    let p = hwxdp_ehdl::compile_object(
        program,
        &obj.programs,
        &obj.maps,
        &hwxdp_ehdl::Options::default(),
    )
    .expect("compiles");
    assert_eq!(p.tail_targets, [index("tail_ipv4"), index("tail_ipv6")]);
    let flat = {
        let f = hwxdp_ehdl::flatten(program, &obj.maps, 16384).expect("flattens");
        hwxdp_ehdl::tailcall::inline(program, f, &obj.programs, &obj.maps, 16384).expect("inlines")
    };
    let mut packets = packets();
    for (ethertype, ttl_at) in [([0x08, 0x00], 22), ([0x86, 0xdd], 21), ([0x08, 0x06], 20)] {
        for ttl in [0u8, 1, 2, 64] {
            let mut p: Vec<u8> = (0..80).map(|i| (i * 5 + 1) as u8).collect();
            p[12] = ethertype[0];
            p[13] = ethertype[1];
            p[14] = 0x45;
            p[ttl_at] = ttl;
            packets.push(p);
        }
    }
    for slots in [
        [v4, v6, None, None],
        [None, None, None, None],
        [v6, v4, v4, v6],
        [v4, v6, v4, None],
    ] {
        for packet in &packets {
            let mut machine =
                Machine::new(&obj, Some(&program.name), &Config::default()).expect("loads");
            for (i, s) in slots.iter().enumerate() {
                if let Some(prog) = s {
                    machine
                        .maps_mut()
                        .update(0, &(i as u32).to_le_bytes(), &prog.to_le_bytes(), 0)
                        .expect("slot");
                }
            }
            let mut buff = XdpBuff::new(packet).expect("fits");
            let want = machine.run_packet(&mut buff, &XdpMd::default());
            let mut sim = Sim {
                p: &p,
                flat: &flat.spec,
                pkt: packet.clone(),
                slots: &slots,
            };
            let (verdict, bytes) = sim.run();
            assert_eq!(
                (verdict as u32, bytes.as_slice()),
                (want.retval, buff.data()),
                "slots {slots:?}: packet of {} bytes",
                packet.len(),
            );
        }
    }
}
