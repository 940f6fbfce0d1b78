//! Exact-match index from key bytes to element number, for the hash-based maps.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast multiplicative hasher: keys are short byte strings and the index is never exposed to adversaries.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w) ^ (rest.len() as u64) << 59)
                .wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// Key bytes to element number.
pub(crate) type KeyIndex = HashMap<Box<[u8]>, u32, BuildHasherDefault<KeyHasher>>;

/// Every `(key, element)` of `index`, sorted by key bytes.
pub(crate) fn sorted(index: &KeyIndex) -> Vec<(&[u8], u32)> {
    let mut v: Vec<(&[u8], u32)> = index.iter().map(|(k, &e)| (&**k, e)).collect();
    v.sort_unstable_by(|a, b| a.0.cmp(b.0));
    v
}
