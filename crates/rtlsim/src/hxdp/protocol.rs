//! The text protocol of the hXDP module's Verilator harness (`sim/hxdp/hxdp_harness.cpp`, `docs/hxdp-module.md`
//! "Harness protocol"): one command per line on its stdin, one answer line per command on its stdout. Numbers are hex
//! without `0x`; byte strings are hex pairs in memory order (byte 0 first), `-` when empty.

use std::fmt::Write as _;
use std::path::Path;

/// One command line to the harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// Writes one instruction slot: `imem BUNDLE LANE SLOT`.
    Imem {
        /// Bundle (row) of instruction memory.
        bundle: usize,
        /// Lane within the bundle.
        lane: usize,
        /// The 64-bit slot encoding (`hwxdp_hxdp::isa::encode_op`).
        slot: u64,
    },
    /// The entry bundle of one program of the image: `prog IDX ENTRY`.
    Prog {
        /// Program index in the object.
        idx: usize,
        /// Its first bundle.
        entry: u32,
    },
    /// One map definition: `map IDX TYPE KEY_SIZE VALUE_SIZE MAX_ENTRIES FLAGS`.
    Map {
        /// Map index in the object.
        idx: usize,
        /// `BPF_MAP_TYPE_*` as the hardware builds it.
        map_type: u32,
        /// Key bytes.
        key_size: u32,
        /// Value bytes.
        value_size: u32,
        /// Entries.
        max_entries: u32,
        /// Creation flags.
        flags: u32,
    },
    /// Lays out the maps written so far: `maps_done`.
    MapsDone,
    /// `BPF_MAP_UPDATE_ELEM` through the host port: `host_update MAP FLAGS KEY VALUE`.
    HostUpdate {
        /// Map index.
        map: usize,
        /// `BPF_ANY` / `BPF_NOEXIST` / `BPF_EXIST`.
        flags: u64,
        /// Key bytes.
        key: &'a [u8],
        /// Value bytes (CPU 0's copy for per-CPU maps).
        value: &'a [u8],
    },
    /// `BPF_MAP_LOOKUP_ELEM` through the host port: `host_lookup MAP KEY`.
    HostLookup {
        /// Map index.
        map: usize,
        /// Key bytes.
        key: &'a [u8],
    },
    /// `BPF_MAP_DELETE_ELEM` through the host port: `host_delete MAP KEY`.
    HostDelete {
        /// Map index.
        map: usize,
        /// Key bytes.
        key: &'a [u8],
    },
    /// Reads one slot of a map (for dumps): `host_slot MAP SLOT`.
    HostSlot {
        /// Map index.
        map: usize,
        /// Slot number, as `hwxdp_maps` numbers them.
        slot: u32,
    },
    /// Runs one packet: `packet IFINDEX RXQ TIME_NS BYTES`.
    Packet {
        /// `ingress_ifindex`.
        ifindex: u32,
        /// `rx_queue_index`.
        rxq: u32,
        /// Arrival time; `bpf_ktime_get_ns` reads it plus the cycles run so far.
        time_ns: u64,
        /// The frame.
        bytes: &'a [u8],
    },
    /// Starts writing a VCD waveform: `vcd UNIT HALF FILE`, time in `UNIT`s (`1ps`, `1fs`) from 0 at the next
    /// cycle, `HALF` of them (hex) per half clock period.
    Vcd {
        /// The waveform's time unit.
        unit: &'a str,
        /// Half a clock period in units.
        half: u64,
        /// The file (the rest of the line: it may hold spaces).
        path: &'a Path,
    },
    /// Stops writing the waveform and closes the file: `vcd_off`.
    VcdOff,
    /// Reads the packet counters: `counters`.
    Counters,
    /// Drains the records of the RINGBUF map the helper module serves: `ringbuf MAP`.
    Ringbuf {
        /// Map index.
        map: usize,
    },
    /// Ends the harness: `quit` (no answer).
    Quit,
    /// A line formatted elsewhere (the route table's `fib_*` lines), answered `ok`.
    Raw(&'a str),
}

/// Appends `bytes` as hex pairs, `-` when empty.
fn push_hex(line: &mut String, bytes: &[u8]) {
    if bytes.is_empty() {
        line.push('-');
    }
    for b in bytes {
        let _ = write!(line, "{b:02x}");
    }
}

impl Command<'_> {
    /// The command's line, without the newline.
    pub fn line(&self) -> String {
        let mut l = String::new();
        match self {
            Command::Imem { bundle, lane, slot } => {
                let _ = write!(l, "imem {bundle:x} {lane:x} {slot:x}");
            }
            Command::Prog { idx, entry } => {
                let _ = write!(l, "prog {idx:x} {entry:x}");
            }
            Command::Map {
                idx,
                map_type,
                key_size,
                value_size,
                max_entries,
                flags,
            } => {
                let _ = write!(
                    l,
                    "map {idx:x} {map_type:x} {key_size:x} {value_size:x} {max_entries:x} {flags:x}"
                );
            }
            Command::MapsDone => l.push_str("maps_done"),
            Command::HostUpdate {
                map,
                flags,
                key,
                value,
            } => {
                let _ = write!(l, "host_update {map:x} {flags:x} ");
                push_hex(&mut l, key);
                l.push(' ');
                push_hex(&mut l, value);
            }
            Command::HostLookup { map, key } => {
                let _ = write!(l, "host_lookup {map:x} ");
                push_hex(&mut l, key);
            }
            Command::HostDelete { map, key } => {
                let _ = write!(l, "host_delete {map:x} ");
                push_hex(&mut l, key);
            }
            Command::HostSlot { map, slot } => {
                let _ = write!(l, "host_slot {map:x} {slot:x}");
            }
            Command::Packet {
                ifindex,
                rxq,
                time_ns,
                bytes,
            } => {
                let _ = write!(l, "packet {ifindex:x} {rxq:x} {time_ns:x} ");
                push_hex(&mut l, bytes);
            }
            Command::Vcd { unit, half, path } => {
                let _ = write!(l, "vcd {unit} {half:x} {}", path.display());
            }
            Command::VcdOff => l.push_str("vcd_off"),
            Command::Counters => l.push_str("counters"),
            Command::Ringbuf { map } => {
                let _ = write!(l, "ringbuf {map:x}");
            }
            Command::Quit => l.push_str("quit"),
            Command::Raw(line) => l.push_str(line),
        }
        l
    }
}

/// What one packet did, from an `out` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketOut {
    /// The program's return value (0 after a fault).
    pub verdict: u32,
    /// The core stopped the program.
    pub fault: bool,
    /// Cycles from the first frame's write through the verdict.
    pub cycles: u64,
    /// Where `bpf_redirect` / `bpf_redirect_map` sent the packet: (map index or `None`, key or ifindex).
    pub redirect: Option<(Option<usize>, u64)>,
    /// The packet as it left, `data_meta..data_end`.
    pub bytes: Vec<u8>,
}

/// One answer line, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `ok`.
    Ok,
    /// `ret RET`: a host update or delete's return value (0 or a negative errno).
    Ret(i64),
    /// `ret RET HIT VALUE`: a host lookup.
    Lookup {
        /// 0 or a negative errno.
        ret: i64,
        /// The key was found.
        hit: bool,
        /// The value (meaningful when `hit`).
        value: Vec<u8>,
    },
    /// `slot HIT KEY VALUE`: one slot of a map.
    Slot {
        /// The slot holds an entry.
        hit: bool,
        /// Its key.
        key: Vec<u8>,
        /// Its value.
        value: Vec<u8>,
    },
    /// `out ...`: one packet's result.
    Out(PacketOut),
    /// `counters RX TX DROP`.
    Counters {
        /// Packets received.
        rx: u64,
        /// Packets passed, transmitted or redirected.
        tx: u64,
        /// Packets dropped, aborted or refused at the queue.
        drop: u64,
    },
    /// `records COUNT REC...`: a ring buffer's records, oldest first.
    Records(Vec<Vec<u8>>),
    /// `error <what>`: the harness refused the command.
    Error(String),
}

/// Why an answer line could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed answer {line:?}: {why}")]
pub struct ParseError {
    /// The line as printed.
    pub line: String,
    /// What is wrong with it.
    pub why: String,
}

/// Bytes of a hex string (`-` is empty).
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text == "-" {
        return Some(Vec::new());
    }
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// The fields of one answer line after its keyword, checked one by one.
struct Fields<'a> {
    line: &'a str,
    words: std::str::SplitWhitespace<'a>,
}

impl<'a> Fields<'a> {
    fn fail<T>(&self, why: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line: self.line.to_string(),
            why: why.into(),
        })
    }

    fn word(&mut self, what: &str) -> Result<&'a str, ParseError> {
        match self.words.next() {
            Some(w) => Ok(w),
            None => self.fail(format!("no {what}")),
        }
    }

    fn number(&mut self, what: &str) -> Result<u64, ParseError> {
        let w = self.word(what)?;
        match u64::from_str_radix(w, 16) {
            Ok(n) => Ok(n),
            Err(_) => self.fail(format!("{what} {w:?} is not a hex number")),
        }
    }

    fn flag(&mut self, what: &str) -> Result<bool, ParseError> {
        match self.number(what)? {
            0 => Ok(false),
            1 => Ok(true),
            n => self.fail(format!("{what} is {n:x}, not 0 or 1")),
        }
    }

    fn bytes(&mut self, what: &str) -> Result<Vec<u8>, ParseError> {
        let w = self.word(what)?;
        match unhex(w) {
            Some(b) => Ok(b),
            None => self.fail(format!("{what} is not a string of hex pairs")),
        }
    }

    fn end(mut self, answer: Answer) -> Result<Answer, ParseError> {
        match self.words.next() {
            Some(extra) => self.fail(format!("unexpected {extra:?} at the end")),
            None => Ok(answer),
        }
    }
}

/// Parses one answer line.
pub fn parse(line: &str) -> Result<Answer, ParseError> {
    let trimmed = line.trim_end();
    if let Some(what) = trimmed.strip_prefix("error") {
        if what.is_empty() || what.starts_with(' ') {
            return Ok(Answer::Error(what.trim().to_string()));
        }
    }
    let mut f = Fields {
        line: trimmed,
        words: trimmed.split_whitespace(),
    };
    let keyword = f.word("answer")?;
    match keyword {
        "ok" => f.end(Answer::Ok),
        "ret" => {
            let ret = f.number("return value")? as i64;
            match f.words.clone().next() {
                None => Ok(Answer::Ret(ret)),
                Some(_) => {
                    let hit = f.flag("hit")?;
                    let value = f.bytes("value")?;
                    f.end(Answer::Lookup { ret, hit, value })
                }
            }
        }
        "slot" => {
            let hit = f.flag("hit")?;
            let key = f.bytes("key")?;
            let value = f.bytes("value")?;
            f.end(Answer::Slot { hit, key, value })
        }
        "out" => {
            let verdict = f.number("verdict")?;
            let Ok(verdict) = u32::try_from(verdict) else {
                return f.fail("verdict wider than 32 bits");
            };
            let fault = f.flag("fault")?;
            let cycles = f.number("cycles")?;
            let set = f.flag("redirect set")?;
            let by_map = f.flag("redirect by map")?;
            let map = f.number("redirect map")?;
            let key = f.number("redirect key")?;
            let bytes = f.bytes("packet bytes")?;
            let redirect = set.then_some((by_map.then_some(map as usize), key));
            f.end(Answer::Out(PacketOut {
                verdict,
                fault,
                cycles,
                redirect,
                bytes,
            }))
        }
        "records" => {
            let count = f.number("record count")?;
            let mut records = Vec::new();
            for i in 0..count {
                records.push(f.bytes(&format!("record {i}"))?);
            }
            f.end(Answer::Records(records))
        }
        "counters" => {
            let rx = f.number("rx")?;
            let tx = f.number("tx")?;
            let drop = f.number("drop")?;
            f.end(Answer::Counters { rx, tx, drop })
        }
        other => f.fail(format!("unknown answer {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_hex_without_prefix_and_bytes_in_memory_order() {
        let cases = [
            (
                Command::Imem {
                    bundle: 26,
                    lane: 3,
                    slot: 0x1122_3344_5566_77b7,
                },
                "imem 1a 3 11223344556677b7",
            ),
            (
                Command::Prog {
                    idx: 1,
                    entry: 0x20,
                },
                "prog 1 20",
            ),
            (
                Command::Map {
                    idx: 0,
                    map_type: 11,
                    key_size: 8,
                    value_size: 16,
                    max_entries: 256,
                    flags: 1,
                },
                "map 0 b 8 10 100 1",
            ),
            (Command::MapsDone, "maps_done"),
            (
                Command::HostUpdate {
                    map: 2,
                    flags: 1,
                    key: &[0x0a, 0, 0, 1],
                    value: &[0xff, 0],
                },
                "host_update 2 1 0a000001 ff00",
            ),
            (
                Command::HostLookup {
                    map: 0,
                    key: &[1, 2],
                },
                "host_lookup 0 0102",
            ),
            (Command::HostDelete { map: 10, key: &[] }, "host_delete a -"),
            (Command::HostSlot { map: 1, slot: 1024 }, "host_slot 1 400"),
            (
                Command::Packet {
                    ifindex: 5,
                    rxq: 127,
                    time_ns: 1_000_000_000,
                    bytes: &[0xde, 0xad, 0xbe, 0xef],
                },
                "packet 5 7f 3b9aca00 deadbeef",
            ),
            (
                Command::Vcd {
                    unit: "1ps",
                    half: 3200,
                    path: Path::new("/tmp/my waves.vcd"),
                },
                "vcd 1ps c80 /tmp/my waves.vcd",
            ),
            (Command::VcdOff, "vcd_off"),
            (Command::Counters, "counters"),
            (Command::Ringbuf { map: 12 }, "ringbuf c"),
            (Command::Quit, "quit"),
        ];
        for (command, line) in cases {
            assert_eq!(command.line(), line);
        }
    }

    #[test]
    fn answers_parse_into_their_fields() {
        assert_eq!(parse("ok"), Ok(Answer::Ok));
        assert_eq!(parse("ok\r"), Ok(Answer::Ok));
        assert_eq!(parse("ret 0"), Ok(Answer::Ret(0)));
        assert_eq!(parse("ret fffffffffffffff9"), Ok(Answer::Ret(-7)));
        assert_eq!(
            parse("ret 0 1 0102030405060708"),
            Ok(Answer::Lookup {
                ret: 0,
                hit: true,
                value: vec![1, 2, 3, 4, 5, 6, 7, 8]
            })
        );
        assert_eq!(
            parse("ret fffffffffffffffe 0 -"),
            Ok(Answer::Lookup {
                ret: -2,
                hit: false,
                value: vec![]
            })
        );
        assert_eq!(
            parse("slot 1 0a000001 2a00000000000000"),
            Ok(Answer::Slot {
                hit: true,
                key: vec![10, 0, 0, 1],
                value: vec![42, 0, 0, 0, 0, 0, 0, 0]
            })
        );
        assert_eq!(
            parse("counters 3 2 1"),
            Ok(Answer::Counters {
                rx: 3,
                tx: 2,
                drop: 1
            })
        );
        assert_eq!(
            parse("error map 2: type 1b not built"),
            Ok(Answer::Error("map 2: type 1b not built".into()))
        );
        assert_eq!(parse("error"), Ok(Answer::Error(String::new())));
        assert_eq!(
            parse("records 2 0102 -"),
            Ok(Answer::Records(vec![vec![1, 2], vec![]]))
        );
        assert_eq!(parse("records 0"), Ok(Answer::Records(vec![])));
    }

    #[test]
    fn packet_results_carry_verdict_fault_cycles_redirect_and_bytes() {
        assert_eq!(
            parse("out 4 0 2a 1 1 3 7 0011"),
            Ok(Answer::Out(PacketOut {
                verdict: 4,
                fault: false,
                cycles: 42,
                redirect: Some((Some(3), 7)),
                bytes: vec![0, 0x11],
            }))
        );
        assert_eq!(
            parse("out 4 0 9 1 0 0 5 ff").map(|a| match a {
                Answer::Out(o) => o.redirect,
                _ => None,
            }),
            Ok(Some((None, 5)))
        );
        assert_eq!(
            parse("out 0 1 3 0 0 0 0 ab"),
            Ok(Answer::Out(PacketOut {
                verdict: 0,
                fault: true,
                cycles: 3,
                redirect: None,
                bytes: vec![0xab],
            }))
        );
    }

    #[test]
    fn malformed_answers_say_what_is_wrong() {
        let why = |line: &str| parse(line).expect_err(line).why;
        assert_eq!(why(""), "no answer");
        assert_eq!(why("okay"), "unknown answer \"okay\"");
        assert_eq!(why("ok 1"), "unexpected \"1\" at the end");
        assert_eq!(why("ret zz"), "return value \"zz\" is not a hex number");
        assert_eq!(why("ret 0 2 00"), "hit is 2, not 0 or 1");
        assert_eq!(why("slot 1 abc 00"), "key is not a string of hex pairs");
        assert_eq!(why("out 4 0 2a 1 1 3"), "no redirect key");
        assert_eq!(
            why("out 100000000 0 1 0 0 0 0 -"),
            "verdict wider than 32 bits"
        );
        assert_eq!(why("counters 1 2"), "no drop");
        assert_eq!(why("records 2 00"), "no record 1");
        assert_eq!(why("records 1 00 11"), "unexpected \"11\" at the end");
        assert_eq!(why("errors"), "unknown answer \"errors\"");
    }

    #[test]
    fn hex_strings_round_trip() {
        let mut s = String::new();
        push_hex(&mut s, &[0, 0x7f, 0xff]);
        assert_eq!(s, "007fff");
        assert_eq!(unhex(&s), Some(vec![0, 0x7f, 0xff]));
        assert_eq!(unhex("-"), Some(vec![]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("0g"), None);
        assert_eq!(unhex("é1"), None);
    }
}
