//! Workload of `xdp2_macswap`: the same frames as `xdp1_drop` (same parser), all bounced with XDP_TX.

use super::{xdp1_drop, Example};
use crate::mix::random_frame;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "xdp2_macswap",
    aliases: &[],
    description: "xdp2_macswap: TCP, UDP, ICMP, ICMPv6 and IP-in-IP over IPv4 and IPv6 with 0, 1 and 2 VLAN tags, \
                  three tags, ARP and other ethertypes (MACs swapped, TX), IP headers cut short (TX, protocol 0), \
                  tags cut short (drop), malformed frames",
    preload,
    program_slots: &[],
    core: xdp1_drop::core,
    filler: Some(random_frame),
    routes: None,
};

fn preload() -> Vec<Preload> {
    Vec::new()
}
