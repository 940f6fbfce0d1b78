//! `hwxdp stf`: a P4 program compiled to XDP, tested with an STF script of the P4 tools.

use anyhow::{Context, Result};
use hwxdp_cli::stf_run;
use std::path::PathBuf;
use std::process::ExitCode;

const LONG_HELP: &str = "\
Compiles PROG.P4 (xdp_model.p4 or ebpf_model.p4) to an XDP object and runs the STF script against it.

Script commands, one per line (`#` starts a comment):
  packet PORT HEX            a packet arrives on test port PORT (0 to 255, as in the P4 tools' runners; the
                             program sees interface index PORT + 1, port 0 being the loopback device);
                             hex bytes, spaces allowed between them
  expect PORT [HEX]          the next packet out on PORT; `*` is a wildcard nibble, a trailing `$` demands the
                             exact length (else the packet may be longer); without HEX any one packet matches
  add TABLE [PRIO] KEY:VALUE ... ACTION(ARG:VALUE, ...)
                             a table entry; VALUE is decimal, 0x.. or 0b.. (hex/binary may have `*` digits),
                             VALUE&&&MASK (ternary) or VALUE/LEN (lpm); KEY is the key as written in the
                             program (hd.ipv4.dstAddr) or a suffix of it (dstAddr); TABLE and ACTION may be
                             qualified (pipe.set_nhop). Of matching ternary entries the highest PRIO wins (as
                             in p4c's bmv2stf), then the one added first; no PRIO is priority 0
  setdefault TABLE ACTION(ARG:VALUE, ...)
                             the table's default action
  check_counter NAME(INDEX) [packets|bytes] OP N
                             OP is == != < > <= >=; a CounterArray keeps one count per index, which both
                             `packets` and `bytes` read
  wait                       nothing: packets run synchronously

Where packets go: in the XDP model XDP_TX and XDP_PASS send the packet out on its input port (a passed packet
is expected there, as p4c's and P4C-XDP's runners count it), XDP_REDIRECT hands it to the host (the kernel
does not report a redirect's target, so no port sees it), XDP_DROP and XDP_ABORTED drop it. In the filter
model an accepted packet leaves unchanged on its input port.

Prints one entry per failure (line, expected and received bytes) and a summary line. Exit status: 0 when every
expectation is met, 1 when the test fails, 2 on usage, compile or script errors.";

/// Arguments of `hwxdp stf`.
#[derive(clap::Args)]
#[command(after_long_help = format!("{LONG_HELP}\n\n{}", crate::backends::backends_help()))]
pub struct Args {
    /// P4-16 program for xdp_model.p4 or ebpf_model.p4.
    p4: PathBuf,
    /// STF script.
    stf: PathBuf,
    /// Where the program runs (see the backends below; each packet runs on its own, table writes between them).
    #[arg(long, default_value = "interp", value_parser = clap::builder::PossibleValuesParser::new(hwxdp_backend::registry::names()))]
    backend: String,
    /// Directory for the generated C and object (default: a temporary directory, removed afterwards).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    #[command(flatten)]
    codegen: crate::p4build::CodegenArgs,
}

/// Runs `hwxdp stf`.
pub fn run(args: Args) -> Result<ExitCode> {
    let stf_name = args.stf.display().to_string();
    let text =
        std::fs::read_to_string(&args.stf).with_context(|| format!("{stf_name}: cannot read"))?;
    let script = hwxdp_p4::stf::parse(&stf_name, &text)?;
    let (out, temporary) = match &args.out {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("hwxdp-stf-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&out)
        .with_context(|| format!("{}: cannot create directory", out.display()))?;
    let result =
        crate::p4build::build(&args.p4, &out, &args.codegen).and_then(|(checked, object)| {
            stf_run::run_script(&object, &checked, &stf_name, &script, &args.backend)
        });
    if temporary {
        let _ = std::fs::remove_dir_all(&out);
    }
    let report = result?;
    for f in &report.failures {
        println!("{f}");
    }
    println!(
        "stf: {} packets, {} expectations met, {} failures",
        report.packets,
        report.met,
        report.failures.len()
    );
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
