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

fn example(name: &str) -> Checked {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/p4")
        .join(name);
    hwxdp_p4::check_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn lpm_router_table_and_action_params() {
    let c = example("xdp_lpm_router.p4");
    let t = &c.control.tables[0];
    assert_eq!(t.name, "ipv4_lpm");
    assert_eq!(t.keys.len(), 1);
    assert_eq!(t.keys[0].kind, hwxdp_p4::ir::MatchKind::Lpm);
    assert_eq!(t.keys[0].width, 32);
    assert_eq!(t.keys[0].name, "hd.ipv4.dstAddr");
    let set_nhop = &c.control.actions[t.actions[0]];
    assert_eq!(set_nhop.name, "set_nhop");
    let tys: Vec<Ty> = set_nhop
        .params
        .iter()
        .map(|&l| c.locals[l].ty.clone())
        .collect();
    assert_eq!(tys, vec![Ty::Bit(48), Ty::Bit(48), Ty::Bit(32)]);
    assert!(check("").is_err());
}

use hwxdp_p4::ir::{ExprKind, KeysetElem, Root, Stmt, Target, Transition};

/// Lines 1-7 of every inline program; the control's body starts on line 8.
const PRELUDE: &str = "#include <xdp_model.p4>
header E { bit<48> d; bit<48> s; bit<16> t; }
header M { bit<20> l; bit<3> tc; bit<1> bos; bit<8> ttl; }
struct H { E e; M[4] m; }
parser P(packet_in p, out H h) { state start { p.extract(h.e); transition accept; } }
control D(in H h, packet_out p) { apply { p.emit(h); } }
control C(inout H h, in xdp_input i, out xdp_output o) {
";

/// A program whose control `C` has this body (starting on line 8).
fn control(body: &str) -> String {
    format!("{PRELUDE}{body}\n}}\nxdp(P(), C(), D()) main;\n")
}

fn ok(src: &str) -> Checked {
    check(src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn fails(src: &str) -> String {
    match check(src) {
        Ok(_) => panic!("checked:\n{src}"),
        Err(e) => e,
    }
}

/// The right-hand sides of the assignments of `apply`, in order.
fn assigned(c: &Checked) -> Vec<hwxdp_p4::ir::Expr> {
    c.control
        .apply
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { rhs, .. } => Some(rhs.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn enum_members_lower_to_their_index() {
    let c = ok(&control("apply { o.output_action = xdp_action.XDP_TX; }"));
    let rhs = &assigned(&c)[0];
    assert_eq!(rhs.kind, ExprKind::EnumMember(3));
    assert_eq!(rhs.ty, Ty::Enum(c.enum_named("xdp_action").unwrap()));
}

#[test]
fn literals_take_the_width_of_their_context() {
    let c = ok(&control(
        "apply { o.output_port = 5; h.e.t = h.e.t + 1; bit<8> x = -1; h.m[0].ttl = x |+| 300; }",
    ));
    let rhs = assigned(&c);
    assert_eq!(
        (rhs[0].kind.clone(), rhs[0].ty.clone()),
        (ExprKind::Const(5), Ty::Bit(32))
    );
    let ExprKind::Binary(_, _, one) = &rhs[1].kind else {
        panic!("{:?}", rhs[1]);
    };
    assert_eq!(
        (one.kind.clone(), one.ty.clone()),
        (ExprKind::Const(1), Ty::Bit(16))
    );
    let Stmt::Declare {
        init: Some(init), ..
    } = &c.control.apply[2]
    else {
        panic!("{:?}", c.control.apply[2]);
    };
    assert_eq!(
        (init.kind.clone(), init.ty.clone()),
        (ExprKind::Const(255), Ty::Bit(8))
    );
    // 300 truncated to bit<8> is 44.
    let ExprKind::Binary(_, _, k) = &rhs[2].kind else {
        panic!("{:?}", rhs[2]);
    };
    assert_eq!(k.kind, ExprKind::Const(44));
}

#[test]
fn constants_fold() {
    let c = ok(&control(
        "const bit<16> A = 0x800;
         const bit<16> B = (A << 1) | 16w3;
         const int<8> N = -1;
         apply {
             h.e.t = B;
             h.m[0].ttl = (bit<8>)(B >> 4);
             h.m[0].l = (bit<20>)N;
             h.m[0].tc = A[11:9];
             o.output_port = A ++ 8w1 ++ 8s-2;
             h.e.t = 16w1 - 2;
             h.m[0].ttl = 7 / 2 * 4 % 5;
         }",
    ));
    let values: Vec<ExprKind> = assigned(&c).into_iter().map(|e| e.kind).collect();
    assert_eq!(
        values,
        vec![
            ExprKind::Const(0x1003),
            ExprKind::Const(0x00),
            ExprKind::Const(0xfffff),
            ExprKind::Const(0b100),
            ExprKind::Const(0x0800_01fe),
            ExprKind::Const(0xffff),
            ExprKind::Const(2),
        ]
    );
}

#[test]
fn slices_and_concatenations_have_their_widths() {
    let c = ok(&control(
        "apply { bit<8> lo = h.e.t[7:0]; bit<64> both = h.e.t ++ h.e.d; int<24> s = 8s1 ++ h.e.t; }",
    ));
    let tys: Vec<(Ty, &'static str)> = c
        .control
        .apply
        .iter()
        .map(|s| match s {
            Stmt::Declare { init: Some(e), .. } => (
                e.ty.clone(),
                match e.kind {
                    ExprKind::Slice { hi: 7, lo: 0, .. } => "slice",
                    ExprKind::Concat(..) => "concat",
                    _ => "other",
                },
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        tys,
        vec![
            (Ty::Bit(8), "slice"),
            (Ty::Bit(64), "concat"),
            (Ty::Int(24), "concat")
        ]
    );
}

const TABLE: &str = "action a(bit<32> port) { o.output_port = port; }
action b() { o.output_action = xdp_action.XDP_DROP; }
table t { key = { h.e.t : exact; } actions = { a; b; } }
";

#[test]
fn table_hit_hoists_the_application() {
    let c = ok(&control(&format!(
        "{TABLE} apply {{ if (t.apply().hit) {{ exit; }} if (!t.apply().miss) {{ return; }} }}"
    )));
    let apply = &c.control.apply;
    assert_eq!(apply[0], Stmt::ApplyTable(0));
    let Stmt::If { cond, then, .. } = &apply[1] else {
        panic!("{apply:?}");
    };
    assert_eq!(cond.kind, ExprKind::TableHit(0));
    assert_eq!(then, &vec![Stmt::Exit]);
    assert_eq!(apply[2], Stmt::ApplyTable(0));
    let Stmt::If { cond, .. } = &apply[3] else {
        panic!("{apply:?}");
    };
    let ExprKind::Unary(_, inner) = &cond.kind else {
        panic!("{cond:?}");
    };
    let ExprKind::Unary(_, hit) = &inner.kind else {
        panic!("{cond:?}");
    };
    assert_eq!(hit.kind, ExprKind::TableHit(0));
    // The default action is NoAction, added to the control's actions because it is used.
    let t = &c.control.tables[0];
    assert_eq!(c.control.actions[t.default_action.0].name, "NoAction");
    assert_eq!((t.size, t.default_is_const), (1024, false));
}

#[test]
fn switch_labels_that_fall_through_share_an_arm() {
    let c = example("xdp_mpls_switch.p4");
    let Some(Stmt::SwitchAction { table, arms }) = c
        .control
        .apply
        .iter()
        .find(|s| matches!(s, Stmt::SwitchAction { .. }))
    else {
        panic!("no switch");
    };
    let names = |ids: &Option<Vec<usize>>| {
        ids.as_ref().map(|v| {
            v.iter()
                .map(|&a| c.control.actions[a].name.as_str())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(*table, 0);
    assert_eq!(arms.len(), 3);
    assert_eq!(names(&arms[0].actions), Some(vec!["pop"]));
    assert_eq!(names(&arms[1].actions), Some(vec!["push", "discard"]));
    assert_eq!(arms[2].actions, None);
    assert_eq!(arms[1].body.len(), 1);
}

#[test]
fn header_stacks_parse_with_next_and_pop_front_shifts() {
    let c = example("xdp_mpls_switch.p4");
    let mpls = &c.parser.states[1];
    assert_eq!(mpls.name, "parse_mpls");
    let Stmt::Extract(e) = &mpls.stmts[0] else {
        panic!("{:?}", mpls.stmts);
    };
    assert!(matches!(e.kind, ExprKind::StackNext(_)));
    let Transition::Select { keys, cases } = &mpls.transition else {
        panic!("{:?}", mpls.transition);
    };
    assert_eq!(keys[0].ty, Ty::Bit(1));
    assert_eq!(cases[0].keysets, vec![KeysetElem::Value(0)]);
    assert_eq!(cases[0].target, Target::State(1));
    assert_eq!(cases[1].target, Target::Accept);
    let pop = c.control.actions.iter().find(|a| a.name == "pop").unwrap();
    // Four elements: three moves up, then the last is invalidated.
    assert_eq!(pop.body.len(), 4);
    assert!(matches!(pop.body[0], Stmt::Assign { .. }));
    assert!(matches!(pop.body[3], Stmt::SetInvalid(_)));
}

#[test]
fn selects_fold_tuples_masks_and_enum_values() {
    let c = example("xdp_tuple_select.p4");
    let Transition::Select { keys, cases } = &c.parser.states[0].transition else {
        panic!();
    };
    assert_eq!(keys[1].kind, ExprKind::Lookahead);
    assert_eq!(keys[1].ty, Ty::Bit(8));
    assert_eq!(
        cases[0].keysets,
        vec![KeysetElem::Value(0x800), KeysetElem::Value(0x45)]
    );
    assert_eq!(
        cases[1].keysets,
        vec![
            KeysetElem::Value(0x800),
            KeysetElem::Mask {
                value: 0x40,
                mask: 0xf0
            }
        ]
    );
    assert_eq!(
        cases.last().unwrap().keysets,
        vec![KeysetElem::Any, KeysetElem::Any]
    );
    let udp = c
        .parser
        .states
        .iter()
        .position(|s| s.name == "parse_udp")
        .unwrap();
    let ipv4 = c
        .parser
        .states
        .iter()
        .find(|s| s.name == "parse_ipv4")
        .unwrap();
    let Transition::Select { cases, .. } = &ipv4.transition else {
        panic!();
    };
    assert_eq!(
        cases[0].keysets,
        vec![KeysetElem::Value(0), KeysetElem::Value(17)]
    );
    assert_eq!(cases[0].target, Target::State(udp));
    assert!(matches!(ipv4.stmts[1], Stmt::Verify { error: 2, .. }));
    assert_eq!(c.errors[2], "NoMatch");
}

#[test]
fn const_entries_and_default_actions_fold() {
    let c = example("xdp_vlan_filter.p4");
    let t = &c.control.tables[0];
    assert!(t.default_is_const);
    assert_eq!(c.control.actions[t.default_action.0].name, "allow");
    assert_eq!(t.entries.len(), 3);
    assert_eq!(
        t.entries[0].keys,
        vec![KeysetElem::Value(10), KeysetElem::Any]
    );
    assert_eq!(
        t.entries[1].keys,
        vec![
            KeysetElem::Mask {
                value: 0x100,
                mask: 0xf00
            },
            KeysetElem::Value(7)
        ]
    );
    let c = ok(&control(
        "action set(bit<8> v, bool b) { h.m[0].ttl = v; }
         table u { key = { h.e.t : exact; h.m[0].l : lpm; } actions = { set; }
                   default_action = set(3, true); const entries = { (1, 0x10 &&& 0xf0) : set(0x120, false); (2 .. 5, _) : set(1, true); } }
         apply { u.apply(); }",
    ));
    let u = &c.control.tables[0];
    assert_eq!(u.default_action.1, vec![3, 1]);
    assert_eq!(u.entries[0].args, vec![0x20, 0]);
    assert_eq!(
        u.entries[1].keys,
        vec![KeysetElem::Range { lo: 2, hi: 5 }, KeysetElem::Any]
    );
    assert_eq!(u.keys[1].name, "h.m[0].l");
    assert_eq!(u.keys[1].width, 20);
}

#[test]
fn filter_model_counters_and_accept() {
    let c = example("ebpf_counter.p4");
    assert_eq!(c.arch, hwxdp_p4::ir::Arch::EbpfFilter);
    let counters: Vec<(&str, u32, bool)> = c
        .control
        .counters
        .iter()
        .map(|k| (k.name.as_str(), k.size, k.sparse))
        .collect();
    assert_eq!(
        counters,
        vec![("counters", 10, true), ("bytes", 256, false)]
    );
    let Stmt::If { then, .. } = &c.control.apply[0] else {
        panic!();
    };
    assert!(matches!(
        then[0],
        Stmt::Count {
            counter: 0,
            amount: None,
            ..
        }
    ));
    assert!(matches!(
        then[1],
        Stmt::Count {
            counter: 1,
            amount: Some(_),
            ..
        }
    ));
    assert!(
        matches!(&then[2], Stmt::Assign { lhs, .. } if lhs.kind == ExprKind::Var(Root::Accept))
    );
    assert!(c.deparser.is_empty());
}

#[test]
fn control_locals_are_declared_first_in_apply() {
    let c = ok(&control(
        "bool drop = true; bit<8> n;
         action a() { drop = false; }
         table t { key = { h.e.t : exact; } actions = { a; } default_action = a; implementation = hash_table(64); }
         apply { t.apply(); }",
    ));
    let apply = &c.control.apply;
    assert!(
        matches!(&apply[0], Stmt::Declare { local, init: Some(_) } if c.locals[*local].name == "drop")
    );
    assert!(
        matches!(&apply[1], Stmt::Declare { local, init: None } if c.locals[*local].ty == Ty::Bit(8))
    );
    assert_eq!(apply[2], Stmt::ApplyTable(0));
    let t = &c.control.tables[0];
    assert_eq!(
        (t.size, t.implementation),
        (64, hwxdp_p4::ir::TableImpl::Hash)
    );
    assert_eq!(c.struct_named("H"), Some(c.headers_ty));
}

/// The diagnostic of a control body (starting on line 8) that does not check.
fn ctl_err(body: &str) -> String {
    fails(&control(body))
}

#[test]
fn unknown_names() {
    assert_eq!(
        ctl_err("apply { o.output_port = foo; }"),
        "t.p4:8:25: unknown name `foo`"
    );
    assert_eq!(ctl_err("apply { Foo x; }"), "t.p4:8:9: unknown type `Foo`");
    assert_eq!(
        ctl_err("apply { h.e.x = 1; }"),
        "t.p4:8:13: unknown field `x` of E"
    );
    assert_eq!(
        ctl_err("apply { bar.apply(); }"),
        "t.p4:8:9: unknown name `bar`"
    );
    assert_eq!(
        ctl_err("table t { key = { h.e.t : exact; } actions = { nope; } } apply { }"),
        "t.p4:8:48: unknown action `nope`"
    );
    assert_eq!(
        ctl_err("apply { switch (t.apply().action_run) { } }"),
        "t.p4:8:17: unknown table `t`"
    );
    assert_eq!(
        ctl_err("Meter(1) m; apply { }"),
        "t.p4:8:1: unknown extern `Meter`"
    );
    assert_eq!(
        ctl_err("apply { o.output_action = xdp_action.XDP_FLY; }"),
        "t.p4:8:38: unknown member `XDP_FLY` of `xdp_action`"
    );
    assert_eq!(
        ctl_err("table t { key = { h.e.t : range; } actions = { } } apply { }"),
        "t.p4:8:27: unknown match kind `range`"
    );
    let src = format!(
        "{}\nparser Q(packet_in p, out H h) {{ state start {{ transition nowhere; }} }}\n",
        control("apply { }")
    )
    .replace("xdp(P(),", "xdp(Q(),");
    assert_eq!(fails(&src), "t.p4:12:59: unknown state `nowhere`");
    let src = "#include <xdp_model.p4>\nextern void bar();\nstruct H { }\nparser P(packet_in p, out H h) { state start { transition accept; } }\ncontrol C(inout H h, in xdp_input i, out xdp_output o) { apply { bar(); } }\ncontrol D(in H h, packet_out p) { apply { } }\nxdp(P(), C(), D()) main;\n";
    // A function no model implements is the user's C extern (`--extern-c`), which `hwxdp p4c` asks for.
    assert_eq!(ok(src).c_externs, vec!["bar".to_string()]);
    assert_eq!(
        ctl_err("apply { bool b = error.Oops == error.NoError; }"),
        "t.p4:8:24: unknown error `Oops`"
    );
}

#[test]
fn type_mismatches() {
    assert_eq!(
        ctl_err("apply { h.m[0].ttl = h.e.t; }"),
        "t.p4:8:22: type mismatch: bit<8> and bit<16>"
    );
    assert_eq!(
        ctl_err("apply { if (h.e.t == h.m[0].ttl) { exit; } }"),
        "t.p4:8:13: type mismatch: bit<16> and bit<8>"
    );
    assert_eq!(
        ctl_err("apply { if (h.e.t) { exit; } }"),
        "t.p4:8:13: type mismatch: bool and bit<16>"
    );
    assert_eq!(
        ctl_err("apply { o.output_action = 2; }"),
        "t.p4:8:27: type mismatch: xdp_action and int"
    );
    assert_eq!(
        ctl_err("apply { h.e.t = (bit<16>)h.e; }"),
        "t.p4:8:17: invalid cast from E to bit<16>"
    );
}

#[test]
fn wrong_argument_counts() {
    assert_eq!(
        ctl_err("apply { h.e.t = csum_replace2(h.e.t, h.e.t); }"),
        "t.p4:8:17: wrong number of arguments: expected 3, got 2"
    );
    assert_eq!(
        ctl_err(&format!("{TABLE} apply {{ a(); }}")),
        "t.p4:11:10: wrong number of arguments: expected 1, got 0"
    );
}

#[test]
fn assignments_to_read_only_values() {
    assert_eq!(
        ctl_err("apply { i.input_port = 1; }"),
        "t.p4:8:9: cannot assign to `in` parameter `i`"
    );
    assert_eq!(
        ctl_err("const bit<8> K = 1; apply { K = 2; }"),
        "t.p4:8:29: cannot assign to constant `K`"
    );
    assert_eq!(
        ctl_err("action a(bit<8> v) { v = 1; } apply { }"),
        "t.p4:8:22: cannot assign to action parameter `v`"
    );
}

#[test]
fn widths_and_slices_out_of_range() {
    assert_eq!(
        ctl_err("apply { bit<128> x = 0; bit<128> y = x ++ h.e.t; }"),
        "t.p4:8:38: width 144 exceeds 128 bits"
    );
    assert_eq!(
        ctl_err("apply { h.m[0].ttl = h.e.t[16:9]; }"),
        "t.p4:8:28: slice [16:9] out of range for bit<16>"
    );
    assert_eq!(
        ctl_err("apply { h.m[4].ttl = 1; }"),
        "t.p4:8:13: index 4 out of range for M[4]"
    );
}

#[test]
fn unsupported_constructs() {
    let with = |decl: &str| fails(&format!("{decl}\n{}", control("apply { }")));
    assert_eq!(
        with("bit<8> f(in bit<8> x) { return x; }"),
        "t.p4:1:8: unsupported construct: function declarations"
    );
    assert_eq!(
        with("header_union U { }"),
        "t.p4:1:14: unsupported construct: header unions"
    );
    assert_eq!(
        with("header V { varbit<32> o; }"),
        "t.p4:1:12: unsupported construct: varbit"
    );
    let with_sub = |sub: &str, body: &str| {
        fails(&control(body).replace("control C(", &format!("{sub}\ncontrol C(")))
    };
    assert_eq!(
        with_sub(
            "control S() { apply { return; } }",
            "S() s; apply { s.apply(); }"
        ),
        "t.p4:7:23: unsupported construct: `return` in an applied control instance"
    );
    assert_eq!(
        ctl_err("action a(in bit<8> v) { v = 1; } apply { }"),
        "t.p4:8:25: cannot assign to `in` parameter `v`"
    );
    assert_eq!(
        ctl_err("action a(out bit<8> v) { v = 1; } apply { a(h.e.t[7:0] + 1); }"),
        "t.p4:8:45: cannot assign to this expression"
    );
    assert_eq!(
        ctl_err("action a(bit<8> k, in bit<8> v) { } apply { }"),
        "t.p4:8:20: directional parameters must come before the action data (directionless) ones"
    );
    assert_eq!(
        ctl_err("action a(in bit<8> v) { } table t { key = { h.e.t : exact; } actions = { a; } } apply { }"),
        "t.p4:8:74: `a` in `actions` takes its 1 directional arguments, by position"
    );
    assert_eq!(
        ctl_err(
            "action b() { } table t { key = { h.e.t : exact; } actions = { b(h.e.t); } } apply { }"
        ),
        "t.p4:8:63: `b` has no directional parameters to bind in `actions`"
    );
    let bound = ok(&control(
        "action a(inout bit<16> v, bit<8> k) { v = v + 1; } table t { key = { h.e.t : exact; } actions = { a(h.e.t); } default_action = a(h.e.t, 7); } apply { t.apply(); }",
    ));
    let t = &bound.control.tables[0];
    assert_eq!(
        (
            t.bindings.len(),
            t.bindings[0].1.len(),
            t.bindings[0].2.len()
        ),
        (1, 1, 1)
    );
    assert_eq!(t.default_action.1, vec![7]);
    assert_eq!(
        ctl_err("action a(in bit<8> v, bit<8> k) { } apply { a(v = 1, k = 2); }"),
        "t.p4:8:45: `a` takes its 1 directional arguments first, by position"
    );
    assert_eq!(
        ctl_err("apply { return 1; }"),
        "t.p4:8:16: unsupported construct: `return` with a value"
    );
    assert_eq!(
        ctl_err(&format!("{TABLE} action c() {{ t.apply(); }} apply {{ }}")),
        "t.p4:11:15: unsupported construct: applying tables from actions"
    );
    assert_eq!(
        ctl_err(&format!(
            "{TABLE} apply {{ if (h.e.t == 1 && t.apply().hit) {{ exit; }} }}"
        )),
        "t.p4:11:28: unsupported construct: table application in a conditional operand"
    );
}

#[test]
fn table_rules() {
    assert_eq!(
        ctl_err("action a() { } table t { key = { h.e.t : lpm; h.e.d : lpm; } actions = { a; } } apply { }"),
        "t.p4:8:55: at most one `lpm` key per table"
    );
    assert_eq!(
        ctl_err("action a() { } action b() { } table t { key = { h.e.t : exact; } actions = { a; } default_action = b; } apply { }"),
        "t.p4:8:100: `b` is not an action of table `t`"
    );
    assert_eq!(
        ctl_err(&format!(
            "{TABLE} apply {{ switch (t.apply().action_run) {{ a: b: a: {{ }} }} }}"
        )),
        "t.p4:11:48: duplicate switch label `a`"
    );
    assert_eq!(
        ctl_err("action a(bit<8> v) { } table t { key = { h.e.t : exact; } actions = { a; } const entries = { 1 : a(h.e.t[7:0]); } } apply { }"),
        "t.p4:8:100: not a constant"
    );
}

/// Every table the checker accepts has a map in docs/p4.md (`Table::storage`), whatever the order of its properties.
#[test]
fn implementation_needs_a_fitting_key() {
    let table = |key: &str, implementation: &str| {
        format!("action a() {{ }} table t {{ implementation = {implementation}(8); key = {{ {key} }} actions = {{ a; }} }} apply {{ t.apply(); }}")
    };
    assert_eq!(
        ctl_err(&table("h.e.t : lpm;", "array_table")),
        "t.p4:8:43: `array_table` needs one `exact` key or none"
    );
    assert_eq!(
        ctl_err(&table("h.e.t : exact; h.e.d : exact;", "array_table")),
        "t.p4:8:43: `array_table` needs one `exact` key or none"
    );
    // As p4c-ebpf compiles them: a hash_table with an lpm or ternary key is stored as such keys are, a keyless
    // array_table runs its default action.
    let c = ok(&control(&table(
        "h.e.t : exact; h.e.d : lpm;",
        "hash_table",
    )));
    assert_eq!(
        (c.control.tables[0].storage(), c.control.tables[0].size),
        (hwxdp_p4::ir::Storage::Lpm, 8)
    );
    let c = ok(&control(&table("h.e.t : ternary;", "hash_table")));
    assert_eq!(
        c.control.tables[0].storage(),
        hwxdp_p4::ir::Storage::Ternary
    );
    let c = ok(&control(&table("", "array_table")));
    assert_eq!(
        c.control.tables[0].storage(),
        hwxdp_p4::ir::Storage::Keyless
    );
    let c = ok(&control(&table("h.e.t : exact;", "array_table")));
    assert_eq!(c.control.tables[0].storage(), hwxdp_p4::ir::Storage::Array);
    let c = ok(&control(&table(
        "h.e.t : exact; h.e.d : exact;",
        "hash_table",
    )));
    assert_eq!(c.control.tables[0].storage(), hwxdp_p4::ir::Storage::Hash);
}

#[test]
fn model_and_parser_rules() {
    assert_eq!(
        fails("#include <xdp_model.p4>\nconst bit<8> X = 1;\n"),
        "t.p4:1:1: no `main` instance"
    );
    let src = control("apply { }").replace("out H h) { state start", "in H h) { state start");
    assert_eq!(
        fails(&src),
        "t.p4:5:23: direction mismatch: expected `out`, got `in`"
    );
    let src = control("apply { }").replace("state start {", "state begin {");
    assert_eq!(fails(&src), "t.p4:5:8: missing state `start`");
    assert_eq!(
        ctl_err("apply { h.m.next.ttl = 1; }"),
        "t.p4:8:13: `next` is only allowed in `extract`"
    );
}

#[test]
fn mutilated_examples_never_panic() {
    let mut checked = 0;
    for path in common::examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for i in 0..lines.len() {
            for variant in [
                [&lines[..i], &lines[i + 1..]].concat(),
                [&lines[..=i], &lines[i..]].concat(),
            ] {
                if let Ok(program) = hwxdp_p4::parse_str("m.p4", &variant.join("\n")) {
                    // Either outcome is fine; reaching the end without a panic is the point.
                    let _ = hwxdp_p4::check(&program);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} variants parsed");
}

/// `xdp_model.p4` declares the externs as P4C-XDP does (`bit<32> BPF_KTIME_GET_NS()`, `BPF_PERF_EVENT_OUTPUT()`
/// without data, a sample of the packet, `csum_replace2(csum, old, new)`); hwxdp's own are in `hwxdp_xdp.p4`.
#[test]
fn xdp_model_as_p4c_xdp_declares_it_and_our_extensions_apart() {
    let c = ok(&control(
        "bit<32> now; apply { now = BPF_KTIME_GET_NS(); h.e.t = csum_replace2(csum = h.e.t, old = 1, new = 2); }",
    ));
    assert_eq!(c.control.apply.len(), 3);
    let c = ok(&control("apply { BPF_PERF_EVENT_OUTPUT(); }"));
    assert!(matches!(c.control.apply[0], Stmt::PerfPacket));
    assert_eq!(
        ctl_err("apply { BPF_PERF_EVENT_OUTPUT(h.e); }"),
        "t.p4:8:9: wrong number of arguments: expected 0, got 1"
    );
    assert_eq!(
        ctl_err("bit<64> now; apply { now = hwxdp_ktime_get_ns(); }"),
        "t.p4:8:28: unknown name `hwxdp_ktime_get_ns`"
    );
    let ours = control(
        "bit<64> now; apply { now = hwxdp_ktime_get_ns(); hwxdp_perf_event_output(h.e); \
                        h.e.t = csum_replace4(h.e.t, 1, 2); }",
    )
    .replace("<xdp_model.p4>", "<hwxdp_xdp.p4>");
    let c = ok(&ours);
    assert!(matches!(c.control.apply[2], Stmt::PerfOutput(_)));
}

/// A parser of `H` with the value set `decl` and a start state selecting on `keys` with the case `case`.
fn value_set_parser(decl: &str, keys: &str, case: &str) -> String {
    control("apply { }").replace(
        "parser P(packet_in p, out H h) { state start { p.extract(h.e); transition accept; } }",
        &format!(
            "parser P(packet_in p, out H h) {{ {decl} state start {{ p.extract(h.e); transition select({keys}) {{ {case} default: accept; }} }} }}"
        ),
    )
}

#[test]
fn value_sets_in_select() {
    let c = ok(&value_set_parser(
        "@name(\"P.pairs\") value_set<tuple<bit<16>, bit<48>>>(4) vs;",
        "h.e.t, h.e.d",
        "vs: accept;",
    ));
    let vs = &c.parser.value_sets[0];
    assert_eq!(
        (vs.name.as_str(), vs.size, vs.annotated.as_deref()),
        ("vs", 4, Some("P.pairs"))
    );
    assert_eq!(
        vs.fields,
        vec![("field0".into(), 16), ("field1".into(), 48)]
    );
    let Transition::Select { cases, .. } = &c.parser.states[0].transition else {
        panic!("no select");
    };
    assert_eq!(cases[0].value_set, Some(0));
    assert_eq!(cases[1].value_set, None);
    let struct_set = ok(&value_set_parser(
        "value_set<E>(2) vs;",
        "h.e.d, h.e.s, h.e.t",
        "vs: accept;",
    ));
    let names: Vec<&str> = struct_set.parser.value_sets[0]
        .fields
        .iter()
        .map(|f| f.0.as_str())
        .collect();
    assert_eq!(names, ["d", "s", "t"]);
    assert_eq!(
        fails(&value_set_parser(
            "value_set<bit<16>>(4) vs;",
            "h.e.t, h.e.d",
            "vs: accept;"
        )),
        "t.p4:5:124: value_set `vs` has 1 fields, the select has 2 keys"
    );
    assert_eq!(
        fails(&value_set_parser(
            "value_set<bit<8>>(4) vs;",
            "h.e.t",
            "vs: accept;"
        )),
        "t.p4:5:116: type mismatch: bit<8> and bit<16>"
    );
    assert_eq!(
        fails(&value_set_parser(
            "value_set<bit<16>>(0) vs;",
            "h.e.t",
            "vs: accept;"
        )),
        "t.p4:5:53: the size of a value_set must be at least 1"
    );
    assert_eq!(
        fails(&value_set_parser("value_set<bit<16>>(4) vs;", "vs", "")),
        "t.p4:5:108: `vs` is not a value"
    );
}

/// A user extern no architecture implements is a C extern (`--extern-c`): called in an expression or as a
/// statement, listed once in `c_externs`; `out` parameters, stacks and struct results are refused.
#[test]
fn externs_implemented_in_c() {
    let with = |decls: &str, body: &str| {
        control(body).replace("control C(", &format!("{decls}\ncontrol C("))
    };
    let c = ok(&with(
        "extern bool seen(in E e, in bit<8> salt);\nextern void note(in H h);",
        "apply { if (seen(h.e, 1)) { note(h); } note(h); }",
    ));
    assert_eq!(c.c_externs, vec!["seen".to_string(), "note".to_string()]);
    let Stmt::If { cond, then, .. } = &c.control.apply[0] else {
        panic!("{:?}", c.control.apply);
    };
    assert!(
        matches!(&cond.kind, ExprKind::CExtern { name, args } if name == "seen" && args.len() == 2)
    );
    assert!(
        matches!(&then[0], Stmt::Eval(e) if matches!(&e.kind, ExprKind::CExtern { name, .. } if name == "note"))
    );
    assert_eq!(
        fails(&with("extern void f(out bit<8> x);", "apply { bit<8> v; f(v); }")),
        "t.p4:7:26: unsupported construct: `out` and `inout` parameters of an extern implemented in C"
    );
    assert_eq!(
        fails(&with("extern E f();", "apply { h.e = f(); }")),
        "t.p4:7:10: unsupported construct: a C extern returning E"
    );
    assert_eq!(
        fails(&with(
            "extern bool f(in M[4] m);",
            "apply { if (f(h.m)) { exit; } }"
        )),
        "t.p4:7:18: invalid parameter type M[4] of a C extern"
    );
}

/// A parser instance inside a parser instance is inlined too (its states named `outer$inner$state`); a parser that
/// instantiates itself, or instances that double the states at every level, are refused with one error.
#[test]
fn nested_parser_instances() {
    let with = |parsers: &str, top: &str| {
        control("apply { }").replace(
            "parser P(packet_in p, out H h) { state start { p.extract(h.e); transition accept; } }",
            &format!("{parsers}\nparser P(packet_in p, out H h) {{ {top} }}"),
        )
    };
    let inner =
        "parser I(packet_in p, out E e) { state start { p.extract(e); transition accept; } }";
    let outer = "parser O(packet_in p, out E e) { I() i; state start { i.apply(p, e); transition accept; } }";
    let c = ok(&with(
        &format!("{inner}\n{outer}"),
        "O() o; state start { o.apply(p, h.e); transition accept; }",
    ));
    let names: Vec<&str> = c.parser.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["start", "o$start", "o$i$start", "o$start$1", "start$1"]
    );
    let selfish = "parser R(packet_in p, out E e) { R() r; state start { r.apply(p, e); transition accept; } }";
    let e = fails(&with(
        selfish,
        "R() r; state start { r.apply(p, h.e); transition accept; }",
    ));
    assert!(
        e.ends_with("parser instances nest deeper than 32 levels"),
        "{e}"
    );
    let mut chain =
        String::from("parser L0(packet_in p, out E e) { state start { transition accept; } }\n");
    for k in 1..=20 {
        chain += &format!(
            "parser L{k}(packet_in p, out E e) {{ L{}() a; state start {{ a.apply(p, e); a.apply(p, e); transition accept; }} }}\n",
            k - 1
        );
    }
    let e = fails(&with(
        &chain,
        "L20() l; state start { l.apply(p, h.e); transition accept; }",
    ));
    assert!(
        e.ends_with("parser instances expand to more than 65536 states"),
        "{e}"
    );
}
