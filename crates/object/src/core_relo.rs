//! Detects CO-RE relocations in `.BTF.ext`: they rewrite instructions against the running kernel's BTF, which a
//! hardware model does not have, so an object that carries any is refused with the first one named.

use crate::btf::Btf;
use crate::btf_ext::{ext_error, Block};
use crate::ObjectError;

/// Size of `struct bpf_core_relo`.
const CORE_RECORD_LEN: usize = 16;

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

/// Fails with the first CO-RE relocation of the CO-RE block of `.BTF.ext`, if there is one.
pub(crate) fn reject_core_relocations(relos: Block<'_>, btf: &Btf<'_>) -> Result<(), ObjectError> {
    if relos.data.is_empty() {
        return Ok(());
    }
    let rec_size = relos.u32_at(0, "co-re record size")? as usize;
    if rec_size < CORE_RECORD_LEN {
        return Err(ext_error(
            relos.offset,
            format!("co-re record size {rec_size} is too small"),
        ));
    }
    let mut pos = 4;
    while pos < relos.data.len() {
        let sec_name_off = relos.u32_at(pos, "co-re section header")?;
        let count = relos.u32_at(pos + 4, "co-re section header")?;
        if count > 0 {
            let first = pos + 8;
            let insn_off = relos.u32_at(first, "co-re record")?;
            let type_id = relos.u32_at(first + 4, "co-re record")?;
            let kind = relos.u32_at(first + 12, "co-re record")?;
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
