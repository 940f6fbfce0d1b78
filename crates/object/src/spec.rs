//! The parsed form of an object.

use hwxdp_ebpf::Insn;

/// Everything hwxdp needs from one ELF object.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectSpec {
    /// Programs in section order.
    pub programs: Vec<ProgramSpec>,
    /// Maps, user-defined ones first in symbol order, then the global-data maps.
    pub maps: Vec<MapSpec>,
    /// Content of the `license` section, without the trailing NUL.
    pub license: String,
}

/// One program, ready to run.
///
/// In `insns`, every map reference is resolved to an index into [`ObjectSpec::maps`]:
/// - `lddw rX, map` has `src == PSEUDO_MAP_FD` and `imm == map index`;
/// - `lddw rX, &global + off` has `src == PSEUDO_MAP_VALUE`, `imm & 0xffff_ffff == map index` and `imm >> 32 == off`.
///
/// bpf-to-bpf calls (`src == PSEUDO_CALL`) are linked: the callees are appended after the program's own code, as libbpf
/// does, and each call's `imm` is the slot offset to the callee relative to the slot after the call.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramSpec {
    /// The function name (the symbol), e.g. `xdp_prog`.
    pub name: String,
    /// The ELF section, e.g. `xdp` or `xdp/acl`.
    pub section: String,
    /// Instructions, with callees appended.
    pub insns: Vec<Insn>,
    /// Number of instructions that belong to the program itself (the rest are linked callees).
    pub own_len: usize,
    /// Function symbols by starting instruction index within `insns` (the program itself at 0), for listings.
    pub functions: Vec<(usize, String)>,
    /// The C source lines of the program and its linked callees, from BTF line info, by increasing slot (the slot
    /// numbering of the linked program, as `hwxdp disasm` prints it: an `lddw` takes two). Empty when the object has
    /// no `.BTF.ext` (assembled and hand-written programs). Look slots up with [`ProgramSpec::source_line`]; code that
    /// rewrites `insns` must rebuild or clear it.
    pub lines: Vec<LineSpan>,
}

/// A run of slots of a linked program that come from one C source line.
///
/// A span starts at a BTF line info record and ends at the next record of the same function or at the end of the
/// function, so no line reaches into the next function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// First slot of the span.
    pub start: usize,
    /// One past the last slot.
    pub end: usize,
    /// The source line in effect over the span.
    pub source: SourceLine,
}

/// A C source line, as BTF line info records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    /// The source file as the compiler named it (the path given to clang, or the header's path for inlined code).
    pub file: String,
    /// Line number, from 1; 0 when the compiler attributed the code to no line.
    pub line: u32,
    /// Column, from 1; 0 when unknown (clang gives a function's opening line column 0). BTF has 10 bits for it, so
    /// columns past 1023 are not reliable.
    pub column: u32,
    /// The text of the whole line as BTF stores it (leading whitespace kept, no newline); bytes that are not UTF-8
    /// are replaced with U+FFFD.
    pub text: String,
}

/// What a map holds, as the kernel sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    /// The symbol name for maps, or the section name (`.rodata`, `.data`, `.bss`, `.rodata.str1.1`, ...) for globals.
    pub name: String,
    /// `enum bpf_map_type` value (e.g. 1 for HASH, 2 for ARRAY).
    pub map_type: u32,
    /// Key size in bytes.
    pub key_size: u32,
    /// Value size in bytes.
    pub value_size: u32,
    /// Maximum number of entries.
    pub max_entries: u32,
    /// `map_flags` (e.g. `BPF_F_NO_PREALLOC`, `BPF_F_RDONLY_PROG`).
    pub map_flags: u32,
    /// Where the map came from.
    pub kind: MapKind,
    /// Initial contents of the value at key 0 for global-data maps (`.bss` is all zeros), `None` otherwise.
    pub initial_value: Option<Vec<u8>>,
    /// For ARRAY_OF_MAPS and HASH_OF_MAPS: the inner map template and the inner maps the definition puts in it.
    pub outer: Option<Box<OuterMap>>,
}

/// What an outer map (ARRAY_OF_MAPS, HASH_OF_MAPS) of a BTF definition says about its inner maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OuterMap {
    /// The inner map template of `__array(values, struct ...)`: every inner map must match it (type, key and value
    /// sizes, flags; max_entries too unless the template has `BPF_F_INNER_MAP`).
    pub template: MapSpec,
    /// The `.values = { [i] = &inner }` initializers: (index in the outer map, index of the inner map in
    /// [`ObjectSpec::maps`]), as libbpf puts them in after loading.
    pub init: Vec<(u32, usize)>,
}

/// Where a map came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// Declared in `SEC(".maps")` with BTF.
    BtfDefined,
    /// Declared in the legacy `SEC("maps")` with `struct bpf_map_def`.
    Legacy,
    /// A global-data section turned into a single-entry array map.
    Global,
}

impl MapSpec {
    /// A map declared in `SEC(".maps")` with no flags and no initial value: what tests and tools build by hand.
    pub fn new(
        name: &str,
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
    ) -> Self {
        MapSpec {
            name: name.to_string(),
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags: 0,
            kind: MapKind::BtfDefined,
            initial_value: None,
            outer: None,
        }
    }

    /// The same map with `map_flags` set.
    pub fn with_flags(self, map_flags: u32) -> Self {
        MapSpec { map_flags, ..self }
    }
}

impl ProgramSpec {
    /// A program of one function, `name`, in section `section`, with no calls linked in: hand-written and decoded
    /// programs (tests, the conformance plugin).
    pub fn standalone(name: &str, section: &str, insns: Vec<Insn>) -> ProgramSpec {
        ProgramSpec {
            name: name.into(),
            section: section.into(),
            own_len: insns.len(),
            insns,
            functions: vec![(0, name.into())],
            lines: Vec::new(),
        }
    }

    /// The source line in effect at `slot` of the linked program, if line info covers it.
    pub fn source_line(&self, slot: usize) -> Option<&SourceLine> {
        let after = self.lines.partition_point(|span| span.start <= slot);
        let span = self.lines.get(after.checked_sub(1)?)?;
        (slot < span.end).then_some(&span.source)
    }
}

impl ObjectSpec {
    /// An object holding just `program`, without maps.
    pub fn single(program: ProgramSpec) -> ObjectSpec {
        ObjectSpec {
            programs: vec![program],
            maps: Vec::new(),
            license: "GPL".into(),
        }
    }

    /// Finds a program by function name or section name; with `None`, the only program of the object.
    pub fn program(&self, name: Option<&str>) -> Option<&ProgramSpec> {
        match name {
            Some(n) => self
                .programs
                .iter()
                .find(|p| p.name == n)
                .or_else(|| self.programs.iter().find(|p| p.section == n)),
            None if self.programs.len() == 1 => self.programs.first(),
            None => None,
        }
    }

    /// Index of the map called `name`.
    pub fn map_index(&self, name: &str) -> Option<usize> {
        self.maps.iter().position(|m| m.name == name)
    }
}
