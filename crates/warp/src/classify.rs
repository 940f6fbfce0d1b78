//! The block classes of section 4.1 (start, middle matching or not, terminal) and the blocks inside loops.

use crate::state::Stop;
use hwxdp_analysis::{Cfg, MemRegion, ProgramCfg, Regions};
use hwxdp_ebpf::{CallKind, InsnKind};
use serde::Serialize;

/// What a block of the entry function is to the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "class", content = "why", rename_all = "kebab-case")]
pub enum BlockClass {
    /// The entry block, when it is not terminal.
    Start,
    /// A block ending in a conditional jump: the walk can turn its condition into a match.
    Matching,
    /// A block ending in a fall-through or `goto`.
    NonMatching,
    /// A terminal block ending in `exit`: a verdict where r0 is known.
    Exit,
    /// A terminal block with an instruction the engine cannot run (a helper call, a packet write, ...).
    Terminal(Stop),
}

/// The terminal reason of instruction `k` by its kind and memory region alone, if it has one (`exit` aside).
pub fn static_stop(k: &InsnKind, region: Option<MemRegion>) -> Option<Stop> {
    Some(match *k {
        InsnKind::Call {
            kind: CallKind::Local,
            ..
        } => Stop::LocalCall,
        InsnKind::Call {
            kind: CallKind::Helper,
            imm,
        } if crate::state::engine_helper(imm) => return None,
        InsnKind::Call { .. } | InsnKind::CallReg { .. } => Stop::Helper,
        InsnKind::LoadPacket { .. } => Stop::LegacyLoad,
        InsnKind::Store { .. } | InsnKind::Atomic { .. } => match region? {
            MemRegion::Packet { .. } | MemRegion::PacketMeta { .. } => Stop::PacketWrite,
            MemRegion::Stack {
                offset: Some(_), ..
            } if matches!(k, InsnKind::Store { .. }) => return None,
            MemRegion::Stack { offset: None, .. } | MemRegion::Unknown => Stop::UnknownPointer,
            _ => Stop::MapOrAtomic,
        },
        InsnKind::Load { .. } => match region? {
            MemRegion::Context {
                offset: Some(0 | 4),
            } => return None,
            MemRegion::Context { .. } => Stop::ContextField,
            MemRegion::MapValue { .. } => Stop::MapOrAtomic,
            MemRegion::Unknown | MemRegion::Stack { offset: None, .. } => Stop::UnknownPointer,
            _ => return None,
        },
        _ => return None,
    })
}

/// The class of every block of the entry function (unreachable blocks included, as their instructions say).
pub fn classify(prog: &ProgramCfg, regions: &Regions) -> Vec<BlockClass> {
    let cfg = prog.func(hwxdp_analysis::FuncId(0));
    let loops = in_loop(cfg);
    cfg.block_ids()
        .map(|b| {
            let block = cfg.block(b);
            if loops[b.index()] {
                return BlockClass::Terminal(Stop::Loop);
            }
            for i in block.insns() {
                let k = &prog.kinds[i.index()];
                if let Some(stop) = static_stop(k, regions.label(i)) {
                    return BlockClass::Terminal(stop);
                }
                if matches!(k, InsnKind::Exit) {
                    return BlockClass::Exit;
                }
            }
            let last = &prog.kinds[block.last().index()];
            match (b == Cfg::ENTRY, last) {
                (true, _) => BlockClass::Start,
                (false, InsnKind::Branch { .. }) => BlockClass::Matching,
                _ => BlockClass::NonMatching,
            }
        })
        .collect()
}

/// Whether each block lies on a cycle of `cfg` (Tarjan's strongly connected components).
pub fn in_loop(cfg: &Cfg) -> Vec<bool> {
    let succs: Vec<Vec<usize>> = cfg
        .blocks
        .iter()
        .map(|b| b.succs.iter().map(|&(s, _)| s.index()).collect())
        .collect();
    hwxdp_analysis::on_cycles(&succs)
}
