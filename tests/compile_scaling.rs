//! The compilers scale (issue 30): `compile --target hxdp`, `ehdl` and `warp` on generated programs of 2,000 and 8,000
//! instructions, straight-line and branchy (`hostile_common::generated_program`). Each large compile must succeed and
//! take at most 8 times the CPU time of the small one (plus start-up noise): four times the instructions, so a pass
//! comparing every pair of ops or blocks (16 times) fails it. `scripts/compile-scaling.sh` measures the sizes up to
//! 1M instructions.

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
