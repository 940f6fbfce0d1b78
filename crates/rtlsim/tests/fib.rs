//! rtl/sephirot/fib.sv against the reference machine's `bpf_fib_lookup` (`hwxdp_xdp::fib::RouteTable::lookup`):
//! seeded random route tables (IPv4 and IPv6, every route kind, gateways of either family, equal prefixes and
//! metrics, devices of every MTU class, the loopback device) with random and targeted lookups, each compared byte for
//! byte (return value and the whole struct written back); fib_forward's table and the reference's own test tables;
//! table overflow; the 4-cycle latency; Yosys synthesis at small parameters.

mod common;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use common::{hex, Rng};
use hwxdp_rtlsim::synth_with;
use hwxdp_xdp::fib::{Device, Neighbor, Route, RouteKind, RouteTable, PARAMS_SIZE};

/// The module's default parameters.
const ROUTES: usize = 32;
const DEVICES: usize = 4;
const NEIGHBORS: usize = 16;
/// Cycles from a request's acceptance to its response (the header's t + 5).
const LATENCY: u64 = 5;

/// Table capacities a model is built with.
#[derive(Clone, Copy)]
struct Sizes {
    routes: usize,
    devices: usize,
    neighbors: usize,
}

const DEFAULT: Sizes = Sizes {
    routes: ROUTES,
    devices: DEVICES,
    neighbors: NEIGHBORS,
};

const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;
const OUTPUT: u32 = 2;
const SKIP_NEIGH: u32 = 4;

/// An address as the table port takes it: 16 bytes, the first on the wire first, IPv4 in the first four.
fn addr_bytes(addr: IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match addr {
        IpAddr::V4(a) => out[..4].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => out = a.octets(),
    }
    out
}

/// The testbench's table writes for `table`, in the reference's list order.
fn table_lines(table: &RouteTable) -> Vec<String> {
    let mut lines = Vec::new();
    let zero = hex(&[0u8; 16]);
    for d in &table.devices {
        lines.push(format!(
            "w 0 {:x} {} {:x} 0 {zero} 0 0 0 0 0 {zero}",
            d.ifindex,
            hex(&d.mac),
            d.mtu
        ));
    }
    for r in &table.routes {
        let (ty, oif, gw) = match &r.kind {
            RouteKind::Unicast { ifindex, gateway } => (0, *ifindex, *gateway),
            RouteKind::Blackhole => (1, 0, None),
            RouteKind::Unreachable => (2, 0, None),
            RouteKind::Prohibit => (3, 0, None),
        };
        let gw_v6 = gw.is_some_and(|g| g.is_ipv6()) as u8;
        let gw_bytes = gw.map_or([0u8; 16], addr_bytes);
        lines.push(format!(
            "w 1 {oif:x} {} 0 {:x} {} {:x} {ty:x} {:x} {:x} {gw_v6:x} {}",
            hex(&[0u8; 6]),
            r.prefix.is_ipv6() as u8,
            hex(&addr_bytes(r.prefix)),
            r.len,
            r.metric,
            gw.is_some() as u8,
            hex(&gw_bytes)
        ));
    }
    for n in &table.neighbors {
        lines.push(format!(
            "w 2 {:x} {} 0 {:x} {} 0 0 0 0 0 {zero}",
            n.ifindex,
            hex(&n.mac),
            n.ip.is_ipv6() as u8,
            hex(&addr_bytes(n.ip))
        ));
    }
    lines
}

/// A lookup and what the reference answers.
struct Lookup {
    params: [u8; PARAMS_SIZE],
    flags: u32,
    hold: bool,
}

/// A command line, what it must print, and what to say when it does not.
struct Step {
    line: String,
    expect: String,
    what: String,
}

/// Commands for one table: clear, load (no error), then the lookups.
fn session(name: &str, table: &RouteTable, lookups: &[Lookup]) -> Vec<Step> {
    let mut steps = vec![Step {
        line: "c".into(),
        expect: "0".into(),
        what: format!("{name}: clear"),
    }];
    for (i, line) in table_lines(table).into_iter().enumerate() {
        steps.push(Step {
            line,
            expect: "0".into(),
            what: format!("{name}: table write {i}"),
        });
    }
    for (i, l) in lookups.iter().enumerate() {
        steps.push(lookup_step(name, table, i, l));
    }
    steps
}

/// A lookup's command line and the reference's answer: return value, the struct written back, the latency.
fn lookup_step(name: &str, table: &RouteTable, i: usize, l: &Lookup) -> Step {
    let mut params = l.params;
    let ret = table.lookup(&mut params, l.flags);
    Step {
        line: format!("l {:x} {} {}", l.flags, hex(&l.params), l.hold as u8),
        expect: format!("{:016x} {} {LATENCY:x}", ret as u64, hex(&params)),
        what: format!(
            "{name}: lookup {i}, flags {:#x}, params {}",
            l.flags,
            hex(&l.params)
        ),
    }
}

/// Runs the steps through a model of the given capacities and compares every line.
fn check(sizes: Sizes, steps: &[Step]) {
    let mut spec = common::unit_spec("fib").source("sephirot/fib.sv");
    spec.flags.extend([
        format!("-GROUTES={}", sizes.routes),
        format!("-GDEVICES={}", sizes.devices),
        format!("-GNEIGHBORS={}", sizes.neighbors),
    ]);
    let input: String = steps.iter().map(|s| format!("{}\n", s.line)).collect();
    let out = common::run_testbench(&spec, input);
    assert_eq!(out.len(), steps.len(), "one output line per command");
    let mut failures = Vec::new();
    for (step, got) in steps.iter().zip(&out) {
        if *got != step.expect {
            failures.push(format!(
                "{}\n  expected {}\n  got      {}",
                step.what, step.expect, got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines differ:\n{}",
        failures.len(),
        steps.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

fn v4(a: [u8; 4]) -> IpAddr {
    IpAddr::from(a)
}

fn v6(text: &str) -> IpAddr {
    IpAddr::V6(text.parse::<Ipv6Addr>().expect("IPv6 literal"))
}

fn unicast(prefix: IpAddr, len: u8, ifindex: u32, gateway: Option<IpAddr>, metric: u32) -> Route {
    Route {
        prefix,
        len,
        kind: RouteKind::Unicast { ifindex, gateway },
        metric,
    }
}

fn reject(prefix: IpAddr, len: u8, kind: RouteKind, metric: u32) -> Route {
    Route {
        prefix,
        len,
        kind,
        metric,
    }
}

/// A struct with random bytes everywhere, then the family, tot_len, ifindex and addresses set.
fn params(
    rng: &mut Rng,
    family: u8,
    tot_len: u16,
    ifindex: u32,
    src: IpAddr,
    dst: IpAddr,
) -> [u8; PARAMS_SIZE] {
    let mut p = [0u8; PARAMS_SIZE];
    p.copy_from_slice(&rng.bytes(PARAMS_SIZE));
    p[0] = family;
    p[6..8].copy_from_slice(&tot_len.to_le_bytes());
    p[8..12].copy_from_slice(&ifindex.to_le_bytes());
    match src {
        IpAddr::V4(a) => p[16..20].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => p[16..32].copy_from_slice(&a.octets()),
    }
    match dst {
        IpAddr::V4(a) => p[32..36].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => p[32..48].copy_from_slice(&a.octets()),
    }
    p
}

/// Random tables and lookups built to hit every branch of the reference.
struct Gen {
    rng: Rng,
    sizes: Sizes,
}

impl Gen {
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.rng.below_usize(items.len())]
    }

    fn mac(&mut self) -> [u8; 6] {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.rng.bytes(6));
        m
    }

    /// IPv4 addresses from a small space (10.0-3.0-3.x, 192.168.0-1.x) so prefixes nest and collide.
    fn addr4(&mut self) -> IpAddr {
        match self.rng.below(8) {
            0 => v4(self.rng.bytes(4).try_into().expect("4 bytes")),
            1 => v4([192, 168, self.rng.below(2) as u8, self.rng.below(4) as u8]),
            2 => v4([
                127,
                self.pick(&[0, 9, 255]),
                self.pick(&[0, 255]),
                self.pick(&[1, 255, 7]),
            ]),
            _ => v4([10, self.rng.below(4) as u8, self.rng.below(4) as u8, {
                let any = self.rng.next() as u8;
                self.pick(&[0, 1, 2, 255, any])
            }]),
        }
    }

    /// IPv6 addresses from a small space (2001:db8:0-3:0-3::x, fd00::x) plus random ones.
    fn addr6(&mut self) -> IpAddr {
        match self.rng.below(8) {
            0 => IpAddr::V6(Ipv6Addr::from(u128::from_be_bytes(
                self.rng.bytes(16).try_into().expect("16 bytes"),
            ))),
            1 => IpAddr::V6(Ipv6Addr::new(
                0xfd00,
                0,
                0,
                0,
                0,
                0,
                0,
                self.rng.below(4) as u16,
            )),
            _ => IpAddr::V6(Ipv6Addr::new(
                0x2001,
                0xdb8,
                self.rng.below(4) as u16,
                self.rng.below(4) as u16,
                0,
                0,
                0,
                {
                    let any = self.rng.next() as u16;
                    self.pick(&[0, 1, 2, 0xffff, any])
                },
            )),
        }
    }

    fn addr(&mut self, is_v6: bool) -> IpAddr {
        if is_v6 {
            self.addr6()
        } else {
            self.addr4()
        }
    }

    /// A destination inside `prefix/len` with random bits below the prefix.
    fn inside(&mut self, prefix: IpAddr, len: u8) -> IpAddr {
        match prefix {
            IpAddr::V4(p) => {
                let len = u32::from(len).min(32);
                let host = if len == 32 { 0 } else { u32::MAX >> len };
                let r = self.rng.next() as u32 & host;
                IpAddr::V4(Ipv4Addr::from((u32::from(p) & !host) | r))
            }
            IpAddr::V6(p) => {
                let len = u32::from(len).min(128);
                let host = if len == 128 { 0 } else { u128::MAX >> len };
                let r = ((self.rng.next() as u128) << 64 | self.rng.next() as u128) & host;
                IpAddr::V6(Ipv6Addr::from((u128::from(p) & !host) | r))
            }
        }
    }

    fn table(&mut self) -> RouteTable {
        let mut t = RouteTable::default();
        let devices = self.rng.below_usize(self.sizes.devices + 1);
        for _ in 0..devices {
            let ifindex = match self.rng.below(10) {
                0 => 1, // a listed loopback device overrides the built-in one as egress
                1 if !t.devices.is_empty() => t.devices[0].ifindex, // duplicates: the first wins
                _ => 2 + self.rng.below(6) as u32,
            };
            let mtu = match self.rng.below(10) {
                0 => self.rng.next() as u32,
                1 => self.rng.below(2000) as u32,
                _ => self.pick(&[
                    1500, 1400, 1280, 1200, 9000, 65535, 65536, 65575, 65576, 70000,
                ]),
            };
            let mac = self.mac();
            t.devices.push(Device { ifindex, mac, mtu });
        }
        let ifindexes: Vec<u32> = t.devices.iter().map(|d| d.ifindex).collect();
        let routes = self.rng.below_usize(self.sizes.routes + 1);
        for _ in 0..routes {
            let is_v6 = self.rng.below(2) == 1;
            let bits = if is_v6 { 128 } else { 32 };
            // Reuse an earlier prefix now and then: equal prefixes compete by metric, then by list order.
            let (prefix, len) = match t
                .routes
                .iter()
                .filter(|r| r.prefix.is_ipv6() == is_v6)
                .count()
            {
                n if n > 0 && self.rng.below(4) == 0 => {
                    let same: Vec<&Route> = t
                        .routes
                        .iter()
                        .filter(|r| r.prefix.is_ipv6() == is_v6)
                        .collect();
                    let r = same[self.rng.below_usize(n)];
                    (r.prefix, r.len)
                }
                _ => {
                    let len = match self.rng.below(10) {
                        0 => self.rng.below(256) as u8, // beyond the address: the match clamps, the order does not
                        1 => 0,
                        2 => bits,
                        _ => {
                            if is_v6 {
                                self.pick(&[16, 32, 40, 48, 56, 64, 96, 120, 127])
                            } else {
                                self.pick(&[8, 12, 16, 20, 24, 28, 30, 31])
                            }
                        }
                    };
                    (self.addr(is_v6), len)
                }
            };
            let metric = match self.rng.below(4) {
                0 => self.rng.next() as u32,
                _ => self.pick(&[0, 0, 5, 100, 200, 1024]),
            };
            let kind = match self.rng.below(10) {
                0 => RouteKind::Blackhole,
                1 => RouteKind::Unreachable,
                2 => RouteKind::Prohibit,
                _ => {
                    let ifindex = match self.rng.below(8) {
                        0 => 1,
                        1 => 2 + self.rng.below(8) as u32, // maybe no such device
                        _ if !ifindexes.is_empty() => self.pick(&ifindexes),
                        _ => 1,
                    };
                    let gateway = match self.rng.below(10) {
                        0..=3 => None,
                        4 => Some(self.addr(!is_v6)), // the other family: the reference writes its own bytes
                        _ => Some(self.addr(is_v6)),
                    };
                    RouteKind::Unicast { ifindex, gateway }
                }
            };
            t.routes.push(Route {
                prefix,
                len,
                kind,
                metric,
            });
        }
        // Neighbours mostly for the routes' next hops, so NO_NEIGH and SUCCESS both come up.
        let neighbors = self.rng.below_usize(self.sizes.neighbors + 1);
        for _ in 0..neighbors {
            let ip = match self.rng.below(6) {
                0 => v4([0, 0, 0, 0]),
                1 => {
                    let is_v6 = self.rng.below(2) == 1;
                    self.addr(is_v6)
                }
                _ => {
                    let hops: Vec<IpAddr> = t
                        .routes
                        .iter()
                        .filter_map(|r| match &r.kind {
                            RouteKind::Unicast { gateway, .. } => Some(gateway.unwrap_or(r.prefix)),
                            _ => None,
                        })
                        .collect();
                    if hops.is_empty() {
                        self.addr4()
                    } else {
                        self.pick(&hops)
                    }
                }
            };
            let ifindex = match self.rng.below(6) {
                0 => 1,
                1 => 2 + self.rng.below(8) as u32,
                _ if !ifindexes.is_empty() => self.pick(&ifindexes),
                _ => 1,
            };
            let mac = self.mac();
            t.neighbors.push(Neighbor { ip, ifindex, mac });
        }
        t
    }

    fn lookup(&mut self, t: &RouteTable) -> Lookup {
        let family = match self.rng.below(20) {
            0 => self.rng.next() as u8,
            1 => self.pick(&[0, 1, 3, 28, 0xff]),
            2..=10 => AF_INET,
            _ => AF_INET6,
        };
        let is_v6 = family == AF_INET6;
        let same: Vec<&Route> = t
            .routes
            .iter()
            .filter(|r| r.prefix.is_ipv6() == is_v6)
            .collect();
        let dst = match self.rng.below(10) {
            0..=5 if !same.is_empty() => {
                let r = same[self.rng.below_usize(same.len())];
                self.inside(r.prefix, r.len)
            }
            6 if is_v6 => v6(self.pick(&[
                "::1", "ff02::1", "fe80::1", "febf::2", "fec0::1", "ff00::", "::2", "::",
            ])),
            6 => v4([
                127,
                self.pick(&[0, 1, 255]),
                self.pick(&[0, 255]),
                self.pick(&[1, 255, 0]),
            ]),
            _ => self.addr(is_v6),
        };
        let src = if is_v6 {
            match self.rng.below(8) {
                0 => v6(self.pick(&["::1", "ff05::2", "fe80::9", "fe9f::1", "fec0::1"])),
                _ => self.addr6(),
            }
        } else {
            self.addr4()
        };
        let ifindex = match self.rng.below(8) {
            0 => 1,
            1 => self.rng.next() as u32,
            2 => 2 + self.rng.below(8) as u32,
            _ if !t.devices.is_empty() => t.devices[self.rng.below_usize(t.devices.len())].ifindex,
            _ => 1,
        };
        let tot_len = match self.rng.below(4) {
            0 => self.rng.next() as u16,
            1 => self.pick(&[1280, 1281, 1400, 1401, 1500, 1501, 9000, 65535, 39, 40]),
            _ => 20 + self.rng.below(1200) as u16,
        };
        let p = params(&mut self.rng, family, tot_len, ifindex, src, dst);
        let flags = self.rng.below(8) as u32;
        let hold = self.rng.below(8) == 0;
        Lookup {
            params: p,
            flags,
            hold,
        }
    }
}

/// `tables` seeded random tables for a model of `sizes`, each with 200 random lookups, through the model; every return
/// code must come up at least `min_each` times (or the generator has lost a branch).
fn random_sessions(seed: u64, sizes: Sizes, tables: usize, min_each: u32) {
    let mut g = Gen {
        rng: Rng(seed),
        sizes,
    };
    let mut steps = Vec::new();
    let mut codes = std::collections::BTreeMap::new();
    for s in 0..tables {
        let table = g.table();
        let lookups: Vec<Lookup> = (0..200).map(|_| g.lookup(&table)).collect();
        for l in &lookups {
            let mut p = l.params;
            *codes.entry(table.lookup(&mut p, l.flags)).or_insert(0u32) += 1;
        }
        steps.extend(session(&format!("table {s}"), &table, &lookups));
    }
    eprintln!("return codes of the random lookups: {codes:?}");
    for code in [0, 1, 2, 3, 4, 7, 8, -19, -97] {
        assert!(
            codes.get(&code).copied().unwrap_or(0) >= min_each,
            "return code {code} came up only {:?} times: {codes:?}",
            codes.get(&code)
        );
    }
    check(sizes, &steps);
}

/// The default parameters: 60 tables of up to 32 routes, 4 devices, 16 neighbours.
#[test]
fn random_tables_and_lookups_match_the_reference() {
    random_sessions(0x6669_625f_7274_6c31, DEFAULT, 60, 10);
}

/// Small tables (the selection tree padded from 5 routes to 8 leaves, one device, one neighbour), which fill up.
#[test]
fn random_small_tables_match_the_reference() {
    let sizes = Sizes {
        routes: 5,
        devices: 1,
        neighbors: 3,
    };
    random_sessions(0x736d_616c_6c5f_7462, sizes, 40, 5);
}

/// fib_forward's route table (crates/gen/src/examples/fib_forward_routes.json) fits the default parameters, and the
/// example's destinations (every answer) agree.
fn fib_forward_table() -> RouteTable {
    let gw = |s: &str| Some(s.parse::<IpAddr>().expect("address"));
    let p4 = |a, b| v4([10, a, b, 0]);
    let p6 = |s: &str| v6(s);
    RouteTable {
        devices: vec![
            Device {
                ifindex: 2,
                mac: [2, 0, 0, 0, 2, 2],
                mtu: 1500,
            },
            Device {
                ifindex: 3,
                mac: [2, 0, 0, 0, 3, 3],
                mtu: 1400,
            },
        ],
        routes: vec![
            unicast(p4(1, 0), 16, 2, None, 0),
            unicast(p4(2, 0), 16, 2, gw("192.168.2.1"), 0),
            unicast(p4(3, 0), 16, 3, gw("192.168.3.1"), 0),
            reject(p4(4, 0), 16, RouteKind::Blackhole, 0),
            reject(p4(5, 0), 16, RouteKind::Unreachable, 0),
            reject(p4(6, 0), 16, RouteKind::Prohibit, 0),
            unicast(p4(7, 0), 16, 2, gw("192.168.2.1"), 0),
            unicast(p4(7, 7), 24, 3, gw("192.168.3.2"), 5),
            unicast(p4(8, 0), 16, 2, gw("192.168.2.1"), 200),
            unicast(p4(8, 0), 16, 3, gw("192.168.3.2"), 100),
            unicast(p6("2001:db8:1::"), 48, 2, None, 0),
            unicast(p6("2001:db8:2::"), 48, 2, gw("fd00:2::1"), 0),
            unicast(p6("2001:db8:3::"), 48, 3, gw("fd00:3::1"), 0),
            reject(p6("2001:db8:4::"), 48, RouteKind::Blackhole, 0),
            reject(p6("2001:db8:5::"), 48, RouteKind::Unreachable, 0),
            reject(p6("2001:db8:6::"), 48, RouteKind::Prohibit, 0),
            unicast(p6("2001:db8:7::"), 48, 2, gw("fd00:2::1"), 0),
            unicast(p6("2001:db8:7:7::"), 64, 3, gw("fd00:3::2"), 5),
            unicast(p6("2001:db8:8::"), 48, 2, gw("fd00:2::1"), 200),
            unicast(p6("2001:db8:8::"), 48, 3, gw("fd00:3::2"), 100),
        ],
        neighbors: vec![
            Neighbor {
                ip: v4([10, 1, 0, 5]),
                ifindex: 2,
                mac: [2, 0, 0, 0, 1, 5],
            },
            Neighbor {
                ip: v4([192, 168, 2, 1]),
                ifindex: 2,
                mac: [2, 0, 0, 0, 2, 1],
            },
            Neighbor {
                ip: v4([192, 168, 3, 2]),
                ifindex: 3,
                mac: [2, 0, 0, 0, 3, 2],
            },
            Neighbor {
                ip: v6("2001:db8:1::5"),
                ifindex: 2,
                mac: [2, 0, 0, 0, 0x61, 5],
            },
            Neighbor {
                ip: v6("fd00:2::1"),
                ifindex: 2,
                mac: [2, 0, 0, 0, 0x62, 1],
            },
            Neighbor {
                ip: v6("fd00:3::2"),
                ifindex: 3,
                mac: [2, 0, 0, 0, 0x63, 2],
            },
        ],
    }
}

/// The reference's own test table (crates/xdp/src/fib/tests.rs `two_devices`): OUTPUT lookups, the loopback local
/// routes, routes through the loopback device and its 0.0.0.0 neighbour key, the IPv6 default metric.
fn two_devices_table() -> RouteTable {
    let gw = |s: &str| Some(s.parse::<IpAddr>().expect("address"));
    RouteTable {
        devices: vec![
            Device {
                ifindex: 2,
                mac: [2, 0, 0, 0, 0, 2],
                mtu: 1500,
            },
            Device {
                ifindex: 3,
                mac: [2, 0, 0, 0, 0, 3],
                mtu: 1400,
            },
        ],
        routes: vec![
            unicast(v4([10, 0, 0, 0]), 8, 2, gw("192.168.0.1"), 0),
            reject(v4([10, 1, 0, 0]), 16, RouteKind::Blackhole, 0),
            unicast(v4([10, 7, 0, 0]), 16, 3, gw("192.168.3.1"), 5),
            unicast(v4([10, 9, 0, 0]), 16, 1, None, 0),
            unicast(v4([0, 0, 0, 0]), 0, 2, gw("192.168.0.1"), 9),
            unicast(v6("2001:db8:2::"), 48, 2, gw("fd00::1"), 0),
            unicast(v6("2001:db8:2::"), 48, 3, gw("fd00::3"), 2000),
            unicast(v6("2001:db8:9::"), 48, 1, None, 0),
            reject(v4([10, 6, 0, 0]), 16, RouteKind::Prohibit, 0),
        ],
        neighbors: vec![
            Neighbor {
                ip: v4([192, 168, 0, 1]),
                ifindex: 2,
                mac: [2, 0, 0, 0, 0, 0xaa],
            },
            Neighbor {
                ip: v4([192, 168, 3, 1]),
                ifindex: 3,
                mac: [2, 0, 0, 0, 3, 1],
            },
            Neighbor {
                ip: v4([0, 0, 0, 0]),
                ifindex: 1,
                mac: [2, 0, 0, 0, 1, 1],
            },
        ],
    }
}

#[test]
fn example_and_reference_tables_match_the_reference() {
    let mut rng = Rng(0x7461_7267_6574_6564);
    let mut steps = Vec::new();

    let table = fib_forward_table();
    assert!(
        table.routes.len() <= ROUTES
            && table.devices.len() <= DEVICES
            && table.neighbors.len() <= NEIGHBORS
    );
    let mut lookups = Vec::new();
    let dst4: Vec<IpAddr> = [
        [10, 1, 0, 5],
        [10, 1, 0, 6],
        [10, 2, 3, 4],
        [10, 3, 3, 4],
        [10, 4, 1, 1],
        [10, 5, 1, 1],
        [10, 6, 1, 1],
        [10, 7, 7, 7],
        [10, 7, 8, 8],
        [10, 8, 3, 4],
        [10, 99, 0, 1],
        [127, 0, 0, 1],
    ]
    .into_iter()
    .map(v4)
    .collect();
    let dst6: Vec<IpAddr> = [
        "2001:db8:1::5",
        "2001:db8:1::6",
        "2001:db8:2::4",
        "2001:db8:3::4",
        "2001:db8:4::1",
        "2001:db8:5::1",
        "2001:db8:6::1",
        "2001:db8:7:7::7",
        "2001:db8:7:8::8",
        "2001:db8:8::4",
        "2001:db8:99::1",
        "ff02::1",
    ]
    .into_iter()
    .map(v6)
    .collect();
    for flags in [0, OUTPUT, SKIP_NEIGH, 1] {
        for tot_len in [100u16, 1400, 1401, 1500, 1501] {
            for ifindex in [1u32, 2, 3, 9] {
                for &dst in &dst4 {
                    let p = params(&mut rng, AF_INET, tot_len, ifindex, v4([10, 0, 0, 1]), dst);
                    lookups.push(Lookup {
                        params: p,
                        flags,
                        hold: false,
                    });
                }
                for &dst in &dst6 {
                    let p = params(&mut rng, AF_INET6, tot_len, ifindex, v6("2001:db8::1"), dst);
                    lookups.push(Lookup {
                        params: p,
                        flags,
                        hold: false,
                    });
                }
            }
        }
    }
    steps.extend(session("fib_forward", &table, &lookups));

    let table = two_devices_table();
    let mut lookups = Vec::new();
    let dsts: Vec<IpAddr> = [
        [10, 2, 3, 4],
        [10, 1, 3, 4],
        [11, 1, 3, 4],
        [10, 7, 1, 1],
        [10, 6, 1, 1],
        [10, 9, 1, 1],
        [127, 0, 0, 1],
        [127, 9, 9, 9],
        [127, 255, 255, 255],
        [127, 255, 255, 254],
        [128, 0, 0, 1],
    ]
    .into_iter()
    .map(v4)
    .chain(
        [
            "2001:db8:2::4",
            "2001:db8:9::4",
            "2001:db8:3::4",
            "::1",
            "fe80::1",
        ]
        .into_iter()
        .map(v6),
    )
    .collect();
    for flags in 0..8 {
        for tot_len in [100u16, 1400, 1401, 1500, 1501, 0xffff] {
            for ifindex in [1u32, 2, 3, 9] {
                for &dst in &dsts {
                    let (family, src) = if dst.is_ipv6() {
                        (AF_INET6, v6("2001:db8::1"))
                    } else {
                        (AF_INET, v4([10, 0, 0, 1]))
                    };
                    let p = params(&mut rng, family, tot_len, ifindex, src, dst);
                    lookups.push(Lookup {
                        params: p,
                        flags,
                        hold: false,
                    });
                }
            }
        }
    }
    steps.extend(session("two_devices", &table, &lookups));
    check(DEFAULT, &steps);
}

/// Each table's capacity: the entry past it (and a write of kind 3) raises tbl_error_o until the next clear, and a
/// full table still answers from the entries it holds.
#[test]
fn table_overflow_is_flagged_until_cleared() {
    let mut steps = Vec::new();
    let zero16 = hex(&[0u8; 16]);
    let kinds = [
        ("device", DEVICES, 0),
        ("route", ROUTES, 1),
        ("neighbour", NEIGHBORS, 2),
    ];
    for (name, cap, kind) in kinds {
        let write = |i: usize| entry_line(kind, i);
        steps.push(Step {
            line: "c".into(),
            expect: "0".into(),
            what: format!("{name}: clear"),
        });
        for i in 0..cap {
            steps.push(Step {
                line: write(i),
                expect: "0".into(),
                what: format!("{name} {i} of {cap}"),
            });
        }
        steps.push(Step {
            line: write(cap),
            expect: "1".into(),
            what: format!("{name} {cap}: one too many"),
        });
        steps.push(Step {
            line: write(0),
            expect: "1".into(),
            what: format!("{name}: the error stays"),
        });
        steps.push(Step {
            line: "c".into(),
            expect: "0".into(),
            what: format!("{name}: clear ends it"),
        });
        steps.push(Step {
            line: write(0),
            expect: "0".into(),
            what: format!("{name}: writes work again"),
        });
    }
    steps.push(Step {
        line: format!("w 3 0 000000000000 0 0 {zero16} 0 0 0 0 0 {zero16}"),
        expect: "1".into(),
        what: "kind 3 is refused".into(),
    });
    steps.push(Step {
        line: "r".into(),
        expect: "ok".into(),
        what: "reset".into(),
    });
    steps.push(Step {
        line: "c".into(),
        expect: "0".into(),
        what: "reset clears the error".into(),
    });

    // A full route table still answers from its entries: 10.31/16 is there, the dropped 10.32/16 is not.
    let table = RouteTable {
        devices: vec![Device {
            ifindex: 2,
            mac: [2, 0, 0, 0, 0, 2],
            mtu: 1500,
        }],
        routes: (0..ROUTES)
            .map(|i| unicast(v4([10, i as u8, 0, 0]), 16, 2, None, 0))
            .collect(),
        neighbors: vec![],
    };
    steps.extend(session("full", &table, &[]));
    let mut extra = table.clone();
    extra
        .routes
        .push(unicast(v4([10, ROUTES as u8, 0, 0]), 16, 2, None, 0));
    steps.push(Step {
        line: table_lines(&extra).pop().expect("a route"),
        expect: "1".into(),
        what: "full: route past ROUTES".into(),
    });
    let mut rng = Rng(0x6f76_6572_666c_6f77);
    for i in [ROUTES - 1, ROUTES] {
        let l = Lookup {
            params: params(
                &mut rng,
                AF_INET,
                100,
                2,
                v4([10, 0, 0, 1]),
                v4([10, i as u8, 0, 1]),
            ),
            flags: SKIP_NEIGH,
            hold: false,
        };
        steps.push(lookup_step("full", &table, i, &l));
    }
    check(DEFAULT, &steps);
}

/// The table write of entry `i` (distinct for each `i`) of kind `kind` (0 device, 1 route, 2 neighbour).
fn entry_line(kind: u8, i: usize) -> String {
    let mut t = RouteTable::default();
    match kind {
        0 => t.devices.push(Device {
            ifindex: 2 + i as u32,
            mac: [2, 0, 0, 0, 0, i as u8],
            mtu: 1500,
        }),
        1 => t
            .routes
            .push(unicast(v4([10, i as u8, 0, 0]), 16, 2, None, 0)),
        _ => t.neighbors.push(Neighbor {
            ip: v4([192, 168, 0, i as u8]),
            ifindex: 2,
            mac: [2, 0, 0, 0, 1, i as u8],
        }),
    }
    table_lines(&t).pop().expect("one entry")
}

/// The module synthesizes for UltraScale+ at small parameters.
#[test]
fn fib_synthesizes_for_ultrascale_plus() {
    let sources = [common::workspace_root().join("rtl/sephirot/fib.sv")];
    synth_with(
        &sources,
        "fib",
        &[("ROUTES", 4), ("DEVICES", 2), ("NEIGHBORS", 4)],
    )
    .unwrap_or_else(|err| panic!("{err}"));
}
