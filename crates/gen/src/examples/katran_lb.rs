//! Workload of `katran_lb`: more flows than the connection table holds, repeats, a flow to an empty backend slot,
//! ICMP to the VIP, non-VIP traffic.

use super::{cat, le32, malformed_set, payload, to_dut, Example};
use crate::labeled::{self, Labeled};
use crate::mix::{random_l4, random_v4, random_v6};
use crate::packet::{Ipv4, Ipv6, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP, L4, TCP_ACK, TCP_SYN};
use crate::rng::Rng;
use crate::Preload;

pub(crate) const EXAMPLE: Example = Example {
    name: "katran_lb",
    aliases: &[],
    description: "katran_lb: 100 distinct TCP flows to a VIP (more than the 64-entry LRU connection table, so it \
                  evicts), repeated flows (connection hits), UDP flows to a second VIP including ones hashing to an \
                  empty backend slot (drop), ICMP echo to the VIP (reply, TX), non-VIP ports, addresses and \
                  protocols (pass), IPv6, ARP, malformed frames",
    preload,
    program_slots: &[],
    core,
    filler: Some(filler),
    routes: None,
};

const BACKENDS_PER_VIP: u32 = 4;
const VIP_TCP: [u8; 4] = [10, 100, 0, 1];
const VIP_UDP: [u8; 4] = [10, 100, 0, 2];
const TCP_PORT: u16 = 80;
const UDP_PORT: u16 = 53;
/// Backend slot left empty (address 0): the second slot of the UDP VIP.
const EMPTY_SLOT: u32 = BACKENDS_PER_VIP + 1;
/// Distinct flows in the coverage sequence, beyond the connection table's 64 entries.
const DISTINCT_FLOWS: usize = 100;

fn vip_key(addr: [u8; 4], port: u16, proto: u8) -> Vec<u8> {
    cat(&[&addr, &port.to_be_bytes(), &[proto, 0]])
}

fn preload() -> Vec<Preload> {
    let meta = |vip_num: u32| cat(&[&0u32.to_le_bytes(), &vip_num.to_le_bytes()]);
    let mut p = vec![
        Preload::new("vip_map", vip_key(VIP_TCP, TCP_PORT, IPPROTO_TCP), meta(0)),
        Preload::new("vip_map", vip_key(VIP_UDP, UDP_PORT, IPPROTO_UDP), meta(1)),
        Preload::new("vip_map", vip_key(VIP_TCP, 0, IPPROTO_ICMP), meta(0)),
    ];
    for slot in (0..2 * BACKENDS_PER_VIP).filter(|&s| s != EMPTY_SLOT) {
        let real = cat(&[&[192, 168, 1, 1 + slot as u8], &0u32.to_le_bytes()]);
        p.push(Preload::new("reals", le32(slot), real));
    }
    p
}

/// The backend slot `flow_slot` picks, computed on the fields as the program loads them (little-endian loads of
/// network-order bytes).
fn flow_slot(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, proto: u8) -> u32 {
    let sport = u32::from(u16::from_le_bytes(sport.to_be_bytes()));
    let dport = u32::from(u16::from_le_bytes(dport.to_be_bytes()));
    let mut h = u32::from_le_bytes(src)
        ^ u32::from_le_bytes(dst)
        ^ (sport | (dport << 16))
        ^ u32::from(proto);
    h = h.wrapping_mul(0x9e37_79b1);
    h ^= h >> 16;
    h % BACKENDS_PER_VIP
}

fn tcp_flow(rng: &mut Rng, src: [u8; 4], sport: u16) -> Labeled {
    let l4 = L4::Tcp {
        sport,
        dport: TCP_PORT,
        flags: if rng.chance(1, 4) { TCP_SYN } else { TCP_ACK },
    };
    labeled::v4(&to_dut(), &Ipv4::new(src, VIP_TCP), &l4, &payload(rng, 200))
}

fn udp_flow(rng: &mut Rng, src: [u8; 4], sport: u16) -> Labeled {
    labeled::v4(
        &to_dut(),
        &Ipv4::new(src, VIP_UDP),
        &L4::Udp {
            sport,
            dport: UDP_PORT,
        },
        &payload(rng, 100),
    )
}

fn core(rng: &mut Rng) -> Vec<Labeled> {
    let eth = to_dut();
    let mut out = Vec::new();
    let flows: Vec<([u8; 4], u16)> = (0..DISTINCT_FLOWS)
        .map(|i| (random_v4(rng, false), 10000 + i as u16))
        .collect();
    for &(src, sport) in &flows {
        out.push(tcp_flow(rng, src, sport));
    }
    for &(src, sport) in flows.iter().rev().take(10) {
        out.push(tcp_flow(rng, src, sport));
    }
    // UDP flows until both the empty slot and a populated one were hit at least twice.
    let (mut empty, mut full) = (0, 0);
    let mut sport = 20000u16;
    while (empty < 2 || full < 2) && sport < 21000 {
        let src = random_v4(rng, false);
        let slot = BACKENDS_PER_VIP + flow_slot(src, VIP_UDP, sport, UDP_PORT, IPPROTO_UDP);
        if slot == EMPTY_SLOT {
            empty += 1;
        } else {
            full += 1;
        }
        out.push(udp_flow(rng, src, sport));
        sport += 1;
    }
    let echo = L4::IcmpEcho {
        reply: false,
        id: 9,
        seq: 1,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], VIP_TCP),
        &echo,
        &payload(rng, 56),
    ));
    let reply = L4::IcmpEcho {
        reply: true,
        id: 9,
        seq: 1,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], VIP_TCP),
        &reply,
        &[],
    ));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], VIP_UDP),
        &echo,
        &[],
    ));
    let wrong_port = L4::Tcp {
        sport: 5555,
        dport: 443,
        flags: TCP_SYN,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], VIP_TCP),
        &wrong_port,
        &[],
    ));
    let tcp = L4::Tcp {
        sport: 5555,
        dport: TCP_PORT,
        flags: TCP_SYN,
    };
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], [10, 100, 0, 9]),
        &tcp,
        &[],
    ));
    out.push(labeled::v4(
        &eth,
        &Ipv4::new([203, 0, 113, 7], VIP_TCP),
        &L4::Raw(47),
        &[0; 8],
    ));
    let opts = Ipv4::new([203, 0, 113, 8], VIP_TCP).options(&[0x94, 0x04, 0, 0]);
    out.push(labeled::v4(&eth, &opts, &tcp, &[]));
    out.push(labeled::v6(
        &eth,
        &Ipv6::new(random_v6(rng), random_v6(rng)),
        &random_l4(rng, true),
        &[],
    ));
    out.push(labeled::arp_request(&eth, [10, 0, 0, 1], VIP_TCP));
    out.extend(malformed_set(rng, [203, 0, 113, 7], VIP_TCP));
    out
}

fn filler(rng: &mut Rng) -> Labeled {
    let src = random_v4(rng, false);
    let sport = rng.range(1024, 65535) as u16;
    match rng.below(5) {
        0..=2 => tcp_flow(rng, src, sport),
        3 => udp_flow(rng, src, sport),
        _ => {
            let echo = L4::IcmpEcho {
                reply: false,
                id: sport,
                seq: 1,
            };
            labeled::v4(
                &to_dut(),
                &Ipv4::new(src, VIP_TCP),
                &echo,
                &payload(rng, 56),
            )
        }
    }
}
