//! LRU_HASH maps and deletes: the multi-cycle operations of `ehdl_hash_map` and how the pipeline waits for them.
//!
//! An LRU block's updates and deletes walk the kernel's LRU lists one node per cycle (`ehdl_lru`), one operation at
//! a time. The port's request is its predicate while its stage could move but for the block (the advance and every
//! stall check at or after its stage); the block's busy signal then holds the stage (and every younger packet, like
//! a stall check) until the outcome is there, and the stage's move commits it. Every such op gets a pseudo stall
//! check (early = late, no wire of its own) so that the pipeline advances per register. Lookups of an LRU map mark
//! the entry referenced, which changes later evictions: they are writes of the CAM for the hazard check.

use super::helpers::Call;
use super::maps::{is_cam, Stall};
use super::stage::Gen;
use super::VerilogError;
use crate::ir::{ArgConst, OpKind, Pipeline};
use hwxdp_object::MapSpec;
use std::fmt::Write as _;

/// `BPF_MAP_TYPE_LRU_HASH`, `BPF_MAP_TYPE_LRU_PERCPU_HASH`.
const MAP_TYPE_LRU_HASH: u32 = 9;
const MAP_TYPE_LRU_PERCPU_HASH: u32 = 10;
/// `BPF_F_NO_COMMON_LRU`: the per-CPU LRU lists, not built.
const NO_COMMON_LRU: u32 = 1 << 1;

/// An LRU hash map (per-CPU values as their one copy: the pipeline is one CPU).
pub(super) fn is_lru(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_LRU_HASH || spec.map_type == MAP_TYPE_LRU_PERCPU_HASH
}

/// `BPF_MAP_TYPE_LRU_PERCPU_HASH`.
pub(super) fn is_lru_percpu(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_LRU_PERCPU_HASH
}

/// Whether `spec`'s block takes the module's possible CPUs (an LRU_HASH: its eviction batch depends on them).
pub(super) fn sized_by_cpus(spec: &MapSpec) -> bool {
    is_lru(spec) && !is_lru_percpu(spec)
}

/// Why an LRU block cannot be built for `spec`, if it cannot.
pub(super) fn misfit(spec: &MapSpec) -> Option<String> {
    (is_lru(spec) && spec.map_flags & NO_COMMON_LRU != 0).then(|| {
        "BPF_F_NO_COMMON_LRU (per-CPU LRU lists); the LRU block builds the common LRU".to_string()
    })
}

/// The map of a map helper op whose CAM block takes several cycles for it: updates and deletes of LRU maps.
fn lru_op_map(maps: &[MapSpec], op: &crate::ir::Op) -> Option<u32> {
    let OpKind::Helper { id: 2 | 3, .. } = &op.kind else {
        return None;
    };
    let m = op.map_arg()?;
    maps.get(m as usize).filter(|s| is_lru(s)).map(|_| m)
}

/// Pseudo stall checks (early = late) for the LRU updates and deletes, which need the per-register advance.
pub(super) fn pseudo_stalls(p: &Pipeline, maps: &[MapSpec]) -> Vec<Stall> {
    p.ops
        .iter()
        .filter(|o| lru_op_map(maps, o).is_some())
        .map(|o| Stall {
            early: o.id,
            late: o.id,
            e: o.stage,
            l: o.stage,
        })
        .collect()
}

/// A CAM helper's map access for the hazard check: `(map, writes)` for lookups, updates and deletes of CAM maps;
/// an LRU lookup writes (its reference bit).
pub(super) fn cam_access(maps: &[MapSpec], op: &crate::ir::Op) -> Option<(u32, bool)> {
    let OpKind::Helper {
        id: id @ (1..=3), ..
    } = &op.kind
    else {
        return None;
    };
    let m = op.map_arg()?;
    let spec = maps.get(m as usize).filter(|s| is_cam(s))?;
    Some((m, *id != 1 || is_lru(spec)))
}

impl Gen<'_> {
    /// The request and busy wires of an LRU update or delete at `stage`: the request is `en` while the stage could
    /// move but for the block (its `go` without the busy holds, assigned by [`Gen::busy_holds`]).
    pub(super) fn lru_wires(&mut self, name: &str, en: &str, stage: u32) -> (String, String) {
        let (req, busy, free) = (
            format!("{name}_req"),
            format!("{name}_busy"),
            format!("{name}_free"),
        );
        self.declare(&req, 1);
        self.declare(&busy, 1);
        self.declare(&free, 1);
        let _ = writeln!(self.body, "  assign {req} = {en} & {free};");
        self.read(&busy);
        self.lru_ops.push((stage, free, busy.clone()));
        (req, busy)
    }

    /// Called by the stall logic before it forms `go`: each LRU op's `free` (the advance and the stall checks at
    /// or after its stage), then its busy signal joins the holds.
    pub(super) fn busy_holds(&mut self, holds: &mut Vec<(u32, String)>, s: &mut String) {
        let ops = std::mem::take(&mut self.lru_ops);
        for (e, free, _) in &ops {
            let h: Vec<&str> = holds
                .iter()
                .filter(|(st, _)| st >= e)
                .map(|(_, w)| w.as_str())
                .collect();
            if h.is_empty() {
                let _ = writeln!(s, "  assign {free} = adv;");
            } else {
                let _ = writeln!(s, "  assign {free} = adv & ~({});", h.join(" | "));
            }
        }
        holds.extend(ops.into_iter().map(|(e, _, busy)| (e, busy)));
    }

    /// `bpf_map_delete_elem(map, key)` (3) with a constant map and key pointer on a HASH or LRU map: a delete port on
    /// the map's CAM; R0 = 0 or -ENOENT.
    pub(super) fn map_delete(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let [Some(ArgConst::Map(m)), Some(ArgConst::Stack(ko)), ..] = cx.args() else {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {} with a map or key pointer known only at run time",
                    cx.helper_label()
                ),
            ));
        };
        let spec = self.maps.get(m as usize);
        let hashed = spec.is_some_and(|s| is_cam(s) && !super::maps::is_lpm(s));
        if !self.arrays.contains(&m) || !hashed {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {} on map {} (only HASH and LRU_HASH maps take deletes)",
                    cx.helper_label(),
                    spec.map_or("?", |s| s.name.as_str())
                ),
            ));
        }
        let spec = &self.maps[m as usize];
        let kb = spec.key_size as i64;
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let key = self.stack_bytes(cx.b, ko, kb);
        let (hit, slot, err) = self.cam_write_port(op, name, m, &en, key, (0, true));
        self.unused_ports.push(hit);
        self.unused_ports.push(slot);
        self.set_r0_errno(cx, &en, err, "-ENOENT");
        Ok(())
    }
}
