//! STF scripts: the grammar and its errors, the map entries of each table kind (docs/p4.md), and the matching of
//! output packets against expectations.

use hwxdp_p4::ir::{
    Action, Arch, Checked, ConstEntry, Control, Counter, Expr, ExprKind, KeysetElem, Local,
    MatchKind, Parser, Table, TableImpl, TableKey, Ty, ValueSet,
};
use hwxdp_p4::stf::{
    parse, CmpOp, Command, CountKind, Encoder, KeyValue, MapWrite, Matcher, Pattern,
};
use hwxdp_p4::{FileId, SourceMap, Span};

const SPAN: Span = Span {
    file: FileId(0),
    lo: 0,
    hi: 0,
};

fn key(name: &str, kind: MatchKind, width: u32) -> TableKey {
    TableKey {
        name: name.to_string(),
        expr: Expr {
            kind: ExprKind::Const(0),
            ty: Ty::Bit(width),
            span: SPAN,
        },
        kind,
        width,
        annotated: None,
    }
}

fn table(
    name: &str,
    keys: Vec<TableKey>,
    actions: Vec<usize>,
    size: u32,
    implementation: TableImpl,
) -> Table {
    Table {
        name: name.to_string(),
        keys,
        actions,
        default_action: (0, vec![]),
        default_is_const: false,
        entries: vec![],
        bindings: vec![],
        size,
        implementation,
        annotated: None,
        span: SPAN,
    }
}

/// Actions NoAction, set_port(bit<9> port), set_nhop(bit<48> mac, bit<9> port), drop(); a table of each kind.
fn program() -> Checked {
    let local = |name: &str, w: u32| Local {
        name: name.to_string(),
        ty: Ty::Bit(w),
        span: SPAN,
    };
    let locals = vec![local("port", 9), local("mac", 48), local("port", 9)];
    let action = |name: &str, params: Vec<usize>| Action {
        name: name.to_string(),
        params,
        body: vec![],
        annotated: None,
        span: SPAN,
    };
    let actions = vec![
        action("NoAction", vec![]),
        action("set_port", vec![0]),
        action("set_nhop", vec![1, 2]),
        action("drop", vec![]),
    ];
    let mut konst = table(
        "konst",
        vec![key("hd.eth.type", MatchKind::Exact, 16)],
        vec![3, 0],
        4,
        TableImpl::Default,
    );
    konst.entries.push(ConstEntry {
        keys: vec![KeysetElem::Value(0x800)],
        action: 3,
        args: vec![],
    });
    let mut keyless = table("keyless", vec![], vec![0, 3], 1, TableImpl::Default);
    keyless.default_is_const = true;
    let tables = vec![
        table(
            "fwd",
            vec![key("hd.eth.dstAddr", MatchKind::Exact, 48)],
            vec![1, 3, 0],
            64,
            TableImpl::Default,
        ),
        table(
            "arr",
            vec![key("hd.ip.ttl", MatchKind::Exact, 8)],
            vec![3, 1],
            16,
            TableImpl::Array,
        ),
        table(
            "route",
            vec![
                key("hd.ip.dstAddr", MatchKind::Lpm, 12),
                key("hd.vlan.vid", MatchKind::Exact, 12),
            ],
            vec![2, 3],
            64,
            TableImpl::Default,
        ),
        table(
            "acl",
            vec![
                key("hd.ip.srcAddr", MatchKind::Ternary, 32),
                key("hd.ip.protocol", MatchKind::Exact, 8),
                key("hd.ip.dstAddr", MatchKind::Lpm, 16),
            ],
            vec![0, 1],
            2,
            TableImpl::Default,
        ),
        konst,
        keyless,
    ];
    Checked {
        arch: Arch::Xdp,
        headers: vec![],
        structs: vec![],
        enums: vec![],
        errors: vec![],
        headers_ty: 0,
        locals,
        parser: Parser {
            name: "prs".into(),
            states: vec![],
            value_sets: vec![ValueSet {
                name: "pairs".into(),
                fields: vec![("field0".into(), 16), ("field1".into(), 4)],
                size: 4,
                annotated: Some("prs.tagged".into()),
                span: SPAN,
            }],
        },
        control: Control {
            name: "pipe".into(),
            actions,
            tables,
            counters: vec![Counter {
                name: "pkts".into(),
                size: 8,
                sparse: false,
            }],
            apply: vec![],
        },
        deparser: vec![],
        c_externs: vec![],
        sources: SourceMap::default(),
    }
}

fn one(text: &str) -> Command {
    let mut script = parse("t.stf", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(script.len(), 1, "{script:?}");
    script.remove(0).1
}

fn parse_err(text: &str) -> String {
    parse("test.stf", text)
        .expect_err("should not parse")
        .to_string()
}

#[test]
fn packets_and_expectations() {
    let script = parse(
        "t.stf",
        "# c\n\npacket 3 00 11 2233 # tail\nexpect 2 00*1 $\nEXPECT 4\nwait\n",
    )
    .unwrap();
    assert_eq!(
        script,
        vec![
            (
                3,
                Command::Packet {
                    port: 3,
                    data: vec![0x00, 0x11, 0x22, 0x33]
                }
            ),
            (
                4,
                Command::Expect {
                    port: 2,
                    pattern: Some(Pattern {
                        nibbles: vec![Some(0), Some(0), None, Some(1)],
                        exact: true
                    })
                }
            ),
            (
                5,
                Command::Expect {
                    port: 4,
                    pattern: None
                }
            ),
            (6, Command::Wait),
        ]
    );
}

#[test]
fn a_multi_byte_space_before_the_action_is_a_separator_not_a_panic() {
    // Found by the stf fuzz target: U+00A0 (two bytes in UTF-8) before the action name made the parser slice the
    // line one byte into the character.
    let c = one("add fwd dport:22\u{a0}drop()");
    assert!(
        matches!(&c, Command::Add { table, action, .. } if table == "fwd" && action.as_ref().is_some_and(|a| a.name == "drop")),
        "{c:?}"
    );
}

#[test]
fn a_multi_byte_character_where_packets_or_bytes_would_end_is_an_error_not_a_panic() {
    // Found by the stf fuzz target: `packet` then a two-byte letter put byte 7 inside the letter.
    let e = parse_err("check_counter c(0) packet\u{41f} == 1");
    assert!(e.contains("check_counter") || e.contains("line 1"), "{e}");
}

#[test]
fn add_with_priority_masks_prefixes_and_qualified_names() {
    let c = one("add pipe.acl 7 srcAddr:0x0a00****  protocol : 6 dstAddr:0xc0a8/12 pipe.set_port(port: 0b101)");
    assert_eq!(
        c,
        Command::Add {
            table: "pipe.acl".into(),
            priority: Some(7),
            keys: vec![
                (
                    "srcAddr".into(),
                    KeyValue::Value {
                        value: 0x0a00_0000,
                        dont_care: 0xffff
                    }
                ),
                (
                    "protocol".into(),
                    KeyValue::Value {
                        value: 6,
                        dont_care: 0
                    }
                ),
                (
                    "dstAddr".into(),
                    KeyValue::Prefix {
                        value: 0xc0a8,
                        len: 12
                    }
                ),
            ],
            action: Some(hwxdp_p4::stf::ActionCall {
                name: "pipe.set_port".into(),
                args: vec![("port".into(), 5)]
            }),
        }
    );
    let Command::Add { keys, .. } = one("add acl hd.ip.srcAddr:10&&&0xff drop()") else {
        panic!()
    };
    assert_eq!(
        keys[0].1,
        KeyValue::Masked {
            value: 10,
            mask: 0xff
        }
    );
    assert_eq!(
        one("setdefault fwd drop()"),
        Command::SetDefault {
            table: "fwd".into(),
            action: hwxdp_p4::stf::ActionCall {
                name: "drop".into(),
                args: vec![]
            }
        }
    );
}

#[test]
fn check_counter_forms() {
    assert_eq!(
        one("check_counter pkts(3) packets == 2"),
        Command::CheckCounter {
            counter: "pkts".into(),
            index: 3,
            kind: Some(CountKind::Packets),
            op: CmpOp::Eq,
            value: 2
        }
    );
    assert_eq!(
        one("check_counter pipe.pkts(0x1) >= 10"),
        Command::CheckCounter {
            counter: "pipe.pkts".into(),
            index: 1,
            kind: None,
            op: CmpOp::Ge,
            value: 10
        }
    );
    let Command::CheckCounter { op, kind, .. } = one("check_counter c(0) bytes<5") else {
        panic!()
    };
    assert_eq!((op, kind), (CmpOp::Lt, Some(CountKind::Bytes)));
    assert!(CmpOp::Ne.holds(1, 2) && !CmpOp::Gt.holds(2, 2) && CmpOp::Le.holds(2, 2));
}

#[test]
fn grammar_errors_name_the_line() {
    assert_eq!(
        parse_err("\n\nfrobnicate 1\n"),
        "test.stf:3: unknown command `frobnicate`"
    );
    assert_eq!(
        parse_err("packet 1 0g\n"),
        "test.stf:1: invalid character `g` in packet data"
    );
    assert_eq!(
        parse_err("packet 1 001\n"),
        "test.stf:1: packet data has an odd number of hex digits"
    );
    assert_eq!(
        parse_err("packet x 00\n"),
        "test.stf:1: bad port `x`: expected a decimal number"
    );
    assert_eq!(
        parse_err("packet 1 0*\n"),
        "test.stf:1: packet data cannot have `*` or `$`"
    );
    assert_eq!(
        parse_err("expect 1 00 $ 11\n"),
        "test.stf:1: `$` must come last"
    );
    assert_eq!(
        parse_err("# x\nadd fwd dstAddr:1 drop\n"),
        "test.stf:2: add needs an action with arguments in parentheses, `act(...)`"
    );
    assert_eq!(
        parse_err("add fwd dstAddr:1 drop() = A\n"),
        "test.stf:1: entry handles (`= NAME`) are not supported"
    );
    assert_eq!(
        parse_err("add fwd dstAddr=1 drop()\n"),
        "test.stf:1: expected `key:VALUE`, found `dstAddr=1`"
    );
    assert_eq!(
        parse_err("add fwd dstAddr:0xZZ drop()\n"),
        "test.stf:1: bad number `0xZZ`"
    );
    assert!(
        parse_err("add t k:0x1ffffffffffffffffffffffffffffffff a()\n")
            .contains("does not fit in 128 bits")
    );
    assert_eq!(parse_err("check_counter c(1) 3\n"), "test.stf:1: expected `check_counter NAME(INDEX) [packets|bytes] OP NUMBER`: missing comparison");
    assert_eq!(
        parse_err("wait 3\n"),
        "test.stf:1: unexpected `3` after wait"
    );
}

fn encode(text: &str) -> Result<MapWrite, String> {
    let p = program();
    let mut enc = Encoder::new(&p, "test.stf");
    let mut last = Err("nothing".to_string());
    for (line, c) in parse("test.stf", text).map_err(|e| e.to_string())? {
        last = enc.encode(line, &c).map_err(|e| e.to_string());
        last.as_ref().map_err(Clone::clone)?;
    }
    last
}

#[test]
fn hash_entry_is_key_bytes_and_action_value() {
    let w = encode("add fwd dstAddr:0x0a0b0c0d0e0f pipe.set_port(port:0x1ff)").unwrap();
    assert_eq!(w.map, "fwd");
    assert_eq!(w.key, vec![0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
    // action 0 (position in fwd's list), port 0x1ff in 2 bytes; the largest block (set_port) is 2 bytes.
    assert_eq!(w.value, vec![0, 0, 0, 0, 0x01, 0xff]);
    let w = encode("add fwd hd.eth.dstAddr:1 drop()").unwrap();
    assert_eq!(w.value, vec![1, 0, 0, 0, 0, 0]);
}

fn encode_in(p: &Checked, text: &str) -> Result<MapWrite, String> {
    let mut enc = Encoder::new(p, "test.stf");
    let (line, c) = parse("test.stf", text)
        .map_err(|e| e.to_string())?
        .remove(0);
    enc.encode(line, &c).map_err(|e| e.to_string())
}

/// p4c-ebpf's generated STF tests name tables and actions `CONTROL_NAME`, key fields `key.fieldN` by position,
/// `NoAction` `_NoAction`, and leave out arguments they want zero.
#[test]
fn names_as_p4c_ebpf_spells_them_and_zero_filled_arguments() {
    let w = encode("add pipe_fwd 0 key.field0:0x0a0b0c0d0e0f pipe_set_port()").unwrap();
    assert_eq!((w.map.as_str(), w.value), ("fwd", vec![0, 0, 0, 0, 0, 0]));
    let w = encode("add fwd field0:1 _NoAction()").unwrap();
    assert_eq!(w.value, vec![2, 0, 0, 0, 0, 0]);
    let w = encode("setdefault pipe.fwd pipe_NoAction()").unwrap();
    assert_eq!(w.value, vec![1, 0, 0, 0, 2, 0, 0, 0, 0, 0]);
    let w = encode("add route key.field1:0x123 field0:0xabc/8 pipe_set_nhop(port:7)").unwrap();
    assert_eq!(w.value[4..], [0, 0, 0, 0, 0, 0, 0, 7]);
    assert_eq!(
        encode("add fwd key.field1:1 drop()").unwrap_err(),
        "test.stf:1: table `fwd` has no key field `key.field1`"
    );
}

/// `@name` annotations of tables, actions and keys are names an STF line may use, bare or qualified; a key
/// expression is also named by its text without spaces.
#[test]
fn annotated_names_and_key_expressions() {
    let mut p = program();
    p.control.tables[0].annotated = Some("forward".into());
    p.control.tables[0].keys[0].annotated = Some("mac".into());
    p.control.tables[0].keys[0].name = "hd.eth.dstAddr + 1".into();
    p.control.actions[1].annotated = Some("to_port".into());
    for text in [
        "add forward mac:5 to_port(port:3)",
        "add pipe_forward key.mac:5 pipe.to_port(port:3)",
        "add pipe.forward hd.eth.dstAddr+1:5 set_port(port:3)",
        "add fwd dstAddr+1:5 pipe_set_port(port:3)",
    ] {
        let w = encode_in(&p, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!((w.key[5], w.value[5]), (5, 3), "{text}");
    }
}

#[test]
fn array_entry_is_indexed_by_the_key() {
    let w = encode("add arr ttl:9 set_port(port:3)").unwrap();
    assert_eq!(
        (w.map.as_str(), w.key, w.value),
        ("arr", vec![9, 0, 0, 0], vec![1, 0, 0, 0, 0, 3])
    );
    assert_eq!(
        encode("add arr ttl:16 drop()").unwrap_err(),
        "test.stf:1: index 16 is out of range: `arr` has 16 entries"
    );
}

#[test]
fn lpm_entry_counts_exact_bytes_and_padding() {
    // Exact vid (12 bits, 2 bytes) first, then the 12-bit lpm field (4 padding bits in front): 16 + 4 + 8.
    let w =
        encode("add route dstAddr:0xabc/8 vid:0x123 set_nhop(mac:0x001122334455, port:7)").unwrap();
    assert_eq!(w.key, vec![28, 0, 0, 0, 0x01, 0x23, 0x0a, 0xb0]);
    assert_eq!(
        w.value,
        vec![0, 0, 0, 0, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 7]
    );
    let w = encode("add route dstAddr:0xabc vid:1 drop()").unwrap();
    assert_eq!(w.key, vec![28 + 4, 0, 0, 0, 0, 1, 0x0a, 0xbc]);
    assert_eq!(w.value, [vec![1, 0, 0, 0], vec![0; 8]].concat());
    let w = encode("add route vid:1 drop()").unwrap();
    assert_eq!(w.key[0], 20, "a missing lpm field is /0");
}

#[test]
fn ternary_slots_rank_masks_and_priorities() {
    let p = program();
    let mut enc = Encoder::new(&p, "test.stf");
    let script = parse(
        "test.stf",
        "add acl srcAddr:0x0a0000ff&&&0xff00ff00 protocol:6 set_port(port:1)\nadd acl 5 srcAddr:0x0a****** protocol:17 dstAddr:0xc000/2 NoAction()\nadd acl protocol:1 NoAction()\n",
    )
    .unwrap();
    let w0 = enc.encode(1, &script[0].1).unwrap();
    assert_eq!(w0.key, vec![0, 0, 0, 0]);
    let rank0 = (1u32 << 16 | 0xffff).to_le_bytes();
    let expect0 = [
        &rank0[..],
        &[0x0a, 0x00, 0x00, 0x00, 6, 0, 0], // value & mask; protocol; dstAddr (missing: 0)
        &[0xff, 0x00, 0xff, 0x00, 0xff, 0, 0], // masks: srcAddr, protocol (exact: full), dstAddr (none)
        &[1, 0, 0, 0, 0, 1],                   // set_port (position 1), port 1
    ]
    .concat();
    assert_eq!(w0.value, expect0);
    let w1 = enc.encode(2, &script[1].1).unwrap();
    assert_eq!(w1.key, vec![1, 0, 0, 0]);
    assert_eq!(w1.value[..4], (6u32 << 16 | 0xfffe).to_le_bytes());
    assert_eq!(w1.value[4..11], [0x0a, 0, 0, 0, 17, 0xc0, 0x00]);
    assert_eq!(w1.value[11..18], [0xff, 0, 0, 0, 0xff, 0xc0, 0x00]);
    // Priority 5 beats the entry without one; the first of two equal priorities beats the later.
    let rank = |w: &MapWrite| u32::from_le_bytes(w.value[..4].try_into().unwrap());
    assert!(rank(&w1) > rank(&w0));
    assert_eq!(
        enc.encode(3, &script[2].1).unwrap_err().to_string(),
        "test.stf:3: table `acl` is full (2 entries)"
    );
}

#[test]
fn ternary_rank_orders_by_priority_then_addition() {
    let p = program();
    let mut enc = Encoder::new(&p, "t.stf");
    let rank = |w: MapWrite| u32::from_le_bytes(w.value[..4].try_into().unwrap());
    let a = rank(
        enc.encode(1, &one("add acl 2 protocol:1 NoAction()"))
            .unwrap(),
    );
    let b = rank(
        enc.encode(2, &one("add acl 2 protocol:2 NoAction()"))
            .unwrap(),
    );
    assert!(a > b, "earlier entry of equal priority wins");
    let mut enc = Encoder::new(&p, "t.stf");
    let low = rank(
        enc.encode(1, &one("add acl 1 protocol:1 NoAction()"))
            .unwrap(),
    );
    let high = rank(
        enc.encode(2, &one("add acl 100 protocol:1 NoAction()"))
            .unwrap(),
    );
    assert!(
        high > low && low != 0,
        "numerically higher STF priority wins"
    );
    assert_eq!(
        enc.encode(3, &one("add acl 65535 protocol:1 NoAction()"))
            .unwrap_err()
            .to_string(),
        "t.stf:3: priority 65535 is above the highest supported, 65534"
    );
}

#[test]
fn default_action_map() {
    let w = encode("setdefault pipe.fwd pipe.set_port(port:2)").unwrap();
    assert_eq!((w.map.as_str(), w.key), ("fwd_defact", vec![0, 0, 0, 0]));
    assert_eq!(w.value, vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    let w = encode("setdefault route drop()").unwrap();
    assert_eq!(w.value, [vec![1, 0, 0, 0, 1, 0, 0, 0], vec![0; 8]].concat());
}

#[test]
fn encoding_errors_name_the_line() {
    let cases = [
        ("add foo x:1 drop()", "unknown table `foo`"),
        (
            "add fwd dstAddr:1 forward()",
            "table `fwd` has no action `forward`",
        ),
        (
            "add fwd dstAddr:1 set_nhop(mac:1, port:1)",
            "table `fwd` has no action `set_nhop`",
        ),
        (
            "add fwd dstAddr:0x1000000000000 drop()",
            "value 0x1000000000000 of `dstAddr` does not fit in 48 bits",
        ),
        (
            "add fwd dstAddr:1 set_port(port:512)",
            "value 0x200 of `port` does not fit in 9 bits",
        ),
        (
            "add fwd dstAddr:1 set_port(port:1, vlan:2)",
            "action `set_port` has no parameter `vlan`",
        ),
        (
            "add fwd srcAddr:1 drop()",
            "table `fwd` has no key field `srcAddr`",
        ),
        ("add fwd drop()", "missing key field `hd.eth.dstAddr`"),
        (
            "add fwd dstAddr:1 dstAddr:2 drop()",
            "key field `dstAddr` is given twice",
        ),
        (
            "add fwd dstAddr:0x**&&&0 drop()",
            "`0x**&&&0`: `*` digits cannot be combined with `&&&`",
        ),
        (
            "add fwd dstAddr:0x0a** drop()",
            "key `hd.eth.dstAddr` is exact: it cannot have a mask, prefix or `*` digits",
        ),
        (
            "add acl dstAddr:0xff00&&&0xf0f0 drop()",
            "table `acl` has no action `drop`",
        ),
        (
            "add acl protocol:1 dstAddr:0xff00&&&0xf0f0 NoAction()",
            "key `hd.ip.dstAddr` is lpm: its mask must be a prefix",
        ),
        (
            "add route dstAddr:1/13 vid:1 drop()",
            "prefix length 13 is longer than `dstAddr` (12 bits)",
        ),
        (
            "add konst type:1 drop()",
            "table `konst` has const entries: it cannot be changed",
        ),
        (
            "add keyless drop()",
            "table `keyless` has no key: use setdefault",
        ),
        (
            "setdefault keyless drop()",
            "table `keyless` has a const default_action",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(
            encode(text).unwrap_err(),
            format!("test.stf:1: {message}"),
            "{text}"
        );
    }
    let p = program();
    let enc = Encoder::new(&p, "test.stf");
    let c = enc.counter(4, "pipe.pkts", 7).unwrap();
    assert_eq!(
        (c.map.as_str(), c.key, c.sparse),
        ("pkts", vec![7, 0, 0, 0], false)
    );
    assert_eq!(
        enc.counter(5, "pkts", 8).unwrap_err().to_string(),
        "test.stf:5: index 8 is out of range: `pkts` has 8 counters"
    );
    assert_eq!(
        enc.counter(6, "bytes", 0).unwrap_err().to_string(),
        "test.stf:6: unknown counter `bytes`"
    );
}

fn pattern(text: &str) -> Pattern {
    match one(&format!("expect 1 {text}")) {
        Command::Expect {
            pattern: Some(p), ..
        } => p,
        other => panic!("{other:?}"),
    }
}

#[test]
fn wildcards_prefixes_and_exact_lengths() {
    let data = [0xde, 0xad, 0xbe, 0xef];
    assert!(pattern("dead").matches(&data), "prefix match");
    assert!(pattern("d*a* be ef $").matches(&data));
    assert!(pattern("****").matches(&data));
    assert!(!pattern("dead $").matches(&data), "exact length");
    assert!(
        !pattern("deadbeef00").matches(&data),
        "longer than the packet"
    );
    assert!(!pattern("deae").matches(&data));
    assert!(pattern("d").matches(&data), "odd nibble count");
    assert_eq!(pattern("de*d").to_hex(), "de *d");
    assert_eq!(pattern("dead $").to_hex(), "de ad $");
    assert_eq!(
        pattern("00ad0000").differing_bytes(&data, 16),
        vec![0, 2, 3]
    );
}

#[test]
fn matcher_reports_mismatches_missing_and_unexpected_packets() {
    let mut m = Matcher::new("t.stf");
    m.expect(1, 2, Some(pattern("aabb")));
    m.expect(2, 2, Some(pattern("cc $")));
    m.expect(3, 3, None);
    m.expect(4, 5, Some(pattern("00")));
    m.output(10, 2, &[0xaa, 0xbb, 0xcc]);
    m.output(11, 2, &[0xcc, 0xdd]);
    m.output(12, 3, &[1, 2, 3]);
    m.output(13, 4, &[9]);
    let (met, failures) = m.finish();
    assert_eq!(met, 2);
    let text: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        vec![
            "t.stf:2: packet out on port 2 (from line 11) does not match\n    expected: cc $\n    got:      cc dd\n    length: expected 1, got 2",
            "t.stf:4: expected packet on port 5 never came\n    expected: 00",
            "t.stf:13: unexpected packet out on port 4 (1 bytes)\n    got:      09",
        ]
    );
    let mut m = Matcher::new("t.stf");
    m.expect(1, 1, Some(pattern("0102")));
    m.output(2, 1, &[0x01, 0x03]);
    let (_, failures) = m.finish();
    assert_eq!(failures[0].detail[2], "differing bytes at offsets 1");
}

#[test]
fn every_bundled_script_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/p4");
    let mut parsed = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/p4") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_some_and(|e| e == "stf") {
            let text = std::fs::read_to_string(&path).expect("readable script");
            let script =
                parse(&path.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                script
                    .iter()
                    .any(|(_, c)| matches!(c, Command::Packet { .. })),
                "{}",
                path.display()
            );
            parsed += 1;
        }
    }
    assert!(parsed > 0, "no STF scripts in {}", dir.display());
}

/// `add SET key:VALUE ...` without an action fills a value set of the parser: its map key is the fields packed
/// big-endian (a 4-bit field in one byte), its value a zero `u32`; the set is named as written, qualified by the
/// parser, or by its `@name` with dots as p4c-ebpf's external names write them.
#[test]
fn value_set_elements() {
    for add in [
        "add pairs field0:0x88b5 field1:0x7",
        "add prs.pairs key.field1:7 key.field0:0x88b5",
        "add prs_tagged field0:0x88b5 field1:0x7",
    ] {
        let w = encode(add).unwrap_or_else(|e| panic!("{add}: {e}"));
        assert_eq!(
            (w.map.as_str(), w.key, w.value),
            ("pairs", vec![0x88, 0xb5, 0x07], vec![0; 4]),
            "{add}"
        );
    }
    let e = |text| encode(text).unwrap_err();
    assert_eq!(
        e("add pairs field0:1 field1:0x10"),
        "test.stf:1: value 0x10 of `field1` does not fit in 4 bits"
    );
    assert_eq!(
        e("add pairs field0:1"),
        "test.stf:1: missing key field `field1`"
    );
    assert_eq!(
        e("add pairs field0:1 field2:1 field1:1"),
        "test.stf:1: value_set `pairs` has no field `field2`"
    );
    assert_eq!(e("add pairs field0:1&&&0xff field1:1"), "test.stf:1: field `field0` of value_set `pairs` is exact: it cannot have a mask, prefix or `*` digits");
    assert_eq!(
        e("add pairs field0:1 field1:1 drop()"),
        "test.stf:1: value_set `pairs` takes no action"
    );
    assert_eq!(
        e("add fwd dstAddr:1"),
        "test.stf:1: add needs an action with arguments in parentheses, `act(...)`"
    );
    assert_eq!(
        e("add nothing field0:1"),
        "test.stf:1: unknown table `nothing`"
    );
}
