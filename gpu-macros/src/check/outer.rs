//! Constants from outside the function: the macro cannot see their types, so each takes the
//! type its uses need (a `usize` where it is a length), and the generated code asserts that
//! type against the real constant, where rustc reports a mismatch at the use.
//!
//! An integer whose uses fix no type (`for k in 0..MAX_ITER`, `while it < MAX_ITER` after
//! `let mut it = 0;`) takes `i32`, Rust's type for an integer literal nothing types: the host
//! code asserts that too, so a constant of another type is a compile error naming the
//! conversion to write, never a computation in the wrong type.

use super::{Checker, VarKind, T};
use crate::ir::{ExprId, Loc};
use crate::methods::{self, ArgTy, RetTy};
use crate::types::{OuterConst, Scalar, Ty};

impl Checker<'_> {
    /// One type variable per outer constant of the function, joined across its uses.
    pub(super) fn outer_types(&mut self) -> Vec<T> {
        let uses = &self.kernel.outer;
        uses.iter()
            .map(|outer| match outer.cast.or(outer.fixed) {
                Some(scalar) => T::Ty(Ty::Scalar(scalar)),
                None => self.new_var(VarKind::Any),
            })
            .collect()
    }

    /// Whether `constant` is an array the code indexes (see `OuterUse::table`).
    pub(super) fn is_table(&self, constant: OuterConst) -> bool {
        self.kernel.outer[constant.index as usize].table
    }

    /// The type of a use of `constant`.
    pub(super) fn outer_type(&mut self, constant: OuterConst) -> T {
        self.outer[constant.index as usize]
    }

    /// The inferred type of each outer constant, and whether it was assumed (`i32`, nothing
    /// typed it); a message for one whose uses leave the type open where no number is meant, or
    /// make it a type parameter (a constant outside the function has a concrete type).
    pub(super) fn finish_outer(&mut self) -> (Vec<Scalar>, Vec<bool>) {
        let mut types = Vec::new();
        let mut assumed = vec![false; self.outer.len()];
        for (index, t) in std::mem::take(&mut self.outer).into_iter().enumerate() {
            let outer = &self.kernel.outer[index];
            let name = outer.path.to_string().replace(' ', "");
            let scalar = match self.resolve(t) {
                T::Ty(Ty::Scalar(Scalar::Generic(generic))) => {
                    self.report(
                        outer.span,
                        format!(
                            "`{name}` is a constant of a concrete type; it cannot be used as the \
                             type parameter `{}`",
                            generic.name
                        ),
                    );
                    Scalar::Usize
                }
                T::Ty(Ty::Scalar(scalar)) if outer.table && scalar.is_half() => {
                    self.report(
                        outer.span,
                        format!(
                            "`{name}` holds `{}` values: tables of half-precision constants are \
                             not supported; pass them as a slice or a `#[constant]` table",
                            scalar.rust_name()
                        ),
                    );
                    Scalar::F32
                }
                T::Ty(Ty::Scalar(scalar)) => scalar,
                T::Var(_) if outer.table => {
                    let kind = self.describe(t);
                    self.report(
                        outer.span,
                        format!(
                            "cannot infer the element type of `{name}` ({kind}): the macro sees \
                             only its name; use an element where its type is known \
                             (`let w: f32 = {name}[k];`)"
                        ),
                    );
                    Scalar::Usize
                }
                // Only an integer: a constant met where any value may stand may be an array
                // or a struct, which no conversion turns into the assumed type.
                T::Var(_) if self.var_kind(t) == Some(VarKind::Int) => {
                    self.unify_quiet(t, T::Ty(Ty::Scalar(Scalar::I32)));
                    assumed[index] = true;
                    Scalar::I32
                }
                T::Var(_) => {
                    let kind = self.describe(t);
                    // `Vec3::ZERO`: perhaps a `#[device]` type's constant of its own type, which
                    // the kernel finds once it names the type.
                    let owner = name
                        .rsplit_once("::")
                        .map(|(owner, _)| owner.rsplit("::").next().unwrap_or(owner))
                        .filter(|owner| owner.starts_with(char::is_uppercase));
                    let hint = match owner {
                        Some(owner) => format!(
                            "; if `{owner}` is a `#[device]` type, name it where the value is \
                             bound (`let v: {owner} = {name};`)"
                        ),
                        None => String::new(),
                    };
                    self.report(
                        outer.span,
                        format!(
                            "cannot infer the type of `{name}` ({kind}): the macro sees only its \
                             name; convert it where it is used (`{name} as u32`, any number type) \
                             or use it where the type is known (`let n: usize = {name};`){hint}"
                        ),
                    );
                    Scalar::Usize
                }
                T::Ty(_) | T::Array { .. } | T::Tuple(_) if outer.table => {
                    self.report(
                        outer.span,
                        format!(
                            "`{name}` is used as a table of numbers or `bool`; a constant array of \
                             other values is passed as a slice instead"
                        ),
                    );
                    Scalar::Usize
                }
                T::Error | T::Ty(_) | T::Array { .. } | T::Tuple(_) | T::Closure(_) => {
                    Scalar::Usize
                }
            };
            types.push(scalar);
        }
        (types, assumed)
    }

    /// The name of the constant from outside the function whose type is the open variable
    /// `var`, if there is one.
    pub(super) fn outer_of_var(&mut self, var: u32) -> Option<String> {
        (0..self.outer.len())
            .find(|&index| {
                let outer = self.outer[index];
                matches!(self.resolve(outer), T::Var(root) if root == var)
            })
            .map(|index| self.kernel.outer[index].path.to_string().replace(' ', ""))
    }

    /// A method called on a constant from outside whose type is still open (`FLOAT_N.sqrt()`):
    /// rustc knows the constant's type, so the method is typed by its signature, which must be
    /// the same on every number type that has it (`sqrt` takes and gives the receiver's type),
    /// and checked once the constant's type is known (`check_outer_methods`): a constant typed
    /// only by such a method stays open, as rustc's type is what the message should name.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn outer_method(
        &mut self,
        constant: &str,
        receiver: ExprId,
        receiver_t: T,
        name: &str,
        name_loc: Loc,
        args: &[ExprId],
        arg_ts: &[T],
    ) -> T {
        let kind = self.var_kind(receiver_t);
        let candidates: Vec<(Scalar, &'static methods::Method)> = Scalar::ALL
            .into_iter()
            .filter(|scalar| match kind {
                Some(VarKind::Int) => scalar.is_int(),
                Some(VarKind::Float) => scalar.is_float(),
                Some(VarKind::Any) | None => true,
            })
            .filter_map(|scalar| methods::lookup(name, scalar).map(|method| (scalar, method)))
            .collect();
        let Some((_, first)) = candidates.first() else {
            self.report(
                name_loc,
                format!("no number type has a method `{name}` in kernels (called on `{constant}`)"),
            );
            return T::Error;
        };
        let (args_ty, ret) = (first.args, first.ret);
        let one_signature = candidates
            .iter()
            .all(|(_, method)| method.args == args_ty && method.ret == ret);
        let ret = match ret {
            RetTy::Same => receiver_t,
            RetTy::Bool => T::Ty(Ty::Scalar(Scalar::Bool)),
            RetTy::U32 => T::Ty(Ty::Scalar(Scalar::U32)),
            RetTy::F32 => T::Ty(Ty::Scalar(Scalar::F32)),
            RetTy::F64 => T::Ty(Ty::Scalar(Scalar::F64)),
            // The result's type would depend on the receiver's, which is not known yet.
            RetTy::Bits | RetTy::U64 | RetTy::Unsigned => T::Error,
        };
        if !one_signature || matches!(ret, T::Error) {
            self.report(
                name_loc,
                format!(
                    "can't call method `{name}` on `{constant}`, whose type the macro cannot \
                     see and the method's result depends on: give it a type first (`let v: f32 \
                     = {constant};`, any number type)"
                ),
            );
            return T::Error;
        }
        if !self.arity(name, args_ty.len(), args.len(), name_loc) {
            return T::Error;
        }
        for ((arg, arg_t), expected) in args.iter().zip(arg_ts).zip(args_ty) {
            let expected = match expected {
                ArgTy::Same => receiver_t,
                ArgTy::I32 => T::Ty(Ty::Scalar(Scalar::I32)),
                ArgTy::U32 => T::Ty(Ty::Scalar(Scalar::U32)),
            };
            self.unify(expected, *arg_t, self.loc(*arg));
        }
        self.outer_methods
            .push((receiver, name.to_string(), name_loc));
        ret
    }

    /// Each method `outer_method` typed exists for the type its constant took.
    pub(super) fn check_outer_methods(&mut self, exprs: &[Ty]) {
        for (receiver, name, loc) in std::mem::take(&mut self.outer_methods) {
            if let Ty::Scalar(scalar) = exprs[receiver.0 as usize] {
                if methods::lookup(&name, scalar).is_none() {
                    self.report(
                        loc,
                        format!(
                            "no method `{name}` on `{}` in kernels; available: {}",
                            scalar.rust_name(),
                            methods::names_for(scalar)
                        ),
                    );
                }
            }
        }
    }

    fn report(&self, loc: Loc, message: String) {
        self.cx.error(loc, message);
    }
}
