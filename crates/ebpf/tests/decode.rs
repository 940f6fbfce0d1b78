//! Decoding errors for malformed instruction streams.

use hwxdp_ebpf::{decode, DecodeError, Insn};

const EXIT: [u8; 8] = [0x95, 0, 0, 0, 0, 0, 0, 0];
const LDDW_HEAD: [u8; 8] = [0x18, 0x01, 0, 0, 0x05, 0, 0, 0];

#[test]
fn length_must_be_a_multiple_of_eight() {
    for len in [1, 7, 9, 12, 15] {
        let bytes = vec![0x95; len];
        assert_eq!(decode(&bytes), Err(DecodeError::Length { len }));
    }
    assert_eq!(decode(&[]), Ok(vec![]));
    assert_eq!(
        DecodeError::Length { len: 12 }.to_string(),
        "instruction stream of 12 bytes is not a multiple of 8"
    );
}

#[test]
fn lddw_without_second_half_is_truncated() {
    assert_eq!(
        decode(&LDDW_HEAD),
        Err(DecodeError::TruncatedLddw { slot: 0 })
    );
    let bytes = [EXIT, EXIT, LDDW_HEAD].concat();
    assert_eq!(decode(&bytes), Err(DecodeError::TruncatedLddw { slot: 2 }));
    assert_eq!(
        DecodeError::TruncatedLddw { slot: 2 }.to_string(),
        "instruction 2: lddw is missing its second half"
    );
    assert_eq!(
        Insn::decode_at(&LDDW_HEAD, 4),
        Err(DecodeError::TruncatedLddw { slot: 4 })
    );
    assert_eq!(
        Insn::decode_at(&LDDW_HEAD[..5], 0),
        Err(DecodeError::Length { len: 5 })
    );
}

#[test]
fn lddw_second_half_must_only_hold_the_immediate() {
    let tail_with_opcode = [0x18, 0, 0, 0, 7, 0, 0, 0];
    let bytes = [EXIT, LDDW_HEAD, tail_with_opcode].concat();
    assert_eq!(decode(&bytes), Err(DecodeError::BadLddwTail { slot: 1 }));
    let good_tail = [0, 0, 0, 0, 7, 0, 0, 0];
    let insns = decode(&[LDDW_HEAD, good_tail, EXIT].concat()).expect("valid stream");
    assert_eq!(
        insns,
        vec![
            Insn::new(0x18, 1, 0, 0, 5 | (7 << 32)),
            Insn::new(0x95, 0, 0, 0, 0)
        ]
    );
}
