//! Closures: `|a, b: f32| a * b` inside kernels and device functions, their calls, what they
//! may capture (locals, by copy, never written), and a device function's `F: Fn(A, B) -> R`
//! parameters.

use super::statements::is_tail_value;
use super::Parser;
use crate::ir::*;
use crate::types::{ClosureBound, Scalar};

impl Parser<'_> {
    pub(super) fn closure(&mut self, closure: &syn::ExprClosure) -> Option<ExprKind> {
        if let Some(token) = &closure.asyncness {
            self.cx
                .error_spanned_by(token, "closures in kernels cannot be `async`");
            return None;
        }
        if let Some(token) = &closure.constness {
            self.cx
                .error_spanned_by(token, "remove `const`: closures in kernels are plain");
            return None;
        }
        if let Some(lifetimes) = &closure.lifetimes {
            self.cx
                .error_spanned_by(lifetimes, "closures in kernels take no `for<..>` lifetimes");
            return None;
        }
        let ret = match &closure.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, ty) => Some(self.scalar_type(ty)?),
        };
        // Locals declared from here on belong to the closure; older ones are captures.
        self.closure_bases.push(self.locals.len() as u32);
        // A `break` in the body cannot leave a loop around the closure.
        let loops = std::mem::take(&mut self.loops);
        let outer_ret = std::mem::replace(&mut self.ret, ret.map(crate::types::Ty::Scalar));
        let parsed = self.scoped(|this| {
            let mut params = Vec::new();
            for input in &closure.inputs {
                let (pat, annotation) = match input {
                    syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
                    other => (other, None),
                };
                let syn::Pat::Ident(ident) = pat else {
                    this.cx.error_spanned_by(
                        pat,
                        "closure parameters are plain names: `|x| ..` or `|x: f32| ..`",
                    );
                    return None;
                };
                if ident.by_ref.is_some() || ident.subpat.is_some() {
                    this.cx.error_spanned_by(
                        pat,
                        "closure parameters are plain names: `|x| ..` or `|x: f32| ..`",
                    );
                    return None;
                }
                let annotation = match annotation {
                    Some(ty) => Some(crate::types::Ty::Scalar(this.scalar_type(ty)?)),
                    None => None,
                };
                params.push(this.declare(Local {
                    name: ident.ident.to_string(),
                    mutable: ident.mutability.is_some(),
                    annotation,
                    element: false,
                }));
            }
            let (body, returns_value) = match &*closure.body {
                syn::Expr::Block(block) if block.label.is_none() => {
                    let returns_value = ret.is_some()
                        || matches!(block.block.stmts.last(),
                            Some(syn::Stmt::Expr(tail, None)) if is_tail_value(tail));
                    (
                        this.function_body(&block.block, returns_value),
                        returns_value,
                    )
                }
                body => {
                    let stmts = this.with_prelude(|this| {
                        Some(Stmt {
                            kind: StmtKind::Return(Some(this.returned_value(body)?)),
                            span: Loc::of(body),
                        })
                    });
                    if stmts.is_empty() {
                        return None;
                    }
                    (Block { stmts }, true)
                }
            };
            Some(ExprKind::Closure {
                params,
                ret,
                body,
                returns_value,
            })
        });
        self.closure_bases.pop();
        self.loops = loops;
        self.ret = outer_ret;
        parsed
    }

    /// `op(a, b)` where `op` is a local: a closure call (a local shadows any function).
    pub(super) fn closure_call(&mut self, call: &syn::ExprCall) -> Option<Option<ExprKind>> {
        let syn::Expr::Path(path) = &*call.func else {
            return Some(None);
        };
        let Some(ident) = path.path.get_ident() else {
            return Some(None);
        };
        let name = ident.to_string();
        if self.lookup(&name).is_none() {
            if self.closure_lets.contains(&name) {
                self.cx.error_spanned_by(
                    call,
                    format!(
                        "the closure `{name}` cannot call itself: recursion is not supported in GPU code; \
                         write a loop"
                    ),
                );
                return None;
            }
            return Some(None);
        }
        let callee = self.expr(&call.func)?;
        let args: Vec<Option<ExprId>> = call.args.iter().map(|arg| self.expr(arg)).collect();
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        Some(Some(ExprKind::CallClosure { callee, args }))
    }

    /// A closure captures by copy: assigning to a captured variable (or an element of a
    /// captured array or slice) is an error.
    pub(super) fn check_capture_write(&mut self, place: ExprId) {
        let Some(&base) = self.closure_bases.last() else {
            return;
        };
        let mut root = place;
        loop {
            match &self.exprs[root.0 as usize].kind {
                ExprKind::Index { base, .. } => root = *base,
                ExprKind::Local(local) if local.0 < base => {
                    let name = self.locals[local.0 as usize].name.clone();
                    let message = if root == place {
                        format!(
                            "closures capture `{name}` by copy and cannot write it: return the new value \
                             from the closure and assign it outside (`{name} = f({name});`)"
                        )
                    } else {
                        format!(
                            "closures capture `{name}` by copy and cannot write its elements: return the \
                             value from the closure and store it outside (`{name}[i] = f(..);`)"
                        )
                    };
                    self.cx.error(self.exprs[place.0 as usize].span, message);
                    return;
                }
                _ => return,
            }
        }
    }

    /// `F: Fn(A, B) -> R` on a device function, its types among `generics`.
    pub(super) fn closure_bound(
        &mut self,
        index: u8,
        name: &'static str,
        args: &syn::ParenthesizedGenericArguments,
    ) -> Option<ClosureBound> {
        let params = args
            .inputs
            .iter()
            .map(|ty| self.scalar_type(ty))
            .collect::<Option<Vec<Scalar>>>()?;
        let ret = match &args.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, ty) => Some(self.scalar_type(ty)?),
        };
        Some(ClosureBound {
            index,
            name,
            params,
            ret,
        })
    }
}
