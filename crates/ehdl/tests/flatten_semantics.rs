//! Flattening (inlining and unrolling) keeps a program's meaning: the reference machine gives the original and the
//! flattened program the same verdicts and packet bytes, on hand-written loops and on every example.

mod common;

use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};

/// Packets that reach different parts of the examples: IPv4 UDP/TCP/ICMP, IPv6, ARP, VLAN, a bare Ethernet header.
fn packets() -> Vec<Vec<u8>> {
    let eth = |ethertype: [u8; 2]| {
        let mut p = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
        p.extend_from_slice(&ethertype);
        p
    };
    let ipv4 = |proto: u8, payload: &[u8]| {
        let mut p = eth([0x08, 0x00]);
        let total = (20 + payload.len()) as u16;
        p.extend_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            1,
            0,
            0,
            64,
            proto,
            0,
            0,
        ]);
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        p.extend_from_slice(payload);
        p
    };
    let mut udp = vec![0x30, 0x39, 0x00, 0x35, 0, 28, 0, 0];
    udp.extend_from_slice(&[0xab; 20]);
    let mut tcp = vec![
        0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
    ];
    tcp.extend_from_slice(&[0xcd; 16]);
    let icmp = vec![8, 0, 0, 0, 0, 1, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8];
    let mut ipv6 = eth([0x86, 0xdd]);
    ipv6.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 17, 64]);
    ipv6.extend_from_slice(&[0x20; 32]);
    ipv6.extend_from_slice(&[0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0]);
    let mut arp = eth([0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[0x11; 20]);
    let mut vlan = vec![
        0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x81, 0x00, 0x00, 0x0a,
    ];
    vlan.extend_from_slice(&ipv4(17, &udp)[12..]);
    vec![
        ipv4(17, &udp),
        ipv4(6, &tcp),
        ipv4(1, &icmp),
        ipv6,
        arp,
        vlan,
        vec![0xff; 14],
    ]
}

/// Runs `program` of `object` on every packet: (retval, packet bytes) per packet.
fn run(object: &ObjectSpec, program: &str) -> Vec<(u32, Vec<u8>)> {
    packets()
        .iter()
        .map(|p| {
            let mut machine =
                Machine::new(object, Some(program), &Config::default()).expect("program loads");
            let mut buff = XdpBuff::new(p).expect("packet fits");
            let out = machine.run_packet(&mut buff, &XdpMd::default());
            (out.retval, buff.data().to_vec())
        })
        .collect()
}

/// The object with `program` replaced by its flattened form.
fn flattened(object: &ObjectSpec, program: &ProgramSpec) -> ObjectSpec {
    let flat = hwxdp_ehdl::flatten(program, &object.maps, 16384).expect("flattens");
    let mut out = object.clone();
    for p in &mut out.programs {
        if p.name == program.name {
            *p = flat.spec.clone();
        }
    }
    out
}

fn same_behaviour(object: &ObjectSpec) {
    for program in &object.programs {
        let want = run(object, &program.name);
        let got = run(&flattened(object, program), &program.name);
        assert_eq!(
            want, got,
            "{}: flattening changed the outcome",
            program.name
        );
    }
}

#[test]
fn unrolled_loops_compute_what_the_loops_did() {
    for text in [
        // Count up, test at the bottom.
        "r0 = 0\nr1 = 0\ntop: r0 += 3\nr1 += 1\nif r1 < 4 goto top\nexit",
        // Count down by two.
        "r0 = 1\nr2 = 10\ntop: r0 <<= 1\nr2 -= 2\nif r2 != 0 goto top\nexit",
        // Test at the top (a while loop), data-dependent body.
        "r6 = *(u32 *)(r1 + 0)\nr7 = *(u32 *)(r1 + 4)\nr0 = 0\nr1 = 0\n\
         top: if r1 >= 6 goto out\nr2 = r6\nr2 += r1\nr3 = r2\nr3 += 1\nif r3 > r7 goto out\n\
         r4 = *(u8 *)(r2 + 0)\nr0 += r4\nr1 += 1\ngoto top\nout: exit",
        // Nested: 3 x 2 iterations.
        "r0 = 0\nr1 = 0\nouter: r2 = 0\ninner: r0 += 1\nr2 += 1\nif r2 < 2 goto inner\n\
         r1 += 1\nif r1 < 3 goto outer\nexit",
        // A call inlined.
        "r1 = 5\ncall double\nexit\ndouble: r0 = r1\nr0 += r1\nexit",
        // The test compares a copy of the counter: 64-bit, 32-bit (zero-extending), zero-extended by shifts, made
        // before the step.
        "r0 = 0\nr9 = 0\ntop: r0 += 3\nr9 += 1\nr1 = r9\nif r1 < 4 goto top\nexit",
        "r0 = 0\nr9 = -2\ntop: r0 += 3\nr9 += 1\nw1 = w9\nif w1 < 4 goto top\nexit",
        "r0 = 0\nr9 = 0\ntop: r0 += 3\nr9 += 1\nr1 = r9\nr1 <<= 32\nr1 >>= 32\nif r1 != 5 goto top\nexit",
        "r0 = 0\nr9 = 0\ntop: r1 = r9\nr0 += 3\nr9 += 1\nif r1 < 4 goto top\nexit",
        // A register constant at the loop's entry on either side of the test.
        "r0 = 0\nr9 = 0\nr2 = 5\ntop: r0 += 3\nr9 += 1\nif r9 < r2 goto top\nexit",
        "r0 = 0\nr9 = 0\nr2 = 4\ntop: r0 += 3\nr1 = r9\nr9 += 1\nif r2 > r1 goto top\nexit",
    ] {
        let insns = hwxdp_ebpf::assemble(text).expect("assembles");
        let object = ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns));
        same_behaviour(&object);
        hwxdp_ehdl::compile(&object.programs[0], &[], &hwxdp_ehdl::Options::default())
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let flat = hwxdp_ehdl::flatten(&object.programs[0], &[], 16384).expect("flattens");
        assert!(
            flat.spec.insns.iter().all(|i| hwxdp_ebpf::kind(i)
                .ok()
                .and_then(|k| k.jump_offset())
                .is_none_or(|o| o >= 0)),
            "a backward jump is left in {text}"
        );
    }
    let nested = hwxdp_ebpf::assemble(
        "r0 = 0\nr1 = 0\nouter: r2 = 0\ninner: r0 += 1\nr2 += 1\nif r2 < 2 goto inner\n\
         r1 += 1\nif r1 < 3 goto outer\nexit",
    )
    .expect("assembles");
    let flat = hwxdp_ehdl::flatten(&ProgramSpec::standalone("t", "xdp", nested), &[], 16384)
        .expect("flattens");
    let trips: Vec<u64> = flat.loops.iter().map(|l| l.trips).collect();
    assert_eq!(trips, vec![2, 3], "inner loop first");
    // The trip counts through copies and swapped operands, and the register each loop was bounded by.
    for (text, trips) in [
        (
            "r0 = 0\nr9 = -2\ntop: r0 += 3\nr9 += 1\nw1 = w9\nif w1 s< 4 goto top\nexit",
            6,
        ),
        (
            "r0 = 0\nr9 = 0\ntop: r1 = r9\nr0 += 3\nr9 += 1\nif r1 < 4 goto top\nexit",
            5,
        ),
        (
            "r0 = 0\nr9 = 0\nr2 = 4\ntop: r0 += 3\nr9 += 1\nif r2 > r9 goto top\nexit",
            4,
        ),
    ] {
        let insns = hwxdp_ebpf::assemble(text).expect("assembles");
        let flat = hwxdp_ehdl::flatten(&ProgramSpec::standalone("t", "xdp", insns), &[], 16384)
            .expect("flattens");
        let got: Vec<(u8, u64)> = flat.loops.iter().map(|l| (l.induction, l.trips)).collect();
        assert_eq!(got, vec![(9, trips)], "{text}");
    }
}

#[test]
fn flattened_examples_behave_like_the_originals() {
    let objects = common::example_objects();
    for path in objects {
        let bytes = std::fs::read(&path).expect("readable");
        let object = hwxdp_object::parse(&bytes).expect("parses");
        same_behaviour(&object);
    }
}
