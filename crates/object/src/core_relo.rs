//! Detects CO-RE relocations in `.BTF.ext`: they rewrite instructions against the running kernel's BTF, which a
//! hardware model does not have, so an object that carries any is refused with the first one named.

use crate::btf::{region, u32_at, Btf};
use crate::ObjectError;

const BTF_EXT_MAGIC: u16 = 0xeb9f;
/// Header length from which `core_relo_off`/`core_relo_len` are present.
const CORE_HEADER_LEN: usize = 32;

fn ext_error(reason: impl Into<String>) -> ObjectError {
    ObjectError::Btf {
        reason: format!(".BTF.ext: {}", reason.into()),
    }
}

/// Name of `enum bpf_core_relo_kind` values.
fn kind_name(kind: u32) -> String {
    let name = match kind {
        0 => "field_byte_offset",
        1 => "field_byte_size",
        2 => "field_exists",
        3 => "field_signed",
        4 => "field_lshift_u64",
        5 => "field_rshift_u64",
        6 => "type_id_local",
        7 => "type_id_target",
        8 => "type_exists",
        9 => "type_size",
        10 => "enumval_exists",
        11 => "enumval_value",
        12 => "type_matches",
        _ => return format!("kind {kind}"),
    };
    name.to_string()
}

/// Fails with the first CO-RE relocation of `.BTF.ext`, if there is one.
pub(crate) fn reject_core_relocations(ext: &[u8], btf: &Btf<'_>) -> Result<(), ObjectError> {
    let magic = ext.get(0..2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if magic != Some(BTF_EXT_MAGIC) {
        return Err(ext_error("bad magic"));
    }
    let hdr_len = u32_at(ext, 4).ok_or_else(|| ext_error("truncated header"))? as usize;
    if hdr_len < CORE_HEADER_LEN {
        return Ok(());
    }
    let field = |off| u32_at(ext, off).ok_or_else(|| ext_error("truncated header"));
    let (relo_off, relo_len) = (field(24)?, field(28)?);
    if relo_len == 0 {
        return Ok(());
    }
    let relos = region(ext, hdr_len, relo_off, relo_len)
        .ok_or_else(|| ext_error("co-re records out of bounds"))?;
    let rec_size = u32_at(relos, 0).ok_or_else(|| ext_error("truncated co-re records"))? as usize;
    if rec_size < 16 {
        return Err(ext_error(format!(
            "co-re record size {rec_size} is too small"
        )));
    }
    let mut pos = 4;
    while pos < relos.len() {
        let sec_name_off =
            u32_at(relos, pos).ok_or_else(|| ext_error("truncated co-re section"))?;
        let count = u32_at(relos, pos + 4).ok_or_else(|| ext_error("truncated co-re section"))?;
        if count > 0 {
            let first = pos + 8;
            let insn_off =
                u32_at(relos, first).ok_or_else(|| ext_error("truncated co-re record"))?;
            let type_id =
                u32_at(relos, first + 4).ok_or_else(|| ext_error("truncated co-re record"))?;
            let kind =
                u32_at(relos, first + 12).ok_or_else(|| ext_error("truncated co-re record"))?;
            return Err(ObjectError::CoreRelocation {
                section: btf.name(sec_name_off)?.to_string(),
                insn: insn_off as usize / 8,
                kind: kind_name(kind),
                type_name: btf.composite_name(type_id),
            });
        }
        pos += 8;
    }
    Ok(())
}
