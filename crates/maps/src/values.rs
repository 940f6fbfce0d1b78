//! Flat value storage: slot `s` of a map is `data[s * size..(s + 1) * size]`.

/// Values of one map, one fixed-size slot each: a single growable buffer, or for huge arrays chunks allocated when
/// first written (untouched slots read as zeros).
#[derive(Clone, Debug)]
pub(crate) struct Values {
    size: usize,
    data: Vec<u8>,
    sparse: Option<Sparse>,
}

/// Chunked storage of a huge array: `chunks[c]` holds slots `c * per_chunk ..`, `None` until one of them is written.
#[derive(Clone, Debug)]
struct Sparse {
    slots: usize,
    per_chunk: usize,
    chunks: Vec<Option<Box<[u8]>>>,
    /// What an untouched slot reads as.
    zero: Box<[u8]>,
    /// Bytes of the chunks allocated so far.
    allocated: u64,
}

impl Sparse {
    /// Slot `slot` of `size` bytes, its chunk allocated if it was not.
    fn get_mut(&mut self, slot: usize, size: usize) -> Option<&mut [u8]> {
        if slot >= self.slots {
            return None;
        }
        let chunk_bytes = self.per_chunk * size;
        let allocated = &mut self.allocated;
        let chunk = self.chunks[slot / self.per_chunk].get_or_insert_with(|| {
            *allocated += chunk_bytes as u64;
            vec![0; chunk_bytes].into_boxed_slice()
        });
        let at = (slot % self.per_chunk) * size;
        Some(&mut chunk[at..at + size])
    }
}

/// Bytes of one chunk of sparse storage (at least one slot).
const CHUNK_BYTES: usize = 64 << 10;

impl Values {
    /// Storage for `slots` zeroed values of `size` bytes.
    pub(crate) fn new(size: usize, slots: usize) -> Values {
        Values {
            size,
            data: vec![0; size * slots],
            sparse: None,
        }
    }

    /// Storage for `slots` zeroed values of `size` bytes that takes memory only for the chunks written.
    pub(crate) fn sparse(size: usize, slots: usize) -> Values {
        let per_chunk = (CHUNK_BYTES / size.max(1)).max(1);
        Values {
            size,
            data: Vec::new(),
            sparse: Some(Sparse {
                slots,
                per_chunk,
                chunks: vec![None; slots.div_ceil(per_chunk)],
                zero: vec![0; size].into_boxed_slice(),
                allocated: 0,
            }),
        }
    }

    /// Number of slots currently backed by storage (every slot of sparse storage).
    pub(crate) fn len(&self) -> usize {
        match &self.sparse {
            Some(s) => s.slots,
            None => self.data.len().checked_div(self.size).unwrap_or(0),
        }
    }

    /// Bytes of memory the values take: the whole buffer, or the chunks written so far.
    pub(crate) fn allocated(&self) -> u64 {
        match &self.sparse {
            Some(s) => s.allocated + 8 * s.chunks.len() as u64,
            None => self.data.len() as u64,
        }
    }

    /// Bytes writing `slot` would allocate (0 when its storage exists).
    pub(crate) fn cost_of_writing(&self, slot: usize) -> u64 {
        match &self.sparse {
            Some(s) if slot < s.slots && s.chunks[slot / s.per_chunk].is_none() => {
                (s.per_chunk * self.size) as u64
            }
            _ => 0,
        }
    }

    /// Bytes writing every slot of `slots` would allocate, each chunk counted once.
    pub(crate) fn cost_of_writing_all(&self, slots: &[usize]) -> u64 {
        let Some(s) = &self.sparse else {
            return 0;
        };
        let mut chunks: Vec<usize> = slots
            .iter()
            .filter(|&&slot| self.cost_of_writing(slot) > 0)
            .map(|slot| slot / s.per_chunk)
            .collect();
        chunks.dedup();
        (chunks.len() * s.per_chunk * self.size) as u64
    }

    /// Slots whose storage exists, in order (all of a flat buffer; the written chunks' of sparse storage).
    pub(crate) fn touched_slots(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.sparse {
            None => Box::new(0..self.len()),
            Some(s) => Box::new(
                s.chunks
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_some())
                    .flat_map(move |(c, _)| c * s.per_chunk..((c + 1) * s.per_chunk).min(s.slots)),
            ),
        }
    }

    /// Makes slots `0..slots` exist (new ones zeroed); storage only grows, so slots stay where they are.
    pub(crate) fn ensure(&mut self, slots: usize) {
        let want = slots * self.size;
        if self.sparse.is_none() && self.data.len() < want {
            self.data.resize(want, 0);
        }
    }

    fn range(&self, slot: usize) -> Option<std::ops::Range<usize>> {
        let start = slot.checked_mul(self.size)?;
        let end = start.checked_add(self.size)?;
        (end <= self.data.len()).then_some(start..end)
    }

    /// The value in `slot`.
    pub(crate) fn get(&self, slot: usize) -> Option<&[u8]> {
        if let Some(s) = &self.sparse {
            if slot >= s.slots {
                return None;
            }
            let at = (slot % s.per_chunk) * self.size;
            return Some(match &s.chunks[slot / s.per_chunk] {
                Some(chunk) => &chunk[at..at + self.size],
                None => &s.zero,
            });
        }
        let r = self.range(slot)?;
        self.data.get(r)
    }

    /// The value in `slot`, writable (allocating its chunk of sparse storage).
    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        let size = self.size;
        match &mut self.sparse {
            Some(s) => s.get_mut(slot, size),
            None => {
                let start = slot.checked_mul(size)?;
                self.data.get_mut(start..start.checked_add(size)?)
            }
        }
    }

    /// Copies `value` into `slot`; a shorter `value` leaves the rest of the slot as it was.
    pub(crate) fn set(&mut self, slot: usize, value: &[u8]) {
        if self.sparse.is_some() && self.cost_of_writing(slot) > 0 && value.iter().all(|&b| b == 0)
        {
            // Zeros into an untouched chunk: nothing changes, nothing to allocate.
            return;
        }
        if let Some(dst) = self.get_mut(slot) {
            let n = dst.len().min(value.len());
            dst[..n].copy_from_slice(&value[..n]);
        }
    }

    /// Zeroes `slot`.
    pub(crate) fn zero(&mut self, slot: usize) {
        if self.cost_of_writing(slot) > 0 {
            return;
        }
        if let Some(dst) = self.get_mut(slot) {
            dst.fill(0);
        }
    }
}

/// Per-CPU value layout: element `e` owns slots `e * cpus .. (e + 1) * cpus`, one per possible CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuLayout {
    /// Copies per element: the number of possible CPUs for per-CPU maps, 1 otherwise.
    pub copies: usize,
    /// Value size in bytes.
    pub value_size: usize,
}

impl CpuLayout {
    /// The slot of `elem`'s copy for `cpu` (its only copy for shared maps).
    pub(crate) fn slot(&self, elem: u32, cpu: usize) -> u32 {
        if self.copies == 1 {
            elem
        } else {
            (elem as usize * self.copies + cpu) as u32
        }
    }

    /// Writes a program's update: this CPU's copy; `zero_others` clears the other CPUs' copies (a new element).
    pub(crate) fn write_prog(
        &self,
        values: &mut Values,
        elem: u32,
        cpu: usize,
        value: &[u8],
        zero_others: bool,
    ) {
        for c in 0..self.copies {
            let slot = self.slot(elem, c) as usize;
            if c == cpu || self.copies == 1 {
                values.set(slot, value);
            } else if zero_others {
                values.zero(slot);
            }
        }
    }

    /// Writes a userspace update from the syscall view.
    pub(crate) fn write_user(&self, values: &mut Values, elem: u32, value: &[u8]) {
        if self.copies == 1 {
            values.set(elem as usize, value);
            return;
        }
        let stride = crate::abi::round8(self.value_size);
        for c in 0..self.copies {
            let part = value
                .get(c * stride..c * stride + self.value_size)
                .unwrap_or(&[]);
            values.set(self.slot(elem, c) as usize, part);
        }
    }

    /// Reads an element in the syscall view.
    pub(crate) fn read_user(&self, values: &Values, elem: u32) -> Vec<u8> {
        if self.copies == 1 {
            return values.get(elem as usize).unwrap_or(&[]).to_vec();
        }
        let stride = crate::abi::round8(self.value_size);
        let mut out = vec![0; stride * self.copies];
        for c in 0..self.copies {
            if let Some(v) = values.get(self.slot(elem, c) as usize) {
                out[c * stride..c * stride + v.len()].copy_from_slice(v);
            }
        }
        out
    }
}
