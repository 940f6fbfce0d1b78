//! `interp`: the reference machine.

use crate::registry::Entry;
use crate::{
    Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Site, Timing,
};
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Coverage, Machine, XdpBuff};
use std::convert::Infallible;

/// The registry's line.
pub const ENTRY: Entry = Entry {
    name: "interp",
    about: "the reference machine: the kernel's XDP semantics, interpreted",
    options: &[],
    needs_kernel: false,
    whole_trace: false,
    create,
};

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let mut machine = Machine::new(setup.spec, Some(setup.program), setup.config)
        .map_err(|e| BackendError::setup(ENTRY.name, e))?;
    // Its perf event arrays are drained after every packet or after the trace, as its ring buffers.
    machine.read_perf_samples();
    Ok(Box::new(Interp {
        rings: crate::Rings::of(setup),
        machine,
        buff: empty_buff(),
    }))
}

/// A reusable packet buffer.
pub(crate) fn empty_buff() -> XdpBuff {
    XdpBuff::new(&[0; 64]).expect("a 64-byte frame fits")
}

/// Loads `packet` into `buff`; a frame XDP cannot hold is the caller's error.
pub(crate) fn load(
    backend: &'static str,
    buff: &mut XdpBuff,
    packet: &Packet,
) -> Result<(), BackendError> {
    buff.reset(&packet.bytes)
        .map_err(|e| BackendError::run(backend, e))
}

/// The records ring buffers `rings` of `maps` hold, consumed.
pub(crate) fn drain(maps: &mut hwxdp_maps::Maps, rings: &[usize]) -> Vec<Record> {
    let Ok(records) =
        crate::collect_records(rings, |map| Ok::<_, Infallible>(maps.ringbuf_drain(map)));
    records
}

/// The records ring buffers `rings` and perf event arrays `perf` of `maps` hold, consumed: ring buffers first.
fn drain_all(maps: &mut hwxdp_maps::Maps, rings: &[usize], perf: &[usize]) -> Vec<Record> {
    let mut records = drain(maps, rings);
    let Ok(samples) = crate::collect_samples(perf, |map| Ok::<_, Infallible>(maps.perf_drain(map)));
    records.extend(samples);
    records
}

struct Interp {
    machine: Machine,
    rings: crate::Rings,
    buff: XdpBuff,
}

impl Backend for Interp {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            instructions: true,
            insn_trace: true,
            coverage: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(ENTRY.name, &mut self.buff, packet)?;
            self.machine.set_time(packet.time_ns);
            let o = self.machine.run_packet(&mut self.buff, &packet.md);
            out.push(Ran {
                retval: o.retval,
                output: self.buff.output().to_vec(),
                meta_len: self.buff.meta().len(),
                redirect: o.redirect.map(|(map, key)| Redirect { map, key }),
                records: drain_all(
                    self.machine.maps_mut(),
                    self.rings.per_packet(),
                    self.rings.perf_per_packet(),
                ),
                fault: o.fault.map(|f| f.to_string()),
                insns: Some(o.insns),
                path: Some(o.path),
                cycles: None,
                exit: o.exit.map(|(program, slot)| Site { program, slot }),
                printk: o.printk,
                trace: o.trace,
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.machine.maps_mut()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(drain_all(
            self.machine.maps_mut(),
            self.rings.all(),
            self.rings.perf_all(),
        ))
    }

    fn coverage(&self) -> Option<Vec<Coverage>> {
        Some(self.machine.coverage())
    }

    fn time(&mut self, packets: &[Packet], timing: &Timing) -> Result<f64, BackendError> {
        // A tight loop: copying every packet's result out would be timed as the machine's work.
        let (machine, buff) = (&mut self.machine, &mut self.buff);
        crate::repeat_until(timing.min, packets.len(), || {
            for packet in packets {
                load(ENTRY.name, buff, packet)?;
                machine.set_time(packet.time_ns);
                machine.run_packet(buff, &packet.md);
            }
            Ok(())
        })
    }
}
