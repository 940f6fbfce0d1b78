//! Deep packet inspection for XDP: a rules file (our format or the common Snort/Suricata subset) to an XDP object.
//!
//! Rules are parsed ([`parse`]), their patterns compiled with regex-automata into one minimised multi-pattern DFA per
//! set of packets they scan ([`compile`]), and the DFAs written as C with the transition table as `.rodata`
//! ([`codegen`]), which clang builds into an object that every backend and the kernel load ([`build`]). The object
//! also carries the rules it was compiled from ([`embed`]), from which `hwxdp gen` makes a trace ([`witness`]). The
//! format and the program's behaviour are in `docs/dpi.md`.

pub mod branch;
pub mod codegen;
pub mod compile;
pub mod dfa;
pub mod embed;
pub mod error;
pub mod fast;
pub mod parse;
pub mod pattern;
mod positions;
pub mod rules;
mod snort;
pub mod witness;

pub use compile::Automaton;
pub use error::DpiError;
pub use rules::{Action, Pattern, Proto, Rule, Scope};

use std::path::Path;
use std::process::Command;

/// The default scan limit: every payload byte of a 1500-byte IP packet.
pub const DEFAULT_MAX_PAYLOAD: usize = 1500;
/// The default size limit of one DFA (regex-automata's accounting, in bytes).
pub const DEFAULT_DFA_LIMIT: usize = 1 << 20;
/// The largest scan limit the kernel verifier accepts for a table of 8-bit states (up to 128 DFA states): about 700k
/// instructions processed of its million (`docs/dpi.md`).
pub const MAX_PAYLOAD: usize = 4096;
/// The largest scan limit for a table of 16-bit states, whose scan step is longer: about 590k processed.
pub const MAX_PAYLOAD_WIDE: usize = 2048;

/// How to compile a rules file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Payload bytes scanned at most per packet.
    pub max_payload: usize,
    /// Size limit of each DFA in bytes.
    pub dfa_limit: usize,
    /// The XDP program's (the C function's) name.
    pub name: String,
    /// The fast scan's form; `None`: chosen by [`codegen::Form::choose`].
    pub form: Option<codegen::Form>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_payload: DEFAULT_MAX_PAYLOAD,
            dfa_limit: DEFAULT_DFA_LIMIT,
            name: "dpi".into(),
            form: None,
        }
    }
}

/// A compiled rules file: the automaton and the C that runs it.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The rules and their DFAs.
    pub automaton: Automaton,
    /// The table's shape.
    pub layout: codegen::Layout,
    /// The generated C.
    pub c_source: String,
    /// Payload bytes scanned at most.
    pub max_payload: usize,
}

/// Compiles the rules in `text` (read from `source`, named in the generated C).
pub fn compile(text: &str, source: &str, options: &Options) -> Result<Compiled, DpiError> {
    if options.max_payload == 0 {
        return Err(DpiError::PayloadLimit {
            value: 0,
            reason: "the scan must look at one byte at least".into(),
        });
    }
    let rules = parse::parse_rules(text)?;
    let automaton = compile::automaton(rules, options.dfa_limit)?;
    let layout = codegen::Layout::of(&automaton, options.form);
    check_payload_limit(options.max_payload, &automaton, &layout)?;
    let mut c_source = codegen::generate(
        &automaton,
        &layout,
        &options.name,
        options.max_payload,
        source,
    );
    c_source.push_str(&embed::c_definition(&embed::Embedded {
        max_payload: options.max_payload,
        dfa_limit: options.dfa_limit,
        rules: text.to_string(),
    }));
    Ok(Compiled {
        automaton,
        layout,
        c_source,
        max_payload: options.max_payload,
    })
}

/// Refuses a scan limit past what the verifier accepts for the table's entry width.
fn check_payload_limit(
    value: usize,
    automaton: &Automaton,
    layout: &codegen::Layout,
) -> Result<(), DpiError> {
    if layout.form == codegen::Form::Branch && layout.fast.live > codegen::BRANCH_FORCED_MAX_STATES
    {
        return Err(DpiError::BranchTooBig {
            live: layout.fast.live,
            max: codegen::BRANCH_FORCED_MAX_STATES,
        });
    }
    let max = if layout.entry_bytes() == 1 {
        MAX_PAYLOAD
    } else {
        MAX_PAYLOAD_WIDE
    };
    if value > max {
        return Err(DpiError::PayloadLimit {
            value,
            reason: format!(
                "the kernel verifier refuses a scan over {max} bytes for these rules ({} DFA states, {}-bit table entries): it follows the scan's every exit in turn and stops at a million instructions",
                automaton.states(),
                layout.entry_bytes() * 8
            ),
        });
    }
    Ok(())
}

/// Writes `compiled`'s C to `c_path` and builds it with clang (`$CLANG`, default `clang`) into `object`.
pub fn build(compiled: &Compiled, c_path: &Path, object: &Path) -> Result<(), DpiError> {
    std::fs::write(c_path, &compiled.c_source).map_err(|e| io(c_path, &e))?;
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let arch_include = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let output = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", &arch_include, "-c"])
        .arg(c_path)
        .arg("-o")
        .arg(object)
        .output()
        .map_err(|e| DpiError::Clang {
            c_file: c_path.display().to_string(),
            message: format!("cannot run {clang} (install clang, or set CLANG): {e}"),
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("no message");
        return Err(DpiError::Clang {
            c_file: c_path.display().to_string(),
            message: first.to_string(),
        });
    }
    Ok(())
}

/// An I/O error on `path`.
pub fn io(path: &Path, err: &std::io::Error) -> DpiError {
    DpiError::Io {
        path: path.display().to_string(),
        message: err.to_string(),
    }
}
