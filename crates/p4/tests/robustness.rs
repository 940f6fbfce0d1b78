//! No input makes the front end panic: truncated examples, random bytes, random token soups and inputs built to
//! make tentative parsing backtrack all end in a `Diagnostic` or a program, never a panic or a hang.

mod common;

use hwxdp_p4::parse_str;

/// A small deterministic generator (xorshift64*), so failures reproduce.
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

/// The byte offsets a truncation test cuts at: every boundary between an identifier or number, a whitespace run and
/// a punctuation character, and one offset inside each identifier, number and whitespace run. A cut deeper in the
/// same run leaves the lexer in the state of that one (a shorter word, number or run of blanks), so cutting at every
/// byte (twice the parses, half of `make test`'s P4 front-end time) tests nothing more.
fn cut_points(text: &str) -> Vec<usize> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            1
        } else if c.is_whitespace() {
            2
        } else {
            0
        }
    };
    let mut out = Vec::new();
    let (mut prev, mut run) = (None, 0);
    for (i, c) in text.char_indices() {
        let k = class(c);
        run = if k != 0 && prev == Some(k) {
            run + 1
        } else {
            0
        };
        if run <= 1 {
            out.push(i);
        }
        prev = Some(k);
    }
    out
}

#[test]
fn truncated_examples_are_errors_unless_cut_between_declarations() {
    for path in common::examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        // Includes are resolved against the bundled directory, which is where all examples take theirs from.
        assert!(parse_str("whole.p4", &text).is_ok(), "{}", path.display());
        let mut accepted = 0;
        for cut in cut_points(&text) {
            let prefix = &text[..cut];
            if parse_str("prefix.p4", prefix).is_ok() {
                // A prefix may be a complete program only when it stops after a whole declaration (or comment).
                let code_end = prefix.trim_end();
                let last_line = code_end.lines().last().unwrap_or("").trim_start();
                let complete = code_end.ends_with(';')
                    || code_end.ends_with('}')
                    || code_end.ends_with("*/")
                    || last_line.is_empty()
                    || last_line.contains("//")
                    || last_line.starts_with('#');
                assert!(
                    complete,
                    "{}: prefix of {cut} bytes parsed: ...{:?}",
                    path.display(),
                    &prefix[cut.saturating_sub(40)..]
                );
                accepted += 1;
            }
        }
        assert!(
            accepted < text.len() / 4,
            "{}: {accepted} prefixes parsed",
            path.display()
        );
    }
}

#[test]
fn random_bytes_are_errors() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let len = 8 + rng.below(120);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        assert!(parse_str("random.p4", &text).is_err(), "{text:?}");
    }
}

#[test]
fn random_token_soups_never_panic() {
    const VOCAB: &[&str] = &[
        "header",
        "struct",
        "control",
        "parser",
        "state",
        "transition",
        "select",
        "table",
        "key",
        "actions",
        "apply",
        "action",
        "extern",
        "enum",
        "const",
        "typedef",
        "if",
        "else",
        "switch",
        "default",
        "_",
        "bit",
        "<",
        ">",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ":",
        ",",
        ".",
        "=",
        "&&&",
        "..",
        "++",
        "?",
        "@",
        "8w1",
        "16s-1",
        "0x800",
        "a",
        "b",
        "H",
        "error",
        "in",
        "out",
        "inout",
        "\"s\"",
        "-",
        "!",
        "&&",
        ">>",
        "#define X 1\n",
        "#include <core.p4>\n",
    ];
    let mut rng = Rng(42);
    for _ in 0..4000 {
        let n = 1 + rng.below(60);
        let text: Vec<&str> = (0..n).map(|_| VOCAB[rng.below(VOCAB.len())]).collect();
        let _ = parse_str("soup.p4", &text.join(" "));
    }
}

#[test]
fn nested_tentative_readings_do_not_backtrack_exponentially() {
    for pattern in ["(a[", "a<b[", "(a<b>)(", "((A)"] {
        let text = format!("const bit<8> X = {}1;", pattern.repeat(60));
        assert!(parse_str("deep.p4", &text).is_err(), "{pattern}");
    }
}
