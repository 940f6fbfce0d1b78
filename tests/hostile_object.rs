//! Hostile objects (issue 30): many programs sharing thousands of callees, and tens of thousands of sections. Each
//! input is generated here; each run is bounded by `prlimit --as`, must end with the expected status, must take at
//! most a bounded multiple of the CPU time of a small input of the same shape, and must stay under a peak memory.
//!
//! The shape (200 programs sharing a 20,000-function chain) is a hub here: the kernel allows a call depth of
//! 8, so a chain of 20,000 cannot run, while a hub calling 20,000 leaves can; the linker's work is the same (every
//! program holds 20,001 callees). The runs ask `hwxdp disasm` for a program the object does not have: it loads and
//! links the whole object, then exits 2 naming the programs, so what is timed is the loading (a listing of 20,001
//! functions would time the listing).

mod hostile_common;

use std::time::Duration;

use hostile_common::{arg, hwxdp_limited, many_sections, shared_callees, Run, Scratch};

/// Address-space limit of every run, in MiB.
const LIMIT_MIB: u64 = 1024;

/// The fastest of three runs of `hwxdp ARGS` (the small inputs: their time is mostly process start-up and noise).
fn fastest(args: &[&str]) -> Run {
    let mut best: Option<Run> = None;
    for _ in 0..3 {
        let run = hwxdp_limited(LIMIT_MIB, args);
        if best.as_ref().is_none_or(|b| run.cpu < b.cpu) {
            best = Some(run);
        }
    }
    best.expect("three runs")
}

fn assert_ok(run: &Run, what: &str) {
    assert_eq!(
        run.code,
        Some(0),
        "{what}: exit {:?}\n{}",
        run.code,
        run.stderr
    );
}

/// The CPU time of `large` is at most `ratio` times that of `small` (plus 0.2 s for start-up noise), and its peak
/// memory at most `max_mib`.
fn assert_bounds(small: &Run, large: &Run, ratio: u32, max_mib: u64, what: &str) {
    let bound = small.cpu * ratio + Duration::from_millis(200);
    eprintln!(
        "{what}: small {:?} CPU, large {:?} CPU (bound {:?}), {} MiB peak",
        small.cpu,
        large.cpu,
        bound,
        large.max_rss_kib >> 10
    );
    assert!(
        large.cpu <= bound,
        "{what}: {:?} for the large input, over {ratio} x {:?} for the small one",
        large.cpu,
        small.cpu
    );
    assert!(
        large.max_rss_kib >> 10 <= max_mib,
        "{what}: {} MiB peak, over {max_mib} MiB",
        large.max_rss_kib >> 10
    );
}

/// `hwxdp disasm OBJECT --program nosuch`: the whole object loaded and linked, then refused naming its programs.
fn load_only(object: &std::path::Path) -> Run {
    hwxdp_limited(LIMIT_MIB, &["disasm", arg(object), "--program", "nosuch"])
}

/// The run loaded the object and listed its programs, `last` among them.
fn assert_loaded(run: &Run, last: &str, what: &str) {
    assert_eq!(run.code, Some(2), "{what}: {:.2000}", run.stderr);
    assert!(
        run.stderr.contains("no program \"nosuch\"")
            && run.stderr.contains(&format!("{last} in xdp")),
        "{what}: {:.2000}",
        run.stderr
    );
}

#[test]
fn programs_sharing_twenty_thousand_callees_link_in_linear_time_and_bounded_memory() {
    let dir = Scratch::new("hostile-object-callees");
    // 20 x 4,000 callees placed against 200 x 20,000: 50 times the linked code.
    let small = dir.write("small.o", &shared_callees(20, 4_000));
    let large = dir.write("large.o", &shared_callees(200, 20_000));
    let mut small_run = load_only(&small);
    for _ in 0..2 {
        let again = load_only(&small);
        if again.cpu < small_run.cpu {
            small_run = again;
        }
    }
    assert_loaded(&small_run, "p19", "20 programs x 4,000 callees");
    let large_run = load_only(&large);
    assert_loaded(&large_run, "p199", "200 programs x 20,000 callees");
    // Linear: 50 times the work (81 x measured: the small run is mostly start-up, the large one allocates 448 MiB);
    // a scan of the callees per call would be 250 times.
    assert_bounds(&small_run, &large_run, 150, 600, "shared callees");
}

#[test]
fn an_object_whose_programs_link_past_the_limit_is_refused_in_one_line() {
    let dir = Scratch::new("hostile-object-limit");
    // 2,000 programs x 20,000 callees: 40M function copies, 80M linked instructions.
    let path = dir.write("huge.o", &shared_callees(2_000, 20_000));
    let run = load_only(&path);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    assert!(
        lines[0].contains("linked functions together") && lines[0].contains("over the limit of"),
        "{}",
        lines[0]
    );
    assert!(
        run.max_rss_kib >> 10 <= 600,
        "{} MiB",
        run.max_rss_kib >> 10
    );
}

#[test]
fn sixty_five_thousand_sections_load_in_near_linear_time() {
    let dir = Scratch::new("hostile-object-sections");
    let small = dir.write("small.o", &many_sections(6_500));
    let large = dir.write("large.o", &many_sections(65_000));
    let small_run = fastest(&["disasm", arg(&small), "--program", "s6499"]);
    // (disasm prints two lines here: its listing's cost does not enter.)
    assert_ok(&small_run, "6,500 sections");
    let large_run = hwxdp_limited(LIMIT_MIB, &["disasm", arg(&large), "--program", "s64999"]);
    assert_ok(&large_run, "65,000 sections");
    assert!(
        large_run.stdout.contains("<s64999>:"),
        "{}",
        large_run.stdout
    );
    // 10 times the sections; sections x symbols would be 100 times.
    assert_bounds(&small_run, &large_run, 30, 300, "many sections");
}
