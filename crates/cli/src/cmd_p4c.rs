//! `hwxdp p4c`: a P4-16 program for the XDP or eBPF filter model to an XDP object every backend and the kernel load.

use crate::p4build;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hwxdp p4c`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    /// The P4 program (`#include <xdp_model.p4>` or `<ebpf_model.p4>`; both are bundled).
    p4: PathBuf,
    /// Where to write the object: a directory (an existing one, or one written with a trailing `/`) for
    /// `<program>.o` in it, or the object's file (default: the program's path with `.o`). `--output` is an older
    /// spelling.
    #[arg(short = 'o', long = "out", alias = "output", value_name = "DIR|FILE")]
    out: Option<PathBuf>,
    /// Also keep the generated C in this file.
    #[arg(long = "emit-c", value_name = "FILE")]
    emit_c: Option<PathBuf>,
    #[command(flatten)]
    codegen: p4build::CodegenArgs,
}

/// Runs `hwxdp p4c`.
pub fn run(args: Args) -> Result<ExitCode> {
    let output = match &args.out {
        Some(out) => {
            let stem = args.p4.file_stem().unwrap_or(args.p4.as_os_str());
            let name = Path::new(stem).with_extension("o");
            crate::output::file_or_dir(out, &name.to_string_lossy())?
        }
        None => args.p4.with_extension("o"),
    };
    let scratch;
    let c_path = match &args.emit_c {
        Some(path) => path.clone(),
        None => {
            scratch = tempdir()?;
            scratch.join("program.c")
        }
    };
    let checked = p4build::compile(&args.p4, &c_path, &output, &args.codegen);
    if args.emit_c.is_none() {
        let _ = std::fs::remove_dir_all(c_path.parent().unwrap_or(&c_path));
    }
    let checked = checked?;
    println!(
        "{}: {} tables, {} counters -> {}",
        args.p4.display(),
        checked.control.tables.len(),
        checked.control.counters.len(),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A fresh private directory for the C file nobody asked to keep.
fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("hwxdp-p4c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
