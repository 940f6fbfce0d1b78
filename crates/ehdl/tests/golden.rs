//! Every example program compiles to a pipeline whose text diagram matches `tests/golden/<example>.txt`
//! (one section per program of the object). `BLESS=1 cargo test -p hwxdp-ehdl` rewrites the golden files.

mod common;

use common::example_objects;
use std::path::Path;

fn pipelines_of(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let object = hwxdp_object::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    for program in &object.programs {
        let p = hwxdp_ehdl::compile(program, &object.maps, &hwxdp_ehdl::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(p.summary.stages > 0, "{}: no stages", program.name);
        assert!(
            p.summary.state_bits_pruned <= p.summary.state_bits_unpruned,
            "{}: pruning grew the state",
            program.name
        );
        // What an op reads is carried into its stage: its registers and its predicate.
        for op in &p.ops {
            let input = &p.stages[op.stage as usize];
            for r in op.reads.iter() {
                assert!(
                    input.live_regs.contains(r),
                    "{}: op {} reads r{r}, not live at stage {}",
                    program.name,
                    op.insn,
                    op.stage
                );
            }
            assert!(
                input.live_preds.contains(&op.pred),
                "{}: op {}",
                program.name,
                op.insn
            );
        }
        // Every op sits in a stage that lists it, and stage contents agree with op stages.
        for st in &p.stages {
            for &o in &st.ops {
                assert_eq!(p.ops[o as usize].stage, st.index, "{}", program.name);
            }
        }
        // The Graphviz and JSON forms are well formed enough to parse back.
        let dot = hwxdp_ehdl::dot(&p);
        assert!(dot.starts_with("digraph") && dot.trim_end().ends_with('}'));
        let json: serde_json::Value =
            serde_json::from_str(&hwxdp_ehdl::json_summary(&p)).expect("json parses");
        assert_eq!(json["summary"]["stages"], p.summary.stages);
        out.push_str(&hwxdp_ehdl::text(&p));
    }
    out
}

#[test]
fn every_example_compiles_to_its_golden_pipeline() {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut mismatches = Vec::new();
    for object in example_objects() {
        let name = object
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let actual = pipelines_of(&object);
        assert_eq!(actual, pipelines_of(&object), "{name}: not deterministic");
        let golden = golden_dir.join(format!("{name}.txt"));
        if bless {
            std::fs::write(&golden, &actual).expect("golden file writable");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => {}
            Ok(_) => mismatches.push(format!("{name}: differs from {}", golden.display())),
            Err(_) => mismatches.push(format!("{name}: {} is missing", golden.display())),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{}\nrun `BLESS=1 cargo test -p hwxdp-ehdl` to accept the new output",
        mismatches.join("\n")
    );
}
