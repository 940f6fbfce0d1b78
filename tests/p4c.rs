//! `hwxdp p4c` end to end: a P4 program becomes an object the other commands read, and malformed programs get one
//! diagnostic with file, line and column and exit code 2.

mod support;

use support::*;

/// Writes `source` as `name` in a scratch directory and runs `hwxdp p4c` on it.
fn p4c(name: &str, source: &str) -> Output {
    let dir = scratch_dir(&format!("p4c-{name}"));
    let path = format!("{dir}/{name}");
    std::fs::write(&path, source).expect("write P4 source");
    hwxdp(&["p4c", &path, "-o", &format!("{dir}/out.o")])
}

const HEADERS: &str = "#include <xdp_model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type_; }
struct headers_t { eth_t eth; }
";

fn program(parser_body: &str, apply: &str) -> String {
    format!(
        "{HEADERS}
parser P(packet_in pkt, out headers_t hd) {{ state start {{ {parser_body} transition accept; }} }}
control C(inout headers_t hd, in xdp_input xin, out xdp_output xout) {{ apply {{ {apply} }} }}
control D(in headers_t hd, packet_out pkt) {{ apply {{ pkt.emit(hd.eth); }} }}
xdp(P(), C(), D()) main;
"
    )
}

#[test]
fn an_object_every_command_reads() {
    let dir = scratch_dir("p4c-example");
    let object = format!("{dir}/mac_swap.o");
    let p4 = repo_root().join("examples/p4/xdp_mac_swap.p4");
    let c_file = format!("{dir}/mac_swap.c");
    let out = hwxdp(&[
        "p4c",
        &p4.display().to_string(),
        "-o",
        &object,
        "--emit-c",
        &c_file,
    ]);
    assert!(out.ok, "{}", out.all);
    assert!(std::fs::read_to_string(&c_file)
        .expect("--emit-c file")
        .contains("SEC(\"xdp\")"));
    let disasm = hwxdp(&["disasm", &object]);
    assert!(disasm.ok, "{}", disasm.all);
    assert!(
        disasm.stdout.contains("Disassembly of section xdp"),
        "{}",
        disasm.stdout
    );
}

#[test]
fn malformed_programs_get_one_located_diagnostic() {
    let cases = [
        (
            "syntax.p4",
            program("pkt.extract(hd.eth)", ""),
            "syntax.p4:5:",
        ),
        (
            "types.p4",
            program("pkt.extract(hd.eth);", "bit<8> x = hd.eth.type_;"),
            "types.p4:6:",
        ),
        (
            "extern.p4",
            program("pkt.extract(hd.eth);", "frobnicate(hd.eth.dst);"),
            "extern.p4:6:",
        ),
        (
            "unsupported.p4",
            format!("{HEADERS}\nheader_union u_t {{ eth_t a; }}\n"),
            "unsupported.p4:5:",
        ),
    ];
    for (name, source, location) in cases {
        let out = p4c(name, &source);
        assert_eq!(out.code, Some(2), "{name}: {}", out.all);
        let line = out.stderr.trim();
        assert_eq!(
            line.lines().count(),
            1,
            "{name}: one diagnostic, got {line}"
        );
        assert!(
            line.contains(location),
            "{name}: expected {location} in {line}"
        );
    }
}

#[test]
fn a_header_that_is_not_whole_bytes_is_refused() {
    let source = "#include <xdp_model.p4>
header odd_t { bit<3> a; }
struct headers_t { odd_t odd; }
parser P(packet_in pkt, out headers_t hd) { state start { pkt.extract(hd.odd); transition accept; } }
control C(inout headers_t hd, in xdp_input xin, out xdp_output xout) { apply { } }
control D(in headers_t hd, packet_out pkt) { apply { pkt.emit(hd.odd); } }
xdp(P(), C(), D()) main;
";
    let out = p4c("odd.p4", source);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert!(
        out.stderr.contains("odd.p4:4:") && out.stderr.contains("not a whole number of bytes"),
        "{}",
        out.stderr
    );
}

/// Runs `hwxdp ARGS` under `prlimit --as` of 1 GiB, so that a blow-up fails the test instead of the machine;
/// returns what it printed and how long it took.
fn hwxdp_in_1g(args: &[&str]) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_hwxdp"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("prlimit (util-linux) runs");
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let output = Output {
        ok: out.status.success(),
        code: out.status.code(),
        all: format!("$ hwxdp {}\n{stdout}{stderr}", args.join(" ")),
        stdout,
        stderr,
    };
    (output, elapsed)
}

/// `hwxdp p4c` (and `hwxdp stf`, with an empty script) on `source`, under 1 GiB.
fn p4c_in_1g(name: &str, source: &str, stf: bool) -> (Output, std::time::Duration) {
    let dir = scratch_dir(&format!("p4c-hostile-{name}"));
    let path = format!("{dir}/{name}.p4");
    std::fs::write(&path, source).expect("write P4 source");
    if stf {
        let script = format!("{dir}/{name}.stf");
        std::fs::write(&script, "# nothing\n").expect("write STF script");
        hwxdp_in_1g(&["stf", &path, &script, "-o", &format!("{dir}/out")])
    } else {
        hwxdp_in_1g(&["p4c", &path, "-o", &format!("{dir}/out.o")])
    }
}

/// Exit 2 with one line on stderr ending in `message`, naming the file and a line.
fn assert_refused(out: &Output, name: &str, message: &str) {
    assert_eq!(out.code, Some(2), "{}", out.all);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.all);
    assert!(
        lines[0].contains(&format!("{name}.p4:")) && lines[0].ends_with(message),
        "{}",
        out.all
    );
}

#[test]
fn hostile_chains_and_macros_exit_2_in_bounded_time_and_memory() {
    let chain = |n: usize| {
        program(
            "",
            &format!("hd.eth.type_ = hd.eth.type_{};", " + 16w1".repeat(n)),
        )
    };
    let slices = |n: usize| {
        program(
            "",
            &format!("hd.eth.type_ = hd.eth.type_{};", "[15:0]".repeat(n)),
        )
    };
    let bomb = |levels: usize| {
        let mut text = String::from("#define A_0 ;\n");
        for i in 1..=levels {
            text.push_str(&format!("#define A_{i} A_{} A_{}\n", i - 1, i - 1));
        }
        text + &program("", &format!("A_{levels}"))
    };
    let nesting = "nesting deeper than 128 levels";
    for stf in [false, true] {
        let (small, small_time) = p4c_in_1g("chain60", &chain(60), stf);
        assert!(small.ok, "{}", small.all);
        let (big, big_time) = p4c_in_1g("chain6000", &chain(6000), stf);
        assert_refused(&big, "chain6000", nesting);
        assert!(
            big_time <= small_time * 50,
            "{big_time:?} against {small_time:?}"
        );

        let (small, small_time) = p4c_in_1g("slices20", &slices(20), stf);
        assert!(small.ok, "{}", small.all);
        let (big, big_time) = p4c_in_1g("slices20000", &slices(20_000), stf);
        assert_refused(&big, "slices20000", nesting);
        assert!(
            big_time <= small_time * 50,
            "{big_time:?} against {small_time:?}"
        );

        let (small, small_time) = p4c_in_1g("bomb10", &bomb(10), stf);
        assert!(small.ok, "{}", small.all);
        let (big, big_time) = p4c_in_1g("bomb31", &bomb(31), stf);
        assert_refused(&big, "bomb31", "macro `A_31` expands past 1048576 tokens");
        assert!(
            big_time <= small_time * 50,
            "{big_time:?} against {small_time:?}"
        );
    }
}
