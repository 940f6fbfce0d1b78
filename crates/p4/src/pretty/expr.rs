//! Expressions, types, keysets, arguments and annotations as P4 text. A binary operand that is itself a binary or
//! conditional expression is always parenthesised, so the printed text shows how the parser grouped it.

use crate::ast::{
    Annotation, Argument, Direction, Expr, ExprKind, IntLit, Keyset, Param, Signature, Type,
    TypeKind,
};

/// One expression as P4 text.
pub fn pretty_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(lit) => int(lit),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => string(s),
        ExprKind::Name(id) => id.name.clone(),
        ExprKind::DontCare => "_".to_string(),
        ExprKind::Member { base, member } => format!("{}.{}", atom(base), member.name),
        ExprKind::Index { base, index } => format!("{}[{}]", atom(base), pretty_expr(index)),
        ExprKind::Slice { base, hi, lo } => {
            format!("{}[{}:{}]", atom(base), pretty_expr(hi), pretty_expr(lo))
        }
        ExprKind::Call {
            callee,
            type_args,
            args: call_args,
        } => {
            let targs = if type_args.is_empty() {
                String::new()
            } else {
                format!("<{}>", types(type_args))
            };
            format!("{}{targs}({})", atom(callee), args(call_args))
        }
        ExprKind::Unary { op, operand } => format!("{}{}", op.symbol(), operand_of(operand, true)),
        ExprKind::Binary { op, lhs, rhs } => {
            format!(
                "{} {} {}",
                operand_of(lhs, true),
                op.symbol(),
                operand_of(rhs, true)
            )
        }
        ExprKind::Ternary { cond, then, els } => {
            format!(
                "{} ? {} : {}",
                operand_of(cond, false),
                operand_of(then, false),
                operand_of(els, false)
            )
        }
        ExprKind::Cast { ty, expr } => format!("({}){}", pretty_type(ty), atom(expr)),
        ExprKind::List(items) if items.is_empty() => "{ }".to_string(),
        ExprKind::List(items) => format!(
            "{{ {} }}",
            items.iter().map(pretty_expr).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::StructInit(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!("{} = {}", n.name, pretty_expr(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }
}

/// An operand: conditionals always in parentheses, binary expressions too when `binary` says so.
fn operand_of(e: &Expr, binary: bool) -> String {
    match e.kind {
        ExprKind::Ternary { .. } => format!("({})", pretty_expr(e)),
        ExprKind::Binary { .. } if binary => format!("({})", pretty_expr(e)),
        _ => pretty_expr(e),
    }
}

/// The base of a member access, index or call, and the operand of a cast: anything with operators in parentheses.
fn atom(e: &Expr) -> String {
    match e.kind {
        ExprKind::Unary { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Ternary { .. }
        | ExprKind::Cast { .. } => {
            format!("({})", pretty_expr(e))
        }
        _ => pretty_expr(e),
    }
}

fn int(lit: &IntLit) -> String {
    let mut s = String::new();
    if let Some(w) = lit.width {
        s.push_str(&w.to_string());
        s.push(if lit.signed { 's' } else { 'w' });
        if lit.negative {
            s.push('-');
        }
    }
    match lit.radix {
        16 => s.push_str(&format!("0x{:x}", lit.value)),
        8 => s.push_str(&format!("0o{:o}", lit.value)),
        2 => s.push_str(&format!("0b{:b}", lit.value)),
        _ => s.push_str(&lit.value.to_string()),
    }
    s
}

fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A type as P4 text.
pub fn pretty_type(t: &Type) -> String {
    match &t.kind {
        TypeKind::Bool => "bool".to_string(),
        TypeKind::Error => "error".to_string(),
        TypeKind::Void => "void".to_string(),
        TypeKind::String => "string".to_string(),
        TypeKind::MatchKind => "match_kind".to_string(),
        TypeKind::Bit(w) => format!("bit<{w}>"),
        TypeKind::Int(w) => format!("int<{w}>"),
        TypeKind::Varbit(w) => format!("varbit<{w}>"),
        TypeKind::DontCare => "_".to_string(),
        TypeKind::Named { name, args } if args.is_empty() => name.name.clone(),
        TypeKind::Named { name, args } => format!("{}<{}>", name.name, types(args)),
        TypeKind::Stack { elem, size } => format!("{}[{}]", pretty_type(elem), pretty_expr(size)),
        TypeKind::Tuple(items) => format!("tuple<{}>", types(items)),
    }
}

fn types(ts: &[Type]) -> String {
    ts.iter().map(pretty_type).collect::<Vec<_>>().join(", ")
}

/// Call arguments without the parentheses.
pub(super) fn args(args: &[Argument]) -> String {
    let one = |a: &Argument| match &a.name {
        Some(n) => format!("{} = {}", n.name, pretty_expr(&a.value)),
        None => pretty_expr(&a.value),
    };
    args.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// A keyset of a `select` case or table entry.
pub(super) fn keyset(k: &Keyset) -> String {
    match k {
        Keyset::Default(_) => "default".to_string(),
        Keyset::DontCare(_) => "_".to_string(),
        Keyset::Value(e) => operand_of(e, false),
        Keyset::Mask { value, mask } => format!(
            "{} &&& {}",
            operand_of(value, false),
            operand_of(mask, false)
        ),
        Keyset::Range { lo, hi } => {
            format!("{} .. {}", operand_of(lo, false), operand_of(hi, false))
        }
        Keyset::Tuple(items, _) => format!(
            "({})",
            items.iter().map(keyset).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Annotations followed by a space each, ready to prefix a declaration.
pub(super) fn annotations(anns: &[Annotation]) -> String {
    let mut s = String::new();
    for a in anns {
        s.push('@');
        s.push_str(&a.name.name);
        if let Some(a) = &a.args {
            s.push_str(&format!(
                "({})",
                a.iter().map(pretty_expr).collect::<Vec<_>>().join(", ")
            ));
        }
        s.push(' ');
    }
    s
}

/// `(params)`.
pub(super) fn params(ps: &[Param]) -> String {
    let one = |p: &Param| {
        let dir = match p.direction {
            Direction::None => "",
            Direction::In => "in ",
            Direction::Out => "out ",
            Direction::InOut => "inout ",
        };
        let default = p
            .default
            .as_ref()
            .map(|d| format!(" = {}", pretty_expr(d)))
            .unwrap_or_default();
        format!(
            "{}{dir}{} {}{default}",
            annotations(&p.annotations),
            pretty_type(&p.ty),
            p.name.name
        )
    };
    format!("({})", ps.iter().map(one).collect::<Vec<_>>().join(", "))
}

/// `[ret ]name<T>(params)`.
pub(super) fn signature(s: &Signature) -> String {
    let ret = s
        .ret
        .as_ref()
        .map(|t| format!("{} ", pretty_type(t)))
        .unwrap_or_default();
    let tps = if s.type_params.is_empty() {
        String::new()
    } else {
        format!(
            "<{}>",
            s.type_params
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!("{ret}{}{tps}{}", s.name.name, params(&s.params))
}
