//! The Warp Engine's blocks on their own: `warp_extract` (every value kind, seeded random extractions) against
//! `hwxdp_warp::Extraction::eval`, and `warp_tcam` (seeded random ternary lines, keys made to hit them) against a
//! lowest-matching-line model, with the configuration words of `hwxdp_rtlsim::warp::tcam_writes`.

mod common;

use common::{hex, run_testbench, unit_spec, Rng};
use hwxdp_rtlsim::warp::tcam_writes;
use hwxdp_warp::rules::KeyEntry;
use hwxdp_warp::{Extraction, Params};

#[test]
fn warp_extract_matches_the_software_extraction() {
    let spec = unit_spec("warp_extract").source("warp/warp_extract.sv");
    let mut rng = Rng(0x3a11_5eed);
    let mut input = String::new();
    let mut want = Vec::new();
    for i in 0..3000 {
        let chunk = rng.bytes(128);
        let len = rng.below(2000) as u16;
        let b = rng.next();
        let kind = if i < 2000 { 2 } else { rng.below(10) };
        let e = Extraction {
            offset: rng.below(256) as u16,
            length: 1 + rng.below(8) as u8,
            big_endian: rng.below(2) == 1,
            shift: (rng.below(127) as i64 - 63) as i8,
            mask: if rng.below(2) == 0 { u64::MAX } else { b },
        };
        let a = kind
            | u64::from(e.offset) << 8
            | u64::from(e.length) << 16
            | u64::from(e.big_endian) << 20
            | u64::from(e.shift as u8) << 24;
        let b = if kind == 2 { e.mask } else { b };
        input.push_str(&format!("{} {len:x} {a:x} {b:x}\n", hex(&chunk)));
        want.push(match kind {
            1 => format!("1 {b:x}"),
            2 => format!("1 {:x}", e.eval(&chunk)),
            3 => format!("1 {:x}", u64::from(len).wrapping_add(b)),
            4..=8 => format!("{:x} {b:x}", kind - 2),
            _ => "0 0".to_string(),
        });
    }
    let got = run_testbench(&spec, input);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "vector {i}");
    }
}

/// The lowest line `key` matches.
fn lowest(entries: &[KeyEntry], key: &[u8]) -> Option<usize> {
    entries.iter().position(|e| e.matches(key))
}

#[test]
fn warp_tcam_gives_the_lowest_matching_line() {
    let spec = unit_spec("warp_tcam")
        .source("common/ram_sdp.sv")
        .source("warp/warp_tcam.sv");
    let params = Params::default();
    let mut rng = Rng(0x7ca3);
    let mut input = String::new();
    let mut want = Vec::new();
    for round in 0..3 {
        let lines = [64, 17, 1][round];
        let entries: Vec<KeyEntry> = (0..lines)
            .map(|_| {
                let mask: Vec<u8> = (0..16)
                    .map(|_| match rng.below(4) {
                        0 => 0xff,
                        1 => rng.next() as u8,
                        _ => 0,
                    })
                    .collect();
                let value = mask.iter().map(|m| m & rng.next() as u8).collect();
                KeyEntry { value, mask }
            })
            .collect();
        for w in tcam_writes(&entries.iter().collect::<Vec<_>>(), &params) {
            input.push_str(&format!("w {:x} {:x} {:x}\n", w.word, w.addr, w.data));
        }
        for k in 0..400 {
            let mut key = rng.bytes(16);
            if k % 2 == 0 {
                let e = &entries[rng.below_usize(entries.len())];
                for (b, (v, m)) in key.iter_mut().zip(e.value.iter().zip(&e.mask)) {
                    *b = (*b & !m) | v;
                }
            }
            input.push_str(&format!("k {}\n", hex(&key)));
            want.push(match lowest(&entries, &key) {
                Some(i) => format!("1 {i:x}"),
                None => "0 0".to_string(),
            });
        }
        // en_i low holds the result of the last enabled lookup.
        let key = rng.bytes(16);
        input.push_str(&format!("s {}\n", hex(&key)));
        let held = match lowest(&entries, &key) {
            Some(i) => format!("1 {i:x}"),
            None => "0 0".to_string(),
        };
        want.push(held);
    }
    let got = run_testbench(&spec, input);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "lookup {i}");
    }
    let hits = want.iter().filter(|w| w.starts_with('1')).count();
    assert!(hits >= 600, "too few hits: {hits}");
}

/// `warp_key_stage`'s key: `key` with `width` bytes of the chunk (or of the 16-bit length, most significant byte
/// first) from `src`, ANDed with `mask`, written from `at` (bytes past the key dropped, past the chunk read as 0).
fn key_model(chunk: &[u8], len: u16, key: &[u8], cfg: u64) -> Vec<u8> {
    let mut key = key.to_vec();
    if cfg & 1 == 0 {
        return key;
    }
    let (src, width, at) = (
        (cfg >> 8) as u8 as usize,
        (cfg >> 16 & 0xf) as usize,
        (cfg >> 24) as u8 as usize,
    );
    for i in 0..width.min(2) {
        let byte = if cfg & 2 != 0 {
            len.to_be_bytes().get(src + i).copied().unwrap_or(0)
        } else {
            chunk.get(src + i).copied().unwrap_or(0)
        };
        if let Some(k) = key.get_mut(at + i) {
            *k = byte & (cfg >> (32 + 8 * i)) as u8;
        }
    }
    key
}

#[test]
fn warp_key_stage_writes_its_bytes_into_the_key() {
    let spec = unit_spec("warp_key_stage").source("warp/warp_key_stage.sv");
    let mut rng = Rng(0x006b_6579);
    let mut input = String::new();
    let mut want = Vec::new();
    for _ in 0..2000 {
        let chunk = rng.bytes(128);
        let key = rng.bytes(16);
        let len = rng.next() as u16;
        let src = if rng.below(8) == 0 {
            120 + rng.below(16)
        } else {
            rng.below(128)
        };
        let cfg = u64::from(rng.below(8) != 0)
            | u64::from(rng.below(4) == 0) << 1
            | src << 8
            | rng.below(4) << 16
            | rng.below(20) << 24
            | (rng.next() & 0xffff) << 32;
        let tag = rng.below(256);
        input.push_str(&format!(
            "{} {len:x} {} {cfg:x} {tag:x}\n",
            hex(&chunk),
            hex(&key)
        ));
        want.push(format!(
            "1 {} {len:x} {tag:x}",
            hex(&key_model(&chunk, len, &key, cfg))
        ));
    }
    let got = run_testbench(&spec, input);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "vector {i}");
    }
}
