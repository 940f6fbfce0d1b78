//! The packet: header fields read and written at bit offsets, the parser's states, and the deparser.
//!
//! The parser keeps `off`, the byte offset of the next header. Every header records where it was parsed
//! (`hwxdp_off`, plus one), so that the deparser can tell whether the emitted headers still sit where they were found:
//! then only headers the program may have changed are written back (when [`super::Options::writeback_changed_only`]
//! holds), otherwise the packet's head grows or shrinks by the difference and every emitted header is written.

use super::ctypes::{c_bits, c_const, c_uint, ident, mask, raw_const};
use super::repr::{field_offset, Loc};
use super::Gen;
use crate::diag::Diagnostic;
use crate::ir::{Expr, ExprKind, HeaderId, KeysetElem, Stmt, Target, Transition, Ty};

/// Code reading a `w`-bit field at bit offset `bo` from the bytes at `p`: the number, or the raw bytes when `raw`.
pub fn load_field(p: &str, bo: u32, w: u32, raw: bool) -> String {
    let k = bo / 8;
    let bits = c_bits(w);
    if bo.is_multiple_of(8) && w.is_multiple_of(8) {
        let n = w / 8;
        if n == 1 {
            return format!("{p}[{k}]");
        }
        let load = format!("({{ u{bits} t_ = 0; __builtin_memcpy(&t_, {p} + {k}, {n}); t_; }})");
        return if raw {
            load
        } else {
            format!("hwxdp_ntoh{bits}({load}, {n})")
        };
    }
    let m = (bo % 8 + w).div_ceil(8);
    let wide = if m > 8 { "u128" } else { "u64" };
    let bytes: Vec<String> = (0..m)
        .map(|j| format!("(({wide}){p}[{}] << {})", k + j, 8 * (m - 1 - j)))
        .collect();
    let shift = 8 * m - bo % 8 - w;
    format!(
        "((u{bits})(({}) >> {shift}) & {})",
        bytes.join(" | "),
        c_const(mask(w), w)
    )
}

/// Statements writing `value` (the number, or raw bytes when `raw`) as a `w`-bit field at bit offset `bo` of `p`.
pub fn store_field(p: &str, bo: u32, w: u32, value: &str, raw: bool) -> String {
    let k = bo / 8;
    let bits = c_bits(w);
    if bo.is_multiple_of(8) && w.is_multiple_of(8) {
        let n = w / 8;
        if n == 1 {
            return format!("{p}[{k}] = (u8)({value});");
        }
        let v = if raw {
            format!("(u{bits})({value})")
        } else {
            format!("hwxdp_hton{bits}({value}, {n})")
        };
        return format!("{{ u{bits} t_ = {v}; __builtin_memcpy({p} + {k}, &t_, {n}); }}");
    }
    let m = (bo % 8 + w).div_ceil(8);
    let wide = if m > 8 { "u128" } else { "u64" };
    let shift = 8 * m - bo % 8 - w;
    let field_mask = mask(w) << shift;
    let mut out = format!(
        "{{ {wide} v_ = (({wide})({value}) & {}) << {shift}; ",
        c_const(mask(w), if m > 8 { 128 } else { 64 })
    );
    for j in 0..m {
        let s = 8 * (m - 1 - j);
        let mb = ((field_mask >> s) & 0xff) as u8;
        let byte = format!("{p}[{}]", k + j);
        if mb == 0xff {
            out += &format!("{byte} = (u8)(v_ >> {s}); ");
        } else {
            out += &format!(
                "{byte} = ({byte} & 0x{:02x}) | ((u8)(v_ >> {s}) & 0x{mb:02x}); ",
                !mb
            );
        }
    }
    out + "}"
}

impl Gen<'_> {
    /// The size in bytes of a header; a diagnostic when it is not a whole number of bytes.
    pub fn header_bytes(&self, h: HeaderId, at: &Expr) -> Result<u32, Diagnostic> {
        let bits = self.p.headers[h].width_bits(self.p);
        if !bits.is_multiple_of(8) {
            return Err(self.error(
                at.span,
                format!(
                    "header {} is {bits} bits long, not a whole number of bytes",
                    self.p.headers[h].name
                ),
            ));
        }
        Ok(bits / 8)
    }

    /// Statements loading every field of header `h` (C lvalue `place`) from the bytes at `p`.
    pub fn load_header(&self, place: &str, h: HeaderId, p: &str) -> String {
        let mut out = String::new();
        for (i, f) in self.p.headers[h].fields.iter().enumerate() {
            let w = f.ty.scalar_width(self.p).unwrap_or(0);
            let raw = self.reprs.is_raw(Loc::HeaderField(h, i));
            let mut v = load_field(p, field_offset(self.p, h, i), w, raw);
            if matches!(f.ty, Ty::Int(_)) {
                v = self.wrap(&v, &f.ty);
            }
            out += &format!("{place}.{} = {v}; ", ident(&f.name));
        }
        out
    }

    /// Statements writing every field of header `h` (C lvalue `place`) to the bytes at `p`.
    pub fn store_header(&self, place: &str, h: HeaderId, p: &str) -> String {
        let all: Vec<usize> = (0..self.p.headers[h].fields.len()).collect();
        self.store_fields(place, h, &all, p)
    }

    /// Statements writing the given fields of header `h` (C lvalue `place`) to the bytes at `p`.
    pub fn store_fields(&self, place: &str, h: HeaderId, fields: &[usize], p: &str) -> String {
        let mut out = String::new();
        for &i in fields {
            let f = &self.p.headers[h].fields[i];
            let w = f.ty.scalar_width(self.p).unwrap_or(0);
            let raw = self.reprs.is_raw(Loc::HeaderField(h, i));
            let value = format!("{place}.{}", ident(&f.name));
            out += &store_field(p, field_offset(self.p, h, i), w, &value, raw);
            out.push(' ');
        }
        out
    }

    /// `packet.extract(target)`.
    pub fn extract(&mut self, target: &Expr) -> Result<(), Diagnostic> {
        if let ExprKind::StackNext(base) = &target.kind {
            let Ty::Stack { elem, size } = base.ty else {
                return Err(self.error(target.span, "`next` of a value that is not a header stack"));
            };
            let b = self.place(base)?;
            self.line(&format!("if ({b}.next >= {size}) goto p_reject;"));
            self.line(&format!("switch ({b}.next) {{"));
            for i in 0..size {
                self.line(&format!("case {i}: {{"));
                self.extract_into(&format!("{b}.e[{i}]"), elem, target)?;
                self.line("} break;");
            }
            self.line("}");
            self.line(&format!("{b}.next++;"));
            return Ok(());
        }
        let Ty::Header(h) = target.ty else {
            return Err(self.error(target.span, "`extract` of a value that is not a header"));
        };
        let place = self.place(target)?;
        self.extract_into(&place, h, target)
    }

    fn extract_into(&mut self, place: &str, h: HeaderId, at: &Expr) -> Result<(), Diagnostic> {
        let size = self.header_bytes(h, at)?;
        self.line(&format!("if (pkt + off + {size} > end) goto p_reject;"));
        let loads = self.load_header(place, h, "(pkt + off)");
        self.line(&format!("{{ {loads}}}"));
        self.line(&format!(
            "{place}.hwxdp_valid = 1; {place}.hwxdp_off = off + 1; off += {size};"
        ));
        Ok(())
    }

    /// `packet.lookahead<T>()` of a `bit<N>` (a statement expression that rejects a packet too short for it).
    pub fn lookahead(&mut self, e: &Expr) -> Result<String, Diagnostic> {
        let Ty::Bit(w) = e.ty else {
            return Err(self.error(
                e.span,
                "unsupported construct: `lookahead` of a non-`bit<N>` type",
            ));
        };
        let n = w.div_ceil(8);
        let load = load_field("(pkt + off)", 0, w, false);
        Ok(format!(
            "({{ if (pkt + off + {n} > end) goto p_reject; ({})({load}); }})",
            c_uint(w)
        ))
    }

    /// `packet.advance(bits)`: whole bytes only; a computed size that is not a whole number of bytes, or runs past
    /// the packet, rejects it.
    pub fn advance(&mut self, bits: &Expr) -> Result<(), Diagnostic> {
        if let ExprKind::Const(b) = bits.kind {
            if b % 8 != 0 || b > 8 * 4096 {
                return Err(self.error(
                    bits.span,
                    format!("`advance` by {b} bits: not a whole number of bytes"),
                ));
            }
            let n = b / 8;
            self.line(&format!("if (pkt + off + {n} > end) goto p_reject;"));
            self.line(&format!("off += {n};"));
            return Ok(());
        }
        let v = self.number(bits)?;
        self.line(&format!("{{ u64 ab_ = (u64)({v});"));
        // The bound keeps the offset small enough for the verifier to follow; no packet is that long.
        self.line("if ((ab_ & 7) || ab_ > 8 * 4096) goto p_reject;");
        self.line("if (pkt + off + (ab_ >> 3) > end) goto p_reject;");
        self.line("off += (u32)(ab_ >> 3); }");
        Ok(())
    }

    /// The parser's states, as labelled blocks joined by `goto`.
    pub fn parser(&mut self) -> Result<(), Diagnostic> {
        let states = self.p.parser.states.clone();
        for (i, state) in states.iter().enumerate() {
            self.line(&format!("p_state_{i}: /* {} */ {{", state.name));
            self.stmts(&state.stmts)?;
            match &state.transition {
                Transition::Direct(t) => self.line(&format!("goto {};", target_label(*t))),
                Transition::Select { keys, cases } => self.select(keys, cases)?,
            }
            self.line("}");
        }
        Ok(())
    }

    fn select(&mut self, keys: &[Expr], cases: &[crate::ir::SelectCase]) -> Result<(), Diagnostic> {
        let mut vars = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let w = self.width(key)?;
            let ranged = cases
                .iter()
                .any(|c| matches!(c.keysets.get(i), Some(KeysetElem::Range { .. })));
            let raw = !ranged && self.reprs.expr_is_raw(self.p, key);
            let code = if raw {
                self.raw(key)?
            } else {
                self.number(key)?
            };
            self.line(&format!("{} sk{i} = {code};", c_uint(w)));
            vars.push((w, raw));
        }
        for case in cases {
            if let Some(set) = case.value_set {
                self.value_set_case(set, keys, case.target)?;
                continue;
            }
            let mut conds = Vec::new();
            for (i, ks) in case.keysets.iter().enumerate() {
                let (w, raw) = vars[i];
                let k = |v: u128| if raw { raw_const(v, w) } else { c_const(v, w) };
                match ks {
                    KeysetElem::Any => {}
                    KeysetElem::Value(v) => conds.push(format!("sk{i} == {}", k(*v))),
                    KeysetElem::Mask { value, mask } => {
                        conds.push(format!("(sk{i} & {}) == {}", k(*mask), k(value & mask)))
                    }
                    KeysetElem::Range { lo, hi } => conds.push(format!(
                        "sk{i} >= {} && sk{i} <= {}",
                        c_const(*lo, w),
                        c_const(*hi, w)
                    )),
                }
            }
            let cond = if conds.is_empty() {
                "1".to_string()
            } else {
                conds.join(" && ")
            };
            self.line(&format!("if ({cond}) goto {};", target_label(case.target)));
        }
        self.line("goto p_reject;");
        Ok(())
    }

    /// A `select` case naming value set `set`: the keys packed as the set's map key (docs/p4.md), looked up.
    fn value_set_case(
        &mut self,
        set: usize,
        keys: &[Expr],
        target: Target,
    ) -> Result<(), Diagnostic> {
        let vs = self.p.parser.value_sets[set].clone();
        self.line(&format!(
            "{{ struct vs{set}_key vk; __builtin_memset(&vk, 0, sizeof(vk));"
        ));
        let mut off = 0;
        for (key, (_, width)) in keys.iter().zip(&vs.fields) {
            self.key_bytes(key, *width, &format!("vk.b + {off}"))?;
            off += width.div_ceil(8);
        }
        self.line(&format!(
            "if (bpf_map_lookup_elem(&{}, &vk)) goto {}; }}",
            ident(&vs.name),
            target_label(target)
        ));
        Ok(())
    }

    /// The headers an `emit` argument writes, in order: a header, a stack's elements, a struct's headers.
    pub fn emitted(&self, e: &Expr, place: String, out: &mut Vec<(String, HeaderId)>) {
        match &e.ty {
            Ty::Header(h) => out.push((place, *h)),
            Ty::Stack { elem, size } => {
                for i in 0..*size {
                    out.push((format!("{place}.e[{i}]"), *elem));
                }
            }
            Ty::Struct(s) => {
                for (i, f) in self.p.structs[*s].fields.iter().enumerate() {
                    let field = Expr {
                        kind: ExprKind::Field {
                            base: Box::new(e.clone()),
                            index: i,
                        },
                        ty: f.ty.clone(),
                        span: e.span,
                    };
                    self.emitted(&field, format!("{place}.{}", ident(&f.name)), out);
                }
            }
            _ => {}
        }
    }

    /// The deparser: measure what it emits; write back only changed headers when the layout is unchanged, else move
    /// the packet's head and write every emitted header.
    pub fn deparser(&mut self) -> Result<(), Diagnostic> {
        let stmts = self.p.deparser.clone();
        self.line("{");
        self.line("u32 new_len = 0; int same = 1;");
        self.deparse_pass(&stmts, Pass::Measure)?;
        self.line("if (new_len != off) same = 0;");
        let fast = self.opts.writeback_changed_only;
        if fast {
            self.line("if (same) {");
            self.line("u32 woff = 0;");
            self.deparse_pass(&stmts, Pass::Changed)?;
            self.line("} else {");
        } else {
            self.line("{");
        }
        self.line("long delta = (long)off - (long)new_len;");
        self.line("if (delta != 0) {");
        self.line("if (bpf_xdp_adjust_head(ctx, (int)delta)) return XDP_ABORTED;");
        self.line("pkt = (u8 *)(long)ctx->data; end = (u8 *)(long)ctx->data_end;");
        self.line("}");
        self.line("u32 woff = 0;");
        self.deparse_pass(&stmts, Pass::All)?;
        self.line("}");
        self.line("}");
        Ok(())
    }

    fn deparse_pass(&mut self, stmts: &[Stmt], pass: Pass) -> Result<(), Diagnostic> {
        for s in stmts {
            match s {
                Stmt::Emit(e) => {
                    let place = self.place(e)?;
                    let mut headers = Vec::new();
                    self.emitted(e, place, &mut headers);
                    for (h_place, h) in headers {
                        let size = self.header_bytes(h, e)?;
                        match pass {
                            Pass::Measure => self.line(&format!(
                                "if ({h_place}.hwxdp_valid) {{ if ({h_place}.hwxdp_off != new_len + 1) same = 0; new_len += {size}; }}"
                            )),
                            // Every header sits where it was parsed, so the running offset is its offset; walking it
                            // (rather than reading the stored one) leaves clang constant offsets to fold.
                            // Every header sits where it was parsed, so the running offset is its offset; walking it
                            // (rather than reading the stored one) leaves clang constant offsets to fold.
                            Pass::Changed => {
                                let store = if self.is_modified(&h_place) {
                                    self.store_header(&h_place, h, "(pkt + woff)")
                                } else if let Some(fields) = self.modified_fields_of(&h_place) {
                                    self.store_fields(&h_place, h, &fields, "(pkt + woff)")
                                } else {
                                    String::new()
                                };
                                if store.is_empty() {
                                    self.line(&format!("if ({h_place}.hwxdp_valid) woff += {size};"));
                                } else {
                                    self.line(&format!(
                                        "if ({h_place}.hwxdp_valid) {{ if (pkt + woff + {size} > end) return XDP_ABORTED; {store}woff += {size}; }}"
                                    ));
                                }
                            }
                            Pass::All => {
                                let store = self.store_header(&h_place, h, "(pkt + woff)");
                                self.line(&format!(
                                    "if ({h_place}.hwxdp_valid) {{ if (pkt + woff + {size} > end) return XDP_ABORTED; {store}woff += {size}; }}"
                                ));
                            }
                        }
                    }
                }
                Stmt::If { cond, then, els } => {
                    let c = self.number(cond)?;
                    self.line(&format!("if ({c}) {{"));
                    self.deparse_pass(then, pass)?;
                    self.line("} else {");
                    self.deparse_pass(els, pass)?;
                    self.line("}");
                }
                other => {
                    return Err(self.error(
                        super::stmt::stmt_span(other).unwrap_or_default(),
                        "unsupported construct: a deparser statement other than `emit` and `if`",
                    ))
                }
            }
        }
        Ok(())
    }
}

/// The three walks of the deparser.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Add up the emitted headers' sizes; see whether each sits where it was parsed.
    Measure,
    /// Write the headers the program may have changed, in place.
    Changed,
    /// Write every emitted header from the start of the (moved) packet.
    All,
}

fn target_label(t: Target) -> String {
    match t {
        Target::Accept => "p_accept".into(),
        Target::Reject => "p_reject".into(),
        Target::State(s) => format!("p_state_{s}"),
    }
}
