//! Why an object could not be read.

use std::path::PathBuf;

use hwxdp_ebpf::DecodeError;
use thiserror::Error;

/// Everything that can go wrong while reading an object. Messages name the section, symbol, map or instruction (slot
/// index within its ELF section, as `llvm-objdump -d` numbers them) at fault.
#[derive(Debug, Error)]
pub enum ObjectError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An error in a file read by [`crate::load`].
    #[error("{path}: {source}")]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: Box<ObjectError>,
    },
    /// The bytes are not a readable ELF file.
    #[error("not an elf object: {reason}")]
    NotElf {
        /// What the ELF reader reported.
        reason: String,
    },
    /// An ELF file for another machine.
    #[error("not a bpf object: e_machine is {machine}, expected 247")]
    NotBpf {
        /// The `e_machine` field.
        machine: u16,
    },
    /// A 32-bit or big-endian ELF file.
    #[error("unsupported elf object: only 64-bit little-endian bpf is supported")]
    UnsupportedElf,
    /// A section header, name or content that cannot be read.
    #[error("section {index}: {reason}")]
    BadSection {
        /// ELF section index.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The symbol table cannot be read.
    #[error("symbol table: {reason}")]
    BadSymbolTable {
        /// What is wrong.
        reason: String,
    },
    /// No program section with a function in it.
    #[error("no programs in object")]
    NoPrograms,
    /// The `license` section is not a NUL-terminated UTF-8 string.
    #[error("license section is not a nul-terminated string")]
    BadLicense,
    /// The code of a section does not decode.
    #[error("section {section}: {source}")]
    Decode {
        /// The section name.
        section: String,
        /// The decoding error.
        #[source]
        source: DecodeError,
    },
    /// A function symbol that does not cover whole instructions of its section.
    #[error("section {section}: function {function}: {reason}")]
    BadFunction {
        /// The section name.
        section: String,
        /// The symbol name.
        function: String,
        /// What is wrong.
        reason: String,
    },
    /// A relocation that is not on an instruction boundary.
    #[error("section {section}: relocation at byte offset {offset} is not at an instruction")]
    MisplacedRelocation {
        /// The section name.
        section: String,
        /// Byte offset of the relocation.
        offset: u64,
    },
    /// A relocation against an undefined or missing symbol (externs, `__ksym`, `__kconfig`).
    #[error("section {section}, instruction {insn}: relocation against unknown symbol {symbol}")]
    UnknownSymbol {
        /// The section name.
        section: String,
        /// Slot of the instruction.
        insn: usize,
        /// The symbol name, or its index if it has none.
        symbol: String,
    },
    /// A relocation against a symbol in a section that holds no maps, global data or code.
    #[error("section {section}, instruction {insn}: relocation against {symbol} in section {target}, which is not a map, global data or code")]
    BadRelocationTarget {
        /// The section name.
        section: String,
        /// Slot of the instruction.
        insn: usize,
        /// The symbol name.
        symbol: String,
        /// The section the symbol lives in.
        target: String,
    },
    /// A relocation type hwxdp does not apply.
    #[error("section {section}, instruction {insn}: unsupported relocation type {kind}")]
    UnsupportedRelocation {
        /// The section name.
        section: String,
        /// Slot of the instruction (or byte offset / 8 in a data section).
        insn: usize,
        /// The ELF `r_type`.
        kind: u32,
    },
    /// An instruction whose relocation or call target is inconsistent.
    #[error("section {section}, instruction {insn}: {reason}")]
    BadInstruction {
        /// The section name.
        section: String,
        /// Slot of the instruction.
        insn: usize,
        /// What is wrong.
        reason: String,
    },
    /// A program whose code with its linked callees is longer than the kernel loads.
    #[error("program {program}: {linked} linked instructions with its callees, over the kernel's limit of {limit} per program")]
    ProgramTooLong {
        /// The program (function) name.
        program: String,
        /// Its instructions with the callees linked so far.
        linked: usize,
        /// [`crate::MAX_PROGRAM_INSNS`].
        limit: usize,
    },
    /// The programs together, each with its own copy of its callees, exceed the linked size hwxdp holds.
    #[error("program {program}: the object's programs reach {linked} linked {what} together (each holds its own copy of its callees), over the limit of {limit}")]
    LinkedTooLarge {
        /// The program whose linking crossed the limit.
        program: String,
        /// `instructions` or `functions`.
        what: &'static str,
        /// Linked instructions or function copies of all programs so far.
        linked: usize,
        /// [`crate::MAX_LINKED_INSNS`] or [`crate::MAX_LINKED_FUNCTIONS`].
        limit: usize,
    },
    /// A map definition that cannot be read.
    #[error("map {map}: {reason}")]
    BadMap {
        /// The map symbol or section name.
        map: String,
        /// What is wrong.
        reason: String,
    },
    /// `.BTF` or `.BTF.ext` cannot be read.
    #[error("btf: {reason}")]
    Btf {
        /// What is wrong.
        reason: String,
    },
    /// `.BTF.ext` cannot be read: its header, a block it points to, or a record (a line info record whose strings are
    /// not in `.BTF` or whose instruction offset is not an instruction of its section).
    #[error("section .BTF.ext, byte offset {offset}: {reason}")]
    BadBtfExt {
        /// Byte offset within `.BTF.ext` of the header field, block or record at fault.
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// A CO-RE relocation, which only a loader with the running kernel's BTF can resolve.
    #[error("section {section}, instruction {insn}: co-re relocation {kind} on {type_name} needs kernel btf, which hwxdp does not use (build without preserve_access_index: for vmlinux.h, -DBPF_NO_PRESERVE_ACCESS_INDEX)")]
    CoreRelocation {
        /// The section name.
        section: String,
        /// Slot of the instruction.
        insn: usize,
        /// The relocation kind, e.g. `field_byte_offset`.
        kind: String,
        /// The type the relocation is against, e.g. `struct iphdr`.
        type_name: String,
    },
}
