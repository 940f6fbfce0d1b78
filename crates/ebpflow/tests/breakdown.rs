//! Where the cycles of the network functions of `examples/ebpflow/` go on the cycle model: each run's cycles split
//! by [`Breakdown`] (the categories sum to the run), on the main path of each function (the frames of
//! `scripts/ebpflow-results.sh --nf`: 64-byte UDP or TCP frames on port 0 of a 2-port NIC), and the engine's busy
//! time around the run (result, output, hand-over). `cargo test -p hwxdp-ebpflow --test breakdown -- --nocapture`
//! prints the table of `docs/results.md`.

use hwxdp_ebpflow::engine::Breakdown;
use hwxdp_ebpflow::jobs::{job, Shape, Where};
use hwxdp_ebpflow::nic::{Dest, Input, Nic, NicConfig};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use std::path::PathBuf;

/// The object `make examples` builds for function `name`.
fn object(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../build/examples/ebpflow/{name}.o"));
    assert!(
        path.exists(),
        "{} is missing: run `make examples` (make test does)",
        path.display()
    );
    path
}

fn csum(bytes: &[u8]) -> u16 {
    let mut s: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A 64-byte IPv4 frame of protocol `proto` (6 TCP, 17 UDP) from `src` to `dst`, ports `sport` and `dport`.
fn frame(proto: u8, src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
    let l4len: usize = if proto == 17 { 8 } else { 20 };
    let room = 64 - 14 - 20 - l4len;
    let mut l4 = Vec::new();
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    if proto == 17 {
        l4.extend_from_slice(&((8 + room) as u16).to_be_bytes());
        l4.extend_from_slice(&[0, 0]);
    } else {
        l4.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    }
    l4.extend(std::iter::repeat_n(b'x', room));
    let mut ip = vec![
        0x45,
        0,
        0,
        (20 + l4.len()) as u8,
        0,
        1,
        0x40,
        0,
        64,
        proto,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0];
    f.extend(ip);
    f.extend(l4);
    f
}

/// The main path's frames of function `name`, packet `i` (as `scripts/ebpflow-results.sh` writes them).
fn frame_of(name: &str, i: usize) -> Vec<u8> {
    let b = (i & 0xff) as u8;
    match name {
        "lpm_forward" => {
            let routes = [
                [10, 1, 2, 3],
                [10, 200, 0, 1],
                [10, 70, 0, 1],
                [203, 0, 5, 5],
            ];
            frame(17, [192, 0, 2, b], routes[i % 4], 1000, 2000)
        }
        "ddos" => frame(
            17,
            [198, 51, (i % 256 / 16) as u8, (i % 16) as u8],
            [10, 0, 0, 1],
            40000,
            53,
        ),
        "stateful_firewall" => frame(
            6,
            [10, 0, b, 1],
            [203, 0, 113, 1],
            10000 + (i % 256) as u16,
            80,
        ),
        _ => frame(17, [10, 0, 0, 1], [10, 0, 0, 2], 1, 2),
    }
}

/// `lpm_forward.maps.json`'s routes and ports, as `hwxdp run --maps` loads them.
fn preload(name: &str, machine: &mut Machine) {
    if name != "lpm_forward" {
        return;
    }
    let maps = machine.maps_mut();
    let route = |plen: u32, addr: [u8; 4], port: u32| {
        let mut key = plen.to_le_bytes().to_vec();
        key.extend_from_slice(&addr);
        let mut value = vec![
            0x02, 0xbb, 0, 0, 0, port as u8, 0x02, 0xaa, 0, 0, 0, port as u8,
        ];
        value.extend_from_slice(&port.to_le_bytes());
        (key, value)
    };
    for (plen, addr, port) in [
        (8, [10, 0, 0, 0], 1),
        (9, [10, 128, 0, 0], 1),
        (10, [10, 64, 0, 0], 1),
        (17, [203, 0, 0, 0], 1),
    ] {
        let (key, value) = route(plen, addr, port);
        hwxdp_maps::MapStore::update(maps, 0, &key, &value, 0).expect("a route");
    }
    for p in 0..4u32 {
        hwxdp_maps::MapStore::update(maps, 1, &p.to_le_bytes(), &(p + 1).to_le_bytes(), 0)
            .expect("a port");
    }
}

/// Packets of function `name` timed on a 2-port NIC of `engines` engines a port, all on port 0: the summed
/// breakdown, the summed engine busy cycles (first beat to the hand-over), the packets, the port's cycles.
fn measure(name: &str, engines: usize, packets: usize) -> (Breakdown, u64, u64, u64) {
    let spec = hwxdp_object::load(&object(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let image = hwxdp_ebpflow::load(&spec, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let config = Config {
        record_trace: true,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, Some(name), &config).unwrap_or_else(|e| panic!("{e}"));
    preload(name, &mut machine);
    let slot_of = |p: u16, s: u32| image.slot_of(usize::from(p), s);
    let at = Where {
        slots: &image.slots,
        prologue: 0..image.prologue,
        slot_of: &slot_of,
    };
    let md = XdpMd {
        ingress_ifindex: 1,
        rx_queue_index: 0,
    };
    let mut inputs = Vec::new();
    for i in 0..packets {
        let bytes = frame_of(name, i);
        let mut buff = XdpBuff::new(&bytes).expect("a frame");
        let data0 = buff.offsets().1 as u64;
        let outcome = machine.run_packet(&mut buff, &md);
        assert!(outcome.fault.is_none(), "{name}: {:?}", outcome.fault);
        let job = job(&outcome, data0, &at, 0, Shape::DEFAULT).expect("a trace");
        inputs.push(Input {
            port: 0,
            len: bytes.len(),
            job,
            dest: Dest::Port(1),
        });
    }
    let mut nic = Nic::new(NicConfig {
        ports: 2,
        engines_per_port: engines,
    });
    let (timed, end) = nic.run(inputs);
    let mut sum = Breakdown::default();
    let mut busy = 0;
    for t in &timed {
        assert_eq!(
            t.breakdown.total(),
            t.cycles,
            "{name}: the categories sum to the run"
        );
        sum.add(&t.breakdown);
        busy += t.left + 1 - t.start;
    }
    let first = timed.iter().map(|t| t.start).min().unwrap_or(0);
    (sum, busy, packets as u64, end - first)
}

#[test]
fn the_network_functions_cycles_add_up_and_are_printed() {
    println!(
        "| function | run | issue | load-use | taken branch | lddw | drain | key gather | coprocessor wait | \
         coprocessor service | DM_FIFO wait | other | cycles a packet (1 engine) | port cycles a packet (4 engines) |"
    );
    println!(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for name in ["wire", "stateful_firewall", "lpm_forward", "ddos"] {
        // With the two-slot DM_FIFO the next run starts while a packet leaves: one engine's cycles a packet are the
        // span of the trace over its packets, no longer each packet's first beat to its last output beat.
        let (b, _, n, span1) = measure(name, 1, 2000);
        let (_, _, n4, span4) = measure(name, 4, 2000);
        let per = |c: u64| c as f64 / n as f64;
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | \
             {:.1} |",
            per(b.total()),
            per(b.issue),
            per(b.load_use),
            per(b.branch),
            per(b.lddw),
            per(b.drain),
            per(b.gather),
            per(b.coproc_wait),
            per(b.coproc_service),
            per(b.fifo),
            per(b.other),
            span1 as f64 / n as f64,
            span4 as f64 / n4 as f64
        );
        assert!(
            b.issue > 0 && span1 > b.total(),
            "{name}: a run issues, the engine's packets take at least their runs"
        );
    }
}
