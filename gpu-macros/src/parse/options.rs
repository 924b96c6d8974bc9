//! A slice's reads that return an `Option`, unwrapped at once, as bounds-tested reads:
//! `x.get(i).copied().unwrap_or(0.0)` (a stencil's edge), `*x.get(i).unwrap_or(&d)`,
//! `x.first()`, `x.last()`, and `.unwrap()`, which panics with Rust's message where the
//! element is missing.

use super::strip_parens;

/// Which element is read.
enum Which<'e> {
    At(&'e syn::Expr),
    First,
    Last,
}

/// What stands for a missing element.
enum Missing<'e> {
    Panic,
    Value(&'e syn::Expr),
}

/// `expr` as the bounds-tested read it spells, if it is `x.get(i)`, `x.first()` or `x.last()`
/// of a slice or array named `x`, then `.copied()` or `.cloned()`, then `.unwrap()` or
/// `.unwrap_or(d)` (with `*` in front when the element stays a reference, `d` then `&d`).
pub(super) fn optional_read(expr: &syn::Expr) -> Option<syn::Expr> {
    let (expr, deref) = match strip_parens(expr) {
        syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
            (strip_parens(&unary.expr), true)
        }
        other => (other, false),
    };
    let syn::Expr::MethodCall(unwrap) = expr else {
        return None;
    };
    let missing = match (unwrap.method.to_string().as_str(), unwrap.args.len()) {
        ("unwrap", 0) => Missing::Panic,
        ("unwrap_or", 1) => Missing::Value(match strip_parens(&unwrap.args[0]) {
            syn::Expr::Reference(reference) if deref => &reference.expr,
            other => other,
        }),
        _ => return None,
    };
    let mut inner = strip_parens(&unwrap.receiver);
    if let syn::Expr::MethodCall(copied) = inner {
        if copied.args.is_empty()
            && matches!(copied.method.to_string().as_str(), "copied" | "cloned")
        {
            inner = strip_parens(&copied.receiver);
        }
    }
    let syn::Expr::MethodCall(read) = inner else {
        return None;
    };
    let which = match (read.method.to_string().as_str(), read.args.len()) {
        ("get", 1) => Which::At(&read.args[0]),
        ("first", 0) => Which::First,
        ("last", 0) => Which::Last,
        _ => return None,
    };
    let base = strip_parens(&read.receiver);
    if !matches!(base, syn::Expr::Path(_)) {
        return None;
    }
    let at = read.method.span();
    // The index, read twice (tested, then used): bound first unless reading it again is the
    // same.
    let (bind, index): (Option<syn::Stmt>, syn::Expr) = match which {
        Which::At(index) if super::calls::is_plain_value(index) => (None, index.clone()),
        Which::At(index) => (
            Some(syn::parse_quote_spanned!(at=> let __gpu_at: usize = #index;)),
            syn::parse_quote!(__gpu_at),
        ),
        Which::First => (None, syn::parse_quote_spanned!(at=> 0usize)),
        // `wrapping_sub`: an empty slice's last index is past every index, so missing.
        Which::Last => (
            None,
            syn::parse_quote_spanned!(at=> #base.len().wrapping_sub(1)),
        ),
    };
    let value: syn::Expr = match missing {
        Missing::Value(value) => syn::parse_quote_spanned! {at=>
            if #index < #base.len() { #base[#index] } else { #value }
        },
        Missing::Panic => syn::parse_quote_spanned! {at=> {
            if #index >= #base.len() {
                panic!("called `Option::unwrap()` on a `None` value");
            }
            #base[#index]
        }},
    };
    Some(match bind {
        Some(bind) => syn::parse_quote!({ #bind #value }),
        None => value,
    })
}
