//! The branch form of the fast scan: the state is the program counter. Every live state of the fast automaton has a
//! block of code for each byte position of a chunk of [`CHUNK`] bytes; a block loads its byte and jumps on it to the
//! block of the next state at the next position. A state's most common successor is the jump after the compares,
//! every other successor one compare (or range check) per byte range that leads to it, so a byte that keeps the scan
//! where it is costs its load and a compare or two.
//!
//! The chunk is a global function, `dpi_chunk(ctx, off, s)`: the kernel verifier checks a global function once, with
//! its arguments unknown, rather than at every chunk of the scan, so its work does not grow with the scan limit
//! (inline, it walked every state at every byte position of the scan: about 67 processed instructions per live state
//! and scanned byte, a million, the verifier's limit, at 1500 bytes and 10 live states). The XDP function calls it
//! once per chunk, which returns the state after it, `DPI_DEAD` or `DPI_MATCHED` as soon as the scan reaches one (a
//! transition into a state where a pattern ends is MATCHED), or `DPI_SHORT`, having scanned nothing, when the packet
//! ends within it. The bytes after the last chunk (a packet's last bytes, or the scan limit's remainder: fewer than
//! a chunk) are scanned by `dpi_tail(ctx, off, s, n)` on the full automaton's table (blocks of 32, 16, 8, 4, 2 and
//! 1 bytes, a bounds check each), which says whether a pattern ended in them: branch code for them would double the
//! program for a few bytes a packet.

use crate::fast::Fast;
use std::fmt::Write;

/// Bytes per call of `dpi_chunk` (one bounds check).
pub const CHUNK: usize = 64;

/// The C of `dpi_chunk` and `dpi_tail` for `fast`, to put before the XDP function (after the scan macros and the slow
/// table); `max_payload` bounds the offsets.
pub fn functions(c: &mut String, fast: &Fast, max_payload: usize) {
    let _ = writeln!(
        c,
        "#define DPI_BCHUNK {CHUNK}\n#define DPI_BCHUNKS {}\n#define DPI_BTAIL {}\n#define DPI_SHORT {}\n#define DPI_MAX_SCAN_OFF (DPI_MAX_OFF + {max_payload})\n",
        max_payload / CHUNK,
        max_payload % CHUNK,
        fast.matched + 1,
    );
    c.push_str("/* DPI_BCHUNK payload bytes from offset off in fast state s: the state after them, DPI_DEAD or DPI_MATCHED\n * (at once), or DPI_SHORT when the packet ends within them. */\n");
    c.push_str(
        "__attribute__((noinline)) __u32 dpi_chunk(struct xdp_md *ctx, __u32 off, __u32 s)\n{\n",
    );
    head(c);
    c.push_str(
        "\tif ((const void *)(p + DPI_BCHUNK) > (const void *)end)\n\t\treturn DPI_SHORT;\n",
    );
    dispatch(c, fast);
    for s in 0..fast.live as u32 {
        let _ = writeln!(c, "\t/* state {s} */");
        for k in 0..CHUNK {
            let _ = writeln!(c, "s{s}_{k}:");
            step(c, fast, s, k);
        }
        let _ = writeln!(c, "s{s}_{CHUNK}:\n\treturn {s};");
    }
    c.push_str("dpi_dead:\n\treturn DPI_DEAD;\ndpi_matched:\n\treturn DPI_MATCHED;\n}\n\n");
    let rows = fast.live.next_power_of_two();
    let mut full_of = vec![0u32; rows];
    for (full, &f) in fast.of_state.iter().enumerate() {
        if (f as usize) < fast.live {
            full_of[f as usize] = full as u32;
        }
    }
    let list: Vec<String> = full_of.iter().map(u32::to_string).collect();
    let _ = writeln!(
        c,
        "/* Per live fast state, its state in the full automaton (rows to a power of two, for a masked index). */\nstatic const __u32 dpi_full_of[{rows}] = {{ {} }};\n",
        list.join(", ")
    );
    c.push_str(
        r#"/* n bytes at p on the full automaton's table, if the budget and the packet have them. */
#define DPI_TBLOCK(n)                                                         \
	do {                                                                  \
		if (left >= n && (const void *)(p + n) <= (const void *)end) { \
			_Pragma("clang loop unroll(full)")                    \
			for (int k = 0; k < n; k++)                           \
				DPI_SLOW(p[k]);                               \
			p += n;                                               \
			left -= n;                                            \
		}                                                             \
	} while (0)

/* At most n (< DPI_BCHUNK) payload bytes from offset off, up to the packet's end, in fast state f, on the full
 * automaton's table: DPI_MATCHED if a pattern ends in them, else DPI_DEAD (the scan ends here). */
__attribute__((noinline)) __u32 dpi_tail(struct xdp_md *ctx, __u32 off, __u32 f, __u32 n)
{
	const __u8 *data = (const __u8 *)(long)ctx->data;
	const __u8 *end = (const __u8 *)(long)ctx->data_end;
	const dpi_slow_t *table = dpi_next;
	const __u8 *p;
	__u64 s, m = 0, left = n;

	if (off > DPI_MAX_SCAN_OFF)
		return DPI_DEAD;
	p = data + off;
	s = dpi_full_of[f & (sizeof(dpi_full_of) / sizeof(dpi_full_of[0]) - 1)] & (DPI_SLOW_ROWS - 1);
	DPI_TBLOCK(32);
	DPI_TBLOCK(16);
	DPI_TBLOCK(8);
	DPI_TBLOCK(4);
	DPI_TBLOCK(2);
	DPI_TBLOCK(1);
	return m ? DPI_MATCHED : DPI_DEAD;
}

"#,
    );
}

/// The packet pointer of `dpi_chunk`.
fn head(c: &mut String) {
    c.push_str(
        "\tconst __u8 *data = (const __u8 *)(long)ctx->data;\n\tconst __u8 *end = (const __u8 *)(long)ctx->data_end;\n\tconst __u8 *p;\n\t__u64 x;\n\n\tif (off > DPI_MAX_SCAN_OFF)\n\t\treturn DPI_DEAD;\n\tp = data + off;\n",
    );
}

/// The jump to state `s`'s first block.
fn dispatch(c: &mut String, fast: &Fast) {
    c.push_str("\tswitch (s) {\n");
    for s in 0..fast.live {
        let _ = writeln!(c, "\tcase {s}:\n\t\tgoto s{s}_0;");
    }
    c.push_str("\tdefault:\n\t\treturn DPI_DEAD;\n\t}\n");
}

/// The end of the XDP function in the branch form, after `dispatch` has set `s` to the fast start state: the chunks,
/// the tail, then for a MATCHED packet the slow scan and the verdict.
pub fn scan(c: &mut String) {
    c.push_str(
        r#"	{
		__u32 o = off, t;
		__u64 i;

		_Pragma("clang loop unroll(disable)")
		for (i = DPI_BCHUNKS; i != 0; i--) {
			t = dpi_chunk(ctx, o, s);
			if (t == DPI_SHORT)
				break;
			s = t;
			if (s >= DPI_DEAD)
				goto dpi_done;
			o += DPI_BCHUNK;
		}
		s = dpi_tail(ctx, o, s, i == 0 ? DPI_BTAIL : DPI_BCHUNK - 1);
	dpi_done:
		if (s != DPI_MATCHED)
			return XDP_PASS;
		return dpi_verdict(dpi_slow(ctx, off, start));
	}
"#,
    );
}

/// The label of state `t` at position `k`.
fn target(fast: &Fast, t: u32, k: usize) -> String {
    if t == fast.matched {
        "dpi_matched".into()
    } else if t == fast.dead {
        "dpi_dead".into()
    } else {
        format!("s{t}_{k}")
    }
}

/// Byte `k` from `p` in state `s`, and the jumps to the next position of each successor.
fn step(c: &mut String, fast: &Fast, s: u32, k: usize) {
    let _ = writeln!(c, "\tx = p[{k}];");
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
            "\tif ({})\n\t\tgoto {};",
            tests.join(" || "),
            target(fast, t, k + 1)
        );
    }
    let _ = writeln!(c, "\tgoto {};", target(fast, default, k + 1));
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
