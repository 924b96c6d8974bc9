//! Constants defined outside the function (`TILE`, `consts::TILE`, `crate::TILE`): the macro
//! sees only their paths, so it records each one and lets rustc supply the value and check the
//! type (see `emit/outer.rs`).

use super::Parser;
use crate::ir::{ExprId, ExprKind, FnKind, Function, LaunchBounds, LaunchValue, Loc, OuterUse};
use crate::types::{OuterConst, Scalar, Ty};
use quote::ToTokens;

/// The path of `expr` if it names a constant from outside the function.
pub(super) fn outer_path(expr: &syn::Expr) -> Option<&syn::Path> {
    match super::strip_parens(expr) {
        syn::Expr::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?.ident.to_string();
            super::expressions::is_constant_name(&last).then_some(&path.path)
        }
        _ => None,
    }
}

impl Parser<'_> {
    /// The outer constant named by `path`, recorded once per function; `in_length` where it
    /// stands in a length (a `usize`), `cast` for `PATH as T`.
    pub(super) fn outer_const(
        &mut self,
        path: &syn::Path,
        in_length: bool,
        cast: Option<Scalar>,
    ) -> Option<OuterConst> {
        let written = path.to_token_stream();
        let key = written.to_string();
        if self.kind == FnKind::Device
            && path
                .segments
                .first()
                .is_some_and(|segment| segment.ident == "super")
        {
            self.cx.error_spanned_by(
                path,
                "a device function names outer constants from its own module or from the crate \
                 root: write `crate::path::NAME` instead of `super::NAME`",
            );
            return None;
        }
        if let Some(generic) = path
            .segments
            .first()
            .and_then(|first| self.generic_type(&first.ident.to_string()))
        {
            self.cx.error_spanned_by(
                path,
                format!(
                    "constants of a type parameter (`{}::MAX`) are not supported: pass the value \
                     as a parameter",
                    generic.name
                ),
            );
            return None;
        }
        if path.segments.iter().any(|s| !s.arguments.is_none()) {
            self.cx.error_spanned_by(
                path,
                "a constant's path takes no generic arguments here: name the constant itself",
            );
            return None;
        }
        // A method names its struct's length constants as the struct does (`[0; MAX]` in a
        // derived `default()`): the kernel reads them through the struct.
        if let Some(Ty::Struct(def)) = self.self_ty {
            let name = key.replace(' ', "");
            if let Some(constant) = def
                .0
                .length_constants()
                .into_iter()
                .find(|c| c.name == name)
            {
                return Some(constant);
            }
        }
        let fixed = in_length.then_some(Scalar::Usize);
        let index = match self
            .outer
            .iter()
            .position(|outer| outer.path.to_string() == key && outer.cast == cast)
        {
            Some(index) => {
                self.outer[index].fixed = self.outer[index].fixed.or(fixed);
                index
            }
            None => {
                self.outer.push(OuterUse {
                    path: written,
                    span: Loc::of(path),
                    fixed,
                    cast,
                    table: false,
                });
                self.outer.len() - 1
            }
        };
        let name: &'static str = Box::leak(key.replace(' ', "").into_boxed_str());
        Some(OuterConst {
            function: self.function,
            index: index as u32,
            name,
        })
    }
}

impl Parser<'_> {
    /// Notes that `base`, indexed or asked its length, is an outer constant's table if it
    /// names one.
    pub(super) fn note_table(&mut self, base: ExprId) {
        if let ExprKind::Outer(constant) = self.exprs[base.0 as usize].kind {
            self.outer[constant.index as usize].table = true;
        }
    }
}

/// Gives the kernel its launch bounds, recording constants named there among its outer
/// constants (converted to `u32` by Rust's `as`, as CUDA takes them).
pub fn set_launch_bounds(kernel: &mut Function, bounds: Option<LaunchBounds>) {
    let mut resolve = |value: LaunchValue| match value {
        LaunchValue::Named(path) => {
            kernel.outer.push(OuterUse {
                path: path.to_token_stream(),
                span: Loc::of(path),
                fixed: None,
                cast: Some(Scalar::U32),
                table: false,
            });
            LaunchValue::Outer(OuterConst {
                function: Box::leak(kernel.name.clone().into_boxed_str()),
                index: kernel.outer.len() as u32 - 1,
                name: Box::leak(path.to_token_stream().to_string().into_boxed_str()),
            })
        }
        other => other,
    };
    kernel.launch_bounds = bounds.map(|bounds| LaunchBounds {
        max_threads: resolve(bounds.max_threads),
        min_blocks: bounds.min_blocks.map(&mut resolve),
    });
}
