//! The DPI rules parser (our format and the Snort subset) on arbitrary text, then the automaton and the C
//! generation on what parses, under a small DFA limit so that a blow-up is refused rather than built.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if hwxdp_dpi::parse::parse_rules(text).is_err() {
        return;
    }
    let options = hwxdp_dpi::Options {
        dfa_limit: 1 << 20,
        ..hwxdp_dpi::Options::default()
    };
    let _ = hwxdp_dpi::compile(text, "fuzz.rules", &options);
});
