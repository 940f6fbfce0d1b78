//! The parts of the `hwxdp` command line that other programs (the fuzz targets) use too: reading traces and route
//! tables.

pub mod routes;
pub mod trace;
