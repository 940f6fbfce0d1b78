//! Every example program the generator supports gives a module that lints clean under `verilator --lint-only -Wall`
//! with the primitives; every other one fails with an error naming the instruction and what is missing.

mod common;

use hwxdp_ehdl::verilog::{generate, module_name, VerilogError, PRIMITIVES};
use hwxdp_ehdl::Options;
use std::path::PathBuf;

#[test]
fn generated_modules_of_the_examples_lint_clean_or_name_what_is_missing() {
    let root = common::root();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ehdl-lint");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let prims: Vec<PathBuf> = PRIMITIVES
        .iter()
        .map(|f| root.join("rtl/ehdl").join(f))
        .collect();
    let (mut linted, mut refused) = (Vec::new(), Vec::new());
    for path in common::example_objects() {
        let obj = hwxdp_object::parse(&std::fs::read(&path).expect("readable")).expect("parses");
        for program in &obj.programs {
            let Ok(p) = hwxdp_ehdl::compile(program, &obj.maps, &Options::default()) else {
                continue; // a bpf-to-bpf callee, not a program
            };
            let module = module_name(&program.name);
            match generate(&p, &module) {
                Ok((text, figures)) => {
                    assert_eq!(figures.stages, p.stages.len());
                    let file = dir.join(format!("{module}.sv"));
                    std::fs::write(&file, text).expect("write module");
                    let mut sources = prims.clone();
                    sources.push(file);
                    hwxdp_rtlsim::lint(&sources, &module).unwrap_or_else(|e| panic!("{e}"));
                    linted.push(program.name.clone());
                }
                Err(e @ VerilogError::Unsupported { .. }) => {
                    let msg = e.to_string();
                    assert!(
                        msg.starts_with(&format!("program {}: instruction ", program.name))
                            && msg.contains("not supported by the eHDL Verilog generator"),
                        "{msg}"
                    );
                    refused.push(msg);
                }
                Err(e) => panic!("{}: {e}", program.name),
            }
        }
    }
    println!(
        "linted: {}\nrefused:\n  {}",
        linted.join(", "),
        refused.join("\n  ")
    );
    assert!(
        linted.contains(&"tail_ipv4".to_string()) && linted.contains(&"tail_ipv6".to_string()),
        "{linted:?}"
    );
}

#[test]
fn a_helper_call_is_refused_with_its_name_and_instruction() {
    let p = common::pipeline("r0 = 0\ncall 5\nr0 &= 3\nexit");
    let err = generate(&p, "ehdl_t").expect_err("helpers are not generated yet");
    assert_eq!(
        err.to_string(),
        "program test: instruction 1 (call 5): helper bpf_ktime_get_ns (call 5) is not supported by the eHDL Verilog \
         generator yet"
    );
}

#[test]
fn bad_module_names_and_data_widths_are_refused() {
    let p = common::pipeline("r0 = 2\nexit");
    assert!(matches!(
        generate(&p, "1abc"),
        Err(VerilogError::ModuleName(_))
    ));
    let narrow = hwxdp_ehdl::compile(
        &common::spec("r0 = 2\nexit"),
        &[],
        &Options {
            data_width: 32,
            ..Options::default()
        },
    )
    .expect("compiles");
    assert_eq!(
        generate(&narrow, "ehdl_t"),
        Err(VerilogError::DataWidth(32))
    );
    assert_eq!(module_name("xdp.prog-1"), "ehdl_xdp_prog_1");
}

#[test]
fn a_generated_module_synthesizes_for_ultrascale_plus() {
    // tail_ipv6 is the smallest generated example (5 stages): about half a minute of Yosys.
    let root = common::root();
    let path = common::example_objects()
        .into_iter()
        .find(|p| p.ends_with("tail_dispatch.o"))
        .expect("tail_dispatch example");
    let obj = hwxdp_object::parse(&std::fs::read(&path).expect("readable")).expect("parses");
    let program = obj
        .programs
        .iter()
        .find(|p| p.name == "tail_ipv6")
        .expect("tail_ipv6");
    let p = hwxdp_ehdl::compile(program, &obj.maps, &Options::default()).expect("compiles");
    let (text, _) = generate(&p, "ehdl_tail_ipv6").expect("generates");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ehdl-synth");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("ehdl_tail_ipv6.sv");
    std::fs::write(&file, text).expect("write module");
    let mut sources: Vec<PathBuf> = PRIMITIVES
        .iter()
        .map(|f| root.join("rtl/ehdl").join(f))
        .collect();
    sources.push(file);
    hwxdp_rtlsim::synth(&sources, "ehdl_tail_ipv6").unwrap_or_else(|e| panic!("{e}"));
}
