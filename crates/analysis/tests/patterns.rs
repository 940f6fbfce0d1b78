//! Bounds-check and stack-zeroing recognition, including the cases that must not be recognised.

mod common;

use common::cfg;
use hwxdp_analysis::{BoundsCheck, BranchSide, CheckedArea, FuncId, InsnId, Patterns, Regions};

fn patterns(text: &str) -> Patterns {
    let prog = cfg(text);
    let regions = Regions::compute(&prog, &[]);
    Patterns::compute(&prog, &regions)
}

/// The bounds checks of a program that loads data into r2 and data_end into r3, then runs `body`.
fn checks(body: &str) -> Vec<BoundsCheck> {
    let text = format!(
        "r2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\n{body}\nr0 = 2\nexit\ndrop:\nr0 = 1\nexit"
    );
    patterns(&text).bounds_checks
}

fn one(body: &str) -> BoundsCheck {
    let found = checks(body);
    assert_eq!(found.len(), 1, "{body}: {found:?}");
    found[0]
}

#[test]
fn data_plus_n_greater_than_data_end() {
    let c = one("r4 = r2\nr4 += 14\nif r4 > r3 goto drop");
    assert_eq!(c.insn, InsnId(4));
    assert_eq!(
        (c.n, c.variable, c.fail, c.ensured),
        (14, false, BranchSide::Taken, 14)
    );
    assert_eq!((c.pointer, c.limit, c.area), (4, 3, CheckedArea::Packet));
}

#[test]
fn comparison_variants() {
    let c = one("r4 = r2\nr4 += 20\nif r4 >= r3 goto drop");
    assert_eq!((c.n, c.fail, c.ensured), (20, BranchSide::Taken, 21));
    // `if data + N <= data_end goto ok`: the fallthrough is the failure.
    let c = one("r4 = r2\nr4 += 20\nif r4 <= r3 goto ok\ngoto drop\nok:");
    assert_eq!((c.n, c.fail, c.ensured), (20, BranchSide::Fallthrough, 20));
    let c = one("r4 = r2\nr4 += 20\nif r4 < r3 goto ok\ngoto drop\nok:");
    assert_eq!((c.n, c.fail, c.ensured), (20, BranchSide::Fallthrough, 21));
    // Reversed operands: `data_end < data + N` is `data + N > data_end`.
    let c = one("r4 = r2\nr4 += 8\nif r3 < r4 goto drop");
    assert_eq!(
        (c.n, c.pointer, c.limit, c.fail),
        (8, 4, 3, BranchSide::Taken)
    );
    let c = one("r4 = r2\nr4 += 8\nif r3 >= r4 goto ok\ngoto drop\nok:");
    assert_eq!((c.n, c.fail, c.ensured), (8, BranchSide::Fallthrough, 8));
    // The 32-bit form clang emits with alu32.
    let c = one("r4 = r2\nr4 += 34\nif w4 > w3 goto drop");
    assert_eq!((c.n, c.fail), (34, BranchSide::Taken));
}

#[test]
fn pointers_derived_by_adds_and_variable_offsets() {
    let c = one("r4 = r2\nr4 += 14\nr5 = r4\nr5 += 20\nr6 = r5\nif r6 > r3 goto drop");
    assert_eq!((c.n, c.variable, c.pointer), (34, false, 6));
    // data + (ihl * 4) + 8: the header length is only known at run time.
    let c = one("r4 = *(u8 *)(r2 + 14)\nr4 &= 15\nr4 <<= 2\nr5 = r2\nr5 += r4\nr5 += 8\nif r5 > r3 goto drop");
    assert_eq!((c.n, c.variable), (8, true));
    // Constants added through a register.
    let c = one("r4 = 6\nr5 = r2\nr5 += r4\nif r5 > r3 goto drop");
    assert_eq!((c.n, c.variable), (6, false));
}

#[test]
fn metadata_checks_compare_against_data() {
    let text = "
        r2 = *(u32 *)(r1 + 8)
        r3 = *(u32 *)(r1 + 0)
        r4 = r2
        r4 += 4
        if r4 > r3 goto drop
        r0 = 2
        exit
    drop:
        r0 = 1
        exit
    ";
    let found = patterns(text).bounds_checks;
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].area, found[0].n), (CheckedArea::Meta, 4));
}

#[test]
fn compares_that_are_not_bounds_checks() {
    // Against a register that holds no packet pointer.
    assert!(checks("r4 = 14\nif r4 > r3 goto drop").is_empty());
    assert!(checks("r4 = r10\nr4 += -8\nif r4 > r3 goto drop").is_empty());
    // data + N against something that is not data_end.
    assert!(checks("r4 = r2\nr4 += 14\nr5 = 100\nif r4 > r5 goto drop").is_empty());
    assert!(checks("r4 = r2\nr4 += 14\nr5 = r2\nif r4 > r5 goto drop").is_empty());
    assert!(checks("r4 = r2\nr4 += 14\nr5 = r3\nr5 += -1\nif r4 > r5 goto drop").is_empty());
    // Against an immediate, or with a condition that checks no length.
    assert!(checks("r4 = r2\nr4 += 14\nif r4 > 100 goto drop").is_empty());
    assert!(checks("r4 = r2\nr4 += 14\nif r4 == r3 goto drop").is_empty());
    // data_end reloaded as a plain scalar after a helper clobbered r3.
    assert!(checks("r4 = r2\nr4 += 14\ncall 7\nif r4 > r3 goto drop").is_empty());
}

#[test]
fn runs_of_zero_stores_to_the_stack() {
    let found = patterns(
        "
        r1 = 0
        *(u64 *)(r10 - 8) = r1
        *(u64 *)(r10 - 16) = r1
        r2 = 5
        *(u32 *)(r10 - 20) = 0
        *(u64 *)(r10 - 32) = r2       ; not zero: ends the run
        *(u8 *)(r10 - 40) = 0
        r0 = 0
        exit
    ",
    )
    .zero_runs;
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].stores, vec![InsnId(1), InsnId(2), InsnId(4)]);
    assert_eq!(
        (found[0].lo, found[0].hi, found[0].frame),
        (-20, 0, FuncId(0))
    );
    assert_eq!(found[1].stores, vec![InsnId(6)]);
    assert_eq!((found[1].lo, found[1].hi), (-40, -39));
}

#[test]
fn registers_known_zero_by_folding_fills_and_compares() {
    let found = patterns(
        "
        r6 = r1
        r1 = 5
        r1 -= 5
        *(u64 *)(r10 - 8) = r1
        r2 = *(u32 *)(r10 - 4)
        *(u32 *)(r10 - 24) = r2
        r3 = *(u32 *)(r6 + 16)
        if r3 != 0 goto out
        *(u32 *)(r10 - 16) = r3
    out:
        r0 = 0
        exit
    ",
    )
    .zero_runs;
    let stores: Vec<Vec<InsnId>> = found.iter().map(|r| r.stores.clone()).collect();
    assert_eq!(
        stores,
        vec![vec![InsnId(3)], vec![InsnId(5)], vec![InsnId(8)]]
    );
}

#[test]
fn stores_that_are_not_zeroing() {
    let none = |text: &str| patterns(text).zero_runs.is_empty();
    // A non-zero value.
    assert!(none("*(u64 *)(r10 - 8) = 1\nr0 = 0\nexit"));
    assert!(none("r1 = 3\n*(u64 *)(r10 - 8) = r1\nr0 = 0\nexit"));
    // A register that is not known to be zero.
    assert!(none(
        "r1 = *(u32 *)(r1 + 12)\n*(u64 *)(r10 - 8) = r1\nr0 = 0\nexit"
    ));
    // Zero, but not to the stack.
    assert!(none(
        "r2 = *(u32 *)(r1 + 0)\n*(u8 *)(r2 + 0) = 0\nr0 = 0\nexit"
    ));
    // Zero on one path only.
    assert!(none(
        "r2 = 0\nif r1 == 0 goto s\nr2 = 1\ns: *(u64 *)(r10 - 8) = r2\nr0 = 0\nexit"
    ));
}
