//! Table commands as map entries, exactly as `docs/p4.md` lays them out: key fields and action parameters big-endian
//! in `ceil(width / 8)` bytes, packed; host-order `u32` for indices, prefix lengths, action numbers and ranks.
//!
//! Ternary priorities follow the P4 tools: p4c's `bmv2stf.py` turns an STF priority `p` into BMv2's `10000 - p`, and
//! BMv2 lets the numerically smallest priority win, so in STF the numerically highest `PRIO` wins. Entries without a
//! priority have priority 0; between equal priorities the entry added first wins. Both are folded into the slot's
//! `u32 rank` (highest wins): `(PRIO + 1) << 16 | (0xffff - slot)`.

use super::keys::{be_bytes, bytes, find_named, fits, match_keys};
use super::KeyValue;
use super::{ActionCall, Command, StfError};
use crate::ir::{Checked, MatchKind, Storage, Table, Ty, ValueSet};

/// The highest `add` priority a ternary entry may have (it must fit in the rank's upper 16 bits).
pub const TERNARY_MAX_PRIORITY: u32 = 0xfffe;

/// One map update: `map[key] = value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapWrite {
    /// The map's name.
    pub map: String,
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value bytes.
    pub value: Vec<u8>,
}

/// Where a counter lives: its map and the key of one index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterRef {
    /// The map's name (the counter's).
    pub map: String,
    /// The `u32` index, host order.
    pub key: Vec<u8>,
    /// A hash map (`sparse`): a missing entry counts 0.
    pub sparse: bool,
}

/// Turns `add` and `setdefault` commands into map writes for one program; keeps the ternary slots handed out.
pub struct Encoder<'a> {
    program: &'a Checked,
    file: String,
    next_slot: Vec<u32>,
}

impl<'a> Encoder<'a> {
    /// An encoder for `program`; errors name `file`.
    pub fn new(program: &'a Checked, file: &str) -> Encoder<'a> {
        Encoder {
            program,
            file: file.to_string(),
            next_slot: vec![0; program.control.tables.len()],
        }
    }

    fn err(&self, line: usize, message: impl Into<String>) -> StfError {
        StfError::new(&self.file, line, message)
    }

    /// The map write of an `add` or `setdefault` command at `line`.
    pub fn encode(&mut self, line: usize, command: &Command) -> Result<MapWrite, StfError> {
        self.encode_inner(command).map_err(|m| self.err(line, m))
    }

    /// The map and key of `check_counter NAME(INDEX)`.
    pub fn counter(&self, line: usize, name: &str, index: u32) -> Result<CounterRef, StfError> {
        let counters = &self.program.control.counters;
        let control = &self.program.control.name;
        let found = find_named(
            counters.iter().map(|c| (c.name.as_str(), None)),
            control,
            name,
        )
        .ok_or_else(|| self.err(line, format!("unknown counter `{name}`")))?;
        let counter = &counters[found];
        // A sparse counter is a hash map: `size` bounds how many indices it holds, not their values.
        if !counter.sparse && index >= counter.size {
            return Err(self.err(
                line,
                format!(
                    "index {index} is out of range: `{}` has {} counters",
                    counter.name, counter.size
                ),
            ));
        }
        Ok(CounterRef {
            map: counter.name.clone(),
            key: index.to_le_bytes().to_vec(),
            sparse: counter.sparse,
        })
    }

    fn encode_inner(&mut self, command: &Command) -> Result<MapWrite, String> {
        let tables = &self.program.control.tables;
        let (table_name, action) = match command {
            Command::Add { table, action, .. } => (table, action.as_ref()),
            Command::SetDefault { table, action } => (table, Some(action)),
            _ => return Err("not a table command".into()),
        };
        let control = &self.program.control.name;
        let entities = tables
            .iter()
            .map(|t| (t.name.as_str(), t.annotated.as_deref()));
        let Some(t) = find_named(entities, control, table_name) else {
            return self.value_set_element(command);
        };
        let table = &tables[t];
        let action =
            action.ok_or("add needs an action with arguments in parentheses, `act(...)`")?;
        let action = self.action_value(table, action)?;
        let Command::Add { priority, keys, .. } = command else {
            if table.default_is_const {
                return Err(format!("table `{}` has a const default_action", table.name));
            }
            let mut value = 1u32.to_le_bytes().to_vec();
            value.extend(action);
            return Ok(MapWrite {
                map: format!("{}_defact", table.name),
                key: 0u32.to_le_bytes().to_vec(),
                value,
            });
        };
        if !table.entries.is_empty() {
            return Err(format!(
                "table `{}` has const entries: it cannot be changed",
                table.name
            ));
        }
        let fields = match_keys(table, keys)?;
        let kind = table.storage();
        let (key, value) = match kind {
            Storage::Keyless => {
                return Err(format!("table `{}` has no key: use setdefault", table.name))
            }
            Storage::Const => unreachable!("const entries are refused above"),
            Storage::Array => {
                let index = fields[0].exact(&table.keys[0].name)?;
                if index >= u128::from(table.size) {
                    return Err(format!(
                        "index {index} is out of range: `{}` has {} entries",
                        table.name, table.size
                    ));
                }
                ((index as u32).to_le_bytes().to_vec(), action)
            }
            Storage::Hash | Storage::Lpm => {
                // The fields in map order (exact ones before the lpm one); the prefix length counts the bits of
                // the exact fields, the lpm field's padding and its written prefix.
                let (mut key, mut prefix) = (Vec::new(), 0u32);
                for (i, _) in table.key_layout().0 {
                    let (k, field) = (&table.keys[i], &fields[i]);
                    let full = 8 * bytes(k.width) as u32;
                    if k.kind == MatchKind::Lpm {
                        let len = field.prefix_len(k.width).ok_or_else(|| {
                            format!("key `{}` is lpm: give VALUE/LEN or VALUE", k.name)
                        })?;
                        key.extend(be_bytes(field.value & field.mask, k.width));
                        prefix += full - k.width + len;
                    } else {
                        key.extend(be_bytes(field.exact(&k.name)?, k.width));
                        prefix += full;
                    }
                }
                if kind == Storage::Lpm {
                    key.splice(0..0, prefix.to_le_bytes());
                }
                (key, action)
            }
            Storage::Ternary => {
                let prio = priority.unwrap_or(0);
                if prio > TERNARY_MAX_PRIORITY {
                    return Err(format!(
                        "priority {prio} is above the highest supported, {TERNARY_MAX_PRIORITY}"
                    ));
                }
                let slot = self.next_slot[t];
                if slot >= table.size || slot > 0xffff {
                    return Err(format!("table `{}` is full ({} entries)", table.name, slot));
                }
                self.next_slot[t] += 1;
                let rank = ((prio + 1) << 16) | (0xffff - slot);
                let mut value = rank.to_le_bytes().to_vec();
                for (k, field) in table.keys.iter().zip(&fields) {
                    if k.kind == MatchKind::Exact {
                        field.exact(&k.name)?;
                    }
                    if k.kind == MatchKind::Lpm && field.prefix_len(k.width).is_none() {
                        return Err(format!(
                            "key `{}` is lpm: its mask must be a prefix",
                            k.name
                        ));
                    }
                    value.extend(be_bytes(field.value & field.mask, k.width));
                }
                for (k, field) in table.keys.iter().zip(&fields) {
                    value.extend(be_bytes(field.mask, k.width));
                }
                value.extend(action);
                (slot.to_le_bytes().to_vec(), value)
            }
        };
        Ok(MapWrite {
            map: table.name.clone(),
            key,
            value,
        })
    }

    /// The map write of `add SET key:VALUE ...` for a value set of the parser: the key fields packed as the
    /// set's map key; the value (unused) is a zero `u32`.
    fn value_set_element(&self, command: &Command) -> Result<MapWrite, String> {
        let Command::Add {
            table: name,
            keys,
            action,
            ..
        } = command
        else {
            return Err("not a table command".into());
        };
        let parser = &self.program.parser;
        let sets = parser
            .value_sets
            .iter()
            .map(|v| (v.name.as_str(), v.annotated.as_deref()));
        let set = find_named(sets, &parser.name, name)
            .map(|i| &parser.value_sets[i])
            .ok_or_else(|| format!("unknown table `{name}`"))?;
        if action.is_some() {
            return Err(format!("value_set `{}` takes no action", set.name));
        }
        let key = value_set_key(set, keys)?;
        Ok(MapWrite {
            map: set.name.clone(),
            key,
            value: vec![0; 4],
        })
    }

    /// `u32 action` and the parameters, padded to the table's largest parameter block.
    fn action_value(&self, table: &Table, call: &ActionCall) -> Result<Vec<u8>, String> {
        let actions = &self.program.control.actions;
        let names = table
            .actions
            .iter()
            .map(|&a| (actions[a].name.as_str(), actions[a].annotated.as_deref()));
        let position = find_named(names, &self.program.control.name, &call.name)
            .ok_or_else(|| format!("table `{}` has no action `{}`", table.name, call.name))?;
        let action = &actions[table.actions[position]];
        let mut value = (position as u32).to_le_bytes().to_vec();
        for given in &call.args {
            let known = action
                .params
                .iter()
                .any(|&p| self.program.locals[p].name == given.0);
            if !known {
                return Err(format!(
                    "action `{}` has no parameter `{}`",
                    action.name, given.0
                ));
            }
            if call.args.iter().filter(|a| a.0 == given.0).count() > 1 {
                return Err(format!("argument `{}` is given twice", given.0));
            }
        }
        // A missing argument is zero, as in the C initializer p4c's eBPF STF runner generates.
        for &p in &action.params {
            let local = &self.program.locals[p];
            let arg = call
                .args
                .iter()
                .find(|a| a.0 == local.name)
                .map_or(0, |a| a.1);
            let width = self.width(&local.ty, &local.name)?;
            if !fits(arg, width) {
                return Err(format!(
                    "value {arg:#x} of `{}` does not fit in {width} bits",
                    local.name
                ));
            }
            value.extend(be_bytes(arg, width));
        }
        let largest = table
            .actions
            .iter()
            .map(|&a| {
                actions[a]
                    .params
                    .iter()
                    .map(|&p| self.width(&self.program.locals[p].ty, "").map(bytes))
                    .sum::<Result<usize, String>>()
            })
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .max()
            .unwrap_or(0);
        value.resize(4 + largest, 0);
        Ok(value)
    }

    fn width(&self, ty: &Ty, name: &str) -> Result<u32, String> {
        ty.scalar_width(self.program)
            .ok_or_else(|| format!("parameter `{name}` is not a scalar"))
    }
}

/// The map key of a value set's element: every field given once, exactly, by its name (`field0`, a struct field),
/// also after `key.`; big-endian, packed.
fn value_set_key(set: &ValueSet, given: &[(String, KeyValue)]) -> Result<Vec<u8>, String> {
    let mut values: Vec<Option<u128>> = vec![None; set.fields.len()];
    for (name, kv) in given {
        let bare = name.strip_prefix("key.").unwrap_or(name);
        let i = set
            .fields
            .iter()
            .position(|(f, _)| f == bare)
            .ok_or_else(|| format!("value_set `{}` has no field `{name}`", set.name))?;
        let width = set.fields[i].1;
        let value = match *kv {
            KeyValue::Value {
                value,
                dont_care: 0,
            } => value,
            _ => {
                return Err(format!(
                    "field `{name}` of value_set `{}` is exact: it cannot have a mask, prefix or `*` digits",
                    set.name
                ))
            }
        };
        if !fits(value, width) {
            return Err(format!(
                "value {value:#x} of `{name}` does not fit in {width} bits"
            ));
        }
        if values[i].replace(value).is_some() {
            return Err(format!("key field `{name}` is given twice"));
        }
    }
    let mut key = Vec::new();
    for ((field, width), value) in set.fields.iter().zip(values) {
        let value = value.ok_or_else(|| format!("missing key field `{field}`"))?;
        key.extend(be_bytes(value, *width));
    }
    Ok(key)
}
