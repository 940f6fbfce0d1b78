//! eBPFlow in software: the loader's image for the engines' shared instruction memory ([`loader`]) and the cycle
//! model of the multi-engine NIC ([`nic`]): P ports of G engines, each engine the 5-stage pipeline of
//! `rtl/ebpflow/ebpflow_core.sv` ([`engine`]), one coprocessor behind a round-robin arbiter for helper calls and
//! map-value accesses, and the output crossbar to the TX queues and the host queue. What a packet does (verdict,
//! bytes, maps) is the reference machine's ([`hwxdp_xdp::Machine`]); this crate says when, and where it leaves.

pub mod decode;
pub mod engine;
pub mod jobs;
pub mod loader;
pub mod nic;

pub use loader::{load, Image, LoadError, MapEntry};
pub use nic::{Nic, NicConfig};
