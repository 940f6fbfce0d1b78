//! P4 to XDP object: check, generate C, build it with clang. Shared by `hwxdp p4c` and `hwxdp stf`.

use anyhow::{bail, Context, Result};
use hwxdp_p4::codegen::{generate, Options};
use hwxdp_p4::ir::Checked;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `p4` with `options`: writes the C source to `c_path` and the object clang builds to `object`.
pub fn compile(p4: &Path, c_path: &Path, object: &Path, options: &Options) -> Result<Checked> {
    let checked = hwxdp_p4::check_file(p4).map_err(|d| anyhow::anyhow!("{d}"))?;
    let source = generate(&checked, options).map_err(|d| anyhow::anyhow!("{d}"))?;
    std::fs::write(c_path, source).with_context(|| format!("cannot write {}", c_path.display()))?;
    clang(c_path, object)?;
    Ok(checked)
}

/// The code-generation switches `p4c` and `stf` share.
#[derive(clap::Args, Clone, Debug)]
pub struct CodegenArgs {
    /// Convert every field to host order when parsing and back when deparsing, as P4C-XDP does (for comparison).
    #[arg(long)]
    pub convert_all_fields: bool,
    /// Write back every emitted header, changed or not, as P4C-XDP does (for comparison).
    #[arg(long)]
    pub writeback_all: bool,
}

impl CodegenArgs {
    /// The code generator's options these flags choose.
    pub fn options(&self) -> Options {
        Options {
            keep_network_order: !self.convert_all_fields,
            writeback_changed_only: !self.writeback_all,
        }
    }
}

/// Compiles `p4` with `options` into `out_dir` (`NAME.c` and `NAME.o`): the checked program and the object's path.
pub fn build(p4: &Path, out_dir: &Path, options: &Options) -> Result<(Checked, PathBuf)> {
    let stem = p4
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let c_path = out_dir.join(format!("{stem}.c"));
    let object = out_dir.join(format!("{stem}.o"));
    let checked = compile(p4, &c_path, &object, options)?;
    Ok((checked, object))
}

/// Runs clang on generated C. A failure here is a bug of the code generator, so the message keeps clang's first
/// error and names the C file to look at.
fn clang(c_path: &Path, object: &Path) -> Result<()> {
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let arch_include = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let output = Command::new(&clang)
        .args([
            "-O2",
            "-g",
            "-target",
            "bpf",
            "-Wno-unused-label",
            "-I",
            &arch_include,
            "-c",
        ])
        .arg(c_path)
        .arg("-o")
        .arg(object)
        .output()
        .with_context(|| format!("cannot run {clang} (install clang, or set CLANG)"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("no message");
        bail!(
            "{}: clang failed on the generated C: {first}",
            c_path.display()
        );
    }
    Ok(())
}
