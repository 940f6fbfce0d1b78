//! `bpf_fib_lookup`: an `ehdl_fib` block per call, answering in the call's stage from a route table that the host
//! writes through the module's host port (block [`FIB_BLOCK`]), as the reference machine's `RouteTable::lookup`.
//!
//! The lookup is combinational (a longest-prefix pass over at most [`ROUTES`] routes, then the egress device and the
//! neighbour), so no stage waits for it: a busy-held multi-cycle block would cost throughput and the hold plumbing
//! for nothing the small table needs. Every call's block receives every host write, so each holds the same table.

use super::helpers::Call;
use super::stage::{hex64, is_signal, Gen};
use super::VerilogError;
use crate::ir::ArgConst;
use std::fmt::Write as _;

/// Helper id of `bpf_fib_lookup(ctx, params, plen, flags)`.
pub(super) const FIB_LOOKUP: i32 = 69;
/// The host port's block id (`host_map_i`) of the route table; map indices stay below it.
pub const FIB_BLOCK: u8 = 0xff;
/// Routes the block holds (the route table's size in the generated module).
pub const ROUTES: usize = 32;
/// Devices the block holds, besides the built-in loopback device.
pub const DEVICES: usize = 4;
/// Neighbours the block holds.
pub const NEIGHBORS: usize = 16;
/// Size of `struct bpf_fib_lookup`.
const PARAMS: i64 = 64;
/// The flags `ehdl_fib` does not model (SRC, TBID, MARK): the reference machine refuses to run them.
const UNMODELLED_FLAGS: i64 = 8 | 16 | 32;

impl Gen<'_> {
    /// `bpf_fib_lookup` (69) with the parameter block at a constant stack offset: the 64 live bytes of the input
    /// boundary in, the struct as the helper leaves it into the live bytes of the next boundary, R0 the answer.
    /// A run-time `flags` with SRC, TBID or MARK aborts the packet (the reference machine stops there too).
    pub(super) fn fib_lookup(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let h = cx.helper_label();
        let Some(ArgConst::Stack(at)) = cx.arg_const(2) else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with a parameter block not at a constant stack offset"),
            ));
        };
        if at < -512 || at + PARAMS > 0 {
            return Err(self.unsupported(op, format!("helper {h} with a buffer outside the stack")));
        }
        let arg = |g: &mut Self, r: u8| -> Result<String, VerilogError> {
            match cx.arg_const(r) {
                Some(ArgConst::Scalar(v)) => Ok(hex64(v as u64)),
                None => Ok(g.reg_in(cx, r)),
                Some(_) => Err(g.unsupported(op, format!("helper {h} with a pointer in r{r}"))),
            }
        };
        let plen = arg(self, 3)?;
        let flags = arg(self, 4)?;
        if let Some(ArgConst::Scalar(f)) = cx.arg_const(4) {
            let einval = f as u32 & !63 != 0
                || matches!(cx.arg_const(3), Some(ArgConst::Scalar(p)) if (p as i32) < PARAMS as i32);
            if !einval && f & UNMODELLED_FLAGS != 0 {
                return Err(self.unsupported(
                    op,
                    format!("helper {h} with flags {f:#x} (SRC, TBID, MARK are not modelled)"),
                ));
            }
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let params = self.stack_bytes(cx.b, at, PARAMS);
        let (ret, out) = (format!("{name}_ret"), format!("{name}_params"));
        self.declare(&ret, 64);
        self.declare(&out, 512);
        let _ = writeln!(
            self.body,
            "  ehdl_fib #(.ROUTES({ROUTES}), .DEVICES({DEVICES}), .NEIGHBORS({NEIGHBORS})) u_{name} (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .host_we_i(host_we_i & (host_map_i == 8'd{FIB_BLOCK})),\n    \
             .host_addr_i(host_addr_i[15:0]), .host_wdata_i(host_wdata_i), .host_wmask_i(host_wmask_i),\n    \
             .params_i({params}), .plen_i({plen}), .flags_i({flags}), .ret_o({ret}), .params_o({out})\n  );  // {}",
            op.text
        );
        self.read(&ret);
        self.read(&out);
        // Only the low halves of the arguments count, and bytes of the struct dead after the call go unread.
        for s in [&plen, &flags] {
            if is_signal(s) {
                self.unused_ports.push(s.to_string());
            }
        }
        self.unused_ports.push(out.clone());
        // The packet a reference run would stop at: modelled flags only once check_call has passed.
        let fault = format!("{name}_fault");
        self.declare(&fault, 1);
        let _ = writeln!(
            self.body,
            "  assign {fault} = {en} & ({ret} != 64'hffff_ffff_ffff_ffea) & (({flags} & 64'd{UNMODELLED_FLAGS}) != 64'd0);"
        );
        self.read(&fault);
        self.faults.push(fault);
        for i in 0..PARAMS {
            if !cx.live_byte(at + i) {
                continue;
            }
            let old = cx
                .stack
                .get(&(at + i))
                .cloned()
                .unwrap_or_else(|| "8'd0".into());
            let old = self.read(&old);
            let byte = format!("{name}_b{i}");
            self.declare(&byte, 8);
            let _ = writeln!(
                self.body,
                "  assign {byte} = {en} ? {out}[{}:{}] : {old};",
                8 * i + 7,
                8 * i
            );
            cx.stack.insert(at + i, byte);
        }
        if cx.live_reg(0) {
            self.set_r0(cx, &format!("{name}_r0"), &en, &ret, "");
        }
        Ok(())
    }
}
