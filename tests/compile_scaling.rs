//! The compilers scale (issue 30): `compile --target hxdp`, `ehdl` and `warp` on generated programs of 2,000 and 8,000
//! instructions, straight-line and branchy (`hostile_common::generated_program`). Each large compile must succeed and
//! take at most 8 times the CPU time of the small one (plus start-up noise): four times the instructions, so a pass
//! comparing every pair of ops or blocks (16 times) fails it. A branchy program over hXDP's 16-bit bundle index is
//! refused before the passes run. `scripts/compile-scaling.sh` measures the sizes up to 1M instructions.

mod hostile_common;

use std::time::Duration;

use hostile_common::{arg, generated_program, hwxdp_limited, Run, Scratch, Shape};

/// Address-space limit of every run, in MiB.
const LIMIT_MIB: u64 = 2048;

/// The smaller program; the larger has four times as many instructions.
const SMALL: usize = 2_000;

fn compile(object: &std::path::Path, target: &str, out: &std::path::Path) -> Run {
    hwxdp_limited(
        LIMIT_MIB,
        &["compile", arg(object), "--target", target, "-o", arg(out)],
    )
}

fn assert_compiled(run: &Run, what: &str) {
    assert_eq!(
        run.code,
        Some(0),
        "{what}: exit {:?}\n{:.2000}",
        run.code,
        run.stderr
    );
}

/// Compiles `shape` at [`SMALL`] (the fastest of two runs) and four times that for `target`.
fn check_growth(target: &str, shape: Shape) {
    let dir = Scratch::new(&format!("compile-scaling-{target}-{shape:?}"));
    let small = dir.write("small.o", &generated_program(SMALL, shape));
    let large = dir.write("large.o", &generated_program(4 * SMALL, shape));
    let out = dir.0.join("out");
    let what = format!("{target}, {shape:?}");
    let mut small_run = compile(&small, target, &out);
    assert_compiled(&small_run, &format!("{what}, {SMALL} instructions"));
    let again = compile(&small, target, &out);
    if again.cpu < small_run.cpu {
        small_run = again;
    }
    let large_run = compile(&large, target, &out);
    assert_compiled(&large_run, &format!("{what}, {} instructions", 4 * SMALL));
    let bound = small_run.cpu * 8 + Duration::from_millis(300);
    eprintln!(
        "{what}: {:?} CPU for {SMALL}, {:?} for {} (bound {bound:?}), {} MiB peak",
        small_run.cpu,
        large_run.cpu,
        4 * SMALL,
        large_run.max_rss_kib >> 10
    );
    assert!(
        large_run.cpu <= bound,
        "{what}: {:?} CPU for {} instructions, over 8 x {:?} for {SMALL}",
        large_run.cpu,
        4 * SMALL,
        small_run.cpu
    );
}

#[test]
fn hxdp_compile_time_grows_near_linearly() {
    check_growth("hxdp", Shape::Straight);
    check_growth("hxdp", Shape::Branchy);
}

#[test]
fn ehdl_compile_time_grows_near_linearly() {
    check_growth("ehdl", Shape::Straight);
    check_growth("ehdl", Shape::Branchy);
}

#[test]
fn warp_compile_time_grows_near_linearly() {
    check_growth("warp", Shape::Straight);
    check_growth("warp", Shape::Branchy);
}

/// 240,000 branchy instructions make 78,000 diamonds, each join a bundle of its own: over the 65,535 a bundle index
/// reaches. The refusal comes from a count on the control-flow graph before the passes, so it takes at most 10 times
/// the CPU of compiling the 2,000-instruction program of the same shape (3.3 times here), not the passes' time on 120
/// times as many instructions (86 times at 200,000 before the count).
#[test]
fn hxdp_refuses_a_program_over_the_bundle_index_before_the_passes() {
    let dir = Scratch::new("compile-scaling-hxdp-refusal");
    let small = dir.write("small.o", &generated_program(SMALL, Shape::Branchy));
    let large = dir.write("large.o", &generated_program(240_000, Shape::Branchy));
    let out = dir.0.join("out");
    let small_run = compile(&small, "hxdp", &out);
    assert_compiled(&small_run, "hxdp, branchy, 2000 instructions");
    let refused = compile(&large, "hxdp", &out);
    eprintln!(
        "hxdp refusal: {:?} CPU for 240000 instructions, {:?} for {SMALL} compiled, {} MiB peak",
        refused.cpu,
        small_run.cpu,
        refused.max_rss_kib >> 10
    );
    assert_eq!(
        refused.code,
        Some(2),
        "exit {:?}\n{:.2000}",
        refused.code,
        refused.stderr
    );
    let lines: Vec<&str> = refused.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", refused.stderr);
    assert!(
        lines[0].contains("program prog: at least 78") && lines[0].contains("more than the 65535"),
        "{}",
        lines[0]
    );
    let bound = small_run.cpu * 10 + Duration::from_millis(300);
    assert!(
        refused.cpu <= bound,
        "refused after {:?} CPU, over {bound:?}",
        refused.cpu
    );
}
