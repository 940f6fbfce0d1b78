//! Paths shared by the integration tests.

use std::path::PathBuf;

/// Every `.p4` program in `examples/p4/`, sorted by name.
pub fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/p4");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    out.sort();
    assert!(
        out.len() >= 5,
        "expected at least 5 examples in {}",
        dir.display()
    );
    out
}
