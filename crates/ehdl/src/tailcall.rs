//! Tail calls inlined: a pipeline is one program's, so a program whose `bpf_tail_call`s go to a PROG_ARRAY of its
//! own object gets the programs that could be in the array appended to its flattened code, and every tail call
//! becomes a read of the array's slot and a dispatch on the program found there.
//!
//! Each `call bpf_tail_call` (r1 = ctx, r2 = a constant PROG_ARRAY, r3 = the index) becomes
//!
//! ```text
//!     rK = r1                     ; rK: one of r6-r9 the caller no longer needs after the call
//!     r4 = 0; r5 = 0              ; the pseudo-helper reads r1-r5 like any helper; constants cost nothing
//!     call TAIL_SLOT              ; r0 = 1 + the program index in slot r3, 0 when empty or out of range
//!     if r0 == j + 1 goto T_j     ; for every candidate program j
//!     ...                         ; fall through: the call failed, the caller goes on
//! T_j: r1 = rK; goto callee_j     ; after the caller's code: the callee starts with r1 = ctx
//! ```
//!
//! and each candidate's flattened code (its own bpf-to-bpf calls inlined, its loops unrolled) is appended once,
//! whatever the number of call sites; its exits are the packet's exits. The callee reuses the caller's stack frame
//! (the verifier guarantees it reads no byte it did not write) and its r6-r9 are fresh, which is why the saved
//! context may live in one of them. After a failed call the reference machine leaves r0 as it was; here it holds the
//! pseudo-helper's 0, which no verified program can tell: `bpf_tail_call` returns `void` to the verifier, so r0 is
//! uninitialised after it.
//!
//! The candidates are the object's XDP programs that make no tail call themselves: inlining stops at depth 1, so
//! a program with tail calls (the caller included) cannot be a callee, and a slot naming one is outside what the
//! pipeline runs (the eHDL host port refuses to load it, see [`Flat::tail_targets`]).

use crate::flatten::{encode, flatten, Flat, Item};
use crate::EhdlError;
use hwxdp_analysis::{EdgeKind, FuncId, InsnId, Liveness, ProgramCfg, Regions, Value};
use hwxdp_ebpf::{AluOp, CallKind, InsnKind, JmpCond, Source};
use hwxdp_object::{MapSpec, ProgramSpec};

/// Helper id of `bpf_tail_call`.
pub const TAIL_CALL: i32 = 12;

/// Helper id the eHDL front end reserves for the pseudo-helper that reads a PROG_ARRAY slot: with r2 = the map and
/// r3 = the index, r0 = 1 + the index in the object's program list of the program in the slot, or 0 when the slot
/// is empty or the index out of range. It clobbers r1-r5 like any call. No kernel helper has this id.
pub const TAIL_SLOT: i32 = 0x0e4d_0012;

/// `BPF_MAP_TYPE_PROG_ARRAY`.
const PROG_ARRAY: u32 = 3;

/// Inlines the possible callees of `flat`'s tail calls (`spec` is the original program, `programs` the object's
/// program list, which PROG_ARRAY values index; empty, the tail calls are left as they are).
pub fn inline(
    spec: &ProgramSpec,
    flat: Flat,
    programs: &[ProgramSpec],
    maps: &[MapSpec],
    max_insns: usize,
) -> Result<Flat, EhdlError> {
    let prog = ProgramCfg::build(&flat.spec)?;
    let sites: Vec<usize> = (0..prog.kinds.len())
        .filter(|&i| is_tail_call(prog.kinds[i]))
        .collect();
    // Without the object's programs (`compile`), a tail call stays a helper op, which the Verilog generator refuses
    // saying so.
    if sites.is_empty() || programs.is_empty() {
        return Ok(flat);
    }
    let refuse = |i: usize, why: String| EhdlError::TailCall {
        program: spec.name.clone(),
        insn: flat.origin[i] as usize,
        why,
    };
    let regions = Regions::compute(&prog, maps);
    let live = Liveness::compute(&prog);
    let mut saved = Vec::with_capacity(sites.len());
    for &i in &sites {
        let at = InsnId::new(i);
        let st = regions
            .state_before(at)
            .ok_or_else(|| refuse(i, "the call is unreachable".into()))?;
        if !matches!(st.reg(1), Value::Ctx(off) if off.constant() == Some(0)) {
            return Err(refuse(i, "r1 is not the context".into()));
        }
        let map_ok = match st.reg(2) {
            Value::MapHandle(m) => maps
                .get(m as usize)
                .is_some_and(|s| s.map_type == PROG_ARRAY),
            _ => false,
        };
        if !map_ok {
            return Err(refuse(i, "r2 is not a constant PROG_ARRAY".into()));
        }
        let out = live.live_out(at);
        let k = (6..=9u8).find(|r| !out.contains(*r)).ok_or_else(|| {
            refuse(
                i,
                "r6-r9 are all live after the call, none is free to keep the context for the callee".into(),
            )
        })?;
        saved.push(k);
    }

    // The candidates, flattened: the object's XDP programs without tail calls of their own (depth 1).
    let mut callees: Vec<(u32, Flat)> = Vec::new();
    for (j, p) in programs.iter().enumerate() {
        if !p.section.starts_with("xdp") {
            continue;
        }
        let f = flatten(p, maps, max_insns)?;
        let nested = f
            .spec
            .insns
            .iter()
            .any(|insn| hwxdp_ebpf::kind(insn).is_ok_and(is_tail_call));
        if !nested {
            callees.push((j as u32, f));
        }
    }

    let cfg = prog.func(FuncId(0));
    let targets = |p: &ProgramCfg, i: usize| -> Option<usize> {
        let c = p.func(FuncId(0));
        p.kinds[i].jump_offset()?;
        let b = c.block_of(InsnId::new(i))?;
        c.block(b)
            .succs
            .iter()
            .find(|(_, e)| *e != EdgeKind::Fallthrough)
            .map(|(s, _)| c.block(*s).start.index())
    };
    let mov = |dst: u8, src: Source| InsnKind::Alu {
        wide: true,
        op: AluOp::Mov,
        dst,
        src,
    };
    let item = |kind: InsnKind, origin: u32| Item {
        kind,
        target: None,
        origin,
    };

    // The caller, each tail call expanded; `at[i]` is where instruction i starts.
    let n = prog.kinds.len();
    let mut items: Vec<Item> = Vec::new();
    let mut at = vec![0usize; n];
    let mut dispatch: Vec<(usize, usize, usize)> = Vec::new(); // (branch item, site, candidate)
    let mut jumps: Vec<(usize, usize)> = Vec::new();
    for (i, start) in at.iter_mut().enumerate() {
        *start = items.len();
        let o = flat.origin[i];
        if let Some(s) = sites.iter().position(|&x| x == i) {
            items.push(item(mov(saved[s], Source::Reg(1)), o));
            items.push(item(mov(4, Source::Imm(0)), o));
            items.push(item(mov(5, Source::Imm(0)), o));
            items.push(item(
                InsnKind::Call {
                    kind: CallKind::Helper,
                    imm: TAIL_SLOT,
                },
                o,
            ));
            for (c, (j, _)) in callees.iter().enumerate() {
                dispatch.push((items.len(), s, c));
                items.push(item(
                    InsnKind::Branch {
                        wide: true,
                        cond: JmpCond::Eq,
                        dst: 0,
                        src: Source::Imm(*j as i32 + 1),
                        off: 0,
                    },
                    o,
                ));
            }
            continue;
        }
        if let Some(t) = targets(&prog, i) {
            jumps.push((items.len(), t));
        }
        items.push(item(prog.kinds[i], o));
    }
    debug_assert!(cfg.end.index() == n);
    for (it, t) in jumps {
        items[it].target = Some(at[t]);
    }

    // Trampolines (one per site and candidate), then the callees.
    let mut trampoline = vec![vec![0usize; callees.len()]; sites.len()];
    let mut trampoline_jumps = Vec::new();
    for (s, &i) in sites.iter().enumerate() {
        for (c, slot) in trampoline[s].iter_mut().enumerate() {
            *slot = items.len();
            let o = flat.origin[i];
            items.push(item(mov(1, Source::Reg(saved[s])), o));
            trampoline_jumps.push((items.len(), c));
            items.push(item(InsnKind::Ja { off: 0 }, o));
        }
    }
    for (it, s, c) in dispatch {
        items[it].target = Some(trampoline[s][c]);
    }
    let mut entry = Vec::with_capacity(callees.len());
    let mut loops = flat.loops.clone();
    let mut inlined = flat.inlined.clone();
    for (j, f) in &callees {
        let base = items.len();
        entry.push(base);
        let cp = ProgramCfg::build(&f.spec)?;
        for i in 0..cp.kinds.len() {
            items.push(Item {
                kind: cp.kinds[i],
                target: targets(&cp, i).map(|t| base + t),
                origin: f.origin[i],
            });
        }
        loops.extend(f.loops.iter().cloned());
        for &i in &sites {
            inlined.push((flat.origin[i], programs[*j as usize].name.clone()));
        }
    }
    for (it, c) in trampoline_jumps {
        items[it].target = Some(entry[c]);
    }
    let (merged, origin) = encode(&flat.spec, &items, max_insns)?;
    Ok(Flat {
        spec: merged,
        origin,
        loops,
        inlined,
        tail_targets: callees.iter().map(|(j, _)| *j).collect(),
    })
}

/// Whether `k` is a `call bpf_tail_call`.
fn is_tail_call(k: InsnKind) -> bool {
    matches!(
        k,
        InsnKind::Call {
            kind: CallKind::Helper,
            imm: TAIL_CALL
        }
    )
}
