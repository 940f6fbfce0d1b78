//! The compiler driver: analysis, the passes in order, scheduling, layout, and the image of a whole object.

use crate::ir::{lower, IrProgram};
use crate::isa::{Image, MapConfig, Op, NO_ENTRY};
use crate::passes;
use crate::sched::{layout, merge_next_branch, schedule_block, Row};
use crate::CompileError;
use hwxdp_analysis::{Patterns, ProgramCfg, Regions};
use hwxdp_object::ObjectSpec;
use std::fmt;

/// A pass that `--disable` can switch off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Bounds-check removal (`bounds`).
    Bounds,
    /// Zeroing removal (`zeroing`).
    Zeroing,
    /// Three-operand fusion (`three-operand`).
    ThreeOperand,
    /// 6-byte load/store fusion (`six-byte`).
    SixByte,
    /// Two byte loads, a shift and an or become one 2-byte load (`byte-loads`).
    ByteLoads,
    /// Parametrized exit (`exit`).
    Exit,
    /// Register renaming of values that live inside one block (`rename`).
    Rename,
    /// Code motion from control-equivalent blocks (`code-motion`).
    CodeMotion,
    /// Speculation of register arithmetic and safe loads past branches into free lanes (`speculation`).
    Speculate,
    /// Parallel branches in one bundle (`parallel-branches`).
    ParallelBranches,
}

impl Pass {
    /// Every pass, in the order the compiler runs them.
    pub const ALL: [Pass; 10] = [
        Pass::Bounds,
        Pass::Zeroing,
        Pass::ByteLoads,
        Pass::ThreeOperand,
        Pass::SixByte,
        Pass::Exit,
        Pass::Rename,
        Pass::CodeMotion,
        Pass::Speculate,
        Pass::ParallelBranches,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Bounds => "bounds",
            Pass::Zeroing => "zeroing",
            Pass::ThreeOperand => "three-operand",
            Pass::SixByte => "six-byte",
            Pass::ByteLoads => "byte-loads",
            Pass::Exit => "exit",
            Pass::Rename => "rename",
            Pass::CodeMotion => "code-motion",
            Pass::Speculate => "speculation",
            Pass::ParallelBranches => "parallel-branches",
        }
    }

    /// The pass of a command-line name.
    pub fn from_name(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// Lanes per bundle (1 to 8).
    pub lanes: usize,
    /// Passes switched off.
    pub disabled: Vec<Pass>,
}

impl Options {
    /// `lanes` lanes with the passes named in `disable` (as `--disable` spells them) switched off; an unknown name
    /// is refused with the list of passes.
    pub fn with_disabled(lanes: usize, disable: &[String]) -> Result<Options, String> {
        let mut disabled = Vec::new();
        for name in disable {
            match Pass::from_name(name) {
                Some(p) => disabled.push(p),
                None => {
                    let known: Vec<&str> = Pass::ALL.iter().map(|p| p.name()).collect();
                    return Err(format!(
                        "--disable {name}: no such pass (passes: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(Options { lanes, disabled })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lanes: crate::isa::DEFAULT_LANES,
            disabled: Vec::new(),
        }
    }
}

impl Options {
    fn on(&self, p: Pass) -> bool {
        !self.disabled.contains(&p)
    }
}

/// What compiling one program did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramReport {
    /// The program's name.
    pub name: String,
    /// eBPF instructions (an `lddw` counts once).
    pub ebpf_insns: usize,
    /// Instructions left after each pass that ran, in order.
    pub after_pass: Vec<(Pass, usize)>,
    /// Bundles.
    pub bundles: usize,
    /// Ops placed in bundles (an exit copied into several bundles counts each time).
    pub ops: usize,
    /// Where a pass worked on less than the whole program because the program is large (each a sentence naming the
    /// pass, what it left out and the limit), empty for programs of ordinary size.
    pub degraded: Vec<String>,
}

impl ProgramReport {
    /// eBPF instructions per bundle.
    pub fn static_ipc(&self) -> f64 {
        if self.bundles == 0 {
            0.0
        } else {
            self.ebpf_insns as f64 / self.bundles as f64
        }
    }
}

/// An entry point of the image besides a program's start: where a packet whose context a Warp Engine restored
/// starts (`docs/warp.md`, "hXDP resuming at restore slots").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryPoint {
    /// The entry program's slot index (as `hwxdp disasm` numbers instructions: an `lddw` takes two).
    pub slot: u32,
    /// The bundle where r1-r9 and the stack frame are the eBPF program's at that slot.
    pub bundle: u32,
}

/// The image of an object and what compiling each program did.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The image.
    pub image: Image,
    /// One report per program in the image, in the object's order.
    pub reports: Vec<ProgramReport>,
    /// The object's program names, by index.
    pub names: Vec<String>,
    /// The entry program's entry points asked for, by slot (empty unless compiled with entry slots).
    pub entry_points: Vec<EntryPoint>,
}

impl Compiled {
    /// The bundle a restored context at `slot` of the entry program starts at.
    pub fn entry_bundle(&self, slot: u32) -> Option<u32> {
        self.entry_points
            .iter()
            .find(|e| e.slot == slot)
            .map(|e| e.bundle)
    }
}

/// Compiles one program to the working form after the passes, with its report (no bundles yet).
pub fn optimize(
    spec: &ObjectSpec,
    index: usize,
    options: &Options,
) -> Result<(IrProgram, ProgramReport), CompileError> {
    optimize_with_entries(spec, index, options, &[])
}

/// [`optimize`] with entry points at `slots` (slot indices of the program's own code): each starts a block, so no
/// op is scheduled across it, renaming (which stays inside blocks) leaves every value live there under its eBPF name,
/// and code motion moves nothing from it or past it into an earlier block.
pub fn optimize_with_entries(
    spec: &ObjectSpec,
    index: usize,
    options: &Options,
    slots: &[u32],
) -> Result<(IrProgram, ProgramReport), CompileError> {
    let program = &spec.programs[index];
    let cfg = ProgramCfg::build(program).map_err(|source| CompileError::Analysis { source })?;
    let joins = own_bundle_joins(program, &cfg);
    if joins > u16::MAX as usize {
        return Err(CompileError::TooManyJoins {
            program: program.name.clone(),
            blocks: joins,
        });
    }
    let regions = Regions::compute(&cfg, &spec.maps);
    let patterns = Patterns::compute(&cfg, &regions);
    let mut ir = lower(program, &cfg, &regions, &spec.maps)?;
    let offsets = hwxdp_ebpf::slot_offsets(&program.insns);
    let bad_slot = |slot: u32| CompileError::Entry {
        program: program.name.clone(),
        slot,
    };
    let insns = slots
        .iter()
        .map(|&slot| {
            offsets
                .binary_search(&(slot as usize))
                .map(|i| i as u32)
                .map_err(|_| bad_slot(slot))
        })
        .collect::<Result<Vec<u32>, _>>()?;
    ir.split_at_entries(&insns)
        .map_err(|insn| bad_slot(offsets[insn as usize] as u32))?;
    let tail_calls = TailCalls::of(spec);
    let mut report = ProgramReport {
        name: program.name.clone(),
        ebpf_insns: program.insns.len(),
        after_pass: Vec::new(),
        bundles: 0,
        ops: 0,
        degraded: Vec::new(),
    };
    for pass in Pass::ALL {
        if !options.on(pass) || pass == Pass::ParallelBranches {
            continue;
        }
        match pass {
            // A removed check's failure becomes a fault, which ends the packet: right only where the program's
            // return does, which it does not when a tail call from inside a function entered it.
            Pass::Bounds if !tail_calls.from_function => {
                passes::remove_bounds_checks(&mut ir, &patterns, &regions);
            }
            // The stack is clean only when the packet starts: a program a tail call enters finds it as its
            // caller left it.
            Pass::Zeroing if !tail_calls.any => {
                passes::remove_zeroing(&mut ir, &patterns);
            }
            Pass::Bounds | Pass::Zeroing => {}
            Pass::ByteLoads => {
                passes::fuse_byte_loads(&mut ir);
            }
            Pass::ThreeOperand => {
                passes::fuse_three_operand(&mut ir);
            }
            Pass::SixByte => {
                passes::fuse_six_byte(&mut ir);
            }
            Pass::Exit => {
                passes::parametrize_exits(&mut ir, &regions);
            }
            Pass::Rename => {
                let r = crate::rename::rename_registers(&mut ir, |ops| {
                    schedule_block(ops, options.lanes).len()
                });
                if r.windowed > 0 {
                    report.degraded.push(format!(
                        "rename: {} blocks of more than {} ops renamed in windows of {} ops",
                        r.windowed,
                        crate::rename::WHOLE_BLOCK_OPS,
                        crate::rename::WINDOW
                    ));
                }
            }
            Pass::CodeMotion => {
                let mut rows = block_rows(&ir, options);
                let m = crate::motion::hoist_control_equivalent(&mut ir, &mut rows);
                if m.skipped > 0 {
                    report.degraded.push(format!(
                        "code-motion: over {} blocks, partners of {} blocks with more than {} blocks between \
                         them not considered",
                        crate::motion::EXACT_BLOCKS,
                        m.skipped,
                        crate::motion::MAX_BLOCKS_BETWEEN
                    ));
                }
            }
            Pass::Speculate => {
                let mut rows = block_rows(&ir, options);
                crate::speculate::speculate(&mut ir, &mut rows);
            }
            Pass::ParallelBranches => {}
        }
        report.after_pass.push((pass, ir.op_count()));
    }
    Ok((ir, report))
}

/// A lower bound on the bundles of `program`, cheap enough to refuse a program far over the 16-bit bundle index
/// before the passes run (a 1M-instruction branchy program takes seconds through them): the blocks ending in a
/// conditional jump with an immediate operand that at least two blocks lead to, each of which the image gives a
/// bundle of its own. No pass removes such a jump or changes the control flow into the block except bounds-check
/// removal, which drops one edge of a check (a jump comparing two registers), so edges from those are not counted;
/// `parallel-branches` pulls a conditional jump into the previous block's bundle only when that jump's block has a
/// single predecessor; and blocks split at entry points keep the join in their first piece, which keeps the jump or
/// ops of its own or stops that merge (an empty block with two predecessors on the way).
pub(crate) fn own_bundle_joins(program: &hwxdp_object::ProgramSpec, cfg: &ProgramCfg) -> usize {
    let last_op =
        |block: &hwxdp_analysis::Block| Op::from_insn(&program.insns[block.last().index()]);
    let compares_registers = |block: &hwxdp_analysis::Block| {
        let op = last_op(block);
        op.is_cond_jump() && op.code & hwxdp_ebpf::opcode::SRC_X != 0
    };
    cfg.funcs
        .iter()
        .map(|func| {
            func.blocks
                .iter()
                .filter(|b| last_op(b).is_cond_jump() && !compares_registers(b))
                .filter(|b| {
                    let counted = b
                        .preds
                        .iter()
                        .filter(|&&p| !compares_registers(func.block(p)));
                    counted.take(2).count() == 2
                })
                .count()
        })
        .sum()
}

/// Where the object's programs call `bpf_tail_call`. Once one does, any program of the image may be entered by a tail
/// call (the loader fills PROG_ARRAYs with any of them), with the stack as the caller left it; and when the call is
/// made from inside a bpf-to-bpf function, the entered program's exit returns to that function's caller.
struct TailCalls {
    /// Some program tail-calls.
    any: bool,
    /// Some function other than a program's own code tail-calls (programs that do not compile never run).
    from_function: bool,
}

impl TailCalls {
    fn of(spec: &ObjectSpec) -> TailCalls {
        let is_tail_call = |i: &hwxdp_ebpf::Insn| crate::ir::is_tail_call(&Op::from_insn(i));
        let any = spec
            .programs
            .iter()
            .flat_map(|p| &p.insns)
            .any(is_tail_call);
        let from_function = any
            && spec.programs.iter().any(|p| {
                ProgramCfg::build(p).is_ok_and(|cfg| {
                    cfg.funcs.iter().skip(1).any(|f| {
                        p.insns
                            .get(f.start.index()..f.end.index())
                            .is_some_and(|insns| insns.iter().any(is_tail_call))
                    })
                })
            });
        TailCalls { any, from_function }
    }
}

/// Each block's bundle count as [`schedule`] lays `ir` out, for the passes that move ops between blocks.
fn block_rows(ir: &IrProgram, options: &Options) -> crate::rows::BlockRows {
    crate::rows::BlockRows::new(ir, options.lanes, options.on(Pass::ParallelBranches))
}

/// Schedules a program's working form into rows per block.
pub fn schedule(ir: &IrProgram, options: &Options) -> Vec<Vec<Row>> {
    let mut rows: Vec<Vec<Row>> = ir
        .blocks
        .iter()
        .map(|b| schedule_block(&b.ops, options.lanes))
        .collect();
    if options.on(Pass::ParallelBranches) {
        let n = ir.blocks.len();
        let mut preds = vec![0usize; n];
        for k in 0..n {
            for s in passes::successors(ir, k) {
                preds[s] += 1;
            }
        }
        for k in 0..n {
            while merge_next_branch(&mut rows, ir, &preds, k) {}
        }
    }
    rows
}

/// Compiles every program of `spec` that compiles into one image (a tail call may enter any of them); the
/// program `entry` must compile.
pub fn compile_object(
    spec: &ObjectSpec,
    entry: usize,
    options: &Options,
) -> Result<Compiled, CompileError> {
    compile_object_with_entries(spec, entry, options, &[])
}

/// [`compile_object`] with an entry point at each of `slots` of program `entry` (a Warp Optimizer's restore slots):
/// [`Compiled::entry_points`] gives each one's bundle. With no slots the image is exactly [`compile_object`]'s.
pub fn compile_object_with_entries(
    spec: &ObjectSpec,
    entry: usize,
    options: &Options,
    slots: &[u32],
) -> Result<Compiled, CompileError> {
    if !(1..=crate::isa::MAX_LANES).contains(&options.lanes) {
        return Err(CompileError::Lanes {
            lanes: options.lanes,
        });
    }
    let mut bundles = Vec::new();
    let mut entries = vec![NO_ENTRY; spec.programs.len()];
    let mut reports = Vec::new();
    let mut entry_points = Vec::new();
    for (index, slot) in entries.iter_mut().enumerate() {
        let here: &[u32] = if index == entry { slots } else { &[] };
        let compiled = optimize_with_entries(spec, index, options, here);
        let (ir, mut report) = match compiled {
            Ok(c) => c,
            // A program over the bundle index alone makes the image so, whether the entry or a tail call's.
            Err(e @ CompileError::TooManyJoins { .. }) => return Err(e),
            Err(e) if index == entry => return Err(e),
            Err(_) => continue,
        };
        let rows = schedule(&ir, options);
        let (mut b, starts) = layout(&ir, &rows, bundles.len(), options.lanes);
        if index == entry {
            entry_points = entry_bundles(spec, index, &ir, &starts, slots);
        }
        report.bundles = b.len();
        report.ops = b.iter().map(|x| x.count()).sum();
        *slot = starts.first().copied().unwrap_or(bundles.len()) as u32;
        bundles.append(&mut b);
        reports.push(report);
    }
    if bundles.len() > u16::MAX as usize {
        return Err(CompileError::TooLong {
            bundles: bundles.len(),
        });
    }
    let maps = spec
        .maps
        .iter()
        .map(|m| MapConfig {
            map_type: m.map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: m.max_entries,
            flags: m.map_flags,
        })
        .collect();
    Ok(Compiled {
        image: crate::isa::Image {
            lanes: options.lanes,
            bundles,
            entries,
            maps,
        },
        reports,
        names: spec.programs.iter().map(|p| p.name.clone()).collect(),
        entry_points,
    })
}

/// The bundle of each entry slot: the first bundle of the block the slot starts (an emptied block falls through,
/// so its bundle is the next block's first).
fn entry_bundles(
    spec: &ObjectSpec,
    index: usize,
    ir: &IrProgram,
    starts: &[usize],
    slots: &[u32],
) -> Vec<EntryPoint> {
    let offsets = hwxdp_ebpf::slot_offsets(&spec.programs[index].insns);
    slots
        .iter()
        .filter_map(|&slot| {
            let insn = offsets.binary_search(&(slot as usize)).ok()? as u32;
            let k = ir.blocks.iter().position(|b| b.start == insn)?;
            Some(EntryPoint {
                slot,
                bundle: starts[k] as u32,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_ebpf::Insn;
    use hwxdp_object::ProgramSpec;

    /// A random program of `body` instructions after a 64-byte bounds check: ALU operations on r0 and r5-r9, packet
    /// loads, forward conditional jumps (immediate and register operands), `goto`s, exits, and further bounds checks
    /// through r4, all landing inside the body or on the epilogue.
    fn random_program(seed: u64, body: usize) -> Vec<Insn> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let regs = [0u8, 5, 6, 7, 8, 9];
        let mut insns = vec![
            Insn::new(0x61, 2, 1, 0, 0),
            Insn::new(0x61, 3, 1, 4, 0),
            Insn::new(0xbf, 4, 2, 0, 0),
            Insn::new(0x07, 4, 0, 0, 64),
            Insn::new(0xb7, 0, 0, 0, 2),
            Insn::new(0x2d, 4, 3, (regs.len() + body + 1) as i16, 0),
        ];
        insns.extend(regs.iter().map(|&r| Insn::new(0xb7, r, 0, 0, 0)));
        let mut at = 0;
        while at < body {
            let room = (body - at) as u64;
            let (dst, src) = (regs[next(6) as usize], regs[next(6) as usize]);
            let off = next(room) as i16;
            let insn = match next(10) {
                0 | 1 => {
                    let code = [0x07, 0x0f, 0xa7, 0xaf, 0x57][next(5) as usize];
                    if code & 0x08 == 0 {
                        Insn::new(code, dst, 0, 0, next(200) as i64)
                    } else {
                        Insn::new(code, dst, src, 0, 0)
                    }
                }
                2 => Insn::new(0x71, dst, 2, next(60) as i16, 0),
                3..=5 => {
                    let code = 0x25 + 0x10 * next(4) as u8;
                    Insn::new(code, dst, 0, next(room.min(3)) as i16, next(100) as i64)
                }
                // A run of jumps to the epilogue: `parallel-branches` pulls each into the bundle before it.
                6 => {
                    for _ in 1..next(room.min(6)) {
                        insns.push(Insn::new(
                            0x25,
                            regs[next(6) as usize],
                            0,
                            (body - at - 1) as i16,
                            7,
                        ));
                        at += 1;
                    }
                    Insn::new(0x25, dst, 0, (body - at - 1) as i16, 7)
                }
                7 => Insn::new(0x2d, dst, src, off, 0),
                8 if room > 2 => {
                    insns.push(Insn::new(0xbf, 4, 2, 0, 0));
                    insns.push(Insn::new(0x07, 4, 0, 0, 64 + next(64) as i64));
                    at += 2;
                    Insn::new(0x2d, 4, 3, next(room - 2) as i16, 0)
                }
                8 => Insn::new(0x05, 0, 0, off, 0),
                _ => Insn::new(0x95, 0, 0, 0, 0),
            };
            insns.push(insn);
            at += 1;
        }
        insns.push(Insn::new(0x57, 0, 0, 0, 3));
        insns.push(Insn::new(0x95, 0, 0, 0, 0));
        insns
    }

    #[test]
    fn blocks_that_take_a_bundle_of_their_own_never_outnumber_the_bundles() {
        let mut counted = 0;
        for seed in 0..150 {
            let program = ProgramSpec::standalone("random", "xdp", random_program(seed, 60));
            let cfg = ProgramCfg::build(&program).expect("the program has a control-flow graph");
            let joins = own_bundle_joins(&program, &cfg);
            let spec = ObjectSpec::single(program);
            for lanes in [1, 2, 4, 8] {
                let options = Options {
                    lanes,
                    ..Options::default()
                };
                let compiled = compile_object(&spec, 0, &options).expect("the program compiles");
                let bundles = compiled.reports[0].bundles;
                assert!(
                    joins <= bundles,
                    "seed {seed}, {lanes} lanes: {joins} joins, {bundles} bundles"
                );
            }
            counted += joins;
        }
        assert!(
            counted > 150,
            "the bound counts almost nothing: {counted} in all"
        );
    }
}
