//! Links one program: its own code, then every function it reaches by calls, each appended once, as libbpf does.

use std::collections::{BTreeMap, HashMap, HashSet};

use hwxdp_ebpf::slot_offsets;

use crate::code::CodeSection;
use crate::{LineSpan, ObjectError, ProgramSpec, MAX_LINKED_INSNS, MAX_PROGRAM_INSNS};

/// A function placed in the linked program: (section index, function index in that section).
type FunctionId = (usize, usize);

/// A code reference to patch once every function is placed.
struct Fixup {
    /// Instruction index in the linked program.
    at: usize,
    /// The function holding the target.
    callee: FunctionId,
    /// Target instruction index within that function.
    offset: usize,
}

/// Links the function `function` of section `section` with its transitive callees. `linked` counts the instructions
/// of every program linked so far, against [`MAX_LINKED_INSNS`].
pub(crate) fn link_program(
    code: &BTreeMap<usize, CodeSection>,
    section: usize,
    function: usize,
    linked: &mut usize,
) -> Result<ProgramSpec, ObjectError> {
    let root_section = &code[&section];
    let root = &root_section.functions[function];
    let mut insns = Vec::new();
    let mut functions = Vec::new();
    let mut placed: HashMap<FunctionId, usize> = HashMap::new();
    let mut order: Vec<FunctionId> = vec![(section, function)];
    let mut queued: HashSet<FunctionId> = order.iter().copied().collect();
    let mut fixups = Vec::new();
    let mut next = 0;
    while let Some(&(sec_index, func_index)) = order.get(next) {
        next += 1;
        let sec = &code[&sec_index];
        let func = &sec.functions[func_index];
        let base = insns.len();
        check_size(&root.name, base + (func.end - func.start), linked)?;
        placed.insert((sec_index, func_index), base);
        functions.push((base, func.name.clone()));
        insns.extend_from_slice(&sec.insns[func.start..func.end]);
        let first = sec.code_refs.partition_point(|r| r.insn < func.start);
        for code_ref in sec.code_refs[first..]
            .iter()
            .take_while(|r| r.insn < func.end)
        {
            let bad = |reason: String| ObjectError::BadInstruction {
                section: sec.name.clone(),
                insn: sec.slots[code_ref.insn],
                reason,
            };
            let target_sec = code.get(&code_ref.section).ok_or_else(|| {
                bad(format!(
                    "call into section {}, which is not code",
                    code_ref.section
                ))
            })?;
            let target_insn = target_sec.insn_at_slot(code_ref.slot).ok_or_else(|| {
                bad(format!(
                    "call target {} in section {} is not an instruction",
                    code_ref.slot, target_sec.name
                ))
            })?;
            let callee_index = target_sec.function_of(target_insn).ok_or_else(|| {
                bad(format!(
                    "call target {} in section {} is outside any function",
                    code_ref.slot, target_sec.name
                ))
            })?;
            let callee = (code_ref.section, callee_index);
            if queued.insert(callee) {
                order.push(callee);
            }
            fixups.push(Fixup {
                at: base + (code_ref.insn - func.start),
                callee,
                offset: target_insn - target_sec.functions[callee_index].start,
            });
        }
    }
    let slots = slot_offsets(&insns);
    for fixup in fixups {
        let target = placed[&fixup.callee] + fixup.offset;
        // Relative to the slot after the call (or after the first half of lddw for a callback address).
        let relative = slots[target] as i64 - slots[fixup.at] as i64 - 1;
        let relative = i32::try_from(relative).map_err(|_| ObjectError::BadInstruction {
            section: root_section.name.clone(),
            insn: slots[fixup.at],
            reason: "linked call offset does not fit in 32 bits".into(),
        })?;
        let insn = &mut insns[fixup.at];
        insn.imm = if insn.is_lddw() {
            i64::from(relative as u32)
        } else {
            i64::from(relative)
        };
    }
    *linked += insns.len();
    let lines = line_spans(code, &order, &placed, &slots);
    Ok(ProgramSpec {
        name: root.name.clone(),
        section: root_section.name.clone(),
        own_len: root.end - root.start,
        insns,
        functions,
        lines,
    })
}

/// Refuses a program of `len` linked instructions so far when it, or it with the programs before (`linked`), is over
/// the limits.
fn check_size(program: &str, len: usize, linked: &usize) -> Result<(), ObjectError> {
    if len > MAX_PROGRAM_INSNS {
        return Err(ObjectError::ProgramTooLong {
            program: program.to_string(),
            linked: len,
            limit: MAX_PROGRAM_INSNS,
        });
    }
    if *linked + len > MAX_LINKED_INSNS {
        return Err(ObjectError::LinkedTooLarge {
            program: program.to_string(),
            linked: *linked + len,
            limit: MAX_LINKED_INSNS,
        });
    }
    Ok(())
}

/// The line info of every placed function, moved to the slots where the function landed. `slots` holds the slot of
/// every linked instruction plus the end.
fn line_spans(
    code: &BTreeMap<usize, CodeSection>,
    order: &[FunctionId],
    placed: &HashMap<FunctionId, usize>,
    slots: &[usize],
) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = Vec::new();
    for id in order {
        let sec = &code[&id.0];
        let func = &sec.functions[id.1];
        let base = placed[id];
        let first = sec.lines.partition_point(|(insn, _)| *insn < func.start);
        let records = &sec.lines[first..];
        let records = &records[..records.partition_point(|(insn, _)| *insn < func.end)];
        let linked = |insn: usize| slots[base + (insn - func.start)];
        for (k, (insn, source)) in records.iter().enumerate() {
            let start = linked(*insn);
            let end = records
                .get(k + 1)
                .map_or(linked(func.end), |(next, _)| linked(*next));
            match spans.last_mut() {
                // Consecutive records of the same line and column (clang repeats them) make one span.
                Some(last) if last.end == start && last.source == *source => last.end = end,
                _ => spans.push(LineSpan {
                    start,
                    end,
                    source: source.clone(),
                }),
            }
        }
    }
    spans
}
