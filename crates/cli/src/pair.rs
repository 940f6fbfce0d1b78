//! The kernel and the reference machine (and, with `--backend hxdp`, `hxdp-rtl` or `ehdl-rtl`, the hXDP core model,
//! the hXDP RTL or the eHDL pipeline) set up side by side on the same program, maps and interfaces: what `verify`
//! compares and `bench` times. The eHDL pipeline's `--maps` preload goes into its userspace view and reaches the
//! hardware through the host port when the trace starts.

use crate::common::{self, Loaded, ProgramArgs, TraceArgs};
use crate::under_test::{BackendArgs, Hardware, UnderTest};
use anyhow::{bail, Context, Result};
use hwxdp_kernel::{KernelProgram, Sandbox};
use hwxdp_maps::json::MapsFile;
use hwxdp_xdp::{Clock, Config, Machine};

/// `BPF_MAP_TYPE_DEVMAP` and `BPF_MAP_TYPE_DEVMAP_HASH`: their values name interfaces that must exist.
const DEVMAP_TYPES: [u32; 2] = [14, 25];

/// One program loaded in the kernel, in the reference machine and optionally on the hXDP core, with the same map
/// contents.
pub struct Pair {
    /// The network namespace the kernel runs packets in; dropping it leaves it.
    pub _sandbox: Sandbox,
    /// The kernel's copy.
    pub kernel: KernelProgram,
    /// The reference machine's copy.
    pub machine: Machine,
    /// The hardware backend's copy (`--backend hxdp`, `hxdp-rtl` or `ehdl-rtl`), configured like the reference machine.
    pub core: Option<Box<Hardware>>,
    /// The program's name.
    pub name: String,
}

impl Pair {
    /// Enters a private network namespace with the interfaces packets arrive on and routes point to, loads the
    /// program into the kernel, the reference machine and (`--backend hxdp`/`hxdp-rtl`) the hXDP backend, and
    /// preloads them all with the `--maps` file.
    pub fn setup(
        program: &ProgramArgs,
        trace: &TraceArgs,
        backend: &BackendArgs,
        loaded: &Loaded,
        clock: Clock,
    ) -> Result<Pair> {
        let preload = trace.maps.as_deref().map(common::load_maps).transpose()?;
        hwxdp_kernel::bpf_available().context(
            "the kernel cannot run BPF programs here, so there is nothing to verify against",
        )?;
        let object = program.object.display().to_string();

        let mut devices = vec![(trace.ifindex, trace.rx_queues)];
        if trace.ifindex == 1 && trace.rx_queues > 1 {
            bail!("ifindex 1 is the loopback device, which has one receive queue: give --ifindex N with --rx-queues");
        }
        if let Some(file) = &preload {
            devices.extend(
                devmap_targets(&loaded.spec, file)
                    .into_iter()
                    .map(|i| (i, 1)),
            );
        }
        let routes = common::load_routes(trace)?;
        devices.extend(
            crate::routes::interfaces(&routes)
                .into_iter()
                .map(|i| (i, 1)),
        );
        devices.sort();
        devices.dedup_by_key(|d| d.0);
        let sandbox =
            Sandbox::enter(&devices).context("cannot set up the interfaces packets arrive on")?;
        sandbox
            .install_routes(&routes)
            .context("cannot install the route table")?;

        let possible_cpus = hwxdp_kernel::possible_cpus()?;
        let config = Config {
            possible_cpus,
            clock,
            routes,
            ..Config::default()
        };
        let mut machine = Machine::new(
            &loaded.spec,
            program.chosen(&loaded.spec).as_deref(),
            &config,
        )
        .context(object.clone())?;
        let mut core = backend.core(program, &loaded.spec, &config)?.map(Box::new);
        let name = machine.entry().name.clone();
        let mut kernel =
            KernelProgram::load(&loaded.elf, &loaded.spec, &name).context(object.clone())?;
        if let Some(file) = &preload {
            let path = trace
                .maps
                .as_deref()
                .unwrap_or_else(|| std::path::Path::new("maps"));
            hwxdp_maps::json::preload(&mut kernel, file)
                .with_context(|| format!("{} (kernel)", path.display()))?;
            hwxdp_maps::json::preload(machine.maps_mut(), file)
                .with_context(|| path.display().to_string())?;
            if let Some(core) = core.as_mut() {
                let side = core.name();
                hwxdp_maps::json::preload(core.maps(), file)
                    .with_context(|| format!("{} ({side})", path.display()))?;
            }
        }
        Ok(Pair {
            _sandbox: sandbox,
            kernel,
            machine,
            core,
            name,
        })
    }
}

/// Interfaces named by the values preloaded into device maps: they must exist for the kernel to accept the entries.
fn devmap_targets(spec: &hwxdp_object::ObjectSpec, file: &MapsFile) -> Vec<u32> {
    let mut targets = Vec::new();
    for (m, map) in spec.maps.iter().enumerate() {
        if !DEVMAP_TYPES.contains(&map.map_type) {
            continue;
        }
        for value in file.values_of(&spec.maps[m].name) {
            if let Some(b) = value.get(..4) {
                let ifindex = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if ifindex > 1 {
                    targets.push(ifindex);
                }
            }
        }
    }
    targets
}
