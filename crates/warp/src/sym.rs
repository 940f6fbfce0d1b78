//! The symbolic values of the walk: what a register or stack byte holds as a function of the packet's first chunk
//! and its length, or a pointer by what it points at.
//!
//! A number is a vector of 64 [`Bit`]s, each a constant or one bit of the key space ([`KeyBit`]: a bit of the
//! chunk, or of the packet length). Loads, masks, shifts, byte swaps, zero and sign extension and carry-free
//! additions keep that form exactly; anything else (a sum with carries, a product) is [`Sym::Unknown`].

use std::fmt;

/// A bit the Warp Engine can match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyBit {
    /// Bit `bit % 8` (least significant first) of byte `bit / 8` of the packet.
    Chunk(u16),
    /// Bit `n` of the packet length (`data_end - data`), which the engine knows from the frame it receives.
    Len(u8),
}

/// One bit of a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit {
    /// Always 0.
    Zero,
    /// Always 1.
    One,
    /// A bit of the packet or its length.
    Key(KeyBit),
}

/// Width of the packet length in the key.
pub const LEN_BITS: u8 = 16;

/// A 64-bit number, bit 0 first.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bits(pub [Bit; 64]);

impl Bits {
    /// The constant `v`.
    pub fn constant(v: u64) -> Bits {
        Bits(std::array::from_fn(|i| {
            if v >> i & 1 == 1 {
                Bit::One
            } else {
                Bit::Zero
            }
        }))
    }

    /// `size` bytes of the packet from byte `off`, little-endian (as `ldx` loads them), zero-extended.
    pub fn packet(off: u16, size: u16) -> Bits {
        Bits(std::array::from_fn(|i| {
            if (i as u16) < size * 8 {
                Bit::Key(KeyBit::Chunk(off * 8 + i as u16))
            } else {
                Bit::Zero
            }
        }))
    }

    /// The packet length, zero-extended.
    pub fn length() -> Bits {
        Bits(std::array::from_fn(|i| {
            if i < LEN_BITS as usize {
                Bit::Key(KeyBit::Len(i as u8))
            } else {
                Bit::Zero
            }
        }))
    }

    /// The value when every bit is constant.
    pub fn as_const(&self) -> Option<u64> {
        let mut v = 0u64;
        for (i, b) in self.0.iter().enumerate() {
            match b {
                Bit::Zero => {}
                Bit::One => v |= 1 << i,
                Bit::Key(_) => return None,
            }
        }
        Some(v)
    }

    /// The low `bits` bits, zero-extended.
    pub fn truncate(mut self, bits: u32) -> Bits {
        for b in self.0.iter_mut().skip(bits as usize) {
            *b = Bit::Zero;
        }
        self
    }

    /// The low `bits` bits, sign-extended from bit `bits - 1`.
    pub fn sign_extend(mut self, bits: u32) -> Bits {
        let sign = self.0[bits as usize - 1];
        for b in self.0.iter_mut().skip(bits as usize) {
            *b = sign;
        }
        self
    }

    /// `self << n` within `width` bits (zero above).
    pub fn shl(&self, n: u32, width: u32) -> Bits {
        let out = Bits(std::array::from_fn(|i| {
            if (i as u32) < n {
                Bit::Zero
            } else {
                self.0[i - n as usize]
            }
        }));
        out.truncate(width)
    }

    /// `self >> n` within `width` bits; `arith` copies the sign bit (bit `width - 1`) in.
    pub fn shr(&self, n: u32, width: u32, arith: bool) -> Bits {
        let fill = if arith {
            self.0[width as usize - 1]
        } else {
            Bit::Zero
        };
        let out = Bits(std::array::from_fn(|i| {
            let from = i as u32 + n;
            if from < width {
                self.0[from as usize]
            } else {
                fill
            }
        }));
        out.truncate(width)
    }

    /// The low `bits` bits with their bytes in reverse order (`be16/32/64`, `bswap`), zero above.
    pub fn swap_bytes(&self, bits: u32) -> Bits {
        let bytes = bits / 8;
        Bits(std::array::from_fn(|i| {
            let i = i as u32;
            if i >= bits {
                return Bit::Zero;
            }
            let from = (bytes - 1 - i / 8) * 8 + i % 8;
            self.0[from as usize]
        }))
    }

    /// Bitwise AND with a constant.
    pub fn and_const(mut self, c: u64) -> Bits {
        for (i, b) in self.0.iter_mut().enumerate() {
            if c >> i & 1 == 0 {
                *b = Bit::Zero;
            }
        }
        self
    }

    /// Bitwise OR of two numbers, when no bit position holds two different key bits; `None` otherwise.
    pub fn or(&self, other: &Bits) -> Option<Bits> {
        let mut out = *self;
        for (o, b) in out.0.iter_mut().zip(other.0) {
            *o = match (*o, b) {
                (Bit::Zero, x) | (x, Bit::Zero) => x,
                (Bit::One, _) | (_, Bit::One) => Bit::One,
                (a, b) if a == b => a,
                _ => return None,
            };
        }
        Some(out)
    }

    /// `self + other` when no position has a non-zero bit on both sides (no carries): the same as [`Bits::or`].
    pub fn add_disjoint(&self, other: &Bits) -> Option<Bits> {
        let overlap = self
            .0
            .iter()
            .zip(other.0)
            .any(|(a, b)| *a != Bit::Zero && b != Bit::Zero);
        if overlap {
            None
        } else {
            self.or(other)
        }
    }

    /// The key bits this number reads.
    pub fn key_bits(&self) -> impl Iterator<Item = KeyBit> + '_ {
        self.0.iter().filter_map(|b| match b {
            Bit::Key(k) => Some(*k),
            _ => None,
        })
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_const() {
            Some(c) => write!(f, "{c:#x}"),
            None => {
                let keys: Vec<String> = self.key_bits().map(|k| format!("{k:?}")).collect();
                write!(f, "bits[{}]", keys.join(","))
            }
        }
    }
}

/// What a register or spilled stack slot holds on one path of the walk.
///
/// Numbers are kept inline (256 bytes) rather than boxed: states are copied whole at every split of the walk.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sym {
    /// Anything: the engine cannot compute it.
    Unknown,
    /// A number made of constant and key bits.
    Bits(Bits),
    /// The packet length plus a constant (`data_end - data + k`).
    Len(i64),
    /// The `struct xdp_md` pointer.
    Ctx,
    /// `data + k`.
    Packet(i64),
    /// `data_end + k`.
    PacketEnd(i64),
    /// `r10 + k` of the program's own frame.
    Stack(i64),
    /// A map, as `lddw` loads it.
    Map(u32),
}

impl Sym {
    /// The constant `v`.
    pub fn constant(v: u64) -> Sym {
        Sym::Bits(Bits::constant(v))
    }

    /// The value when it is a constant.
    pub fn as_const(&self) -> Option<u64> {
        match self {
            Sym::Bits(b) => b.as_const(),
            _ => None,
        }
    }

    /// Whether this is a pointer.
    pub fn is_pointer(&self) -> bool {
        matches!(
            self,
            Sym::Ctx | Sym::Packet(_) | Sym::PacketEnd(_) | Sym::Stack(_) | Sym::Map(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_a_loaded_halfword_puts_the_first_byte_high() {
        let v = Bits::packet(12, 2).swap_bytes(16);
        assert_eq!(v.0[8], Bit::Key(KeyBit::Chunk(96)));
        assert_eq!(v.0[0], Bit::Key(KeyBit::Chunk(104)));
        assert_eq!(v.0[16], Bit::Zero);
    }

    #[test]
    fn constants_fold_through_shifts_and_masks() {
        let v = Bits::constant(0xf0f0).shr(4, 64, false).and_const(0xff);
        assert_eq!(v.as_const(), Some(0x0f));
        assert_eq!(
            Bits::constant(0x8000_0000).shr(31, 32, true).as_const(),
            Some(0xffff_ffff)
        );
    }

    #[test]
    fn carry_free_sums_combine_bytes_and_others_do_not() {
        let hi = Bits::packet(0, 1).shl(8, 64);
        let lo = Bits::packet(1, 1);
        let v = hi.add_disjoint(&lo).expect("no carries");
        assert_eq!(v.key_bits().count(), 16);
        assert!(lo.add_disjoint(&lo).is_none());
    }
}
