//! Packet traces: pcap and pcapng in, pcap out.

use anyhow::{bail, Context, Result};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One packet of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracePacket {
    /// Capture time since the epoch, in nanoseconds.
    pub time_ns: u64,
    /// The captured bytes.
    pub data: Vec<u8>,
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Reads every packet of a pcap or pcapng file of Ethernet frames.
pub fn read(path: &Path) -> Result<Vec<TracePacket>> {
    let mut packets = Vec::new();
    for_each(path, |time_ns, data| {
        packets.push(TracePacket {
            time_ns,
            data: data.to_vec(),
        });
        Ok(())
    })?;
    Ok(packets)
}

/// Calls `f` with each packet's time and bytes, in file order, without holding the trace in memory; returns how many
/// packets there were. An error from `f` stops the walk and is returned.
pub fn for_each(path: &Path, f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<usize> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    for_each_in(
        &path.display().to_string(),
        BufReader::with_capacity(1 << 16, file),
        f,
    )
}

/// [`for_each`] over any reader; `name` is used in errors.
pub fn for_each_in(
    name: &str,
    input: impl BufRead,
    mut f: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<usize> {
    for_each_on_in(name, input, |time_ns, _, data| f(time_ns, data))
}

/// The interface each packet of a trace was captured on, in file order: a pcapng packet's interface id (`hwxdp gen
/// --ports` writes one interface per port), 0 for every packet of a pcap.
pub fn interfaces(path: &Path) -> Result<Vec<u32>> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut out = Vec::new();
    for_each_on_in(
        &path.display().to_string(),
        BufReader::with_capacity(1 << 16, file),
        |_, interface, _| {
            out.push(interface);
            Ok(())
        },
    )?;
    Ok(out)
}

/// [`for_each_in`] that also gives each packet's interface (see [`interfaces`]).
fn for_each_on_in(
    name: &str,
    mut input: impl BufRead,
    mut f: impl FnMut(u64, u32, &[u8]) -> Result<()>,
) -> Result<usize> {
    let magic: [u8; 4] = match input.fill_buf() {
        Ok(buf) if buf.len() >= 4 => [buf[0], buf[1], buf[2], buf[3]],
        Ok(_) => bail!("{name}: not a pcap file (shorter than a header)"),
        Err(e) => bail!("{name}: cannot read: {e}"),
    };
    let wrong_link =
        |link: DataLink| anyhow::anyhow!("{name}: link type {link:?}, hwxdp needs Ethernet frames");
    let mut count = 0;
    if PCAP_MAGICS.contains(&magic) {
        let mut reader =
            PcapReader::new(input).with_context(|| format!("{name}: bad pcap header"))?;
        let link = reader.header().datalink;
        if link != DataLink::ETHERNET {
            return Err(wrong_link(link));
        }
        while let Some(packet) = reader.next_packet() {
            let packet =
                packet.with_context(|| format!("{name}: packet {count}: malformed record"))?;
            f(packet.timestamp.as_nanos() as u64, 0, &packet.data)?;
            count += 1;
        }
    } else if magic == PCAPNG_MAGIC {
        let mut reader =
            PcapNgReader::new(input).with_context(|| format!("{name}: bad pcapng header"))?;
        while let Some(block) = reader.next_block() {
            let block =
                block.with_context(|| format!("{name}: packet {count}: malformed block"))?;
            match block {
                Block::EnhancedPacket(p) => {
                    f(p.timestamp.as_nanos() as u64, p.interface_id, &p.data)?
                }
                Block::SimplePacket(p) => f(0, 0, &p.data)?,
                Block::InterfaceDescription(i) if i.linktype != DataLink::ETHERNET => {
                    return Err(wrong_link(i.linktype))
                }
                _ => continue,
            }
            count += 1;
        }
    } else {
        bail!(
            "{name}: not a pcap or pcapng file (magic {:02x}{:02x}{:02x}{:02x})",
            magic[0],
            magic[1],
            magic[2],
            magic[3]
        );
    }
    Ok(count)
}

/// Writes pcap files of Ethernet frames with nanosecond timestamps.
pub struct Writer {
    path: PathBuf,
    inner: PcapWriter<BufWriter<File>>,
}

impl Writer {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> Result<Writer> {
        let file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: pcap_file::TsResolution::NanoSecond,
            snaplen: 65535,
            ..Default::default()
        };
        let inner = PcapWriter::with_header(BufWriter::with_capacity(1 << 16, file), header)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        Ok(Writer {
            path: path.to_path_buf(),
            inner,
        })
    }

    /// Appends one packet.
    pub fn write(&mut self, time_ns: u64, data: &[u8]) -> Result<()> {
        let packet = PcapPacket::new(Duration::from_nanos(time_ns), data.len() as u32, data);
        self.inner
            .write_packet(&packet)
            .with_context(|| format!("{}: cannot write", self.path.display()))?;
        Ok(())
    }

    /// Flushes to disk.
    pub fn finish(self) -> Result<()> {
        use std::io::Write;
        self.inner
            .into_writer()
            .flush()
            .with_context(|| format!("{}: cannot write", self.path.display()))
    }
}
