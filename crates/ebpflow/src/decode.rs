//! What the engine's ID stage makes of one instruction-memory slot (`ebpflow_core.sv`'s decode): the slot's kind in
//! the pipeline, the registers it reads and writes, and the multiply/divide latency class.

/// How a slot goes through the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ALU, store, lddw's second half, legacy load, load, atomic, an instruction that faults: one slot through EX.
    Pipe,
    /// A conditional jump (resolved in EX).
    Branch,
    /// Multiply, divide or modulo (the multi-cycle unit in EX).
    MulDiv,
    /// `ja`/`gotol`: redirects from ID.
    Ja,
    /// The first half of `lddw`: ID takes one more cycle for the second.
    LddwFirst,
    /// A bpf-to-bpf call (waits in ID for the pipeline to drain).
    Call,
    /// A helper call or runtime function (waits in ID for the drain, then for the coprocessor).
    Helper,
    /// `exit` (waits in ID for the drain).
    Exit,
}

/// One decoded slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// How it goes through the pipeline.
    pub kind: Kind,
    /// The register it writes, if it writes one.
    pub rd: Option<u8>,
    /// It writes its register only in MEM (a load, a fetching atomic, a legacy load): a reader right behind stalls.
    pub late: bool,
    /// Registers ID reads (dst, src, r0 for cmpxchg), for the load-use check.
    pub reads: [Option<u8>; 3],
    /// An atomic: its write takes the data memory's port in MEM, so EX waits a cycle behind it.
    pub atomic: bool,
    /// A memory access (load, store, atomic, legacy load).
    pub memory: bool,
    /// Multiply (false: divide or modulo), for [`Kind::MulDiv`].
    pub multiply: bool,
    /// A 64-bit operation, for [`Kind::MulDiv`].
    pub wide: bool,
    /// The opcode byte.
    pub code: u8,
    /// The immediate (the helper id of a `call`).
    pub imm: i32,
}

/// Cycles a multiply spends in EX.
pub const MUL_CYCLES: u32 = 6;
/// Cycles a 32-bit divide or modulo spends in EX.
pub const DIV32_CYCLES: u32 = 34;
/// Cycles a 64-bit divide or modulo spends in EX.
pub const DIV64_CYCLES: u32 = 66;
/// Cycles a divide or modulo by zero spends in EX.
pub const DIV0_CYCLES: u32 = 2;

/// Decodes a slot as the first half of an instruction (`second`: the slot is lddw's second half).
pub fn decode(slot: u64, second: bool) -> Decoded {
    let code = slot as u8;
    let dst = (slot >> 8) as u8 & 15;
    let src = (slot >> 12) as u8 & 15;
    let imm = (slot >> 32) as i32;
    let mut d = Decoded {
        kind: Kind::Pipe,
        rd: None,
        late: false,
        reads: [None; 3],
        atomic: false,
        memory: false,
        multiply: false,
        wide: code & 7 == 7,
        code,
        imm,
    };
    if second {
        d.rd = None; // lddw's register is written from EX; nothing in ID reads it
        return d;
    }
    let op = code >> 4;
    let x = code & 8 != 0;
    let mode = code >> 5;
    let size = (code >> 3) & 3;
    match code & 7 {
        4 | 7 => {
            d.kind = if matches!(op, 2 | 3 | 9) {
                Kind::MulDiv
            } else {
                Kind::Pipe
            };
            d.multiply = op == 2;
            d.rd = Some(dst);
            if op != 0xb {
                d.reads[0] = Some(dst);
            }
            if x && op != 8 && op != 0xd {
                d.reads[1] = Some(src);
            }
        }
        5 | 6 => match op {
            0 => d.kind = Kind::Ja,
            8 if code & 7 == 5 && src == 1 && !x => d.kind = Kind::Call,
            8 if code & 7 == 5 && (src == 0 || src == 2) && !(x && src == 2) => {
                d.kind = Kind::Helper
            }
            9 if code & 7 == 5 => d.kind = Kind::Exit,
            8 | 9 | 0xe | 0xf => d.kind = Kind::Pipe,
            _ => {
                d.kind = Kind::Branch;
                d.reads[0] = Some(dst);
                if x {
                    d.reads[1] = Some(src);
                }
            }
        },
        1 if mode == 3 || (mode == 4 && size != 3) => {
            d.memory = true;
            d.reads[1] = Some(src);
            d.rd = Some(dst);
            d.late = true;
        }
        2 if mode == 3 => {
            d.memory = true;
            d.reads[0] = Some(dst);
        }
        3 if mode == 3 => {
            d.memory = true;
            d.reads = [Some(dst), Some(src), None];
        }
        3 if mode == 6 && (size == 0 || size == 3) => {
            d.memory = true;
            d.atomic = true;
            d.reads = [Some(dst), Some(src), None];
            if imm == 0xf1 {
                d.reads[2] = Some(0);
                d.rd = Some(0);
                d.late = true;
            } else if imm & 1 != 0 {
                d.rd = Some(src);
                d.late = true;
            }
        }
        0 if code == 0x18 => d.kind = Kind::LddwFirst,
        0 if (mode == 1 || mode == 2) && size != 3 => {
            d.memory = true;
            if mode == 2 {
                d.reads[1] = Some(src);
            }
            d.rd = Some(0);
            d.late = true;
        }
        _ => {}
    }
    d
}

impl Decoded {
    /// Cycles the slot spends in EX on the multiply/divide unit, given whether the divisor is zero.
    pub fn muldiv_cycles(&self, divisor_zero: bool) -> u32 {
        if self.multiply {
            MUL_CYCLES
        } else if divisor_zero {
            DIV0_CYCLES
        } else if self.wide {
            DIV64_CYCLES
        } else {
            DIV32_CYCLES
        }
    }

    /// Whether ID reads register `r`.
    pub fn reads(&self, r: u8) -> bool {
        self.reads.contains(&Some(r))
    }
}
