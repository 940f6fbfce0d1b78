//! Every RTL file lints clean with `-Wall`, and the ALU synthesizes for UltraScale+.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use hwxdp_rtlsim::{lint, synth};

/// Files under `dir` whose names end with `.ext`, recursively, sorted.
fn files_with_extension(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files_with_extension(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
}

#[test]
fn every_rtl_module_lints_clean_with_wall() {
    let rtl = common::workspace_root().join("rtl");
    let mut modules = Vec::new();
    files_with_extension(&rtl, "sv", &mut modules);
    assert!(
        modules.iter().any(|path| path.ends_with("sephirot/alu.sv")),
        "rtl/sephirot/alu.sv is among the linted files"
    );
    let mut waivers = Vec::new();
    let lint_dir = rtl.join("lint");
    if lint_dir.is_dir() {
        files_with_extension(&lint_dir, "vlt", &mut waivers);
    }

    let mut failures = Vec::new();
    for module in &modules {
        // One module per file, named like the file: each is linted as the top, with every other file available.
        let top = module
            .file_stem()
            .and_then(|stem| stem.to_str())
            .expect("utf-8 file name");
        let mut sources = waivers.clone();
        sources.extend(modules.iter().cloned());
        if let Err(err) = lint(&sources, top) {
            failures.push(err.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lint_reports_a_warning_as_a_failure() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rtlsim-lint");
    fs::create_dir_all(&dir).expect("temp dir");
    let source = dir.join("unused_input.sv");
    fs::write(
        &source,
        "`default_nettype none\n// Leaves an input unused.\nmodule unused_input (\n  input  logic a_i,\n  \
         input  logic b_i,\n  output logic y_o\n);\n  assign y_o = a_i;\nendmodule\n",
    )
    .expect("write source");
    let err = lint(&[source], "unused_input").expect_err("an unused input is a -Wall warning");
    let message = err.to_string();
    assert!(message.contains("UNUSED"), "{message}");
    assert!(
        message.starts_with("verilator lint of unused_input failed"),
        "{message}"
    );
}

#[test]
fn alu_synthesizes_for_ultrascale_plus() {
    let alu = common::workspace_root().join("rtl/sephirot/alu.sv");
    synth(&[alu], "alu").unwrap_or_else(|err| panic!("{err}"));
}
