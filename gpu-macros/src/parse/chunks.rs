//! `for c in x.chunks_exact(n)` (or `chunks`, `windows`, `chunks_mut`, `chunks_exact_mut`;
//! `.enumerate()` after any; `x` a slice or a part of one, `x[a..b]`), rewritten in syn's terms
//! as a loop over the chunks' indices binding each chunk as a sub-slice,
//! `let c = &x[i * n..i * n + n];`, which the sub-slice machinery then takes as it takes one the
//! user bound. `chunks` clamps the last chunk to the length, as Rust does.
//!
//! Rust panics on a size of 0: a literal 0 is a compile error here, any other size is checked
//! by an `assert!` with Rust's message, at the user's call.

use super::adapters::sub_slice;
use super::{strip_parens, Parser};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// Which walk over a slice's parts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parts {
    /// `chunks`: the last one may be shorter.
    Chunks,
    /// `chunks_exact`: a shorter remainder is left out.
    Exact,
    /// `windows`: every run of `n` consecutive elements.
    Windows,
}

/// A loop's iterator that walks parts of a slice.
struct PartWalk<'e> {
    call: &'e syn::ExprMethodCall,
    parts: Parts,
    mutable: bool,
    enumerate: bool,
}

fn part_walk(expr: &syn::Expr) -> Option<PartWalk<'_>> {
    let (inner, enumerate) = match strip_parens(expr) {
        syn::Expr::MethodCall(call) if call.method == "enumerate" && call.args.is_empty() => {
            (strip_parens(&call.receiver), true)
        }
        other => (other, false),
    };
    let syn::Expr::MethodCall(call) = inner else {
        return None;
    };
    let (parts, mutable) = match call.method.to_string().as_str() {
        "chunks" => (Parts::Chunks, false),
        "chunks_mut" => (Parts::Chunks, true),
        "chunks_exact" => (Parts::Exact, false),
        "chunks_exact_mut" => (Parts::Exact, true),
        "windows" => (Parts::Windows, false),
        _ => return None,
    };
    Some(PartWalk {
        call,
        parts,
        mutable,
        enumerate,
    })
}

impl Parser<'_> {
    /// The loop `for_loop` becomes when it walks a slice's chunks or windows; `None` for any
    /// other loop, `Some(None)` when reported here.
    pub(super) fn chunks_loop(&mut self, for_loop: &syn::ExprForLoop) -> Option<Option<syn::Expr>> {
        let walk = part_walk(&for_loop.expr)?;
        Some(self.parts_loop(for_loop, &walk))
    }

    fn parts_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
        walk: &PartWalk<'_>,
    ) -> Option<syn::Expr> {
        const USAGE: &str = "a walk over chunks binds a name to each chunk (with `.enumerate()`, \
                             `(i, chunk)`)";
        let call = walk.call;
        let method = &call.method;
        if call.args.len() != 1 {
            self.cx.error_spanned_by(
                call,
                format!("`{method}` takes the size of a part, one argument"),
            );
            return None;
        }
        let size = &call.args[0];
        let (index_pat, chunk_pat) = self.enumerated(&for_loop.pat, walk.enumerate, USAGE)?;
        let n = self.fresh_names();
        let (part_name, len, size_name, start, end, count) = (
            format_ident!("__gpu_part{n}"),
            format_ident!("__gpu_len{n}"),
            format_ident!("__gpu_size{n}"),
            format_ident!("__gpu_start{n}"),
            format_ident!("__gpu_end{n}"),
            format_ident!("__gpu_i{n}"),
        );
        let borrow = if walk.mutable {
            quote!(&mut)
        } else {
            quote!(&)
        };
        let receiver = strip_parens(&call.receiver);
        // A part is bound first, as a loop over one is.
        let (base, part) = match receiver {
            syn::Expr::Path(_) => (quote!(#receiver), None),
            other => match sub_slice(other) {
                Some(index) => (
                    quote!(#part_name),
                    Some(quote!(let #part_name = #borrow #index;)),
                ),
                None => {
                    self.cx.error_spanned_by(
                        receiver,
                        format!(
                            "`{method}` walks a slice or shared memory by its name, or a part of \
                             one (`x[a..b].{method}(n)`): bind the value with `let` first"
                        ),
                    );
                    return None;
                }
            },
        };
        // Rust's own check, at the user's call; a literal needs none, or is wrong as written.
        let word = if walk.parts == Parts::Windows {
            "window"
        } else {
            "chunk"
        };
        let message = format!("{word} size must be non-zero");
        let check = match strip_parens(size) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(lit),
                ..
            }) => {
                if lit.base10_parse::<u128>().ok() == Some(0) {
                    self.cx.error_spanned_by(
                        size,
                        format!("`{method}(0)`: the {message}, and Rust panics on 0"),
                    );
                    return None;
                }
                None
            }
            _ => Some(quote_spanned!(call.span()=> assert!(#size_name != 0, #message);)),
        };
        let bounds = match walk.parts {
            Parts::Chunks => quote! {
                let #start: usize = #count * #size_name;
                let #end: usize = if #len - #start < #size_name {
                    #len
                } else {
                    #start + #size_name
                };
            },
            Parts::Exact => quote! {
                let #start: usize = #count * #size_name;
                let #end: usize = #start + #size_name;
            },
            Parts::Windows => quote! {
                let #start: usize = #count;
                let #end: usize = #start + #size_name;
            },
        };
        let trips = match walk.parts {
            Parts::Chunks => quote! {
                #len / #size_name + if #len % #size_name == 0 { 0 } else { 1 }
            },
            Parts::Exact => quote!(#len / #size_name),
            Parts::Windows => quote! {
                if #len < #size_name { 0 } else { #len - #size_name + 1 }
            },
        };
        let trips_name = format_ident!("__gpu_trips{n}");
        // A chunk bound to `_` is not made: only the number of trips is left to compute.
        let chunk = match chunk_pat {
            syn::Pat::Wild(_) => None,
            pat => Some(quote!(#bounds let #pat = #borrow #base[#start..#end];)),
        };
        let index = index_pat.map(|pat| quote!(let #pat = #count;));
        let attrs = &for_loop.attrs;
        let label = &for_loop.label;
        let stmts = &for_loop.body.stmts;
        Some(syn::parse_quote! {{
            #part
            let #size_name: usize = #size;
            #check
            let #len: usize = #base.len();
            let #trips_name: usize = #trips;
            #(#attrs)* #label for #count in 0..#trips_name {
                #chunk
                #index
                #(#stmts)*
            }
        }})
    }
}
