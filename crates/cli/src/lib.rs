//! The parts of the `hwxdp` command line that other programs (the fuzz targets, the test suites) use too: reading
//! traces and route tables, running STF scripts.

pub mod routes;
pub mod stf_run;
pub mod trace;
