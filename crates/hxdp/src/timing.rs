//! The cycle costs of the Sephirot model, each with its reasoning (section 4 of the hXDP paper).

/// Cycles from the packet's arrival until the first bundle is fetched: the APS presents the first 32-byte frame
/// and raises the start signal (early processor start: the core does not wait for the whole packet).
pub const START_CYCLES: u64 = 1;
/// Bytes the input queue moves into the APS per cycle (one frame).
pub const FRAME_BYTES: usize = 32;
/// Cycles per issued bundle: the pipeline fetches one VLIW row per cycle.
pub const BUNDLE_CYCLES: u64 = 1;
/// Stages after fetch (decode, execute, commit) that drain when a program ends with work in its last bundle.
pub const DRAIN_CYCLES: u64 = 3;
/// Cycles lost on a taken branch, call or return: the target is known in execute, so the two rows fetched
/// behind the branch are squashed.
pub const TAKEN_BRANCH_CYCLES: u64 = 2;
/// Stall when a bundle reads a register the previous bundle wrote on another lane: forwarding is per lane, so the
/// value comes from the register file one cycle later.
pub const CROSS_LANE_STALL_CYCLES: u64 = 1;
/// Extra cycles of a map helper (lookup, update, delete): hash of a key of up to 32 bytes, then one access of the
/// wide maps memory.
pub const MAP_HELPER_CYCLES: u64 = 2;
/// Extra cycles of any other helper: the helper module answers on the helper bus in the next cycle.
pub const HELPER_CYCLES: u64 = 1;
/// Helper ids of the map helpers.
pub const MAP_HELPERS: [i32; 3] = [1, 2, 3];
/// Bundles one packet may execute before the model stops it (a verified program stays far below).
pub const BUNDLE_BUDGET: u64 = 1 << 22;
/// Clock of the paper's prototype (NetFPGA SUME), in MHz.
pub const CLOCK_PAPER_MHZ: f64 = 156.25;
/// Clock of a 100G Corundum datapath, in MHz.
pub const CLOCK_FAST_MHZ: f64 = 250.0;

/// Extra cycles of helper `id`.
pub fn helper_cycles(id: i32) -> u64 {
    if MAP_HELPERS.contains(&id) {
        MAP_HELPER_CYCLES
    } else {
        HELPER_CYCLES
    }
}

/// Million packets per second at `mhz` for a mean of `cycles` per packet.
pub fn mpps(mhz: f64, cycles: f64) -> f64 {
    if cycles <= 0.0 {
        0.0
    } else {
        mhz / cycles
    }
}
