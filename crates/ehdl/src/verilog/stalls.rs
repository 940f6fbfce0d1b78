//! The stall checks between map accesses packets could reorder (see `verilog/maps.rs`): which boundaries hold a
//! packet, one wire per check, and the advance `go` of every stage register.

use super::stage::{hex64, Gen};
use hwxdp_ebpf::InsnKind;
use std::fmt::Write as _;

/// Whether the 64-bit difference `d` of two addresses is within 7 either way (`(d + 7) mod 2^64 < 15`, the same
/// 8 bytes give or take), without a second carry chain after the subtraction: 0..7 has bits 63..3 clear, -7..-1
/// has them all set and some low bit set.
pub(super) fn near(d: &str) -> String {
    format!("(({d}[63:3] == 61'd0) | ((&{d}[63:3]) & (|{d}[2:0])))")
}

/// Whether two 64-bit addresses `a` and `b` are within 7 bytes of each other, as [`near`] of their difference gives
/// for every pair whose upper halves are equal, from `d`, a 33-bit wire holding `{1'b0, a[31:0]} - {1'b0, b[31:0]}`:
/// the halves equal and the low difference near. Map value pointers carry their map in the upper half and an offset
/// below the map's size in the lower (docs/ehdl.md), so two accesses can only meet in one map when their upper halves
/// are equal; a 33-bit carry chain instead of a 64-bit one shortens the path through the check into `go`.
pub(super) fn near_split(a: &str, b: &str, d: &str) -> String {
    format!("(({a}[63:32] == {b}[63:32]) & (({d}[32:3] == 30'd0) | ((&{d}[32:3]) & (|{d}[2:0]))))")
}

impl Gen<'_> {
    /// The stall checks (see `maps`): a valid bit per boundary, one wire per check, and `go`.
    pub(super) fn stall_logic(&mut self, n: u32) {
        if self.stalls.is_empty() {
            return;
        }
        let mut s = String::from(
            "\n  // ---- stall checks between map accesses packets could reorder ----\n",
        );
        // Which boundaries hold a packet (the predicates are not carried everywhere).
        for j in 1..=n {
            let v = format!("b{j}_v_q");
            self.declare(&v, 1);
            let prev = if j == 1 {
                "b0_valid_q".to_string()
            } else {
                format!("b{}_v_q", j - 1)
            };
            self.read(&prev);
            let _ = writeln!(
                s,
                "  always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n      {v} <= 1'b0;\n    \
                 end else if (go[{j}]) begin\n      {v} <= {prev} & go[{}];\n    end\n  end",
                j - 1
            );
        }
        let mut holds: Vec<(u32, String)> = Vec::new();
        let stalls: Vec<(u32, u32, u32, u32)> = self
            .stalls
            .iter()
            .map(|t| (t.early, t.late, t.e, t.l))
            .collect();
        for (i, (early, late, e, l)) in stalls.into_iter().enumerate() {
            let Some((ptr, en)) = self.early.get(&early).cloned() else {
                continue; // the early access was dead (a load whose result nothing reads): nothing to order
            };
            let late_op = &self.p.ops[late as usize];
            // The late access's address, when both are memory ops with pointers (else any older packet waits it).
            let late_addr = match hwxdp_ebpf::kind(&self.p.insns[late_op.insn as usize]) {
                Ok(
                    InsnKind::Load { base, off, .. }
                    | InsnKind::Store { base, off, .. }
                    | InsnKind::Atomic { base, off, .. },
                ) if !ptr.is_empty() => Some((base, off)),
                _ => None,
            };
            let mut terms = Vec::new();
            for j in e + 1..l {
                let v = self.read(&format!("b{j}_v_q"));
                let late_reg = late_addr.and_then(|(base, off)| {
                    self.late_base(base, j, l).map(|(r, c)| (r, off as i64 + c))
                });
                match late_reg {
                    Some((r, off)) => {
                        // The same 8 bytes, give or take: |early - late| < 8.
                        let (la, d) = (format!("stall{i}_l{j}"), format!("stall{i}_d{j}"));
                        self.declare(&la, 64);
                        self.declare(&d, 33);
                        let r = self.read(&r);
                        let _ = writeln!(
                            s,
                            "  assign {la} = {r} + {};\n  assign {d} = {{1'b0, {ptr}[31:0]}} - {{1'b0, {la}[31:0]}};",
                            hex64(off as u64)
                        );
                        self.read(&ptr);
                        terms.push(format!("({v} & {})", near_split(&ptr, &la, &d)));
                        self.read(&la);
                        self.read(&d);
                    }
                    None => match self
                        .same_flow(i, early, late, (j, l), &mut s)
                        .or_else(|| self.same_slot(i, early, late, j, &mut s))
                    {
                        Some(same) => terms.push(format!("({v} & {same})")),
                        None => terms.push(v),
                    },
                }
            }
            if terms.is_empty() {
                continue;
            }
            let w = format!("stall{i}");
            self.declare(&w, 1);
            let en = self.read(&en);
            let _ = writeln!(
                s,
                "  // {} (stage {e}) waits for older packets' {} (stage {l}).\n  assign {w} = {en} & ({});",
                self.p.ops[early as usize].text,
                late_op.text,
                terms.join(" | ")
            );
            holds.push((e, w));
        }
        self.busy_holds(&mut holds, &mut s);
        for st in 0..=n {
            let h: Vec<&str> = holds
                .iter()
                .filter(|(e, _)| *e >= st)
                .map(|(_, w)| w.as_str())
                .collect();
            if h.is_empty() {
                let _ = writeln!(s, "  assign go[{st}] = adv;");
            } else {
                let _ = writeln!(s, "  assign go[{st}] = adv & ~({});", h.join(" | "));
            }
        }
        self.body += &s;
    }
}
