//! One module per example program of `examples/xdp/`, each with its coverage sequence, preloads and filler traffic.

mod ethertype_counter;
mod fib_forward;
mod firewall;
mod hxdp_firewall;
mod hxdp_macswap_tx;
mod hxdp_parse_drop;
mod icmp_reply;
mod katran_lb;
mod l2_acl;
mod nat;
mod rate_limiter;
mod redirect_fwd;
mod router;
mod rxq_counter;
mod tail_dispatch;
mod tunnel;
mod vlan_filter;
mod xdp1_drop;
mod xdp2_macswap;

#[cfg(test)]
mod tests;

use crate::labeled::Labeled;
use crate::malformed;
use crate::mix;
use crate::packet::{Eth, Mac};
use crate::rng::Rng;
use crate::Preload;

/// How to generate the trace of one example program.
pub(crate) struct Example {
    /// Function name of the program.
    pub name: &'static str,
    /// Other programs of the same object that get this workload.
    pub aliases: &'static [&'static str],
    /// What the trace exercises.
    pub description: &'static str,
    /// Map entries to load first.
    pub preload: fn() -> Vec<Preload>,
    /// PROG_ARRAY entries to load first, as (map, key, program name); the value is the program's index in the object.
    pub program_slots: &'static [(&'static str, u32, &'static str)],
    /// The coverage sequence: every path, in an order where state is created before it is used.
    pub core: fn(&mut Rng) -> Vec<Labeled>,
    /// Random traffic of the program's kind to pad the trace; `None` repeats core packets and the generic mix.
    pub filler: Option<fn(&mut Rng) -> Labeled>,
    /// The `--routes` table (JSON) `bpf_fib_lookup` needs for this trace, for the programs that call it.
    pub routes: Option<&'static str>,
}

/// Every example with a dedicated workload.
pub(crate) const ALL: &[Example] = &[
    l2_acl::EXAMPLE,
    ethertype_counter::EXAMPLE,
    firewall::EXAMPLE,
    router::EXAMPLE,
    tunnel::EXAMPLE,
    nat::EXAMPLE,
    vlan_filter::EXAMPLE,
    katran_lb::EXAMPLE,
    rate_limiter::EXAMPLE,
    icmp_reply::EXAMPLE,
    redirect_fwd::EXAMPLE,
    xdp1_drop::EXAMPLE,
    xdp2_macswap::EXAMPLE,
    rxq_counter::EXAMPLE,
    tail_dispatch::EXAMPLE,
    fib_forward::EXAMPLE,
    hxdp_firewall::EXAMPLE,
    hxdp_parse_drop::EXAMPLE,
    hxdp_macswap_tx::EXAMPLE,
];

/// The example whose program (or alias) is `name`.
pub(crate) fn find(name: &str) -> Option<&'static Example> {
    ALL.iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// The labeled trace of `packets` frames for `example`.
pub(crate) fn labeled(example: &Example, packets: usize, seed: u64) -> Vec<Labeled> {
    let mut rng = Rng::new(seed);
    let mut out = (example.core)(&mut rng);
    let core_len = out.len();
    while out.len() < packets {
        let next = match example.filler {
            Some(filler) if rng.chance(3, 4) => filler(&mut rng),
            _ if rng.chance(2, 3) && core_len > 0 => out[rng.below(core_len)].clone(),
            _ => mix::random_frame(&mut rng),
        };
        out.push(next);
    }
    out.truncate(packets);
    out
}

/// MAC of the device under test.
pub(crate) const DUT_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
/// MAC of the peer sending the trace.
pub(crate) const PEER_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];

/// The link layer of frames sent by the peer to the device under test.
pub(crate) fn to_dut() -> Eth {
    Eth::new(DUT_MAC, PEER_MAC)
}

/// The standard malformed set, sent from `src` to `dst`.
pub(crate) fn malformed_set(rng: &mut Rng, src: [u8; 4], dst: [u8; 4]) -> Vec<Labeled> {
    malformed::frames(rng, &to_dut(), src, dst)
}

/// Random payload of up to `max` bytes.
pub(crate) fn payload(rng: &mut Rng, max: usize) -> Vec<u8> {
    let len = rng.below(max + 1);
    rng.bytes(len)
}

/// Little-endian bytes of a host-order `u32` key or field.
pub(crate) fn le32(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// Concatenation of byte slices, for struct keys and values.
pub(crate) fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}
