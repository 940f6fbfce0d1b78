//! The compiled automaton against the `regex` crate: for every example rules file and thousands of random and
//! crafted payloads, the patterns the DFA finds are the patterns `regex` finds in the bytes each rule looks at, and the
//! fast automaton ends in MATCHED exactly when one is found (and nothing matches once it is in DEAD).

use hwxdp_dpi::compile::Class;
use hwxdp_dpi::fast::Fast;
use hwxdp_dpi::{Automaton, Options, Rule, Scope};
use regex::bytes::{Regex, RegexBuilder};

/// A small deterministic generator (xorshift64*), so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn example(name: &str) -> String {
    let path = format!(
        "{}/../../examples/dpi/{name}.rules",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn automaton(text: &str) -> Automaton {
    hwxdp_dpi::compile(text, "test", &Options::default())
        .expect("the rules compile")
        .automaton
}

/// The bytes a rule's patterns are matched against, as docs/dpi.md defines them.
fn regions<'a>(scope: &Scope, payload: &'a [u8]) -> Vec<&'a [u8]> {
    let until_line_end = |s: &'a [u8]| {
        let end = s
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap_or(s.len());
        &s[..end]
    };
    match scope {
        Scope::Payload => vec![payload],
        Scope::RequestLine => vec![until_line_end(payload)],
        Scope::Header(name) => payload
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                let n = name.len();
                let named = line.len() > n
                    && line[..n].eq_ignore_ascii_case(name.as_bytes())
                    && line[n] == b':';
                named.then(|| until_line_end(&line[n + 1..]))
            })
            .collect(),
    }
}

/// Per rule, its patterns as `regex` compiles them (bytes, Unicode off, as the DFA reads them).
fn references(rules: &[Rule]) -> Vec<Vec<Regex>> {
    rules
        .iter()
        .map(|r| {
            r.patterns
                .iter()
                .map(|p| {
                    RegexBuilder::new(&p.to_regex())
                        .unicode(false)
                        .build()
                        .expect("regex accepts the pattern")
                })
                .collect()
        })
        .collect()
}

/// The mask `regex` gives for the rules of `class` on `payload`.
fn expected(a: &Automaton, refs: &[Vec<Regex>], class: &Class, payload: &[u8]) -> u64 {
    let mut mask = 0;
    for &r in &class.rules {
        let first = a.rule_masks[r].trailing_zeros();
        for (k, re) in refs[r].iter().enumerate() {
            if regions(&a.rules[r].scope, payload)
                .iter()
                .any(|region| re.is_match(region))
            {
                mask |= 1 << (first + k as u32);
            }
        }
    }
    mask
}

/// The fast scan: whether it ends in MATCHED after the payload; and that it never leaves DEAD or MATCHED, and
/// that nothing matches once it is in DEAD (so stopping there is right).
fn flagged(fast: &Fast, a: &Automaton, class: &Class, payload: &[u8]) -> bool {
    let mut s = fast.of_state[class.start as usize];
    for (i, &b) in payload.iter().enumerate() {
        let t = fast.next[s as usize * 256 + b as usize];
        if s == fast.dead || s == fast.matched {
            assert_eq!(t, s, "DEAD and MATCHED absorb");
        }
        if t == fast.dead {
            assert_eq!(
                a.scan(class, payload),
                a.scan(class, &payload[..=i]),
                "nothing matches after DEAD: {payload:?}"
            );
        }
        s = t;
    }
    s == fast.matched
}

/// Random payloads built from pieces of the rules' patterns, separators and random bytes.
fn payload(rng: &mut Rng, pieces: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let parts = rng.below(12);
    for _ in 0..parts {
        match rng.below(6) {
            0 => out.push(rng.next() as u8),
            1 => out.extend_from_slice(
                [
                    &b" "[..],
                    b"  ",
                    b"\t",
                    b"\r\n",
                    b"\n",
                    b"'",
                    b"\"",
                    b"=",
                    b"1",
                    b"(",
                ][rng.below(10)],
            ),
            _ => {
                let mut piece = pieces[rng.below(pieces.len())].clone();
                if rng.below(3) == 0 && !piece.is_empty() {
                    let cut = rng.below(piece.len());
                    piece.truncate(cut.max(1));
                }
                if rng.below(2) == 0 {
                    piece.iter_mut().for_each(|b| {
                        if b.is_ascii_alphabetic() {
                            *b ^= 0x20;
                        }
                    });
                }
                out.extend_from_slice(&piece);
            }
        }
    }
    out
}

/// Literal runs of the rules' patterns and the scopes' header names, to make matches and near misses likely.
fn pieces(rules: &[Rule], crafted: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = crafted.iter().map(|c| c.to_vec()).collect();
    for rule in rules {
        if let Scope::Header(name) = &rule.scope {
            out.push(format!("\r\n{name}: ").into_bytes());
            out.push(format!("{name}:").into_bytes());
        }
        for pattern in &rule.patterns {
            match pattern {
                hwxdp_dpi::Pattern::Content { bytes, .. } => out.push(bytes.clone()),
                hwxdp_dpi::Pattern::Regex(re) => out.extend(
                    re.split(|c: char| !c.is_ascii_alphanumeric() && c != '/' && c != ':')
                        .filter(|w| w.len() > 1)
                        .map(|w| w.as_bytes().to_vec()),
                ),
            }
        }
    }
    out
}

/// Runs `count` random payloads plus `crafted` through every class; every rule must match and miss at least once.
fn differential(name: &str, crafted: &[&[u8]], count: usize) {
    let a = automaton(&example(name));
    let refs = references(&a.rules);
    let fast = Fast::of(&a);
    let pieces = pieces(&a.rules, crafted);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    let mut hits = vec![[0usize; 2]; a.rules.len()];
    let mut payloads: Vec<Vec<u8>> = crafted.iter().map(|c| c.to_vec()).collect();
    payloads.extend((0..count).map(|_| payload(&mut rng, &pieces)));
    for p in &payloads {
        for class in &a.classes {
            let want = expected(&a, &refs, class, p);
            let got = a.scan(class, p);
            assert_eq!(
                got,
                want,
                "{name}: {:?} port {:?}: payload {:?}",
                class.proto,
                class.dport,
                String::from_utf8_lossy(p)
            );
            assert_eq!(
                flagged(&fast, &a, class, p),
                want != 0,
                "{name}: the flag on {p:?}"
            );
            for &r in &class.rules {
                let m = a.rule_masks[r];
                hits[r][usize::from(want & m == m)] += 1;
            }
        }
    }
    for (r, [missed, matched]) in hits.iter().enumerate() {
        assert!(*matched > 0 && *missed > 0, "{name}: rule {r} matched {matched} and missed {missed} times: the payloads do not test it");
    }
}

#[test]
fn sql_tautology_matches_what_regex_matches() {
    differential(
        "sql_tautology",
        &[
            b"id=' OR 1=1 --",
            b"name=\"x\" or  1 = 1",
            b"' or 1=2",
            b"'or 1=1",
        ],
        5000,
    );
}

#[test]
fn sql_sleep_matches_what_regex_matches() {
    differential(
        "sql_sleep",
        &[
            b"GET / HTTP/1.1\r\nUser-Agent: sqlmap sleep(5)\r\n\r\n",
            b"GET / HTTP/1.1\r\nUser-Agent: sleep\r\n(5)\r\n",
            b"GET /sleep(1) HTTP/1.1\r\nHost: a\r\n",
            b"user-agent:SLEEP (3)",
        ],
        5000,
    );
}

#[test]
fn bittorrent_matches_what_regex_matches() {
    differential(
        "bittorrent",
        &[
            b"\x13BitTorrent protocol\x00\x00",
            b"GET /announce?info_hash=%12",
            b"GET /scrape.php?info_hash=",
            b"d1:ad2:id20:abcdefghij0123456789e",
            b"\x00\x00\x04\x17\x27\x10\x19\x80\x00\x00\x00\x00",
            b"x\x13BitTorrent protocol",
        ],
        5000,
    );
}

#[test]
fn snort_rules_match_what_regex_matches() {
    differential(
        "snort",
        &[
            b"GET /healthz HTTP/1.1\r\n",
            b"GET /../../etc/passwd HTTP/1.0",
            b"id=1 UNION ALL SELECT pw",
            b"User-Agent: () { :; }; /bin/sh",
            b"USER Root\r\n",
            b"\x07EXAMPLE\x03com\x00\x00\x01",
            b"run CMD.EXE /c",
            b"POST /login HTTP/1.1",
            b"POST   /login x",
        ],
        5000,
    );
}
