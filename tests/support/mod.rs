//! What the end-to-end suites share: running the hwxdp binary, locating built examples, scratch directories.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// What a run of the binary printed.
pub struct Output {
    /// Exit status was 0.
    pub ok: bool,
    /// The exit code.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Both, for assertion messages.
    pub all: String,
}

/// Runs `hwxdp ARGS`, with the tests' model cache ([`model_cache`]).
pub fn hwxdp(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_hwxdp"))
        .args(args)
        .env("HWXDP_CACHE_DIR", model_cache())
        .current_dir(repo_root())
        .output()
        .expect("the hwxdp binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Output {
        ok: out.status.success(),
        code: out.status.code(),
        all: format!("$ hwxdp {}\n{stdout}{stderr}", args.join(" ")),
        stdout,
        stderr,
    }
}

/// Cargo's target directory, the one these tests were built in.
pub fn target_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or(tmp.clone(), PathBuf::from)
}

/// The Verilator models every test shares (`HWXDP_CACHE_DIR` for the `hwxdp` processes they start): `<target>/rtlsim`,
/// where the rtlsim and eHDL suites cache theirs too, so that a test run builds each model once and nothing goes to
/// the user's cache. `HWXDP_CACHE_DIR` in the tests' environment overrides it.
pub fn model_cache() -> PathBuf {
    std::env::var_os("HWXDP_CACHE_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| target_dir().join("rtlsim"), PathBuf::from)
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built object of example `name`; fails with a hint when `make examples` has not run.
pub fn example_object(name: &str) -> String {
    let path = repo_root()
        .join("build/examples/xdp")
        .join(format!("{name}.o"));
    assert!(
        path.exists(),
        "{} is missing: run `make examples` (make test does) before the differential suite",
        path.display()
    );
    path.display().to_string()
}

/// A fresh scratch directory under the target directory.
pub fn scratch_dir(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir.display().to_string()
}

/// Compiles the XDP program `source` (C) with `clang -O2 -g -target bpf` into `<dir>/<name>.o`, as the examples are
/// built; returns the object's path.
pub fn compile_c(dir: &str, name: &str, source: &str) -> String {
    let c = format!("{dir}/{name}.c");
    std::fs::write(&c, source).expect("write source");
    let obj = format!("{dir}/{name}.o");
    let clang = std::process::Command::new("clang")
        .args(["-O2", "-g", "-target", "bpf", "-c", &c, "-o", &obj])
        // As examples/xdp/Makefile: the uapi headers include <asm/types.h> from the host's multiarch directory.
        .arg(format!(
            "-I/usr/include/{}-linux-gnu",
            std::env::consts::ARCH
        ))
        .output()
        .expect("clang runs (make examples needs it too)");
    assert!(
        clang.status.success(),
        "{}",
        String::from_utf8_lossy(&clang.stderr)
    );
    obj
}

/// Compiles `coin` into `<dir>/coin.o`: an XDP program whose helper (`bpf_get_prandom_u32`, call 7, its first
/// instruction) the eHDL generator has no block for, now that every example generates.
pub fn ehdl_refused_object(dir: &str) -> String {
    compile_c(
        dir,
        "coin",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int coin(struct xdp_md *ctx)
{
	return bpf_get_prandom_u32() & 1 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"#,
    )
}

/// True where the kernel can load and run BPF programs.
pub fn kernel_available() -> bool {
    hwxdp_kernel::bpf_available().is_ok()
}

/// The N of "N packets identical" in verify's output.
pub fn identical_count(stdout: &str) -> Option<usize> {
    let at = stdout.find(" packets identical")?;
    stdout[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Calls macro `$m` with every bundled example, each followed by the options its trace needs beyond `hwxdp gen`'s
/// files (`name, "--opt", "value";`): the one list the per-example test suites expand.
#[allow(unused_macros)]
macro_rules! with_examples {
    ($m:ident) => {
        $m! {
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
            hxdp_firewall;
            hxdp_parse_drop;
            hxdp_macswap_tx;
        }
    };
}
#[allow(unused_imports)]
pub(crate) use with_examples;

/// Packets per generated trace: enough to reach every path of an example several times.
pub const PACKETS: usize = 1200;

/// Generates `example`'s trace in a fresh scratch directory named after `tag`; returns the object, the directory and
/// the trace arguments (`--pcap`, and `--maps`/`--routes` when gen wrote them).
pub fn workload(example: &str, tag: &str) -> (String, String, Vec<String>) {
    workload_n(example, tag, PACKETS)
}

/// [`workload`] with `packets` packets.
pub fn workload_n(example: &str, tag: &str, packets: usize) -> (String, String, Vec<String>) {
    let obj = example_object(example);
    let dir = scratch_dir(&format!("{tag}-{example}"));
    let gen = hwxdp(&[
        "gen",
        obj.as_str(),
        "-o",
        dir.as_str(),
        "-n",
        &packets.to_string(),
    ]);
    assert!(gen.ok, "hwxdp gen failed for {example}:\n{}", gen.all);
    let mut args = vec!["--pcap".to_string(), format!("{dir}/trace.pcap")];
    for (flag, file) in [("--maps", "maps.json"), ("--routes", "routes.json")] {
        let path = format!("{dir}/{file}");
        if std::path::Path::new(&path).exists() {
            args.extend([flag.to_string(), path]);
        }
    }
    (obj, dir, args)
}

/// The `stats.json` that `hwxdp run -o OUT` wrote.
pub fn read_stats(out: &str) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(format!("{out}/stats.json")).expect("stats.json written"),
    )
    .expect("stats.json is JSON")
}

/// The kernel needs root; without it the kernel half cannot run, which is a failure here, not a skip.
pub fn require_kernel() {
    assert!(
        kernel_available(),
        "bpf() is not available (not root?): comparing with the kernel needs it"
    );
}

/// `hwxdp bench OBJ TRACE --backend BACKEND --json` with few repetitions, asserted to succeed; its report.
pub fn bench_json(obj: &str, trace: &[String], backend: &str) -> serde_json::Value {
    let mut args = vec!["bench", obj];
    args.extend(trace.iter().map(String::as_str));
    args.extend([
        "--backend",
        backend,
        "--json",
        "--min-ms",
        "1",
        "--repeat",
        "20",
        "--kernel-samples",
        "4",
    ]);
    let bench = hwxdp(&args);
    assert!(bench.ok, "bench failed:\n{}", bench.all);
    serde_json::from_str(&bench.stdout).expect("bench --json is JSON")
}

/// `hwxdp run OBJ ARGS --dump-maps` on the reference machine into `interp_dir` and on `backend` (with
/// `backend_args`) into `backend_dir`; `Err` says how they differ (verdict counts, a verdict's pcap, maps.json) or
/// why the backend failed; `Ok` is the backend's stats.json.
pub fn run_beside_interp(
    obj: &str,
    args: &[&str],
    (backend, backend_args): (&str, &[&str]),
    interp_dir: &str,
    backend_dir: &str,
) -> Result<serde_json::Value, String> {
    let run = |out: &str, name: &str, extra: &[&str]| {
        let mut all = vec!["run", obj];
        all.extend(args);
        all.extend(["-o", out, "--dump-maps", "--backend", name]);
        all.extend(extra);
        hwxdp(&all)
    };
    let interp = run(interp_dir, "interp", &[]);
    assert!(interp.ok, "the reference machine failed:\n{}", interp.all);
    let hw = run(backend_dir, backend, backend_args);
    if !hw.ok {
        return Err(format!("run --backend {backend} failed:\n{}", hw.all));
    }
    let (a, b) = (read_stats(interp_dir), read_stats(backend_dir));
    if a["verdicts"] != b["verdicts"] {
        return Err(format!(
            "verdict counts differ: interp {}, {backend} {}",
            a["verdicts"], b["verdicts"]
        ));
    }
    for file in [
        "aborted.pcap",
        "drop.pcap",
        "pass.pcap",
        "tx.pcap",
        "redirect.pcap",
        "maps.json",
    ] {
        let x = std::fs::read(format!("{interp_dir}/{file}")).unwrap_or_default();
        let y = std::fs::read(format!("{backend_dir}/{file}")).unwrap_or_default();
        if x != y {
            return Err(format!(
                "{file} differs between interp ({interp_dir}) and {backend} ({backend_dir})"
            ));
        }
    }
    Ok(b)
}
