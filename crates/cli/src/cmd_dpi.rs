//! `hwxdp dpi`: a rules file (our format or the Snort subset, `docs/dpi.md`) to an XDP object whose transition table
//! is in its `.rodata`, so `run`, `verify` and `bench` need nothing beside it.

use anyhow::{Context, Result};
use hwxdp_dpi::codegen::Form;
use hwxdp_dpi::{Compiled, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hwxdp dpi`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    /// The rules file: one rule a line, `#` comments (docs/dpi.md).
    rules: PathBuf,
    /// Where to write the object: a directory (an existing one, or one written with a trailing `/`) for
    /// `<rules>.o` in it, or the object's file (default: the rules file's path with `.o`).
    #[arg(short = 'o', long = "out", value_name = "DIR|FILE")]
    out: Option<PathBuf>,
    /// Also keep the generated C in this file.
    #[arg(long = "emit-c", value_name = "FILE")]
    emit_c: Option<PathBuf>,
    /// Payload bytes scanned at most per packet (1 to 4096 for up to 128 DFA states, 2048 above).
    #[arg(long = "max-payload", value_name = "N", default_value_t = hwxdp_dpi::DEFAULT_MAX_PAYLOAD)]
    max_payload: usize,
    /// Size limit of each DFA, in bytes: a rule set over it is refused, naming the rule that crossed it.
    #[arg(long = "dfa-limit", value_name = "BYTES", default_value_t = hwxdp_dpi::DEFAULT_DFA_LIMIT)]
    dfa_limit: usize,
    /// The XDP program's name (default: the rules file's name, as a C identifier).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The fast scan's form: `table` (a lookup per byte), `branch` (compare-and-jump code per state, for small
    /// automata: up to 80 live states), or `auto` (branch up to 32 live states while the program stays within 4096 instructions, else table;
    /// docs/dpi.md).
    #[arg(long, value_name = "FORM", default_value = "auto", value_parser = ["auto", "table", "branch"])]
    form: String,
}

/// Runs `hwxdp dpi`.
pub fn run(args: Args) -> Result<ExitCode> {
    let stem = args
        .rules
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dpi".into());
    let output = match &args.out {
        Some(out) => crate::output::file_or_dir(out, &format!("{stem}.o"))?,
        None => args.rules.with_extension("o"),
    };
    let text = std::fs::read_to_string(&args.rules)
        .with_context(|| format!("cannot read {}", args.rules.display()))?;
    let options = Options {
        max_payload: args.max_payload,
        dfa_limit: args.dfa_limit,
        name: args.name.clone().unwrap_or_else(|| c_identifier(&stem)),
        form: match args.form.as_str() {
            "table" => Some(Form::Table),
            "branch" => Some(Form::Branch),
            _ => None,
        },
    };
    let source = args.rules.display().to_string();
    let scratch = std::env::temp_dir().join(format!("hwxdp-dpi-{}", std::process::id()));
    let c_path = match &args.emit_c {
        Some(path) => path.clone(),
        None => {
            std::fs::create_dir_all(&scratch)
                .with_context(|| format!("cannot create {}", scratch.display()))?;
            scratch.join(format!("{stem}.c"))
        }
    };
    let built = compile_and_build(&text, &source, options, &c_path, &output);
    if args.emit_c.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let (compiled, options) = built?;
    report(&compiled, &options.name, &output)?;
    Ok(ExitCode::SUCCESS)
}

/// The most instructions `--form auto` lets the branch form take: eBPFlow's instruction memory holds 4096 slots,
/// and the hXDP compiler and core are sized for programs of a few thousand instructions. A branch-form program
/// over it (a chunk of code per live state and byte) is rebuilt in the table form.
pub const AUTO_BRANCH_MAX_INSNS: usize = 4096;

/// Compiles and builds the rules; with `--form auto`, a branch-form program over [`AUTO_BRANCH_MAX_INSNS`]
/// instructions is built again in the table form (said on stderr). Returns what was built and its options.
fn compile_and_build(
    text: &str,
    source: &str,
    mut options: Options,
    c_path: &Path,
    output: &Path,
) -> Result<(Compiled, Options)> {
    let compile = |o: &Options| {
        hwxdp_dpi::compile(text, source, o).map_err(|e| anyhow::anyhow!("{source}: {e}"))
    };
    let compiled = compile(&options)?;
    hwxdp_dpi::build(&compiled, c_path, output)?;
    if options.form.is_some() || compiled.layout.form != Form::Branch {
        return Ok((compiled, options));
    }
    let insns = program_insns(output, &options.name)?;
    if insns <= AUTO_BRANCH_MAX_INSNS {
        return Ok((compiled, options));
    }
    eprintln!(
        "{source}: the branch form takes {insns} instructions, over the {AUTO_BRANCH_MAX_INSNS} of --form auto (eBPFlow's instruction memory): built in the table form (--form branch keeps it)"
    );
    options.form = Some(Form::Table);
    let compiled = compile(&options)?;
    hwxdp_dpi::build(&compiled, c_path, output)?;
    Ok((compiled, options))
}

/// The instructions of program `name` in the object at `output`.
fn program_insns(output: &Path, name: &str) -> Result<usize> {
    let object = hwxdp_object::load(output)
        .with_context(|| format!("cannot read back {}", output.display()))?;
    Ok(object.program(Some(name)).map_or(0, |p| p.insns.len()))
}

/// The summary: rules, DFAs, states, table bytes, instructions, the scan limit.
fn report(compiled: &Compiled, name: &str, output: &Path) -> Result<()> {
    let insns = program_insns(output, name)?;
    let a = &compiled.automaton;
    let layout = &compiled.layout;
    println!(
        "{}: {} rules, {} patterns, {} DFAs, {} states ({} match states), tables {} bytes in .rodata",
        name,
        a.rules.len(),
        a.rule_masks.iter().map(|m| m.count_ones()).sum::<u32>(),
        a.classes.len(),
        a.states(),
        a.states() - a.first_match as usize,
        layout.table_bytes,
    );
    println!(
        "fast scan: {} form, {} live states{}{}",
        layout.form.keyword(),
        layout.fast.live,
        layout.fast_table.map_or(String::new(), |t| format!(
            ", table of {} rows of {}-byte states",
            t.rows, t.entry_bytes
        )),
        if layout.fast.has_dead() {
            ", stops early in a dead state"
        } else {
            ""
        },
    );
    for class in &a.classes {
        let port = class
            .dport
            .map_or("any other port".to_string(), |p| format!("port {p}"));
        println!(
            "  {} {port}: {} rules, {} states",
            class.proto.keyword(),
            class.rules.len(),
            class.states
        );
    }
    println!(
        "{insns} instructions; at most {} payload bytes scanned per packet; hits counted per rule in map dpi_hits -> {}",
        compiled.max_payload,
        output.display()
    );
    Ok(())
}

/// `name` with every character that C does not allow in an identifier replaced by `_`.
fn c_identifier(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert_str(0, "dpi_");
    }
    id
}

/// Matching payloads (and as many near misses) made per rule for `hwxdp gen`.
const GEN_PER_RULE: usize = 4;

/// The `hwxdp gen` workload of a dpi object: `None` when `elf` carries no rules (not made by `hwxdp dpi`). The
/// rules are compiled again from the copy `hwxdp dpi` put in the object (`docs/dpi.md`, "Traces"), and rules for
/// which some payload could not be made are named on stderr.
pub fn gen_workload(
    elf: &[u8],
    object: &str,
    packets: usize,
    seed: u64,
) -> Result<Option<hwxdp_gen::Workload>> {
    let Some(embedded) = hwxdp_dpi::embed::read(elf, object)? else {
        return Ok(None);
    };
    let options = Options {
        max_payload: embedded.max_payload,
        dfa_limit: embedded.dfa_limit,
        ..Options::default()
    };
    let compiled = hwxdp_dpi::compile(&embedded.rules, object, &options)
        .map_err(|e| anyhow::anyhow!("{object}: the rules it carries: {e}"))?;
    let automaton = &compiled.automaton;
    let samples = hwxdp_dpi::witness::samples(
        automaton,
        embedded.max_payload,
        embedded.dfa_limit,
        GEN_PER_RULE,
        seed,
    )
    .map_err(|e| anyhow::anyhow!("{object}: {e}"))?;
    let mut rules = Vec::new();
    for s in samples {
        let rule = &automaton.rules[s.rule];
        for note in &s.notes {
            eprintln!("{object}: rule {} (line {}): {note}", s.rule, rule.line);
        }
        rules.push(hwxdp_gen::dpi::DpiRule {
            name: rule.name.clone(),
            proto: rule.proto.number(),
            ports: s.ports,
            other_port: s.other_port,
            matching: s.matching,
            missing: s.missing,
            split: s.split,
            inside: s.inside,
            outside: s.outside,
        });
    }
    let spec = hwxdp_gen::dpi::DpiSpec {
        rules,
        max_payload: embedded.max_payload,
    };
    Ok(Some(hwxdp_gen::dpi::dpi_workload(&spec, packets, seed)))
}
