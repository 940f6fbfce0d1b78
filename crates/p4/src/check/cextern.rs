//! User externs implemented in C (`hwxdp p4c --extern-c FILE`, as p4c-ebpf's extern tests are built): a function
//! the program declares with `extern` that no architecture model implements. Its calls are checked against the
//! declaration; the C file defines it with the types p4c-ebpf's generated code gives it (docs/p4.md).

use super::{err, CResult, Checker};
use crate::ast::{self, Argument, Direction, Ident};
use crate::diag::Span;
use crate::ir::{Expr, ExprKind, Ty};

/// Extern functions of the bundled includes that are statements or are implemented by code generation, so never a
/// user's C extern.
const MODEL_FUNCTIONS: &[&str] = &["verify", "hwxdp_perf_event_output", "BPF_PERF_EVENT_OUTPUT"];

/// Whether `name` may be a user's C extern.
pub(super) fn is_c_extern(name: &str) -> bool {
    !MODEL_FUNCTIONS.contains(&name) && super::access::extern_fn(name).is_none()
}

impl Checker<'_> {
    /// A call of the C extern `f` declared by `sig`: the arguments checked as `in` values of the parameters' types.
    pub(super) fn c_extern_call(
        &mut self,
        f: &Ident,
        sig: &ast::Signature,
        args: &[Argument],
        span: Span,
    ) -> CResult<Expr> {
        if !sig.type_params.is_empty() {
            return err(
                f.span,
                "unsupported construct: a generic extern implemented in C",
            );
        }
        let mut params = Vec::new();
        for p in &sig.params {
            if matches!(p.direction, Direction::Out | Direction::InOut) {
                return err(
                    p.name.span,
                    "unsupported construct: `out` and `inout` parameters of an extern implemented in C",
                );
            }
            let ty = self.resolve_type(&p.ty)?;
            if matches!(ty, Ty::Void | Ty::Error | Ty::InfInt | Ty::Stack { .. }) {
                return err(
                    p.ty.span,
                    format!("invalid parameter type {} of a C extern", self.ty_name(&ty)),
                );
            }
            params.push((p.name.name.clone(), ty));
        }
        let ret = match &sig.ret {
            Some(t) => self.resolve_type(t)?,
            None => Ty::Void,
        };
        let scalar_ret = self.scalar_width(&ret).is_some_and(|w| w <= 64);
        if ret != Ty::Void && !scalar_ret {
            return err(
                sig.name.span,
                format!(
                    "unsupported construct: a C extern returning {}",
                    self.ty_name(&ret)
                ),
            );
        }
        let args = self.call_args(&params, args, span)?;
        if !self.c_externs.contains(&f.name) {
            self.c_externs.push(f.name.clone());
        }
        Ok(Expr {
            kind: ExprKind::CExtern {
                name: f.name.clone(),
                args,
            },
            ty: ret,
            span,
        })
    }
}
