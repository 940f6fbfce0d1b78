//! Installs a [`RouteTable`] in the sandbox's network namespace, so that the kernel's `bpf_fib_lookup` consults the
//! same devices, routes and neighbours as the reference machine's.

use crate::sandbox::{run_ip, sandbox_error};
use crate::{KernelError, Sandbox};
use hwxdp_xdp::fib::{RouteKind, RouteTable};
use std::net::IpAddr;

fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn device_name(sandbox: &Sandbox, ifindex: u32) -> Result<String, KernelError> {
    if ifindex == 1 {
        return Ok("lo".into());
    }
    if sandbox.devices().iter().any(|d| d.0 == ifindex) {
        Ok(format!("hwxdp{ifindex}"))
    } else {
        Err(sandbox_error(
            "routes",
            format!("ifindex {ifindex} is not one of the sandbox's devices"),
        ))
    }
}

/// Peers of replacement veth devices get this plus the device's ifindex, far from any ifindex a trace names.
const VETH_PEER_INDEX_BASE: u32 = 1_000_000;

impl Sandbox {
    /// Recreates device `name` as one end of a veth pair with the same ifindex and queue count, its MAC and MTU set.
    /// Needed where the sandbox's devices are `ifb`s (kernels without `dummy`), whose MAC address cannot be changed.
    /// The peer is up too, so that the device has a carrier as a dummy would.
    fn replace_with_veth(
        &self,
        name: &str,
        ifindex: u32,
        mac: &str,
        mtu: &str,
    ) -> Result<(), KernelError> {
        let queues = self
            .devices()
            .iter()
            .find(|d| d.0 == ifindex)
            .map_or(1, |d| d.1)
            .to_string();
        let peer = format!("{name}p");
        let peer_index = (VETH_PEER_INDEX_BASE + ifindex).to_string();
        let index = ifindex.to_string();
        run_ip(&["link", "del", "dev", name])?;
        run_ip(&[
            "link",
            "add",
            "name",
            name,
            "index",
            &index,
            "numrxqueues",
            &queues,
            "numtxqueues",
            &queues,
            "address",
            mac,
            "mtu",
            mtu,
            "type",
            "veth",
            "peer",
            "name",
            &peer,
            "index",
            &peer_index,
        ])?;
        run_ip(&["link", "set", "dev", &peer, "up"])?;
        run_ip(&["link", "set", "dev", name, "up"])
    }

    /// Enables forwarding, gives each device its MAC and MTU, and adds every route (with `onlink` gateways, since the
    /// devices have no addresses) and every neighbour as a permanent entry.
    pub fn install_routes(&self, table: &RouteTable) -> Result<(), KernelError> {
        for path in [
            "/proc/sys/net/ipv4/conf/all/forwarding",
            "/proc/sys/net/ipv6/conf/all/forwarding",
        ] {
            std::fs::write(path, "1")
                .map_err(|e| sandbox_error(format!("write {path}"), e.to_string()))?;
        }
        for dev in &table.devices {
            let name = device_name(self, dev.ifindex)?;
            let (mac, mtu) = (mac_text(&dev.mac), dev.mtu.to_string());
            match run_ip(&["link", "set", "dev", &name, "address", &mac, "mtu", &mtu]) {
                Err(KernelError::Sandbox { message, .. })
                    if message.contains("Operation not supported") && dev.ifindex != 1 =>
                {
                    self.replace_with_veth(&name, dev.ifindex, &mac, &mtu)?;
                }
                other => other?,
            }
        }
        for route in &table.routes {
            let family = if route.prefix.is_ipv4() { "-4" } else { "-6" };
            let prefix = format!("{}/{}", route.prefix, route.len);
            let metric = route.metric.to_string();
            let mut args: Vec<String> = vec![family.into(), "route".into(), "add".into()];
            match &route.kind {
                RouteKind::Unicast { ifindex, gateway } => {
                    args.push(prefix);
                    if let Some(gw) = gateway {
                        args.extend(["via".into(), gw.to_string(), "onlink".into()]);
                    }
                    args.extend(["dev".into(), device_name(self, *ifindex)?]);
                }
                RouteKind::Blackhole => args.extend(["blackhole".into(), prefix]),
                RouteKind::Unreachable => args.extend(["unreachable".into(), prefix]),
                RouteKind::Prohibit => args.extend(["prohibit".into(), prefix]),
            }
            args.extend(["metric".into(), metric]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_ip(&args)?;
        }
        for n in &table.neighbors {
            let family = if matches!(n.ip, IpAddr::V4(_)) {
                "-4"
            } else {
                "-6"
            };
            let (ip, mac, dev) = (
                n.ip.to_string(),
                mac_text(&n.mac),
                device_name(self, n.ifindex)?,
            );
            run_ip(&[
                family,
                "neigh",
                "add",
                &ip,
                "lladdr",
                &mac,
                "dev",
                &dev,
                "nud",
                "permanent",
            ])?;
        }
        Ok(())
    }
}
