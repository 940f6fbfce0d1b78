//! The loader (`hwxdp compile --target ebpflow`): an object's XDP programs as the image of the engines' shared
//! instruction memory, the coprocessor's map table and a report.
//!
//! The image is `[prologue][entry program][other XDP programs]`, 8 bytes a slot (an `lddw` takes two). Relocations:
//! `lddw rX, map` becomes `lddw rX, m` with `m` the map's index in the map table (the number the coprocessor takes in
//! r1), `lddw rX, &global + off` the map-value window's address of that global ([`MAPV_BASE`] + (`m` << 20) +
//! `off`). The engine starts with r1 = the frame's address (`BASE` + 32), r2 = its length and r10 = the top of the
//! first stack frame (docs/ebpflow.md); the program's context pointer is that same r1, and each load of a `struct
//! xdp_md` field becomes a load of a word of the metadata header, which the DM_FIFO fills at the packet's first beat
//! (`ebpflow_dm_fifo.sv`, from the length and the input port):
//!
//! | field | header bytes |
//! | --- | --- |
//! | `data` | 16..19 |
//! | `data_end` | 20..23 |
//! | `data_meta` | 24..27 (equal to `data`: the frame has no metadata area) |
//! | `ingress_ifindex` | 28..31 (`ifindex_base_i` + the input port, byte 0; [`IFINDEX_BASE`] on the conformance top) |
//! | `rx_queue_index` | byte 1 (the source queue), a one-byte load |
//!
//! so the program keeps its length and its jumps and calls their offsets. The image has no prologue any more (its
//! stores of those words from r1 and r2 cost every packet up to 7 cycles): [`Image::prologue`] is 0.

use hwxdp_analysis::{MemRegion, ProgramCfg, Regions};
use hwxdp_ebpf::{Insn, LD_DW_IMM, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use serde::Serialize;

/// The data memory's address in the engine's address space (`ebpflow_core`'s `BASE`).
pub const BASE: u64 = 0x1_0000;
/// The frame's address: after the 32-byte metadata header.
pub const FRAME: u64 = BASE + 32;
/// The map-value window: map `m`'s values start at `MAPV_BASE + (m << 20)`.
pub const MAPV_BASE: u64 = 0x0100_0000;
/// Bytes of the window each map has.
pub const MAPV_SPAN: u64 = 1 << 20;
/// `ingress_ifindex` of input port `p` is `IFINDEX_BASE + p`.
pub const IFINDEX_BASE: u32 = 1;
/// Slots of the instruction memory (`ebpflow_conformance`'s `IW` = 12).
pub const IMEM_SLOTS: usize = 4096;
/// Maps the coprocessor's map table holds.
pub const MAX_MAPS: usize = 16;

/// Why an object cannot be loaded onto the engines.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No program of that name.
    #[error("no program {0:?} in the object")]
    NoProgram(String),
    /// The region analysis failed.
    #[error("{program}: {message}")]
    Analysis {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// A context access the engine's header cannot stand in for.
    #[error("{program}, slot {slot}: {what}: the eBPFlow engine has no struct xdp_md, only the fields data, data_end, data_meta, ingress_ifindex and rx_queue_index read with a 4-byte load")]
    Context {
        /// The program.
        program: String,
        /// The slot.
        slot: usize,
        /// The access.
        what: String,
    },
    /// An instruction the engines cannot run.
    #[error("{program}, slot {slot}: {what}: the eBPFlow engines cannot run it")]
    Unsupported {
        /// The program.
        program: String,
        /// The slot.
        slot: usize,
        /// The instruction.
        what: String,
    },
    /// The image does not fit the instruction memory.
    #[error("the image needs {need} slots, the instruction memory holds {IMEM_SLOTS}")]
    TooBig {
        /// Slots needed.
        need: usize,
    },
    /// Too many maps for the coprocessor's map table.
    #[error("{count} maps, the coprocessor's map table holds {MAX_MAPS}")]
    TooManyMaps {
        /// The object's maps.
        count: usize,
    },
    /// A map's values do not fit its part of the map-value window.
    #[error("map {name}: {entries} values of {value_size} bytes do not fit the 1 MiB map-value window of a map")]
    Window {
        /// The map.
        name: String,
        /// Its entries.
        entries: u32,
        /// Its value size.
        value_size: u32,
    },
}

/// One line of the coprocessor's map table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MapEntry {
    /// The map's name in the object.
    pub name: String,
    /// `enum bpf_map_type`.
    pub map_type: u32,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Entries.
    pub max_entries: u32,
    /// `map_flags`.
    pub flags: u32,
    /// Where its values start in the engines' address space.
    pub window: u64,
    /// Bytes from one entry's value to the next (the value size rounded up to 8).
    pub stride: u32,
}

/// A program's place in the image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placed {
    /// The function name.
    pub name: String,
    /// Its index in the object.
    pub index: usize,
    /// The image slot of its slot 0.
    pub start: usize,
    /// Its slots.
    pub slots: usize,
}

/// The instruction memory's contents, the map table and what the loader did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Image {
    /// The slots, 8 bytes each, as the instruction memory holds them.
    #[serde(skip)]
    pub slots: Vec<u64>,
    /// Slots of the prologue, at the start of the image: 0 (the DM_FIFO writes the context words itself).
    pub prologue: usize,
    /// The programs, the entry first.
    pub programs: Vec<Placed>,
    /// The map table.
    pub maps: Vec<MapEntry>,
    /// Map references relocated.
    pub map_relocations: usize,
    /// Context loads turned into header loads.
    pub context_loads: usize,
    /// Helper ids the programs call, sorted.
    pub helpers: Vec<i64>,
}

impl Image {
    /// The image slot of `slot` of the object's program `program`, if the image holds it.
    pub fn slot_of(&self, program: usize, slot: u32) -> Option<usize> {
        let p = self.programs.iter().find(|p| p.index == program)?;
        Some(p.start + slot as usize)
    }

    /// The image as bytes, little-endian, 8 a slot.
    pub fn bytes(&self) -> Vec<u8> {
        self.slots.iter().flat_map(|s| s.to_le_bytes()).collect()
    }
}

/// The header byte a context field is read from, and the load's size code.
fn header_field(field: i64) -> Option<(i64, u8)> {
    Some(match field {
        0 => (16, hwxdp_ebpf::SIZE_W),
        4 => (20, hwxdp_ebpf::SIZE_W),
        8 => (24, hwxdp_ebpf::SIZE_W),
        12 => (28, hwxdp_ebpf::SIZE_W),
        16 => (1, hwxdp_ebpf::SIZE_B),
        _ => return None,
    })
}

/// Loads program `entry` of `spec` (and every other XDP program, which tail calls may reach).
pub fn load(spec: &ObjectSpec, entry: &str) -> Result<Image, LoadError> {
    let first = spec
        .programs
        .iter()
        .position(|p| p.name == entry)
        .ok_or_else(|| LoadError::NoProgram(entry.to_string()))?;
    if spec.maps.len() > MAX_MAPS {
        return Err(LoadError::TooManyMaps {
            count: spec.maps.len(),
        });
    }
    let maps = map_table(spec)?;
    let mut order = vec![first];
    order.extend(
        (0..spec.programs.len())
            .filter(|&i| i != first && spec.programs[i].section.starts_with("xdp")),
    );
    let mut bodies = Vec::new();
    let (mut relocations, mut context_loads) = (0, 0);
    let mut helpers = Vec::new();
    for &i in &order {
        let p = &spec.programs[i];
        let body = relocate(p, &maps)?;
        relocations += body.relocations;
        context_loads += body.context_loads;
        helpers.extend(body.helpers.iter().copied());
        bodies.push(body.insns);
    }
    helpers.sort_unstable();
    helpers.dedup();
    let mut insns = Vec::new();
    let mut programs = Vec::new();
    let prologue_slots = 0;
    let mut at = prologue_slots;
    for (k, body) in bodies.into_iter().enumerate() {
        let n = slots(&body);
        programs.push(Placed {
            name: spec.programs[order[k]].name.clone(),
            index: order[k],
            start: at,
            slots: n,
        });
        at += n;
        insns.extend(body);
    }
    if at > IMEM_SLOTS {
        return Err(LoadError::TooBig { need: at });
    }
    let bytes = hwxdp_ebpf::encode(&insns);
    let slots = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(Image {
        slots,
        prologue: prologue_slots,
        programs,
        maps,
        map_relocations: relocations,
        context_loads,
        helpers,
    })
}

fn slots(insns: &[Insn]) -> usize {
    insns.iter().map(Insn::slots).sum()
}

fn map_table(spec: &ObjectSpec) -> Result<Vec<MapEntry>, LoadError> {
    spec.maps
        .iter()
        .enumerate()
        .map(|(m, s)| {
            let stride = s.value_size.div_ceil(8) * 8;
            if u64::from(stride) * u64::from(s.max_entries) > MAPV_SPAN {
                return Err(LoadError::Window {
                    name: s.name.clone(),
                    entries: s.max_entries,
                    value_size: s.value_size,
                });
            }
            Ok(MapEntry {
                name: s.name.clone(),
                map_type: s.map_type,
                key_size: s.key_size,
                value_size: s.value_size,
                max_entries: s.max_entries,
                flags: s.map_flags,
                window: MAPV_BASE + ((m as u64) << 20),
                stride,
            })
        })
        .collect()
}

struct Body {
    insns: Vec<Insn>,
    relocations: usize,
    context_loads: usize,
    helpers: Vec<i64>,
}

fn relocate(p: &ProgramSpec, maps: &[MapEntry]) -> Result<Body, LoadError> {
    let analysis = |message: String| LoadError::Analysis {
        program: p.name.clone(),
        message,
    };
    let cfg = ProgramCfg::build(p).map_err(|e| analysis(e.to_string()))?;
    let regions = Regions::compute(&cfg, &[]);
    let slot_at = hwxdp_ebpf::slot_offsets(&p.insns);
    let mut body = Body {
        insns: Vec::with_capacity(p.insns.len()),
        relocations: 0,
        context_loads: 0,
        helpers: Vec::new(),
    };
    for (k, insn) in p.insns.iter().enumerate() {
        let mut out = *insn;
        if insn.code == LD_DW_IMM && insn.src == PSEUDO_MAP_FD {
            out.src = 0;
            out.imm &= 0xffff_ffff;
            body.relocations += 1;
        } else if insn.code == LD_DW_IMM && insn.src == PSEUDO_MAP_VALUE {
            let m = (insn.imm & 0xffff_ffff) as usize;
            let base = maps.get(m).map_or(MAPV_BASE, |e| e.window);
            out.src = 0;
            out.imm = (base + (insn.imm as u64 >> 32)) as i64;
            body.relocations += 1;
        } else if insn.code == LD_DW_IMM && insn.src != 0 {
            return Err(unsupported(
                p,
                slot_at[k],
                format!(
                    "lddw with src {} (only map references are relocated)",
                    insn.src
                ),
            ));
        } else if insn.code == hwxdp_ebpf::CLASS_JMP | hwxdp_ebpf::JMP_CALL && insn.src == 0 {
            let id = insn.imm as i32;
            if hwxdp_xdp::helpers::helper_name(id).is_none() {
                return Err(unsupported(
                    p,
                    slot_at[k],
                    format!("call of helper {id}, which the coprocessor does not provide"),
                ));
            }
            body.helpers.push(insn.imm);
        } else if insn.code == hwxdp_ebpf::CLASS_JMP | hwxdp_ebpf::JMP_CALL
            && insn.src == hwxdp_ebpf::PSEUDO_KFUNC_CALL
        {
            return Err(unsupported(
                p,
                slot_at[k],
                format!("call of kernel function (BTF id {})", insn.imm),
            ));
        } else if insn.code == hwxdp_ebpf::CLASS_JMP | hwxdp_ebpf::JMP_CALL | hwxdp_ebpf::SRC_X {
            return Err(unsupported(
                p,
                slot_at[k],
                "callx (a helper chosen at run time)".into(),
            ));
        }
        if let Some(MemRegion::Context { offset }) = regions.label(hwxdp_analysis::InsnId(k as u32))
        {
            let bad = |what: String| LoadError::Context {
                program: p.name.clone(),
                slot: slot_at[k],
                what,
            };
            let is_ldxw =
                insn.code == hwxdp_ebpf::CLASS_LDX | hwxdp_ebpf::MODE_MEM | hwxdp_ebpf::SIZE_W;
            if !is_ldxw {
                return Err(bad(format!("a {:#04x} access to the context", insn.code)));
            }
            let field = offset.ok_or_else(|| bad("a context load at an unknown offset".into()))?;
            let (hdr, size) = header_field(field)
                .ok_or_else(|| bad(format!("context field at offset {field}")))?;
            let off = i64::from(insn.off) + hdr - 32 - field;
            out.code = hwxdp_ebpf::CLASS_LDX | hwxdp_ebpf::MODE_MEM | size;
            out.off = off as i16;
            body.context_loads += 1;
        }
        body.insns.push(out);
    }
    Ok(body)
}

fn unsupported(p: &ProgramSpec, slot: usize, what: String) -> LoadError {
    LoadError::Unsupported {
        program: p.name.clone(),
        slot,
        what,
    }
}
