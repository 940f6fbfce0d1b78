//! `ehdl-rtl`: the program's generated eHDL pipeline under Verilator, the trace streamed through it back to back (one
//! batch), which is how its hazards and throughput show.

use crate::registry::Entry;
use crate::{Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Summary};
use hwxdp_maps::MapStore;
use hwxdp_rtlsim::ehdl::{EhdlPaths, EhdlRtl, PacketIn};
use std::convert::Infallible;

/// The registry's line.
pub const RTL: Entry = Entry {
    name: "ehdl-rtl",
    about: "the program's generated eHDL pipeline, simulated with Verilator, the trace streamed back to back",
    options: &["--data-width", "--hazards", "--vcd", "--vcd-packets"],
    needs_kernel: false,
    whole_trace: true,
    create,
};

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let options = hwxdp_ehdl::Options {
        data_width: setup.options.data_width.unwrap_or(512),
        hazards: setup.options.hazards.unwrap_or_default(),
        ..hwxdp_ehdl::Options::default()
    };
    let mut paths = EhdlPaths::from_env();
    paths.notify = setup.notify;
    let mut rtl = EhdlRtl::new(
        setup.spec,
        Some(setup.program),
        setup.config,
        &options,
        &paths,
    )
    .map_err(|e| BackendError::setup(RTL.name, e))?;
    if let Some(vcd) = &setup.options.vcd {
        rtl.set_vcd(hwxdp_rtlsim::VcdRequest {
            path: vcd.path.clone(),
            packets: vcd.packets.clone(),
            clock_mhz: vcd.clock_mhz,
        })
        .map_err(|e| BackendError::setup(RTL.name, e))?;
    }
    Ok(Box::new(Ehdl {
        rtl,
        rings: crate::Rings::of(setup),
    }))
}

struct Ehdl {
    rtl: EhdlRtl,
    rings: crate::Rings,
}

impl Backend for Ehdl {
    fn name(&self) -> &'static str {
        RTL.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            whole_trace: true,
            redirects: true,
            waves: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let batch: Vec<PacketIn> = packets
            .iter()
            .map(|p| PacketIn {
                bytes: p.bytes.clone(),
                md: p.md,
                time_ns: p.time_ns,
            })
            .collect();
        let done = self
            .rtl
            .run_batch(&batch)
            .map_err(|e| BackendError::run(RTL.name, e))?;
        Ok(done
            .packets
            .into_iter()
            .map(|out| Ran {
                retval: out.verdict,
                output: out.bytes,
                redirect: out.redirect.map(|(map, key)| Redirect { map, key }),
                ..Ran::default()
            })
            .collect())
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        &mut self.rtl
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        let rtl = &mut self.rtl;
        let Ok(records) = crate::collect_records(self.rings.all(), |map| {
            Ok::<_, Infallible>(rtl.ringbuf_records(map))
        });
        Ok(records)
    }

    fn summary(&self) -> Summary {
        let (f, t) = (self.rtl.figures(), self.rtl.totals());
        let mut summary = Summary {
            packets_per_cycle: Some(t.packets_per_cycle()),
            ..Summary::default()
        }
        .with("data_width", "bits", self.rtl.pipeline().summary.data_width)
        .with("stages", "stages", f.stages as f64)
        .with("latency_cycles", "cycles latency", t.latency as f64)
        .with("cycles", "cycles", t.cycles as f64)
        .with("beats", "input beats", t.beats as f64)
        .with("stall_cycles", "stall cycles", t.stall_cycles as f64)
        .with("stall_checks", "stall checks", f.stall_checks as f64);
        if f.flush_checks > 0 {
            summary = summary
                .with("flushes", "flushes", t.flushes as f64)
                .with("flush_checks", "flush checks", f.flush_checks as f64)
                .with("elastic_boundary", "elastic boundary", f.elastic_boundary);
        }
        summary
            .with("hazard_distance", "hazard distance", f.hazard_distance)
            .with("hazard_stage", "hazard stage", f.hazard_stage)
            .with("state_flops", "state flip-flops", f.state_flops as f64)
            .with("frame_flops", "frame flip-flops", f.frame_flops as f64)
    }
}
