//! The compiler's working form: each function's basic blocks in address order, each a list of ops that remember the
//! eBPF instruction they came from and, for memory accesses, the region the analysis labelled.

use crate::isa::Op;
use crate::CompileError;
use hwxdp_analysis::{MemRegion, ProgramCfg, Regions};
use hwxdp_ebpf::opcode::*;
use hwxdp_object::{MapSpec, ProgramSpec};

/// Where a memory access goes, as far as dependences care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    /// Not a memory access.
    None,
    /// `struct xdp_md`: read-only.
    Ctx,
    /// The packet or its metadata.
    Packet,
    /// A stack frame, bytes `[lo, hi)` from its r10 when known.
    Stack {
        /// Whose frame.
        frame: u32,
        /// Known byte range.
        range: Option<(i64, i64)>,
    },
    /// A value of map `k`.
    Map(u32),
    /// Anywhere.
    Unknown,
}

/// One op of the working form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrOp {
    /// The op.
    pub op: Op,
    /// The eBPF instruction index it came from.
    pub origin: u32,
    /// For jumps and local calls: the eBPF instruction index jumped to.
    pub target: Option<u32>,
    /// The region of a load or store.
    pub mem: Mem,
}

/// A basic block of the working form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrBlock {
    /// The eBPF instruction the block started at (jump targets name it).
    pub start: u32,
    /// The ops in program order.
    pub ops: Vec<IrOp>,
    /// Whether execution can fall through past the block's end into the next block.
    pub falls_through: bool,
    /// The function the block belongs to (0: the program itself).
    pub func: u32,
}

/// A program in working form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrProgram {
    /// The program's name.
    pub name: String,
    /// All blocks of all functions, the program's own first, in address order.
    pub blocks: Vec<IrBlock>,
    /// eBPF instruction indices where a packet may also start with a restored context (program warping's restore
    /// slots, `docs/warp.md`): each starts a block, and no pass moves an op across it or renames a value live there.
    pub entries: Vec<u32>,
}

impl IrProgram {
    /// Ops over all blocks.
    pub fn op_count(&self) -> usize {
        self.blocks.iter().map(|b| b.ops.len()).sum()
    }

    /// Whether block `k` starts at an entry point.
    pub fn is_entry(&self, k: usize) -> bool {
        self.blocks
            .get(k)
            .is_some_and(|b| self.entries.contains(&b.start))
    }

    /// Makes each of `insns` (eBPF instruction indices in the program's own code) an entry point: the block holding
    /// it is split there, the first half falling through into the second. Returns the instruction of `insns` that
    /// is not the start of an op of the program's own code, if one is not.
    pub fn split_at_entries(&mut self, insns: &[u32]) -> Result<(), u32> {
        for &insn in insns {
            let found = self.blocks.iter().enumerate().find_map(|(k, b)| {
                let at = b.ops.iter().position(|o| o.origin == insn)?;
                (b.func == 0).then_some((k, at))
            });
            let Some((k, at)) = found else {
                return Err(insn);
            };
            if at > 0 {
                let block = &mut self.blocks[k];
                let rest = block.ops.split_off(at);
                let second = IrBlock {
                    start: insn,
                    ops: rest,
                    falls_through: block.falls_through,
                    func: block.func,
                };
                block.falls_through = true;
                self.blocks.insert(k + 1, second);
            }
            if !self.entries.contains(&insn) {
                self.entries.push(insn);
            }
        }
        self.entries.sort_unstable();
        Ok(())
    }
}

fn mem_of(label: Option<MemRegion>, size: usize, off_known: bool) -> Mem {
    match label {
        None => Mem::Unknown,
        Some(MemRegion::Context { .. }) => Mem::Ctx,
        Some(MemRegion::Packet { .. }) | Some(MemRegion::PacketMeta { .. }) => Mem::Packet,
        Some(MemRegion::Stack { frame, offset }) => Mem::Stack {
            frame: frame.0,
            range: offset.filter(|_| off_known).map(|o| (o, o + size as i64)),
        },
        Some(MemRegion::MapValue { map, .. }) => Mem::Map(map),
        Some(MemRegion::Unknown) => Mem::Unknown,
    }
}

/// Builds the working form of `spec` from its CFG and region labels.
pub fn lower(
    spec: &ProgramSpec,
    cfg: &ProgramCfg,
    regions: &Regions,
    _maps: &[MapSpec],
) -> Result<IrProgram, CompileError> {
    let slots = hwxdp_ebpf::slot_offsets(&spec.insns);
    let insn_at_slot = |slot: i64| -> Option<u32> {
        slots
            .binary_search(&usize::try_from(slot).ok()?)
            .ok()
            .map(|i| i as u32)
    };
    let mut blocks = Vec::new();
    for func in &cfg.funcs {
        for b in func.block_ids() {
            let block = func.block(b);
            let mut ops = Vec::new();
            for id in block.insns() {
                let i = id.index();
                let insn = &spec.insns[i];
                let mut op = Op::from_insn(insn);
                let unsupported = |what: &str| CompileError::Unsupported {
                    program: spec.name.clone(),
                    insn: slots[i],
                    what: what.to_string(),
                };
                if insn.class() == CLASS_LD && !insn.is_lddw() {
                    return Err(unsupported("legacy packet loads (ld_abs/ld_ind)"));
                }
                if insn.code == CLASS_JMP32 | JMP_JA {
                    return Err(unsupported("gotol"));
                }
                let mut target = None;
                if op.is_cond_jump() || op.is_ja() {
                    let slot = slots[i] as i64 + 1 + insn.off as i64;
                    target = Some(insn_at_slot(slot).ok_or_else(|| unsupported("jump target"))?);
                } else if op.is_local_call() {
                    let slot = slots[i] as i64 + 1 + insn.imm;
                    target = Some(insn_at_slot(slot).ok_or_else(|| unsupported("call target"))?);
                } else if op.class() == CLASS_JMP
                    && op.code & 0xf0 == JMP_CALL
                    && op.code & SRC_X != 0
                {
                    return Err(unsupported("callx"));
                }
                let mem = if op.is_load() || op.is_store() {
                    mem_of(regions.label(id), op.access_size(), true)
                } else {
                    Mem::None
                };
                op.off = if target.is_some() && !op.is_local_call() {
                    0
                } else {
                    op.off
                };
                ops.push(IrOp {
                    op,
                    origin: i as u32,
                    target,
                    mem,
                });
            }
            let last = &spec.insns[block.last().index()];
            let lop = Op::from_insn(last);
            let falls_through = !(lop.is_ja() || lop.is_exit());
            blocks.push(IrBlock {
                start: block.start.0,
                ops,
                falls_through,
                func: func.func.0,
            });
        }
    }
    Ok(IrProgram {
        name: spec.name.clone(),
        blocks,
        entries: Vec::new(),
    })
}

/// Registers an op reads.
pub fn reads(op: &Op) -> u16 {
    let bit = |r: u8| 1u16 << (r & 15);
    let class = op.class();
    let x = op.code & SRC_X != 0;
    match class {
        CLASS_ALU | CLASS_ALU64 => {
            let operation = op.code & 0xf0;
            let first = match op.a {
                Some(a) => bit(a),
                None if operation == ALU_MOV => 0,
                None => bit(op.dst),
            };
            let second = if x && operation != ALU_END && operation != ALU_NEG {
                bit(op.src)
            } else {
                0
            };
            let first = if operation == ALU_MOV && op.a.is_none() {
                0
            } else {
                first
            };
            first | second
        }
        CLASS_LDX => bit(op.src),
        CLASS_ST => bit(op.dst),
        CLASS_STX => {
            let mut r = bit(op.dst) | bit(op.src);
            if op.code & 0xe0 == MODE_ATOMIC && op.imm as i32 == ATOMIC_CMPXCHG {
                r |= bit(0);
            }
            r
        }
        CLASS_JMP | CLASS_JMP32 => {
            if op.code == crate::isa::EXIT_IMM {
                0
            } else if op.is_exit() {
                bit(0)
            } else if op.is_helper_call() {
                0b11_1110
            } else if op.is_local_call() {
                0b111_1111_1110
            } else if op.is_ja() {
                0
            } else if x {
                bit(op.dst) | bit(op.src)
            } else {
                bit(op.dst)
            }
        }
        _ => 0,
    }
}

/// Helper id of `bpf_tail_call`.
pub const TAIL_CALL_HELPER: i64 = 12;

/// True for a call of `bpf_tail_call`: when it succeeds it does not return (the tail-called program runs instead and
/// its exit is the caller's), when it fails it returns with r0 as it was.
pub fn is_tail_call(op: &Op) -> bool {
    op.is_helper_call() && op.imm == TAIL_CALL_HELPER
}

/// Registers an op writes. A tail call leaves r0 alone: a value set before it is still there when it fails (the
/// hardware's helper bus does not carry r0 back either), so it must stay live across the call.
pub fn writes(op: &Op) -> u16 {
    let bit = |r: u8| 1u16 << (r & 15);
    match op.class() {
        CLASS_ALU | CLASS_ALU64 | CLASS_LDX => bit(op.dst),
        CLASS_LD => bit(op.dst),
        CLASS_STX if op.code & 0xe0 == MODE_ATOMIC => {
            let imm = op.imm as i32;
            if imm == ATOMIC_CMPXCHG {
                bit(0)
            } else if imm & ATOMIC_FETCH != 0 {
                bit(op.src)
            } else {
                0
            }
        }
        CLASS_JMP | CLASS_JMP32 if is_tail_call(op) => 0b11_1110,
        CLASS_JMP | CLASS_JMP32 if op.is_helper_call() => 0b11_1111,
        CLASS_JMP | CLASS_JMP32 if op.is_local_call() => 0b11_1111,
        CLASS_JMP if op.code == crate::isa::EXIT_IMM => bit(0),
        _ => 0,
    }
}
