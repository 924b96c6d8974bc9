//! Iterators consumed into one value, as Rust writes them: `x.iter().sum::<f32>()`,
//! `.product()`, `.fold(init, |acc, v| ..)`, an integer `.max()` / `.min()` unwrapped, over what
//! a `for` loop walks (`x.iter()`, `.enumerate()`, `.zip(..)`, a range), after `.copied()`,
//! `.map(|v| ..)`. Each becomes the `for` loop that computes it into a variable (see
//! `values.rs`, which places that loop where the value is needed).

use super::options::DerefsOf;
use super::{strip_parens, Parser};
use crate::ir::*;
use proc_macro2::TokenStream;

/// An iterator consumed into one value: `x.iter().sum()` / `.product()` (also `sum::<T>()`, after
/// `.copied()`, `.cloned()` or `.map(|v| ..)`), `.fold(init, |acc, v| ..)`, or an integer
/// `.max()` / `.min()` unwrapped, over what a `for` loop walks (`x.iter()`, `.enumerate()`,
/// `.zip(..)`, a range).
pub(super) struct Consumer<'e> {
    iterator: &'e syn::Expr,
    /// Whether the walk gives references (a slice's elements), which `*` reads, or values (a
    /// range's).
    by_ref: bool,
    map: Option<syn::ExprClosure>,
    /// `.filter(|v| ..)` before the `map` (or without one), and after it.
    filters: [Option<syn::ExprClosure>; 2],
    combine: Combine<'e>,
    ty: Option<&'e syn::Type>,
}

/// How a [`Consumer`] combines the elements.
enum Combine<'e> {
    Sum,
    Product,
    Fold(&'e syn::Expr, Box<syn::ExprClosure>),
    /// `.any(|v| ..)`, `.all(|v| ..)` (`true`), which stop at the first element that decides.
    Test(Box<syn::ExprClosure>, bool),
    /// `.count()`, a `usize`.
    Count,
    /// `.position(|v| ..)` unwrapped: the index of the first element that passes.
    Position(Box<syn::ExprClosure>, Otherwise<'e>),
    /// `.find(|v| ..)` unwrapped: the first element that passes.
    Find(Box<syn::ExprClosure>, Otherwise<'e>),
    /// `.max_by(|a, b| ..)`, `.min_by`, `.max_by_key(|v| ..)`, `.min_by_key`, unwrapped.
    By {
        order: Box<super::ordering::Order>,
        method: &'e syn::Ident,
        otherwise: Otherwise<'e>,
    },
    /// `.max()` / `.min()` (`min` true) and what stands for an empty walk's `None`.
    Extreme {
        min: bool,
        method: &'e syn::Ident,
        otherwise: Otherwise<'e>,
    },
}

/// What `.unwrap()`, `.unwrap_or(v)` or `.unwrap_or_default()` gives where `max` or `min` found
/// nothing.
#[derive(Clone, Copy)]
enum Otherwise<'e> {
    Panic,
    Value(&'e syn::Expr),
    Zero,
    /// An option bound or taken apart (`if let Some(i) = x.iter().position(..)`): the walk
    /// sets this flag to whether it found one (see `optionals/`, which writes the call).
    Flag(&'e syn::Expr),
}

/// The method `optionals/` ends an iterator's option with, so the walk reports whether it
/// found an element into the flag its argument names; not a name users write.
pub(super) const FLAG_METHOD: &str = "__gpu_found_into";

/// What stands where `max`, `min` or their `_by` forms found nothing: Rust's panic of
/// `unwrap`, the value of `unwrap_or(v)`, or the accumulator's zero.
fn fallback(otherwise: Otherwise<'_>, found_any: &syn::Ident, acc: &syn::Ident) -> TokenStream {
    match otherwise {
        Otherwise::Panic => quote::quote! {
            if !#found_any {
                panic!("called `Option::unwrap()` on a `None` value");
            }
        },
        Otherwise::Value(value) => quote::quote! {
            if !#found_any { #acc = #value; }
        },
        Otherwise::Zero => quote::quote!(),
        Otherwise::Flag(flag) => quote::quote!(#flag = #found_any;),
    }
}

/// The loop that keeps in an accumulator the largest element of a walk (`min`: the smallest),
/// each element bound by `pattern`, passed through `steps` (filters, a map) and valued
/// `element`, then `otherwise` where there was none: `max` / `min` unfiltered (`consumed`) and
/// filtered (`stepped`) alike. Rust's `max` keeps the last of equal elements, `min` the first.
fn extreme_walk(
    min: bool,
    method: &syn::Ident,
    otherwise: Otherwise<'_>,
    n: usize,
    (pattern, iterator): (&TokenStream, &syn::Expr),
    steps: &[TokenStream],
    element: &TokenStream,
) -> syn::Expr {
    // Spanned at the method, where a float's mismatch with the 0 is reported.
    let at = method.span();
    let acc = quote::format_ident!("__gpu_acc{n}", span = at);
    let found_any = quote::format_ident!("__gpu_found{n}", span = at);
    let each = quote::format_ident!("__gpu_each{n}", span = at);
    let better = if min {
        quote::quote!(<)
    } else {
        quote::quote!(>=)
    };
    // An untyped 0 to start from: it takes the elements' type, which `max` and `min` need to
    // be an integer (Rust's `Ord`), so floats are refused here.
    let zero = syn::LitInt::new("0", at);
    let fallback = fallback(otherwise, &found_any, &acc);
    syn::parse_quote_spanned! {at=> {
        let mut #acc = #zero;
        let mut #found_any = false;
        for #pattern in #iterator {
            #(#steps)*
            let #each = #element;
            if !#found_any || #each #better #acc {
                #acc = #each;
            }
            #found_any = true;
        }
        #fallback
        #acc
    }}
}

/// The slice or array a walk reads (`x` of `x.iter().rev()`), if it walks one alone (not
/// zipped or enumerated, whose elements are tuples).
fn walked_slice(iterator: &syn::Expr) -> Option<&syn::Expr> {
    let syn::Expr::MethodCall(call) = strip_parens(iterator) else {
        return None;
    };
    match call.method.to_string().as_str() {
        "iter" | "into_iter" => {
            matches!(strip_parens(&call.receiver), syn::Expr::Path(_)).then_some(&*call.receiver)
        }
        "rev" | "skip" | "take" | "step_by" | "copied" | "cloned" => walked_slice(&call.receiver),
        _ => None,
    }
}

/// Whether `iterator` walks a whole slice or array by its name, `x.iter()`, so its elements'
/// positions are their indices.
fn walks_whole_slice(iterator: &syn::Expr) -> bool {
    matches!(strip_parens(iterator), syn::Expr::MethodCall(call)
        if matches!(call.method.to_string().as_str(), "iter" | "into_iter")
            && call.args.is_empty()
            && matches!(strip_parens(&call.receiver), syn::Expr::Path(_)))
}

/// The closure `expr` is, if it takes `inputs` parameters; a function named by a path
/// (`f32::max`, `f32::abs`) is the closure that calls it.
fn closure_of(expr: &syn::Expr, inputs: usize) -> Option<syn::ExprClosure> {
    match strip_parens(expr) {
        syn::Expr::Closure(closure) if closure.inputs.len() == inputs => Some(closure.clone()),
        syn::Expr::Path(path) => {
            let names: Vec<syn::Ident> = (0..inputs)
                .map(|i| quote::format_ident!("__gpu_arg{i}"))
                .collect();
            Some(syn::parse_quote!(|#(#names),*| #path(#(#names),*)))
        }
        _ => None,
    }
}

/// Whether `expr` is what a `for` loop walks, and whether it gives references: `x.iter()`,
/// `x.into_iter()` (then `.skip(a)`, `.take(b)`), and `.enumerate()`, `.zip(..)` or `.rev()` of
/// one (references), or a range, `a..b`, `a..=b`, with `.rev()` or `.step_by(s)` (values).
pub(super) fn walks(expr: &syn::Expr) -> Option<bool> {
    match strip_parens(expr) {
        syn::Expr::MethodCall(call) => match call.method.to_string().as_str() {
            "iter" | "into_iter" if call.args.is_empty() => Some(true),
            "enumerate" | "zip" => walks(&call.receiver).filter(|by_ref| *by_ref),
            "rev" | "step_by" if matches!(strip_parens(&call.receiver), syn::Expr::Range(_)) => {
                Some(false)
            }
            // `x.iter().rev()`, `x.iter().enumerate().rev()`: what a `for` loop walks down
            // (`.step_by(s)`: by steps).
            "rev" | "step_by" => match strip_parens(&call.receiver) {
                syn::Expr::MethodCall(inner)
                    if inner.method == "iter" || inner.method == "enumerate" =>
                {
                    walks(&call.receiver).filter(|by_ref| *by_ref)
                }
                _ => None,
            },
            // `x.iter().skip(a)`, `.take(b)`, `.skip(a).take(b)`: the part a `for` loop walks.
            "skip" | "take" if call.args.len() == 1 => match strip_parens(&call.receiver) {
                syn::Expr::MethodCall(inner)
                    if inner.method == "iter"
                        || (call.method == "take" && inner.method == "skip") =>
                {
                    walks(&call.receiver).filter(|by_ref| *by_ref)
                }
                _ => None,
            },
            _ => None,
        },
        syn::Expr::Range(range) if range.start.is_some() && range.end.is_some() => Some(false),
        _ => None,
    }
}

/// `walk.max().unwrap()` (or `.min()`, `.unwrap_or(v)`, `.unwrap_or_default()`, `.copied()`
/// before the unwrapping, `*` before all when the walk gives references): the walk and how it
/// combines.
fn extreme(call: &syn::ExprMethodCall, deref: bool) -> Option<(&syn::Expr, Combine<'_>)> {
    let otherwise = match (call.method.to_string().as_str(), call.args.len()) {
        ("unwrap", 0) => Otherwise::Panic,
        ("unwrap_or_default", 0) => Otherwise::Zero,
        (method, 1) if method == FLAG_METHOD => Otherwise::Flag(&call.args[0]),
        // `*x.iter().max().unwrap_or(&0)`: the default is a reference like the elements.
        ("unwrap_or", 1) => Otherwise::Value(match strip_parens(&call.args[0]) {
            syn::Expr::Reference(reference) if deref => &reference.expr,
            other => other,
        }),
        _ => return None,
    };
    let mut inner = strip_parens(&call.receiver);
    if let syn::Expr::MethodCall(copied) = inner {
        if copied.args.is_empty()
            && matches!(copied.method.to_string().as_str(), "copied" | "cloned")
        {
            inner = strip_parens(&copied.receiver);
        }
    }
    let syn::Expr::MethodCall(extreme) = inner else {
        return None;
    };
    // `x.iter().position(|&v| v == key).unwrap_or(n)`: the first index whose element passes.
    if extreme.method == "position" && extreme.args.len() == 1 && !deref {
        let test = Box::new(closure_of(&extreme.args[0], 1)?);
        return Some((&extreme.receiver, Combine::Position(test, otherwise)));
    }
    // `x.iter().copied().find(|&v| v > key).unwrap_or(0)`: the first element that passes.
    if extreme.method == "find" && extreme.args.len() == 1 {
        let test = Box::new(closure_of(&extreme.args[0], 1)?);
        return Some((&extreme.receiver, Combine::Find(test, otherwise)));
    }
    if let Some(order) = super::ordering::Order::of(extreme) {
        let combine = Combine::By {
            order: Box::new(order),
            method: &extreme.method,
            otherwise,
        };
        return Some((&extreme.receiver, combine));
    }
    let min = match extreme.method.to_string().as_str() {
        "max" => false,
        "min" => true,
        _ => return None,
    };
    if !extreme.args.is_empty() || extreme.turbofish.is_some() {
        return None;
    }
    let combine = Combine::Extreme {
        min,
        method: &extreme.method,
        otherwise,
    };
    Some((&extreme.receiver, combine))
}

/// Whether `expr` has an iterator consumed into a value somewhere in it (not in a closure's
/// body, which lifts its own): an arm holding one runs as statements, so it is lifted there.
pub(super) fn has_consumer(expr: &syn::Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr(&mut self, expr: &'ast syn::Expr) {
            if consumer(expr).is_some() {
                self.0 = true;
            } else {
                syn::visit::visit_expr(self, expr);
            }
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, expr);
    finder.0
}

pub(super) fn consumer(expr: &syn::Expr) -> Option<Consumer<'_>> {
    let (expr, deref) = match expr {
        syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
            (strip_parens(&unary.expr), true)
        }
        other => (other, false),
    };
    let syn::Expr::MethodCall(call) = expr else {
        return None;
    };
    let (receiver, combine) = match (call.method.to_string().as_str(), call.args.len()) {
        _ if deref
            || call.method.to_string().starts_with("unwrap")
            || call.method == FLAG_METHOD =>
        {
            extreme(call, deref)?
        }
        ("sum", 0) => (&*call.receiver, Combine::Sum),
        ("product", 0) => (&*call.receiver, Combine::Product),
        ("fold", 2) => (
            &*call.receiver,
            Combine::Fold(&call.args[0], Box::new(closure_of(&call.args[1], 2)?)),
        ),
        ("any" | "all", 1) => (
            &*call.receiver,
            Combine::Test(
                Box::new(closure_of(&call.args[0], 1)?),
                call.method == "all",
            ),
        ),
        ("count", 0) => (&*call.receiver, Combine::Count),
        _ => return None,
    };
    let ty = match &call.turbofish {
        Some(turbofish) => match turbofish.args.first() {
            Some(syn::GenericArgument::Type(ty)) if turbofish.args.len() == 1 => Some(ty),
            _ => return None,
        },
        None => None,
    };
    let mut iterator = strip_parens(receiver);
    let mut map = None;
    let mut filters = [None, None];
    while let syn::Expr::MethodCall(inner) = iterator {
        let method = inner.method.to_string();
        // Met from the outside in: a filter after the `map` comes first.
        let filter = &mut filters[usize::from(map.is_none())];
        if inner.args.is_empty() && matches!(method.as_str(), "copied" | "cloned") {
            iterator = strip_parens(&inner.receiver);
        } else if method == "map" && inner.args.len() == 1 && map.is_none() {
            map = Some(closure_of(&inner.args[0], 1)?);
            iterator = strip_parens(&inner.receiver);
        } else if method == "filter" && inner.args.len() == 1 && filter.is_none() {
            *filter = Some(closure_of(&inner.args[0], 1)?);
            iterator = strip_parens(&inner.receiver);
        } else {
            break;
        }
    }
    // With no `map`, the one filter is the element's.
    if map.is_none() {
        filters.swap(0, 1);
    }
    let by_ref = walks(iterator)?;
    // `*` reads an element the walk gives by reference.
    if deref && (!by_ref || map.is_some()) {
        return None;
    }
    Some(Consumer {
        iterator,
        by_ref,
        map,
        filters,
        combine,
        ty,
    })
}

/// A closure parameter's pattern without its type (`v: &f32` is `v`), as a loop binds it.
fn untyped(pat: &syn::Pat) -> &syn::Pat {
    match pat {
        syn::Pat::Type(typed) => &typed.pat,
        other => other,
    }
}

impl Consumer<'_> {
    /// The method that consumes, for messages.
    pub(super) fn name(&self) -> &'static str {
        match self.combine {
            Combine::Sum => "sum",
            Combine::Product => "product",
            Combine::Fold(..) => "fold",
            Combine::Test(_, false) => "any",
            Combine::Test(_, true) => "all",
            Combine::Count => "count",
            Combine::Position(..) => "position",
            Combine::Find(..) => "find",
            Combine::By { method, .. } => match method.to_string().as_str() {
                "min_by" => "min_by",
                "max_by_key" => "max_by_key",
                "min_by_key" => "min_by_key",
                _ => "max_by",
            },
            Combine::Extreme { min: true, .. } => "min",
            Combine::Extreme { min: false, .. } => "max",
        }
    }

    /// Whether the element passes through closures one after another (`filter`, `any`,
    /// `all`, `count`), each binding it by its own name ([`Parser::stepped`]).
    fn stepped(&self) -> bool {
        self.filters.iter().any(Option::is_some)
            || matches!(
                self.combine,
                Combine::Test(..) | Combine::Count | Combine::Position(..) | Combine::Find(..)
            )
    }
}

/// `body` of a closure whose parameter `pat` (`v`, `&v`, `&&v`, typed or not) takes a value:
/// `let v = value;` then the body with every `*v` (and `**v`) read as `v`, since `v` is the
/// value itself; `None` for a pattern that is not a name.
fn applied(
    closure: &syn::ExprClosure,
    value: &proc_macro2::TokenStream,
) -> Option<proc_macro2::TokenStream> {
    let mut pat = untyped(&closure.inputs[0]);
    while let syn::Pat::Reference(reference) = pat {
        pat = &reference.pat;
    }
    let syn::Pat::Ident(ident) = pat else {
        return None;
    };
    if ident.by_ref.is_some() || ident.subpat.is_some() {
        return None;
    }
    let mut body = (*closure.body).clone();
    syn::visit_mut::VisitMut::visit_expr_mut(&mut DerefsOf(&ident.ident), &mut body);
    let name = &ident.ident;
    let mutability = &ident.mutability;
    Some(quote::quote!({ let #mutability #name = #value; #body }))
}

impl Parser<'_> {
    /// An iterator consumed into `target`: the loop over its elements that adds them (from the
    /// type's 0, or multiplies from 1; the type is the turbofish's or `target`'s annotation), or
    /// folds them, each element first mapped by the `map` closure's body.
    pub(super) fn consumed(&mut self, expr: &syn::Expr, target: LocalId) -> Option<Stmt> {
        let found = consumer(expr)?;
        if found.stepped() {
            return self.stepped(expr, found, target);
        }
        let n = self.fresh_names();
        let acc = quote::format_ident!("__gpu_acc{n}");
        let item = quote::format_ident!("__gpu_item{n}");
        let iterator = found.iterator;
        // What the loop binds, and each element's value.
        let (pattern, element): (proc_macro2::TokenStream, proc_macro2::TokenStream) =
            match &found.map {
                Some(map) => {
                    let pattern = untyped(&map.inputs[0]);
                    let body = &map.body;
                    (quote::quote!(#pattern), quote::quote!({ #body }))
                }
                None if found.by_ref => (quote::quote!(#item), quote::quote!(*#item)),
                None => (quote::quote!(#item), quote::quote!(#item)),
            };
        let block: syn::Expr = match found.combine {
            Combine::By {
                order,
                method,
                otherwise,
            } => {
                let at = method.span();
                let found_any = quote::format_ident!("__gpu_found{n}", span = at);
                // Where the elements are a slice's, one of them, whose declared type the
                // accumulator starts from (a range's are integers).
                let place = match (&found.map, found.by_ref) {
                    (Some(map), _) => Some((*map.body).clone()),
                    (None, true) => Some(match walked_slice(iterator) {
                        Some(base) => syn::parse_quote!(#base[0]),
                        None => syn::parse_quote!(__gpu_unknown[0]),
                    }),
                    (None, false) => None,
                };
                let walk = super::ordering::Walk {
                    iterator,
                    pattern: &pattern,
                    element: &element,
                    place,
                };
                let fallback = fallback(otherwise, &found_any, &acc);
                let ordered = self.ordered(&order, walk, fallback, &found_any, &acc, method);
                return self.lower_into(&ordered?, target);
            }
            Combine::Extreme {
                min,
                method,
                otherwise,
            } => extreme_walk(
                min,
                method,
                otherwise,
                n,
                (&pattern, iterator),
                &[],
                &element,
            ),
            Combine::Fold(init, closure) => {
                let (state, each) = (untyped(&closure.inputs[0]), untyped(&closure.inputs[1]));
                let body = &closure.body;
                // Unmapped, the loop binds the closure's second parameter; mapped, that
                // parameter binds the mapped value.
                let (pattern, step) = match found.map {
                    Some(_) => (pattern, quote::quote!({ let #each = #element; #body })),
                    None => (quote::quote!(#each), quote::quote!(#body)),
                };
                syn::parse_quote! {{
                    let mut #acc = #init;
                    for #pattern in #iterator {
                        let #state = #acc;
                        #acc = #step;
                    }
                    #acc
                }}
            }
            Combine::Test(..) | Combine::Count | Combine::Position(..) | Combine::Find(..) => {
                unreachable!("stepped consumers")
            }
            combine => {
                let product = matches!(combine, Combine::Product);
                let ty: syn::Type = match (found.ty, self.locals[target.0 as usize].annotation) {
                    (Some(ty), _) => ty.clone(),
                    (None, Some(crate::types::Ty::Scalar(scalar))) if !scalar.is_half() => {
                        syn::parse_str(scalar.rust_name()).ok()?
                    }
                    _ => {
                        let method = if product { "product" } else { "sum" };
                        self.cx.error_spanned_by(
                            expr,
                            format!(
                                "write the type `{method}` gives: `let total: f32 = \
                                 x.iter().{method}();` or `x.iter().{method}::<f32>()`"
                            ),
                        );
                        return None;
                    }
                };
                let (start, step) = if product {
                    (quote::quote!(1), quote::quote!(*=))
                } else {
                    (quote::quote!(0), quote::quote!(+=))
                };
                syn::parse_quote! {{
                    let mut #acc: #ty = #start as #ty;
                    for #pattern in #iterator { #acc #step #element; }
                    #acc
                }}
            }
        };
        self.lower_into(&block, target)
    }

    /// A consumer whose element passes through `filter`s, or that `any`, `all` or `count`
    /// consume: the loop binds the element, each closure binds it (or the mapped value) by
    /// its parameter's name, a filter that fails skips the element, and `any` / `all` stop at
    /// the first element that decides.
    fn stepped(&mut self, expr: &syn::Expr, found: Consumer<'_>, target: LocalId) -> Option<Stmt> {
        const USAGE: &str = "here the closures walk a slice's or array's `iter()` or a range \
                             and take one name (`|v|`, `|&v|`, `|&&v|`): write the `for` loop";
        if !matches!(
            found.combine,
            Combine::Sum
                | Combine::Product
                | Combine::Test(..)
                | Combine::Count
                | Combine::Position(..)
                | Combine::Find(..)
                | Combine::Extreme { .. }
        ) {
            self.cx.error_spanned_by(
                expr,
                format!(
                    "`filter` here is followed by `{}`: filter into `sum`, `product`, `count`, \
                     `any`, `all`, `max`, `min`, `position` or `find`, or write the `for` loop",
                    found.name()
                ),
            );
            return None;
        }
        let n = self.fresh_names();
        let acc = quote::format_ident!("__gpu_acc{n}");
        let item = quote::format_ident!("__gpu_item{n}");
        let iterator = found.iterator;
        let mut value = if found.by_ref {
            quote::quote!(*#item)
        } else {
            quote::quote!(#item)
        };
        // The filter before the map, the map, the filter after it: each a statement.
        let mut steps = Vec::new();
        let [before, after] = &found.filters;
        let mapped_value = quote::format_ident!("__gpu_mapped{n}");
        for (closure, is_map) in [(before, false), (&found.map, true), (after, false)] {
            let Some(closure) = closure else { continue };
            let Some(applied) = applied(closure, &value) else {
                self.cx.error_spanned_by(expr, USAGE);
                return None;
            };
            // Each closure's value is bound by a `let` of its own, so its parameter's name
            // stays inside it.
            if is_map {
                steps.push(quote::quote!(let #mapped_value = #applied;));
                value = quote::quote!(#mapped_value);
            } else {
                let keep = quote::format_ident!("__gpu_keep{n}");
                steps.push(quote::quote!(let #keep: bool = #applied; if !#keep { continue; }));
            }
        }
        let (start, step) = match &found.combine {
            Combine::Test(closure, all) => {
                let Some(test) = applied(closure, &value) else {
                    self.cx.error_spanned_by(expr, USAGE);
                    return None;
                };
                // `all` stops at the first element that fails, `any` at the first that passes.
                let passes = quote::format_ident!("__gpu_passes{n}");
                let (start, decided, found) = if *all {
                    (
                        quote::quote!(true),
                        quote::quote!(!#passes),
                        quote::quote!(false),
                    )
                } else {
                    (
                        quote::quote!(false),
                        quote::quote!(#passes),
                        quote::quote!(true),
                    )
                };
                (
                    start,
                    quote::quote!(let #passes: bool = #test; if #decided { #acc = #found; break; }),
                )
            }
            Combine::Count => (quote::quote!(0usize), quote::quote!(#acc += 1;)),
            // `x.iter().filter(|&&v| v % 2 == 1).max()`: the extreme of the elements that pass,
            // as the unfiltered walk keeps it (`consumed`).
            Combine::Extreme {
                min,
                method,
                otherwise,
            } => {
                let item = quote::quote!(#item);
                let block = extreme_walk(
                    *min,
                    method,
                    *otherwise,
                    n,
                    (&item, iterator),
                    &steps,
                    &value,
                );
                return self.lower_into(&block, target);
            }
            Combine::Find(closure, otherwise) => {
                let Some(test) = applied(closure, &value) else {
                    self.cx.error_spanned_by(expr, USAGE);
                    return None;
                };
                // The element the search keeps starts as a zero of the walked slice's
                // declared type (as `max_by` does, `ordering.rs`).
                let place = walked_slice(iterator).map(|base| syn::parse_quote!(#base[0]));
                let typed = place.and_then(|place| self.written_type(&place));
                let zero: Option<syn::Expr> = match typed {
                    Some(crate::types::Ty::Scalar(scalar))
                        if found.map.is_none() && !scalar.is_half() =>
                    {
                        Some(super::ordering::typed_zero(scalar, method_span(expr)))
                    }
                    // Otherwise the element is declared unset: every ending but
                    // `unwrap_or_default` gives it a value or reads it only where one was found.
                    _ if !matches!(otherwise, Otherwise::Zero) => None,
                    _ => {
                        self.cx.error_spanned_by(
                            expr,
                            "`find(..).unwrap_or_default()` here needs the elements' type: walk \
                             a slice declared with its type (a parameter, an annotated `let`), or \
                             write `.unwrap_or(0)`",
                        );
                        return None;
                    }
                };
                let start = match zero {
                    Some(zero) => quote::quote!(let mut #acc = #zero;),
                    None => quote::quote!(let mut #acc;),
                };
                let found_one = quote::format_ident!("__gpu_found{n}");
                let fallback = fallback(*otherwise, &found_one, &acc);
                let hit = quote::format_ident!("__gpu_hit{n}");
                let block: syn::Expr = syn::parse_quote! {{
                    #start
                    let mut #found_one = false;
                    for #item in #iterator {
                        #(#steps)*
                        let #hit: bool = #test;
                        if #hit { #acc = #value; #found_one = true; break; }
                    }
                    #fallback
                    #acc
                }};
                return self.lower_into(&block, target);
            }
            Combine::Position(closure, otherwise) => {
                let Some(test) = applied(closure, &value) else {
                    self.cx.error_spanned_by(expr, USAGE);
                    return None;
                };
                // The loop counts the elements it reaches; the first that passes gives its
                // index and ends it, and a walk that ends without one gives the fallback.
                let (index, found_one) = (
                    quote::format_ident!("__gpu_index{n}"),
                    quote::format_ident!("__gpu_found{n}"),
                );
                let fallback = match otherwise {
                    Otherwise::Panic => quote::quote! {
                        if !#found_one {
                            panic!("called `Option::unwrap()` on a `None` value");
                        }
                    },
                    Otherwise::Value(value) => quote::quote!(if !#found_one { #acc = #value; }),
                    Otherwise::Zero => quote::quote!(if !#found_one { #acc = 0; }),
                    Otherwise::Flag(flag) => quote::quote!(#flag = #found_one;),
                };
                let hit = quote::format_ident!("__gpu_hit{n}");
                // Over a slice's own walk, unfiltered, the element's index is the loop's: no
                // second counter runs beside it (Rodinia's particle filter searches its CDF
                // this way, a thread a particle).
                if found.filters.iter().all(Option::is_none) && walks_whole_slice(iterator) {
                    let block: syn::Expr = syn::parse_quote! {{
                        let mut #acc = 0usize;
                        let mut #found_one = false;
                        for (#index, #item) in #iterator.enumerate() {
                            #(#steps)*
                            let #hit: bool = #test;
                            if #hit { #acc = #index; #found_one = true; break; }
                        }
                        #fallback
                        #acc
                    }};
                    return self.lower_into(&block, target);
                }
                steps.insert(0, quote::quote!(let #index: usize = #acc;));
                let step = quote::quote! {
                    let #hit: bool = #test;
                    if #hit { #found_one = true; break; }
                    #acc = #index + 1;
                };
                let block: syn::Expr = syn::parse_quote! {{
                    let mut #acc = 0usize;
                    let mut #found_one = false;
                    for #item in #iterator {
                        #(#steps)*
                        #step
                    }
                    #fallback
                    #acc
                }};
                return self.lower_into(&block, target);
            }
            combine => {
                let product = matches!(combine, Combine::Product);
                let ty: syn::Type = match (found.ty, self.locals[target.0 as usize].annotation) {
                    (Some(ty), _) => ty.clone(),
                    (None, Some(crate::types::Ty::Scalar(scalar))) if !scalar.is_half() => {
                        syn::parse_str(scalar.rust_name()).ok()?
                    }
                    _ => {
                        let method = found.name();
                        self.cx.error_spanned_by(
                            expr,
                            format!(
                                "write the type `{method}` gives: `let total: f32 = \
                                 x.iter().{method}();` or `x.iter().{method}::<f32>()`"
                            ),
                        );
                        return None;
                    }
                };
                if product {
                    (quote::quote!(1 as #ty), quote::quote!(#acc *= #value;))
                } else {
                    (quote::quote!(0 as #ty), quote::quote!(#acc += #value;))
                }
            }
        };
        let block: syn::Expr = syn::parse_quote! {{
            let mut #acc = #start;
            for #item in #iterator {
                #(#steps)*
                #step
            }
            #acc
        }};
        self.lower_into(&block, target)
    }
}

/// Where an iterator's consuming method is named, for the values its lowering writes.
fn method_span(expr: &syn::Expr) -> proc_macro2::Span {
    match strip_parens(expr) {
        syn::Expr::MethodCall(call) => call.method.span(),
        other => syn::spanned::Spanned::span(other),
    }
}
