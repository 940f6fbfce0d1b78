//! The hXDP compiler on random valid programs, checked against the reference machine.
//!
//! Each 4 input bytes make one body instruction from a menu the verifier accepts: 64- and 32-bit ALU operations on
//! r0 and r5-r9 (immediate or register source; shift amounts in range), bounds-checked packet loads and stores
//! through r2 at offsets below 64, and forward conditional jumps that land inside the body or on the epilogue, so every
//! program ends. The prologue loads `data`/`data_end` into r2/r3, drops frames shorter than 64 bytes and zeroes the
//! registers the body uses; the epilogue masks r0 to a verdict. The rest of the input after the instructions is the
//! frame. A program the reference machine runs to an exit must compile and give the same verdict and packet bytes on
//! the hXDP core (4 lanes and 2 lanes).
#![no_main]

mod valid_program;

use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use libfuzzer_sys::fuzz_target;
use valid_program::{program, MIN_FRAME};

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let len = (count as usize % 48 + 1) * 4;
    if rest.len() < len + MIN_FRAME as usize {
        return;
    }
    let (code, frame) = rest.split_at(len);
    let frame = &frame[..frame.len().min(256)];
    let spec = ObjectSpec::single(ProgramSpec::standalone("fuzz", "xdp", program(code)));
    let config = Config {
        budget: 10_000,
        ..Config::default()
    };
    let Ok(mut machine) = Machine::new(&spec, None, &config) else {
        return;
    };
    let Ok(mut want) = XdpBuff::new(frame) else {
        return;
    };
    let reference = machine.run_packet(&mut want, &XdpMd::default());
    if reference.fault.is_some() {
        return;
    }
    for lanes in [4, 2] {
        let options = Options {
            lanes,
            ..Options::default()
        };
        let compiled = match compile_object(&spec, 0, &options) {
            Ok(c) => c,
            Err(e) => panic!("a program the reference machine runs does not compile at {lanes} lanes: {e}"),
        };
        let mut core = HxdpCore::new(compiled.image, &spec, None, &config).expect("the image loads");
        let mut got = XdpBuff::new(frame).expect("frame");
        let verdict = core.run_packet(&mut got, &XdpMd::default());
        assert_eq!(reference.retval, verdict.retval(), "{lanes} lanes: verdict");
        assert_eq!(want.data(), got.data(), "{lanes} lanes: packet bytes");
    }
});
