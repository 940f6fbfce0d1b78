//! `hwxdp disasm`: programs as `llvm-objdump -dr` shows them, with map references named.

use crate::common::{self, ProgramArgs};
use anyhow::Result;
use hwxdp_ebpf::{slot_offsets, Insn, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use std::process::ExitCode;

/// Arguments of `hwxdp disasm`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
}

/// Runs `hwxdp disasm`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let object = args.program.object.display().to_string();
    let programs: Vec<_> = match &args.program.program {
        Some(name) => vec![common::find_program(
            &loaded.spec,
            Some(name),
            &args.program.object,
        )?],
        None => loaded.spec.programs.iter().collect(),
    };
    println!("\n{object}:\tfile format elf64-bpf");
    for program in programs {
        print!("\nDisassembly of section {}:\n", program.section);
        // Show instructions as they are in the file: relocated map references go back to their unrelocated form and the
        // relocation is printed beneath, as `llvm-objdump -dr` does.
        let mut relocations = Vec::new();
        let shown: Vec<Insn> = program
            .insns
            .iter()
            .enumerate()
            .map(|(i, insn)| match insn.src {
                PSEUDO_MAP_FD | PSEUDO_MAP_VALUE if insn.is_lddw() => {
                    let map = (insn.imm & 0xffff_ffff) as usize;
                    let name = loaded.spec.maps.get(map).map_or("?", |m| m.name.as_str());
                    relocations.push((i, name.to_string()));
                    let imm = if insn.src == PSEUDO_MAP_VALUE {
                        insn.imm >> 32
                    } else {
                        0
                    };
                    Insn {
                        src: 0,
                        imm,
                        ..*insn
                    }
                }
                _ => *insn,
            })
            .collect();
        let slots = slot_offsets(&shown);
        let symbols: Vec<(usize, String)> = program
            .functions
            .iter()
            .map(|(index, name)| (slots[*index], name.clone()))
            .collect();
        let listing = hwxdp_ebpf::disasm::listing(&shown, &symbols);
        let mut pending = relocations.iter().peekable();
        for line in listing.lines() {
            println!("{line}");
            let slot = line
                .trim_start()
                .split(':')
                .next()
                .and_then(|s| s.parse::<usize>().ok());
            if let (Some(slot), Some((i, name))) = (slot, pending.peek()) {
                if slots[*i] == slot {
                    println!("\t\t{:016x}:  R_BPF_64_64\t{name}", slot * 8);
                    pending.next();
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
