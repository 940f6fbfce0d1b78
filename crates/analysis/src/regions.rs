//! Memory-region labels for every load, store and atomic, from a forward abstract interpretation of pointer types
//! as the kernel verifier does it (eHDL's instruction labelling, section 3 of its paper).
//!
//! r1 holds the context at the program's entry; loads of `data`, `data_end` and `data_meta` from it give packet
//! pointers; `lddw` of a map gives a map handle and `bpf_map_lookup_elem` on it a map-value-or-null pointer that a
//! null check refines; adding constants keeps the region and moves the offset; 8-byte spills and fills through the
//! stack keep the type. Functions are analysed with the join of the arguments of all their call sites, and a call
//! returns the join of what its callee returns, repeated until nothing changes.

use crate::transfer::{refine, step, Env, XDP_MD_DATA, XDP_MD_DATA_END, XDP_MD_DATA_META};
use crate::value::{Offset, State, Value};
use crate::{EdgeKind, FuncId, InsnId, ProgramCfg};
use hwxdp_ebpf::InsnKind;
use hwxdp_object::MapSpec;
use std::fmt;

/// Where a memory access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemRegion {
    /// `struct xdp_md`, at `offset` when constant.
    Context {
        /// Byte offset into the struct.
        offset: Option<i64>,
    },
    /// The packet, `offset` bytes after `data` when constant.
    Packet {
        /// Offset from `data`.
        offset: Option<i64>,
    },
    /// The metadata area, `offset` bytes after `data_meta` when constant.
    PacketMeta {
        /// Offset from `data_meta`.
        offset: Option<i64>,
    },
    /// The stack frame of function `frame`, at an r10-relative `offset` when constant.
    Stack {
        /// Whose frame.
        frame: FuncId,
        /// Offset from that frame's r10.
        offset: Option<i64>,
    },
    /// A value of map `map`, `offset` bytes in when constant.
    MapValue {
        /// Map index.
        map: u32,
        /// Offset into the value.
        offset: Option<i64>,
    },
    /// The analysis could not tell.
    Unknown,
}

/// The name of the `struct xdp_md` field at byte `offset`.
pub fn xdp_md_field(offset: i64) -> Option<&'static str> {
    Some(match offset {
        XDP_MD_DATA => "data",
        XDP_MD_DATA_END => "data_end",
        XDP_MD_DATA_META => "data_meta",
        12 => "ingress_ifindex",
        16 => "rx_queue_index",
        20 => "egress_ifindex",
        _ => return None,
    })
}

impl fmt::Display for MemRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |o: Option<i64>| match o {
            Some(o) if o < 0 => format!("{o}"),
            Some(o) => format!("+{o}"),
            None => "+?".to_string(),
        };
        match *self {
            MemRegion::Context { offset } => match offset.and_then(xdp_md_field) {
                Some(field) => write!(f, "ctx.{field}"),
                None => write!(f, "ctx{}", at(offset)),
            },
            MemRegion::Packet { offset } => write!(f, "pkt{}", at(offset)),
            MemRegion::PacketMeta { offset } => write!(f, "pkt_meta{}", at(offset)),
            MemRegion::Stack { frame, offset } if frame.0 == 0 => write!(f, "stack{}", at(offset)),
            MemRegion::Stack { frame, offset } => write!(f, "stack@{frame}{}", at(offset)),
            MemRegion::MapValue { map, offset } => write!(f, "map{map}{}", at(offset)),
            MemRegion::Unknown => f.write_str("unknown"),
        }
    }
}

/// Abstract states and memory-region labels of a whole program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    /// The state before each instruction, by [`InsnId`]; `None` where no path from the function's entry arrives.
    pub before: Vec<Option<State>>,
    /// The region of each load, store and atomic (and legacy packet load); `None` for other instructions.
    pub labels: Vec<Option<MemRegion>>,
    /// What each function returns in r0.
    pub returns: Vec<Value>,
}

/// Rounds of the interprocedural fixpoint; the summaries only grow, so a handful settles any call graph the
/// verifier accepts, and the bound keeps malformed input from looping.
const MAX_ROUNDS: usize = 16;

impl Regions {
    /// Analyses `prog`; `maps` (the object's maps, or empty) give the sizes of keys and values helpers write.
    pub fn compute(prog: &ProgramCfg, maps: &[MapSpec]) -> Self {
        let nf = prog.funcs.len();
        let mut entries: Vec<Option<[Value; 5]>> = vec![None; nf];
        entries[0] = Some([
            Value::Ctx(Offset::ZERO),
            Value::Unknown,
            Value::Unknown,
            Value::Unknown,
            Value::Unknown,
        ]);
        let mut returns: Vec<Option<Value>> = vec![None; nf];
        let mut before = vec![None; prog.kinds.len()];
        for _ in 0..MAX_ROUNDS {
            let known: Vec<Value> = returns
                .iter()
                .map(|r| r.unwrap_or(Value::Unknown))
                .collect();
            let mut changed = false;
            for f in 0..nf {
                let args = entries[f].unwrap_or([Value::Unknown; 5]);
                let env = Env {
                    frame: FuncId::new(f),
                    maps,
                    returns: &known,
                };
                let out = analyze(prog, &env, State::entry(env.frame, args), &mut before);
                changed |= merge(&mut returns[f], out.ret);
                for (callee, args) in out.calls {
                    let slot = &mut entries[callee.index()];
                    let joined = match *slot {
                        None => args,
                        Some(old) => std::array::from_fn(|i| old[i].join(args[i])),
                    };
                    if *slot != Some(joined) {
                        *slot = Some(joined);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let labels = prog
            .kinds
            .iter()
            .zip(&before)
            .map(|(k, st)| label(k, st.as_ref()))
            .collect();
        Regions {
            before,
            labels,
            returns: returns
                .into_iter()
                .map(|r| r.unwrap_or(Value::Unknown))
                .collect(),
        }
    }

    /// The state before `insn`.
    pub fn state_before(&self, insn: InsnId) -> Option<&State> {
        self.before.get(insn.index())?.as_ref()
    }

    /// The region `insn` accesses, if it accesses memory.
    pub fn label(&self, insn: InsnId) -> Option<MemRegion> {
        *self.labels.get(insn.index())?
    }
}

fn merge(slot: &mut Option<Value>, new: Option<Value>) -> bool {
    let Some(new) = new else { return false };
    let joined = slot.map_or(new, |old| old.join(new));
    let changed = *slot != Some(joined);
    *slot = Some(joined);
    changed
}

/// What one function's analysis yields for the interprocedural rounds.
struct FuncOutcome {
    ret: Option<Value>,
    calls: Vec<(FuncId, [Value; 5])>,
}

fn analyze(
    prog: &ProgramCfg,
    env: &Env,
    entry: State,
    before: &mut [Option<State>],
) -> FuncOutcome {
    let cfg = prog.func(env.frame);
    let mut block_in: Vec<Option<State>> = vec![None; cfg.blocks.len()];
    block_in[0] = Some(entry);
    let order = cfg.reverse_postorder();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order {
            let Some(mut st) = block_in[b.index()].clone() else {
                continue;
            };
            let block = cfg.block(b);
            for i in block.insns() {
                before[i.index()] = Some(st.clone());
                step(env, i, &prog.kinds[i.index()], &mut st, prog.callee_at(i));
            }
            let last = &prog.kinds[block.last().index()];
            for &(s, edge) in &block.succs {
                let out = refine(last, &st, edge == EdgeKind::Taken);
                let slot = &mut block_in[s.index()];
                let joined = match slot {
                    None => out,
                    Some(old) => old.join(&out),
                };
                if slot.as_ref() != Some(&joined) {
                    *slot = Some(joined);
                    changed = true;
                }
            }
        }
    }
    for b in cfg.unreachable() {
        for i in cfg.block(b).insns() {
            before[i.index()] = None;
        }
    }
    let mut ret: Option<Value> = None;
    let mut calls = Vec::new();
    let range = cfg.start.index()..cfg.end.index();
    for (i, st) in before.iter().enumerate().take(range.end).skip(range.start) {
        let Some(st) = st else { continue };
        match prog.kinds[i] {
            InsnKind::Exit => {
                let r0 = st.reg(0);
                ret = Some(ret.map_or(r0, |r| r.join(r0)));
            }
            InsnKind::Call { .. } => {
                if let Some(callee) = prog.callee_at(InsnId::new(i)) {
                    calls.push((
                        callee,
                        [st.reg(1), st.reg(2), st.reg(3), st.reg(4), st.reg(5)],
                    ));
                }
            }
            _ => {}
        }
    }
    FuncOutcome { ret, calls }
}

/// The region an instruction accesses, from the state before it.
fn label(k: &InsnKind, st: Option<&State>) -> Option<MemRegion> {
    let (base, off) = match *k {
        InsnKind::Load { base, off, .. }
        | InsnKind::Store { base, off, .. }
        | InsnKind::Atomic { base, off, .. } => (base, off as i64),
        InsnKind::LoadPacket { index, imm, .. } => {
            let offset = index.is_none().then_some(imm as i64);
            return Some(MemRegion::Packet { offset });
        }
        _ => return None,
    };
    let Some(st) = st else {
        return Some(MemRegion::Unknown);
    };
    let at = |o: Offset| o.add(off).constant();
    Some(match st.reg(base) {
        Value::Ctx(o) => MemRegion::Context { offset: at(o) },
        Value::Packet(o) => MemRegion::Packet { offset: at(o) },
        Value::PacketMeta(o) => MemRegion::PacketMeta { offset: at(o) },
        Value::Stack { frame, off: o } => MemRegion::Stack {
            frame,
            offset: at(o),
        },
        Value::MapValue { map, off: o, .. } => MemRegion::MapValue { map, offset: at(o) },
        _ => MemRegion::Unknown,
    })
}
