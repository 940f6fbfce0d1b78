//! Programs whose outcome depends on the kernel's element replacement, which the HASH block does not model.
//!
//! `bpf_map_update_elem` on a plain `BPF_MAP_TYPE_HASH` map whose key is present swaps in a new element (the
//! kernel's `htab_map_update_elem`; the old one becomes the CPU's spare), so a value pointer a lookup returned
//! before the update still reaches the old element: its loads see the old value and its stores are lost. The HASH
//! block updates the key's slot in place, so such a pointer would see the new value. An access through a pointer
//! from lookup `L` after an update `U` of the same map that may replace (flags other than `BPF_NOEXIST`) on some path
//! `L -> U -> access` is refused. Per-CPU maps update in place in the kernel too; LRU blocks move the key to a new
//! node as the kernel does.

use super::maps::MAP_TYPE_HASH;
use super::VerilogError;
use crate::ir::{ArgConst, Label, Op, OpKind, Pipeline};
use hwxdp_ebpf::InsnKind;
use hwxdp_object::MapSpec;

/// `BPF_NOEXIST`: an update that never replaces.
const NOEXIST: i64 = 1;

/// Which flattened instructions instruction `from` can reach (itself included); every jump goes forward.
fn reachable_from(insns: &[hwxdp_ebpf::Insn], from: usize) -> Vec<bool> {
    let n = insns.len();
    let mut seen = vec![false; n];
    if from < n {
        seen[from] = true;
    }
    for i in from..n {
        if !seen[i] {
            continue;
        }
        let next = |off: i64| (i as i64 + 1 + off) as usize;
        let succ: Vec<usize> = match hwxdp_ebpf::kind(&insns[i]) {
            Ok(InsnKind::Exit) => vec![],
            Ok(InsnKind::Ja { off }) => vec![next(off as i64)],
            Ok(InsnKind::JaLong { imm }) => vec![next(imm as i64)],
            Ok(InsnKind::Branch { off, .. }) => vec![i + 1, next(off as i64)],
            Ok(InsnKind::LoadImm64 { .. }) => vec![i + 2],
            _ => vec![i + 1],
        };
        for s in succ.into_iter().filter(|&s| s < n) {
            seen[s] = true;
        }
    }
    seen
}

/// The map and whether it may replace, for an update op with a constant map.
fn replacing_update(op: &Op) -> Option<u32> {
    let OpKind::Helper { id: 2, consts, .. } = &op.kind else {
        return None;
    };
    let map = op.map_arg()?;
    let noexist = consts
        .iter()
        .any(|c| matches!(c, (4, ArgConst::Scalar(NOEXIST))));
    (!noexist).then_some(map)
}

/// Refuses an access through a value pointer of a plain HASH map that an update of the map may have replaced.
pub(super) fn check(p: &Pipeline, maps: &[MapSpec]) -> Result<(), VerilogError> {
    let updates: Vec<(u32, &Op)> = p
        .ops
        .iter()
        .filter_map(|o| replacing_update(o).map(|m| (m, o)))
        .filter(|(m, _)| {
            maps.get(*m as usize)
                .is_some_and(|s| s.map_type == MAP_TYPE_HASH)
        })
        .collect();
    if updates.is_empty() {
        return Ok(());
    }
    for access in &p.ops {
        let (Label::MapValue { map, .. }, Some(lookup)) = (access.label, access.pointer_lookup)
        else {
            continue;
        };
        let from_lookup = reachable_from(&p.insns, lookup as usize);
        for (m, update) in &updates {
            if *m != map || !from_lookup[update.insn as usize] {
                continue;
            }
            if reachable_from(&p.insns, update.insn as usize)[access.insn as usize] {
                let spec = &maps[map as usize];
                return Err(VerilogError::Unsupported {
                    program: p.summary.program.clone(),
                    origin: access.origin,
                    text: access.text.clone(),
                    what: format!(
                        "an access through a value pointer of HASH map {} after `{}` (instruction {}), which may \
                         replace the element the pointer reaches (the kernel moves a present key to a new element; \
                         the map block updates in place)",
                        spec.name, update.text, update.origin
                    ),
                });
            }
        }
    }
    Ok(())
}
