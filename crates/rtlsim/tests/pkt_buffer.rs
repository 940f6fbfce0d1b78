//! rtl/sephirot/pkt_buffer.sv (with the difference buffer it instantiates) against a byte-array model of the
//! packet page: random packets in as frames, lane reads of every width at every alignment, lane writes with
//! overlaps (into the headroom too, as after bpf_xdp_adjust_head), and emission; plus its Yosys synthesis.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use common::Rng;
use hwxdp_rtlsim::synth_with;

const LANES: usize = 4;
const ENTRIES: usize = 32;
const FRAME: usize = 32;
const PAGE: usize = 4096;
const HEADROOM: usize = 256;
/// The lowest data start bpf_xdp_adjust_head allows (docs/memory-model.md: xdp_frame takes the first 40 bytes).
const LOWEST_DATA: usize = 40;
/// The highest data end bpf_xdp_adjust_tail allows (skb_shared_info takes the last 320 bytes).
const HIGHEST_END: usize = PAGE - 320;

/// A lane access: page offset, byte count as driven (0..15, more than 8 acting as 8), data for writes.
#[derive(Debug, Clone, Copy, Default)]
struct Access {
    addr: usize,
    bytes: u8,
    data: u64,
}

impl Access {
    fn width(&self) -> usize {
        usize::from(self.bytes.min(8))
    }
}

#[derive(Debug, Clone)]
enum Cmd {
    Clear,
    Frame {
        gap: u8,
        keep: usize,
        last: bool,
        data: [u8; FRAME],
    },
    Status,
    /// One cycle's lane reads and writes (boxed: the arrays dwarf the other commands).
    Cycle {
        reads: Box<[Option<Access>; LANES]>,
        writes: Box<[Option<Access>; LANES]>,
    },
    Emit {
        lo: usize,
        hi: usize,
        seed: u64,
    },
}

impl Cmd {
    fn line(&self) -> String {
        let mut line = String::new();
        match self {
            Cmd::Clear => line.push('c'),
            Cmd::Status => line.push('s'),
            Cmd::Frame {
                gap,
                keep,
                last,
                data,
            } => {
                let keep_mask = if *keep >= 32 {
                    u32::MAX
                } else {
                    (1u32 << keep) - 1
                };
                write!(line, "f {gap:x} {keep_mask:x} {:x} ", u8::from(*last)).unwrap();
                for byte in data.iter().rev() {
                    write!(line, "{byte:02x}").unwrap();
                }
            }
            Cmd::Cycle { reads, writes } => {
                let enables = |accesses: &[Option<Access>; LANES]| -> u8 {
                    (0..LANES)
                        .map(|lane| u8::from(accesses[lane].is_some()) << lane)
                        .sum()
                };
                write!(line, "x {:x}", enables(reads)).unwrap();
                for read in reads.iter() {
                    let read = read.unwrap_or_default();
                    write!(line, " {:x} {:x}", read.addr, read.bytes).unwrap();
                }
                write!(line, " {:x}", enables(writes)).unwrap();
                for write in writes.iter() {
                    let write = write.unwrap_or_default();
                    write!(line, " {:x} {:x} {:x}", write.addr, write.bytes, write.data).unwrap();
                }
            }
            Cmd::Emit { lo, hi, seed } => write!(line, "e {lo:x} {hi:x} {seed:x}").unwrap(),
        }
        line.push('\n');
        line
    }
}

/// The page as the module documents it: the bytes the input stored, and the difference buffer's words over them.
struct Model {
    stored: Box<[u8; PAGE]>,
    frames: usize,
    len: usize,
    complete: bool,
    /// word address -> the word's written bytes (byte index in the word -> value)
    words: BTreeMap<usize, BTreeMap<usize, u8>>,
    overflow: bool,
}

impl Model {
    fn new() -> Self {
        Self {
            stored: Box::new([0; PAGE]),
            frames: 0,
            len: 0,
            complete: false,
            words: BTreeMap::new(),
            overflow: false,
        }
    }

    fn byte(&self, addr: usize) -> u8 {
        let addr = addr % PAGE;
        self.words
            .get(&(addr / 8))
            .and_then(|bytes| bytes.get(&(addr % 8)).copied())
            .unwrap_or(self.stored[addr])
    }

    fn read(&self, access: &Access) -> u64 {
        (0..access.width())
            .map(|i| u64::from(self.byte(access.addr + i)) << (8 * i))
            .sum()
    }

    fn frame(&mut self, keep: usize, last: bool, data: &[u8; FRAME]) {
        let at = HEADROOM + self.frames * FRAME;
        if at < PAGE {
            for (i, (slot, &byte)) in self.stored[at..at + FRAME].iter_mut().zip(data).enumerate() {
                *slot = if i < keep { byte } else { 0 };
            }
            self.frames += 1;
            self.len += keep;
        }
        self.complete = last;
    }

    /// A cycle's writes: new words take free entries in lane order; those that do not fit are dropped with every
    /// byte written to them this cycle, and raise the overflow flag.
    fn write(&mut self, writes: &[Option<Access>; LANES]) {
        let bytes: Vec<(usize, u8)> = writes
            .iter()
            .flatten()
            .flat_map(|w| {
                (0..w.width()).map(move |i| ((w.addr + i) % PAGE, (w.data >> (8 * i)) as u8))
            })
            .collect();
        let mut new_words = Vec::new();
        for &(addr, _) in &bytes {
            let word = addr / 8;
            if !self.words.contains_key(&word) && !new_words.contains(&word) {
                new_words.push(word);
            }
        }
        let free = ENTRIES - self.words.len();
        if new_words.len() > free {
            self.overflow = true;
        }
        for &word in new_words.iter().take(free) {
            self.words.insert(word, BTreeMap::new());
        }
        for (addr, value) in bytes {
            if let Some(word) = self.words.get_mut(&(addr / 8)) {
                word.insert(addr % 8, value);
            }
        }
    }
}

/// Builds the stimulus of one packet of `len` bytes: input (with reads racing it), read sweeps, writes with an
/// adjust_head into the headroom, and emission.
fn packet(rng: &mut Rng, cmds: &mut Vec<Cmd>, len: usize, many_writes: bool) {
    cmds.push(Cmd::Clear);
    let frames = len.div_ceil(FRAME);
    let racing = rng.below_usize(3) == 0;
    for n in 0..frames {
        let mut data = [0u8; FRAME];
        for byte in data.iter_mut() {
            *byte = rng.next() as u8;
        }
        let last = n + 1 == frames;
        cmds.push(Cmd::Frame {
            gap: if rng.below_usize(4) == 0 {
                rng.below_usize(3) as u8
            } else {
                0
            },
            keep: if last { len - n * FRAME } else { FRAME },
            last,
            data,
        });
        // Reads while the packet is still arriving: stored frames read back, the rest as zero.
        if racing && n == frames / 2 {
            let mut reads = Vec::new();
            for _ in 0..16 {
                reads.push(Access {
                    addr: HEADROOM + rng.below_usize(len + 64),
                    bytes: rng.width(),
                    data: 0,
                });
            }
            push_reads(cmds, &reads);
        }
    }
    cmds.push(Cmd::Status);

    // Every width at every alignment in a frame, around the headroom's end, a random frame of the packet and the
    // packet's end; then single reads of the last byte and across the end, the headroom and the page's end.
    let end = HEADROOM + len;
    let random_frame = HEADROOM + FRAME * rng.below_usize(frames);
    let mut reads = Vec::new();
    for base in [HEADROOM - FRAME / 2, random_frame, end - FRAME / 2] {
        for align in 0..FRAME {
            for bytes in 1..=8u8 {
                reads.push(Access {
                    addr: base + align,
                    bytes,
                    data: 0,
                });
            }
        }
    }
    for (addr, bytes) in [
        (end - 1, 1),
        (end - 1, 8),
        (end - 3, 4),
        (end, 2),
        (0, 8),
        (LOWEST_DATA, 8),
        (PAGE - 8, 8),
        (PAGE - 3, 8),
        (rng.below_usize(PAGE), 0),
        (rng.below_usize(PAGE), 9 + rng.below_usize(7) as u8),
    ] {
        reads.push(Access {
            addr,
            bytes,
            data: 0,
        });
    }
    push_reads(cmds, &reads);

    // A simulated bpf_xdp_adjust_head: the program moves data down by `delta` and writes a header there, lanes in
    // parallel with a later lane overwriting part of an earlier one; then edits inside the packet, some lanes
    // reading what others write in the same cycle and the next.
    let delta = match rng.below_usize(4) {
        0 => 0,
        1 => HEADROOM - LOWEST_DATA,
        _ => rng.below_usize(HEADROOM - LOWEST_DATA + 1),
    };
    let lo = HEADROOM - delta;
    let header = delta.min(if many_writes { delta } else { 64 });
    let mut at = lo;
    while at < lo + header {
        let mut writes = [None; LANES];
        for write in writes.iter_mut() {
            if at < lo + header {
                let bytes = [8, 6, 4, 2, 1][rng.below_usize(5)].min((lo + header - at) as u8);
                *write = Some(Access {
                    addr: at,
                    bytes,
                    data: rng.next(),
                });
                at += usize::from(bytes);
            }
        }
        if rng.below_usize(2) == 0 {
            if let Some(first) = writes[0] {
                writes[LANES - 1] = Some(Access {
                    addr: first.addr + rng.below_usize(4),
                    bytes: 2,
                    data: rng.next(),
                });
            }
        }
        cmds.push(Cmd::Cycle {
            reads: Box::new([None; LANES]),
            writes: Box::new(writes),
        });
    }
    let edits = if many_writes { 30 } else { 6 };
    let region = (lo, (end - lo).min(if many_writes { 1500 } else { 80 }));
    for _ in 0..edits {
        let mut writes = [None; LANES];
        let mut reads = [None; LANES];
        for lane in 0..LANES {
            let access = Access {
                addr: region.0 + rng.below_usize(region.1),
                bytes: rng.width(),
                data: rng.next(),
            };
            if rng.below_usize(3) != 0 {
                writes[lane] = Some(access);
            }
            reads[lane] = Some(match rng.below_usize(3) {
                // The bytes another lane writes in this very cycle.
                0 => writes[rng.below_usize(LANES)].unwrap_or(access),
                _ => Access {
                    addr: region.0 + rng.below_usize(region.1),
                    bytes: rng.width(),
                    data: 0,
                },
            });
        }
        cmds.push(Cmd::Cycle {
            reads: Box::new(reads),
            writes: Box::new(writes),
        });
        let mut after = [None; LANES];
        for (lane, write) in writes.iter().enumerate() {
            after[(lane + 1) % LANES] = *write;
        }
        cmds.push(Cmd::Cycle {
            reads: Box::new(after),
            writes: Box::new([None; LANES]),
        });
    }
    for base in [lo.saturating_sub(4), end - 6] {
        let reads: Vec<Access> = (0..8)
            .map(|i| Access {
                addr: base + i,
                bytes: 8,
                data: 0,
            })
            .collect();
        push_reads(cmds, &reads);
    }
    cmds.push(Cmd::Status);

    // Emission from the moved start to the packet's end, sometimes grown or shrunk as adjust_tail would.
    let hi = match rng.below_usize(4) {
        0 => (end + rng.below_usize(200)).min(HIGHEST_END),
        1 => (lo + 14 + rng.below_usize(end - lo - 13)).min(end),
        _ => end,
    };
    let seed = if rng.below_usize(3) == 0 {
        0
    } else {
        rng.next() | 1
    };
    cmds.push(Cmd::Emit { lo, hi, seed });
    cmds.push(Cmd::Status);
}

/// Groups reads four to a cycle.
fn push_reads(cmds: &mut Vec<Cmd>, reads: &[Access]) {
    for chunk in reads.chunks(LANES) {
        let mut lanes = [None; LANES];
        for (lane, read) in chunk.iter().enumerate() {
            lanes[lane] = Some(*read);
        }
        cmds.push(Cmd::Cycle {
            reads: Box::new(lanes),
            writes: Box::new([None; LANES]),
        });
    }
}

fn stimulus() -> Vec<Cmd> {
    let mut rng = Rng(0x706b_7462_7566_6631);
    let mut cmds = Vec::new();
    for n in 0..40 {
        let len = match n % 8 {
            0 => 14,
            1 => 3520,
            2 => FRAME * (1 + rng.below_usize(110)),
            3 => 14 + rng.below_usize(100),
            _ => 14 + rng.below_usize(3520 - 14 + 1),
        };
        packet(&mut rng, &mut cmds, len, n % 10 == 7);
    }
    // An empty emission range sends nothing.
    cmds.push(Cmd::Emit {
        lo: HEADROOM,
        hi: HEADROOM,
        seed: 0,
    });
    cmds
}

/// Runs the commands through the model and returns its output lines.
fn simulate(cmds: &[Cmd]) -> Vec<String> {
    let spec = common::unit_spec("pkt_buffer")
        .source("sephirot/diff_buffer.sv")
        .source("sephirot/pkt_buffer.sv");
    common::run_testbench(&spec, cmds.iter().map(Cmd::line).collect())
}

/// What the commands exercised, for the coverage assertions.
#[derive(Debug, Default)]
struct Coverage {
    reads: usize,
    headroom_reads: usize,
    beats: usize,
    overflowed_packets: usize,
    emissions_below_headroom: usize,
}

fn compare(cmds: &[Cmd], lines: &[String]) -> Coverage {
    let mut model = Model::new();
    let mut out = lines.iter();
    let mut next = |what: &str| -> Vec<String> {
        let line = out
            .next()
            .unwrap_or_else(|| panic!("output ends before a {what} line"));
        line.split_whitespace().map(str::to_string).collect()
    };
    let hex = |field: &str| u64::from_str_radix(field, 16).expect("hex field");
    let mut coverage = Coverage::default();
    for (index, cmd) in cmds.iter().enumerate() {
        match cmd {
            Cmd::Clear => model = Model::new(),
            Cmd::Frame {
                keep, last, data, ..
            } => model.frame(*keep, *last, data),
            Cmd::Status => {
                let got = next("status");
                let expected = format!(
                    "s {:x} {:x} {:x} {:x} 0",
                    model.len,
                    u8::from(model.complete),
                    u8::from(model.overflow),
                    u8::from(!model.complete)
                );
                assert_eq!(got.join(" "), expected, "command {index}: {cmd:x?}");
            }
            Cmd::Cycle { reads, writes } => {
                model.write(writes);
                let got = next("read");
                assert_eq!(got.len(), 1 + LANES, "command {index}: {got:?}");
                for (lane, read) in reads.iter().enumerate() {
                    if let Some(read) = read {
                        let expected = model.read(read);
                        assert_eq!(
                            hex(&got[1 + lane]),
                            expected,
                            "command {index} lane {lane}: read {read:x?}, got {:x} expected {expected:x} \
                             (cycle {cmd:x?})",
                            hex(&got[1 + lane])
                        );
                        coverage.reads += 1;
                        coverage.headroom_reads += usize::from(read.addr < HEADROOM);
                    }
                }
            }
            Cmd::Emit { lo, hi, seed } => {
                let bytes: Vec<u8> = (*lo..*hi).map(|addr| model.byte(addr)).collect();
                let beats: Vec<&[u8]> = bytes.chunks(FRAME).collect();
                for (n, beat) in beats.iter().enumerate() {
                    let got = next("beat");
                    assert_eq!(got.len(), 4, "command {index}: {got:?}");
                    assert_eq!(got[0], "b", "command {index}: beat {n} of {}", beats.len());
                    let keep = if beat.len() == FRAME {
                        u32::MAX
                    } else {
                        (1u32 << beat.len()) - 1
                    };
                    let mut data = String::new();
                    for i in (0..FRAME).rev() {
                        write!(data, "{:02x}", beat.get(i).copied().unwrap_or(0)).unwrap();
                    }
                    let expected = format!("{keep:x} {:x} {data}", u8::from(n + 1 == beats.len()));
                    assert_eq!(
                        got[1..].join(" "),
                        expected,
                        "command {index}: beat {n} of {} ({cmd:x?})",
                        beats.len()
                    );
                }
                let got = next("emission end");
                assert_eq!(
                    got[0],
                    "e",
                    "command {index}: more beats than {}",
                    beats.len()
                );
                // Without backpressure a beat leaves every cycle: the first two cycles after emit_i.
                if *seed == 0 && !beats.is_empty() {
                    assert_eq!(hex(&got[1]), beats.len() as u64 + 2, "command {index}");
                }
                coverage.beats += beats.len();
                coverage.overflowed_packets += usize::from(model.overflow);
                coverage.emissions_below_headroom += usize::from(*lo < HEADROOM);
            }
        }
    }
    assert!(out.next().is_none(), "more output than commands ask for");
    coverage
}

#[test]
fn pkt_buffer_matches_the_page_model() {
    let cmds = stimulus();
    let lines = simulate(&cmds);
    let coverage = compare(&cmds, &lines);
    assert!(coverage.reads > 20_000, "{coverage:?}");
    assert!(coverage.headroom_reads > 1_000, "{coverage:?}");
    assert!(coverage.beats > 1_000, "{coverage:?}");
    assert!(coverage.emissions_below_headroom > 20, "{coverage:?}");
    // The packets with many writes overflow the difference buffer; the others fit.
    assert!(
        (1..10).contains(&coverage.overflowed_packets),
        "{coverage:?}"
    );
}

/// Synthesizes pkt_buffer with the diff_buffer it instantiates, at 2 lanes and 4 difference-buffer entries (as
/// diff_buffer's own synthesis test): 4 lanes and 8 entries took 8 minutes of `make test` (the difference buffer's
/// overlays are wide AND-OR trees, growing with lanes x entries); the module header's figures come from a manual
/// run at the defaults.
#[test]
fn pkt_buffer_synthesizes_for_ultrascale_plus() {
    let root = common::workspace_root();
    let sources = [
        root.join("rtl/sephirot/diff_buffer.sv"),
        root.join("rtl/sephirot/pkt_buffer.sv"),
    ];
    synth_with(&sources, "pkt_buffer", &[("LANES", 2), ("ENTRIES", 4)])
        .unwrap_or_else(|err| panic!("{err}"));
}
