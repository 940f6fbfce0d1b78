//! Turns a program's instructions into the form the interpreter runs: jump targets resolved to instruction indices,
//! everything the machine cannot run refused up front with the instruction that needs it.

use crate::fault::LoadError;
use crate::helpers::helper_in;
use crate::machine::Environment;
use hwxdp_ebpf::*;
use hwxdp_object::{MapSpec, ProgramSpec};

/// One instruction, pre-decoded. `target` is the index (not slot) of the jump target or bpf-to-bpf callee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i64,
    pub target: u32,
    /// Coverage flags ([`crate::exec::EXECUTED`], `TAKEN`, `NOT_TAKEN`), set as the op runs; a `Cell` so that the
    /// interpreter can mark ops of programs it only borrows.
    pub hit: std::cell::Cell<u8>,
}

/// A program ready to run.
#[derive(Clone, Debug)]
pub struct Program {
    /// Function name.
    pub name: String,
    pub(crate) ops: Vec<Op>,
    /// Slot index of each op, for traces and diagnostics.
    pub(crate) slots: Vec<u32>,
}

impl Program {
    /// Number of instructions (an `lddw` counts once).
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True for a program without instructions.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Slot index of instruction `index`.
    pub fn slot(&self, index: usize) -> usize {
        self.slots[index] as usize
    }
}

/// Prepares `spec` to run with `maps`.
pub fn prepare(
    spec: &ProgramSpec,
    maps: &[MapSpec],
    environment: Environment,
) -> Result<Program, LoadError> {
    let slot_of = slot_offsets(&spec.insns);
    let total_slots = *slot_of.last().unwrap_or(&0);
    // index_of[slot] = instruction index starting at that slot, or u32::MAX inside an lddw.
    let mut index_of = vec![u32::MAX; total_slots + 1];
    for (i, &s) in slot_of.iter().enumerate() {
        index_of[s] = i as u32;
    }
    let unsupported = |insn: usize, message: String| LoadError::Unsupported {
        program: spec.name.clone(),
        insn,
        message,
    };
    let resolve = |slot: usize, rel: i64| -> Result<u32, LoadError> {
        let target = slot as i64 + 1 + rel;
        if target < 0 || target as usize >= total_slots || index_of[target as usize] == u32::MAX {
            return Err(unsupported(
                slot,
                format!("jump to slot {target} is outside the program or inside an lddw"),
            ));
        }
        Ok(index_of[target as usize])
    };
    let mut ops = Vec::with_capacity(spec.insns.len());
    for (i, insn) in spec.insns.iter().enumerate() {
        let slot = slot_of[i];
        if insn.dst as usize >= NUM_REGS
            || insn.src as usize >= NUM_REGS && !insn.is_lddw() && insn.class() != CLASS_JMP
        {
            return Err(unsupported(
                slot,
                format!("register out of range in opcode {:#04x}", insn.code),
            ));
        }
        hwxdp_ebpf::validate(insn).map_err(|e| unsupported(slot, e.to_string()))?;
        let mut target = 0;
        match insn.class() {
            CLASS_JMP | CLASS_JMP32 => {
                let op = insn.code & 0xf0;
                match op {
                    JMP_EXIT => {}
                    JMP_CALL => match insn.src {
                        0 if insn.code & SRC_X != 0 => {
                            if environment != Environment::Conformance {
                                return Err(unsupported(
                                    slot,
                                    "callx (a call through a register) is not an XDP instruction"
                                        .into(),
                                ));
                            }
                        }
                        0 => {
                            if helper_in(environment, insn.imm32()).is_none() {
                                let helper = match environment {
                                    Environment::Xdp => hwxdp_ebpf::helper_label(insn.imm32()),
                                    // The conformance suite numbers its own helpers.
                                    Environment::Conformance => insn.imm32().to_string(),
                                };
                                return Err(unsupported(
                                    slot,
                                    format!(
                                        "helper {helper} is not supported by the reference machine"
                                    ),
                                ));
                            }
                        }
                        PSEUDO_CALL => target = resolve(slot, insn.imm)?,
                        PSEUDO_KFUNC_CALL
                            if environment == Environment::Conformance
                                && insn.imm == crate::helpers::CONFORMANCE_RUNTIME_FUNCTION => {}
                        PSEUDO_KFUNC_CALL => {
                            return Err(unsupported(
                                slot,
                                format!("kfunc call (BTF id {}) is not supported", insn.imm),
                            ))
                        }
                        _ => {
                            return Err(unsupported(
                                slot,
                                "callx and unknown call kinds are not supported".into(),
                            ))
                        }
                    },
                    JMP_JA if insn.class() == CLASS_JMP32 => target = resolve(slot, insn.imm)?,
                    _ => target = resolve(slot, insn.off as i64)?,
                }
                if insn.class() == CLASS_JMP32 && matches!(op, JMP_CALL | JMP_EXIT) {
                    return Err(unsupported(
                        slot,
                        format!("invalid opcode {:#04x}", insn.code),
                    ));
                }
            }
            CLASS_LD if insn.is_lddw() => match insn.src {
                0 => {}
                PSEUDO_MAP_FD | PSEUDO_MAP_VALUE => {
                    let map = (insn.imm & 0xffff_ffff) as usize;
                    let Some(m) = maps.get(map) else {
                        return Err(unsupported(
                            slot,
                            format!("reference to map {map}, the object has {}", maps.len()),
                        ));
                    };
                    if insn.src == PSEUDO_MAP_VALUE
                        && (insn.imm >> 32) as u64 >= m.value_size as u64
                    {
                        return Err(unsupported(
                            slot,
                            format!("offset {} is outside map {}", insn.imm >> 32, m.name),
                        ));
                    }
                }
                other => {
                    return Err(unsupported(
                        slot,
                        format!("lddw with pseudo source {other} is not supported"),
                    ))
                }
            },
            _ => {}
        }
        ops.push(Op {
            code: insn.code,
            dst: insn.dst,
            src: insn.src,
            off: insn.off,
            imm: insn.imm,
            target,
            hit: std::cell::Cell::new(0),
        });
    }
    Ok(Program {
        name: spec.name.clone(),
        ops,
        slots: slot_of[..spec.insns.len()]
            .iter()
            .map(|&s| s as u32)
            .collect(),
    })
}
