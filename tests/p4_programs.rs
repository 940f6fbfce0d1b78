//! Our own small P4 programs under `tests/p4/`, one per STF rule and language feature that the public P4C-XDP and
//! p4c-ebpf test programs rely on (issue 29), each run with its STF script by `hwxdp stf` on the reference machine
//! and in the kernel; every script must pass with no failure on both.

mod support;

use support::*;

/// Runs `tests/p4/NAME.p4` with `tests/p4/NAME.stf` on `backend`: the script must pass, with at least one expectation
/// met.
fn stf_passes_on(name: &str, backend: &str) {
    stf_passes_with(name, backend, &[]);
}

/// [`stf_passes_on`] with more arguments of `hwxdp stf`.
fn stf_passes_with(name: &str, backend: &str, extra: &[&str]) {
    let dir = repo_root().join("tests/p4");
    let p4 = dir.join(format!("{name}.p4")).display().to_string();
    let stf = dir.join(format!("{name}.stf")).display().to_string();
    let out = scratch_dir(&format!("p4-programs-{backend}-{name}"));
    let mut args = vec!["stf", "--backend", backend, &p4, &stf, "-o", &out];
    args.extend_from_slice(extra);
    let run = hwxdp(&args);
    assert!(run.ok, "{name} on {backend}:\n{}", run.all);
    assert!(
        run.stdout.contains(", 0 failures") && !run.stdout.contains(" 0 expectations met"),
        "{name} on {backend}:\n{}",
        run.all
    );
}

/// The script on the reference machine and in the kernel.
fn stf_passes(name: &str) {
    stf_passes_on(name, "interp");
    require_kernel();
    stf_passes_on(name, "kernel");
}

macro_rules! p4_program_tests {
    ($($test:ident => $name:literal: $what:literal;)*) => {
        $(
            #[doc = $what]
            #[test]
            fn $test() {
                stf_passes($name);
            }
        )*
    };
}

p4_program_tests! {
    test_ports_and_passed_packets => "stf_test_ports":
        "Port 0 is a test port, test port p is interface p + 1, a passed packet is expected on its input port.";
    upstream_names_and_zero_filled_arguments => "stf_upstream_names":
        "`pipe_t`, `pipe_Allow`, `key.field0`, `_NoAction`, `@name` (also after a match kind), missing arguments.";
    actions_calling_actions => "feat_action_calls":
        "An action of a table calls other actions, with constant and computed arguments.";
    implementations_and_list_keysets => "feat_impl_keys":
        "`lpm` and `ternary` keys in a `hash_table`, a keyless `array_table`, `{ v }` keysets in `const entries`.";
    if_and_elif_expressions => "feat_if_elif":
        "`#if`/`#elif` with macros, `defined`, arithmetic and nesting; inactive branches are not evaluated.";
    packet_length => "feat_packet_length":
        "`packet_in.length()` in the parser: in a `verify` and assigned to a field.";
    struct_typed_action_parameters => "feat_struct_params":
        "Action data of struct type (nested), struct default arguments, direct calls with struct arguments.";
    xdp_model_as_p4c_xdp_declares_it => "xdp_model_as_p4c_xdp":
        "P4C-XDP's `xdp_model.p4`: `table t()`, 32-bit `BPF_KTIME_GET_NS()`, `csum_replace2(csum, old, new)`.";
    sub_controls => "feat_sub_controls":
        "A control instance with its own table, action and counter, applied with `in`, `inout`, `out` arguments.";
    sub_parsers => "feat_sub_parsers":
        "A parser instance with states, `select` and `verify` of its own, applied twice with `out`/`inout` arguments.";
    lookahead_fields => "feat_lookahead_fields":
        "Fields of `packet.lookahead<H>()` (at bit offsets 4 and 8) as `select` keys, before `H` is extracted.";
    perf_event_output_of_p4c_xdp => "feat_perf_packet":
        "P4C-XDP's data-less `BPF_PERF_EVENT_OUTPUT()` in an action (a sample of the packet, then a drop).";
    sub_control_applied_twice => "feat_sub_control_twice":
        "A control instance applied twice: one table, action and counter for both, each with its own arguments.";
    nested_parser_instances => "feat_nested_parsers":
        "A parser instance whose parser applies an instance of its own twice; the innermost reject drops the packet.";
    directional_action_parameters => "feat_directional_params":
        "`in`, `inout`, `out` action parameters before action data, bound by calls from `apply` and from an action.";
    value_sets_in_select => "feat_value_set":
        "`value_set`s (a tuple and a `bit<8>` one) filled by the STF's action-less `add`, in `select` cases.";
}

/// Externs implemented in C (`--extern-c FILE`, p4c-ebpf's interface: `test.h`, `struct NAME` with host-order fields
/// and `ebpf_valid`, `REGISTER_TABLE`, `BPF_MAP_LOOKUP_ELEM`): a header and a number in, the headers struct with a
/// map of the C file's own, a call as a statement.
#[test]
fn externs_implemented_in_c() {
    let c = repo_root()
        .join("tests/p4/feat_c_extern.c")
        .display()
        .to_string();
    stf_passes_with("feat_c_extern", "interp", &["--extern-c", &c]);
    require_kernel();
    stf_passes_with("feat_c_extern", "kernel", &["--extern-c", &c]);
}

/// A C extern without its file, and a file clang refuses: one error naming the extern, or the file and line.
#[test]
fn extern_c_errors_name_the_extern_or_the_line() {
    let dir = scratch_dir("p4-programs-extern-c-errors");
    let p4 = repo_root()
        .join("tests/p4/feat_c_extern.p4")
        .display()
        .to_string();
    let obj = format!("{dir}/feat_c_extern.o");
    let run = hwxdp(&["p4c", &p4, "-o", &obj]);
    assert!(!run.ok, "{}", run.all);
    assert!(
        run.stderr
            .contains("extern `mix` is not implemented by the architecture")
            && run.stderr.contains("--extern-c FILE"),
        "{}",
        run.all
    );
    let bad = format!("{dir}/broken.c");
    std::fs::write(
        &bad,
        "#include \"test.h\"\n\nu16 mix(const struct val_h v, u8 s) { return v.nope; }\n",
    )
    .unwrap();
    let run = hwxdp(&["p4c", &p4, "-o", &obj, "--extern-c", &bad]);
    assert!(!run.ok, "{}", run.all);
    assert!(
        run.stderr.contains(&format!("{bad}:3:")) && run.stderr.contains("nope"),
        "{}",
        run.all
    );
}

/// `hwxdp stf --backend` takes every backend of the registry: the software models, and an RTL one (eHDL's pipeline
/// builds in under 30 s). Test ports 0 and 3 are interfaces 1 and 4, which the eBPFlow NIC's ports cover.
#[test]
fn stf_runs_on_every_kind_of_backend() {
    for backend in ["hxdp", "warp", "ebpflow", "ehdl-rtl"] {
        stf_passes_on("stf_test_ports", backend);
    }
}

/// Writes `frames` as a pcap file (microsecond stamps, Ethernet link type).
fn write_pcap(path: &str, frames: &[Vec<u8>]) {
    let mut bytes = Vec::new();
    for word in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65_535, 1] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    for (i, f) in frames.iter().enumerate() {
        for word in [i as u32, 0, f.len() as u32, f.len() as u32] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes.extend_from_slice(f);
    }
    std::fs::write(path, bytes).unwrap();
}

/// P4C-XDP's `BPF_PERF_EVENT_OUTPUT()`: the samples (the frame's length, then the frame) are the kernel's, byte
/// for byte, on the reference machine and the hXDP model; the frame that is not reported writes none.
#[test]
fn perf_event_output_samples_are_the_kernels() {
    require_kernel();
    let dir = scratch_dir("p4-programs-perf-samples");
    let p4 = repo_root().join("tests/p4/feat_perf_packet.p4");
    let obj = format!("{dir}/feat_perf_packet.o");
    let build = hwxdp(&["p4c", &p4.display().to_string(), "-o", &obj]);
    assert!(build.ok, "{}", build.all);
    let frame = |ty: &str, payload: &str| {
        let hex = format!("000000000001000000000002{ty}{payload}");
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>()
    };
    let pcap = format!("{dir}/frames.pcap");
    write_pcap(
        &pcap,
        &[
            frame("88b5", "0102030405060708"),
            frame("0800", "0102030405060708"),
            frame("88b5", &"aabb".repeat(20)),
        ],
    );
    for backend in ["interp", "hxdp"] {
        let verify = hwxdp(&["verify", &obj, "--pcap", &pcap, "--backend", backend]);
        assert!(verify.ok, "{backend}: {}", verify.all);
        assert!(
            verify.stdout.contains("3 packets identical")
                && verify.stdout.contains("2 perf samples"),
            "{backend}: {}",
            verify.all
        );
    }
}
