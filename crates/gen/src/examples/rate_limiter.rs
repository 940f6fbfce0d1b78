//! Workload of `rate_limiter`: bursts beyond the bucket, refills of preloaded buckets, many new sources.

use super::{cat, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "rate_limiter",
    aliases: &[],
    description: "rate_limiter: a 20-packet burst from one source (bucket of 8 inserted, then exceeded: drops), \
                  bursts from preloaded buckets of windows that are never current (refill), single packets from 30 \
                  new sources, IPv6 and ARP (pass), malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const HEAVY: [u8; 4] = [203, 0, 113, 10];
const LIGHT: [u8; 4] = [203, 0, 113, 11];
const STALE_EMPTY: [u8; 4] = [203, 0, 113, 200];
const STALE_PARTIAL: [u8; 4] = [203, 0, 113, 201];

/// A bucket value: spin lock (zero), tokens, window.
fn bucket(tokens: u32, window: u64) -> Vec<u8> {
    cat(&[
        &0u32.to_le_bytes(),
        &tokens.to_le_bytes(),
        &window.to_le_bytes(),
    ])
}

fn preload() -> Vec<Preload> {
    vec![
        Preload::new("buckets", STALE_EMPTY.to_vec(), bucket(0, u64::MAX)),
        Preload::new("buckets", STALE_PARTIAL.to_vec(), bucket(3, u64::MAX - 1)),
    ]
}

fn from(rng: &mut Rng, src: [u8; 4]) -> Labeled {
    let ip = Ipv4::new(src, random_v4(rng, true));
    labeled::v4(&to_dut(), &ip, &random_l4(rng, false), &payload(rng, 100))
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    for _ in 0..20 {
        out.push(from(rng, HEAVY));
    }
    for _ in 0..3 {
        out.push(from(rng, LIGHT));
    }
    for _ in 0..12 {
        out.push(from(rng, STALE_EMPTY));
    }
    for _ in 0..2 {
        out.push(from(rng, STALE_PARTIAL));
    }
    for _ in 0..30 {
        let src = random_v4(rng, false);
        out.push(from(rng, src));
    }
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], [10, 0, 0, 2]));
    out.extend(malformed_set(rng, HEAVY, [10, 0, 0, 1]));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let src = match rng.below(4) {
        0 | 1 => HEAVY,
        2 => LIGHT,
        _ => random_v4(rng, false),
    };
    from(rng, src)
}
