//! RINGBUF maps: `bpf_ringbuf_output` call sites as ports of one shared `ehdl_ringbuf` block per map, which lays the
//! records out as the reference machine (and the kernel) does, in program order, and which the host drains through
//! the host port (the data area at bytes `0 .. max_entries`, the producer position at `max_entries`, the consumer
//! position at `max_entries + 8`, written to free space).

use super::helpers::Call;
use super::stage::Gen;
use super::VerilogError;
use crate::ir::ArgConst;
use std::fmt::Write as _;

/// `BPF_MAP_TYPE_RINGBUF`.
const MAP_TYPE_RINGBUF: u32 = 27;
/// The longest record a call may output (its data is carried from the stack byte by byte).
const MAX_RECORD: i64 = 256;
/// The largest ring the register-based block holds.
const MAX_RING_BYTES: u32 = 1 << 16;
/// `EINVAL`, `EAGAIN`.
const EINVAL: u64 = 22;
const EAGAIN: u64 = 11;

/// A RINGBUF map.
pub(super) fn is_ringbuf(spec: &hwxdp_object::MapSpec) -> bool {
    spec.map_type == MAP_TYPE_RINGBUF
}

/// Why the block cannot hold ring `spec`, if it cannot.
pub(super) fn misfit(spec: &hwxdp_object::MapSpec) -> Option<String> {
    (spec.max_entries > MAX_RING_BYTES || !spec.max_entries.is_power_of_two()).then(|| {
        format!(
            "a ring of {} bytes; the register-based ring block takes a power of two up to {MAX_RING_BYTES}",
            spec.max_entries
        )
    })
}

/// One `bpf_ringbuf_output` call site: its order (stage, instruction), enable (gated by the advance), record length,
/// data bytes (little-endian, `len` bytes) and the wire that receives "the record fits".
pub(super) struct RingPort {
    pub(super) stage: u32,
    pub(super) insn: u32,
    pub(super) en: String,
    pub(super) len: u32,
    pub(super) data: String,
    pub(super) ok: String,
}

impl Gen<'_> {
    /// `bpf_ringbuf_output(map, data, size, flags)` (130) with a constant map, a stack pointer at a constant offset
    /// and constant size and flags: a port of the map's ring block; R0 = 0, or -EAGAIN when the record does not fit,
    /// or -EINVAL for flags other than the wake-up ones (no record).
    pub(super) fn ringbuf_output(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        use ArgConst::{Map, Scalar, Stack};
        let [Some(Map(m)), Some(Stack(at)), Some(Scalar(size)), Some(Scalar(flags))] = cx.args()
        else {
            return Err(self.unsupported(
                op,
                "bpf_ringbuf_output with a map, a data pointer other than the stack, a size or flags known only at \
                 run time",
            ));
        };
        if !self.arrays.contains(&m) || !self.maps.get(m as usize).is_some_and(is_ringbuf) {
            let n = self.maps.get(m as usize).map_or("?", |s| s.name.as_str());
            return Err(self.unsupported(
                op,
                format!("bpf_ringbuf_output on map {n}, which is not a RINGBUF map"),
            ));
        }
        if !(0..=MAX_RECORD).contains(&size) {
            return Err(self.unsupported(
                op,
                format!(
                    "a ring buffer record of {size} bytes (the block takes up to {MAX_RECORD})"
                ),
            ));
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let bad_flags = flags as u64 & !3 != 0;
        let ok = format!("{name}_ok");
        self.declare(&ok, 1);
        let r0 = if bad_flags {
            self.unused_ports.push(ok.clone());
            let _ = writeln!(
                self.body,
                "  assign {ok} = 1'b0;  // {}: bad flags",
                op.text
            );
            format!("64'd0 - 64'd{EINVAL}")
        } else {
            let data = if size == 0 {
                "8'd0".to_string()
            } else {
                self.stack_bytes(cx.b, at, size)
            };
            let we = format!("{} & {en}", self.go(op.stage));
            self.read(&we);
            self.ring_ports.entry(m).or_default().push(RingPort {
                stage: op.stage,
                insn: op.insn,
                en: we,
                len: size as u32,
                data,
                ok: ok.clone(),
            });
            if self.stalls.iter().any(|st| st.early == op.id) {
                self.early.insert(op.id, (String::new(), en.clone()));
            }
            self.read(&ok);
            format!("({ok} ? 64'd0 : 64'd0 - 64'd{EAGAIN})")
        };
        if cx.live_reg(0) {
            let comment = format!("  // {}: 0 or -errno", op.text);
            self.set_r0(cx, &format!("{name}_r0"), &en, &r0, &comment);
        }
        Ok(())
    }

    /// The ring block of RINGBUF map `m` with its ports (later stage first, then program order); returns the
    /// wire of its host read data.
    pub(super) fn ring_block(&mut self, s: &mut String, m: u32) -> String {
        let size = self.maps[m as usize].max_entries;
        let mut ports = self.ring_ports.remove(&m).unwrap_or_default();
        ports.sort_by_key(|p| (std::cmp::Reverse(p.stage), p.insn));
        let np = ports.len().max(1);
        let maxw = ports
            .iter()
            .map(|p| p.len.div_ceil(8))
            .max()
            .unwrap_or(1)
            .max(1);
        let aw = 64 - (size as u64 + 8).leading_zeros();
        let name = format!("map{m}");
        for (sig, w) in [
            ("en", np),
            ("len", 16 * np),
            ("data", 64 * maxw as usize * np),
            ("ok", np),
        ] {
            let _ = writeln!(self.decls, "  logic [{}:0] {name}_rb_{sig};", w - 1);
        }
        let rd = format!("{name}_rb_rdata");
        let _ = writeln!(self.decls, "  logic [63:0] {rd};");
        let join = |f: &dyn Fn(&RingPort) -> String, tie: String| -> String {
            if ports.is_empty() {
                tie
            } else {
                let parts: Vec<String> = ports.iter().rev().map(f).collect();
                format!("{{{}}}", parts.join(", "))
            }
        };
        let en = join(&|p| p.en.clone(), "1'b0".into());
        let len = join(&|p| format!("16'd{}", p.len), "16'd0".into());
        let data = join(
            &|p| {
                let pad = 64 * maxw - 8 * p.len.max(1);
                if pad == 0 {
                    p.data.clone()
                } else {
                    format!("{{{pad}'d0, {}}}", p.data)
                }
            },
            format!("{}'d0", 64 * maxw),
        );
        for e in [&en, &data] {
            self.read(e);
        }
        let _ = writeln!(
            s,
            "\n  // Map {m} ({map}): RINGBUF of {size} bytes; ports later stage first, then program order.\n  \
             assign {name}_rb_en = {en};\n  assign {name}_rb_len = {len};\n  assign {name}_rb_data = {data};",
            map = self.maps[m as usize].name,
        );
        for (i, p) in ports.iter().enumerate() {
            let _ = writeln!(s, "  assign {} = {name}_rb_ok[{i}];", p.ok);
        }
        if ports.is_empty() {
            self.unused_ports.push(format!("{name}_rb_ok"));
        }
        let _ = writeln!(
            s,
            "  ehdl_ringbuf #(.SIZE({size}), .NP({np}), .MAXW({maxw}), .AW({aw})) u_{name}_ring (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .en_i({name}_rb_en), .len_i({name}_rb_len), .data_i({name}_rb_data),\n    \
             .ok_o({name}_rb_ok), .host_we_i(host_we_i & (host_map_i == 8'd{m})), .host_addr_i(host_addr_i[{}:0]),\n    \
             .host_wdata_i(host_wdata_i), .host_wmask_i(host_wmask_i), .host_rdata_o({rd})\n  );",
            aw - 1
        );
        rd
    }
}
