//! The hXDP extended eBPF instruction set, the one source of truth for its encoding (`docs/isa-hxdp.md` explains it).
//!
//! A program is a sequence of bundles (VLIW rows) of `lanes` 64-bit slots. A slot keeps eBPF's field layout (opcode,
//! dst/src nibbles, 16-bit `off`, 32-bit `imm`, little-endian) and adds: three-operand ALU forms, 6-byte loads and
//! stores, an exit carrying the verdict, absolute bundle targets for jumps and local calls, and an out-of-packet
//! verdict on packet loads whose bounds check the compiler removed.

use hwxdp_ebpf::opcode::*;
use std::fmt;
use thiserror::Error;

/// Opcode of a 6-byte load `dst = *(u48 *)(src + off)` (LDX class, mode 0xe0).
pub const LDX6: u8 = CLASS_LDX | 0xe0;
/// Opcode of a 6-byte store `*(u48 *)(dst + off) = src` (STX class, mode 0xe0).
pub const STX6: u8 = CLASS_STX | 0xe0;
/// Opcode of the parametrized exit: `r0 = imm; exit` in one slot (JMP class, operation 0xe0).
pub const EXIT_IMM: u8 = CLASS_JMP | 0xe0;
/// The empty slot.
pub const NOP: u8 = 0x00;
/// Bit 15 of `off` marks an ALU slot as three-operand: `dst = a OP src` with `a` in bits 8-11.
pub const THREE_OPERAND: u16 = 0x8000;
/// Most lanes a bundle may have.
pub const MAX_LANES: usize = 8;
/// Lanes of the Sephirot core of the paper.
pub const DEFAULT_LANES: usize = 4;
/// Image magic: "HXDP".
pub const MAGIC: [u8; 4] = *b"HXDP";
/// Version of the image layout this crate writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the image header.
pub const HEADER_BYTES: usize = 16;
/// Bytes of one map-table entry.
pub const MAP_ENTRY_BYTES: usize = 32;
/// Program-table entry of a program the image does not contain.
pub const NO_ENTRY: u32 = u32::MAX;

/// One instruction of the extended ISA, as the compiler manipulates it and a slot holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Op {
    /// The opcode byte: eBPF's, or [`LDX6`], [`STX6`], [`EXIT_IMM`].
    pub code: u8,
    /// Destination register.
    pub dst: u8,
    /// Source register (or pseudo-source of `lddw` and `call`).
    pub src: u8,
    /// First source of a three-operand ALU form (`dst = a OP src`); `None` for the two-operand form.
    pub a: Option<u8>,
    /// eBPF's offset: memory displacement, the ALU `off` (sdiv/smod/movsx); for jumps the absolute target bundle.
    pub off: i16,
    /// The immediate (the full 64-bit value for `lddw`). For packet loads: 0, or 1 + the verdict an out-of-packet
    /// access ends the program with.
    pub imm: i64,
}

impl Op {
    /// An eBPF instruction as a two-operand op.
    pub fn from_insn(i: &hwxdp_ebpf::Insn) -> Op {
        Op {
            code: i.code,
            dst: i.dst,
            src: i.src,
            a: None,
            off: i.off,
            imm: i.imm,
        }
    }

    /// The instruction class.
    pub fn class(&self) -> u8 {
        self.code & 7
    }

    /// True for `lddw`, which takes two adjacent lanes.
    pub fn is_lddw(&self) -> bool {
        self.code == LD_DW_IMM
    }

    /// Lanes the op occupies.
    pub fn width(&self) -> usize {
        if self.is_lddw() {
            2
        } else {
            1
        }
    }

    /// True for ALU and ALU64 ops.
    pub fn is_alu(&self) -> bool {
        matches!(self.class(), CLASS_ALU | CLASS_ALU64)
    }

    /// True for a conditional jump.
    pub fn is_cond_jump(&self) -> bool {
        matches!(self.class(), CLASS_JMP | CLASS_JMP32)
            && !matches!(self.code & 0xf0, JMP_JA | JMP_CALL | JMP_EXIT | 0xe0)
    }

    /// True for an unconditional jump.
    pub fn is_ja(&self) -> bool {
        self.code == CLASS_JMP | JMP_JA
    }

    /// True for a helper call.
    pub fn is_helper_call(&self) -> bool {
        self.code == CLASS_JMP | JMP_CALL && self.src != PSEUDO_CALL
    }

    /// True for a bpf-to-bpf call.
    pub fn is_local_call(&self) -> bool {
        self.code == CLASS_JMP | JMP_CALL && self.src == PSEUDO_CALL
    }

    /// True for `exit` and the parametrized exit.
    pub fn is_exit(&self) -> bool {
        self.code == CLASS_JMP | JMP_EXIT || self.code == EXIT_IMM
    }

    /// True when the op changes the program counter (jumps, calls into functions, exits).
    pub fn is_control(&self) -> bool {
        self.is_cond_jump() || self.is_ja() || self.is_local_call() || self.is_exit()
    }

    /// True for loads from memory (`LDX`, [`LDX6`]).
    pub fn is_load(&self) -> bool {
        self.class() == CLASS_LDX
    }

    /// True for stores and atomics (`ST`, `STX`, [`STX6`]).
    pub fn is_store(&self) -> bool {
        matches!(self.class(), CLASS_ST | CLASS_STX)
    }

    /// Bytes a load or store moves.
    pub fn access_size(&self) -> usize {
        if self.code == LDX6 || self.code == STX6 {
            return 6;
        }
        match self.code & 0x18 {
            SIZE_W => 4,
            SIZE_H => 2,
            SIZE_B => 1,
            _ => 8,
        }
    }

    /// The verdict an out-of-packet access of this load ends the program with, when its bounds check was removed.
    pub fn fault_verdict(&self) -> Option<u32> {
        (self.is_load() && self.imm > 0).then(|| (self.imm - 1) as u32)
    }
}

/// A slot or image that cannot be decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IsaError {
    /// The image is shorter than its header says.
    #[error("image: truncated at byte {at} ({what})")]
    Truncated {
        /// Where the data ran out.
        at: usize,
        /// What was being read.
        what: &'static str,
    },
    /// Not an hXDP image.
    #[error("image: bad magic {found:02x?}")]
    Magic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// A layout version this crate does not read.
    #[error("image: version {found} (this reader knows {VERSION})")]
    Version {
        /// The version found.
        found: u16,
    },
    /// A lane count out of range.
    #[error("image: {lanes} lanes (1 to {MAX_LANES} allowed)")]
    Lanes {
        /// The lane count found.
        lanes: usize,
    },
    /// `lddw` in the last lane of a bundle, without its second half.
    #[error("bundle {bundle}: lddw in lane {lane} has no second half")]
    SplitLddw {
        /// The bundle.
        bundle: usize,
        /// The lane.
        lane: usize,
    },
}

/// Encodes one op into its slot (two slots for `lddw`, the second carrying the upper 32 bits).
pub fn encode_op(op: &Op) -> [u64; 2] {
    let mut off = op.off as u16;
    if let Some(a) = op.a {
        off = (off & 0x00ff) | THREE_OPERAND | ((a as u16 & 0xf) << 8);
    }
    let low = op.code as u64
        | ((op.dst as u64 & 0xf) | ((op.src as u64 & 0xf) << 4)) << 8
        | (off as u64) << 16
        | (op.imm as u32 as u64) << 32;
    let high = ((op.imm as u64) >> 32) << 32;
    [low, high]
}

/// Decodes a slot; `next` is the following slot, read only for `lddw`.
pub fn decode_op(slot: u64, next: u64) -> Op {
    let code = slot as u8;
    let regs = (slot >> 8) as u8;
    let raw_off = (slot >> 16) as u16;
    let imm32 = (slot >> 32) as u32;
    let alu = matches!(code & 7, CLASS_ALU | CLASS_ALU64);
    let (a, off) = if alu && raw_off & THREE_OPERAND != 0 {
        (
            Some(((raw_off >> 8) & 0xf) as u8),
            (raw_off & 0xff) as i8 as i16,
        )
    } else {
        (None, raw_off as i16)
    };
    let imm = if code == LD_DW_IMM {
        (imm32 as u64 | (next >> 32) << 32) as i64
    } else {
        imm32 as i32 as i64
    };
    Op {
        code,
        dst: regs & 0xf,
        src: regs >> 4,
        a,
        off,
        imm,
    }
}

/// One VLIW row: `lanes` slots, `None` for an empty lane and for the second half of an `lddw`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Bundle {
    /// The ops by lane.
    pub lanes: Vec<Option<Op>>,
}

impl Bundle {
    /// An empty bundle of `lanes` lanes.
    pub fn empty(lanes: usize) -> Bundle {
        Bundle {
            lanes: vec![None; lanes],
        }
    }

    /// The ops with their lanes, in lane order.
    pub fn ops(&self) -> impl Iterator<Item = (usize, &Op)> {
        self.lanes
            .iter()
            .enumerate()
            .filter_map(|(l, o)| o.as_ref().map(|o| (l, o)))
    }

    /// Lanes holding an op (an `lddw` counts once).
    pub fn count(&self) -> usize {
        self.lanes.iter().flatten().count()
    }
}

/// A map as the core's map configurator sets it up at load time.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MapConfig {
    /// `BPF_MAP_TYPE_*`.
    pub map_type: u32,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Entries.
    pub max_entries: u32,
    /// `BPF_F_*` creation flags.
    pub flags: u32,
}

/// What the core loads: instruction memory, one entry point per program of the object, the map configuration.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Image {
    /// Slots per bundle.
    pub lanes: usize,
    /// Instruction memory, bundle by bundle.
    pub bundles: Vec<Bundle>,
    /// Entry bundle of each program of the object, by its index ([`NO_ENTRY`] when absent); the first entry is where
    /// a packet starts.
    pub entries: Vec<u32>,
    /// The maps, in the object's order (map index = position).
    pub maps: Vec<MapConfig>,
}

fn le_u16(b: &[u8], at: usize, what: &'static str) -> Result<u16, IsaError> {
    let s = b.get(at..at + 2).ok_or(IsaError::Truncated { at, what })?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn le_u32(b: &[u8], at: usize, what: &'static str) -> Result<u32, IsaError> {
    let s = b.get(at..at + 4).ok_or(IsaError::Truncated { at, what })?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le_u64(b: &[u8], at: usize, what: &'static str) -> Result<u64, IsaError> {
    let s = b.get(at..at + 8).ok_or(IsaError::Truncated { at, what })?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

impl Image {
    /// The image's bytes: header, program table, map table, instruction memory (see `docs/isa-hxdp.md`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.lanes as u8);
        out.push(0);
        out.extend_from_slice(&(self.bundles.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.maps.len() as u16).to_le_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.to_le_bytes());
        }
        for m in &self.maps {
            for v in [m.map_type, m.key_size, m.value_size, m.max_entries, m.flags] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&[0; MAP_ENTRY_BYTES - 20]);
        }
        for b in &self.bundles {
            let mut slots = vec![0u64; self.lanes];
            for (lane, op) in b.ops() {
                let [low, high] = encode_op(op);
                slots[lane] = low;
                if op.is_lddw() && lane + 1 < self.lanes {
                    slots[lane + 1] = high;
                }
            }
            for s in slots {
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
        out
    }

    /// Reads an image.
    pub fn decode(bytes: &[u8]) -> Result<Image, IsaError> {
        let magic = bytes.get(0..4).ok_or(IsaError::Truncated {
            at: 0,
            what: "magic",
        })?;
        if magic != MAGIC {
            let mut found = [0u8; 4];
            found.copy_from_slice(magic);
            return Err(IsaError::Magic { found });
        }
        let version = le_u16(bytes, 4, "version")?;
        if version != VERSION {
            return Err(IsaError::Version { found: version });
        }
        let lanes = *bytes.get(6).ok_or(IsaError::Truncated {
            at: 6,
            what: "lanes",
        })? as usize;
        if !(1..=MAX_LANES).contains(&lanes) {
            return Err(IsaError::Lanes { lanes });
        }
        let count = le_u32(bytes, 8, "bundle count")? as usize;
        let programs = le_u16(bytes, 12, "program count")? as usize;
        let nmaps = le_u16(bytes, 14, "map count")? as usize;
        let mut at = HEADER_BYTES;
        let mut entries = Vec::with_capacity(programs);
        for _ in 0..programs {
            entries.push(le_u32(bytes, at, "program table")?);
            at += 4;
        }
        let mut maps = Vec::with_capacity(nmaps);
        for _ in 0..nmaps {
            let f = |k: usize| le_u32(bytes, at + 4 * k, "map table");
            maps.push(MapConfig {
                map_type: f(0)?,
                key_size: f(1)?,
                value_size: f(2)?,
                max_entries: f(3)?,
                flags: f(4)?,
            });
            at += MAP_ENTRY_BYTES;
        }
        let need = count
            .checked_mul(lanes * 8)
            .and_then(|n| n.checked_add(at))
            .ok_or(IsaError::Truncated {
                at,
                what: "instruction memory",
            })?;
        if bytes.len() < need {
            return Err(IsaError::Truncated {
                at: bytes.len(),
                what: "instruction memory",
            });
        }
        let mut bundles = Vec::with_capacity(count);
        for b in 0..count {
            let mut bundle = Bundle::empty(lanes);
            let mut lane = 0;
            while lane < lanes {
                let slot = le_u64(bytes, at + (b * lanes + lane) * 8, "slot")?;
                if slot as u8 == NOP && slot == 0 {
                    lane += 1;
                    continue;
                }
                if slot as u8 == LD_DW_IMM {
                    if lane + 1 >= lanes {
                        return Err(IsaError::SplitLddw { bundle: b, lane });
                    }
                    let next = le_u64(bytes, at + (b * lanes + lane + 1) * 8, "slot")?;
                    bundle.lanes[lane] = Some(decode_op(slot, next));
                    lane += 2;
                } else {
                    bundle.lanes[lane] = Some(decode_op(slot, 0));
                    lane += 1;
                }
            }
            bundles.push(bundle);
        }
        Ok(Image {
            lanes,
            bundles,
            entries,
            maps,
        })
    }

    /// Ops in the image (an `lddw` counts once).
    pub fn op_count(&self) -> usize {
        self.bundles.iter().map(Bundle::count).sum()
    }
}

/// The text form of one op, in the style of llvm-objdump with the extensions spelled out.
pub fn format_op(op: &Op) -> String {
    let size = |op: &Op| match op.access_size() {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        6 => "u48",
        _ => "u64",
    };
    let ok = |v: i64| {
        if v < 0 {
            format!("- {}", -v)
        } else {
            format!("+ {v}")
        }
    };
    if op.code == EXIT_IMM {
        return format!("exit {}", op.imm);
    }
    if op.is_load() {
        let fault = match op.fault_verdict() {
            Some(v) => format!(" ; out of packet: exit {v}"),
            None => String::new(),
        };
        return format!(
            "r{} = *({} *)(r{} {}){fault}",
            op.dst,
            size(op),
            op.src,
            ok(op.off as i64)
        );
    }
    if op.is_store() && op.code & 0xe0 != MODE_ATOMIC {
        let value = if op.class() == CLASS_ST {
            op.imm.to_string()
        } else {
            format!("r{}", op.src)
        };
        return format!(
            "*({} *)(r{} {}) = {value}",
            size(op),
            op.dst,
            ok(op.off as i64)
        );
    }
    if op.is_cond_jump() || op.is_ja() {
        let insn = hwxdp_ebpf::Insn::new(op.code, op.dst, op.src, 0, op.imm);
        let text = hwxdp_ebpf::format_insn(&insn);
        let head = text.split(" goto").next().unwrap_or(&text).to_string();
        return if op.is_ja() {
            format!("goto @{}", op.off as u16)
        } else {
            format!("{head} goto @{}", op.off as u16)
        };
    }
    if op.is_local_call() {
        return format!("call @{}", op.imm);
    }
    if let (true, Some(a)) = (op.is_alu(), op.a) {
        if let Some(text) = format_three_operand(op, a) {
            return text;
        }
    }
    let insn = hwxdp_ebpf::Insn::new(op.code, op.dst, op.src, op.off, op.imm);
    hwxdp_ebpf::format_insn(&insn)
}

/// The text of a three-operand ALU op, `rD = rA OP X` (`rD = -rA`, `rD = be16 rA`), with eBPF's two-operand
/// operator minus its `=` (`<<`, `s>>`, `s/`); `None` for forms that do not read their first operand (moves).
fn format_three_operand(op: &Op, a: u8) -> Option<String> {
    use hwxdp_ebpf::{AluOp, InsnKind, Source};
    let insn = hwxdp_ebpf::Insn::new(op.code, op.dst, op.src, op.off, op.imm);
    let kind = hwxdp_ebpf::kind(&insn).ok()?;
    let reg = |wide: bool, r: u8| format!("{}{r}", if wide { 'r' } else { 'w' });
    match kind {
        InsnKind::Alu { op: AluOp::Mov, .. } => None,
        InsnKind::Alu {
            wide,
            op: operation,
            dst,
            src,
        } => {
            let symbol = operation.symbol();
            let operator = symbol.strip_suffix('=').unwrap_or(symbol);
            let second = match src {
                Source::Reg(r) => reg(wide, r),
                Source::Imm(imm) => imm.to_string(),
            };
            Some(format!(
                "{} = {} {operator} {second}",
                reg(wide, dst),
                reg(wide, a)
            ))
        }
        InsnKind::Neg { wide, dst } => Some(format!("{} = -{}", reg(wide, dst), reg(wide, a))),
        InsnKind::Endian { order, bits, dst } => {
            Some(format!("r{dst} = {}{bits} r{a}", order.name()))
        }
        _ => None,
    }
}

/// The image as text: programs, maps, then one line per bundle with its lanes.
pub fn listing(image: &Image, program_names: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "; hXDP image v{VERSION}: {} lanes, {} bundles, {} ops\n",
        image.lanes,
        image.bundles.len(),
        image.op_count()
    ));
    for (i, e) in image.entries.iter().enumerate() {
        let name = program_names.get(i).map(String::as_str).unwrap_or("?");
        if *e == NO_ENTRY {
            out.push_str(&format!("; program {i} {name}: not in the image\n"));
        } else {
            out.push_str(&format!("; program {i} {name}: entry @{e}\n"));
        }
    }
    for (i, m) in image.maps.iter().enumerate() {
        out.push_str(&format!(
            "; map {i}: type {} key {} value {} max_entries {} flags {:#x}\n",
            hwxdp_ebpf::map_type_label(m.map_type),
            m.key_size,
            m.value_size,
            m.max_entries,
            m.flags
        ));
    }
    for (b, bundle) in image.bundles.iter().enumerate() {
        let lanes: Vec<String> = bundle
            .ops()
            .map(|(l, op)| format!("[{l}] {}", format_op(op)))
            .collect();
        out.push_str(&format!("@{b:<4} {}\n", lanes.join(" | ")));
    }
    out
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_op(self))
    }
}
