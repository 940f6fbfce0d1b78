//! Hostile objects (issue 30): many programs sharing a long call chain, and tens of thousands of sections. Each input
//! is generated here; each run is bounded by `prlimit --as`, must end with the expected status, and must take at most a
//! bounded multiple of the time of a small input of the same shape.

mod hostile_common;

use std::time::Duration;

use hostile_common::{arg, hwxdp_limited, many_sections, shared_chain, Run, Scratch};

/// Address-space limit of every run, in MiB.
const LIMIT_MIB: u64 = 1024;

/// The fastest of three runs of `hwxdp ARGS` (the small inputs: their time is mostly process start-up and noise).
fn fastest(args: &[&str]) -> Run {
    let mut best: Option<Run> = None;
    for _ in 0..3 {
        let run = hwxdp_limited(LIMIT_MIB, args);
        if best.as_ref().is_none_or(|b| run.elapsed < b.elapsed) {
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

/// The time of `large` is at most `ratio` times that of `small` (plus 0.5 s of slack for a loaded machine).
fn assert_ratio(small: &Run, large: &Run, ratio: u32, what: &str) {
    let bound = small.elapsed * ratio + Duration::from_millis(500);
    eprintln!(
        "{what}: small {:?}, large {:?} (bound {:?})",
        small.elapsed, large.elapsed, bound
    );
    assert!(
        large.elapsed <= bound,
        "{what}: {:?} for the large input, over {ratio} x {:?} for the small one",
        large.elapsed,
        small.elapsed
    );
}

#[test]
fn programs_sharing_a_long_call_chain_link_in_linear_time_and_bounded_memory() {
    let dir = Scratch::new("hostile-object-chain");
    // 10 x 2,000 functions placed against 200 x 20,000: 200 times the linked code.
    let small = dir.write("small.o", &shared_chain(10, 2_000));
    let large = dir.write("large.o", &shared_chain(200, 20_000));
    let small_run = fastest(&["disasm", arg(&small), "--program", "p9"]);
    assert_ok(&small_run, "10 programs x 2,000 functions");
    assert!(
        small_run.stdout.contains("<f1999>:"),
        "{}",
        small_run.stdout
    );
    let large_run = hwxdp_limited(LIMIT_MIB, &["disasm", arg(&large), "--program", "p199"]);
    assert_ok(&large_run, "200 programs x 20,000 functions");
    assert!(
        large_run.stdout.contains("<f19999>:"),
        "the last function of the chain is linked into p199"
    );
    // Linear: 200 times the work; a quadratic scan of the chain would be 2,000 times.
    assert_ratio(&small_run, &large_run, 400, "shared chain");
}

#[test]
fn an_object_whose_programs_link_past_the_limit_is_refused_in_one_line() {
    let dir = Scratch::new("hostile-object-limit");
    // 2,000 programs x 20,000 functions: 80M linked instructions, 1.3 GB of copies.
    let path = dir.write("huge.o", &shared_chain(2_000, 20_000));
    let run = hwxdp_limited(LIMIT_MIB, &["disasm", arg(&path), "--program", "p0"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    assert!(
        lines[0].contains("linked instructions") && lines[0].contains("limit"),
        "{}",
        lines[0]
    );
    assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
}

#[test]
fn sixty_five_thousand_sections_load_in_near_linear_time() {
    let dir = Scratch::new("hostile-object-sections");
    let small = dir.write("small.o", &many_sections(1_000));
    let large = dir.write("large.o", &many_sections(65_000));
    let small_run = fastest(&["disasm", arg(&small), "--program", "s999"]);
    assert_ok(&small_run, "1,000 sections");
    let large_run = hwxdp_limited(LIMIT_MIB, &["disasm", arg(&large), "--program", "s64999"]);
    assert_ok(&large_run, "65,000 sections");
    assert!(
        large_run.stdout.contains("<s64999>:"),
        "{}",
        large_run.stdout
    );
    // 65 times the sections; sections x symbols would be 4,225 times.
    assert_ratio(&small_run, &large_run, 200, "many sections");
}
