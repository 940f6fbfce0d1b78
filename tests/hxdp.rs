//! The hXDP differential suite: every bundled example's trace through the compiled image on the Sephirot cycle model
//! (`hwxdp run --backend hxdp`) and through the reference machine (`--backend interp`): verdicts (one pcap per
//! verdict, in order), packet bytes and the final maps must be identical. Needs the examples built (`make examples`).

mod support;

use support::*;

const PACKETS: usize = 1200;

fn run(obj: &str, args: &[&str], out: &str, backend: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", obj];
    all.extend(args);
    all.extend(["-o", out, "--dump-maps"]);
    all.extend(backend);
    let r = hwxdp(&all);
    assert!(r.ok, "hwxdp {} failed:\n{}", all.join(" "), r.all);
    serde_json::from_str(
        &std::fs::read_to_string(format!("{out}/stats.json")).expect("stats.json written"),
    )
    .expect("stats.json is JSON")
}

fn same_files(a: &str, b: &str, example: &str) {
    for name in [
        "aborted.pcap",
        "drop.pcap",
        "pass.pcap",
        "tx.pcap",
        "redirect.pcap",
        "maps.json",
    ] {
        let x = std::fs::read(format!("{a}/{name}")).unwrap_or_default();
        let y = std::fs::read(format!("{b}/{name}")).unwrap_or_default();
        assert!(
            x == y,
            "{example}: {name} differs between interp ({a}) and hxdp ({b})"
        );
    }
}

fn differential(example: &str, extra: &[&str], backend: &[&str]) {
    let obj = example_object(example);
    let dir = scratch_dir(&format!(
        "hxdp-{example}-{}",
        backend.join("").replace(['-', ','], "")
    ));
    let gen = hwxdp(&[
        "gen",
        obj.as_str(),
        "-o",
        dir.as_str(),
        "-n",
        &PACKETS.to_string(),
    ]);
    assert!(gen.ok, "hwxdp gen failed for {example}:\n{}", gen.all);
    let pcap = format!("{dir}/trace.pcap");
    let maps = format!("{dir}/maps.json");
    let routes = format!("{dir}/routes.json");
    let mut args = vec!["--pcap", pcap.as_str()];
    if std::path::Path::new(&maps).exists() {
        args.extend(["--maps", maps.as_str()]);
    }
    if std::path::Path::new(&routes).exists() {
        args.extend(["--routes", routes.as_str()]);
    }
    args.extend(extra);
    let interp = run(&obj, &args, &format!("{dir}/interp"), &[]);
    let mut hx = vec!["--backend", "hxdp"];
    hx.extend(backend);
    let hxdp = run(&obj, &args, &format!("{dir}/hxdp"), &hx);
    assert_eq!(
        interp["verdicts"], hxdp["verdicts"],
        "{example}: verdict counts differ"
    );
    assert!(
        hxdp["packets"].as_u64().unwrap_or(0) >= 1000,
        "{example}: too few packets"
    );
    let cycles = hxdp["hxdp"]["cycles_per_packet"]["mean"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(
        cycles >= 2.0,
        "{example}: {cycles} cycles per packet is not a run of the core"
    );
    same_files(&format!("{dir}/interp"), &format!("{dir}/hxdp"), example);
}

macro_rules! hxdp_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {$(
        #[test]
        fn $name() {
            differential(stringify!($name), &[$($arg),*], &[]);
        }
    )*};
}

hxdp_tests! {
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
    rxq_counter, "--ifindex", "5", "--rx-queues", "128";
    tail_dispatch;
    fib_forward;
}

/// One lane and eight lanes schedule differently but must compute the same.
#[test]
fn lanes_one_and_eight() {
    for lanes in ["1", "8"] {
        for example in ["firewall", "katran_lb", "tunnel"] {
            differential(example, &[], &["--lanes", lanes]);
        }
    }
}

/// Every pass off gives the plain schedule, which must compute the same too.
#[test]
fn passes_disabled() {
    for example in ["firewall", "xdp2_macswap", "nat"] {
        differential(
            example,
            &[],
            &[
                "--disable",
                "bounds,zeroing,three-operand,six-byte,exit,parallel-branches",
            ],
        );
    }
}
