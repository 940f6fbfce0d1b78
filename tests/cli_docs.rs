//! What the command line says about itself: `--version` with the git revision, shell completions, manual pages, the
//! exit status paragraph of `--help`, and the conformance plugin's `--help` and `--version`.

mod support;

use std::process::{Command, Stdio};
use support::*;

/// The subcommands `hwxdp --help` lists (without `help`), read from its `Commands:` section.
fn subcommands() -> Vec<String> {
    let help = hwxdp(&["--help"]);
    assert!(help.ok, "{}", help.all);
    let names: Vec<String> = help
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    for expected in ["disasm", "run", "compile", "completions", "man"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
    names
}

/// `-dirty` or nothing after a short hash, or `unknown`: the revision `--version` prints inside `(rev ...)`.
fn revision(version_line: &str, program: &str) -> String {
    let rest = version_line
        .strip_prefix(&format!("{program} {} (rev ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("unexpected version line {version_line:?}"));
    rest.to_string()
}

/// Tests run in a git checkout, so the revision is a commit of this repository (perhaps no longer HEAD, when someone
/// committed since the build), with `-dirty` when the tree had changes.
fn assert_is_a_commit(revision: &str) {
    let hash = revision.strip_suffix("-dirty").unwrap_or(revision);
    assert!(
        hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{revision:?} is not a short hash"
    );
    let known = Command::new("git")
        .args(["cat-file", "-e", &format!("{hash}^{{commit}}")])
        .current_dir(repo_root())
        .status()
        .expect("git runs");
    assert!(known.success(), "{hash} is not a commit of the checkout");
}

#[test]
fn version_names_the_git_revision() {
    let out = hwxdp(&["--version"]);
    assert!(out.ok, "{}", out.all);
    let rev = revision(out.stdout.trim_end(), "hwxdp");
    assert_is_a_commit(&rev);
}

#[test]
fn bash_completion_mentions_every_subcommand() {
    let out = hwxdp(&["completions", "bash"]);
    assert!(out.ok, "{}", out.all);
    assert!(out.stdout.contains("complete -F"), "{}", out.stdout);
    for name in subcommands() {
        assert!(
            out.stdout.contains(&format!("hwxdp,{name})")),
            "{name} missing from the bash completion"
        );
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = hwxdp(&["completions", shell]);
        assert!(out.ok && out.stdout.contains("compile"), "{}", out.all);
    }
    let out = hwxdp(&["completions", "tcsh"]);
    assert_eq!(out.code, Some(2), "{}", out.all);
}

#[test]
fn the_man_page_is_roff_with_the_subcommands() {
    let out = hwxdp(&["man"]);
    assert!(out.ok, "{}", out.all);
    let page = &out.stdout;
    assert!(page.lines().any(|l| l.starts_with(".TH hwxdp 1")), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    // The exit status table keeps its lines (roff would run them together).
    assert!(
        page.contains(".SH \"EXIT STATUS\"\n.nf\n  0  success"),
        "{page}"
    );
    for name in subcommands() {
        // roff writes a hyphen as `\-`.
        assert!(
            page.contains(&format!("hwxdp\\-{name}(1)")),
            "{name} missing from the page"
        );
    }

    let dir = scratch_dir("man-pages");
    let out = hwxdp(&["man", "-o", &dir]);
    assert!(out.ok, "{}", out.all);
    let top = std::fs::read_to_string(format!("{dir}/hwxdp.1")).expect("hwxdp.1 written");
    assert_eq!(&top, page, "the page in DIR is the one on standard output");
    for name in subcommands() {
        let path = format!("{dir}/hwxdp-{name}.1");
        let sub = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            sub.lines()
                .any(|l| l.starts_with(&format!(".TH hwxdp-{name} 1 "))),
            "{path}"
        );
        assert!(
            sub.contains(env!("CARGO_PKG_VERSION")),
            "{path}: no version"
        );
        // The commands this suite covers (run, verify, bench and stf get theirs elsewhere).
        let covered = [
            "disasm",
            "gen",
            "compile",
            "p4c",
            "synth",
            "completions",
            "man",
        ];
        if covered.contains(&name.as_str()) {
            assert!(
                sub.contains(".SH \"EXIT STATUS\"\n.nf\n  0  success\n"),
                "{path}: no exit status"
            );
        }
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("list the pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), subcommands().len() + 1, "{files:?}");
    assert!(!files.iter().any(|f| f == "hwxdp-help.1"), "{files:?}");
}

#[test]
fn help_gives_the_exit_status() {
    let out = hwxdp(&["compile", "--help"]);
    assert!(out.ok, "{}", out.all);
    assert!(
        out.stdout
            .contains("Exit status:\n  0  success\n  2  usage, input or setup error"),
        "{}",
        out.stdout
    );
    let out = hwxdp(&["--help"]);
    assert!(out.stdout.contains("  1  a check failed"), "{}", out.stdout);
}

/// Runs the conformance plugin with `args` and `stdin`.
fn plugin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hwxdp-conformance-plugin"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the plugin runs");
    {
        use std::io::Write;
        let mut input = child.stdin.take().expect("stdin");
        // A plugin that does not read standard input may have exited already.
        let _ = input.write_all(stdin.as_bytes());
    }
    let out = child.wait_with_output().expect("the plugin ends");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Output {
        ok: out.status.success(),
        code: out.status.code(),
        all: format!(
            "$ hwxdp-conformance-plugin {}\n{stdout}{stderr}",
            args.join(" ")
        ),
        stdout,
        stderr,
    }
}

#[test]
fn the_conformance_plugin_has_help_and_a_version() {
    for flag in ["--help", "-h"] {
        let out = plugin(&[flag], "");
        assert!(out.ok, "{}", out.all);
        assert!(
            out.stdout
                .contains("Usage: hwxdp-conformance-plugin [MEMORY] [OPTIONS] < PROGRAM"),
            "{}",
            out.all
        );
    }
    for flag in ["--version", "-V"] {
        let out = plugin(&[flag], "");
        assert!(out.ok, "{}", out.all);
        assert_is_a_commit(&revision(out.stdout.trim_end(), "hwxdp-conformance-plugin"));
    }
    // Anything else runs a program, as before: r0 = 0x2a (mov r0, 42; exit), with memory, and --elf refused.
    let program = "b7 00 00 00 2a 00 00 00 95 00 00 00 00 00 00 00\n";
    let out = plugin(&[], program);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "2a\n"),
        "{}",
        out.all
    );
    let out = plugin(&["00 01 02", "--jit"], program);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "2a\n"),
        "{}",
        out.all
    );
    let out = plugin(&["--elf"], program);
    assert_eq!(out.code, Some(1), "{}", out.all);
}
