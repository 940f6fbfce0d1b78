//! Golden tests: each example printed back by `pretty`, kept in `tests/golden/<name>.txt` (regenerate with
//! `BLESS=1 cargo test -p hwxdp-p4 --test golden`), and printed text that parses back to the same program.

mod common;

use std::path::PathBuf;

use hwxdp_p4::{parse_file, parse_str, pretty};

#[test]
fn examples_match_golden_pretty_output() {
    let bless = std::env::var_os("BLESS").is_some();
    let golden_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut mismatched = Vec::new();
    for path in common::examples() {
        let program = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = pretty(&program);
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let golden = golden_dir.join(format!("{stem}.txt"));
        if bless {
            std::fs::write(&golden, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
            panic!("{}: {e} (run with BLESS=1 to create it)", golden.display())
        });
        if expected != text {
            mismatched.push(stem);
        }
    }
    assert!(
        mismatched.is_empty(),
        "pretty output differs from golden for {mismatched:?}; BLESS=1 regenerates"
    );
}

#[test]
fn pretty_output_parses_back_to_the_same_program() {
    for path in common::examples() {
        let program = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = pretty(&program);
        let reparsed = parse_str("printed.p4", &text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
        // Spans differ between the two parses; the printed forms compare everything else, since `pretty` prints
        // every node and parenthesises every nested operator.
        assert_eq!(
            program.decls.len(),
            reparsed.decls.len(),
            "{}",
            path.display()
        );
        assert_eq!(text, pretty(&reparsed), "{}", path.display());
    }
}
