//! The type checker: every example checks, lowerings of particular constructs, one test per diagnostic class.

mod common;

use hwxdp_p4::ir::{Checked, Ty};

fn check(src: &str) -> Result<Checked, String> {
    let program = hwxdp_p4::parse_str("t.p4", src).map_err(|e| format!("parse: {e}"))?;
    hwxdp_p4::check(&program).map_err(|e| e.to_string())
}

#[test]
fn every_example_checks() {
    let mut failures = Vec::new();
    for path in common::examples() {
        if let Err(e) = hwxdp_p4::check_file(&path) {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
