//! Packet traces: pcap and pcapng in, pcap out.

use anyhow::{bail, Context, Result};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
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
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut magic = [0u8; 4];
    BufReader::new(&file)
        .read_exact(&mut magic)
        .with_context(|| {
            format!(
                "{}: not a pcap file (shorter than a header)",
                path.display()
            )
        })?;
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    if PCAP_MAGICS.contains(&magic) {
        read_pcap(path, file)
    } else if magic == PCAPNG_MAGIC {
        read_pcapng(path, file)
    } else {
        bail!(
            "{}: not a pcap or pcapng file (magic {:02x}{:02x}{:02x}{:02x})",
            path.display(),
            magic[0],
            magic[1],
            magic[2],
            magic[3]
        )
    }
}

fn read_pcap(path: &Path, file: File) -> Result<Vec<TracePacket>> {
    let mut reader = PcapReader::new(BufReader::new(file))
        .with_context(|| format!("{}: bad pcap header", path.display()))?;
    let link = reader.header().datalink;
    if link != DataLink::ETHERNET {
        bail!(
            "{}: link type {:?}, hwxdp needs Ethernet frames",
            path.display(),
            link
        );
    }
    let mut packets = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.with_context(|| {
            format!(
                "{}: packet {}: malformed record",
                path.display(),
                packets.len()
            )
        })?;
        packets.push(TracePacket {
            time_ns: packet.timestamp.as_nanos() as u64,
            data: packet.data.into_owned(),
        });
    }
    Ok(packets)
}

fn read_pcapng(path: &Path, file: File) -> Result<Vec<TracePacket>> {
    let mut reader = PcapNgReader::new(BufReader::new(file))
        .with_context(|| format!("{}: bad pcapng header", path.display()))?;
    let mut packets = Vec::new();
    while let Some(block) = reader.next_block() {
        let block = block.with_context(|| {
            format!(
                "{}: packet {}: malformed block",
                path.display(),
                packets.len()
            )
        })?;
        let (time_ns, data) = match block {
            Block::EnhancedPacket(p) => (p.timestamp.as_nanos() as u64, p.data.into_owned()),
            Block::SimplePacket(p) => (0, p.data.into_owned()),
            Block::InterfaceDescription(i) if i.linktype != DataLink::ETHERNET => {
                bail!(
                    "{}: link type {:?}, hwxdp needs Ethernet frames",
                    path.display(),
                    i.linktype
                )
            }
            _ => continue,
        };
        packets.push(TracePacket { time_ns, data });
    }
    Ok(packets)
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
        let inner = PcapWriter::with_header(BufWriter::new(file), header)
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
