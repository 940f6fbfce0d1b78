//! Hostile objects (issue 30) read in process: a damaged `.BTF` named once, overlapping functions refused.

mod common;

use hwxdp_object::{parse, ObjectError};
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian;

/// `bytes` with the first byte of section `name`'s contents flipped.
fn with_section_byte_flipped(bytes: &[u8], name: &str) -> Vec<u8> {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    let sections = header.sections(LittleEndian, bytes).unwrap();
    let (_, sh) = sections
        .section_by_name(LittleEndian, name.as_bytes())
        .unwrap_or_else(|| panic!("{name} exists"));
    let offset = sh.sh_offset(LittleEndian) as usize;
    let mut patched = bytes.to_vec();
    patched[offset] ^= 0xff;
    patched
}

#[test]
fn a_damaged_btf_under_btf_ext_is_named_once() {
    let built = common::compile("calls");
    // The BTF magic is the first two bytes of .BTF; .BTF.ext needs .BTF, so the object is refused.
    let patched = with_section_byte_flipped(&built.bytes, ".BTF");
    let err = parse(&patched).unwrap_err();
    assert!(matches!(err, ObjectError::Btf { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.starts_with("btf: "), "{message}");
    assert!(!message.contains("btf: btf:"), "{message}");
}

/// Section `xdp/multi` of `calls.o` with the size of its first function symbol doubled, so it runs into the next function.
fn with_overlapping_functions(bytes: &[u8]) -> Option<Vec<u8>> {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    let sections = header.sections(LittleEndian, bytes).unwrap();
    let (xdp, _) = sections.section_by_name(LittleEndian, b"xdp/multi")?;
    let (_, symtab) = sections
        .iter()
        .enumerate()
        .find(|(_, s)| s.sh_type(LittleEndian) == object::elf::SHT_SYMTAB)?;
    let start = symtab.sh_offset(LittleEndian) as usize;
    let len = symtab.sh_size(LittleEndian) as usize;
    let mut patched = bytes.to_vec();
    // Elf64_Sym: st_name (4), st_info, st_other, st_shndx (2), st_value (8), st_size (8).
    let mut funcs: Vec<(u64, usize)> = (start..start + len)
        .step_by(24)
        .filter(|&at| bytes[at + 4] & 0xf == 2)
        .filter(|&at| u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]) as usize == xdp.0)
        .map(|at| {
            (
                u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()),
                at,
            )
        })
        .collect();
    funcs.sort();
    let (_, first) = *funcs.first()?;
    let (second_start, _) = *funcs.get(1)?;
    let size = second_start + 8;
    patched[first + 16..first + 24].copy_from_slice(&size.to_le_bytes());
    Some(patched)
}

#[test]
fn overlapping_functions_are_refused_naming_both() {
    let built = common::compile("calls");
    let patched =
        with_overlapping_functions(&built.bytes).expect("calls.o has two xdp/multi functions");
    let err = parse(&patched).unwrap_err();
    assert!(
        matches!(&err, ObjectError::BadFunction { reason, .. } if reason.starts_with("overlaps function ")),
        "{err:?}"
    );
}
