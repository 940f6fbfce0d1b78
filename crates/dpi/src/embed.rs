//! The rules a dpi object was compiled from, carried in the object itself: `hwxdp dpi` writes them into the ELF
//! section [`SECTION`] (as a `static const` array, which no instruction references), and `hwxdp gen` reads them back
//! to make a trace for the object's rules. libbpf skips the section ("skipping unrecognized data section"), and
//! `crates/object` ignores it, so it costs the program nothing.
//!
//! The section's bytes are text: a first line `hwxdp-dpi 1`, then `max-payload N` and `dfa-limit N`, an empty line,
//! then the rules file as it was read.

use crate::error::DpiError;
use std::fmt::Write;

/// The ELF section holding the rules.
pub const SECTION: &str = ".hwxdp.dpi";
/// The first line of the section: its format.
const MAGIC: &str = "hwxdp-dpi 1";

/// What a dpi object says about how it was compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedded {
    /// Payload bytes scanned at most per packet.
    pub max_payload: usize,
    /// The DFA size limit it was built with.
    pub dfa_limit: usize,
    /// The rules file's text.
    pub rules: String,
}

impl Embedded {
    /// The section's bytes.
    pub fn to_text(&self) -> String {
        format!(
            "{MAGIC}\nmax-payload {}\ndfa-limit {}\n\n{}",
            self.max_payload, self.dfa_limit, self.rules
        )
    }

    /// Parses the section's bytes; `None` when they are not in the format.
    fn from_bytes(bytes: &[u8]) -> Option<Embedded> {
        let text = std::str::from_utf8(bytes).ok()?;
        let text = text.strip_suffix('\0').unwrap_or(text);
        let (head, rules) = text.split_once("\n\n")?;
        let mut lines = head.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut field =
            |key: &str| -> Option<usize> { lines.next()?.strip_prefix(key)?.trim().parse().ok() };
        let max_payload = field("max-payload ")?;
        let dfa_limit = field("dfa-limit ")?;
        Some(Embedded {
            max_payload,
            dfa_limit,
            rules: rules.to_string(),
        })
    }
}

/// The C definition that puts `embedded` into [`SECTION`].
pub fn c_definition(embedded: &Embedded) -> String {
    let mut c = format!(
        "/* The rules this program was generated from, for hwxdp gen (section {SECTION}, not loaded). */\n\
         static const char hwxdp_dpi_rules[] __attribute__((section(\"{SECTION}\"), used)) =\n\t\""
    );
    for b in embedded.to_text().bytes() {
        match b {
            b'\n' => c.push_str("\\n\"\n\t\""),
            b'"' | b'\\' | b'?' => {
                let _ = write!(c, "\\{:03o}", b);
            }
            0x20..=0x7e => c.push(b as char),
            _ => {
                let _ = write!(c, "\\{:03o}", b);
            }
        }
    }
    c.push_str("\";\n\n");
    c
}

/// The rules embedded in the ELF object `elf`: `Ok(None)` for an object without the section (not made by
/// `hwxdp dpi`), an error for a section that is there but unreadable.
pub fn read(elf: &[u8], path: &str) -> Result<Option<Embedded>, DpiError> {
    let Some(bytes) = section(elf, SECTION) else {
        return Ok(None);
    };
    Embedded::from_bytes(bytes)
        .map(Some)
        .ok_or_else(|| DpiError::Io {
            path: path.to_string(),
            message: format!("section {SECTION} is not in the format hwxdp dpi writes"),
        })
}

/// The bytes of the section named `name` of a 64-bit little-endian ELF file (what `clang -target bpf` writes);
/// `None` when the file is not one or has no such section.
fn section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| {
        let v = u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = u64_at(0x28)?;
    let shentsize = usize::from(u16_at(0x3a)?);
    let shnum = usize::from(u16_at(0x3c)?);
    let shstrndx = usize::from(u16_at(0x3e)?);
    if shentsize < 64 {
        return None;
    }
    let header = |i: usize| -> Option<(usize, &'a [u8])> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let name = u32_at(h)? as usize;
        let offset = u64_at(h + 0x18)?;
        let size = u64_at(h + 0x20)?;
        Some((name, elf.get(offset..offset.checked_add(size)?)?))
    };
    let (_, names) = header(shstrndx)?;
    (0..shnum).find_map(|i| {
        let (at, data) = header(i)?;
        let rest = names.get(at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        (&rest[..end] == name.as_bytes()).then_some(data)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_reads_back() {
        let e = Embedded {
            max_payload: 600,
            dfa_limit: 4096,
            rules: "drop tcp content \"a\\x00\"\n\n# c\ncount udp regex \"b??c\"\n".into(),
        };
        assert_eq!(
            Embedded::from_bytes(e.to_text().as_bytes()),
            Some(e.clone())
        );
        let mut nul = e.to_text().into_bytes();
        nul.push(0);
        assert_eq!(Embedded::from_bytes(&nul), Some(e));
        assert_eq!(
            Embedded::from_bytes(b"hwxdp-dpi 2\nmax-payload 1\n\n"),
            None
        );
    }

    #[test]
    fn not_an_elf_has_no_section() {
        assert_eq!(read(b"not an elf", "x"), Ok(None));
        assert_eq!(
            section(&[0x7f, b'E', b'L', b'F', 2, 1, 0, 0], SECTION),
            None
        );
    }
}
