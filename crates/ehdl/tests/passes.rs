//! One small hand-assembled program per transformation of the front end.

mod common;

use common::{pipeline, pipeline_with_maps, spec, stage_of, try_pipeline};
use hwxdp_analysis::RegSet;
use hwxdp_ehdl::{flatten, ArgConst, EhdlError, Label, OpKind};
use hwxdp_object::{MapSpec, ProgramSpec};

#[test]
fn independent_alu_ops_share_one_stage() {
    let p = pipeline(
        "
        r1 = 1
        r2 = 2
        r3 = 3
        r4 = 4
        r1 += r2
        r3 += r4
        r1 += r3
        r0 = r1
        exit
    ",
    );
    for insn in 0..4 {
        assert_eq!(stage_of(&p, insn), 0, "{}", hwxdp_ehdl::text(&p));
    }
    assert_eq!(stage_of(&p, 4), 1);
    assert_eq!(stage_of(&p, 5), 1);
    assert_eq!(stage_of(&p, 6), 2);
    assert_eq!(p.summary.max_ilp, 4);
    assert_eq!(p.stages[0].ops.len(), 4);
}

#[test]
fn a_raw_chain_takes_consecutive_stages() {
    let p = pipeline(
        "
        r0 = 1
        r0 += 2
        r0 *= 3
        r0 <<= 1
        exit
    ",
    );
    let stages: Vec<u32> = (0..5).map(|i| stage_of(&p, i)).collect();
    assert_eq!(stages, vec![0, 1, 2, 3, 4]);
    assert_eq!(p.summary.stages, 5);
    assert_eq!(p.summary.max_ilp, 1);
}

#[test]
fn if_else_becomes_predicated_ops_in_shared_stages() {
    let p = pipeline(
        "
        r2 = *(u32 *)(r1 + 16)
        if r2 == 0 goto other
        r0 = 1
        r3 = 5
        goto end
    other:
        r0 = 2
        r3 = 6
    end:
        r0 += r3
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    // The branch is a predicate op; the goto is gone.
    let cond = p.ops.iter().find(|o| o.insn == 1).expect("cond op");
    assert_eq!(cond.kind, OpKind::Cond);
    assert!(p.ops.iter().all(|o| o.insn != 4), "{text}");
    assert!(p
        .removed
        .iter()
        .any(|(i, why)| *i == 4 && why.contains("jump")));
    // Both arms run in the same stage, each under its own predicate.
    let then_op = p.ops.iter().find(|o| o.insn == 2).expect("then arm");
    let else_op = p.ops.iter().find(|o| o.insn == 5).expect("else arm");
    assert_eq!(then_op.stage, else_op.stage, "{text}");
    assert_eq!(then_op.stage, cond.stage + 1, "{text}");
    assert_ne!(then_op.pred, else_op.pred);
    assert_eq!(stage_of(&p, 3), stage_of(&p, 6));
    // The arms' predicates are the branch outcome under the entry predicate; the join runs under the entry's.
    let then_pred = &p.preds[then_op.pred as usize];
    let else_pred = &p.preds[else_op.pred as usize];
    assert_eq!(then_pred.terms, vec![(0, Some((cond.id, false)))]);
    assert_eq!(else_pred.terms, vec![(0, Some((cond.id, true)))]);
    assert_eq!(p.ops.iter().find(|o| o.insn == 7).expect("join").pred, 0);
    assert!(text.contains("p1 = p0&!c1"), "{text}");
}

#[test]
fn a_loop_with_a_constant_bound_unrolls() {
    let text = "
        r0 = 0
        r1 = 0
    top:
        r0 += 3
        r1 += 1
        if r1 < 4 goto top
        exit
    ";
    let flat = flatten(&spec(text), &[], 1000).expect("flattens");
    assert_eq!(flat.loops.len(), 1);
    assert_eq!(flat.loops[0].trips, 4);
    assert_eq!(flat.loops[0].induction, 1);
    assert_eq!(flat.loops[0].latch, 4);
    // Every jump goes forward.
    for insn in &flat.spec.insns {
        if let Ok(k) = hwxdp_ebpf::kind(insn) {
            if let Some(off) = k.jump_offset() {
                assert!(off >= 0, "backward jump in {:?}", flat.spec.insns);
            }
        }
    }
    let p = pipeline(text);
    let adds = p.ops.iter().filter(|o| o.text == "r0 += 3").count();
    assert_eq!(adds, 4, "{}", hwxdp_ehdl::text(&p));
    assert_eq!(p.summary.loops_unrolled, 1);
}

#[test]
fn a_loop_bounded_by_a_count_down_unrolls() {
    let flat = flatten(
        &spec(
            "
        r0 = 0
        r2 = 10
    top:
        r0 += 1
        r2 -= 2
        if r2 != 0 goto top
        exit
    ",
        ),
        &[],
        1000,
    )
    .expect("flattens");
    assert_eq!(flat.loops[0].trips, 5);
}

#[test]
fn an_unbounded_loop_is_refused_naming_the_instruction() {
    let err = try_pipeline(
        "
        r0 = 0
    top:
        r0 += 1
        r2 = *(u32 *)(r1 + 16)
        if r2 != 0 goto top
        exit
    ",
    )
    .expect_err("no bound");
    assert!(
        matches!(
            err,
            EhdlError::UnboundedLoop {
                insn: 3,
                header: 1,
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("instruction 3"), "{msg}");
    assert!(msg.contains("r2"), "{msg}");
}

#[test]
fn a_helper_called_twice_gets_two_helper_stages() {
    let p = pipeline(
        "
        call 7
        r6 = r0
        call 7
        r0 += r6
        exit
    ",
    );
    let helpers: Vec<_> = p
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Helper { id: 7, .. }))
        .collect();
    assert_eq!(helpers.len(), 2);
    let instances: Vec<u32> = helpers
        .iter()
        .map(|o| match o.kind {
            OpKind::Helper { instance, .. } => instance,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(instances, vec![0, 1]);
    assert_ne!(helpers[0].stage, helpers[1].stage);
    for h in &helpers {
        let st = &p.stages[h.stage as usize];
        assert!(st.helper);
        assert_eq!(st.ops, vec![h.id], "a helper stage holds only its helper");
    }
    assert_eq!(p.summary.helper_stages, 2);
    // r6 = r0 reads the first call's result before the second call overwrites r0.
    assert!(stage_of(&p, 1) <= helpers[1].stage);
}

#[test]
fn pruning_keeps_only_live_registers_and_stack_bytes() {
    let p = pipeline(
        "
        r6 = 1
        r7 = 2
        r8 = 3
        r0 = r6
        r0 += r7
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    // r8 is dead: no op writes it and no boundary carries it; r1 (the context) is never carried either.
    assert!(p.ops.iter().all(|o| o.insn != 2), "{text}");
    let mut r67 = RegSet::EMPTY;
    r67.insert(6);
    r67.insert(7);
    let mut r0 = RegSet::EMPTY;
    r0.insert(0);
    assert_eq!(p.stages[0].live_regs, RegSet::EMPTY, "{text}");
    assert_eq!(p.stages[1].live_regs, r67, "{text}");
    assert_eq!(p.stages[2].live_regs, r0, "{text}");
    // The move fused into the addition: r0 = r6 + r7 in one stage.
    assert!(matches!(
        p.ops.iter().find(|o| o.insn == 4).unwrap().kind,
        OpKind::Alu3 { a: 6 }
    ));
    assert_eq!(p.summary.state_bits_pruned, 3 * 64);
    assert_eq!(p.summary.state_bits_unpruned, 3 * (11 * 64 + 512 * 8));

    let p = pipeline(
        "
        r6 = 1
        *(u64 *)(r10 - 8) = r6
        r0 = *(u64 *)(r10 - 8)
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    let live: Vec<String> = p.stages.iter().map(|s| s.live_stack.to_string()).collect();
    assert_eq!(live, vec!["-", "-", "[-8,0)", "-"], "{text}");
}

#[test]
fn a_packet_access_at_byte_100_waits_for_frame_1() {
    let p = pipeline(
        "
        r2 = *(u32 *)(r1 + 0)
        r0 = *(u8 *)(r2 + 100)
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    let load = p.ops.iter().find(|o| o.insn == 1).expect("load");
    assert_eq!(load.label, Label::Packet { offset: Some(100) });
    assert_eq!(load.frames, Some((1, 1)));
    assert_eq!(load.stage, 1, "{text}");
    assert!(p.stages[0].nop, "{text}");
    assert_eq!(p.summary.nop_stages, 1);
    // The data pointer load only fed the constant address: gone.
    assert!(p.ops.iter().all(|o| o.insn != 0), "{text}");

    // With a 32-byte bus the same byte is in frame 3.
    let p = hwxdp_ehdl::compile(
        &spec("r2 = *(u32 *)(r1 + 0)\nr0 = *(u8 *)(r2 + 100)\nexit"),
        &[],
        &hwxdp_ehdl::Options {
            data_width: 256,
            ..Default::default()
        },
    )
    .expect("compiles");
    assert_eq!(p.summary.nop_stages, 3);
}

#[test]
fn bounds_checks_become_length_compares_and_address_arithmetic_disappears() {
    let p = pipeline(
        "
        r2 = *(u32 *)(r1 + 0)
        r3 = *(u32 *)(r1 + 4)
        r4 = r2
        r4 += 104
        if r4 > r3 goto drop
        r0 = *(u8 *)(r2 + 100)
        exit
    drop:
        r0 = 1
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    let check = p.ops.iter().find(|o| o.insn == 4).expect("check");
    assert_eq!(
        check.kind,
        OpKind::LenCheck {
            ensured: 104,
            meta: false,
            taken_if_short: true
        }
    );
    assert_eq!(check.reads, RegSet::EMPTY);
    assert_eq!(
        check.frames,
        Some((0, 1)),
        "the length is known once frame 1 arrived"
    );
    for gone in 0..4 {
        assert!(
            p.ops.iter().all(|o| o.insn != gone),
            "{gone} survived:\n{text}"
        );
    }
    assert_eq!(stage_of(&p, 5), 2, "{text}");
}

#[test]
fn every_instruction_is_labelled_with_its_region() {
    let maps = [MapSpec::new("m", 2, 4, 8, 1)];
    let p = pipeline_with_maps(
        "
        r6 = *(u32 *)(r1 + 0)
        r7 = *(u32 *)(r1 + 16)
        r2 = 0
        *(u32 *)(r10 - 4) = r2
        r2 = r10
        r2 += -4
        ld_pseudo r1, 1, 0
        call 1
        if r0 == 0 goto out
        r3 = *(u64 *)(r0 + 0)
        r4 = *(u8 *)(r6 + 20)
        r3 += r4
        r3 += r7
        *(u64 *)(r0 + 0) = r3
    out:
        r0 = 2
        exit
    ",
        &maps,
    );
    let label = |insn: u32| p.ops.iter().find(|o| o.insn == insn).unwrap().label;
    assert_eq!(label(1), Label::Context { offset: Some(16) });
    assert_eq!(label(3), Label::Stack { offset: Some(-4) });
    assert_eq!(label(7), Label::Map { map: 0 });
    assert_eq!(
        label(9),
        Label::MapValue {
            map: 0,
            offset: Some(0)
        }
    );
    assert_eq!(label(10), Label::Packet { offset: Some(20) });
    assert_eq!(label(11), Label::None);
    assert_eq!(
        label(13),
        Label::MapValue {
            map: 0,
            offset: Some(0)
        }
    );
    // The lookup's key pointer and map are constants of the helper block.
    let call = p.ops.iter().find(|o| o.insn == 7).unwrap();
    assert!(
        call.text.contains("r1=map0") && call.text.contains("r2=stack-4"),
        "{}",
        call.text
    );
    assert_eq!(call.reads, RegSet::EMPTY);
    match &call.kind {
        OpKind::Helper { consts, .. } => {
            assert_eq!(
                consts,
                &vec![(1, ArgConst::Map(0)), (2, ArgConst::Stack(-4))]
            )
        }
        k => panic!("{k:?}"),
    }
    // The map value store waits for the load of the same bytes and the helper before both.
    assert!(stage_of(&p, 13) > stage_of(&p, 9));
    assert!(stage_of(&p, 9) > call.stage);
}

#[test]
fn calls_are_inlined_and_what_cannot_be_is_refused_naming_the_call() {
    let p = pipeline(
        "
        r1 = 5
        call double
        exit
    double:
        r0 = r1
        r0 += r1
        exit
    ",
    );
    assert_eq!(p.summary.calls_inlined, 1);
    assert!(
        p.ops.iter().any(|o| o.origin == 4),
        "{}",
        hwxdp_ehdl::text(&p)
    );

    // A callee writing r6 while its caller no longer needs it: no spill, no frame.
    let p = pipeline("call f\nexit\nf: r6 = 1\nr0 = r6\nexit");
    assert_eq!(p.summary.calls_inlined, 1);
    let refused = |text: &str, want: &str| {
        let err = try_pipeline(text).expect_err(text);
        assert!(
            matches!(&err, EhdlError::Inline { insn, .. } if *insn == 1)
                && err.to_string().contains("cannot inline the call to sub_")
                && err.to_string().contains(want),
            "{text}: {err}"
        );
    };
    refused(
        "r1 = 1\ncall f\nexit\nf: r0 = r6\nexit",
        "the callee reads r6 before writing it",
    );
    // The caller's frame reaches r10 - 512: nothing is left below it for the callee's.
    refused(
        "*(u64 *)(r10 - 512) = r1\ncall f\nr0 = *(u64 *)(r10 - 512)\nexit\n\
         f: *(u64 *)(r10 - 8) = r1\nr0 = 0\nexit",
        "the frames down to the callee's and 0 spilled registers need 520 bytes of stack, over 512",
    );
    // A 32-bit copy of r10 in a moved frame.
    refused(
        "*(u64 *)(r10 - 8) = r1\ncall f\nexit\nf: w0 = w10\nexit",
        "instruction 3 uses r10 other than as the base of a load or store",
    );
}

#[test]
fn a_bad_data_width_is_refused() {
    let err = hwxdp_ehdl::compile(
        &spec("r0 = 0\nexit"),
        &[],
        &hwxdp_ehdl::Options {
            data_width: 12,
            ..Default::default()
        },
    )
    .expect_err("12 bits");
    assert_eq!(err, EhdlError::DataWidth(12));
}

#[test]
fn the_verdict_move_fuses_into_the_exit() {
    let p = pipeline(
        "
        r6 = *(u32 *)(r1 + 16)
        if r6 == 0 goto pass
        r0 = 1
        exit
    pass:
        r0 = r6
        exit
    ",
    );
    let text = hwxdp_ehdl::text(&p);
    let drop = p.ops.iter().find(|o| o.insn == 3).expect("exit");
    assert_eq!(
        drop.kind,
        OpKind::Exit {
            reg: 0,
            imm: Some(1)
        },
        "{text}"
    );
    assert_eq!(drop.reads, RegSet::EMPTY);
    let pass = p.ops.iter().find(|o| o.insn == 5).expect("exit");
    assert_eq!(pass.kind, OpKind::Exit { reg: 6, imm: None }, "{text}");
    assert_eq!(pass.fused, vec![4]);
    // Both exits sit in the stage after the condition, and r0 is never carried.
    assert_eq!(drop.stage, 2);
    assert_eq!(pass.stage, 2);
    assert!(p.stages.iter().all(|s| !s.live_regs.contains(0)), "{text}");
}

/// A caller tail-calling through map 0, with r6-r9 set before the call and `after` run when it fails; an XDP
/// callee; a program of another type.
fn tail_call_object(after: &str) -> Vec<ProgramSpec> {
    let caller = spec(&format!(
        "r6 = 1\nr7 = 2\nr8 = 3\nr9 = 4\nld_pseudo r2, 1, 0\nr3 = 0\ncall 12\n{after}"
    ));
    let mut callee = spec("r0 = 3\nexit");
    callee.name = "callee".into();
    let mut other = spec("r0 = 1\nexit");
    other.name = "not_xdp".into();
    other.section = "tc".into();
    vec![caller, callee, other]
}

fn tail_call_compile(map_type: u32, after: &str) -> Result<hwxdp_ehdl::Pipeline, EhdlError> {
    let programs = tail_call_object(after);
    let maps = [MapSpec::new("m", map_type, 4, 4, 4)];
    hwxdp_ehdl::compile_object(
        &programs[0],
        &programs,
        &maps,
        &hwxdp_ehdl::Options::default(),
    )
}

#[test]
fn tail_calls_inline_the_xdp_programs_without_tail_calls_of_their_own() {
    // The caller (which tail-calls) and the non-XDP program are no candidates; r6 stays live across the call, so
    // the context is kept in r7.
    let p = tail_call_compile(3, "r0 = r6\nexit").expect("inlines");
    assert_eq!(p.tail_targets, [1]);
    let text = hwxdp_ehdl::text(&p);
    assert!(
        text.contains("call 239927314") && text.contains("if r0 == 2 goto"),
        "{text}"
    );
    let programs = tail_call_object("r0 = r6\nexit");
    let maps = [MapSpec::new("m", 3, 4, 4, 4)];
    let flat = flatten(&programs[0], &maps, 1000).expect("flattens");
    let merged =
        hwxdp_ehdl::tailcall::inline(&programs[0], flat, &programs, &maps, 1000).expect("inlines");
    let mov = |dst: u8, src: u8| hwxdp_ebpf::InsnKind::Alu {
        wide: true,
        op: hwxdp_ebpf::AluOp::Mov,
        dst,
        src: hwxdp_ebpf::Source::Reg(src),
    };
    let kinds: Vec<_> = merged
        .spec
        .insns
        .iter()
        .map(|i| hwxdp_ebpf::kind(i).expect("valid"))
        .collect();
    assert!(
        kinds.contains(&mov(7, 1)) && kinds.contains(&mov(1, 7)),
        "{kinds:?}"
    );
}

#[test]
fn tail_calls_that_cannot_be_inlined_are_refused_naming_the_call() {
    let err = tail_call_compile(2, "r0 = 2\nexit").expect_err("an ARRAY, not a PROG_ARRAY");
    assert_eq!(
        err.to_string(),
        "program test: instruction 7: cannot inline the tail call: r2 is not a constant PROG_ARRAY"
    );
    let err = tail_call_compile(3, "r0 = r6\nr0 += r7\nr0 += r8\nr0 += r9\nexit")
        .expect_err("r6-r9 all live");
    assert!(
        matches!(&err, EhdlError::TailCall { insn: 7, why, .. } if why.contains("r6-r9 are all live")),
        "{err}"
    );
}

/// `levels` functions after the program, each calling the next `calls` times (the last returns 2): the program
/// calls the first.
fn call_chain(levels: usize, calls: usize) -> ProgramSpec {
    use hwxdp_ebpf::Insn;
    let per = calls + 2;
    let mut insns = vec![Insn::new(0x85, 0, 1, 0, 1), Insn::new(0x95, 0, 0, 0, 0)];
    for level in 1..=levels {
        let next = 2 + level * per;
        for _ in 0..calls {
            let at = insns.len();
            insns.push(if level < levels {
                Insn::new(0x85, 0, 1, 0, (next - at - 1) as i64)
            } else {
                Insn::new(0xb7, 0, 0, 0, 2)
            });
        }
        insns.push(Insn::new(0xb7, 0, 0, 0, 2));
        insns.push(Insn::new(0x95, 0, 0, 0, 0));
    }
    ProgramSpec::standalone("chain", "xdp", insns)
}

/// Inlining recursed once per call frame without a bound (a chain of 20,000 functions overflowed the stack; 100
/// here) and copied a callee once per call (30 calls a level, 7 levels: 30^6 copies, an allocation failure): calls
/// nest at most the kernel's 8 frames, and inlining stops at the instruction limit.
#[test]
fn deep_and_doubling_call_chains_are_refused_by_name() {
    flatten(&call_chain(7, 1), &[], 16384).expect("eight frames inline");
    match flatten(&call_chain(100, 1), &[], 16384) {
        Err(EhdlError::Inline { why, callee, .. }) => {
            assert_eq!(
                why,
                "calls nested deeper than 8 frames (the kernel's limit)"
            );
            assert!(callee.starts_with("sub_"), "{callee}");
        }
        other => panic!(
            "not refused as too deep: {:?}",
            other.map(|f| f.spec.insns.len())
        ),
    }
    match flatten(&call_chain(7, 30), &[], 16384) {
        Err(EhdlError::TooLarge { insns, limit, .. }) => {
            assert_eq!(limit, 16384);
            assert!(insns > limit && insns < 2 * limit, "{insns}");
        }
        other => panic!(
            "not refused as too large: {:?}",
            other.map(|f| f.spec.insns.len())
        ),
    }
}
