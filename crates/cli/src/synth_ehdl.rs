//! `hwxdp synth --target ehdl`: the design Yosys synthesizes for a program, its generated pipeline module (with or
//! without state pruning) over the primitives of `rtl/ehdl/` built into the binary.

use crate::cmd_synth::{Args, Design};
use crate::common::{self, ProgramArgs};
use anyhow::{bail, Context, Result};
use hwxdp_rtlsim::{rtl_files, sources_of};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The directory under `rtl/` holding the eHDL primitives.
const EHDL_UNIT: &str = "ehdl";

/// The pipeline of `args.object`'s program as Verilog, with the primitives it instantiates. A program the front end
/// or the Verilog generator refuses is an error naming the program and the instruction.
pub(crate) fn design(args: &Args) -> Result<Design> {
    let Some(object) = &args.object else {
        bail!("--target ehdl needs the program's object: hwxdp synth --target ehdl prog.o [-p PROGRAM]");
    };
    let module = [
        ("--top", args.top.is_some()),
        ("--param", !args.params.is_empty()),
    ];
    let mut hxdp_only = module
        .into_iter()
        .chain(crate::cmd_synth::hxdp_sizes_given(args));
    if let Some((flag, _)) = hxdp_only.find(|(_, given)| *given) {
        bail!("{flag} is for --target hxdp (an eHDL pipeline's sizes come from its program)");
    }
    let loaded = common::load_object(object)?;
    let spec = &loaded.spec;
    let chosen = ProgramArgs {
        object: object.clone(),
        program: args.program.clone(),
    }
    .chosen(spec);
    let program = common::find_program(spec, chosen.as_deref(), object)?;
    let options = hwxdp_ehdl::Options {
        data_width: args.data_width.unwrap_or(512),
        prune: !args.no_prune,
        hazards: args.hazards.map(Into::into).unwrap_or_default(),
        ..hwxdp_ehdl::Options::default()
    };
    let pipeline = hwxdp_ehdl::compile_object(program, &spec.programs, &spec.maps, &options)
        .with_context(|| object.display().to_string())?;
    let top = hwxdp_ehdl::verilog::module_name(&program.name);
    let (text, figures) =
        hwxdp_ehdl::verilog::generate_with(&pipeline, &spec.maps, &top, options.hazards)
            .with_context(|| format!("{}: no pipeline module to synthesize", object.display()))?;
    // Where each map's values live, before the (long) synthesis starts.
    for m in &figures.maps {
        eprintln!("{}: map {m}", program.name);
    }
    let mut files: Vec<(&str, &str)> = rtl_files()
        .iter()
        .filter(|f| hwxdp_rtlsim::unit_owns(EHDL_UNIT, f.path))
        .map(|f| (f.path, f.text))
        .collect();
    if files.is_empty() {
        // A build from outside the repository (a published crate) has no rtl/ to embed.
        bail!("this hwxdp was built without the sources of rtl/{EHDL_UNIT}: build it from the repository");
    }
    let generated = format!("{top}.sv");
    files.push((generated.as_str(), text.as_str()));
    let sources = sources_of(&files, &top)
        .context("the generated module is missing from its own sources")?
        .into_iter()
        .map(|(path, text)| {
            // Yosys' messages name the generated module apart from the primitives.
            let shown = if path == generated {
                format!("generated/{path}")
            } else {
                format!("rtl/{path}")
            };
            (shown, text.to_string())
        })
        .collect();
    let source: BTreeMap<String, Value> = [
        ("object", json!(object.display().to_string())),
        ("program", json!(program.name)),
        ("data_width", json!(options.data_width)),
        (
            "hazards",
            json!(match options.hazards {
                hwxdp_ehdl::verilog::Hazards::Stall => "stall",
                hwxdp_ehdl::verilog::Hazards::Flush => "flush",
            }),
        ),
        ("prune", json!(options.prune)),
        ("stages", json!(figures.stages)),
        ("latency", json!(figures.latency)),
        ("stall_checks", json!(figures.stall_checks)),
        ("state_flops", json!(figures.state_flops)),
        ("frame_flops", json!(figures.frame_flops)),
        (
            "maps",
            json!(figures
                .maps
                .iter()
                .map(|m| json!({
                    "map": m.map,
                    "storage": m.storage.to_string(),
                    "why": m.why,
                    "rams": m.rams,
                    "ram_bytes": m.ram_bytes,
                }))
                .collect::<Vec<_>>()),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Ok(Design {
        sources,
        top,
        params: Vec::new(),
        source: Some(source),
    })
}
