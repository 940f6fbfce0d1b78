//! Appendix D's equivalence check: a trace run plainly on the reference machine and through the engine (the rest
//! on a second reference machine), compared packet by packet: verdicts, packet bytes, redirects, faults, ring buffer
//! records and maps.

use crate::{Engine, Warp, WarpError};
use hwxdp_maps::json::{self, MapsFile};
use hwxdp_object::ObjectSpec;
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use serde::Serialize;

/// One packet of a trace: arrival time (ns), bytes, metadata.
#[derive(Clone, Debug)]
pub struct TracePacket {
    /// Arrival time, for the virtual clock.
    pub time: u64,
    /// The frame.
    pub bytes: Vec<u8>,
    /// What it arrives with.
    pub md: XdpMd,
}

/// One packet's figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PacketFigures {
    /// The rule that matched.
    pub rule: Option<usize>,
    /// The plain run's path hash.
    pub path: u64,
    /// The plain run's return value.
    pub retval: u32,
    /// Instructions of the plain run.
    pub plain: u64,
    /// Instructions the processor ran with warping.
    pub warped: u64,
}

/// The first difference between the two runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// Packet index.
    pub packet: usize,
    /// What differs, with both values.
    pub what: String,
}

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Per packet, up to the first difference.
    pub packets: Vec<PacketFigures>,
    /// The first difference; `None` when the runs are identical.
    pub difference: Option<Difference>,
}

/// Runs `packets` through program `program` of `spec` plainly and warped by `warp`, both machines made with
/// `config` and preloaded with `preload`; stops at the first difference.
pub fn compare_trace(
    spec: &ObjectSpec,
    program: &str,
    config: &Config,
    preload: Option<&MapsFile>,
    warp: &Warp,
    packets: &[TracePacket],
) -> Result<Comparison, WarpError> {
    let mut plain = Machine::new(spec, Some(program), config)?;
    let mut warped = Machine::new(spec, Some(program), config)?;
    if let Some(file) = preload {
        json::preload(plain.maps_mut(), file)?;
        json::preload(warped.maps_mut(), file)?;
    }
    let engine = Engine::new(warp);
    let rings: Vec<usize> = (0..spec.maps.len())
        .filter(|&m| spec.maps[m].map_type == hwxdp_maps::abi::map_type::RINGBUF)
        .collect();
    let mut out = Comparison {
        packets: Vec::with_capacity(packets.len()),
        difference: None,
    };
    for (n, p) in packets.iter().enumerate() {
        let buff = |bytes: &[u8]| {
            XdpBuff::new(bytes).map_err(|source| WarpError::Packet { packet: n, source })
        };
        let (mut a, mut b) = (buff(&p.bytes)?, buff(&p.bytes)?);
        plain.set_time(p.time);
        warped.set_time(p.time);
        let x = plain.run_packet(&mut a, &p.md);
        let y = engine
            .run(&mut warped, &mut b, &p.md)
            .map_err(|(rule, source)| WarpError::Resume {
                packet: n,
                rule,
                source,
            })?;
        out.packets.push(PacketFigures {
            rule: y.rule,
            path: x.path,
            retval: x.retval,
            plain: x.insns,
            warped: y.processor,
        });
        let o = &y.outcome;
        let what = if x.retval != o.retval {
            Some(format!(
                "return value {} plain, {} warped",
                x.retval, o.retval
            ))
        } else if a.output() != b.output() {
            Some("packet bytes".to_string())
        } else if x.redirect != o.redirect {
            Some(format!(
                "redirect {:?} plain, {:?} warped",
                x.redirect, o.redirect
            ))
        } else if x.fault.is_some() != o.fault.is_some() {
            Some(format!("fault {:?} plain, {:?} warped", x.fault, o.fault))
        } else if x.insns != o.insns {
            Some(format!(
                "instructions {} plain, {} warped (the rule's path is not the packet's)",
                x.insns, o.insns
            ))
        } else if records(&mut plain, &rings) != records(&mut warped, &rings) {
            Some("ring buffer records".to_string())
        } else if json::dump(plain.maps_mut())? != json::dump(warped.maps_mut())? {
            Some("maps".to_string())
        } else {
            None
        };
        if let Some(what) = what {
            out.difference = Some(Difference {
                packet: n,
                what: match y.rule {
                    Some(r) => format!("{what} (rule {r})"),
                    None => format!("{what} (no rule)"),
                },
            });
            break;
        }
    }
    Ok(out)
}

/// The records ring buffers `rings` received since the last call, consumed.
fn records(machine: &mut Machine, rings: &[usize]) -> Vec<Vec<Vec<u8>>> {
    rings
        .iter()
        .map(|&m| machine.maps_mut().ringbuf_drain(m))
        .collect()
}
