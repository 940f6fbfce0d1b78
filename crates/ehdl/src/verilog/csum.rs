//! `bpf_csum_diff`: a one's complement sum over stack words, computed in the helper's stage exactly as the
//! reference machine does it (x86-64 `csum_partial` over 64-bit word pairs with end-around carries, folded to 32
//! and then 16 bits), so the result agrees bit for bit, zero's two representations included.

use super::helpers::Call;
use super::stage::Gen;
use super::VerilogError;
use crate::ir::ArgConst;
use std::fmt::Write as _;

/// Helper id of `bpf_csum_diff(from, from_size, to, to_size, seed)`.
pub(super) const CSUM_DIFF: i32 = 28;

const EINVAL: u64 = 22;

impl Gen<'_> {
    /// `bpf_csum_diff` (28) with constant sizes and the buffers at constant stack offsets: -EINVAL when a size is
    /// not a multiple of 4 or they add up to more than 512, else the folded difference of `to` and `from`.
    pub(super) fn csum_diff(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let h = cx.helper_label();
        let size = |r: u8| match cx.arg_const(r) {
            Some(ArgConst::Scalar(v)) => Some(v as u32 as usize),
            _ => None,
        };
        let (Some(from_size), Some(to_size)) = (size(2), size(4)) else {
            return Err(
                self.unsupported(op, format!("helper {h} with sizes known only at run time"))
            );
        };
        if !cx.live_reg(0) {
            return Ok(());
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let value = if (from_size | to_size) & 3 != 0 || from_size + to_size > 512 {
            format!("64'd0 - 64'd{EINVAL}")
        } else {
            let words = |g: &mut Self, r: u8, n: usize| -> Result<Vec<String>, VerilogError> {
                if n == 0 {
                    return Ok(Vec::new());
                }
                let Some(ArgConst::Stack(at)) = cx.arg_const(r) else {
                    return Err(g.unsupported(
                        op,
                        format!("helper {h} with a buffer that is not at a constant stack offset"),
                    ));
                };
                Ok((0..n / 4)
                    .map(|w| g.stack_bytes(cx.b, at + 4 * w as i64, 4))
                    .collect())
            };
            let from = words(self, 1, from_size)?;
            let to = words(self, 3, to_size)?;
            let seed = match cx.arg_const(5) {
                Some(ArgConst::Scalar(v)) => format!("32'h{:08x}", v as u32),
                None => {
                    let r = self.reg_in(cx, 5);
                    self.unused_ports.push(r.clone()); // the seed is a u32
                    format!("{r}[31:0]")
                }
                Some(_) => {
                    return Err(self.unsupported(op, format!("helper {h} with a pointer as seed")))
                }
            };
            let sum = match (from.is_empty(), to.is_empty()) {
                (true, true) => seed,
                (true, false) => self.csum_partial(name, "t", &to, &seed),
                (false, true) => {
                    let p = self.csum_partial(name, "f", &from, &format!("~{seed}"));
                    format!("~{p}")
                }
                (false, false) => {
                    let t = self.csum_partial(name, "t", &to, &seed);
                    let f = self.csum_partial(name, "f", &from, "32'd0");
                    self.csum_add(&format!("{name}_d"), &t, &format!("~{f}"))
                }
            };
            let (s, fold) = (format!("{name}_sum"), format!("{name}_fold"));
            self.declare(&s, 32);
            self.declare(&fold, 32);
            let sum = self.read(&sum);
            let _ = writeln!(
                self.body,
                "  assign {s} = {sum};  // {}\n  assign {fold} = {s} + {{{s}[15:0], {s}[31:16]}};",
                op.text
            );
            self.read(&s);
            self.read(&fold);
            self.unused_ports.push(format!("{fold}[15:0]"));
            format!("{{48'd0, {fold}[31:16]}}")
        };
        self.set_r0(cx, name, &en, &value, &format!("  // {}", op.text));
        Ok(())
    }

    /// `csum_partial(words, seed)`: the 32-bit words added as 64-bit pairs (low word first) with end-around carries
    /// onto the seed, folded to 32 bits. Returns the 32-bit signal.
    fn csum_partial(&mut self, name: &str, tag: &str, words: &[String], seed: &str) -> String {
        if words.is_empty() {
            return seed.to_string();
        }
        let mut sum = format!("{{32'd0, {seed}}}");
        for (i, pair) in words.chunks(2).enumerate() {
            let hi = pair.get(1).cloned().unwrap_or_else(|| "32'd0".into());
            let (t, s) = (format!("{name}_{tag}{i}_t"), format!("{name}_{tag}{i}_s"));
            self.declare(&t, 65);
            self.declare(&s, 64);
            let e = self.read(&format!("{{1'b0, {sum}}} + {{1'b0, {hi}, {}}}", pair[0]));
            let _ = writeln!(
                self.body,
                "  assign {t} = {e};\n  assign {s} = {t}[63:0] + {{63'd0, {t}[64]}};"
            );
            self.read(&t);
            sum = self.read(&s);
        }
        let p = format!("{name}_{tag}");
        self.csum_add(&p, &format!("{sum}[63:32]"), &format!("{sum}[31:0]"))
    }

    /// One's complement addition of two 32-bit values into wire `name`.
    fn csum_add(&mut self, name: &str, a: &str, b: &str) -> String {
        let t = format!("{name}_add");
        self.declare(&t, 33);
        self.declare(name, 32);
        let e = self.read(&format!("{{1'b0, {a}}} + {{1'b0, {b}}}"));
        let _ = writeln!(
            self.body,
            "  assign {t} = {e};\n  assign {name} = {t}[31:0] + {{31'd0, {t}[32]}};"
        );
        self.read(&t);
        self.read(name)
    }
}
