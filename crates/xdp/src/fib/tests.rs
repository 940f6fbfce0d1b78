//! The model against the kernel behaviours `hwxdp verify` showed, one test per behaviour.

use super::*;

fn table() -> RouteTable {
    RouteTable {
        devices: vec![Device {
            ifindex: 2,
            mac: [2, 0, 0, 0, 0, 2],
            mtu: 1500,
        }],
        routes: vec![
            Route {
                prefix: "10.0.0.0".parse().unwrap(),
                len: 8,
                kind: RouteKind::Unicast {
                    ifindex: 2,
                    gateway: Some("192.168.0.1".parse().unwrap()),
                },
                metric: 0,
            },
            Route {
                prefix: "10.1.0.0".parse().unwrap(),
                len: 16,
                kind: RouteKind::Blackhole,
                metric: 0,
            },
        ],
        neighbors: vec![Neighbor {
            ip: "192.168.0.1".parse().unwrap(),
            ifindex: 2,
            mac: [2, 0, 0, 0, 0, 0xaa],
        }],
    }
}

fn params(dst: [u8; 4]) -> [u8; PARAMS_SIZE] {
    let mut p = [0u8; PARAMS_SIZE];
    p[FAMILY] = AF_INET;
    p[IFINDEX..IFINDEX + 4].copy_from_slice(&2u32.to_le_bytes());
    p[TOT_LEN..TOT_LEN + 2].copy_from_slice(&100u16.to_le_bytes());
    p[DST..DST + 4].copy_from_slice(&dst);
    p
}

#[test]
fn longest_prefix_wins_and_gateway_mac_is_filled_in() {
    let t = table();
    let mut p = params([10, 2, 3, 4]);
    assert_eq!(t.lookup(&mut p, 0), ret::SUCCESS);
    assert_eq!(&p[DMAC..DMAC + 6], &[2, 0, 0, 0, 0, 0xaa]);
    assert_eq!(&p[SMAC..SMAC + 6], &[2, 0, 0, 0, 0, 2]);
    assert_eq!(&p[DST..DST + 4], &[192, 168, 0, 1]);
    let mut p = params([10, 1, 3, 4]);
    assert_eq!(t.lookup(&mut p, 0), ret::BLACKHOLE);
    let mut p = params([11, 1, 3, 4]);
    assert_eq!(t.lookup(&mut p, 0), ret::NOT_FWDED);
}

#[test]
fn mtu_and_device_checks() {
    let t = table();
    let mut p = params([10, 2, 3, 4]);
    p[TOT_LEN..TOT_LEN + 2].copy_from_slice(&1501u16.to_le_bytes());
    assert_eq!(t.lookup(&mut p, 0), ret::FRAG_NEEDED);
    assert_eq!(u16::from_le_bytes([p[TOT_LEN], p[TOT_LEN + 1]]), 1500);
    let mut p = params([10, 2, 3, 4]);
    p[IFINDEX..IFINDEX + 4].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(t.lookup(&mut p, 0), ENODEV);
    assert_eq!(check_call(63, 0), Some(EINVAL));
}

fn unicast(prefix: &str, len: u8, ifindex: u32, gateway: Option<&str>, metric: u32) -> Route {
    Route {
        prefix: prefix.parse().unwrap(),
        len,
        kind: RouteKind::Unicast {
            ifindex,
            gateway: gateway.map(|g| g.parse().unwrap()),
        },
        metric,
    }
}

/// Two devices (MTU 1500 and 1400), a /16 through 3 inside a /8 through 2, reject routes, IPv6 routes, a default route
/// and a route through the loopback device.
fn two_devices() -> RouteTable {
    let mut t = table();
    t.devices.push(Device {
        ifindex: 3,
        mac: [2, 0, 0, 0, 0, 3],
        mtu: 1400,
    });
    t.routes.extend([
        unicast("10.7.0.0", 16, 3, Some("192.168.3.1"), 5),
        unicast("10.9.0.0", 16, 1, None, 0),
        unicast("0.0.0.0", 0, 2, Some("192.168.0.1"), 9),
        unicast("2001:db8:2::", 48, 2, Some("fd00::1"), 0),
        unicast("2001:db8:2::", 48, 3, Some("fd00::3"), 2000),
        unicast("2001:db8:9::", 48, 1, None, 0),
    ]);
    t.routes.push(Route {
        prefix: "10.6.0.0".parse().unwrap(),
        len: 16,
        kind: RouteKind::Prohibit,
        metric: 0,
    });
    t.neighbors.extend([
        Neighbor {
            ip: "192.168.3.1".parse().unwrap(),
            ifindex: 3,
            mac: [2, 0, 0, 0, 3, 1],
        },
        Neighbor {
            ip: "0.0.0.0".parse().unwrap(),
            ifindex: 1,
            mac: [2, 0, 0, 0, 1, 1],
        },
    ]);
    t
}

fn params6(src: &str, dst: &str, ifindex: u32) -> [u8; PARAMS_SIZE] {
    let mut p = [0u8; PARAMS_SIZE];
    p[FAMILY] = AF_INET6;
    p[IFINDEX..IFINDEX + 4].copy_from_slice(&ifindex.to_le_bytes());
    p[TOT_LEN..TOT_LEN + 2].copy_from_slice(&100u16.to_le_bytes());
    let (s, d): (std::net::Ipv6Addr, std::net::Ipv6Addr) =
        (src.parse().unwrap(), dst.parse().unwrap());
    p[SRC..SRC + 16].copy_from_slice(&s.octets());
    p[DST..DST + 16].copy_from_slice(&d.octets());
    p
}

fn field_u32(p: &[u8; PARAMS_SIZE], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

fn mtu_result(p: &[u8; PARAMS_SIZE]) -> u16 {
    u16::from_le_bytes([p[TOT_LEN], p[TOT_LEN + 1]])
}

#[test]
fn ipv6_link_local_loopback_and_multicast_are_refused_before_the_device_check() {
    let t = two_devices();
    for (src, dst) in [
        ("2001:db8::1", "::1"),
        ("2001:db8::1", "fe80::1"),
        ("2001:db8::1", "ff02::1"),
        ("::1", "2001:db8:2::4"),
        ("fe80::2", "2001:db8:2::4"),
        ("ff05::2", "2001:db8:2::4"),
    ] {
        // Ifindex 9 does not exist: the kernel still answers NOT_FWDED, not -ENODEV.
        let mut p = params6(src, dst, 9);
        let before = p;
        assert_eq!(t.lookup(&mut p, 0), ret::NOT_FWDED, "{src} -> {dst}");
        assert_eq!(p, before, "{src} -> {dst}: nothing is written");
    }
    let mut p = params6("2001:db8::1", "2001:db8:2::4", 9);
    assert_eq!(t.lookup(&mut p, 0), ENODEV);
    let mut p = params6("2001:db8::1", "2001:db8:2::4", 1);
    assert_eq!(t.lookup(&mut p, SKIP_NEIGH), ret::SUCCESS);
    assert_eq!(
        field_u32(&p, RT_METRIC),
        1024,
        "metric 0 becomes the IPv6 default"
    );
}

#[test]
fn ipv4_output_lookups_skip_routes_through_other_devices_but_not_reject_routes() {
    let t = two_devices();
    // Without OUTPUT the /16 through device 3 wins; with OUTPUT on device 2 the kernel falls back to the /8.
    let mut p = params([10, 7, 1, 1]);
    assert_eq!(t.lookup(&mut p, 0), ret::SUCCESS);
    assert_eq!(field_u32(&p, IFINDEX), 3);
    assert_eq!(field_u32(&p, RT_METRIC), 5);
    let mut p = params([10, 7, 1, 1]);
    assert_eq!(t.lookup(&mut p, OUTPUT), ret::SUCCESS);
    assert_eq!(field_u32(&p, IFINDEX), 2);
    assert_eq!(&p[DST..DST + 4], &[192, 168, 0, 1]);
    // Reject routes answer before next hops are looked at.
    let mut p = params([10, 6, 1, 1]);
    assert_eq!(t.lookup(&mut p, OUTPUT), ret::PROHIBIT);
    // Nothing through device 3 reaches 10.7/16 when device 3 is excluded and no shorter route uses it either.
    let mut p = params([10, 7, 1, 1]);
    p[IFINDEX..IFINDEX + 4].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(t.lookup(&mut p, OUTPUT), ret::NOT_FWDED);
}

#[test]
fn ipv6_output_lookups_still_take_the_lowest_metric() {
    let t = two_devices();
    let mut p = params6("2001:db8::1", "2001:db8:2::4", 3);
    assert_eq!(t.lookup(&mut p, OUTPUT | SKIP_NEIGH), ret::SUCCESS);
    assert_eq!(field_u32(&p, IFINDEX), 2);
}

#[test]
fn loopback_destinations_hit_the_local_routes_unless_output_excludes_the_loopback_device() {
    let t = two_devices();
    for dst in [[127, 0, 0, 1], [127, 9, 9, 9], [127, 255, 255, 255]] {
        let mut p = params(dst);
        assert_eq!(t.lookup(&mut p, 0), ret::NOT_FWDED, "{dst:?}");
        p[IFINDEX..IFINDEX + 4].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(t.lookup(&mut p, OUTPUT), ret::NOT_FWDED, "{dst:?}");
        // Restricted to device 2, the local routes do not apply and the default route does.
        let mut p = params(dst);
        assert_eq!(t.lookup(&mut p, OUTPUT), ret::SUCCESS, "{dst:?}");
        assert_eq!(field_u32(&p, RT_METRIC), 9);
    }
}

#[test]
fn routes_through_the_loopback_device_use_its_mtu_mac_and_neighbour_key() {
    let mut t = two_devices();
    let mut p = params([10, 9, 1, 1]);
    assert_eq!(t.lookup(&mut p, 0), ret::SUCCESS);
    assert_eq!(field_u32(&p, IFINDEX), 1);
    assert_eq!(mtu_result(&p), 0xffff, "IPv4 caps 65536 at IP_MAX_MTU");
    assert_eq!(
        &p[DMAC..DMAC + 6],
        &[2, 0, 0, 0, 1, 1],
        "the 0.0.0.0 entry answers"
    );
    assert_eq!(&p[SMAC..SMAC + 6], &[0; 6]);
    t.neighbors.retain(|n| n.ifindex != 1);
    t.neighbors.push(Neighbor {
        ip: "10.9.1.1".parse().unwrap(),
        ifindex: 1,
        mac: [2, 0, 0, 0, 1, 2],
    });
    let mut p = params([10, 9, 1, 1]);
    assert_eq!(
        t.lookup(&mut p, 0),
        ret::NO_NEIGH,
        "loopback neighbours are keyed by 0.0.0.0"
    );
    let mut p = params6("2001:db8::1", "2001:db8:9::4", 1);
    p[TOT_LEN..TOT_LEN + 2].copy_from_slice(&0xffffu16.to_le_bytes());
    assert_eq!(t.lookup(&mut p, SKIP_NEIGH), ret::SUCCESS);
    assert_eq!(
        mtu_result(&p),
        0,
        "65536 truncated to the 16-bit mtu_result"
    );
}

#[test]
fn ipv6_mtu_is_at_least_1280() {
    assert_eq!(path_mtu(1400, true), 1400);
    assert_eq!(path_mtu(1200, false), 1280);
    assert_eq!(path_mtu(70000, true), 0xffff);
    assert_eq!(path_mtu(70000, false), 0xffff + 40);
}
