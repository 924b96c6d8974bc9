//! Calls: methods on numbers, `#[device]` functions, and the call graph's cycles.

use super::instantiate::{Instance, Slot};
use super::{Checker, VarKind, T};
use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::methods::{self, ArgTy, RetTy};
use crate::types::{ClosureTy, GenericArg, Scalar, Ty};

/// GPU stacks are small and CUDA's recursion support is a trap for the unwary: a call cycle
/// among device functions is an error at the call that closes it.
pub(super) fn check_recursion(cx: &Ctxt, program: &Program) {
    for (start, function) in program.functions.iter().enumerate() {
        // Depth-first from `start`: a path back to `start` is a cycle.
        let mut stack: Vec<(usize, Vec<String>)> = vec![(start, vec![function.name.clone()])];
        let mut seen = vec![false; program.functions.len()];
        while let Some((index, path)) = stack.pop() {
            for (callee, _, loc) in program.functions[index].callees() {
                let Some((callee_index, _)) = program.function(callee) else {
                    continue;
                };
                if callee_index == start {
                    if index == start {
                        let chain = path.join(" → ");
                        cx.error(
                            loc,
                            format!(
                                "recursion is not supported in GPU code: `{}` calls itself ({chain} → {callee}); \
                                 rewrite it as a loop",
                                function.name
                            ),
                        );
                    } else if start < index {
                        // Reported once, from the function that comes first.
                        let chain = path.join(" → ");
                        cx.error(
                            loc,
                            format!(
                                "recursion is not supported in GPU code: {chain} → {callee}; rewrite it as a loop"
                            ),
                        );
                    }
                    continue;
                }
                if !seen[callee_index] {
                    seen[callee_index] = true;
                    let mut next = path.clone();
                    next.push(callee.to_string());
                    stack.push((callee_index, next));
                }
            }
        }
    }
}

impl Checker<'_> {
    pub(super) fn method(
        &mut self,
        receiver: ExprId,
        name: &str,
        name_loc: Loc,
        args: &[ExprId],
        receiver_ty: Option<Scalar>,
    ) -> T {
        let receiver_t = self.expr(receiver);
        if let T::Ty(user @ (Ty::Struct(_) | Ty::Enum(_))) = self.resolve(receiver_t) {
            return self.user_method(receiver, user, name, name_loc, args);
        }
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        if let Some(ty) = receiver_ty {
            self.unify(T::Ty(Ty::Scalar(ty)), receiver_t, self.loc(receiver));
        }
        let scalar = match self.resolve(receiver_t) {
            T::Ty(Ty::Scalar(s)) => s,
            T::Error => return T::Error,
            // A constant from outside (`FLOAT_N.sqrt()`) has a type, which only rustc sees.
            T::Var(var) if self.outer_of_var(var).is_some() => {
                let constant = self.outer_of_var(var).unwrap_or_default();
                return self.outer_method(
                    &constant, receiver, receiver_t, name, name_loc, args, &arg_ts,
                );
            }
            T::Var(_) => {
                let text = self.describe(receiver_t);
                let example = if self.var_kind(receiver_t) == Some(VarKind::Float) {
                    "`2.0_f32`"
                } else {
                    "`2_u32`"
                };
                self.cx.error(
                    name_loc,
                    format!(
                        "can't call method `{name}` on ambiguous numeric type {{{}}}: give the value a type, \
                         e.g. {example} or `let x: f32 = ...;`",
                        text.replace("floating-point number", "float")
                    ),
                );
                return T::Error;
            }
            other => {
                let text = self.describe(other);
                self.cx.error(
                    name_loc,
                    format!("no method `{name}` on {text}: slices and arrays support `.len()` and indexing"),
                );
                return T::Error;
            }
        };
        let Some(method) = methods::lookup(name, scalar) else {
            if name.starts_with("fast_") && methods::lookup(name, Scalar::F32).is_some() {
                self.cx.error(
                    name_loc,
                    format!(
                        "`{name}` is one of CUDA's `f32` approximations: call it on an `f32`, or use `{}` on `{}`",
                        name.trim_start_matches("fast_"),
                        scalar.rust_name()
                    ),
                );
                return T::Error;
            }
            let available = methods::names_for(scalar);
            self.cx.error(
                name_loc,
                if available.is_empty() {
                    format!("no method `{name}` on `{}` in kernels", scalar.rust_name())
                } else {
                    format!(
                        "no method `{name}` on `{}` in kernels; available: {available}",
                        scalar.rust_name()
                    )
                },
            );
            return T::Error;
        };
        if let (methods::Cuda::IntFunc(..), Scalar::Generic(_)) = (method.cuda, scalar) {
            self.cx.error(
                name_loc,
                format!(
                    "`{name}` needs a concrete integer type, not the generic `{}`",
                    scalar.rust_name()
                ),
            );
            return T::Error;
        }
        if !self.arity(name, method.args.len(), args.len(), name_loc) {
            return T::Error;
        }
        for ((arg, arg_t), expected) in args.iter().zip(arg_ts).zip(method.args) {
            let expected = match expected {
                ArgTy::Same => T::Ty(Ty::Scalar(scalar)),
                ArgTy::I32 => T::Ty(Ty::Scalar(Scalar::I32)),
                ArgTy::U32 => T::Ty(Ty::Scalar(Scalar::U32)),
            };
            self.unify(expected, arg_t, self.loc(*arg));
        }
        T::Ty(Ty::Scalar(match method.ret {
            RetTy::Same => scalar,
            RetTy::Bool => Scalar::Bool,
            RetTy::U32 => Scalar::U32,
            RetTy::F32 => Scalar::F32,
            RetTy::F64 => Scalar::F64,
            RetTy::Bits if scalar == Scalar::F32 => Scalar::U32,
            RetTy::Bits | RetTy::U64 => Scalar::U64,
            RetTy::Unsigned => match scalar {
                Scalar::I8 => Scalar::U8,
                Scalar::I16 => Scalar::U16,
                Scalar::I32 => Scalar::U32,
                Scalar::I64 => Scalar::U64,
                Scalar::Isize => Scalar::Usize,
                unsigned => unsigned,
            },
        }))
    }

    /// Whether `found` arguments are the `expected` number, reporting it if not.
    pub(super) fn arity(&self, name: &str, expected: usize, found: usize, loc: Loc) -> bool {
        if expected != found {
            self.cx.error(
                loc,
                format!(
                    "`{name}` takes {expected} argument{}, found {found}",
                    if expected == 1 { "" } else { "s" }
                ),
            );
        }
        expected == found
    }

    pub(super) fn call(
        &mut self,
        id: ExprId,
        name: &str,
        args: &[ExprId],
        turbofish: &[Option<GenericArg>],
        loc: Loc,
    ) -> T {
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        let Some((_, callee)) = self.program.function(name) else {
            // The definition was fetched by path; a missing one is rustc's error at the call.
            self.cx
                .error(loc, format!("`{name}` is not a `#[device]` function"));
            return T::Error;
        };
        if callee.generics.is_empty() && !turbofish.is_empty() {
            self.cx
                .error(loc, format!("`{name}` takes no generic arguments"));
            return T::Error;
        }
        let Some(slots) = self.instance_slots(callee, turbofish, loc) else {
            return T::Error;
        };
        if !self.arity(name, callee.params.len(), args.len(), loc) {
            return T::Error;
        }
        let ret = self.call_args_in(callee, &callee.params, args, arg_ts, &slots, loc);
        if !callee.generics.is_empty() {
            self.instances.push(Instance {
                call: id,
                callee: name.to_string(),
                params: callee.generics.clone(),
                slots,
            });
        }
        ret
    }

    /// Checks `args` (of types `arg_ts`) against `params` of `callee`, which is not generic, and
    /// gives its result.
    pub(super) fn call_args(
        &mut self,
        callee: &Function,
        params: &[Param],
        args: &[ExprId],
        arg_ts: Vec<T>,
        loc: Loc,
    ) -> T {
        self.call_args_in(callee, params, args, arg_ts, &[], loc)
    }

    /// `call_args` for an instance of a generic `callee` whose parameters take `slots`.
    fn call_args_in(
        &mut self,
        callee: &Function,
        params: &[Param],
        args: &[ExprId],
        arg_ts: Vec<T>,
        slots: &[Slot],
        loc: Loc,
    ) -> T {
        let name = callee.display_name();
        let name = name.as_str();
        for ((param, arg), arg_t) in params.iter().zip(args).zip(arg_ts) {
            if self.reference_arg(param, *arg) {
                continue;
            }
            match param.ty {
                Ty::Slice { elem, mutable } => {
                    let elem_t = self.substitute_ty(*elem, slots, loc);
                    let ok = match self.resolve(arg_t) {
                        T::Ty(Ty::Slice {
                            elem: arg_elem,
                            mutable: arg_mutable,
                        }) => {
                            let arg_elem = self.fresh_of(*arg_elem, loc);
                            self.unify_quiet(elem_t, arg_elem) && (arg_mutable || !mutable)
                        }
                        T::Ty(Ty::Shared { elem: arg_elem, .. }) => {
                            let arg_elem = self.fresh_of(*arg_elem, loc);
                            self.unify_quiet(elem_t, arg_elem)
                        }
                        T::Error => true,
                        _ => false,
                    };
                    if !ok {
                        let found = self.describe(arg_t);
                        self.cx.error(
                            self.loc(*arg),
                            format!(
                                "mismatched types: `{name}` expects `{}`, found {found}",
                                param.ty.describe()
                            ),
                        );
                    }
                }
                Ty::Scalar(scalar) => {
                    let expected = Self::substitute(scalar, slots);
                    self.unify(expected, arg_t, self.loc(*arg));
                }
                Ty::Closure(ClosureTy::Bound(index)) => {
                    let bound = callee.generics.iter().find_map(|g| match g {
                        GenericParam::Closure(bound) if bound.index == index => Some(*bound),
                        _ => None,
                    });
                    if let Some(bound) = bound {
                        let param_name = &callee.local(param.local).name;
                        self.closure_arg(name, param_name, bound, slots, *arg, arg_t);
                    }
                }
                ty => {
                    let expected = self.fresh_of(ty, self.loc(*arg));
                    self.unify(expected, arg_t, self.loc(*arg));
                }
            }
        }
        match callee.ret {
            Some(ret) => self.substitute_ty(ret, slots, loc),
            None => T::Ty(Ty::Unit),
        }
    }

    /// `ty` of a generic function's signature with its type parameters as `slots` give them.
    fn substitute_ty(&mut self, ty: Ty, slots: &[Slot], loc: Loc) -> T {
        match ty {
            Ty::Scalar(scalar) => Self::substitute(scalar, slots),
            other => self.fresh_of(other, loc),
        }
    }
}
