//! The STF test-script parser on arbitrary text: a script or an error naming its line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = hwxdp_p4::stf::parse("fuzz.stf", text);
});
