//! Shared helpers: hand-assembled programs compiled to pipelines.

#![allow(dead_code)]

use hwxdp_ehdl::{compile, EhdlError, Options, Pipeline};
use hwxdp_object::{MapSpec, ProgramSpec};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program from assembler text.
pub fn spec(text: &str) -> ProgramSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("test program assembles");
    ProgramSpec::standalone("test", "xdp", insns)
}

/// The pipeline of a program from assembler text, or why there is none.
pub fn try_pipeline(text: &str) -> Result<Pipeline, EhdlError> {
    compile(&spec(text), &[], &Options::default())
}

/// The pipeline of a program from assembler text with maps.
pub fn pipeline_with_maps(text: &str, maps: &[MapSpec]) -> Pipeline {
    compile(&spec(text), maps, &Options::default()).expect("test program compiles")
}

/// The pipeline of a program from assembler text.
pub fn pipeline(text: &str) -> Pipeline {
    try_pipeline(text).unwrap_or_else(|e| panic!("test program compiles: {e}"))
}

/// The stage of the op made from flattened instruction `insn`.
pub fn stage_of(p: &Pipeline, insn: u32) -> u32 {
    p.ops
        .iter()
        .find(|o| o.insn == insn || o.fused.contains(&insn))
        .unwrap_or_else(|| panic!("no op for instruction {insn}:\n{}", hwxdp_ehdl::text(p)))
        .stage
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example objects, built with `make -C examples/xdp` when missing.
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
    if sources.iter().any(|s| !object(s).exists()) {
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
