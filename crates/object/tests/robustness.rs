//! `parse` returns (Ok or Err) on damaged objects instead of panicking.

mod common;

use hwxdp_object::parse;

/// A small deterministic generator (xorshift64) so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn truncated_objects_do_not_panic() {
    for fixture in ["maps", "calls"] {
        let bytes = common::compile(fixture).bytes.clone();
        assert!(parse(&bytes).is_ok());
        let mut errors = 0;
        for len in 0..bytes.len() {
            errors += usize::from(parse(&bytes[..len]).is_err());
        }
        // The section headers sit at the end of the file, so nearly every prefix must be refused.
        assert!(
            errors >= bytes.len() - 1,
            "{fixture}: only {errors} of {} prefixes refused",
            bytes.len()
        );
    }
}

#[test]
fn every_single_bit_flip_position_is_survived() {
    for fixture in ["maps", "calls", "core"] {
        let bytes = common::compile(fixture).bytes.clone();
        let mut copy = bytes.clone();
        let mut errors = 0;
        for i in 0..copy.len() {
            let bit = 1 << (i % 8);
            copy[i] ^= bit;
            errors += usize::from(parse(&copy).is_err());
            copy[i] ^= bit;
        }
        assert!(errors > 0, "{fixture}: no bit flip was detected");
    }
}

#[test]
fn random_multi_byte_corruption_is_survived() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for fixture in ["maps", "calls"] {
        let bytes = common::compile(fixture).bytes.clone();
        for _ in 0..3000 {
            let mut copy = bytes.clone();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(copy.len());
                copy[at] = rng.next() as u8;
            }
            let _ = parse(&copy);
        }
    }
}
