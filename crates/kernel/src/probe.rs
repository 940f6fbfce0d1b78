//! Whether BPF programs can be loaded and test-run here at all.

use crate::error::errno_text;
use crate::KernelError;
use libbpf_rs::libbpf_sys;

/// `BPF_ALU64 | BPF_MOV | BPF_K`: `r0 = imm`.
const MOV64_IMM: u8 = 0xb7;
/// `BPF_JMP | BPF_EXIT`.
const EXIT: u8 = 0x95;
/// `XDP_PASS`.
const XDP_PASS: i32 = 2;

/// Loads a two-instruction XDP program returning `XDP_PASS` and test-runs it once: Ok when that works, otherwise why
/// not (not root, no `bpf()` syscall, ...).
pub fn bpf_available() -> Result<(), KernelError> {
    let mut mov = libbpf_sys::bpf_insn {
        code: MOV64_IMM,
        imm: XDP_PASS,
        ..Default::default()
    };
    mov.set_dst_reg(0);
    let exit = libbpf_sys::bpf_insn {
        code: EXIT,
        ..Default::default()
    };
    let insns = [mov, exit];
    // SAFETY: the name and license are NUL-terminated literals and `insns` holds the count given; null opts are
    // allowed.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            libbpf_sys::BPF_PROG_TYPE_XDP,
            c"hwxdp_probe".as_ptr(),
            c"GPL".as_ptr(),
            insns.as_ptr(),
            insns.len() as _,
            std::ptr::null_mut(),
        )
    };
    if fd < 0 {
        return Err(KernelError::Unavailable {
            reason: explain(-fd, "loading an xdp program"),
        });
    }
    let packet = [0u8; 64];
    // SAFETY: `fd` was just returned by bpf_prog_load and is closed once, below. The opts point to `packet`, alive for
    // the call, with its length.
    let rc = unsafe {
        let mut opts: libbpf_sys::bpf_test_run_opts = std::mem::zeroed();
        opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
        opts.data_in = packet.as_ptr().cast();
        opts.data_size_in = packet.len() as u32;
        let rc = libbpf_sys::bpf_prog_test_run_opts(fd, &mut opts);
        libc::close(fd);
        if rc == 0 && opts.retval != XDP_PASS as u32 {
            return Err(KernelError::Unavailable {
                reason: format!("test run returned {} instead of xdp_pass", opts.retval),
            });
        }
        rc
    };
    if rc < 0 {
        return Err(KernelError::Unavailable {
            reason: explain(-rc, "BPF_PROG_TEST_RUN"),
        });
    }
    Ok(())
}

fn explain(errno: i32, what: &str) -> String {
    match errno {
        libc::EPERM | libc::EACCES => {
            format!("{what} is not permitted: run as root or with CAP_BPF and CAP_NET_ADMIN (errno {errno})")
        }
        libc::ENOSYS => "the kernel has no bpf() syscall".to_string(),
        _ => format!("{what} failed: {} (errno {errno})", errno_text(errno)),
    }
}
