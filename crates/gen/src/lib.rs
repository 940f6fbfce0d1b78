//! Workload traces for XDP programs: packets that reach every path of our example programs (`examples/xdp/`), the map
//! entries those programs need, and a generic traffic mix for any other program. Everything is deterministic from a
//! seed, so the kernel, the reference machine and every hardware model see the same trace.
//!
//! An example's trace starts with its coverage sequence (every verdict, table hit and miss, parse branch, state
//! creation then use, the malformed frames) and is padded with random traffic of the same kind; a request for fewer
//! packets than the coverage sequence gets its first packets only.

pub mod dpi;
mod examples;
mod flows;
mod labeled;
mod malformed;
mod mix;
pub mod packet;
mod rng;
pub mod warp;

pub use flows::{flow_trace, FlowError, Popularity, MAX_FLOWS};
pub use rng::Rng;

use hwxdp_object::{ObjectSpec, ProgramSpec};
use thiserror::Error;

/// A trace and the map entries to load before running it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Frames, in the order to run them.
    pub packets: Vec<Vec<u8>>,
    /// Map entries to load before the first packet.
    pub preload: Vec<Preload>,
    /// What the trace exercises, in a sentence or two.
    pub description: String,
    /// The route table `bpf_fib_lookup` must see, as the JSON text of a `--routes` file (`docs/routes.md`); `None`
    /// when the program does not look routes up.
    pub routes: Option<String>,
}

/// One map entry to load before a trace. For per-CPU maps, `value` is one CPU's value, loaded on every CPU; for
/// PROG_ARRAY maps, `value` is a program's index in [`ObjectSpec::programs`] (little-endian `u32`), as
/// `hwxdp_maps::MapStore` shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preload {
    /// Name of the map in the object.
    pub map: String,
    /// Key bytes (`key_size` long).
    pub key: Vec<u8>,
    /// Value bytes (`value_size` long).
    pub value: Vec<u8>,
}

impl Preload {
    /// An entry of `map`.
    pub fn new(map: &str, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Preload {
            map: map.to_string(),
            key: key.into(),
            value: value.into(),
        }
    }
}

/// A workload does not fit the object it is meant for.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum GenError {
    /// The program is named like one of our examples but its object lacks a map the workload preloads.
    #[error("program {program}: map {map} not found in the object")]
    MissingMap {
        /// Program name.
        program: String,
        /// Map name.
        map: String,
    },
    /// A PROG_ARRAY preload names a program the object does not have.
    #[error("program {program}: tail-call target {target} not found in the object")]
    MissingProgram {
        /// Program name.
        program: String,
        /// The missing tail-call target.
        target: String,
    },
    /// A preload's key or value size differs from the map's.
    #[error(
        "program {program}: map {map}: {what} size is {expected} bytes, the preload has {found}"
    )]
    SizeMismatch {
        /// Program name.
        program: String,
        /// Map name.
        map: String,
        /// `key` or `value`.
        what: &'static str,
        /// Size the map declares.
        expected: u32,
        /// Size of the preload's bytes.
        found: usize,
    },
}

/// The workload for `program` of `spec`: our examples are recognised by program (function) name; any other program
/// gets the generic mix and no preload. The preloads are checked against the object's map definitions.
pub fn workload(
    spec: &ObjectSpec,
    program: &ProgramSpec,
    packets: usize,
    seed: u64,
) -> Result<Workload, GenError> {
    let Some(example) = examples::find(&program.name) else {
        return Ok(Workload {
            packets: generic_mix(packets, seed),
            preload: Vec::new(),
            description: "generic mix: IPv4/IPv6 TCP, UDP and ICMP, ARP, VLAN tags, IP options, IP-in-IP, other \
                          ethertypes, and truncated or malformed frames"
                .to_string(),
            routes: None,
        });
    };
    let mut preload = (example.preload)();
    for &(map, key, target) in example.program_slots {
        let Some(index) = spec.programs.iter().position(|p| p.name == target) else {
            return Err(GenError::MissingProgram {
                program: program.name.clone(),
                target: target.to_string(),
            });
        };
        preload.push(Preload::new(
            map,
            key.to_le_bytes(),
            (index as u32).to_le_bytes(),
        ));
    }
    check_preload(spec, &program.name, &preload)?;
    Ok(Workload {
        packets: examples::labeled(example, packets, seed)
            .into_iter()
            .map(|p| p.bytes)
            .collect(),
        preload,
        description: example.description.to_string(),
        routes: example.routes.map(str::to_string),
    })
}

/// `packets` frames of every common shape, one in eight truncated or malformed, deterministic from `seed`.
pub fn generic_mix(packets: usize, seed: u64) -> Vec<Vec<u8>> {
    mix::labeled_mix(packets, seed)
        .into_iter()
        .map(|p| p.bytes)
        .collect()
}

/// Names of the example programs with a dedicated workload.
pub fn example_programs() -> Vec<&'static str> {
    examples::ALL.iter().map(|e| e.name).collect()
}

fn check_preload(spec: &ObjectSpec, program: &str, preload: &[Preload]) -> Result<(), GenError> {
    for p in preload {
        let Some(map) = spec.maps.iter().find(|m| m.name == p.map) else {
            return Err(GenError::MissingMap {
                program: program.to_string(),
                map: p.map.clone(),
            });
        };
        let mismatch = |what, expected: u32, found: usize| GenError::SizeMismatch {
            program: program.to_string(),
            map: p.map.clone(),
            what,
            expected,
            found,
        };
        if p.key.len() != map.key_size as usize {
            return Err(mismatch("key", map.key_size, p.key.len()));
        }
        if p.value.len() != map.value_size as usize {
            return Err(mismatch("value", map.value_size, p.value.len()));
        }
    }
    Ok(())
}
