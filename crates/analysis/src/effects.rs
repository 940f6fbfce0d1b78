//! Which registers each instruction reads and writes.

use crate::helpers::arity;
use crate::liveness::RegSet;
use hwxdp_ebpf::{AtomicOp, CallKind, InsnKind, Source};

/// The registers one instruction reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RegEffects {
    /// Registers read.
    pub uses: RegSet,
    /// Registers written (for calls, also the clobbered r1-r5).
    pub defs: RegSet,
}

/// r1-r5, the argument registers a call clobbers.
pub const CALLER_SAVED: RegSet = RegSet(0b11_1110);

/// The registers `k` reads and writes; `local_call_args` are the argument registers of the callee when `k` is a
/// bpf-to-bpf call.
pub fn reg_effects(k: &InsnKind, local_call_args: RegSet) -> RegEffects {
    let mut uses = RegSet::EMPTY;
    let mut defs = RegSet::EMPTY;
    let use_source = |uses: &mut RegSet, src: Source| {
        if let Source::Reg(r) = src {
            uses.insert(r);
        }
    };
    match *k {
        InsnKind::Alu { op, dst, src, .. } => {
            if op != hwxdp_ebpf::AluOp::Mov {
                uses.insert(dst);
            }
            use_source(&mut uses, src);
            defs.insert(dst);
        }
        InsnKind::Neg { dst, .. } | InsnKind::Endian { dst, .. } => {
            uses.insert(dst);
            defs.insert(dst);
        }
        InsnKind::MovSx { dst, src, .. } => {
            uses.insert(src);
            defs.insert(dst);
        }
        InsnKind::LoadImm64 { dst, .. } => defs.insert(dst),
        InsnKind::LoadPacket { index, .. } => {
            // Legacy packet loads read the context from r6 and clobber r0-r5 like a call.
            uses.insert(6);
            if let Some(r) = index {
                uses.insert(r);
            }
            defs = CALLER_SAVED;
            defs.insert(0);
        }
        InsnKind::Load { dst, base, .. } => {
            uses.insert(base);
            defs.insert(dst);
        }
        InsnKind::Store { base, src, .. } => {
            uses.insert(base);
            use_source(&mut uses, src);
        }
        InsnKind::Atomic { op, base, src, .. } => {
            uses.insert(base);
            uses.insert(src);
            match op {
                AtomicOp::Cmpxchg => {
                    uses.insert(0);
                    defs.insert(0);
                }
                op if op.imm() & hwxdp_ebpf::ATOMIC_FETCH != 0 => defs.insert(src),
                _ => {}
            }
        }
        InsnKind::Ja { .. } | InsnKind::JaLong { .. } => {}
        InsnKind::Branch { dst, src, .. } => {
            uses.insert(dst);
            use_source(&mut uses, src);
        }
        InsnKind::Call { kind, imm } => {
            uses = match kind {
                CallKind::Helper => RegSet::args(arity(imm)),
                CallKind::Local => local_call_args,
                CallKind::Kfunc => CALLER_SAVED,
            };
            defs = CALLER_SAVED;
            defs.insert(0);
        }
        InsnKind::CallReg { reg } => {
            uses = CALLER_SAVED;
            uses.insert(reg);
            defs = CALLER_SAVED;
            defs.insert(0);
        }
        InsnKind::Exit => uses.insert(0),
    }
    RegEffects { uses, defs }
}
