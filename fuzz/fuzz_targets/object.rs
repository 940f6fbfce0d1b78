//! Object loading on arbitrary bytes; the corpus starts from the real example objects, which the fuzzer mutates.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(spec) = hwxdp_object::parse(data) {
        // Whatever parses must also prepare or be refused cleanly by the reference machine.
        for program in &spec.programs {
            let _ = hwxdp_xdp::Machine::new(&spec, Some(&program.name), &hwxdp_xdp::Config::default());
        }
    }
});
