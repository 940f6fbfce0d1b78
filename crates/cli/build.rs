//! Build script of the `hwxdp` crate: records the git revision the binaries are built from, for `--version`.
//!
//! `HWXDP_GIT_REVISION` is `git rev-parse --short HEAD`, with `-dirty` when `git status --porcelain` lists anything,
//! or `unknown` outside a git checkout (a published crate, a source tarball) or without git. The script runs again
//! when HEAD moves: when `.git/HEAD` changes (another branch) or the ref it points at does (a commit); and, for the
//! `-dirty` mark, when the index does (a commit or a staged change) or a file under the workspace's `crates/` or
//! `rtl/` changes (the sources built into the binaries, whose edits rebuild them anyway).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let revision = match git(&dir, &["rev-parse", "--short", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty = git(&dir, &["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
            watch(&dir);
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=HWXDP_GIT_REVISION={revision}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Asks cargo to run the script again when HEAD, the ref it points at, the index or the built sources change.
fn watch(dir: &Path) {
    let resolve = |p: Option<String>| p.map(|p| absolute(dir, &p));
    if let Some(git_dir) = resolve(git(dir, &["rev-parse", "--git-dir"])) {
        rerun_if_changed(&git_dir.join("HEAD"));
        rerun_if_changed(&git_dir.join("index"));
    }
    // A branch's ref lives in the common directory (the same one but in a linked worktree), loose or packed.
    let common = resolve(git(dir, &["rev-parse", "--git-common-dir"]));
    let head_ref = git(dir, &["symbolic-ref", "-q", "HEAD"]);
    if let (Some(common), Some(head_ref)) = (common, head_ref) {
        let loose = common.join(&head_ref);
        if loose.exists() {
            rerun_if_changed(&loose);
        }
        rerun_if_changed(&common.join("packed-refs"));
    }
    let root = dir.join("../..");
    rerun_if_changed(&root.join("crates"));
    rerun_if_changed(&root.join("rtl"));
}

/// `path` as given by git (relative to `dir` unless absolute).
fn absolute(dir: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

/// Tells cargo to watch `path` if it exists (a missing path would make cargo run the script on every build).
fn rerun_if_changed(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The trimmed standard output of `git ARGS` run in `dir`, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}
