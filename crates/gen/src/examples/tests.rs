//! Checks every workload: deterministic, of the requested length, each frame parsing as intended with correct
//! checksums, and preloads that fit the built objects.

use super::{labeled, ALL};
use crate::labeled::{Expect, Labeled, Net, Transport};
use crate::mix::labeled_mix;
use crate::packet::{internet_checksum, ones_complement_sum};
use etherparse::{NetSlice, SlicedPacket, TransportSlice, VlanSlice};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Largest and smallest frame the kernel's test run accepts.
const MAX_FRAME: usize = 3520;
const MIN_FRAME: usize = 14;

fn parsed_shape(bytes: &[u8]) -> Result<(usize, Net, Transport), String> {
    let p = SlicedPacket::from_ethernet(bytes).map_err(|e| e.to_string())?;
    let vlans = match &p.vlan {
        None => 0,
        Some(VlanSlice::SingleVlan(_)) => 1,
        Some(VlanSlice::DoubleVlan(_)) => 2,
    };
    let net = match &p.net {
        Some(NetSlice::Ipv4(_)) => Net::V4,
        Some(NetSlice::Ipv6(_)) => Net::V6,
        None => {
            let ethertype = match &p.vlan {
                Some(VlanSlice::SingleVlan(v)) => v.ether_type().0,
                Some(VlanSlice::DoubleVlan(v)) => v.inner().ether_type().0,
                None => u16::from_be_bytes([bytes[12], bytes[13]]),
            };
            Net::Ether(ethertype)
        }
    };
    let l4 = match &p.transport {
        None => Transport::None,
        Some(TransportSlice::Tcp(_)) => Transport::Tcp,
        Some(TransportSlice::Udp(_)) => Transport::Udp,
        Some(TransportSlice::Icmpv4(_)) => Transport::Icmp,
        Some(TransportSlice::Icmpv6(_)) => Transport::Icmpv6,
    };
    Ok((vlans, net, l4))
}

/// Verifies the IPv4 header checksum and the TCP/UDP/ICMP checksums of a well-formed frame.
fn check_checksums(bytes: &[u8]) -> Result<(), String> {
    let p = SlicedPacket::from_ethernet(bytes).map_err(|e| e.to_string())?;
    let (pseudo, l4_bytes): (Vec<u8>, &[u8]) = match &p.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header();
            if internet_checksum(h.slice(), 0) != 0 {
                return Err("bad ipv4 header checksum".into());
            }
            let payload = ip.payload().payload;
            let mut pseudo = Vec::new();
            pseudo.extend_from_slice(&h.source());
            pseudo.extend_from_slice(&h.destination());
            pseudo.extend_from_slice(&[0, h.protocol().0]);
            pseudo.extend_from_slice(&(payload.len() as u16).to_be_bytes());
            if ip.payload().fragmented {
                return Ok(());
            }
            (pseudo, payload)
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header();
            let payload = ip.payload().payload;
            let mut pseudo = Vec::new();
            pseudo.extend_from_slice(&h.source());
            pseudo.extend_from_slice(&h.destination());
            pseudo.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, h.next_header().0]);
            (pseudo, payload)
        }
        None => return Ok(()),
    };
    let ok = match &p.transport {
        Some(TransportSlice::Tcp(_)) | Some(TransportSlice::Icmpv6(_)) => {
            internet_checksum(l4_bytes, ones_complement_sum(&pseudo, 0)) == 0
        }
        Some(TransportSlice::Udp(u)) => {
            u.checksum() == 0 || internet_checksum(l4_bytes, ones_complement_sum(&pseudo, 0)) == 0
        }
        Some(TransportSlice::Icmpv4(_)) => internet_checksum(l4_bytes, 0) == 0,
        None => true,
    };
    if ok {
        Ok(())
    } else {
        Err("bad transport checksum".into())
    }
}

fn check_frames(what: &str, frames: &[Labeled]) {
    for (i, f) in frames.iter().enumerate() {
        assert!(
            (MIN_FRAME..=MAX_FRAME).contains(&f.bytes.len()),
            "{what} packet {i}: {} bytes is outside what a test run accepts",
            f.bytes.len()
        );
        match f.expect {
            Expect::Malformed => {
                assert!(
                    parsed_shape(&f.bytes).is_err(),
                    "{what} packet {i} should be malformed: {:02x?}",
                    f.bytes
                )
            }
            Expect::Parsed { vlans, net, l4 } => {
                let got = parsed_shape(&f.bytes)
                    .unwrap_or_else(|e| panic!("{what} packet {i}: {e}: {:02x?}", f.bytes));
                assert_eq!(got, (vlans, net, l4), "{what} packet {i}: {:02x?}", f.bytes);
                if let Err(e) = check_checksums(&f.bytes) {
                    panic!("{what} packet {i}: {e}: {:02x?}", f.bytes);
                }
            }
        }
    }
}

#[test]
fn every_example_parses_as_intended() {
    for ex in ALL {
        for seed in [0, 1, 42] {
            check_frames(ex.name, &labeled(ex, 600, seed));
        }
    }
}

#[test]
fn generic_mix_parses_as_intended_and_has_malformed_frames() {
    for seed in [0, 3] {
        let frames = labeled_mix(500, seed);
        check_frames("generic mix", &frames);
        let bad = frames
            .iter()
            .filter(|f| f.expect == Expect::Malformed)
            .count();
        assert!(bad >= 12, "only {bad} malformed frames in the generic mix");
    }
}

#[test]
fn workloads_are_deterministic_and_sized() {
    for ex in ALL {
        for count in [0, 5, 700] {
            let a = labeled(ex, count, 9);
            assert_eq!(a.len(), count, "{}", ex.name);
            assert_eq!(a, labeled(ex, count, 9), "{}", ex.name);
        }
        assert_ne!(
            labeled(ex, 700, 9),
            labeled(ex, 700, 10),
            "{}: seeds should differ",
            ex.name
        );
    }
    assert_eq!(crate::generic_mix(77, 5), crate::generic_mix(77, 5));
    assert_eq!(crate::generic_mix(77, 5).len(), 77);
    assert_ne!(crate::generic_mix(77, 5), crate::generic_mix(77, 6));
}

#[test]
fn every_workload_has_malformed_frames_in_its_coverage_sequence() {
    for ex in ALL {
        let core = (ex.core)(&mut crate::Rng::new(1));
        let bad = core
            .iter()
            .filter(|f| f.expect == Expect::Malformed)
            .count();
        assert!(bad >= 12, "{}: only {bad} malformed frames", ex.name);
    }
}

#[test]
fn route_tables_come_with_exactly_the_programs_that_look_routes_up() {
    for ex in ALL {
        let path = repo_root()
            .join("examples/xdp")
            .join(format!("{}.c", ex.name));
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            ex.routes.is_some(),
            source.contains("bpf_fib_lookup("),
            "{}",
            ex.name
        );
        if let Some(table) = ex.routes {
            let parsed: serde_json::Value =
                serde_json::from_str(table).unwrap_or_else(|e| panic!("{}: {e}", ex.name));
            for key in ["devices", "routes", "neighbors"] {
                assert!(parsed[key].is_array(), "{}: no {key} list", ex.name);
            }
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `make -C examples/xdp` once per test process (it only rebuilds what changed), then reads `name`'s object;
/// panics with a clear message when clang is unavailable.
fn built_object(name: &str) -> Vec<u8> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let root = repo_root();
    let built = BUILT.get_or_init(|| {
        let clang = Command::new("clang").arg("--version").output();
        if !clang.is_ok_and(|o| o.status.success()) {
            return Err("clang is needed to build examples/xdp and was not found".into());
        }
        let out = Command::new("make")
            .arg("-C")
            .arg(root.join("examples/xdp"))
            .output();
        match out {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(format!(
                "make -C examples/xdp failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => Err(format!("cannot run make: {e}")),
        }
    });
    if let Err(e) = built {
        panic!("{e}");
    }
    let path = root.join("build/examples/xdp").join(format!("{name}.o"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn preloads_fit_the_built_objects() {
    for ex in ALL {
        let bytes = built_object(ex.name);
        let spec = hwxdp_object::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", ex.name));
        let names: Vec<&str> = std::iter::once(ex.name)
            .chain(ex.aliases.iter().copied())
            .collect();
        for name in names {
            let program = spec
                .program(Some(name))
                .unwrap_or_else(|| panic!("{}: no program {name}", ex.name));
            let w = crate::workload(&spec, program, 300, 4).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(w.packets.len(), 300);
            assert_eq!(
                w.preload.len(),
                (ex.preload)().len() + ex.program_slots.len()
            );
            for &(map, key, target) in ex.program_slots {
                let index = spec
                    .programs
                    .iter()
                    .position(|p| p.name == target)
                    .map(|i| i as u32);
                let slot = w
                    .preload
                    .iter()
                    .find(|p| p.map == map && p.key == key.to_le_bytes());
                assert_eq!(
                    slot.map(|p| p.value.clone()),
                    index.map(|i| i.to_le_bytes().to_vec())
                );
            }
            assert!(w.description.starts_with(ex.name));
            assert_eq!(w.routes.as_deref(), ex.routes, "{}", ex.name);
        }
    }
}

#[test]
fn unknown_programs_get_the_generic_mix_and_mismatched_maps_are_reported() {
    let bytes = built_object("l2_acl");
    let mut spec = hwxdp_object::parse(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut program = spec
        .program(Some("l2_acl"))
        .cloned()
        .unwrap_or_else(|| panic!("no l2_acl"));
    program.name = "someone_elses_prog".into();
    let w = crate::workload(&spec, &program, 40, 2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.packets, crate::generic_mix(40, 2));
    assert!(w.preload.is_empty());

    program.name = "l2_acl".into();
    let acl = spec
        .map_index("acl")
        .unwrap_or_else(|| panic!("no acl map"));
    spec.maps[acl].key_size = 8;
    let err = crate::workload(&spec, &program, 40, 2)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("program l2_acl: map acl: key size is 8 bytes, the preload has 6")
    );
    spec.maps[acl].name = "other".into();
    let err = crate::workload(&spec, &program, 40, 2)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("program l2_acl: map acl not found in the object")
    );
}
