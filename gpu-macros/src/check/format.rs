//! Assertions and printing: conditions are `bool`, compared values share a type, and every
//! format argument is a number or `bool` its placeholder can format (for `println!`, one the
//! GPU's `printf` can print).

use super::{Checker, VarKind, T};
use crate::format::{self, Piece};
use crate::ir::*;
use crate::types::{Scalar, Ty};

impl Checker<'_> {
    pub(super) fn assertion(&mut self, assertion: &Assertion) {
        match &assertion.kind {
            AssertKind::Holds { cond, .. } => self.condition(*cond),
            AssertKind::Eq { left, right } | AssertKind::Ne { left, right } => {
                let left_t = self.expr(*left);
                let right_t = self.expr(*right);
                self.unify(left_t, right_t, self.loc(*right));
                for side in [*left, *right] {
                    self.format_value(side, None, false);
                }
            }
            AssertKind::Panic { .. } => {}
        }
        if let Some(message) = &assertion.message {
            self.format_args(message, false);
        }
    }

    /// Checks a format string's arguments; `printf` when the GPU prints them itself.
    pub(super) fn format_args(&mut self, format: &FormatArgs, printf: bool) {
        for arg in &format.args {
            self.expr(*arg);
        }
        for piece in &format.template.pieces {
            if let Piece::Arg { index, spec, .. } = piece {
                if let Some(&arg) = format.args.get(*index) {
                    self.format_value(arg, Some(spec), printf);
                }
            }
        }
    }

    /// Checks that `arg` is a number or `bool` that `spec` (`{:?}` when `None`) can format.
    fn format_value(&mut self, arg: ExprId, spec: Option<&format::Spec>, printf: bool) {
        let Some(t) = self.exprs[arg.0 as usize] else {
            return;
        };
        if self.is_error(t) {
            return;
        }
        // An open literal formats as every type of its kind would.
        let scalar = match self.resolve(t) {
            T::Ty(Ty::Scalar(scalar)) => scalar,
            T::Var(_) if self.var_kind(t) == Some(VarKind::Int) => Scalar::I32,
            T::Var(_) => Scalar::F64,
            T::Error => return,
            T::Ty(Ty::Dim3 | Ty::Index3) => {
                return self.not_formattable(arg, t, "format one component, as `thread_idx().x`")
            }
            T::Ty(Ty::Unit) => return self.not_formattable(arg, t, "this expression has no value"),
            T::Ty(Ty::Slice { .. } | Ty::Array { .. } | Ty::Shared { .. }) | T::Array { .. } => {
                return self.not_formattable(arg, t, "format one element, as `x[i]`")
            }
            T::Ty(Ty::Struct(_) | Ty::Tuple(_)) | T::Tuple(_) => {
                return self.not_formattable(arg, t, "format its fields, as `b.mass` or `t.0`")
            }
            T::Ty(Ty::Enum(_)) => {
                return self.not_formattable(arg, t, "format its integer, as `op as u32`")
            }
            T::Ty(Ty::TensorMap(_)) => {
                return self.not_formattable(arg, t, "a tensor map is read by `tma_load_2d` only")
            }
            T::Ty(Ty::Closure(_)) | T::Closure(_) => {
                return self.not_formattable(arg, t, "format what it returns")
            }
        };
        let default_spec = format::Spec {
            format: format::Trait::Debug,
            ..format::Spec::default()
        };
        let spec = spec.unwrap_or(&default_spec);
        let checked = if printf {
            format::printf_conversion(spec, scalar).map(|_| ())
        } else {
            format::check_trait(spec.format, scalar)
        };
        if let Err(message) = checked {
            self.cx.error(self.loc(arg), message);
        }
    }

    fn not_formattable(&mut self, arg: ExprId, t: T, hint: &str) {
        let found = self.describe(t);
        self.cx.error(
            self.loc(arg),
            format!("kernels format numbers and `bool`s only, found {found}: {hint}"),
        );
    }
}
