//! Bad rules give one clear error naming the rule's line (and the keyword, the limit).

use hwxdp_dpi::{compile, DpiError, Options};

fn error(text: &str, options: &Options) -> DpiError {
    match compile(text, "test.rules", options) {
        Ok(_) => panic!("the rules are accepted: {text}"),
        Err(err) => err,
    }
}

fn message(text: &str) -> String {
    error(text, &Options::default()).to_string()
}

#[test]
fn an_unsupported_snort_option_names_the_line_and_the_keyword() {
    let text = "# header\n\
                alert tcp any any -> any 80 (msg:\"ok\"; content:\"abc\"; sid:1;)\n\
                alert tcp any any -> any 80 (msg:\"x\"; flow:to_server,established; content:\"a\"; sid:2;)\n";
    let err = error(text, &Options::default());
    assert!(
        matches!(&err, DpiError::Unsupported { line: 3, keyword, .. } if keyword == "flow"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("line 3: unsupported Snort keyword `flow`"),
        "{err}"
    );
}

#[test]
fn snort_header_parts_outside_the_subset_are_refused_by_name() {
    for (rule, keyword) in [
        ("log tcp any any -> any 80 (content:\"a\";)", "log"),
        ("alert icmp any any -> any any (content:\"a\";)", "icmp"),
        (
            "alert tcp $HOME_NET any -> any 80 (content:\"a\";)",
            "$HOME_NET",
        ),
        ("alert tcp any any <> any 80 (content:\"a\";)", "<>"),
        (
            "alert tcp any any -> any [80,443] (content:\"a\";)",
            "[80,443]",
        ),
        ("alert tcp any any -> any 80 (pcre:\"/a/R\";)", "pcre /R"),
        ("alert tcp any any -> any 80 (content:!\"a\";)", "content:!"),
    ] {
        let msg = message(rule);
        assert!(
            msg.contains(&format!("line 1: unsupported Snort keyword `{keyword}`")),
            "{rule}: {msg}"
        );
    }
}

#[test]
fn our_format_errors_name_the_line() {
    assert_eq!(
        message("count tcp content \"a\"\nblock tcp content \"b\""),
        "line 2: unknown action `block` (drop, pass or count)"
    );
    assert!(
        message("drop tcp dport 99999 content \"a\"").starts_with("line 1: `99999` is not a port")
    );
    assert!(message("drop udp name \"x\"").contains("line 1: the rule has no pattern"));
    assert!(message("drop tcp regex \"(unclosed\"").starts_with("line 1: pattern `(unclosed`"));
}

#[test]
fn patterns_a_scan_cannot_answer_are_refused() {
    assert!(message("drop tcp regex \"a*\"").contains("matches the empty string"));
    assert!(message("drop tcp regex \"abc$\"").contains("only the `^` anchor"));
    assert!(message("drop tcp regex \"\\bword\"").contains("only the `^` anchor"));
    assert!(message("drop tcp in header \"Host\" regex \"^evil\"")
        .contains("request-line or header scope"));
}

#[test]
fn a_dfa_over_the_size_limit_names_the_rule() {
    let text = "count tcp content \"fine\"\n\
                drop tcp regex \"a[ab]{24}\" name \"exponential\"\n\
                count tcp content \"later\"\n";
    let err = error(text, &Options::default());
    assert!(
        matches!(
            err,
            DpiError::DfaTooBig {
                line: 2,
                alone: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("line 2: the DFA of this rule exceeds the size limit of 1048576 bytes"),
        "{err}"
    );
    // Rules that fit alone but not together: the one that crossed the limit is named, with the rules before it.
    let one = "count tcp regex \"a[ab]{8}\"\n";
    let all = format!("{one}count tcp regex \"b[ab]{{8}}\"\ncount tcp regex \"c[a-z]{{8}}\"\n");
    let limited = |dfa_limit| Options {
        dfa_limit,
        ..Options::default()
    };
    let limit = (10..24)
        .map(|k| 1usize << k)
        .find(|&l| compile(one, "t", &limited(l)).is_ok())
        .expect("one rule fits in 16 MiB");
    match error(&all, &limited(limit)) {
        DpiError::DfaTooBig {
            line, alone: false, ..
        } => assert!(line > 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_payload_limit_the_verifier_would_refuse_is_refused() {
    let text = "drop tcp content \"a\"";
    let over = Options {
        max_payload: 4097,
        ..Options::default()
    };
    let msg = error(text, &over).to_string();
    assert!(
        msg.starts_with("--max-payload 4097: the kernel verifier refuses a scan over 4096 bytes"),
        "{msg}"
    );
    let zero = Options {
        max_payload: 0,
        ..Options::default()
    };
    assert!(error(text, &zero)
        .to_string()
        .starts_with("--max-payload 0:"));
    assert!(compile(
        text,
        "t",
        &Options {
            max_payload: 4096,
            ..Options::default()
        }
    )
    .is_ok());
    // The branch form's chunk is verified once, so it takes the table form's limits; forced on an automaton too big
    // for its code, it is refused.
    let branch = |max_payload| Options {
        max_payload,
        form: Some(hwxdp_dpi::codegen::Form::Branch),
        ..Options::default()
    };
    assert!(compile(text, "t", &branch(4096)).is_ok());
    assert!(error(text, &branch(4097))
        .to_string()
        .starts_with("--max-payload 4097: the kernel verifier refuses a scan over 4096 bytes"));
    let snort = std::fs::read_to_string(format!(
        "{}/../../examples/dpi/snort.rules",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let msg = error(&snort, &branch(1500)).to_string();
    assert!(
        msg.starts_with("--form branch: the fast automaton has 195 live states, more than the 80"),
        "{msg}"
    );
}

#[test]
fn more_patterns_than_mask_bits_are_refused() {
    let text: String = (0..65)
        .map(|i| format!("count udp content \"p{i}\"\n"))
        .collect();
    assert_eq!(
        message(&text),
        "line 65: more than 64 patterns in the rules file (each content or pcre is one)"
    );
}

#[test]
fn an_empty_file_is_refused() {
    assert_eq!(
        message("# nothing\n\n"),
        "no rules: the file has only comments and blank lines"
    );
}

/// Patterns nested past regex-syntax's 250 levels (its parser's bound, so nothing downstream recurses deeper) are
/// one error that quotes the pattern's start, not the whole 200 KB of it.
#[test]
fn a_pattern_nested_a_hundred_thousand_deep_is_refused_by_an_excerpt() {
    let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    for rules in [
        format!("drop tcp regex \"{deep}\""),
        format!("alert tcp any any -> any any (pcre:\"/{deep}/\";)"),
    ] {
        let text = message(&rules);
        assert!(text.contains("nested parentheses"), "{:.300}", text);
        assert!(text.contains("... (200001 characters)"), "{:.300}", text);
        assert!(text.len() < 300, "{} bytes: {:.300}", text.len(), text);
    }
    let short = message("drop tcp regex \"a*\"");
    assert!(short.contains("pattern `a*`"), "{short}");
}
