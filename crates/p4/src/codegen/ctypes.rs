//! C types for P4 types, the struct definitions of headers, stacks and structs, and C literals.

use crate::ir::{Checked, Ty};
use std::collections::HashSet;
use std::fmt::Write;

/// The C keywords a P4 name could collide with.
const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "u8", "u16", "u32", "u64", "u128", "s8",
    "s16", "s32", "s64", "s128",
];

/// A P4 name as a C identifier: C keywords get a trailing underscore.
pub fn ident(name: &str) -> String {
    if C_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The number of bits of the C integer type that holds a `width`-bit value.
pub fn c_bits(width: u32) -> u32 {
    match width {
        0..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        33..=64 => 64,
        _ => 128,
    }
}

/// The unsigned C type holding a `width`-bit value.
pub fn c_uint(width: u32) -> String {
    format!("u{}", c_bits(width))
}

/// The signed C type holding a `width`-bit value.
pub fn c_sint(width: u32) -> String {
    format!("s{}", c_bits(width))
}

/// The C type of a value of `ty`.
pub fn c_type(program: &Checked, ty: &Ty) -> String {
    match ty {
        Ty::Bool => "u8".into(),
        Ty::Bit(w) => c_uint(*w),
        Ty::Int(w) => c_sint(*w),
        Ty::InfInt => "s64".into(),
        Ty::Enum(e) => match program.enums[*e].repr_width {
            Some(w) => c_uint(w),
            None => "u32".into(),
        },
        Ty::Error | Ty::Void => "u32".into(),
        Ty::Header(h) => format!("struct hdr_{}", ident(&program.headers[*h].name)),
        Ty::Struct(s) => format!("struct st_{}", ident(&program.structs[*s].name)),
        Ty::Stack { elem, size } => {
            format!("struct stk_{}_{size}", ident(&program.headers[*elem].name))
        }
    }
}

/// A C literal of an unsigned `width`-bit value.
pub fn c_const(value: u128, width: u32) -> String {
    let bits = c_bits(width);
    let value = value & mask(width);
    if bits == 128 && value > u64::MAX as u128 {
        format!(
            "(((u128)0x{:x}ULL << 64) | (u128)0x{:x}ULL)",
            value >> 64,
            value as u64
        )
    } else {
        format!("((u{bits})0x{value:x}ULL)")
    }
}

/// All ones in the low `width` bits.
pub fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The value a location kept in network order holds for the number `value`: its `width / 8` big-endian bytes read
/// as a little-endian integer (the byte order of every machine hwxdp runs on).
pub fn raw_const(value: u128, width: u32) -> String {
    let n = width.div_ceil(8);
    let mut raw = 0u128;
    for i in 0..n {
        let byte = (value >> (8 * (n - 1 - i))) & 0xff;
        raw |= byte << (8 * i);
    }
    c_const(raw, c_bits(width))
}

/// The struct definitions every generated program needs: headers (with their validity and where they were parsed),
/// header stacks, and structs in an order where each is defined before it is used.
pub fn type_defs(program: &Checked) -> String {
    let mut out = String::new();
    for h in &program.headers {
        let _ = writeln!(out, "struct hdr_{} {{", ident(&h.name));
        for f in &h.fields {
            let _ = writeln!(out, "    {} {};", c_type(program, &f.ty), ident(&f.name));
        }
        // hwxdp_off is one more than the byte offset the header was parsed at, 0 when it was not parsed.
        out.push_str("    u8 hwxdp_valid;\n    u32 hwxdp_off;\n};\n");
    }
    let mut stacks = HashSet::new();
    let mut done = HashSet::new();
    for s in 0..program.structs.len() {
        struct_def(program, s, &mut done, &mut stacks, &mut out);
    }
    out
}

fn struct_def(
    program: &Checked,
    s: usize,
    done: &mut HashSet<usize>,
    stacks: &mut HashSet<(usize, u32)>,
    out: &mut String,
) {
    if !done.insert(s) {
        return;
    }
    for f in &program.structs[s].fields {
        match &f.ty {
            Ty::Struct(inner) => struct_def(program, *inner, done, stacks, out),
            Ty::Stack { elem, size } if stacks.insert((*elem, *size)) => {
                let name = ident(&program.headers[*elem].name);
                let _ = writeln!(
                    out,
                    "struct stk_{name}_{size} {{\n    struct hdr_{name} e[{size}];\n    u32 next;\n}};"
                );
            }
            _ => {}
        }
    }
    let _ = writeln!(out, "struct st_{} {{", ident(&program.structs[s].name));
    for f in &program.structs[s].fields {
        let _ = writeln!(out, "    {} {};", c_type(program, &f.ty), ident(&f.name));
    }
    if program.structs[s].fields.is_empty() {
        out.push_str("    u8 hwxdp_empty;\n");
    }
    out.push_str("};\n");
}

/// Fixed definitions at the top of every generated program: integer types, byte-order conversions of partial
/// widths, and the checksum externs of the XDP model.
pub const PRELUDE: &str = r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned __int128 u128;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef __int128 s128;

/* Network-order bytes held in the low bytes of an integer (n of them) to their number, and back. */
static __always_inline u16 hwxdp_ntoh16(u16 v, int n) { return __builtin_bswap16(v) >> (16 - 8 * n); }
static __always_inline u32 hwxdp_ntoh32(u32 v, int n) { return __builtin_bswap32(v) >> (32 - 8 * n); }
static __always_inline u64 hwxdp_ntoh64(u64 v, int n) { return __builtin_bswap64(v) >> (64 - 8 * n); }
static __always_inline u128 hwxdp_bswap128(u128 v)
{
    return ((u128)__builtin_bswap64((u64)v) << 64) | __builtin_bswap64((u64)(v >> 64));
}
static __always_inline u128 hwxdp_ntoh128(u128 v, int n) { return hwxdp_bswap128(v) >> (128 - 8 * n); }
static __always_inline u16 hwxdp_hton16(u16 v, int n) { return __builtin_bswap16(v << (16 - 8 * n)); }
static __always_inline u32 hwxdp_hton32(u32 v, int n) { return __builtin_bswap32(v << (32 - 8 * n)); }
static __always_inline u64 hwxdp_hton64(u64 v, int n) { return __builtin_bswap64(v << (64 - 8 * n)); }
static __always_inline u128 hwxdp_hton128(u128 v, int n) { return hwxdp_bswap128(v << (128 - 8 * n)); }

static __always_inline u16 hwxdp_csum_fold(u32 s)
{
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (u16)~s;
}
/* RFC 1624: HC' = ~(~HC + ~m + m'). */
static __always_inline u16 csum_replace2(u16 csum, u16 old, u16 new_value)
{
    return hwxdp_csum_fold((u16)~csum + (u16)~old + (u32)new_value);
}
static __always_inline u16 csum_replace4(u16 csum, u32 old, u32 new_value)
{
    return hwxdp_csum_fold((u16)~csum + (u16)~(old >> 16) + (u16)~old + (new_value >> 16) + (new_value & 0xffff));
}
static __always_inline u16 ebpf_ipv4_checksum(u8 version, u8 ihl, u8 diffserv, u16 total_len, u16 id, u8 flags,
                                              u16 frag, u8 ttl, u8 proto, u32 src, u32 dst)
{
    u32 s = ((u32)version << 12 | (u32)ihl << 8 | diffserv) + total_len + id + ((u32)flags << 13 | frag) +
            ((u32)ttl << 8 | proto) + (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff);
    return hwxdp_csum_fold(s);
}
"#;
