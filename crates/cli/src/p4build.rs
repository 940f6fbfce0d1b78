//! P4 to XDP object: check, generate C, build it with clang. Shared by `hwxdp p4c` and `hwxdp stf`.

use anyhow::{bail, Context, Result};
use hwxdp_p4::codegen::{generate, Options};
use hwxdp_p4::ir::Checked;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `p4` with the switches of `codegen`: writes the C source to `c_path` and the object clang builds to
/// `object`. A program calling externs implemented in C needs their file (`--extern-c`), and only such a program
/// takes one.
pub fn compile(p4: &Path, c_path: &Path, object: &Path, codegen: &CodegenArgs) -> Result<Checked> {
    let checked = hwxdp_p4::check_file(p4).map_err(|d| anyhow::anyhow!("{d}"))?;
    match (&codegen.extern_c, checked.c_externs.first()) {
        (None, Some(name)) => bail!(
            "{}: extern `{name}` is not implemented by the architecture: give its C implementation with --extern-c FILE",
            p4.display()
        ),
        (Some(file), None) => bail!(
            "{}: --extern-c {}: the program calls no extern implemented in C",
            p4.display(),
            file.display()
        ),
        _ => {}
    }
    let source = generate(&checked, &codegen.options()).map_err(|d| anyhow::anyhow!("{d}"))?;
    std::fs::write(c_path, source).with_context(|| format!("cannot write {}", c_path.display()))?;
    clang(c_path, object, codegen.extern_c.as_deref())?;
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
    /// The C implementation of the program's own externs (functions declared with `extern` that no architecture
    /// model implements), written as for p4c-ebpf: `#include "test.h"`, the program's headers and structs as
    /// `struct NAME`, `REGISTER_TABLE` and `BPF_MAP_LOOKUP_ELEM` for maps of its own (docs/p4.md).
    #[arg(long = "extern-c", value_name = "FILE")]
    pub extern_c: Option<PathBuf>,
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

/// Compiles `p4` with `codegen` into `out_dir` (`NAME.c` and `NAME.o`): the checked program and the object's path.
pub fn build(p4: &Path, out_dir: &Path, codegen: &CodegenArgs) -> Result<(Checked, PathBuf)> {
    let stem = p4
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let c_path = out_dir.join(format!("{stem}.c"));
    let object = out_dir.join(format!("{stem}.o"));
    let checked = compile(p4, &c_path, &object, codegen)?;
    Ok((checked, object))
}

/// Runs clang on generated C, with the user's extern C file included where the generated code asks for it. A
/// failure in the generated C is a bug of the code generator, so the message keeps clang's first error and names
/// the C file to look at; a failure in the extern file names that file and the line clang reports.
fn clang(c_path: &Path, object: &Path, extern_c: Option<&Path>) -> Result<()> {
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let arch_include = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let mut command = Command::new(&clang);
    command.args([
        "-O2",
        "-g",
        "-target",
        "bpf",
        "-Wno-unused-label",
        "-I",
        &arch_include,
    ]);
    // The extern file's `#include "test.h"` (p4c-ebpf's generated header) finds an empty one: the generated C
    // defines everything before including the file.
    let include_dir = std::env::temp_dir().join(format!("hwxdp-extern-c-{}", std::process::id()));
    if let Some(file) = extern_c {
        let file = std::fs::canonicalize(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        std::fs::create_dir_all(&include_dir)
            .with_context(|| format!("cannot create {}", include_dir.display()))?;
        std::fs::write(
            include_dir.join("test.h"),
            "/* hwxdp p4c: the program's types and macros come before the extern C file. */\n",
        )
        .with_context(|| format!("cannot write {}", include_dir.display()))?;
        command.arg("-I").arg(&include_dir).arg(format!(
            "-D{}=\"{}\"",
            hwxdp_p4::codegen::EXTERN_C_MACRO,
            file.display()
        ));
    }
    let output = command
        .arg("-c")
        .arg(c_path)
        .arg("-o")
        .arg(object)
        .output()
        .with_context(|| format!("cannot run {clang} (install clang, or set CLANG)"));
    if extern_c.is_some() {
        let _ = std::fs::remove_dir_all(&include_dir);
    }
    let output = output?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("no message");
        if let Some(file) = extern_c.and_then(|f| std::fs::canonicalize(f).ok()) {
            let path = file.display().to_string();
            if let Some(at) = first.strip_prefix(path.as_str()) {
                bail!(
                    "{}{at}",
                    extern_c.map_or(path.clone(), |f| f.display().to_string())
                );
            }
        }
        bail!(
            "{}: clang failed on the generated C: {first}",
            c_path.display()
        );
    }
    Ok(())
}
