//! The `--maps` JSON reader and preloading on arbitrary text, against one map of every kind the examples use.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod maps;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = hwxdp_maps::json::parse(text) else {
        return;
    };
    let specs = maps::one_of_each();
    let mut maps = hwxdp_maps::Maps::new(&specs, 2).expect("valid specs");
    if hwxdp_maps::json::preload(&mut maps, &file).is_ok() {
        let _ = hwxdp_maps::json::dump(&mut maps);
    }
});
