//! The pipeline as text (the golden-file format), as Graphviz, and as JSON.

use crate::ir::{OpKind, Pipeline, PredDef, Stage};
use std::fmt::Write;

/// The name of a condition op's output: `c` and its flattened instruction.
fn cond_name(p: &Pipeline, op: u32) -> String {
    format!("c{}", p.ops[op as usize].insn)
}

/// A predicate's definition as a boolean expression.
pub fn pred_expr(p: &Pipeline, d: &PredDef) -> String {
    if d.terms.is_empty() {
        return "valid".into();
    }
    let terms: Vec<String> = d
        .terms
        .iter()
        .map(|&(src, cond)| match cond {
            None => format!("p{src}"),
            Some((c, true)) => format!("p{src}&{}", cond_name(p, c)),
            Some((c, false)) => format!("p{src}&!{}", cond_name(p, c)),
        })
        .collect();
    terms.join(" | ")
}

fn live_line(p: &Pipeline, s: &Stage) -> String {
    let preds: Vec<String> = s.live_preds.iter().map(|x| format!("p{x}")).collect();
    let conds: Vec<String> = s.live_conds.iter().map(|&c| cond_name(p, c)).collect();
    let dash = |v: Vec<String>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(",")
        }
    };
    format!(
        "regs {} stack {} preds {} conds {} ({} bits)",
        s.live_regs,
        s.live_stack,
        dash(preds),
        dash(conds),
        s.state_bits()
    )
}

fn op_line(p: &Pipeline, o: u32) -> String {
    let op = &p.ops[o as usize];
    let mut line = format!("[p{}] {}: {}", op.pred, op.insn, op.text);
    let mut notes = Vec::new();
    if op.label != crate::ir::Label::None {
        notes.push(op.label.name());
    }
    if let Some((a, b)) = op.frames {
        notes.push(if a == b {
            format!("frame {a}")
        } else {
            format!("frames {a}-{b}")
        });
    }
    if let Some(shift) = op.data_shift.filter(|s| *s != 0) {
        notes.push(format!("data moved {shift}"));
    }
    if matches!(op.kind, OpKind::Cond | OpKind::LenCheck { .. }) {
        notes.push(format!("-> {}", cond_name(p, o)));
    }
    if let OpKind::Helper { instance, .. } = &op.kind {
        notes.push(format!("block #{instance}"));
    }
    if !op.fused.is_empty() {
        let f: Vec<String> = op.fused.iter().map(|x| x.to_string()).collect();
        notes.push(format!("fuses {}", f.join(",")));
    }
    if !notes.is_empty() {
        let _ = write!(line, "  ; {}", notes.join(", "));
    }
    line
}

/// The pipeline diagram as text: figures, predicates, removed instructions, then stage by stage the ops with their
/// predicates and the live state entering the stage.
pub fn text(p: &Pipeline) -> String {
    let s = &p.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pipeline {}: {} eBPF instructions ({} flattened), {} ops, {} stages ({} NOP, {} helper), ILP max {} mean {:.2}",
        s.program, s.ebpf_insns, s.flat_insns, s.ops, s.stages, s.nop_stages, s.helper_stages, s.max_ilp, s.mean_ilp
    );
    let _ = writeln!(
        out,
        "data width {} bits; state bits {} pruned, {} unpruned; largest boundary {} bits; dynamic packet accesses {}",
        s.data_width, s.state_bits_pruned, s.state_bits_unpruned, s.max_boundary_bits, s.dynamic_packet_accesses
    );
    for l in &p.loops {
        let _ = writeln!(
            out,
            "loop at {} closed by {}: r{} bounds it, unrolled {} times",
            l.header, l.latch, l.induction, l.trips
        );
    }
    out.push_str("predicates:\n");
    for d in &p.preds {
        let _ = writeln!(
            out,
            "  p{} = {}  ; block at {}, ready at stage {}",
            d.id,
            pred_expr(p, d),
            d.block_insn,
            d.ready
        );
    }
    out.push_str("removed:\n");
    for (i, why) in &p.removed {
        let _ = writeln!(out, "  {i}: {why}");
    }
    for st in &p.stages {
        let kind = if st.nop {
            " NOP"
        } else if st.helper {
            " helper"
        } else {
            ""
        };
        let frame = st.frame.map_or(String::new(), |f| format!(" frame {f}"));
        let _ = writeln!(
            out,
            "stage {}{kind}{frame}: in {}",
            st.index,
            live_line(p, st)
        );
        for &o in &st.ops {
            let _ = writeln!(out, "  {}", op_line(p, o));
        }
    }
    out
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('{', "\\{")
        .replace('}', "\\}")
        .replace('<', "\\<")
        .replace('>', "\\>")
        .replace('|', "\\|")
}

/// The pipeline as a Graphviz digraph: one record per stage, edges labelled with the state they carry.
pub fn dot(p: &Pipeline) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&p.summary.program));
    out.push_str("  rankdir=TB;\n  node [shape=record, fontname=\"monospace\", fontsize=10];\n");
    for st in &p.stages {
        let mut label = format!("stage {}", st.index);
        if st.nop {
            label.push_str(" (NOP)");
        } else if st.helper {
            label.push_str(" (helper)");
        }
        if let Some(f) = st.frame {
            let _ = write!(label, " frame {f}");
        }
        label = dot_escape(&label);
        label.push('|');
        for &o in &st.ops {
            label.push_str(&dot_escape(&op_line(p, o)));
            label.push_str("\\l");
        }
        let color = if st.helper {
            ", style=filled, fillcolor=lightblue"
        } else if st.nop {
            ", style=dashed"
        } else {
            ""
        };
        let _ = writeln!(out, "  s{} [label=\"{{{label}}}\"{color}];", st.index);
    }
    out.push_str("  in [shape=plaintext, label=\"packet in\"];\n  out [shape=plaintext, label=\"packet out\"];\n");
    let mut prev = "in".to_string();
    for st in &p.stages {
        let _ = writeln!(
            out,
            "  {prev} -> s{} [label=\"{}\", fontsize=8];",
            st.index,
            dot_escape(&live_line(p, st))
        );
        prev = format!("s{}", st.index);
    }
    let _ = writeln!(out, "  {prev} -> out;");
    out.push_str("}\n");
    out
}

/// The whole pipeline (summary, predicates, ops, stages) as pretty-printed JSON.
pub fn json_summary(p: &Pipeline) -> String {
    serde_json::to_string_pretty(p).expect("the pipeline serializes")
}
