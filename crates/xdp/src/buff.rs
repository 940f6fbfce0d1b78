//! The packet buffer with the kernel's XDP layout, as `BPF_PROG_TEST_RUN` builds it.
//!
//! One page: 256 bytes of headroom (`XDP_PACKET_HEADROOM`), of which the first 40 hold the kernel's `struct xdp_frame`
//! and may not be reached by `bpf_xdp_adjust_head`/`adjust_meta` (216 usable); up to 3520 bytes of linear data; and
//! 320 bytes of tailroom for `struct skb_shared_info` that `bpf_xdp_adjust_tail` may not grow into.

use thiserror::Error;

/// Bytes before the packet data.
pub const HEADROOM: usize = 256;
/// Bytes at the start of the headroom that belong to `struct xdp_frame`.
pub const XDP_FRAME_SIZE: usize = 40;
/// Size of the whole frame (one page).
pub const FRAME_SIZE: usize = 4096;
/// Bytes reserved at the end of the frame for `struct skb_shared_info`.
pub const TAILROOM: usize = 320;
/// Largest linear packet: `FRAME_SIZE - HEADROOM - TAILROOM`.
pub const MAX_LINEAR: usize = FRAME_SIZE - HEADROOM - TAILROOM;
/// Largest metadata area `bpf_xdp_adjust_meta` accepts.
pub const MAX_META: usize = 32;
/// Ethernet header length: no adjustment may leave fewer bytes.
pub const ETH_HLEN: usize = 14;

/// A packet that cannot be put in an XDP buffer.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BuffError {
    /// Longer than the linear area.
    #[error("packet of {len} bytes is longer than the {MAX_LINEAR} bytes an XDP buffer holds")]
    TooLong {
        /// Length of the packet.
        len: usize,
    },
    /// Shorter than an Ethernet header: the kernel refuses it too.
    #[error("packet of {len} bytes is shorter than an Ethernet header ({ETH_HLEN} bytes)")]
    TooShort {
        /// Length of the packet.
        len: usize,
    },
}

/// One packet in the kernel's XDP buffer layout. Offsets are from the start of the frame (`data_hard_start`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XdpBuff {
    frame: Vec<u8>,
    data_meta: usize,
    data: usize,
    data_end: usize,
    /// Bytes outside `dirty` are zero: resetting for the next packet clears only this range, not the page.
    dirty: std::ops::Range<usize>,
}

impl XdpBuff {
    /// Puts `packet` at `data` with an empty metadata area and zeroed headroom and tailroom.
    pub fn new(packet: &[u8]) -> Result<Self, BuffError> {
        let mut buff = XdpBuff {
            frame: vec![0; FRAME_SIZE],
            data_meta: HEADROOM,
            data: HEADROOM,
            data_end: HEADROOM,
            dirty: 0..0,
        };
        buff.reset(packet)?;
        Ok(buff)
    }

    /// A buffer holding arbitrary memory rather than a frame: no Ethernet minimum, for programs that are not XDP
    /// programs (the conformance suite passes them a plain memory block).
    pub fn memory(bytes: &[u8]) -> Result<Self, BuffError> {
        if bytes.len() > MAX_LINEAR {
            return Err(BuffError::TooLong { len: bytes.len() });
        }
        let mut buff = XdpBuff::new(&[0; ETH_HLEN])?;
        buff.frame.fill(0);
        buff.data_end = HEADROOM + bytes.len();
        buff.frame[HEADROOM..buff.data_end].copy_from_slice(bytes);
        buff.dirty = HEADROOM..buff.data_end;
        Ok(buff)
    }

    /// Reuses this buffer for another packet, as if freshly made by [`XdpBuff::new`].
    pub fn reset(&mut self, packet: &[u8]) -> Result<(), BuffError> {
        if packet.len() > MAX_LINEAR {
            return Err(BuffError::TooLong { len: packet.len() });
        }
        if packet.len() < ETH_HLEN {
            return Err(BuffError::TooShort { len: packet.len() });
        }
        // The new packet overwrites its own bytes: clear only what the last packet touched around them.
        let end = HEADROOM + packet.len();
        let dirty = self.dirty.clone();
        self.frame[dirty.start.min(HEADROOM)..HEADROOM].fill(0);
        if dirty.end > end {
            self.frame[end..dirty.end].fill(0);
        }
        self.data_meta = HEADROOM;
        self.data = HEADROOM;
        self.data_end = end;
        self.frame[HEADROOM..self.data_end].copy_from_slice(packet);
        self.dirty = HEADROOM..self.data_end;
        Ok(())
    }

    /// The packet data (`data..data_end`).
    pub fn data(&self) -> &[u8] {
        &self.frame[self.data..self.data_end]
    }

    /// The metadata area (`data_meta..data`).
    pub fn meta(&self) -> &[u8] {
        &self.frame[self.data_meta..self.data]
    }

    /// What `BPF_PROG_TEST_RUN` hands back: the metadata followed by the data.
    pub fn output(&self) -> &[u8] {
        &self.frame[self.data_meta..self.data_end]
    }

    /// Replaces the buffer's contents with what a backend produced: `meta_len` bytes of metadata followed by the data.
    pub fn set_output(&mut self, output: &[u8], meta_len: usize) -> Result<(), BuffError> {
        if output.len() > MAX_LINEAR + MAX_META || meta_len > output.len() {
            return Err(BuffError::TooLong { len: output.len() });
        }
        self.frame.fill(0);
        self.data = HEADROOM;
        self.data_meta = HEADROOM - meta_len;
        self.data_end = self.data_meta + output.len();
        self.frame[self.data_meta..self.data_end].copy_from_slice(output);
        self.dirty = self.data_meta..self.data_end;
        Ok(())
    }

    /// The whole frame.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// The whole frame, writable.
    pub fn frame_mut(&mut self) -> &mut [u8] {
        self.dirty = 0..self.frame.len();
        &mut self.frame
    }

    /// `len` bytes at `at`, writable, which the caller has checked lie within `data_meta..data_end`.
    pub(crate) fn packet_bytes_mut(&mut self, at: usize, len: usize) -> &mut [u8] {
        debug_assert!(at >= self.data_meta && at + len <= self.data_end);
        &mut self.frame[at..at + len]
    }

    fn widen_dirty(&mut self) {
        self.dirty = self.dirty.start.min(self.data_meta)..self.dirty.end.max(self.data_end);
    }

    /// Offsets of `data_meta`, `data` and `data_end` from the start of the frame.
    pub fn offsets(&self) -> (usize, usize, usize) {
        (self.data_meta, self.data, self.data_end)
    }

    /// `bpf_xdp_adjust_head`: moves `data` by `delta`, carrying the metadata along. Returns 0 or a negative errno.
    pub fn adjust_head(&mut self, delta: i64) -> i64 {
        let metalen = self.data - self.data_meta;
        let data = self.data as i64 + delta;
        if data < (XDP_FRAME_SIZE + metalen) as i64 || data > (self.data_end - ETH_HLEN) as i64 {
            return -EINVAL;
        }
        let data = data as usize;
        let meta = data - metalen;
        if metalen > 0 {
            self.frame.copy_within(self.data_meta..self.data, meta);
        }
        self.data_meta = meta;
        self.data = data;
        self.widen_dirty();
        0
    }

    /// `bpf_xdp_adjust_meta`: moves `data_meta` by `delta`. Returns 0 or a negative errno.
    pub fn adjust_meta(&mut self, delta: i64) -> i64 {
        let meta = self.data_meta as i64 + delta;
        if meta < XDP_FRAME_SIZE as i64 || meta > self.data as i64 {
            return -EINVAL;
        }
        let metalen = self.data - meta as usize;
        if metalen > MAX_META || !metalen.is_multiple_of(4) {
            return -EACCES;
        }
        self.data_meta = meta as usize;
        self.widen_dirty();
        0
    }

    /// `bpf_xdp_adjust_tail`: moves `data_end` by `delta`, zeroing grown bytes. Returns 0 or a negative errno.
    pub fn adjust_tail(&mut self, delta: i64) -> i64 {
        let end = self.data_end as i64 + delta;
        if end > (FRAME_SIZE - TAILROOM) as i64 || end < (self.data + ETH_HLEN) as i64 {
            return -EINVAL;
        }
        let end = end as usize;
        if end > self.data_end {
            self.frame[self.data_end..end].fill(0);
        }
        self.data_end = end;
        self.widen_dirty();
        0
    }
}

/// `EINVAL` as a helper returns it.
pub const EINVAL: i64 = 22;
/// `EACCES` as a helper returns it.
pub const EACCES: i64 = 13;

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(len: usize) -> Vec<u8> {
        (0..len).map(|i| i as u8).collect()
    }

    #[test]
    fn head_moves_within_usable_headroom_only() {
        let mut b = XdpBuff::new(&packet(64)).unwrap();
        assert_eq!(b.adjust_head(-216), 0);
        assert_eq!(b.data().len(), 64 + 216);
        assert_eq!(
            b.adjust_head(-1),
            -EINVAL,
            "the xdp_frame area is off limits"
        );
        assert_eq!(b.adjust_head(216 + 50), 0);
        assert_eq!(b.data().len(), 14);
        assert_eq!(
            b.adjust_head(1),
            -EINVAL,
            "less than an Ethernet header would remain"
        );
    }

    #[test]
    fn meta_is_bounded_and_word_aligned_and_travels_with_head() {
        let mut b = XdpBuff::new(&packet(64)).unwrap();
        assert_eq!(b.adjust_meta(-36), -EACCES);
        assert_eq!(b.adjust_meta(-6), -EACCES);
        assert_eq!(b.adjust_meta(-8), 0);
        b.frame_mut()[HEADROOM - 8..HEADROOM].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b.adjust_head(-16), 0);
        assert_eq!(b.meta(), &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b.output().len(), 8 + 80);
        assert_eq!(
            b.adjust_head(-(216 - 16 - 8) - 1),
            -EINVAL,
            "meta must stay out of the xdp_frame area"
        );
    }

    #[test]
    fn tail_grows_zeroed_up_to_the_tailroom() {
        let mut b = XdpBuff::new(&packet(64)).unwrap();
        assert_eq!(b.adjust_tail(-10), 0);
        assert_eq!(b.adjust_tail(10), 0);
        assert!(
            b.data()[54..].iter().all(|&x| x == 0),
            "grown bytes are zeroed"
        );
        assert_eq!(b.adjust_tail((MAX_LINEAR - 64) as i64), 0);
        assert_eq!(b.adjust_tail(1), -EINVAL);
        assert_eq!(b.adjust_tail(-((MAX_LINEAR - 14) as i64) - 1), -EINVAL);
    }

    #[test]
    fn reset_clears_what_the_last_packet_touched() {
        let mut b = XdpBuff::new(&packet(200)).unwrap();
        assert_eq!(b.adjust_head(-16), 0);
        b.frame_mut()[HEADROOM - 16] = 0xaa;
        assert_eq!(b.adjust_tail(100), 0);
        b.reset(&packet(64)).unwrap();
        assert!(
            b.frame()[..HEADROOM].iter().all(|&x| x == 0),
            "headroom is zero again"
        );
        assert!(
            b.frame()[HEADROOM + 64..].iter().all(|&x| x == 0),
            "the old tail is zero again"
        );
        assert_eq!(b.data(), &packet(64)[..]);
        assert_eq!(b.adjust_head(-8), 0);
        assert_eq!(&b.data()[..8], &[0; 8]);
    }

    #[test]
    fn rejects_packets_the_kernel_rejects() {
        assert_eq!(
            XdpBuff::new(&packet(13)),
            Err(BuffError::TooShort { len: 13 })
        );
        assert_eq!(
            XdpBuff::new(&packet(MAX_LINEAR + 1)),
            Err(BuffError::TooLong {
                len: MAX_LINEAR + 1
            })
        );
        assert!(XdpBuff::new(&packet(MAX_LINEAR)).is_ok());
    }
}
