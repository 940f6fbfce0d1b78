//! The interface a user's C extern file (`--extern-c FILE`) is written against, as p4c-ebpf's generated code gives
//! it: every header and struct of the program as `struct NAME` with host-order fields (a header has `ebpf_valid`),
//! p4c-ebpf's map macros (`REGISTER_TABLE`, `BPF_MAP_LOOKUP_ELEM`, ...), libbpf's byte-order helpers; then the file
//! itself, included where the program's function can call what it defines. Calls copy header and struct arguments
//! into those structs.

use super::ctypes::{c_bits, c_type, ident};
use super::Gen;
use crate::diag::Diagnostic;
use crate::ir::{Checked, Expr, ExprKind, Ty};
use std::collections::HashSet;
use std::fmt::Write;

/// The macro `hwxdp p4c` defines to the C file's path (`-DHWXDP_EXTERN_C="FILE"`).
pub const EXTERN_C_MACRO: &str = "HWXDP_EXTERN_C";

/// The macros of p4c-ebpf's kernel target that C externs use, over BTF-defined maps.
const MACROS: &str = r#"#include <bpf/bpf_endian.h>
#define REGISTER_START()
#define REGISTER_END()
#define REGISTER_TABLE_FLAGS(NAME, TYPE, KEY_SIZE, VALUE_SIZE, MAX_ENTRIES, FLAGS) \
    struct { __uint(type, TYPE); __uint(key_size, KEY_SIZE); __uint(value_size, VALUE_SIZE); \
             __uint(max_entries, MAX_ENTRIES); __uint(map_flags, FLAGS); } NAME SEC(".maps");
#define REGISTER_TABLE(NAME, TYPE, KEY_SIZE, VALUE_SIZE, MAX_ENTRIES) \
    REGISTER_TABLE_FLAGS(NAME, TYPE, KEY_SIZE, VALUE_SIZE, MAX_ENTRIES, 0)
#define BPF_MAP_LOOKUP_ELEM(table, key) bpf_map_lookup_elem(&table, key)
#define BPF_MAP_UPDATE_ELEM(table, key, value, flags) bpf_map_update_elem(&table, key, value, flags)
#define BPF_MAP_DELETE_ELEM(table, key) bpf_map_delete_elem(&table, key)
"#;

/// A field's declaration in the interface's structs: p4c-ebpf's integer types, a byte array (network order) past
/// 64 bits.
fn field_decl(program: &Checked, ty: &Ty, name: &str) -> String {
    let name = ident(name);
    match ty {
        Ty::Header(h) => format!("struct {} {name}", ident(&program.headers[*h].name)),
        Ty::Struct(s) => format!("struct {} {name}", ident(&program.structs[*s].name)),
        Ty::Stack { elem, size } => {
            format!(
                "struct {} {name}[{size}]",
                ident(&program.headers[*elem].name)
            )
        }
        _ => match ty.scalar_width(program) {
            Some(w) if w > 64 => format!("u8 {name}[{}]", w.div_ceil(8)),
            _ => format!("{} {name}", c_type(program, ty)),
        },
    }
}

/// The interface and the `#include` of the user's file; empty when the program calls no C extern.
pub fn interface(program: &Checked) -> String {
    if program.c_externs.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "/* The interface of externs implemented in C: {} */\n{MACROS}",
        program.c_externs.join(", ")
    );
    for h in &program.headers {
        let _ = writeln!(out, "struct {} {{", ident(&h.name));
        for f in &h.fields {
            let _ = writeln!(out, "    {};", field_decl(program, &f.ty, &f.name));
        }
        out.push_str("    u8 ebpf_valid;\n};\n");
    }
    let mut done = HashSet::new();
    for s in 0..program.structs.len() {
        struct_decl(program, s, &mut done, &mut out);
    }
    let _ = writeln!(
        out,
        "#ifdef {EXTERN_C_MACRO}\n#include {EXTERN_C_MACRO}\n#endif"
    );
    out
}

fn struct_decl(program: &Checked, s: usize, done: &mut HashSet<usize>, out: &mut String) {
    if !done.insert(s) {
        return;
    }
    for f in &program.structs[s].fields {
        if let Ty::Struct(inner) = f.ty {
            struct_decl(program, inner, done, out);
        }
    }
    let _ = writeln!(out, "struct {} {{", ident(&program.structs[s].name));
    for f in &program.structs[s].fields {
        let _ = writeln!(out, "    {};", field_decl(program, &f.ty, &f.name));
    }
    if program.structs[s].fields.is_empty() {
        out.push_str("    u8 ebpf_empty;\n");
    }
    out.push_str("};\n");
}

impl Gen<'_> {
    /// A call of C extern `name`: scalars passed as numbers, headers and structs as copies in the interface's
    /// structs.
    pub fn c_extern_call(
        &mut self,
        name: &str,
        args: &[Expr],
        ty: &Ty,
    ) -> Result<String, Diagnostic> {
        let mut cargs = Vec::new();
        for a in args {
            cargs.push(match &a.ty {
                Ty::Header(_) | Ty::Struct(_) => {
                    let decl = field_decl(self.p, &a.ty, "ce_");
                    let mut fill = String::new();
                    self.fill_interface("ce_", a, &mut fill)?;
                    format!("({{ {decl}; __builtin_memset(&ce_, 0, sizeof(ce_)); {fill}ce_; }})")
                }
                _ => self.number(a)?,
            });
        }
        // The name as P4 declares it: the user's C defines it so.
        let call = format!("{name}({})", cargs.join(", "));
        Ok(if *ty == Ty::Void {
            call
        } else {
            self.wrap(&call, ty)
        })
    }

    /// Statements copying the value `e` into `dst`, a place of its interface struct (or array of them).
    fn fill_interface(&mut self, dst: &str, e: &Expr, out: &mut String) -> Result<(), Diagnostic> {
        let part = |kind: ExprKind, ty: &Ty| Expr {
            kind,
            ty: ty.clone(),
            span: e.span,
        };
        match &e.ty {
            Ty::Header(h) => {
                let fields = self.p.headers[*h].fields.clone();
                for (index, f) in fields.iter().enumerate() {
                    let field = part(
                        ExprKind::Field {
                            base: Box::new(e.clone()),
                            index,
                        },
                        &f.ty,
                    );
                    self.fill_interface(&format!("{dst}.{}", ident(&f.name)), &field, out)?;
                }
                let valid =
                    self.number(&part(ExprKind::IsValid(Box::new(e.clone())), &Ty::Bool))?;
                let _ = write!(out, "{dst}.ebpf_valid = {valid}; ");
            }
            Ty::Struct(s) => {
                let fields = self.p.structs[*s].fields.clone();
                for (index, f) in fields.iter().enumerate() {
                    let field = part(
                        ExprKind::Field {
                            base: Box::new(e.clone()),
                            index,
                        },
                        &f.ty,
                    );
                    self.fill_interface(&format!("{dst}.{}", ident(&f.name)), &field, out)?;
                }
            }
            Ty::Stack { elem, size } => {
                for index in 0..*size {
                    let item = part(
                        ExprKind::StackElem {
                            base: Box::new(e.clone()),
                            index,
                        },
                        &Ty::Header(*elem),
                    );
                    self.fill_interface(&format!("{dst}[{index}]"), &item, out)?;
                }
            }
            _ => {
                let w = self.width(e)?;
                let v = self.number(e)?;
                if w > 64 {
                    let n = w.div_ceil(8);
                    let bits = c_bits(w);
                    let _ = write!(
                        out,
                        "{{ u{bits} t_ = hwxdp_hton{bits}((u{bits})({v}), {n}); __builtin_memcpy({dst}, &t_, {n}); }} "
                    );
                } else {
                    let _ = write!(out, "{dst} = {v}; ");
                }
            }
        }
        Ok(())
    }
}
