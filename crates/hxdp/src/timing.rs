//! The cycle costs of the Sephirot model, each with its reasoning (section 4 of the hXDP paper).

/// Cycles from the packet's arrival until the first bundle is fetched: the APS presents the first 32-byte frame
/// and raises the start signal (early processor start: the core does not wait for the whole packet). Frame k (from 1)
/// is written in cycle `k - 1 + START_CYCLES` (the start cycle counting as `START_CYCLES`: the APS raises start with
/// the first frame's write) and readable from the next cycle on, as the packet buffer's reads see only frames stored
/// before their cycle (the APS's `pkt_ready_o` is 256 + 32 * frames written).
pub const START_CYCLES: u64 = 1;
/// Bytes the input queue moves into the APS per cycle (one frame).
pub const FRAME_BYTES: usize = 32;
/// Cycles per issued bundle: the pipeline fetches one VLIW row per cycle.
pub const BUNDLE_CYCLES: u64 = 1;
/// Stages after fetch (decode, execute, commit) that drain when a program ends with work in its last bundle.
pub const DRAIN_CYCLES: u64 = 3;
/// Cycles after its fetch in which an `exit K` alone in its bundle ends the packet: decode sees that nothing of the
/// bundle needs executing and ends the packet there, unless the previous bundle (in execute) stores to a map value,
/// whose fault only comes back from the bus in commit; then it drains like any exit.
pub const EARLY_EXIT_CYCLES: u64 = 1;
/// Cycles after the faulting bundle's fetch in which a fault (or a checked packet load's verdict) ends the packet:
/// ALU ops, loads, helpers, stores and jump conditions are settled in execute, two stages after fetch.
pub const FAULT_CYCLES: u64 = 2;
/// The same for a store to a map value that faults: the maps module answers the data bus in the next cycle, so the
/// fault is known in commit.
pub const BUS_STORE_FAULT_CYCLES: u64 = 3;
/// Cycles from a bundle's fetch to decode, where its data-bus loads (packet and map value) go out: a packet load may
/// be fetched one cycle before its last byte is stored.
pub const LOAD_ISSUE_CYCLES: u64 = 1;
/// Stall of a bundle whose data-bus loads read bytes the previous bundle stores, or that need more bus ports than the
/// previous bundle's data-bus stores leave free (one port per lane): stores go out in execute, loads in decode, so
/// the loads wait one cycle for the stores to be made and their ports to free up.
pub const BUS_HAZARD_CYCLES: u64 = 1;
/// Cycles from a helper bundle's fetch to its helper call: the helper bus is driven from execute. Virtual time
/// (`bpf_ktime_get_ns`) is the packet's arrival plus the cycle of the call (the core's `run_cycles_o` then).
pub const HELPER_CALL_STAGE_CYCLES: u64 = 2;
/// Cycles lost on a taken branch, call or return: the target is known in execute, so the two rows fetched
/// behind the branch are squashed.
pub const TAKEN_BRANCH_CYCLES: u64 = 2;
/// Stall when a bundle reads a register the previous bundle wrote on another lane: forwarding is per lane, so the
/// value comes from the register file one cycle later. (It overlaps [`BUS_HAZARD_CYCLES`]: both wait for the
/// previous bundle to leave execute.)
pub const CROSS_LANE_STALL_CYCLES: u64 = 1;
/// Cycles a bundle holding a division or modulo waits in execute for the core's shared divider (`divider.sv`, four
/// quotient bits per cycle): the cycle it starts in and 64 / 4 cycles of division. Everything else of the bundle
/// (its faults, helper call, stores and control) happens after the wait.
pub const DIV_CYCLES: u64 = 17;
/// Bundles one packet may execute before the model stops it (a verified program stays far below).
pub const BUNDLE_BUDGET: u64 = 1 << 22;
/// Clock of the paper's prototype (NetFPGA SUME), in MHz.
pub const CLOCK_PAPER_MHZ: f64 = 156.25;
/// Clock of a 100G Corundum datapath, in MHz.
pub const CLOCK_FAST_MHZ: f64 = 250.0;

mod buckets;
mod helpers;
pub use buckets::*;
pub use helpers::*;

/// Million packets per second at `mhz` for a mean of `cycles` per packet.
pub fn mpps(mhz: f64, cycles: f64) -> f64 {
    if cycles <= 0.0 {
        0.0
    } else {
        mhz / cycles
    }
}
