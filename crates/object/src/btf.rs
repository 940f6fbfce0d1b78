//! Just enough of the BTF format to read `.maps` definitions and the strings `.BTF.ext` refers to.

use crate::ObjectError;

/// Type aliases deeper than this are treated as a loop, as the kernel does.
const MAX_RESOLVE_DEPTH: usize = 32;
const BTF_MAGIC: u16 = 0xeb9f;

/// A member of a struct or union.
pub(crate) struct Member {
    /// Offset of the name in the string table.
    pub name_off: u32,
    /// Member type id.
    pub type_id: u32,
}

/// One entry of a DATASEC: a variable and where it lives.
pub(crate) struct VarEntry {
    /// Id of the VAR type.
    pub type_id: u32,
}

/// The BTF kinds hwxdp distinguishes; everything else is `Other`.
pub(crate) enum BtfType {
    /// Type id 0.
    Void,
    /// INT, ENUM, ENUM64, FLOAT: a type with a size and nothing to follow.
    Scalar { size: u32 },
    /// PTR.
    Ptr { target: u32 },
    /// ARRAY.
    Array { elem: u32, nelems: u32 },
    /// TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG: the same type under another name or qualifier.
    Alias { target: u32 },
    /// STRUCT or UNION.
    Composite {
        /// Offset of the name in the string table (0: anonymous).
        name_off: u32,
        size: u32,
        members: Vec<Member>,
    },
    /// VAR.
    Var { name_off: u32, target: u32 },
    /// DATASEC.
    Datasec {
        name_off: u32,
        size: u32,
        entries: Vec<VarEntry>,
    },
    /// FWD, FUNC, FUNC_PROTO, DECL_TAG: sizeless.
    Other,
}

/// Parsed `.BTF`.
pub(crate) struct Btf<'a> {
    strings: &'a [u8],
    types: Vec<BtfType>,
}

fn btf_error(reason: impl Into<String>) -> ObjectError {
    ObjectError::Btf {
        reason: reason.into(),
    }
}

/// Little-endian `u32` at `off`, if in bounds.
pub(crate) fn u32_at(data: &[u8], off: usize) -> Option<u32> {
    let bytes = data.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// The region `[base + off, base + off + len)` of `data`, if in bounds.
pub(crate) fn region(data: &[u8], base: usize, off: u32, len: u32) -> Option<&[u8]> {
    let start = base.checked_add(off as usize)?;
    data.get(start..start.checked_add(len as usize)?)
}

impl<'a> Btf<'a> {
    /// Parses a little-endian `.BTF` section.
    pub fn parse(data: &'a [u8]) -> Result<Self, ObjectError> {
        let magic = data.get(0..2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if magic != Some(BTF_MAGIC) {
            return Err(btf_error("bad magic in .BTF"));
        }
        let field = |off| u32_at(data, off).ok_or_else(|| btf_error("truncated .BTF header"));
        let hdr_len = field(4)? as usize;
        let (type_off, type_len, str_off, str_len) =
            (field(8)?, field(12)?, field(16)?, field(20)?);
        let type_data = region(data, hdr_len, type_off, type_len)
            .ok_or_else(|| btf_error("type section out of bounds"))?;
        let strings = region(data, hdr_len, str_off, str_len)
            .ok_or_else(|| btf_error("string section out of bounds"))?;
        let mut types = vec![BtfType::Void];
        let mut pos = 0;
        while pos < type_data.len() {
            let (ty, len) = read_type(type_data, pos).ok_or_else(|| {
                btf_error(format!(
                    "type {} is truncated or of unknown kind",
                    types.len()
                ))
            })?;
            types.push(ty);
            pos += len;
        }
        Ok(Btf { strings, types })
    }

    /// The bytes of the string at `off` in the string section, without its NUL: `Err` says what is wrong.
    pub fn raw_string(&self, off: u32) -> Result<&'a [u8], String> {
        let rest = self
            .strings
            .get(off as usize..)
            .ok_or_else(|| format!("string offset {off} out of bounds"))?;
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| format!("string at {off} is not terminated"))?;
        Ok(&rest[..end])
    }

    /// The NUL-terminated string at `off` in the string section.
    pub fn name(&self, off: u32) -> Result<&'a str, ObjectError> {
        let bytes = self.raw_string(off).map_err(btf_error)?;
        std::str::from_utf8(bytes).map_err(|_| btf_error(format!("string at {off} is not utf-8")))
    }

    /// The type with id `id`.
    pub fn get(&self, id: u32) -> Result<&BtfType, ObjectError> {
        self.types
            .get(id as usize)
            .ok_or_else(|| btf_error(format!("type id {id} out of range")))
    }

    /// Follows typedefs and qualifiers to the underlying type id.
    pub fn resolve(&self, mut id: u32) -> Result<u32, ObjectError> {
        for _ in 0..MAX_RESOLVE_DEPTH {
            match self.get(id)? {
                BtfType::Alias { target } => id = *target,
                _ => return Ok(id),
            }
        }
        Err(btf_error(format!("type id {id}: alias chain too deep")))
    }

    /// A struct or union's name, for messages: `type id N` for anything unnamed or that is not a struct or union.
    pub fn composite_name(&self, id: u32) -> String {
        let named = self.resolve(id).ok().and_then(|id| match self.get(id) {
            Ok(BtfType::Composite { name_off, .. }) if *name_off != 0 => self.name(*name_off).ok(),
            _ => None,
        });
        match named {
            Some(name) => name.to_string(),
            None => format!("type id {id}"),
        }
    }

    /// Size in bytes of a type, as `sizeof` would give it.
    pub fn size_of(&self, id: u32) -> Result<u64, ObjectError> {
        self.size_of_depth(id, 0)
    }

    fn size_of_depth(&self, id: u32, depth: usize) -> Result<u64, ObjectError> {
        if depth > MAX_RESOLVE_DEPTH {
            return Err(btf_error(format!("type id {id}: nested too deep")));
        }
        match self.get(self.resolve(id)?)? {
            BtfType::Scalar { size }
            | BtfType::Composite { size, .. }
            | BtfType::Datasec { size, .. } => Ok(u64::from(*size)),
            BtfType::Ptr { .. } => Ok(8),
            BtfType::Array { elem, nelems } => self
                .size_of_depth(*elem, depth + 1)?
                .checked_mul(u64::from(*nelems))
                .ok_or_else(|| btf_error(format!("type id {id}: array size overflows"))),
            BtfType::Void | BtfType::Var { .. } | BtfType::Alias { .. } | BtfType::Other => {
                Err(btf_error(format!("type id {id} has no size")))
            }
        }
    }

    /// The variables of the DATASEC called `name`.
    pub fn datasec(&self, name: &str) -> Result<Option<&[VarEntry]>, ObjectError> {
        for ty in &self.types {
            if let BtfType::Datasec {
                name_off, entries, ..
            } = ty
            {
                if self.name(*name_off)? == name {
                    return Ok(Some(entries));
                }
            }
        }
        Ok(None)
    }
}

/// Decodes the type at `pos`, returning it and its encoded length.
fn read_type(data: &[u8], pos: usize) -> Option<(BtfType, usize)> {
    let name_off = u32_at(data, pos)?;
    let info = u32_at(data, pos + 4)?;
    let size_or_type = u32_at(data, pos + 8)?;
    let vlen = (info & 0xffff) as usize;
    let kind = (info >> 24) & 0x1f;
    let body = pos + 12;
    let list = |record: usize| -> Option<Vec<(u32, u32)>> {
        let mut out = Vec::with_capacity(vlen.min(data.len() / record.max(1)));
        for i in 0..vlen {
            let at = body.checked_add(i.checked_mul(record)?)?;
            out.push((u32_at(data, at)?, u32_at(data, at + 4)?));
            data.get(at..at.checked_add(record)?)?;
        }
        Some(out)
    };
    let (ty, extra) = match kind {
        1 => (BtfType::Scalar { size: size_or_type }, 4),
        2 => (
            BtfType::Ptr {
                target: size_or_type,
            },
            0,
        ),
        3 => {
            let elem = u32_at(data, body)?;
            let nelems = u32_at(data, body + 8)?;
            (BtfType::Array { elem, nelems }, 12)
        }
        4 | 5 => {
            let members = list(12)?
                .into_iter()
                .map(|(name_off, type_id)| Member { name_off, type_id })
                .collect();
            (
                BtfType::Composite {
                    name_off,
                    size: size_or_type,
                    members,
                },
                vlen * 12,
            )
        }
        6 => {
            list(8)?;
            (BtfType::Scalar { size: size_or_type }, vlen * 8)
        }
        7 | 12 => (BtfType::Other, 0),
        8..=11 | 18 => (
            BtfType::Alias {
                target: size_or_type,
            },
            0,
        ),
        13 => {
            list(8)?;
            (BtfType::Other, vlen * 8)
        }
        14 => {
            u32_at(data, body)?;
            (
                BtfType::Var {
                    name_off,
                    target: size_or_type,
                },
                4,
            )
        }
        15 => {
            let entries = list(12)?
                .into_iter()
                .map(|(type_id, _offset)| VarEntry { type_id })
                .collect();
            (
                BtfType::Datasec {
                    name_off,
                    size: size_or_type,
                    entries,
                },
                vlen * 12,
            )
        }
        16 => (BtfType::Scalar { size: size_or_type }, 0),
        17 => {
            u32_at(data, body)?;
            (BtfType::Other, 4)
        }
        19 => {
            list(12)?;
            (BtfType::Scalar { size: size_or_type }, vlen * 12)
        }
        _ => return None,
    };
    Some((ty, 12 + extra))
}
