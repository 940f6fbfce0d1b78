//! Every example program the generator supports gives a module that lints clean under `verilator --lint-only -Wall`
//! with the primitives; every other one fails with an error naming the instruction and what is missing.

mod common;

use hwxdp_ehdl::verilog::{
    generate, generate_with, module_name, Hazards, Storage, VerilogError, COMMON, PRIMITIVES,
};
use hwxdp_ehdl::Options;
use std::path::PathBuf;

/// Writes module `module` (its Verilog `text`) to a scratch directory and returns it with the primitives, for
/// `hwxdp_rtlsim::lint` or `synth`.
fn module_sources(module: &str, text: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ehdl-check-{module}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join(format!("{module}.sv"));
    std::fs::write(&file, text).expect("write module");
    let mut sources: Vec<PathBuf> = PRIMITIVES
        .iter()
        .map(|f| common::root().join("rtl/ehdl").join(f))
        .chain(
            COMMON
                .iter()
                .map(|f| common::root().join("rtl/common").join(f)),
        )
        .collect();
    sources.push(file);
    sources
}

#[test]
fn generated_modules_of_the_examples_lint_clean_or_name_what_is_missing() {
    let root = common::root();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ehdl-lint");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let prims: Vec<PathBuf> = PRIMITIVES
        .iter()
        .map(|f| root.join("rtl/ehdl").join(f))
        .chain(COMMON.iter().map(|f| root.join("rtl/common").join(f)))
        .collect();
    let (mut linted, mut refused) = (Vec::new(), Vec::new());
    for path in common::example_objects() {
        let obj = hwxdp_object::parse(&std::fs::read(&path).expect("readable")).expect("parses");
        for program in &obj.programs {
            let Ok(p) =
                hwxdp_ehdl::compile_object(program, &obj.programs, &obj.maps, &Options::default())
            else {
                continue; // a bpf-to-bpf callee, not a program
            };
            let module = module_name(&program.name);
            match generate(&p, &obj.maps, &module) {
                Ok((text, figures)) => {
                    assert_eq!(figures.stages, p.stages.len());
                    let file = dir.join(format!("{module}.sv"));
                    std::fs::write(&file, text).expect("write module");
                    let mut sources = prims.clone();
                    sources.push(file);
                    hwxdp_rtlsim::lint(&sources, &module).unwrap_or_else(|e| panic!("{e}"));
                    linted.push(format!(
                        "{} ({} stages, latency {}, {} stall checks, {} state FFs, {} frame FFs)",
                        program.name,
                        figures.stages,
                        figures.latency,
                        figures.stall_checks,
                        figures.state_flops,
                        figures.frame_flops
                    ));
                }
                Err(e @ (VerilogError::Unsupported { .. } | VerilogError::Map { .. })) => {
                    let msg = e.to_string();
                    let named = match e {
                        VerilogError::Unsupported { .. } => {
                            msg.starts_with(&format!("program {}: instruction ", program.name))
                                && msg.contains("not supported by the eHDL Verilog generator")
                        }
                        _ => msg.starts_with(&format!("program {}: map ", program.name)),
                    };
                    assert!(named, "{msg}");
                    refused.push(msg);
                }
                Err(e) => panic!("{}: {e}", program.name),
            }
        }
    }
    println!(
        "linted:\n  {}\nrefused:\n  {}",
        linted.join("\n  "),
        refused.join("\n  ")
    );
    for name in [
        "tail_ipv4",
        "tail_ipv6",
        "rxq_counter",
        "l2_acl",
        "ethertype_counter",
        "router",
        "firewall",
        "icmp_reply",
        "fib_forward",
        "tail_dispatch",
        "nat",
        "rate_limiter",
    ] {
        assert!(
            linted.iter().any(|l| l.starts_with(&format!("{name} ("))),
            "{name} generates: {linted:?}"
        );
    }
}

#[test]
fn a_helper_call_is_refused_with_its_name_and_instruction() {
    let p = common::pipeline("r0 = 0\ncall 7\nr0 &= 3\nexit");
    let err = generate(&p, &[], "ehdl_t").expect_err("bpf_get_prandom_u32 has no block");
    assert_eq!(
        err.to_string(),
        "program test: instruction 1 (call 7): helper bpf_get_prandom_u32 (7) is not supported by the eHDL \
         Verilog generator yet"
    );
}

/// Refusals number instructions by slot, as `hwxdp disasm` and the kernel do: the `lddw` before the call takes two.
#[test]
fn a_refusal_after_a_lddw_names_the_slot_index() {
    let p = common::pipeline("r1 = 5 ll\nr0 = 0\ncall 7\nr0 &= 3\nexit");
    let err = generate(&p, &[], "ehdl_t").expect_err("bpf_get_prandom_u32 has no block");
    assert_eq!(
        err.to_string(),
        "program test: instruction 3 (call 7): helper bpf_get_prandom_u32 (7) is not supported by the eHDL \
         Verilog generator yet"
    );
}

/// Compiled without its object's programs, a tail call is not inlined, and the generator says how to get it inlined.
#[test]
fn a_tail_call_is_refused_saying_why() {
    let obj = common::example_object("tail_dispatch");
    let program = obj
        .programs
        .iter()
        .find(|p| p.name == "tail_dispatch")
        .expect("tail_dispatch");
    let p = hwxdp_ehdl::compile(program, &obj.maps, &Options::default()).expect("compiles");
    let err = generate(&p, &obj.maps, "ehdl_t").expect_err("tail calls have no block");
    let msg = err.to_string();
    assert!(
        msg.starts_with("program tail_dispatch: instruction ")
            && msg.contains(
                "(call 12 [r1=ctx r2=map0]): helper bpf_tail_call (12) not inlined (compile the program \
                 with hwxdp_ehdl::compile_object)"
            ),
        "{msg}"
    );
}

#[test]
fn bad_module_names_and_data_widths_are_refused() {
    let p = common::pipeline("r0 = 2\nexit");
    assert!(matches!(
        generate(&p, &[], "1abc"),
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
        generate(&narrow, &[], "ehdl_t"),
        Err(VerilogError::DataWidth(32))
    );
    assert_eq!(module_name("xdp.prog-1"), "ehdl_xdp_prog_1");
}

#[test]
fn a_generated_module_synthesizes_for_ultrascale_plus() {
    // tail_ipv6 is the smallest generated example (5 stages): about half a minute of Yosys.
    let obj = common::example_object("tail_dispatch");
    let program = obj
        .programs
        .iter()
        .find(|p| p.name == "tail_ipv6")
        .expect("tail_ipv6");
    let p = hwxdp_ehdl::compile(program, &obj.maps, &Options::default()).expect("compiles");
    let (text, _) = generate(&p, &obj.maps, "ehdl_tail_ipv6").expect("generates");
    let sources = module_sources("ehdl_tail_ipv6", &text);
    hwxdp_rtlsim::synth(&sources, "ehdl_tail_ipv6").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_read_modify_write_across_stages_gets_a_stall_check_and_lints() {
    // `*v += 1` without an atomic: load, add, store in three stages. A packet one clock behind would load before
    // this one stores, so the load waits for older packets between it and the store.
    let maps = [hwxdp_object::MapSpec::new("cnt", 2, 4, 8, 4)];
    let text = "r2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\nr2 += -4\nld_pseudo r1, 1, 0\ncall 1\n\
                if r0 == 0 goto out\nr1 = *(u64 *)(r0 + 0)\nr1 += 1\n*(u64 *)(r0 + 0) = r1\nout: r0 = 2\nexit";
    let p = common::pipeline_with_maps(text, &maps);
    let (verilog, figures) = generate(&p, &maps, "ehdl_rmw").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.stall_checks, 1);
    assert!(verilog.contains("assign stall0 = "), "{verilog}");
    let sources = module_sources("ehdl_rmw", &verilog);
    hwxdp_rtlsim::lint(&sources, "ehdl_rmw").unwrap_or_else(|e| panic!("{e}"));
    // The same update as an atomic is one port in one stage: no stall check.
    let atomic = text.replace(
        "r1 = *(u64 *)(r0 + 0)\nr1 += 1\n*(u64 *)(r0 + 0) = r1",
        "r1 = 1\nlock *(u64 *)(r0 + 0) += r1",
    );
    let p = common::pipeline_with_maps(&atomic, &maps);
    let (_, figures) = generate(&p, &maps, "ehdl_t").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.stall_checks, 0);
}

#[test]
fn a_store_through_a_value_pointer_gets_no_check_against_the_lookup() {
    // A HASH lookup, then a store at an offset known only at run time (rx_queue_index & 8) two stages later. The
    // store writes value bytes; the lookup reads only the CAM, so packets may reorder the two freely.
    let maps = [hwxdp_object::MapSpec::new("flows", 1, 4, 16, 4)];
    let text = "r6 = *(u32 *)(r1 + 16)\nr6 &= 8\nr2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\nr2 += -4\n\
                ld_pseudo r1, 1, 0\ncall 1\nif r0 == 0 goto out\nr0 += r6\nr1 = 7\n*(u64 *)(r0 + 0) = r1\n\
                out: r0 = 2\nexit";
    let p = common::pipeline_with_maps(text, &maps);
    let (_, figures) = generate(&p, &maps, "ehdl_t").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.stall_checks, 0);
    // A load of the same value bytes before the store still needs one: the load and the store may overlap.
    let rmw = text.replace("r1 = 7\n", "r1 = *(u64 *)(r0 + 0)\nr1 += 7\n");
    let p = common::pipeline_with_maps(&rmw, &maps);
    let (_, figures) = generate(&p, &maps, "ehdl_t").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.stall_checks, 1);
}

#[test]
fn a_pointer_kept_across_a_replacing_update_is_refused() {
    // Lookup (pointer in r9), update of the same key, store through r9: the kernel's update of a present key in a
    // plain HASH map swaps in a new element, so the store would be lost there; the block updates in place.
    let text = "r2 = 0\n*(u32 *)(r10 - 4) = r2\n*(u64 *)(r10 - 16) = r2\nr2 = r10\nr2 += -4\nld_pseudo r1, 1, 0\n\
                call 1\nr9 = r0\nr2 = r10\nr2 += -4\nr3 = r10\nr3 += -16\nld_pseudo r1, 1, 0\nr4 = 0\ncall 2\n\
                if r9 == 0 goto out\nr1 = 7\n*(u64 *)(r9 + 0) = r1\nout: r0 = 2\nexit";
    let generate_with = |text: &str, map_type: u32| {
        let maps = [hwxdp_object::MapSpec::new("flows", map_type, 4, 8, 4)];
        let p = common::pipeline_with_maps(text, &maps);
        generate(&p, &maps, "ehdl_t").map(|_| ())
    };
    let err = generate_with(text, 1).expect_err("refused");
    let msg = err.to_string();
    println!("{msg}");
    assert!(msg.contains("(*(u64 *)(r9 + 0) = "), "{msg}");
    assert!(msg.contains("HASH map flows after `call 2"), "{msg}");
    // BPF_NOEXIST never replaces, and a per-CPU map updates in place in the kernel too.
    generate_with(&text.replace("r4 = 0\n", "r4 = 1\n"), 1).expect("NOEXIST generates");
    generate_with(text, 5).expect("PERCPU_HASH generates");
    // A store through a pointer from a lookup after the update is fine.
    let relooked = text.replace(
        "if r9 == 0 goto out",
        "r2 = r10\nr2 += -4\nld_pseudo r1, 1, 0\ncall 1\nr9 = r0\nif r9 == 0 goto out",
    );
    generate_with(&relooked, 1).expect("a fresh pointer generates");
}

#[test]
fn flush_and_replay_lints_and_refuses_programs_a_replay_would_repeat() {
    // xdp1_drop's counter (a load and a store two stages apart, nothing written before) gets a flush evaluation
    // block and an input buffer, and lints clean.
    let object = |name: &str| {
        let obj = common::example_object(name);
        let p = hwxdp_ehdl::compile(&obj.programs[0], &obj.maps, &Options::default())
            .expect("compiles");
        (obj, p)
    };
    let (obj, p) = object("xdp1_drop");
    let (text, figures) = generate_with(&p, &obj.maps, "ehdl_x1_flush", Hazards::Flush)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((figures.flush_checks, figures.stall_checks), (1, 0));
    assert!(
        text.contains("ehdl_replay") && text.contains("assign flush = adv"),
        "no flush logic"
    );
    let sources = module_sources("ehdl_x1_flush", &text);
    hwxdp_rtlsim::lint(&sources, "ehdl_x1_flush").unwrap_or_else(|e| panic!("{e}"));
    // ethertype_counter's insert comes before its counter's atomic: a replay would insert again.
    let (obj, p) = object("ethertype_counter");
    let err = generate_with(&p, &obj.maps, "ehdl_t", Hazards::Flush).expect_err("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("flush and replay (--hazards flush)") && msg.contains("call 2"),
        "{msg}"
    );
    // A counter bumped with an atomic in the stage of another's load (of a load-add-store): a flush would repeat
    // the atomic, and no elastic buffer can sit between them.
    let maps = [hwxdp_object::MapSpec::new("cnt", 2, 4, 16, 4)];
    let text = "r2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\nr2 += -4\nld_pseudo r1, 1, 0\ncall 1\n\
                if r0 == 0 goto out\nr1 = 1\nlock *(u64 *)(r0 + 8) += r1\nr1 = *(u64 *)(r0 + 0)\nr1 += 1\n\
                r1 *= 3\n*(u64 *)(r0 + 0) = r1\nout: r0 = 2\nexit";
    let p = common::pipeline_with_maps(text, &maps);
    let msg = generate_with(&p, &maps, "ehdl_t", Hazards::Flush)
        .expect_err("refused")
        .to_string();
    assert!(
        msg.contains("lock *(u64 *)(r0 + 8) += r1") && msg.contains("no boundary between them"),
        "{msg}"
    );
    generate(&p, &maps, "ehdl_t").expect("stall checks take it");
    // The same with the atomic on another map, whose old value feeds the counter's key: the atomic comes stages
    // before the load, and an elastic buffer after it (lint-clean) lets a flush replay only what follows.
    let maps = [
        hwxdp_object::MapSpec::new("cnt", 2, 4, 16, 4),
        hwxdp_object::MapSpec::new("total", 2, 4, 8, 1),
    ];
    let text = "r2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\nr2 += -4\nld_pseudo r1, 1, 1\ncall 1\n\
                if r0 == 0 goto out\nr1 = 1\nr1 = atomic_fetch_add((u64 *)(r0 + 0), r1)\nr1 >>= 63\n\
                *(u32 *)(r10 - 8) = r1\nr2 = r10\nr2 += -8\nld_pseudo r1, 1, 0\ncall 1\nif r0 == 0 goto out\n\
                r1 = *(u64 *)(r0 + 0)\nr1 += 1\nr1 *= 3\n*(u64 *)(r0 + 0) = r1\nout: r0 = 2\nexit";
    let p = common::pipeline_with_maps(text, &maps);
    let (text, figures) =
        generate_with(&p, &maps, "ehdl_elastic", Hazards::Flush).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        figures.elastic_boundary > 0 && text.contains("u_elastic") && !text.contains("u_replay"),
        "no elastic buffer"
    );
    let sources = module_sources("ehdl_elastic", &text);
    hwxdp_rtlsim::lint(&sources, "ehdl_elastic").unwrap_or_else(|e| panic!("{e}"));
    // The same with the counter's key read from the packet at an offset the atomic's old value moves: that read
    // comes behind the buffer but may reach frames still before it, which the stages before it have moved on.
    let text = "r6 = *(u32 *)(r1 + 0)\nr2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\n\
                r2 += -4\nld_pseudo r1, 1, 1\ncall 1\nif r0 == 0 goto out\nr1 = 1\n\
                r1 = atomic_fetch_add((u64 *)(r0 + 0), r1)\nr1 >>= 63\nr6 += r1\n\
                r1 = *(u8 *)(r6 + 12)\nr1 &= 3\n*(u32 *)(r10 - 8) = r1\nr2 = r10\n\
                r2 += -8\nld_pseudo r1, 1, 0\ncall 1\nif r0 == 0 goto out\nr1 = *(u64 *)(r0 + 0)\n\
                r1 += 1\nr1 *= 3\n*(u64 *)(r0 + 0) = r1\nout: r0 = 2\nexit";
    let p = common::pipeline_with_maps(text, &maps);
    let msg = generate_with(&p, &maps, "ehdl_t", Hazards::Flush)
        .expect_err("refused")
        .to_string();
    assert!(
        msg.contains("still before the elastic buffer at boundary")
            && msg.contains("atomic_fetch_add"),
        "{msg}"
    );
    generate(&p, &maps, "ehdl_t").expect("stall checks take it");
}

#[test]
fn a_512_kib_array_map_gets_a_ram_block_and_a_small_one_registers() {
    // xdp-filter's port maps are 512 KiB: over the register block's 64 KiB limit, which refused them; in block RAM
    // (one writing and one reading port: one bank, two copies of two 32k x 64-bit RAMs) they have no limit but the
    // device's.
    let text = "r2 = 0\n*(u32 *)(r10 - 4) = r2\nr2 = r10\nr2 += -4\nld_pseudo r1, 1, 0\ncall 1\n\
                if r0 == 0 goto out\nr1 = *(u64 *)(r0 + 0)\nr1 += 1\n*(u64 *)(r0 + 0) = r1\nout: r0 = 2\nexit";
    let big = [hwxdp_object::MapSpec::new("ports", 2, 4, 8, 65536)];
    let p = common::pipeline_with_maps(text, &big);
    let (verilog, figures) = generate(&p, &big, "ehdl_big").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.maps.len(), 1);
    let m = &figures.maps[0];
    assert_eq!(m.storage, Storage::Uram, "{m}");
    assert_eq!(m.rams, 4, "{m}");
    assert!(
        verilog.contains("ehdl_map_ram #(.BYTES(524288)"),
        "{verilog}"
    );
    let sources = module_sources("ehdl_big", &verilog);
    hwxdp_rtlsim::lint(&sources, "ehdl_big").unwrap_or_else(|e| panic!("{e}"));
    // 4 entries of 8 bytes: registers, saying why.
    let small = [hwxdp_object::MapSpec::new("cnt", 2, 4, 8, 4)];
    let p = common::pipeline_with_maps(text, &small);
    let (verilog, figures) = generate(&p, &small, "ehdl_small").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.maps[0].storage, Storage::Regs);
    assert!(
        figures.maps[0].why.contains("at most 256"),
        "{}",
        figures.maps[0]
    );
    assert!(verilog.contains("ehdl_map_mem #("), "{verilog}");
}
