//! A stable 128-bit FNV-1a hash naming cache directories.
//!
//! Cache keys need stability across Rust releases (std's `DefaultHasher` does not promise it) but no resistance to
//! adversaries, so a small FNV-1a is enough and needs no dependency.

const OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

/// Accumulates length-prefixed fields, so that ("ab", "c") and ("a", "bc") hash differently.
#[derive(Debug, Clone)]
pub(crate) struct KeyHasher {
    state: u128,
}

impl KeyHasher {
    pub(crate) fn new() -> Self {
        Self {
            state: OFFSET_BASIS,
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state ^= u128::from(b);
            self.state = self.state.wrapping_mul(PRIME);
        }
    }

    /// Adds one field: its length, then its bytes.
    pub(crate) fn field(&mut self, bytes: &[u8]) {
        self.bytes(&(bytes.len() as u64).to_le_bytes());
        self.bytes(bytes);
    }

    /// The hash as 32 lower-case hex digits.
    pub(crate) fn hex(&self) -> String {
        format!("{:032x}", self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_delimited() {
        let mut one = KeyHasher::new();
        one.field(b"ab");
        one.field(b"c");
        let mut two = KeyHasher::new();
        two.field(b"a");
        two.field(b"bc");
        assert_ne!(one.hex(), two.hex());
    }

    #[test]
    fn equal_inputs_hash_equally_and_render_as_32_hex_digits() {
        let mut one = KeyHasher::new();
        one.field(b"alu.sv");
        let mut two = KeyHasher::new();
        two.field(b"alu.sv");
        assert_eq!(one.hex(), two.hex());
        assert_eq!(one.hex().len(), 32);
        assert_ne!(one.hex(), KeyHasher::new().hex());
    }
}
