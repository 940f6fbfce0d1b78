//! The interpreter loop and memory access through region-tagged addresses.

use crate::alu;
use crate::fault::{Fault, FaultKind};
use crate::machine::{Env, Machine, Outcome};
use crate::prepare::{Op, Program};
use crate::region;
use crate::{XdpBuff, XdpMd};
use hwxdp_ebpf::*;
use hwxdp_maps::Maps;

/// Deepest bpf-to-bpf call nesting the kernel allows.
pub const MAX_CALL_FRAMES: usize = 8;
/// Stack bytes for all frames.
pub const STACK_BYTES: usize = STACK_SIZE * MAX_CALL_FRAMES;
/// Tail calls one packet may make (`MAX_TAIL_CALL_CNT`).
pub const MAX_TAIL_CALLS: u32 = 33;

/// Coverage flags per instruction: executed, and for conditional jumps which ways they went.
pub(crate) const EXECUTED: u8 = 1;
pub(crate) const TAKEN: u8 = 2;
pub(crate) const NOT_TAKEN: u8 = 4;

struct Frame {
    program: usize,
    return_pc: usize,
    saved: [u64; 4],
}

/// The state of one packet's run.
pub(crate) struct Vm<'a> {
    /// r0-r10, padded to 16 so that a 4-bit register field indexes it without a bounds check.
    pub regs: [u64; 16],
    programs: &'a [Result<Program, crate::fault::LoadError>],
    program: usize,
    pub buff: &'a mut XdpBuff,
    pub maps: &'a mut Maps,
    pub env: &'a mut Env,
    pub stack: &'a mut [u8],
    pub(crate) md: XdpMd,
    frames: Vec<Frame>,
    stack_used: usize,
    pub tail_calls: u32,
    pub outcome: Outcome,
    /// Set by `bpf_tail_call` when it succeeds: the program to continue in.
    pub tail_call_to: Option<usize>,
    /// Set by the conformance suite's unwind helper: the program ends now.
    pub unwound: bool,
    /// Buffers for helper arguments, kept across packets so that map lookups do not allocate.
    pub scratch: &'a mut [Vec<u8>; 2],
    last_pc: usize,
}

impl<'a> Vm<'a> {
    pub fn new(machine: &'a mut Machine, buff: &'a mut XdpBuff, md: &XdpMd) -> Self {
        Vm {
            regs: [0; 16],
            programs: &machine.programs,
            program: machine.entry,
            buff,
            maps: &mut machine.maps,
            env: &mut machine.env,
            stack: &mut machine.stack,
            md: *md,
            frames: Vec::new(),
            stack_used: STACK_SIZE,
            tail_calls: 0,
            outcome: Outcome::default(),
            tail_call_to: None,
            unwound: false,
            scratch: &mut machine.scratch,
            last_pc: 0,
        }
    }

    fn current(&self) -> &'a Program {
        match &self.programs[self.program] {
            Ok(p) => p,
            Err(_) => unreachable!("only prepared programs are entered"),
        }
    }

    /// Runs to the final exit or a fault, with r1 and r2 as given; returns the outcome and the full 64-bit r0.
    pub fn run_with(mut self, r1: u64, r2: u64) -> (Outcome, u64) {
        self.regs[1] = r1;
        self.regs[2] = r2;
        self.run_from(0)
    }

    /// Runs from instruction `pc` of the entry program with r0-r9 as given (r10 is the frame pointer), counting
    /// `skipped` instructions as already executed; the caller has written the frame.
    pub fn resume_at(mut self, pc: usize, regs: [u64; 10], skipped: u64) -> Outcome {
        self.regs[..10].copy_from_slice(&regs);
        self.outcome.insns = skipped;
        self.run_from(pc).0
    }

    fn run_from(mut self, start: usize) -> (Outcome, u64) {
        self.regs[10] = region::stack(STACK_SIZE);
        self.outcome.path = mix(0xcbf2_9ce4_8422_2325, self.program as u64);
        let result = if self.env.record_trace {
            self.execute::<true>(start)
        } else {
            self.execute::<false>(start)
        };
        if let Err(kind) = result {
            let (program, insn) = self.fault_site();
            self.outcome.fault = Some(Box::new(Fault {
                program,
                insn,
                kind,
            }));
        } else {
            self.outcome.retval = self.regs[0] as u32;
            let p = self.current();
            if !p.is_empty() {
                let pc = self.last_pc.min(p.len() - 1);
                self.outcome.exit = Some((self.program, p.slot(pc) as u32));
            }
        }
        self.stack[..self.stack_used].fill(0);
        let r0 = if self.outcome.fault.is_some() {
            0
        } else {
            self.regs[0]
        };
        (self.outcome, r0)
    }

    /// True if program `index` exists and was prepared without error (a tail call target).
    pub fn program_ok(&self, index: usize) -> bool {
        matches!(self.programs.get(index), Some(Ok(_)))
    }

    fn fault_site(&self) -> (String, usize) {
        let p = self.current();
        let pc = self.last_pc.min(p.len().saturating_sub(1));
        (p.name.clone(), if p.is_empty() { 0 } else { p.slot(pc) })
    }
}

/// Mixes a value into a path hash (FNV-1a style over 64-bit words).
#[inline]
fn mix(hash: u64, value: u64) -> u64 {
    (hash ^ value).wrapping_mul(0x0000_0100_0000_01b3)
}

impl Vm<'_> {
    /// The interpreter loop. The instructions compilers emit most are matched on their whole opcode byte first, with
    /// stack and packet accesses inlined; everything else goes through the general path below them.
    fn execute<const RECORD: bool>(&mut self, start: usize) -> Result<(), FaultKind> {
        let mut program = self.current();
        let mut ops: &[Op] = &program.ops;
        let mut pc = start;
        // The op being executed, for the diagnostic of a fault.
        let mut current = 0usize;
        let mut insns = self.outcome.insns;
        let mut path = self.outcome.path;
        let budget = self.env.budget;
        // Keeps the counters in registers inside the loop and writes them back on every way out.
        macro_rules! leave {
            ($result:expr) => {{
                self.last_pc = current;
                self.outcome.insns = insns;
                self.outcome.path = path;
                return $result;
            }};
        }
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(kind) => leave!(Err(kind)),
                }
            };
        }
        macro_rules! branch {
            ($op:expr, $taken:expr) => {{
                let taken = $taken;
                $op.hit
                    .set($op.hit.get() | if taken { TAKEN } else { NOT_TAKEN });
                if taken {
                    pc = $op.target as usize;
                }
                path = mix(path, (pc as u64) << 1 | taken as u64);
            }};
        }
        loop {
            let Some(op) = ops.get(pc) else {
                leave!(Err(FaultKind::FellOff));
            };
            current = pc;
            op.hit.set(op.hit.get() | EXECUTED);
            insns += 1;
            if insns > budget {
                leave!(Err(FaultKind::Budget { budget }));
            }
            if RECORD {
                self.outcome
                    .trace
                    .push((self.program as u16, program.slots[pc]));
                self.outcome.operands.push(operand(op, &self.regs));
            }
            pc += 1;
            let dst = (op.dst & 15) as usize;
            let src = (op.src & 15) as usize;
            let imm = op.imm as u64;
            let r = &mut self.regs;
            match op.code {
                0x07 => r[dst] = r[dst].wrapping_add(imm),
                0x0f => r[dst] = r[dst].wrapping_add(r[src]),
                0x17 => r[dst] = r[dst].wrapping_sub(imm),
                0x1f => r[dst] = r[dst].wrapping_sub(r[src]),
                0x27 => r[dst] = r[dst].wrapping_mul(imm),
                0x47 => r[dst] |= imm,
                0x4f => r[dst] |= r[src],
                0x57 => r[dst] &= imm,
                0x5f => r[dst] &= r[src],
                0x67 => r[dst] <<= imm & 63,
                0x6f => r[dst] <<= r[src] & 63,
                0x77 => r[dst] >>= imm & 63,
                0x7f => r[dst] >>= r[src] & 63,
                0xa7 => r[dst] ^= imm,
                0xaf => r[dst] ^= r[src],
                0xb7 => r[dst] = imm,
                0xbf if op.off == 0 => r[dst] = r[src],
                0x04 => r[dst] = (r[dst] as u32).wrapping_add(imm as u32) as u64,
                0x0c => r[dst] = (r[dst] as u32).wrapping_add(r[src] as u32) as u64,
                0x54 => r[dst] = (r[dst] as u32 & imm as u32) as u64,
                0xb4 => r[dst] = imm as u32 as u64,
                0xbc if op.off == 0 => r[dst] = r[src] as u32 as u64,
                0xdc => r[dst] = tri!(alu::endian(r[dst], op.imm, true).ok_or_else(|| invalid(op))),
                0x05 => pc = op.target as usize,
                0x15 => branch!(op, r[dst] == imm),
                0x1d => branch!(op, r[dst] == r[src]),
                0x55 => branch!(op, r[dst] != imm),
                0x5d => branch!(op, r[dst] != r[src]),
                0x25 => branch!(op, r[dst] > imm),
                0x2d => branch!(op, r[dst] > r[src]),
                0x35 => branch!(op, r[dst] >= imm),
                0x3d => branch!(op, r[dst] >= r[src]),
                0xa5 => branch!(op, r[dst] < imm),
                0xad => branch!(op, r[dst] < r[src]),
                0xb5 => branch!(op, r[dst] <= imm),
                0xbd => branch!(op, r[dst] <= r[src]),
                0x45 => branch!(op, r[dst] & imm != 0),
                0x16 => branch!(op, r[dst] as u32 == imm as u32),
                0x56 => branch!(op, r[dst] as u32 != imm as u32),
                0x61 => {
                    let addr = r[src].wrapping_add(op.off as i64 as u64);
                    self.regs[dst] = tri!(self.load_n::<4>(addr));
                }
                0x69 => {
                    let addr = r[src].wrapping_add(op.off as i64 as u64);
                    self.regs[dst] = tri!(self.load_n::<2>(addr));
                }
                0x71 => {
                    let addr = r[src].wrapping_add(op.off as i64 as u64);
                    self.regs[dst] = tri!(self.load_n::<1>(addr));
                }
                0x79 => {
                    let addr = r[src].wrapping_add(op.off as i64 as u64);
                    self.regs[dst] = tri!(self.load_n::<8>(addr));
                }
                0x63 => {
                    let (addr, value) = (r[dst].wrapping_add(op.off as i64 as u64), r[src]);
                    tri!(self.store_n::<4>(addr, value));
                }
                0x6b => {
                    let (addr, value) = (r[dst].wrapping_add(op.off as i64 as u64), r[src]);
                    tri!(self.store_n::<2>(addr, value));
                }
                0x73 => {
                    let (addr, value) = (r[dst].wrapping_add(op.off as i64 as u64), r[src]);
                    tri!(self.store_n::<1>(addr, value));
                }
                0x7b => {
                    let (addr, value) = (r[dst].wrapping_add(op.off as i64 as u64), r[src]);
                    tri!(self.store_n::<8>(addr, value));
                }
                0x62 => {
                    let addr = r[dst].wrapping_add(op.off as i64 as u64);
                    tri!(self.store_n::<4>(addr, imm));
                }
                0x6a => {
                    let addr = r[dst].wrapping_add(op.off as i64 as u64);
                    tri!(self.store_n::<2>(addr, imm));
                }
                0x72 => {
                    let addr = r[dst].wrapping_add(op.off as i64 as u64);
                    tri!(self.store_n::<1>(addr, imm));
                }
                0x7a => {
                    let addr = r[dst].wrapping_add(op.off as i64 as u64);
                    tri!(self.store_n::<8>(addr, imm));
                }
                _ => match op.code & 0x07 {
                    CLASS_ALU64 | CLASS_ALU => {
                        let wide = op.code & 0x07 == CLASS_ALU64;
                        let operation = op.code & 0xf0;
                        let x = op.code & SRC_X != 0;
                        let value = if operation == ALU_END {
                            // ALU64 END is the unconditional bswap; in ALU the source bit picks be (X) or le (K).
                            alu::endian(r[dst], op.imm, wide || x)
                        } else {
                            let s = if x { r[src] } else { imm };
                            if wide {
                                alu::alu64(operation, op.off, r[dst], s)
                            } else {
                                alu::alu32(operation, op.off, r[dst], s)
                            }
                        };
                        r[dst] = tri!(value.ok_or_else(|| invalid(op)));
                    }
                    CLASS_JMP | CLASS_JMP32 => {
                        let wide = op.code & 0x07 == CLASS_JMP;
                        match op.code & 0xf0 {
                            JMP_JA => pc = op.target as usize,
                            JMP_EXIT => match self.frames.pop() {
                                Some(frame) => {
                                    self.regs[6..10].copy_from_slice(&frame.saved);
                                    self.regs[10] -= STACK_SIZE as u64;
                                    self.program = frame.program;
                                    program = self.current();
                                    ops = &program.ops;
                                    pc = frame.return_pc;
                                }
                                None => leave!(Ok(())),
                            },
                            JMP_CALL if op.src == PSEUDO_CALL => {
                                if self.frames.len() + 1 >= MAX_CALL_FRAMES {
                                    leave!(Err(FaultKind::CallDepth {
                                        max: MAX_CALL_FRAMES
                                    }));
                                }
                                let mut saved = [0; 4];
                                saved.copy_from_slice(&self.regs[6..10]);
                                self.frames.push(Frame {
                                    program: self.program,
                                    return_pc: pc,
                                    saved,
                                });
                                self.regs[10] += STACK_SIZE as u64;
                                self.stack_used =
                                    self.stack_used.max((self.frames.len() + 1) * STACK_SIZE);
                                pc = op.target as usize;
                                path = mix(path, pc as u64);
                            }
                            // Prepare admits one runtime function, which returns 0.
                            JMP_CALL if op.src == PSEUDO_KFUNC_CALL => self.regs[0] = 0,
                            JMP_CALL => {
                                let id = if op.code & SRC_X != 0 {
                                    r[dst] as i32
                                } else {
                                    op.imm as i32
                                };
                                // Helpers read the instruction count (virtual time) from the outcome.
                                self.outcome.insns = insns;
                                self.regs[0] = tri!(crate::helpers::call(self, id));
                                if self.unwound {
                                    leave!(Ok(()));
                                }
                                if let Some(next) = self.tail_call_to.take() {
                                    self.program = next;
                                    program = self.current();
                                    ops = &program.ops;
                                    pc = 0;
                                    path = mix(path, 1 << 32 | next as u64);
                                }
                            }
                            cond => {
                                let b = if op.code & SRC_X != 0 { r[src] } else { imm };
                                let taken = tri!(alu::condition(cond, wide, r[dst], b)
                                    .ok_or_else(|| invalid(op)));
                                branch!(op, taken);
                            }
                        }
                    }
                    CLASS_LDX => {
                        let size = size_of(op.code);
                        let addr = r[src].wrapping_add(op.off as i64 as u64);
                        let v = tri!(self.load(addr, size));
                        self.regs[dst] = if op.code & 0xe0 == MODE_MEMSX {
                            sign_extend(v, size)
                        } else {
                            v
                        };
                    }
                    CLASS_ST => {
                        let addr = r[dst].wrapping_add(op.off as i64 as u64);
                        tri!(self.store(addr, size_of(op.code), imm));
                    }
                    CLASS_STX if op.code & 0xe0 == MODE_ATOMIC => tri!(self.atomic(op)),
                    CLASS_STX => {
                        let addr = r[dst].wrapping_add(op.off as i64 as u64);
                        let value = r[src];
                        tri!(self.store(addr, size_of(op.code), value));
                    }
                    _ => {
                        // CLASS_LD: lddw and the legacy packet loads.
                        if op.code == LD_DW_IMM {
                            r[dst] = match op.src {
                                PSEUDO_MAP_FD => {
                                    region::map_handle((op.imm & 0xffff_ffff) as usize)
                                }
                                PSEUDO_MAP_VALUE => region::map_value(
                                    (op.imm & 0xffff_ffff) as usize,
                                    0,
                                    (op.imm >> 32) as u32,
                                ),
                                _ => imm,
                            };
                        } else if !tri!(self.legacy_load(op)) {
                            // Out-of-bounds legacy loads end the program with 0, as in the kernel.
                            self.regs[0] = 0;
                            leave!(Ok(()));
                        }
                    }
                },
            }
        }
    }

    /// `BPF_LD | BPF_ABS/BPF_IND`: a big-endian load from the packet data into r0. Returns false when out of bounds.
    fn legacy_load(&mut self, op: &Op) -> Result<bool, FaultKind> {
        let size = size_of(op.code);
        let base = match op.code & 0xe0 {
            MODE_ABS => 0i64,
            MODE_IND => self.regs[op.src as usize] as u32 as i32 as i64,
            _ => return Err(invalid(op)),
        };
        if size == 8 {
            return Err(invalid(op));
        }
        let (_, data, end) = self.buff.offsets();
        let start = data as i64 + base + op.imm as i32 as i64;
        if start < data as i64 || start + size as i64 > end as i64 {
            return Ok(false);
        }
        let bytes = &self.buff.frame()[start as usize..start as usize + size];
        self.regs[0] = bytes.iter().fold(0u64, |acc, &b| acc << 8 | b as u64);
        Ok(true)
    }

    fn atomic(&mut self, op: &Op) -> Result<(), FaultKind> {
        let size = size_of(op.code);
        if size != 4 && size != 8 {
            return Err(invalid(op));
        }
        let addr = self.regs[op.dst as usize].wrapping_add(op.off as i64 as u64);
        let old = self.load(addr, size)?;
        let src = op.src as usize;
        let operand = if size == 4 {
            self.regs[src] as u32 as u64
        } else {
            self.regs[src]
        };
        let imm = op.imm as i32;
        if imm == ATOMIC_CMPXCHG {
            let expected = if size == 4 {
                self.regs[0] as u32 as u64
            } else {
                self.regs[0]
            };
            if old == expected {
                self.store(addr, size, operand)?;
            }
            self.regs[0] = old;
            return Ok(());
        }
        let new = alu::atomic_rmw(imm, old, operand).ok_or_else(|| invalid(op))?;
        if imm & !ATOMIC_FETCH == 0xe0 && imm & ATOMIC_FETCH == 0 {
            return Err(invalid(op));
        }
        self.store(addr, size, new)?;
        if imm & ATOMIC_FETCH != 0 {
            self.regs[src] = old;
        }
        Ok(())
    }
}

/// What [`Outcome::operands`] records for `op` before it executes with registers `r`.
fn operand(op: &Op, r: &[u64; 16]) -> u64 {
    let (dst, src) = ((op.dst & 15) as usize, (op.src & 15) as usize);
    let off = op.off as i64 as u64;
    match op.code & 0x07 {
        CLASS_LDX => r[src].wrapping_add(off),
        CLASS_ST | CLASS_STX => r[dst].wrapping_add(off),
        CLASS_LD if op.code & 0xe0 == MODE_IND => r[src],
        CLASS_ALU | CLASS_ALU64
            if matches!(op.code & 0xf0, 0x30 | 0x90) && op.code & SRC_X != 0 =>
        {
            let wide = op.code & 0x07 == CLASS_ALU64;
            if wide {
                r[src]
            } else {
                r[src] & 0xffff_ffff
            }
        }
        _ => 0,
    }
}

fn invalid(op: &Op) -> FaultKind {
    FaultKind::Helper {
        helper: "decode",
        message: format!("invalid instruction {:#04x} (imm {})", op.code, op.imm),
    }
}

#[inline]
fn size_of(code: u8) -> usize {
    match code & 0x18 {
        SIZE_W => 4,
        SIZE_H => 2,
        SIZE_B => 1,
        _ => 8,
    }
}

#[inline]
fn sign_extend(v: u64, size: usize) -> u64 {
    match size {
        1 => v as i8 as i64 as u64,
        2 => v as i16 as i64 as u64,
        4 => v as i32 as i64 as u64,
        _ => v,
    }
}
