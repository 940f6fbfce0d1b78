//! The programs of `tests/ebpflow_programs.txt`, parsed: one module that the engine RTL test
//! (`crates/rtlsim/tests/ebpflow.rs`) and the engine model's cycle test (`crates/ebpflow/tests/rtl_cycles.rs`) both
//! include with `#[path]`, so the file's format is read in one place.
//!
//! Format: `== NAME` starts a program, `mem HEX HEX ...` gives its memory bytes, every other line is assembly;
//! `#` lines and blank lines are skipped.

use hwxdp_ebpf::Insn;

const PROGRAMS: &str = include_str!("../ebpflow_programs.txt");

/// A program with its memory.
pub struct Case {
    /// The name after `==`.
    pub name: String,
    /// The memory the program is given (empty without a `mem` line).
    pub memory: Vec<u8>,
    /// The assembled instructions.
    pub insns: Vec<Insn>,
}

/// Every program of the file, in file order; panics naming the program whose text does not assemble.
pub fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    let mut text = String::new();
    let mut finish = |name: Option<String>, memory: Vec<u8>, text: &mut String| {
        if let Some(name) = name {
            let insns =
                hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            out.push(Case {
                name,
                memory,
                insns,
            });
        }
        text.clear();
    };
    let mut name = None;
    let mut memory = Vec::new();
    for line in PROGRAMS.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(n) = line.strip_prefix("== ") {
            finish(name.take(), std::mem::take(&mut memory), &mut text);
            name = Some(n.trim().to_string());
        } else if let Some(m) = line.strip_prefix("mem ") {
            memory = m
                .split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                .collect();
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    finish(name, memory, &mut text);
    out
}
