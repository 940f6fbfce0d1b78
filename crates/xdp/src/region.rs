//! Region-tagged addresses: what a pointer in the reference machine looks like.
//!
//! A pointer is a 64-bit value whose top four bits name the region it points into. The rest is an offset in that region,
//! so pointer arithmetic done by the program stays meaningful, and every access is checked against the region's bounds.
//! These values never leave the machine as host pointers.
//!
//! | tag | region | low 60 bits |
//! | --- | --- | --- |
//! | 1 | context (`struct xdp_md`) | offset in the context |
//! | 2 | packet frame | offset from `data_hard_start` |
//! | 3 | stack | offset from the bottom of the deepest frame area |
//! | 4 | map value | map index (bits 52-59), slot (bits 24-51), offset in the value (bits 0-23) |
//! | 5 | a map itself (`lddw rX, map`) | map index |
//!
//! Address 0 is NULL; anything else with another tag is not a pointer.

/// The region a tagged address points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The `struct xdp_md` context.
    Context,
    /// The packet frame.
    Packet,
    /// The stack.
    Stack,
    /// A map value (or a ring buffer record).
    MapValue,
    /// A map itself, as `lddw rX, map` loads it (only helpers take it).
    MapHandle,
    /// Not a pointer at all (NULL or a plain number).
    None,
}

const TAG_SHIFT: u32 = 60;
const OFFSET_MASK: u64 = (1 << TAG_SHIFT) - 1;
const TAG_CONTEXT: u64 = 1;
const TAG_PACKET: u64 = 2;
const TAG_STACK: u64 = 3;
const TAG_MAP: u64 = 4;
const TAG_MAP_HANDLE: u64 = 5;

/// Bits of a map-value address that hold the offset within the value.
pub const MAP_OFFSET_BITS: u32 = 24;
/// Bits of a map-value address that hold the slot.
pub const MAP_SLOT_BITS: u32 = 28;
/// Largest number of maps a program may use.
pub const MAX_MAPS: usize = 256;

/// The region of an address.
#[inline]
pub fn region(addr: u64) -> Region {
    match addr >> TAG_SHIFT {
        TAG_CONTEXT => Region::Context,
        TAG_PACKET => Region::Packet,
        TAG_STACK => Region::Stack,
        TAG_MAP => Region::MapValue,
        TAG_MAP_HANDLE => Region::MapHandle,
        _ => Region::None,
    }
}

/// The offset of an address within its region (for map values: the packed map/slot/offset).
#[inline]
pub fn offset(addr: u64) -> u64 {
    addr & OFFSET_MASK
}

/// The address of the context.
pub const fn context() -> u64 {
    TAG_CONTEXT << TAG_SHIFT
}

/// An address in the packet frame.
#[inline]
pub fn packet(off: usize) -> u64 {
    (TAG_PACKET << TAG_SHIFT) | off as u64
}

/// An address on the stack.
#[inline]
pub fn stack(off: usize) -> u64 {
    (TAG_STACK << TAG_SHIFT) | off as u64
}

/// The address of byte `off` of the value in `slot` of map `map`.
#[inline]
pub fn map_value(map: usize, slot: u32, off: u32) -> u64 {
    (TAG_MAP << TAG_SHIFT)
        | ((map as u64) << (MAP_OFFSET_BITS + MAP_SLOT_BITS))
        | ((slot as u64) << MAP_OFFSET_BITS)
        | off as u64
}

/// The value `lddw rX, map` puts in a register for map `map`.
#[inline]
pub fn map_handle(map: usize) -> u64 {
    (TAG_MAP_HANDLE << TAG_SHIFT) | map as u64
}

/// Splits a map-value address into map, slot and offset.
#[inline]
pub fn split_map_value(addr: u64) -> (usize, u32, u32) {
    let off = offset(addr);
    let map = (off >> (MAP_OFFSET_BITS + MAP_SLOT_BITS)) as usize;
    let slot = ((off >> MAP_OFFSET_BITS) & ((1 << MAP_SLOT_BITS) - 1)) as u32;
    (map, slot, (off & ((1 << MAP_OFFSET_BITS) - 1)) as u32)
}

/// Describes an address for diagnostics.
pub fn describe(addr: u64) -> String {
    match region(addr) {
        Region::Context => format!("context+{}", offset(addr)),
        Region::Packet => format!("packet frame+{}", offset(addr)),
        Region::Stack => format!("stack+{}", offset(addr)),
        Region::MapValue => {
            let (map, slot, off) = split_map_value(addr);
            format!("map {map} value slot {slot}+{off}")
        }
        Region::MapHandle => format!("map {}", offset(addr)),
        Region::None if addr == 0 => "NULL".to_string(),
        Region::None => format!("{addr:#x} (not a pointer)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_value_addresses_round_trip_and_arithmetic_stays_in_the_slot() {
        let a = map_value(7, 123_456, 40);
        assert_eq!(region(a), Region::MapValue);
        assert_eq!(split_map_value(a), (7, 123_456, 40));
        assert_eq!(split_map_value(a + 8), (7, 123_456, 48));
        assert_eq!(describe(a), "map 7 value slot 123456+40");
    }

    #[test]
    fn plain_numbers_are_not_pointers() {
        assert_eq!(region(0), Region::None);
        assert_eq!(region(0x1234), Region::None);
        assert_eq!(region(u64::MAX), Region::None);
        assert_eq!(region(packet(300)), Region::Packet);
        assert_eq!(offset(stack(511)), 511);
    }
}
