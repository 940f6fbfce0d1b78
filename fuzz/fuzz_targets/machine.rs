//! The reference machine on random instruction streams, with random packets and maps, under an instruction budget.
//!
//! Input layout: byte 0 picks how many instructions (1-64), the next 8 per instruction are the instructions (lddw
//! takes 16), and the rest is the packet. Maps of each kind are there for `lddw rX, map` (pseudo source 1, map in
//! imm) to reach. The program must either be refused before running or run to a verdict: never a panic or a hang.
#![no_main]

use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Environment, Machine, XdpBuff, XdpMd};
use libfuzzer_sys::fuzz_target;

mod maps;

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let len = ((count as usize % 64) + 1) * 8;
    if rest.len() < len {
        return;
    }
    let (code, packet) = rest.split_at(len);
    let Ok(insns) = hwxdp_ebpf::decode(code) else {
        return;
    };
    let maps = maps::one_of_each();
    let program = ProgramSpec::standalone("fuzz", "xdp", insns);
    let spec = ObjectSpec {
        programs: vec![program],
        maps,
        license: "GPL".into(),
    };
    for environment in [Environment::Xdp, Environment::Conformance] {
        let config = Config {
            budget: 10_000,
            possible_cpus: 2,
            environment,
            ..Config::default()
        };
        let Ok(mut machine) = Machine::new(&spec, None, &config) else {
            continue;
        };
        match environment {
            Environment::Xdp => {
                if let Ok(mut buff) = XdpBuff::new(packet) {
                    for queue in 0..2 {
                        let md = XdpMd { ingress_ifindex: 1, rx_queue_index: queue };
                        let _ = machine.run_packet(&mut buff, &md);
                    }
                }
            }
            Environment::Conformance => {
                if let Ok(mut buff) = XdpBuff::memory(packet) {
                    let _ = machine.run_memory(&mut buff);
                }
            }
        }
    }
});
