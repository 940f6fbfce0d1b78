//! Embeds the repository's `rtl/**/*.sv` (and Verilator waiver files, `rtl/**/*.vlt`) into the crate, so that an
//! installed binary builds and synthesizes its models without a checkout, whatever the current directory.
//!
//! Writes `$OUT_DIR/rtl_files.rs` (the `.sv` files) and `$OUT_DIR/rtl_waivers.rs` (the `.vlt` files): one
//! `RtlFile { path, text: include_str!(..) }` per file, sorted by path (relative to `rtl/`, `/`-separated). Cargo
//! reruns this script when anything under `rtl/` changes, new files included.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let rtl = manifest.join("../../rtl");
    println!("cargo:rerun-if-changed={}", rtl.display());
    for (extension, list) in [("sv", "rtl_files.rs"), ("vlt", "rtl_waivers.rs")] {
        let mut files = Vec::new();
        if rtl.is_dir() {
            collect(&rtl, &rtl, extension, &mut files);
        }
        files.sort();
        write_list(&files, list);
    }
}

/// Writes `$OUT_DIR/<name>`: a slice expression of one `RtlFile` per (relative, absolute) path.
fn write_list(files: &[(String, PathBuf)], name: &str) {
    let mut out = String::from("&[\n");
    for (relative, absolute) in files {
        // Debug formatting of a str is a valid Rust string literal.
        writeln!(
            out,
            "    RtlFile {{ path: {relative:?}, text: include_str!({:?}) }},",
            absolute.display().to_string()
        )
        .expect("writing to a String cannot fail");
    }
    out.push_str("]\n");
    let dest = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join(name);
    fs::write(&dest, out).unwrap_or_else(|err| panic!("cannot write {}: {err}", dest.display()));
}

/// Adds every file named `*.<extension>` under `dir` (recursively) as (path relative to `root` with `/` separators,
/// absolute path).
fn collect(root: &Path, dir: &Path, extension: &str, files: &mut Vec<(String, PathBuf)>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
            .path();
        if path.is_dir() {
            collect(root, &path, extension, files);
        } else if path.extension().is_some_and(|ext| ext == extension) {
            let relative = path
                .strip_prefix(root)
                .expect("a file found under root lies under root")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let absolute = fs::canonicalize(&path).unwrap_or(path);
            files.push((relative, absolute));
        }
    }
}
