//! Workload of `hxdp_macswap_tx`: the frames of `xdp1_drop` (every ethertype and tag depth, ARP, malformed frames),
//! all bounced with their MAC addresses swapped.

use super::{xdp1_drop, Example};
use crate::mix::random_frame;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "hxdp_macswap_tx",
    aliases: &[],
    description: "hxdp_macswap_tx: TCP, UDP, ICMP, ICMPv6 and IP-in-IP over IPv4 and IPv6 with 0 to 3 VLAN tags, ARP, \
                  other ethertypes and malformed frames, all sent back (XDP_TX) with source and destination MACs \
                  swapped",
    preload,
    program_slots: &[],
    core: xdp1_drop::core,
    filler: Some(random_frame),
    routes: None,
};

fn preload() -> Vec<Preload> {
    Vec::new()
}
