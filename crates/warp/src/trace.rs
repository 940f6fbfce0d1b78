//! The equivalence trace of a warped program (appendix D): the rules in the packet terms of `hwxdp_gen::warp`, which
//! solves each entry for frames that hit it (`hwxdp gen --warp`).

use crate::{Params, Warp, WarpError};
use hwxdp_gen::warp::{self, ByteMatch, EntrySpec, RuleSpec, WarpPacket, WarpTraceOptions};
use hwxdp_gen::Workload;
use hwxdp_object::{ObjectSpec, ProgramSpec};

/// The rules of `warp` as `hwxdp_gen::warp` takes them, in priority order.
pub fn rule_specs(warp: &Warp) -> Vec<RuleSpec> {
    warp.rules
        .iter()
        .map(|r| RuleSpec {
            entries: r
                .matches
                .iter()
                .map(|m| EntrySpec {
                    bytes: m
                        .fields
                        .iter()
                        .flat_map(|f| {
                            let (value, mask) = (unhex(&f.value), unhex(&f.mask));
                            (0..f.length).map(move |i| ByteMatch {
                                offset: f.offset + i,
                                value: value[i as usize],
                                mask: mask[i as usize],
                            })
                        })
                        .collect(),
                    length: m.length,
                })
                .collect(),
            resumes: matches!(r.action, crate::Action::Restore(_)),
        })
        .collect()
}

/// Bytes of a `0x`-prefixed hex string (as a rule's field matches hold them).
fn unhex(h: &str) -> Vec<u8> {
    let h = h.trim_start_matches("0x");
    (0..h.len() / 2)
        .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

/// The equivalence trace of `warp`: frames hitting every rule (restore rules' laid over `bases` too), then frames
/// no rule matches; `Err` names a rule no frame can hit.
pub fn equivalence_trace(
    warp: &Warp,
    bases: &[Vec<u8>],
    options: &WarpTraceOptions,
    seed: u64,
) -> Result<Vec<WarpPacket>, warp::Unreachable> {
    warp::warp_trace(&rule_specs(warp), bases, options, seed)
}

/// Replaces `workload`'s packets by the equivalence trace of `program`'s rules for the engine `params`, its own
/// packets the bases; the preloads stay (they are the map states the laid-over frames hit). Returns how many
/// packets hit rules and how many match none.
pub fn warp_workload(
    spec: &ObjectSpec,
    program: &ProgramSpec,
    params: &Params,
    workload: &mut Workload,
    seed: u64,
) -> Result<(usize, usize), WarpError> {
    let warp = crate::optimize_program(program, &spec.maps, params)?;
    let trace = equivalence_trace(&warp, &workload.packets, &WarpTraceOptions::default(), seed)?;
    let unmatched = trace.iter().filter(|p| p.rule.is_none()).count();
    workload.packets = trace.into_iter().map(|p| p.bytes).collect();
    workload.description = format!(
        "equivalence trace of {}'s {} Warp Engine rules ({} TCAM entries): frames hitting each rule and no \
         higher-priority one (restore rules' also laid over the program's own trace, for the map states its \
         preloads give, and each sent twice), then {unmatched} frames no rule matches",
        program.name, warp.report.rules, warp.report.tcam_entries
    );
    Ok((workload.packets.len() - unmatched, unmatched))
}
