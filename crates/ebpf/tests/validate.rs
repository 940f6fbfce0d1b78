//! `validate` accepts exactly the opcodes of RFC 9669 and rejects everything else, naming the opcode.

mod common;

use common::sweep;
use hwxdp_ebpf::{validate, Insn, InvalidInsn};
use std::collections::BTreeSet;

/// The opcode bytes of RFC 9669 Appendix A, written out by hand so the test does not share code with `validate`.
const RFC_OPCODES: &[u8] = &[
    // ALU64, immediate and register sources (no register-source neg, no register-source bswap).
    0x07, 0x17, 0x27, 0x37, 0x47, 0x57, 0x67, 0x77, 0x87, 0x97, 0xa7, 0xb7, 0xc7, 0xd7, //
    0x0f, 0x1f, 0x2f, 0x3f, 0x4f, 0x5f, 0x6f, 0x7f, 0x9f, 0xaf, 0xbf, 0xcf, //
    // ALU (32-bit); 0xd4/0xdc are le/be.
    0x04, 0x14, 0x24, 0x34, 0x44, 0x54, 0x64, 0x74, 0x84, 0x94, 0xa4, 0xb4, 0xc4, 0xd4, //
    0x0c, 0x1c, 0x2c, 0x3c, 0x4c, 0x5c, 0x6c, 0x7c, 0x9c, 0xac, 0xbc, 0xcc, 0xdc, //
    // JMP: ja, conditionals, call, callx, exit.
    0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, 0x55, 0x5d, 0x65, 0x6d, 0x75,
    0x7d, //
    0x85, 0x8d, 0x95, 0xa5, 0xad, 0xb5, 0xbd, 0xc5, 0xcd, 0xd5, 0xdd, //
    // JMP32: gotol and conditionals.
    0x06, 0x16, 0x1e, 0x26, 0x2e, 0x36, 0x3e, 0x46, 0x4e, 0x56, 0x5e, 0x66, 0x6e, 0x76,
    0x7e, //
    0xa6, 0xae, 0xb6, 0xbe, 0xc6, 0xce, 0xd6, 0xde, //
    // LD: lddw, legacy abs and ind.
    0x18, 0x20, 0x28, 0x30, 0x40, 0x48, 0x50, //
    // LDX mem and memsx, ST, STX mem and atomics.
    0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91, 0x62, 0x6a, 0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b, 0xc3,
    0xdb,
];

#[test]
fn accepted_opcodes_are_exactly_rfc_9669() {
    let mut accepted = BTreeSet::new();
    let mut errors = Vec::new();
    sweep(|insn| match validate(&insn) {
        Ok(()) => {
            accepted.insert(insn.code);
        }
        Err(e) if !RFC_OPCODES.contains(&insn.code) => errors.push((insn, e)),
        Err(_) => {}
    });
    let expected: BTreeSet<u8> = RFC_OPCODES.iter().copied().collect();
    assert_eq!(
        expected.len(),
        RFC_OPCODES.len(),
        "duplicate in RFC_OPCODES"
    );
    assert_eq!(accepted, expected);
    // Every combination of an unknown opcode byte is rejected as that opcode.
    assert_eq!(
        errors.len(),
        (256 - expected.len()) * 256 * common::SWEEP_OFFS.len() * common::SWEEP_IMMS.len()
    );
    for (insn, e) in errors {
        assert_eq!(e, InvalidInsn::Opcode { code: insn.code });
        assert!(
            e.to_string().contains(&format!("{:#04x}", insn.code)),
            "{e}"
        );
    }
}

#[test]
fn unused_fields_and_bad_selectors_are_rejected() {
    let reserved = |code, field: &'static str, value| InvalidInsn::Reserved { code, field, value };
    let bad = |code, field: &'static str, value| InvalidInsn::Field { code, field, value };
    let cases = [
        (Insn::new(0x07, 1, 2, 0, 5), reserved(0x07, "src", 2)),
        (Insn::new(0x0f, 1, 2, 0, 5), reserved(0x0f, "imm", 5)),
        (Insn::new(0x07, 1, 0, 1, 5), reserved(0x07, "off", 1)),
        (Insn::new(0xb7, 1, 0, 8, 5), reserved(0xb7, "off", 8)),
        (Insn::new(0x87, 1, 0, 0, 5), reserved(0x87, "imm", 5)),
        (Insn::new(0x37, 1, 0, 2, 5), bad(0x37, "off", 2)),
        (Insn::new(0x9c, 1, 2, -1, 0), bad(0x9c, "off", -1)),
        // MOV X with off 1 is the arena addr_space_cast, which is not in RFC 9669.
        (Insn::new(0xbf, 1, 2, 1, 0), bad(0xbf, "off", 1)),
        (Insn::new(0xbc, 1, 2, 32, 0), bad(0xbc, "off", 32)),
        (Insn::new(0xd4, 1, 0, 0, 8), bad(0xd4, "imm", 8)),
        (Insn::new(0xd7, 1, 3, 0, 16), reserved(0xd7, "src", 3)),
        (Insn::new(0x18, 1, 7, 0, 0), bad(0x18, "src", 7)),
        (Insn::new(0x18, 1, 0, 4, 0), reserved(0x18, "off", 4)),
        (Insn::new(0x85, 0, 3, 0, 1), bad(0x85, "src", 3)),
        (Insn::new(0x85, 1, 0, 0, 1), reserved(0x85, "dst", 1)),
        // LLVM 14 put the callx register in imm; RFC 9669 puts it in dst.
        (Insn::new(0x8d, 0, 0, 0, 3), reserved(0x8d, "imm", 3)),
        (Insn::new(0xdb, 1, 2, 0, 2), bad(0xdb, "imm", 2)),
        (Insn::new(0xc3, 1, 2, 0, 0xe0), bad(0xc3, "imm", 0xe0)),
        (Insn::new(0x95, 0, 0, 0, 1), reserved(0x95, "imm", 1)),
        (Insn::new(0x05, 1, 0, 0, 0), reserved(0x05, "dst", 1)),
        (Insn::new(0x05, 0, 0, 3, 4), reserved(0x05, "imm", 4)),
        (Insn::new(0x06, 0, 0, 1, 0), reserved(0x06, "off", 1)),
        (Insn::new(0x15, 1, 2, 0, 0), reserved(0x15, "src", 2)),
        (Insn::new(0x1e, 1, 2, 0, 9), reserved(0x1e, "imm", 9)),
        (Insn::new(0x20, 1, 0, 0, 0), reserved(0x20, "dst", 1)),
        (Insn::new(0x20, 0, 1, 0, 0), reserved(0x20, "src", 1)),
        (Insn::new(0x40, 0, 1, 2, 0), reserved(0x40, "off", 2)),
        (Insn::new(0x61, 1, 2, 0, 1), reserved(0x61, "imm", 1)),
        (Insn::new(0x62, 1, 2, 0, 1), reserved(0x62, "src", 2)),
        (Insn::new(0x63, 1, 2, 0, 1), reserved(0x63, "imm", 1)),
        (
            Insn::new(0x61, 11, 0, 0, 0),
            InvalidInsn::Register {
                code: 0x61,
                reg: 11,
            },
        ),
        (
            Insn::new(0x0f, 1, 15, 0, 0),
            InvalidInsn::Register {
                code: 0x0f,
                reg: 15,
            },
        ),
        (
            Insn::new(0x8d, 12, 0, 0, 0),
            InvalidInsn::Register {
                code: 0x8d,
                reg: 12,
            },
        ),
        (Insn::new(0x07, 1, 0, 0, 1 << 40), bad(0x07, "imm", 1 << 40)),
        // may_goto (JMP 0xe5) and the arena/load-acquire opcodes are newer than RFC 9669.
        (
            Insn::new(0xe5, 0, 0, 1, 0),
            InvalidInsn::Opcode { code: 0xe5 },
        ),
        (
            Insn::new(0x38, 0, 0, 0, 0),
            InvalidInsn::Opcode { code: 0x38 },
        ),
        (
            Insn::new(0x99, 1, 2, 0, 0),
            InvalidInsn::Opcode { code: 0x99 },
        ),
        (
            Insn::new(0xd3, 1, 2, 0, 0),
            InvalidInsn::Opcode { code: 0xd3 },
        ),
    ];
    for (insn, expected) in cases {
        assert_eq!(validate(&insn), Err(expected), "{insn:?}");
    }
}

#[test]
fn messages_name_the_opcode_and_field() {
    let msg = |insn: Insn| validate(&insn).unwrap_err().to_string();
    assert_eq!(
        msg(Insn::new(0x07, 1, 2, 0, 5)),
        "opcode 0x07: unused field src is 2, not 0"
    );
    assert_eq!(
        msg(Insn::new(0xd4, 1, 0, 0, 8)),
        "opcode 0xd4: imm 8 is not valid"
    );
    assert_eq!(
        msg(Insn::new(0x61, 11, 0, 0, 0)),
        "opcode 0x61: register r11 does not exist"
    );
    assert_eq!(msg(Insn::new(0xff, 0, 0, 0, 0)), "unknown opcode 0xff");
}
