//! The differential suite: every bundled example, with the trace `hwxdp gen` writes for it, through the Linux kernel
//! and the reference machine (`hwxdp verify`): no difference in verdicts, packet bytes or final maps is allowed.
//!
//! Needs the examples built (`make examples`) and a kernel that runs BPF programs (root). Where `bpf()` is not
//! available the kernel half cannot run: each test then says so loudly on standard error and checks only the reference
//! machine.

mod support;

use support::*;

/// Packets per trace: enough to reach every path several times.
const PACKETS: usize = 1200;

fn differential(example: &str, extra: &[&str]) {
    let obj = example_object(example);
    let dir = scratch_dir(&format!("diff-{example}"));
    let gen = hwxdp(&["gen", obj.as_str(), "-o", dir.as_str(), "-n", &PACKETS.to_string()]);
    assert!(gen.ok, "hwxdp gen failed for {example}:\n{}", gen.all);
    let pcap = format!("{dir}/trace.pcap");
    let maps = format!("{dir}/maps.json");
    let mut args = vec!["verify", obj.as_str(), "--pcap", pcap.as_str()];
    if std::path::Path::new(&maps).exists() {
        args.extend(["--maps", maps.as_str()]);
    }
    args.extend(extra);
    if !kernel_available() {
        eprintln!("\n!!!! SKIPPING the kernel half of {example}: bpf() is not available here (not root?) !!!!\n");
        let out = format!("{dir}/run");
        let mut run_args = args.clone();
        run_args[0] = "run";
        run_args.extend(["-o", out.as_str()]);
        let run = hwxdp(&run_args);
        assert!(run.ok, "hwxdp run failed for {example}:\n{}", run.all);
        return;
    }
    let verify = hwxdp(&args);
    assert!(verify.ok, "hwxdp verify found a difference for {example}:\n{}", verify.all);
    let identical = identical_count(&verify.stdout)
        .unwrap_or_else(|| panic!("no 'N packets identical' in the output for {example}:\n{}", verify.all));
    assert!(identical >= 1000, "{example}: only {identical} packets compared:\n{}", verify.all);
}

macro_rules! differential_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {$(
        #[test]
        fn $name() {
            differential(stringify!($name), &[$($arg),*]);
        }
    )*};
}

differential_tests! {
    l2_acl;
    ethertype_counter;
    firewall;
    router;
    tunnel;
    nat;
    vlan_filter;
    katran_lb;
    rate_limiter;
    icmp_reply;
    redirect_fwd;
    xdp1_drop;
    xdp2_macswap;
    rxq_counter, "--ifindex", "5", "--rx-queues", "4";
    tail_dispatch;
}
