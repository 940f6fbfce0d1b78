//! Waveforms of both Verilator backends through their drivers: `HxdpRtl::set_vcd` and `EhdlRtl::set_vcd` write VCD
//! files a reader parses, with the clock's timescale (156.25 MHz: 6400 ps a cycle; 250 MHz: 4000 ps), time from `#0`,
//! the modules' signals, and their directory created; a range over two eHDL batches gives one waveform. Also: a model
//! the cache holds is never announced through `notify`.
//!
//! Builds the hXDP module at the parameters `hwxdp run --backend hxdp-rtl` uses on this machine (shared with the CLI's
//! tests through the tests' cache) and two small eHDL pipelines (with and without waveforms).

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use hwxdp_ebpf::Insn;
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::ehdl::{EhdlPaths, EhdlRtl, PacketIn};
use hwxdp_rtlsim::hxdp::{HxdpRtl, Params, RtlPaths};
use hwxdp_rtlsim::VcdRequest;
use hwxdp_xdp::{Config, Verdict, XdpBuff, XdpMd};

/// The cache every test of the workspace builds its models in.
fn cache() -> PathBuf {
    common::target_dir().join("rtlsim")
}

/// The CPUs the kernel may bring up, as `hwxdp` counts them (`/sys/devices/system/cpu/possible`, e.g. `0-1`), so that
/// the hXDP model here is the one the CLI's tests build.
fn possible_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    text.trim()
        .split(',')
        .filter_map(|part| part.rsplit('-').next()?.parse::<usize>().ok())
        .max()
        .map_or(1, |last| last + 1)
}

/// A one-program object of `text` (assembly), no maps.
fn object(text: &str) -> ObjectSpec {
    let insns: Vec<Insn> = hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    ObjectSpec {
        programs: vec![ProgramSpec::standalone("t", "xdp", insns)],
        maps: Vec::new(),
        license: "GPL".into(),
    }
}

/// Swaps the Ethernet addresses and sends the packet back: packet loads and stores, XDP_TX.
const MACSWAP: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto +10
    r5 = *(u32 *)(r2 + 0)
    r6 = *(u16 *)(r2 + 4)
    r7 = *(u32 *)(r2 + 6)
    r8 = *(u16 *)(r2 + 10)
    *(u32 *)(r2 + 0) = r7
    *(u16 *)(r2 + 4) = r8
    *(u32 *)(r2 + 6) = r5
    *(u16 *)(r2 + 10) = r6
    r0 = 3
    exit
    r0 = 1
    exit
";

/// A 64-byte frame whose bytes start at `seed`.
fn frame(seed: u8) -> Vec<u8> {
    (0..64).map(|i| seed.wrapping_add(i)).collect()
}

/// The frame `frame(seed)` as the program leaves it.
fn swapped(seed: u8) -> Vec<u8> {
    let mut f = frame(seed);
    let (dst, src) = f.split_at_mut(6);
    dst.swap_with_slice(&mut src[..6]);
    f
}

/// A fresh scratch directory; the waveforms go into a subdirectory that does not exist yet.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

static HXDP_NOTICES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn hxdp_notice(line: &str) {
    HXDP_NOTICES.lock().expect("notices").push(line.to_string());
}

#[test]
fn the_hxdp_module_records_the_chosen_packets_at_the_clock() {
    let spec = object(MACSWAP);
    let image = hwxdp_hxdp::compile_object(&spec, 0, &hwxdp_hxdp::Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .image;
    let config = Config {
        possible_cpus: possible_cpus(),
        ..Config::default()
    };
    let mut paths = RtlPaths::embedded(cache());
    // Built (or found) first, so that the backend below finds it cached and must not announce a build.
    paths
        .model(&Params::for_lanes(image.lanes).with_possible_cpus(config.possible_cpus))
        .unwrap_or_else(|e| panic!("{e}"));
    paths.notify = Some(hxdp_notice);
    let mut rtl =
        HxdpRtl::new(image, &spec, None, &config, &paths).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        *HXDP_NOTICES.lock().expect("notices"),
        Vec::<String>::new(),
        "a cached model is announced"
    );
    let dir = scratch("vcd-hxdp");
    let path = dir.join("waves/new/hxdp.vcd");
    rtl.set_vcd(VcdRequest {
        path: path.clone(),
        packets: 1..3,
        clock_mhz: 156.25,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        path.parent().expect("dir").is_dir(),
        "the directory is created"
    );
    for seed in 0..4u8 {
        let mut buff = XdpBuff::new(&frame(seed)).expect("frame");
        let verdict = rtl
            .run_packet(&mut buff, &XdpMd::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verdict, Verdict::Tx);
        assert_eq!(buff.data(), swapped(seed).as_slice());
    }
    rtl.finish().unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let vcd = common::parse_vcd(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    common::check_waves(&vcd, "1ps", 3200, &["s_valid_i", "m_valid_o", "m_last_o"]);
    // Two packets of a few dozen cycles each, and no more than the four run.
    let cycles = vcd.times.last().copied().unwrap_or(0) / 6400;
    assert!((20..2000).contains(&cycles), "{cycles} cycles recorded");
    let outputs = vcd
        .changes_of("m_last_o")
        .iter()
        .filter(|(t, v)| *t > 0 && *v == "1")
        .count();
    // (At #0 the full dump may show the last beat of packet 0 still on the port.)
    assert_eq!(outputs, 2, "two packets' last beats leave in the waveform");
}

static EHDL_NOTICES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn ehdl_notice(line: &str) {
    EHDL_NOTICES.lock().expect("notices").push(line.to_string());
}

#[test]
fn the_ehdl_pipeline_records_packets_over_batches_at_the_clock() {
    let spec = object(MACSWAP);
    let options = hwxdp_ehdl::Options::default();
    let mut paths = EhdlPaths {
        cache_dir: cache(),
        verilator: PathBuf::from("verilator"),
        notify: None,
    };
    let config = Config::default();
    let mut rtl =
        EhdlRtl::new(&spec, None, &config, &options, &paths).unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch("vcd-ehdl");
    let path = dir.join("waves/ehdl.vcd");
    let request = VcdRequest {
        path: path.clone(),
        packets: 2..5,
        clock_mhz: 250.0,
    };
    rtl.set_vcd(request.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    // Both models are in the cache now: a second backend announces neither.
    paths.notify = Some(ehdl_notice);
    let mut again =
        EhdlRtl::new(&spec, None, &config, &options, &paths).unwrap_or_else(|e| panic!("{e}"));
    again
        .set_vcd(VcdRequest {
            path: dir.join("unused.vcd"),
            ..request
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        *EHDL_NOTICES.lock().expect("notices"),
        Vec::<String>::new(),
        "a cached model is announced"
    );
    // Packets 0-2 in one batch, 3-6 in the next: the waveform holds 2 from the first and 3, 4 from the second.
    let batch = |seeds: std::ops::Range<u8>| -> Vec<PacketIn> {
        seeds
            .map(|s| PacketIn {
                bytes: frame(s),
                ..PacketIn::default()
            })
            .collect()
    };
    for seeds in [0..3u8, 3..7] {
        let out = rtl
            .run_batch(&batch(seeds.clone()))
            .unwrap_or_else(|e| panic!("{e}"));
        for (p, s) in out.packets.iter().zip(seeds) {
            assert_eq!((p.verdict, &p.bytes), (3, &swapped(s)));
        }
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let vcd = common::parse_vcd(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    common::check_waves(
        &vcd,
        "1ps",
        2000,
        &["s_axis_tvalid_i", "m_axis_tvalid_o", "m_axis_tlast_o"],
    );
    assert_eq!(
        text.matches("$enddefinitions").count(),
        1,
        "one header for both pieces"
    );
    let pieces = std::fs::read_dir(path.parent().expect("dir"))
        .expect("dir")
        .count();
    assert_eq!(pieces, 1, "the second piece was appended and removed");
    // The second piece starts half a period after the first one's last change.
    let restart = vcd.times.windows(2).filter(|w| w[1] - w[0] != 2000).count();
    assert!(restart <= 1, "{restart} gaps in the waveform's time");
    let cycles = vcd.times.last().copied().unwrap_or(0) / 4000;
    let latency = rtl.figures().latency as u64;
    assert!(
        cycles >= 2 + latency && cycles < 4 * (latency + 10),
        "{cycles} cycles recorded for a pipeline of latency {latency}"
    );
}
