//! Inference variables and unification: how an unsuffixed literal's type is found, and
//! the messages when two types disagree.

use super::{Checker, Var, VarKind, T};
use crate::ir::*;
use crate::types::{Bound, Len, Scalar, Ty};

impl Checker<'_> {
    pub(super) fn new_var(&mut self, kind: VarKind) -> T {
        let id = self.vars.len() as u32;
        self.vars.push(Var {
            parent: id,
            kind,
            bound: None,
        });
        T::Var(id)
    }

    fn root(&mut self, mut id: u32) -> u32 {
        while self.vars[id as usize].parent != id {
            let parent = self.vars[id as usize].parent;
            self.vars[id as usize].parent = self.vars[parent as usize].parent;
            id = parent;
        }
        id
    }

    /// `t` with every bound variable replaced by its type.
    pub(super) fn resolve(&mut self, t: T) -> T {
        match t {
            T::Ty(_) | T::Error | T::Array { .. } | T::Closure(_) => t,
            T::Var(id) => {
                let root = self.root(id);
                match self.vars[root as usize].bound {
                    Some(scalar) => T::Ty(Ty::Scalar(scalar)),
                    None => T::Var(root),
                }
            }
        }
    }

    pub(super) fn describe(&mut self, t: T) -> String {
        match self.resolve(t) {
            T::Ty(ty) => format!("`{}`", ty.describe()),
            T::Var(id) => match self.vars[id as usize].kind {
                VarKind::Int => "integer".to_string(),
                VarKind::Float => "floating-point number".to_string(),
                VarKind::Any => "a value".to_string(),
            },
            T::Error => "an erroneous value".to_string(),
            T::Closure(_) => "a closure".to_string(),
            T::Array { elem, len } => {
                let elem = self.describe(T::Var(elem));
                format!("an array of {} ({elem})", len.describe())
            }
        }
    }

    /// Makes `found` equal to `expected`, or reports a mismatch at `loc`.
    pub(super) fn unify(&mut self, expected: T, found: T, loc: Loc) -> bool {
        let (e, f) = (self.resolve(expected), self.resolve(found));
        let ok = match (e, f) {
            (T::Error, _) | (_, T::Error) => true,
            (T::Array { elem: a, len: la }, T::Array { elem: b, len: lb }) => {
                la == lb && self.unify_quiet(T::Var(a), T::Var(b))
            }
            (T::Array { .. }, _) | (_, T::Array { .. }) => false,
            (T::Closure(a), T::Closure(b)) => self.unify_closures(a, b),
            (T::Closure(_), _) | (_, T::Closure(_)) => false,
            (T::Ty(a), T::Ty(b)) => a == b,
            (T::Var(v), T::Ty(ty)) | (T::Ty(ty), T::Var(v)) => self.bind(v, ty),
            (T::Var(a), T::Var(b)) => self.union(a, b),
        };
        if !ok {
            let (expected_text, found_text) = (self.describe(e), self.describe(f));
            let hint = self.mismatch_hint(e, f);
            self.cx.error(
                loc,
                format!("mismatched types: expected {expected_text}, found {found_text}{hint}"),
            );
        }
        ok
    }

    /// Joins two variables: kinds must agree, except that `Any` takes the other's kind.
    pub(super) fn union(&mut self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        let (ka, kb) = (self.vars[a as usize].kind, self.vars[b as usize].kind);
        let (root, child) = match (ka, kb) {
            _ if ka == kb => (a, b),
            (_, VarKind::Any) => (a, b),
            (VarKind::Any, _) => (b, a),
            _ => return false,
        };
        self.vars[child as usize].parent = root;
        true
    }

    /// `unify` without a message (the caller reports).
    pub(super) fn unify_quiet(&mut self, a: T, b: T) -> bool {
        match (self.resolve(a), self.resolve(b)) {
            (T::Array { elem: a, len: la }, T::Array { elem: b, len: lb }) => {
                la == lb && self.unify_quiet(T::Var(a), T::Var(b))
            }
            (T::Closure(a), T::Closure(b)) => self.unify_closures(a, b),
            (T::Var(a), T::Var(b)) => self.union(a, b),
            (T::Var(v), T::Ty(ty)) | (T::Ty(ty), T::Var(v)) => self.bind(v, ty),
            (T::Ty(a), T::Ty(b)) => a == b,
            _ => false,
        }
    }

    /// A fresh array element variable, joined with `t`.
    pub(super) fn element_var(&mut self, t: T, loc: Loc) -> u32 {
        let T::Var(var) = self.new_var(VarKind::Any) else {
            unreachable!("new_var returns a variable")
        };
        if !matches!(self.resolve(t), T::Var(_) | T::Ty(Ty::Scalar(_)) | T::Error) {
            let text = self.describe(t);
            self.cx.error(
                loc,
                format!("array elements must be numbers or `bool`, found {text}"),
            );
        } else {
            self.unify(T::Var(var), t, loc);
        }
        var
    }

    /// The type of an array of `len` elements of the concrete `elem`.
    pub(super) fn array_of(&mut self, elem: Scalar, len: Len, loc: Loc) -> T {
        let elem = self.element_var(T::Ty(Ty::Scalar(elem)), loc);
        T::Array { elem, len }
    }

    fn mismatch_hint(&mut self, expected: T, found: T) -> String {
        match (expected, found) {
            (T::Closure(_), T::Closure(_)) => {
                "; every closure has its own type: give each its own `let`, or pass it to a device \
                 function whose parameter has a type `F: Fn(..)`"
                    .to_string()
            }
            (T::Ty(_), T::Closure(_)) => {
                "; a closure is passed only where a device function's parameter has a type `F: Fn(..)`"
                    .to_string()
            }
            (T::Ty(Ty::Scalar(e)), T::Var(_)) if e.is_half() => format!(
                "; `{0}` has no literals (it is not a primitive type): write `{0}::from_f32(2.0)` or `{0}::ONE`",
                e.rust_name()
            ),
            (T::Ty(Ty::Scalar(e)), T::Var(v)) if e.is_float() => {
                if self.vars[v as usize].kind == VarKind::Int {
                    format!(
                        "; write a float literal such as `2.0` (or `2.0_{}`)",
                        e.rust_name()
                    )
                } else {
                    String::new()
                }
            }
            (T::Ty(Ty::Scalar(e)), T::Ty(Ty::Scalar(f)))
                if e != Scalar::Bool && f != Scalar::Bool =>
            {
                format!(
                    "; kernels convert no number type implicitly: write `... as {}`",
                    e.rust_name()
                )
            }
            _ => String::new(),
        }
    }

    fn bind(&mut self, var: u32, ty: Ty) -> bool {
        let Ty::Scalar(scalar) = ty else {
            return false;
        };
        let kind_ok = match self.vars[var as usize].kind {
            VarKind::Int => scalar.is_int() || scalar.bound() == Some(Bound::Number),
            VarKind::Float => scalar.is_float(),
            VarKind::Any => true,
        };
        if kind_ok {
            self.vars[var as usize].bound = Some(scalar);
        }
        kind_ok
    }

    /// The known scalar type of `t`, if inference has settled it.
    pub(super) fn known_scalar(&mut self, t: T) -> Option<Scalar> {
        match self.resolve(t) {
            T::Ty(Ty::Scalar(scalar)) => Some(scalar),
            _ => None,
        }
    }

    pub(super) fn var_kind(&mut self, t: T) -> Option<VarKind> {
        match self.resolve(t) {
            T::Var(id) => match self.vars[id as usize].kind {
                VarKind::Any => None,
                kind => Some(kind),
            },
            T::Ty(_) | T::Error | T::Array { .. } | T::Closure(_) => None,
        }
    }

    pub(super) fn is_error(&mut self, t: T) -> bool {
        matches!(self.resolve(t), T::Error)
    }

    pub(super) fn is_numeric(&mut self, t: T) -> bool {
        self.is_error(t)
            || self.var_kind(t).is_some()
            || self.known_scalar(t).is_some_and(Scalar::is_number)
    }

    pub(super) fn is_int(&mut self, t: T) -> bool {
        self.is_error(t)
            || self.var_kind(t) == Some(VarKind::Int)
            || self.known_scalar(t).is_some_and(Scalar::is_int)
    }
}
