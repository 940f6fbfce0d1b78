//! The maps file: parse, preload, dump, bpftool formatting, and every error.

mod common;

use common::{k, spec};
use hwxdp_maps::abi::{errno::*, map_type as mt};
use hwxdp_maps::json::{self, CpuValue, Entry, EntryValue, JsonError};
use hwxdp_maps::{MapStore, Maps};

fn maps() -> Maps {
    Maps::new(
        &[
            spec("acl", mt::HASH, 4, 2, 8, 0),
            spec("pcpu", mt::PERCPU_ARRAY, 4, 4, 2, 0),
            spec("routes", mt::LPM_TRIE, 8, 4, 4, 1),
            spec("events", mt::RINGBUF, 0, 0, 4096, 0),
        ],
        2,
    )
    .expect("maps")
}

const FILE: &str = r#"{
  "acl": [
    {"key": ["0x0a", "0x00", "0x00", "0x01"], "value": ["0x01", "0x00"], "formatted": {"ignored": true}},
    {"key": [10, 0, 0, 2], "value": [2, 255]}
  ],
  "pcpu": [
    {"key": [1, 0, 0, 0], "values": [{"cpu": 1, "value": ["0xb", "0x0", "0x0", "0x0"]},
                                     {"cpu": 0, "value": ["0x0A", "0x00", "0x00", "0x00"]}]},
    {"key": [0, 0, 0, 0], "value": [7, 0, 0, 0]}
  ],
  "routes": [{"key": [24, 0, 0, 0, 192, 168, 1, 0], "value": [1, 0, 0, 0]}]
}"#;

#[test]
fn preload_then_dump_round_trips_in_bpftool_format() {
    let mut m = maps();
    let file = json::parse(FILE).expect("parse");
    json::preload(&mut m, &file).expect("preload");
    assert_eq!(m.lookup(0, &[10, 0, 0, 2]), Ok(Some(vec![2, 255])));
    assert_eq!(
        m.lookup(1, &k(1)),
        Ok(Some(vec![10, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0]))
    );
    assert_eq!(
        m.lookup(1, &k(0)),
        Ok(Some(vec![7, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]))
    );

    let dump = json::dump(&mut m).expect("dump");
    let text = serde_json::to_string(&dump).expect("serialize");
    assert_eq!(
        text,
        concat!(
            r#"{"acl":[{"key":["0x0a","0x00","0x00","0x01"],"value":["0x01","0x00"]},"#,
            r#"{"key":["0x0a","0x00","0x00","0x02"],"value":["0x02","0xff"]}],"#,
            r#""pcpu":[{"key":["0x00","0x00","0x00","0x00"],"values":[{"cpu":0,"value":["0x07","0x00","0x00","0x00"]},"#,
            r#"{"cpu":1,"value":["0x07","0x00","0x00","0x00"]}]},"#,
            r#"{"key":["0x01","0x00","0x00","0x00"],"values":[{"cpu":0,"value":["0x0a","0x00","0x00","0x00"]},"#,
            r#"{"cpu":1,"value":["0x0b","0x00","0x00","0x00"]}]}],"#,
            r#""routes":[{"key":["0x18","0x00","0x00","0x00","0xc0","0xa8","0x01","0x00"],"value":["0x01","0x00","0x00","0x00"]}],"#,
            r#""events":[]}"#
        )
    );
    let reparsed = json::parse(&text).expect("reparse");
    let mut fresh = maps();
    json::preload(&mut fresh, &reparsed).expect("preload dump");
    assert_eq!(json::dump(&mut fresh).expect("dump"), dump);
    assert_eq!(
        dump.map("pcpu").expect("pcpu").entries[1],
        Entry {
            key: k(1).to_vec(),
            value: EntryValue::PerCpu(vec![
                CpuValue {
                    cpu: 0,
                    value: vec![10, 0, 0, 0]
                },
                CpuValue {
                    cpu: 1,
                    value: vec![11, 0, 0, 0]
                },
            ]),
        }
    );
    assert_eq!(dump.values_of("acl"), [&[1u8, 0][..], &[2, 255][..]]);
}

#[test]
fn syntax_errors_name_line_and_column() {
    let err =
        json::parse("{\n  \"acl\": [\n    {\"key\": [1, 2,]}\n  ]\n}").expect_err("trailing comma");
    match err {
        JsonError::Syntax { line, column, .. } => {
            assert_eq!((line, column), (3, 19), "the `]` after the comma")
        }
        other => panic!("not a syntax error: {other}"),
    }
    assert!(json::parse("{\"a\": [}")
        .expect_err("bad")
        .to_string()
        .starts_with("line 1, column 8: "));
}

fn parse_err(text: &str) -> String {
    json::parse(text).expect_err("must fail").to_string()
}

#[test]
fn shape_errors_name_the_map_and_entry() {
    assert_eq!(
        parse_err("[]"),
        "the top level must be an object keyed by map name"
    );
    assert_eq!(
        parse_err(r#"{"acl": {}}"#),
        "map acl: entries must be a json array"
    );
    assert_eq!(
        parse_err(r#"{"acl": [{"key": [1], "value": [1]}, {"key": ["0xzz"], "value": [1]}]}"#),
        "map acl, entry 1: key byte 0: \"0xzz\" is not \"0x..\" hex or a number 0-255"
    );
    assert_eq!(
        parse_err(r#"{"acl": [{"key": [1], "value": [256]}]}"#),
        "map acl, entry 0: value byte 0: 256 is not \"0x..\" hex or a number 0-255"
    );
    assert_eq!(
        parse_err(r#"{"acl": [{"value": [1]}]}"#),
        "map acl, entry 0: no \"key\""
    );
    assert_eq!(
        parse_err(r#"{"acl": [{"key": [1]}]}"#),
        "map acl, entry 0: no \"value\" or \"values\""
    );
    assert_eq!(
        parse_err(r#"{"acl": [{"key": [1], "value": [1], "vlaue": []}]}"#),
        "map acl, entry 0: unknown field \"vlaue\""
    );
}

fn preload_err(text: &str) -> JsonError {
    let mut m = maps();
    json::preload(&mut m, &json::parse(text).expect("parse")).expect_err("must fail")
}

#[test]
fn preload_errors_name_the_map_entry_and_problem() {
    assert_eq!(
        preload_err(r#"{"nope": []}"#).to_string(),
        "map nope: the program has no such map (it has: acl, pcpu, routes, events)"
    );
    assert_eq!(
        preload_err(r#"{"acl": [{"key": [1, 2, 3], "value": [1, 2]}]}"#).to_string(),
        "map acl, entry 0: key of 3 bytes where the map takes 4"
    );
    assert_eq!(
        preload_err(r#"{"acl": [{"key": [1, 2, 3, 4], "value": [1]}]}"#).to_string(),
        "map acl, entry 0: value of 1 bytes where the map takes 2"
    );
    assert_eq!(
        preload_err(r#"{"acl": [{"key": [1, 2, 3, 4], "values": [{"cpu": 0, "value": [1, 2]}]}]}"#)
            .to_string(),
        "map acl, entry 0: \"values\" (per-cpu) given for a map that is not per-cpu"
    );
    assert_eq!(
        preload_err(
            r#"{"pcpu": [{"key": [0, 0, 0, 0], "values": [{"cpu": 0, "value": [1, 2, 3, 4]}]}]}"#
        )
        .to_string(),
        "map pcpu, entry 0: cpu 1 has no value (list all 2 cpus or give one \"value\")"
    );
    assert_eq!(
        preload_err(
            r#"{"pcpu": [{"key": [0, 0, 0, 0], "values": [{"cpu": 2, "value": [1, 2, 3, 4]}]}]}"#
        )
        .to_string(),
        "map pcpu, entry 0: cpu 2 is not possible (2 possible cpus)"
    );
    let err = preload_err(r#"{"pcpu": [{"key": [2, 0, 0, 0], "value": [1, 2, 3, 4]}]}"#);
    match &err {
        JsonError::Update { map, entry, source } => {
            assert_eq!((map.as_str(), *entry, source.errno), ("pcpu", 0, E2BIG));
        }
        other => panic!("not an update error: {other}"),
    }
    assert_eq!(
        err.to_string(),
        "map pcpu, entry 0: update failed: map pcpu: index beyond max_entries"
    );
}
