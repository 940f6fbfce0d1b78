//! What loading an image checks and sends besides instruction memory: the program table order and the route table.

use std::net::IpAddr;

use hwxdp_hxdp::isa::{Image, NO_ENTRY};
use hwxdp_object::ObjectSpec;
use hwxdp_xdp::fib::{RouteKind, RouteTable};

use super::HxdpRtlError;

/// Checks that `image` is `spec` compiled and holds `program`; returns that program's index in the object.
pub(super) fn check_image(
    image: &Image,
    spec: &ObjectSpec,
    program: Option<&str>,
) -> Result<usize, HxdpRtlError> {
    let Some(chosen) = spec.program(program) else {
        return Err(HxdpRtlError::Image(match program {
            Some(p) => format!("no program {p:?} in the object"),
            None => "the object has several programs: choose one".into(),
        }));
    };
    let entry = spec
        .programs
        .iter()
        .position(|p| p.name == chosen.name)
        .unwrap_or(0);
    if image.entries.len() != spec.programs.len() || image.maps.len() != spec.maps.len() {
        return Err(HxdpRtlError::Image(format!(
            "{} programs and {} maps, the object has {} and {}",
            image.entries.len(),
            image.maps.len(),
            spec.programs.len(),
            spec.maps.len()
        )));
    }
    for (i, (m, s)) in image.maps.iter().zip(&spec.maps).enumerate() {
        if (m.map_type, m.key_size, m.value_size, m.max_entries)
            != (s.map_type, s.key_size, s.value_size, s.max_entries)
        {
            return Err(HxdpRtlError::Image(format!(
                "map {i} ({}) differs from the object",
                s.name
            )));
        }
    }
    let start = image.entries[entry];
    if start == NO_ENTRY || start as usize >= image.bundles.len() {
        return Err(HxdpRtlError::Image(format!(
            "program {} is not in the image",
            chosen.name
        )));
    }
    Ok(entry)
}

/// The hardware's program index of each object program: the module starts every packet at program 0, so the chosen
/// program `entry` trades places with program 0. Program-array values (object indices) are translated when they are
/// written to the hardware; userspace keeps seeing the object's indices.
pub(super) fn program_order(programs: usize, entry: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..programs as u32).collect();
    order.swap(0, entry);
    order
}

/// The route table as `fib_*` command lines (`fib.sv`'s table port), in the reference's list order, which breaks ties.
pub(super) fn route_commands(routes: &RouteTable) -> Vec<String> {
    let hex = |b: &[u8]| -> String { b.iter().map(|x| format!("{x:02x}")).collect() };
    let addr = |a: &IpAddr| match a {
        IpAddr::V4(v4) => hex(&v4.octets()),
        IpAddr::V6(v6) => hex(&v6.octets()),
    };
    let mut lines = vec!["fib_clear".to_string()];
    for d in &routes.devices {
        lines.push(format!(
            "fib_dev {:x} {} {:x}",
            d.ifindex,
            hex(&d.mac),
            d.mtu
        ));
    }
    for r in &routes.routes {
        let (kind, ifindex, gw) = match &r.kind {
            RouteKind::Unicast { ifindex, gateway } => {
                (0, *ifindex, gateway.as_ref().map_or("-".to_string(), addr))
            }
            RouteKind::Blackhole => (1, 0, "-".into()),
            RouteKind::Unreachable => (2, 0, "-".into()),
            RouteKind::Prohibit => (3, 0, "-".into()),
        };
        lines.push(format!(
            "fib_route {} {:x} {kind:x} {:x} {ifindex:x} {gw}",
            addr(&r.prefix),
            r.len,
            r.metric
        ));
    }
    for n in &routes.neighbors {
        lines.push(format!(
            "fib_neigh {} {:x} {}",
            addr(&n.ip),
            n.ifindex,
            hex(&n.mac)
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_program_trades_places_with_program_0() {
        assert_eq!(program_order(3, 2), vec![2, 1, 0]);
        assert_eq!(program_order(3, 0), vec![0, 1, 2]);
        assert_eq!(program_order(1, 0), vec![0]);
    }

    #[test]
    fn routes_become_fib_lines_in_list_order() {
        use hwxdp_xdp::fib::{Device, Neighbor, Route};
        let table = RouteTable {
            devices: vec![Device {
                ifindex: 2,
                mac: [2, 0, 0, 0, 0, 0xaa],
                mtu: 1500,
            }],
            routes: vec![
                Route {
                    prefix: "10.1.0.0".parse().expect("ip"),
                    len: 16,
                    kind: RouteKind::Unicast {
                        ifindex: 2,
                        gateway: Some("10.1.0.1".parse().expect("ip")),
                    },
                    metric: 0,
                },
                Route {
                    prefix: "2001:db8::".parse().expect("ip"),
                    len: 32,
                    kind: RouteKind::Prohibit,
                    metric: 1024,
                },
            ],
            neighbors: vec![Neighbor {
                ip: "10.1.0.1".parse().expect("ip"),
                ifindex: 2,
                mac: [0xde, 0xad, 0, 0, 0, 1],
            }],
        };
        assert_eq!(
            route_commands(&table),
            vec![
                "fib_clear",
                "fib_dev 2 0200000000aa 5dc",
                "fib_route 0a010000 10 0 0 2 0a010001",
                "fib_route 20010db8000000000000000000000000 20 3 400 0 -",
                "fib_neigh 0a010001 2 dead00000001",
            ]
        );
    }
}
