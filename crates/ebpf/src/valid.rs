//! Which instructions exist: the one place that maps an encoded [`Insn`] to its [`InsnKind`] or rejects it.
//!
//! Accepted are exactly the instructions of RFC 9669 (including the v4 additions). As in the kernel verifier, fields
//! an instruction does not use must be zero, so that every valid instruction has exactly one text and one encoding.

use crate::kind::{AluOp, AtomicOp, ByteOrder, CallKind, InsnKind, JmpCond, Source, Width};
use crate::opcode::*;
use crate::Insn;
use thiserror::Error;

/// Why an instruction is not one of RFC 9669.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum InvalidInsn {
    /// No instruction has this opcode byte.
    #[error("unknown opcode {code:#04x}")]
    Opcode {
        /// The opcode byte.
        code: u8,
    },
    /// A register field names a register above r10.
    #[error("opcode {code:#04x}: register r{reg} does not exist")]
    Register {
        /// The opcode byte.
        code: u8,
        /// The register number.
        reg: u8,
    },
    /// A field this instruction does not use is not zero.
    #[error("opcode {code:#04x}: unused field {field} is {value}, not 0")]
    Reserved {
        /// The opcode byte.
        code: u8,
        /// `dst`, `src`, `off` or `imm`.
        field: &'static str,
        /// The field's value.
        value: i64,
    },
    /// A field that selects a variant holds a value no variant uses.
    #[error("opcode {code:#04x}: {field} {value} is not valid")]
    Field {
        /// The opcode byte.
        code: u8,
        /// `src`, `off` or `imm`.
        field: &'static str,
        /// The field's value.
        value: i64,
    },
}

/// Checks that `insn` is an instruction of RFC 9669.
pub fn validate(insn: &Insn) -> Result<(), InvalidInsn> {
    kind(insn).map(|_| ())
}

/// Classifies a valid instruction.
pub fn kind(insn: &Insn) -> Result<InsnKind, InvalidInsn> {
    let c = Check { insn };
    if !insn.is_lddw() && insn.imm != insn.imm32() as i64 {
        return Err(c.bad_field("imm", insn.imm));
    }
    match insn.class() {
        CLASS_ALU | CLASS_ALU64 => c.alu(),
        CLASS_JMP | CLASS_JMP32 => c.jmp(),
        CLASS_LD => c.ld(),
        CLASS_LDX => c.ldx(),
        CLASS_ST => c.st(),
        _ => c.stx(),
    }
}

/// Field checks for one instruction, each naming the opcode on failure.
struct Check<'a> {
    insn: &'a Insn,
}

impl Check<'_> {
    fn unknown(&self) -> InvalidInsn {
        InvalidInsn::Opcode {
            code: self.insn.code,
        }
    }

    fn bad_field(&self, field: &'static str, value: i64) -> InvalidInsn {
        InvalidInsn::Field {
            code: self.insn.code,
            field,
            value,
        }
    }

    fn reg(&self, reg: u8) -> Result<u8, InvalidInsn> {
        if (reg as usize) < NUM_REGS {
            Ok(reg)
        } else {
            Err(InvalidInsn::Register {
                code: self.insn.code,
                reg,
            })
        }
    }

    fn dst(&self) -> Result<u8, InvalidInsn> {
        self.reg(self.insn.dst)
    }

    fn src(&self) -> Result<u8, InvalidInsn> {
        self.reg(self.insn.src)
    }

    fn zero(&self, field: &'static str, value: i64) -> Result<(), InvalidInsn> {
        if value == 0 {
            Ok(())
        } else {
            Err(InvalidInsn::Reserved {
                code: self.insn.code,
                field,
                value,
            })
        }
    }

    fn zero_dst(&self) -> Result<(), InvalidInsn> {
        self.zero("dst", self.insn.dst as i64)
    }

    fn zero_src(&self) -> Result<(), InvalidInsn> {
        self.zero("src", self.insn.src as i64)
    }

    fn zero_off(&self) -> Result<(), InvalidInsn> {
        self.zero("off", self.insn.off as i64)
    }

    fn zero_imm(&self) -> Result<(), InvalidInsn> {
        self.zero("imm", self.insn.imm)
    }

    /// The source operand of a K/X instruction: the unused one of `src` and `imm` must be zero.
    fn source(&self) -> Result<Source, InvalidInsn> {
        if self.insn.code & SRC_X != 0 {
            self.zero_imm()?;
            Ok(Source::Reg(self.src()?))
        } else {
            self.zero_src()?;
            Ok(Source::Imm(self.insn.imm32()))
        }
    }

    fn alu(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        let wide = insn.class() == CLASS_ALU64;
        let is_x = insn.code & SRC_X != 0;
        let op = match insn.code & 0xf0 {
            ALU_NEG => {
                if is_x {
                    return Err(self.unknown());
                }
                self.zero_src()?;
                self.zero_off()?;
                self.zero_imm()?;
                return Ok(InsnKind::Neg {
                    wide,
                    dst: self.dst()?,
                });
            }
            ALU_END => return self.endian(wide, is_x),
            ALU_MOV if is_x && insn.off != 0 => return self.movsx(wide),
            ALU_DIV | ALU_MOD => {
                let signed = match insn.off {
                    0 => false,
                    1 => true,
                    other => return Err(self.bad_field("off", other as i64)),
                };
                match (insn.code & 0xf0 == ALU_DIV, signed) {
                    (true, false) => AluOp::Div,
                    (true, true) => AluOp::SDiv,
                    (false, false) => AluOp::Mod,
                    (false, true) => AluOp::SMod,
                }
            }
            bits => {
                let op = AluOp::ALL
                    .into_iter()
                    .find(|op| op.encoding() == (bits, 0))
                    .ok_or_else(|| self.unknown())?;
                self.zero_off()?;
                op
            }
        };
        let src = self.source()?;
        Ok(InsnKind::Alu {
            wide,
            op,
            dst: self.dst()?,
            src,
        })
    }

    fn endian(&self, wide: bool, is_x: bool) -> Result<InsnKind, InvalidInsn> {
        let order = match (wide, is_x) {
            (false, false) => ByteOrder::Le,
            (false, true) => ByteOrder::Be,
            (true, false) => ByteOrder::Swap,
            (true, true) => return Err(self.unknown()),
        };
        self.zero_src()?;
        self.zero_off()?;
        let bits = match self.insn.imm {
            16 => 16,
            32 => 32,
            64 => 64,
            other => return Err(self.bad_field("imm", other)),
        };
        Ok(InsnKind::Endian {
            order,
            bits,
            dst: self.dst()?,
        })
    }

    fn movsx(&self, wide: bool) -> Result<InsnKind, InvalidInsn> {
        let from = match (self.insn.off, wide) {
            (8, _) => Width::B,
            (16, _) => Width::H,
            (32, true) => Width::W,
            (other, _) => return Err(self.bad_field("off", other as i64)),
        };
        self.zero_imm()?;
        Ok(InsnKind::MovSx {
            wide,
            from,
            dst: self.dst()?,
            src: self.src()?,
        })
    }

    fn jmp(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        let wide = insn.class() == CLASS_JMP;
        let is_x = insn.code & SRC_X != 0;
        match insn.code & 0xf0 {
            JMP_JA if !is_x => {
                self.zero_dst()?;
                self.zero_src()?;
                if wide {
                    self.zero_imm()?;
                    Ok(InsnKind::Ja { off: insn.off })
                } else {
                    self.zero_off()?;
                    Ok(InsnKind::JaLong { imm: insn.imm32() })
                }
            }
            JMP_CALL if wide && !is_x => {
                self.zero_dst()?;
                self.zero_off()?;
                let kind = match insn.src {
                    0 => CallKind::Helper,
                    PSEUDO_CALL => CallKind::Local,
                    PSEUDO_KFUNC_CALL => CallKind::Kfunc,
                    other => return Err(self.bad_field("src", other as i64)),
                };
                Ok(InsnKind::Call {
                    kind,
                    imm: insn.imm32(),
                })
            }
            JMP_CALL if wide => {
                self.zero_src()?;
                self.zero_off()?;
                self.zero_imm()?;
                Ok(InsnKind::CallReg { reg: self.dst()? })
            }
            JMP_EXIT if wide && !is_x => {
                self.zero_dst()?;
                self.zero_src()?;
                self.zero_off()?;
                self.zero_imm()?;
                Ok(InsnKind::Exit)
            }
            bits => {
                let cond = JmpCond::ALL
                    .into_iter()
                    .find(|cond| cond.bits() == bits)
                    .ok_or_else(|| self.unknown())?;
                let src = self.source()?;
                Ok(InsnKind::Branch {
                    wide,
                    cond,
                    dst: self.dst()?,
                    src,
                    off: insn.off,
                })
            }
        }
    }

    fn ld(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        if insn.code == LD_DW_IMM {
            self.zero_off()?;
            if insn.src > PSEUDO_MAP_IDX_VALUE {
                return Err(self.bad_field("src", insn.src as i64));
            }
            return Ok(InsnKind::LoadImm64 {
                dst: self.dst()?,
                pseudo: insn.src,
                imm: insn.imm,
            });
        }
        let size = Width::from_code(insn.code);
        if size == Width::DW {
            return Err(self.unknown());
        }
        let index = match insn.code & 0xe0 {
            MODE_ABS => {
                self.zero_src()?;
                None
            }
            MODE_IND => Some(self.src()?),
            _ => return Err(self.unknown()),
        };
        self.zero_dst()?;
        self.zero_off()?;
        Ok(InsnKind::LoadPacket {
            size,
            index,
            imm: insn.imm32(),
        })
    }

    fn ldx(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        let size = Width::from_code(insn.code);
        let signed = match insn.code & 0xe0 {
            MODE_MEM => false,
            MODE_MEMSX if size != Width::DW => true,
            _ => return Err(self.unknown()),
        };
        self.zero_imm()?;
        Ok(InsnKind::Load {
            size,
            signed,
            dst: self.dst()?,
            base: self.src()?,
            off: insn.off,
        })
    }

    fn st(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        if insn.code & 0xe0 != MODE_MEM {
            return Err(self.unknown());
        }
        self.zero_src()?;
        let size = Width::from_code(insn.code);
        let src = Source::Imm(insn.imm32());
        Ok(InsnKind::Store {
            size,
            base: self.dst()?,
            off: insn.off,
            src,
        })
    }

    fn stx(&self) -> Result<InsnKind, InvalidInsn> {
        let insn = self.insn;
        let size = Width::from_code(insn.code);
        match insn.code & 0xe0 {
            MODE_MEM => {
                self.zero_imm()?;
                let src = Source::Reg(self.src()?);
                Ok(InsnKind::Store {
                    size,
                    base: self.dst()?,
                    off: insn.off,
                    src,
                })
            }
            MODE_ATOMIC if matches!(size, Width::W | Width::DW) => {
                let op =
                    AtomicOp::from_imm(insn.imm).ok_or_else(|| self.bad_field("imm", insn.imm))?;
                Ok(InsnKind::Atomic {
                    size,
                    op,
                    base: self.dst()?,
                    off: insn.off,
                    src: self.src()?,
                })
            }
            _ => Err(self.unknown()),
        }
    }
}
