//! Stall checks that tell flows apart by key: a lookup in a HASH map (the early access) and an older packet's later
//! update or delete of the same map (the late access) touch the same entry only when their keys are equal. Both keys
//! are on the stack, so the check compares the younger packet's key bytes, as its lookup reads them, with the key
//! bytes each older packet in the window carries to its update; a younger packet then waits only for older packets
//! of its own flow, as the eHDL paper's flush evaluation does for per-flow state.
//!
//! A load, store or atomic through a value pointer (early) meets a later update of the map the same way when the
//! pointer came from one lookup and the program never deletes from the map: the pointer's slot holds the lookup's
//! key, and an update writes that slot only for that key, so the check compares the lookup's key, as the access's
//! stage still carries it, with the older packets' update keys.
//!
//! The same holds between an update of a HASH map (early) and an older packet's load, store or atomic through a
//! value pointer of that map (late), when the program never deletes from the map: a pointer comes from a lookup that
//! hit, and without deletes its slot keeps that key, so the update writes the older packet's value only if its key
//! sits in that slot. A probe port of the CAM (`ehdl_hash_map`) finds the younger packet's key before this cycle's
//! writes, apart from the ports whose enables the check itself holds; the check compares the slot's value bytes with
//! each older packet's address.
//!
//! Sound for plain HASH maps only: a lookup changes nothing, and an update or delete of another key changes neither
//! whether the lookup's key is present nor its slot. An LRU update may evict any entry, and an LPM lookup may match
//! another key's prefix, so their checks stay conservative; so do updates against updates (their order decides
//! which one a full map refuses). An older packet that may still rewrite its key before its update (an op on its
//! path between the boundary and the update, by the predicates it carries) is waited for whatever its key.

use super::maps::{is_hash, slot_width};
use super::stage::hex64;
use super::stage::Gen;
use crate::ir::{ArgConst, Label, Op, OpKind, Pipeline};
use std::fmt::Write as _;

/// The map and stack key offset of a CAM helper op `id` (1 lookup, 2 update, 3 delete) with constant arguments.
fn keyed_call(op: &Op, ids: &[i32]) -> Option<(u32, i64)> {
    let OpKind::Helper { id, consts, .. } = &op.kind else {
        return None;
    };
    if !ids.contains(id) {
        return None;
    }
    let map = op.map_arg()?;
    let key = consts.iter().find_map(|c| match c {
        (2, ArgConst::Stack(k)) => Some(*k),
        _ => None,
    })?;
    Some((map, key))
}

/// Whether an op may write stack bytes `[at, at + n)`: stores and atomics there (or at unknown offsets), and helpers
/// given a stack pointer, except the map helpers, which only read their key and value.
fn writes_stack(p: &Pipeline, op: &Op, at: i64, n: i64) -> bool {
    match &op.kind {
        OpKind::Store | OpKind::Atomic => match op.label {
            Label::Stack { offset: Some(o) } => {
                let size =
                    hwxdp_ebpf::kind(&p.insns[op.insn as usize])
                        .ok()
                        .map_or(8, |k| match k {
                            hwxdp_ebpf::InsnKind::Store { size, .. }
                            | hwxdp_ebpf::InsnKind::Atomic { size, .. } => size.bytes() as i64,
                            _ => 8,
                        });
                o < at + n && at < o + size
            }
            Label::Stack { offset: None } => true,
            _ => false,
        },
        OpKind::Helper { id, consts, .. } => {
            !matches!(id, 1..=3) && consts.iter().any(|(_, c)| matches!(c, ArgConst::Stack(_)))
        }
        _ => false,
    }
}

/// A probe port of a CAM block: the key it looks up and the wires of its result.
pub(super) struct Probe {
    pub(super) map: u32,
    pub(super) key: String,
    pub(super) hit: String,
    pub(super) slot: String,
}

/// Whether the program may delete from map `m` (a delete whose map is not known counts).
fn deletes_from(p: &Pipeline, m: u32) -> bool {
    p.ops.iter().any(|o| match &o.kind {
        OpKind::Helper { id: 3, consts, .. } => !consts
            .iter()
            .any(|c| matches!(c, (1, ArgConst::Map(x)) if *x != m)),
        _ => false,
    })
}

impl Gen<'_> {
    /// For a load, store or atomic `early` through a value pointer of a HASH map that one lookup returned: the map
    /// and the lookup's key as the access's stage carries it, when that stage still holds the key bytes unchanged
    /// and the program never deletes from the map (so the pointer's slot keeps that key; see the module comment).
    fn pointer_key(&mut self, early: u32) -> Option<(u32, String)> {
        let p = self.p;
        let op = &p.ops[early as usize];
        let Label::MapValue { map, .. } = op.label else {
            return None;
        };
        let lookup = p.ops.iter().find(|o| Some(o.insn) == op.pointer_lookup)?;
        let (m, k1) = keyed_call(lookup, &[1])?;
        let ks = self.maps.get(m as usize)?.key_size as i64;
        let rewritten = p
            .ops
            .iter()
            .any(|o| (lookup.stage..op.stage).contains(&o.stage) && writes_stack(p, o, k1, ks));
        if m != map || rewritten || deletes_from(p, m) {
            return None;
        }
        let carried = self.bound_stack.get(op.stage as usize)?;
        let key: Option<Vec<String>> = (0..ks)
            .rev()
            .map(|b| carried.get(&(k1 + b)).cloned())
            .collect();
        let key = self.read(&format!("{{{}}}", key?.join(", ")));
        Some((m, key))
    }

    /// For stall check `i` between a HASH update `early` and an older packet's load, store or atomic `late` through
    /// a value pointer of the same map (see the module comment): a wire that is 1 when the packet at boundary `j`
    /// accesses the value of the slot holding the younger packet's key, or `None` when the check cannot tell.
    pub(super) fn same_slot(
        &mut self,
        i: usize,
        early: u32,
        late: u32,
        j: u32,
        s: &mut String,
    ) -> Option<String> {
        let p = self.p;
        let (m, _) = keyed_call(&p.ops[early as usize], &[2])?;
        let spec = self.maps.get(m as usize)?;
        let late_op = &p.ops[late as usize];
        let on_value = matches!(late_op.label, Label::MapValue { map, .. } if map == m);
        if !is_hash(spec) || !on_value || deletes_from(p, m) {
            return None;
        }
        let (base, off) = match hwxdp_ebpf::kind(&p.insns[late_op.insn as usize]).ok()? {
            hwxdp_ebpf::InsnKind::Load { base, off, .. }
            | hwxdp_ebpf::InsnKind::Store { base, off, .. }
            | hwxdp_ebpf::InsnKind::Atomic { base, off, .. } => (base, off),
            _ => return None,
        };
        let (reg, derived) = self.late_base(base, j, late_op.stage)?;
        let off = off as i64 + derived;
        let (sw, vs) = (slot_width(super::maps::key_slots(spec)), spec.value_size);
        if !self.probes.contains_key(&early) {
            let key = self.early_keys.get(&early)?.clone();
            let (hit, slot) = (format!("probe{early}_hit"), format!("probe{early}_slot"));
            self.declare(&hit, 1);
            self.declare(&slot, sw);
            self.read(&key);
            self.probes.insert(
                early,
                Probe {
                    map: m,
                    key,
                    hit,
                    slot,
                },
            );
        }
        let probe = &self.probes[&early];
        let (hit, slot) = (probe.hit.clone(), probe.slot.clone());
        // The older packet's offset into the younger key's value: inside it when below the value size.
        let d = format!("stall{i}_v{j}");
        self.declare(&d, 64);
        let _ = writeln!(
            s,
            "  assign {d} = {} + {} - {{{}'d0, {slot}}} * 64'd{vs};",
            self.read(&reg),
            hex64(off as u64),
            64 - sw
        );
        let w = format!("stall{i}_slot{j}");
        self.declare(&w, 1);
        let _ = writeln!(s, "  assign {w} = {hit} & ({d}[31:0] < 32'd{vs});");
        self.read(&hit);
        self.read(&slot);
        self.read(&format!("{d}[31:0]"));
        self.unused_ports.push(format!("{d}[63:32]"));
        self.read(&w);
        Some(w)
    }

    /// For stall check `i` between a HASH lookup `early` and an older packet's update or delete `late` (stage
    /// `l`) of the same map: a wire that is 1 when the packet at boundary `j` has the younger packet's key, or `None`
    /// when the check cannot compare keys there (then any older packet in the window holds the younger one).
    pub(super) fn same_flow(
        &mut self,
        i: usize,
        early: u32,
        late: u32,
        (j, l): (u32, u32),
        s: &mut String,
    ) -> Option<String> {
        let p = self.p;
        let (m, younger) = match keyed_call(&p.ops[early as usize], &[1]) {
            Some((m, _)) => (m, self.early_keys.get(&early)?.clone()),
            None => self.pointer_key(early)?,
        };
        let (lm, k2) = keyed_call(&p.ops[late as usize], &[2, 3])?;
        let spec = self.maps.get(m as usize)?;
        if lm != m || !is_hash(spec) {
            return None;
        }
        let ks = spec.key_size as i64;
        // The older packet's key is final at boundary j unless an op between j and its update rewrites it: such an op
        // must be off for that packet (its predicate, carried to boundary j, false), else the check stays blind.
        let mut rewrites = Vec::new();
        for o in p
            .ops
            .iter()
            .filter(|o| (j..l).contains(&o.stage) && writes_stack(p, o, k2, ks))
        {
            rewrites.push(self.bound_preds.get(j as usize)?.get(&o.pred)?.clone());
        }
        let carried = self.bound_stack.get(j as usize)?;
        let older: Option<Vec<String>> = (0..ks)
            .rev()
            .map(|b| carried.get(&(k2 + b)).cloned())
            .collect();
        let older = self.read(&format!("{{{}}}", older?.join(", ")));
        let w = format!("stall{i}_key{j}");
        self.declare(&w, 1);
        rewrites.sort();
        rewrites.dedup();
        let blind: String = rewrites
            .iter()
            .map(|r| format!(" | {}", self.read(r)))
            .collect();
        let _ = writeln!(s, "  assign {w} = ({younger} == {older}){blind};");
        self.read(&w);
        Some(w)
    }
}
