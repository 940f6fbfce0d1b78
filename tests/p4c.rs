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
