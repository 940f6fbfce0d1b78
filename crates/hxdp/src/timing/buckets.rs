//! The maps module's hashed buckets of HASH, PERCPU_HASH and LRU_HASH maps (rtl/sephirot/maps.sv), as far as their
//! latency depends on them: how many bucket rows an operation reads.
//!
//! A map has a power of two of 4-way buckets (at least twice its `max_entries` ways); a key's home bucket is
//! [`crc32`] of its bytes modulo the buckets. Linear probing over buckets: an operation reads the rows from the home
//! on, one per cycle, up to and including the first row that is not full, so the rows read depend only on how many
//! keys each bucket is home to, not on the order the keys came in (the maps module keeps that true on deletes by the
//! backward shift). The occupancy of the rows follows from those counts alone: rows fill in probe order, what does not
//! fit a row carries to the next.

use std::collections::HashSet;

/// Ways per bucket row.
pub const WAYS: u32 = 4;

/// CRC-32 (polynomial 0x04C11DB7, initial value 0, no final xor) over `key` from its last byte to its first, each
/// byte's bit 7 first: rtl/common/hash32.sv, which hashes the key zero-padded at its end (leading zeros leave it 0).
pub fn crc32(key: &[u8]) -> u32 {
    let mut c = 0u32;
    for &byte in key.iter().rev() {
        for i in (0..8).rev() {
            let fb = (c >> 31) ^ ((byte as u32 >> i) & 1);
            c = (c << 1) ^ if fb != 0 { 0x04C1_1DB7 } else { 0 };
        }
    }
    c
}

/// Buckets of a map of `max_entries`: the power of two at or above half of it.
pub fn bucket_count(max_entries: u32) -> u32 {
    max_entries.div_ceil(2).max(1).next_power_of_two()
}

/// The keys of one HASH or PERCPU_HASH map as the maps module's buckets hold them.
#[derive(Clone, Debug)]
pub struct Buckets {
    mask: u32,
    homes: Vec<u32>,
    keys: HashSet<Vec<u8>>,
    full: Option<Vec<bool>>,
}

impl Buckets {
    /// An empty map of `max_entries`.
    pub fn new(max_entries: u32) -> Buckets {
        let n = bucket_count(max_entries);
        Buckets {
            mask: n - 1,
            homes: vec![0; n as usize],
            keys: HashSet::new(),
            full: None,
        }
    }

    /// The home bucket of `key`.
    pub fn home(&self, key: &[u8]) -> u32 {
        crc32(key) & self.mask
    }

    /// Whether `key` is in the map.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.keys.contains(key)
    }

    /// Adds `key` (nothing when it is there).
    pub fn insert(&mut self, key: &[u8]) {
        if self.keys.insert(key.to_vec()) {
            let h = self.home(key) as usize;
            self.homes[h] += 1;
            self.full = None;
        }
    }

    /// Removes `key` (nothing when it is not there).
    pub fn remove(&mut self, key: &[u8]) {
        if self.keys.remove(key) {
            let h = self.home(key) as usize;
            self.homes[h] -= 1;
            self.full = None;
        }
    }

    /// Which rows are full: the keys of each home bucket fill rows in probe order, the overflow carrying on. Two
    /// passes round the table: after the first the carry into row 0 is the true one, as some row is not full.
    fn full_rows(&mut self) -> &[bool] {
        if self.full.is_none() {
            let n = self.homes.len();
            let mut full = vec![false; n];
            let mut carry = 0u32;
            for pass in 0..2 {
                for (b, f) in full.iter_mut().enumerate() {
                    let total = self.homes[b] + carry;
                    carry = total.saturating_sub(WAYS);
                    if pass == 1 {
                        *f = total >= WAYS;
                    }
                }
            }
            self.full = Some(full);
        }
        self.full.as_deref().unwrap_or(&[])
    }

    /// Rows an operation on `key` reads: its home and every row after it while the rows are full (at most all).
    pub fn rows(&mut self, key: &[u8]) -> u64 {
        let home = self.home(key) as usize;
        let full = self.full_rows();
        let n = full.len();
        let mut rows = 1;
        while rows < n && full[(home + rows - 1) % n] {
            rows += 1;
        }
        rows as u64
    }
}

/// Cycles of a bucket delete of a key whose probe reads `rows` rows, after the request's first cycle: the rows read,
/// and when more than one, the backward shift (the rows after the home read again, then the hole cleared).
pub fn delete_cycles(rows: u64) -> u64 {
    rows + if rows > 1 { rows } else { 0 }
}

/// Cycles of one step of the maps module's LRU engine: the fetch of the node row it examines or moves (the lists are
/// block RAM), then its execution.
pub const LRU_STEP_CYCLES: u64 = 2;

/// The cycles the maps module's LRU engine takes for an LRU_HASH update of `key` on `buckets` (the map's keys before
/// the update), from the `steps` of `bpf_lru_pop_free` the reference LRU took (`hwxdp_maps::Maps::lru_pop_steps`,
/// [`LRU_STEP_CYCLES`] each, `LDecide` included) and the keys it `evicted` in order (`hwxdp_maps::Maps::lru_evicted`): each
/// eviction reads the node's slot key (a cycle), then deletes the key from the buckets ([`delete_cycles`]); once a
/// node is taken (`taken`: not -ENOMEM) the key's own rows are probed, one a cycle. Leaves `buckets` holding the
/// keys after the update: the evicted ones gone, `key` in when `stored` (the update succeeded).
pub fn lru_update_cycles(
    buckets: &mut Buckets,
    steps: u64,
    evicted: &[Vec<u8>],
    key: &[u8],
    taken: bool,
    stored: bool,
) -> u64 {
    let mut cycles = LRU_STEP_CYCLES * steps;
    for k in evicted {
        cycles += 1 + delete_cycles(buckets.rows(k));
        buckets.remove(k);
    }
    if taken {
        cycles += buckets.rows(key);
    }
    if stored {
        buckets.insert(key);
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_msb_first_crc_of_the_reversed_key() {
        // CRC-32/MPEG-2 without its initial 0xffffffff: "123456789" reversed is "987654321"
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(&[0, 0]), 0);
        assert_eq!(crc32(&[1]), 0x04C1_1DB7);
        // zero padding at the end (the hardware's wider key register) leaves the hash alone
        assert_eq!(crc32(&[7, 9, 0, 0, 0]), crc32(&[7, 9]));
        assert_ne!(crc32(&[7, 9]), crc32(&[9, 7]));
    }

    #[test]
    fn bucket_counts_give_half_full_tables() {
        assert_eq!(bucket_count(1), 1);
        assert_eq!(bucket_count(2), 1);
        assert_eq!(bucket_count(3), 2);
        assert_eq!(bucket_count(64), 32);
        assert_eq!(bucket_count(65), 64);
    }

    #[test]
    fn rows_count_the_full_rows_after_the_home() {
        let mut b = Buckets::new(16); // 8 buckets
        let keys: Vec<Vec<u8>> = (0u32..2000).map(|i| i.to_le_bytes().to_vec()).collect();
        let home0: Vec<&Vec<u8>> = keys.iter().filter(|k| b.home(k) == 0).take(6).collect();
        let home1: Vec<&Vec<u8>> = keys.iter().filter(|k| b.home(k) == 1).take(3).collect();
        for k in &home0[..4] {
            assert_eq!(b.rows(k), 1);
            b.insert(k);
        }
        // row 0 full: a key homed there reads row 1 too
        assert_eq!(b.rows(home0[4]), 2);
        b.insert(home0[4]);
        b.insert(home0[5]);
        for k in &home1 {
            b.insert(k);
        }
        // rows 0 and 1 full (4 + 2 carried + 3 = 9 keys: row 1 takes 4, one carries to row 2)
        assert_eq!(b.rows(home0[0]), 3);
        assert_eq!(b.rows(home1[0]), 2);
        // one key fewer at home 0: row 1 still fills (3 + 1 carried)
        b.remove(home0[0]);
        assert_eq!(b.rows(home0[1]), 3);
        assert!(!b.contains(home0[0]));
        b.remove(home1[0]);
        assert_eq!(b.rows(home0[1]), 2);
    }
}
