//! The one interface every way of running a program implements.

use crate::{Verdict, XdpBuff};
use hwxdp_maps::MapStore;
use thiserror::Error;

/// The `struct xdp_md` fields a packet arrives with (data pointers come from the [`XdpBuff`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpMd {
    /// `ingress_ifindex`: the interface the packet arrived on.
    pub ingress_ifindex: u32,
    /// `rx_queue_index`: the receive queue it arrived on.
    pub rx_queue_index: u32,
}

/// A backend could not run a packet at all (as opposed to the program aborting, which is a verdict).
#[derive(Debug, Error)]
pub enum BackendError {
    /// The backend refused the packet or the program.
    #[error("{backend}: {message}")]
    Failed {
        /// Which backend.
        backend: String,
        /// What went wrong.
        message: String,
    },
}

/// A way of running one XDP program over packets: the reference machine, the kernel, hardware models.
pub trait Backend {
    /// The name used on the command line (`interp`, `kernel`, `hxdp`, ...).
    fn name(&self) -> &str;
    /// Runs one packet. The packet buffer and maps are the backend's own; `maps()` exposes them.
    fn run(&mut self, pkt: &mut XdpBuff, md: &XdpMd) -> Result<Verdict, BackendError>;
    /// The maps the program uses, in [`hwxdp_object::ObjectSpec::maps`] order.
    fn maps(&mut self) -> &mut dyn MapStore;
    /// Cycles spent on the last packet, for hardware models; None for software.
    fn cycles(&self) -> Option<u64> {
        None
    }
}
