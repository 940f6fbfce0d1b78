//! The text protocol of `sim/ehdl/ehdl_pipe_tb.cpp` (documented at its top): one run is the whole input written at
//! once (configuration, host-port writes, dump requests, packets) and the whole output read back (packets in order,
//! dumps, cycle figures).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{EhdlRtlError, PacketIn};

/// One host-port write: 8 bytes (`data`, little-endian) at a byte address of map `map`, bytes chosen by `mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HostWrite {
    pub(super) map: u32,
    pub(super) addr: u32,
    pub(super) data: u64,
    pub(super) mask: u8,
}

/// A dump request: `bytes` bytes of map `map` from host address `base`, read 8 at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Dump {
    pub(super) map: u32,
    pub(super) bytes: u32,
    pub(super) base: u32,
}

/// A waveform recorded during a run: packets `first..end` of the batch (from the cycle the first is offered to the
/// cycle the last one's last beat leaves) into `path`, time in `unit`s from `start`, `half` of them per half period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Waves {
    pub(super) first: u64,
    pub(super) end: u64,
    pub(super) unit: &'static str,
    pub(super) half: u64,
    pub(super) start: u64,
    pub(super) path: std::path::PathBuf,
}

/// What the simulation printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Printed {
    /// Per packet, in order: verdict (`m_axis_tuser_o`), redirect (`m_axis_tdest_o`) and bytes.
    pub(super) packets: Vec<(u32, u64, Vec<u8>)>,
    /// The dumps, in request order.
    pub(super) dumps: Vec<Vec<u8>>,
    pub(super) cycles: u64,
    pub(super) latency: u64,
    pub(super) beats: u64,
    pub(super) stalls: u64,
    /// Cycles in which a flush evaluation block flushed (flush and replay only).
    pub(super) flushes: u64,
    /// The time of the waveform's last change, when one was recorded.
    pub(super) vcd_end: Option<u64>,
}

/// `writes` as host-port writes of `bytes` from byte address `base` of map `map`, 8 bytes a write; chunks that are
/// all zero are left out (the blocks are zeroed at reset) unless `zeros`.
pub(super) fn write_bytes(
    out: &mut Vec<HostWrite>,
    map: u32,
    base: u32,
    bytes: &[u8],
    zeros: bool,
) {
    for (j, chunk) in bytes.chunks(8).enumerate() {
        if !zeros && chunk.iter().all(|&b| b == 0) {
            continue;
        }
        let data = chunk
            .iter()
            .enumerate()
            .fold(0u64, |v, (i, &b)| v | u64::from(b) << (8 * i));
        out.push(HostWrite {
            map,
            addr: base + 8 * j as u32,
            data,
            mask: ((1u16 << chunk.len()) - 1) as u8,
        });
    }
}

/// The input of one run: back to back, no output back-pressure, the stall count reported, and `waves` recorded.
pub(super) fn input(
    writes: &[HostWrite],
    dumps: &[Dump],
    packets: &[PacketIn],
    waves: Option<&Waves>,
) -> String {
    let mut s = String::from("cfg 0 0 1 1\n");
    if let Some(v) = waves {
        let _ = writeln!(
            s,
            "vcd {:x} {:x} {} {:x} {:x} {}",
            v.first,
            v.end,
            v.unit,
            v.half,
            v.start,
            v.path.display()
        );
    }
    for w in writes {
        let _ = writeln!(s, "w {:x} {:x} {:x} {:x}", w.map, w.addr, w.data, w.mask);
    }
    for d in dumps {
        let _ = writeln!(s, "m {:x} {:x} {:x}", d.map, d.bytes, d.base);
    }
    for p in packets {
        let _ = write!(s, "{:x} {:x} ", p.md.ingress_ifindex, p.md.rx_queue_index);
        for b in &p.bytes {
            let _ = write!(s, "{b:02x}");
        }
        let _ = writeln!(s, " {:x}", p.time_ns);
    }
    s
}

/// Runs `executable` on `input` and parses what it printed; `program` names the run in errors.
pub(super) fn run(
    executable: &Path,
    input: String,
    program: &str,
) -> Result<Printed, EhdlRtlError> {
    let start = |source| EhdlRtlError::Start {
        executable: executable.to_path_buf(),
        source,
    };
    let mut child = Command::new(executable)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(start)?;
    let mut stdin = child.stdin.take().expect("stdin was piped");
    // The model reads all its input before it prints, but a large input must not fill the pipe while this thread
    // waits: a writer thread feeds it.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(start)?;
    let written = writer.join().unwrap_or(Ok(()));
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(EhdlRtlError::Failed {
            program: program.to_string(),
            status: out.status.to_string(),
            stderr: stderr.lines().take(4).collect::<Vec<_>>().join("; "),
        });
    }
    written.map_err(start)?;
    parse(&String::from_utf8_lossy(&out.stdout)).map_err(|why| EhdlRtlError::Output {
        program: program.to_string(),
        why,
    })
}

/// Parses the model's output.
pub(super) fn parse(text: &str) -> Result<Printed, String> {
    let mut p = Printed::default();
    let mut figures = false;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str, radix: u32| {
            u64::from_str_radix(s, radix).map_err(|_| format!("{s:?} is not a number in {line:?}"))
        };
        match f.as_slice() {
            ["pkt", v, d, b] => {
                let verdict =
                    u32::try_from(num(v, 16)?).map_err(|_| format!("verdict in {line:?}"))?;
                p.packets.push((verdict, num(d, 16)?, unhex(b)?));
            }
            ["map", _, b] => p.dumps.push(unhex(b)?),
            ["vcd", t] => p.vcd_end = Some(num(t, 10)?),
            ["cycles", c, "latency", l, "beats", b, "stalls", s, "flushes", f] => {
                p.cycles = num(c, 10)?;
                p.latency = num(l, 10)?;
                p.beats = num(b, 10)?;
                p.stalls = num(s, 10)?;
                p.flushes = num(f, 10)?;
                figures = true;
            }
            _ => return Err(format!("unexpected line {line:?}")),
        }
    }
    if !figures {
        return Err("no cycle figures at the end of its output".into());
    }
    Ok(p)
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits in {s:?}"));
    }
    (0..s.len() / 2)
        .map(|i| {
            u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| format!("{s:?} is not hex"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_has_config_writes_dumps_and_packets_in_hex() {
        let mut writes = Vec::new();
        write_bytes(
            &mut writes,
            2,
            0x10,
            &[1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
            false,
        );
        assert_eq!(
            writes,
            [
                HostWrite {
                    map: 2,
                    addr: 0x10,
                    data: 0x0201,
                    mask: 0xff
                },
                HostWrite {
                    map: 2,
                    addr: 0x20,
                    data: 9,
                    mask: 1
                }
            ]
        );
        let md = hwxdp_xdp::XdpMd {
            ingress_ifindex: 5,
            rx_queue_index: 17,
        };
        let text = input(
            &writes,
            &[Dump {
                map: 2,
                bytes: 24,
                base: 0x4000_0000,
            }],
            &[PacketIn {
                bytes: vec![0xab, 0x01],
                md,
                time_ns: 300,
            }],
            None,
        );
        assert_eq!(
            text,
            "cfg 0 0 1 1\nw 2 10 201 ff\nw 2 20 9 1\nm 2 18 40000000\n5 11 ab01 12c\n"
        );
        let waves = Waves {
            first: 1,
            end: 3,
            unit: "1ps",
            half: 3200,
            start: 0x20,
            path: "/tmp/my waves.vcd".into(),
        };
        let text = input(&[], &[], &[], Some(&waves));
        assert_eq!(text, "cfg 0 0 1 1\nvcd 1 3 1ps c80 20 /tmp/my waves.vcd\n");
    }

    #[test]
    fn output_parses_and_needs_the_figures() {
        let p = parse(
            "pkt 2 0 0a0b\npkt 4 20000000007 00\nmap 1 0102\nvcd 128000\ncycles 9 latency 7 beats 2 stalls 1 flushes 3\n",
        )
        .expect("parses");
        assert_eq!(
            p.packets,
            [(2, 0, vec![10, 11]), (4, 0x200_0000_0007, vec![0])]
        );
        assert_eq!(p.dumps, [vec![1, 2]]);
        assert_eq!(p.vcd_end, Some(128_000));
        assert_eq!(
            (p.cycles, p.latency, p.beats, p.stalls, p.flushes),
            (9, 7, 2, 1, 3)
        );
        assert!(parse("pkt 2 0 0a0b\n").is_err());
        assert!(parse("what\ncycles 1 latency 1 beats 1 stalls 0 flushes 0\n").is_err());
    }
}
