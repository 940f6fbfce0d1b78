//! Malformed programs: each gives exactly one `file:line:col: message`.

use hwxdp_p4::parse_str;

fn error_of(text: &str) -> String {
    match parse_str("bad.p4", text) {
        Ok(_) => panic!("parsed without error:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn missing_semicolon_after_field() {
    assert_eq!(
        error_of("header H {\n    bit<8> a\n    bit<8> b;\n}\n"),
        "bad.p4:3:5: expected `;`, found keyword `bit`"
    );
}

#[test]
fn unterminated_header_at_end_of_file() {
    assert_eq!(
        error_of("header H {\n    bit<8> a;\n"),
        "bad.p4:3:1: expected type, found end of file"
    );
}

#[test]
fn bit_width_beyond_128() {
    assert_eq!(
        error_of("header H { bit<256> a; }"),
        "bad.p4:1:16: `bit<256>` is wider than 128 bits"
    );
}

#[test]
fn literal_width_beyond_128() {
    assert_eq!(
        error_of("const bit<8> X = 200w1;"),
        "bad.p4:1:18: integer width 200 exceeds 128"
    );
}

#[test]
fn bad_hex_digit() {
    assert_eq!(
        error_of("const bit<16> X = 0x08g0;"),
        "bad.p4:1:23: invalid digit `g` in integer literal"
    );
}

#[test]
fn keyword_as_a_name() {
    assert_eq!(
        error_of("struct table { bit<8> a; }"),
        "bad.p4:1:8: expected identifier, found keyword `table`"
    );
}

#[test]
fn select_case_without_colon() {
    let text = "parser P(packet_in p, out H h) {\n  state start {\n    transition select(h.a) {\n      1 accept;\n    }\n  }\n}\n";
    assert_eq!(
        error_of(text),
        "bad.p4:4:9: expected `:`, found identifier `accept`"
    );
}

#[test]
fn transition_not_last_in_state() {
    let text = "parser P(packet_in p, out H h) {\n  state start {\n    transition accept;\n    p.extract(h.a);\n  }\n}\n";
    assert_eq!(
        error_of(text),
        "bad.p4:4:5: expected `}`, found identifier `p`"
    );
}

#[test]
fn expression_statement_that_is_not_a_call() {
    let text = "control C(inout H h) {\n  apply {\n    h.a + 1;\n  }\n}\n";
    assert_eq!(
        error_of(text),
        "bad.p4:3:5: expression statement must be a call or an assignment"
    );
}

#[test]
fn control_without_apply_block() {
    let text = "control C(inout H h) {\n  action a() { }\n}\n";
    assert_eq!(
        error_of(text),
        "bad.p4:3:1: expected declaration, found `}`"
    );
}

#[test]
fn table_key_without_match_kind() {
    let text = "control C(inout H h) {\n  table t {\n    key = { h.a; }\n  }\n  apply { }\n}\n";
    assert_eq!(error_of(text), "bad.p4:3:16: expected `:`, found `;`");
}

#[test]
fn unterminated_string_in_annotation() {
    assert_eq!(
        error_of("@name(\"x) header H { }\n"),
        "bad.p4:1:7: unterminated string literal"
    );
}

#[test]
fn unterminated_block_comment() {
    assert_eq!(
        error_of("header H { }\n/* never closed\n"),
        "bad.p4:2:1: unterminated block comment"
    );
}

#[test]
fn missing_include() {
    assert_eq!(
        error_of("#include <nope.p4>\n"),
        "bad.p4:1:1: include file `nope.p4` not found"
    );
}

#[test]
fn unterminated_include_guard() {
    assert_eq!(
        error_of("#ifndef G\n#define G\nheader H { }\n"),
        "bad.p4:1:1: unterminated conditional directive"
    );
}

#[test]
fn function_like_macro() {
    assert_eq!(
        error_of("#define F(x) x\n"),
        "bad.p4:1:1: function-like macro `F` is not supported"
    );
}

#[test]
fn unsupported_directive() {
    assert_eq!(
        error_of("#pragma once\n"),
        "bad.p4:1:1: unsupported preprocessor directive `#pragma`"
    );
}

#[test]
fn if_expression_errors() {
    assert_eq!(
        error_of("#define A 1\n#if A +\n#endif\n"),
        "bad.p4:2:1: `#if` expression ends early"
    );
    assert_eq!(
        error_of("#if 0\n#else\n#elif 1\n#endif\n"),
        "bad.p4:3:1: `#elif` after `#else`"
    );
    assert_eq!(error_of("#elif 1\n"), "bad.p4:1:1: `#elif` without `#if`");
    assert_eq!(
        error_of("#if 1\n#elif 1 / 0\n#endif\nheader H { bit<8> $ }\n"),
        "bad.p4:4:19: unexpected character `$`"
    );
}

#[test]
fn stray_character() {
    assert_eq!(
        error_of("header H {\n  bit<8> $a;\n}\n"),
        "bad.p4:2:10: unexpected character `$`"
    );
}

#[test]
fn error_in_macro_value_points_into_the_define() {
    assert_eq!(
        error_of("#define W 0xz\nheader H { bit<W> a; }\n"),
        "bad.p4:1:13: invalid digit `z` in integer literal"
    );
}

#[test]
fn macro_use_reports_at_the_use_site() {
    assert_eq!(
        error_of("#define W 300\nheader H { bit<W> a; }\n"),
        "bad.p4:2:16: `bit<300>` is wider than 128 bits"
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "const bit<8> X = {}1{};",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    // Each parenthesis costs two levels (expression and operand).
    assert_eq!(
        error_of(&deep),
        "bad.p4:1:82: nesting deeper than 128 levels"
    );
    let deep_inputs = [
        format!("const bit<8> X = {}1;", "-".repeat(10_000)),
        format!(
            "typedef {}bit<8>{} T;",
            "A<".repeat(10_000),
            ">".repeat(10_000)
        ),
        format!(
            "control C() {{ apply {{ {} }} }}",
            "if (true) ".repeat(10_000)
        ),
        format!("control C() {{ apply {} }}", "{".repeat(10_000)),
        format!("const bit<8> X = {}1;", "a ? ".repeat(10_000)),
    ];
    for text in deep_inputs {
        assert!(
            error_of(&text).ends_with("nesting deeper than 128 levels"),
            "{}",
            &text[..40]
        );
    }
}
