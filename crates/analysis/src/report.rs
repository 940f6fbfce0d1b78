//! A deterministic text dump of every analysis, for golden tests and for reading.

use crate::paths::DEFAULT_PATH_CAP;
use crate::stack::StackLiveness;
use crate::{
    AnalysisError, Cfg, ControlEquivalence, DomTree, Liveness, Paths, Patterns, ProgramCfg,
    ReachingDefs, Regions, Ssa,
};
use hwxdp_ebpf::disasm::format_kind;
use hwxdp_object::{MapSpec, ProgramSpec};
use std::fmt::Write;

/// The report of [`report_with_maps`] without map sizes (helpers' key and value reads are then assumed to reach
/// the top of the frame).
pub fn report(spec: &ProgramSpec) -> Result<String, AnalysisError> {
    report_with_maps(spec, &[])
}

/// Runs every analysis on `spec` (with the object's `maps`, for key and value sizes) and prints the results.
pub fn report_with_maps(spec: &ProgramSpec, maps: &[MapSpec]) -> Result<String, AnalysisError> {
    let prog = ProgramCfg::build(spec)?;
    let live = Liveness::compute(&prog);
    let regions = Regions::compute(&prog, maps);
    let stack = StackLiveness::compute(&prog, &regions, maps);
    let reaching = ReachingDefs::compute(&prog, &live);
    let ssa = Ssa::compute(&prog, &live);
    let patterns = Patterns::compute(&prog, &regions);

    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "program {}: {} instructions, {} functions",
        prog.name,
        prog.kinds.len(),
        prog.funcs.len()
    );
    for cfg in &prog.funcs {
        let _ = writeln!(
            w,
            "  {} {} [{}, {}) args {} returns {}",
            cfg.func,
            cfg.name,
            cfg.start,
            cfg.end,
            live.func_args[cfg.func.index()],
            regions.returns[cfg.func.index()]
        );
    }
    for call in &prog.calls {
        let _ = writeln!(
            w,
            "  call {}: {} -> {}",
            call.insn, call.caller, call.callee
        );
    }
    for cfg in &prog.funcs {
        function(w, cfg, &live, &stack);
        let _ = writeln!(w, "instructions:");
        for i in cfg.start.index()..cfg.end.index() {
            let id = crate::InsnId::new(i);
            let label = regions
                .label(id)
                .map_or(String::new(), |l| format!(" [{l}]"));
            let uses: Vec<String> = reaching.uses[i]
                .iter()
                .map(|(r, defs)| {
                    let defs: Vec<String> = defs.iter().map(|d| d.to_string()).collect();
                    format!("r{r}<{}", defs.join(","))
                })
                .collect();
            let _ = writeln!(
                w,
                "  {:>4}: {:<40} live {:<20} defs {}{}",
                id,
                format_kind(&prog.kinds[i]),
                live.insn_in[i].to_string(),
                if uses.is_empty() {
                    "-".to_string()
                } else {
                    uses.join(" ")
                },
                label
            );
        }
    }
    let _ = writeln!(w, "bounds checks:");
    for c in &patterns.bounds_checks {
        let _ = writeln!(w, "  {c}");
    }
    let _ = writeln!(w, "stack zeroing:");
    for z in &patterns.zero_runs {
        let _ = writeln!(w, "  {z}");
    }
    let _ = writeln!(w, "ssa:");
    out.push_str(&ssa.dump(&prog));
    Ok(out)
}

fn function(w: &mut String, cfg: &Cfg, live: &Liveness, stack: &StackLiveness) {
    let fi = cfg.func.index();
    let dom = DomTree::dominators(cfg);
    let pdom = DomTree::post_dominators(cfg);
    let eq = ControlEquivalence::compute(cfg, &dom, &pdom);
    let paths = Paths::compute(cfg, DEFAULT_PATH_CAP);
    let _ = writeln!(w, "== {} {} ==", cfg.func, cfg.name);
    let _ = writeln!(w, "blocks:");
    let opt = |b: Option<crate::BlockId>| b.map_or("-".to_string(), |b| b.to_string());
    for b in cfg.block_ids() {
        let block = cfg.block(b);
        let succs: Vec<String> = block
            .succs
            .iter()
            .map(|(s, k)| format!("{s} {}", k.name()))
            .collect();
        let preds: Vec<String> = block.preds.iter().map(|p| p.to_string()).collect();
        let _ = writeln!(
            w,
            "  {b} [{}, {}){} succs [{}] preds [{}] idom {} ipdom {}",
            block.start,
            block.end,
            if cfg.reachable[b.index()] {
                ""
            } else {
                " unreachable"
            },
            succs.join(", "),
            preds.join(", "),
            opt(dom.idom(b)),
            opt(pdom.idom(b)),
        );
        let _ = writeln!(
            w,
            "      live in {} out {} stack in {}",
            live.block_in[fi][b.index()],
            live.block_out[fi][b.index()],
            stack.block_in[fi][b.index()]
        );
    }
    let exits: Vec<String> = cfg.exits.iter().map(|b| b.to_string()).collect();
    let _ = writeln!(w, "exits: {}", exits.join(" "));
    let _ = writeln!(w, "unreachable: {}", cfg.unreachable().len());
    let classes: Vec<String> = eq
        .classes
        .iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let c: Vec<String> = c.iter().map(|b| b.to_string()).collect();
            format!("{{{}}}", c.join(" "))
        })
        .collect();
    let classes = if classes.is_empty() {
        "-".to_string()
    } else {
        classes.join(" ")
    };
    let _ = writeln!(w, "control equivalent: {classes}");
    let back: Vec<String> = paths
        .back_edges
        .iter()
        .map(|(a, b)| format!("{a}->{b}"))
        .collect();
    let _ = writeln!(
        w,
        "paths: {} (listed {}{}), back edges: {}",
        paths.count,
        paths.paths.len(),
        if paths.truncated() { ", truncated" } else { "" },
        if back.is_empty() {
            "-".to_string()
        } else {
            back.join(" ")
        }
    );
    for p in &paths.paths {
        let _ = writeln!(w, "  {p}");
    }
}
