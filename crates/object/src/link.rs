//! Links each program: its own code, then every function it reaches by calls, each appended once, as libbpf does.

use std::collections::BTreeMap;

use hwxdp_ebpf::slot_offsets;

use crate::code::{CodeRef, CodeSection};
use crate::{
    LineSpan, ObjectError, ProgramSpec, MAX_LINKED_FUNCTIONS, MAX_LINKED_INSNS, MAX_PROGRAM_INSNS,
};

/// What the programs linked so far hold together, against [`MAX_LINKED_INSNS`] and [`MAX_LINKED_FUNCTIONS`].
#[derive(Default)]
pub(crate) struct Linked {
    /// Instructions.
    insns: usize,
    /// Function copies.
    functions: usize,
}

/// A function of the object: (section index, function index in that section, dense index over all functions).
type FunctionId = (usize, usize, usize);

/// A code reference to patch once every function is placed.
struct Fixup {
    /// Instruction index in the linked program.
    at: usize,
    /// Dense index of the function holding the target.
    callee: usize,
    /// Target instruction index within that function.
    offset: usize,
}

/// Not reached by the program being linked.
const UNSEEN: usize = usize::MAX;
/// Reached, waiting to be placed.
const QUEUED: usize = usize::MAX - 1;

/// Links the programs of one object, one after the other, with no hashing and no scan: functions have dense
/// indices, and where each one landed in the program being linked is kept in one table reused by every program.
pub(crate) struct Linker<'a> {
    code: &'a BTreeMap<usize, CodeSection>,
    /// Dense index of the first function of each code section, by ELF section index.
    first: Vec<Option<usize>>,
    /// Where each function starts in the program being linked, or [`UNSEEN`] / [`QUEUED`].
    placed: Vec<usize>,
    /// What the programs linked so far hold together.
    linked: Linked,
}

impl<'a> Linker<'a> {
    /// A linker over the code sections of an object.
    pub fn new(code: &'a BTreeMap<usize, CodeSection>) -> Self {
        let sections = code.keys().next_back().map_or(0, |&k| k + 1);
        let mut first = vec![None; sections];
        let mut total = 0;
        for (&index, section) in code {
            first[index] = Some(total);
            total += section.functions.len();
        }
        Linker {
            code,
            first,
            placed: vec![UNSEEN; total],
            linked: Linked::default(),
        }
    }

    /// Links the function `function` of section `section` with its transitive callees.
    pub fn link(&mut self, section: usize, function: usize) -> Result<ProgramSpec, ObjectError> {
        let root = (
            section,
            function,
            self.first[section].unwrap_or(0) + function,
        );
        let mut order = vec![root];
        let result = self.link_order(&mut order);
        for &(_, _, id) in &order {
            self.placed[id] = UNSEEN;
        }
        result
    }

    fn link_order(&mut self, order: &mut Vec<FunctionId>) -> Result<ProgramSpec, ObjectError> {
        let code = self.code;
        let (section, function, root_id) = order[0];
        let root_section = &code[&section];
        let root = &root_section.functions[function];
        let mut insns = Vec::new();
        let mut functions = Vec::new();
        let mut fixups = Vec::new();
        self.placed[root_id] = QUEUED;
        let mut next = 0;
        while let Some(&(sec_index, func_index, id)) = order.get(next) {
            next += 1;
            let sec = &code[&sec_index];
            let func = &sec.functions[func_index];
            let base = insns.len();
            let len = base + (func.end - func.start);
            check_size(&root.name, len, functions.len() + 1, &self.linked)?;
            self.placed[id] = base;
            functions.push((base, func.name.clone()));
            insns.extend_from_slice(&sec.insns[func.start..func.end]);
            let first = sec.code_refs.partition_point(|r| r.insn < func.start);
            for code_ref in sec.code_refs[first..]
                .iter()
                .take_while(|r| r.insn < func.end)
            {
                let (callee, target_insn, target_start) = self.resolve(sec, code_ref)?;
                if self.placed[callee.2] == UNSEEN {
                    self.placed[callee.2] = QUEUED;
                    order.push(callee);
                }
                fixups.push(Fixup {
                    at: base + (code_ref.insn - func.start),
                    callee: callee.2,
                    offset: target_insn - target_start,
                });
            }
        }
        let slots = slot_offsets(&insns);
        for fixup in fixups {
            let target = self.placed[fixup.callee] + fixup.offset;
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
        self.linked.insns += insns.len();
        self.linked.functions += functions.len();
        let lines = line_spans(code, order, &self.placed, &slots);
        Ok(ProgramSpec {
            name: root.name.clone(),
            section: root_section.name.clone(),
            own_len: root.end - root.start,
            insns,
            functions,
            lines,
        })
    }

    /// The function a code reference of `sec` lands in, the target instruction and that function's first one.
    fn resolve(
        &self,
        sec: &CodeSection,
        code_ref: &CodeRef,
    ) -> Result<(FunctionId, usize, usize), ObjectError> {
        let bad = |reason: String| ObjectError::BadInstruction {
            section: sec.name.clone(),
            insn: sec.slots[code_ref.insn],
            reason,
        };
        let target_sec = self.code.get(&code_ref.section).ok_or_else(|| {
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
        let callee = target_sec.function_of(target_insn).ok_or_else(|| {
            bad(format!(
                "call target {} in section {} is outside any function",
                code_ref.slot, target_sec.name
            ))
        })?;
        let first = self.first[code_ref.section].unwrap_or(0);
        Ok((
            (code_ref.section, callee, first + callee),
            target_insn,
            target_sec.functions[callee].start,
        ))
    }
}

/// Refuses a program of `len` linked instructions and `functions` function copies so far when it, or it with the
/// programs before (`linked`), is over the limits.
fn check_size(
    program: &str,
    len: usize,
    functions: usize,
    linked: &Linked,
) -> Result<(), ObjectError> {
    if len > MAX_PROGRAM_INSNS {
        return Err(ObjectError::ProgramTooLong {
            program: program.to_string(),
            linked: len,
            limit: MAX_PROGRAM_INSNS,
        });
    }
    let too_large = |what: &'static str, linked: usize, limit: usize| ObjectError::LinkedTooLarge {
        program: program.to_string(),
        what,
        linked,
        limit,
    };
    if linked.insns + len > MAX_LINKED_INSNS {
        return Err(too_large(
            "instructions",
            linked.insns + len,
            MAX_LINKED_INSNS,
        ));
    }
    if linked.functions + functions > MAX_LINKED_FUNCTIONS {
        return Err(too_large(
            "functions",
            linked.functions + functions,
            MAX_LINKED_FUNCTIONS,
        ));
    }
    Ok(())
}

/// The line info of every placed function, moved to the slots where the function landed. `slots` holds the slot of
/// every linked instruction plus the end.
fn line_spans(
    code: &BTreeMap<usize, CodeSection>,
    order: &[FunctionId],
    placed: &[usize],
    slots: &[usize],
) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = Vec::new();
    for id in order {
        let sec = &code[&id.0];
        let func = &sec.functions[id.1];
        let base = placed[id.2];
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
