//! The eHDL front end (flattening, lowering, stage scheduling, pruning, the diagrams and the Verilog generator) on two
//! kinds of program, picked by the first input byte:
//!
//! - even: a random *valid* program (`valid_program`: ALU operations, bounds-checked packet loads and stores,
//!   forward branches), which must compile at the data width and pruning the next byte picks, schedule with no
//!   dependence violated (`sched::violations`) and render; the Verilog generator may refuse it, with an error;
//! - odd: up to 64 raw instructions beside maps of seven kinds, which the front end must either refuse with an error
//!   or compile, render and generate Verilog for (or refuse that with an error): never a panic.
#![no_main]

mod maps;
mod valid_program;

use hwxdp_ehdl::{compile, dot, json_summary, text, verilog, Options};
use hwxdp_object::{MapSpec, ProgramSpec};
use libfuzzer_sys::fuzz_target;

/// Data widths the front end is tried at (bits).
const WIDTHS: [u32; 4] = [64, 128, 256, 512];

fn options(pick: u8) -> Options {
    Options {
        data_width: WIDTHS[pick as usize % WIDTHS.len()],
        prune: pick & 4 == 0,
        hazards: if pick & 8 == 0 {
            verilog::Hazards::Stall
        } else {
            verilog::Hazards::Flush
        },
        ..Options::default()
    }
}

/// Renders the pipeline every way the command line does and generates its Verilog (an error is a refusal).
fn render(pipeline: &hwxdp_ehdl::Pipeline, maps: &[MapSpec], options: &Options) {
    assert!(!text(pipeline).is_empty());
    assert!(!dot(pipeline).is_empty());
    assert!(!json_summary(pipeline).is_empty());
    let _ = verilog::generate_with(pipeline, maps, "ehdl_fuzz", options.hazards);
}

fuzz_target!(|data: &[u8]| {
    let [mode, pick, rest @ ..] = data else {
        return;
    };
    let options = options(*pick);
    if mode & 1 == 0 {
        let len = (rest.len() / 4).min(64) * 4;
        if len == 0 {
            return;
        }
        let insns = valid_program::program(&rest[..len]);
        let spec = ProgramSpec::standalone("fuzz", "xdp", insns);
        let pipeline = match compile(&spec, &[], &options) {
            Ok(p) => p,
            Err(e) => panic!("a valid program is refused: {e}"),
        };
        render(&pipeline, &[], &options);
    } else {
        let len = (rest.len() / 8).min(64) * 8;
        let Ok(insns) = hwxdp_ebpf::decode(&rest[..len]) else {
            return;
        };
        if insns.is_empty() {
            return;
        }
        let maps = maps::one_of_each();
        let spec = ProgramSpec::standalone("fuzz", "xdp", insns);
        if let Ok(pipeline) = compile(&spec, &maps, &options) {
            render(&pipeline, &maps, &options);
        }
    }
});
