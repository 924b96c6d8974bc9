//! A slice's reads that return an `Option`, taken apart at once, as bounds-tested reads:
//! `x.get(i).copied().unwrap_or(0.0)` (a stencil's edge), `*x.get(i).unwrap_or(&d)`,
//! `x.first()`, `x.last()`, `.unwrap()` (which panics with Rust's message where the element is
//! missing), and `if let Some(&v) = x.get(i) { .. } else { .. }`.

use super::strip_parens;
use syn::visit_mut::VisitMut;

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

/// `x.get(i)`, `x.first()` or `x.last()` of a slice or array named `x`, then `.copied()` or
/// `.cloned()`: the slice, which element, and whether the element is a copy (else a
/// reference).
fn read(expr: &syn::Expr) -> Option<(&syn::Expr, Which<'_>, bool)> {
    let mut inner = strip_parens(expr);
    let mut copied = false;
    if let syn::Expr::MethodCall(call) = inner {
        if call.args.is_empty() && matches!(call.method.to_string().as_str(), "copied" | "cloned") {
            inner = strip_parens(&call.receiver);
            copied = true;
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
    matches!(base, syn::Expr::Path(_)).then_some((base, which, copied))
}

/// The index a read tests then uses (read twice, so bound first by the returned statement
/// unless reading it again is the same).
fn index_of(
    base: &syn::Expr,
    which: Which<'_>,
    at: proc_macro2::Span,
) -> (Option<syn::Stmt>, syn::Expr) {
    match which {
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
    }
}

/// `expr` as the bounds-tested read it spells, if it is a read (above) then `.unwrap()` or
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
    let (base, which, _) = read(&unwrap.receiver)?;
    let at = unwrap.method.span();
    let (bind, index) = index_of(base, which, at);
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

/// `if let Some(p) = x.get(i) { a } else { b }` (or `first()`, `last()`, after `.copied()`)
/// as `if i < x.len() { let p = x[i]; a } else { b }`: `&v` binds the element's value, and
/// a name bound to the reference reads it through `*` in `a`, as the value itself here.
pub(super) fn if_let_read(if_expr: &syn::ExprIf) -> Option<syn::Expr> {
    let syn::Expr::Let(binding) = &*if_expr.cond else {
        return None;
    };
    let syn::Pat::TupleStruct(some) = &*binding.pat else {
        return None;
    };
    if !some.path.is_ident("Some") || some.elems.len() != 1 {
        return None;
    }
    let (base, which, copied) = read(&binding.expr)?;
    let mut then_branch = if_expr.then_branch.clone();
    let pat = match &some.elems[0] {
        syn::Pat::Reference(reference) if !copied => (*reference.pat).clone(),
        syn::Pat::Ident(ident) if !copied && ident.subpat.is_none() => {
            DerefsOf(&ident.ident).visit_block_mut(&mut then_branch);
            syn::Pat::Ident(ident.clone())
        }
        other if copied => other.clone(),
        _ => return None,
    };
    let at = binding.let_token.span;
    let (bind, index) = index_of(base, which, at);
    let stmts = &then_branch.stmts;
    let else_branch = if_expr
        .else_branch
        .as_ref()
        .map(|(token, other)| quote::quote!(#token #other));
    let tested: syn::Expr = syn::parse_quote_spanned! {at=>
        if #index < #base.len() { let #pat = #base[#index]; #(#stmts)* } #else_branch
    };
    Some(match bind {
        Some(bind) => syn::parse_quote!({ #bind #tested }),
        None => tested,
    })
}

/// Reads `*name` (and `**name`) as `name`: the name holds the value a reference would lead to.
pub(super) struct DerefsOf<'a>(pub(super) &'a syn::Ident);

impl VisitMut for DerefsOf<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        let mut inner = &*expr;
        let mut derefs = 0;
        while let syn::Expr::Unary(unary) = strip_parens(inner) {
            if !matches!(unary.op, syn::UnOp::Deref(_)) {
                break;
            }
            inner = &unary.expr;
            derefs += 1;
        }
        if derefs > 0 {
            if let syn::Expr::Path(path) = strip_parens(inner) {
                if path.path.is_ident(self.0) {
                    *expr = syn::Expr::Path(path.clone());
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}
