//! The streaming `--maps` reader: the same files from text and from a reader, short excerpts in errors, maps in file
//! order, duplicates refused, and deep nesting refused by serde_json's recursion limit instead of the stack.

use hwxdp_maps::json::{self, EntryValue, JsonError, EXCERPT_CHARS};

const FILE: &str = r#"{"zeta": [{"key": [1], "value": ["0x02"]}],
 "alpha": [{"key": ["0x0a"], "values": [{"cpu": 1, "value": [3]}, {"cpu": 0, "value": [4]}], "formatted": {"x": [1, {}]}}]}"#;

#[test]
fn text_and_reader_give_the_same_maps_in_file_order() {
    let from_text = json::parse(FILE).expect("parses");
    let from_reader = json::parse_reader(FILE.as_bytes()).expect("parses");
    assert_eq!(from_text, from_reader);
    let names: Vec<&str> = from_text.maps.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
    match &from_text.maps[1].entries[0].value {
        EntryValue::PerCpu(list) => {
            let cpus: Vec<u32> = list.iter().map(|c| c.cpu).collect();
            assert_eq!(cpus, [1, 0]);
        }
        other => panic!("not per-cpu: {other:?}"),
    }
}

#[test]
fn a_long_bad_byte_string_is_quoted_by_an_excerpt() {
    let long = "0x".to_string() + &"7".repeat(100_000);
    let text = format!(r#"{{"m": [{{"key": ["{long}"], "value": [1]}}]}}"#);
    let message = json::parse(&text).unwrap_err().to_string();
    assert!(message.len() < 200, "{message}");
    let head: String = long.chars().take(EXCERPT_CHARS).collect();
    assert_eq!(
        message,
        format!(
            "map m, entry 0: key byte 0: \"{head}...\" (a string of 100002 characters) is not \"0x..\" hex or a number 0-255"
        )
    );
}

#[test]
fn containers_and_other_scalars_in_byte_position_are_named_not_printed() {
    for (byte, shown) in [
        ("[1, 2, [3]]", "an array"),
        ("{\"a\": 1}", "an object"),
        ("true", "true"),
        ("null", "null"),
        ("-1", "-1"),
        ("1.5", "1.5"),
    ] {
        let text = format!(r#"{{"m": [{{"key": [{byte}], "value": [1]}}]}}"#);
        assert_eq!(
            json::parse(&text).unwrap_err().to_string(),
            format!("map m, entry 0: key byte 0: {shown} is not \"0x..\" hex or a number 0-255")
        );
    }
}

#[test]
fn a_map_listed_twice_and_a_field_given_twice_are_refused() {
    assert_eq!(
        json::parse(r#"{"m": [], "m": []}"#).unwrap_err(),
        JsonError::DuplicateMap { map: "m".into() }
    );
    assert_eq!(
        json::parse(r#"{"m": [{"key": [1], "key": [2], "value": [1]}]}"#)
            .unwrap_err()
            .to_string(),
        "map m, entry 0: field \"key\" is given twice"
    );
}

#[test]
fn per_cpu_values_name_what_is_missing() {
    let err = |text: &str| json::parse(text).unwrap_err().to_string();
    assert_eq!(
        err(r#"{"m": [{"key": [1], "values": [{"value": [1]}]}]}"#),
        "map m, entry 0: values[0] has no \"cpu\" number"
    );
    assert_eq!(
        err(r#"{"m": [{"key": [1], "values": [{"cpu": "x", "value": [1]}]}]}"#),
        "map m, entry 0: values[0] has no \"cpu\" number"
    );
    assert_eq!(
        err(r#"{"m": [{"key": [1], "values": [{"cpu": 0}]}]}"#),
        "map m, entry 0: values[0] has no \"value\""
    );
    assert_eq!(
        err(r#"{"m": [{"key": [1], "values": 3}]}"#),
        "map m, entry 0: \"values\" must be an array of {\"cpu\", \"value\"} objects"
    );
}

#[test]
fn deep_nesting_is_a_syntax_error_not_a_stack_overflow() {
    let deep = "[".repeat(100_000);
    let text = format!(r#"{{"m": [{{"key": [1], "value": [1], "formatted": {deep}}}]}}"#);
    // serde_json skips the ignored value without recursing and then finds the text ending inside it.
    assert!(matches!(
        json::parse(&text).unwrap_err(),
        JsonError::Syntax { .. }
    ));
    // In a byte position the byte visitor skips nested arrays the same way.
    let text = format!(r#"{{"m": [{{"key": [{deep}"#);
    assert!(matches!(
        json::parse(&text).unwrap_err(),
        JsonError::Syntax { .. }
    ));
    // Where an entry is expected, the first nested array is already the wrong shape.
    let text = format!(r#"{{"m": {deep}"#);
    assert_eq!(
        json::parse(&text).unwrap_err().to_string(),
        "map m, entry 0: an entry must be an object with \"key\" and \"value\" or \"values\""
    );
}

#[test]
fn trailing_text_after_the_object_is_a_syntax_error() {
    assert!(matches!(
        json::parse(r#"{"m": []} x"#).unwrap_err(),
        JsonError::Syntax { line: 1, .. }
    ));
}
