//! `hwxdp synth`: Yosys synthesis of modules of the hXDP unit from the sources built into the binary, the JSON it
//! writes, and its errors (an unknown module, an option the module has no parameter for, Yosys failing or missing).

#[path = "../../../tests/support/mod.rs"]
mod support;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `hwxdp` with `args` from a directory that holds no RTL, so the sources can only come from the binary.
fn hwxdp(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hwxdp"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("hwxdp runs")
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("synth-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

/// Runs a synthesis that must succeed and returns its JSON and standard output.
fn synthesize(name: &str, args: &[&str]) -> (Value, String) {
    let dir = scratch(name);
    let mut all = vec!["synth", "--target", "hxdp", "-o", "out/synth.json"];
    all.extend_from_slice(args);
    let output = hwxdp(&all, &dir);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "hwxdp {all:?} failed:\n{}{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = dir.join("out/synth.yosys.log");
    let log_text = fs::read_to_string(&log).expect("the Yosys log is kept next to the JSON");
    assert!(
        log_text.contains("synth_xilinx -family xcup"),
        "{}",
        log.display()
    );
    let text = fs::read_to_string(dir.join("out/synth.json")).expect("the JSON is written");
    (serde_json::from_str(&text).expect("valid JSON"), stdout)
}

fn count(json: &Value, field: &str) -> u64 {
    json[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} is a count in {json}"))
}

/// Every field of the summary is present with its type, and the counts agree with the cell list.
fn check_shape(json: &Value, top: &str) {
    assert_eq!(json["target"], "hxdp");
    assert_eq!(json["top"], top);
    assert!(json["parameters"].is_object());
    for field in [
        "lut", "lutram", "ff", "ramb18", "ramb36", "uram", "dsp", "carry", "latch",
    ] {
        count(json, field);
    }
    let bram36 = json["bram36"].as_f64().expect("bram36 is a number");
    assert_eq!(
        bram36,
        count(json, "ramb36") as f64 + count(json, "ramb18") as f64 / 2.0
    );
    assert!(json["seconds"].as_f64().expect("seconds is a number") > 0.0);
    assert!(json["yosys_version"]
        .as_str()
        .expect("yosys_version is a string")
        .starts_with("Yosys "));
    let cells = json["cells"].as_object().expect("cells is an object");
    let luts: u64 = (1..=6)
        .filter_map(|n| cells.get(&format!("LUT{n}")))
        .map(|c| c.as_u64().expect("a count"))
        .sum();
    assert_eq!(luts, count(json, "lut"));
    assert_eq!(count(json, "latch"), 0, "the RTL has no latches");
}

/// Two lanes of 512 bundles: one RAMB36E2 (512 x 72) per lane, almost no logic.
#[test]
fn imem_maps_to_one_block_ram_per_lane() {
    let (json, stdout) = synthesize(
        "imem",
        &["--top", "imem", "--lanes", "2", "--imem-bundles", "512"],
    );
    check_shape(&json, "imem");
    assert_eq!(
        json["parameters"],
        serde_json::json!({"LANES": 2, "BUNDLES": 512, "AW": 9})
    );
    assert_eq!(count(&json, "ramb36"), 2);
    assert_eq!(json["bram36"].as_f64(), Some(2.0));
    assert_eq!(count(&json, "uram"), 0);
    assert_eq!(count(&json, "lutram"), 0);
    assert!(
        stdout.contains("imem (LANES=2 BUNDLES=512 AW=9)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("RAMB36 equivalents: 2 RAMB36, 0 RAMB18"),
        "{stdout}"
    );
}

/// The combinational ALU: LUTs, carry chains and DSPs (the multiplier), no flip-flops, no parameters (the default
/// lane count does not apply to a module without lanes).
#[test]
fn the_alu_maps_to_luts_carry_chains_and_dsps() {
    let (json, stdout) = synthesize("alu", &["--top", "alu"]);
    check_shape(&json, "alu");
    assert_eq!(json["parameters"], serde_json::json!({}));
    assert!(count(&json, "lut") > 1000, "{json}");
    assert!(count(&json, "carry") > 0, "{json}");
    assert!(count(&json, "dsp") > 0, "{json}");
    assert_eq!(count(&json, "ff"), 0);
    assert_eq!(json["bram36"].as_f64(), Some(0.0));
    for row in ["LUT", "LUTRAM", "FF", "BRAM", "URAM", "DSP", "CARRY"] {
        assert!(
            stdout
                .lines()
                .any(|line| line.trim_start().starts_with(row)),
            "no {row} row in:\n{stdout}"
        );
    }
}

/// Errors that are found before Yosys runs: exit status 2, the culprit named.
#[test]
fn bad_modules_and_options_are_named() {
    let dir = scratch("errors");
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--top", "nosuch"],
            &["no module nosuch in rtl/sephirot", "sephirot", "alu"],
        ),
        (
            &["--top", "alu", "--lanes", "2"],
            &["--lanes 2", "module alu has no parameter"],
        ),
        (
            &["--top", "maps", "--param", "DEPTH=3"],
            &["DEPTH", "its parameters: MAPS"],
        ),
        (&["--lanes", "9"], &["--lanes 9", "1 to 8"]),
        (
            &["--top", "imem", "--imem-bundles", "0"],
            &["--imem-bundles 0"],
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["synth", "--target", "hxdp", "-o", "never.json"];
        all.extend_from_slice(args);
        let output = hwxdp(&all, &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        for text in expected {
            assert!(stderr.contains(text), "{args:?}: {text:?} not in {stderr}");
        }
        assert!(!dir.join("never.json").exists());
    }
}

/// Writes an executable shell script standing in for Yosys.
fn fake_yosys(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}")).expect("write the fake yosys");
    let mut perms = fs::metadata(path).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(path, perms).expect("chmod");
}

/// Without `--top`, the whole hXDP module: Yosys is handed its sources (written where it runs) and the size options
/// under the names `hxdp.sv` declares. (A stand-in records what it is given; the real synthesis takes hours.)
#[test]
fn the_default_top_is_the_whole_module() {
    let dir = scratch("default-top");
    let record = dir.join("record.txt");
    fake_yosys(
        &dir.join("fake-yosys"),
        &format!(
            "echo \"$@\" > {record}\nfor f in hxdp sephirot maps pkt_buffer alu; do\n  \
             test -f rtl/sephirot/$f.sv && echo \"present $f\" >> {record}\ndone\nexit 1\n",
            record = record.display()
        ),
    );
    let output = hwxdp(
        &[
            "synth",
            "--target",
            "hxdp",
            "--lanes",
            "2",
            "--map-entries",
            "64",
            "--map-words",
            "1024",
            "--diff-entries",
            "16",
            "--yosys",
            "./fake-yosys",
        ],
        &dir,
    );
    assert_eq!(output.status.code(), Some(2));
    let recorded = fs::read_to_string(&record).expect("the stand-in ran");
    for expected in [
        "chparam -set LANES 2 -set ENTRIES 64 -set MEM_WORDS 1024 -set DIFF_ENTRIES 16 hxdp;",
        "synth_xilinx -family xcup -noiopad -top hxdp;",
        "\"rtl/sephirot/hxdp.sv\"",
        "\"rtl/sephirot/sephirot.sv\"",
        "present hxdp",
        "present sephirot",
        "present maps",
        "present pkt_buffer",
        "present alu",
    ] {
        assert!(
            recorded.contains(expected),
            "{expected:?} not in {recorded}"
        );
    }
    assert!(!recorded.contains("rtl/ehdl"), "{recorded}");
}

/// Yosys failing: the error carries its error line and names the kept log; Yosys missing: the Debian package.
#[test]
fn yosys_failing_or_missing_is_reported() {
    let dir = scratch("yosys");
    // A stand-in for Yosys that logs an error, as Yosys does with `-l FILE`, and fails.
    fake_yosys(
        &dir.join("fake-yosys"),
        "while [ $# -gt 0 ]; do\n  if [ \"$1\" = -l ]; then log=\"$2\"; fi\n  shift\ndone\n\
         echo 'ERROR: fake failure in rtl/sephirot/alu.sv' > \"$log\"\nexit 1\n",
    );
    // Relative to the caller's directory, not to the one Yosys runs in.
    let fake_arg = "./fake-yosys";
    let output = hwxdp(
        &[
            "synth", "--target", "hxdp", "--top", "alu", "-o", "out.json", "--yosys", fake_arg,
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ERROR: fake failure in rtl/sephirot/alu.sv"),
        "{stderr}"
    );
    let log = dir.join("out.yosys.log");
    assert!(stderr.contains(&log.display().to_string()), "{stderr}");
    assert!(log.exists());
    assert!(!dir.join("out.json").exists());

    let empty = dir.join("empty-path");
    fs::create_dir_all(&empty).expect("create an empty PATH directory");
    let output = Command::new(env!("CARGO_BIN_EXE_hwxdp"))
        .args(["synth", "--target", "hxdp", "--top", "alu"])
        .current_dir(&dir)
        .env("PATH", &empty)
        .output()
        .expect("hwxdp runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("yosys not found: install the debian package `yosys`"),
        "{stderr}"
    );
}

/// The examples' `tail_dispatch.o` (three programs; `tail_ipv6` is the smallest pipeline, 5 stages, no maps).
fn tail_dispatch() -> PathBuf {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/examples/xdp/tail_dispatch.o");
    assert!(
        path.exists(),
        "{}: missing (run `make examples`)",
        path.display()
    );
    path
}

/// `--target ehdl`: a program's generated pipeline with the embedded primitives, its figures in the JSON.
#[test]
fn an_ehdl_pipeline_synthesizes_with_its_program_figures() {
    let dir = scratch("ehdl");
    let object = tail_dispatch().display().to_string();
    let all = [
        "synth",
        "--target",
        "ehdl",
        &object,
        "-p",
        "tail_ipv6",
        "-o",
        "out/synth.json",
    ];
    let output = hwxdp(&all, &dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "hwxdp {all:?} failed:\n{}{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: Value = serde_json::from_str(
        &fs::read_to_string(dir.join("out/synth.json")).expect("the JSON is written"),
    )
    .expect("valid JSON");
    assert_eq!(json["target"], "ehdl");
    assert_eq!(json["top"], "ehdl_tail_ipv6");
    assert_eq!(json["program"], "tail_ipv6");
    assert_eq!(json["prune"], true);
    assert_eq!(json["data_width"], 512);
    assert_eq!(json["stages"], 5);
    // The frame chain alone is 3516 flip-flops; no maps, so no block RAM.
    assert!(count(&json, "ff") >= count(&json, "frame_flops"), "{json}");
    assert!(count(&json, "lut") > 1000, "{json}");
    assert_eq!(count(&json, "ramb36") + count(&json, "ramb18"), 0);
    assert_eq!(count(&json, "latch"), 0, "the RTL has no latches");
    let log = fs::read_to_string(dir.join("out/synth.yosys.log")).expect("the log is kept");
    assert!(
        log.contains("generated/ehdl_tail_ipv6.sv"),
        "the generated module is read"
    );
    assert!(stdout.contains("ehdl_tail_ipv6"), "{stdout}");
}

/// `--no-prune` hands Yosys a module whose boundaries carry the whole stack (a stand-in for Yosys records it).
#[test]
fn ehdl_no_prune_carries_every_register_and_stack_byte() {
    let dir = scratch("ehdl-no-prune");
    let object = tail_dispatch().display().to_string();
    for (flag, name) in [(None, "pruned"), (Some("--no-prune"), "unpruned")] {
        fake_yosys(
            &dir.join("fake-yosys"),
            &format!(
                "cp generated/ehdl_tail_ipv6.sv {}\nexit 1\n",
                dir.join(format!("{name}.sv")).display()
            ),
        );
        let mut all = vec![
            "synth",
            "--target",
            "ehdl",
            &object,
            "-p",
            "tail_ipv6",
            "--yosys",
            "./fake-yosys",
        ];
        all.extend(flag);
        let output = hwxdp(&all, &dir);
        assert_eq!(output.status.code(), Some(2), "the stand-in fails");
    }
    let stack_regs = |name: &str| {
        let text = fs::read_to_string(dir.join(format!("{name}.sv"))).expect("recorded");
        text.lines()
            .filter(|l| l.trim_start().starts_with("logic [7:0] b1_s"))
            .count()
    };
    assert_eq!(stack_regs("pruned"), 0);
    assert_eq!(
        stack_regs("unpruned"),
        512,
        "boundary 1 holds the whole stack"
    );
}

/// A program the generator refuses, a missing object and options of the other target: exit status 2, named.
#[test]
fn ehdl_refusals_are_named() {
    let dir = scratch("ehdl-errors");
    // Every example generates: a program with a helper the generator has no block for.
    let coin = support::ehdl_refused_object(&dir.display().to_string());
    let tail = tail_dispatch().display().to_string();
    let cases: [(Vec<&str>, &[&str]); 5] = [
        (
            vec!["--target", "ehdl", &coin],
            &["no pipeline module to synthesize", "program coin"],
        ),
        (
            vec![
                "--target",
                "ehdl",
                &tail,
                "-p",
                "tail_ipv6",
                "--data-width",
                "72",
            ],
            &["no pipeline module to synthesize", "72"],
        ),
        (vec!["--target", "ehdl"], &["needs the program's object"]),
        (
            vec!["--target", "ehdl", &tail, "-p", "tail_ipv6", "--lanes", "2"],
            &["--lanes is for --target hxdp"],
        ),
        (
            vec!["--target", "hxdp", "--no-prune"],
            &["--no-prune is for --target ehdl"],
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["synth", "-o", "never.json"];
        all.extend(args.iter().copied());
        let output = hwxdp(&all, &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        for text in expected {
            assert!(stderr.contains(text), "{args:?}: {text:?} not in {stderr}");
        }
        assert!(!dir.join("never.json").exists());
    }
}
