//! Reads an ELF object built by `clang -O2 -g -target bpf` (libbpf conventions) into an [`ObjectSpec`]: the programs
//! with their bpf-to-bpf calls linked in and their map references resolved to indices into [`ObjectSpec::maps`], and
//! every map including the `.rodata`/`.data`/`.bss` globals. Pure data: no syscalls.
//!
//! The rules follow libbpf: every global function of an executable section other than `.text` is a program, `.text`
//! holds the sub-programs, relocations of non-code sections (debug info) are ignored, and calls are linked by appending
//! each reachable callee once after the program. The ELF structures are read with the `object` crate rather than
//! `aya_obj::Object::parse`, which rejects sections such as `xdp/acl` and is not hardened against malformed input.
//!
//! With `-g`, clang also writes BTF line info to `.BTF.ext`; every program carries it, moved along with its linked
//! callees, so each slot maps to its C source line ([`ProgramSpec::source_line`]). A `.BTF.ext` that cannot be read
//! fails the whole object with [`ObjectError::BadBtfExt`], as a damaged `.BTF` does.

mod btf;
mod btf_ext;
mod code;
mod core_relo;
mod elf;
mod error;
mod link;
mod maps;
mod spec;

use std::collections::BTreeMap;
use std::path::Path;

pub use error::ObjectError;
pub use spec::*;

use crate::btf::Btf;
use crate::btf_ext::BtfExt;
use crate::code::CodeSection;
use crate::elf::Elf;
use crate::maps::MapTable;

/// The section of sub-programs, whose functions are only reachable by calls.
const TEXT_SECTION: &str = ".text";

/// The longest program, with its linked callees, that the kernel loads (`BPF_COMPLEXITY_LIMIT_INSNS`): longer ones
/// are refused with [`ObjectError::ProgramTooLong`].
pub const MAX_PROGRAM_INSNS: usize = 1 << 20;

/// The most instructions all programs of an object may hold together once linked (each program has its own copy of
/// every callee, as libbpf links them): 16M instructions, 256 MiB. More is refused with
/// [`ObjectError::LinkedTooLarge`] before it is allocated.
pub const MAX_LINKED_INSNS: usize = 1 << 24;

/// The most function copies all programs of an object may hold together once linked (each copy keeps its name for
/// listings): 4M. More is refused with [`ObjectError::LinkedTooLarge`]. With [`MAX_LINKED_INSNS`] this keeps a linked
/// object under about 500 MiB.
pub const MAX_LINKED_FUNCTIONS: usize = 1 << 22;

/// Parses an object from its bytes.
pub fn parse(bytes: &[u8]) -> Result<ObjectSpec, ObjectError> {
    let elf = Elf::parse(bytes)?;
    let btf = elf.section_by_name(".BTF").map(|(_, s)| Btf::parse(s.data));
    let mut lines = Vec::new();
    if let Some((_, ext)) = elf.section_by_name(btf_ext::SECTION) {
        let btf = match &btf {
            Some(Ok(btf)) => btf,
            // Btf::parse fails with ObjectError::Btf, whose message already starts with "btf: ".
            Some(Err(ObjectError::Btf { reason })) => {
                return Err(ObjectError::Btf {
                    reason: reason.clone(),
                })
            }
            Some(Err(e)) => {
                return Err(ObjectError::Btf {
                    reason: e.to_string(),
                })
            }
            None => {
                return Err(ObjectError::Btf {
                    reason: ".BTF.ext without .BTF".into(),
                })
            }
        };
        let ext = BtfExt::parse(ext.data)?;
        core_relo::reject_core_relocations(ext.core_relo, btf)?;
        lines = btf_ext::read_lines(ext.line_info, btf)?;
    }
    let maps = MapTable::collect(&elf, btf.as_ref())?;
    let mut code = BTreeMap::new();
    for (index, section) in elf.sections.iter().enumerate() {
        if section.is_code() && !section.data.is_empty() {
            code.insert(index, CodeSection::read(&elf, index, &maps)?);
        }
    }
    btf_ext::attach_lines(&mut code, lines)?;
    let mut programs = Vec::new();
    let mut linker = link::Linker::new(&code);
    for (&index, section) in &code {
        if section.name == TEXT_SECTION {
            continue;
        }
        for (function, f) in section.functions.iter().enumerate() {
            if f.global {
                programs.push(linker.link(index, function)?);
            }
        }
    }
    if programs.is_empty() {
        return Err(ObjectError::NoPrograms);
    }
    Ok(ObjectSpec {
        programs,
        maps: maps.specs,
        license: license(&elf)?,
    })
}

/// Reads and parses the object at `path`; errors name the file.
pub fn load(path: &Path) -> Result<ObjectSpec, ObjectError> {
    let bytes = std::fs::read(path).map_err(|source| ObjectError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes).map_err(|e| ObjectError::InFile {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// The `license` section up to its NUL; empty when there is none.
fn license(elf: &Elf<'_>) -> Result<String, ObjectError> {
    let Some((_, section)) = elf.section_by_name("license") else {
        return Ok(String::new());
    };
    let end = section
        .data
        .iter()
        .position(|&b| b == 0)
        .ok_or(ObjectError::BadLicense)?;
    let text = std::str::from_utf8(&section.data[..end]).map_err(|_| ObjectError::BadLicense)?;
    Ok(text.to_string())
}
