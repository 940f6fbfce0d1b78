//! Expressions to C. A value is either a number (host order) or, for locations the byte-order analysis kept in
//! network order, the raw bytes; consumers ask for the form they need and conversions happen only there.

use super::ctypes::{c_bits, c_const, c_sint, c_type, c_uint, ident, mask, raw_const};
use super::repr::loc_of;
use super::Gen;
use crate::ast::{BinaryOp, UnaryOp};
use crate::diag::{Diagnostic, Span};
use crate::ir::{Expr, ExprKind, ExternFn, Root, Ty};

/// A C expression and whether it holds network-order bytes rather than the number.
pub struct CVal {
    /// The C expression.
    pub code: String,
    /// True when the value is the raw network-order bytes of a location.
    pub raw: bool,
}

impl Gen<'_> {
    /// A diagnostic at `span`.
    pub fn error(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.p.sources.diagnostic(span, message)
    }

    /// The width of a scalar expression; a diagnostic for other types.
    pub fn width(&self, e: &Expr) -> Result<u32, Diagnostic> {
        e.ty.scalar_width(self.p)
            .or(match e.ty {
                Ty::Enum(_) | Ty::Error => Some(32),
                _ => None,
            })
            .ok_or_else(|| self.error(e.span, "expected a scalar value"))
    }

    /// The C lvalue naming a variable, field or stack element.
    pub fn place(&mut self, e: &Expr) -> Result<String, Diagnostic> {
        Ok(match &e.kind {
            ExprKind::Var(Root::Headers) => "hdr".into(),
            ExprKind::Var(Root::XdpInput) => "xin".into(),
            ExprKind::Var(Root::XdpOutput) => "xout".into(),
            ExprKind::Var(Root::Accept) => "accept".into(),
            ExprKind::Var(Root::Local(id)) => self.local_name(*id),
            ExprKind::Field { base, index } => {
                let b = self.place(base)?;
                let name = match &base.ty {
                    Ty::Header(h) => &self.p.headers[*h].fields[*index].name,
                    Ty::Struct(s) => &self.p.structs[*s].fields[*index].name,
                    _ => return Err(self.error(e.span, "field of a value that has no fields")),
                };
                format!("{b}.{}", ident(name))
            }
            ExprKind::StackElem { base, index } => format!("{}.e[{index}]", self.place(base)?),
            ExprKind::StackLast(base) => {
                let b = self.place(base)?;
                let Ty::Stack { size, .. } = base.ty else {
                    return Err(self.error(e.span, "`last` of a value that is not a header stack"));
                };
                // A chain of constant indices: the verifier needs every stack offset to be known.
                let mut code = format!("{b}.e[{}]", size - 1);
                for i in (0..size.saturating_sub(1)).rev() {
                    code = format!("(*({b}.next == {} ? &{b}.e[{i}] : &{code}))", i + 1);
                }
                code
            }
            _ => return Err(self.error(e.span, "not something that can be assigned")),
        })
    }

    /// The C name of a local (the leaf locals of a struct-typed action parameter have dotted names: `_` in C).
    pub fn local_name(&self, id: usize) -> String {
        format!("l{id}_{}", self.p.locals[id].name.replace('.', "_"))
    }

    /// The value of `e` in whatever form is cheapest.
    pub fn value(&mut self, e: &Expr) -> Result<CVal, Diagnostic> {
        if let Some(loc) = loc_of(self.p, e) {
            return Ok(CVal {
                code: self.place(e)?,
                raw: self.reprs.is_raw(loc),
            });
        }
        Ok(CVal {
            code: self.number(e)?,
            raw: false,
        })
    }

    /// The value of `e` as network-order bytes held in its C integer type (the form of raw locations).
    pub fn raw(&mut self, e: &Expr) -> Result<String, Diagnostic> {
        let w = self.width(e)?;
        if let ExprKind::Const(v) = e.kind {
            return Ok(raw_const(v, w));
        }
        let v = self.value(e)?;
        if v.raw {
            return Ok(v.code);
        }
        let bits = c_bits(w);
        Ok(format!("hwxdp_hton{bits}({}, {})", v.code, w.div_ceil(8)))
    }

    /// The number `e` computes, in host order, truncated to its width.
    pub fn number(&mut self, e: &Expr) -> Result<String, Diagnostic> {
        if let Some(loc) = loc_of(self.p, e) {
            let place = self.place(e)?;
            if self.reprs.is_raw(loc) {
                let w = self.width(e)?;
                return Ok(format!("hwxdp_ntoh{}({place}, {})", c_bits(w), w / 8));
            }
            return Ok(place);
        }
        let ty = e.ty.clone();
        Ok(match &e.kind {
            ExprKind::Const(v) => match ty {
                Ty::Int(w) => format!("(({}){})", c_sint(w), c_const(*v, w)),
                Ty::InfInt => format!("((s64){})", *v as i128 as i64),
                _ => c_const(*v, self.width(e)?),
            },
            ExprKind::Bool(b) => u8::from(*b).to_string(),
            ExprKind::EnumMember(i) | ExprKind::ErrorMember(i) => format!("{i}"),
            ExprKind::Var(_)
            | ExprKind::Field { .. }
            | ExprKind::StackElem { .. }
            | ExprKind::StackLast(_) => self.place(e)?,
            ExprKind::StackNext(_) => {
                return Err(self.error(e.span, "`next` is only allowed in `extract`"))
            }
            ExprKind::IsValid(h) => format!("{}.hwxdp_valid", self.place(h)?),
            ExprKind::TableHit(t) => format!("t{t}_hit"),
            ExprKind::Slice { base, hi, lo } => {
                let b = self.number(base)?;
                let w = hi - lo + 1;
                format!("(({})(({b}) >> {lo}) & {})", c_uint(w), c_const(mask(w), w))
            }
            ExprKind::Concat(a, b) => {
                let wb = self.width(b)?;
                let (ca, cb) = (self.number(a)?, self.number(b)?);
                let t = c_type(self.p, &ty);
                format!("((({t})({ca}) << {wb}) | ({t})({cb}))")
            }
            ExprKind::Unary(op, a) => {
                let ca = self.number(a)?;
                match op {
                    UnaryOp::Not => format!("(!({ca}))"),
                    UnaryOp::Plus => ca,
                    UnaryOp::Neg => self.wrap(&format!("0 - ({ca})"), &ty),
                    UnaryOp::Complement => self.wrap(&format!("~({ca})"), &ty),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, &ty)?,
            ExprKind::Cast(a) => self.cast(a, &ty)?,
            ExprKind::Cond(c, a, b) => {
                let (cc, ca, cb) = (self.number(c)?, self.number(a)?, self.number(b)?);
                format!("(({cc}) ? ({ca}) : ({cb}))")
            }
            ExprKind::StructInit(elems) => {
                let (fields, header) = match &ty {
                    Ty::Header(h) => (self.p.headers[*h].fields.clone(), true),
                    Ty::Struct(s) => (self.p.structs[*s].fields.clone(), false),
                    _ => return Err(self.error(e.span, "initialiser of a type without fields")),
                };
                let mut parts = Vec::new();
                for (f, x) in fields.iter().zip(elems) {
                    let v = self.number(x)?;
                    parts.push(format!(".{} = {v}", ident(&f.name)));
                }
                if header {
                    parts.push(".hwxdp_valid = 1".into());
                }
                format!("(({}){{ {} }})", c_type(self.p, &ty), parts.join(", "))
            }
            ExprKind::Extern(f, args) => {
                let mut cargs = Vec::new();
                for a in args {
                    cargs.push(self.number(a)?);
                }
                match f {
                    ExternFn::CsumReplace2 => format!("csum_replace2({})", cargs.join(", ")),
                    ExternFn::CsumReplace4 => format!("csum_replace4({})", cargs.join(", ")),
                    ExternFn::Ipv4Checksum => format!("ebpf_ipv4_checksum({})", cargs.join(", ")),
                    // `bit<32>` as xdp_model.p4 declares it, `bit<64>` as hwxdp_xdp.p4 does.
                    ExternFn::KtimeGetNs => self.wrap("bpf_ktime_get_ns()", &e.ty),
                }
            }
            ExprKind::CExtern { name, args } => self.c_extern_call(name, args, &e.ty)?,
            ExprKind::Lookahead => self.lookahead(e)?,
            ExprKind::PacketLength => "((u32)(end - pkt))".to_string(),
        })
    }

    /// Truncates (or sign-extends) a host-order computation to the width of `ty`.
    pub fn wrap(&self, code: &str, ty: &Ty) -> String {
        match ty {
            Ty::Bit(w) => {
                let bits = c_bits(*w);
                if *w == bits {
                    format!("((u{bits})({code}))")
                } else {
                    format!("((u{bits})({code}) & {})", c_const(mask(*w), *w))
                }
            }
            Ty::Int(w) => {
                let bits = c_bits(*w);
                if *w == bits {
                    format!("((s{bits})({code}))")
                } else {
                    let sh = bits - w;
                    format!("((s{bits})((u{bits})({code}) << {sh}) >> {sh})")
                }
            }
            _ => code.to_string(),
        }
    }

    fn binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr, ty: &Ty) -> Result<String, Diagnostic> {
        use BinaryOp::*;
        if matches!(op, Eq | Ne) {
            let sym = op.symbol();
            let (va, vb) = (self.value(a)?, self.value(b)?);
            let a_raw_ok = va.raw || matches!(a.kind, ExprKind::Const(_));
            let b_raw_ok = vb.raw || matches!(b.kind, ExprKind::Const(_));
            if (va.raw || vb.raw) && a_raw_ok && b_raw_ok {
                let (ra, rb) = (self.raw(a)?, self.raw(b)?);
                return Ok(format!("(({ra}) {sym} ({rb}))"));
            }
            let (na, nb) = (self.number(a)?, self.number(b)?);
            return Ok(format!("(({na}) {sym} ({nb}))"));
        }
        let (na, nb) = (self.number(a)?, self.number(b)?);
        let w = self.width(a).unwrap_or(64);
        Ok(match op {
            Or | And | Lt | Gt | Le | Ge => format!("(({na}) {} ({nb}))", op.symbol()),
            BitOr | BitXor | BitAnd => self.wrap(&format!("({na}) {} ({nb})", op.symbol()), ty),
            Add | Sub | Mul => self.wrap(&format!("({na}) {} ({nb})", op.symbol()), ty),
            Div | Mod => self.wrap(&format!("({na}) {} ({nb})", op.symbol()), ty),
            Shl | Shr => {
                let shifted = format!("({na}) {} ({nb})", op.symbol());
                let zero = if matches!(ty, Ty::Int(_)) && op == Shr {
                    format!("(({na}) < 0 ? -1 : 0)")
                } else {
                    "0".into()
                };
                match b.kind {
                    ExprKind::Const(n) if n >= u128::from(w) => zero,
                    ExprKind::Const(_) => self.wrap(&shifted, ty),
                    _ => format!("(({nb}) >= {w} ? {zero} : {})", self.wrap(&shifted, ty)),
                }
            }
            AddSat | SubSat => {
                if !matches!(ty, Ty::Bit(_)) || w > 64 {
                    return Err(self.error(
                        a.span.to(b.span),
                        "unsupported construct: saturating arithmetic on this type",
                    ));
                }
                let max = c_const(mask(w), w);
                if op == AddSat {
                    format!(
                        "((u128)({na}) + (u128)({nb}) > (u128){max} ? {max} : {})",
                        self.wrap(&format!("({na}) + ({nb})"), ty)
                    )
                } else {
                    format!(
                        "(({na}) < ({nb}) ? 0 : {})",
                        self.wrap(&format!("({na}) - ({nb})"), ty)
                    )
                }
            }
            Eq | Ne | Concat => {
                return Err(self.error(a.span.to(b.span), "operator not expected in this form"))
            }
        })
    }

    fn cast(&mut self, a: &Expr, to: &Ty) -> Result<String, Diagnostic> {
        let ca = self.number(a)?;
        Ok(match (to, &a.ty) {
            (Ty::Bool, _) => format!("(({ca}) != 0)"),
            (Ty::Bit(w), Ty::Int(_)) => self.wrap(&format!("(u{})({ca})", c_bits(*w).max(8)), to),
            (Ty::Bit(_), _) | (Ty::Int(_), _) => self.wrap(&ca, to),
            _ => format!("(({})({ca}))", c_type(self.p, to)),
        })
    }
}
