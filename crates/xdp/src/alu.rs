//! The arithmetic and comparison semantics of RFC 9669, in one place for every backend's model to share.
//!
//! Division by zero gives 0 and modulo by zero leaves the dividend; shift amounts are masked to the operand width;
//! signed division truncates toward zero (`INT_MIN / -1 == INT_MIN`, `INT_MIN % -1 == 0`); every 32-bit result is
//! zero-extended to 64 bits.

use hwxdp_ebpf::*;

/// Applies a 64-bit ALU operation (`op` is the high nibble of the opcode, `off` selects signed div/mod and `movsx`).
/// Returns `None` for an operation that does not exist.
#[inline]
pub fn alu64(op: u8, off: i16, dst: u64, src: u64) -> Option<u64> {
    Some(match op {
        ALU_ADD => dst.wrapping_add(src),
        ALU_SUB => dst.wrapping_sub(src),
        ALU_MUL => dst.wrapping_mul(src),
        ALU_DIV if off == 1 => match src as i64 {
            0 => 0,
            s => (dst as i64).wrapping_div(s) as u64,
        },
        ALU_DIV => dst.checked_div(src).unwrap_or(0),
        ALU_MOD if off == 1 => match src as i64 {
            0 => dst,
            s => (dst as i64).wrapping_rem(s) as u64,
        },
        ALU_MOD => dst.checked_rem(src).unwrap_or(dst),
        ALU_OR => dst | src,
        ALU_AND => dst & src,
        ALU_LSH => dst << (src & 63),
        ALU_RSH => dst >> (src & 63),
        ALU_NEG => (dst as i64).wrapping_neg() as u64,
        ALU_XOR => dst ^ src,
        ALU_MOV => match off {
            0 => src,
            8 => src as i8 as i64 as u64,
            16 => src as i16 as i64 as u64,
            32 => src as i32 as i64 as u64,
            _ => return None,
        },
        ALU_ARSH => ((dst as i64) >> (src & 63)) as u64,
        _ => return None,
    })
}

/// Applies a 32-bit ALU operation; the result is zero-extended.
#[inline]
pub fn alu32(op: u8, off: i16, dst: u64, src: u64) -> Option<u64> {
    let (d, s) = (dst as u32, src as u32);
    let r: u32 = match op {
        ALU_ADD => d.wrapping_add(s),
        ALU_SUB => d.wrapping_sub(s),
        ALU_MUL => d.wrapping_mul(s),
        ALU_DIV if off == 1 => match s as i32 {
            0 => 0,
            s => (d as i32).wrapping_div(s) as u32,
        },
        ALU_DIV => d.checked_div(s).unwrap_or(0),
        ALU_MOD if off == 1 => match s as i32 {
            0 => d,
            s => (d as i32).wrapping_rem(s) as u32,
        },
        ALU_MOD => d.checked_rem(s).unwrap_or(d),
        ALU_OR => d | s,
        ALU_AND => d & s,
        ALU_LSH => d << (s & 31),
        ALU_RSH => d >> (s & 31),
        ALU_NEG => (d as i32).wrapping_neg() as u32,
        ALU_XOR => d ^ s,
        ALU_MOV => match off {
            0 => s,
            8 => s as i8 as i32 as u32,
            16 => s as i16 as i32 as u32,
            _ => return None,
        },
        ALU_ARSH => ((d as i32) >> (s & 31)) as u32,
        _ => return None,
    };
    Some(r as u64)
}

/// Byte-order conversion: `to_be` for `be16/32/64` (ALU class, source X), `bswap` for ALU64's unconditional swap, and
/// `le16/32/64` otherwise. Widths other than 16, 32 and 64 give `None`. The result is zero-extended from `width` bits.
#[inline]
pub fn endian(dst: u64, width: i64, swap: bool) -> Option<u64> {
    Some(match (width, swap) {
        (16, false) => dst & 0xffff,
        (32, false) => dst & 0xffff_ffff,
        (64, false) => dst,
        (16, true) => (dst as u16).swap_bytes() as u64,
        (32, true) => (dst as u32).swap_bytes() as u64,
        (64, true) => dst.swap_bytes(),
        _ => return None,
    })
}

/// Evaluates a conditional jump (`op` is the high nibble) on 64-bit operands, or on their low halves for JMP32.
/// Returns `None` for an operation that is not a condition.
#[inline]
pub fn condition(op: u8, wide: bool, a: u64, b: u64) -> Option<bool> {
    let (a, b, sa, sb) = if wide {
        (a, b, a as i64, b as i64)
    } else {
        let (a, b) = (a as u32, b as u32);
        (a as u64, b as u64, a as i32 as i64, b as i32 as i64)
    };
    Some(match op {
        JMP_JEQ => a == b,
        JMP_JGT => a > b,
        JMP_JGE => a >= b,
        JMP_JSET => a & b != 0,
        JMP_JNE => a != b,
        JMP_JSGT => sa > sb,
        JMP_JSGE => sa >= sb,
        JMP_JLT => a < b,
        JMP_JLE => a <= b,
        JMP_JSLT => sa < sb,
        JMP_JSLE => sa <= sb,
        _ => return None,
    })
}

/// The value an atomic read-modify-write stores, for add/or/and/xor (with or without fetch) and xchg.
#[inline]
pub fn atomic_rmw(op: i32, old: u64, operand: u64) -> Option<u64> {
    Some(match op & !ATOMIC_FETCH {
        ATOMIC_ADD => old.wrapping_add(operand),
        ATOMIC_OR => old | operand,
        ATOMIC_AND => old & operand,
        ATOMIC_XOR => old ^ operand,
        0xe0 => operand,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_and_modulo_by_zero() {
        assert_eq!(alu64(ALU_DIV, 0, 7, 0), Some(0));
        assert_eq!(alu64(ALU_MOD, 0, 7, 0), Some(7));
        assert_eq!(alu32(ALU_DIV, 0, 0xffff_ffff_0000_0007, 0), Some(0));
        assert_eq!(
            alu32(ALU_MOD, 0, 0xffff_ffff_0000_0007, 0),
            Some(7),
            "32-bit mod by zero zero-extends"
        );
        assert_eq!(alu64(ALU_DIV, 1, 7, 0), Some(0));
        assert_eq!(alu64(ALU_MOD, 1, (-7i64) as u64, 0), Some((-7i64) as u64));
    }

    #[test]
    fn signed_division_truncates_and_wraps() {
        assert_eq!(alu64(ALU_DIV, 1, (-7i64) as u64, 2), Some((-3i64) as u64));
        assert_eq!(alu64(ALU_MOD, 1, (-7i64) as u64, 2), Some((-1i64) as u64));
        assert_eq!(alu64(ALU_MOD, 1, 7, (-2i64) as u64), Some(1));
        assert_eq!(
            alu64(ALU_DIV, 1, i64::MIN as u64, (-1i64) as u64),
            Some(i64::MIN as u64)
        );
        assert_eq!(alu64(ALU_MOD, 1, i64::MIN as u64, (-1i64) as u64), Some(0));
        assert_eq!(
            alu32(ALU_DIV, 1, i32::MIN as u32 as u64, u64::MAX),
            Some(i32::MIN as u32 as u64)
        );
        assert_eq!(
            alu32(ALU_MOD, 1, (-7i32) as u32 as u64, 2),
            Some((-1i32) as u32 as u64)
        );
    }

    #[test]
    fn shifts_are_masked() {
        assert_eq!(alu64(ALU_LSH, 0, 1, 65), Some(2));
        assert_eq!(alu32(ALU_LSH, 0, 1, 33), Some(2));
        assert_eq!(
            alu64(ALU_ARSH, 0, 0x8000_0000_0000_0000, 64 + 63),
            Some(u64::MAX)
        );
        assert_eq!(alu32(ALU_ARSH, 0, 0x8000_0000, 31 + 32), Some(0xffff_ffff));
    }

    #[test]
    fn thirty_two_bit_results_are_zero_extended() {
        assert_eq!(alu32(ALU_ADD, 0, 0xffff_ffff, 1), Some(0));
        assert_eq!(alu32(ALU_NEG, 0, 1, 0), Some(0xffff_ffff));
        assert_eq!(alu32(ALU_MOV, 8, 0, 0x80), Some(0xffff_ff80));
        assert_eq!(
            alu64(ALU_MOV, 32, 0, 0x8000_0000),
            Some(0xffff_ffff_8000_0000)
        );
        assert_eq!(alu64(ALU_MOV, 7, 0, 1), None);
    }

    #[test]
    fn byte_swaps() {
        assert_eq!(endian(0x1122_3344_5566_7788, 16, true), Some(0x8877));
        assert_eq!(endian(0x1122_3344_5566_7788, 32, true), Some(0x8877_6655));
        assert_eq!(endian(0x1122_3344_5566_7788, 16, false), Some(0x7788));
        assert_eq!(
            endian(0x1122_3344_5566_7788, 64, true),
            Some(0x8877_6655_4433_2211)
        );
        assert_eq!(endian(1, 8, true), None);
    }

    #[test]
    fn conditions_signed_and_32_bit() {
        assert_eq!(condition(JMP_JSGT, true, 1, u64::MAX), Some(true));
        assert_eq!(condition(JMP_JGT, true, 1, u64::MAX), Some(false));
        assert_eq!(condition(JMP_JEQ, false, 0x1_0000_0005, 5), Some(true));
        assert_eq!(condition(JMP_JSLT, false, 0xffff_ffff, 0), Some(true));
        assert_eq!(condition(JMP_CALL, true, 0, 0), None);
    }
}
