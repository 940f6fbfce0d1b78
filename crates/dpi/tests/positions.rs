//! Snort's content positions (`offset`, `depth`, `distance`, `within`) against a direct implementation of what Snort
//! defines: on thousands of random payloads, a rule's automaton matches exactly when some occurrence of its first
//! content lies where its offset and depth allow and each relative content lies at its distance and within its window
//! after the end of the content before it. A second check runs the `regex` crate on the patterns the rules become.
//! The combinations that cannot be compiled are refused naming the line and the keyword.

use hwxdp_dpi::{compile, DpiError, Options};
use regex::bytes::RegexBuilder;

/// One content of a rule and its modifiers, for the reference.
#[derive(Clone, Copy)]
struct C {
    bytes: &'static [u8],
    nocase: bool,
    /// offset, depth (absolute) or distance, within (relative to the previous content's end).
    start: Option<usize>,
    size: Option<usize>,
    relative: bool,
}

const fn c(bytes: &'static [u8]) -> C {
    C {
        bytes,
        nocase: false,
        start: None,
        size: None,
        relative: false,
    }
}

/// Whether `chain` matches `payload` from `from` (the previous content's end; 0 for the first), as Snort does with
/// its retries: any placement of each content that its modifiers allow.
fn chain_matches(chain: &[C], payload: &[u8], from: usize, first: bool) -> bool {
    let Some((c, rest)) = chain.split_first() else {
        return true;
    };
    let n = c.bytes.len();
    let lo = if first && !c.relative {
        c.start.unwrap_or(0)
    } else {
        from + c.start.unwrap_or(0)
    };
    let lo = if first && !c.relative && c.start.is_none() {
        0
    } else {
        lo
    };
    let hi_end = c.size.map(|w| {
        if first && !c.relative {
            c.start.unwrap_or(0) + w
        } else {
            from + c.start.unwrap_or(0) + w
        }
    });
    (lo..=payload.len().saturating_sub(n))
        .filter(|&p| p + n <= payload.len())
        .any(|p| {
            let here = &payload[p..p + n];
            let same = if c.nocase {
                here.eq_ignore_ascii_case(c.bytes)
            } else {
                here == c.bytes
            };
            same && hi_end.is_none_or(|h| p + n <= h) && chain_matches(rest, payload, p + n, false)
        })
}

/// A rule's reference: its chains (a content and the relative ones after it) must all match.
fn reference(chains: &[Vec<C>], payload: &[u8]) -> bool {
    chains
        .iter()
        .all(|chain| chain_matches(chain, payload, 0, true))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn check(options: &str, chains: Vec<Vec<C>>) {
    let text = format!("alert tcp any any -> any any ({options} sid:1;)\n");
    let compiled = compile(&text, "positions.rules", &Options::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let a = &compiled.automaton;
    let class = &a.classes[0];
    let mask = a.rule_masks[0];
    let regexes: Vec<_> = a.rules[0]
        .patterns
        .iter()
        .map(|p| {
            RegexBuilder::new(&p.to_regex())
                .unicode(false)
                .build()
                .unwrap()
        })
        .collect();
    let mut rng = Rng(0x1234_5678 ^ options.len() as u64);
    let alphabet = b"abcdxAD";
    let (mut yes, mut no) = (0, 0);
    for _ in 0..8000 {
        let len = (rng.next() % 24) as usize;
        let payload: Vec<u8> = (0..len)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        let want = reference(&chains, &payload);
        let got = a.scan(class, &payload) & mask == mask;
        assert_eq!(
            got,
            want,
            "{options}: {:?}",
            String::from_utf8_lossy(&payload)
        );
        assert_eq!(
            regexes.iter().all(|r| r.is_match(&payload)),
            want,
            "{options}: regex on {payload:?}"
        );
        if want {
            yes += 1
        } else {
            no += 1
        }
    }
    assert!(
        yes > 20 && no > 20,
        "{options}: {yes} matches, {no} misses: the payloads do not test it"
    );
}

#[test]
fn offset_and_depth_place_a_content_from_the_payload_start() {
    check(
        "content:\"ab\"; offset:0; depth:2;",
        vec![vec![C {
            start: Some(0),
            size: Some(2),
            ..c(b"ab")
        }]],
    );
    check(
        "content:\"ab\"; offset:2; depth:6;",
        vec![vec![C {
            start: Some(2),
            size: Some(6),
            ..c(b"ab")
        }]],
    );
    check(
        "content:\"a\"; offset:3;",
        vec![vec![C {
            start: Some(3),
            ..c(b"a")
        }]],
    );
    check(
        "content:\"ab\"; depth:5; nocase;",
        vec![vec![C {
            size: Some(5),
            nocase: true,
            ..c(b"ab")
        }]],
    );
}

#[test]
fn distance_and_within_place_a_content_after_the_one_before() {
    let rel = |bytes, start, size| C {
        start,
        size,
        relative: true,
        ..c(bytes)
    };
    check(
        "content:\"ab\"; content:\"cd\"; distance:1; within:4;",
        vec![vec![c(b"ab"), rel(b"cd", Some(1), Some(4))]],
    );
    check(
        "content:\"a\"; content:\"b\"; within:2;",
        vec![vec![c(b"a"), rel(b"b", None, Some(2))]],
    );
    check(
        "content:\"a\"; content:\"b\"; distance:2;",
        vec![vec![c(b"a"), rel(b"b", Some(2), None)]],
    );
    check(
        "content:\"ab\"; offset:1; depth:6; content:\"c\"; distance:0; within:3; content:\"d\"; nocase; within:2;",
        vec![vec![
            C { start: Some(1), size: Some(6), ..c(b"ab") },
            rel(b"c", Some(0), Some(3)),
            C { nocase: true, ..rel(b"d", None, Some(2)) },
        ]],
    );
    // A plain content beside a chain: both must occur.
    check(
        "content:\"x\"; content:\"a\"; content:\"b\"; within:2;",
        vec![vec![c(b"x")], vec![c(b"a"), rel(b"b", None, Some(2))]],
    );
}

#[test]
fn positions_that_cannot_be_compiled_are_refused_naming_the_keyword() {
    for (options, keyword) in [
        ("content:\"ab\"; distance:1;", "distance"),
        ("pcre:\"/a/\"; content:\"b\"; within:3;", "within"),
        (
            "content:\"a\"; content:\"b\"; offset:1; distance:1;",
            "offset",
        ),
        ("content:\"abc\"; depth:2;", "depth"),
        ("content:\"a\"; content:\"b\"; distance:-1;", "distance"),
        ("content:\"a\"; offset:x;", "offset"),
    ] {
        let text = format!("\nalert tcp any any -> any any ({options} sid:1;)\n");
        match compile(&text, "t", &Options::default()) {
            Err(DpiError::Unsupported {
                line: 2,
                keyword: k,
                ..
            }) => assert_eq!(k, keyword, "{options}"),
            other => panic!("{options}: {other:?}"),
        }
    }
}
