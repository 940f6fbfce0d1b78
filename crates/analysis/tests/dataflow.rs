//! Liveness, stack liveness, reaching definitions, SSA and memory regions on small hand-written programs.

mod common;

use common::cfg;
use hwxdp_analysis::{
    Def, FuncId, InsnId, Liveness, MemRegion, ReachingDefs, RegSet, Regions, Ssa, StackLiveness,
    Value,
};
use hwxdp_object::MapSpec;

fn regs(list: &[u8]) -> RegSet {
    let mut set = RegSet::EMPTY;
    for r in list {
        set.insert(*r);
    }
    set
}

#[test]
fn helper_calls_read_their_arity_and_clobber_r1_to_r5() {
    let prog = cfg("
        r1 = 1
        r2 = 2
        r3 = 3
        r6 = 6
        call 1          ; bpf_map_lookup_elem: r1, r2
        call 5          ; bpf_ktime_get_ns: no arguments
        r0 = r6
        exit
    ");
    let live = Liveness::compute(&prog);
    assert_eq!(live.live_in(InsnId(4)), regs(&[1, 2, 6]));
    // r3 is never read: the lookup takes two arguments and clobbers r3.
    assert_eq!(live.live_out(InsnId(2)), regs(&[1, 2]));
    assert_eq!(live.live_in(InsnId(5)), regs(&[6]));
    assert_eq!(live.live_in(InsnId(7)), regs(&[0]));
    assert_eq!(live.effects[4].uses, regs(&[1, 2]));
    assert_eq!(live.effects[5].uses, RegSet::EMPTY);
    assert_eq!(live.effects[5].defs, regs(&[0, 1, 2, 3, 4, 5]));
}

#[test]
fn local_calls_read_the_callees_arguments() {
    let prog = cfg("
        r1 = 1
        r2 = 2
        r3 = 3
        call sub
        exit
    sub:
        r0 = r2
        exit
    ");
    let live = Liveness::compute(&prog);
    assert_eq!(live.func_args[1], regs(&[2]));
    assert_eq!(live.live_in(InsnId(3)), regs(&[2]));
    assert_eq!(live.block_in[0][0], RegSet::EMPTY);
}

#[test]
fn stack_liveness_is_byte_granular() {
    let prog = cfg("
        r1 = 0
        *(u64 *)(r10 - 16) = r1
        *(u32 *)(r10 - 4) = r1
        r0 = *(u16 *)(r10 - 14)
        r2 = *(u8 *)(r10 - 4)
        exit
    ");
    let regions = Regions::compute(&prog, &[]);
    let stack = StackLiveness::compute(&prog, &regions, &[]);
    let live = stack.live_in(InsnId(3));
    assert_eq!(live.runs(), vec![(-14, -12), (-4, -3)]);
    // The 4-byte store kills the byte read at -4; the 8-byte store kills the two read at -14.
    assert_eq!(stack.live_in(InsnId(2)).runs(), vec![(-14, -12)]);
    assert!(stack.live_in(InsnId(1)).is_empty());
}

#[test]
fn helpers_read_keys_of_the_map_size() {
    let prog = cfg("
        r1 = 0
        *(u64 *)(r10 - 8) = r1
        *(u64 *)(r10 - 16) = r1
        r2 = r10
        r2 += -16
        ld_pseudo r1, 1, 0
        call 1
        r0 = 0
        exit
    ");
    let maps = [MapSpec::new("m", 1, 4, 8, 16)];
    let regions = Regions::compute(&prog, &maps);
    let stack = StackLiveness::compute(&prog, &regions, &maps);
    assert_eq!(stack.live_in(InsnId(6)).runs(), vec![(-16, -12)]);
    // Without the map's key size the helper may read up to the top of the frame.
    let unsized_stack = StackLiveness::compute(&prog, &regions, &[]);
    assert_eq!(unsized_stack.live_in(InsnId(6)).runs(), vec![(-16, 0)]);
}

const DIAMOND: &str = "
    r0 = 1
    if r1 > 5 goto right
    r0 = 2
    goto join
right:
    r0 = 3
join:
    r0 += r1
    exit
";

#[test]
fn reaching_definitions_merge_at_joins() {
    let prog = cfg(DIAMOND);
    let live = Liveness::compute(&prog);
    let reaching = ReachingDefs::compute(&prog, &live);
    assert_eq!(
        reaching.reaching(InsnId(5), 0),
        Some(&[Def::Insn(InsnId(2), 0), Def::Insn(InsnId(4), 0)][..])
    );
    assert_eq!(reaching.reaching(InsnId(5), 1), Some(&[Def::Entry(1)][..]));
    assert_eq!(reaching.reaching(InsnId(1), 1), Some(&[Def::Entry(1)][..]));
    assert_eq!(reaching.reaching(InsnId(5), 7), None);
}

#[test]
fn ssa_places_phis_only_where_live() {
    let prog = cfg(DIAMOND);
    let live = Liveness::compute(&prog);
    let ssa = Ssa::compute(&prog, &live);
    let phis = &ssa.phis[0][3];
    assert_eq!(phis.len(), 1, "only r0 needs a phi: {phis:?}");
    let phi = &phis[0];
    assert_eq!(phi.reg, 0);
    let v2 = ssa.defs[2][0].1;
    let v4 = ssa.defs[4][0].1;
    assert_ne!(v2, v4);
    assert_eq!(
        phi.args,
        vec![
            (hwxdp_analysis::BlockId(1), v2),
            (hwxdp_analysis::BlockId(2), v4)
        ]
    );
    assert_eq!(ssa.use_version(InsnId(5), 0), Some(phi.version));
    assert_eq!(ssa.use_version(InsnId(5), 1), Some(0));
    // The dead first definition of r0 gets a version but no phi mentions it.
    let v0 = ssa.defs[0][0].1;
    assert!(phi.args.iter().all(|(_, v)| *v != v0));
    let text = ssa.dump(&prog);
    assert!(
        text.contains(&format!(
            "r0.{} = phi(bb1: r0.{v2}, bb2: r0.{v4})",
            phi.version
        )),
        "{text}"
    );
}

#[test]
fn regions_follow_the_verifiers_pointer_types() {
    let prog = cfg("
        r6 = r1
        r2 = *(u32 *)(r6 + 0)        ; data
        r3 = *(u32 *)(r6 + 4)        ; data_end
        r4 = *(u32 *)(r6 + 16)       ; rx_queue_index
        r5 = r2
        r5 += 14
        if r5 > r3 goto drop
        r7 = *(u16 *)(r2 + 12)
        *(u64 *)(r10 - 8) = r2       ; spill data
        r1 = 0
        *(u32 *)(r10 - 12) = r1
        r2 = r10
        r2 += -12
        ld_pseudo r1, 1, 3
        call 1
        if r0 == 0 goto drop
        r8 = *(u64 *)(r10 - 8)       ; fill: still data
        r9 = *(u8 *)(r8 + 6)
        r1 = 1
        lock *(u64 *)(r0 + 8) += r1
        ld_pseudo r1, 2, 0x1000000002 ; global map 2 at offset 16
        r1 = *(u32 *)(r1 + 4)
        r1 = r9
        r1 = *(u8 *)(r1 + 0)         ; a scalar used as a pointer
    drop:
        r0 = 1
        exit
    ");
    let regions = Regions::compute(&prog, &[]);
    let label = |i: u32| regions.label(InsnId(i));
    assert_eq!(label(1), Some(MemRegion::Context { offset: Some(0) }));
    assert_eq!(label(3), Some(MemRegion::Context { offset: Some(16) }));
    assert_eq!(label(7), Some(MemRegion::Packet { offset: Some(12) }));
    let stack = |o| {
        Some(MemRegion::Stack {
            frame: FuncId(0),
            offset: Some(o),
        })
    };
    assert_eq!(label(8), stack(-8));
    assert_eq!(label(10), stack(-12));
    assert_eq!(label(16), stack(-8));
    assert_eq!(label(17), Some(MemRegion::Packet { offset: Some(6) }));
    assert_eq!(
        label(19),
        Some(MemRegion::MapValue {
            map: 3,
            offset: Some(8)
        })
    );
    assert_eq!(
        label(21),
        Some(MemRegion::MapValue {
            map: 2,
            offset: Some(20)
        })
    );
    assert_eq!(label(23), Some(MemRegion::Unknown));
    assert_eq!(label(0), None);
    assert_eq!(label(14), None);
    assert_eq!(
        label(3).map(|l| l.to_string()),
        Some("ctx.rx_queue_index".to_string())
    );

    // The lookup result is maybe-null before its check and a plain map value after it.
    let before = |i: u32| regions.state_before(InsnId(i)).expect("reachable");
    assert!(matches!(
        before(15).reg(0),
        Value::MapValue {
            nullable: true,
            map: 3,
            ..
        }
    ));
    assert!(matches!(
        before(16).reg(0),
        Value::MapValue {
            nullable: false,
            map: 3,
            ..
        }
    ));
    assert_eq!(before(24).reg(0), Value::Unknown.join(before(24).reg(0)));
}

#[test]
fn null_check_of_a_copy_refines_the_original() {
    let prog = cfg("
        ld_pseudo r1, 1, 0
        r2 = r10
        r2 += -8
        call 1
        r6 = r0
        if r6 != 0 goto ok
        r0 = 0
        exit
    ok:
        r0 = *(u32 *)(r0 + 0)
        exit
    ");
    let regions = Regions::compute(&prog, &[]);
    let st = regions.state_before(InsnId(8)).expect("reachable");
    assert!(matches!(
        st.reg(0),
        Value::MapValue {
            nullable: false,
            ..
        }
    ));
    assert!(matches!(
        st.reg(6),
        Value::MapValue {
            nullable: false,
            ..
        }
    ));
    let st = regions.state_before(InsnId(6)).expect("reachable");
    assert_eq!(st.reg(0), Value::constant(0));
}

#[test]
fn callees_see_their_callers_pointers() {
    let prog = cfg("
        r2 = *(u32 *)(r1 + 0)
        r1 = r2
        r2 = r10
        r2 += -8
        call sub
        r0 = *(u8 *)(r0 + 0)
        exit
    sub:
        r3 = *(u8 *)(r1 + 3)
        *(u8 *)(r2 + 0) = r3
        r0 = r1
        exit
    ");
    let regions = Regions::compute(&prog, &[]);
    assert_eq!(
        regions.label(InsnId(7)),
        Some(MemRegion::Packet { offset: Some(3) })
    );
    assert_eq!(
        regions.label(InsnId(8)),
        Some(MemRegion::Stack {
            frame: FuncId(0),
            offset: Some(-8)
        })
    );
    assert_eq!(
        regions.label(InsnId(5)),
        Some(MemRegion::Packet { offset: Some(0) })
    );
    assert_eq!(
        regions.returns[1],
        Value::Packet(hwxdp_analysis::Offset::ZERO)
    );
}

/// Reaching definitions the simple way: per instruction, the sets of every predecessor joined, to a fixpoint.
fn reaching_by_instruction(
    prog: &hwxdp_analysis::ProgramCfg,
    live: &Liveness,
) -> Vec<Vec<(u8, Vec<Def>)>> {
    use std::collections::BTreeSet;
    let mut uses = vec![Vec::new(); prog.kinds.len()];
    for func in &prog.funcs {
        let mut block_in: Vec<BTreeSet<Def>> = vec![BTreeSet::new(); func.blocks.len()];
        block_in[0] = (0..11).map(Def::Entry).collect();
        let through = |set: &mut BTreeSet<Def>, i: usize| {
            for r in live.effects[i].defs.iter() {
                set.retain(|d| d.reg() != r);
                set.insert(Def::Insn(InsnId(i as u32), r));
            }
        };
        let order = func.reverse_postorder();
        loop {
            let before = block_in.clone();
            for &b in &order {
                let mut set = block_in[b.index()].clone();
                func.block(b)
                    .insns()
                    .for_each(|i| through(&mut set, i.index()));
                for (s, _) in &func.block(b).succs {
                    block_in[s.index()].extend(set.iter().copied());
                }
            }
            if block_in == before {
                break;
            }
        }
        for &b in &order {
            let mut set = block_in[b.index()].clone();
            for i in func.block(b).insns().map(|i| i.index()) {
                uses[i] = live.effects[i]
                    .uses
                    .iter()
                    .map(|r| (r, set.iter().filter(|d| d.reg() == r).copied().collect()))
                    .collect();
                through(&mut set, i);
            }
        }
    }
    uses
}

#[test]
fn reaching_definitions_match_the_per_instruction_fixpoint_on_random_loops() {
    use hwxdp_ebpf::Insn;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for _ in 0..60 {
        let len = 40;
        let mut insns = vec![Insn::new(0xb7, 6, 0, 0, 3)];
        for at in 1..len as i64 {
            let (dst, src) = (5 + next(5) as u8, 5 + next(5) as u8);
            // Jumps anywhere in the program (backward ones make loops), calls clobbering r0-r5.
            let off = (next(len) as i64 - at - 1) as i16;
            insns.push(match next(6) {
                0 => Insn::new(0x0f, dst, src, 0, 0),
                1 => Insn::new(0xb7, next(10) as u8, 0, 0, 1),
                2 => Insn::new(0x25, dst, 0, off, 4),
                3 => Insn::new(0x85, 0, 0, 0, 5),
                4 if off != -1 => Insn::new(0x05, 0, 0, off, 0),
                _ => Insn::new(0xbf, next(10) as u8, src, 0, 0),
            });
        }
        insns.push(Insn::new(0x95, 0, 0, 0, 0));
        let spec = hwxdp_object::ProgramSpec::standalone("random", "xdp", insns);
        let prog =
            hwxdp_analysis::ProgramCfg::build(&spec).expect("the program has a control-flow graph");
        let live = Liveness::compute(&prog);
        assert_eq!(
            ReachingDefs::compute(&prog, &live).uses,
            reaching_by_instruction(&prog, &live)
        );
    }
}
