//! `#[device]` types: fields, struct literals, methods, associated functions and constants,
//! operators implemented by `impl core::ops::*`, enum variants, and the references that
//! device functions take (`&T`, `&mut T`, `*r`).

use super::{Checker, T};
use crate::ir::*;
use crate::parse::OPERATOR_TRAITS;
use crate::types::{Scalar, Ty};

/// The trait a method name belongs to, for messages (`mul` → `Mul`).
fn trait_of(method: &str) -> &'static str {
    OPERATOR_TRAITS
        .iter()
        .find(|(_, m)| *m == method)
        .map_or("", |(t, _)| *t)
}

/// The mangled function implementing `op` for `lhs` with a right-hand side of type `rhs`:
/// `Complex__mul`, or `Complex__mul__f32` for `impl Mul<f32> for Complex`.
pub fn operator_function(program: &Program, lhs: Ty, method: &str, rhs: Ty) -> Option<String> {
    let owner = lhs.describe();
    let plain = method_name(&owner, method);
    let with_rhs = format!("{plain}__{}", rhs.describe());
    [with_rhs, plain].into_iter().find(|name| {
        program.function(name).is_some_and(|(_, f)| {
            f.params
                .get(1)
                .is_none_or(|p| p.ty == rhs || matches!(rhs, Ty::Unit))
        })
    })
}

impl Checker<'_> {
    /// `base.name`: a struct's field or an index's component.
    pub(super) fn field(&mut self, base: ExprId, name: &str, name_span: Loc) -> T {
        let base_t = self.expr(base);
        match self.resolve(base_t) {
            T::Ty(Ty::Dim3) if matches!(name, "x" | "y" | "z") => T::Ty(Ty::Scalar(Scalar::U32)),
            T::Ty(Ty::Index3) if matches!(name, "x" | "y" | "z") => {
                T::Ty(Ty::Scalar(Scalar::Usize))
            }
            T::Ty(Ty::Struct(def)) => match def.0.field(name) {
                Some(ty) => self.fresh_of(ty, name_span),
                None => {
                    let fields: Vec<String> =
                        def.0.fields.iter().map(|(n, _)| format!("`{n}`")).collect();
                    self.cx.error(
                        name_span,
                        format!(
                            "no field `{name}` on type `{}`; its fields are {}",
                            def.0.name,
                            fields.join(", ")
                        ),
                    );
                    T::Error
                }
            },
            T::Error => T::Error,
            _ => {
                let text = self.describe(base_t);
                self.cx.error(
                    name_span,
                    format!(
                        "no field `{name}` on {text}: fields belong to `#[device]` structs, and \
                         `.x`/`.y`/`.z` to index intrinsics such as `thread_idx()`"
                    ),
                );
                T::Error
            }
        }
    }

    /// `Body { pos, mass }`: every field has its declared type.
    pub(super) fn struct_literal(&mut self, ty: Ty, fields: &[(String, ExprId)]) -> T {
        let Ty::Struct(def) = ty else {
            return T::Error;
        };
        for (name, value) in fields {
            let t = self.expr(*value);
            if let Some(field_ty) = def.0.field(name) {
                let expected = self.fresh_of(field_ty, self.loc(*value));
                self.unify(expected, t, self.loc(*value));
            }
        }
        T::Ty(ty)
    }

    /// `Type::name(args)` or `Type::NAME`.
    pub(super) fn assoc_call(
        &mut self,
        ty: Ty,
        name: &str,
        name_span: Loc,
        args: &[ExprId],
        constant: bool,
        loc: Loc,
    ) -> T {
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        let program = self.program;
        let Some((_, callee)) = program.function(&method_name(&ty.describe(), name)) else {
            self.cx.error(
                name_span,
                format!(
                    "no associated function or constant `{name}` on `{0}`: define it in a \
                     `#[device] impl {0}` in the file that defines `{0}`",
                    ty.describe()
                ),
            );
            return T::Error;
        };
        let owner = callee.owner.as_ref().expect("methods have owners");
        match (constant, owner.constant, owner.receiver) {
            (true, true, _) | (false, false, None) => {}
            (true, false, _) => {
                self.cx.error(
                    name_span,
                    format!("`{}::{name}` is a function: call it", ty.describe()),
                );
                return T::Error;
            }
            (false, true, _) => {
                self.cx.error(
                    loc,
                    format!("`{}::{name}` is a constant, not a function", ty.describe()),
                );
                return T::Error;
            }
            (false, false, Some(_)) => {
                self.cx.error(
                    name_span,
                    format!(
                        "`{}::{name}` takes `self`: call it as a method, `value.{name}(..)`",
                        ty.describe()
                    ),
                );
                return T::Error;
            }
        }
        if !self.arity(&callee.display_name(), callee.params.len(), args.len(), loc) {
            return T::Error;
        }
        self.call_args(callee, &callee.params, args, arg_ts, loc)
    }

    /// `receiver.name(args)` on a `#[device]` type.
    pub(super) fn user_method(
        &mut self,
        receiver: ExprId,
        ty: Ty,
        name: &str,
        name_loc: Loc,
        args: &[ExprId],
    ) -> T {
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        let program = self.program;
        let Some((_, callee)) = program.function(&method_name(&ty.describe(), name)) else {
            self.cx.error(
                name_loc,
                format!(
                    "no method `{name}` on `{0}`: define it in a `#[device] impl {0}` in the file \
                     that defines `{0}`",
                    ty.describe()
                ),
            );
            return T::Error;
        };
        let Some(receiver_pass) = callee.owner.as_ref().and_then(|o| o.receiver) else {
            self.cx.error(
                name_loc,
                format!(
                    "`{}::{name}` takes no `self`: call it as `{}::{name}(..)`",
                    ty.describe(),
                    ty.describe()
                ),
            );
            return T::Error;
        };
        if receiver_pass == PassBy::RefMut {
            if let Some(problem) = self.place_problem(receiver, true) {
                self.cx.error(
                    self.loc(receiver),
                    format!("`{name}` takes `&mut self`, but {problem}"),
                );
            } else if !self.is_local_place(receiver) {
                self.cx.error(
                    self.loc(receiver),
                    format!(
                        "`{name}` takes `&mut self`: call it on a `let mut` copy and store that \
                         back (`let mut v = x[i]; v.{name}(..); x[i] = v;`)"
                    ),
                );
            }
        }
        let params = &callee.params[1..];
        if !self.arity(&callee.display_name(), params.len(), args.len(), name_loc) {
            return T::Error;
        }
        self.call_args(callee, params, args, arg_ts, name_loc)
    }

    /// `lhs op rhs` where `lhs` is a `#[device]` type: its operator `impl`, or `==`/`!=` of a
    /// type that derives `PartialEq`.
    pub(super) fn user_binary(&mut self, op: BinOp, lhs: Ty, rhs: T, loc: Loc) -> T {
        let bool_t = T::Ty(Ty::Scalar(Scalar::Bool));
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            let partial_eq = match lhs {
                Ty::Struct(def) => def.0.partial_eq,
                Ty::Enum(def) => def.0.partial_eq,
                _ => false,
            };
            self.unify(T::Ty(lhs), rhs, loc);
            if !partial_eq {
                self.cx.error(
                    loc,
                    format!(
                        "binary operation `{}` cannot be applied to type `{}`: add \
                         `#[derive(PartialEq)]` to it",
                        op.symbol(),
                        lhs.describe()
                    ),
                );
            }
            return bool_t;
        }
        let Some(method) = op.operator_method() else {
            self.cx.error(
                loc,
                format!(
                    "binary operator `{}` cannot be applied to type `{}`",
                    op.symbol(),
                    lhs.describe()
                ),
            );
            return T::Error;
        };
        let rhs_ty = match self.resolve(rhs) {
            T::Ty(ty) => ty,
            T::Error => return T::Error,
            // An unsuffixed literal takes the type of the one `impl Op<number>` it fits.
            _ => self.literal_operand(lhs, method, rhs).unwrap_or(Ty::Unit),
        };
        let Some(function) = operator_function(self.program, lhs, method, rhs_ty) else {
            self.cx.error(
                loc,
                format!(
                    "cannot apply `{}` to `{}` and {}: implement `core::ops::{}` for `{}` in a \
                     `#[device] impl`",
                    op.symbol(),
                    lhs.describe(),
                    self.describe(rhs),
                    trait_of(method),
                    lhs.describe()
                ),
            );
            return T::Error;
        };
        let program = self.program;
        let (_, callee) = program.function(&function).expect("found above");
        if let Some(param) = callee.params.get(1) {
            let expected = self.fresh_of(param.ty, loc);
            self.unify(expected, rhs, loc);
        }
        match callee.ret {
            Some(ret) => self.fresh_of(ret, loc),
            None => T::Ty(Ty::Unit),
        }
    }

    /// The number type of the one operator impl (`impl Mul<f32> for Complex`) whose right-hand
    /// side an unsuffixed literal `rhs` can be.
    fn literal_operand(&mut self, lhs: Ty, method: &str, rhs: T) -> Option<Ty> {
        let plain = method_name(&lhs.describe(), method);
        let candidates: Vec<Ty> = self
            .program
            .functions
            .iter()
            .filter(|f| f.name == plain || f.name.starts_with(&format!("{plain}__")))
            .filter_map(|f| f.params.get(1).map(|p| p.ty))
            .filter(|ty| matches!(ty, Ty::Scalar(_)))
            .collect();
        let fitting: Vec<Ty> = candidates
            .into_iter()
            .filter(|ty| match (self.var_kind(rhs), ty) {
                (Some(super::VarKind::Float), Ty::Scalar(s)) => s.is_float(),
                (Some(super::VarKind::Int), Ty::Scalar(s)) => s.is_int(),
                _ => false,
            })
            .collect();
        match fitting.as_slice() {
            [only] => {
                self.unify(T::Ty(*only), rhs, Loc::of(&quote::quote!()));
                Some(*only)
            }
            _ => None,
        }
    }

    /// `place op= value` on a `#[device]` type: its `*Assign` operator.
    pub(super) fn user_compound(&mut self, op: BinOp, lhs: Ty, rhs: T, loc: Loc) {
        let Some(method) = op.operator_method() else {
            self.cx.error(
                loc,
                format!(
                    "`{}=` cannot be applied to type `{}`",
                    op.symbol(),
                    lhs.describe()
                ),
            );
            return;
        };
        let assign = format!("{method}_assign");
        let rhs_ty = match self.resolve(rhs) {
            T::Ty(ty) => ty,
            _ => Ty::Unit,
        };
        let Some(function) = operator_function(self.program, lhs, &assign, rhs_ty) else {
            self.cx.error(
                loc,
                format!(
                    "cannot apply `{}=` to `{}`: implement `core::ops::{}` for `{}` in a \
                     `#[device] impl`",
                    op.symbol(),
                    lhs.describe(),
                    trait_of(&assign),
                    lhs.describe()
                ),
            );
            return;
        };
        let program = self.program;
        let (_, callee) = program.function(&function).expect("found above");
        if let Some(param) = callee.params.get(1) {
            let expected = self.fresh_of(param.ty, loc);
            self.unify(expected, rhs, loc);
        }
    }

    /// `-value` of a `#[device]` type: its `Neg` operator.
    pub(super) fn user_neg(&mut self, ty: Ty, loc: Loc) -> T {
        match self.program.function(&method_name(&ty.describe(), "neg")) {
            Some((_, callee)) => match callee.ret {
                Some(ret) => self.fresh_of(ret, loc),
                None => T::Ty(Ty::Unit),
            },
            None => {
                self.cx.error(
                    loc,
                    format!(
                        "cannot apply unary operator `-` to type `{0}`: implement \
                         `core::ops::Neg` for `{0}` in a `#[device] impl`",
                        ty.describe()
                    ),
                );
                T::Error
            }
        }
    }

    /// An argument for a `&T`/`&mut T` parameter: `&x`, `&mut x`, or a reference parameter
    /// passed on. Returns whether `param` is such a parameter (then the argument is checked).
    pub(super) fn reference_arg(&mut self, param: &Param, arg: ExprId) -> bool {
        if param.pass == PassBy::Value {
            return false;
        }
        let kernel = self.kernel;
        let wants_mut = param.pass == PassBy::RefMut;
        let (inner, ok) = match &kernel.expr(arg).kind {
            ExprKind::Ref { expr, mutable } => (*expr, *mutable || !wants_mut),
            ExprKind::Local(local) => match kernel.param_pass(*local) {
                Some(PassBy::RefMut) => (arg, true),
                Some(PassBy::Ref) => (arg, !wants_mut),
                _ => (arg, false),
            },
            _ => (arg, false),
        };
        if !ok {
            let want = if wants_mut { "&mut " } else { "&" };
            self.cx.error(
                self.loc(arg),
                format!(
                    "this parameter is a `{want}{}`: pass `{want}x`",
                    param.ty.describe()
                ),
            );
            return true;
        }
        if wants_mut {
            if let Some(problem) = self.place_problem(inner, true) {
                self.cx.error(
                    self.loc(inner),
                    format!("cannot borrow this as mutable: {problem}"),
                );
            } else if !self.is_local_place(inner) {
                self.cx.error(
                    self.loc(inner),
                    "`&mut` borrows a `let mut` variable (or a part of one): copy the value into \
                     a `let mut`, pass that, and store it back",
                );
            }
        }
        let t = self.exprs[inner.0 as usize].unwrap_or(T::Error);
        let expected = self.fresh_of(param.ty, self.loc(arg));
        self.unify(expected, t, self.loc(arg));
        true
    }

    /// Whether `place` is a variable or a part of one (not memory behind a slice).
    pub(super) fn is_local_place(&self, place: ExprId) -> bool {
        match &self.kernel.expr(place).kind {
            ExprKind::Local(_) => true,
            ExprKind::Deref(inner) => self.is_local_place(*inner),
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => {
                self.is_local_place(*base)
            }
            ExprKind::Index { base, .. } => {
                matches!(self.exprs[base.0 as usize], Some(T::Array { .. }))
                    && self.is_local_place(*base)
            }
            _ => false,
        }
    }

    /// Why `place` cannot be assigned (or borrowed `&mut`), `None` when it can.
    pub(super) fn place_problem(&mut self, place: ExprId, write: bool) -> Option<String> {
        let kernel = self.kernel;
        match &kernel.expr(place).kind {
            ExprKind::Local(local) => {
                let decl = kernel.local(*local);
                match kernel.param_pass(*local) {
                    Some(PassBy::RefMut) => None,
                    Some(PassBy::Ref) if write => Some(format!(
                        "`{}` is a `&` reference: take it as `&mut` to write through it",
                        decl.name
                    )),
                    _ if write && !decl.mutable => Some(format!(
                        "`{0}` is not mutable: declare it `let mut {0}`",
                        decl.name
                    )),
                    _ => None,
                }
            }
            ExprKind::Deref(inner) => self.place_problem(*inner, write),
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => {
                self.place_problem(*base, write)
            }
            ExprKind::Index { base, .. } => match self.exprs[base.0 as usize] {
                Some(T::Ty(Ty::Slice { mutable: false, .. })) if write => {
                    Some("the slice is behind a `&` reference: take it as `&mut [T]`".to_string())
                }
                Some(T::Ty(Ty::Slice { .. } | Ty::Shared { .. })) => None,
                _ => self.place_problem(*base, write),
            },
            _ => Some("it is a value, not a variable or memory".to_string()),
        }
    }

    /// `*r`: the value behind a reference parameter.
    pub(super) fn deref(&mut self, inner: ExprId, loc: Loc) -> T {
        let t = self.expr(inner);
        let kernel = self.kernel;
        // A loop's copy of an element reads as Rust's reference to it.
        let is_ref = matches!(
            &kernel.expr(inner).kind,
            ExprKind::Local(local) if matches!(kernel.param_pass(*local), Some(PassBy::Ref | PassBy::RefMut))
                || kernel.local(*local).element
        );
        if !is_ref {
            self.cx.error(
                loc,
                "`*` reads through `&T`/`&mut T` parameters of device functions, and the \
                 elements of a `for` loop over a slice, only",
            );
            return T::Error;
        }
        t
    }
}
