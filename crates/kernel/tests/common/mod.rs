//! Shared by the kernel tests: fixture compilation, the bpf precondition, hand-written specs.

#![allow(dead_code)]

use hwxdp_object::{MapKind, MapSpec, ObjectSpec, ProgramSpec};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const ARRAY: u32 = 2;
pub const HASH: u32 = 1;
pub const PROG_ARRAY: u32 = 3;
pub const PERCPU_ARRAY: u32 = 6;
pub const LRU_HASH: u32 = 9;
pub const LPM_TRIE: u32 = 11;
pub const DEVMAP: u32 = 14;
pub const RINGBUF: u32 = 27;

static BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Compiles `tests/fixtures/<name>.c` with `clang -O2 -g -target bpf` and returns the object's bytes.
pub fn compile(name: &str) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.c"));
    // Tests run in parallel and may build the same fixture: each build gets its own file.
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    let out =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}-{n}.o", std::process::id()));
    let arch_include = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let result = Command::new("clang")
        .args(["-O2", "-g", "-target", "bpf", &arch_include, "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output();
    let output = match result {
        Ok(output) => output,
        Err(e) => panic!("cannot run clang to build fixture {name} (is clang installed?): {e}"),
    };
    assert!(
        output.status.success(),
        "clang failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes =
        std::fs::read(&out).unwrap_or_else(|e| panic!("cannot read {}: {e}", out.display()));
    let _ = std::fs::remove_file(&out);
    bytes
}

/// These tests need root and a working bpf(): without them they fail, never skip.
pub fn require_bpf() {
    if let Err(e) = hwxdp_kernel::bpf_available() {
        panic!("the kernel tests need root and bpf(): {e}");
    }
}

pub fn program(name: &str, section: &str) -> ProgramSpec {
    ProgramSpec {
        name: name.to_string(),
        section: section.to_string(),
        insns: Vec::new(),
        own_len: 0,
        functions: vec![(0, name.to_string())],
    }
}

pub fn map(name: &str, map_type: u32, key_size: u32, value_size: u32, max_entries: u32) -> MapSpec {
    MapSpec {
        name: name.to_string(),
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags: 0,
        kind: MapKind::BtfDefined,
        initial_value: None,
    }
}

pub fn global(section: &str, initial: &[u8]) -> MapSpec {
    MapSpec {
        kind: MapKind::Global,
        initial_value: Some(initial.to_vec()),
        ..map(section, ARRAY, 4, initial.len() as u32, 1)
    }
}

pub fn spec(programs: Vec<ProgramSpec>, maps: Vec<MapSpec>) -> ObjectSpec {
    ObjectSpec {
        programs,
        maps,
        license: "GPL".to_string(),
    }
}

/// `verdicts.c`, as `hwxdp_object::parse` describes it.
pub fn verdicts_spec() -> ObjectSpec {
    spec(
        vec![
            program("xdp_swap", "xdp"),
            program("xdp_md_fields", "xdp"),
            program("xdp_adjust", "xdp"),
            program("xdp_tail_entry", "xdp"),
            program("xdp_tail_target", "xdp"),
            program("tc_other", "tc"),
        ],
        vec![
            map("md_seen", ARRAY, 4, 4, 2),
            map("jmp_table", PROG_ARRAY, 4, 4, 4),
        ],
    )
}

/// A 64-byte Ethernet frame with distinct MAC addresses and a counting payload.
pub fn frame() -> Vec<u8> {
    let mut packet = vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00];
    packet.extend((0..50u8).map(|i| i.wrapping_mul(3)));
    packet
}

pub fn u32_bytes(v: u32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
