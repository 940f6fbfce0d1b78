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
            && text.contains("out of packet: exit 1"),
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
