//! Executable sections: decoded instructions, the functions in them, map references resolved and call targets found.

use std::collections::HashSet;

use hwxdp_ebpf::{
    decode, slot_offsets, Insn, CLASS_JMP, JMP_CALL, PSEUDO_CALL, PSEUDO_FUNC, PSEUDO_MAP_FD,
    PSEUDO_MAP_VALUE,
};
use object::elf;

use crate::elf::{Elf, Relocation, Section};
use crate::maps::MapTable;
use crate::{ObjectError, SourceLine};

/// `call imm` with a pseudo source: opcode of every bpf-to-bpf call.
const CALL: u8 = CLASS_JMP | JMP_CALL;

/// The slot starting at byte `offset`, if it is slot-aligned.
fn slot_of(offset: u64) -> Option<usize> {
    usize::try_from(offset / 8)
        .ok()
        .filter(|_| offset.is_multiple_of(8))
}

/// A function symbol: instructions `[start, end)` of its section.
pub(crate) struct Function {
    /// Symbol name.
    pub name: String,
    /// First instruction index.
    pub start: usize,
    /// One past the last instruction index.
    pub end: usize,
    /// Global functions in program sections are programs; the others are only reachable by calls.
    pub global: bool,
}

/// A reference from an instruction to code: a bpf-to-bpf call, or a `lddw` of a callback's address.
#[derive(Clone, Copy)]
pub(crate) struct CodeRef {
    /// Instruction index of the call or lddw.
    pub insn: usize,
    /// ELF index of the section holding the target.
    pub section: usize,
    /// Slot of the target within that section.
    pub slot: usize,
}

/// One executable section after relocation.
pub(crate) struct CodeSection {
    /// Section name.
    pub name: String,
    /// Instructions, with map references already resolved.
    pub insns: Vec<Insn>,
    /// Slot of each instruction, plus the end.
    pub slots: Vec<usize>,
    /// Function symbols, by start.
    pub functions: Vec<Function>,
    /// Code references, by instruction index.
    pub code_refs: Vec<CodeRef>,
    /// BTF line info: the source line in effect from an instruction index on, by increasing index.
    pub lines: Vec<(usize, SourceLine)>,
}

impl CodeSection {
    /// Instruction index starting at `slot`, if an instruction starts there.
    pub fn insn_at_slot(&self, slot: usize) -> Option<usize> {
        self.slots
            .binary_search(&slot)
            .ok()
            .filter(|&i| i < self.insns.len())
    }

    /// The function containing instruction `insn` (a binary search: functions are sorted and do not overlap).
    pub fn function_of(&self, insn: usize) -> Option<usize> {
        let after = self.functions.partition_point(|f| f.start <= insn);
        after
            .checked_sub(1)
            .filter(|&i| insn < self.functions[i].end)
    }

    /// Decodes section `index` of `elf`, collects its functions and applies its relocations.
    pub fn read(elf: &Elf<'_>, index: usize, maps: &MapTable) -> Result<Self, ObjectError> {
        let section = &elf.sections[index];
        let insns = decode(section.data).map_err(|source| ObjectError::Decode {
            section: section.name.clone(),
            source,
        })?;
        let slots = slot_offsets(&insns);
        let mut code = CodeSection {
            name: section.name.clone(),
            insns,
            slots,
            functions: Vec::new(),
            code_refs: Vec::new(),
            lines: Vec::new(),
        };
        code.collect_functions(elf, index)?;
        for reloc in &section.relocations {
            code.apply(elf, section, reloc, maps)?;
        }
        code.collect_local_calls(index)?;
        code.code_refs.sort_by_key(|r| r.insn);
        Ok(code)
    }

    fn collect_functions(&mut self, elf: &Elf<'_>, index: usize) -> Result<(), ObjectError> {
        for sym in elf.symbols_in(index) {
            if sym.kind != elf::STT_FUNC {
                continue;
            }
            let bad = |reason: &str| ObjectError::BadFunction {
                section: self.name.clone(),
                function: sym.name.clone(),
                reason: reason.to_string(),
            };
            let end_byte = sym
                .value
                .checked_add(sym.size)
                .ok_or_else(|| bad("size overflows"))?;
            let start = slot_of(sym.value)
                .and_then(|s| self.insn_at_slot(s))
                .ok_or_else(|| bad("does not start at an instruction"))?;
            let end = slot_of(end_byte)
                .and_then(|s| self.slots.binary_search(&s).ok())
                .ok_or_else(|| bad("does not end at an instruction boundary"))?;
            if end <= start {
                return Err(bad("is empty"));
            }
            let global = sym.bind == elf::STB_GLOBAL || sym.bind == elf::STB_WEAK;
            self.functions.push(Function {
                name: sym.name.clone(),
                start,
                end,
                global,
            });
        }
        self.functions.sort_by_key(|f| f.start);
        if let Some(pair) = self.functions.windows(2).find(|w| w[1].start < w[0].end) {
            return Err(ObjectError::BadFunction {
                section: self.name.clone(),
                function: pair[1].name.clone(),
                reason: format!("overlaps function {}", pair[0].name),
            });
        }
        Ok(())
    }

    fn apply(
        &mut self,
        elf: &Elf<'_>,
        section: &Section<'_>,
        reloc: &Relocation,
        maps: &MapTable,
    ) -> Result<(), ObjectError> {
        let misplaced = || ObjectError::MisplacedRelocation {
            section: self.name.clone(),
            offset: reloc.offset,
        };
        let slot = slot_of(reloc.offset).ok_or_else(misplaced)?;
        let at = self.insn_at_slot(slot).ok_or_else(misplaced)?;
        let bad = |reason: String| ObjectError::BadInstruction {
            section: section.name.clone(),
            insn: slot,
            reason,
        };
        let symbol = elf.symbol_name(reloc.symbol);
        let Some(sym) = elf.symbols.get(reloc.symbol) else {
            return Err(ObjectError::UnknownSymbol {
                section: self.name.clone(),
                insn: slot,
                symbol,
            });
        };
        let Some(target) = sym.section.filter(|&s| s < elf.sections.len()) else {
            return Err(ObjectError::UnknownSymbol {
                section: self.name.clone(),
                insn: slot,
                symbol,
            });
        };
        let insn = &mut self.insns[at];
        match reloc.kind {
            elf::R_BPF_64_64 => {
                if !insn.is_lddw() {
                    return Err(bad(format!(
                        "relocation against {symbol} on an instruction that is not lddw"
                    )));
                }
                // The addend sits in the low half of the immediate (non-zero for section symbols).
                let offset = sym.value.wrapping_add(u64::from(insn.imm as u32));
                if let Some(map) = maps.user_map(target, offset) {
                    insn.src = PSEUDO_MAP_FD;
                    insn.imm = map as i64;
                } else if let Some(map) = maps.global_map(target) {
                    let size = maps.specs[map].value_size;
                    let off = u32::try_from(offset).ok().filter(|&o| o <= size);
                    let off = off.ok_or_else(|| {
                        bad(format!(
                            "offset {offset} is outside {symbol} of {size} bytes"
                        ))
                    })?;
                    insn.src = PSEUDO_MAP_VALUE;
                    insn.imm = (map as i64) | (i64::from(off) << 32);
                } else if elf.sections[target].is_code() {
                    let target_slot = slot_of(offset)
                        .ok_or_else(|| bad(format!("address of {symbol} is not an instruction")))?;
                    insn.src = PSEUDO_FUNC;
                    insn.imm = 0;
                    self.code_refs.push(CodeRef {
                        insn: at,
                        section: target,
                        slot: target_slot,
                    });
                } else {
                    return Err(ObjectError::BadRelocationTarget {
                        section: self.name.clone(),
                        insn: slot,
                        symbol,
                        target: elf.sections[target].name.clone(),
                    });
                }
            }
            elf::R_BPF_64_32 => {
                if insn.code != CALL || insn.src != PSEUDO_CALL {
                    return Err(bad(format!(
                        "call relocation against {symbol} on an instruction that is not a call"
                    )));
                }
                if !elf.sections[target].is_code() {
                    return Err(ObjectError::BadRelocationTarget {
                        section: self.name.clone(),
                        insn: slot,
                        symbol,
                        target: elf.sections[target].name.clone(),
                    });
                }
                // libbpf's rule: the target is the symbol's slot plus the immediate plus one (imm is -1 for function
                // symbols, the offset minus one for section symbols).
                let target_slot = i64::try_from(sym.value / 8)
                    .ok()
                    .and_then(|s| s.checked_add(insn.imm + 1))
                    .and_then(|s| usize::try_from(s).ok())
                    .ok_or_else(|| bad(format!("call target in {symbol} is out of range")))?;
                self.code_refs.push(CodeRef {
                    insn: at,
                    section: target,
                    slot: target_slot,
                });
            }
            kind => {
                return Err(ObjectError::UnsupportedRelocation {
                    section: self.name.clone(),
                    insn: slot,
                    kind,
                })
            }
        }
        Ok(())
    }

    /// Calls to static functions of the same section carry no relocation: their immediate is already relative.
    fn collect_local_calls(&mut self, index: usize) -> Result<(), ObjectError> {
        let relocated: HashSet<usize> = self.code_refs.iter().map(|r| r.insn).collect();
        for (at, insn) in self.insns.iter().enumerate() {
            if insn.code != CALL || insn.src != PSEUDO_CALL || relocated.contains(&at) {
                continue;
            }
            let slot = self.slots[at];
            let target = i64::try_from(slot)
                .ok()
                .and_then(|s| s.checked_add(insn.imm + 1));
            let target = target
                .and_then(|t| usize::try_from(t).ok())
                .ok_or_else(|| ObjectError::BadInstruction {
                    section: self.name.clone(),
                    insn: slot,
                    reason: format!("call target {} is out of range", insn.imm),
                })?;
            self.code_refs.push(CodeRef {
                insn: at,
                section: index,
                slot: target,
            });
        }
        Ok(())
    }
}
