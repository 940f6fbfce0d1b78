//! `bpf_fib_lookup` for XDP against a route table given as input, with the kernel's order of checks and return codes.
//!
//! The same table is installed in the kernel's network namespace by `hwxdp verify`, so the two answer alike. Only
//! explicit routes exist besides the kernel's own local routes for the loopback device (127.0.0.0/8, ::1); the loopback
//! device itself (ifindex 1, MAC zero, MTU 65536) is always there. IPv6 link-local, loopback and multicast sources or
//! destinations are never forwarded. See `docs/routes.md` for what is not modelled.

use std::net::IpAddr;

/// A network device routes can point to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Interface index.
    pub ifindex: u32,
    /// Its MAC address (`smac` of forwarded packets).
    pub mac: [u8; 6],
    /// Its MTU.
    pub mtu: u32,
}

/// What a route does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteKind {
    /// Forward out of `ifindex`, to `gateway` if given, else directly to the destination.
    Unicast {
        /// Outgoing device.
        ifindex: u32,
        /// Next hop, of the same family as the route.
        gateway: Option<IpAddr>,
    },
    /// Silently discard.
    Blackhole,
    /// Host unreachable.
    Unreachable,
    /// Administratively prohibited.
    Prohibit,
}

/// One route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Destination prefix.
    pub prefix: IpAddr,
    /// Prefix length in bits.
    pub len: u8,
    /// What to do.
    pub kind: RouteKind,
    /// Priority: lower wins among routes with the same prefix.
    pub metric: u32,
}

/// A resolved neighbour (ARP or NDP entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// Its address.
    pub ip: IpAddr,
    /// The device it is reachable on.
    pub ifindex: u32,
    /// Its MAC address (`dmac` of forwarded packets).
    pub mac: [u8; 6],
}

/// Everything `bpf_fib_lookup` consults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteTable {
    /// Devices (packets may only arrive on and leave through these and the loopback device).
    pub devices: Vec<Device>,
    /// Routes.
    pub routes: Vec<Route>,
    /// Neighbours.
    pub neighbors: Vec<Neighbor>,
}

/// `BPF_FIB_LKUP_RET_*`.
pub mod ret {
    /// Forward: `dmac`, `smac` and `ifindex` are set.
    pub const SUCCESS: i64 = 0;
    /// Blackhole route.
    pub const BLACKHOLE: i64 = 1;
    /// Unreachable route.
    pub const UNREACHABLE: i64 = 2;
    /// Prohibit route.
    pub const PROHIBIT: i64 = 3;
    /// No route, or a local or broadcast one.
    pub const NOT_FWDED: i64 = 4;
    /// Forwarding disabled on the ingress device.
    pub const FWD_DISABLED: i64 = 5;
    /// No resolved neighbour for the next hop.
    pub const NO_NEIGH: i64 = 7;
    /// The packet is longer than the egress MTU.
    pub const FRAG_NEEDED: i64 = 8;
}

/// `BPF_FIB_LOOKUP_DIRECT`, `OUTPUT` and `SKIP_NEIGH`: the flags the model implements.
pub const SUPPORTED_FLAGS: u32 = 1 | 2 | 4;
const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;
const EINVAL: i64 = -22;
const ENODEV: i64 = -19;
const EAFNOSUPPORT: i64 = -97;
const LOOPBACK: u32 = 1;
/// `BPF_FIB_LOOKUP_OUTPUT`.
const OUTPUT: u32 = 2;
/// `BPF_FIB_LOOKUP_SKIP_NEIGH`.
const SKIP_NEIGH: u32 = 4;
/// The loopback device's MTU in a fresh namespace.
const LOOPBACK_MTU: u32 = 65536;
/// Size of `struct bpf_fib_lookup`.
pub const PARAMS_SIZE: usize = 64;

// Field offsets in `struct bpf_fib_lookup`.
const FAMILY: usize = 0;
const TOT_LEN: usize = 6;
const IFINDEX: usize = 8;
const RT_METRIC: usize = 12;
const SRC: usize = 16;
const DST: usize = 32;
const VLAN: usize = 48;
const SMAC: usize = 52;
const DMAC: usize = 58;

impl Route {
    /// The priority the kernel records: IPv6 routes added with metric 0 get the default user priority 1024.
    pub fn effective_metric(&self) -> u32 {
        if self.prefix.is_ipv6() && self.metric == 0 {
            1024
        } else {
            self.metric
        }
    }
}

impl RouteTable {
    /// Runs `bpf_fib_lookup` on `params` (the 64-byte struct, updated in place as the kernel does) and returns the
    /// helper's return value. `flags` must be within [`SUPPORTED_FLAGS`] (the caller refuses others).
    pub fn lookup(&self, params: &mut [u8; PARAMS_SIZE], flags: u32) -> i64 {
        let family = params[FAMILY];
        let v4 = match family {
            AF_INET => true,
            AF_INET6 => false,
            _ => return EAFNOSUPPORT,
        };
        let dst = read_addr(params, DST, v4);
        let src = read_addr(params, SRC, v4);
        // bpf_ipv6_fib_lookup refuses these before it even looks at the device (rt6_need_strict on both addresses).
        if !v4 && (never_forwarded_v6(dst) || never_forwarded_v6(src)) {
            return ret::NOT_FWDED;
        }
        let ifindex =
            u32::from_le_bytes(params[IFINDEX..IFINDEX + 4].try_into().unwrap_or_default());
        if ifindex != LOOPBACK && !self.devices.iter().any(|d| d.ifindex == ifindex) {
            return ENODEV;
        }
        // With OUTPUT, `ifindex` is the egress device: IPv4 skips unicast routes through any other device (and falls
        // back to shorter prefixes), while IPv6 only prefers it among routes of equal metric, which the model lacks.
        let oif = (flags & OUTPUT != 0).then_some(ifindex);
        let best = self
            .routes
            .iter()
            .filter(|r| r.prefix.is_ipv4() == v4 && prefix_matches(r.prefix, r.len, dst))
            .filter(|r| !v4 || usable_through(r, oif))
            .min_by_key(|r| (std::cmp::Reverse(r.len), r.effective_metric()));
        if v4 && oif.is_none_or(|o| o == LOOPBACK) {
            if let Some(local_len) = loopback_local_len(dst) {
                if best.is_none_or(|r| r.len <= local_len) {
                    return ret::NOT_FWDED;
                }
            }
        }
        let Some(route) = best else {
            return ret::NOT_FWDED;
        };
        let (out_ifindex, gateway) = match &route.kind {
            RouteKind::Unicast { ifindex, gateway } => (*ifindex, *gateway),
            RouteKind::Blackhole => return ret::BLACKHOLE,
            RouteKind::Unreachable => return ret::UNREACHABLE,
            RouteKind::Prohibit => return ret::PROHIBIT,
        };
        let Some(dev) = self.egress_device(out_ifindex) else {
            return ret::NOT_FWDED;
        };
        let mtu = path_mtu(dev.mtu, v4);
        let tot_len = u16::from_le_bytes([params[TOT_LEN], params[TOT_LEN + 1]]) as u32;
        // mtu_result is 16 bits wide: the loopback device's IPv6 MTU (65536) comes back truncated, as in the kernel.
        if tot_len > mtu {
            params[TOT_LEN..TOT_LEN + 2].copy_from_slice(&(mtu as u16).to_le_bytes());
            return ret::FRAG_NEEDED;
        }
        params[RT_METRIC..RT_METRIC + 4].copy_from_slice(&route.effective_metric().to_le_bytes());
        params[IFINDEX..IFINDEX + 4].copy_from_slice(&out_ifindex.to_le_bytes());
        let next_hop = gateway.unwrap_or(dst);
        write_addr(params, DST, next_hop);
        if flags & SKIP_NEIGH == 0 {
            // On the loopback device IPv4 neighbours are all keyed by 0.0.0.0 (__ipv4_neigh_lookup_noref).
            let key = if v4 && out_ifindex == LOOPBACK {
                IpAddr::from([0u8; 4])
            } else {
                next_hop
            };
            let Some(neigh) = self
                .neighbors
                .iter()
                .find(|n| n.ip == key && n.ifindex == out_ifindex)
            else {
                return ret::NO_NEIGH;
            };
            params[DMAC..DMAC + 6].copy_from_slice(&neigh.mac);
            params[SMAC..SMAC + 6].copy_from_slice(&dev.mac);
        }
        params[VLAN..VLAN + 4].fill(0);
        params[TOT_LEN..TOT_LEN + 2].copy_from_slice(&(mtu as u16).to_le_bytes());
        ret::SUCCESS
    }

    /// The device a route leads out of: one of the table's, or the loopback device every namespace has.
    fn egress_device(&self, ifindex: u32) -> Option<Device> {
        let listed = self.devices.iter().find(|d| d.ifindex == ifindex).cloned();
        listed.or_else(|| {
            (ifindex == LOOPBACK).then_some(Device {
                ifindex,
                mac: [0; 6],
                mtu: LOOPBACK_MTU,
            })
        })
    }
}

/// The MTU `bpf_fib_lookup` checks against for a device of MTU `dev_mtu`: `ip_mtu_from_fib_result` caps IPv4 at
/// IP_MAX_MTU, `ip6_mtu_from_fib6` raises IPv6 to IPV6_MIN_MTU and caps it at IP6_MAX_MTU.
fn path_mtu(dev_mtu: u32, v4: bool) -> u32 {
    if v4 {
        dev_mtu.min(0xffff)
    } else {
        dev_mtu.clamp(1280, 0xffff + 40)
    }
}

/// Validates the size and flags before a lookup; `None` means go ahead.
pub fn check_call(plen: i64, flags: u32) -> Option<i64> {
    if plen < PARAMS_SIZE as i64 || flags & !(SUPPORTED_FLAGS | 8 | 16 | 32) != 0 {
        return Some(EINVAL);
    }
    None
}

fn read_addr(params: &[u8; PARAMS_SIZE], at: usize, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::from([params[at], params[at + 1], params[at + 2], params[at + 3]])
    } else {
        let mut b = [0u8; 16];
        b.copy_from_slice(&params[at..at + 16]);
        IpAddr::from(b)
    }
}

fn write_addr(params: &mut [u8; PARAMS_SIZE], at: usize, addr: IpAddr) {
    match addr {
        IpAddr::V4(a) => params[at..at + 4].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => params[at..at + 16].copy_from_slice(&a.octets()),
    }
}

/// Multicast, link-local unicast and loopback IPv6 addresses: the kernel's `rt6_need_strict`.
fn never_forwarded_v6(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V6(a) => a.is_multicast() || a.is_unicast_link_local() || a.is_loopback(),
        IpAddr::V4(_) => false,
    }
}

/// Whether an IPv4 route may answer a lookup whose egress device is restricted to `oif`: reject routes answer before
/// the kernel looks at next hops.
fn usable_through(route: &Route, oif: Option<u32>) -> bool {
    match (&route.kind, oif) {
        (RouteKind::Unicast { ifindex, .. }, Some(oif)) => *ifindex == oif,
        _ => true,
    }
}

/// The prefix length of the local or broadcast route the kernel adds for the loopback device in a fresh namespace
/// (127.0.0.0/8, 127.0.0.1/32, 127.255.255.255/32) that matches `addr`, if any.
fn loopback_local_len(addr: IpAddr) -> Option<u8> {
    match addr {
        IpAddr::V4(a) if a.octets() == [127, 0, 0, 1] || a.octets() == [127, 255, 255, 255] => {
            Some(32)
        }
        IpAddr::V4(a) if a.is_loopback() => Some(8),
        _ => None,
    }
}

fn prefix_matches(prefix: IpAddr, len: u8, addr: IpAddr) -> bool {
    let (p, a, bits): (u128, u128, u32) = match (prefix, addr) {
        (IpAddr::V4(p), IpAddr::V4(a)) => (u32::from(p) as u128, u32::from(a) as u128, 32),
        (IpAddr::V6(p), IpAddr::V6(a)) => (u128::from(p), u128::from(a), 128),
        _ => return false,
    };
    let len = (len as u32).min(bits);
    if len == 0 {
        return true;
    }
    let shift = bits - len;
    (p >> shift) == (a >> shift)
}

#[cfg(test)]
mod tests;
