//! Shapes the parser must give: precedence, the places where P4 text is ambiguous without a symbol table, spans,
//! annotations, and include resolution from disk.

use hwxdp_p4::ast::{DeclKind, ExprKind, Keyset, StmtKind, TypeKind};
use hwxdp_p4::{parse_file, parse_str, pretty_expr, Program};

fn parse(text: &str) -> Program {
    parse_str("t.p4", text).unwrap_or_else(|e| panic!("{e}"))
}

/// The initialiser of `const T X = <expr>;`, printed with every nested operator parenthesised.
fn grouped(expr: &str) -> String {
    let p = parse(&format!("const bit<8> X = {expr};"));
    match &p.decls[0].kind {
        DeclKind::Const { value, .. } => pretty_expr(value),
        other => panic!("{other:?}"),
    }
}

#[test]
fn precedence_follows_p4_not_c() {
    assert_eq!(grouped("a | b == c"), "(a | b) == c");
    assert_eq!(grouped("a & b != 0 && c"), "((a & b) != 0) && c");
    assert_eq!(grouped("a + b * c - d"), "(a + (b * c)) - d");
    assert_eq!(grouped("a ++ b << 2"), "(a ++ b) << 2");
    assert_eq!(grouped("a >> 2 > b"), "(a >> 2) > b");
    assert_eq!(grouped("a || b && c"), "a || (b && c)");
    assert_eq!(grouped("a ? b : c ? d : e"), "a ? b : (c ? d : e)");
    assert_eq!(grouped("-a.b[3:0] + ~c"), "-a.b[3:0] + ~c");
    assert_eq!(grouped("a |+| b |-| c"), "(a |+| b) |-| c");
}

#[test]
fn casts_and_parentheses_are_told_apart() {
    assert_eq!(grouped("(bit<16>)a + b"), "(bit<16>)a + b");
    assert_eq!(grouped("(T) a"), "(T)a");
    assert_eq!(grouped("(a) - b"), "a - b");
    assert_eq!(grouped("(T)(a + b)"), "(T)(a + b)");
    let p = parse("const bit<8> X = (a);");
    let DeclKind::Const { value, .. } = &p.decls[0].kind else {
        panic!()
    };
    assert!(matches!(value.kind, ExprKind::Name(_)));
}

#[test]
fn type_arguments_are_told_apart_from_less_than() {
    assert_eq!(grouped("p.lookahead<bit<8>>()"), "p.lookahead<bit<8>>()");
    assert_eq!(grouped("a < b"), "a < b");
    assert_eq!(grouped("a < b && c > d"), "(a < b) && (c > d)");
    assert_eq!(grouped("f<T<bit<4>>>(x)"), "f<T<bit<4>>>(x)");
}

#[test]
fn literals_keep_their_form() {
    assert_eq!(grouped("8w0x0800"), "8w0x800");
    assert_eq!(grouped("16s-1"), "16s-1");
    assert_eq!(grouped("0b1010"), "0b1010");
    assert_eq!(grouped("{ a, 8w1 }"), "{ a, 8w1 }");
    assert_eq!(grouped("{ f = 1, g = b }"), "{ f = 1, g = b }");
}

#[test]
fn declarations_and_statements_are_told_apart() {
    let p = parse(
        "control C(inout H h) {\n apply {\n  H[2] s;\n  h[1] = 2;\n  bit<8> x = 1;\n  T<bit<8>> y;\n  f(x);\n  \
         h.a[3:0] = 1;\n  error e = error.NoError;\n }\n}\n",
    );
    let DeclKind::Control { apply, .. } = &p.decls[0].kind else {
        panic!()
    };
    let kinds: Vec<&str> = apply
        .stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Variable { .. } => "var",
            StmtKind::Assign { .. } => "assign",
            StmtKind::Call(_) => "call",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["var", "assign", "var", "var", "call", "assign", "var"]
    );
    let StmtKind::Variable { ty, .. } = &apply.stmts[0].kind else {
        panic!()
    };
    assert!(matches!(ty.kind, TypeKind::Stack { .. }));
}

#[test]
fn switch_cases_fall_through_without_a_block() {
    let p =
        parse("control C() { apply { switch (t.apply().action_run) { a: b: { } default: { } } } }");
    let DeclKind::Control { apply, .. } = &p.decls[0].kind else {
        panic!()
    };
    let StmtKind::Switch { cases, .. } = &apply.stmts[0].kind else {
        panic!()
    };
    let bodies: Vec<bool> = cases.iter().map(|c| c.body.is_some()).collect();
    assert_eq!(bodies, [false, true, true]);
}

#[test]
fn select_keysets() {
    let p = parse(
        "parser P(packet_in p, out H h) { state start { transition select(h.a, h.b) {\n\
         (1, 2 &&& 3) : s; (_, 4 .. 9) : s; (default, 5) : s; default : accept; } } }",
    );
    let DeclKind::Parser { states, .. } = &p.decls[0].kind else {
        panic!()
    };
    let Some(hwxdp_p4::ast::Transition::Select { exprs, cases, .. }) = &states[0].transition else {
        panic!()
    };
    assert_eq!(exprs.len(), 2);
    let Keyset::Tuple(first, _) = &cases[0].keyset else {
        panic!()
    };
    assert!(matches!(first[1], Keyset::Mask { .. }));
    let Keyset::Tuple(second, _) = &cases[1].keyset else {
        panic!()
    };
    assert!(matches!(second[0], Keyset::DontCare(_)) && matches!(second[1], Keyset::Range { .. }));
    assert!(matches!(cases[3].keyset, Keyset::Default(_)));
}

#[test]
fn annotations_and_serializable_enums_are_kept() {
    let p = parse("@name(\"x\") @hidden enum bit<8> E { A = 1, B = 0x2 }");
    let d = &p.decls[0];
    let names: Vec<&str> = d.annotations.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(names, ["name", "hidden"]);
    assert!(d.annotations[1].args.is_none());
    let DeclKind::Enum { repr, members, .. } = &d.kind else {
        panic!()
    };
    assert!(matches!(
        repr.as_ref().map(|t| &t.kind),
        Some(TypeKind::Bit(8))
    ));
    assert_eq!(members.len(), 2);
}

#[test]
fn spans_map_to_lines_and_columns() {
    let p = parse("\n\nheader  Eth { bit<48> dst; }");
    let DeclKind::Header { name, fields } = &p.decls[0].kind else {
        panic!()
    };
    assert_eq!(p.sources.line_col(name.span.file, name.span.lo), (3, 9));
    assert_eq!(
        p.sources
            .line_col(fields[0].ty.span.file, fields[0].ty.span.lo),
        (3, 15)
    );
    let diag = p.sources.diagnostic(fields[0].name.span, "x");
    assert_eq!(diag.to_string(), "t.p4:3:23: x");
}

#[test]
fn defines_substitute_and_guards_skip() {
    let p = parse("#define W 16\n#ifndef G\n#define G\nheader H { bit<W> a; }\n#endif\n#ifdef G\n#else\nbad\n#endif\n");
    let DeclKind::Header { fields, .. } = &p.decls[0].kind else {
        panic!()
    };
    assert_eq!(fields[0].ty.kind, TypeKind::Bit(16));
    assert_eq!(p.decls.len(), 1);
}

#[test]
fn quoted_includes_resolve_next_to_the_program_and_errors_name_the_include() {
    let dir = std::env::temp_dir().join(format!("hwxdp-p4-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/headers.p4"),
        "#include <core.p4>\nheader Eth { bit<48> dst; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("lib/broken.p4"),
        "header Eth {\n  bit<48> dst\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("good.p4"),
        "#include \"lib/headers.p4\"\nstruct S { Eth e; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("bad.p4"), "#include \"lib/broken.p4\"\n").unwrap();

    let good = parse_file(&dir.join("good.p4")).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = good
        .sources
        .files()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert!(
        names[1].ends_with("lib/headers.p4") && names[2] == "<bundled>/core.p4",
        "{names:?}"
    );
    assert!(matches!(
        good.decls.last().map(|d| &d.kind),
        Some(DeclKind::Struct { .. })
    ));

    let err = parse_file(&dir.join("bad.p4")).unwrap_err();
    assert!(err.file.ends_with("lib/broken.p4"), "{err}");
    assert_eq!(
        (err.line, err.col, err.message.as_str()),
        (3, 1, "expected `;`, found `}`")
    );

    let missing = parse_file(&dir.join("missing.p4")).unwrap_err();
    assert_eq!(missing.message, "cannot read file: entity not found");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bundled_models_declare_the_architectures() {
    let p = parse("#include <xdp_model.p4>\n");
    let names: Vec<String> = p
        .decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::PackageType { signature } => Some(signature.name.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["ebpfFilter", "xdp"]);
    assert!(hwxdp_p4::bundled_include("core.p4").is_some());
}
