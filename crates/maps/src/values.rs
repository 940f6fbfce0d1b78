//! Flat value storage: slot `s` of a map is `data[s * size..(s + 1) * size]`.

/// Values of one map, one fixed-size slot each, in a single growable buffer.
#[derive(Clone, Debug)]
pub(crate) struct Values {
    size: usize,
    data: Vec<u8>,
}

impl Values {
    /// Storage for `slots` zeroed values of `size` bytes.
    pub(crate) fn new(size: usize, slots: usize) -> Values {
        Values {
            size,
            data: vec![0; size * slots],
        }
    }

    /// Number of slots currently backed by storage.
    pub(crate) fn len(&self) -> usize {
        self.data.len().checked_div(self.size).unwrap_or(0)
    }

    /// Makes slots `0..slots` exist (new ones zeroed); storage only grows, so slots stay where they are.
    pub(crate) fn ensure(&mut self, slots: usize) {
        let want = slots * self.size;
        if self.data.len() < want {
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
        let r = self.range(slot)?;
        self.data.get(r)
    }

    /// The value in `slot`, writable.
    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        let r = self.range(slot)?;
        self.data.get_mut(r)
    }

    /// Copies `value` into `slot`; a shorter `value` leaves the rest of the slot as it was.
    pub(crate) fn set(&mut self, slot: usize, value: &[u8]) {
        if let Some(dst) = self.get_mut(slot) {
            let n = dst.len().min(value.len());
            dst[..n].copy_from_slice(&value[..n]);
        }
    }

    /// Zeroes `slot`.
    pub(crate) fn zero(&mut self, slot: usize) {
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
