//! The conformance plugin through its protocol, on the RFC 9669 edge cases: what the public suite's runner sends, what
//! it expects back.

use std::io::Write;
use std::process::{Command, Stdio};

/// What the plugin answered.
struct Answer {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Sends `program` (assembled by hwxdp's assembler) in the suite's hex form, with `memory` as the first argument.
fn plugin(program: &str, memory: Option<&[u8]>) -> Answer {
    let insns = hwxdp_ebpf::assemble(program).unwrap_or_else(|e| panic!("test program: {e}"));
    plugin_insns(&insns, memory)
}

fn plugin_insns(insns: &[hwxdp_ebpf::Insn], memory: Option<&[u8]>) -> Answer {
    let hex = |bytes: &[u8]| {
        bytes
            .iter()
            .map(|b| format!("{b:02x}  "))
            .collect::<String>()
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwxdp-conformance-plugin"));
    if let Some(mem) = memory {
        cmd.arg(hex(mem));
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugin starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{}", hex(&hwxdp_ebpf::encode(insns))).expect("program written");
    drop(stdin);
    let out = child.wait_with_output().expect("plugin ends");
    Answer {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The final r0 the plugin printed.
fn r0(program: &str) -> u64 {
    r0_with(program, None)
}

fn r0_with(program: &str, memory: Option<&[u8]>) -> u64 {
    let a = plugin(program, memory);
    assert_eq!(a.code, Some(0), "plugin failed: {}", a.stderr);
    u64::from_str_radix(a.stdout.trim(), 16).unwrap_or_else(|_| panic!("not hex: {:?}", a.stdout))
}

#[test]
fn division_and_modulo_by_zero() {
    assert_eq!(r0("r0 = 5\nr1 = 0\nr0 /= r1\nexit"), 0);
    assert_eq!(r0("r0 = 5\nr1 = 0\nr0 %= r1\nexit"), 5);
    assert_eq!(r0("r0 = -1 ll\nw1 = 0\nw0 /= w1\nexit"), 0);
    assert_eq!(
        r0("r0 = -1 ll\nw1 = 0\nw0 %= w1\nexit"),
        0xffff_ffff,
        "32-bit mod by zero keeps the low half, zero-extended"
    );
    assert_eq!(r0("r0 = 5\nr1 = 0\nr0 s/= r1\nexit"), 0);
    assert_eq!(r0("r0 = -5\nr1 = 0\nr0 s%= r1\nexit"), (-5i64) as u64);
}

#[test]
fn shift_amounts_are_masked() {
    assert_eq!(r0("r0 = 1\nr1 = 64\nr0 <<= r1\nexit"), 1);
    assert_eq!(r0("r0 = 1\nr1 = 65\nr0 <<= r1\nexit"), 2);
    assert_eq!(r0("w0 = 1\nw1 = 33\nw0 <<= w1\nexit"), 2);
    assert_eq!(r0("r0 = -1\nw0 s>>= 35\nexit"), 0xffff_ffff);
}

#[test]
fn signed_division_truncates_toward_zero() {
    assert_eq!(r0("r0 = -7\nr0 s/= 2\nexit"), (-3i64) as u64);
    assert_eq!(r0("r0 = -7\nr0 s%= 2\nexit"), (-1i64) as u64);
    assert_eq!(r0("r0 = 7\nr0 s%= -2\nexit"), 1);
    assert_eq!(r0("w0 = -7\nw0 s/= 2\nexit"), (-3i32) as u32 as u64);
    assert_eq!(
        r0("r0 = 0x8000000000000000 ll\nr1 = -1\nr0 s/= r1\nexit"),
        0x8000_0000_0000_0000
    );
}

#[test]
fn thirty_two_bit_results_are_zero_extended() {
    assert_eq!(r0("r0 = -1\nw0 += 1\nexit"), 0);
    assert_eq!(r0("r0 = -1\nw0 = w0\nexit"), 0xffff_ffff);
    assert_eq!(r0("w0 = -1\nexit"), 0xffff_ffff);
    assert_eq!(r0("r0 = 1\nw0 = -w0\nexit"), 0xffff_ffff);
}

#[test]
fn cmpxchg_writes_r0() {
    let swap = "r1 = 7\n*(u64 *)(r10 - 8) = r1\nr0 = 7\nr2 = 9\nr0 = cmpxchg_64(r10 - 8, r0, r2)\nr1 = *(u64 *)(r10 - 8)\nr0 <<= 8\nr0 |= r1\nexit";
    assert_eq!(r0(swap), 7 << 8 | 9, "old value in r0, new value stored");
    let keep = "r1 = 7\n*(u64 *)(r10 - 8) = r1\nr0 = 3\nr2 = 9\nr0 = cmpxchg_64(r10 - 8, r0, r2)\nr1 = *(u64 *)(r10 - 8)\nr0 <<= 8\nr0 |= r1\nexit";
    assert_eq!(r0(keep), 7 << 8 | 7, "old value in r0, memory unchanged");
}

#[test]
fn memory_arrives_in_r1_and_its_length_in_r2() {
    let mem = [0x11, 0x22, 0x33, 0x44, 0x55];
    assert_eq!(
        r0_with("r0 = *(u32 *)(r1 + 0)\nexit", Some(&mem)),
        0x4433_2211
    );
    assert_eq!(r0_with("r0 = r2\nexit", Some(&mem)), 5);
    assert_eq!(r0("r0 = r1\nexit"), 0, "no memory: r1 is NULL");
}

#[test]
fn unwind_ends_the_program_only_on_zero() {
    assert_eq!(r0("r1 = 0\ncall 5\nr0 = 2\nexit"), 0);
    assert_eq!(r0("r1 = 3\ncall 5\nr0 += 2\nexit"), 5);
    // callx: the helper id comes from a register.
    assert_eq!(r0("r1 = -1\nr2 = 5\ncallx r2\nr0 = 2\nexit"), 2);
}

#[test]
fn programs_that_cannot_run_fail_with_one_line() {
    for (program, needle) in [
        ("r0 = *(u32 *)(r1 + 0)\nexit", "NULL"),
        ("call 6\nexit", "helper 6"),
        ("r0 = 1", "left the program"),
    ] {
        let a = plugin(program, None);
        assert_ne!(a.code, Some(0), "{program:?} should fail");
        assert_eq!(a.stderr.lines().count(), 1, "{:?}", a.stderr);
        assert!(
            a.stderr.contains(needle),
            "{needle:?} not in {:?}",
            a.stderr
        );
        assert!(a.stdout.is_empty());
    }
}

#[test]
fn sign_extending_loads_and_moves() {
    let mem = [0x80, 0x01, 0x80, 0x01, 0x00, 0x80];
    assert_eq!(
        r0_with("r0 = *(s8 *)(r1 + 0)\nexit", Some(&mem)),
        (-128i64) as u64
    );
    assert_eq!(r0_with("r0 = *(s16 *)(r1 + 2)\nexit", Some(&mem)), 0x0180);
    assert_eq!(
        r0_with("r0 = *(s32 *)(r1 + 2)\nexit", Some(&mem)),
        0xffff_ffff_8000_0180
    );
    assert_eq!(r0("r1 = 0x80\nr0 = (s8)r1\nexit"), (-128i64) as u64);
    assert_eq!(
        r0("r1 = 0x8001\nw0 = (s16)w1\nexit"),
        0xffff_8001,
        "the 32-bit form zero-extends what it sign-extended"
    );
    assert_eq!(
        r0("r1 = 0x80000001 ll\nr0 = (s32)r1\nexit"),
        0xffff_ffff_8000_0001
    );
}

#[test]
fn jump_immediates_are_sign_extended_to_the_compared_width() {
    // 0xffffffff as a 64-bit immediate is -1: a zero-extended 0xffffffff register differs from it.
    assert_eq!(
        r0("w1 = -1\nr0 = 1\nif r1 != 0xffffffff goto +1\nr0 = 0\nexit"),
        1
    );
    assert_eq!(
        r0("w1 = -1\nr0 = 1\nif w1 != 0xffffffff goto +1\nr0 = 0\nexit"),
        0
    );
    assert_eq!(
        r0("r1 = 0xffffffff80000000 ll\nr0 = 0\nif r1 == 0x80000000 goto +1\nexit\nr0 = 1\nexit"),
        1
    );
}

#[test]
fn long_jumps_and_local_calls() {
    assert_eq!(
        r0("r0 = 0\ngotol two\none:\nr0 += 1\nexit\ntwo:\nr0 = 5\ngotol one"),
        6
    );
    let call =
        "r6 = 6\nr1 = 1\nr2 = 2\ncall add\nr0 += r6\nexit\nadd:\nr0 = r1\nr0 += r2\nr6 = 0\nexit";
    assert_eq!(
        r0(call),
        9,
        "the callee gets r1-r5 and the caller keeps r6-r9"
    );
    let frames = "r1 = 3\n*(u64 *)(r10 - 8) = r1\ncall f\nr0 = *(u64 *)(r10 - 8)\nexit\nf:\nr1 = 9\n*(u64 *)(r10 - 8) = r1\nr0 = 0\nexit";
    assert_eq!(r0(frames), 3, "each call has its own stack frame");
}

/// `call runtime 0x2a; exit` as the suite's `call_runtime.data` assembles it: `call` with src 2 and imm 42.
fn runtime_call(id: i64) -> Vec<hwxdp_ebpf::Insn> {
    use hwxdp_ebpf::opcode::*;
    vec![
        hwxdp_ebpf::Insn {
            code: CLASS_JMP | JMP_CALL,
            dst: 0,
            src: PSEUDO_KFUNC_CALL,
            off: 0,
            imm: id,
        },
        hwxdp_ebpf::Insn {
            code: CLASS_JMP | JMP_EXIT,
            dst: 0,
            src: 0,
            off: 0,
            imm: 0,
        },
    ]
}

#[test]
fn the_runtime_function_of_the_suite_returns_zero_and_others_are_refused() {
    let known = plugin_insns(&runtime_call(42), None);
    assert_eq!(known.code, Some(0), "{}", known.stderr);
    assert_eq!(known.stdout.trim(), "0");
    let unknown = plugin_insns(&runtime_call(43), None);
    assert_ne!(unknown.code, Some(0));
    assert!(
        unknown.stderr.contains("BTF id 43"),
        "stderr: {}",
        unknown.stderr
    );
    assert_eq!(unknown.stderr.trim().lines().count(), 1);
}
