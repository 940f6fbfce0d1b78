//! The version the binaries print: the crate's version and the git revision they were built from (see `build.rs`).

/// `0.1.0 (rev 85b2a84)`, with `-dirty` after the hash when the checkout had changes, or `rev unknown` when the
/// binary was not built from a git checkout.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("HWXDP_GIT_REVISION"),
    ")"
);
