//! Workload of `rxq_counter`: frames around the 60-byte minimum; queue and interface come from the run metadata.

use super::{cat, le32, malformed_set, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::random_frame;
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "rxq_counter",
    aliases: &[],
    description: "rxq_counter: frames of 14 to 1514 bytes around the 60-byte minimum (runts counted and dropped, \
                  the rest counted per queue and interface on top of a preloaded queue-0 counter), malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(random_frame),
    routes: None,
};

const FRAME_SIZES: [usize; 10] = [14, 15, 40, 59, 60, 61, 64, 128, 1000, 1514];

fn preload() -> Vec<Preload> {
    vec![Preload::new(
        "rxq_stats",
        le32(0),
        cat(&[&10u64.to_le_bytes(), &1000u64.to_le_bytes()]),
    )]
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out: Vec<Labeled> = FRAME_SIZES
        .iter()
        .map(|&size| labeled::other(&eth, 0x88b5, &rng.bytes(size - 14)))
        .collect();
    out.extend((0..10).map(|_| random_frame(rng)));
    out.extend(malformed_set(rng, [10, 0, 0, 1], [10, 0, 0, 2]));
    out
}
