//! Statements on the elements of a named slice, shared array or array: `x.swap(i, j)`,
//! `x.fill(v)`, `x.copy_from_slice(&y)`, and `mem::swap(&mut a, &mut b)` of two places.

use super::{strip_parens, Parser};
use crate::ir::*;

impl Parser<'_> {
    /// `x.swap(i, j)` on a slice, shared memory or an array: the indices evaluated once, then
    /// the two elements exchanged through a temporary, each access bounds-checked as indexing
    /// is (and seen by the race checker as the reads and writes they are).
    pub(super) fn swap_stmt(&mut self, call: &syn::ExprMethodCall) -> Option<StmtKind> {
        let receiver = &*call.receiver;
        if !matches!(super::strip_parens(receiver), syn::Expr::Path(_)) {
            self.cx.error_spanned_by(
                receiver,
                "`swap` exchanges two elements of a named slice, shared array or array: bind the                  value first (`let s = &mut x[a..b];`), then `s.swap(i, j)`",
            );
            return None;
        }
        let (i, j) = (&call.args[0], &call.args[1]);
        let block: syn::Block = syn::parse_quote_spanned! {call.method.span()=> {
            let __gpu_swap_i: usize = #i;
            let __gpu_swap_j: usize = #j;
            let __gpu_swap_t = #receiver[__gpu_swap_i];
            #receiver[__gpu_swap_i] = #receiver[__gpu_swap_j];
            #receiver[__gpu_swap_j] = __gpu_swap_t;
        }};
        Some(StmtKind::Block(self.block(&block)))
    }

    /// `x.fill(v)` and `x.copy_from_slice(&y)` on a named slice, shared array or array, or a
    /// part of one (`x[..4].fill(0.0)`): a loop over its indices, `v` evaluated once; copying
    /// from a slice of another length panics with Rust's message.
    pub(super) fn fill_stmt(&mut self, call: &syn::ExprMethodCall) -> Option<StmtKind> {
        let at = call.method.span();
        let mut stmts: Vec<syn::Stmt> = Vec::new();
        let target: syn::Expr = match strip_parens(&call.receiver) {
            path @ syn::Expr::Path(_) => path.clone(),
            syn::Expr::Index(index)
                if matches!(strip_parens(&index.index), syn::Expr::Range(_)) =>
            {
                let name = quote::format_ident!("__gpu_part{}", self.fresh_names());
                stmts.push(syn::parse_quote_spanned!(at=> let #name = &mut #index;));
                syn::parse_quote!(#name)
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    format!(
                        "`{}` writes a named slice, shared array or array, or a part of one \
                         (`x[a..b]`): bind the value with `let` first",
                        call.method
                    ),
                );
                return None;
            }
        };
        let index = quote::format_ident!("__gpu_i{}", self.fresh_names());
        let arg = &call.args[0];
        if call.method == "fill" {
            let value = quote::format_ident!("__gpu_fill{}", self.fresh_names());
            stmts.push(syn::parse_quote_spanned!(at=> let #value = #arg;));
            stmts.push(syn::parse_quote_spanned!(at=>
                for #index in 0..#target.len() { #target[#index] = #value; }
            ));
        } else {
            let source: syn::Expr = match strip_parens(arg) {
                syn::Expr::Reference(reference) => match strip_parens(&reference.expr) {
                    path @ syn::Expr::Path(_) => path.clone(),
                    part => {
                        let name = quote::format_ident!("__gpu_source{}", self.fresh_names());
                        stmts.push(syn::parse_quote_spanned!(at=> let #name = &#part;));
                        syn::parse_quote!(#name)
                    }
                },
                path @ syn::Expr::Path(_) => path.clone(),
                other => {
                    self.cx.error_spanned_by(
                        other,
                        "`copy_from_slice` copies from a named slice or array, or a part of one \
                         (`&y[a..b]`)",
                    );
                    return None;
                }
            };
            stmts.push(syn::parse_quote_spanned!(at=>
                if #source.len() != #target.len() {
                    panic!(
                        "source slice length ({}) does not match destination slice length ({})",
                        #source.len(),
                        #target.len()
                    );
                }
            ));
            stmts.push(syn::parse_quote_spanned!(at=>
                for #index in 0..#target.len() { #target[#index] = #source[#index]; }
            ));
        }
        let block: syn::Block = syn::parse_quote!({ #(#stmts)* });
        Some(StmtKind::Block(self.block(&block)))
    }

    /// `core::mem::swap(&mut a, &mut b)` (or `std::`, `mem::`): the two places exchanged
    /// through a temporary.
    pub(super) fn mem_swap(&mut self, call: &syn::ExprCall) -> Option<StmtKind> {
        let mut places = Vec::new();
        for arg in &call.args {
            match strip_parens(arg) {
                syn::Expr::Reference(reference) if reference.mutability.is_some() => {
                    places.push(&*reference.expr)
                }
                other => {
                    self.cx.error_spanned_by(
                        other,
                        "`mem::swap` takes two places borrowed mutably: `core::mem::swap(&mut a, &mut b);`",
                    );
                    return None;
                }
            }
        }
        let [a, b] = places[..] else {
            self.cx.error_spanned_by(
                call,
                "`mem::swap` takes two arguments: `core::mem::swap(&mut a, &mut b);`",
            );
            return None;
        };
        let block: syn::Block = syn::parse_quote_spanned! {syn::spanned::Spanned::span(&call.func)=> {
            let __gpu_swap_t = #a;
            #a = #b;
            #b = __gpu_swap_t;
        }};
        Some(StmtKind::Block(self.block(&block)))
    }
}
