//! bpf-to-bpf call linking and programs spread over several sections.

mod common;

use hwxdp_ebpf::{CLASS_JMP, JMP_CALL, PSEUDO_CALL, PSEUDO_MAP_VALUE};
use hwxdp_object::{parse, ObjectSpec, ProgramSpec};

const CALL: u8 = CLASS_JMP | JMP_CALL;

fn calls_object() -> ObjectSpec {
    parse(&common::compile("calls").bytes).expect("calls.o parses")
}

/// Instruction indices of the bpf-to-bpf calls of `prog`.
fn calls(prog: &ProgramSpec) -> Vec<usize> {
    (0..prog.insns.len())
        .filter(|&i| prog.insns[i].code == CALL && prog.insns[i].src == PSEUDO_CALL)
        .collect()
}

fn function_names(prog: &ProgramSpec) -> Vec<&str> {
    prog.functions.iter().map(|(_, n)| n.as_str()).collect()
}

#[test]
fn programs_are_listed_in_section_order_with_their_sections() {
    let spec = calls_object();
    let listed: Vec<(&str, &str)> = spec
        .programs
        .iter()
        .map(|p| (p.name.as_str(), p.section.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("xdp_calls", "xdp"),
            ("xdp_second", "xdp/second"),
            ("xdp_frags", "xdp.frags"),
            ("multi_a", "xdp/multi"),
            ("multi_b", "xdp/multi"),
            ("tc_prog", "tc"),
        ]
    );
    assert_eq!(spec.license, "GPL");
}

#[test]
fn programs_are_found_by_name_and_by_section() {
    let spec = calls_object();
    assert_eq!(
        spec.program(Some("xdp_second")).map(|p| p.section.as_str()),
        Some("xdp/second")
    );
    assert_eq!(
        spec.program(Some("xdp/second")).map(|p| p.name.as_str()),
        Some("xdp_second")
    );
    assert_eq!(
        spec.program(Some("xdp.frags")).map(|p| p.name.as_str()),
        Some("xdp_frags")
    );
    // Two programs share xdp/multi: the section finds the first, names find each.
    assert_eq!(
        spec.program(Some("xdp/multi")).map(|p| p.name.as_str()),
        Some("multi_a")
    );
    assert_eq!(
        spec.program(Some("multi_b")).map(|p| p.name.as_str()),
        Some("multi_b")
    );
    assert!(
        spec.program(Some("global_helper")).is_none(),
        ".text functions are not programs"
    );
    assert!(spec.program(None).is_none(), "several programs need a name");
}

#[test]
fn callees_are_appended_once_in_discovery_order() {
    let spec = calls_object();
    let prog = spec.program(Some("xdp_calls")).unwrap();
    assert_eq!(prog.own_len, 19);
    assert_eq!(
        function_names(prog),
        ["xdp_calls", "add", "outer", "global_helper", "inner"]
    );
    // add: 3 instructions, outer: 7 (one lddw), global_helper: 6, inner: 4.
    let starts: Vec<usize> = prog.functions.iter().map(|(s, _)| *s).collect();
    assert_eq!(starts, [0, 19, 22, 29, 35]);
    assert_eq!(prog.insns.len(), 39);
}

#[test]
fn call_offsets_land_on_the_callees() {
    let spec = calls_object();
    let prog = spec.program(Some("xdp_calls")).unwrap();
    let sites = calls(prog);
    assert_eq!(sites, [4, 7, 10, 17, 26]);
    let targets: Vec<(String, usize)> = sites
        .iter()
        .map(|&at| common::call_target(prog, at))
        .collect();
    let expected = [
        ("add", 0),
        ("add", 0),
        ("outer", 0),
        ("global_helper", 0),
        ("inner", 0),
    ];
    let expected: Vec<(String, usize)> =
        expected.iter().map(|(n, o)| (n.to_string(), *o)).collect();
    assert_eq!(targets, expected);
    // Slots: add at 19, outer at 22 (its lddw takes two), global_helper at 30, inner at 36.
    let imms: Vec<i32> = sites.iter().map(|&at| prog.insns[at].imm32()).collect();
    assert_eq!(imms, [14, 11, 11, 12, 8]);
}

#[test]
fn linked_callees_keep_their_code_and_global_references() {
    let spec = calls_object();
    let first = spec.program(Some("xdp_calls")).unwrap();
    let second = spec.program(Some("xdp_second")).unwrap();
    assert_eq!(function_names(second), ["xdp_second", "outer", "inner"]);
    let outer_in = |p: &ProgramSpec| {
        let start = p.functions.iter().find(|(_, n)| n == "outer").unwrap().0;
        p.insns[start..start + 7].to_vec()
    };
    // The same body, and the call to inner has the same relative offset because inner follows outer in both.
    assert_eq!(outer_in(first)[..4], outer_in(second)[..4]);
    let hits = outer_in(second)[0];
    let bss = spec.map_index(".bss").unwrap() as i64;
    assert_eq!((hits.src, hits.imm), (PSEUDO_MAP_VALUE, bss));
    let sites = calls(second);
    let targets: Vec<String> = sites
        .iter()
        .map(|&at| common::call_target(second, at).0)
        .collect();
    assert_eq!(targets, ["outer", "inner"]);
}

#[test]
fn programs_without_calls_are_unchanged_and_shared_sections_are_split() {
    let spec = calls_object();
    let multi_a = spec.program(Some("multi_a")).unwrap();
    assert_eq!((multi_a.insns.len(), multi_a.own_len), (2, 2));
    let multi_b = spec.program(Some("multi_b")).unwrap();
    assert_eq!(multi_b.own_len, 10);
    assert_eq!(function_names(multi_b), ["multi_b", "add"]);
    assert_eq!(common::call_target(multi_b, 2), ("add".to_string(), 0));
    let tc = spec.program(Some("tc")).unwrap();
    assert_eq!(
        (tc.name.as_str(), tc.insns.len(), tc.functions.len()),
        ("tc_prog", 5, 1)
    );
}
