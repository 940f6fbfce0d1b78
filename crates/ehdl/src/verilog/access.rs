//! The plumbing memory ops share: ports on the map value blocks, and where a packet access finds its bytes in the
//! frame registers (a constant position, or a run-time address over the frames the stage can see).

use super::head::shift64;
use super::maps::{geometry, MapPort};
use super::stage::{hex64, Gen};
use super::{VerilogError, DATA_BASE, FIDX_BITS};
use crate::ir::{Label, Op};
use std::fmt::Write as _;

/// A packet access's offset from `data` as a 64-bit expression: the constant `offset`, or the pointer register's
/// value `ptr` plus the instruction's `off`.
pub(super) fn packet_rel(offset: Option<i64>, ptr: Option<String>, off: i16) -> String {
    match (offset, ptr) {
        (Some(o), _) => hex64(o as u64),
        (None, p) => format!(
            "{} + {} - {}",
            p.unwrap_or_else(|| "64'd0".into()),
            hex64(off as i64 as u64),
            hex64(DATA_BASE)
        ),
    }
}

impl Gen<'_> {
    /// One access to a map value: a port on the block of every map the pointer may name (one, or every looked-up
    /// ARRAY map when the region analysis could not place it), selected by the pointer's high half. `wdata` is the
    /// value to write (`None`: a load), `code` the block's operation. Returns the wire with the `size` bytes read.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn map_port(
        &mut self,
        op: &Op,
        name: &str,
        en: &str,
        ptr: String,
        off: i16,
        size: u32,
        wdata: Option<String>,
        code: u8,
    ) -> Result<String, VerilogError> {
        let cands: Vec<u32> = match op.label {
            Label::MapValue { map, .. } if self.arrays.contains(&map) => vec![map],
            Label::MapValue { map, .. } => {
                let m = self.maps.get(map as usize).map_or("?", |s| s.name.as_str());
                return Err(self.unsupported(
                    op,
                    format!("a value of map {m}, which is not an ARRAY map the program looks up"),
                ));
            }
            _ if self.arrays.is_empty() => {
                return Err(
                    self.unsupported(op, "a memory access the region analysis could not place")
                );
            }
            _ => self.arrays.iter().copied().collect(),
        };
        let p = format!("{name}_ptr");
        self.declare(&p, 64);
        let _ = writeln!(
            self.body,
            "  assign {p} = {ptr} + {};",
            hex64(off as i64 as u64)
        );
        self.read(&ptr);
        self.unused_ports.push(p.clone());
        let reading = matches!(op.kind, crate::ir::OpKind::Load | crate::ir::OpKind::Atomic);
        let early_ptr = self
            .early_of(&ptr)
            .map(|e| format!("{e} + {}", hex64(off as i64 as u64)));
        let rd = format!("{name}_rd");
        self.declare(&rd, 8 * size);
        let mut reads = Vec::new();
        let mask = if size == 8 { 0xff } else { (1u32 << size) - 1 };
        for m in cands {
            let (_, aw) = geometry(&self.maps[m as usize]);
            let sel = format!("{name}_sel{m}");
            self.declare(&sel, 1);
            let _ = writeln!(self.body, "  assign {sel} = ({p}[63:32] == 32'd{});", m + 1);
            let rdm = format!("{name}_rd{m}");
            self.declare(&rdm, 64);
            self.unused_ports.push(rdm.clone());
            reads.push(format!(
                "({sel} ? {rdm}[{}:0] : {}'d0)",
                8 * size - 1,
                8 * size
            ));
            let (we, wd, wm) = match &wdata {
                Some(v) => (
                    format!("{} & {en} & {sel}", self.go(op.stage)),
                    v.clone(),
                    format!("8'h{mask:02x}"),
                ),
                None => ("1'b0".to_string(), "64'd0".to_string(), "8'h00".to_string()),
            };
            self.read(&we);
            self.read(&wd);
            self.map_ports.entry(m).or_default().push(MapPort {
                stage: op.stage,
                insn: op.insn,
                we,
                op: code,
                addr: format!("{p}[{}:0]", aw - 1),
                wdata: wd,
                wmask: wm,
                rdata: rdm,
                reads: reading,
                early: early_ptr.clone().map(|e| (e, format!("@[{}:0]", aw - 1))),
            });
        }
        let expr = self.read(&reads.join(" | "));
        let _ = writeln!(self.body, "  assign {rd} = {expr};  // {}", op.text);
        if op.label == Label::Unknown {
            // An unplaced access whose pointer names no map block aborts the packet rather than touching nothing.
            let sels: Vec<String> = self
                .arrays
                .iter()
                .map(|m| format!("{name}_sel{m}"))
                .collect();
            let nomap = format!("{name}_nomap");
            self.declare(&nomap, 1);
            let e = self.read(&format!("{en} & ~({})", sels.join(" | ")));
            let _ = writeln!(self.body, "  assign {nomap} = {e};");
            self.faults.push(nomap);
        }
        let checked = self.stalls.iter().any(|st| st.early == op.id)
            || self
                .flushes
                .iter()
                .any(|st| st.early == op.id || st.late == op.id);
        if checked {
            self.early.insert(op.id, (p.clone(), en.to_string()));
        }
        Ok(rd)
    }

    /// For a packet access at a run-time offset: the byte address wire (from the pointer register, relative to
    /// `data`), the vector of the frame registers' `sig` ("data" or "fidx") for the frames the stage can see (frame
    /// 0 lowest), and how many frames that is.
    pub(super) fn dyn_frames(
        &mut self,
        op: &Op,
        name: &str,
        rel: String,
        shift: Option<String>,
        sig: &str,
    ) -> Result<(String, String, u32), VerilogError> {
        let (vec, nf) = self.frame_vector(op, sig)?;
        let addr = format!("{name}_addr");
        self.declare(&addr, 16);
        let rel = self.read(&rel);
        let wide = format!("{name}_off");
        self.declare(&wide, 64);
        // After bpf_xdp_adjust_head the frames are where the bytes arrived: add the carried shift. A position before
        // the first arrived byte wraps far past the frames and misses.
        let shifted = shift.map_or_else(String::new, |s| format!(" + {}", shift64(&s)));
        let _ = writeln!(
            self.body,
            "  assign {wide} = {rel}{shifted};\n  assign {addr} = {wide}[15:0];"
        );
        self.unused_ports.push(wide);
        self.read(&addr);
        Ok((addr, vec, nf))
    }

    /// For an access at a run-time packet offset by `op`: the vector of the frame registers' `sig` ("data" or
    /// "fidx") for the frames its stage can see (frame 0 lowest), and how many frames that is.
    pub(super) fn frame_vector(
        &mut self,
        op: &Op,
        sig: &str,
    ) -> Result<(String, u32), VerilogError> {
        let k = op.stage;
        // The frames a header parser reaches: the first 256 bytes (or one frame), as far as they have arrived.
        let nf = (k + 1).min((256 / self.fb as u32).max(1));
        let parts: Vec<String> = (0..nf).rev().map(|f| format!("f{}_{sig}", k - f)).collect();
        let vec = self.read(&format!("{{{}}}", parts.join(", ")));
        Ok((vec, nf))
    }

    /// Frame register position, offset in the frame and whether the access crosses into the next frame, for a
    /// packet access at position `o` (from the first arrived byte) of `size` bytes by `op`.
    pub(super) fn packet_at(
        &self,
        op: &Op,
        o: i64,
        size: i64,
    ) -> Result<(u32, i64, bool), VerilogError> {
        if o < 0 {
            return Err(self.unsupported(op, "a packet access before data"));
        }
        let (f0, f1) = (o / self.fb, (o + size - 1) / self.fb);
        if f1 >= (1 << FIDX_BITS) - 1 {
            return Err(self.unsupported(op, format!("a packet access in frame {f1}")));
        }
        if f1 > op.stage as i64 {
            return Err(self.internal(Some(op), format!("frame {f1} needed at stage {}", op.stage)));
        }
        Ok(((op.stage as i64 - f0) as u32, o % self.fb, f1 > f0))
    }
}
