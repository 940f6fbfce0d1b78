//! `warp`: the Warp Engine in software (the warping paper's appendix C emulator) in front of the reference machine.
//! The program's parse-and-classify prefix becomes match-action rules (`hwxdp_warp::optimize`); per packet the
//! matching rule gives the verdict, or the context the machine resumes from, and `insns` counts what the processor
//! behind the engine still executes. The hXDP processor resuming at the restored context is the next step; until
//! then the reference machine stands behind the engine.

use crate::interp::{drain, empty_buff, load};
use crate::registry::Entry;
use crate::{
    Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Site, Summary,
};
use hwxdp_maps::MapStore;
use hwxdp_warp::{Engine, Params, Warp};
use hwxdp_xdp::{Machine, XdpBuff};

/// The registry's line.
pub const ENTRY: Entry = Entry {
    name: "warp",
    about: "the Warp Engine in software in front of the reference machine, which resumes where the rule left off",
    options: &[],
    needs_kernel: false,
    whole_trace: false,
    create,
};

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let warp = hwxdp_warp::optimize(setup.spec, setup.program, &Params::default())
        .map_err(|e| BackendError::setup(ENTRY.name, e))?;
    let machine = Machine::new(setup.spec, Some(setup.program), setup.config)
        .map_err(|e| BackendError::setup(ENTRY.name, e))?;
    Ok(Box::new(WarpBackend {
        warp,
        machine,
        rings: crate::Rings::of(setup),
        buff: empty_buff(),
        matched: 0,
        decided: 0,
    }))
}

struct WarpBackend {
    warp: Warp,
    machine: Machine,
    rings: crate::Rings,
    buff: XdpBuff,
    /// Packets a rule matched, and those whose verdict the engine gave by itself.
    matched: u64,
    decided: u64,
}

impl Backend for WarpBackend {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            instructions: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let engine = Engine::new(&self.warp);
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(ENTRY.name, &mut self.buff, packet)?;
            self.machine.set_time(packet.time_ns);
            let run = engine
                .run(&mut self.machine, &mut self.buff, &packet.md)
                .map_err(|(rule, e)| {
                    BackendError::run(ENTRY.name, format!("rule {rule}: cannot resume: {e}"))
                })?;
            if run.rule.is_some() {
                self.matched += 1;
                // A verdict rule leaves the processor out: it executes nothing.
                self.decided += u64::from(run.processor == 0);
            }
            let o = run.outcome;
            out.push(Ran {
                retval: o.retval,
                output: self.buff.output().to_vec(),
                meta_len: self.buff.meta().len(),
                redirect: o.redirect.map(|(map, key)| Redirect { map, key }),
                records: drain(self.machine.maps_mut(), self.rings.per_packet()),
                fault: o.fault.map(|f| f.to_string()),
                insns: Some(run.processor),
                path: Some(o.path),
                exit: o.exit.map(|(program, slot)| Site { program, slot }),
                printk: o.printk,
                ..Ran::default()
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.machine.maps_mut()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(drain(self.machine.maps_mut(), self.rings.all()))
    }

    fn summary(&self) -> Summary {
        let r = &self.warp.report;
        Summary::default()
            .with("rules", "rules", r.rules as f64)
            .with("tcam_entries", "TCAM entries", r.tcam_entries as f64)
            .with("key_bytes", "key bytes", r.key_bytes as f64)
            .with("stack_bytes", "stack bytes restored", r.stack_bytes as f64)
            .with(
                "matched_packets",
                "packets matched a rule",
                self.matched as f64,
            )
            .with(
                "engine_verdicts",
                "verdicts from the engine alone",
                self.decided as f64,
            )
    }
}
