//! The Warp Engine in software (the paper's appendix C emulator, on the reference machine): the key from the
//! chunk, the highest-priority matching entry, then the verdict or the restored context the machine resumes from.

use crate::restore::Value;
use crate::walk::Action;
use crate::Warp;
use hwxdp_xdp::{Machine, Outcome, Resume, ResumeError, ResumeValue, StackWrite, XdpBuff, XdpMd};

/// The engine, configured with one program's rules.
pub struct Engine<'a> {
    warp: &'a Warp,
}

/// What happened to one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The rule that matched (its priority), or `None`: the packet ran from the start.
    pub rule: Option<usize>,
    /// The packet's outcome; `insns` counts the warped instructions too, as the resumed machine's clock does.
    pub outcome: Outcome,
    /// eBPF instructions the processor executed.
    pub processor: u64,
}

impl<'a> Engine<'a> {
    /// The engine for `warp`'s rules.
    pub fn new(warp: &'a Warp) -> Self {
        Engine { warp }
    }

    /// The highest-priority rule matching a packet whose bytes (from `data`) are `packet`.
    pub fn lookup(&self, packet: &[u8]) -> Option<usize> {
        let chunk = &packet[..packet.len().min(self.warp.params.chunk as usize)];
        let key = self.warp.layout.key(chunk, packet.len());
        self.warp
            .rules
            .iter()
            .find(|r| r.entries.iter().any(|e| e.matches(&key)))
            .map(|r| r.priority)
    }

    /// The context rule `rule` restores for `packet`; `None` for a verdict rule.
    pub fn resume(&self, rule: usize, packet: &[u8]) -> Option<Resume> {
        let Action::Restore(r) = &self.warp.rules[rule].action else {
            return None;
        };
        let chunk = &packet[..packet.len().min(self.warp.params.chunk as usize)];
        let value = |v: &Value| resolve(v, chunk, packet.len());
        let mut regs = [None; 9];
        for (reg, v) in &r.regs {
            regs[*reg as usize - 1] = Some(value(v));
        }
        Some(Resume {
            slot: r.slot as usize,
            r0: r.r0,
            regs,
            stack: r
                .stack
                .iter()
                .map(|s| StackWrite {
                    off: s.offset,
                    size: s.size,
                    value: value(&s.value),
                })
                .collect(),
            skipped: r.warped,
        })
    }

    /// Runs the packet in `buff` through the engine, then through `machine` from the restored context (or from the
    /// start when no rule matches); a verdict rule leaves the machine, its maps and the packet untouched.
    pub fn run(
        &self,
        machine: &mut Machine,
        buff: &mut XdpBuff,
        md: &XdpMd,
    ) -> Result<Run, (usize, ResumeError)> {
        let Some(rule) = self.lookup(buff.data()) else {
            let outcome = machine.run_packet(buff, md);
            let processor = outcome.insns;
            return Ok(Run {
                rule: None,
                outcome,
                processor,
            });
        };
        match &self.warp.rules[rule].action {
            Action::Verdict { retval, warped, .. } => Ok(Run {
                rule: Some(rule),
                outcome: Outcome {
                    retval: *retval,
                    insns: *warped,
                    ..Outcome::default()
                },
                processor: 0,
            }),
            Action::Restore(r) => {
                let resume = self.resume(rule, buff.data()).unwrap_or_default();
                let outcome = machine
                    .run_resumed(buff, md, &resume)
                    .map_err(|e| (rule, e))?;
                Ok(Run {
                    rule: Some(rule),
                    processor: outcome.insns.saturating_sub(r.warped),
                    outcome,
                })
            }
        }
    }
}

/// The machine's value of a restored value for a packet with first bytes `chunk` and length `len`.
fn resolve(v: &Value, chunk: &[u8], len: usize) -> ResumeValue {
    match *v {
        Value::Const { value } => ResumeValue::Scalar(value),
        Value::Extract(e) => ResumeValue::Scalar(e.eval(chunk)),
        Value::Length { offset } => ResumeValue::Scalar((len as i64).wrapping_add(offset) as u64),
        Value::Context => ResumeValue::Context,
        Value::Packet { offset } => ResumeValue::Packet(offset),
        Value::PacketEnd { offset } => ResumeValue::PacketEnd(offset),
        Value::Stack { offset } => ResumeValue::Stack(offset),
        Value::Map { map } => ResumeValue::Map(map),
    }
}
