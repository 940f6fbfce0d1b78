//! What the commands that write files write: `compile` fails when the target's artifact is missing and handles every
//! XDP program of an object in turn, `gen --program` generates for the chosen program, and `-o/--out` takes a
//! directory everywhere (and the file itself for `p4c` and `synth`, which write one).

mod support;

use std::path::Path;
use support::*;

/// Two XDP programs in one object: `coin`, whose helper (`bpf_get_prandom_u32`) the eHDL generator has no block
/// for, and `pass_all`, which every target compiles.
fn two_programs(dir: &str) -> String {
    compile_c(
        dir,
        "two",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int coin(struct xdp_md *ctx)
{
	return bpf_get_prandom_u32() & 1 ? XDP_DROP : XDP_PASS;
}
SEC("xdp")
int pass_all(struct xdp_md *ctx)
{
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"#,
    )
}

/// The lines of `stdout` that start with `program: `.
fn lines_of<'a>(stdout: &'a str, program: &str) -> Vec<&'a str> {
    let prefix = format!("{program}: ");
    stdout.lines().filter(|l| l.starts_with(&prefix)).collect()
}

#[test]
fn ehdl_without_verilog_is_an_error() {
    let dir = scratch_dir("compile-no-verilog");
    let obj = ehdl_refused_object(&dir);
    let out_dir = format!("{dir}/out");
    let out = hwxdp(&["compile", "--target", "ehdl", &obj, "-o", &out_dir]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    let stderr: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(stderr.len(), 1, "{}", out.all);
    for words in [
        "hwxdp: ",
        "program coin: no Verilog module",
        "bpf_get_prandom_u32",
    ] {
        assert!(stderr[0].contains(words), "{words:?}: {}", out.all);
    }
    // The diagrams, which show where the op without a template is, are still written; the module is not.
    assert!(Path::new(&format!("{out_dir}/coin.pipeline.txt")).exists());
    assert!(!Path::new(&format!("{out_dir}/ehdl_coin.sv")).exists());
}

#[test]
fn compile_handles_every_xdp_program_in_turn() {
    let dir = scratch_dir("compile-every-program");
    let obj = two_programs(&dir);

    // eHDL: pass_all gets its module even though coin, before it, gets none; the exit status says one failed.
    let ehdl = format!("{dir}/ehdl");
    let out = hwxdp(&["compile", "--target", "ehdl", &obj, "-o", &ehdl]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert_eq!(lines_of(&out.stdout, "coin").len(), 1, "{}", out.all);
    assert!(lines_of(&out.stdout, "pass_all").len() >= 2, "{}", out.all);
    assert!(Path::new(&format!("{ehdl}/ehdl_pass_all.sv")).exists());
    assert!(
        out.stderr.contains("program coin: no Verilog module")
            && out
                .stderr
                .contains("1 of 2 programs got no Verilog module (coin)"),
        "{}",
        out.all
    );
    // --program: that one only.
    let only = format!("{dir}/ehdl-only");
    let out = hwxdp(&[
        "compile", "--target", "ehdl", &obj, "-p", "pass_all", "-o", &only,
    ]);
    assert!(out.ok, "{}", out.all);
    assert!(lines_of(&out.stdout, "coin").is_empty(), "{}", out.all);
    assert!(!Path::new(&format!("{only}/coin.pipeline.txt")).exists());

    // hXDP: one summary line and one image per program.
    let hxdp = format!("{dir}/hxdp");
    let out = hwxdp(&["compile", "--target", "hxdp", &obj, "-o", &hxdp]);
    assert!(out.ok, "{}", out.all);
    for program in ["coin", "pass_all"] {
        let summary = lines_of(&out.stdout, program);
        assert_eq!(summary.len(), 1, "{}", out.all);
        assert!(summary[0].contains("bundles of 4 lanes"), "{}", out.all);
        assert!(Path::new(&format!("{hxdp}/{program}.hxdp")).exists());
        assert!(Path::new(&format!("{hxdp}/{program}.lst")).exists());
    }
}

#[test]
fn compile_program_prints_that_programs_summary_only() {
    let dir = scratch_dir("compile-one-program");
    let obj = example_object("tail_dispatch");
    let out = hwxdp(&[
        "compile",
        "--target",
        "hxdp",
        &obj,
        "-p",
        "tail_dispatch",
        "-o",
        &dir,
    ]);
    assert!(out.ok, "{}", out.all);
    let summaries: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("eBPF instructions"))
        .collect();
    assert_eq!(summaries.len(), 1, "{}", out.all);
    assert!(summaries[0].starts_with("tail_dispatch: "), "{}", out.all);
    // The image still holds the programs the tail calls enter.
    assert!(
        out.stdout
            .contains("the image also holds tail_ipv4, tail_ipv6, for tail calls"),
        "{}",
        out.all
    );
}

#[test]
fn gen_generates_for_the_chosen_program() {
    let dir = scratch_dir("gen-program");
    // xdp1_drop has a workload of its own; pass_all gets the generic mix.
    let obj = compile_c(
        &dir,
        "pair",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int pass_all(struct xdp_md *ctx)
{
	return XDP_PASS;
}
SEC("xdp")
int xdp1_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}
char _license[] SEC("license") = "GPL";
"#,
    );
    let gen = |program: &str| {
        let out_dir = format!("{dir}/{program}");
        let out = hwxdp(&["gen", &obj, "-p", program, "-o", &out_dir, "-n", "50"]);
        assert!(out.ok, "{}", out.all);
        let trace = std::fs::read(format!("{out_dir}/trace.pcap")).expect("trace written");
        (out.stdout, trace)
    };
    let (drop_says, drop_trace) = gen("xdp1_drop");
    let (pass_says, pass_trace) = gen("pass_all");
    assert!(drop_says.starts_with("xdp1_drop: "), "{drop_says}");
    assert!(pass_says.starts_with("generic mix"), "{pass_says}");
    // The trace names the program it was made for.
    assert!(
        drop_says.contains("(50 packets for program xdp1_drop)"),
        "{drop_says}"
    );
    assert!(
        pass_says.contains("(50 packets for program pass_all)"),
        "{pass_says}"
    );
    assert_ne!(drop_trace, pass_trace);
    // Without --program the choice is the user's.
    let out = hwxdp(&["gen", &obj, "-o", &format!("{dir}/none")]);
    assert_eq!(out.code, Some(2), "{}", out.all);
    assert!(
        out.stderr.contains("choose one with --program"),
        "{}",
        out.all
    );
}

#[test]
fn p4c_out_is_a_directory_or_the_object() {
    let dir = scratch_dir("p4c-out");
    let p4 = repo_root()
        .join("examples/p4/xdp_mac_swap.p4")
        .display()
        .to_string();
    // A directory that does not exist yet, written with a trailing slash, and one that exists.
    let fresh = format!("{dir}/objects/");
    for out_dir in [fresh.as_str(), dir.as_str()] {
        let out = hwxdp(&["p4c", &p4, "-o", out_dir]);
        assert!(out.ok, "{}", out.all);
        let object = Path::new(out_dir).join("xdp_mac_swap.o");
        assert!(object.is_file(), "{}: {}", object.display(), out.all);
    }
    // The file itself, under each spelling (`--output` is the older one).
    for flag in ["-o", "--out", "--output"] {
        let object = format!("{dir}/named{}.o", flag.len());
        let out = hwxdp(&["p4c", &p4, flag, &object]);
        assert!(out.ok, "{}", out.all);
        assert!(Path::new(&object).is_file(), "{flag}: {}", out.all);
    }
}

#[test]
fn synth_out_is_a_directory_or_the_json_file() {
    let dir = scratch_dir("synth-out");
    // A stand-in for Yosys that fails: the log it writes is kept, at the place `-o` chose.
    let fake = format!("{dir}/fake-yosys");
    std::fs::write(
        &fake,
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -l ]; then log=\"$2\"; fi\n  shift\ndone\n\
         echo 'ERROR: fake failure' > \"$log\"\nexit 1\n",
    )
    .expect("write the fake yosys");
    let mut mode = std::fs::metadata(&fake).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&fake, mode).expect("chmod");
    let out_dir = format!("{dir}/counts/");
    let out_file = format!("{dir}/alu-counts.json");
    for (flag, out, log) in [
        ("-o", &out_dir, format!("{out_dir}alu.yosys.log")),
        ("--out", &out_file, format!("{dir}/alu-counts.yosys.log")),
    ] {
        let run = hwxdp(&[
            "synth", "--target", "hxdp", "--top", "alu", flag, out, "--yosys", &fake,
        ]);
        assert_eq!(run.code, Some(2), "{}", run.all);
        assert!(run.stderr.contains("ERROR: fake failure"), "{}", run.all);
        assert!(run.stderr.contains(&log), "{log} not named: {}", run.all);
        assert!(Path::new(&log).is_file(), "{log}: {}", run.all);
    }
}

/// A stand-in for Yosys that writes the statistics and the longest path a synthesis would (`stat.json`, `ltp.txt`
/// in its working directory), with `luts` LUTs and a path of `levels` LUTs, and the script it was given to `script`.
fn fake_yosys(dir: &str, luts: u64, levels: u64) -> String {
    let fake = format!("{dir}/fake-yosys-{luts}-{levels}");
    let mut ltp = String::from("Longest topological path in t (length=LEVELS):\n    0: \\\\a_q\n");
    for i in 1..=levels {
        ltp.push_str(&format!("    {i}: $abc$w{i} (via hwxdp_lut{i})\n"));
    }
    let ltp = ltp.replace("LEVELS", &levels.to_string());
    let stat = format!(
        "{{\"creator\": \"Yosys fake\", \"modules\": {{\"\\\\\\\\alu\": {{\"num_cells_by_type\": \
         {{\"LUT6\": {luts}, \"FDRE\": 10}}}}}}}}"
    );
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -p ]; then script=\"$2\"; fi\n  shift\ndone\n\
             printf '%s' \"$script\" > {dir}/script-{luts}.txt\n\
             cat > stat.json <<'END'\n{stat}\nEND\ncat > ltp.txt <<'END'\n{ltp}END\nexit 0\n"
        ),
    )
    .expect("write the fake yosys");
    let mut mode = std::fs::metadata(&fake).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&fake, mode).expect("chmod");
    fake
}

#[test]
fn synth_reports_shares_of_the_device_the_path_and_plain_verdicts() {
    let dir = scratch_dir("synth-device");
    // Small and shallow on the default device (the U50): fits, and the estimate is over 250 MHz.
    let fake = fake_yosys(&dir, 8_720, 4);
    let out_file = format!("{dir}/alu.json");
    let run = hwxdp(&[
        "synth", "--target", "hxdp", "--top", "alu", "-o", &out_file, "--yosys", &fake,
    ]);
    assert!(run.ok, "{}", run.all);
    let script = std::fs::read_to_string(format!("{dir}/script-8720.txt")).expect("script");
    assert!(
        script.contains("synth_xilinx -family xcup -noiopad -top alu"),
        "{script}"
    );
    assert!(script.contains("ltp -noff"), "{script}");
    for needle in [
        "(out of context)",
        "1.0% of 872000 xcu50",
        "logic levels on the longest path",
        "an ESTIMATE from the levels: 0.5 ns per LUT level",
        "fits the xcu50 Alveo U50 (XCU50): largest share LUT 1.0%",
        // 0.4 + 4 * 0.5 = 2.4 ns.
        "estimated 417 MHz: at or above the 250 MHz target clock",
    ] {
        assert!(
            run.stdout.contains(needle),
            "{needle:?} missing:\n{}",
            run.all
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).expect("json")).expect("JSON");
    assert_eq!(json["device"], "xcu50");
    assert_eq!(json["out_of_context"], true);
    assert_eq!(json["share_percent"]["LUT"], 1.0);
    assert_eq!(json["fits"], true);
    assert_eq!(json["logic_levels"], 4);
    assert_eq!(json["fmax_estimate_mhz"], 416.7);
    assert_eq!(json["meets_clock"], true);
    // Too big and too deep for the NetFPGA SUME, mapped for the 7 series.
    let fake = fake_yosys(&dir, 500_000, 14);
    let run = hwxdp(&[
        "synth",
        "--target",
        "hxdp",
        "--top",
        "alu",
        "--device",
        "xc7vx690t",
        "--yosys",
        &fake,
    ]);
    assert!(run.ok, "{}", run.all);
    let script = std::fs::read_to_string(format!("{dir}/script-500000.txt")).expect("script");
    assert!(script.contains("-family xc7 -noiopad"), "{script}");
    for needle in [
        "DOES NOT FIT the xc7vx690t NetFPGA SUME (Virtex-7 XC7VX690T): LUT 500000 of 433200 (115%)",
        // 0.4 + 14 * 0.5 = 7.4 ns.
        "UNDER THE TARGET CLOCK: estimated 135 MHz, below 250 MHz",
    ] {
        assert!(
            run.stdout.contains(needle),
            "{needle:?} missing:\n{}",
            run.all
        );
    }
    // The same path against a slower target clock meets it.
    let run = hwxdp(&[
        "synth",
        "--target",
        "hxdp",
        "--top",
        "alu",
        "--device",
        "xcu250",
        "--clock-mhz",
        "125",
        "--yosys",
        &fake,
    ]);
    assert!(run.ok, "{}", run.all);
    assert!(
        run.stdout
            .contains("estimated 135 MHz: at or above the 125 MHz target clock"),
        "{}",
        run.all
    );
}
