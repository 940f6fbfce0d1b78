//! Reading the records a program submitted to a `BPF_MAP_TYPE_RINGBUF` map.

use crate::{KernelError, KernelProgram};
use libbpf_rs::libbpf_sys;
use std::os::fd::AsRawFd;

/// Called by libbpf once per record, in order; `ctx` is the `Vec` the records go to.
unsafe extern "C" fn collect(
    ctx: *mut libc::c_void,
    data: *mut libc::c_void,
    size: libbpf_sys::size_t,
) -> libc::c_int {
    // SAFETY: `ctx` is the `&mut Vec<Vec<u8>>` passed to ring_buffer__new by `ringbuf_drain`, alive for the whole
    // consume; `data` points to `size` readable bytes of the ring for the duration of this call.
    unsafe {
        let records = &mut *ctx.cast::<Vec<Vec<u8>>>();
        records.push(std::slice::from_raw_parts(data.cast::<u8>(), size as usize).to_vec());
    }
    0
}

impl KernelProgram {
    /// The records submitted to the ring buffer map `map` since the last drain, oldest first. The consumer position
    /// lives in the map's shared page, so each drain starts where the previous one stopped.
    pub fn ringbuf_drain(&mut self, map: usize) -> Result<Vec<Vec<u8>>, KernelError> {
        let spec = self.specs.get(map).ok_or_else(|| KernelError::BadMap {
            index: map,
            reason: format!("the object has {} maps", self.specs.len()),
        })?;
        if spec.map_type != libbpf_sys::BPF_MAP_TYPE_RINGBUF {
            return Err(KernelError::BadMap {
                index: map,
                reason: format!(
                    "{} is a {}, not a ring buffer",
                    spec.name,
                    hwxdp_ebpf::map_type_label(spec.map_type)
                ),
            });
        }
        let fd =
            self.maps
                .get(map)
                .map(|fd| fd.as_raw_fd())
                .ok_or_else(|| KernelError::BadMap {
                    index: map,
                    reason: "map has no fd".to_string(),
                })?;
        let mut records: Vec<Vec<u8>> = Vec::new();
        let ctx: *mut Vec<Vec<u8>> = &mut records;
        // SAFETY: `collect` matches ring_buffer_sample_fn and only uses `ctx` as the Vec above, which outlives the
        // ring buffer: it is freed before `records` is returned.
        let consumed = unsafe {
            let rb = libbpf_sys::ring_buffer__new(fd, Some(collect), ctx.cast(), std::ptr::null());
            if rb.is_null() {
                return Err(KernelError::last_os(format!(
                    "ring_buffer__new on {}",
                    spec.name
                )));
            }
            let consumed = libbpf_sys::ring_buffer__consume(rb);
            libbpf_sys::ring_buffer__free(rb);
            consumed
        };
        if consumed < 0 {
            return Err(KernelError::from_ret(
                format!("ring_buffer__consume on {}", spec.name),
                consumed,
            ));
        }
        Ok(records)
    }
}
