//! BTF line info: every slot of a linked program, callees included, maps to the C source line it came from.

mod common;

use std::ops::RangeInclusive;

use hwxdp_ebpf::{slot_offsets, Insn, CLASS_JMP, JMP_EXIT};
use hwxdp_object::{parse, ObjectError, ObjectSpec, ProgramSpec};
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian;

const EXIT: u8 = CLASS_JMP | JMP_EXIT;

fn source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/calls.c");
    std::fs::read_to_string(path).expect("read calls.c")
}

/// Number (from 1) of the only line of `src` that contains `needle`.
fn line_of(src: &str, needle: &str) -> u32 {
    let found: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(found.len(), 1, "{needle:?} is on lines {found:?}");
    found[0] as u32
}

/// The lines of the definition of function `name` in `src`: from its header to its closing brace.
fn body_of(src: &str, name: &str) -> RangeInclusive<u32> {
    let lines: Vec<&str> = src.lines().collect();
    let header = lines
        .iter()
        .position(|l| !l.starts_with(char::is_whitespace) && l.contains(&format!(" {name}(")))
        .unwrap_or_else(|| panic!("no definition of {name}"));
    let close = header
        + lines[header..]
            .iter()
            .position(|l| *l == "}")
            .expect("closing brace");
    (header as u32 + 1)..=(close as u32 + 1)
}

/// Slot of each instruction of `prog`, plus the end.
fn slots(prog: &ProgramSpec) -> Vec<usize> {
    slot_offsets(&prog.insns)
}

/// The function of `prog` containing instruction `insn`.
fn function_at(prog: &ProgramSpec, insn: usize) -> &str {
    let (_, name) = prog
        .functions
        .iter()
        .filter(|(start, _)| *start <= insn)
        .max_by_key(|(start, _)| *start)
        .expect("a function holds every instruction");
    name
}

fn calls_object() -> ObjectSpec {
    parse(&common::compile("calls").bytes).expect("calls.o parses")
}

#[test]
fn the_exit_of_a_program_is_on_its_return_line() {
    let src = source();
    let spec = calls_object();
    for (program, returns) in [
        ("xdp_second", "return outer(ctx->ingress_ifindex)"),
        ("xdp_frags", "return XDP_PASS;"),
        ("multi_a", "return XDP_TX;"),
        ("multi_b", "return add(ctx->rx_queue_index, 4)"),
    ] {
        let prog = spec.program(Some(program)).unwrap();
        let slots = slots(prog);
        // The program's own exit is its last instruction before the appended callees.
        let exit = prog.own_len - 1;
        assert_eq!(prog.insns[exit].code, EXIT, "{program}");
        let line = prog
            .source_line(slots[exit])
            .unwrap_or_else(|| panic!("{program}: no line for its exit"));
        assert_eq!(line.line, line_of(&src, returns), "{program}: {line:?}");
        assert!(line.file.ends_with("tests/fixtures/calls.c"), "{line:?}");
        // The text is the source line itself.
        let text = src.lines().nth(line.line as usize - 1).unwrap();
        assert_eq!(line.text, text, "{program}");
        assert!(line.column >= 1, "{line:?}");
    }
}

#[test]
fn every_slot_of_a_callee_maps_into_the_callee() {
    let src = source();
    let spec = calls_object();
    for prog in &spec.programs {
        let slots = slots(prog);
        let total = *slots.last().unwrap();
        for (insn, &slot) in slots[..prog.insns.len()].iter().enumerate() {
            let name = function_at(prog, insn);
            let body = body_of(&src, name);
            let slot_lines: Vec<u32> = (slot..slots[insn + 1])
                .map(|s| {
                    prog.source_line(s)
                        .unwrap_or_else(|| panic!("{}: no line for slot {s}", prog.name))
                        .line
                })
                .collect();
            for line in slot_lines {
                assert!(
                    body.contains(&line),
                    "{}: slot {slot} of {name} maps to line {line}, outside {body:?}",
                    prog.name
                );
            }
        }
        assert_eq!(prog.source_line(total), None, "{}: past the end", prog.name);
    }
}

#[test]
fn a_callee_has_the_same_lines_wherever_it_is_linked() {
    let src = source();
    let spec = calls_object();
    let first = spec.program(Some("xdp_calls")).unwrap();
    let second = spec.program(Some("xdp_second")).unwrap();
    let lines_of = |prog: &ProgramSpec, name: &str| -> (usize, Vec<u32>) {
        let slots = slots(prog);
        let index = prog.functions.iter().position(|(_, n)| n == name).unwrap();
        let start = prog.functions[index].0;
        let end = prog
            .functions
            .get(index + 1)
            .map_or(prog.insns.len(), |f| f.0);
        let lines = (slots[start]..slots[end])
            .map(|s| prog.source_line(s).unwrap().line)
            .collect();
        (slots[start], lines)
    };
    let (at_first, outer_first) = lines_of(first, "outer");
    let (at_second, outer_second) = lines_of(second, "outer");
    assert_ne!(at_first, at_second, "outer is placed at different slots");
    assert_eq!(outer_first, outer_second);
    // outer opens with `hits++` as an lddw: both of its slots are on that line, then `return inner(x) ^ 5;`.
    let hits = line_of(&src, "hits++;");
    let ret = line_of(&src, "return inner(x) ^ 5;");
    assert_eq!(outer_second[..2], [hits, hits]);
    assert_eq!(*outer_second.last().unwrap(), ret);
    let (_, inner) = lines_of(second, "inner");
    assert_eq!(
        *inner.last().unwrap(),
        line_of(&src, "return x * 3 + 1;"),
        "inner's exit"
    );
}

#[test]
fn programs_built_by_hand_have_no_line_info() {
    let exit = Insn::new(EXIT, 0, 0, 0, 0);
    let prog = ProgramSpec::standalone("p", "xdp", vec![exit]);
    assert!(prog.lines.is_empty());
    assert_eq!(prog.source_line(0), None);
}

/// The header of section `name` in `bytes`: (offset of its header, its file offset, its size, its name's offset).
fn section_header(bytes: &[u8], name: &str) -> (usize, usize, usize, usize) {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    let sections = header.sections(LittleEndian, bytes).unwrap();
    let (index, sh) = sections
        .section_by_name(LittleEndian, name.as_bytes())
        .unwrap_or_else(|| panic!("{name} exists"));
    let shoff = header.e_shoff.get(LittleEndian) as usize;
    let shentsize = usize::from(header.e_shentsize.get(LittleEndian));
    (
        shoff + index.0 * shentsize,
        sh.sh_offset(LittleEndian) as usize,
        sh.sh_size(LittleEndian) as usize,
        sh.sh_name(LittleEndian) as usize,
    )
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// `bytes` with the `sh_size` of `.BTF.ext` set to `size`.
fn with_btf_ext_size(bytes: &[u8], size: usize) -> Vec<u8> {
    let (header, _, _, _) = section_header(bytes, ".BTF.ext");
    let mut patched = bytes.to_vec();
    // Elf64_Shdr: sh_name, sh_type (4 bytes each), sh_flags, sh_addr, sh_offset (8 each), then sh_size.
    patched[header + 32..header + 40].copy_from_slice(&(size as u64).to_le_bytes());
    patched
}

#[test]
fn a_truncated_btf_ext_is_refused_at_its_line_info() {
    let built = common::compile("calls");
    let (_, offset, size, _) = section_header(&built.bytes, ".BTF.ext");
    let ext = &built.bytes[offset..offset + size];
    let hdr_len = u32_at(ext, 4) as usize;
    let (line_off, line_len) = (u32_at(ext, 16) as usize, u32_at(ext, 20) as usize);
    let line_info = hdr_len + line_off;
    assert!(line_len > 0 && line_info + line_len <= size);
    // One byte short of the end of the line info.
    let err = parse(&with_btf_ext_size(&built.bytes, line_info + line_len - 1)).unwrap_err();
    assert!(
        matches!(&err, ObjectError::BadBtfExt { offset, reason } if *offset == line_info && reason.starts_with("line info of")),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with(&format!(
            "section .BTF.ext, byte offset {line_info}: line info of {line_len} bytes runs past"
        )),
        "{err}"
    );
}

#[test]
fn every_truncation_of_btf_ext_is_a_btf_ext_error() {
    let built = common::compile("calls");
    let (_, _, size, _) = section_header(&built.bytes, ".BTF.ext");
    for len in 0..size {
        match parse(&with_btf_ext_size(&built.bytes, len)) {
            Err(ObjectError::BadBtfExt { offset, .. }) => {
                assert!(offset <= size, "{len}: {offset}")
            }
            other => panic!(".BTF.ext cut to {len} of {size} bytes: {other:?}"),
        }
    }
}

#[test]
fn a_line_info_record_count_past_the_end_names_its_block() {
    let built = common::compile("calls");
    let (_, offset, size, _) = section_header(&built.bytes, ".BTF.ext");
    let ext = &built.bytes[offset..offset + size];
    let hdr_len = u32_at(ext, 4) as usize;
    let line_info = hdr_len + u32_at(ext, 16) as usize;
    // After the record size comes the first section's {sec_name_off, num_info}.
    let first_block = line_info + 4;
    let mut patched = built.bytes.clone();
    let at = offset + first_block + 4;
    patched[at..at + 4].copy_from_slice(&0x0100_0000u32.to_le_bytes());
    let err = parse(&patched).unwrap_err();
    assert!(
        matches!(&err, ObjectError::BadBtfExt { offset, reason } if *offset == first_block && reason.contains("run past the end")),
        "{err:?}"
    );
}

#[test]
fn objects_without_btf_ext_have_no_line_info() {
    let built = common::compile("calls");
    let (_, _, _, name) = section_header(&built.bytes, ".BTF.ext");
    let header = object::elf::FileHeader64::<LittleEndian>::parse(&built.bytes[..]).unwrap();
    let shstrndx = usize::from(header.e_shstrndx.get(LittleEndian));
    let sections = header.sections(LittleEndian, &built.bytes[..]).unwrap();
    let names = sections
        .section(object::SectionIndex(shstrndx))
        .unwrap()
        .sh_offset(LittleEndian) as usize;
    let mut patched = built.bytes.clone();
    // Rename `.BTF.ext` to `.XTF.ext`, a section hwxdp does not know.
    assert_eq!(&patched[names + name..names + name + 9], b".BTF.ext\0");
    patched[names + name + 1] = b'X';
    let spec = parse(&patched).expect("calls.o without .BTF.ext parses");
    for prog in &spec.programs {
        assert!(prog.lines.is_empty(), "{}", prog.name);
        assert_eq!(prog.source_line(0), None);
    }
    assert_eq!(spec.programs.len(), calls_object().programs.len());
}
