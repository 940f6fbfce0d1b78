//! `hwxdp-conformance-plugin`: the reference machine behind the plugin protocol of the public BPF conformance suite
//! (the one uBPF, rbpf and PREVAIL are tested with).
//!
//! The program arrives on standard input as hex bytes separated by white space, ended by a newline. An optional first
//! argument that does not start with `--` is the memory the program gets, in the same form; r1 points to it (NULL when
//! there is none) and r2 holds its length. Helper 5 is "unwind": it returns its first argument and ends the program
//! when that is 0. The final r0 is printed in hex on standard output; a program that cannot run makes the plugin exit
//! 1 with one line on standard error. `--help` (`-h`) and `--version` (`-V`) print what they say and exit 0 without
//! reading standard input.
//!
//! `--engine ebpflow-rtl` (or `HWXDP_CONFORMANCE_ENGINE=ebpflow-rtl` in the environment, for runners that pass no
//! options) runs the program on one eBPFlow engine's RTL under Verilator instead (`hwxdp_rtlsim::ebpflow`): the
//! program is checked as the reference machine's loader checks it, then its slots go into the engine's instruction
//! memory and the memory is the frame the engine receives.

use hwxdp_ebpf::Insn;
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Environment, Machine, XdpBuff};
use std::io::{Read, Write};
use std::process::ExitCode;

#[path = "../version.rs"]
mod version;

/// What `--help` prints.
const HELP: &str = "\
The hwxdp reference machine behind the plugin protocol of the BPF conformance suite.

Usage: hwxdp-conformance-plugin [MEMORY] [OPTIONS] < PROGRAM

The program arrives on standard input as hex bytes separated by white space, ended by a newline.
MEMORY, an optional first argument that does not start with `--`, is the memory the program gets, in
the same form: r1 points to it (NULL without it) and r2 holds its length. Helper 5 is \"unwind\": it
returns its first argument and ends the program when that is 0. The final r0 is printed in hex on
standard output. Options of other plugins are ignored, except --elf, which is refused: the program is
raw instructions.

Options:
  --engine ENGINE  interp (the reference machine, default) or ebpflow-rtl (one eBPFlow engine's RTL
                   under Verilator; the model is built once into HWXDP_CACHE_DIR, else
                   $XDG_CACHE_HOME/hwxdp or ~/.cache/hwxdp); HWXDP_CONFORMANCE_ENGINE sets it too
  -h, --help       Print this help
  -V, --version    Print the version

Exit status:
  0  r0 printed
  1  the program cannot run (one line on standard error says why)";

/// What the command line asks for besides running a program.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// `--help` or `-h`.
    Help,
    /// `--version` or `-V`.
    Version,
    /// Anything else: run the program.
    Run,
}

/// `--help` and `--version` win wherever they are (the conformance runner never passes them: its memory argument is
/// hex bytes and its options are other plugins' `--elf` or `--jit`); everything else runs the program.
fn request(args: &[String]) -> Request {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        Request::Help
    } else if args.iter().any(|a| a == "--version" || a == "-V") {
        Request::Version
    } else {
        Request::Run
    }
}

fn hex_bytes(text: &str, what: &str) -> Result<Vec<u8>, String> {
    text.split_whitespace()
        .enumerate()
        .map(|(i, tok)| {
            let tok = tok.trim_start_matches("0x");
            u8::from_str_radix(tok, 16)
                .map_err(|_| format!("{what}: byte {i} ({tok:?}) is not a hex byte"))
        })
        .collect()
}

/// Encoders disagree on where `callx` keeps its register: LLVM puts it in dst, others in src or in the immediate.
/// The machine reads dst; move it there from wherever it is.
fn normalize_callx(insns: &mut [Insn]) {
    for insn in insns.iter_mut().filter(|i| i.code == 0x8d && i.dst == 0) {
        if insn.src != 0 {
            insn.dst = insn.src;
            insn.src = 0;
        } else if (1..=10).contains(&insn.imm) {
            insn.dst = insn.imm as u8;
            insn.imm = 0;
        }
    }
}

/// Where the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    /// The reference machine.
    Interp,
    /// One eBPFlow engine's RTL under Verilator.
    EbpflowRtl,
}

/// `--engine NAME` taken out of `args` (the last one wins), else `HWXDP_CONFORMANCE_ENGINE`, else the reference
/// machine.
fn engine(args: &mut Vec<String>) -> Result<Engine, String> {
    let mut name = std::env::var("HWXDP_CONFORMANCE_ENGINE")
        .ok()
        .filter(|v| !v.is_empty());
    while let Some(i) = args.iter().position(|a| a == "--engine") {
        if i + 1 >= args.len() {
            return Err("--engine needs a value: interp or ebpflow-rtl".into());
        }
        name = Some(args.remove(i + 1));
        args.remove(i);
    }
    match name.as_deref() {
        None | Some("interp") => Ok(Engine::Interp),
        Some("ebpflow-rtl") => Ok(Engine::EbpflowRtl),
        Some(other) => Err(format!("unknown engine {other:?}: interp or ebpflow-rtl")),
    }
}

/// Runs the program on one eBPFlow engine's RTL with `memory` as its frame.
fn run_rtl(insns: &[Insn], memory: &[u8]) -> Result<u64, String> {
    use hwxdp_rtlsim::ebpflow::{slots_of, EbpflowPaths, EbpflowRtl, Header};
    let slots = slots_of(&hwxdp_ebpf::encode(insns)).ok_or("program: not whole 8-byte slots")?;
    let mut rtl = EbpflowRtl::new(&EbpflowPaths::from_env()).map_err(|e| e.to_string())?;
    rtl.load(&slots).map_err(|e| e.to_string())?;
    let run = rtl
        .run(&Header::default(), memory, 0)
        .map_err(|e| e.to_string())?;
    if run.fault {
        return Err(
            "the eBPFlow engine stopped the program: an access out of bounds, an instruction that does not \
             exist, a call too deep or a helper's fault"
                .into(),
        );
    }
    Ok(run.r0)
}

fn run() -> Result<u64, String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let engine = engine(&mut args)?;
    let mut args = args.into_iter().peekable();
    let memory = match args.peek() {
        Some(a) if !a.starts_with("--") => hex_bytes(&args.next().unwrap_or_default(), "memory")?,
        _ => Vec::new(),
    };
    // Options such as --elf or --jit are for other plugins; the reference machine has one way to run.
    if let Some(option) = args.find(|a| a == "--elf") {
        return Err(format!(
            "{option} is not supported: give the program as raw instructions"
        ));
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("standard input: {e}"))?;
    let line = input.lines().next().unwrap_or("");
    let bytes = hex_bytes(line, "program")?;
    let mut insns = hwxdp_ebpf::decode(&bytes).map_err(|e| format!("program: {e}"))?;
    normalize_callx(&mut insns);
    let spec = ObjectSpec::single(ProgramSpec::standalone("conformance", "conformance", insns));
    let config = Config {
        environment: Environment::Conformance,
        ..Config::default()
    };
    // The reference machine's loader checks the program for both engines.
    let mut machine = Machine::new(&spec, None, &config).map_err(|e| e.to_string())?;
    let mut buff = XdpBuff::memory(&memory).map_err(|e| format!("memory: {e}"))?;
    if engine == Engine::EbpflowRtl {
        return run_rtl(&spec.programs[0].insns, &memory);
    }
    let (outcome, r0) = machine.run_memory(&mut buff);
    match outcome.fault {
        Some(fault) => Err(fault.to_string()),
        None => Ok(r0),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match request(&args) {
        Request::Help => {
            // A reader that went away (`| head`) is no error for help text.
            let _ = writeln!(std::io::stdout(), "{HELP}");
            return ExitCode::SUCCESS;
        }
        Request::Version => {
            let _ = writeln!(
                std::io::stdout(),
                "hwxdp-conformance-plugin {}",
                version::VERSION
            );
            return ExitCode::SUCCESS;
        }
        Request::Run => {}
    }
    match run() {
        Ok(r0) => {
            println!("{r0:x}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("hwxdp-conformance-plugin: {message}");
            ExitCode::FAILURE
        }
    }
}
