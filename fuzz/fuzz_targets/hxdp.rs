//! The hXDP compiler on random valid programs, checked against the reference machine.
//!
//! Each 4 input bytes make one body instruction from a menu the verifier accepts: 64- and 32-bit ALU operations on
//! r0 and r5-r9 (immediate or register source; shift amounts in range), bounds-checked packet loads and stores
//! through r2 at offsets below 64, and forward conditional jumps that land inside the body or on the epilogue, so every
//! program ends. The prologue loads `data`/`data_end` into r2/r3, drops frames shorter than 64 bytes and zeroes the
//! registers the body uses; the epilogue masks r0 to a verdict. The rest of the input after the instructions is the
//! frame. A program the reference machine runs to an exit must compile and give the same verdict and packet bytes on
//! the hXDP core (4 lanes and 2 lanes).
#![no_main]

use hwxdp_ebpf::Insn;
use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use libfuzzer_sys::fuzz_target;

/// The registers the body computes with.
const REGS: [u8; 6] = [0, 5, 6, 7, 8, 9];
/// ALU operations (the high nibble of the opcode), `neg` left out (it takes no source).
const ALU: [u8; 12] = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0, 0xb0, 0xc0];
/// Conditional jumps.
const JMP: [u8; 11] = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0];
/// Packet access sizes: (ldx opcode, stx opcode, bytes).
const MEM: [(u8, u8, i16); 4] = [(0x71, 0x73, 1), (0x69, 0x6b, 2), (0x61, 0x63, 4), (0x79, 0x7b, 8)];
const MIN_FRAME: i32 = 64;

fn body_insn(chunk: &[u8], at: usize, body: usize) -> Insn {
    let [kind, a, b, c] = [chunk[0], chunk[1], chunk[2], chunk[3]];
    let dst = REGS[a as usize % REGS.len()];
    let src = REGS[b as usize % REGS.len()];
    let imm = i64::from(i8::from_le_bytes([c])) * i64::from(b >> 4).max(1);
    match kind % 8 {
        0..=3 => {
            let op = ALU[a as usize / 8 % ALU.len()];
            let class = if kind & 8 == 0 { 0x07 } else { 0x04 };
            let bits = if class == 0x07 { 64 } else { 32 };
            let shift = matches!(op, 0x60 | 0x70 | 0xc0);
            if kind & 16 != 0 {
                Insn::new(class | 0x08 | op, dst, src, 0, 0)
            } else if shift {
                Insn::new(class | op, dst, 0, 0, i64::from(c) % bits)
            } else {
                Insn::new(class | op, dst, 0, 0, imm)
            }
        }
        4 => {
            let (ldx, _, size) = MEM[b as usize % MEM.len()];
            let off = i16::from(c) % (MIN_FRAME as i16 - size + 1);
            Insn::new(ldx, dst, 2, off, 0)
        }
        5 => {
            let (_, stx, size) = MEM[b as usize % MEM.len()];
            let off = i16::from(c) % (MIN_FRAME as i16 - size + 1);
            Insn::new(stx, 2, src, off, 0)
        }
        _ => {
            let op = JMP[a as usize / 8 % JMP.len()];
            // Forward only: to a later body instruction or to the epilogue's first instruction.
            let room = body - at;
            let off = (c as usize % room) as i16;
            if kind & 8 == 0 {
                Insn::new(0x05 | op, dst, 0, off, imm)
            } else {
                Insn::new(0x05 | 0x08 | op, dst, src, off, 0)
            }
        }
    }
}

fn program(code: &[u8]) -> Vec<Insn> {
    let body = code.len() / 4;
    let mut insns = vec![
        Insn::new(0x61, 2, 1, 0, 0),         // r2 = data
        Insn::new(0x61, 3, 1, 4, 0),         // r3 = data_end
        Insn::new(0xbf, 4, 2, 0, 0),         // r4 = r2
        Insn::new(0x07, 4, 0, 0, i64::from(MIN_FRAME)), // r4 += 64
        Insn::new(0xb7, 0, 0, 0, 1),         // r0 = XDP_DROP
        Insn::new(0x2d, 4, 3, (REGS.len() + body + 1) as i16, 0), // if r4 > r3 goto exit
    ];
    for &r in &REGS {
        insns.push(Insn::new(0xb7, r, 0, 0, 0));
    }
    for (at, chunk) in code.chunks_exact(4).enumerate() {
        insns.push(body_insn(chunk, at, body));
    }
    insns.push(Insn::new(0x57, 0, 0, 0, 3)); // r0 &= 3
    insns.push(Insn::new(0x95, 0, 0, 0, 0)); // exit
    insns
}

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let len = (count as usize % 48 + 1) * 4;
    if rest.len() < len + MIN_FRAME as usize {
        return;
    }
    let (code, frame) = rest.split_at(len);
    let frame = &frame[..frame.len().min(256)];
    let spec = ObjectSpec::single(ProgramSpec::standalone("fuzz", "xdp", program(code)));
    let config = Config {
        budget: 10_000,
        ..Config::default()
    };
    let Ok(mut machine) = Machine::new(&spec, None, &config) else {
        return;
    };
    let Ok(mut want) = XdpBuff::new(frame) else {
        return;
    };
    let reference = machine.run_packet(&mut want, &XdpMd::default());
    if reference.fault.is_some() {
        return;
    }
    for lanes in [4, 2] {
        let options = Options {
            lanes,
            ..Options::default()
        };
        let compiled = match compile_object(&spec, 0, &options) {
            Ok(c) => c,
            Err(e) => panic!("a program the reference machine runs does not compile at {lanes} lanes: {e}"),
        };
        let mut core = HxdpCore::new(compiled.image, &spec, None, &config).expect("the image loads");
        let mut got = XdpBuff::new(frame).expect("frame");
        let verdict = core.run_packet(&mut got, &XdpMd::default());
        assert_eq!(reference.retval, verdict.retval(), "{lanes} lanes: verdict");
        assert_eq!(want.data(), got.data(), "{lanes} lanes: packet bytes");
    }
});
