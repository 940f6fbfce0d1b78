//! Key fields of an `add` as values and masks, checked against the table's key; the byte helpers of the layout.

use super::KeyValue;
use crate::ir::{MatchKind, Table};

/// One key field's value as a value and a mask, checked against the field's width.
pub(super) struct Field {
    pub value: u128,
    pub mask: u128,
    full: u128,
}

impl Field {
    /// The value of a field that must match exactly.
    pub fn exact(&self, name: &str) -> Result<u128, String> {
        if self.mask != self.full {
            return Err(format!(
                "key `{name}` is exact: it cannot have a mask, prefix or `*` digits"
            ));
        }
        Ok(self.value)
    }

    /// The prefix length, if the mask is a prefix of a `width`-bit field.
    pub fn prefix_len(&self, width: u32) -> Option<u32> {
        let len = self.mask.count_ones();
        (self.mask == prefix_mask(len, width)).then_some(len)
    }
}

/// The value and mask of every key field, in key order; errors name unknown, ambiguous, duplicate, missing or too
/// wide key fields.
pub(super) fn match_keys(
    table: &Table,
    given: &[(String, KeyValue)],
) -> Result<Vec<Field>, String> {
    let mut fields: Vec<Option<Field>> = table.keys.iter().map(|_| None).collect();
    for (name, kv) in given {
        let matching = keys_named(table, name);
        let i = match matching[..] {
            [i] => i,
            [] => return Err(format!("table `{}` has no key field `{name}`", table.name)),
            _ => {
                return Err(format!(
                    "key field `{name}` of table `{}` is ambiguous",
                    table.name
                ))
            }
        };
        if fields[i].is_some() {
            return Err(format!("key field `{name}` is given twice"));
        }
        let width = table.keys[i].width;
        let full = prefix_mask(width, width);
        let (value, mask) = match *kv {
            KeyValue::Value { value, dont_care } => (value, full & !dont_care),
            KeyValue::Masked { value, mask } => (value, mask),
            KeyValue::Prefix { value, len } if len <= width => (value, prefix_mask(len, width)),
            KeyValue::Prefix { len, .. } => {
                return Err(format!(
                    "prefix length {len} is longer than `{name}` ({width} bits)"
                ))
            }
        };
        if !fits(value, width) || !fits(mask, width) {
            return Err(format!(
                "value {value:#x} of `{name}` does not fit in {width} bits"
            ));
        }
        fields[i] = Some(Field { value, mask, full });
    }
    table
        .keys
        .iter()
        .zip(fields)
        .map(|(k, f)| match (f, k.kind) {
            (Some(f), _) => Ok(f),
            (None, MatchKind::Exact) => Err(format!("missing key field `{}`", k.name)),
            (None, _) => Ok(Field {
                value: 0,
                mask: 0,
                full: prefix_mask(k.width, k.width),
            }),
        })
        .collect()
}

/// The index of the entity `wanted` names among `entities` (`(name, @name annotation)` pairs of the control
/// `control`). A name matches when it is the entity's name or annotation, either of them qualified by the control as
/// P4 (`pipe.t`) or p4c-ebpf's generated code (`pipe_t`) spells it, an annotation with its dots as `_` (p4c-ebpf's
/// external name of `@name("pipe.t")`), or `_NoAction` for `NoAction`; failing that, when
/// its last `.` component is the name (`ingress.pipe.t`).
pub(super) fn find_named<'n>(
    entities: impl Iterator<Item = (&'n str, Option<&'n str>)> + Clone,
    control: &str,
    wanted: &str,
) -> Option<usize> {
    let wanted = if wanted == "_NoAction" {
        "NoAction"
    } else {
        wanted
    };
    let spells = |base: &str| {
        wanted == base
            || (base.contains('.') && wanted == base.replace('.', "_"))
            || wanted
                .strip_prefix(control)
                .and_then(|rest| rest.strip_prefix(['.', '_']))
                .is_some_and(|rest| rest == base || (base == "NoAction" && rest == "_NoAction"))
    };
    if let Some(i) = entities
        .clone()
        .position(|(name, annotated)| spells(name) || annotated.is_some_and(spells))
    {
        return Some(i);
    }
    let last = wanted.rsplit('.').next()?;
    entities
        .clone()
        .position(|(name, annotated)| name == last || annotated == Some(last))
}

/// The key fields of `table` an `add` names `name` by: first the strong spellings (the key as written, with or
/// without spaces, its `@name`, and p4c-ebpf's positional `field0`, `field1`, ..., each also after `key.`), else a
/// key whose written form (with or without spaces) ends in `.name`.
fn keys_named(table: &Table, name: &str) -> Vec<usize> {
    let bare = name.strip_prefix("key.").unwrap_or(name);
    let strong = |i: usize| {
        let k = &table.keys[i];
        let written = [k.name.clone(), k.name.replace(' ', "")];
        [name, bare].iter().any(|n| {
            written.iter().any(|w| w == n)
                || k.annotated.as_deref() == Some(*n)
                || *n == format!("field{i}")
        })
    };
    let found: Vec<usize> = (0..table.keys.len()).filter(|&i| strong(i)).collect();
    if !found.is_empty() {
        return found;
    }
    (0..table.keys.len())
        .filter(|&i| {
            let full = &table.keys[i].name;
            let written = [full.clone(), full.replace(' ', "")];
            [name, bare].iter().any(|n| {
                let suffix = format!(".{n}");
                written.iter().any(|w| w.ends_with(&suffix))
            })
        })
        .collect()
}

pub(super) fn bytes(width: u32) -> usize {
    width.div_ceil(8) as usize
}

pub(super) fn fits(value: u128, width: u32) -> bool {
    width >= 128 || value >> width == 0
}

/// `len` leading ones in a `width`-bit field.
pub(super) fn prefix_mask(len: u32, width: u32) -> u128 {
    let ones = |n: u32| {
        if n >= 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        }
    };
    ones(width) & !ones(width - len.min(width))
}

/// `value` big-endian in `ceil(width / 8)` bytes, right-aligned.
pub(super) fn be_bytes(value: u128, width: u32) -> Vec<u8> {
    value.to_be_bytes()[16 - bytes(width)..].to_vec()
}
