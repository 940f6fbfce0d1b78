//! `.BTF.ext`: its header, and the line info records that give each instruction the C source line it came from.
//!
//! The layout is the kernel's (Documentation/bpf/btf.rst, "BTF.ext section"): a header with the magic, its own length
//! and the offset and length of the func info, line info and (from a 32-byte header on) CO-RE relocation blocks,
//! relative to the end of the header. The line info block is a record size, then per code section a
//! `{sec_name_off, num_info}` header followed by `num_info` records `{insn_off, file_name_off, line_off, line_col}`,
//! where `insn_off` is a byte offset in that section and the strings live in `.BTF`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::btf::{u32_at, Btf};
use crate::code::CodeSection;
use crate::{ObjectError, SourceLine};

/// The section's name.
pub(crate) const SECTION: &str = ".BTF.ext";
const MAGIC: u16 = 0xeb9f;
/// Header length up to and including `line_info_len`.
const BASE_HEADER_LEN: usize = 24;
/// Header length from which `core_relo_off`/`core_relo_len` are present.
const CORE_HEADER_LEN: usize = 32;
/// Size of `struct bpf_line_info`; larger records carry fields hwxdp does not know.
const LINE_RECORD_LEN: usize = 16;
/// Bits of `line_col` that hold the column; the line number is above them.
const COLUMN_BITS: u32 = 10;

/// A `.BTF.ext` error at byte `offset` of the section.
pub(crate) fn ext_error(offset: usize, reason: impl Into<String>) -> ObjectError {
    ObjectError::BadBtfExt {
        offset,
        reason: reason.into(),
    }
}

/// One block that the header points to.
#[derive(Clone, Copy)]
pub(crate) struct Block<'a> {
    /// Byte offset of the block within `.BTF.ext`.
    pub offset: usize,
    /// Its bytes.
    pub data: &'a [u8],
}

impl<'a> Block<'a> {
    /// Little-endian `u32` at `pos` within the block, or an error naming its offset in the section and `what`.
    pub fn u32_at(&self, pos: usize, what: &str) -> Result<u32, ObjectError> {
        u32_at(self.data, pos).ok_or_else(|| {
            ext_error(
                self.offset.saturating_add(pos),
                format!("{what} is truncated"),
            )
        })
    }
}

/// The header of `.BTF.ext`, with the blocks hwxdp reads.
pub(crate) struct BtfExt<'a> {
    /// The line info block (empty when there is none).
    pub line_info: Block<'a>,
    /// The CO-RE relocation block (empty when there is none or the header predates it).
    pub core_relo: Block<'a>,
}

impl<'a> BtfExt<'a> {
    /// Reads the header and checks that the blocks it points to lie within the section.
    pub fn parse(data: &'a [u8]) -> Result<Self, ObjectError> {
        let magic = data.get(0..2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if magic != Some(MAGIC) {
            return Err(ext_error(0, "bad magic"));
        }
        let hdr_len = u32_at(data, 4).ok_or_else(|| ext_error(4, "header is truncated"))? as usize;
        if hdr_len < BASE_HEADER_LEN {
            return Err(ext_error(
                4,
                format!("header length {hdr_len} is shorter than the {BASE_HEADER_LEN} bytes of the base header"),
            ));
        }
        if hdr_len > data.len() {
            return Err(ext_error(
                4,
                format!(
                    "header length {hdr_len} runs past the end of the section ({} bytes)",
                    data.len()
                ),
            ));
        }
        // In bounds: the header is at least BASE_HEADER_LEN (or CORE_HEADER_LEN) bytes and lies within `data`.
        let field = |off: usize| u32_at(data, off).unwrap_or(0);
        let block = |what: &str, off_field: usize| -> Result<Block<'a>, ObjectError> {
            let (off, len) = (field(off_field) as usize, field(off_field + 4) as usize);
            let start = hdr_len.saturating_add(off);
            if len == 0 {
                // An empty block's offset is never read, as libbpf does not read it either.
                return Ok(Block {
                    offset: start,
                    data: &[],
                });
            }
            let end = start.checked_add(len).filter(|&end| end <= data.len());
            match end {
                Some(end) => Ok(Block {
                    offset: start,
                    data: &data[start..end],
                }),
                None => Err(ext_error(
                    start,
                    format!(
                        "{what} of {len} bytes runs past the end of the section ({} bytes)",
                        data.len()
                    ),
                )),
            }
        };
        let line_info = block("line info", 16)?;
        let core_relo = if hdr_len >= CORE_HEADER_LEN {
            block("co-re relocations", 24)?
        } else {
            Block {
                offset: hdr_len,
                data: &[],
            }
        };
        Ok(BtfExt {
            line_info,
            core_relo,
        })
    }
}

/// One line info record: a byte offset in its code section and the source line in effect from there on.
pub(crate) struct LineRecord {
    /// Byte offset of the record within `.BTF.ext`, for errors.
    pub at: usize,
    /// Byte offset of the instruction in its code section.
    pub insn_off: u32,
    /// The source line.
    pub source: SourceLine,
}

/// The line info of one code section.
pub(crate) struct SectionLines {
    /// Byte offset of the block's `{sec_name_off, num_info}` header within `.BTF.ext`, for errors.
    pub at: usize,
    /// The code section's name.
    pub section: String,
    /// Records by increasing `insn_off`.
    pub records: Vec<LineRecord>,
}

/// A string of `.BTF` referred to by the field at byte `at` of `.BTF.ext`; invalid UTF-8 (a source line in Latin-1)
/// is replaced rather than refused.
fn string(btf: &Btf<'_>, off: u32, at: usize, what: &str) -> Result<String, ObjectError> {
    let bytes = btf
        .raw_string(off)
        .map_err(|reason| ext_error(at, format!("{what}: {reason} in .BTF")))?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// Reads the line info block, checking every record's strings and that offsets increase within each section.
pub(crate) fn read_lines(
    block: Block<'_>,
    btf: &Btf<'_>,
) -> Result<Vec<SectionLines>, ObjectError> {
    let mut sections = Vec::new();
    if block.data.is_empty() {
        return Ok(sections);
    }
    let rec_size = block.u32_at(0, "line info record size")? as usize;
    if rec_size < LINE_RECORD_LEN || !rec_size.is_multiple_of(4) {
        return Err(ext_error(
            block.offset,
            format!("line info record size {rec_size} is not a multiple of 4 of at least {LINE_RECORD_LEN}"),
        ));
    }
    let mut seen = HashSet::new();
    let mut pos = 4;
    while pos < block.data.len() {
        let at = block.offset + pos;
        let name_off = block.u32_at(pos, "line info section header")?;
        let count = block.u32_at(pos + 4, "line info section header")? as usize;
        let section = string(btf, name_off, at, "line info section name")?;
        if count == 0 {
            return Err(ext_error(
                at,
                format!("line info for section {section} has no records"),
            ));
        }
        if !seen.insert(section.clone()) {
            return Err(ext_error(
                at,
                format!("second line info block for section {section}"),
            ));
        }
        pos += 8;
        let fits = count
            .checked_mul(rec_size)
            .and_then(|len| len.checked_add(pos))
            .is_some_and(|end| end <= block.data.len());
        if !fits {
            return Err(ext_error(
                at,
                format!(
                    "{count} line info records of {rec_size} bytes for section {section} run past the end of the line info ({} bytes)",
                    block.data.len()
                ),
            ));
        }
        let records = read_line_records(block, btf, &section, pos, count, rec_size)?;
        pos += count * rec_size;
        sections.push(SectionLines {
            at,
            section,
            records,
        });
    }
    Ok(sections)
}

/// The `count` line records of `section` starting at `pos` in `block`, each `rec_size` bytes, checked to be at
/// instruction boundaries in increasing order.
fn read_line_records(
    block: Block<'_>,
    btf: &Btf<'_>,
    section: &str,
    mut pos: usize,
    count: usize,
    rec_size: usize,
) -> Result<Vec<LineRecord>, ObjectError> {
    let mut records: Vec<LineRecord> = Vec::with_capacity(count);
    for _ in 0..count {
        let at = block.offset + pos;
        let field = |i: usize| u32_at(block.data, pos + 4 * i).unwrap_or(0);
        let (insn_off, file_off, line_off, line_col) = (field(0), field(1), field(2), field(3));
        if !insn_off.is_multiple_of(8) {
            return Err(ext_error(
                at,
                format!(
                    "line info for section {section}: instruction offset {insn_off} is not a multiple of 8"
                ),
            ));
        }
        if let Some(previous) = records.last() {
            if insn_off <= previous.insn_off {
                return Err(ext_error(
                    at,
                    format!(
                        "line info for section {section}: instruction offset {insn_off} does not follow {}",
                        previous.insn_off
                    ),
                ));
            }
        }
        let source = SourceLine {
            file: string(btf, file_off, at + 4, "file name")?,
            line: line_col >> COLUMN_BITS,
            column: line_col & ((1 << COLUMN_BITS) - 1),
            text: string(btf, line_off, at + 8, "line text")?,
        };
        records.push(LineRecord {
            at,
            insn_off,
            source,
        });
        pos += rec_size;
    }
    Ok(records)
}

/// Gives each code section its line info, as (instruction index, source line) by increasing index.
pub(crate) fn attach_lines(
    code: &mut BTreeMap<usize, CodeSection>,
    lines: Vec<SectionLines>,
) -> Result<(), ObjectError> {
    // The first code section of each name, as a linear search would find it.
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (&index, section) in code.iter() {
        by_name.entry(section.name.clone()).or_insert(index);
    }
    for block in lines {
        let section = by_name
            .get(&block.section)
            .and_then(|index| code.get_mut(index));
        let Some(section) = section else {
            return Err(ext_error(
                block.at,
                format!(
                    "line info for section {}, which holds no code",
                    block.section
                ),
            ));
        };
        let mut attached = Vec::with_capacity(block.records.len());
        for record in block.records {
            let insn = section
                .insn_at_slot(record.insn_off as usize / 8)
                .ok_or_else(|| {
                    ext_error(
                        record.at,
                        format!(
                            "line info for section {}: instruction offset {} is not at an instruction",
                            block.section, record.insn_off
                        ),
                    )
                })?;
            attached.push((insn, record.source));
        }
        section.lines = attached;
    }
    Ok(())
}
