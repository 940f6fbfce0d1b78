//! The `struct xdp_md` fields a packet arrives with, which every machine takes beside the packet. The interface every
//! backend implements is `hwxdp_backend::Backend`.

/// The `struct xdp_md` fields a packet arrives with (data pointers come from the [`crate::XdpBuff`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpMd {
    /// `ingress_ifindex`: the interface the packet arrived on.
    pub ingress_ifindex: u32,
    /// `rx_queue_index`: the receive queue it arrived on.
    pub rx_queue_index: u32,
}
