//! The P4 front end on arbitrary text: preprocessor, lexer and parser, then the checker and C code generation
//! (both option sets) on whatever parses. Every outcome must be a program or a located diagnostic: no panic, no
//! stack overflow, no runaway allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(program) = hwxdp_p4::parse_str("fuzz.p4", text) else {
        return;
    };
    let _ = hwxdp_p4::pretty(&program);
    let Ok(checked) = hwxdp_p4::check(&program) else {
        return;
    };
    for options in [
        hwxdp_p4::codegen::Options::default(),
        hwxdp_p4::codegen::Options::baseline(),
    ] {
        let _ = hwxdp_p4::codegen::generate(&checked, &options);
    }
});
