//! Each pass on small hand-written programs: where it fires, and where it must not.

use hwxdp_hxdp::compile::{optimize, schedule};
use hwxdp_hxdp::ir::IrProgram;
use hwxdp_hxdp::isa::{EXIT_IMM, LDX6, STX6};
use hwxdp_hxdp::{compile_object, Options, Pass};

mod common;

use common::object;

/// The working form after only `pass` (every other pass off).
fn only(text: &str, pass: Pass) -> IrProgram {
    let disabled = Pass::ALL.into_iter().filter(|&p| p != pass).collect();
    let options = Options { lanes: 4, disabled };
    optimize(&object(text), 0, &options).expect("compiles").0
}

fn ops(ir: &IrProgram) -> Vec<hwxdp_hxdp::Op> {
    ir.blocks
        .iter()
        .flat_map(|b| b.ops.iter().map(|o| o.op))
        .collect()
}

const CHECKED_READ: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 20
    if r4 > r3 goto drop
    r0 = *(u32 *)(r2 + 16)
    exit
drop:
    r0 = 1
    exit
";

#[test]
fn bounds_check_before_the_read_it_guards_is_removed() {
    let ir = only(CHECKED_READ, Pass::Bounds);
    let ops = ops(&ir);
    assert!(
        !ops.iter().any(|o| o.is_cond_jump()),
        "the check stays: {ops:?}"
    );
    let load = ops
        .iter()
        .find(|o| o.is_load() && o.off == 16)
        .expect("the read");
    assert_eq!(
        load.fault_verdict(),
        Some(1),
        "out of packet must drop as the check did"
    );
    // The pointer arithmetic that only fed the check is gone too.
    assert!(!ops.iter().any(|o| o.is_alu() && o.imm == 20));
}

#[test]
fn removed_bounds_check_keeps_the_verdicts_of_short_packets() {
    common::agrees_on_lengths(CHECKED_READ, 14..=26, |i| i as u8);
}

#[test]
fn bounds_check_not_ending_at_the_read_becomes_a_probe_of_its_last_byte() {
    // The read ends at byte 17, the check guards 20: a one-byte load of byte 19 carrying the verdict replaces the
    // check, and an 18-byte packet still drops.
    let text = CHECKED_READ.replace("r0 = *(u32 *)(r2 + 16)", "r0 = *(u8 *)(r2 + 16)");
    let ops = ops(&only(&text, Pass::Bounds));
    assert!(!ops.iter().any(|o| o.is_cond_jump()), "{ops:?}");
    let probe = ops
        .iter()
        .find(|o| o.fault_verdict().is_some())
        .expect("a probe");
    assert_eq!(
        (probe.access_size(), probe.off, probe.fault_verdict()),
        (1, 19, Some(1))
    );
    agrees_with_machine(&text, &(14..=26).collect::<Vec<_>>());
}

#[test]
fn bounds_check_of_the_ethernet_header_goes_without_a_probe() {
    // Every frame has 14 bytes: the check cannot fail, and nothing takes its place.
    let text = CHECKED_READ
        .replace("r4 += 20", "r4 += 14")
        .replace("r0 = *(u32 *)(r2 + 16)", "r0 = *(u8 *)(r2 + 12)");
    let ops = ops(&only(&text, Pass::Bounds));
    assert!(!ops.iter().any(|o| o.is_cond_jump()), "{ops:?}");
    assert!(ops.iter().all(|o| o.fault_verdict().is_none()), "{ops:?}");
    agrees_with_machine(&text, &(14..=20).collect::<Vec<_>>());
}

#[test]
fn bounds_check_is_carried_by_every_load_up_to_its_last_byte() {
    // clang reads the ethertype byte by byte: both loads carry the verdict, the second ends at the checked byte.
    let text = "
        r2 = *(u32 *)(r1 + 0)
        r3 = *(u32 *)(r1 + 4)
        r0 = 1
        r4 = r2
        r4 += 24
        if r4 > r3 goto out
        r5 = *(u8 *)(r2 + 22)
        r6 = *(u8 *)(r2 + 23)
        r6 <<= 8
        r6 |= r5
        r0 = 2
        if r6 != 8 goto out
        r0 = 3
    out:
        exit
    ";
    let ops = ops(&only(text, Pass::Bounds));
    let checked: Vec<_> = ops.iter().filter_map(|o| o.fault_verdict()).collect();
    assert_eq!(checked, vec![1, 1], "{ops:?}");
    assert_eq!(ops.iter().filter(|o| o.is_cond_jump()).count(), 1);
    agrees_with_machine(text, &(14..=30).collect::<Vec<_>>());
}

#[test]
fn bounds_check_with_variable_offset_stays() {
    let text = "
        r2 = *(u32 *)(r1 + 0)
        r3 = *(u32 *)(r1 + 4)
        r5 = *(u8 *)(r2 + 0)
        r5 &= 15
        r2 += r5
        r4 = r2
        r4 += 20
        if r4 > r3 goto drop
        r0 = *(u32 *)(r2 + 16)
        exit
    drop:
        r0 = 1
        exit
    ";
    let ops = ops(&only(text, Pass::Bounds));
    assert_eq!(ops.iter().filter(|o| o.is_cond_jump()).count(), 1);
}

#[test]
fn bounds_check_whose_failure_side_does_more_than_return_stays() {
    let text = CHECKED_READ.replace(
        "drop:\n    r0 = 1",
        "drop:\n    *(u32 *)(r10 - 4) = 7\n    r0 = 1",
    );
    let ops = ops(&only(&text, Pass::Bounds));
    assert!(ops.iter().any(|o| o.is_cond_jump()));
}

#[test]
fn zeroing_of_a_fresh_stack_slot_is_removed() {
    let text = "
        *(u64 *)(r10 - 8) = 0
        r0 = *(u64 *)(r10 - 8)
        exit
    ";
    let ops = ops(&only(text, Pass::Zeroing));
    assert!(!ops.iter().any(|o| o.is_store()), "{ops:?}");
}

#[test]
fn store_of_a_non_zero_value_is_not_zeroing() {
    let text = "
        *(u64 *)(r10 - 8) = 5
        r0 = *(u64 *)(r10 - 8)
        exit
    ";
    let ops = ops(&only(text, Pass::Zeroing));
    assert_eq!(ops.iter().filter(|o| o.is_store()).count(), 1);
}

#[test]
fn zeroing_after_a_store_to_the_same_slot_stays() {
    let text = "
        *(u64 *)(r10 - 8) = 5
        r0 = *(u64 *)(r10 - 8)
        *(u64 *)(r10 - 8) = 0
        r1 = *(u64 *)(r10 - 8)
        r0 += r1
        exit
    ";
    let ops = ops(&only(text, Pass::Zeroing));
    assert_eq!(ops.iter().filter(|o| o.is_store()).count(), 2);
}

#[test]
fn move_then_add_becomes_three_operand() {
    let text = "
        r1 = 3
        r2 = r1
        r2 += 4
        r0 = r2
        exit
    ";
    let ops = ops(&only(text, Pass::ThreeOperand));
    let add = ops
        .iter()
        .find(|o| o.is_alu() && o.imm == 4)
        .expect("the add");
    assert_eq!((add.dst, add.a), (2, Some(1)));
    assert_eq!(ops.len(), 4);
}

#[test]
fn narrow_move_then_wide_add_is_not_fused() {
    // w2 = w1 zero-extends before the 64-bit add; a fused add would see r1's upper half.
    let text = "
        r1 = -1
        w2 = w1
        r2 += 4
        r0 = r2
        exit
    ";
    let ops = ops(&only(text, Pass::ThreeOperand));
    assert!(ops.iter().all(|o| o.a.is_none()));
}

const MAC_COPY: &str = "
    r2 = *(u32 *)(r10 - 16)
    r3 = *(u16 *)(r10 - 12)
    *(u32 *)(r10 - 8) = r2
    *(u16 *)(r10 - 4) = r3
    r0 = 2
    exit
";

#[test]
fn four_and_two_byte_copy_becomes_six_byte() {
    let ops = ops(&only(MAC_COPY, Pass::SixByte));
    assert_eq!(ops[0].code, LDX6);
    assert_eq!(ops[1].code, STX6);
    assert_eq!(ops.len(), 4);
}

#[test]
fn copy_whose_halves_are_used_later_is_not_fused() {
    let text = MAC_COPY.replace("r0 = 2", "r0 = r3");
    let ops = ops(&only(&text, Pass::SixByte));
    assert!(ops.iter().all(|o| o.code != LDX6 && o.code != STX6));
}

#[test]
fn move_to_r0_then_exit_becomes_parametrized_exit() {
    let ops = ops(&only("r0 = 2\nexit\n", Pass::Exit));
    assert_eq!(ops.len(), 1);
    assert_eq!((ops[0].code, ops[0].imm), (EXIT_IMM, 2));
}

#[test]
fn exit_of_a_computed_r0_is_not_parametrized() {
    let ops = ops(&only("r0 = *(u32 *)(r1 + 12)\nexit\n", Pass::Exit));
    assert!(ops.iter().all(|o| o.code != EXIT_IMM));
}

#[test]
fn scheduler_packs_independent_ops_and_forwards_on_the_same_lane() {
    let text = "
        r2 = 1
        r3 = 2
        r4 = 3
        r3 += 5
        r0 = 0
        exit
    ";
    let options = Options {
        lanes: 4,
        disabled: vec![Pass::Exit],
    };
    let (ir, _) = optimize(&object(text), 0, &options).expect("compiles");
    let rows = schedule(&ir, &options);
    let rows = &rows[0];
    assert_eq!(rows.len(), 2, "{rows:?}");
    let lane_of = |row: usize, imm: i64| {
        rows[row]
            .lanes
            .iter()
            .position(|s| matches!(s, hwxdp_hxdp::sched::Slot::Op(o) if o.op.imm == imm))
    };
    // r3 = 2 in bundle 0 feeds r3 += 5 in bundle 1 on the same lane.
    assert_eq!(lane_of(0, 2), lane_of(1, 5));
}

#[test]
fn at_most_one_helper_call_per_bundle() {
    let text = "
        call 7
        r6 = r0
        call 7
        r0 += r6
        exit
    ";
    let options = Options::default();
    let (ir, _) = optimize(&object(text), 0, &options).expect("compiles");
    let rows = schedule(&ir, &options);
    for row in &rows[0] {
        let calls = row
            .lanes
            .iter()
            .filter(|s| matches!(s, hwxdp_hxdp::sched::Slot::Op(o) if o.op.is_helper_call()))
            .count();
        assert!(calls <= 1);
    }
}

/// Rows of every block when only `on` runs, and when nothing runs.
fn bundles_with_and_without(text: &str, on: Pass) -> (usize, usize) {
    let count = |disabled: Vec<Pass>| {
        let options = Options { lanes: 4, disabled };
        let (ir, _) = optimize(&object(text), 0, &options).expect("compiles");
        schedule(&ir, &options).iter().map(Vec::len).sum::<usize>()
    };
    let all = Pass::ALL.to_vec();
    let others = Pass::ALL.into_iter().filter(|&p| p != on).collect();
    (count(others), count(all))
}

/// The verdict of the compiled program (default options) equals the reference machine's on packets of each length.
fn agrees_with_machine(text: &str, lengths: &[usize]) {
    common::agrees_on_lengths(text, lengths.iter().copied(), |i| i as u8);
}

/// The definition of op `origin` (an ALU op with immediate `imm`) in the first block: its destination register.
fn destination(ir: &IrProgram, origin: u32, imm: i64) -> u8 {
    ir.blocks[0]
        .ops
        .iter()
        .find(|o| o.op.is_alu() && o.op.imm == imm && o.origin == origin)
        .map(|o| o.op.dst)
        .expect("definition")
}

#[test]
fn renaming_removes_a_false_dependence_and_leaves_what_exit_reads_in_r0() {
    // `r0 = 2` must wait for `r0 = 1` (write after write) unless the first value, which only feeds r6, moves.
    let text = "
        r0 = 1
        r6 = r0
        r0 = 2
        exit
    ";
    let (renamed, plain) = bundles_with_and_without(text, Pass::Rename);
    assert!(renamed < plain, "{renamed} bundles renamed, {plain} not");
    let ir = only(text, Pass::Rename);
    assert_ne!(destination(&ir, 0, 1), 0, "the copied value stayed in r0");
    assert_eq!(destination(&ir, 2, 2), 0, "exit's value left r0");
    agrees_with_machine(text, &[14]);
}

#[test]
fn renaming_leaves_values_that_live_into_other_blocks() {
    let text = "
        r2 = 1
        r6 = r2
        r2 = 2
        r0 = 0
        if r6 == 1 goto same
        r0 = r2
        exit
    same:
        exit
    ";
    let ir = only(text, Pass::Rename);
    assert_eq!(
        destination(&ir, 2, 2),
        2,
        "a value read in the next block moved"
    );
    agrees_with_machine(text, &[14]);
}

#[test]
fn renaming_never_picks_a_register_a_call_clobbers_while_the_value_lives() {
    let text = "
        r6 = 1
        r7 = r6
        call 7
        r6 = 2
        r0 = r7
        r0 += r6
        exit
    ";
    let ir = only(text, Pass::Rename);
    let ops = &ir.blocks[0].ops;
    let call = ops
        .iter()
        .position(|o| o.op.is_helper_call())
        .expect("call");
    for o in &ops[..call] {
        if o.op.is_alu() {
            assert!(
                o.op.dst >= 6,
                "a value living across the call sits in r{}",
                o.op.dst
            );
        }
    }
    agrees_with_machine(text, &[14]);
}

/// A diamond: both sides set r4, then the join computes r5 from constants and returns r4 + r5.
const DIAMOND: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r2 += 20
    if r2 > r3 goto short
    r4 = 1
    goto join
short:
    r4 = 0
join:
    r5 = 1
    r5 >>= 1
    r0 = r4
    r0 += r5
    exit
";

#[test]
fn code_motion_fills_the_branching_block_from_the_join() {
    let (moved, plain) = bundles_with_and_without(DIAMOND, Pass::CodeMotion);
    assert!(
        moved < plain,
        "{moved} bundles with code motion, {plain} without"
    );
    let ir = only(DIAMOND, Pass::CodeMotion);
    let entry = &ir.blocks[0].ops;
    assert!(
        entry.iter().any(|o| o.op.is_alu() && o.op.dst == 5),
        "r5's computation did not move into the first block: {entry:?}"
    );
    // It sits before the branch.
    assert!(entry.last().expect("ops").op.is_cond_jump());
    agrees_with_machine(DIAMOND, &[14, 60]);
}

#[test]
fn code_motion_leaves_ops_whose_register_a_side_writes() {
    let text = DIAMOND.replace("    r4 = 0\n", "    r4 = 0\n    r5 = 3\n");
    let ir = only(&text, Pass::CodeMotion);
    assert!(
        !ir.blocks[0]
            .ops
            .iter()
            .any(|o| o.op.dst == 5 && o.op.is_alu()),
        "moved above a write on one side"
    );
    agrees_with_machine(&text, &[14, 60]);
}

#[test]
fn code_motion_leaves_loads_that_a_side_may_change() {
    // The join reads a stack slot one side writes.
    let text = DIAMOND
        .replace("    r4 = 0\n", "    r4 = 0\n    *(u64 *)(r10 - 8) = r4\n")
        .replace("    r5 = 1\n", "    r5 = *(u64 *)(r10 - 8)\n");
    let ir = only(&text, Pass::CodeMotion);
    assert!(
        !ir.blocks[0]
            .ops
            .iter()
            .any(|o| o.op.is_load() && o.op.dst == 5),
        "a stack load moved above a store to its slot"
    );
    agrees_with_machine(&text, &[14, 60]);
}

/// Lanes of the conditional jumps in each bundle of the whole program, when only `parallel-branches` runs.
fn branch_lanes(text: &str) -> Vec<Vec<usize>> {
    let ir = only(text, Pass::ParallelBranches);
    let disabled = Pass::ALL
        .into_iter()
        .filter(|&p| p != Pass::ParallelBranches)
        .collect();
    let rows = schedule(&ir, &Options { lanes: 4, disabled });
    rows.iter()
        .flatten()
        .map(|row| {
            row.lanes
                .iter()
                .enumerate()
                .filter(|(_, s)| matches!(s, hwxdp_hxdp::sched::Slot::Op(o) if o.op.is_cond_jump()))
                .map(|(l, _)| l)
                .collect()
        })
        .collect()
}

/// Two checks in a row that both lead to `drop`: the second one is a block of its own with one way in.
const TWO_CHECKS: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto drop
    if r2 == r3 goto drop
    r0 = 2
    exit
drop:
    r0 = 1
    exit
";

#[test]
fn parallel_branches_share_a_bundle_with_the_first_check_in_the_lower_lane() {
    let lanes = branch_lanes(TWO_CHECKS);
    let together = lanes.iter().find(|l| l.len() == 2);
    let [first, second] = together.expect("no bundle holds both checks").as_slice() else {
        unreachable!("filtered on two")
    };
    assert!(first < second, "the block's own check must win: {lanes:?}");
    let (merged, plain) = bundles_with_and_without(TWO_CHECKS, Pass::ParallelBranches);
    assert!(merged < plain);
    agrees_with_machine(TWO_CHECKS, &[14, 15, 60]);
}

#[test]
fn parallel_branches_leave_a_check_of_a_value_the_bundle_writes() {
    // The second check reads r5, written in the same bundle as the first check: it must wait for the next bundle.
    let text = TWO_CHECKS
        .replace("    r4 += 14\n", "    r4 += 14\n    r5 = r4\n")
        .replace("if r4 > r3 goto drop", "if r2 > r3 goto drop")
        .replace("if r2 == r3 goto drop", "if r5 == r3 goto drop");
    let lanes = branch_lanes(&text);
    assert!(lanes.iter().all(|l| l.len() < 2), "{lanes:?}");
    agrees_with_machine(&text, &[14, 15, 60]);
}

#[test]
fn refusals_name_the_slot_index() {
    // The lddw takes slots 0 and 1: the gotol is instruction 2, as `hwxdp disasm` and the kernel number it.
    let err = compile_object(
        &object("r1 = 5 ll\ngotol +0\nr0 = 2\nexit"),
        0,
        &Options::default(),
    )
    .expect_err("gotol is refused");
    assert_eq!(
        err.to_string(),
        "program t: instruction 2: gotol not supported by hxdp"
    );
}
