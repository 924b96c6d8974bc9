//! `max_by` / `min_by` with a comparing closure, and `max_by_key` / `min_by_key`, consumed as
//! `consumers.rs` consumes `max()`: a loop keeping the best element, replacing it as Rust's
//! fold does (`max_by` keeps the last of equal elements, `min_by` the first).
//!
//! The closure is read as a comparison of two expressions of its parameters: `|a, b|
//! X.partial_cmp(&Y).unwrap()` (a NaN panics with Rust's message), `X.total_cmp(&Y)` (IEEE's
//! total order, through the bits as Rust computes it) or `X.cmp(&Y)`; a key closure `|v| K`
//! compares `K` of each side with `cmp`.

use super::options::DerefsOf;
use super::{strip_parens, Parser};
use crate::types::{Scalar, Ty};
use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;

/// Rust's message for `unwrap` of `None`.
const UNWRAP_NONE: &str = "called `Option::unwrap()` on a `None` value";

/// How two values are compared.
#[derive(Clone, Copy)]
enum Kind {
    /// `partial_cmp(..).unwrap()`: `<` and `>`, panicking on a NaN.
    Partial,
    /// `total_cmp`: the order of the bits as Rust's `total_cmp` maps them.
    Total,
    /// `cmp`: integers.
    Ord,
}

/// `max_by(closure)`, `min_by`, `max_by_key`, `min_by_key` read as "X of the accumulated
/// element compared with Y of the new one".
pub(super) struct Order {
    /// The names the two sides bind, and the compared expressions of them.
    left: syn::Ident,
    right: syn::Ident,
    x: syn::Expr,
    y: syn::Expr,
    kind: Kind,
    /// `min_by`: the accumulated element is replaced only by a smaller one.
    min: bool,
}

/// The name a closure parameter binds (`a`, `&a`, `&&a`, `a: &f32`), with its body read as
/// the value (`*a` is `a`).
fn parameter(pat: &syn::Pat, body: &mut syn::Expr) -> Option<syn::Ident> {
    let mut pat = match pat {
        syn::Pat::Type(typed) => &*typed.pat,
        other => other,
    };
    while let syn::Pat::Reference(reference) = pat {
        pat = &reference.pat;
    }
    let syn::Pat::Ident(ident) = pat else {
        return None;
    };
    if ident.by_ref.is_some() || ident.subpat.is_some() {
        return None;
    }
    DerefsOf(&ident.ident).visit_expr_mut(body);
    Some(ident.ident.clone())
}

/// `&e` as `e`: a comparison's argument is a reference to what it compares.
fn unreferenced(expr: &syn::Expr) -> syn::Expr {
    match strip_parens(expr) {
        syn::Expr::Reference(reference) => unreferenced(&reference.expr),
        other => other.clone(),
    }
}

/// The two compared expressions of a comparator's body and how they compare.
fn comparison(body: &syn::Expr) -> Option<(syn::Expr, syn::Expr, Kind)> {
    let body = match strip_parens(body) {
        syn::Expr::Block(block) if block.block.stmts.len() == 1 => match &block.block.stmts[0] {
            syn::Stmt::Expr(inner, None) => inner,
            _ => return None,
        },
        other => other,
    };
    match strip_parens(body) {
        syn::Expr::MethodCall(call) if call.args.is_empty() && call.method == "unwrap" => {
            match comparison(&call.receiver)? {
                (x, y, Kind::Ord) if is_partial(&call.receiver) => Some((x, y, Kind::Partial)),
                _ => None,
            }
        }
        syn::Expr::MethodCall(call) if call.args.len() == 1 => {
            let kind = match call.method.to_string().as_str() {
                "total_cmp" => Kind::Total,
                "cmp" | "partial_cmp" => Kind::Ord,
                _ => return None,
            };
            Some((
                unreferenced(&call.receiver),
                unreferenced(&call.args[0]),
                kind,
            ))
        }
        // `f32::total_cmp(a, b)`, as `max_by(f32::total_cmp)` reads.
        syn::Expr::Call(call) if call.args.len() == 2 => {
            let syn::Expr::Path(path) = &*call.func else {
                return None;
            };
            let kind = match path.path.segments.last()?.ident.to_string().as_str() {
                "total_cmp" => Kind::Total,
                "cmp" => Kind::Ord,
                _ => return None,
            };
            Some((
                unreferenced(&call.args[0]),
                unreferenced(&call.args[1]),
                kind,
            ))
        }
        _ => None,
    }
}

/// Whether `expr` is a `partial_cmp` call (whose `Option` the comparator unwraps).
fn is_partial(expr: &syn::Expr) -> bool {
    match strip_parens(expr) {
        syn::Expr::MethodCall(call) => call.method == "partial_cmp",
        syn::Expr::Call(call) => matches!(&*call.func, syn::Expr::Path(path)
            if path.path.segments.last().is_some_and(|s| s.ident == "partial_cmp")),
        _ => false,
    }
}

impl Order {
    /// `max_by(f)` / `min_by(f)` / `max_by_key(f)` / `min_by_key(f)` of `call`, when `f` has a
    /// form above; `None` for any other call.
    pub(super) fn of(call: &syn::ExprMethodCall) -> Option<Order> {
        let (min, keyed) = match call.method.to_string().as_str() {
            "max_by" => (false, false),
            "min_by" => (true, false),
            "max_by_key" => (false, true),
            "min_by_key" => (true, true),
            _ => return None,
        };
        if call.args.len() != 1 {
            return None;
        }
        let closure = match strip_parens(&call.args[0]) {
            syn::Expr::Closure(closure) => closure.clone(),
            // `max_by(f32::total_cmp)`: the closure that calls it.
            syn::Expr::Path(path) if !keyed => {
                syn::parse_quote!(|__gpu_left, __gpu_right| #path(__gpu_left, __gpu_right))
            }
            _ => return None,
        };
        Self::from_closure(&closure, min, keyed)
    }

    fn from_closure(closure: &syn::ExprClosure, min: bool, keyed: bool) -> Option<Order> {
        let (left, right) = (
            quote::format_ident!("__gpu_left"),
            quote::format_ident!("__gpu_right"),
        );
        if keyed {
            let [pat] = closure.inputs.iter().collect::<Vec<_>>()[..] else {
                return None;
            };
            let mut key = (*closure.body).clone();
            let name = parameter(pat, &mut key)?;
            let side =
                |side: &syn::Ident| -> syn::Expr { syn::parse_quote!({ let #name = #side; #key }) };
            return Some(Order {
                x: side(&left),
                y: side(&right),
                left,
                right,
                kind: Kind::Ord,
                min,
            });
        }
        let [a, b] = closure.inputs.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let mut body = (*closure.body).clone();
        let (a, b) = (parameter(a, &mut body)?, parameter(b, &mut body)?);
        let (x, y, kind) = comparison(&body)?;
        Some(Order {
            x: syn::parse_quote!({ let #a = #left; let #b = #right; #x }),
            y: syn::parse_quote!({ let #a = #left; let #b = #right; #y }),
            left,
            right,
            kind,
            min,
        })
    }

    /// The statements that replace `acc` (the best so far) by `each` where Rust's fold does:
    /// for `max_by`, unless `acc` compares greater; for `min_by`, if it does.
    fn replace(&self, acc: &syn::Ident, each: &syn::Ident) -> TokenStream {
        let (left, right, x, y) = (&self.left, &self.right, &self.x, &self.y);
        let check = match self.kind {
            Kind::Partial => quote! {
                if __gpu_x != __gpu_x || __gpu_y != __gpu_y {
                    panic!(#UNWRAP_NONE);
                }
            },
            Kind::Total | Kind::Ord => quote!(),
        };
        // `total_cmp`'s order: negative values' bits flipped below the positive ones', whose
        // sign bit is set (Rust's `total_cmp`, with the sign bit moved to compare unsigned).
        let (x_key, y_key) = match self.kind {
            Kind::Total => (total_key(quote!(__gpu_x)), total_key(quote!(__gpu_y))),
            Kind::Partial | Kind::Ord => (quote!(__gpu_x), quote!(__gpu_y)),
        };
        let greater = quote!(__gpu_kx > __gpu_ky);
        let replaces = if self.min {
            greater
        } else {
            quote!(!(#greater))
        };
        quote! {
            let #left = #acc;
            let #right = #each;
            let __gpu_x = #x;
            let __gpu_y = #y;
            #check
            let __gpu_kx = #x_key;
            let __gpu_ky = #y_key;
            if #replaces {
                #acc = #each;
            }
        }
    }
}

/// The unsigned key whose order is `total_cmp`'s order of the float `value` (a name).
fn total_key(value: TokenStream) -> TokenStream {
    quote!({
        let __gpu_bits = #value.to_bits();
        let __gpu_zero = __gpu_bits ^ __gpu_bits;
        if #value.is_sign_negative() {
            !__gpu_bits
        } else {
            __gpu_bits | !(!__gpu_zero >> 1)
        }
    })
}

/// What the forms are, for the message where a call has none of them.
pub(super) const USAGE: &str = "`max_by` / `min_by` take a comparing closure, `|a, b| \
                     a.partial_cmp(b).unwrap()` (also `total_cmp`, `cmp`, of any expressions of \
                     `a` and `b`, such as `d[a].partial_cmp(&d[b]).unwrap()`), or a function \
                     such as `f32::total_cmp`; `max_by_key` / `min_by_key` a closure `|v| key`";

/// A zero of `scalar` as a suffixed literal (`0u32`, `0.0f32`, `false`), which fixes the type of
/// the variable it starts.
pub(super) fn typed_zero(scalar: Scalar, at: proc_macro2::Span) -> syn::Expr {
    match scalar {
        Scalar::Bool => syn::parse_quote_spanned!(at=> false),
        scalar if scalar.is_float() => {
            let zero = syn::LitFloat::new(&format!("0.0{}", scalar.rust_name()), at);
            syn::parse_quote!(#zero)
        }
        scalar => {
            let zero = syn::LitInt::new(&format!("0{}", scalar.rust_name()), at);
            syn::parse_quote!(#zero)
        }
    }
}

/// What a `max_by` walks: the iterator a `for` loop takes, the pattern it binds, each
/// element's value, and one element of the slice it reads (`None` for a range's integers).
pub(super) struct Walk<'w> {
    pub iterator: &'w syn::Expr,
    pub pattern: &'w TokenStream,
    pub element: &'w TokenStream,
    pub place: Option<syn::Expr>,
}

impl Parser<'_> {
    /// The loop keeping in `acc` the best element of `walk` by `order`, then `fallback` where
    /// there was none (`found_any` false), then `acc`.
    pub(super) fn ordered(
        &mut self,
        order: &Order,
        walk: Walk<'_>,
        fallback: TokenStream,
        found_any: &syn::Ident,
        acc: &syn::Ident,
        method: &syn::Ident,
    ) -> Option<syn::Expr> {
        let at = method.span();
        let each = quote::format_ident!("__gpu_next_{}", acc, span = at);
        let Walk {
            iterator,
            pattern,
            element,
            place,
        } = walk;
        // The accumulator starts as a zero of the elements' type, which only a range (of
        // integers) or a walk of a slice whose element type is written tells the parser.
        let zero: syn::Expr = match place.map(|place| self.written_type(&place)) {
            None => syn::parse_quote_spanned!(at=> 0),
            // Typed, so the comparisons' methods see the type before the first assignment.
            Some(Some(Ty::Scalar(scalar))) => typed_zero(scalar, at),
            Some(_) => {
                self.cx.error_spanned_by(
                    method,
                    format!(
                        "here `{method}` walks a range, or the `iter()` of a slice or array of \
                         numbers declared with its type (a parameter, an annotated `let`), or \
                         either mapped to an element of one (`.map(|i| d[i])`)"
                    ),
                );
                return None;
            }
        };
        let replace = order.replace(acc, &each);
        Some(syn::parse_quote_spanned! {at=> {
            let mut #acc = #zero;
            let mut #found_any = false;
            for #pattern in #iterator {
                let #each = #element;
                if !#found_any {
                    #acc = #each;
                } else {
                    #replace
                }
                #found_any = true;
            }
            #fallback
            #acc
        }})
    }
}
