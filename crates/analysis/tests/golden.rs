//! Golden-text tests: the report of every example program, compared with `tests/golden/<example>.txt`.
//! `BLESS=1 cargo test -p hwxdp-analysis` rewrites the golden files.

#[path = "../../../tests/support/examples.rs"]
mod examples;

use examples::example_objects;
use std::path::Path;

fn report_object(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let object = hwxdp_object::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    for (m, map) in object.maps.iter().enumerate() {
        out.push_str(&format!(
            "map{m} {} type {} key {} value {}\n",
            map.name, map.map_type, map.key_size, map.value_size
        ));
    }
    for program in &object.programs {
        let text = hwxdp_analysis::report_with_maps(program, &object.maps)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push_str(&text);
    }
    out
}

#[test]
fn reports_match_golden_files() {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut mismatches = Vec::new();
    for object in example_objects() {
        let name = object
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let actual = report_object(&object);
        assert_eq!(
            actual,
            report_object(&object),
            "{name}: report is not deterministic"
        );
        let golden = golden_dir.join(format!("{name}.txt"));
        if bless {
            std::fs::write(&golden, &actual)
                .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => {
                let line = expected
                    .lines()
                    .zip(actual.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(expected.lines().count().min(actual.lines().count()));
                mismatches.push(format!("{name}: differs from line {}", line + 1));
            }
            Err(e) => mismatches.push(format!("{}: {e} (run with BLESS=1)", golden.display())),
        }
    }
    assert!(
        mismatches.is_empty(),
        "golden mismatches:\n{}",
        mismatches.join("\n")
    );
}
