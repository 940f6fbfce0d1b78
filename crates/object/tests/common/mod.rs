//! Builds the C fixtures with clang at test time and reads `llvm-objdump -dr` listings to cross-check relocations.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use hwxdp_ebpf::{slot_offsets, Insn};
use hwxdp_object::ProgramSpec;

static NEXT_OBJECT: AtomicUsize = AtomicUsize::new(0);

/// A compiled fixture, deleted when dropped.
pub struct Built {
    /// Path of the object file.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Drop for Built {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {what} ({e}): install clang/llvm, these tests need them")
    });
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Compiles `tests/fixtures/<name>.c` with `clang -O2 -g -target bpf -c`, or with `extra` flags instead of the target.
pub fn compile_with(name: &str, target: &[&str]) -> Built {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.c"));
    let dir = std::env::temp_dir().join(format!("hwxdp-object-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let n = NEXT_OBJECT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{name}-{n}.o"));
    // The multiarch include directory holds asm/types.h for linux/bpf.h; a fresh Debian machine has no
    // /usr/include/asm (only gcc-multilib provides that link).
    let arch_include = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    run(
        Command::new("clang")
            .args(["-O2", "-g"])
            .args(target)
            .arg(&arch_include)
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&path),
        "clang",
    );
    let bytes = std::fs::read(&path).expect("read compiled object");
    Built { path, bytes }
}

/// Compiles a fixture for BPF.
pub fn compile(name: &str) -> Built {
    compile_with(name, &["-target", "bpf"])
}

/// One relocation as `llvm-objdump -dr` lists it.
#[derive(Debug)]
pub struct ListedReloc {
    /// Section it applies to.
    pub section: String,
    /// Slot of the instruction.
    pub slot: usize,
    /// `R_BPF_64_64`, `R_BPF_64_32`, ...
    pub kind: String,
    /// Symbol (or section) name.
    pub symbol: String,
}

/// The relocations of code sections, from `llvm-objdump -dr`.
pub fn objdump_relocs(path: &Path) -> Vec<ListedReloc> {
    let text = run(
        Command::new("llvm-objdump").arg("-dr").arg(path),
        "llvm-objdump",
    );
    let mut section = String::new();
    let mut relocs = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Disassembly of section ") {
            section = rest.trim_end_matches(':').to_string();
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() == 3 && fields[1].starts_with("R_BPF") {
            let offset =
                u64::from_str_radix(fields[0].trim_end_matches(':'), 16).expect("hex offset");
            relocs.push(ListedReloc {
                section: section.clone(),
                slot: (offset / 8) as usize,
                kind: fields[1].to_string(),
                symbol: fields[2].to_string(),
            });
        }
    }
    relocs
}

/// Index in `insns` of the instruction at `slot`.
pub fn insn_at_slot(insns: &[Insn], slot: usize) -> usize {
    slot_offsets(insns)
        .iter()
        .position(|&s| s == slot)
        .unwrap_or_else(|| panic!("no instruction starts at slot {slot}"))
}

/// Name of the function a call (or callback lddw) at instruction `at` of `prog` lands on, with the offset into it.
pub fn call_target(prog: &ProgramSpec, at: usize) -> (String, usize) {
    let slots = slot_offsets(&prog.insns);
    let target_slot = slots[at] as i64 + i64::from(prog.insns[at].imm as i32) + 1;
    let target = slots
        .iter()
        .position(|&s| s as i64 == target_slot)
        .unwrap_or_else(|| panic!("call at {at} lands on slot {target_slot}, not an instruction"));
    let (start, name) = prog
        .functions
        .iter()
        .filter(|(start, _)| *start <= target)
        .max_by_key(|(start, _)| *start)
        .expect("a function contains the target");
    (name.clone(), target - start)
}
