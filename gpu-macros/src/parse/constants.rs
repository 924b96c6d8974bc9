//! Compile-time constants: array lengths and const generic arguments, evaluated while
//! parsing.

use super::{strip_parens, Parser};
use crate::types::Len;

impl Parser<'_> {
    /// Evaluates a constant expression: integer literals, `const` items and arithmetic on them.
    pub(super) fn const_value(&mut self, expr: &syn::Expr) -> Option<u128> {
        let value = self.try_const_value(expr);
        if value.is_none() {
            self.cx.error_spanned_by(
                expr,
                "expected a constant: an integer literal, a `const` item, or arithmetic on them",
            );
        }
        value
    }

    fn try_const_value(&self, expr: &syn::Expr) -> Option<u128> {
        match strip_parens(expr) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => int.base10_parse().ok(),
            syn::Expr::Path(path) => {
                let local = self.lookup(&path.path.get_ident()?.to_string())?;
                self.consts.get(&local).copied()
            }
            syn::Expr::Cast(cast) => self.try_const_value(&cast.expr),
            syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => self.try_const_value(inner),
                _ => None,
            },
            syn::Expr::Binary(binary) => {
                let l = self.try_const_value(&binary.left)?;
                let r = self.try_const_value(&binary.right)?;
                match binary.op {
                    syn::BinOp::Add(_) => l.checked_add(r),
                    syn::BinOp::Sub(_) => l.checked_sub(r),
                    syn::BinOp::Mul(_) => l.checked_mul(r),
                    syn::BinOp::Div(_) => l.checked_div(r),
                    syn::BinOp::Rem(_) => l.checked_rem(r),
                    syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                    syn::BinOp::Shr(_) => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// An array length or a const generic argument: a constant, or a const parameter.
    pub(super) fn length(&mut self, expr: &syn::Expr) -> Option<Len> {
        if let syn::Expr::Path(path) = strip_parens(expr) {
            if let Some(name) = path
                .path
                .get_ident()
                .and_then(|i| self.generic_const(&i.to_string()))
            {
                return Some(Len::Param(name));
            }
        }
        let value = self.const_value(expr)?;
        match u64::try_from(value) {
            Ok(len) if len > 0 => Some(Len::Known(len)),
            _ => {
                self.cx
                    .error_spanned_by(expr, "the length must be between 1 and u64::MAX");
                None
            }
        }
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
