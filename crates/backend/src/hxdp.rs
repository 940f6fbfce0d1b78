//! `hxdp` and `hxdp-rtl`: the program compiled by the hXDP compiler, run on the Sephirot core's cycle model or on
//! the hXDP module's RTL under Verilator. Both report cycles per packet; neither can map its bundles back to eBPF
//! instructions, so neither offers an instruction trace or coverage.

use crate::interp::{empty_buff, load};
use crate::registry::Entry;
use crate::{
    Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Summary, Timing,
};
use hwxdp_hxdp::{HxdpCore, Image, Options};
use hwxdp_maps::MapStore;
use hwxdp_rtlsim::hxdp::{HxdpRtl, RtlPaths, VcdRequest};
use hwxdp_xdp::XdpBuff;

/// The registry's line for the cycle model.
pub const MODEL: Entry = Entry {
    name: "hxdp",
    about: "the hXDP compiler's VLIW image on the Sephirot core's cycle model",
    options: &["--lanes", "--disable"],
    needs_kernel: false,
    whole_trace: false,
    create: create_model,
};

/// The registry's line for the RTL.
pub const RTL: Entry = Entry {
    name: "hxdp-rtl",
    about: "the hXDP compiler's VLIW image on the hXDP module's RTL, simulated with Verilator",
    options: &["--lanes", "--disable", "--vcd", "--vcd-packets"],
    needs_kernel: false,
    whole_trace: false,
    create: create_rtl,
};

/// The image, and the chosen program's own figures in it (the image holds every program a tail call may reach).
struct Built {
    image: Image,
    bundles: usize,
    static_ipc: f64,
}

fn compile(setup: &Setup, backend: &'static str) -> Result<Built, BackendError> {
    let options = Options::with_disabled(setup.options.lanes, &setup.options.disable)
        .map_err(|e| BackendError::setup(backend, e))?;
    let compiled = hwxdp_hxdp::compile_object(setup.spec, setup.entry(), &options)
        .map_err(|e| BackendError::setup(backend, e))?;
    let report = compiled.reports.iter().find(|r| r.name == setup.program);
    Ok(Built {
        bundles: report.map_or(0, |r| r.bundles),
        static_ipc: report.map_or(0.0, |r| r.static_ipc()),
        image: compiled.image,
    })
}

fn create_model(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let built = compile(setup, MODEL.name)?;
    let mut core = HxdpCore::new(built.image, setup.spec, Some(setup.program), setup.config)
        .map_err(|e| BackendError::setup(MODEL.name, e))?;
    // Its perf event arrays are drained after every packet or after the trace, as its ring buffers (as interp).
    core.read_perf_samples();
    Ok(Box::new(Hxdp {
        core,
        rings: crate::Rings::of(setup),
        lanes: setup.options.lanes,
        bundles: built.bundles,
        static_ipc: built.static_ipc,
        buff: empty_buff(),
    }))
}

fn create_rtl(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let built = compile(setup, RTL.name)?;
    refuse_perf_output(&built.image)?;
    let mut paths = RtlPaths::from_env();
    paths.notify = setup.notify;
    let mut rtl = HxdpRtl::new(
        built.image,
        setup.spec,
        Some(setup.program),
        setup.config,
        &paths,
    )
    .map_err(|e| BackendError::setup(RTL.name, e))?;
    if let Some(vcd) = &setup.options.vcd {
        rtl.set_vcd(VcdRequest {
            path: vcd.path.clone(),
            packets: vcd.packets.clone(),
            clock_mhz: vcd.clock_mhz,
        })
        .map_err(|e| BackendError::setup(RTL.name, e))?;
    }
    Ok(Box::new(Hxdp {
        core: rtl,
        rings: crate::Rings::of(setup),
        lanes: setup.options.lanes,
        bundles: built.bundles,
        static_ipc: built.static_ipc,
        buff: empty_buff(),
    }))
}

/// Helper id of `bpf_perf_event_output`.
const PERF_EVENT_OUTPUT: i64 = 25;

/// Refuses an image that calls `bpf_perf_event_output`: the hXDP module's helper module has no perf event ring (the
/// cycle model's helpers are the reference machine's, so `--backend hxdp` runs it), and a fault in every packet that
/// writes a sample would look like the program's own.
fn refuse_perf_output(image: &Image) -> Result<(), BackendError> {
    let calls = image
        .bundles
        .iter()
        .flat_map(|b| b.ops())
        .any(|(_, op)| op.is_helper_call() && op.imm == PERF_EVENT_OUTPUT);
    if calls {
        return Err(BackendError::setup(
            RTL.name,
            "the program calls bpf_perf_event_output (helper 25), which the hXDP module's helper module does not \
             implement (it has no perf event ring); --backend hxdp runs it"
                .to_string(),
        ));
    }
    Ok(())
}

/// What the two hXDP machines have in common.
trait Core {
    const NAME: &'static str;
    const CAPABILITIES: Capabilities;
    fn run_one(&mut self, buff: &mut XdpBuff, packet: &Packet) -> Result<u32, BackendError>;
    fn fault(&self) -> Option<String>;
    fn cycles(&self) -> u64;
    fn redirect(&self) -> Option<(Option<usize>, u64)>;
    fn printk(&mut self) -> Vec<String>;
    /// The records of ring buffers `rings`, then the samples of perf event arrays `perf`, taken out.
    fn records(&mut self, rings: &[usize], perf: &[usize]) -> Result<Vec<Record>, BackendError>;
    fn maps(&mut self) -> &mut dyn MapStore;
    fn image(&self) -> &Image;
    fn finish(&mut self) -> Result<(), BackendError>;
}

const HXDP_CAPABILITIES: Capabilities = Capabilities {
    instructions: false,
    insn_trace: false,
    coverage: false,
    cycles: true,
    waves: false,
    whole_trace: false,
    records_per_packet: true,
    redirects: true,
};

impl Core for HxdpCore {
    const NAME: &'static str = MODEL.name;
    const CAPABILITIES: Capabilities = HXDP_CAPABILITIES;

    fn run_one(&mut self, buff: &mut XdpBuff, packet: &Packet) -> Result<u32, BackendError> {
        self.set_time(packet.time_ns);
        Ok(self.run_packet(buff, &packet.md).retval())
    }

    fn fault(&self) -> Option<String> {
        self.last_fault().map(str::to_string)
    }

    fn cycles(&self) -> u64 {
        self.last_cycles()
    }

    fn redirect(&self) -> Option<(Option<usize>, u64)> {
        self.last_redirect()
    }

    fn printk(&mut self) -> Vec<String> {
        self.take_printk()
    }

    fn records(&mut self, rings: &[usize], perf: &[usize]) -> Result<Vec<Record>, BackendError> {
        let mut records = drain_core(self, rings);
        let Ok(samples) = crate::collect_samples(perf, |map| {
            Ok::<_, std::convert::Infallible>(self.perf_drain(map))
        });
        records.extend(samples);
        Ok(records)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.machine_mut().maps_mut()
    }

    fn image(&self) -> &Image {
        HxdpCore::image(self)
    }

    fn finish(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}

impl Core for HxdpRtl {
    const NAME: &'static str = RTL.name;
    const CAPABILITIES: Capabilities = Capabilities {
        waves: true,
        ..HXDP_CAPABILITIES
    };

    fn run_one(&mut self, buff: &mut XdpBuff, packet: &Packet) -> Result<u32, BackendError> {
        self.set_time(packet.time_ns);
        let verdict = self
            .run_packet(buff, &packet.md)
            .map_err(|e| BackendError::run(RTL.name, e))?;
        Ok(verdict.retval())
    }

    fn fault(&self) -> Option<String> {
        self.last_fault().map(str::to_string)
    }

    fn cycles(&self) -> u64 {
        self.last_cycles()
    }

    fn redirect(&self) -> Option<(Option<usize>, u64)> {
        self.last_redirect()
    }

    fn printk(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn records(&mut self, rings: &[usize], _perf: &[usize]) -> Result<Vec<Record>, BackendError> {
        // No perf event array reaches the module: `create_rtl` refuses a program that writes one.
        crate::collect_records(rings, |map| self.ringbuf_drain(map))
            .map_err(|e| BackendError::run(RTL.name, e))
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self
    }

    fn image(&self) -> &Image {
        HxdpRtl::image(self)
    }

    fn finish(&mut self) -> Result<(), BackendError> {
        HxdpRtl::finish(self).map_err(|e| BackendError::run(RTL.name, e))
    }
}

struct Hxdp<C> {
    core: C,
    rings: crate::Rings,
    lanes: usize,
    /// The chosen program's bundles and eBPF instructions per bundle.
    bundles: usize,
    static_ipc: f64,
    buff: XdpBuff,
}

impl<C: Core> Backend for Hxdp<C> {
    fn name(&self) -> &'static str {
        C::NAME
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            records_per_packet: self.rings.live(),
            ..C::CAPABILITIES
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(C::NAME, &mut self.buff, packet)?;
            let retval = self.core.run_one(&mut self.buff, packet)?;
            out.push(Ran {
                retval,
                output: self.buff.output().to_vec(),
                meta_len: self.buff.meta().len(),
                redirect: self.core.redirect().map(|(map, key)| Redirect { map, key }),
                records: self
                    .core
                    .records(self.rings.per_packet(), self.rings.perf_per_packet())?,
                fault: self.core.fault(),
                cycles: Some(self.core.cycles()),
                printk: self.core.printk(),
                ..Ran::default()
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.core.maps()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        self.core.records(self.rings.all(), self.rings.perf_all())
    }

    fn summary(&self) -> Summary {
        let image = self.core.image().bundles.len();
        let summary = Summary::default()
            .with("lanes", "lanes", self.lanes as f64)
            .with("bundles", "bundles", self.bundles as f64)
            .with(
                "static_ipc",
                "eBPF instructions per bundle",
                self.static_ipc,
            );
        if image == self.bundles {
            summary
        } else {
            summary.with("image_bundles", "bundles in the image", image as f64)
        }
    }

    fn finish(&mut self) -> Result<(), BackendError> {
        self.core.finish()
    }

    fn time(&mut self, packets: &[Packet], timing: &Timing) -> Result<f64, BackendError> {
        let (core, buff) = (&mut self.core, &mut self.buff);
        crate::repeat_until(timing.min, packets.len(), || {
            for packet in packets {
                load(C::NAME, buff, packet)?;
                core.run_one(buff, packet)?;
            }
            Ok(())
        })
    }
}

/// The records waiting in `rings` of the core's maps, taken out without invalidating its hash buckets.
pub(crate) fn drain_core(core: &mut HxdpCore, rings: &[usize]) -> Vec<Record> {
    let Ok(records) = crate::collect_records(rings, |map| {
        Ok::<_, std::convert::Infallible>(core.ringbuf_drain(map))
    });
    records
}
