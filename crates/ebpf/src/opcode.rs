//! Opcode fields and well-known constants of RFC 9669 and the Linux uapi.

/// Load from immediate (`lddw`, legacy packet loads).
pub const CLASS_LD: u8 = 0x00;
/// Load into register.
pub const CLASS_LDX: u8 = 0x01;
/// Store immediate.
pub const CLASS_ST: u8 = 0x02;
/// Store register (and atomics).
pub const CLASS_STX: u8 = 0x03;
/// 32-bit arithmetic.
pub const CLASS_ALU: u8 = 0x04;
/// 64-bit jumps.
pub const CLASS_JMP: u8 = 0x05;
/// 32-bit jumps.
pub const CLASS_JMP32: u8 = 0x06;
/// 64-bit arithmetic.
pub const CLASS_ALU64: u8 = 0x07;

/// Source operand is the immediate.
pub const SRC_K: u8 = 0x00;
/// Source operand is the source register.
pub const SRC_X: u8 = 0x08;

/// Access sizes (bits 3-4 of load/store opcodes).
pub const SIZE_W: u8 = 0x00;
/// Half word.
pub const SIZE_H: u8 = 0x08;
/// Byte.
pub const SIZE_B: u8 = 0x10;
/// Double word.
pub const SIZE_DW: u8 = 0x18;

/// Load/store modes (bits 5-7).
pub const MODE_IMM: u8 = 0x00;
/// Legacy absolute packet load.
pub const MODE_ABS: u8 = 0x20;
/// Legacy indirect packet load.
pub const MODE_IND: u8 = 0x40;
/// Regular memory access.
pub const MODE_MEM: u8 = 0x60;
/// Sign-extending load (v4).
pub const MODE_MEMSX: u8 = 0x80;
/// Atomic operation.
pub const MODE_ATOMIC: u8 = 0xc0;

/// ALU operations (bits 4-7).
pub const ALU_ADD: u8 = 0x00;
/// Subtract.
pub const ALU_SUB: u8 = 0x10;
/// Multiply.
pub const ALU_MUL: u8 = 0x20;
/// Divide (unsigned, or signed when `off == 1`).
pub const ALU_DIV: u8 = 0x30;
/// Or.
pub const ALU_OR: u8 = 0x40;
/// And.
pub const ALU_AND: u8 = 0x50;
/// Left shift.
pub const ALU_LSH: u8 = 0x60;
/// Logical right shift.
pub const ALU_RSH: u8 = 0x70;
/// Negate.
pub const ALU_NEG: u8 = 0x80;
/// Modulo (unsigned, or signed when `off == 1`).
pub const ALU_MOD: u8 = 0x90;
/// Xor.
pub const ALU_XOR: u8 = 0xa0;
/// Move (sign-extending when `off` is 8, 16 or 32).
pub const ALU_MOV: u8 = 0xb0;
/// Arithmetic right shift.
pub const ALU_ARSH: u8 = 0xc0;
/// Byte swap (`le`/`be` in ALU, unconditional `bswap` in ALU64).
pub const ALU_END: u8 = 0xd0;

/// Jump operations (bits 4-7).
pub const JMP_JA: u8 = 0x00;
/// Equal.
pub const JMP_JEQ: u8 = 0x10;
/// Unsigned greater.
pub const JMP_JGT: u8 = 0x20;
/// Unsigned greater or equal.
pub const JMP_JGE: u8 = 0x30;
/// Bits set.
pub const JMP_JSET: u8 = 0x40;
/// Not equal.
pub const JMP_JNE: u8 = 0x50;
/// Signed greater.
pub const JMP_JSGT: u8 = 0x60;
/// Signed greater or equal.
pub const JMP_JSGE: u8 = 0x70;
/// Call.
pub const JMP_CALL: u8 = 0x80;
/// Exit.
pub const JMP_EXIT: u8 = 0x90;
/// Unsigned less.
pub const JMP_JLT: u8 = 0xa0;
/// Unsigned less or equal.
pub const JMP_JLE: u8 = 0xb0;
/// Signed less.
pub const JMP_JSLT: u8 = 0xc0;
/// Signed less or equal.
pub const JMP_JSLE: u8 = 0xd0;

/// Atomic operation codes (the immediate of an atomic instruction).
pub const ATOMIC_ADD: i32 = 0x00;
/// Atomic or.
pub const ATOMIC_OR: i32 = 0x40;
/// Atomic and.
pub const ATOMIC_AND: i32 = 0x50;
/// Atomic xor.
pub const ATOMIC_XOR: i32 = 0xa0;
/// Modifier: also return the old value in the source register.
pub const ATOMIC_FETCH: i32 = 0x01;
/// Exchange.
pub const ATOMIC_XCHG: i32 = 0xe0 | ATOMIC_FETCH;
/// Compare and exchange (compares with r0, old value into r0).
pub const ATOMIC_CMPXCHG: i32 = 0xf0 | ATOMIC_FETCH;

/// The opcode of `lddw`.
pub const LD_DW_IMM: u8 = CLASS_LD | SIZE_DW | MODE_IMM;

/// `lddw` pseudo-source: immediate is a map (fd in the kernel, map index in hwxdp).
pub const PSEUDO_MAP_FD: u8 = 1;
/// `lddw` pseudo-source: address of a map value (map in the low 32 bits, offset in the high 32 bits).
pub const PSEUDO_MAP_VALUE: u8 = 2;
/// `lddw` pseudo-source: map by index into the fd array.
pub const PSEUDO_MAP_IDX: u8 = 5;
/// `lddw` pseudo-source: map value by index into the fd array.
pub const PSEUDO_MAP_IDX_VALUE: u8 = 6;
/// `lddw` pseudo-source: address of a BTF kernel symbol.
pub const PSEUDO_BTF_ID: u8 = 3;
/// `lddw` pseudo-source: address of a function.
pub const PSEUDO_FUNC: u8 = 4;

/// `call` pseudo-source: bpf-to-bpf call, immediate is the slot offset of the callee.
pub const PSEUDO_CALL: u8 = 1;
/// `call` pseudo-source: kernel function by BTF id.
pub const PSEUDO_KFUNC_CALL: u8 = 2;

/// Number of general purpose registers (r0-r10).
pub const NUM_REGS: usize = 11;
/// The read-only frame pointer.
pub const FRAME_POINTER: u8 = 10;
/// Stack bytes per frame.
pub const STACK_SIZE: usize = 512;
