//! The file format of `--maps FILE.json` and `--dump-maps`: an object keyed by map name whose values are what
//! `bpftool map dump -j` prints for that map.
//!
//! ```json
//! {"acl": [{"key": ["0x0a", "0x00", "0x00", "0x01"], "value": ["0x01", "0x00"]}],
//!  "pcpu": [{"key": ["0x00", "0x00", "0x00", "0x00"],
//!            "values": [{"cpu": 0, "value": ["0x01"]}, {"cpu": 1, "value": ["0x02"]}]}]}
//! ```
//!
//! Bytes are `"0x.."` strings or numbers 0-255; `"formatted"` (bpftool's BTF rendering) is ignored. A per-CPU map
//! takes either `"values"` listing every possible CPU (each `value_size` bytes, unpadded) or one `"value"` for all.
//!
//! The value of an ARRAY_OF_MAPS or HASH_OF_MAPS entry is the inner map's index among the object's maps (4 bytes,
//! little-endian) where bpftool shows a map id (docs/maps.md). Arrays of more than [`crate::HUGE_ARRAY_ENTRIES`]
//! entries are dumped with their non-zero entries only ([`dump`]; [`dump_all`] lists every one).

mod parse;
mod serialize;

use crate::abi::{is_percpu, round8, update_flags};
use crate::{MapError, MapStore};
use thiserror::Error;

pub use parse::{parse, parse_reader, EXCERPT_CHARS};

/// A parsed or dumped maps file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapsFile {
    /// The maps, in file order (dumps: object order).
    pub maps: Vec<MapEntries>,
}

/// The entries listed for one map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapEntries {
    /// `MapSpec::name`, e.g. `acl` or `.rodata`.
    pub name: String,
    /// Entries in file order (dumps: sorted by key bytes).
    pub entries: Vec<Entry>,
}

/// One key and its value(s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Key bytes.
    pub key: Vec<u8>,
    /// The value, shared or per CPU.
    pub value: EntryValue,
}

/// A value as bpftool prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryValue {
    /// `"value"`: the value (for a per-CPU map in a file: the same value on every CPU).
    Shared(Vec<u8>),
    /// `"values"`: one unpadded value per CPU.
    PerCpu(Vec<CpuValue>),
}

/// One CPU's copy of a per-CPU value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuValue {
    /// The CPU number.
    pub cpu: u32,
    /// The value bytes (`value_size`, no padding).
    pub value: Vec<u8>,
}

impl MapsFile {
    /// The entries listed for map `name`.
    pub fn map(&self, name: &str) -> Option<&MapEntries> {
        self.maps.iter().find(|m| m.name == name)
    }

    /// Every value listed for map `name` (each CPU's copy for per-CPU values), in file order.
    pub fn values_of(&self, name: &str) -> Vec<&[u8]> {
        let mut out = Vec::new();
        for m in self.maps.iter().filter(|m| m.name == name) {
            for e in &m.entries {
                match &e.value {
                    EntryValue::Shared(v) => out.push(v.as_slice()),
                    EntryValue::PerCpu(vs) => out.extend(vs.iter().map(|c| c.value.as_slice())),
                }
            }
        }
        out
    }
}

/// A maps file could not be read or applied.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum JsonError {
    /// The text is not JSON.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// The top level is not an object keyed by map name.
    #[error("the top level must be an object keyed by map name")]
    NotAnObject,
    /// The file lists a map twice.
    #[error("map {map} is listed twice")]
    DuplicateMap {
        /// The map name.
        map: String,
    },
    /// A map's entries are not a JSON array.
    #[error("map {map}: entries must be a json array")]
    NotAList {
        /// The map name.
        map: String,
    },
    /// An entry is malformed or does not fit the map.
    #[error("map {map}, entry {entry}: {problem}")]
    Entry {
        /// The map name.
        map: String,
        /// 0-based index of the entry in the map's array.
        entry: usize,
        /// What is wrong, e.g. `key of 3 bytes where the map takes 4`.
        problem: String,
    },
    /// The file names a map the program does not have.
    #[error("map {map}: the program has no such map (it has: {known})")]
    UnknownMap {
        /// The name in the file.
        map: String,
        /// The program's map names, comma-separated.
        known: String,
    },
    /// The map refused the entry, as the kernel would.
    #[error("map {map}, entry {entry}: update failed: {source}")]
    Update {
        /// The map name.
        map: String,
        /// 0-based index of the entry.
        entry: usize,
        /// The map's error (errno and reason).
        source: MapError,
    },
}

/// A map name for an error message: as it is, or its first [`EXCERPT_CHARS`] characters and its length when longer.
fn short_name(map: &str) -> String {
    let count = map.chars().count();
    if count <= EXCERPT_CHARS {
        return map.to_string();
    }
    let head: String = map.chars().take(EXCERPT_CHARS).collect();
    format!("{head}... (a name of {count} characters)")
}

fn entry_error(map: &str, entry: usize, problem: String) -> JsonError {
    JsonError::Entry {
        map: short_name(map),
        entry,
        problem,
    }
}

/// The syscall-view value (per-CPU: every CPU padded to 8 bytes) for one entry of a map.
fn syscall_value(
    map: &str,
    index: usize,
    value: &EntryValue,
    value_size: usize,
    percpu: bool,
    cpus: usize,
) -> Result<Vec<u8>, JsonError> {
    let wrong_size = |what: String, got: usize| {
        entry_error(
            map,
            index,
            format!("{what} of {got} bytes where the map takes {value_size}"),
        )
    };
    match value {
        EntryValue::Shared(v) if v.len() != value_size => Err(wrong_size("value".into(), v.len())),
        EntryValue::Shared(v) if !percpu => Ok(v.clone()),
        EntryValue::Shared(v) => {
            let stride = round8(value_size);
            let mut out = vec![0; stride * cpus];
            for c in 0..cpus {
                out[c * stride..c * stride + value_size].copy_from_slice(v);
            }
            Ok(out)
        }
        EntryValue::PerCpu(_) if !percpu => Err(entry_error(
            map,
            index,
            "\"values\" (per-cpu) given for a map that is not per-cpu".into(),
        )),
        EntryValue::PerCpu(list) => {
            let stride = round8(value_size);
            let mut out = vec![0; stride * cpus];
            let mut seen = vec![false; cpus];
            for cv in list {
                let c = cv.cpu as usize;
                if c >= cpus {
                    return Err(entry_error(
                        map,
                        index,
                        format!("cpu {c} is not possible ({cpus} possible cpus)"),
                    ));
                }
                if std::mem::replace(&mut seen[c], true) {
                    return Err(entry_error(map, index, format!("cpu {c} is listed twice")));
                }
                if cv.value.len() != value_size {
                    return Err(wrong_size(format!("value of cpu {c}"), cv.value.len()));
                }
                out[c * stride..c * stride + value_size].copy_from_slice(&cv.value);
            }
            if let Some(missing) = seen.iter().position(|s| !s) {
                return Err(entry_error(
                    map,
                    index,
                    format!(
                        "cpu {missing} has no value (list all {cpus} cpus or give one \"value\")"
                    ),
                ));
            }
            Ok(out)
        }
    }
}

/// Writes every entry of `file` into `store` with `BPF_ANY`, map by map and entry by entry in file order.
pub fn preload(store: &mut dyn MapStore, file: &MapsFile) -> Result<(), JsonError> {
    let cpus = store.possible_cpus();
    for m in &file.maps {
        let Some(index) = store.specs().iter().position(|s| s.name == m.name) else {
            let known: Vec<&str> = store.specs().iter().map(|s| s.name.as_str()).collect();
            return Err(JsonError::UnknownMap {
                map: short_name(&m.name),
                known: known.join(", "),
            });
        };
        let spec = store.specs()[index].clone();
        for (i, e) in m.entries.iter().enumerate() {
            if e.key.len() != spec.key_size as usize {
                return Err(entry_error(
                    &m.name,
                    i,
                    format!(
                        "key of {} bytes where the map takes {}",
                        e.key.len(),
                        spec.key_size
                    ),
                ));
            }
            let percpu = is_percpu(spec.map_type);
            let value =
                syscall_value(&m.name, i, &e.value, spec.value_size as usize, percpu, cpus)?;
            store
                .update(index, &e.key, &value, update_flags::ANY)
                .map_err(|source| JsonError::Update {
                    map: short_name(&m.name),
                    entry: i,
                    source,
                })?;
        }
    }
    Ok(())
}

/// Reads every map of `store`, in object order; per-CPU values are split per CPU without padding. Huge arrays show
/// only their non-zero entries ([`crate::Maps::lists_nonzero_only`]); [`dump_all`] shows every entry.
pub fn dump(store: &mut dyn MapStore) -> Result<MapsFile, MapError> {
    dump_with(store, false)
}

/// [`dump`] with every entry of huge arrays, zeros included.
pub fn dump_all(store: &mut dyn MapStore) -> Result<MapsFile, MapError> {
    dump_with(store, true)
}

fn dump_with(store: &mut dyn MapStore, all: bool) -> Result<MapsFile, MapError> {
    let specs = store.specs().to_vec();
    let cpus = store.possible_cpus();
    let mut maps = Vec::with_capacity(specs.len());
    for (index, spec) in specs.iter().enumerate() {
        let percpu = is_percpu(spec.map_type);
        let value_size = spec.value_size as usize;
        let listed = if all {
            store.entries_all(index)?
        } else {
            store.entries(index)?
        };
        let entries = listed
            .into_iter()
            .map(|(key, value)| Entry {
                key,
                value: if percpu {
                    let stride = round8(value_size);
                    EntryValue::PerCpu(
                        (0..cpus)
                            .map(|c| CpuValue {
                                cpu: c as u32,
                                value: value
                                    .get(c * stride..c * stride + value_size)
                                    .unwrap_or(&[])
                                    .to_vec(),
                            })
                            .collect(),
                    )
                } else {
                    EntryValue::Shared(value)
                },
            })
            .collect();
        maps.push(MapEntries {
            name: spec.name.clone(),
            entries,
        });
    }
    Ok(MapsFile { maps })
}
