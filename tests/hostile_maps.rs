//! Hostile `--maps` files (issue 30).

mod hostile_common;
