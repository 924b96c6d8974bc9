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
            T::Ty(_) | T::Error | T::Array { .. } | T::Tuple(_) | T::Closure(_) => t,
            T::Var(id) => {
                let root = self.root(id);
                match self.vars[root as usize].bound {
                    Some(bound) => self.resolve(bound),
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
            T::Tuple(elems) => {
                let elems: Vec<String> = elems.iter().map(|e| self.describe(T::Var(*e))).collect();
                format!("a tuple ({})", elems.join(", "))
            }
        }
    }

    /// Makes `found` equal to `expected`, or reports a mismatch at `loc`.
    pub(super) fn unify(&mut self, expected: T, found: T, loc: Loc) -> bool {
        let (e, f) = (self.resolve(expected), self.resolve(found));
        let ok = match (e, f) {
            (T::Error, _) | (_, T::Error) => true,
            _ => self.unify_quiet(e, f),
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
            (T::Error, _) | (_, T::Error) => true,
            (T::Array { elem: a, len: la }, T::Array { elem: b, len: lb }) => {
                la.same(lb) && self.unify_quiet(T::Var(a), T::Var(b))
            }
            (T::Array { elem: a, len: la }, T::Ty(Ty::Array { elem, len }))
            | (T::Ty(Ty::Array { elem, len }), T::Array { elem: a, len: la }) => {
                let elem = self.fresh_of(*elem, Loc::of(&quote::quote!()));
                la.same(len) && self.unify_quiet(T::Var(a), elem)
            }
            (T::Closure(a), T::Closure(b)) => self.unify_closures(a, b),
            (T::Closure(_), _) | (_, T::Closure(_)) => false,
            (T::Var(a), T::Var(b)) => self.union(a, b),
            (T::Var(v), other) | (other, T::Var(v)) => self.bind(v, other),
            (T::Tuple(a), T::Tuple(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| self.unify_quiet(T::Var(*x), T::Var(*y)))
            }
            (T::Tuple(a), T::Ty(ty @ Ty::Tuple(_))) | (T::Ty(ty @ Ty::Tuple(_)), T::Tuple(a)) => {
                let b = self.fresh_of(ty, Loc::of(&quote::quote!()));
                self.unify_quiet(T::Tuple(a), b)
            }
            (T::Ty(a), T::Ty(b)) => a.same(b),
            (T::Array { .. } | T::Tuple(_), _) | (_, T::Array { .. } | T::Tuple(_)) => false,
        }
    }

    /// A fresh array element variable, joined with `t`.
    pub(super) fn element_var(&mut self, t: T, loc: Loc) -> u32 {
        let T::Var(var) = self.new_var(VarKind::Any) else {
            unreachable!("new_var returns a variable")
        };
        if !matches!(
            self.resolve(t),
            T::Var(_)
                | T::Ty(
                    Ty::Scalar(_) | Ty::Array { .. } | Ty::Struct(_) | Ty::Enum(_) | Ty::Tuple(_)
                )
                | T::Array { .. }
                | T::Tuple(_)
                | T::Error
        ) {
            let text = self.describe(t);
            self.cx.error(
                loc,
                format!("array elements must be numbers, `bool` or arrays, found {text}"),
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

    /// `ty` as an inference type: arrays (at any depth) get element variables, so they unify
    /// with arrays whose element types are still being inferred.
    pub(super) fn fresh_of(&mut self, ty: Ty, loc: Loc) -> T {
        match ty {
            Ty::Array { elem, len } => {
                let elem = self.fresh_of(*elem, loc);
                let elem = self.element_var(elem, loc);
                T::Array { elem, len }
            }
            Ty::Tuple(elems) => {
                let vars: Vec<u32> = elems
                    .iter()
                    .map(|elem| {
                        let t = self.fresh_of(*elem, loc);
                        self.element_var(t, loc)
                    })
                    .collect();
                T::Tuple(Box::leak(vars.into_boxed_slice()))
            }
            other => T::Ty(other),
        }
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

    fn bind(&mut self, var: u32, t: T) -> bool {
        let kind_ok = match (self.vars[var as usize].kind, t) {
            (VarKind::Int, T::Ty(Ty::Scalar(scalar))) => {
                scalar.is_int() || scalar.bound() == Some(Bound::Number)
            }
            (VarKind::Float, T::Ty(Ty::Scalar(scalar))) => scalar.is_float(),
            (VarKind::Int | VarKind::Float, _) => false,
            (VarKind::Any, _) => true,
        };
        if kind_ok {
            self.vars[var as usize].bound = Some(t);
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
            T::Ty(_) | T::Error | T::Array { .. } | T::Tuple(_) | T::Closure(_) => None,
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
