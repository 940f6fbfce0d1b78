//! `hwxdp gen`: a trace and map preloads that exercise a program.

use crate::common::{self, ProgramArgs};
use crate::trace;
use anyhow::{Context, Result};
use hwxdp_gen::Popularity;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hwxdp gen`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// Directory for trace.pcap and, when the program needs them, maps.json (table entries) and routes.json (the
    /// route table for `bpf_fib_lookup`, to pass with `--routes`).
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Number of packets.
    #[arg(long, short = 'n', default_value_t = 1000)]
    packets: usize,
    /// Seed: the same seed gives the same trace.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Instead of the program's own trace, `--packets` frames over this many flows: its IPv4/IPv6 TCP/UDP frames
    /// with the source address and port rewritten per flow (checksums kept right), each frame's flow drawn by
    /// `--popularity`. `--flows 1` is a single-flow trace: every packet hits the same state.
    #[arg(long)]
    flows: Option<usize>,
    /// How frames are spread over `--flows`: `zipf` (flow i has frequency ∝ 1/i^s) or `uniform`.
    #[arg(long, default_value = "zipf", value_parser = ["zipf", "uniform"], requires = "flows")]
    popularity: String,
    /// The Zipf exponent s of `--popularity zipf` (1.0 as in the eHDL paper's appendix A).
    #[arg(long, default_value_t = 1.0, requires = "flows")]
    zipf_exponent: f64,
    /// With `--flows`: make flows only from frames of at most this many bytes (64: every packet one beat of a
    /// 512-bit bus, the minimum-size traffic that stresses a pipeline's hazards most).
    #[arg(long, requires = "flows")]
    max_frame_bytes: Option<usize>,
    /// Write the trace as trace.pcapng with this many interfaces, the input ports of a multi-port NIC (`--backend
    /// ebpflow --ports N`): packet i arrives on port i mod N, so that every port gets its share of the trace; `run`
    /// and `verify` give a packet of port p the `ingress_ifindex` `--ifindex` + p.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16))]
    ports: Option<u32>,
    /// Make every frame exactly this many bytes: shorter ones padded with zeros after their end (a trailer the
    /// headers' lengths do not cover), longer ones left out; for throughput by packet size (64, 512, 1500).
    #[arg(long, value_parser = clap::value_parser!(u32).range(14..=9000))]
    frame_bytes: Option<u32>,
    /// Instead of the program's own trace, the equivalence trace of its Warp Engine rules (Table 5's engine,
    /// `docs/warp.md`): frames hitting each rule and no higher-priority one, then frames no rule matches.
    #[arg(long, conflicts_with = "flows")]
    warp: bool,
}

/// Nanoseconds between generated packets (one million packets per second).
const GAP_NS: u64 = 1_000;
/// Time of the first generated packet: 2024-01-01T00:00:00Z.
const START_NS: u64 = 1_704_067_200_000_000_000;

/// Runs `hwxdp gen`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let object = args.program.object.display().to_string();
    let chosen = args.program.chosen(&loaded.spec);
    let program = common::find_program(&loaded.spec, chosen.as_deref(), &args.program.object)?;
    let dpi = crate::cmd_dpi::gen_workload(&loaded.elf, &object, args.packets, args.seed)?;
    let mut workload = match dpi {
        Some(workload) => workload,
        None => hwxdp_gen::workload(&loaded.spec, program, args.packets, args.seed)
            .context(object.clone())?,
    };
    if args.warp {
        let params = hwxdp_warp::Params::default();
        hwxdp_warp::trace::warp_workload(&loaded.spec, program, &params, &mut workload, args.seed)
            .with_context(|| format!("{object}: program {}", program.name))?;
    }
    if let Some(flows) = args.flows {
        let popularity = match args.popularity.as_str() {
            "uniform" => Popularity::Uniform,
            _ => Popularity::Zipf {
                exponent: args.zipf_exponent,
            },
        };
        let (packets, distinct) = hwxdp_gen::flow_trace(
            &workload.packets,
            flows,
            popularity,
            args.packets,
            args.seed,
            args.max_frame_bytes,
        )
        .with_context(|| format!("{object}: program {}", program.name))?;
        workload.packets = packets;
        workload.description = format!(
            "{} packets over {flows} flows ({} popularity; {distinct} flows drawn), made from the program's \
             IPv4/IPv6 TCP/UDP frames",
            args.packets, args.popularity
        );
    }
    if let Some(bytes) = args.frame_bytes {
        let bytes = bytes as usize;
        let before = workload.packets.len();
        workload.packets.retain(|p| p.len() <= bytes);
        for p in &mut workload.packets {
            p.resize(bytes, 0);
        }
        if workload.packets.is_empty() {
            anyhow::bail!(
                "{object}: --frame-bytes {bytes}: every one of the {before} frames is longer"
            );
        }
        workload.description = format!(
            "{}; {} of {before} frames kept and padded to {bytes} bytes",
            workload.description,
            workload.packets.len()
        );
    }
    common::create_dir(&args.out)?;
    let pcap = match args.ports {
        Some(ports) => {
            let path = args.out.join("trace.pcapng");
            write_ports(&path, &workload.packets, ports)?;
            path
        }
        None => {
            let path = args.out.join("trace.pcap");
            let mut writer = trace::Writer::create(&path)?;
            for (i, packet) in workload.packets.iter().enumerate() {
                writer.write(START_NS + i as u64 * GAP_NS, packet)?;
            }
            writer.finish()?;
            path
        }
    };
    println!("{}", workload.description);
    println!(
        "wrote {} ({} packets for program {}{})",
        pcap.display(),
        workload.packets.len(),
        program.name,
        args.ports
            .map_or(String::new(), |p| format!(" over {p} ports"))
    );
    if !workload.preload.is_empty() {
        let mut maps: Map<String, Value> = Map::new();
        for p in &workload.preload {
            let hex = |b: &[u8]| b.iter().map(|x| format!("0x{x:02x}")).collect::<Vec<_>>();
            let entry = json!({ "key": hex(&p.key), "value": hex(&p.value) });
            match maps
                .entry(p.map.clone())
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                Value::Array(list) => list.push(entry),
                _ => unreachable!("every map entry is created as an array"),
            }
        }
        let path = args.out.join("maps.json");
        common::write_json(&path, &Value::Object(maps))?;
        println!(
            "wrote {} ({} entries)",
            path.display(),
            workload.preload.len()
        );
    }
    if let Some(routes) = &workload.routes {
        let path = args.out.join("routes.json");
        std::fs::write(&path, routes)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        println!("wrote {} (route table for --routes)", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `packets` as a pcapng file with `ports` Ethernet interfaces (nanosecond timestamps), packet i on
/// interface i mod `ports`.
fn write_ports(path: &std::path::Path, packets: &[Vec<u8>], ports: u32) -> Result<()> {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption,
    };
    use pcap_file::pcapng::PcapNgWriter;
    let cannot = || format!("{}: cannot write", path.display());
    let file = std::fs::File::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    let mut writer = PcapNgWriter::new(std::io::BufWriter::new(file)).with_context(cannot)?;
    for port in 0..ports {
        writer
            .write_pcapng_block(InterfaceDescriptionBlock {
                linktype: pcap_file::DataLink::ETHERNET,
                snaplen: 65535,
                options: vec![
                    InterfaceDescriptionOption::IfName(format!("port{port}").into()),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            })
            .with_context(cannot)?;
    }
    for (i, packet) in packets.iter().enumerate() {
        writer
            .write_pcapng_block(EnhancedPacketBlock {
                interface_id: i as u32 % ports,
                timestamp: std::time::Duration::from_nanos(START_NS + i as u64 * GAP_NS),
                original_len: packet.len() as u32,
                data: std::borrow::Cow::Borrowed(packet),
                options: Vec::new(),
            })
            .with_context(cannot)?;
    }
    use std::io::Write;
    writer.into_inner().flush().with_context(cannot)
}
