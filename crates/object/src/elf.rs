//! The parts of the ELF file hwxdp needs, copied out of the raw headers with every offset checked by `object`.

use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, Rel, SectionHeader, Sym};
use object::LittleEndian;

use crate::ObjectError;

/// One ELF section.
pub(crate) struct Section<'a> {
    /// Section name, e.g. `xdp/acl` or `.rodata.str1.1`.
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// File contents; empty for `SHT_NOBITS`.
    pub data: &'a [u8],
    /// `sh_size`, which for `SHT_NOBITS` is larger than `data`.
    pub size: u64,
    /// Relocations from the `SHT_REL` section that applies to this one, in file order.
    pub relocations: Vec<Relocation>,
}

impl Section<'_> {
    /// True for sections holding instructions.
    pub fn is_code(&self) -> bool {
        self.kind == elf::SHT_PROGBITS && self.flags & u64::from(elf::SHF_EXECINSTR) != 0
    }
}

/// One ELF symbol.
pub(crate) struct Symbol {
    /// Name; empty for section symbols.
    pub name: String,
    /// `STT_*`.
    pub kind: u8,
    /// `STB_*`.
    pub bind: u8,
    /// Defining section, `None` for undefined, absolute and common symbols.
    pub section: Option<usize>,
    /// Offset within the section.
    pub value: u64,
    /// Size in bytes.
    pub size: u64,
}

/// One `Elf64_Rel` entry.
#[derive(Clone, Copy)]
pub(crate) struct Relocation {
    /// Byte offset in the target section.
    pub offset: u64,
    /// Symbol index.
    pub symbol: usize,
    /// `r_type`, e.g. `R_BPF_64_64`.
    pub kind: u32,
}

/// The sections (indexed by ELF section index) and symbols (indexed by symbol index) of an object.
pub(crate) struct Elf<'a> {
    /// All sections, index 0 being the null section.
    pub sections: Vec<Section<'a>>,
    /// All symbols, index 0 being the null symbol.
    pub symbols: Vec<Symbol>,
    /// Indices into `symbols` of the symbols defined in each section (by section index), in symbol order.
    by_section: Vec<Vec<usize>>,
}

impl<'a> Elf<'a> {
    /// Reads the section and symbol tables of a 64-bit little-endian BPF ELF file.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ObjectError> {
        let not_elf = |e: object::Error| ObjectError::NotElf {
            reason: e.to_string(),
        };
        let header = FileHeader64::<LittleEndian>::parse(bytes).map_err(not_elf)?;
        if !header.is_class_64() || !header.is_little_endian() {
            return Err(ObjectError::UnsupportedElf);
        }
        let endian = LittleEndian;
        let machine = header.e_machine(endian);
        if machine != elf::EM_BPF {
            return Err(ObjectError::NotBpf { machine });
        }
        let table = header.sections(endian, bytes).map_err(not_elf)?;
        let mut sections = Vec::with_capacity(table.len());
        for (index, sh) in table.enumerate() {
            let bad = |e: object::Error| ObjectError::BadSection {
                index: index.0,
                reason: e.to_string(),
            };
            let name = table.section_name(endian, sh).map_err(bad)?;
            sections.push(Section {
                name: String::from_utf8_lossy(name).into_owned(),
                kind: sh.sh_type(endian),
                flags: sh.sh_flags(endian),
                data: sh.data(endian, bytes).map_err(bad)?,
                size: sh.sh_size(endian),
                relocations: Vec::new(),
            });
        }
        for (index, sh) in table.enumerate() {
            match sh.sh_type(endian) {
                elf::SHT_REL => {}
                elf::SHT_RELA => {
                    return Err(ObjectError::BadSection {
                        index: index.0,
                        reason: "rela relocations are not produced for bpf and are not supported"
                            .into(),
                    })
                }
                _ => continue,
            }
            let bad = |e: object::Error| ObjectError::BadSection {
                index: index.0,
                reason: e.to_string(),
            };
            let Some((rels, _symtab)) = sh.rel(endian, bytes).map_err(bad)? else {
                continue;
            };
            let target = sh.sh_info(endian) as usize;
            let Some(section) = sections.get_mut(target) else {
                return Err(ObjectError::BadSection {
                    index: index.0,
                    reason: format!("relocations for missing section {target}"),
                });
            };
            section.relocations.extend(rels.iter().map(|r| Relocation {
                offset: r.r_offset(endian),
                symbol: r.r_sym(endian) as usize,
                kind: r.r_type(endian),
            }));
        }
        let bad_symtab = |e: object::Error| ObjectError::BadSymbolTable {
            reason: e.to_string(),
        };
        let symtab = table
            .symbols(endian, bytes, elf::SHT_SYMTAB)
            .map_err(bad_symtab)?;
        let mut symbols = Vec::with_capacity(symtab.len());
        for sym in symtab.symbols() {
            let name = sym.name(endian, symtab.strings()).map_err(bad_symtab)?;
            let shndx = sym.st_shndx(endian);
            let defined = shndx != elf::SHN_UNDEF && shndx < elf::SHN_LORESERVE;
            symbols.push(Symbol {
                name: String::from_utf8_lossy(name).into_owned(),
                kind: sym.st_type(),
                bind: sym.st_bind(),
                section: defined.then_some(usize::from(shndx)),
                value: sym.st_value(endian),
                size: sym.st_size(endian),
            });
        }
        let mut by_section = vec![Vec::new(); sections.len()];
        for (index, sym) in symbols.iter().enumerate() {
            if let Some(list) = sym.section.and_then(|s| by_section.get_mut(s)) {
                list.push(index);
            }
        }
        Ok(Elf {
            sections,
            symbols,
            by_section,
        })
    }

    /// The symbols defined in section `index`, in symbol order.
    pub fn symbols_in(&self, index: usize) -> impl Iterator<Item = &Symbol> {
        self.by_section
            .get(index)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&i| &self.symbols[i])
    }

    /// The first section called `name`, with its index.
    pub fn section_by_name(&self, name: &str) -> Option<(usize, &Section<'a>)> {
        self.sections
            .iter()
            .enumerate()
            .find(|(_, s)| s.name == name)
    }

    /// A printable name for a symbol: its own name, or its section's for section symbols.
    pub fn symbol_name(&self, index: usize) -> String {
        match self.symbols.get(index) {
            Some(sym) if !sym.name.is_empty() => sym.name.clone(),
            Some(Symbol {
                section: Some(s), ..
            }) => self
                .sections
                .get(*s)
                .map_or_else(|| format!("symbol {index}"), |sec| sec.name.clone()),
            _ => format!("symbol {index}"),
        }
    }
}
