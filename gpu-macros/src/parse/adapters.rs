//! `for` loops over iterator adapters, as Rust writes them, rewritten in syn's terms into the
//! loops `loops.rs` parses:
//!
//! - `for v in x.iter_mut()` (or `&mut x`, `.enumerate()`): a loop over the indices where
//!   `*v` is `x[i]`, read and written in place;
//! - `for (a, b) in x.iter().zip(y.iter())` (or `.zip(y)`, `.zip(&y)`, then `.enumerate()`):
//!   a loop over the shorter length reading one element of each;
//! - `for v in x[a..b].iter()` (or `&x[a..b]`, `&mut x[a..b]`, any of the above on it): the
//!   part bound with `let` first, then the loop over it.
//!
//! The rewritten loop keeps the user's label, attributes and spans, so every later message
//! points at what they wrote.

use super::{strip_parens, Parser};
use quote::format_ident;
use syn::visit_mut::VisitMut;

/// What a loop's iterator is, once adapters are looked through.
enum Adapter<'e> {
    /// `x.iter_mut()` / `&mut x`, enumerated or not.
    IterMut {
        base: &'e syn::Expr,
        enumerate: bool,
    },
    /// `x.iter().zip(y..)` (either side may be `iter_mut`; `.zip(z..)` again for more
    /// sides, each a level of the pattern's nesting), enumerated or not.
    Zip {
        sides: Vec<(&'e syn::Expr, bool)>,
        enumerate: bool,
    },
}

/// The slice or array under `x.iter()`, `x.iter_mut()`, `x`, `&x`, `&mut x`.
fn element_base(expr: &syn::Expr) -> Option<(&syn::Expr, bool)> {
    match strip_parens(expr) {
        syn::Expr::MethodCall(call) if call.args.is_empty() && call.method == "iter" => {
            Some((&call.receiver, false))
        }
        syn::Expr::MethodCall(call) if call.args.is_empty() && call.method == "iter_mut" => {
            Some((&call.receiver, true))
        }
        syn::Expr::Reference(reference) => Some((&reference.expr, reference.mutability.is_some())),
        other => Some((other, false)),
    }
}

fn adapter(expr: &syn::Expr) -> Option<Adapter<'_>> {
    let (inner, enumerate) = match strip_parens(expr) {
        syn::Expr::MethodCall(call) if call.method == "enumerate" && call.args.is_empty() => {
            (strip_parens(&call.receiver), true)
        }
        other => (other, false),
    };
    match inner {
        syn::Expr::MethodCall(call) if call.method == "zip" && call.args.len() == 1 => {
            // `a.iter().zip(b).zip(c)`: the sides in order, the innermost zip's first.
            let mut sides = vec![element_base(&call.args[0])?];
            let mut receiver = strip_parens(&call.receiver);
            while let syn::Expr::MethodCall(inner) = receiver {
                if inner.method != "zip" || inner.args.len() != 1 {
                    break;
                }
                sides.push(element_base(&inner.args[0])?);
                receiver = strip_parens(&inner.receiver);
            }
            sides.push(element_base(receiver)?);
            sides.reverse();
            Some(Adapter::Zip { sides, enumerate })
        }
        syn::Expr::MethodCall(call) if call.method == "iter_mut" && call.args.is_empty() => {
            Some(Adapter::IterMut {
                base: &call.receiver,
                enumerate,
            })
        }
        syn::Expr::Reference(reference) if reference.mutability.is_some() && !enumerate => {
            Some(Adapter::IterMut {
                base: &reference.expr,
                enumerate: false,
            })
        }
        _ => None,
    }
}

/// `x[a..b]`: a part of a slice, with its base.
pub(super) fn sub_slice(expr: &syn::Expr) -> Option<&syn::ExprIndex> {
    match strip_parens(expr) {
        syn::Expr::Index(index) if matches!(strip_parens(&index.index), syn::Expr::Range(_)) => {
            Some(index)
        }
        _ => None,
    }
}

/// What a loop's iterator walks when it is not a name: a part of a slice (`x[a..b]`), bound by
/// reference, or an array reached through a field or an element (`cell.neighbours`), copied.
enum Part {
    Sub(syn::ExprIndex),
    Value(syn::Expr),
}

/// Whether `expr` names a place without effects: a name, or fields and elements of one at
/// indices that call nothing, so reading it again reads the same place.
pub(super) fn is_place(expr: &syn::Expr) -> bool {
    fn calm(expr: &syn::Expr) -> bool {
        match strip_parens(expr) {
            syn::Expr::Path(_) | syn::Expr::Lit(_) => true,
            syn::Expr::Field(field) => calm(&field.base),
            syn::Expr::Index(index) => calm(&index.expr) && calm(&index.index),
            syn::Expr::Binary(binary) => {
                use syn::BinOp::*;
                matches!(
                    binary.op,
                    Add(_)
                        | Sub(_)
                        | Mul(_)
                        | Div(_)
                        | Rem(_)
                        | Shl(_)
                        | Shr(_)
                        | BitAnd(_)
                        | BitOr(_)
                        | BitXor(_)
                ) && calm(&binary.left)
                    && calm(&binary.right)
            }
            syn::Expr::Cast(cast) => calm(&cast.expr),
            _ => false,
        }
    }
    match strip_parens(expr) {
        syn::Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
        syn::Expr::Field(field) => is_place(&field.base),
        syn::Expr::Index(index) => is_place(&index.expr) && calm(&index.index),
        _ => false,
    }
}

/// Replaces `*name` with `with` (and reports whether `name` is used otherwise).
struct Deref<'a> {
    name: &'a syn::Ident,
    with: syn::Expr,
    other_use: Option<proc_macro2::Span>,
}

impl VisitMut for Deref<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::Unary(unary) = expr {
            if matches!(unary.op, syn::UnOp::Deref(_)) {
                if let syn::Expr::Path(path) = strip_parens(&unary.expr) {
                    if path.path.is_ident(self.name) {
                        *expr = self.with.clone();
                        return;
                    }
                }
            }
        }
        if let syn::Expr::Path(path) = expr {
            if path.path.is_ident(self.name) && self.other_use.is_none() {
                self.other_use = Some(syn::spanned::Spanned::span(&path.path));
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The name a pattern binds (`v`, `&v`, `mut v`), `None` for `_`; `Err` for anything else.
fn bound_name(pat: &syn::Pat) -> Result<Option<&syn::Ident>, ()> {
    match pat {
        syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
            Ok(Some(&ident.ident))
        }
        syn::Pat::Reference(reference) => bound_name(&reference.pat),
        syn::Pat::Wild(_) => Ok(None),
        _ => Err(()),
    }
}

impl Parser<'_> {
    /// The loop `for_loop` becomes, when its iterator is one of the adapters above.
    /// `None` for any other loop; `Some(None)` when reported here.
    pub(super) fn rewritten_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
    ) -> Option<Option<syn::Expr>> {
        if let Some(rewritten) = self.chunks_loop(for_loop) {
            return Some(rewritten);
        }
        let iterated = strip_parens(&for_loop.expr);
        // A part of a slice: bound first, then iterated by name.
        if let Some((part, rebuilt)) = self.part_of(iterated) {
            let mut inner = for_loop.clone();
            inner.expr = Box::new(rebuilt);
            let (part, mutable) = part;
            // The binding and the name stand where the part is written, so the CUDA's `#line`s
            // and any message point there.
            let span = match &part {
                Part::Sub(index) => syn::spanned::Spanned::span(index),
                Part::Value(value) => syn::spanned::Spanned::span(value),
            };
            let name = format_ident!("__gpu_part{}", self.fresh_names(), span = span);
            let binding: syn::Stmt = match part {
                Part::Sub(index) if mutable => {
                    syn::parse_quote_spanned!(span=> let #name = &mut #index;)
                }
                Part::Sub(index) => syn::parse_quote_spanned!(span=> let #name = &#index;),
                // Read only: the loop walks a copy, as the borrow forbids writes meanwhile.
                Part::Value(value) => syn::parse_quote_spanned!(span=> let #name = #value;),
            };
            let inner = Self::renamed_base(inner, &name);
            return Some(Some(syn::parse_quote!({ #binding #inner })));
        }
        Some(match adapter(iterated)? {
            Adapter::IterMut { base, enumerate } => self.iter_mut_loop(for_loop, base, enumerate),
            Adapter::Zip { sides, enumerate } => self.zip_loop(for_loop, &sides, enumerate),
        })
    }

    /// How many hidden names this function has made: each gets its own.
    pub(super) fn fresh_names(&mut self) -> usize {
        self.hidden += 1;
        self.hidden
    }

    /// `x[a..b]` under the loop's iterator (as `x[a..b].iter()`, `&x[a..b]`, ...): the part and
    /// whether it is borrowed mutably, and the iterator with a placeholder path in its place.
    fn part_of(&self, iterated: &syn::Expr) -> Option<((Part, bool), syn::Expr)> {
        let mut rebuilt = iterated.clone();
        let mut found = None;
        let placeholder: syn::Expr = syn::parse_quote!(__gpu_part);
        // Walks the receivers of `.iter()`, `.iter_mut()`, `.enumerate()`, `.zip(..)`'s left
        // side, the other adapters' and the references: a part found there is replaced by the
        // placeholder.
        fn walk(
            expr: &mut syn::Expr,
            found: &mut Option<(Part, bool)>,
            placeholder: &syn::Expr,
            mutable: bool,
        ) {
            match expr {
                syn::Expr::Paren(paren) => walk(&mut paren.expr, found, placeholder, mutable),
                syn::Expr::MethodCall(call)
                    if matches!(
                        call.method.to_string().as_str(),
                        "iter"
                            | "iter_mut"
                            | "into_iter"
                            | "enumerate"
                            | "zip"
                            | "rev"
                            | "step_by"
                            | "copied"
                            | "cloned"
                            | "skip"
                            | "take"
                    ) =>
                {
                    let mutable = mutable || call.method == "iter_mut";
                    walk(&mut call.receiver, found, placeholder, mutable)
                }
                syn::Expr::Reference(reference) => {
                    let mutable = mutable || reference.mutability.is_some();
                    if let Some(index) = sub_slice(&reference.expr) {
                        *found = Some((Part::Sub(index.clone()), mutable));
                        // `&x[a..b]` iterates the part itself.
                        *expr = placeholder.clone();
                    } else {
                        walk(&mut reference.expr, found, placeholder, mutable)
                    }
                }
                other => {
                    if let Some(index) = sub_slice(other) {
                        *found = Some((Part::Sub(index.clone()), mutable));
                        *other = placeholder.clone();
                    } else if !mutable && is_place(other) && !matches!(other, syn::Expr::Path(_)) {
                        // `cell.neighbours.iter()`, `rows[i].iter()`: an array that is not a
                        // name of its own.
                        *found = Some((Part::Value(other.clone()), false));
                        *other = placeholder.clone();
                    }
                }
            }
        }
        walk(&mut rebuilt, &mut found, &placeholder, false);
        // `&mut x[a..b]` as the whole iterator is `iter_mut` over the part.
        if let (Some((_, true)), syn::Expr::Path(_)) = (&found, &rebuilt) {
            rebuilt = syn::parse_quote!(#placeholder.iter_mut());
        }
        found.map(|part| (part, rebuilt))
    }

    /// `for_loop` with the placeholder `__gpu_part` in its iterator renamed `name`.
    fn renamed_base(mut for_loop: syn::ExprForLoop, name: &syn::Ident) -> syn::ExprForLoop {
        struct Rename<'a>(&'a syn::Ident);
        impl VisitMut for Rename<'_> {
            fn visit_path_mut(&mut self, path: &mut syn::Path) {
                if path.is_ident("__gpu_part") {
                    *path = syn::Path::from(self.0.clone());
                }
            }
        }
        Rename(name).visit_expr_mut(&mut for_loop.expr);
        for_loop
    }

    /// `for v in x.iter_mut() { .. *v .. }` as `for i in 0..x.len() { .. x[i] .. }`.
    fn iter_mut_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
        base: &syn::Expr,
        enumerate: bool,
    ) -> Option<syn::Expr> {
        const USAGE: &str = "`iter_mut` binds a name (with `.enumerate()`, `(i, name)`), used as \
                             `*name`";
        let (index_pat, element_pat) = self.enumerated(&for_loop.pat, enumerate, USAGE)?;
        let Ok(element) = bound_name(element_pat) else {
            self.cx.error_spanned_by(element_pat, USAGE);
            return None;
        };
        // A place read at each element again (`cell.weights[i]`) is the same place each time.
        if !matches!(strip_parens(base), syn::Expr::Path(_)) && !is_place(base) {
            self.cx.error_spanned_by(
                base,
                "`iter_mut` walks a slice, shared array or array by its name or a field of one \
                 (`x.iter_mut()`, `cell.weights.iter_mut()`): bind it with `let` first",
            );
            return None;
        }
        let index = format_ident!("__gpu_i{}", self.fresh_names());
        let mut body = for_loop.body.clone();
        if let Some(element) = element {
            let mut deref = Deref {
                name: element,
                with: syn::parse_quote!(#base[#index]),
                other_use: None,
            };
            deref.visit_block_mut(&mut body);
            if !self.only_dereferenced(&deref) {
                return None;
            }
        }
        let counter = match index_pat {
            Some(pat) => {
                let pat = pat.clone();
                Some(quote::quote!(let #pat = #index;))
            }
            None => None,
        };
        Some(self.index_loop(for_loop, &index, quote::quote!(#base.len()), counter, body))
    }

    /// `for (a, b) in x.iter().zip(y.iter()) { .. }` as a loop over the shorter length reading
    /// `a = x[i]` and `b = y[i]`, copies that `*a` and `*b` read; a side walked by `iter_mut`
    /// is its element in place, `*a` being `x[i]`. More sides nest the pattern as the zips
    /// nest: `for ((a, b), c) in x.iter().zip(y).zip(z)`.
    fn zip_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
        sides: &[(&syn::Expr, bool)],
        enumerate: bool,
    ) -> Option<syn::Expr> {
        const USAGE: &str = "`zip` binds a pair of names, `(a, b)` (`&a`, `_` too; with \
                             `.enumerate()`, `(i, (a, b))`; a zip of a zip, `((a, b), c)`)";
        let (index_pat, pair) = self.enumerated(&for_loop.pat, enumerate, USAGE)?;
        // The names, one a side: the pattern's pairs unnested from the outermost zip in.
        let mut names: Vec<Option<&syn::Ident>> = Vec::new();
        let mut pat = pair;
        for level in (1..sides.len()).rev() {
            let syn::Pat::Tuple(tuple) = pat else {
                self.cx.error_spanned_by(pat, USAGE);
                return None;
            };
            if tuple.elems.len() != 2 {
                self.cx.error_spanned_by(tuple, USAGE);
                return None;
            }
            let Ok(last) = bound_name(&tuple.elems[1]) else {
                self.cx.error_spanned_by(tuple, USAGE);
                return None;
            };
            names.push(last);
            pat = &tuple.elems[0];
            if level == 1 {
                let Ok(first) = bound_name(pat) else {
                    self.cx.error_spanned_by(tuple, USAGE);
                    return None;
                };
                names.push(first);
            }
        }
        names.reverse();
        // A part of a slice on any side is bound first.
        let mut parts = Vec::new();
        let mut bases: Vec<syn::Expr> = Vec::new();
        for &(base, mutable) in sides {
            match strip_parens(base) {
                syn::Expr::Path(_) => bases.push(base.clone()),
                other => match sub_slice(other) {
                    Some(index) => {
                        let name = format_ident!("__gpu_part{}", self.fresh_names());
                        parts.push(if mutable {
                            quote::quote!(let #name = &mut #index;)
                        } else {
                            quote::quote!(let #name = &#index;)
                        });
                        bases.push(syn::parse_quote!(#name));
                    }
                    None => {
                        self.cx.error_spanned_by(
                            base,
                            "`zip` walks slices, shared arrays or arrays by their names (or \
                             parts of them, `&x[a..b]`): bind the value with `let` first",
                        );
                        return None;
                    }
                },
            }
        }
        let index = format_ident!("__gpu_i{}", self.fresh_names());
        let mut body = for_loop.body.clone();
        let mut reads = Vec::new();
        for ((name, base), &(_, mutable)) in names.iter().zip(&bases).zip(sides) {
            let Some(name) = name else { continue };
            let with = if mutable {
                syn::parse_quote!(#base[#index])
            } else {
                syn::parse_quote!(#name)
            };
            let mut deref = Deref {
                name,
                with,
                other_use: None,
            };
            deref.visit_block_mut(&mut body);
            if !mutable {
                reads.push(quote::quote!(let #name = #base[#index];));
            } else if !self.only_dereferenced(&deref) {
                return None;
            }
        }
        if let Some(pat) = index_pat {
            let pat = pat.clone();
            reads.insert(0, quote::quote!(let #pat = #index;));
        }
        // The shortest side's length.
        let (first, rest) = bases.split_first()?;
        let mut len = quote::quote!(#first.len());
        for base in rest {
            len = quote::quote!(#len.min(#base.len()));
        }
        let looped = self.index_loop(for_loop, &index, len, Some(quote::quote!(#(#reads)*)), body);
        if parts.is_empty() {
            return Some(looped);
        }
        Some(syn::parse_quote!({ #(#parts)* #looped }))
    }

    /// Whether an `iter_mut` element was used only as `*name`; reports any other use.
    fn only_dereferenced(&self, deref: &Deref<'_>) -> bool {
        let Some(span) = deref.other_use else {
            return true;
        };
        let name = deref.name;
        self.cx.error_spanned_by(
            syn::Ident::new(&name.to_string(), span),
            format!(
                "in kernels the element of `iter_mut` is read and written as `*{name}` (it is the \
                 slice's element in place)"
            ),
        );
        false
    }

    /// `for index in 0..len { prelude body }` with `for_loop`'s label and attributes.
    fn index_loop(
        &self,
        for_loop: &syn::ExprForLoop,
        index: &syn::Ident,
        len: proc_macro2::TokenStream,
        prelude: Option<proc_macro2::TokenStream>,
        body: syn::Block,
    ) -> syn::Expr {
        let attrs = &for_loop.attrs;
        let label = &for_loop.label;
        let stmts = &body.stmts;
        syn::parse_quote! {
            #(#attrs)* #label for #index in 0..#len {
                #prelude
                #(#stmts)*
            }
        }
    }
}
