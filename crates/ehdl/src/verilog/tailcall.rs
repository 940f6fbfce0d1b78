//! The PROG_ARRAY slot read of an inlined tail call ([`crate::tailcall::TAIL_SLOT`]): a read port on the map's
//! `ehdl_map_mem` block, which the host fills with one 4-byte word per slot, 1 + the program's index in the object's
//! program list, 0 for an empty slot (docs/ehdl.md, "Ports"). R0 is that word, or 0 when the index is out of range;
//! the dispatch on R0 is ordinary predicated code.

use super::helpers::Call;
use super::maps::geometry;
use super::stage::{hex64, Gen};
use super::VerilogError;
use crate::ir::{ArgConst, OpKind, Pipeline};
use crate::tailcall::TAIL_SLOT;
use hwxdp_object::MapSpec;
use std::fmt::Write as _;

/// `BPF_MAP_TYPE_PROG_ARRAY`.
const MAP_TYPE_PROG_ARRAY: u32 = 3;

/// A PROG_ARRAY: its block holds the slots' program words.
pub(super) fn is_prog_array(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_PROG_ARRAY
}

/// The PROG_ARRAY maps the program's tail calls read, which get blocks.
pub(super) fn slot_maps<'a>(
    p: &'a Pipeline,
    maps: &'a [MapSpec],
) -> impl Iterator<Item = u32> + 'a {
    p.ops.iter().filter_map(move |o| match &o.kind {
        OpKind::Helper {
            id: TAIL_SLOT,
            consts,
            ..
        } => consts.iter().find_map(|c| match c {
            (2, ArgConst::Map(m)) if maps.get(*m as usize).is_some_and(is_prog_array) => Some(*m),
            _ => None,
        }),
        _ => None,
    })
}

impl Gen<'_> {
    /// The slot read: R0 = the slot's word when the index is below `max_entries`, else 0.
    pub(super) fn tail_slot(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let Some(ArgConst::Map(m)) = cx.arg_const(2) else {
            return Err(self.unsupported(op, "a tail call on a map known only at run time"));
        };
        if !self.arrays.contains(&m) {
            return Err(self.unsupported(op, "a tail call on a map other than a PROG_ARRAY"));
        }
        if !cx.live_reg(0) {
            return Ok(());
        }
        let index = match cx.arg_const(3) {
            Some(ArgConst::Scalar(v)) => hex64(v as u64),
            Some(_) => return Err(self.unsupported(op, "a tail call with a pointer as index")),
            None => self.reg_in(cx, 3),
        };
        let spec = &self.maps[m as usize];
        let (entries, vsize) = (spec.max_entries, spec.value_size);
        let (_, aw) = geometry(spec);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let (kw, rd, word) = (
            format!("{name}_key"),
            format!("{name}_rd{m}"),
            format!("{name}_word"),
        );
        self.declare(&kw, 64);
        self.declare(&rd, 64);
        self.declare(&word, 64);
        let _ = writeln!(
            self.body,
            "  assign {kw} = {index};  // {}\n  \
             assign {word} = ({kw} < 64'd{entries}) ? {{32'd0, {rd}[31:0]}} : 64'd0;",
            op.text
        );
        self.slot_read_port(op, m, (&kw, &index), rd, (vsize, aw));
        let word = self.read(&word);
        self.set_r0(cx, &format!("{name}_r0"), &en, &word, "");
        Ok(())
    }
}
