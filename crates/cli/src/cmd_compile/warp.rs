//! `hwxdp compile --target warp`: the Warp Optimizer's rules (JSON and a table), the key-extractor and restore
//! configuration, a report and the hXDP image with an entry bundle at every restore slot; with `--pcap`, the trace run plainly and warped on the reference machine, compared
//! packet by packet, and the instructions per path without and with warping.

use super::Args;
use crate::common::{self, TraceArgs};
use anyhow::{bail, Context, Result};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_warp::check::{compare_trace, Comparison, TracePacket};
use hwxdp_warp::{render, Params, Warp};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The engine's parameters: Table 5's defaults with `--warp-param NAME=VALUE` applied.
pub fn params(settings: &[String]) -> Result<Params> {
    let mut params = Params::default();
    for s in settings {
        let Some((name, value)) = s.split_once('=') else {
            bail!("--warp-param {s}: expected NAME=VALUE");
        };
        let value: u16 = value.parse().with_context(|| {
            format!("--warp-param {s}: the value must be a number from 0 to 65535")
        })?;
        if !params.set(name, value) {
            bail!(
                "--warp-param {s}: no such parameter (parameters: {})",
                Params::NAMES.join(", ")
            );
        }
    }
    if params.chunk as u64 > 3520 || params.key_read == 0 || params.stack_read == 0 {
        bail!("--warp-param: chunk is at most 3520 bytes, key-read and stack-read at least 1");
    }
    Ok(params)
}

/// Per path of the trace: packets, and the processor's instructions without and with warping.
#[derive(Serialize)]
struct PathFigures {
    path: String,
    packets: usize,
    verdict: u32,
    rule: Option<usize>,
    plain: u64,
    warped: u64,
    reduction_percent: f64,
}

/// `compile --target warp` for `program`.
pub fn run(args: &Args, spec: &ObjectSpec, program: &ProgramSpec) -> Result<()> {
    let params = params(&args.warp_param)?;
    let object = args.program.object.display().to_string();
    // With a trace, the rules are fitted to it: TCAM entries spent on its frequent paths first.
    let profile = hwxdp_warp::Profile {
        frames: match &args.pcap {
            Some(pcap) => crate::trace::read(pcap)?
                .into_iter()
                .map(|p| p.data)
                .collect(),
            None => Vec::new(),
        },
    };
    let warp = hwxdp_warp::optimize_profiled(program, &spec.maps, &params, &profile)
        .with_context(|| format!("{object}: program {}", program.name))?;
    common::create_dir(&args.out)?;
    let name = &program.name;
    let base = |ext: &str| args.out.join(format!("{name}.{ext}"));
    common::write_json(&base("warp.json"), &warp)?;
    common::write_json(&base("report.json"), &warp.report)?;
    let mut text = render::report_text(&warp);
    text.push('\n');
    text.push_str(&render::key_table(&warp));
    text.push('\n');
    text.push_str(&render::rules_table(&warp));
    super::write(&base("rules.txt"), text.as_bytes())?;
    print!("{}", render::report_text(&warp));
    let options = super::options(args.lanes, &args.disable)?;
    write_image(spec, program, &warp, &options, &base)?;
    if let Some(pcap) = &args.pcap {
        let trace = TraceArgs {
            pcap: pcap.clone(),
            maps: args.maps.clone(),
            routes: args.routes.clone(),
            ifindex: args.ifindex,
            rx_queues: args.rx_queues,
        };
        measure(&trace, spec, &warp, &base("paths.json"))
            .with_context(|| format!("{object}: program {name}"))?;
    }
    println!("wrote {}", base("rules.txt").display());
    Ok(())
}

/// The hXDP image with an entry bundle at every restore slot (`<program>.hxdp`, its listing `<program>.lst` and the
/// entry table `<program>.entries.json`), and one line saying what the entry points cost; a program hXDP cannot
/// compile gets a line saying why instead.
fn write_image(
    spec: &ObjectSpec,
    program: &ProgramSpec,
    warp: &Warp,
    options: &hwxdp_hxdp::Options,
    base: &dyn Fn(&str) -> std::path::PathBuf,
) -> Result<()> {
    let entry = spec
        .programs
        .iter()
        .position(|p| p.name == program.name)
        .unwrap_or(0);
    let slots = &warp.report.restore_slots;
    let built = hwxdp_hxdp::compile_object_with_entries(spec, entry, options, slots)
        .and_then(|with| Ok((hwxdp_hxdp::compile_object(spec, entry, options)?, with)));
    let (plain, compiled) = match built {
        Ok(b) => b,
        Err(e) => {
            println!("no hXDP image: {e}");
            return Ok(());
        }
    };
    let bundles = |c: &hwxdp_hxdp::Compiled| {
        c.reports
            .iter()
            .find(|r| r.name == program.name)
            .map_or(0, |r| r.bundles)
    };
    super::write(&base("hxdp"), &compiled.image.encode())?;
    let listing = hwxdp_hxdp::isa::listing(&compiled.image, &compiled.names);
    super::write(&base("lst"), listing.as_bytes())?;
    let table: Vec<serde_json::Value> = compiled
        .entry_points
        .iter()
        .map(|e| serde_json::json!({ "slot": e.slot, "bundle": e.bundle }))
        .collect();
    common::write_json(&base("entries.json"), &table)?;
    let entries: Vec<String> = compiled
        .entry_points
        .iter()
        .map(|e| format!("{} -> {}", e.slot, e.bundle))
        .collect();
    println!(
        "hXDP image: {} bundles ({} without entry points); entry points (slot -> bundle): {}",
        bundles(&compiled),
        bundles(&plain),
        if entries.is_empty() {
            "none".to_string()
        } else {
            entries.join(", ")
        }
    );
    Ok(())
}

/// Runs the trace plainly and warped; fails on the first difference, else writes and prints the figures per path.
fn measure(trace: &TraceArgs, spec: &ObjectSpec, warp: &Warp, out: &std::path::Path) -> Result<()> {
    let packets: Vec<TracePacket> = common::load_trace(trace)?
        .into_iter()
        .map(|p| TracePacket {
            time: p.time_ns,
            md: common::metadata(trace, &p.data),
            bytes: p.data,
        })
        .collect();
    let preload = trace.maps.as_deref().map(common::load_maps).transpose()?;
    let config = hwxdp_xdp::Config {
        routes: common::load_routes(trace)?,
        ..hwxdp_xdp::Config::default()
    };
    let cmp = compare_trace(
        spec,
        &warp.program,
        &config,
        preload.as_ref(),
        warp,
        &packets,
    )?;
    if let Some(d) = &cmp.difference {
        bail!(
            "warped run differs from the plain run at packet {}: {}",
            d.packet,
            d.what
        );
    }
    let paths = per_path(&cmp);
    common::write_json(out, &paths)?;
    println!("{}", paths_table(&paths, cmp.packets.len()));
    println!("wrote {}", out.display());
    Ok(())
}

fn per_path(cmp: &Comparison) -> Vec<PathFigures> {
    // Packets, return value, plain and warped instructions of one path.
    type Seen = (usize, u32, u64, u64);
    let mut by: BTreeMap<(u64, Option<usize>), Seen> = BTreeMap::new();
    for p in &cmp.packets {
        let e = by
            .entry((p.path, p.rule))
            .or_insert((0, p.retval, p.plain, p.warped));
        e.0 += 1;
    }
    let mut out: Vec<PathFigures> = by
        .into_iter()
        .map(
            |((path, rule), (packets, verdict, plain, warped))| PathFigures {
                path: format!("{path:016x}"),
                packets,
                verdict,
                rule,
                plain,
                warped,
                reduction_percent: if plain == 0 {
                    0.0
                } else {
                    100.0 * (plain - warped.min(plain)) as f64 / plain as f64
                },
            },
        )
        .collect();
    out.sort_by(|a, b| b.packets.cmp(&a.packets).then(a.path.cmp(&b.path)));
    out
}

fn paths_table(paths: &[PathFigures], packets: usize) -> String {
    let mut out = String::new();
    let plain: u64 = paths.iter().map(|p| p.plain * p.packets as u64).sum();
    let warped: u64 = paths.iter().map(|p| p.warped * p.packets as u64).sum();
    let _ = writeln!(
        out,
        "{packets} packets identical warped and plain (verdicts, packet bytes, records, maps); processor instructions per packet: mean {:.1} -> {:.1}",
        plain as f64 / packets.max(1) as f64,
        warped as f64 / packets.max(1) as f64
    );
    let _ = writeln!(
        out,
        "{:>7}  {:>7}  {:>5}  {:>6}  {:>6}  {:>9}",
        "packets", "verdict", "rule", "plain", "warped", "reduction"
    );
    for p in paths {
        let rule = p.rule.map_or("-".to_string(), |r| r.to_string());
        let _ = writeln!(
            out,
            "{:>7}  {:>7}  {:>5}  {:>6}  {:>6}  {:>8.1}%",
            p.packets, p.verdict, rule, p.plain, p.warped, p.reduction_percent
        );
    }
    out.trim_end().to_string()
}
