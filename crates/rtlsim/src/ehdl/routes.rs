//! The reference machine's route table ([`RouteTable`], `--routes`) as host-port writes of the generated module's
//! `bpf_fib_lookup` table (block [`FIB_BLOCK`], layout in `rtl/ehdl/ehdl_fib.sv` and docs/ehdl.md "Ports"): devices
//! at `0x0000 + 16 d`, routes at `0x1000 + 64 r`, neighbours at `0x2000 + 32 n`, each in the reference's list order
//! (which breaks ties), every slot written (empty ones with zeros) so a table written over an older one leaves
//! nothing of it.

use std::net::IpAddr;

use hwxdp_ehdl::verilog::{FIB_BLOCK, FIB_DEVICES, FIB_NEIGHBORS, FIB_ROUTES};
use hwxdp_xdp::fib::{RouteKind, RouteTable};

/// One host-port write of the route table: `(byte address, 8 data bytes little-endian, byte mask)`.
pub type FibWrite = (u32, u64, u8);

/// The host-port writes that load `table` into the block, or why it does not fit the block's
/// [`FIB_DEVICES`], [`FIB_ROUTES`] and [`FIB_NEIGHBORS`] entries. The block id to write them to is [`FIB_BLOCK`].
pub fn fib_table_writes(table: &RouteTable) -> Result<Vec<FibWrite>, String> {
    for (what, n, max) in [
        ("devices", table.devices.len(), FIB_DEVICES),
        ("routes", table.routes.len(), FIB_ROUTES),
        ("neighbours", table.neighbors.len(), FIB_NEIGHBORS),
    ] {
        if n > max {
            return Err(format!(
                "the route table has {n} {what}; the eHDL bpf_fib_lookup block holds {max}"
            ));
        }
    }
    let mut out = Vec::new();
    let mut entry = |base: u32, bytes: &[u8]| {
        for (j, c) in bytes.chunks(8).enumerate() {
            let data = c
                .iter()
                .enumerate()
                .fold(0u64, |v, (i, &b)| v | u64::from(b) << (8 * i));
            out.push((base + 8 * j as u32, data, 0xff));
        }
    };
    for (d, dev) in table.devices.iter().enumerate() {
        let mut e = [0u8; 16];
        e[0..4].copy_from_slice(&dev.ifindex.to_le_bytes());
        e[4..8].copy_from_slice(&dev.mtu.to_le_bytes());
        e[8..14].copy_from_slice(&dev.mac);
        e[14] = 1;
        entry(16 * d as u32, &e);
    }
    for d in table.devices.len()..FIB_DEVICES {
        entry(16 * d as u32, &[0; 16]);
    }
    for (r, route) in table.routes.iter().enumerate() {
        let mut e = [0u8; 64];
        let v6 = put_addr(&mut e[0..16], route.prefix);
        let (kind, ifindex, gateway) = match &route.kind {
            RouteKind::Unicast { ifindex, gateway } => (0u8, *ifindex, *gateway),
            RouteKind::Blackhole => (1, 0, None),
            RouteKind::Unreachable => (2, 0, None),
            RouteKind::Prohibit => (3, 0, None),
        };
        let mut flags = 1 | u8::from(v6) << 1;
        if let Some(gw) = gateway {
            flags |= 1 << 2 | u8::from(put_addr(&mut e[16..32], gw)) << 3;
        }
        e[32..36].copy_from_slice(&ifindex.to_le_bytes());
        e[36..40].copy_from_slice(&route.effective_metric().to_le_bytes());
        e[40] = route.len;
        e[41] = kind;
        e[42] = flags;
        entry(0x1000 + 64 * r as u32, &e);
    }
    for r in table.routes.len()..FIB_ROUTES {
        entry(0x1000 + 64 * r as u32, &[0; 64]);
    }
    for (n, neigh) in table.neighbors.iter().enumerate() {
        let mut e = [0u8; 32];
        let v6 = put_addr(&mut e[0..16], neigh.ip);
        e[16..20].copy_from_slice(&neigh.ifindex.to_le_bytes());
        e[20..26].copy_from_slice(&neigh.mac);
        e[26] = 1 | u8::from(v6) << 1;
        entry(0x2000 + 32 * n as u32, &e);
    }
    for n in table.neighbors.len()..FIB_NEIGHBORS {
        entry(0x2000 + 32 * n as u32, &[0; 32]);
    }
    Ok(out)
}

/// The block id of the route table on the host port, as the writes' `map`.
pub fn fib_block() -> u32 {
    u32::from(FIB_BLOCK)
}

/// `addr` in the struct's byte order at the start of `to`; whether it is IPv6.
fn put_addr(to: &mut [u8], addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => {
            to[..4].copy_from_slice(&a.octets());
            false
        }
        IpAddr::V6(a) => {
            to[..16].copy_from_slice(&a.octets());
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_xdp::fib::{Device, Route};

    #[test]
    fn entries_land_at_their_slots_in_list_order_and_oversized_tables_are_refused() {
        let table = RouteTable {
            devices: vec![Device {
                ifindex: 2,
                mac: [2, 0, 0, 0, 2, 2],
                mtu: 1500,
            }],
            routes: vec![Route {
                prefix: "2001:db8::".parse().expect("address"),
                len: 32,
                kind: RouteKind::Unicast {
                    ifindex: 2,
                    gateway: Some("10.0.0.1".parse().expect("address")),
                },
                metric: 0,
            }],
            neighbors: Vec::new(),
        };
        let w = fib_table_writes(&table).expect("fits");
        // Every slot is written, the empty ones with zeros (not valid).
        let r0 = 2 * FIB_DEVICES;
        assert_eq!(w.len(), r0 + 8 * FIB_ROUTES + 4 * FIB_NEIGHBORS);
        assert_eq!(w[0], (0, 2 | 1500 << 32, 0xff));
        assert_eq!(w[1], (8, 0x0202_0000_0002 | 1 << 48, 0xff));
        assert_eq!(w[2], (16, 0, 0xff));
        // Route 0, bytes 40..48: length 32, unicast, flags valid | IPv6 prefix | gateway (IPv4); metric 0 -> 1024.
        assert_eq!(w[r0 + 4], (0x1020, 2 | 1024 << 32, 0xff));
        assert_eq!(w[r0 + 5], (0x1028, 32 | 0b0111 << 16, 0xff));
        assert_eq!(w[r0 + 8], (0x1040, 0, 0xff));
        let big = RouteTable {
            routes: vec![table.routes[0].clone(); FIB_ROUTES + 1],
            ..RouteTable::default()
        };
        assert!(fib_table_writes(&big).is_err());
    }
}
