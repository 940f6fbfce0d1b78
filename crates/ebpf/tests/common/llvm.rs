//! Running the LLVM tools and reading llvm-objdump output. A missing tool fails the calling test with the package
//! to install.

use std::path::PathBuf;
use std::process::Command;

pub fn run(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool).args(args).output().unwrap_or_else(|e| {
        panic!(
            "cannot run {tool} ({e}): install llvm-19 and llvm-14 (apt-get install llvm-19 llvm)"
        )
    });
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("tool output is utf-8")
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ebpf-golden");
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir.join(name)
}

/// Assembles `source` with llvm-mc-19 for BPF v4 and returns the object's path.
pub fn llvm_mc(name: &str, source: &str) -> String {
    let s = scratch(&format!("{name}.s"));
    let o = scratch(&format!("{name}.o"));
    std::fs::write(&s, source).expect("write assembly");
    let (s, o) = (
        s.to_str().expect("utf-8 path"),
        o.to_str().expect("utf-8 path"),
    );
    run(
        "llvm-mc-19",
        &["-triple", "bpfel", "-mcpu=v4", "-filetype=obj", s, "-o", o],
    );
    o.to_string()
}

/// The part of `llvm-objdump -d` output after `Disassembly of section .text:`.
pub fn text_body(dump: &str) -> &str {
    let header = "Disassembly of section .text:\n";
    let at = dump.find(header).expect("objdump prints the .text section");
    &dump[at + header.len()..]
}

/// One disassembled instruction: its bytes and its text without the jump-target label.
pub struct Line {
    /// Slot number llvm-objdump prints.
    pub slot: usize,
    /// The instruction's bytes.
    pub bytes: Vec<u8>,
    /// The instruction's text.
    pub text: String,
}

pub fn insn_lines(body: &str) -> Vec<Line> {
    body.lines()
        .filter(|l| l.starts_with(' '))
        .map(|l| {
            let mut fields = l.splitn(3, '\t');
            let slot = fields
                .next()
                .expect("slot field")
                .trim()
                .trim_end_matches(':');
            let slot = slot.parse().expect("slot number");
            let bytes = fields.next().expect("bytes field");
            let text = fields.next().expect("text field");
            let text = match (text.rfind(" <"), text.ends_with('>')) {
                (Some(at), true) if text.contains("goto") => &text[..at],
                _ => text,
            };
            let bytes = bytes
                .split(' ')
                .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                .collect();
            Line {
                slot,
                bytes,
                text: text.to_string(),
            }
        })
        .collect()
}
