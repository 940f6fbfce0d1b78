//! RINGBUF (kernel/bpf/ringbuf.c) with the kernel's memory layout: 8-byte record headers (`len` with the busy and
//! discard bits, then `pg_off`) in a power-of-two data area, producer/consumer/pending positions, and the consumer
//! loop of libbpf's `ring_buffer__consume`.
//!
//! The kernel maps the data pages twice so that a record crossing the end is contiguous. Here the buffer is twice the
//! size: a record that wraps is mirrored into the second half while it is reserved and copied back when committed.

const HDR_SZ: u64 = 8;
const BUSY_BIT: u32 = 1 << 31;
const DISCARD_BIT: u32 = 1 << 30;
/// `RINGBUF_MAX_RECORD_SZ`.
const MAX_RECORD_SZ: u64 = (u32::MAX / 4) as u64;
/// Pages before the data area in `struct bpf_ringbuf` (control page, consumer page, producer page), for `pg_off`.
const DATA_PAGE_OFFSET: u64 = 3;
const PAGE_SHIFT: u32 = 12;

/// One ring buffer.
#[derive(Clone, Debug)]
pub(crate) struct RingBuf {
    mask: u64,
    consumer_pos: u64,
    producer_pos: u64,
    pending_pos: u64,
    /// `2 * size` bytes: the data area and its mirror.
    data: Vec<u8>,
}

fn round8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

impl RingBuf {
    pub(crate) fn new(size: u32) -> RingBuf {
        RingBuf {
            mask: u64::from(size) - 1,
            consumer_pos: 0,
            producer_pos: 0,
            pending_pos: 0,
            data: vec![0; 2 * size as usize],
        }
    }

    fn size(&self) -> u64 {
        self.mask + 1
    }

    fn header(&self, off: u64) -> u32 {
        let o = off as usize;
        let b = self.data.get(o..o + 4).unwrap_or(&[0; 4]);
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    fn set_header(&mut self, off: u64, len: u32) {
        let o = off as usize;
        if let Some(dst) = self.data.get_mut(o..o + 4) {
            dst.copy_from_slice(&len.to_le_bytes());
        }
    }

    /// Data offset (in the doubled buffer) of the record whose data starts at `slot * 8`, and its length.
    fn record_at(&self, slot: u32) -> Option<(usize, usize, u32)> {
        let start = u64::from(slot) * 8;
        if start < HDR_SZ || start > self.size() {
            return None;
        }
        let hdr = self.header(start - HDR_SZ);
        let len = hdr & !(BUSY_BIT | DISCARD_BIT);
        Some((start as usize, len as usize, hdr))
    }

    /// Bytes of the reserved record in `slot` (empty when the slot holds no record).
    pub(crate) fn record(&self, slot: u32) -> &[u8] {
        self.record_at(slot)
            .and_then(|(start, len, _)| self.data.get(start..start + len))
            .unwrap_or(&[])
    }

    pub(crate) fn record_mut(&mut self, slot: u32) -> &mut [u8] {
        match self.record_at(slot) {
            Some((start, len, _)) if start + len <= self.data.len() => {
                &mut self.data[start..start + len]
            }
            _ => &mut [],
        }
    }

    /// `__bpf_ringbuf_reserve`: the slot of the record's data, or None when it does not fit.
    pub(crate) fn reserve(&mut self, size: u64) -> Option<u32> {
        if size > MAX_RECORD_SZ {
            return None;
        }
        let len = round8(size + HDR_SZ);
        if len > self.size() {
            return None;
        }
        let prod_pos = self.producer_pos;
        let new_prod_pos = prod_pos + len;
        // Records the consumer already passed were committed, so the pending walk can start at the consumer.
        let mut pend_pos = self.pending_pos.max(self.consumer_pos);
        while pend_pos < prod_pos {
            let hdr = self.header(pend_pos & self.mask);
            if hdr & BUSY_BIT != 0 {
                break;
            }
            pend_pos += round8(u64::from(hdr & !DISCARD_BIT) + HDR_SZ);
        }
        self.pending_pos = pend_pos;
        if new_prod_pos - self.consumer_pos > self.mask || new_prod_pos - pend_pos > self.mask {
            return None;
        }
        let off = prod_pos & self.mask;
        let pg_off = (DATA_PAGE_OFFSET + (off >> PAGE_SHIFT)) as u32;
        self.set_header(off, size as u32 | BUSY_BIT);
        let o = off as usize;
        self.data[o + 4..o + 8].copy_from_slice(&pg_off.to_le_bytes());
        let end = (off + len) as usize;
        let size_bytes = self.size() as usize;
        if end > size_bytes {
            let (front, mirror) = self.data.split_at_mut(size_bytes);
            mirror[..end - size_bytes].copy_from_slice(&front[..end - size_bytes]);
        }
        self.producer_pos = new_prod_pos;
        Some(((off + HDR_SZ) / 8) as u32)
    }

    /// `bpf_ringbuf_commit`: clears the busy bit, sets the discard bit on discard.
    pub(crate) fn commit(&mut self, slot: u32, discard: bool) {
        let Some((start, len, hdr)) = self.record_at(slot) else {
            return;
        };
        if hdr & BUSY_BIT == 0 {
            return;
        }
        let mut new_len = hdr ^ BUSY_BIT;
        if discard {
            new_len |= DISCARD_BIT;
        }
        self.set_header(start as u64 - HDR_SZ, new_len);
        let size_bytes = self.size() as usize;
        let end = round8((start + len) as u64) as usize;
        if end > size_bytes {
            let (front, mirror) = self.data.split_at_mut(size_bytes);
            front[..end - size_bytes].copy_from_slice(&mirror[..end - size_bytes]);
        }
    }

    /// `bpf_ringbuf_output` after the flag check: 0 or -EAGAIN.
    pub(crate) fn output(&mut self, data: &[u8]) -> bool {
        let Some(slot) = self.reserve(data.len() as u64) else {
            return false;
        };
        self.record_mut(slot).copy_from_slice(data);
        self.commit(slot, false);
        true
    }

    /// The consumer: submitted records in order up to the first busy one; discarded ones are skipped. Frees space.
    pub(crate) fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let size = self.size() as usize;
        while self.consumer_pos < self.producer_pos {
            let off = self.consumer_pos & self.mask;
            let hdr = self.header(off);
            if hdr & BUSY_BIT != 0 {
                break;
            }
            let len = u64::from(hdr & !DISCARD_BIT);
            if hdr & DISCARD_BIT == 0 {
                let start = (off + HDR_SZ) as usize;
                let rec: Vec<u8> = (start..start + len as usize)
                    .map(|i| self.data[i % size])
                    .collect();
                out.push(rec);
            }
            self.consumer_pos += round8(len + HDR_SZ);
        }
        out
    }
}
