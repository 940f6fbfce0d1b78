//! Random *valid* programs for the compiler targets (`hxdp`, `ehdl`): each 4 input bytes make one body instruction
//! from a menu the verifier accepts (64- and 32-bit ALU operations on r0 and r5-r9, bounds-checked packet loads and
//! stores through r2 at offsets below 64, forward conditional jumps inside the body or onto the epilogue), behind a
//! prologue that drops frames shorter than [`MIN_FRAME`] bytes and zeroes the body's registers, and an epilogue that
//! masks r0 to a verdict.

use hwxdp_ebpf::Insn;

/// The registers the body computes with.
const REGS: [u8; 6] = [0, 5, 6, 7, 8, 9];
/// ALU operations (the high nibble of the opcode), `neg` left out (it takes no source).
const ALU: [u8; 12] = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0, 0xb0, 0xc0];
/// Conditional jumps.
const JMP: [u8; 11] = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0];
/// Packet access sizes: (ldx opcode, stx opcode, bytes).
const MEM: [(u8, u8, i16); 4] = [(0x71, 0x73, 1), (0x69, 0x6b, 2), (0x61, 0x63, 4), (0x79, 0x7b, 8)];
/// Frames shorter than this are dropped by the prologue.
pub const MIN_FRAME: i32 = 64;

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

/// The program of `code` (4 bytes an instruction; a trailing partial chunk is ignored).
pub fn program(code: &[u8]) -> Vec<Insn> {
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

