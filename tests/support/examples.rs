//! The bundled XDP examples for the crates' own tests (std only, so any crate's tests can include it with
//! `#[path = "../../../tests/support/examples.rs"] mod examples;`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (every crate sits at `crates/<name>`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example objects in name order, built with `make -C examples/xdp` when any is missing.
pub fn example_objects() -> Vec<PathBuf> {
    let dir = root().join("build/examples/xdp");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root().join("examples/xdp"))
        .expect("examples/xdp is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    assert!(!sources.is_empty(), "no examples/xdp/*.c found");
    let object = |src: &PathBuf| {
        dir.join(src.file_stem().unwrap_or_default())
            .with_extension("o")
    };
    if sources.iter().any(|src| !object(src).exists()) {
        let status = Command::new("make")
            .arg("-C")
            .arg(root().join("examples/xdp"))
            .status()
            .expect("make runs");
        assert!(
            status.success(),
            "make -C examples/xdp failed: building the examples needs clang (-target bpf)"
        );
    }
    sources.iter().map(object).collect()
}
