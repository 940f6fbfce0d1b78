//! What the subcommands share: loading objects, reading map files, per-packet metadata.

use crate::{rss, trace};
use anyhow::{Context, Result};
use hwxdp_maps::json::{self, MapsFile};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::XdpMd;
use std::path::{Path, PathBuf};

/// The object and program to run.
#[derive(clap::Args, Clone, Debug)]
pub struct ProgramArgs {
    /// BPF object built with `clang -O2 -g -target bpf`.
    pub object: PathBuf,
    /// Program to run, by function or section name (needed when the object has several XDP programs).
    #[arg(long, short = 'p')]
    pub program: Option<String>,
}

/// Where packets come from and what they arrive with.
#[derive(clap::Args, Clone, Debug)]
pub struct TraceArgs {
    /// Packets to run (pcap or pcapng, Ethernet).
    #[arg(long)]
    pub pcap: PathBuf,
    /// Map entries to load before the first packet, in the JSON shape of `bpftool map dump -j`, keyed by map name.
    #[arg(long)]
    pub maps: Option<PathBuf>,
    /// Devices, routes and neighbours `bpf_fib_lookup` consults (JSON; see `docs/routes.md`).
    #[arg(long)]
    pub routes: Option<PathBuf>,
    /// `ingress_ifindex` every packet arrives with (1 is the loopback device).
    #[arg(long, default_value_t = 1)]
    pub ifindex: u32,
    /// Receive queues: `rx_queue_index` is chosen per packet by an RSS hash of its addresses and ports, as a NIC does.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub rx_queues: u32,
}

/// An object read from disk.
pub struct Loaded {
    /// The ELF bytes.
    pub elf: Vec<u8>,
    /// What was parsed from them.
    pub spec: ObjectSpec,
}

/// Reads and parses an object.
pub fn load_object(path: &Path) -> Result<Loaded> {
    let elf = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let spec = hwxdp_object::parse(&elf).with_context(|| path.display().to_string())?;
    Ok(Loaded { elf, spec })
}

impl ProgramArgs {
    /// The program to run: `--program`, else the only XDP program of the object, else the one named like the file
    /// (`tail_dispatch.o` runs `tail_dispatch`); `None` leaves the choice (and its error) to the machine.
    pub fn chosen(&self, spec: &ObjectSpec) -> Option<String> {
        if let Some(p) = &self.program {
            return Some(p.clone());
        }
        let xdp: Vec<_> = spec
            .programs
            .iter()
            .filter(|p| p.section.starts_with("xdp"))
            .collect();
        if let [only] = xdp.as_slice() {
            return Some(only.name.clone());
        }
        let stem = self.object.file_stem()?.to_str()?;
        spec.programs
            .iter()
            .find(|p| p.name == stem)
            .map(|p| p.name.clone())
    }
}

/// The program `chosen` names (by function or section name), or the object's only one; otherwise an error that lists
/// the object's programs, worded as the reference machine words it for `run` and `verify`.
pub fn find_program<'a>(
    spec: &'a ObjectSpec,
    chosen: Option<&str>,
    object: &Path,
) -> Result<&'a ProgramSpec> {
    if let Some(program) = spec.program(chosen) {
        return Ok(program);
    }
    let available = spec
        .programs
        .iter()
        .map(|p| format!("{} in {}", p.name, p.section))
        .collect::<Vec<_>>()
        .join(", ");
    let object = object.display();
    match chosen {
        Some(name) => anyhow::bail!("{object}: no program {name:?} in the object (programs: {available})"),
        None => anyhow::bail!(
            "{object}: the object has several programs, choose one with --program (programs: {available})"
        ),
    }
}

/// Reads a `--maps` file, streaming: the text is not held in memory.
pub fn load_maps(path: &Path) -> Result<MapsFile> {
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    json::parse_reader(std::io::BufReader::new(file)).with_context(|| path.display().to_string())
}

/// Reads the trace of `--pcap`.
pub fn load_trace(args: &TraceArgs) -> Result<Vec<trace::TracePacket>> {
    trace::read(&args.pcap)
}

/// Reads the `--routes` file, or an empty table.
pub fn load_routes(args: &TraceArgs) -> Result<hwxdp_xdp::fib::RouteTable> {
    match &args.routes {
        Some(path) => crate::routes::load(path),
        None => Ok(Default::default()),
    }
}

/// The `struct xdp_md` a packet arrives with.
pub fn metadata(args: &TraceArgs, frame: &[u8]) -> XdpMd {
    XdpMd {
        ingress_ifindex: args.ifindex,
        rx_queue_index: rss::queue(frame, args.rx_queues),
    }
}

/// An error and its causes on one line. When the kernel's verifier refused a program, the verifier's last lines (the
/// reason) follow that line with their newlines intact, one per line and indented, as the kernel wrote them.
pub fn one_line(err: &anyhow::Error) -> String {
    // The kernel error shows the verifier's lines after its first line; a wrapper that shows its source's text shows
    // them too, so they are taken out of every cause and put once at the end.
    let verifier_lines = err.chain().find_map(|cause| {
        verifier_log(cause)?;
        let text = cause.to_string();
        text.split_once('\n').map(|(_, lines)| format!("\n{lines}"))
    });
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let mut text = cause.to_string();
        if let Some(lines) = &verifier_lines {
            text = text.replace(lines.as_str(), "");
        }
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    let mut text = parts.join(": ").replace('\n', " ");
    text.push_str(verifier_lines.as_deref().unwrap_or(""));
    text
}

/// The whole verifier log when `cause` is the kernel's refusal of a program.
fn verifier_log<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a str> {
    cause
        .downcast_ref::<hwxdp_kernel::KernelError>()
        .and_then(hwxdp_kernel::KernelError::verifier_log)
}

/// When `err` is the kernel's verifier refusing a program, writes the whole verifier log to a file in the temporary
/// directory and says where (or why it could not be written); `None` for every other error.
pub fn save_verifier_log(err: &anyhow::Error) -> Option<String> {
    let (cause, log) = err
        .chain()
        .find_map(|cause| Some((cause, verifier_log(cause)?)))?;
    let program: String = match cause.downcast_ref::<hwxdp_kernel::KernelError>() {
        Some(hwxdp_kernel::KernelError::Load { what, .. }) => what
            .strip_prefix("program ")
            .unwrap_or(what)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect(),
        _ => "program".to_string(),
    };
    let path = std::env::temp_dir().join(format!(
        "hwxdp-verifier-{program}-{}.log",
        std::process::id()
    ));
    let lines = log.lines().count();
    Some(match std::fs::write(&path, log) {
        Ok(()) => format!(
            "the whole verifier log ({lines} lines) is in {}",
            path.display()
        ),
        Err(e) => format!(
            "the whole verifier log ({lines} lines) could not be written to {}: {e}",
            path.display()
        ),
    })
}

/// Creates the output directory.
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create directory", dir.display()))
}

/// Writes JSON with a trailing newline.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))
}
