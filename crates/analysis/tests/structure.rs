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

/// Immediate dominators from dominator sets: each node's dominators to a fixpoint, the immediate one the strict
/// dominator that every other strict dominator dominates.
fn idoms_from_sets(n: usize, entry: usize, preds: &[Vec<usize>]) -> Vec<Option<usize>> {
    let reach = {
        let mut seen = vec![false; n];
        let mut work = vec![entry];
        seen[entry] = true;
        while let Some(v) = work.pop() {
            for w in (0..n).filter(|&w| preds[w].contains(&v)) {
                if !seen[w] {
                    seen[w] = true;
                    work.push(w);
                }
            }
        }
        seen
    };
    let mut dom: Vec<Vec<bool>> = (0..n)
        .map(|v| (0..n).map(|d| v != entry || d == entry).collect())
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for v in (0..n).filter(|&v| v != entry && reach[v]) {
            let mut set = vec![true; n];
            for &p in preds[v].iter().filter(|&&p| reach[p]) {
                for d in 0..n {
                    set[d] &= dom[p][d];
                }
            }
            set[v] = true;
            if set != dom[v] {
                dom[v] = set;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|v| {
            if !reach[v] {
                return None;
            }
            if v == entry {
                return Some(entry);
            }
            (0..n)
                .find(|&d| d != v && dom[v][d] && (0..n).all(|e| e == v || !dom[v][e] || dom[d][e]))
        })
        .collect()
}

#[test]
fn immediate_dominators_match_the_dominator_sets_on_random_graphs_and_a_ladder() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut graphs: Vec<(usize, Vec<Vec<usize>>)> = (0..300)
        .map(|_| {
            let n = 1 + next(24) as usize;
            let succs = (0..n)
                .map(|_| (0..next(4)).map(|_| next(n as u64) as usize).collect())
                .collect();
            (n, succs)
        })
        .collect();
    // The ladder that made the iterative algorithm quadratic: jumps j_i to j_{i+1} and to d_i, d_i to d_{i+1}.
    let k = 40;
    let ladder = (0..2 * k)
        .map(|v| match v {
            v if v < k - 1 => vec![v + 1, k + v],
            v if v == k - 1 => vec![2 * k - 1],
            v if v < 2 * k - 1 => vec![v + 1],
            _ => vec![],
        })
        .collect();
    graphs.push((2 * k, ladder));
    for (n, succs) in graphs {
        let mut preds = vec![Vec::new(); n];
        for (v, out) in succs.iter().enumerate() {
            for &w in out {
                preds[w].push(v);
            }
        }
        let entry = 0;
        assert_eq!(
            hwxdp_analysis::immediate_dominators(n, entry, &succs, &preds),
            idoms_from_sets(n, entry, &preds),
            "{succs:?}"
        );
    }
}
