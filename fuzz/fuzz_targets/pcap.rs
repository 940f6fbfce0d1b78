//! Trace reading (pcap and pcapng) on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut total = 0usize;
    let _ = hwxdp_cli::trace::for_each_in("fuzz.pcap", data, |_, packet| {
        total += packet.len();
        Ok(())
    });
});
