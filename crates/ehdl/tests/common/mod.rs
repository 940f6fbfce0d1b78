//! Shared helpers: hand-assembled programs compiled to pipelines.

#![allow(dead_code)]

use hwxdp_ehdl::{compile, EhdlError, Options, Pipeline};
use hwxdp_object::{MapSpec, ProgramSpec};

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

#[path = "../../../../tests/support/examples.rs"]
mod examples;

// Each test file includes this module and uses only part of it.
#[allow(unused_imports)]
pub use examples::{example_objects, root};

/// The bundled example object `<name>.o`, parsed.
pub fn example_object(name: &str) -> hwxdp_object::ObjectSpec {
    let file = format!("{name}.o");
    let path = example_objects()
        .into_iter()
        .find(|p| p.ends_with(&file))
        .unwrap_or_else(|| panic!("no example {file}"));
    hwxdp_object::parse(&std::fs::read(&path).expect("readable")).expect("parses")
}

/// The index of program `name` in `obj`.
pub fn program_index(obj: &hwxdp_object::ObjectSpec, name: &str) -> u32 {
    obj.programs
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no program {name}")) as u32
}
