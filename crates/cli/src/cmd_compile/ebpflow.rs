//! `hwxdp compile --target ebpflow`: the loader. Writes `<program>.ebpflow.bin` (the instruction memory's image, 8
//! bytes a slot, little-endian), `<program>.ebpflow.hex` (one slot a line, as `$readmemh` takes it),
//! `<program>.maps.json` (the coprocessor's map table) and `<program>.ebpflow.json` (the report: the programs' places
//! in the image, the prologue, the relocations, the helpers called).

use super::Args;
use crate::common;
use anyhow::{Context, Result};
use hwxdp_object::{ObjectSpec, ProgramSpec};

/// Loads `program` of `spec` and writes its image, map table and report into `--out`.
pub fn run(args: &Args, spec: &ObjectSpec, program: &ProgramSpec) -> Result<()> {
    let object = args.program.object.display().to_string();
    let image = hwxdp_ebpflow::load(spec, &program.name)
        .with_context(|| format!("{object}: program {}", program.name))?;
    common::create_dir(&args.out)?;
    let base = |ext: &str| args.out.join(format!("{}.{ext}", program.name));
    super::write(&base("ebpflow.bin"), &image.bytes())?;
    let hex: String = image.slots.iter().map(|s| format!("{s:016x}\n")).collect();
    super::write(&base("ebpflow.hex"), hex.as_bytes())?;
    common::write_json(&base("maps.json"), &image.maps)?;
    common::write_json(&base("ebpflow.json"), &image)?;
    println!(
        "{}: {} slots ({} of prologue, {} programs), {} maps, {} map references relocated, {} context loads through the header",
        program.name,
        image.slots.len(),
        image.prologue,
        image.programs.len(),
        image.maps.len(),
        image.map_relocations,
        image.context_loads
    );
    println!("wrote {}", base("ebpflow.bin").display());
    Ok(())
}
