//! Trace generation.
