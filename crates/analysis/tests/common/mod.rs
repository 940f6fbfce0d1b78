//! Shared helpers for the unit tests: hand-written programs through the assembler.

use hwxdp_analysis::ProgramCfg;
use hwxdp_object::ProgramSpec;

/// A program from assembler text; labels named `fn_*` become function symbols.
pub fn spec(text: &str) -> ProgramSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("test program assembles");
    ProgramSpec::standalone("test", "xdp", insns)
}

/// The CFG of a program from assembler text.
pub fn cfg(text: &str) -> ProgramCfg {
    ProgramCfg::build(&spec(text)).expect("test program builds a cfg")
}
