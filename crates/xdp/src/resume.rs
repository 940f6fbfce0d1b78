//! Running a packet from the middle of the entry program: the state a Warp Engine's context restore gives
//! (program warping, `docs/warp.md`).
//!
//! A [`Resume`] is everything the program's state holds at one instruction that is not the packet or the maps: the
//! slot to start at, r1-r9 and the bytes of the stack frame the rest of the program reads. Pointers are given by
//! what they point at ([`ResumeValue::Context`], [`ResumeValue::Packet`], ...) rather than as addresses, so the
//! restore does not depend on where the machine keeps the packet; the machine turns them into its own addresses for
//! the packet it runs. r0 is restored only as a constant ([`Resume::r0`], the engine's action line holds it); without
//! one it starts at 0.
//! r10 is the frame pointer as at the program's start, and the frame is zeroed before the stack writes, as at the
//! start of every packet.

use crate::exec::Vm;
use crate::machine::{Machine, Outcome};
use crate::{region, XdpBuff, XdpMd};
use hwxdp_ebpf::STACK_SIZE;
use thiserror::Error;

/// One restored value, resolved against the packet the machine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResumeValue {
    /// A number.
    Scalar(u64),
    /// The `struct xdp_md` pointer the program received in r1.
    Context,
    /// `data` plus an offset.
    Packet(i64),
    /// `data_end` plus an offset.
    PacketEnd(i64),
    /// The frame pointer (r10) plus an offset.
    Stack(i64),
    /// Map `index` of the object, as `lddw rX, map` loads it.
    Map(u32),
}

/// `size` bytes (1 to 8) of a value, little-endian, at frame offset `off` (r10-relative, negative).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StackWrite {
    /// r10-relative offset of the first byte.
    pub off: i64,
    /// Bytes written: the value's low `size` bytes; pointers are written whole (8).
    pub size: u8,
    /// What is written.
    pub value: ResumeValue,
}

/// The program's state at one instruction of the entry program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resume {
    /// Slot index (as `hwxdp disasm` numbers instructions) to start at.
    pub slot: usize,
    /// r0, a constant, where the rest of the program reads it; `None`: r0 starts at 0.
    pub r0: Option<u64>,
    /// r1-r9 (index 0 is r1); `None` for a register the rest of the program does not read (it starts at 0).
    pub regs: [Option<ResumeValue>; 9],
    /// Stack bytes, written in order into a zeroed frame.
    pub stack: Vec<StackWrite>,
    /// Instructions the skipped part of the program stands for: the virtual clock and the instruction budget go on
    /// from there, and [`Outcome::insns`] counts them, so a resumed run sees the time a full run would.
    pub skipped: u64,
}

/// A [`Resume`] the machine cannot start from.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ResumeError {
    /// The slot is not the start of an instruction of the entry program.
    #[error("slot {slot} is not an instruction of {program}")]
    Slot {
        /// The entry program.
        program: String,
        /// The slot asked for.
        slot: usize,
    },
    /// A stack write falls outside the frame or is not 1 to 8 bytes (or a pointer narrower than 8).
    #[error("stack write of {size} bytes at r10{off:+} is outside the {STACK_SIZE}-byte frame")]
    Stack {
        /// Its offset.
        off: i64,
        /// Its size.
        size: u8,
    },
}

impl ResumeValue {
    /// The machine's 64-bit value for this, with the packet in `buff`.
    fn resolve(self, buff: &XdpBuff) -> u64 {
        let (_, data, end) = buff.offsets();
        let at = |base: usize, off: i64| (base as i64).wrapping_add(off) as u64;
        match self {
            ResumeValue::Scalar(v) => v,
            ResumeValue::Context => region::context(),
            ResumeValue::Packet(off) => region::packet(0).wrapping_add(at(data, off)),
            ResumeValue::PacketEnd(off) => region::packet(0).wrapping_add(at(end, off)),
            ResumeValue::Stack(off) => region::stack(0).wrapping_add(at(STACK_SIZE, off)),
            ResumeValue::Map(m) => region::map_handle(m as usize),
        }
    }

    /// Whether this is a pointer, which only whole 8-byte stack writes can hold.
    fn is_pointer(self) -> bool {
        !matches!(self, ResumeValue::Scalar(_))
    }
}

impl Machine {
    /// Runs one packet from `resume` instead of from the first instruction; otherwise exactly as
    /// [`Machine::run_packet`] (faults give `XDP_ABORTED`, tail calls and bpf-to-bpf calls work, the frame is zeroed
    /// afterwards).
    pub fn run_resumed(
        &mut self,
        buff: &mut XdpBuff,
        md: &XdpMd,
        resume: &Resume,
    ) -> Result<Outcome, ResumeError> {
        let program = self.entry();
        let Some(pc) = program
            .slots
            .iter()
            .position(|&s| s as usize == resume.slot)
        else {
            return Err(ResumeError::Slot {
                program: program.name.clone(),
                slot: resume.slot,
            });
        };
        for w in &resume.stack {
            let fits = (1..=8).contains(&w.size)
                && (!w.value.is_pointer() || w.size == 8)
                && w.off >= -(STACK_SIZE as i64)
                && w.off + w.size as i64 <= 0;
            if !fits {
                return Err(ResumeError::Stack {
                    off: w.off,
                    size: w.size,
                });
            }
        }
        let mut regs = [0u64; 10];
        regs[0] = resume.r0.unwrap_or(0);
        for (r, v) in resume.regs.iter().enumerate() {
            regs[r + 1] = v.map_or(0, |v| v.resolve(buff));
        }
        for w in &resume.stack {
            let bytes = w.value.resolve(buff).to_le_bytes();
            let at = (STACK_SIZE as i64 + w.off) as usize;
            self.stack[at..at + w.size as usize].copy_from_slice(&bytes[..w.size as usize]);
        }
        let vm = Vm::new(self, buff, md);
        let mut outcome = vm.resume_at(pc, regs, resume.skipped);
        if outcome.fault.is_some() {
            outcome.retval = 0;
        }
        Ok(outcome)
    }
}
