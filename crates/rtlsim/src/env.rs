//! The environment variables this crate reads, and where it keeps Verilator models.
//!
//! Models are cached per user, never in a source tree: `$HWXDP_CACHE_DIR` when set, else `$XDG_CACHE_HOME/hwxdp`,
//! else `~/.cache/hwxdp` (the XDG base directory rules: an `XDG_CACHE_HOME` that is not absolute is ignored).

use std::ffi::OsString;
use std::path::PathBuf;

/// Every environment variable the crate reads, with what it means, in the order `--help` should list them.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "HWXDP_CACHE_DIR",
        "where Verilator models are built and kept (default $XDG_CACHE_HOME/hwxdp, else ~/.cache/hwxdp)",
    ),
    (
        "XDG_CACHE_HOME",
        "the user's cache directory: models go to its hwxdp/ unless HWXDP_CACHE_DIR is set",
    ),
    (
        "HWXDP_VERILATOR",
        "the Verilator program that builds the models (default: verilator on PATH)",
    ),
    (
        "HWXDP_ROOT",
        "a checkout whose rtl/sephirot/ and sim/hxdp/ build the hXDP model instead of the sources in the binary",
    ),
    (
        "HWXDP_RTL_LOG",
        "a file that gets every command sent to the hXDP harness and every answer (for debugging the module)",
    ),
    (
        "CCACHE_DIR",
        "ccache's directory when model builds use ccache (default: ccache/ in the model cache)",
    ),
];

/// The directory models are cached in: `HWXDP_CACHE_DIR`, else `$XDG_CACHE_HOME/hwxdp`, else `$HOME/.cache/hwxdp`
/// (else `hwxdp-cache` in the temporary directory, for a process without a home). Always absolute: a relative
/// `HWXDP_CACHE_DIR` is taken from the current directory.
pub fn cache_dir() -> PathBuf {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`cache_dir`] with the variables looked up by `var`.
fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = if let Some(dir) = set("HWXDP_CACHE_DIR") {
        dir
    } else if let Some(xdg) = set("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        xdg.join("hwxdp")
    } else if let Some(home) = set("HOME").filter(|d| d.is_absolute()) {
        home.join(".cache").join("hwxdp")
    } else {
        std::env::temp_dir().join("hwxdp-cache")
    };
    // Verilator runs in a directory of its own, so a relative path would name another place there.
    std::path::absolute(&dir).unwrap_or(dir)
}

/// The Verilator program: `HWXDP_VERILATOR`, else `verilator` from `PATH`.
pub(crate) fn verilator() -> PathBuf {
    std::env::var_os("HWXDP_VERILATOR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("verilator"), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn with(vars: &[(&str, &str)]) -> PathBuf {
        cache_dir_from(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn the_cache_follows_the_xdg_rules_and_the_override() {
        assert_eq!(
            with(&[("HOME", "/home/u")]),
            Path::new("/home/u/.cache/hwxdp")
        );
        assert_eq!(
            with(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/var/cache/u")]),
            Path::new("/var/cache/u/hwxdp")
        );
        // A relative XDG_CACHE_HOME is invalid and ignored; an empty variable is unset.
        assert_eq!(
            with(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "cache")]),
            Path::new("/home/u/.cache/hwxdp")
        );
        assert_eq!(
            with(&[
                ("HOME", "/home/u"),
                ("XDG_CACHE_HOME", "/x"),
                ("HWXDP_CACHE_DIR", "")
            ]),
            Path::new("/x/hwxdp")
        );
        assert_eq!(
            with(&[
                ("HOME", "/home/u"),
                ("XDG_CACHE_HOME", "/x"),
                ("HWXDP_CACHE_DIR", "/tmp/models")
            ]),
            Path::new("/tmp/models")
        );
        let relative = with(&[("HWXDP_CACHE_DIR", "models")]);
        assert!(relative.is_absolute(), "{}", relative.display());
        assert!(relative.ends_with("models"));
        assert_eq!(with(&[]), std::env::temp_dir().join("hwxdp-cache"));
    }

    #[test]
    fn the_cache_is_not_in_the_source_tree() {
        let dir = cache_dir();
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .expect("the checkout");
        // The tests point HWXDP_CACHE_DIR at the target directory on purpose; only the default matters here.
        if std::env::var_os("HWXDP_CACHE_DIR").is_none() {
            assert!(!dir.starts_with(&checkout), "{}", dir.display());
        }
    }

    /// Every `env::var("NAME")` or `env::var_os("NAME")` in the crate's sources is listed in [`ENVIRONMENT`] (with
    /// `HOME` and `PATH`, which only locate the defaults), and every listed variable is read somewhere.
    #[test]
    fn environment_lists_every_variable_read() {
        let mut read = std::collections::BTreeSet::new();
        let mut pending = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("src") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source");
                // Only the code before the tests: they name variables to test the lookups.
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for pattern in ["var(\"", "var_os(\"", "set(\""] {
                    for (at, _) in code.match_indices(pattern) {
                        let rest = &code[at + pattern.len()..];
                        let name = &rest[..rest.find('"').expect("closed literal")];
                        read.insert(name.to_string());
                    }
                }
            }
        }
        let listed: std::collections::BTreeSet<String> =
            ENVIRONMENT.iter().map(|(n, _)| n.to_string()).collect();
        for name in &read {
            assert!(
                listed.contains(name) || name == "HOME" || name == "PATH",
                "{name} is read but not in ENVIRONMENT"
            );
        }
        for name in &listed {
            assert!(read.contains(name), "{name} is listed but never read");
        }
    }

    /// The README's "Environment variables" table is [`ENVIRONMENT`], row for row.
    #[test]
    fn the_readme_lists_the_same_variables() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
                .expect("README.md");
        let section = readme
            .split("## Environment variables")
            .nth(1)
            .expect("a section \"Environment variables\"");
        let rows: Vec<String> = section
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with('|'))
            .map(str::to_string)
            .collect();
        let want: Vec<String> = ENVIRONMENT
            .iter()
            .map(|(name, meaning)| format!("| `{name}` | {meaning} |"))
            .collect();
        assert_eq!(rows, want);
    }
}
