//! Running the chosen program with `BPF_PROG_TEST_RUN`.

use crate::{KernelError, KernelProgram};
use hwxdp_xdp::{Verdict, XdpMd};
use libbpf_rs::libbpf_sys;
use std::os::fd::AsRawFd;

/// Room left in the output buffer beyond the input, for `bpf_xdp_adjust_head`/`adjust_tail` growth.
const OUTPUT_SLACK: usize = 4096;

/// What one `BPF_PROG_TEST_RUN` produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRun {
    /// The program's return value.
    pub retval: u32,
    /// The packet as the kernel hands it back: the metadata area (`data_meta..data`) followed by the data
    /// (`data..data_end`).
    pub output: Vec<u8>,
    /// Length of the metadata area at the start of `output`.
    pub meta_len: usize,
}

impl KernelRun {
    /// The verdict for the return value.
    pub fn verdict(&self) -> Verdict {
        Verdict::from_retval(self.retval)
    }

    /// The packet data without the metadata.
    pub fn data(&self) -> &[u8] {
        self.output.get(self.meta_len..).unwrap_or(&[])
    }

    /// The metadata area.
    pub fn meta(&self) -> &[u8] {
        self.output.get(..self.meta_len).unwrap_or(&[])
    }
}

struct RawRun {
    retval: u32,
    duration_ns: u32,
    output: Vec<u8>,
    meta_len: usize,
}

impl KernelProgram {
    /// Runs `packet` once, with an empty metadata area and the `struct xdp_md` fields of `md`.
    ///
    /// `ingress_ifindex` and `rx_queue_index` are resolved by the kernel in the calling thread's network namespace:
    /// the interface must exist there with more than `rx_queue_index` receive queues (see [`crate::Sandbox`]). With
    /// `ingress_ifindex` 0 the packet arrives on the loopback device's queue 0, so the program reads ifindex 1.
    pub fn test_run(&mut self, packet: &[u8], md: &XdpMd) -> Result<KernelRun, KernelError> {
        self.test_run_with_meta(&[], packet, md)
    }

    /// Runs `packet` once with `meta` already in its metadata area (at most 32 bytes, a multiple of 4).
    pub fn test_run_with_meta(
        &mut self,
        meta: &[u8],
        packet: &[u8],
        md: &XdpMd,
    ) -> Result<KernelRun, KernelError> {
        let raw = self.run_raw(meta, packet, md, 1)?;
        Ok(KernelRun {
            retval: raw.retval,
            output: raw.output,
            meta_len: raw.meta_len,
        })
    }

    /// Runs `packet` `repeat` times in the kernel and returns the mean nanoseconds per run the kernel measured.
    pub fn bench(&mut self, packet: &[u8], md: &XdpMd, repeat: u32) -> Result<f64, KernelError> {
        let raw = self.run_raw(&[], packet, md, repeat.max(1))?;
        Ok(f64::from(raw.duration_ns))
    }

    fn run_raw(
        &self,
        meta: &[u8],
        packet: &[u8],
        md: &XdpMd,
        repeat: u32,
    ) -> Result<RawRun, KernelError> {
        let describe = || {
            format!(
                "BPF_PROG_TEST_RUN of {} ({} bytes, meta {}, ingress_ifindex {}, rx_queue_index {})",
                self.chosen_name(),
                packet.len(),
                meta.len(),
                md.ingress_ifindex,
                md.rx_queue_index
            )
        };
        let mut input = Vec::with_capacity(meta.len() + packet.len());
        input.extend_from_slice(meta);
        input.extend_from_slice(packet);
        let input_len = u32::try_from(input.len()).map_err(|_| KernelError::Invalid {
            op: describe(),
            reason: format!("{} bytes of input do not fit the call", input.len()),
        })?;
        let mut output = vec![0u8; input.len() + OUTPUT_SLACK];
        // The kernel wants data_meta at 0 and data_end at the input length; `data` is where the packet starts.
        let ctx_in = libbpf_sys::xdp_md {
            data: meta.len() as u32,
            data_end: input_len,
            data_meta: 0,
            ingress_ifindex: md.ingress_ifindex,
            rx_queue_index: md.rx_queue_index,
            egress_ifindex: 0,
        };
        let mut ctx_out = ctx_in;
        // SAFETY: bpf_test_run_opts is plain data and zeroed is its documented default; every pointer set below is to
        // a live buffer of the size given next to it, and all of them outlive the call.
        let (rc, opts) = unsafe {
            let mut opts: libbpf_sys::bpf_test_run_opts = std::mem::zeroed();
            opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
            opts.data_in = input.as_ptr().cast();
            opts.data_size_in = input_len;
            opts.data_out = output.as_mut_ptr().cast();
            opts.data_size_out = output.len() as u32;
            opts.ctx_in = (&ctx_in as *const libbpf_sys::xdp_md).cast();
            opts.ctx_size_in = std::mem::size_of::<libbpf_sys::xdp_md>() as u32;
            opts.ctx_out = (&mut ctx_out as *mut libbpf_sys::xdp_md).cast();
            opts.ctx_size_out = std::mem::size_of::<libbpf_sys::xdp_md>() as u32;
            opts.repeat = repeat as i32;
            let rc = libbpf_sys::bpf_prog_test_run_opts(self.chosen_fd()?.as_raw_fd(), &mut opts);
            (rc, opts)
        };
        if rc < 0 {
            return Err(KernelError::from_ret(describe(), rc));
        }
        output.truncate(opts.data_size_out as usize);
        let meta_len = ctx_out.data.saturating_sub(ctx_out.data_meta) as usize;
        if meta_len > output.len() {
            return Err(KernelError::Invalid {
                op: describe(),
                reason: format!(
                    "the kernel answered metadata of {meta_len} bytes in {} bytes of output",
                    output.len()
                ),
            });
        }
        Ok(RawRun {
            retval: opts.retval,
            duration_ns: opts.duration,
            output,
            meta_len,
        })
    }
}
