//! The `--maps` JSON reader and preloading on arbitrary text, against one map of every kind the examples use.
#![no_main]

use hwxdp_object::MapSpec;
use libfuzzer_sys::fuzz_target;

fn spec(name: &str, map_type: u32, key_size: u32, value_size: u32, max_entries: u32, map_flags: u32) -> MapSpec {
    MapSpec::new(name, map_type, key_size, value_size, max_entries).with_flags(map_flags)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = hwxdp_maps::json::parse(text) else {
        return;
    };
    let specs = [
        spec("a", 2, 4, 8, 4, 0),
        spec("h", 1, 4, 4, 8, 0),
        spec("p", 6, 4, 8, 4, 0),
        spec("l", 9, 8, 8, 4, 0),
        spec("t", 11, 8, 4, 8, 1),
        spec("d", 14, 4, 4, 4, 0),
        spec("j", 3, 4, 4, 4, 0),
    ];
    let mut maps = hwxdp_maps::Maps::new(&specs, 2).expect("valid specs");
    if hwxdp_maps::json::preload(&mut maps, &file).is_ok() {
        let _ = hwxdp_maps::json::dump(&mut maps);
    }
});
