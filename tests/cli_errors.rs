//! Every kind of bad input a user can hand the command line ends in one line on standard error that names the problem,
//! and a non-zero exit: never a panic, never a partial result presented as success. The one exception is a program the
//! kernel's verifier refuses: the verifier's own lines follow, as it wrote them.

mod support;

use std::path::Path;
use support::*;

/// Runs hwxdp and checks the one-line error.
fn fails_with(args: &[&str], needles: &[&str]) {
    let out = hwxdp(args);
    assert_eq!(out.code, Some(2), "expected exit 2:\n{}", out.all);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr:\n{}", out.all);
    assert!(lines[0].starts_with("hwxdp: "), "{}", out.all);
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{needle:?} missing from: {}",
            lines[0]
        );
    }
    assert!(!out.stderr.contains("panicked"), "{}", out.all);
}

fn write(dir: &str, name: &str, bytes: &[u8]) -> String {
    let path = Path::new(dir).join(name);
    std::fs::write(&path, bytes).expect("scratch file");
    path.display().to_string()
}

/// A valid trace of l2_acl's workload, and the object.
fn fixture(dir: &str) -> (String, String) {
    let obj = example_object("l2_acl");
    let gen = hwxdp(&["gen", &obj, "-o", dir, "-n", "20"]);
    assert!(gen.ok, "{}", gen.all);
    (obj, format!("{dir}/trace.pcap"))
}

#[test]
fn missing_files_are_named() {
    let dir = scratch_dir("err-missing");
    let (obj, pcap) = fixture(&dir);
    let out = format!("{dir}/out");
    fails_with(
        &["run", "/no/such.o", "--pcap", &pcap, "-o", &out],
        &["/no/such.o", "cannot read"],
    );
    fails_with(
        &["run", &obj, "--pcap", "/no/such.pcap", "-o", &out],
        &["/no/such.pcap", "cannot open"],
    );
    fails_with(
        &[
            "run",
            &obj,
            "--pcap",
            &pcap,
            "--maps",
            "/no/maps.json",
            "-o",
            &out,
        ],
        &["/no/maps.json", "cannot read"],
    );
    fails_with(&["disasm", "/no/such.o"], &["/no/such.o"]);
}

#[test]
fn files_that_are_not_objects() {
    let dir = scratch_dir("err-notelf");
    let (obj, pcap) = fixture(&dir);
    let text = write(&dir, "text.o", b"this is not an ELF file\n");
    fails_with(&["disasm", &text], &["text.o", "not an elf"]);
    let elf = std::fs::read(&obj).unwrap();
    let truncated = write(&dir, "truncated.o", &elf[..elf.len() / 3]);
    fails_with(
        &["run", &truncated, "--pcap", &pcap, "-o", &dir],
        &["truncated.o"],
    );
    fails_with(&["gen", &text, "-o", &dir], &["text.o"]);
    fails_with(
        &["gen", &obj, "-o", &dir, "--flows", "0"],
        &["l2_acl.o", "at least one flow"],
    );
}

#[test]
fn no_such_program_lists_the_ones_there_are() {
    let dir = scratch_dir("err-program");
    let (obj, pcap) = fixture(&dir);
    fails_with(
        &[
            "run",
            &obj,
            "--program",
            "nope",
            "--pcap",
            &pcap,
            "-o",
            &dir,
        ],
        &["nope", "l2_acl"],
    );
    fails_with(&["disasm", &obj, "--program", "nope"], &["nope", "l2_acl"]);
    fails_with(
        &["gen", &obj, "--program", "nope", "-o", &dir],
        &["nope", "l2_acl"],
    );
    // Several XDP programs and a file name that names none of them: gen asks for one and lists them, as run does.
    let several = write(
        &dir,
        "several.o",
        &std::fs::read(example_object("tail_dispatch")).expect("tail_dispatch.o"),
    );
    for command in [
        vec!["gen", several.as_str(), "-o", dir.as_str()],
        vec!["run", several.as_str(), "--pcap", &pcap, "-o", dir.as_str()],
    ] {
        fails_with(
            &command,
            &[
                "several programs",
                "--program",
                "tail_ipv4",
                "tail_dispatch",
            ],
        );
    }
}

#[test]
fn bad_traces() {
    let dir = scratch_dir("err-pcap");
    let (obj, pcap) = fixture(&dir);
    let garbage = write(&dir, "garbage.pcap", b"GARBAGE!");
    fails_with(
        &["run", &obj, "--pcap", &garbage, "-o", &dir],
        &["garbage.pcap", "not a pcap"],
    );
    let empty = write(&dir, "empty.pcap", b"");
    fails_with(
        &["run", &obj, "--pcap", &empty, "-o", &dir],
        &["empty.pcap"],
    );
    // A record header that promises more bytes than the file has.
    let mut cut = std::fs::read(&pcap).unwrap();
    cut.truncate(24 + 16 + 5);
    let cut = write(&dir, "cut.pcap", &cut);
    fails_with(
        &["run", &obj, "--pcap", &cut, "-o", &dir],
        &["cut.pcap", "packet 0"],
    );
}

#[test]
fn bad_map_files() {
    let dir = scratch_dir("err-json");
    let (obj, pcap) = fixture(&dir);
    let run = |maps: &str, needles: &[&str]| {
        fails_with(
            &["run", &obj, "--pcap", &pcap, "--maps", maps, "-o", &dir],
            needles,
        )
    };
    run(
        &write(&dir, "syntax.json", b"{\"acl\": [\n"),
        &["syntax.json", "line 2"],
    );
    run(
        &write(
            &dir,
            "key.json",
            br#"{"acl": [{"key": ["0x01"], "value": ["0x01","0x00","0x00","0x00"]}]}"#,
        ),
        &["key.json", "acl", "entry 0", "key of 1 bytes", "takes 6"],
    );
    run(
        &write(&dir, "unknown.json", br#"{"nosuchmap": []}"#),
        &["unknown.json", "nosuchmap"],
    );
    run(
        &write(
            &dir,
            "hex.json",
            br#"{"acl": [{"key": ["0xzz"], "value": []}]}"#,
        ),
        &["hex.json", "acl"],
    );
}

#[test]
fn bad_route_files() {
    let dir = scratch_dir("err-routes");
    let (obj, pcap) = fixture(&dir);
    let routes = write(
        &dir,
        "routes.json",
        br#"{"routes": [{"dst": "10.0.0.0/40", "dev": 2}]}"#,
    );
    fails_with(
        &[
            "run", &obj, "--pcap", &pcap, "--routes", &routes, "-o", &dir,
        ],
        &["routes.json", "route 0", "10.0.0.0/40"],
    );
}

/// Output into a pipe whose reader has gone (`hwxdp disasm prog.o | head -1`) ends the process by SIGPIPE, quietly,
/// as other tools do: no panic on the broken pipe.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwxdp"))
        .args(["disasm", &example_object("l2_acl")])
        .stdout(writer)
        .output()
        .expect("hwxdp starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{stderr}");
}

/// A program the kernel's verifier refuses is the one error that is more than one line: the verifier's last lines (the
/// reason) follow the error with their newlines intact, then a line says where the whole verifier log was written.
#[test]
fn verifier_rejections_keep_the_verifiers_lines() {
    require_kernel();
    let dir = scratch_dir("err-verifier");
    let (_, pcap) = fixture(&dir);
    let obj = compile_c(
        &dir,
        "reject",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int xdp_reject(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;

	return *(__u8 *)(data + 20);
}
char _license[] SEC("license") = "GPL";
"#,
    );
    let out = hwxdp(&["verify", &obj, "--pcap", &pcap]);
    assert_eq!(out.code, Some(2), "expected exit 2:\n{}", out.all);
    assert!(!out.stderr.contains("panicked"), "{}", out.all);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() >= 4, "{}", out.all);
    let first = lines[0];
    assert!(
        first.starts_with("hwxdp: ")
            && first.contains("reject.o")
            && first.contains("cannot load program xdp_reject")
            && !first.contains("invalid access to packet"),
        "{}",
        out.all
    );
    let reason = &lines[1..lines.len() - 1];
    assert!(reason.iter().all(|l| l.starts_with("  ")), "{}", out.all);
    for words in [
        "invalid access to packet, off=20 size=1",
        "R1 offset is outside of the packet",
    ] {
        assert!(
            reason.iter().any(|l| l.trim().starts_with(words)),
            "{words:?} is not a line of its own:\n{}",
            out.all
        );
    }
    let last = lines[lines.len() - 1];
    let path = last
        .strip_prefix("hwxdp: the whole verifier log (")
        .and_then(|rest| rest.split_once(" lines) is in "))
        .map(|(_, path)| path)
        .unwrap_or_else(|| panic!("no line saying where the log is:\n{}", out.all));
    let log = std::fs::read_to_string(path).expect("the verifier log file");
    let _ = std::fs::remove_file(path);
    assert!(
        log.lines()
            .any(|l| l == "R1 offset is outside of the packet"),
        "{log}"
    );
}

#[test]
fn synth_refuses_an_unknown_device_and_a_bad_clock() {
    fails_with(
        &[
            "synth", "--target", "hxdp", "--top", "alu", "--device", "xcu9000",
        ],
        &[
            "--device xcu9000: unknown device",
            "xcu50, xcu250, xcu280, vcu118, xc7vx690t",
        ],
    );
    fails_with(
        &[
            "synth",
            "--target",
            "hxdp",
            "--top",
            "alu",
            "--clock-mhz",
            "0",
        ],
        &["--clock-mhz 0: must be a positive number"],
    );
}
