//! Runs XDP programs in the running Linux kernel.
