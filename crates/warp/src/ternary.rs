//! Ternary patterns over key bits, and the conditions of conditional jumps turned into them: an equality is one
//! pattern, a range compare a set of patterns by range-to-prefix expansion, a bit test one pattern per tested bit.

use crate::sym::{Bit, Bits, KeyBit};
use hwxdp_ebpf::JmpCond;
use std::collections::BTreeMap;

/// One TCAM entry's care bits: each listed key bit must have the given value, the others are "don't care".
pub type Pattern = BTreeMap<KeyBit, bool>;

/// An inclusive interval of unsigned values.
pub type Interval = (u64, u64);

/// The patterns of one side of a jump: the side is taken exactly when one of them matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// The side is never taken.
    Never,
    /// The side is always taken.
    Always,
    /// The side is taken when one of these matches.
    When(Vec<Pattern>),
}

impl Side {
    /// How many TCAM entries the side needs as a match (0 for a side decided statically).
    pub fn entries(&self) -> usize {
        match self {
            Side::When(p) => p.len(),
            _ => 0,
        }
    }
}

/// Adds `bit = value` to `pattern`; false when the pattern already demands the opposite.
fn demand(pattern: &mut Pattern, bit: KeyBit, value: bool) -> bool {
    *pattern.entry(bit).or_insert(value) == value
}

/// The pattern under which bits `from..width` of `v` equal those of `value`; `None` if that is impossible.
fn fix_bits(v: &Bits, value: u64, from: u32, width: u32) -> Option<Pattern> {
    let mut p = Pattern::new();
    for i in from..width {
        let want = value >> i & 1 == 1;
        match v.0[i as usize] {
            Bit::Zero if want => return None,
            Bit::One if !want => return None,
            Bit::Key(k) if !demand(&mut p, k, want) => return None,
            _ => {}
        }
    }
    Some(p)
}

/// The prefixes covering `[lo, hi]` in `width`-bit space: (value, number of wildcard low bits).
pub fn prefixes(lo: u64, hi: u64, width: u32) -> Vec<(u64, u32)> {
    let (mut lo, hi) = (lo as u128, hi as u128);
    let mut out = Vec::new();
    while lo <= hi {
        let mut k = 0u32;
        while k < width && lo % (1u128 << (k + 1)) == 0 && lo + (1u128 << (k + 1)) - 1 <= hi {
            k += 1;
        }
        out.push((lo as u64, k));
        lo += 1u128 << k;
    }
    out
}

/// The patterns under which the low `width` bits of `v`, as an unsigned number, fall in one of `intervals`.
pub fn in_intervals(v: &Bits, intervals: &[Interval], width: u32) -> Side {
    let mut out: Vec<Pattern> = Vec::new();
    for &(lo, hi) in intervals {
        for (value, wild) in prefixes(lo, hi, width) {
            if let Some(p) = fix_bits(v, value, wild, width) {
                if p.is_empty() {
                    return Side::Always;
                }
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    if out.is_empty() {
        Side::Never
    } else {
        Side::When(out)
    }
}

/// The largest value of `width` bits.
pub fn max_of(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The unsigned intervals on which `x cond c` holds, for `width`-bit `x` and `c`; `None` for the bit test.
pub fn taken_intervals(cond: JmpCond, c: u64, width: u32) -> Option<Vec<Interval>> {
    let max = max_of(width) as i128;
    let c = (c & max_of(width)) as i128;
    let half = max / 2 + 1;
    let sc = if c >= half { c - max - 1 } else { c };
    let (smin, smax) = (-half, half - 1);
    // Unsigned and signed intervals, the latter mapped onto unsigned ones.
    let u = |lo: i128, hi: i128| -> Vec<(i128, i128)> { vec![(lo, hi)] };
    let s = |lo: i128, hi: i128| -> Vec<(i128, i128)> {
        if lo > hi {
            return vec![];
        }
        let wrap = |x: i128| if x < 0 { x + max + 1 } else { x };
        if lo >= 0 || hi < 0 {
            vec![(wrap(lo), wrap(hi))]
        } else {
            vec![(wrap(lo), max), (0, hi)]
        }
    };
    let list = match cond {
        JmpCond::Eq => u(c, c),
        JmpCond::Ne => vec![(0, c - 1), (c + 1, max)],
        JmpCond::Gt => u(c + 1, max),
        JmpCond::Ge => u(c, max),
        JmpCond::Lt => u(0, c - 1),
        JmpCond::Le => u(0, c),
        JmpCond::Sgt => s(sc + 1, smax),
        JmpCond::Sge => s(sc, smax),
        JmpCond::Slt => s(smin, sc - 1),
        JmpCond::Sle => s(smin, sc),
        JmpCond::Set => return None,
    };
    Some(
        list.into_iter()
            .filter(|(lo, hi)| lo <= hi)
            .map(|(lo, hi)| (lo as u64, hi as u64))
            .collect(),
    )
}

/// The complement of sorted, disjoint `intervals` within `[0, max]`.
pub fn complement(intervals: &[Interval], max: u64) -> Vec<Interval> {
    let mut sorted = intervals.to_vec();
    sorted.sort();
    let mut out = Vec::new();
    let mut next: u128 = 0;
    for (lo, hi) in sorted {
        if (lo as u128) > next {
            out.push((next as u64, lo - 1));
        }
        next = next.max(hi as u128 + 1);
    }
    if next <= max as u128 {
        out.push((next as u64, max));
    }
    out
}

/// The condition `v cond c` (both sides) for a number `v` of key bits, compared in `width` bits.
pub fn compare(v: &Bits, cond: JmpCond, c: u64, width: u32) -> (Side, Side) {
    let Some(taken) = taken_intervals(cond, c, width) else {
        return bit_test(v, c & max_of(width), width);
    };
    let fall = complement(&taken, max_of(width));
    (
        in_intervals(v, &taken, width),
        in_intervals(v, &fall, width),
    )
}

/// `v & c` is non-zero (taken) or zero (fall-through).
fn bit_test(v: &Bits, c: u64, width: u32) -> (Side, Side) {
    let mut all_zero = Pattern::new();
    let mut any_set: Vec<Pattern> = Vec::new();
    let mut zero_possible = true;
    for i in (0..width).filter(|i| c >> i & 1 == 1) {
        match v.0[i as usize] {
            Bit::Zero => {}
            Bit::One => return (Side::Always, Side::Never),
            Bit::Key(k) => {
                zero_possible &= demand(&mut all_zero, k, false);
                let p = Pattern::from([(k, true)]);
                if !any_set.contains(&p) {
                    any_set.push(p);
                }
            }
        }
    }
    if any_set.is_empty() {
        return (Side::Never, Side::Always);
    }
    let fall = if zero_possible {
        Side::When(vec![all_zero])
    } else {
        Side::Never
    };
    (Side::When(any_set), fall)
}

/// The conjunction of patterns `a` and `b`, or `None` when they contradict each other.
pub fn both(a: &Pattern, b: &Pattern) -> Option<Pattern> {
    let mut out = a.clone();
    for (&k, &v) in b {
        if !demand(&mut out, k, v) {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand_to_the_minimal_prefixes() {
        assert_eq!(prefixes(0, 13, 16), vec![(0, 3), (8, 2), (12, 1)]);
        assert_eq!(prefixes(14, 65535, 16).len(), 13);
        assert_eq!(prefixes(0, u64::MAX, 64), vec![(0, 64)]);
    }

    #[test]
    fn a_byte_above_a_constant_needs_only_the_prefixes_inside_the_byte() {
        let v = Bits::packet(23, 1);
        let (taken, fall) = compare(&v, JmpCond::Gt, 5, 64);
        assert_eq!(taken.entries(), 6, "6-7, 8-15, ..., 128-255");
        assert_eq!(fall.entries(), 2, "0-3, 4-5");
    }

    #[test]
    fn equality_is_one_pattern_and_inequality_is_decided_by_constants() {
        let v = Bits::packet(12, 2);
        let (eq, ne) = compare(&v, JmpCond::Eq, 0x0008, 64);
        assert_eq!(eq.entries(), 1);
        assert!(ne.entries() > 1);
        let (eq, ne) = compare(&v, JmpCond::Eq, 0x1_0000, 64);
        assert_eq!((eq, ne), (Side::Never, Side::Always));
    }

    #[test]
    fn signed_compares_wrap_into_unsigned_intervals() {
        let t = taken_intervals(JmpCond::Sgt, (-2i64) as u64, 8).unwrap();
        assert_eq!(t, vec![(255, 255), (0, 127)]);
        let t = taken_intervals(JmpCond::Slt, 0, 8).unwrap();
        assert_eq!(t, vec![(128, 255)]);
    }

    #[test]
    fn bit_tests_match_each_bit_or_all_zero() {
        let v = Bits::packet(0, 1);
        let (taken, fall) = compare(&v, JmpCond::Set, 0x81, 64);
        assert_eq!(taken.entries(), 2);
        assert_eq!(fall.entries(), 1);
    }
}
