//! Every valid instruction survives decode/encode and format/assemble.

mod common;

use common::{all_forms, sweep};
use hwxdp_ebpf::{assemble, decode, encode, format_insn, kind, CallKind, Insn, InsnKind};

/// decode(encode(i)) == i, kind(i) is stable, and the text reads back.
fn check_roundtrip(insn: Insn) {
    let bytes = encode(&[insn]);
    assert_eq!(bytes.len(), insn.slots() * 8, "{insn:?}");
    assert_eq!(decode(&bytes), Ok(vec![insn]), "decode(encode) of {insn:?}");

    let k = kind(&insn).unwrap_or_else(|e| panic!("{insn:?} should be valid: {e}"));
    assert_eq!(k.to_insn(), insn, "to_insn(kind) of {insn:?}");

    let text = format_insn(&insn);
    assert_ne!(text, "<unknown>");
    let back =
        assemble(&text).unwrap_or_else(|e| panic!("`{text}` from {insn:?} does not assemble: {e}"));
    assert_eq!(back.len(), 1, "`{text}`");
    assert_eq!(
        format_insn(&back[0]),
        text,
        "format(assemble(format)) of {insn:?}"
    );
    match k {
        // llvm-objdump prints every call as `call imm`, so bpf-to-bpf and kfunc calls read back as helper calls.
        InsnKind::Call {
            kind: CallKind::Local | CallKind::Kfunc,
            imm,
        } => {
            assert_eq!(
                back[0],
                InsnKind::Call {
                    kind: CallKind::Helper,
                    imm
                }
                .to_insn()
            );
        }
        _ => assert_eq!(back[0], insn, "assemble(format) of {insn:?} via `{text}`"),
    }
}

#[test]
fn every_form_round_trips() {
    let forms = all_forms();
    assert!(forms.len() > 1500, "generator shrank: {}", forms.len());
    for form in forms {
        let insn = form.to_insn();
        assert_eq!(kind(&insn), Ok(form), "kind(to_insn) of {form:?}");
        check_roundtrip(insn);
    }
}

#[test]
fn every_valid_swept_encoding_round_trips() {
    let mut valid = 0usize;
    sweep(|insn| {
        if kind(&insn).is_ok() {
            valid += 1;
            check_roundtrip(insn);
        }
    });
    assert!(
        valid > 100_000,
        "sweep found only {valid} valid instructions"
    );
}

#[test]
fn whole_program_round_trips_through_text() {
    let insns: Vec<Insn> = all_forms().iter().map(InsnKind::to_insn).collect();
    let text: String = insns.iter().map(|i| format_insn(i) + "\n").collect();
    let back = assemble(&text).expect("program assembles");
    let again: String = back.iter().map(|i| format_insn(i) + "\n").collect();
    assert_eq!(again, text);
    assert_eq!(decode(&encode(&back)), Ok(back));
}
