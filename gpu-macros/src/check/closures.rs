//! Closures: their types (parameter and result types that inference fills in), calls, and
//! what a device function's `F: Fn(A, B) -> R` parameter accepts.
//!
//! As rustc does, a closure's body is checked once its parameter types are known from its use:
//! at its first call, when it meets a `Fn` bound, or at the end of the function.

use super::instantiate::Slot;
use super::{Checker, VarKind, T};
use crate::ir::*;
use crate::types::{ClosureBound, ClosureTy, Scalar, Ty};

/// A closure's signature during inference.
pub(super) struct ClosureSig {
    pub params: Vec<T>,
    pub ret: T,
    pub ty: ClosureTy,
    /// The closure expression whose body is still to be checked.
    pub pending: Option<ExprId>,
}

impl Checker<'_> {
    /// A closure expression: its type, with the body left for [`Checker::force_closure`].
    pub(super) fn closure_expr(
        &mut self,
        id: ExprId,
        params: &[LocalId],
        ret: Option<Scalar>,
        returns_value: bool,
    ) -> T {
        let mut param_ts = Vec::new();
        for param in params {
            let t = match self.kernel.local(*param).annotation {
                Some(ty) => T::Ty(ty),
                None => self.new_var(VarKind::Any),
            };
            self.locals[param.0 as usize] = Some(t);
            param_ts.push(t);
        }
        let ret = match (ret, returns_value) {
            (Some(scalar), _) => T::Ty(Ty::Scalar(scalar)),
            (None, true) => self.new_var(VarKind::Any),
            (None, false) => T::Ty(Ty::Unit),
        };
        self.closures.push(ClosureSig {
            params: param_ts,
            ret,
            ty: ClosureTy::Expr(id.0),
            pending: Some(id),
        });
        T::Closure(self.closures.len() as u32 - 1)
    }

    /// The type of the function's own parameter `op: F`, from `F`'s bound.
    pub(super) fn bound_closure(&mut self, index: u8) -> T {
        let bound = self.kernel.generics.iter().find_map(|g| match g {
            GenericParam::Closure(bound) if bound.index == index => Some(*bound),
            _ => None,
        });
        let Some(bound) = bound else {
            return T::Error;
        };
        let sig = ClosureSig {
            params: bound.params.iter().map(|s| T::Ty(Ty::Scalar(*s))).collect(),
            ret: bound.ret.map_or(T::Ty(Ty::Unit), |s| T::Ty(Ty::Scalar(s))),
            ty: ClosureTy::Bound(index),
            pending: None,
        };
        self.closures.push(sig);
        T::Closure(self.closures.len() as u32 - 1)
    }

    /// Checks the body of closure `k` if it has not been.
    pub(super) fn force_closure(&mut self, k: u32) {
        let Some(id) = self.closures[k as usize].pending.take() else {
            return;
        };
        let ExprKind::Closure {
            body,
            returns_value,
            ..
        } = &self.kernel.expr(id).kind
        else {
            return;
        };
        let ret = self.closures[k as usize].ret;
        self.returns.push(ret);
        // `break` and `continue` inside the body cannot reach the loops around the closure.
        let loops = std::mem::take(&mut self.loops);
        self.block(body);
        self.loops = loops;
        self.returns.pop();
        if *returns_value && !super::block_returns(body) {
            self.cx.error(
                self.loc(id),
                "this closure must produce a value on every path: end its body with the value",
            );
        }
    }

    /// Checks every closure body not yet checked (closures never called nor passed).
    pub(super) fn force_all_closures(&mut self) {
        for k in 0..self.closures.len() as u32 {
            self.force_closure(k);
        }
    }

    /// `op(a, b)` where `op` holds a closure.
    pub(super) fn closure_call(&mut self, callee: ExprId, args: &[ExprId], loc: Loc) -> T {
        let callee_t = self.expr(callee);
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        let k = match self.resolve(callee_t) {
            T::Closure(k) => k,
            T::Error => return T::Error,
            other => {
                let text = self.describe(other);
                self.cx.error(
                    self.loc(callee),
                    format!("this is {text}, not a closure: only closures and `#[device]` functions can be called"),
                );
                return T::Error;
            }
        };
        let params = self.closures[k as usize].params.clone();
        if params.len() != args.len() {
            self.cx.error(
                loc,
                format!(
                    "this closure takes {} argument{}, found {}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            return T::Error;
        }
        for ((param, arg), arg_t) in params.into_iter().zip(args).zip(arg_ts) {
            self.unify(param, arg_t, self.loc(*arg));
        }
        self.force_closure(k);
        self.closures[k as usize].ret
    }

    /// A closure argument for the callee's parameter bounded by `bound`: its parameters and
    /// result unified with the bound's (with the call's types substituted).
    pub(super) fn closure_arg(
        &mut self,
        callee: &str,
        param: &str,
        bound: &ClosureBound,
        slots: &[Slot],
        arg: ExprId,
        arg_t: T,
    ) {
        let written = format!(
            "{}: Fn({}){}",
            bound.name,
            bound
                .params
                .iter()
                .map(|s| s.rust_name())
                .collect::<Vec<_>>()
                .join(", "),
            bound
                .ret
                .map(|s| format!(" -> {}", s.rust_name()))
                .unwrap_or_default()
        );
        let k = match self.resolve(arg_t) {
            T::Closure(k) => k,
            T::Error => return,
            other => {
                let text = self.describe(other);
                self.cx.error(
                    self.loc(arg),
                    format!("`{callee}` takes a closure for `{param}` (`{written}`), found {text}: write `|..| ..`"),
                );
                return;
            }
        };
        let params = self.closures[k as usize].params.clone();
        if params.len() != bound.params.len() {
            self.cx.error(
                self.loc(arg),
                format!(
                    "this closure takes {} argument{}, but `{callee}` calls `{param}` with {} (`{written}`)",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    bound.params.len()
                ),
            );
            return;
        }
        for (expected, found) in bound.params.iter().zip(params) {
            let expected = Self::substitute(*expected, slots);
            self.unify(expected, found, self.loc(arg));
        }
        self.force_closure(k);
        let ret = self.closures[k as usize].ret;
        let expected = match bound.ret {
            Some(s) => Self::substitute(s, slots),
            None => T::Ty(Ty::Unit),
        };
        self.unify(expected, ret, self.loc(arg));
    }

    /// Joins two closure types: only a closure with itself, since each has its own type (a C++
    /// lambda's cannot be assigned another's).
    pub(super) fn unify_closures(&mut self, a: u32, b: u32) -> bool {
        a == b
    }

    /// Every closure parameter and result must be known by the end of the function.
    pub(super) fn check_closure_types(&mut self) {
        // After an error in its use, a closure's types say nothing new.
        if self.cx.has_errors() {
            return;
        }
        for k in 0..self.closures.len() {
            let ClosureTy::Expr(id) = self.closures[k].ty else {
                continue;
            };
            let id = ExprId(id);
            let ExprKind::Closure { params, .. } = &self.kernel.expr(id).kind else {
                continue;
            };
            for (param, t) in params.iter().zip(self.closures[k].params.clone()) {
                if let T::Var(var) = self.resolve(t) {
                    if self.vars[var as usize].kind == VarKind::Any {
                        let name = &self.kernel.local(*param).name;
                        self.cx.error(
                            self.loc(id),
                            format!("cannot infer the type of the closure's parameter `{name}`: write it, as in `|{name}: f32| ..`"),
                        );
                    }
                }
            }
        }
    }

    /// The closure results, once settled, for the emitters.
    pub(super) fn closure_rets(&mut self) -> Vec<(ExprId, Ty)> {
        let mut rets = Vec::new();
        for k in 0..self.closures.len() {
            if let ClosureTy::Expr(id) = self.closures[k].ty {
                let ret = self.closures[k].ret;
                rets.push((ExprId(id), self.finalize(ret)));
            }
        }
        rets
    }
}
