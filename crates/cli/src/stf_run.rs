//! Running an STF script against a compiled P4 program, on the reference machine or in the kernel (`hwxdp stf`).
//!
//! Table commands become map writes (`hwxdp_p4::stf::Encoder`, the layout of `docs/p4.md`) before the next packet;
//! packets run in order. STF ports are test ports, as in p4c's and P4C-XDP's runners: test port `p` is the interface
//! with index `p + 1` ([`ifindex_of`]; port 0 is the loopback device, ifindex 1, which every network namespace has), so
//! the program reads `ingress_ifindex` (`xdp_input.input_port`) = `p + 1`. Where a packet goes:
//!
//! - XDP model: `XDP_TX` and `XDP_PASS` send it out on its input port (the upstream runners count a passed packet as
//!   output on the port it came in on), with the bytes the program left; `XDP_DROP` and `XDP_ABORTED` drop it.
//!   `XDP_REDIRECT` is handed to the host (no port): the kernel's test run does not say where a redirect went, and
//!   every backend must judge a script alike.
//! - Filter model (`ebpfFilter`): an accepted packet (`XDP_PASS`) leaves unchanged on its input port; others are dropped.
//!
//! `wait` does nothing (runs are synchronous); `check_counter` reads the counter's map then and there.

use anyhow::{bail, Context, Result};
use hwxdp_backend::{Backend, Options, Packet, Setup};
use hwxdp_maps::MapStore;
use hwxdp_object::ObjectSpec;
use hwxdp_p4::ir::{Arch, Checked};
use hwxdp_p4::stf::{Command, Encoder, Failure, MapWrite, Matcher};
use hwxdp_xdp::{Config, Verdict, XdpMd};
use std::path::Path;

/// What a script's run found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StfReport {
    /// Packets run.
    pub packets: usize,
    /// Expectations met (output packets and counter checks).
    pub met: usize,
    /// Packets the XDP model passed (`XDP_PASS`: also expected on their input port) or redirected (`XDP_REDIRECT`).
    pub to_host: usize,
    /// Every failed expectation, unexpected packet, failed counter check and program fault, ordered by line.
    pub failures: Vec<Failure>,
}

/// Test ports a script may name: each becomes a network device of the kernel backend.
pub const MAX_PORTS: u32 = 256;

/// Runs `data` arriving on `port`: the verdict, the packet afterwards, and a fault if the program was stopped.
fn run_packet(
    backend: &mut dyn Backend,
    data: &[u8],
    port: u32,
) -> Result<(Verdict, Vec<u8>, Option<String>)> {
    hwxdp_xdp::XdpBuff::new(data)?;
    let packet = Packet {
        bytes: data.to_vec(),
        md: metadata(port),
        time_ns: 0,
    };
    let ran = backend
        .run(&[packet])?
        .pop()
        .context("the backend gave no result")?;
    Ok((ran.verdict(), ran.data().to_vec(), ran.fault))
}

/// The interface index of STF test port `port`: `port + 1` (port 0 is the loopback device).
pub fn ifindex_of(port: u32) -> u32 {
    port.saturating_add(1)
}

fn metadata(port: u32) -> XdpMd {
    XdpMd {
        ingress_ifindex: ifindex_of(port),
        rx_queue_index: 0,
    }
}

/// Runs `script` (from the file `stf_name`) against `object`, the program compiled from `checked`, on the backend
/// registered as `backend`.
///
/// Errors (bad ports, entries the program cannot take, a program that cannot load) end the run; test failures are in
/// the report.
pub fn run_script(
    object: &Path,
    checked: &Checked,
    stf_name: &str,
    script: &[(usize, Command)],
    backend: &str,
) -> Result<StfReport> {
    let mut ports = Vec::new();
    for (line, command) in script {
        if let Command::Packet { port, .. } | Command::Expect { port, .. } = command {
            if *port >= MAX_PORTS {
                bail!(
                    "{stf_name}:{line}: port {port}: test ports go from 0 to {}",
                    MAX_PORTS - 1
                );
            }
            ports.push(ifindex_of(*port));
        }
    }
    ports.sort_unstable();
    ports.dedup();
    let elf =
        std::fs::read(object).with_context(|| format!("{}: cannot read", object.display()))?;
    let spec = hwxdp_object::parse(&elf).with_context(|| object.display().to_string())?;
    let name = xdp_program(&spec, object)?;
    let config = Config {
        possible_cpus: hwxdp_kernel::possible_cpus().unwrap_or(1),
        ..Config::default()
    };
    let devices: Vec<(u32, u32)> = ports.iter().map(|&p| (p, 1)).collect();
    let options = nic_options(&ports);
    let setup = Setup {
        object,
        elf: &elf,
        spec: &spec,
        program: &name,
        config: &config,
        devices: &devices,
        options: &options,
        notify: Some(|line| eprintln!("hwxdp: {line}")),
    };
    let mut target = (hwxdp_backend::find(backend)?.create)(&setup)
        .with_context(|| object.display().to_string())?;
    let report = execute(&mut *target, checked, stf_name, script)?;
    target.finish()?;
    Ok(report)
}

/// Backend options for a script whose packets use interfaces `ifindices` (sorted): the multi-port NIC of the
/// eBPFlow backends gets its first port at the lowest of them and at least its usual 4 ports.
fn nic_options(ifindices: &[u32]) -> Options {
    let mut options = Options::default();
    if let (Some(&lo), Some(&hi)) = (ifindices.first(), ifindices.last()) {
        options.ebpflow.first_ifindex = lo;
        options.ebpflow.ports = options.ebpflow.ports.max((hi - lo + 1) as usize);
    }
    options
}

/// The object's one XDP program.
fn xdp_program(spec: &ObjectSpec, object: &Path) -> Result<String> {
    let xdp: Vec<_> = spec
        .programs
        .iter()
        .filter(|p| p.section.starts_with("xdp"))
        .collect();
    match xdp.as_slice() {
        [only] => Ok(only.name.clone()),
        [] => bail!("{}: no XDP program in the object", object.display()),
        _ => bail!("{}: the object has several XDP programs", object.display()),
    }
}

fn execute(
    target: &mut dyn Backend,
    checked: &Checked,
    file: &str,
    script: &[(usize, Command)],
) -> Result<StfReport> {
    let mut encoder = Encoder::new(checked, file);
    let mut matcher = Matcher::new(file);
    let mut report = StfReport::default();
    let mut failures = Vec::new();
    let failure = |line: usize, message: String| Failure {
        file: file.to_string(),
        line,
        message,
        detail: vec![],
    };
    for (line, command) in script {
        let line = *line;
        match command {
            Command::Add { .. } | Command::SetDefault { .. } => {
                let write = encoder.encode(line, command)?;
                apply(target.maps(), &write).with_context(|| format!("{file}:{line}"))?;
            }
            Command::Expect { port, pattern } => matcher.expect(line, *port, pattern.clone()),
            Command::Packet { port, data } => {
                report.packets += 1;
                let (verdict, out, fault) = run_packet(target, data, *port)
                    .with_context(|| format!("{file}:{line}: cannot run the packet"))?;
                if let Some(fault) = fault {
                    failures.push(failure(line, format!("the program was stopped: {fault}")));
                }
                match (checked.arch, verdict) {
                    (Arch::EbpfFilter, Verdict::Pass) => matcher.output(line, *port, data),
                    (Arch::Xdp, Verdict::Tx) => matcher.output(line, *port, &out),
                    (Arch::Xdp, Verdict::Pass) => {
                        report.to_host += 1;
                        matcher.output(line, *port, &out);
                    }
                    (Arch::Xdp, Verdict::Redirect) => report.to_host += 1,
                    _ => {}
                }
            }
            Command::CheckCounter {
                counter,
                index,
                op,
                value,
                ..
            } => {
                let at = encoder.counter(line, counter, *index)?;
                let maps = target.maps();
                let m = map_index(maps, &at.map).with_context(|| format!("{file}:{line}"))?;
                let found = maps
                    .lookup(m, &at.key)
                    .with_context(|| format!("{file}:{line}"))?;
                let count = match found {
                    Some(v) if v.len() >= 4 => {
                        u64::from(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
                    }
                    Some(v) => bail!(
                        "{file}:{line}: counter map `{}` holds {}-byte values, not u32",
                        at.map,
                        v.len()
                    ),
                    None if at.sparse => 0,
                    None => bail!(
                        "{file}:{line}: counter map `{}` has no index {index}",
                        at.map
                    ),
                };
                if op.holds(count, *value) {
                    report.met += 1;
                } else {
                    failures.push(failure(
                        line,
                        format!(
                            "counter {counter}({index}) is {count}, expected {} {value}",
                            op.symbol()
                        ),
                    ));
                }
            }
            Command::Wait => {}
        }
    }
    let (met, matched) = matcher.finish();
    report.met += met;
    failures.extend(matched);
    failures.sort_by_key(|f| f.line);
    report.failures = failures;
    Ok(report)
}

fn map_index(maps: &dyn MapStore, name: &str) -> Result<usize> {
    maps.specs()
        .iter()
        .position(|s| s.name == name)
        .with_context(|| format!("the object has no map `{name}`"))
}

/// Writes one entry, after checking its sizes against the map's: a mismatch means the program and the layout of
/// `docs/p4.md` disagree.
fn apply(maps: &mut dyn MapStore, write: &MapWrite) -> Result<()> {
    let m = map_index(maps, &write.map)?;
    let spec = &maps.specs()[m];
    if spec.key_size as usize != write.key.len() || spec.value_size as usize != write.value.len() {
        bail!(
            "map `{}` has {}-byte keys and {}-byte values, but the entry has a {}-byte key and a {}-byte value",
            write.map,
            spec.key_size,
            spec.value_size,
            write.key.len(),
            write.value.len()
        );
    }
    maps.update(m, &write.key, &write.value, 0)?;
    Ok(())
}
