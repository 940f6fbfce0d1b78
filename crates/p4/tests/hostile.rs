//! Hostile inputs of issue 30, generated here rather than committed: long chains of operators and postfixes, macros
//! and includes that double with every line, structs that nest or double, long chains of copies. Each ends in one
//! located diagnostic (or, where the input is legal, a program), in time bounded by a small input of the same shape;
//! none exhausts the stack or the memory.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use hwxdp_p4::{check, codegen, parse_file, parse_str, pretty};

const HEADERS: &str = "#include <xdp_model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type_; }
struct headers_t { eth_t eth; }
";

/// A program whose parser extracts one Ethernet header and whose control's `apply` block is `apply`. The `apply`
/// text starts on line 6.
fn program(apply: &str) -> String {
    format!(
        "{HEADERS}parser P(packet_in pkt, out headers_t hd) {{ state start {{ pkt.extract(hd.eth); transition accept; }} }}
control C(inout headers_t hd, in xdp_input xin, out xdp_output xout) {{ apply {{
{apply}
}} }}
control D(in headers_t hd, packet_out pkt) {{ apply {{ pkt.emit(hd.eth); }} }}
xdp(P(), C(), D()) main;
"
    )
}

/// Parses, checks and generates C for `text`; the diagnostic as text on failure.
fn front(text: &str) -> Result<String, String> {
    let program = parse_str("hostile.p4", text).map_err(|e| e.to_string())?;
    // The pretty printer walks the same tree.
    let _ = pretty(&program);
    let checked = check(&program).map_err(|e| e.to_string())?;
    codegen::generate(&checked, &codegen::Options::default()).map_err(|e| e.to_string())
}

/// Held by every test of this file, so that they do not slow each other's measurements down.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The fastest of three runs of `f`.
fn time(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("three runs")
}

/// Asserts that `big` takes at most `ratio` times as long as `small` (on the small input of the same shape).
fn assert_ratio(what: &str, mut big: impl FnMut(), mut small: impl FnMut(), ratio: u32) {
    let (big, small) = (time(&mut big), time(&mut small));
    assert!(
        big <= small * ratio,
        "{what}: {big:?} against {small:?} for the small input, more than {ratio}x"
    );
}

/// The one-line error of `text`, asserting that it is one line.
fn error_of(text: &str) -> String {
    let e = front(text).expect_err("refused");
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

fn operator_chain(n: usize) -> String {
    program(&format!(
        "hd.eth.type_ = hd.eth.type_{};",
        " + 16w1".repeat(n)
    ))
}

#[test]
fn a_chain_of_six_thousand_operators_is_one_located_error() {
    let _serial = serial();
    let big = operator_chain(6000);
    assert!(big.len() > 42_000);
    let e = error_of(&big);
    assert!(
        e.starts_with("hostile.p4:6:") && e.ends_with("nesting deeper than 128 levels"),
        "{e}"
    );
    let small = operator_chain(60);
    let c = front(&small).expect("60 operators compile");
    assert!(c.contains("SEC(\"xdp\")"));
    assert_ratio(
        "6000 operators",
        || drop(front(&big)),
        || drop(front(&small)),
        50,
    );
}

#[test]
fn chains_of_every_operator_and_of_conditions_are_bounded() {
    let _serial = serial();
    for op in ["-", "*", "|", "&", "^", "<<", ">>", "++", "|+|", "|-|"] {
        let text = program(&format!(
            "hd.eth.type_ = hd.eth.type_{};",
            format!(" {op} 16w1").repeat(20_000)
        ));
        let e = error_of(&text);
        assert!(e.ends_with("nesting deeper than 128 levels"), "{op}: {e}");
    }
    let conds = program(&format!(
        "if (hd.eth.type_ == 1{}) {{ hd.eth.type_ = 2; }}",
        " || hd.eth.type_ == 1".repeat(20_000)
    ));
    assert!(error_of(&conds).ends_with("nesting deeper than 128 levels"));
    // Chains near the limit still go through every walk.
    let legal = program(&format!(
        "if (hd.eth.type_ == 1{}) {{ hd.eth.type_ = 2; }}",
        " || hd.eth.type_ == 1".repeat(50)
    ));
    front(&legal).expect("50 conditions compile");
    front(&operator_chain(100)).expect("100 operators compile");
}

#[test]
fn a_chain_of_twenty_thousand_slices_is_one_located_error() {
    let _serial = serial();
    let slices = |n: usize| {
        program(&format!(
            "hd.eth.type_ = hd.eth.type_{};",
            "[15:0]".repeat(n)
        ))
    };
    let big = slices(20_000);
    let e = error_of(&big);
    assert!(
        e.starts_with("hostile.p4:6:") && e.ends_with("nesting deeper than 128 levels"),
        "{e}"
    );
    front(&slices(20)).expect("20 slices compile");
    // Lexing is linear and most of the time here; 2000 slices are refused at the same place.
    let small = slices(2000);
    assert!(error_of(&small).ends_with("nesting deeper than 128 levels"));
    assert_ratio(
        "20000 slices",
        || drop(front(&big)),
        || drop(front(&small)),
        50,
    );
    // Member, index and call chains are postfixes too.
    let members = program(&format!("hd{}.type_ = 1;", ".eth".repeat(20_000)));
    assert!(error_of(&members).ends_with("nesting deeper than 128 levels"));
    let calls = program(&format!("hd.eth.setValid(){};", "()".repeat(20_000)));
    assert!(error_of(&calls).ends_with("nesting deeper than 128 levels"));
}

#[test]
fn a_chain_of_stack_dimensions_is_one_located_error() {
    let _serial = serial();
    let text = format!("{HEADERS}typedef eth_t{} T;", "[1]".repeat(20_000));
    let e = error_of(&text);
    assert!(
        e.starts_with("hostile.p4:4:") && e.ends_with("nesting deeper than 128 levels"),
        "{e}"
    );
}

/// `A_0` is one empty statement; `A_i` is `A_{i-1}` twice, so `A_levels` is 2^levels statements.
fn macro_bomb(levels: usize) -> String {
    let mut defines = String::from("#define A_0 ;\n");
    for i in 1..=levels {
        defines.push_str(&format!("#define A_{i} A_{} A_{}\n", i - 1, i - 1));
    }
    format!("{defines}{}", program(&format!("A_{levels}")))
}

#[test]
fn a_macro_that_doubles_thirty_one_times_is_one_error_naming_it() {
    let _serial = serial();
    let big = macro_bomb(31);
    let e = parse_str("hostile.p4", &big)
        .expect_err("refused")
        .to_string();
    // Line 32 defines A_31; the program's `apply` text starts 6 lines later.
    assert_eq!(
        e,
        "hostile.p4:38:1: macro `A_31` expands past 1048576 tokens"
    );
    let small = macro_bomb(17);
    let program = parse_str("hostile.p4", &small).expect("2^17 statements parse");
    check(&program).expect("and check");
    assert_ratio(
        "macro of 2^31 statements",
        || drop(parse_str("hostile.p4", &big)),
        || drop(parse_str("hostile.p4", &small)),
        50,
    );
    // A long program without macros meets the same limit, as a program.
    let long = program_with_statements(1 << 20);
    let e = parse_str("hostile.p4", &long)
        .expect_err("refused")
        .to_string();
    assert!(e.ends_with("program longer than 1048576 tokens"), "{e}");
}

fn program_with_statements(n: usize) -> String {
    program(&";".repeat(n))
}

#[test]
fn includes_that_double_are_one_error() {
    let _serial = serial();
    let dir = std::env::temp_dir().join(format!("hwxdp-p4-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f0.p4"), "const bit<8> X = 1;\n#undef X\n").unwrap();
    for i in 1..=30 {
        std::fs::write(
            dir.join(format!("f{i}.p4")),
            format!("#include \"f{0}.p4\"\n#include \"f{0}.p4\"\n", i - 1),
        )
        .unwrap();
    }
    let e = parse_file(&dir.join("f30.p4"))
        .expect_err("refused")
        .to_string();
    assert!(e.ends_with("more than 1024 includes at `f0.p4`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn structs_that_nest_or_double_are_one_error_naming_them() {
    let _serial = serial();
    let mut chain = String::from(HEADERS);
    for i in 1..=1000 {
        let inner = if i == 1 {
            "headers_t".to_string()
        } else {
            format!("s{}", i - 1)
        };
        chain.push_str(&format!("struct s{i} {{ {inner} f; }}\n"));
    }
    let e = error_of(&chain);
    assert!(
        e.ends_with("struct `s32` nests structs deeper than 32 levels"),
        "{e}"
    );
    let mut doubling = String::from(HEADERS);
    for i in 1..=30 {
        let inner = if i == 1 {
            "headers_t".to_string()
        } else {
            format!("d{}", i - 1)
        };
        doubling.push_str(&format!("struct d{i} {{ {inner} a; {inner} b; }}\n"));
    }
    let e = error_of(&doubling);
    assert!(
        e.ends_with("struct `d17` holds more than 65536 fields and headers (nested structs and stacks counted in full)"),
        "{e}"
    );
}

/// `n` locals, each assigned the next one (`v0 = v1; v1 = v2; ...`), the first copied into the header: the copies
/// link the locals into one chain for the byte-order analysis.
fn copy_chain(n: usize) -> String {
    let mut apply = String::new();
    for i in 0..n {
        apply.push_str(&format!("bit<16> v{i} = 1;\n"));
    }
    for i in 0..n - 1 {
        apply.push_str(&format!("v{i} = v{};\n", i + 1));
    }
    apply.push_str("hd.eth.type_ = v0;");
    program(&apply)
}

#[test]
fn a_long_chain_of_copies_compiles_in_time_proportional_to_it() {
    let _serial = serial();
    let big = copy_chain(20_000);
    let small = copy_chain(2_000);
    front(&big).expect("20000 copies compile");
    assert_ratio(
        "20000 copies",
        || drop(front(&big)),
        || drop(front(&small)),
        50,
    );
}

/// `#if` conditions nest through `?:` as through parentheses (`1 ? 1 ? ... : 0 : 0` recursed once per `?` without
/// a bound and overflowed the stack, at 20,000 in a test, 200,000 in the release build): both count toward the 128
/// levels.
#[test]
fn a_chain_of_conditional_operators_in_if_is_one_located_error() {
    let _serial = serial();
    let nested = |n: usize| {
        format!(
            "#if {}1{}\n#endif\n{}",
            "1 ? ".repeat(n),
            " : 0".repeat(n),
            program("")
        )
    };
    let e = error_of(&nested(20_000));
    assert!(
        e.starts_with("hostile.p4:1:") && e.ends_with("nesting deeper than 128 levels"),
        "{e}"
    );
    let chained = format!(
        "#if {}1\n#endif\n{}",
        "0 ? 0 : ".repeat(20_000),
        program("")
    );
    assert!(error_of(&chained).ends_with("nesting deeper than 128 levels"));
    front(&nested(100)).expect("100 nested conditions compile");
    let parens = format!(
        "#if {}1{}\n#endif\n{}",
        "(".repeat(120),
        ")".repeat(120),
        program("")
    );
    front(&parens).expect("120 parentheses compile");
}

/// A chain of macros each naming the one before is refused at the expansion depth, and the error says so (it said
/// only "expands without end", as for a macro that names itself).
#[test]
fn a_chain_of_macros_past_the_expansion_depth_names_the_depth() {
    let _serial = serial();
    let mut text = "#define M0 16w1\n".to_string();
    for i in 1..40 {
        text.push_str(&format!("#define M{i} M{}\n", i - 1));
    }
    text.push_str(&program("hd.eth.type_ = M39;"));
    let e = error_of(&text);
    assert!(
        e.ends_with("expands without end (macros inside macros deeper than 32 levels)"),
        "{e}"
    );
    let short: String = text.replace("M39;", "M20;");
    front(&short).expect("a chain of 21 macros expands");
}
