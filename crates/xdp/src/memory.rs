//! Loads, stores and helper buffers through region-tagged addresses, each checked against the region it points into.

use crate::exec::{Vm, STACK_BYTES};
use crate::fault::FaultKind;
use crate::region::{self, Region};

/// Offsets of the fields of `struct xdp_md`.
const CTX_DATA: u64 = 0;
const CTX_DATA_END: u64 = 4;
const CTX_DATA_META: u64 = 8;
const CTX_INGRESS_IFINDEX: u64 = 12;
const CTX_RX_QUEUE_INDEX: u64 = 16;
const CTX_EGRESS_IFINDEX: u64 = 20;

impl Vm<'_> {
    /// The common case of an access, without building diagnostics: `size` bytes at a stack or packet address that is
    /// in bounds. `None` sends the caller to [`Vm::bytes`], which handles everything else and explains faults.
    #[inline(always)]
    pub(crate) fn fast_bytes(&mut self, addr: u64, size: usize) -> Option<&mut [u8]> {
        let off = region::offset(addr) as usize;
        match region::region(addr) {
            Region::Stack if off + size <= region::offset(self.regs[10]) as usize => {
                self.stack.get_mut(off..off + size)
            }
            Region::Packet => {
                let (meta, _, end) = self.buff.offsets();
                (off >= meta && off + size <= end).then(|| self.buff.packet_bytes_mut(off, size))
            }
            Region::MapValue => {
                let (map, slot, voff) = region::split_map_value(addr);
                let voff = voff as usize;
                self.maps
                    .try_value_mut(map, slot)?
                    .get_mut(voff..voff + size)
            }
            _ => None,
        }
    }

    /// Loads `N` bytes (little-endian) from `addr`.
    #[inline(always)]
    pub(crate) fn load_n<const N: usize>(&mut self, addr: u64) -> Result<u64, FaultKind> {
        let mut v = [0u8; 8];
        if region::region(addr) == Region::MapValue {
            // Reads go through the shared view: an unwritten chunk of a huge array reads as zeros, without storage.
            let (map, slot, voff) = region::split_map_value(addr);
            let voff = voff as usize;
            if let Some(b) = self
                .maps
                .try_value(map, slot)
                .and_then(|value| value.get(voff..voff + N))
            {
                v[..N].copy_from_slice(b);
                return Ok(u64::from_le_bytes(v));
            }
        }
        match self.fast_bytes(addr, N) {
            Some(b) => v[..N].copy_from_slice(&b[..N]),
            None if region::region(addr) == Region::Context => return self.load_ctx(addr, N),
            None => v[..N].copy_from_slice(&self.bytes(addr, N, "load")?[..N]),
        }
        Ok(u64::from_le_bytes(v))
    }

    /// Stores the low `N` bytes of `value` (little-endian) at `addr`.
    #[inline(always)]
    pub(crate) fn store_n<const N: usize>(
        &mut self,
        addr: u64,
        value: u64,
    ) -> Result<(), FaultKind> {
        let bytes = value.to_le_bytes();
        match self.fast_bytes(addr, N) {
            Some(b) => b[..N].copy_from_slice(&bytes[..N]),
            None => self.bytes(addr, N, "store")?[..N].copy_from_slice(&bytes[..N]),
        }
        Ok(())
    }

    /// Loads `size` bytes (little-endian) from `addr`.
    #[inline]
    pub fn load(&mut self, addr: u64, size: usize) -> Result<u64, FaultKind> {
        match size {
            1 => self.load_n::<1>(addr),
            2 => self.load_n::<2>(addr),
            4 => self.load_n::<4>(addr),
            _ => self.load_n::<8>(addr),
        }
    }

    /// Stores the low `size` bytes of `value` (little-endian) at `addr`.
    #[inline]
    pub fn store(&mut self, addr: u64, size: usize, value: u64) -> Result<(), FaultKind> {
        match size {
            1 => self.store_n::<1>(addr, value),
            2 => self.store_n::<2>(addr, value),
            4 => self.store_n::<4>(addr, value),
            _ => self.store_n::<8>(addr, value),
        }
    }

    /// Copies `out.len()` bytes from `addr` (helpers reading keys, values, buffers).
    pub fn read_into(&mut self, addr: u64, out: &mut [u8]) -> Result<(), FaultKind> {
        let bytes = self.bytes(addr, out.len(), "load")?;
        out.copy_from_slice(bytes);
        Ok(())
    }

    /// Copies `data` to `addr`.
    pub fn write_from(&mut self, addr: u64, data: &[u8]) -> Result<(), FaultKind> {
        self.bytes(addr, data.len(), "store")?.copy_from_slice(data);
        Ok(())
    }

    /// The `size` bytes at `addr`, checked against the bounds of the region the address points into.
    pub fn bytes(
        &mut self,
        addr: u64,
        size: usize,
        access: &'static str,
    ) -> Result<&mut [u8], FaultKind> {
        let off = region::offset(addr) as usize;
        let oob = |why: String| FaultKind::OutOfBounds {
            access,
            size,
            addr: region::describe(addr),
            why,
        };
        match region::region(addr) {
            Region::Packet => {
                let (meta, _, end) = self.buff.offsets();
                if off < meta || off.saturating_add(size) > end {
                    return Err(oob(format!("packet is frame+{meta}..frame+{end}")));
                }
                Ok(self.buff.packet_bytes_mut(off, size))
            }
            Region::Stack => {
                let top = region::offset(self.regs[10]) as usize;
                if off.saturating_add(size) > top || off.saturating_add(size) > STACK_BYTES {
                    return Err(oob(format!("stack ends at stack+{top}")));
                }
                Ok(&mut self.stack[off..off + size])
            }
            Region::MapValue => {
                let (map, slot, voff) = region::split_map_value(addr);
                if let Err(e) = self.maps.check_slot_write(map, slot) {
                    return Err(FaultKind::MapMemory {
                        message: e.to_string(),
                    });
                }
                let value = self
                    .maps
                    .try_value_mut(map, slot)
                    .ok_or_else(|| oob("no such map value".to_string()))?;
                let len = value.len();
                let voff = voff as usize;
                if voff.saturating_add(size) > len {
                    return Err(oob(format!("value is {len} bytes")));
                }
                Ok(&mut value[voff..voff + size])
            }
            Region::Context => Err(FaultKind::NotAPointer {
                access,
                size,
                addr: format!(
                    "{} (only whole fields of xdp_md can be read)",
                    region::describe(addr)
                ),
            }),
            Region::MapHandle | Region::None => Err(FaultKind::NotAPointer {
                access,
                size,
                addr: region::describe(addr),
            }),
        }
    }

    pub(crate) fn load_ctx(&mut self, addr: u64, size: usize) -> Result<u64, FaultKind> {
        let (meta, data, end) = self.buff.offsets();
        let field = region::offset(addr);
        if size != 4 {
            return Err(FaultKind::NotAPointer {
                access: "load",
                size,
                addr: format!("{} (xdp_md fields are read as u32)", region::describe(addr)),
            });
        }
        Ok(match field {
            CTX_DATA => region::packet(data),
            CTX_DATA_END => region::packet(end),
            CTX_DATA_META => region::packet(meta),
            CTX_INGRESS_IFINDEX => self.md.ingress_ifindex as u64,
            CTX_RX_QUEUE_INDEX => self.md.rx_queue_index as u64,
            CTX_EGRESS_IFINDEX => 0,
            _ => {
                return Err(FaultKind::NotAPointer {
                    access: "load",
                    size,
                    addr: format!("{} (no such xdp_md field)", region::describe(addr)),
                })
            }
        })
    }
}
