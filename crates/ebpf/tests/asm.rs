//! The assembler's conveniences and its errors.

use hwxdp_ebpf::{assemble, format_insn, listing, AsmError, CallKind, Insn, InsnKind, InvalidInsn};

fn texts(insns: &[Insn]) -> Vec<String> {
    insns.iter().map(format_insn).collect()
}

#[test]
fn labels_comments_and_blank_lines() {
    let src = "
        ; a comment line
        start:  r0 = 0          # trailing comment
                r1 = 1 ll
        loop:
                r0 += 1
                if r0 < 10 goto loop
                if w0 != w1 goto done ; forward
                gotol start
        done:   exit
    ";
    let insns = assemble(src).expect("assembles");
    assert_eq!(
        texts(&insns),
        [
            "r0 = 0",
            "r1 = 1 ll",
            "r0 += 1",
            "if r0 < 10 goto -2",
            "if w0 != w1 goto +1",
            "gotol -7",
            "exit"
        ]
    );
}

#[test]
fn llvm_objdump_spellings_are_accepted() {
    let src = "
        r1 = *(u32 *)(r1 + 0x10)
        r2 += -0x4
        if r0 == 0x0 goto +0x2 <prog+0x48>
        if r1 < r2 goto -1 <LBB0_3>
        w1 = *(u16 *)(r2 + 0)
        *(u32 *)(r10 - 4) = w1
        lock *(u32 *)(r1 - 8) += w2
        *(u64 *)(r10 + -8) = r1
        r1 = 4294967295
    ";
    let insns = assemble(src).expect("assembles");
    assert_eq!(
        texts(&insns),
        [
            "r1 = *(u32 *)(r1 + 16)",
            "r2 += -4",
            "if r0 == 0 goto +2",
            "if r1 < r2 goto -1",
            "r1 = *(u16 *)(r2 + 0)",
            "*(u32 *)(r10 - 4) = r1",
            "lock *(u32 *)(r1 - 8) += r2",
            "*(u64 *)(r10 - 8) = r1",
            "r1 = -1",
        ]
    );
}

#[test]
fn calls_of_every_kind() {
    let insns = assemble("call 1\ncall sub\ncall pc-3\ncall kfunc 77\nexit\nsub: r0 = 0\nexit")
        .expect("assembles");
    let kinds: Vec<InsnKind> = insns
        .iter()
        .map(|i| hwxdp_ebpf::kind(i).expect("valid"))
        .collect();
    assert_eq!(
        kinds[0],
        InsnKind::Call {
            kind: CallKind::Helper,
            imm: 1
        }
    );
    assert_eq!(
        kinds[1],
        InsnKind::Call {
            kind: CallKind::Local,
            imm: 3
        }
    );
    assert_eq!(
        kinds[2],
        InsnKind::Call {
            kind: CallKind::Local,
            imm: -3
        }
    );
    assert_eq!(
        kinds[3],
        InsnKind::Call {
            kind: CallKind::Kfunc,
            imm: 77
        }
    );
}

#[test]
fn labels_count_lddw_as_two_slots() {
    let insns = assemble("goto end\nr1 = 0 ll\nend: exit").expect("assembles");
    assert_eq!(texts(&insns), ["goto +2", "r1 = 0 ll", "exit"]);
}

#[test]
fn errors_name_the_line() {
    let err = |src: &str| assemble(src).unwrap_err();
    assert_eq!(
        err("exit\n\nr1 +=\n"),
        AsmError::Syntax {
            line: 3,
            text: "r1 +=".into()
        }
    );
    assert_eq!(
        err("r1 = r11"),
        AsmError::Register {
            line: 1,
            name: "r11".into()
        }
    );
    assert_eq!(
        err("exit\nw1 = r2"),
        AsmError::Registers {
            line: 2,
            text: "w1 = r2".into()
        }
    );
    assert_eq!(err("r1 = $"), AsmError::Char { line: 1, ch: '$' });
    assert_eq!(
        err("r1 = 0xzz"),
        AsmError::Number {
            line: 1,
            text: "0xzz".into()
        }
    );
    assert_eq!(
        err("goto +40000"),
        AsmError::Range {
            line: 1,
            value: 40000,
            field: "off"
        }
    );
    assert_eq!(
        err("r1 = 4294967296"),
        AsmError::Range {
            line: 1,
            value: 4294967296,
            field: "imm"
        }
    );
    assert_eq!(
        err("exit\ngoto nowhere"),
        AsmError::UnknownLabel {
            line: 2,
            label: "nowhere".into()
        }
    );
    assert_eq!(
        err("a: exit\na: exit"),
        AsmError::DuplicateLabel {
            line: 2,
            label: "a".into()
        }
    );
    assert_eq!(
        err("w1 = (s32)w2"),
        AsmError::Invalid {
            line: 1,
            source: InvalidInsn::Field {
                code: 0xbc,
                field: "off",
                value: 32
            }
        }
    );
    assert_eq!(
        err("r1 = le8 r1"),
        AsmError::Invalid {
            line: 1,
            source: InvalidInsn::Field {
                code: 0xd4,
                field: "imm",
                value: 8
            }
        }
    );
    assert_eq!(
        err("r1 = atomic_fetch_add((u64 *)(r2 + 0), r3)"),
        AsmError::Registers {
            line: 1,
            text: "r1 = atomic_fetch_add((u64 *)(r2 + 0), r3)".into()
        }
    );
    assert_eq!(
        err("r1 = bswap16 r2").to_string(),
        "line 1: registers do not fit `r1 = bswap16 r2`"
    );
    assert_eq!(
        err("exit\nfoo bar").to_string(),
        "line 2: cannot parse `foo bar`"
    );
}

#[test]
fn far_label_beyond_goto_range_is_an_error() {
    let mut src = String::from("goto far\n");
    src += &"r0 = 0\n".repeat(40_000);
    src += "far: exit\n";
    assert_eq!(
        assemble(&src),
        Err(AsmError::Range {
            line: 1,
            value: 40_000,
            field: "off"
        })
    );
    let long = src.replacen("goto far", "gotol far", 1);
    assert_eq!(
        format_insn(&assemble(&long).expect("gotol reaches")[0]),
        "gotol +40000"
    );
}

#[test]
fn listing_layout() {
    let insns =
        assemble("r1 = 5 ll\nif r1 > 3 goto out\nr0 = 1\nout: exit\ngoto -5").expect("assembles");
    let symbols = vec![(0, "prog".to_string()), (4, "out".to_string())];
    let expected = "\n0000000000000000 <prog>:\n\
        \x20      0:\t18 01 00 00 05 00 00 00 00 00 00 00 00 00 00 00\tr1 = 5 ll\n\
        \x20      2:\t25 01 01 00 03 00 00 00\tif r1 > 3 goto +1 <out>\n\
        \x20      3:\tb7 00 00 00 01 00 00 00\tr0 = 1\n\
        \n0000000000000020 <out>:\n\
        \x20      4:\t95 00 00 00 00 00 00 00\texit\n\
        \x20      5:\t05 00 fb ff 00 00 00 00\tgoto -5 <prog+0x8>\n";
    assert_eq!(listing(&insns, &symbols), expected);
    // Without symbols there are no headers and no target labels.
    let bare = listing(&insns, &[]);
    assert!(!bare.contains('<'), "{bare}");
    assert_eq!(bare.lines().count(), 5);
    // A target before the first symbol has no label; invalid instructions print as <unknown>.
    let odd = listing(
        &[Insn::new(0x05, 0, 0, -1, 0), Insn::new(0xff, 0, 0, 0, 0)],
        &[(1, "late".to_string())],
    );
    assert_eq!(odd, "       0:\t05 00 ff ff 00 00 00 00\tgoto -1\n\n0000000000000008 <late>:\n       1:\tff 00 00 00 00 00 00 00\t<unknown>\n");
}
