//! Expressions: literals, operators, casts, indexing, fields, constants and the values of
//! `if` and `match`.

use super::constants::{constant_names, constant_type};
use super::{is_constructor, is_let_init, Checker, VarKind, T};
use crate::ir::*;
use crate::types::{Len, Scalar, Ty};

impl Checker<'_> {
    pub(super) fn expr(&mut self, id: ExprId) -> T {
        let t = self.expr_kind(id);
        self.exprs[id.0 as usize] = Some(t);
        t
    }

    fn expr_kind(&mut self, id: ExprId) -> T {
        let loc = self.loc(id);
        let kernel = self.kernel;
        match &kernel.expr(id).kind {
            ExprKind::Lit(Lit::Bool(_)) => T::Ty(Ty::Scalar(Scalar::Bool)),
            ExprKind::Lit(Lit::Int { suffix, .. }) => match suffix {
                Some(scalar) => T::Ty(Ty::Scalar(*scalar)),
                None => self.new_var(VarKind::Int),
            },
            ExprKind::Lit(Lit::Float { suffix, .. }) => match suffix {
                Some(scalar) => T::Ty(Ty::Scalar(*scalar)),
                None => self.new_var(VarKind::Float),
            },
            ExprKind::Local(local) => self.locals[local.0 as usize].unwrap_or(T::Error),
            ExprKind::Binary { op, lhs, rhs } => {
                let lhs_t = self.expr(*lhs);
                let rhs_t = self.expr(*rhs);
                if let T::Ty(user @ (Ty::Struct(_) | Ty::Enum(_))) = self.resolve(lhs_t) {
                    return self.user_binary(*op, user, rhs_t, loc);
                }
                self.binary_type(*op, lhs_t, rhs_t, self.loc(*lhs), self.loc(*rhs))
            }
            ExprKind::Unary { op, operand } => {
                if let (UnOp::Neg, ExprKind::Lit(Lit::Int { .. })) =
                    (op, &kernel.expr(*operand).kind)
                {
                    self.negated_literals.push(*operand);
                }
                let t = self.expr(*operand);
                if let (UnOp::Neg, T::Ty(user @ Ty::Struct(_))) = (op, self.resolve(t)) {
                    return self.user_neg(user, loc);
                }
                self.unary_type(*op, t, id, loc)
            }
            ExprKind::Cast { expr, to } => {
                let from = self.expr(*expr);
                // `f32::from(h)` of an `f16` or `bf16` is exact, as the `half` crate's `From`
                // is; only `as` is refused on them.
                let widened = matches!(self.resolve(from), T::Ty(Ty::Scalar(s)) if s.is_half())
                    && matches!(to, Scalar::F32 | Scalar::F64)
                    && self
                        .kernel
                        .conversions
                        .iter()
                        .any(|(v, t, _)| v == expr && t == to);
                if !widened {
                    self.cast(from, *to, loc);
                }
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Index { base, index } => {
                let base_t = self.expr(*base);
                self.index_type(*index);
                match self.resolve(base_t) {
                    T::Ty(Ty::Slice { elem, .. } | Ty::Shared { elem, .. }) => {
                        self.fresh_of(*elem, self.loc(*base))
                    }
                    T::Array { elem, .. } => T::Var(elem),
                    T::Ty(Ty::Array { elem, .. }) => self.fresh_of(*elem, self.loc(*base)),
                    T::Error => T::Error,
                    // A table: the type variable is its elements'.
                    _ if matches!(kernel.expr(*base).kind, ExprKind::Outer(c) if self.is_table(c)) => {
                        base_t
                    }
                    _ if matches!(kernel.expr(*base).kind, ExprKind::Outer(_)) => {
                        if let ExprKind::Outer(constant) = kernel.expr(*base).kind {
                            // Reported here: its type is not asked about again.
                            self.outer[constant.index as usize] = T::Error;
                        }
                        self.cx.error(
                            self.loc(*base),
                            "constants from outside the function are numbers or `bool`: an array \
                             constant cannot be indexed here; copy it into a local array \
                             (`let taps = [0.25f32, 0.5, 0.25];`) or pass a slice",
                        );
                        T::Error
                    }
                    _ => {
                        let text = self.describe(base_t);
                        self.cx.error(
                            self.loc(*base),
                            format!("cannot index into a value of type {text}: only slice parameters can be indexed"),
                        );
                        T::Error
                    }
                }
            }
            ExprKind::Len(base) => {
                let base_t = self.expr(*base);
                // A `#[device]` type's own `len` method (a vector's length).
                if let T::Ty(user @ (Ty::Struct(_) | Ty::Enum(_))) = self.resolve(base_t) {
                    return self.user_method(*base, user, "len", loc, &[]);
                }
                let table =
                    matches!(kernel.expr(*base).kind, ExprKind::Outer(c) if self.is_table(c));
                if !table
                    && !matches!(
                        self.resolve(base_t),
                        T::Ty(Ty::Slice { .. } | Ty::Shared { .. }) | T::Array { .. } | T::Error
                    )
                {
                    let text = self.describe(base_t);
                    self.cx.error(
                        loc,
                        format!("`len()` is only available on slices, not on {text}"),
                    );
                }
                T::Ty(Ty::Scalar(Scalar::Usize))
            }
            ExprKind::Method {
                receiver,
                method,
                method_span,
                args,
                receiver_ty,
            } => self.method(*receiver, method, *method_span, args, *receiver_ty),
            ExprKind::Builtin(builtin) => T::Ty(builtin.ty()),
            ExprKind::GenericConst(name) => T::Ty(Ty::Scalar(
                self.kernel.const_param(name).unwrap_or(Scalar::Usize),
            )),
            ExprKind::Outer(constant)
                if self.is_table(*constant) && !self.table_bases.contains(&id) =>
            {
                self.cx.error(
                    loc,
                    format!(
                        "`{}` is an array constant: index it (`{0}[i]`), take its `len()` or loop \
                         over it; to pass it on, copy it into a local array",
                        constant.name
                    ),
                );
                T::Error
            }
            ExprKind::Outer(constant) => self.outer_type(*constant),
            ExprKind::FromBits { bits, to } => {
                let t = self.expr(*bits);
                let unsigned = if *to == Scalar::F32 {
                    Scalar::U32
                } else {
                    Scalar::U64
                };
                self.unify(T::Ty(Ty::Scalar(unsigned)), t, self.loc(*bits));
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Convert { expr, to } => {
                let t = self.expr(*expr);
                if to.is_half() {
                    // The inner conversion already fixed the source type.
                } else {
                    self.unify(T::Ty(Ty::Scalar(*to)), t, self.loc(*expr));
                }
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Call {
                name,
                args,
                turbofish,
                ..
            } => self.call(id, name, args, turbofish, loc),
            ExprKind::Closure {
                params,
                ret,
                returns_value,
                ..
            } => self.closure_expr(id, params, *ret, *returns_value),
            ExprKind::CallClosure { callee, args } => self.closure_call(*callee, args, loc),
            kind if is_constructor(kind)
                && !self.let_inits.contains(&id)
                && !matches!(
                    kind,
                    ExprKind::ArrayRepeat { .. } | ExprKind::ArrayList { .. }
                ) =>
            {
                self.cx.error(
                    loc,
                    "this creates storage, so it can only initialise a `let`: `let name = ...;`",
                );
                T::Error
            }
            ExprKind::Intrinsic { op, args } => self.intrinsic(*op, args, id, loc),
            ExprKind::SharedArray { elem, len } => T::Ty(Ty::Shared {
                elem: elem.interned(),
                len: Some(*len),
            }),
            ExprKind::DynamicShared { elem } => T::Ty(Ty::Shared {
                elem: elem.interned(),
                len: None,
            }),
            ExprKind::ArrayRepeat { value, len } => {
                let t = self.expr(*value);
                let elem = self.element_var(t, self.loc(*value));
                T::Array { elem, len: *len }
            }
            ExprKind::ArrayList { elems } => {
                let first = self.expr(elems[0]);
                let elem = self.element_var(first, self.loc(elems[0]));
                for e in &elems[1..] {
                    let t = self.expr(*e);
                    self.unify(T::Var(elem), t, self.loc(*e));
                }
                T::Array {
                    elem,
                    len: Len::Known(elems.len() as u64),
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                let t = self.expr(*scrutinee);
                self.match_patterns(t, arms.iter().map(|(p, _)| p.as_slice()), loc);
                let first = self.expr(arms[0].1);
                for (_, value) in &arms[1..] {
                    let v = self.expr(*value);
                    self.unify(first, v, self.loc(*value));
                }
                first
            }
            ExprKind::Field {
                base,
                name,
                name_span,
            } => self.field(*base, name, *name_span),
            ExprKind::StructLit { ty, fields } => self.struct_literal(Ty::Struct(*ty), fields),
            ExprKind::AssocCall {
                ty,
                name,
                name_span,
                args,
                constant,
            } => self.assoc_call(*ty, name, *name_span, args, *constant, loc),
            ExprKind::Variant { ty, .. } => T::Ty(Ty::Enum(*ty)),
            ExprKind::Ref { expr, .. } => {
                let t = self.expr(*expr);
                if !self.call_args.contains(&id) {
                    self.cx.error(
                        loc,
                        "`&x` and `&mut x` are passed to `&T`/`&mut T` parameters of device \
                         functions; elsewhere use the value itself",
                    );
                    return T::Error;
                }
                t
            }
            ExprKind::Deref(inner) => self.deref(*inner, loc),
            ExprKind::SubSlice {
                base,
                start,
                end,
                mutable,
                ..
            } => {
                let base_t = self.expr(*base);
                for bound in [start, end].into_iter().flatten() {
                    let t = self.expr(*bound);
                    self.unify(T::Ty(Ty::Scalar(Scalar::Usize)), t, self.loc(*bound));
                    if !is_simple(self.kernel, *bound) {
                        self.cx.error(
                            self.loc(*bound),
                            "a sub-slice's bounds are variables and arithmetic: compute this one \
                             with `let` first",
                        );
                    }
                }
                let in_place = self.call_args.contains(&id) || is_let_init(&self.kernel.body, id);
                if !in_place {
                    self.cx.error(
                        loc,
                        "a sub-slice is passed to a device function or bound with `let`: \
                         `let row = &x[a..b];`",
                    );
                }
                match self.resolve(base_t) {
                    T::Ty(Ty::Slice {
                        elem,
                        mutable: base_mut,
                    }) if (base_mut || !*mutable) && !matches!(elem, Ty::Array { .. }) => {
                        T::Ty(Ty::Slice {
                            elem,
                            mutable: *mutable,
                        })
                    }
                    T::Ty(Ty::Shared { elem, .. }) if !matches!(elem, Ty::Array { .. }) => {
                        T::Ty(Ty::Slice {
                            elem,
                            mutable: *mutable,
                        })
                    }
                    // A part of a local array or of an array field (`&home.neighbours[..n]`).
                    T::Ty(Ty::Array { elem, .. }) if !matches!(elem, Ty::Array { .. }) => {
                        T::Ty(Ty::Slice {
                            elem,
                            mutable: *mutable,
                        })
                    }
                    T::Array { elem, .. } => match self.resolve(T::Var(elem)) {
                        T::Ty(elem @ (Ty::Scalar(_) | Ty::Struct(_) | Ty::Enum(_))) => {
                            T::Ty(Ty::Slice {
                                elem: elem.interned(),
                                mutable: *mutable,
                            })
                        }
                        other => {
                            let text = self.describe(other);
                            self.cx.error(
                                loc,
                                format!(
                                    "sub-slices of arrays are taken of arrays of numbers or \
                                     structs, not of {text}"
                                ),
                            );
                            T::Error
                        }
                    },
                    T::Error => T::Error,
                    T::Ty(Ty::Slice { mutable: false, .. }) => {
                        self.cx.error(
                            loc,
                            "cannot borrow a part of a `&[T]` as mutable: take the parameter as \
                             `&mut [T]`",
                        );
                        T::Error
                    }
                    other => {
                        let text = self.describe(other);
                        self.cx.error(
                            loc,
                            format!(
                                "sub-slices are taken of slices, shared memory and arrays of \
                                 numbers or structs, not of {text}"
                            ),
                        );
                        T::Error
                    }
                }
            }
            ExprKind::Tuple { elems } => {
                let vars: Vec<u32> = elems
                    .iter()
                    .map(|e| {
                        let t = self.expr(*e);
                        self.element_var(t, self.loc(*e))
                    })
                    .collect();
                T::Tuple(Box::leak(vars.into_boxed_slice()))
            }
            ExprKind::TupleField { base, index } => {
                let base_t = self.expr(*base);
                let base_t = match self.resolve(base_t) {
                    T::Ty(ty @ Ty::Tuple(_)) => self.fresh_of(ty, loc),
                    other => other,
                };
                match base_t {
                    T::Tuple(elems) if *index < elems.len() => T::Var(elems[*index]),
                    // A tuple struct's field by position.
                    T::Ty(Ty::Struct(def)) if def.0.field(&index.to_string()).is_some() => {
                        let ty = def.0.field(&index.to_string()).expect("matched above");
                        self.fresh_of(ty, loc)
                    }
                    T::Error => T::Error,
                    other => {
                        let text = self.describe(other);
                        self.cx.error(loc, format!("no field `{index}` on {text}"));
                        T::Error
                    }
                }
            }
            ExprKind::Const { ty, name } => match constant_type(*ty, name) {
                Some(t) => T::Ty(Ty::Scalar(t)),
                None => {
                    self.cx.error(
                        loc,
                        format!(
                            "unknown constant `{}::{name}`: supported are {}",
                            ty.rust_name(),
                            constant_names(*ty)
                        ),
                    );
                    T::Ty(Ty::Scalar(*ty))
                }
            },
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                self.condition(*cond);
                let then_t = self.expr(*then_value);
                let else_t = self.expr(*else_value);
                self.unify(then_t, else_t, self.loc(*else_value));
                if matches!(
                    self.resolve(then_t),
                    T::Ty(Ty::Slice { .. } | Ty::Shared { .. } | Ty::Dim3 | Ty::Index3 | Ty::Unit)
                ) {
                    self.cx.error(
                        loc,
                        "an `if` used as a value must produce a value: a number, `bool`, array, \
                         tuple or `#[device]` type",
                    );
                    return T::Error;
                }
                then_t
            }
        }
    }

    pub(super) fn binary_type(
        &mut self,
        op: BinOp,
        lhs: T,
        rhs: T,
        lhs_loc: Loc,
        rhs_loc: Loc,
    ) -> T {
        let bool_t = T::Ty(Ty::Scalar(Scalar::Bool));
        match op {
            BinOp::And | BinOp::Or => {
                self.unify(bool_t, lhs, lhs_loc);
                self.unify(bool_t, rhs, rhs_loc);
                bool_t
            }
            _ if op.is_comparison() => {
                self.unify(lhs, rhs, rhs_loc);
                self.require_scalar(lhs, op, lhs_loc);
                bool_t
            }
            BinOp::Shl | BinOp::Shr => {
                for (t, loc) in [(lhs, lhs_loc), (rhs, rhs_loc)] {
                    if !self.is_int(t) {
                        let text = self.describe(t);
                        self.cx.error(
                            loc,
                            format!("`{}` needs integer operands, found {text}", op.symbol()),
                        );
                    }
                }
                lhs
            }
            _ => {
                if !self.unify(lhs, rhs, rhs_loc) {
                    return lhs;
                }
                let allowed = match op {
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        self.is_int(lhs) || self.known_scalar(lhs) == Some(Scalar::Bool)
                    }
                    _ => self.is_numeric(lhs),
                };
                if !allowed {
                    let text = self.describe(lhs);
                    self.cx.error(
                        lhs_loc,
                        format!(
                            "binary operator `{}` cannot be applied to {text}",
                            op.symbol()
                        ),
                    );
                }
                lhs
            }
        }
    }

    fn require_scalar(&mut self, t: T, op: BinOp, loc: Loc) {
        let resolved = self.resolve(t);
        let compound = matches!(
            resolved,
            T::Array { .. } | T::Tuple(_) | T::Ty(Ty::Array { .. } | Ty::Tuple(_))
        );
        if compound && !matches!(op, BinOp::Eq | BinOp::Ne) {
            let text = self.describe(t);
            self.cx.error(
                loc,
                format!(
                    "`{}` of {text} is not supported in kernels (`==` and `!=` are): compare \
                     the elements in order",
                    op.symbol()
                ),
            );
            return;
        }
        if let T::Ty(ty @ (Ty::Slice { .. } | Ty::Dim3 | Ty::Index3 | Ty::Unit)) = resolved {
            self.cx.error(
                loc,
                format!(
                    "binary operator `{}` cannot be applied to `{}`",
                    op.symbol(),
                    ty.describe()
                ),
            );
        }
    }

    fn unary_type(&mut self, op: UnOp, t: T, id: ExprId, loc: Loc) -> T {
        match op {
            UnOp::Neg => match self.resolve(t) {
                T::Error => t,
                T::Var(_) => {
                    self.negations.push((id, loc));
                    t
                }
                T::Ty(Ty::Scalar(s))
                    if s.is_signed_int() || s.is_float() || s.is_half() || s.bound().is_some() =>
                {
                    t
                }
                _ => {
                    let text = self.describe(t);
                    self.cx
                        .error(loc, format!("cannot apply unary operator `-` to {text}"));
                    t
                }
            },
            UnOp::Not => {
                let ok = self.is_int(t) || self.known_scalar(t) == Some(Scalar::Bool);
                if !ok {
                    let text = self.describe(t);
                    self.cx
                        .error(loc, format!("cannot apply unary operator `!` to {text}"));
                }
                t
            }
        }
    }

    fn cast(&mut self, from: T, to: Scalar, loc: Loc) {
        let from_scalar = match self.resolve(from) {
            T::Ty(Ty::Scalar(s)) => Some(s),
            // A fieldless enum converts to a number as in Rust, from its `repr` integer.
            T::Ty(Ty::Enum(def)) if to.is_number() && !to.is_half() => Some(def.0.repr),
            T::Var(_) => None,
            T::Error => return,
            other => {
                let text = self.describe(other);
                self.cx
                    .error(loc, format!("cannot cast {text} as `{}`", to.rust_name()));
                return;
            }
        };
        let from_text = self.describe(from);
        if to.is_half() || from_scalar.is_some_and(Scalar::is_half) {
            let (half, other) = if to.is_half() {
                (to, from_scalar.map_or("f32", Scalar::rust_name))
            } else {
                (from_scalar.unwrap_or(Scalar::F16), to.rust_name())
            };
            self.cx.error(
                loc,
                format!(
                    "`as` does not convert `{}` (it is not a primitive type): use `{}::from_{other}(x)` \
                     or `x.to_{other}()`",
                    half.rust_name(),
                    half.rust_name()
                ),
            );
        } else if to == Scalar::Bool && from_scalar != Some(Scalar::Bool) {
            self.cx.error(
                loc,
                format!("cannot cast {from_text} as `bool`: compare with zero instead (`x != 0`)"),
            );
        } else if from_scalar == Some(Scalar::Bool) && to.is_float() {
            self.cx.error(
                loc,
                format!(
                    "cannot cast `bool` as `{}`: cast to an integer first (`b as u32 as {}`)",
                    to.rust_name(),
                    to.rust_name()
                ),
            );
        }
    }

    /// An index: `usize`, as Rust requires.
    fn index_type(&mut self, index: ExprId) {
        let t = self.expr(index);
        self.require_index(t, self.loc(index));
    }

    pub(super) fn require_index(&mut self, t: T, loc: Loc) {
        match self.resolve(t) {
            T::Ty(Ty::Scalar(Scalar::Usize)) | T::Error => {}
            T::Var(_) => {
                self.unify(T::Ty(Ty::Scalar(Scalar::Usize)), t, loc);
            }
            _ => {
                let text = self.describe(t);
                self.cx.error(
                    loc,
                    format!("slices are indexed by `usize`, found {text}: write `... as usize`"),
                );
            }
        }
    }
}

/// Whether `id` reads values and computes without effects (no calls), so it may be evaluated
/// more than once.
fn is_simple(function: &Function, id: ExprId) -> bool {
    match &function.expr(id).kind {
        ExprKind::Lit(_)
        | ExprKind::Local(_)
        | ExprKind::GenericConst(_)
        | ExprKind::Const { .. }
        | ExprKind::Outer(_)
        | ExprKind::Len(_) => true,
        ExprKind::Binary { lhs, rhs, .. } => is_simple(function, *lhs) && is_simple(function, *rhs),
        ExprKind::Unary { operand, .. } | ExprKind::Cast { expr: operand, .. } => {
            is_simple(function, *operand)
        }
        ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => {
            is_simple(function, *base)
        }
        _ => false,
    }
}
