//! Compile-time constants: array lengths and const generic arguments, evaluated while
//! parsing.

use super::expressions::is_constant_name;
use super::{strip_parens, Parser};
use crate::types::{Len, LenExpr, LenOp, Scalar};

const NOT_CONSTANT: &str = "expected a constant: an integer literal, a `const` (in the function \
                            or outside it, `TILE` or `consts::TILE`), a const parameter, or `+ - * / %` \
                            on them (in braces where a generic argument: `{ BLOCK * BLOCK }`)";

impl Parser<'_> {
    /// Evaluates a constant expression: integer literals, `const` items and arithmetic on them.
    /// `in_length`: the value is a length, so the outer constants in it are `usize`.
    pub(super) fn const_value(&mut self, expr: &syn::Expr, in_length: bool) -> Option<LenExpr> {
        let value = self.try_const_value(expr, in_length);
        if value.is_none() {
            let flag = match strip_parens(expr) {
                syn::Expr::Path(path) => path
                    .path
                    .get_ident()
                    .and_then(|ident| self.generic_const_typed(&ident.to_string()))
                    .filter(|(_, ty)| *ty == Scalar::Bool),
                _ => None,
            };
            match flag {
                Some((name, _)) => self.cx.error_spanned_by(
                    expr,
                    format!(
                        "`{name}` is a `const {name}: bool`, not a number: lengths and `usize` \
                         const arguments are numbers"
                    ),
                ),
                None => self.cx.error_spanned_by(expr, NOT_CONSTANT),
            }
        }
        value
    }

    /// The value of a constant expression, folded where every part is a number.
    fn try_const_value(&mut self, expr: &syn::Expr, in_length: bool) -> Option<LenExpr> {
        match strip_parens(expr) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => int.base10_parse::<u64>().ok().map(LenExpr::Known),
            syn::Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    let name = ident.to_string();
                    if let Some(local) = self.lookup(&name) {
                        return self.consts.get(&local).copied();
                    }
                    // A `const B: bool` is no number.
                    if let Some((param, ty)) = self.generic_const_typed(&name) {
                        return (ty == Scalar::Usize).then_some(LenExpr::Param(param));
                    }
                }
                let last = path.path.segments.last()?.ident.to_string();
                if !is_constant_name(&last) {
                    return None;
                }
                self.outer_const(&path.path, in_length, None)
                    .map(LenExpr::Outer)
            }
            // `TILE as usize`: converted by Rust's `as`, so `TILE` may have any integer type.
            syn::Expr::Cast(cast) if self.is_outer(&cast.expr) => {
                let path = super::outer::outer_path(&cast.expr)?;
                let to = self.scalar_type(&cast.ty)?;
                self.outer_const(path, false, Some(to)).map(LenExpr::Outer)
            }
            syn::Expr::Cast(cast) => self.try_const_value(&cast.expr, in_length),
            syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => self.try_const_value(inner, in_length),
                _ => None,
            },
            syn::Expr::Binary(binary) => {
                let l = self.try_const_value(&binary.left, in_length)?;
                let r = self.try_const_value(&binary.right, in_length)?;
                if let (LenExpr::Known(l), LenExpr::Known(r)) = (l, r) {
                    return match binary.op {
                        syn::BinOp::Add(_) => l.checked_add(r),
                        syn::BinOp::Sub(_) => l.checked_sub(r),
                        syn::BinOp::Mul(_) => l.checked_mul(r),
                        syn::BinOp::Div(_) => l.checked_div(r),
                        syn::BinOp::Rem(_) => l.checked_rem(r),
                        syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                        syn::BinOp::Shr(_) => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                        _ => None,
                    }
                    .map(LenExpr::Known);
                }
                let op = match binary.op {
                    syn::BinOp::Add(_) => LenOp::Add,
                    syn::BinOp::Sub(_) => LenOp::Sub,
                    syn::BinOp::Mul(_) => LenOp::Mul,
                    syn::BinOp::Div(_) => LenOp::Div,
                    syn::BinOp::Rem(_) => LenOp::Rem,
                    _ => return None,
                };
                // Interned like the IR's names: lengths are `Copy` and live for the compilation.
                let leak = |e: LenExpr| -> &'static LenExpr { Box::leak(Box::new(e)) };
                Some(LenExpr::Binary(op, leak(l), leak(r)))
            }
            _ => None,
        }
    }

    /// An array length or a const generic argument: a constant, a const parameter, or
    /// arithmetic on them and constants from outside the function.
    pub(super) fn length(&mut self, expr: &syn::Expr) -> Option<Len> {
        match self.const_value(expr, true)? {
            LenExpr::Known(len) if len > 0 => Some(Len::Known(len)),
            LenExpr::Known(_) => {
                self.cx
                    .error_spanned_by(expr, "the length must be between 1 and u64::MAX");
                None
            }
            LenExpr::Param(name) => Some(Len::Param(name)),
            other => Some(Len::Expr(Box::leak(Box::new(other)))),
        }
    }

    /// A device function's const argument: as [`Self::generic_length`], with the reason a zero
    /// is refused (the callee may size an array with it).
    pub(super) fn device_const_arg(&mut self, arg: &syn::GenericArgument) -> Option<Len> {
        if let syn::GenericArgument::Const(expr) = arg {
            if let Some(LenExpr::Known(0)) = self.const_value(expr, true) {
                self.cx.error_spanned_by(
                    expr,
                    "a device function's const argument must be at least 1: its const \
                     parameters may size arrays, which cannot be empty; pass the value as an \
                     ordinary argument, or encode it from 1",
                );
                return None;
            }
        }
        self.generic_length(arg)
    }

    /// A const generic argument: `256`, `N`, or `{ TILE * 2 }`.
    pub(super) fn generic_length(&mut self, arg: &syn::GenericArgument) -> Option<Len> {
        match arg {
            syn::GenericArgument::Const(expr) => self.length(expr),
            // `N` alone parses as a type.
            syn::GenericArgument::Type(syn::Type::Path(path)) if path.qself.is_none() => {
                let expr = syn::Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: path.path.clone(),
                });
                self.length(&expr)
            }
            other => {
                self.cx
                    .error_spanned_by(other, "expected a constant length");
                None
            }
        }
    }
}
