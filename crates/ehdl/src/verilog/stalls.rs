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
                        let d = format!("stall{i}_d{j}");
                        self.declare(&d, 64);
                        let r = self.read(&r);
                        let _ =
                            writeln!(s, "  assign {d} = {ptr} - ({r} + {});", hex64(off as u64));
                        self.read(&ptr);
                        terms.push(format!("({v} & {})", near(&d)));
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
