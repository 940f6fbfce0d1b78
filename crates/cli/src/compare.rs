//! How a backend's packets, records and maps differ from the kernel's: the words `verify` prints.

use anyhow::{Context, Result};
use hwxdp_backend::{Ran, Record};
use hwxdp_maps::MapStore;

/// How one packet's run on `side` differs from the kernel's: verdict, a fault, packet bytes (`ours` is the packet as
/// `side` left it, metadata first, like the kernel's output).
pub fn packet_problems(side: &str, kernel: &Ran, tested: &Ran) -> Vec<String> {
    let ours = tested.output.as_slice();
    let mut problems = Vec::new();
    if kernel.retval != tested.retval {
        problems.push(format!(
            "verdict: kernel {}, {side} {}",
            kernel.verdict(),
            tested.verdict()
        ));
    }
    if let Some(f) = &tested.fault {
        problems.push(format!("{side} stopped the program: {f}"));
    }
    if kernel.output != ours {
        problems.push(byte_diff(side, &kernel.output, ours));
    }
    problems
}

/// How the records in `theirs` (the kernel's) and `ours` differ, ring buffer by ring buffer and perf event array by
/// perf event array (`rings`: each one's index and name). Perf samples are compared with the CPU they went to.
pub fn ring_problems(
    side: &str,
    rings: &[(usize, String)],
    theirs: &[Record],
    ours: &[Record],
) -> Vec<String> {
    let of = |records: &[Record], map: usize| -> Vec<(Option<u32>, Vec<u8>)> {
        records
            .iter()
            .filter(|r| r.map == map)
            .map(|r| (r.cpu, r.bytes.clone()))
            .collect()
    };
    rings
        .iter()
        .filter_map(|(m, name)| {
            let (a, b) = (of(theirs, *m), of(ours, *m));
            if a.iter().chain(&b).any(|(cpu, _)| cpu.is_some()) {
                perf_problem(side, name, &a, &b)
            } else {
                let bytes =
                    |v: Vec<(Option<u32>, Vec<u8>)>| v.into_iter().map(|r| r.1).collect::<Vec<_>>();
                ringbuf_problem(side, name, &bytes(a), &bytes(b))
            }
        })
        .collect()
}

/// How the samples written to perf event array `map` differ, if they do: (cpu, bytes) each.
pub fn perf_problem(
    side: &str,
    map: &str,
    theirs: &[(Option<u32>, Vec<u8>)],
    ours: &[(Option<u32>, Vec<u8>)],
) -> Option<String> {
    if theirs == ours {
        return None;
    }
    let show = |r: Option<&(Option<u32>, Vec<u8>)>| match r {
        Some((cpu, bytes)) => format!("cpu {} {bytes:02x?}", cpu.unwrap_or(0)),
        None => "none".to_string(),
    };
    let at = (0..theirs.len().max(ours.len()))
        .find(|&i| theirs.get(i) != ours.get(i))
        .unwrap_or(0);
    Some(format!(
        "perf event array {map}: kernel has {} samples, {side} {} (first differing, sample {at}: kernel {}, {side} {})",
        theirs.len(),
        ours.len(),
        show(theirs.get(at)),
        show(ours.get(at)),
    ))
}

/// How the records one packet wrote to ring buffer `map` differ, if they do.
pub fn ringbuf_problem(
    side: &str,
    map: &str,
    theirs: &[Vec<u8>],
    ours: &[Vec<u8>],
) -> Option<String> {
    if theirs == ours {
        return None;
    }
    let first = theirs.iter().zip(ours).find(|(a, b)| a != b);
    Some(format!(
        "ring buffer {map}: kernel has {} records, {side} {} (first differing: kernel {:02x?}, {side} {:02x?})",
        theirs.len(),
        ours.len(),
        first.map(|p| p.0),
        first.map(|p| p.1),
    ))
}

/// Describes how two packets differ.
fn byte_diff(side: &str, kernel: &[u8], ours: &[u8]) -> String {
    let mut out = format!(
        "packet bytes: kernel {} bytes, {side} {} bytes",
        kernel.len(),
        ours.len()
    );
    let diffs: Vec<String> = (0..kernel.len().max(ours.len()))
        .filter(|&i| kernel.get(i) != ours.get(i))
        .take(16)
        .map(|i| {
            let show =
                |b: Option<&u8>| b.map(|b| format!("{b:02x}")).unwrap_or_else(|| "--".into());
            format!("{i}: {} vs {}", show(kernel.get(i)), show(ours.get(i)))
        })
        .collect();
    if !diffs.is_empty() {
        out.push_str(&format!("; differing offsets (kernel vs {side}): "));
        out.push_str(&diffs.join(", "));
    }
    out
}

/// Every entry that differs between the kernel's maps and those of `side`.
pub fn compare_maps(
    side: &str,
    kernel: &mut dyn MapStore,
    ours: &mut dyn MapStore,
) -> Result<Vec<String>> {
    let mut diffs = Vec::new();
    for m in 0..ours.specs().len() {
        let name = ours.specs()[m].name.clone();
        let theirs = kernel
            .entries(m)
            .with_context(|| format!("map {name} (kernel)"))?;
        let mine = ours.entries(m).with_context(|| format!("map {name}"))?;
        let (mut a, mut b) = (theirs.iter().peekable(), mine.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some((ka, va)), Some((kb, vb))) if ka == kb => {
                    if va != vb {
                        diffs.push(format!(
                            "map {name} key {ka:02x?}: kernel {va:02x?}, {side} {vb:02x?}"
                        ));
                    }
                    a.next();
                    b.next();
                }
                (Some((ka, va)), Some((kb, _))) if ka < kb => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, {side} has no entry"
                    ));
                    a.next();
                }
                (Some((ka, va)), None) => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, {side} has no entry"
                    ));
                    a.next();
                }
                (_, Some((kb, vb))) => {
                    diffs.push(format!(
                        "map {name} key {kb:02x?}: kernel has no entry, {side} {vb:02x?}"
                    ));
                    b.next();
                }
            }
            if diffs.len() >= 20 {
                diffs.push("(more differences not shown)".into());
                return Ok(diffs);
            }
        }
    }
    Ok(diffs)
}

/// Packets per second of each port of a multi-port NIC (`--backend ebpflow`: its `port<p>_packets_per_cycle`
/// figures) at each clock, as "port 0 12.34 Mpps, port 1 ... at F MHz; ..."; `None` for other backends.
pub fn port_rates(summary: &hwxdp_backend::Summary, clocks: &[f64]) -> Option<String> {
    let ports: Vec<(String, f64)> = summary
        .figures
        .iter()
        .filter_map(|f| {
            let port = f
                .key
                .strip_prefix("port")?
                .strip_suffix("_packets_per_cycle")?;
            Some((port.to_string(), f.value))
        })
        .collect();
    if ports.is_empty() {
        return None;
    }
    let at: Vec<String> = clocks
        .iter()
        .map(|mhz| {
            let each: Vec<String> = ports
                .iter()
                .map(|(p, ppc)| format!("port {p} {:.2} Mpps", ppc * mhz))
                .collect();
            format!("{} at {mhz} MHz", each.join(", "))
        })
        .collect();
    Some(at.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_backend::{Backend, Options, Packet, Setup};
    use hwxdp_maps::Maps;
    use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
    use hwxdp_xdp::Config;

    fn object(text: &str) -> ObjectSpec {
        let insns = hwxdp_ebpf::assemble(text).expect("assembles");
        ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
    }

    /// Backend `name` for `spec`, created through the registry as `verify --backend name` creates it.
    fn backend(name: &str, spec: &ObjectSpec) -> Box<dyn Backend> {
        let setup = Setup {
            object: std::path::Path::new("t.o"),
            elf: &[],
            spec,
            program: "t",
            config: &Config::default(),
            devices: &[],
            options: &Options::default(),
            notify: None,
        };
        (hwxdp_backend::find(name).expect("registered").create)(&setup).expect("created")
    }

    fn core(spec: &ObjectSpec) -> Box<dyn Backend> {
        backend("hxdp", spec)
    }

    fn frame() -> Vec<u8> {
        (0..64u8).collect()
    }

    fn kernel(retval: u32, output: Vec<u8>) -> Ran {
        Ran {
            retval,
            output,
            ..Ran::default()
        }
    }

    /// Runs `frame()` on `tested` and compares it with what the kernel is said to have done.
    fn problems(tested: &mut Box<dyn Backend>, kernel: &Ran) -> Vec<String> {
        let packet = Packet {
            bytes: frame(),
            ..Packet::default()
        };
        let o = tested.run(&[packet]).expect("runs").remove(0);
        packet_problems(tested.name(), kernel, &o)
    }

    #[test]
    fn core_that_agrees_with_the_kernel_has_no_problems() {
        let mut c = core(&object("r0 = 1\nexit"));
        assert_eq!(problems(&mut c, &kernel(1, frame())), Vec::<String>::new());
    }

    #[test]
    fn core_verdict_unlike_the_kernels_is_reported_as_hxdp() {
        let mut c = core(&object("r0 = 1\nexit"));
        assert_eq!(
            problems(&mut c, &kernel(2, frame())),
            vec!["verdict: kernel XDP_PASS, hxdp XDP_DROP".to_string()]
        );
    }

    #[test]
    fn core_fault_is_reported_with_its_reason() {
        // Reads far past the end of the context: the core stops the program, the kernel is said to have passed it.
        let mut c = core(&object("r0 = *(u32 *)(r1 + 4000)\nexit"));
        let found = problems(&mut c, &kernel(2, frame()));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], "verdict: kernel XDP_PASS, hxdp XDP_ABORTED");
        assert!(
            found[1].starts_with("hxdp stopped the program: "),
            "{found:?}"
        );
    }

    #[test]
    fn reference_machine_keeps_its_name_in_reports() {
        let spec = object("r0 = 1\nexit");
        let mut m = backend("interp", &spec);
        assert_eq!(
            problems(&mut m, &kernel(3, frame())),
            vec!["verdict: kernel XDP_TX, interp XDP_DROP".to_string()]
        );
    }

    #[test]
    fn differing_bytes_are_listed_by_offset() {
        let mut theirs = frame();
        theirs[3] = 0xff;
        theirs.push(7);
        let tested = kernel(2, frame());
        let found = packet_problems("hxdp", &kernel(2, theirs), &tested);
        assert_eq!(
            found,
            vec![
                "packet bytes: kernel 65 bytes, hxdp 64 bytes; differing offsets (kernel vs hxdp): \
                 3: ff vs 03, 64: 07 vs --"
                    .to_string()
            ]
        );
    }

    #[test]
    fn ring_buffer_records_are_compared() {
        let a = vec![vec![1u8, 2], vec![3]];
        let b = vec![vec![1u8, 2], vec![4]];
        assert_eq!(ringbuf_problem("hxdp", "events", &a, &a), None);
        assert_eq!(
            ringbuf_problem("hxdp", "events", &a, &b).as_deref(),
            Some(
                "ring buffer events: kernel has 2 records, hxdp 2 \
                 (first differing: kernel Some([03]), hxdp Some([04]))"
            )
        );
    }

    #[test]
    fn map_entries_that_differ_or_are_missing_are_listed() {
        let specs = [MapSpec::new("flows", 1, 4, 4, 8)];
        let mut theirs = Maps::new(&specs, 1).expect("maps");
        let mut ours = Maps::new(&specs, 1).expect("maps");
        theirs.update(0, &[1, 0, 0, 0], &[5, 0, 0, 0], 0).unwrap();
        ours.update(0, &[1, 0, 0, 0], &[6, 0, 0, 0], 0).unwrap();
        theirs.update(0, &[2, 0, 0, 0], &[7, 0, 0, 0], 0).unwrap();
        ours.update(0, &[3, 0, 0, 0], &[8, 0, 0, 0], 0).unwrap();
        assert_eq!(
            compare_maps("hxdp", &mut theirs, &mut ours).expect("compares"),
            vec![
                "map flows key [01, 00, 00, 00]: kernel [05, 00, 00, 00], hxdp [06, 00, 00, 00]",
                "map flows key [02, 00, 00, 00]: kernel [07, 00, 00, 00], hxdp has no entry",
                "map flows key [03, 00, 00, 00]: kernel has no entry, hxdp [08, 00, 00, 00]",
            ]
        );
        assert!(compare_maps("hxdp", &mut theirs.clone(), &mut theirs)
            .expect("compares")
            .is_empty());
    }
}
