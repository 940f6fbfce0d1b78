//! The `--routes` file: devices, routes and neighbours for `bpf_fib_lookup`.
//!
//! ```json
//! {"devices":   [{"ifindex": 2, "mac": "02:00:00:00:00:02", "mtu": 1500}],
//!  "routes":    [{"dst": "10.0.0.0/8", "dev": 2, "via": "192.168.0.1", "metric": 0},
//!                {"dst": "10.9.0.0/16", "type": "blackhole"}],
//!  "neighbors": [{"ip": "192.168.0.1", "dev": 2, "mac": "02:00:00:00:00:aa"}]}
//! ```

use anyhow::{bail, Context, Result};
use hwxdp_xdp::fib::{Device, Neighbor, Route, RouteKind, RouteTable};
use serde::Deserialize;
use std::net::IpAddr;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    devices: Vec<DeviceJson>,
    #[serde(default)]
    routes: Vec<RouteJson>,
    #[serde(default)]
    neighbors: Vec<NeighborJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceJson {
    ifindex: u32,
    mac: String,
    #[serde(default = "default_mtu")]
    mtu: u32,
}

fn default_mtu() -> u32 {
    1500
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteJson {
    dst: String,
    #[serde(default)]
    dev: Option<u32>,
    #[serde(default)]
    via: Option<IpAddr>,
    #[serde(default)]
    metric: u32,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NeighborJson {
    ip: IpAddr,
    dev: u32,
    mac: String,
}

fn parse_mac(text: &str) -> Result<[u8; 6]> {
    let bytes: Vec<u8> = text
        .split(':')
        .map(|p| u8::from_str_radix(p, 16))
        .collect::<Result<_, _>>()
        .with_context(|| format!("bad MAC address {text:?}"))?;
    bytes
        .try_into()
        .map_err(|_| anyhow::anyhow!("bad MAC address {text:?}: needs six bytes"))
}

fn parse_prefix(text: &str) -> Result<(IpAddr, u8)> {
    let (addr, len) = text.split_once('/').unwrap_or((text, ""));
    let addr: IpAddr = addr
        .parse()
        .with_context(|| format!("bad prefix {text:?}"))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let len = if len.is_empty() {
        max
    } else {
        len.parse()
            .with_context(|| format!("bad prefix {text:?}"))?
    };
    if len > max {
        bail!("bad prefix {text:?}: length over {max}");
    }
    Ok((addr, len))
}

/// Reads a `--routes` file.
pub fn load(path: &Path) -> Result<RouteTable> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let file: File = serde_json::from_str(&text).with_context(|| path.display().to_string())?;
    let ctx = |what: String| format!("{}: {what}", path.display());
    let mut table = RouteTable::default();
    for (i, d) in file.devices.iter().enumerate() {
        table.devices.push(Device {
            ifindex: d.ifindex,
            mac: parse_mac(&d.mac).with_context(|| ctx(format!("device {i}")))?,
            mtu: d.mtu,
        });
    }
    for (i, r) in file.routes.iter().enumerate() {
        let (prefix, len) = parse_prefix(&r.dst).with_context(|| ctx(format!("route {i}")))?;
        let kind = match (r.kind.as_deref(), r.dev) {
            (None | Some("unicast"), Some(ifindex)) => RouteKind::Unicast {
                ifindex,
                gateway: r.via,
            },
            (None | Some("unicast"), None) => {
                bail!(ctx(format!("route {i}: a unicast route needs \"dev\"")))
            }
            (Some("blackhole"), _) => RouteKind::Blackhole,
            (Some("unreachable"), _) => RouteKind::Unreachable,
            (Some("prohibit"), _) => RouteKind::Prohibit,
            (Some(other), _) => bail!(ctx(format!("route {i}: unknown type {other:?}"))),
        };
        if let RouteKind::Unicast {
            gateway: Some(gw), ..
        } = &kind
        {
            if gw.is_ipv4() != prefix.is_ipv4() {
                bail!(ctx(format!(
                    "route {i}: gateway {gw} is not of the prefix's family"
                )));
            }
        }
        table.routes.push(Route {
            prefix,
            len,
            kind,
            metric: r.metric,
        });
    }
    for (i, n) in file.neighbors.iter().enumerate() {
        table.neighbors.push(Neighbor {
            ip: n.ip,
            ifindex: n.dev,
            mac: parse_mac(&n.mac).with_context(|| ctx(format!("neighbor {i}")))?,
        });
    }
    Ok(table)
}

/// Interfaces the table names, which must exist in the kernel's namespace.
pub fn interfaces(table: &RouteTable) -> Vec<u32> {
    let mut all: Vec<u32> = table.devices.iter().map(|d| d.ifindex).collect();
    all.extend(table.routes.iter().filter_map(|r| match r.kind {
        RouteKind::Unicast { ifindex, .. } => Some(ifindex),
        _ => None,
    }));
    all.extend(table.neighbors.iter().map(|n| n.ifindex));
    all.retain(|&i| i != 1);
    all.sort();
    all.dedup();
    all
}
