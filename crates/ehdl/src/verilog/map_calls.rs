//! Map helper blocks: `bpf_map_lookup_elem` (an `ehdl_array_lookup` block fed by the map's CAM for HASH and
//! LPM_TRIE maps), `bpf_map_update_elem` and the CAM write ports updates and deletes share.

use super::helpers::Call;
use super::lru::is_lru;
use super::maps::{geometry, is_cam, is_hash, slot_width, HashPort, MapPort};
use super::stage::Gen;
use super::VerilogError;
use crate::ir::{ArgConst, Op};
use std::fmt::Write as _;

impl Gen<'_> {
    /// The hit, slot (`sw` bits) and error wires of a CAM port of helper block `name`.
    fn cam_wires(&mut self, name: &str, sw: u32) -> (String, String, String) {
        let (hit, slot, err) = (
            format!("{name}_hit"),
            format!("{name}_slot"),
            format!("{name}_err"),
        );
        self.declare(&hit, 1);
        self.declare(&slot, sw);
        self.declare(&err, 8);
        (hit, slot, err)
    }

    /// A write port on map `m`'s CAM for `key` under `en` (an update with `flags`, or a delete with `del`), held by
    /// the block's busy signal on LRU maps; returns the port's hit, slot and error wires.
    pub(super) fn cam_write_port(
        &mut self,
        op: &Op,
        name: &str,
        m: u32,
        en: &str,
        key: String,
        (flags, del): (u8, bool),
    ) -> (String, String, String) {
        let spec = &self.maps[m as usize];
        let (sw, lru) = (slot_width(super::maps::key_slots(spec)), is_lru(spec));
        let (hit, slot, err) = self.cam_wires(name, sw);
        let we = format!("{} & {en}", self.go(op.stage));
        self.read(&we);
        let (req, busy) = if lru {
            let (r, b) = self.lru_wires(name, en, op.stage);
            (r, Some(b))
        } else {
            ("1'b0".to_string(), None)
        };
        self.hash_ports.entry(m).or_default().push(HashPort {
            stage: op.stage,
            insn: op.insn,
            update: true,
            del,
            req,
            busy,
            en: we,
            key: key.clone(),
            flags,
            hit: hit.clone(),
            slot: slot.clone(),
            err: err.clone(),
        });
        if self.stalls.iter().any(|st| st.early == op.id) {
            self.early.insert(op.id, (String::new(), en.to_string()));
            self.early_keys.insert(op.id, key);
        }
        (hit, slot, err)
    }

    /// `bpf_map_lookup_elem` (1): an `ehdl_array_lookup` block, fed by the map's CAM for HASH and LPM_TRIE maps.
    pub(super) fn map_lookup(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let h = cx.helper_label();
        let [Some(ArgConst::Map(m)), Some(ArgConst::Stack(ko)), ..] = cx.args() else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with a map or key pointer known only at run time"),
            ));
        };
        if !self.arrays.contains(&m) {
            let blocks = "only ARRAY, HASH and LPM_TRIE maps have blocks yet";
            return Err(self.unsupported_map(op, &h, m, blocks));
        }
        // An LRU lookup marks its entry referenced, so it acts even when nothing reads R0.
        let lru = is_lru(&self.maps[m as usize]);
        if !cx.live_reg(0) && !lru {
            return Ok(());
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let spec = &self.maps[m as usize];
        let hash = is_cam(spec);
        let kbytes = if hash { spec.key_size as i64 } else { 4 };
        let mut key = self.stack_bytes(cx.b, ko, kbytes);
        if hash {
            // The CAM finds the slot; the pointer is the slot's value, as for an ARRAY index.
            let sw = slot_width(super::maps::key_slots(spec));
            let (hit, slot, err) = self.cam_wires(name, sw);
            let port_en = if lru {
                let we = format!("{} & {en}", self.go(op.stage));
                self.read(&we)
            } else {
                "1'b0".into()
            };
            self.unused_ports.push(err.clone());
            self.hash_ports.entry(m).or_default().push(HashPort {
                stage: op.stage,
                insn: op.insn,
                update: false,
                del: false,
                req: "1'b0".into(),
                busy: None,
                en: port_en,
                key: key.clone(),
                flags: 0,
                hit: hit.clone(),
                slot: slot.clone(),
                err,
            });
            if self.stalls.iter().any(|st| st.early == op.id) {
                self.early.insert(op.id, (String::new(), en.clone()));
                self.early_keys.insert(op.id, key.clone());
            }
            if !cx.live_reg(0) {
                self.unused_ports.push(hit);
                self.unused_ports.push(slot);
                return Ok(());
            }
            key = self.read(&format!(
                "{hit} ? {{{}'d0, {slot}}} : 32'hffff_ffff",
                32 - sw
            ));
        }
        let old = self.old_reg_value(cx, 0);
        let spec = &self.maps[m as usize];
        // A HASH map's pointer is its slot's value: slots past max_entries with hashed buckets.
        let entries = if hash {
            super::maps::key_slots(spec)
        } else {
            spec.max_entries
        };
        let vsize = spec.value_size;
        self.declare(name, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_array_lookup #(.MAP_ID({m}), .ENTRIES({entries}), .VALUE_SIZE({vsize})) u_{name} \
             (.en_i({en}), .key_i({key}), .old_i({old}), .r0_o({name}));  // {}",
            op.text
        );
        cx.regs.insert(0, name.to_string());
        Ok(())
    }

    /// `bpf_map_update_elem` (2) with constant map, key and value pointers and flags, on a HASH map.
    pub(super) fn map_update_call(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let op = cx.op;
        let h = cx.helper_label();
        use ArgConst::{Map, Scalar, Stack};
        let [Some(Map(m)), Some(Stack(ko)), Some(Stack(vo)), Some(Scalar(flags @ 0..=2))] =
            cx.args()
        else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with arguments known only at run time"),
            ));
        };
        let spec = self.maps.get(m as usize);
        if !self.arrays.contains(&m) || !spec.is_some_and(|s| is_hash(s) || is_lru(s)) {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {h} on map {} (only HASH and LRU_HASH maps take updates yet)",
                    spec.map_or("?", |s| s.name.as_str())
                ),
            ));
        }
        self.map_update(cx, (m, ko, vo, flags as u8))
    }

    /// `bpf_map_update_elem` on HASH map `m` with the key at stack offset `ko`, the value at `vo` and `flags`: an
    /// update port on the map's CAM, value ports writing the slot it gives, and R0 = 0 or -errno.
    fn map_update(
        &mut self,
        cx: &mut Call,
        (m, ko, vo, flags): (u32, i64, i64, u8),
    ) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let spec = &self.maps[m as usize];
        let (kb, vsize) = (spec.key_size as i64, spec.value_size as i64);
        let (_, aw) = geometry(spec);
        let sw = slot_width(super::maps::key_slots(spec));
        let key = self.stack_bytes(cx.b, ko, kb);
        let (hit, slot, err) = self.cam_write_port(op, name, m, &en, key, (flags, false));
        // The value, 8 bytes per port, at slot * value_size.
        let base = format!("{name}_vbase");
        self.declare(&base, aw);
        let wide_slot = if aw > sw {
            format!("{{{}'d0, {slot}}}", aw - sw)
        } else {
            slot.clone()
        };
        let _ = writeln!(
            self.body,
            "  assign {base} = {wide_slot} * {aw}'d{vsize};  // {}",
            op.text
        );
        self.read(&slot);
        self.read(&base);
        for i in 0..(vsize + 7) / 8 {
            let n = (vsize - 8 * i).min(8);
            let chunk = self.stack_bytes(cx.b, vo + 8 * i, n);
            let rd = format!("{name}_v{i}_rd");
            self.declare(&rd, 64);
            self.unused_ports.push(rd.clone());
            let mask = if n == 8 { 0xff } else { (1u32 << n) - 1 };
            self.read(&hit);
            self.map_ports.entry(m).or_default().push(MapPort {
                stage: op.stage,
                insn: op.insn,
                we: hit.clone(),
                op: 0,
                addr: format!("({base} + {aw}'d{})", 8 * i),
                wdata: if n == 8 {
                    chunk
                } else {
                    format!("{{{}'d0, {chunk}}}", 64 - 8 * n)
                },
                wmask: format!("8'h{mask:02x}"),
                rdata: rd,
                reads: false,
                early: None,
            });
        }
        self.set_r0_errno(cx, &en, err, "-errno");
        Ok(())
    }
}
