//! Our own small P4 programs under `tests/p4/`, one per STF rule and language feature that the public P4C-XDP and
//! p4c-ebpf test programs rely on (issue 29), each run with its STF script by `hwxdp stf` on the reference machine
//! and in the kernel; every script must pass with no failure on both.

mod support;

use support::*;

/// Runs `tests/p4/NAME.p4` with `tests/p4/NAME.stf` on `backend`: the script must pass, with at least one expectation
/// met.
fn stf_passes_on(name: &str, backend: &str) {
    let dir = repo_root().join("tests/p4");
    let p4 = dir.join(format!("{name}.p4")).display().to_string();
    let stf = dir.join(format!("{name}.stf")).display().to_string();
    let out = scratch_dir(&format!("p4-programs-{backend}-{name}"));
    let run = hwxdp(&["stf", "--backend", backend, &p4, &stf, "-o", &out]);
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
}

/// `hwxdp stf --backend` takes every backend of the registry: the software models, and an RTL one (eHDL's pipeline
/// builds in under 30 s). Test ports 0 and 3 are interfaces 1 and 4, which the eBPFlow NIC's ports cover.
#[test]
fn stf_runs_on_every_kind_of_backend() {
    for backend in ["hxdp", "warp", "ebpflow", "ehdl-rtl"] {
        stf_passes_on("stf_test_ports", backend);
    }
}
