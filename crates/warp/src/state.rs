//! The program's state on one path of the walk (registers, stack, what the path knows of the packet length) and
//! the evaluation of one instruction on it, or the reason the engine cannot evaluate it.

use crate::sym::{Bit, Bits, Sym};
use crate::ternary::Interval;
use hwxdp_ebpf::{AluOp, ByteOrder, InsnKind, Source, Width, STACK_SIZE};
use hwxdp_xdp::alu;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Offsets of `data` and `data_end` in `struct xdp_md`.
const XDP_MD_DATA: i64 = 0;
const XDP_MD_DATA_END: i64 = 4;
/// `bpf_xdp_get_buff_len` and `bpf_xdp_load_bytes`: the helpers the engine makes itself (they only read the packet).
const XDP_GET_BUFF_LEN: i32 = 188;
const XDP_LOAD_BYTES: i32 = 189;
/// The reference machine's and the kernel's error returns of `bpf_xdp_load_bytes`.
const EINVAL: u64 = (-22i64) as u64;
const EFAULT: u64 = (-14i64) as u64;

/// Whether the engine may make helper call `id` itself (on a path whose arguments and packet lengths decide it).
pub fn engine_helper(id: i32) -> bool {
    matches!(id, XDP_GET_BUFF_LEN | XDP_LOAD_BYTES)
}

/// Largest packet length the key holds.
pub const MAX_LEN: u64 = (1 << crate::sym::LEN_BITS) - 1;
/// Shortest frame XDP sees: an Ethernet header (the kernel's `BPF_PROG_TEST_RUN` and the reference machine refuse
/// shorter ones, and a NIC drops runts).
pub const MIN_LEN: u64 = 14;

/// Why the walk stops at an instruction: what the engine cannot do there, so the processor must.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// A helper call (map lookups and updates included).
    Helper,
    /// A bpf-to-bpf call.
    LocalCall,
    /// A store or atomic into the packet.
    PacketWrite,
    /// A load, store or atomic on a map value, or an atomic on the stack.
    MapOrAtomic,
    /// A load of a context field other than `data` and `data_end`.
    ContextField,
    /// A packet load past the chunk.
    PastChunk,
    /// A packet load no bounds check on the path has proven in the packet (the processor faults on short ones).
    Unproven,
    /// A load or store through a pointer the engine does not know (computed, or not a pointer).
    UnknownPointer,
    /// A legacy packet load (`ld_abs`/`ld_ind`).
    LegacyLoad,
    /// A conditional jump on a value the engine cannot compute.
    UnknownBranch,
    /// A range compare expanding to more TCAM entries than allowed.
    WideRange,
    /// A block inside a loop of the CFG.
    Loop,
    /// The walk's depth limit (matches per path), lowered until the rules fit.
    Depth,
    /// An `exit` whose r0 the engine cannot compute.
    UnknownVerdict,
}

impl Stop {
    /// The kebab-case name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Helper => "helper",
            Stop::LocalCall => "local-call",
            Stop::PacketWrite => "packet-write",
            Stop::MapOrAtomic => "map-or-atomic",
            Stop::ContextField => "context-field",
            Stop::PastChunk => "past-chunk",
            Stop::Unproven => "unproven",
            Stop::UnknownPointer => "unknown-pointer",
            Stop::LegacyLoad => "legacy-load",
            Stop::UnknownBranch => "unknown-branch",
            Stop::WideRange => "wide-range",
            Stop::Loop => "loop",
            Stop::Depth => "depth",
            Stop::UnknownVerdict => "unknown-verdict",
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One byte of the frame (a spilled pointer keeps the whole pointer in each of its bytes: states are copied whole
/// at every split of the walk, so nothing is boxed).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackByte {
    /// Eight bits of a number.
    Bits([Bit; 8]),
    /// Byte `n` of a spilled pointer.
    Pointer(Sym, u8),
    /// Anything.
    Unknown,
}

/// Registers, frame and packet-length knowledge on one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathState {
    /// r0-r10.
    pub regs: [Sym; 11],
    /// Frame bytes written on the path, by r10-relative offset; absent bytes are zero (the frame starts zeroed).
    pub stack: BTreeMap<i64, StackByte>,
    /// The packet lengths that can reach this point (from the bounds checks decided so far).
    pub len: Interval,
    /// Instructions evaluated so far.
    pub insns: u64,
}

impl PathState {
    /// The state at the program's first instruction.
    pub fn entry() -> PathState {
        let mut regs = [Sym::Unknown; 11];
        regs[1] = Sym::Ctx;
        regs[10] = Sym::Stack(0);
        PathState {
            regs,
            stack: BTreeMap::new(),
            len: (MIN_LEN, MAX_LEN),
            insns: 0,
        }
    }

    /// The value of a jump's or ALU operation's second operand (immediates sign-extended to 64 bits).
    pub fn source(&self, src: Source) -> Sym {
        match src {
            Source::Reg(r) => self.regs[r as usize],
            Source::Imm(i) => Sym::constant(i as i64 as u64),
        }
    }

    /// Evaluates `k`, which is neither a jump nor `exit`; `Err` says why the engine cannot, and leaves the state
    /// as it was.
    pub fn eval(&mut self, k: &InsnKind, chunk: u16) -> Result<(), Stop> {
        match *k {
            InsnKind::Load {
                size,
                signed,
                dst,
                base,
                off,
            } => {
                let v = self.load(self.regs[base as usize], off as i64, size, chunk)?;
                let bits = size.bytes() * 8;
                self.regs[dst as usize] = match v {
                    Sym::Bits(b) if signed => Sym::Bits(b.sign_extend(bits)),
                    v => v,
                };
            }
            InsnKind::Store {
                size,
                base,
                off,
                src,
            } => {
                let at = match self.regs[base as usize] {
                    Sym::Stack(k) => k + off as i64,
                    Sym::Packet(_) | Sym::PacketEnd(_) => return Err(Stop::PacketWrite),
                    _ => return Err(Stop::UnknownPointer),
                };
                let value = self.source(src);
                self.store(at, size, value)?;
            }
            InsnKind::Atomic { base, .. } => {
                return Err(match self.regs[base as usize] {
                    Sym::Packet(_) => Stop::PacketWrite,
                    _ => Stop::MapOrAtomic,
                })
            }
            InsnKind::Call {
                kind: hwxdp_ebpf::CallKind::Helper,
                imm,
            } => self.packet_helper(imm, chunk)?,
            InsnKind::Call { kind, .. } => {
                return Err(match kind {
                    hwxdp_ebpf::CallKind::Local => Stop::LocalCall,
                    _ => Stop::Helper,
                })
            }
            InsnKind::CallReg { .. } => return Err(Stop::Helper),
            InsnKind::LoadPacket { .. } => return Err(Stop::LegacyLoad),
            _ => self.arithmetic(k),
        }
        Ok(())
    }

    /// A helper call the engine makes itself ([`engine_helper`]), as the reference machine and the kernel do;
    /// `Err(Stop::Helper)` when its arguments or the path's packet lengths leave the result open. The call
    /// clobbers r1-r5 (the verifier lets no program read them before writing them again).
    fn packet_helper(&mut self, id: i32, chunk: u16) -> Result<(), Stop> {
        let r0 = match id {
            XDP_GET_BUFF_LEN if self.regs[1] == Sym::Ctx => Sym::Len(0),
            XDP_LOAD_BYTES => self.load_bytes(chunk)?,
            _ => return Err(Stop::Helper),
        };
        self.regs[0] = r0;
        for r in &mut self.regs[1..=5] {
            *r = Sym::Unknown;
        }
        Ok(())
    }

    /// `bpf_xdp_load_bytes(ctx, off, r10 + k, len)` with a constant offset and length: the chunk's bytes copied
    /// into the frame and 0 when every packet length of the path holds them, -EINVAL (nothing copied) when none
    /// does, -EFAULT for an offset or length past 16 bits (the reference machine's and the kernel's results).
    fn load_bytes(&mut self, chunk: u16) -> Result<Sym, Stop> {
        let (Sym::Ctx, Some(off), Sym::Stack(dst), Some(len)) = (
            self.regs[1],
            self.regs[2].as_const(),
            self.regs[3],
            self.regs[4].as_const(),
        ) else {
            return Err(Stop::Helper);
        };
        let (off, len) = (off as u32 as u64, len as u32 as u64);
        if off > 0xffff || len > 0xffff {
            return Ok(Sym::constant(EFAULT));
        }
        if off + len > self.len.1 {
            return Ok(Sym::constant(EINVAL));
        }
        let in_frame = dst >= -(STACK_SIZE as i64) && dst + len as i64 <= 0;
        if off + len > self.len.0 || off + len > chunk as u64 || !in_frame {
            return Err(Stop::Helper);
        }
        for i in 0..len {
            let mut bits = [Bit::Zero; 8];
            bits.copy_from_slice(&Bits::packet((off + i) as u16, 1).0[..8]);
            self.stack.insert(dst + i as i64, StackByte::Bits(bits));
        }
        Ok(Sym::constant(0))
    }

    /// Evaluates an instruction that only computes a register (jumps and `exit` change nothing).
    fn arithmetic(&mut self, k: &InsnKind) {
        match *k {
            InsnKind::Alu { wide, op, dst, src } => {
                let v = alu_op(wide, op, self.regs[dst as usize], self.source(src));
                self.regs[dst as usize] = v;
            }
            InsnKind::Neg { wide, dst } => {
                let v = self.regs[dst as usize]
                    .as_const()
                    .map_or(Sym::Unknown, |c| {
                        let r = if wide {
                            alu::alu64(hwxdp_ebpf::ALU_NEG, 0, c, 0)
                        } else {
                            alu::alu32(hwxdp_ebpf::ALU_NEG, 0, c, 0)
                        };
                        r.map_or(Sym::Unknown, Sym::constant)
                    });
                self.regs[dst as usize] = v;
            }
            InsnKind::MovSx {
                wide,
                from,
                dst,
                src,
            } => {
                let bits = from.bytes() * 8;
                self.regs[dst as usize] = match self.regs[src as usize] {
                    Sym::Bits(b) => {
                        let b = b.truncate(bits).sign_extend(bits);
                        Sym::Bits(if wide { b } else { b.truncate(32) })
                    }
                    _ => Sym::Unknown,
                };
            }
            InsnKind::Endian { order, bits, dst } => {
                self.regs[dst as usize] = match self.regs[dst as usize] {
                    Sym::Bits(b) => Sym::Bits(match order {
                        ByteOrder::Le => b.truncate(bits as u32),
                        ByteOrder::Be | ByteOrder::Swap => b.swap_bytes(bits as u32),
                    }),
                    _ => Sym::Unknown,
                };
            }
            InsnKind::LoadImm64 { dst, pseudo, imm } => {
                self.regs[dst as usize] = match pseudo {
                    0 => Sym::constant(imm as u64),
                    hwxdp_ebpf::PSEUDO_MAP_FD => Sym::Map(imm as u32),
                    _ => Sym::Unknown,
                };
            }
            _ => {}
        }
    }

    /// A load of `size` bytes at `base + off`.
    fn load(&self, base: Sym, off: i64, size: Width, chunk: u16) -> Result<Sym, Stop> {
        let n = size.bytes() as i64;
        match base {
            Sym::Ctx => match (off, size) {
                (XDP_MD_DATA, Width::W) => Ok(Sym::Packet(0)),
                (XDP_MD_DATA_END, Width::W) => Ok(Sym::PacketEnd(0)),
                _ => Err(Stop::ContextField),
            },
            Sym::Packet(k) => {
                let at = k + off;
                if at < 0 || at + n > self.len.0 as i64 {
                    return Err(Stop::Unproven);
                }
                if at + n > chunk as i64 {
                    return Err(Stop::PastChunk);
                }
                Ok(Sym::Bits(Bits::packet(at as u16, n as u16)))
            }
            Sym::Stack(k) => self.load_stack(k + off, n).ok_or(Stop::UnknownPointer),
            Sym::Map(_) | Sym::PacketEnd(_) => Err(Stop::UnknownPointer),
            _ => Err(Stop::UnknownPointer),
        }
    }

    /// What `n` frame bytes at `at` hold; `None` outside the frame (where the processor faults).
    fn load_stack(&self, at: i64, n: i64) -> Option<Sym> {
        if at < -(STACK_SIZE as i64) || at + n > 0 {
            return None;
        }
        let bytes: Vec<StackByte> = (at..at + n)
            .map(|o| {
                self.stack
                    .get(&o)
                    .copied()
                    .unwrap_or(StackByte::Bits([Bit::Zero; 8]))
            })
            .collect();
        if n == 8 {
            if let StackByte::Pointer(p, 0) = bytes[0] {
                let whole = (0..8).all(|i| bytes[i] == StackByte::Pointer(p, i as u8));
                return Some(if whole { p } else { Sym::Unknown });
            }
        }
        let mut out = [Bit::Zero; 64];
        for (i, b) in bytes.iter().enumerate() {
            match b {
                StackByte::Bits(bits) => out[i * 8..i * 8 + 8].copy_from_slice(bits),
                _ => return Some(Sym::Unknown),
            }
        }
        Some(Sym::Bits(Bits(out)))
    }

    /// Writes the low `size` bytes of `value` at frame offset `at`.
    fn store(&mut self, at: i64, size: Width, value: Sym) -> Result<(), Stop> {
        let n = size.bytes() as i64;
        if at < -(STACK_SIZE as i64) || at + n > 0 {
            return Err(Stop::UnknownPointer);
        }
        for i in 0..n {
            let byte = match value {
                Sym::Bits(b) => {
                    let mut bits = [Bit::Zero; 8];
                    bits.copy_from_slice(&b.0[i as usize * 8..i as usize * 8 + 8]);
                    StackByte::Bits(bits)
                }
                p if p.is_pointer() && n == 8 => StackByte::Pointer(p, i as u8),
                _ => StackByte::Unknown,
            };
            self.stack.insert(at + i, byte);
        }
        Ok(())
    }
}

/// `a op b` in `wide` (64-bit) or 32-bit arithmetic.
fn alu_op(wide: bool, op: AluOp, a: Sym, b: Sym) -> Sym {
    let (bits, off) = op.encoding();
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        let r = if wide {
            alu::alu64(bits, off, x, y)
        } else {
            alu::alu32(bits, off, x, y)
        };
        return r.map_or(Sym::Unknown, Sym::constant);
    }
    if op == AluOp::Mov {
        return match b {
            Sym::Bits(v) if !wide => Sym::Bits(v.truncate(32)),
            _ if !wide => Sym::Unknown,
            v => v,
        };
    }
    if wide {
        if let Some(p) = pointer_op(op, a, b) {
            return p;
        }
    }
    // The length itself is a number of key bits (it fits in 16).
    let number = |v: Sym| match v {
        Sym::Len(0) => Sym::Bits(Bits::length()),
        v => v,
    };
    match (number(a), number(b)) {
        (Sym::Bits(x), Sym::Bits(y)) => bits_op(wide, op, x, y).map_or(Sym::Unknown, Sym::Bits),
        _ => Sym::Unknown,
    }
}

/// Pointer and length arithmetic: moving a pointer by a constant, and differences of pointers.
fn pointer_op(op: AluOp, a: Sym, b: Sym) -> Option<Sym> {
    let moved = |p: Sym, d: i64| -> Option<Sym> {
        Some(match p {
            Sym::Packet(k) => Sym::Packet(k.checked_add(d)?),
            Sym::PacketEnd(k) => Sym::PacketEnd(k.checked_add(d)?),
            Sym::Stack(k) => Sym::Stack(k.checked_add(d)?),
            Sym::Len(k) => Sym::Len(k.checked_add(d)?),
            _ => return None,
        })
    };
    match (op, a, b) {
        (AluOp::Add, p, c) | (AluOp::Add, c, p) if c.as_const().is_some() => {
            moved(p, c.as_const()? as i64)
        }
        (AluOp::Sub, p, c) if c.as_const().is_some() => {
            moved(p, (c.as_const()? as i64).checked_neg()?)
        }
        (AluOp::Sub, Sym::PacketEnd(x), Sym::Packet(y)) => Some(Sym::Len(x - y)),
        (AluOp::Sub, Sym::Packet(x), Sym::Packet(y))
        | (AluOp::Sub, Sym::PacketEnd(x), Sym::PacketEnd(y))
        | (AluOp::Sub, Sym::Stack(x), Sym::Stack(y)) => Some(Sym::constant((x - y) as u64)),
        _ => None,
    }
}

/// Arithmetic on numbers of key bits that keeps them numbers of key bits.
fn bits_op(wide: bool, op: AluOp, x: Bits, y: Bits) -> Option<Bits> {
    let width = if wide { 64 } else { 32 };
    let (x, y) = (x.truncate(width), y.truncate(width));
    let c = y.as_const();
    let amount = |c: u64| (c & (width as u64 - 1)) as u32;
    let power = |c: u64| (c.is_power_of_two()).then(|| c.trailing_zeros());
    let r = match op {
        AluOp::And => match (x.as_const(), c) {
            (_, Some(c)) => x.and_const(c),
            (Some(k), None) => y.and_const(k),
            _ => return None,
        },
        AluOp::Or => x.or(&y)?,
        AluOp::Add => x.add_disjoint(&y)?,
        AluOp::Sub if c == Some(0) => x,
        AluOp::Xor if c == Some(0) => x,
        AluOp::Lsh => x.shl(amount(c?), width),
        AluOp::Rsh => x.shr(amount(c?), width, false),
        AluOp::Arsh => x.shr(amount(c?), width, true),
        AluOp::Mul => x.shl(power(c?)?, width),
        AluOp::Div => x.shr(power(c?)?, width, false),
        _ => return None,
    };
    Some(r.truncate(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounds_checked_load_reads_key_bits_and_an_unchecked_one_stops() {
        let mut st = PathState::entry();
        let load_data = InsnKind::Load {
            size: Width::W,
            signed: false,
            dst: 2,
            base: 1,
            off: 0,
        };
        st.eval(&load_data, 128).unwrap();
        assert_eq!(st.regs[2], Sym::Packet(0));
        let load = InsnKind::Load {
            size: Width::H,
            signed: false,
            dst: 3,
            base: 2,
            off: 12,
        };
        st.len = (13, MAX_LEN);
        assert_eq!(st.eval(&load, 128), Err(Stop::Unproven));
        st.len = (14, MAX_LEN);
        st.eval(&load, 128).unwrap();
        assert_eq!(st.regs[3], Sym::Bits(Bits::packet(12, 2)));
        assert_eq!(st.eval(&load, 13), Err(Stop::PastChunk));
    }

    #[test]
    fn spilled_pointers_come_back_and_partial_reads_of_them_are_unknown() {
        let mut st = PathState::entry();
        let spill = InsnKind::Store {
            size: Width::DW,
            base: 10,
            off: -8,
            src: Source::Reg(1),
        };
        st.eval(&spill, 128).unwrap();
        let fill = |size| InsnKind::Load {
            size,
            signed: false,
            dst: 4,
            base: 10,
            off: -8,
        };
        st.eval(&fill(Width::DW), 128).unwrap();
        assert_eq!(st.regs[4], Sym::Ctx);
        st.eval(&fill(Width::W), 128).unwrap();
        assert_eq!(st.regs[4], Sym::Unknown);
    }

    #[test]
    fn a_store_through_a_computed_stack_pointer_stops() {
        let mut st = PathState::entry();
        st.regs[3] = Sym::Unknown;
        let store = InsnKind::Store {
            size: Width::B,
            base: 3,
            off: 0,
            src: Source::Imm(1),
        };
        assert_eq!(st.eval(&store, 128), Err(Stop::UnknownPointer));
    }
}
