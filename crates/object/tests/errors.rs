//! Every refusal names what is at fault.

mod common;

use std::path::Path;

use hwxdp_object::{load, parse, ObjectError};
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian;

fn error_of(fixture: &str) -> ObjectError {
    match parse(&common::compile(fixture).bytes) {
        Ok(spec) => panic!("{fixture} parsed: {spec:?}"),
        Err(e) => e,
    }
}

#[test]
fn garbage_is_not_elf() {
    let err = parse(b"\x7fELF garbage that is far too short").unwrap_err();
    assert!(matches!(err, ObjectError::NotElf { .. }), "{err}");
    assert!(matches!(
        parse(&[]).unwrap_err(),
        ObjectError::NotElf { .. }
    ));
}

#[test]
fn host_objects_are_not_bpf() {
    let host = common::compile_with("host", &[]);
    let err = parse(&host.bytes).unwrap_err();
    assert!(
        matches!(err, ObjectError::NotBpf { machine } if machine != 247),
        "{err}"
    );
    assert!(err.to_string().contains("expected 247"), "{err}");
}

#[test]
fn objects_without_programs_are_refused() {
    assert!(matches!(error_of("noprog"), ObjectError::NoPrograms));
}

#[test]
fn externs_are_unknown_symbols() {
    let err = error_of("extern");
    assert!(
        matches!(&err, ObjectError::UnknownSymbol { section, insn: 0, symbol } if section == "xdp" && symbol == "CONFIG_HZ"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "section xdp, instruction 0: relocation against unknown symbol CONFIG_HZ"
    );
}

#[test]
fn core_relocations_are_refused_with_their_instruction() {
    let err = error_of("core");
    // `info->len` is the load at slot 6.
    assert!(
        matches!(&err, ObjectError::CoreRelocation { section, insn: 6, kind, type_name } if section == "xdp" && kind == "field_byte_offset" && type_name == "pkt_info"),
        "{err:?}"
    );
    // One line that says what to do about it: vmlinux.h marks every type preserve_access_index unless told not to.
    let message = err.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(
        message.contains("on pkt_info") && message.contains("-DBPF_NO_PRESERVE_ACCESS_INDEX"),
        "{message}"
    );
}

#[test]
fn unreadable_map_definitions_name_the_map() {
    let err = error_of("badmap");
    assert!(
        matches!(&err, ObjectError::BadMap { map, .. } if map == "tiny"),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("map tiny: "), "{err}");
}

/// Rewrites the type of the first relocation of section `.relxdp` in maps.o.
fn with_first_xdp_relocation_type(bytes: &[u8], kind: u32) -> Vec<u8> {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    let sections = header.sections(LittleEndian, bytes).unwrap();
    let (_, rel) = sections
        .section_by_name(LittleEndian, b".relxdp")
        .expect(".relxdp exists");
    let offset = rel.sh_offset(LittleEndian) as usize;
    let mut patched = bytes.to_vec();
    // Elf64_Rel is r_offset then r_info, whose low 32 bits are the type.
    patched[offset + 8..offset + 12].copy_from_slice(&kind.to_le_bytes());
    patched
}

#[test]
fn unsupported_relocation_types_are_named() {
    let built = common::compile("maps");
    let patched = with_first_xdp_relocation_type(&built.bytes, 3);
    let err = parse(&patched).unwrap_err();
    assert!(
        matches!(&err, ObjectError::UnsupportedRelocation { section, insn: 2, kind: 3 } if section == "xdp"),
        "{err:?}"
    );
}

#[test]
fn load_reads_files_and_names_them_in_errors() {
    let built = common::compile("calls");
    let spec = load(&built.path).expect("calls.o loads");
    assert_eq!(spec.programs.len(), 6);
    let missing = Path::new("/nonexistent/hwxdp/prog.o");
    let err = load(missing).unwrap_err();
    assert!(matches!(err, ObjectError::Io { .. }));
    assert!(
        err.to_string().contains("/nonexistent/hwxdp/prog.o"),
        "{err}"
    );
    let noprog = common::compile("noprog");
    let err = load(&noprog.path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: no programs in object", noprog.path.display())
    );
}
