//! The machine a trace runs on, chosen with `--backend`: the reference machine or the hXDP core. `run`, `verify` and
//! `bench` share the flags; `verify` compares either with the kernel through [`UnderTest`].

use crate::common::ProgramArgs;
use anyhow::{Context, Result};
use hwxdp_hxdp::HxdpCore;
use hwxdp_maps::Maps;
use hwxdp_object::ObjectSpec;
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};

/// `--backend`, `--lanes` and `--disable`.
#[derive(clap::Args, Clone, Debug)]
pub struct BackendArgs {
    /// Backend: `interp` (the reference machine) or `hxdp` (the compiled image on the cycle model of the core).
    #[arg(long, default_value = "interp", value_parser = ["interp", "hxdp"])]
    pub backend: String,
    /// Lanes per bundle for `--backend hxdp`.
    #[arg(long, default_value_t = 4)]
    pub lanes: usize,
    /// Compiler passes to switch off for `--backend hxdp`.
    #[arg(long = "disable", value_delimiter = ',')]
    pub disable: Vec<String>,
}

impl BackendArgs {
    /// With `--backend hxdp`, the program compiled with `--lanes`/`--disable` and loaded on a core whose maps,
    /// helpers, clock and routes are configured by `config`, exactly as a reference machine would be; otherwise `None`.
    pub fn core(
        &self,
        program: &ProgramArgs,
        spec: &ObjectSpec,
        config: &Config,
    ) -> Result<Option<HxdpCore>> {
        if self.backend != "hxdp" {
            return Ok(None);
        }
        let options = crate::cmd_compile::options(self.lanes, &self.disable)?;
        let (compiled, _) = crate::cmd_compile::build(program, spec, &options)?;
        let core = HxdpCore::new(
            compiled.image,
            spec,
            program.chosen(spec).as_deref(),
            config,
        )
        .with_context(|| program.object.display().to_string())?;
        Ok(Some(core))
    }
}

/// What one packet did on the machine under test, as far as the kernel can be compared with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tested {
    /// The program's return value (0 when it was stopped).
    pub retval: u32,
    /// Why the program was stopped, if it was.
    pub fault: Option<String>,
}

/// The side `--backend` chose: the hXDP core when one was built, else the reference machine.
pub fn chosen<'a>(
    core: Option<&'a mut HxdpCore>,
    machine: &'a mut Machine,
) -> &'a mut dyn UnderTest {
    match core {
        Some(c) => c,
        None => machine,
    }
}

/// A machine whose packets and maps `verify` compares with the kernel's.
pub trait UnderTest {
    /// How output names this side: `hwxdp` for the reference machine, `hxdp` for the core.
    fn side(&self) -> &'static str;
    /// Runs one packet in `buff`, which holds the result afterwards.
    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Tested;
    /// The maps the program reads and writes.
    fn maps(&mut self) -> &mut Maps;
}

impl UnderTest for Machine {
    fn side(&self) -> &'static str {
        "hwxdp"
    }

    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Tested {
        let outcome = self.run_packet(buff, md);
        Tested {
            retval: outcome.retval,
            fault: outcome.fault.map(|f| f.to_string()),
        }
    }

    fn maps(&mut self) -> &mut Maps {
        self.maps_mut()
    }
}

impl UnderTest for HxdpCore {
    fn side(&self) -> &'static str {
        "hxdp"
    }

    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Tested {
        let verdict = self.run_packet(buff, md);
        Tested {
            retval: verdict.retval(),
            fault: self.last_fault().map(str::to_string),
        }
    }

    fn maps(&mut self) -> &mut Maps {
        self.machine_mut().maps_mut()
    }
}
