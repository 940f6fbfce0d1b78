//! The branch form of the fast scan: the state is the program counter. Every live state of the fast automaton has a
//! block of code for each byte position of a 16-byte chunk and of the tails, a bounds check a byte; a block
//! loads its byte and jumps on it to the block of the next state at the next position. A state's most common
//! successor is the jump after the compares, every other successor one compare (or range check) per byte range that
//! leads to it, so a byte that keeps the scan where it is costs its load and a compare or two. A transition into
//! MATCHED jumps to the slow scan at once, one into DEAD returns XDP_PASS.

use crate::compile::Automaton;
use crate::fast::Fast;
use std::fmt::Write;

/// Where a block's position leads: a chunk position, or a tail position.
#[derive(Clone, Copy)]
enum Pos {
    /// Byte `k` of a 16-byte chunk.
    Chunk(usize),
    /// Byte `k` of the tail at the packet's end (at most 15 bytes, each with its bounds check).
    End(usize),
    /// Byte `k` of the tail after the last chunk (DPI_TAIL bytes, each with its bounds check).
    Last(usize),
}

/// The fast scan in the branch form, after `dispatch` has set `s` to the fast start state.
pub fn scan(c: &mut String, a: &Automaton, fast: &Fast, max_payload: usize) {
    c.push_str("\t{\n\t\tconst __u8 *p = payload;\n\t\t__u64 i = DPI_CHUNKS, x;\n\n");
    let mut starts: Vec<u32> = a
        .classes
        .iter()
        .map(|k| fast.of_state[k.start as usize])
        .collect();
    starts.sort_unstable();
    starts.dedup();
    for s in &starts {
        let _ = writeln!(
            c,
            "\t\tif (s == {s})\n\t\t\tgoto {};",
            target(fast, *s, Pos::Chunk(0))
        );
    }
    c.push_str("\t\treturn XDP_PASS;\n");
    for s in 0..fast.live as u32 {
        state(c, fast, s, max_payload % crate::codegen::CHUNK);
    }
    c.push_str("\tdpi_pass:\n\t\treturn XDP_PASS;\n\tdpi_matched:\n\t\treturn dpi_verdict(dpi_slow(ctx, off, start));\n\t}\n");
}

/// The code of live state `s`: its chunk loop and its two tails, unrolled with a bounds check per byte, so that the
/// verifier meets each state once per tail byte (a tail loop or blocks of 8, 4, 2 and 1 bytes would give it every
/// offset and register assignment clang makes of them).
fn state(c: &mut String, fast: &Fast, s: u32, tail: usize) {
    let _ = writeln!(
        c,
        "\t/* state {s} */\n\ts{s}_c0:\n\t\tif (i == 0)\n\t\t\tgoto s{s}_l0;\n\t\tif ((const void *)(p + 16) > (const void *)end)\n\t\t\tgoto s{s}_e0;\n\t\ti--;"
    );
    for k in 0..16 {
        if k > 0 {
            let _ = writeln!(c, "\ts{s}_c{k}:");
        }
        step(c, fast, s, k, Pos::Chunk(k + 1));
    }
    let _ = writeln!(c, "\ts{s}_c16:\n\t\tp += 16;\n\t\tgoto s{s}_c0;");
    for (label, len, pos) in [
        ("e", 15, Pos::End as fn(usize) -> Pos),
        ("l", tail, Pos::Last as fn(usize) -> Pos),
    ] {
        for k in 0..len {
            let _ = writeln!(
                c,
                "\ts{s}_{label}{k}:\n\t\tif ((const void *)(p + {}) > (const void *)end)\n\t\t\tgoto dpi_pass;",
                k + 1
            );
            step(c, fast, s, k, pos(k + 1));
        }
        let _ = writeln!(c, "\ts{s}_{label}{len}:\n\t\tgoto dpi_pass;");
    }
}

/// The label of state `t` at position `pos`.
fn target(fast: &Fast, t: u32, pos: Pos) -> String {
    if t == fast.matched {
        "dpi_matched".into()
    } else if t == fast.dead {
        "dpi_pass".into()
    } else {
        match pos {
            Pos::Chunk(k) => format!("s{t}_c{k}"),
            Pos::End(k) => format!("s{t}_e{k}"),
            Pos::Last(k) => format!("s{t}_l{k}"),
        }
    }
}

/// Byte `k` from `p` in state `s`, and the jumps to `next` of each successor.
fn step(c: &mut String, fast: &Fast, s: u32, k: usize, next: Pos) {
    let _ = writeln!(c, "\t\tx = p[{k}];");
    let row = &fast.next[s as usize * 256..(s as usize + 1) * 256];
    let (default, others) = successors(row);
    for (t, ranges) in others {
        let tests: Vec<String> = ranges
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    format!("x == {lo:#x}")
                } else {
                    format!("(x >= {lo:#x} && x <= {hi:#x})")
                }
            })
            .collect();
        let _ = writeln!(
            c,
            "\t\tif ({})\n\t\t\tgoto {};",
            tests.join(" || "),
            target(fast, t, next)
        );
    }
    let _ = writeln!(c, "\t\tgoto {};", target(fast, default, next));
}

/// A successor state and the byte ranges (inclusive) that lead to it.
pub type Successor = (u32, Vec<(u8, u8)>);

/// The successors of a row: the one most bytes lead to, and every other with the byte ranges that lead to it (in
/// order of their first byte).
pub fn successors(row: &[u32]) -> (u32, Vec<Successor>) {
    let mut ranges: Vec<Successor> = Vec::new();
    let mut lo = 0usize;
    for b in 1..=256 {
        if b == 256 || row[b] != row[lo] {
            let t = row[lo];
            let r = (lo as u8, (b - 1) as u8);
            match ranges.iter_mut().find(|(x, _)| *x == t) {
                Some((_, list)) => list.push(r),
                None => ranges.push((t, vec![r])),
            }
            lo = b;
        }
    }
    let bytes = |list: &Vec<(u8, u8)>| -> usize {
        list.iter().map(|&(l, h)| h as usize - l as usize + 1).sum()
    };
    let best = (0..ranges.len())
        .max_by_key(|&i| (bytes(&ranges[i].1), usize::MAX - i))
        .unwrap_or(0);
    let (default, _) = ranges.remove(best);
    (default, ranges)
}
