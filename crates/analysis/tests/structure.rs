//! CFG, dominators, control equivalence and paths on small hand-written programs.

mod common;

use common::{cfg, spec};
use hwxdp_analysis::{
    AnalysisError, BlockId, ControlEquivalence, DomTree, EdgeKind, FuncId, InsnId, PathEnd, Paths,
    ProgramCfg,
};

const DIAMOND: &str = "
    r0 = 1
    if r1 > 5 goto right
    r0 = 2
    goto join
right:
    r0 = 3
join:
    exit
";

#[test]
fn diamond_blocks_and_edges() {
    let prog = cfg(DIAMOND);
    assert_eq!(prog.funcs.len(), 1);
    let f = prog.func(FuncId(0));
    let ranges: Vec<(u32, u32)> = f.blocks.iter().map(|b| (b.start.0, b.end.0)).collect();
    assert_eq!(ranges, vec![(0, 2), (2, 4), (4, 5), (5, 6)]);
    assert_eq!(
        f.block(BlockId(0)).succs,
        vec![
            (BlockId(1), EdgeKind::Fallthrough),
            (BlockId(2), EdgeKind::Taken)
        ]
    );
    assert_eq!(
        f.block(BlockId(1)).succs,
        vec![(BlockId(3), EdgeKind::Jump)]
    );
    assert_eq!(f.block(BlockId(3)).preds, vec![BlockId(1), BlockId(2)]);
    assert_eq!(f.exits, vec![BlockId(3)]);
    assert!(f.unreachable().is_empty());
    assert_eq!(f.block_of(InsnId(4)), Some(BlockId(2)));
}

#[test]
fn code_after_exit_is_unreachable() {
    let prog = cfg("r0 = 0\nexit\nr0 = 1\nexit");
    let f = prog.func(FuncId(0));
    assert_eq!(f.blocks.len(), 2);
    assert_eq!(f.unreachable(), vec![BlockId(1)]);
    assert_eq!(f.exits, vec![BlockId(0), BlockId(1)]);
}

#[test]
fn jump_targets_count_lddw_as_one_instruction() {
    let prog = cfg("if r1 == 0 goto end\nr2 = 7 ll\nend: r0 = 0\nexit");
    let f = prog.func(FuncId(0));
    assert_eq!(f.block(BlockId(0)).succs[1], (BlockId(2), EdgeKind::Taken));
    assert_eq!(f.block(BlockId(2)).start, InsnId(2));
}

#[test]
fn callees_are_functions_with_a_call_graph() {
    let prog = cfg("
        call sub
        call sub
        exit
    sub:
        call leaf
        exit
    leaf:
        r0 = 0
        exit
    ");
    assert_eq!(prog.funcs.len(), 3);
    assert_eq!(prog.func(FuncId(1)).start, InsnId(3));
    assert_eq!(prog.func(FuncId(1)).name, "sub_3");
    assert_eq!(prog.callee_at(InsnId(1)), Some(FuncId(1)));
    assert_eq!(prog.callee_at(InsnId(3)), Some(FuncId(2)));
    assert_eq!(prog.calls.len(), 3);
    assert_eq!(prog.callees_first(), vec![FuncId(2), FuncId(1), FuncId(0)]);
    // The call does not end the caller's block.
    assert_eq!(prog.func(FuncId(0)).blocks.len(), 1);
}

#[test]
fn malformed_programs_are_errors() {
    let mut s = spec("r0 = 0\nexit");
    s.insns.clear();
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::Empty { .. })
    ));

    let s = spec("r0 = 0\nif r1 > 2 goto +5\nexit");
    let err = ProgramCfg::build(&s).unwrap_err();
    assert!(
        matches!(err, AnalysisError::JumpTarget { insn: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("instruction 1"), "{err}");

    let s = spec("r0 = 0\nif r1 > 2 goto +1\nexit\nr0 = 1");
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::FallsOff { insn: 3, .. })
    ));

    let mut s = spec("r0 = 0\nexit");
    s.insns[0].code = 0xff;
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::Invalid { insn: 0, .. })
    ));

    // A jump from the program into its callee leaves the function.
    let s = spec("call sub\ngoto inner\nexit\nsub: r0 = 0\ninner: exit");
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::JumpTarget { insn: 1, .. })
    ));
}

#[test]
fn dominators_post_dominators_and_equivalence() {
    let prog = cfg(DIAMOND);
    let f = prog.func(FuncId(0));
    let dom = DomTree::dominators(f);
    let pdom = DomTree::post_dominators(f);
    assert_eq!(dom.idom(BlockId(3)), Some(BlockId(0)));
    assert_eq!(dom.idom(BlockId(1)), Some(BlockId(0)));
    assert!(dom.dominates(BlockId(0), BlockId(2)));
    assert!(!dom.dominates(BlockId(1), BlockId(3)));
    assert_eq!(pdom.idom(BlockId(0)), Some(BlockId(3)));
    assert_eq!(pdom.idom(BlockId(3)), None);
    assert!(pdom.dominates(BlockId(3), BlockId(1)));
    assert!(!pdom.dominates(BlockId(1), BlockId(0)));
    assert_eq!(dom.frontiers(f)[1], vec![BlockId(3)]);
    assert!(dom.frontiers(f)[0].is_empty());

    let eq = ControlEquivalence::compute(f, &dom, &pdom);
    assert!(eq.equivalent(BlockId(0), BlockId(3)));
    assert!(!eq.equivalent(BlockId(0), BlockId(1)));
    assert!(!eq.equivalent(BlockId(1), BlockId(2)));
    assert_eq!(
        eq.classes,
        vec![
            vec![BlockId(0), BlockId(3)],
            vec![BlockId(1)],
            vec![BlockId(2)]
        ]
    );
}

#[test]
fn early_exit_breaks_control_equivalence() {
    // bb0 branches to an early exit (bb1) or on to bb2; bb2 does not post-dominate bb0.
    let prog = cfg("
        if r1 == 0 goto rest
        r0 = 1
        exit
    rest:
        r0 = 2
        exit
    ");
    let f = prog.func(FuncId(0));
    let dom = DomTree::dominators(f);
    let pdom = DomTree::post_dominators(f);
    let eq = ControlEquivalence::compute(f, &dom, &pdom);
    assert_eq!(pdom.idom(BlockId(0)), None);
    assert!(!eq.equivalent(BlockId(0), BlockId(2)));
    assert_eq!(eq.classes.len(), 3);
}

#[test]
fn acyclic_paths_are_counted_and_listed() {
    let prog = cfg("
        if r1 == 0 goto a
        r0 = 1
    a:
        if r2 == 0 goto b
        r0 = 2
    b:
        exit
    ");
    let f = prog.func(FuncId(0));
    let paths = Paths::compute(f, 100);
    assert!(!paths.has_loops());
    assert_eq!(paths.count, 4);
    assert_eq!(paths.paths.len(), 4);
    assert!(paths.paths.iter().all(|p| p.end == PathEnd::Exit));
    assert_eq!(
        paths.paths[0].blocks,
        vec![BlockId(0), BlockId(1), BlockId(2), BlockId(3), BlockId(4)]
    );
    let capped = Paths::compute(f, 3);
    assert_eq!(capped.count, 4);
    assert_eq!(capped.paths.len(), 3);
    assert!(capped.truncated());
}

#[test]
fn loops_report_back_edges_and_end_paths_there() {
    let prog = cfg("
        r0 = 0
    top:
        r0 += 1
        if r0 < 10 goto top
        exit
    ");
    let f = prog.func(FuncId(0));
    let paths = Paths::compute(f, 10);
    assert!(paths.has_loops());
    assert_eq!(paths.back_edges, vec![(BlockId(1), BlockId(1))]);
    assert_eq!(paths.count, 2);
    let ends: Vec<PathEnd> = paths.paths.iter().map(|p| p.end).collect();
    assert!(ends.contains(&PathEnd::Exit));
    assert!(ends.contains(&PathEnd::BackEdge(BlockId(1))));
}

#[test]
fn errors_name_instructions_by_slot() {
    // The lddw takes slots 0 and 1, so the jump is instruction 2, as llvm-objdump and the verifier number it.
    let s = spec("r1 = 5 ll\nif r1 > 2 goto +5\nexit");
    let err = ProgramCfg::build(&s).unwrap_err();
    assert!(
        matches!(
            err,
            AnalysisError::JumpTarget {
                insn: 2,
                slot: 8,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("instruction 2:"), "{err}");
    let s = spec("r1 = 5 ll\nif r1 > 2 goto +1\nexit\nr0 = 1");
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::FallsOff { insn: 4, .. })
    ));
    let mut s = spec("r1 = 5 ll\nr0 = 0\nexit");
    s.insns[1].code = 0xff;
    assert!(matches!(
        ProgramCfg::build(&s),
        Err(AnalysisError::Invalid { insn: 2, .. })
    ));
}
