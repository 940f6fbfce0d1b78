//! Map definitions: BTF-defined (`.maps`), legacy (`maps`), and the global-data sections turned into array maps.

use std::collections::HashMap;

use object::elf;

use crate::btf::{u32_at, Btf, BtfType};
use crate::elf::{Elf, Section};
use crate::{MapKind, MapSpec, ObjectError, OuterMap};

const BPF_MAP_TYPE_ARRAY: u32 = 2;
const ARRAY_OF_MAPS: u32 = 12;
const HASH_OF_MAPS: u32 = 13;
/// libbpf marks `.rodata*` maps read-only for the program.
const BPF_F_RDONLY_PROG: u32 = 0x80;
/// `struct bpf_map_def` fields hwxdp reads: type, key_size, value_size, max_entries, map_flags.
const LEGACY_DEF_FIELDS: usize = 5;
/// The shortest legacy definition libbpf accepts stops after max_entries.
const LEGACY_DEF_MIN_LEN: usize = 16;
/// `.bss` has no bytes in the file, so its size is bounded here rather than by the input: a corrupt header must not
/// make us allocate gigabytes. Far above what a BPF program's globals use.
const MAX_GLOBAL_SECTION: u64 = 64 << 20;

/// All maps of an object and how relocations find them.
pub(crate) struct MapTable {
    /// Maps in index order.
    pub specs: Vec<MapSpec>,
    /// User maps by (section index, offset in section).
    user: HashMap<(usize, u64), usize>,
    /// Global-data maps by section index.
    global: HashMap<usize, usize>,
}

impl MapTable {
    /// Index of the user map defined at `offset` in `section`.
    pub fn user_map(&self, section: usize, offset: u64) -> Option<usize> {
        self.user.get(&(section, offset)).copied()
    }

    /// Index of the global-data map of `section`.
    pub fn global_map(&self, section: usize) -> Option<usize> {
        self.global.get(&section).copied()
    }

    /// Reads every map: user maps in symbol order, then global-data maps in section order.
    pub fn collect(
        elf: &Elf<'_>,
        btf: Option<&Result<Btf<'_>, ObjectError>>,
    ) -> Result<Self, ObjectError> {
        let mut table = MapTable {
            specs: Vec::new(),
            user: HashMap::new(),
            global: HashMap::new(),
        };
        for (index, section) in elf.sections.iter().enumerate() {
            if section.name == "maps" && !section.relocations.is_empty() {
                return Err(ObjectError::BadMap {
                    map: elf.symbol_name(section.relocations[0].symbol),
                    reason: format!(
                        "relocations in legacy section {index} (maps) are not supported: libbpf 1.x reads no legacy map definitions"
                    ),
                });
            }
        }
        // Outer maps of .maps: map index -> (start, end, offset of values) of their definition.
        let mut values_at = HashMap::new();
        let mut vars = None;
        for sym in &elf.symbols {
            let Some(sec_index) = sym.section else {
                continue;
            };
            if sym.name.is_empty() || sym.kind == elf::STT_SECTION || sym.kind == elf::STT_FILE {
                continue;
            }
            let Some(section) = elf.sections.get(sec_index) else {
                continue;
            };
            let spec = match section.name.as_str() {
                ".maps" => {
                    let (spec, size) = btf_map(&sym.name, btf, &mut vars)?;
                    if spec.outer.is_some() {
                        let end = sym.value + sym.size.max(u64::from(size));
                        values_at.insert(table.specs.len(), (sym.value, end, u64::from(size)));
                    }
                    spec
                }
                "maps" => legacy_map(&sym.name, section, sym.value, sym.size)?,
                _ => continue,
            };
            table.user.insert((sec_index, sym.value), table.specs.len());
            table.specs.push(spec);
        }
        outer_initializers(elf, &mut table, &values_at)?;
        for (index, section) in elf.sections.iter().enumerate() {
            if let Some(spec) = global_map(section)? {
                table.global.insert(index, table.specs.len());
                table.specs.push(spec);
            }
        }
        Ok(table)
    }
}

fn bad_map(map: &str, reason: impl Into<String>) -> ObjectError {
    ObjectError::BadMap {
        map: map.to_string(),
        reason: reason.into(),
    }
}

/// `.data`, `.rodata`, `.bss` and their `.name.suffix` variants, as libbpf recognises them.
fn is_global_section(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

fn global_map(section: &Section<'_>) -> Result<Option<MapSpec>, ObjectError> {
    let name = section.name.as_str();
    let allocated = section.flags & u64::from(elf::SHF_ALLOC) != 0;
    if !allocated || section.size == 0 {
        return Ok(None);
    }
    if section.size > MAX_GLOBAL_SECTION {
        return Err(bad_map(
            name,
            format!(
                "section of {} bytes exceeds {MAX_GLOBAL_SECTION}",
                section.size
            ),
        ));
    }
    let (initial, map_flags) = if is_global_section(name, ".bss") && section.kind == elf::SHT_NOBITS
    {
        let len = usize::try_from(section.size).map_err(|_| bad_map(name, "section too large"))?;
        (vec![0; len], 0)
    } else if section.kind != elf::SHT_PROGBITS {
        return Ok(None);
    } else if is_global_section(name, ".data") {
        (section.data.to_vec(), 0)
    } else if is_global_section(name, ".rodata") {
        (section.data.to_vec(), BPF_F_RDONLY_PROG)
    } else {
        return Ok(None);
    };
    let value_size =
        u32::try_from(initial.len()).map_err(|_| bad_map(name, "section too large"))?;
    if u64::from(value_size) != section.size {
        return Err(bad_map(name, "section data is shorter than its size"));
    }
    Ok(Some(MapSpec {
        name: name.to_string(),
        map_type: BPF_MAP_TYPE_ARRAY,
        key_size: 4,
        value_size,
        max_entries: 1,
        map_flags,
        kind: MapKind::Global,
        initial_value: Some(initial),
        outer: None,
    }))
}

fn legacy_map(
    name: &str,
    section: &Section<'_>,
    offset: u64,
    size: u64,
) -> Result<MapSpec, ObjectError> {
    let start = usize::try_from(offset).map_err(|_| bad_map(name, "definition out of bounds"))?;
    let len = usize::try_from(size).map_err(|_| bad_map(name, "definition out of bounds"))?;
    let def = start
        .checked_add(len)
        .and_then(|end| section.data.get(start..end))
        .ok_or_else(|| bad_map(name, "definition out of bounds of section maps"))?;
    if def.len() < LEGACY_DEF_MIN_LEN {
        return Err(bad_map(
            name,
            format!("struct bpf_map_def of {} bytes is too short", def.len()),
        ));
    }
    let mut fields = [0u32; LEGACY_DEF_FIELDS];
    for (i, field) in fields.iter_mut().enumerate() {
        *field = u32_at(def, i * 4).unwrap_or(0);
    }
    let [map_type, key_size, value_size, max_entries, map_flags] = fields;
    Ok(MapSpec {
        name: name.to_string(),
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags,
        kind: MapKind::Legacy,
        initial_value: None,
        outer: None,
    })
}

/// `__uint(name, N)` is `int (*name)[N]`: N is the array length behind the pointer.
fn uint_field(btf: &Btf<'_>, map: &str, field: &str, type_id: u32) -> Result<u32, ObjectError> {
    let not_uint = || bad_map(map, format!("field {field} is not declared with __uint"));
    let BtfType::Ptr { target } = btf.get(btf.resolve(type_id)?)? else {
        return Err(not_uint());
    };
    match btf.get(btf.resolve(*target)?)? {
        BtfType::Array { nelems, .. } => Ok(*nelems),
        _ => Err(not_uint()),
    }
}

/// `__type(name, T)` is `T *name`: the size of T.
fn type_field_size(
    btf: &Btf<'_>,
    map: &str,
    field: &str,
    type_id: u32,
) -> Result<u32, ObjectError> {
    let BtfType::Ptr { target } = btf.get(btf.resolve(type_id)?)? else {
        return Err(bad_map(
            map,
            format!("field {field} is not declared with __type"),
        ));
    };
    let size = btf.size_of(*target)?;
    u32::try_from(size)
        .map_err(|_| bad_map(map, format!("{field} type of {size} bytes is too large")))
}

/// The variables of the `.maps` datasec by name, with their definition types (the first of each name).
type MapVars = HashMap<String, u32>;

fn map_vars(btf: &Btf<'_>) -> Result<Option<MapVars>, ObjectError> {
    let Some(entries) = btf.datasec(".maps")? else {
        return Ok(None);
    };
    let mut vars = HashMap::with_capacity(entries.len());
    for entry in entries {
        if let BtfType::Var { name_off, target } = btf.get(entry.type_id)? {
            vars.entry(btf.name(*name_off)?.to_string())
                .or_insert(*target);
        }
    }
    Ok(Some(vars))
}

/// The map of `.maps` symbol `name`; `vars` caches [`map_vars`] across the maps of an object.
fn btf_map(
    name: &str,
    btf: Option<&Result<Btf<'_>, ObjectError>>,
    vars: &mut Option<Option<MapVars>>,
) -> Result<(MapSpec, u32), ObjectError> {
    let btf = match btf {
        Some(Ok(btf)) => btf,
        Some(Err(e)) => return Err(bad_map(name, format!("cannot read .BTF: {e}"))),
        None => {
            return Err(bad_map(
                name,
                "no .BTF section to read .maps definitions from",
            ))
        }
    };
    if vars.is_none() {
        *vars = Some(map_vars(btf)?);
    }
    let entries = vars
        .as_ref()
        .and_then(Option::as_ref)
        .ok_or_else(|| bad_map(name, "no .maps datasec in .BTF"))?;
    let def_type = *entries
        .get(name)
        .ok_or_else(|| bad_map(name, "no variable of that name in the .maps datasec"))?;
    btf_definition(btf, name, def_type, true)
}

/// The map a BTF definition struct (`def_type`) declares, and its size (where the `values` initializers of an outer
/// map start). `outer_ok` is false for an inner map template, which cannot itself hold maps.
fn btf_definition(
    btf: &Btf<'_>,
    name: &str,
    def_type: u32,
    outer_ok: bool,
) -> Result<(MapSpec, u32), ObjectError> {
    let BtfType::Composite { members, size, .. } = btf.get(btf.resolve(def_type)?)? else {
        return Err(bad_map(name, "definition is not a struct"));
    };
    let mut spec = MapSpec::new(name, 0, 0, 0, 0);
    for member in members {
        let field = btf.name(member.name_off)?;
        let ty = member.type_id;
        match field {
            "type" => spec.map_type = uint_field(btf, name, field, ty)?,
            "max_entries" => spec.max_entries = uint_field(btf, name, field, ty)?,
            "map_flags" => spec.map_flags = uint_field(btf, name, field, ty)?,
            "key_size" => spec.key_size = uint_field(btf, name, field, ty)?,
            "value_size" => spec.value_size = uint_field(btf, name, field, ty)?,
            "key" => spec.key_size = type_field_size(btf, name, field, ty)?,
            "value" => spec.value_size = type_field_size(btf, name, field, ty)?,
            // An outer map of maps holds inner map ids; `__array(values, struct inner)` is its template.
            "values" if outer_ok => {
                spec.value_size = 4;
                let template = inner_template(btf, name, ty)?;
                spec.outer = Some(Box::new(OuterMap {
                    template,
                    init: Vec::new(),
                }));
            }
            "values" => {
                return Err(bad_map(
                    name,
                    "an inner map template cannot itself hold maps",
                ))
            }
            "pinning" | "numa_node" | "map_extra" => {
                uint_field(btf, name, field, ty)?;
            }
            other => return Err(bad_map(name, format!("unknown field {other}"))),
        }
    }
    if spec.outer.is_some() && !matches!(spec.map_type, ARRAY_OF_MAPS | HASH_OF_MAPS) {
        return Err(bad_map(
            name,
            "only ARRAY_OF_MAPS and HASH_OF_MAPS take __array(values, ...)",
        ));
    }
    Ok((spec, *size))
}

/// `__array(values, struct inner)` is `struct inner *values[]`: the map that struct declares, named as libbpf
/// names inner map templates (`outer.inner`).
fn inner_template(btf: &Btf<'_>, outer: &str, type_id: u32) -> Result<MapSpec, ObjectError> {
    let not_array = || bad_map(outer, "field values is not declared with __array");
    let BtfType::Array { elem, .. } = btf.get(btf.resolve(type_id)?)? else {
        return Err(not_array());
    };
    let BtfType::Ptr { target } = btf.get(btf.resolve(*elem)?)? else {
        return Err(not_array());
    };
    let (template, _) = btf_definition(btf, &format!("{outer}.inner"), *target, false)?;
    Ok(template)
}

/// Puts the `.values = { [i] = &inner }` initializers (relocations in `.maps`) into their outer maps.
fn outer_initializers(
    elf: &Elf<'_>,
    table: &mut MapTable,
    values_at: &HashMap<usize, (u64, u64, u64)>,
    // (start, end, offset of values) of each outer map's definition in .maps, by map index.
) -> Result<(), ObjectError> {
    // (start, end, offset of values, map index) by start, for a binary search per relocation.
    let mut ranges: Vec<(u64, u64, u64, usize)> = values_at
        .iter()
        .map(|(&map, &(start, end, values))| (start, end, values, map))
        .collect();
    ranges.sort_unstable();
    for (section_index, section) in elf.sections.iter().enumerate() {
        if section.name != ".maps" {
            continue;
        }
        for r in &section.relocations {
            let target = elf.symbols.get(r.symbol);
            let target_name = elf.symbol_name(r.symbol);
            // The definition starting last at or before the offset, if the offset is inside it.
            let after = ranges.partition_point(|&(start, ..)| start <= r.offset);
            let (start, _, values, outer) = after
                .checked_sub(1)
                .map(|i| ranges[i])
                .filter(|&(_, end, ..)| r.offset < end)
                .ok_or_else(|| {
                    bad_map(
                        &target_name,
                        "a relocation in .maps outside any map definition",
                    )
                })?;
            let outer_name = table.specs[outer].name.clone();
            if r.offset < start + values || (r.offset - start - values) % 8 != 0 {
                return Err(bad_map(
                    &outer_name,
                    format!(
                        "a relocation at offset {} is not an element of values",
                        r.offset - start
                    ),
                ));
            }
            let slot = u32::try_from((r.offset - start - values) / 8)
                .map_err(|_| bad_map(&outer_name, "values initializer beyond 2^32"))?;
            let inner = target
                .and_then(|t| t.section.map(|s| (s, t.value)))
                .filter(|(s, _)| *s == section_index)
                .and_then(|(s, v)| table.user_map(s, v))
                .ok_or_else(|| {
                    bad_map(
                        &outer_name,
                        format!("values[{slot}] = {target_name} is not a map of .maps"),
                    )
                })?;
            match table.specs[outer].outer.as_mut() {
                Some(o) => o.init.push((slot, inner)),
                None => {
                    return Err(bad_map(
                        &outer_name,
                        "values initializers in a map that is not a map of maps",
                    ))
                }
            }
        }
    }
    Ok(())
}
