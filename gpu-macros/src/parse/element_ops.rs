//! Statements on the elements of a named slice, shared array or array: `x.swap(i, j)`,
//! `x.fill(v)`, `x.copy_from_slice(&y)`, `x.sort()` and `x.sort_by(|a, b| ..)` (a median
//! filter's window), and `mem::swap(&mut a, &mut b)` of two places.

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

    /// `x.sort()` / `x.sort_unstable()` (integers) and `x.sort_by(|a, b| a.partial_cmp(b)
    /// .unwrap())` / `.total_cmp(b)` / `.cmp(b)` (or `b` before `a`, descending; `_unstable_by`
    /// alike) on a named array, slice or shared array: an insertion sort, stable as `sort` is
    /// (for the small windows kernels sort, it does fewer steps than a network). With
    /// `partial_cmp(..).unwrap()`, a NaN compared panics with Rust's message; `total_cmp` orders
    /// by the bits, as Rust does.
    pub(super) fn sort_stmt(&mut self, call: &syn::ExprMethodCall) -> Option<StmtKind> {
        const USAGE: &str = "kernels sort with `x.sort()` (integers) or `x.sort_by(|a, b| \
                             a.partial_cmp(b).unwrap())` (also `total_cmp`, `cmp`, and `b` before \
                             `a` for descending): write the comparison loop for another order";
        let receiver = strip_parens(&call.receiver);
        if !matches!(receiver, syn::Expr::Path(_)) {
            self.cx.error_spanned_by(
                receiver,
                "`sort` sorts a named array, slice or shared array: bind a part with `let` first",
            );
            return None;
        }
        // How two neighbours `a` (first) and `b` compare: what runs first (the NaN check of
        // `partial_cmp(..).unwrap()`), and whether they must trade places.
        let (a, b) = (
            quote::format_ident!("__gpu_a"),
            quote::format_ident!("__gpu_b"),
        );
        let (method, descending) = match call.args.first() {
            None => ("cmp".to_string(), false),
            Some(syn::Expr::Closure(closure)) if closure.inputs.len() == 2 => {
                let Some(found) = comparator(closure) else {
                    self.cx.error_spanned_by(closure, USAGE);
                    return None;
                };
                found
            }
            Some(other) => {
                self.cx.error_spanned_by(other, USAGE);
                return None;
            }
        };
        let (first, second) = if descending { (&b, &a) } else { (&a, &b) };
        // `total_cmp`'s order, as Rust defines it: the bits compared as unsigned numbers once a
        // negative's are flipped and a positive's sign bit set (its width read off the bits,
        // `f32` or `f64`).
        let key = |x: &syn::Ident| {
            quote::quote!({
                let bits = #x.to_bits();
                let sign = !((bits | !bits) >> 1);
                if bits & sign != 0 { !bits } else { bits | sign }
            })
        };
        let (check, out_of_order) = match method.as_str() {
            "partial_cmp" => (
                quote::quote! {
                    if #a != #a || #b != #b {
                        panic!("called `Option::unwrap()` on a `None` value");
                    }
                },
                quote::quote!(#second < #first),
            ),
            "total_cmp" => {
                let (k_first, k_second) = (key(first), key(second));
                (quote::quote!(), quote::quote!(#k_second < #k_first))
            }
            _ => (quote::quote!(), quote::quote!(#second < #first)),
        };
        let at = call.method.span();
        let block: syn::Block = syn::parse_quote_spanned! {at=> {
            for __gpu_i in 1..#receiver.len() {
                let mut __gpu_j = __gpu_i;
                while __gpu_j > 0 {
                    let #a = #receiver[__gpu_j - 1];
                    let #b = #receiver[__gpu_j];
                    #check
                    if !(#out_of_order) {
                        break;
                    }
                    #receiver[__gpu_j - 1] = #b;
                    #receiver[__gpu_j] = #a;
                    __gpu_j -= 1;
                }
            }
        }};
        Some(StmtKind::Block(self.block(&block)))
    }
}

/// The comparison a `sort_by` closure makes: `|a, b| a.partial_cmp(b).unwrap()` (the
/// method, `b` before `a` meaning descending), `a.total_cmp(b)` or `a.cmp(b)`, the
/// parameters plain names or `&name`s, the arguments read with or without `&` / `*`.
fn comparator(closure: &syn::ExprClosure) -> Option<(String, bool)> {
    let name = |pat: &syn::Pat| -> Option<syn::Ident> {
        let mut pat = pat;
        loop {
            match pat {
                syn::Pat::Type(typed) => pat = &typed.pat,
                syn::Pat::Reference(reference) => pat = &reference.pat,
                syn::Pat::Ident(ident) if ident.subpat.is_none() => {
                    return Some(ident.ident.clone())
                }
                _ => return None,
            }
        }
    };
    let (first, second) = (name(&closure.inputs[0])?, name(&closure.inputs[1])?);
    let plain = |expr: &syn::Expr| -> Option<syn::Ident> {
        let mut expr = strip_parens(expr);
        loop {
            match expr {
                syn::Expr::Reference(reference) => expr = strip_parens(&reference.expr),
                syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                    expr = strip_parens(&unary.expr)
                }
                syn::Expr::Path(path) => return path.path.get_ident().cloned(),
                _ => return None,
            }
        }
    };
    let mut body = strip_parens(&closure.body);
    if let syn::Expr::Block(block) = body {
        match block.block.stmts.as_slice() {
            [syn::Stmt::Expr(inner, None)] => body = strip_parens(inner),
            _ => return None,
        }
    }
    // `.unwrap()` after `partial_cmp`, nothing after the others.
    let call = match body {
        syn::Expr::MethodCall(unwrap) if unwrap.method == "unwrap" && unwrap.args.is_empty() => {
            match strip_parens(&unwrap.receiver) {
                syn::Expr::MethodCall(call) if call.method == "partial_cmp" => call,
                _ => return None,
            }
        }
        syn::Expr::MethodCall(call) if call.method == "total_cmp" || call.method == "cmp" => call,
        _ => return None,
    };
    if call.args.len() != 1 {
        return None;
    }
    let (left, right) = (plain(&call.receiver)?, plain(&call.args[0])?);
    let descending = if left == first && right == second {
        false
    } else if left == second && right == first {
        true
    } else {
        return None;
    };
    Some((call.method.to_string(), descending))
}
