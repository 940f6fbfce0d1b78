//! Encoding and decoding of slots and images.

use hwxdp_hxdp::isa::*;
use hwxdp_hxdp::{Bundle, Image, IsaError, MapConfig, Op};

fn samples() -> Vec<Op> {
    vec![
        Op {
            code: 0x07,
            dst: 3,
            imm: -5,
            ..Op::default()
        },
        Op {
            code: 0x0f,
            dst: 2,
            src: 4,
            a: Some(7),
            ..Op::default()
        },
        Op {
            code: 0x3c,
            dst: 2,
            src: 4,
            a: Some(9),
            off: 1,
            ..Op::default()
        },
        Op {
            code: 0x18,
            dst: 1,
            src: 1,
            imm: 3,
            ..Op::default()
        },
        Op {
            code: 0x18,
            dst: 5,
            imm: 0x1234_5678_9abc_def0,
            ..Op::default()
        },
        Op {
            code: LDX6,
            dst: 2,
            src: 6,
            off: -6,
            ..Op::default()
        },
        Op {
            code: 0x61,
            dst: 2,
            src: 6,
            off: 12,
            imm: 2,
            ..Op::default()
        },
        Op {
            code: STX6,
            dst: 6,
            src: 2,
            off: 6,
            ..Op::default()
        },
        Op {
            code: EXIT_IMM,
            imm: 3,
            ..Op::default()
        },
        Op {
            code: 0x2d,
            dst: 1,
            src: 2,
            off: 700,
            ..Op::default()
        },
        Op {
            code: 0x85,
            imm: 12,
            ..Op::default()
        },
    ]
}

#[test]
fn slots_round_trip() {
    for op in samples() {
        let [low, high] = encode_op(&op);
        assert_eq!(decode_op(low, high), op, "{op}");
    }
}

#[test]
fn images_round_trip() {
    let mut bundles = Vec::new();
    for chunk in samples().chunks(2) {
        let mut b = Bundle::empty(4);
        b.lanes[0] = Some(chunk[0]);
        if let Some(op) = chunk.get(1) {
            b.lanes[2] = Some(*op);
        }
        bundles.push(b);
    }
    let image = Image {
        lanes: 4,
        bundles,
        entries: vec![0, NO_ENTRY],
        maps: vec![MapConfig {
            map_type: 1,
            key_size: 4,
            value_size: 8,
            max_entries: 16,
            flags: 1,
        }],
    };
    let bytes = image.encode();
    assert_eq!(&bytes[0..4], b"HXDP");
    assert_eq!(
        bytes.len(),
        HEADER_BYTES + 8 + MAP_ENTRY_BYTES + image.bundles.len() * 4 * 8
    );
    assert_eq!(Image::decode(&bytes).expect("decodes"), image);
    let text = listing(&image, &["a".into(), "b".into()]);
    assert!(
        text.contains("exit 3")
            && text.contains("r2 = r7 + r4")
            && text.contains("out of packet: exit 1")
            && text.contains("; map 0: type BPF_MAP_TYPE_HASH key 4 value 8 max_entries 16"),
        "{text}"
    );
}

#[test]
fn bad_images_are_refused() {
    let image = Image {
        lanes: 2,
        bundles: vec![Bundle::empty(2)],
        entries: vec![0],
        maps: vec![],
    };
    let bytes = image.encode();
    assert!(matches!(
        Image::decode(&bytes[..bytes.len() - 1]),
        Err(IsaError::Truncated { .. })
    ));
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(matches!(Image::decode(&bad), Err(IsaError::Magic { .. })));
    let mut bad = bytes.clone();
    bad[4] = 9;
    assert!(matches!(
        Image::decode(&bad),
        Err(IsaError::Version { found: 9 })
    ));
    let mut bad = bytes;
    bad[6] = 0;
    assert!(matches!(
        Image::decode(&bad),
        Err(IsaError::Lanes { lanes: 0 })
    ));
}

#[test]
fn three_operand_ops_print_the_whole_operator() {
    let op = |code: u8, dst: u8, src: u8, a: u8, off: i16, imm: i64| Op {
        code,
        dst,
        src,
        a: Some(a),
        off,
        imm,
    };
    let cases = [
        (op(0x67, 8, 0, 7, 0, 8), "r8 = r7 << 8"),
        (op(0x6c, 1, 3, 2, 0, 0), "w1 = w2 << w3"),
        (op(0x7f, 2, 3, 1, 0, 0), "r2 = r1 >> r3"),
        (op(0xc4, 2, 0, 4, 0, 3), "w2 = w4 s>> 3"),
        (op(0xcf, 2, 5, 4, 0, 0), "r2 = r4 s>> r5"),
        (op(0x3f, 2, 4, 9, 1, 0), "r2 = r9 s/ r4"),
        (op(0x3c, 2, 4, 9, 1, 0), "w2 = w9 s/ w4"),
        (op(0x9c, 2, 4, 9, 1, 0), "w2 = w9 s% w4"),
        (op(0x3f, 2, 4, 9, 0, 0), "r2 = r9 / r4"),
        (op(0xa7, 1, 0, 6, 0, 255), "r1 = r6 ^ 255"),
        (op(0x87, 2, 0, 5, 0, 0), "r2 = -r5"),
        (op(0xdc, 3, 0, 6, 0, 16), "r3 = be16 r6"),
    ];
    for (op, text) in cases {
        assert_eq!(format_op(&op), text);
        let [low, high] = encode_op(&op);
        assert_eq!(decode_op(low, high), op, "{text}");
    }
}
