//! The payloads `hwxdp gen` makes for a dpi object ([`hwxdp_dpi::witness`]), judged by the `regex` crate: every
//! matching payload matches its rule within the scan limit, no near miss or half of a split match does, the payload
//! at the limit matches and the one a byte longer matches only past it; every example rule gets matching payloads,
//! and the rules are embedded in the generated C.

use hwxdp_dpi::witness::{samples, RuleSamples};
use hwxdp_dpi::{Options, Rule, Scope};
use regex::bytes::RegexBuilder;

fn example(name: &str) -> String {
    let path = format!(
        "{}/../../examples/dpi/{name}.rules",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The bytes a rule's patterns are matched against (docs/dpi.md).
fn regions<'a>(scope: &Scope, payload: &'a [u8]) -> Vec<&'a [u8]> {
    let line = |s: &'a [u8]| {
        &s[..s
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap_or(s.len())]
    };
    match scope {
        Scope::Payload => vec![payload],
        Scope::RequestLine => vec![line(payload)],
        Scope::Header(name) => payload
            .split(|&b| b == b'\n')
            .filter(|l| {
                l.len() > name.len()
                    && l[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                    && l[name.len()] == b':'
            })
            .map(|l| line(&l[name.len() + 1..]))
            .collect(),
    }
}

/// What `regex` says: the rule matches the first `limit` bytes of `payload`.
fn matches(rule: &Rule, payload: &[u8], limit: usize) -> bool {
    let window = &payload[..payload.len().min(limit)];
    rule.patterns.iter().all(|p| {
        let re = RegexBuilder::new(&p.to_regex())
            .unicode(false)
            .build()
            .unwrap();
        regions(&rule.scope, window).iter().any(|r| re.is_match(r))
    })
}

fn check(name: &str, limit: usize, seed: u64) -> Vec<RuleSamples> {
    let text = example(name);
    let options = Options {
        max_payload: limit,
        ..Options::default()
    };
    let compiled = hwxdp_dpi::compile(&text, name, &options).expect("the rules compile");
    assert!(compiled.c_source.contains(hwxdp_dpi::embed::SECTION));
    let a = &compiled.automaton;
    let all = samples(a, limit, options.dfa_limit, 6, seed).expect("samples");
    assert_eq!(all.len(), a.rules.len());
    for s in &all {
        let rule = &a.rules[s.rule];
        let what = format!("{name} rule {} (line {})", s.rule, rule.line);
        assert!(
            !s.matching.is_empty(),
            "{what}: no matching payload: {:?}",
            s.notes
        );
        assert!(!s.missing.is_empty(), "{what}: no near miss");
        for m in &s.matching {
            assert!(
                matches(rule, m, limit),
                "{what}: {:?}",
                String::from_utf8_lossy(m)
            );
        }
        for m in &s.missing {
            assert!(
                !matches(rule, m, limit),
                "{what}: miss {:?}",
                String::from_utf8_lossy(m)
            );
        }
        if let Some((x, y)) = &s.split {
            assert!(
                !matches(rule, x, limit) && !matches(rule, y, limit),
                "{what}: split"
            );
            let whole = [x.as_slice(), y.as_slice()].concat();
            assert!(matches(rule, &whole, limit), "{what}: split parts together");
        }
        if let Some(p) = &s.inside {
            assert_eq!(p.len(), limit);
            assert!(matches(rule, p, limit), "{what}: inside");
            assert!(
                !matches(rule, &p[..limit - 1], limit),
                "{what}: inside ends early"
            );
        }
        if let Some(p) = &s.outside {
            assert_eq!(p.len(), limit + 1);
            assert!(
                !matches(rule, p, limit),
                "{what}: outside matches within the limit"
            );
            assert!(matches(rule, p, limit + 1), "{what}: outside");
        }
        match rule.dport {
            Some(port) => {
                assert_eq!(s.ports, vec![port]);
                assert!(s.other_port.is_some_and(|p| p != port));
            }
            None => assert!(!s.ports.is_empty()),
        }
    }
    all
}

#[test]
fn every_example_rule_gets_payloads_that_regex_agrees_with() {
    for name in ["sql_tautology", "sql_sleep", "bittorrent", "snort"] {
        for (limit, seed) in [(1500, 1), (64, 2), (600, 3)] {
            check(name, limit, seed);
        }
    }
}

#[test]
fn unanchored_rules_get_payloads_at_the_limit_and_anchored_ones_say_why_not() {
    for name in ["sql_tautology", "sql_sleep"] {
        for s in check(name, 1500, 9) {
            assert!(
                s.inside.is_some() && s.outside.is_some(),
                "{name}: {:?}",
                s.notes
            );
            assert!(s.split.is_some(), "{name}: split");
        }
    }
    // The first three BitTorrent rules are anchored at the payload's start, the fourth is a content.
    for s in check("bittorrent", 1500, 9) {
        if s.rule < 3 {
            assert!(s.inside.is_none() && s.outside.is_none());
            assert!(
                s.notes.iter().any(|n| n.contains("anchored")),
                "{:?}",
                s.notes
            );
        } else {
            assert!(s.inside.is_some() && s.outside.is_some(), "{:?}", s.notes);
        }
    }
}

#[test]
fn the_rules_read_back_from_a_built_object() {
    let text = example("sql_sleep");
    let options = Options {
        max_payload: 700,
        ..Options::default()
    };
    let compiled = hwxdp_dpi::compile(&text, "sql_sleep", &options).unwrap();
    let dir = std::env::temp_dir().join(format!("dpi-witness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (c, o) = (dir.join("s.c"), dir.join("s.o"));
    hwxdp_dpi::build(&compiled, &c, &o).expect("clang builds the generated C");
    let elf = std::fs::read(&o).unwrap();
    let e = hwxdp_dpi::embed::read(&elf, "s.o")
        .unwrap()
        .expect("the section");
    assert_eq!((e.max_payload, e.dfa_limit), (700, options.dfa_limit));
    assert_eq!(e.rules, text);
    let _ = std::fs::remove_dir_all(&dir);
}
