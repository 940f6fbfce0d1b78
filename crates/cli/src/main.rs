//! `hwxdp`: run unmodified clang-built XDP programs on the reference machine and FPGA NIC models, checked against the
//! Linux kernel.

mod backends;
mod cmd_bench;
mod cmd_compile;
mod cmd_disasm;
mod cmd_docs;
mod cmd_dpi;
mod cmd_gen;
mod cmd_p4c;
mod cmd_run;
mod cmd_stf;
mod cmd_synth;
mod cmd_verify;
mod common;
mod compare;
mod drive;
mod exit;
mod output;
mod p4build;
mod progress;
mod rss;
mod synth_ehdl;
mod tally;
mod version;

use clap::{CommandFactory, Parser, Subcommand};
use hwxdp_cli::{routes, trace};
use std::process::ExitCode;

/// Run eBPF/XDP programs the way FPGA NICs would, and check every answer against the Linux kernel.
#[derive(Parser)]
#[command(
    name = "hwxdp",
    version = version::VERSION,
    about,
    long_about = None,
    after_help = exit::AFTER_HELP_CHECK
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a program's instructions as `llvm-objdump -d` does.
    Disasm(cmd_disasm::Args),
    /// Run a trace through a program on one backend: one pcap per verdict, stats.json, a per-packet log, optional map
    /// dump.
    Run(cmd_run::Args),
    /// Run a trace through the kernel (BPF_PROG_TEST_RUN) and one or more backends; compare packets, records and maps.
    Verify(cmd_verify::Args),
    /// Write a trace (and map preloads) that exercises a program.
    Gen(cmd_gen::Args),
    /// Time the kernel's JIT, the reference machine and any other backends on a trace, side by side.
    Bench(cmd_bench::Args),
    /// Compile a program for a hardware target: `--target hxdp` writes the VLIW image and listing, `--target ehdl` the
    /// pipeline (text, Graphviz, JSON) and its Verilog module. Without `--program`, every XDP program of the object
    /// in turn.
    Compile(cmd_compile::Args),
    /// Compile a P4-16 program to an XDP object (`-o prog.o` or `-o DIR`, `--emit-c` keeps the C).
    P4c(cmd_p4c::Args),
    /// Compile a P4-16 program to XDP and run an STF test script against it on any backend.
    Stf(cmd_stf::Args),
    /// Compile deep packet inspection rules (our format or the Snort subset) to an XDP object with its DFA table.
    Dpi(cmd_dpi::Args),
    /// Synthesize a hardware target with Yosys for Xilinx UltraScale+ (`--target hxdp`: the hXDP module at chosen
    /// lanes and memory sizes; `--target ehdl prog.o`: a program's eHDL pipeline) and count its LUTs, flip-flops,
    /// BRAM, URAM and DSPs.
    Synth(cmd_synth::Args),
    /// Print a shell completion script for hwxdp (bash, zsh, fish, elvish, powershell).
    Completions(cmd_docs::CompletionsArgs),
    /// Write the manual pages: hwxdp.1 to standard output, or it and one hwxdp-COMMAND.1 per command to `-o DIR`.
    Man(cmd_docs::ManArgs),
}

fn main() -> ExitCode {
    // Output piped into `head` and the like: end quietly when the reader goes away, as command-line tools do, instead
    // of failing (Rust ignores SIGPIPE, so every later print would panic on EPIPE).
    // SAFETY: restoring a signal's default disposition before any thread starts has no memory effects.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Disasm(args) => cmd_disasm::run(args),
        Command::Run(args) => cmd_run::run(args),
        Command::Verify(args) => cmd_verify::run(args),
        Command::Gen(args) => cmd_gen::run(args),
        Command::Bench(args) => cmd_bench::run(args),
        Command::Compile(args) => cmd_compile::run(args),
        Command::P4c(args) => cmd_p4c::run(args),
        Command::Stf(args) => cmd_stf::run(args),
        Command::Dpi(args) => cmd_dpi::run(args),
        Command::Synth(args) => cmd_synth::run(args),
        Command::Completions(args) => cmd_docs::completions(args, Cli::command()),
        Command::Man(args) => cmd_docs::man(args, Cli::command()),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("hwxdp: {}", common::one_line(&err));
            if let Some(note) = common::save_verifier_log(&err) {
                eprintln!("hwxdp: {note}");
            }
            ExitCode::from(exit::ERROR)
        }
    }
}
