//! Shared by the kernel tests: fixture compilation and parsing, the bpf precondition, packets.

#![allow(dead_code)]

use hwxdp_object::ObjectSpec;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Builds `tests/fixtures/<name>.c` and parses it with `hwxdp_object::parse`.
pub fn fixture(name: &str) -> (Vec<u8>, ObjectSpec) {
    let elf = compile(name);
    let spec = hwxdp_object::parse(&elf).unwrap_or_else(|e| panic!("parse fixture {name}: {e}"));
    (elf, spec)
}

/// Index of map `name` in `spec`.
pub fn map_index(spec: &ObjectSpec, name: &str) -> usize {
    spec.map_index(name)
        .unwrap_or_else(|| panic!("no map {name} in {:?}", spec.maps))
}

/// Index of program `name` in `spec`.
pub fn program_index(spec: &ObjectSpec, name: &str) -> usize {
    spec.programs
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no program {name}"))
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
