//! The automaton to C for clang: packet parsing to the transport payload, the choice of DFA by protocol and
//! destination port, a bounded scan of the payload, and the verdict and hit counters.
//!
//! The scan runs twice at most. The fast scan runs the fast automaton ([`crate::fast`]): a transition into a state
//! where a pattern ends leads to the absorbing state MATCHED, one into a state from which nothing can match any more
//! to the absorbing state DEAD, so no byte needs a test and the scan stops at the first chunk boundary in either.
//! It is generated in one of two forms ([`Form`]): a transition table walked one lookup per byte, or, for small
//! automata, code with one block per state and byte position whose transitions are compare-and-jump chains
//! ([`crate::branch`]). Most packets end there with XDP_PASS. A MATCHED packet is scanned again by `dpi_slow`, on the
//! full automaton's table, for the mask of the patterns that occur, and `dpi_verdict` turns the mask into hits and a
//! verdict. Both are global functions, which the verifier checks once each rather than once per way the fast scan
//! can end. The tables and the match masks are `static const` arrays: clang puts them in `.rodata`, so the object
//! carries them and the loader freezes them.

use crate::compile::{Automaton, Class};
use crate::fast::Fast;
use crate::rules::{Action, Proto};
use std::fmt::Write;

/// Bytes scanned per packet bounds check in the scan loops.
pub const CHUNK: usize = 16;
/// The most live states of a fast automaton generated as branches: above, the code (a block per state and byte of a
/// chunk) and the verifier's work on it grow past what the branch form saves.
pub const BRANCH_MAX_STATES: usize = 32;
/// The most live states `--form branch` is generated for: about five instructions per state and byte of a chunk in
/// each of `dpi_chunk` and `dpi_tail`, and the jumps of a function must stay within eBPF's 16-bit offsets
/// (bittorrent's 75 live states verify; snort's 195 give jumps out of range).
pub const BRANCH_FORCED_MAX_STATES: usize = 80;

/// How the fast scan is generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A transition table in `.rodata`, one lookup a byte (five instructions).
    Table,
    /// One block of compare-and-jump code per state and byte position: the state is the program counter.
    Branch,
}

impl Form {
    /// The form for a fast automaton of `live` live states: branches when the automaton is small
    /// ([`BRANCH_MAX_STATES`]), else the table. The scan limit does not matter: the verifier checks the branch
    /// form's chunk once, whatever the number of chunks.
    pub fn choose(live: usize) -> Form {
        if live <= BRANCH_MAX_STATES {
            Form::Branch
        } else {
            Form::Table
        }
    }

    /// `table` or `branch`.
    pub fn keyword(self) -> &'static str {
        match self {
            Form::Table => "table",
            Form::Branch => "branch",
        }
    }
}

/// The shape of one transition table: rows of 256 entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Rows: 256 for 8-bit entries (a state and a byte index the table with no mask), else the states rounded up to
    /// a power of two (the index is masked).
    pub rows: usize,
    /// Bytes per entry: 1 up to 256 states, else 2.
    pub entry_bytes: usize,
}

impl Table {
    /// The table of `states` states.
    pub fn of(states: usize) -> Table {
        if states <= 256 {
            Table {
                rows: 256,
                entry_bytes: 1,
            }
        } else {
            Table {
                rows: states.next_power_of_two(),
                entry_bytes: 2,
            }
        }
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> usize {
        self.rows * 256 * self.entry_bytes
    }
}

/// What the generated program's tables look like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The fast scan's form.
    pub form: Form,
    /// The fast automaton.
    pub fast: Fast,
    /// The fast scan's table (the table form only).
    pub fast_table: Option<Table>,
    /// The full automaton's table, which the slow scan walks.
    pub slow_table: Table,
    /// Bytes of the tables and the match masks together.
    pub table_bytes: usize,
}

impl Layout {
    /// The layout of `automaton`'s program.
    pub fn of(automaton: &Automaton, form: Option<Form>) -> Layout {
        let fast = Fast::of(automaton);
        let form = form.unwrap_or_else(|| Form::choose(fast.live));
        let fast_table = (form == Form::Table).then(|| Table::of(fast.states()));
        let slow_table = Table::of(automaton.states());
        let table_bytes =
            fast_table.map_or(0, |t| t.bytes()) + slow_table.bytes() + slow_table.rows * 8;
        Layout {
            form,
            fast,
            fast_table,
            slow_table,
            table_bytes,
        }
    }

    /// The entry width of the table the verifier's limit depends on: the fast table's, else the slow one's.
    pub fn entry_bytes(&self) -> usize {
        self.fast_table.unwrap_or(self.slow_table).entry_bytes
    }
}

/// The C source of the XDP program `name` for `automaton`, scanning at most `max_payload` bytes.
pub fn generate(
    automaton: &Automaton,
    layout: &Layout,
    name: &str,
    max_payload: usize,
    source: &str,
) -> String {
    let mut c = String::new();
    prologue(&mut c, automaton, layout, max_payload, source);
    tables(&mut c, automaton, layout);
    c.push_str(SCAN);
    verdict(&mut c, automaton);
    if layout.form == Form::Branch {
        crate::branch::functions(&mut c, &layout.fast, max_payload);
    }
    let _ = writeln!(c, "SEC(\"xdp\")\nint {name}(struct xdp_md *ctx)\n{{");
    c.push_str(PARSE);
    dispatch(&mut c, automaton, &layout.fast);
    match layout.form {
        Form::Table => c.push_str(TABLE_TAIL),
        Form::Branch => crate::branch::scan(&mut c),
    }
    c.push_str("}\n\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n");
    c
}

fn prologue(c: &mut String, a: &Automaton, layout: &Layout, max_payload: usize, source: &str) {
    let _ = writeln!(
        c,
        "/* Generated by hwxdp dpi from {source}: {} rules, {} DFA states ({} live in the fast scan, {} form), at most {max_payload} payload bytes scanned.\n * Do not edit: regenerate with hwxdp dpi. Rule k (from 0, file order) counts its matches at key k of dpi_hits. */",
        a.rules.len(),
        a.states(),
        layout.fast.live,
        layout.form.keyword(),
    );
    for (k, rule) in a.rules.iter().enumerate() {
        let name = rule.name.replace("*/", "* /");
        let _ = writeln!(
            c,
            "/* rule {k}: line {}, {} {}: {name} */",
            rule.line,
            rule.action.keyword(),
            rule.proto.keyword()
        );
    }
    c.push_str("#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n\n");
    let _ = writeln!(
        c,
        "#define DPI_DEAD {}\n#define DPI_MATCHED {}\n#define DPI_CHUNKS {}\n#define DPI_TAIL {}\n#define DPI_MAX_OFF 255",
        layout.fast.dead,
        layout.fast.matched,
        max_payload / CHUNK,
        max_payload % CHUNK,
    );
    let mut types = vec![("slow", layout.slow_table)];
    types.extend(layout.fast_table.map(|t| ("fast", t)));
    for (which, t) in types {
        let upper = which.to_uppercase();
        let (entry, imask) = if t.entry_bytes == 1 {
            ("__u8", String::new())
        } else {
            ("__u16", format!(" & {:#x}", t.rows * 256 - 1))
        };
        let _ = writeln!(
            c,
            "#define DPI_{upper}_ROWS {}\n#define DPI_{upper}_INDEX(s, c) (((s) << 8 | (c)){imask})\ntypedef {entry} dpi_{which}_t;",
            t.rows
        );
    }
    c.push('\n');
}

fn table_rows(c: &mut String, kind: &str, array: &str, entries: &[u32], rows: usize) {
    let upper = kind.to_uppercase();
    let _ = writeln!(
        c,
        "static const dpi_{kind}_t {array}[DPI_{upper}_ROWS * 256] = {{"
    );
    let mut all = entries.to_vec();
    all.resize(rows * 256, 0);
    for row in all.chunks(32) {
        let text: Vec<String> = row.iter().map(u32::to_string).collect();
        let _ = writeln!(c, "\t{},", text.join(","));
    }
    c.push_str("};\n\n");
}

fn tables(c: &mut String, a: &Automaton, layout: &Layout) {
    if let Some(t) = layout.fast_table {
        c.push_str("/* The fast scan: per live state, the next state for each byte (DPI_DEAD and DPI_MATCHED absorb). */\n");
        table_rows(c, "fast", "dpi_fast", &layout.fast.next, t.rows);
    }
    c.push_str(
        "/* The slow scan: the full automaton, per state the next state for each byte. */\n",
    );
    table_rows(c, "slow", "dpi_next", &a.next, layout.slow_table.rows);
    c.push_str("/* Per state, the patterns a match of which ends at the byte that led there. */\n");
    c.push_str("static const __u64 dpi_ends[DPI_SLOW_ROWS] = {\n");
    for s in 0..layout.slow_table.rows {
        let bits = a.ends.get(s).copied().unwrap_or(0);
        let _ = writeln!(c, "\t{bits:#x}ULL,");
    }
    let _ = write!(
        c,
        "}};\n\nstruct {{\n\t__uint(type, BPF_MAP_TYPE_ARRAY);\n\t__uint(max_entries, {});\n\t__type(key, __u32);\n\t__type(value, __u64);\n}} dpi_hits SEC(\".maps\");\n\n",
        a.rules.len()
    );
}
/// The scans, shared by every generated program: `DPI_SCAN(STEP, STOP)` walks at most DPI_CHUNKS * 16 + DPI_TAIL
/// bytes from `p`, sixteen bytes per bounds check (then `STOP`), then 8, 4, 2 and 1.
const SCAN: &str = r#"#define DPI_BLOCK(STEP, n)                                                    \
	do {                                                                  \
		if (left >= n && (const void *)(p + n) <= (const void *)end) { \
			for (int k = 0; k < n; k++)                           \
				STEP(p[k]);                                   \
			p += n;                                               \
			left -= n;                                            \
		}                                                             \
	} while (0)

#define DPI_SCAN(STEP, STOP)                                                  \
	do {                                                                  \
		__u64 i, left = 15;                                           \
                                                                              \
		_Pragma("clang loop unroll(disable)")                         \
		for (i = DPI_CHUNKS; i != 0; i--) {                           \
			if ((const void *)(p + 16) > (const void *)end)      \
				break;                                        \
			_Pragma("clang loop unroll(full)")                    \
			for (int k = 0; k < 16; k++)                          \
				STEP(p[k]);                                   \
			p += 16;                                              \
			STOP;                                                 \
		}                                                             \
		if (i == 0)                                                   \
			left = DPI_TAIL;                                      \
		DPI_BLOCK(STEP, 8);                                           \
		DPI_BLOCK(STEP, 4);                                           \
		DPI_BLOCK(STEP, 2);                                           \
		DPI_BLOCK(STEP, 1);                                           \
	} while (0)

/* The fast step: the next state of the fast automaton. */
#define DPI_FAST(c) (s = *(const dpi_fast_t *)(DPI_FAST_INDEX(s, (__u64)(c)) * sizeof(dpi_fast_t) + (unsigned long)table))
/* The slow step: the next state of the full automaton, and the patterns that end here. */
#define DPI_SLOW(c) (s = table[DPI_SLOW_INDEX(s, (__u64)(c))] & (DPI_SLOW_ROWS - 1), m |= dpi_ends[s])

/* The mask of the patterns that occur in the payload at offset off of the packet, from state start. */
__attribute__((noinline)) __u64 dpi_slow(struct xdp_md *ctx, __u32 off, __u32 start)
{
	const __u8 *data = (const __u8 *)(long)ctx->data;
	const __u8 *end = (const __u8 *)(long)ctx->data_end;
	const dpi_slow_t *table = dpi_next;
	const __u8 *p;
	__u64 s = start & (DPI_SLOW_ROWS - 1);
	__u64 m = 0;

	if (off > DPI_MAX_OFF)
		return 0;
	p = data + off;
	DPI_SCAN(DPI_SLOW, (void)0);
	return m;
}

static __always_inline void dpi_hit(__u32 rule)
{
	__u64 *hits = bpf_map_lookup_elem(&dpi_hits, &rule);

	if (hits)
		__sync_fetch_and_add(hits, 1);
}

"#;

/// The end of the XDP function in the table form: the fast scan, stopped at the first chunk boundary in DEAD or
/// MATCHED, then for a MATCHED packet the slow scan and the verdict.
const TABLE_TAIL: &str = r#"	{
		const dpi_fast_t *table = dpi_fast;
		const __u8 *p = payload;

		/* Keeps the table's address in a register: one add per byte instead of a reload. */
		asm volatile("" : "+r"(table));
		DPI_SCAN(DPI_FAST, if (s >= DPI_DEAD) goto dpi_done);
	dpi_done:
		if (s != DPI_MATCHED)
			return XDP_PASS;
		return dpi_verdict(dpi_slow(ctx, off, start));
	}
"#;

/// Ethernet (one optional VLAN tag), IPv4 (options; later fragments pass) or IPv6 (no extension headers), TCP or UDP:
/// `payload`, `proto` and `dport`. Whatever cannot be inspected passes.
const PARSE: &str = r#"	const __u8 *data = (const __u8 *)(long)ctx->data;
	const __u8 *end = (const __u8 *)(long)ctx->data_end;
	const __u8 *l3, *l4, *payload;
	__u32 type, proto, dport, off = 14, l4off, start;
	__u64 s;

	if ((const void *)(data + 14) > (const void *)end)
		return XDP_PASS;
	type = (__u32)data[12] << 8 | data[13];
	if (type == 0x8100 || type == 0x88a8) {
		if ((const void *)(data + 18) > (const void *)end)
			return XDP_PASS;
		type = (__u32)data[16] << 8 | data[17];
		off = 18;
	}
	l3 = data + off;
	if (type == 0x0800) {
		if ((const void *)(l3 + 20) > (const void *)end)
			return XDP_PASS;
		l4off = (l3[0] & 0xf) * 4;
		if (l4off < 20 || ((l3[6] & 0x1f) | l3[7]) != 0)
			return XDP_PASS;
		proto = l3[9];
	} else if (type == 0x86dd) {
		if ((const void *)(l3 + 40) > (const void *)end)
			return XDP_PASS;
		proto = l3[6];
		l4off = 40;
	} else {
		return XDP_PASS;
	}
	off += l4off;
	l4 = data + off;
	if (proto == 6) {
		if ((const void *)(l4 + 20) > (const void *)end)
			return XDP_PASS;
		l4off = (l4[12] >> 4) * 4;
		if (l4off < 20)
			return XDP_PASS;
	} else if (proto == 17) {
		if ((const void *)(l4 + 8) > (const void *)end)
			return XDP_PASS;
		l4off = 8;
	} else {
		return XDP_PASS;
	}
	dport = (__u32)l4[2] << 8 | l4[3];
	off += l4off;
	payload = data + off;
	if ((const void *)payload > (const void *)end)
		return XDP_PASS;
"#;

/// The start states by protocol and destination port (`start` of the full automaton, `s` of the fast one); packets no
/// rule looks at pass.
fn dispatch(c: &mut String, a: &Automaton, fast: &Fast) {
    for proto in [Proto::Tcp, Proto::Udp] {
        let classes: Vec<&Class> = a.classes.iter().filter(|k| k.proto == proto).collect();
        let _ = writeln!(c, "\tif (proto == {}) {{", proto.number());
        for class in &classes {
            let set = format!(
                "{{\n\t\t\tstart = {};\n\t\t\ts = {};\n\t\t}}",
                class.start, fast.of_state[class.start as usize]
            );
            match class.dport {
                Some(port) => {
                    let _ = writeln!(c, "\t\tif (dport == {port}) {set} else");
                }
                None => {
                    let _ = writeln!(c, "\t\t{set}");
                }
            }
        }
        if classes.last().is_none_or(|k| k.dport.is_some()) {
            c.push_str("\t\t\treturn XDP_PASS;\n");
        }
        c.push_str("\t} else\n");
    }
    c.push_str("\t\treturn XDP_PASS;\n");
}

/// Every rule whose patterns all occur counts a hit; the first drop or pass rule among them decides.
fn verdict(c: &mut String, a: &Automaton) {
    c.push_str("/* Hits for every rule whose patterns all occur; the first drop or pass rule among them decides. */\n");
    c.push_str("__attribute__((noinline)) int dpi_verdict(__u64 m)\n{\n\tint verdict = XDP_PASS, decided = 0;\n\n");
    for (k, (rule, mask)) in a.rules.iter().zip(&a.rule_masks).enumerate() {
        let _ = writeln!(
            c,
            "\tif ((m & {mask:#x}ULL) == {mask:#x}ULL) {{\n\t\tdpi_hit({k});"
        );
        let code = match rule.action {
            Action::Drop => Some("XDP_DROP"),
            Action::Pass => Some("XDP_PASS"),
            Action::Count => None,
        };
        if let Some(code) = code {
            let _ = writeln!(
                c,
                "\t\tif (!decided) {{\n\t\t\tverdict = {code};\n\t\t\tdecided = 1;\n\t\t}}"
            );
        }
        c.push_str("\t}\n");
    }
    c.push_str("\treturn verdict;\n}\n\n");
}
