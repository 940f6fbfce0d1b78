//! Workload of `hxdp_parse_drop`: the frames of `xdp1_drop` (every ethertype and tag depth, ARP, malformed frames);
//! ARP passes, everything else drops.

use super::{xdp1_drop, Example};
use crate::mix::random_frame;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "hxdp_parse_drop",
    aliases: &[],
    description: "hxdp_parse_drop: TCP, UDP, ICMP, ICMPv6 and IP-in-IP over IPv4 and IPv6 with 0 to 3 VLAN tags and \
                  other ethertypes (dropped), ARP (passed), malformed frames (dropped)",
    preload,
    program_slots: &[],
    core: xdp1_drop::core,
    filler: Some(random_frame),
    routes: None,
};

fn preload() -> Vec<Preload> {
    Vec::new()
}
