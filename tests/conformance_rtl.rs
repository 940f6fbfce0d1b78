//! The conformance plugin on one eBPFlow engine's RTL (`--engine ebpflow-rtl`) against the plugin on the reference
//! machine: every program of `tests/ebpflow_programs.txt` (the suite's groups, and every program of
//! tests/conformance.rs) goes through the plugin's protocol both ways, and the answers must agree: the same r0 on
//! standard output, or a failure with one line on standard error from both.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

const PROGRAMS: &str = include_str!("ebpflow_programs.txt");

/// (name, memory, program) of every case.
fn cases() -> Vec<(String, Vec<u8>, Vec<hwxdp_ebpf::Insn>)> {
    let mut out = Vec::new();
    let mut current: Option<(String, Vec<u8>, String)> = None;
    let mut flush = |current: &mut Option<(String, Vec<u8>, String)>| {
        if let Some((name, memory, text)) = current.take() {
            let insns = hwxdp_ebpf::assemble(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.push((name, memory, insns));
        }
    };
    for line in PROGRAMS.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("== ") {
            flush(&mut current);
            current = Some((name.trim().to_string(), Vec::new(), String::new()));
        } else if let Some((_, memory, text)) = current.as_mut() {
            match line.strip_prefix("mem ") {
                Some(m) => {
                    *memory = m
                        .split_whitespace()
                        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                        .collect()
                }
                None => {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    flush(&mut current);
    out
}

/// The plugin's exit code, standard output and standard error for `insns` with `memory`, on `engine`.
fn plugin(
    insns: &[hwxdp_ebpf::Insn],
    memory: &[u8],
    engine: &str,
) -> (Option<i32>, String, String) {
    let hex = |bytes: &[u8]| {
        bytes
            .iter()
            .map(|b| format!("{b:02x} "))
            .collect::<String>()
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwxdp-conformance-plugin"));
    if !memory.is_empty() {
        cmd.arg(hex(memory));
    }
    let mut child = cmd
        .args(["--engine", engine])
        .env("HWXDP_CACHE_DIR", support::model_cache())
        .env_remove("HWXDP_CONFORMANCE_ENGINE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugin starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{}", hex(&hwxdp_ebpf::encode(insns))).expect("program written");
    drop(stdin);
    let out = child.wait_with_output().expect("plugin ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_program_answers_the_same_on_the_engines_rtl() {
    let cases = cases();
    assert!(cases.len() >= 90, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut refused = 0;
    for (name, memory, insns) in &cases {
        let interp = plugin(insns, memory, "interp");
        let rtl = plugin(insns, memory, "ebpflow-rtl");
        let agree = match (interp.0, rtl.0) {
            (Some(0), Some(0)) => interp.1 == rtl.1,
            (Some(a), Some(b)) if a != 0 && b != 0 => rtl.2.trim().lines().count() == 1,
            _ => false,
        };
        if interp.0 == Some(0) {
            ran += 1;
        } else {
            refused += 1;
        }
        if !agree {
            failures.push(format!("{name}: interp {interp:?}, ebpflow-rtl {rtl:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran > 80 && refused >= 8, "{ran} ran, {refused} refused");
}

#[test]
fn the_engine_is_chosen_by_flag_or_environment_and_an_unknown_one_is_refused() {
    let prog = hwxdp_ebpf::assemble("r0 = r10\nexit").expect("assembles");
    // r10 differs: the reference machine's is a region-tagged stack address, the engine's an address in its map.
    let interp = plugin(&prog, &[], "interp");
    let rtl = plugin(&prog, &[], "ebpflow-rtl");
    assert_eq!(interp.0, Some(0), "{}", interp.2);
    assert_eq!(rtl.0, Some(0), "{}", rtl.2);
    assert_eq!(rtl.1.trim(), format!("{:x}", 0x1_0000 + 4096 + 512));
    assert_ne!(interp.1, rtl.1);
    let mut env = Command::new(env!("CARGO_BIN_EXE_hwxdp-conformance-plugin"))
        .env("HWXDP_CACHE_DIR", support::model_cache())
        .env("HWXDP_CONFORMANCE_ENGINE", "ebpflow-rtl")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("plugin starts");
    let mut stdin = env.stdin.take().expect("stdin");
    writeln!(stdin, "bf a0 00 00 00 00 00 00 95 00 00 00 00 00 00 00").expect("written");
    drop(stdin);
    let out = env.wait_with_output().expect("plugin ends");
    assert_eq!(String::from_utf8_lossy(&out.stdout), rtl.1);
    let unknown = plugin(&prog, &[], "ubpf");
    assert_eq!(unknown.0, Some(1));
    assert!(
        unknown.2.contains("unknown engine \"ubpf\""),
        "{}",
        unknown.2
    );
}
