//! `for` loops: over ranges (stepped, reversed, inclusive), and over slices and arrays, which
//! become loops over their indices; their `#[unroll]` attributes.

use super::statements::label_name;
use super::{strip_parens, Parser};
use crate::ir::*;

/// What a `for` loop over a slice or an array walks: its name, whether enumerated, walked
/// down (`.rev()`) or by steps (`.step_by(s)`).
struct Walk<'e> {
    base: &'e syn::Path,
    enumerate: bool,
    reverse: bool,
    step: Option<&'e syn::Expr>,
}

/// A walk over a slice or an array with `.copied()` / `.cloned()` (whose elements the loop
/// copies anyway) left out, and `.skip(a)` / `.take(b)` right after `iter()` read as the part
/// they walk, `x[start..end].iter()`, its bounds computed first (clamped to the length, as the
/// adapters stop there) by the `let`s pushed to `lets`, named by `fresh`. `None` when there
/// is neither.
fn trimmed_walk(
    expr: &syn::Expr,
    lets: &mut Vec<syn::Stmt>,
    fresh: &mut dyn FnMut() -> usize,
) -> Option<syn::Expr> {
    fn trim(
        expr: &syn::Expr,
        changed: &mut bool,
        lets: &mut Vec<syn::Stmt>,
        fresh: &mut dyn FnMut() -> usize,
    ) -> Option<syn::Expr> {
        let syn::Expr::MethodCall(call) = strip_parens(expr) else {
            return Some(expr.clone());
        };
        let method = call.method.to_string();
        match (method.as_str(), call.args.len()) {
            ("copied" | "cloned", 0) => {
                *changed = true;
                trim(&call.receiver, changed, lets, fresh)
            }
            ("skip" | "take", 1) => {
                // `x.iter().skip(a).take(b)`, or either alone.
                let (skip, take, iter) = match (method.as_str(), strip_parens(&call.receiver)) {
                    ("take", syn::Expr::MethodCall(inner))
                        if inner.method == "skip" && inner.args.len() == 1 =>
                    {
                        (Some(&inner.args[0]), Some(&call.args[0]), &*inner.receiver)
                    }
                    ("skip", receiver) => (Some(&call.args[0]), None, receiver),
                    (_, receiver) => (None, Some(&call.args[0]), receiver),
                };
                let syn::Expr::MethodCall(iter) = strip_parens(iter) else {
                    return None;
                };
                if iter.method != "iter" || !iter.args.is_empty() {
                    return None;
                }
                let base = &iter.receiver;
                if !matches!(strip_parens(base), syn::Expr::Path(_)) {
                    return None;
                }
                let n = fresh();
                let (len, start, end) = (
                    quote::format_ident!("__gpu_len{n}"),
                    quote::format_ident!("__gpu_start{n}"),
                    quote::format_ident!("__gpu_end{n}"),
                );
                lets.push(syn::parse_quote!(let #len: usize = #base.len();));
                let skip = skip.map_or(quote::quote!(0usize), |a| quote::quote!(#a));
                lets.push(syn::parse_quote! {
                    let #start: usize = { let a: usize = #skip; if a < #len { a } else { #len } };
                });
                let take = take.map_or(quote::quote!(#len), |b| quote::quote!(#b));
                lets.push(syn::parse_quote! {
                    let #end: usize = {
                        let b: usize = #take;
                        if b < #len - #start { #start + b } else { #len }
                    };
                });
                *changed = true;
                Some(syn::parse_quote!(#base[#start..#end].iter()))
            }
            ("enumerate" | "rev", 0) => {
                let mut call = call.clone();
                call.receiver = Box::new(trim(&call.receiver, changed, lets, fresh)?);
                Some(syn::Expr::MethodCall(call))
            }
            ("zip", 1) => {
                let mut call = call.clone();
                call.receiver = Box::new(trim(&call.receiver, changed, lets, fresh)?);
                call.args[0] = trim(&call.args[0], changed, lets, fresh)?;
                Some(syn::Expr::MethodCall(call))
            }
            _ => Some(expr.clone()),
        }
    }
    let mut changed = false;
    let walk = trim(expr, &mut changed, lets, fresh)?;
    changed.then_some(walk)
}

impl Parser<'_> {
    pub(super) fn for_stmt(&mut self, for_loop: &syn::ExprForLoop) -> Option<StmtKind> {
        if let Some(rewritten) = self.stepped_down(for_loop) {
            return self.expr_stmt(&rewritten, false);
        }
        let mut lets = Vec::new();
        let walk = trimmed_walk(&for_loop.expr, &mut lets, &mut || self.fresh_names());
        if let Some(walk) = walk {
            let mut rewritten = for_loop.clone();
            *rewritten.expr = walk;
            if lets.is_empty() {
                return self.for_stmt(&rewritten);
            }
            let block: syn::Expr = syn::parse_quote!({ #(#lets)* #rewritten });
            return self.expr_stmt(&block, false);
        }
        if let Some(rewritten) = self.rewritten_loop(for_loop) {
            return self.expr_stmt(&rewritten?, false);
        }
        if let Some(rewritten) = self.literal_or_tuple_loop(for_loop) {
            return self.expr_stmt(&rewritten, false);
        }

        let unroll = self.loop_attrs(&for_loop.attrs);
        if let Some(iterated) = self.iterated(&for_loop.expr) {
            return self.element_loop(for_loop, iterated?, unroll);
        }
        // `(a..b).rev()`: the range walked down.
        let (iterated, reverse) = match &*for_loop.expr {
            syn::Expr::MethodCall(call) if call.method == "rev" && call.args.is_empty() => {
                (&*call.receiver, true)
            }
            other => (other, false),
        };
        let (range, step) = match iterated {
            syn::Expr::MethodCall(call) if call.method == "step_by" => {
                if call.args.len() != 1 {
                    self.cx
                        .error_spanned_by(call, "`step_by` takes exactly one argument");
                    return None;
                }
                if reverse {
                    self.cx.error_spanned_by(
                        call,
                        "`.step_by(s).rev()` is not supported in kernels: count the steps up \
                         and compute the value, `for k in (0..count).rev() { let i = a + k * s; }`",
                    );
                    return None;
                }
                if let syn::Expr::MethodCall(inner) = strip_parens(&call.receiver) {
                    if inner.method == "rev" {
                        self.cx.error_spanned_by(
                            call,
                            "`.rev().step_by(s)` walks a range down in kernels (`for i in \
                             (a..b).rev().step_by(s)`): over a slice's elements, walk its \
                             indices, `for i in (0..x.len()).rev().step_by(s)`, and read `x[i]`",
                        );
                        return None;
                    }
                }
                (strip_parens(&call.receiver), Some(&call.args[0]))
            }
            other => (strip_parens(other), None),
        };
        let range = match range {
            syn::Expr::Range(range) => range,
            other => {
                self.cx.error_spanned_by(
                    other,
                    "`for` loops in kernels iterate over a range (`for i in a..b`, `a..=b`, \
                     `(a..b).step_by(s)`, `(a..b).rev()`) or over a slice or an array by its \
                     name (`for v in x.iter()`, `for (i, v) in x.iter().enumerate()`)",
                );
                return None;
            }
        };
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            self.cx.error_spanned_by(
                range,
                "a `for` range needs both bounds: `for i in a..b` or `a..=b`",
            );
            return None;
        };
        // The bounds and the step are evaluated once, before the loop.
        let start = self.lifting(true, |this| this.expr(start));
        let end = self.lifting(true, |this| this.expr(end));
        let step = step.map(|step| self.lifting(true, |this| this.expr(step)));
        let name = match &*for_loop.pat {
            syn::Pat::Ident(ident)
                if ident.by_ref.is_none()
                    && ident.subpat.is_none()
                    && ident.mutability.is_none() =>
            {
                ident.ident.to_string()
            }
            syn::Pat::Wild(_) => "_".to_string(),
            other => {
                self.cx.error_spanned_by(
                    other,
                    "the loop variable must be a plain name: `for i in a..b`",
                );
                return None;
            }
        };
        let (var, body) = self.scoped(|this| {
            let var = this.declare(Local {
                name,
                mutable: false,
                annotation: None,
                element: false,
            });
            let label = label_name(for_loop.label.as_ref());
            (
                var,
                this.in_loop(label, None, |this| this.block(&for_loop.body)),
            )
        });
        let step = match step {
            Some(step) => Some(step?),
            None => None,
        };
        Some(StmtKind::For {
            var,
            start: start?,
            end: end?,
            step,
            body,
            label: label_name(for_loop.label.as_ref()),
            unroll,
            inclusive,
            reverse,
        })
    }

    /// `for i in (a..b).rev().step_by(s)` (or `a..=b`) as the offsets from the top walked up,
    /// `for k in (0..b - a).step_by(s) { let i = b - 1 - k; .. }`, inside a test that the range
    /// is not empty (so an unsigned `b - a` cannot wrap); the bounds are computed once, first.
    fn stepped_down(&mut self, for_loop: &syn::ExprForLoop) -> Option<syn::Expr> {
        let syn::Expr::MethodCall(step) = strip_parens(&for_loop.expr) else {
            return None;
        };
        let syn::Expr::MethodCall(rev) = strip_parens(&step.receiver) else {
            return None;
        };
        let syn::Expr::Range(range) = strip_parens(&rev.receiver) else {
            return None;
        };
        if step.method != "step_by" || step.args.len() != 1 || rev.method != "rev" {
            return None;
        }
        if !rev.args.is_empty() {
            return None;
        }
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return None;
        };
        let n = self.fresh_names();
        let at = syn::spanned::Spanned::span(&step.method);
        let (lo, hi, k) = (
            quote::format_ident!("__gpu_lo{n}", span = at),
            quote::format_ident!("__gpu_hi{n}", span = at),
            quote::format_ident!("__gpu_k{n}", span = at),
        );
        let s = &step.args[0];
        let (pat, label, body) = (&for_loop.pat, &for_loop.label, &for_loop.body.stmts);
        let (nonempty, offsets, top) = match range.limits {
            syn::RangeLimits::HalfOpen(_) => (
                quote::quote_spanned!(at=> #hi > #lo),
                quote::quote_spanned!(at=> (0..#hi - #lo)),
                quote::quote_spanned!(at=> #hi - 1),
            ),
            syn::RangeLimits::Closed(_) => (
                quote::quote_spanned!(at=> #hi >= #lo),
                quote::quote_spanned!(at=> (0..=#hi - #lo)),
                quote::quote_spanned!(at=> #hi),
            ),
        };
        Some(syn::parse_quote_spanned! {at=> {
            let #lo = #start;
            let #hi = #end;
            if #nonempty {
                #label for #k in #offsets.step_by(#s) {
                    let #pat = #top - #k;
                    #(#body)*
                }
            }
        }})
    }

    /// What a `for` loop over a slice or an array iterates: `x`, `&x`, `x.iter()` (then
    /// `None`) or `x.iter().enumerate()` (then `Some`, with whether it is enumerated); `None`
    /// for anything else (a range); `Some(None)` when reported here.
    fn iterated<'e>(&mut self, expr: &'e syn::Expr) -> Option<Option<Walk<'e>>> {
        // `x.iter().step_by(s)` (or `.enumerate().step_by(s)`, whose indices stay the
        // elements' own): every `s`-th element.
        let (expr, step) = match strip_parens(expr) {
            syn::Expr::MethodCall(call) if call.method == "step_by" && call.args.len() == 1 => {
                match strip_parens(&call.receiver) {
                    syn::Expr::MethodCall(inner)
                        if matches!(inner.method.to_string().as_str(), "iter" | "enumerate") =>
                    {
                        (&*call.receiver, Some(&call.args[0]))
                    }
                    _ => return None,
                }
            }
            other => (other, None),
        };
        // `x.iter().rev()` (or `.enumerate().rev()`, whose indices stay the elements' own):
        // the same loop walked down.
        let (expr, reverse) = match strip_parens(expr) {
            syn::Expr::MethodCall(call)
                if call.method == "rev" && call.args.is_empty() && step.is_some() =>
            {
                self.cx.error_spanned_by(
                    call,
                    "`.rev().step_by(s)` over elements is not supported in kernels: walk the \
                     indices, `for i in (0..x.len()).rev().step_by(s)`",
                );
                return Some(None);
            }
            syn::Expr::MethodCall(call) if call.method == "rev" && call.args.is_empty() => {
                match strip_parens(&call.receiver) {
                    syn::Expr::MethodCall(inner)
                        if matches!(inner.method.to_string().as_str(), "iter" | "enumerate") =>
                    {
                        (&*call.receiver, true)
                    }
                    _ => return None,
                }
            }
            other => (other, false),
        };
        // `x.iter_mut()`, enumerated or not.
        let mutable = match strip_parens(expr) {
            syn::Expr::MethodCall(call) if call.method == "enumerate" => {
                strip_parens(&call.receiver)
            }
            other => other,
        };
        if let syn::Expr::MethodCall(call) = mutable {
            if call.method == "iter_mut" {
                self.cx.error_spanned_by(
                    call,
                    "`iter_mut` is not supported in kernels: write the elements by index, \
                     `for i in 0..x.len() { x[i] = ...; }`",
                );
                return Some(None);
            }
        }
        let (base, enumerate) = match strip_parens(expr) {
            syn::Expr::MethodCall(call) if call.method == "enumerate" && call.args.is_empty() => {
                match strip_parens(&call.receiver) {
                    syn::Expr::MethodCall(inner) if inner.method == "iter" => {
                        (&*inner.receiver, true)
                    }
                    _ => return None,
                }
            }
            syn::Expr::MethodCall(call)
                if matches!(call.method.to_string().as_str(), "iter" | "into_iter")
                    && call.args.is_empty() =>
            {
                (&*call.receiver, false)
            }
            syn::Expr::Reference(reference) if reference.mutability.is_none() => {
                (&*reference.expr, false)
            }
            syn::Expr::Path(_) => (expr, false),
            _ => return None,
        };
        match strip_parens(base) {
            syn::Expr::Path(path) if path.qself.is_none() && path.path.get_ident().is_some() => {
                Some(Some(Walk {
                    base: &path.path,
                    enumerate,
                    reverse,
                    step,
                }))
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "a `for` loop iterates over a slice or an array by its name (`for v in \
                     x.iter()`), a field or an element of one (`cell.items.iter()`): bind this \
                     one with `let` first, or iterate by index",
                );
                Some(None)
            }
        }
    }

    /// A loop's pattern split into the index's (with `.enumerate()`: the first of `(i, v)`) and
    /// the element's; `usage` reported where an enumerated loop binds no pair.
    pub(super) fn enumerated<'p>(
        &self,
        pat: &'p syn::Pat,
        enumerate: bool,
        usage: &str,
    ) -> Option<(Option<&'p syn::Pat>, &'p syn::Pat)> {
        match (pat, enumerate) {
            (syn::Pat::Tuple(tuple), true) if tuple.elems.len() == 2 => {
                Some((Some(&tuple.elems[0]), &tuple.elems[1]))
            }
            (pat, false) => Some((None, pat)),
            (other, true) => {
                self.cx.error_spanned_by(other, usage);
                None
            }
        }
    }

    /// `for v in x.iter() { .. }` (or `x`, `&x`; `for (i, v) in x.iter().enumerate()`, `&v`
    /// for `v`) as `for i in 0..x.len() { let v = x[i]; .. }`: `v` is a copy of the element,
    /// which `*v` reads as it would read Rust's reference.
    fn element_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
        Walk {
            base,
            enumerate,
            reverse,
            step,
        }: Walk<'_>,
        unroll: Unroll,
    ) -> Option<StmtKind> {
        const USAGE: &str = "iterating over a slice, the loop binds a name, `&name` or `_` \
                             (with `.enumerate()`: `(i, name)`)";
        let (index_pat, element_pat) = self.enumerated(&for_loop.pat, enumerate, USAGE)?;
        let name_of = |pat: &syn::Pat| -> Option<String> {
            let pat = match pat {
                syn::Pat::Reference(reference) if reference.mutability.is_none() => &*reference.pat,
                other => other,
            };
            match pat {
                syn::Pat::Ident(ident)
                    if ident.by_ref.is_none()
                        && ident.subpat.is_none()
                        && ident.mutability.is_none() =>
                {
                    Some(ident.ident.to_string())
                }
                syn::Pat::Wild(_) => Some("_".to_string()),
                _ => None,
            }
        };
        let element = name_of(element_pat);
        let index = match index_pat {
            Some(pat) => name_of(pat).filter(|_| !matches!(pat, syn::Pat::Reference(_))),
            None => Some(String::new()),
        };
        let (Some(element), Some(mut index)) = (element, index) else {
            self.cx.error_spanned_by(&for_loop.pat, USAGE);
            return None;
        };
        // The element is read at an index of its own, named apart from the user's names.
        if index.is_empty() || (index == "_" && element != "_") {
            index = format!("__{}_index", element.trim_start_matches('_'));
        }
        let span = Loc::of(&for_loop.expr);
        let base_expr = syn::Expr::Path(syn::ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: base.clone(),
        });
        let for_len = self.expr(&base_expr)?;
        let step = match step {
            Some(step) => Some(self.lifting(true, |this| this.expr(step))?),
            None => None,
        };
        self.note_table(for_len);
        let end = self.push_expr(ExprKind::Len(for_len), span);
        let start = self.push_expr(
            ExprKind::Lit(Lit::Int {
                value: 0,
                suffix: None,
            }),
            span,
        );
        // The element's value, read before the loop's names shadow the slice's.
        let for_index = self.expr(&base_expr)?;
        let (var, body) = self.scoped(|this| {
            let var = this.declare(Local {
                name: index,
                mutable: false,
                annotation: None,
                element: false,
            });
            let read = if element == "_" {
                None
            } else {
                let at = this.push_expr(ExprKind::Local(var), span);
                let value = this.push_expr(
                    ExprKind::Index {
                        base: for_index,
                        index: at,
                    },
                    span,
                );
                let local = this.declare(Local {
                    name: element,
                    mutable: false,
                    annotation: None,
                    element: true,
                });
                Some(Stmt {
                    kind: StmtKind::Let { local, init: value },
                    span: Loc::of(&for_loop.pat),
                })
            };
            let label = label_name(for_loop.label.as_ref());
            let mut body = this.in_loop(label, None, |this| this.block(&for_loop.body));
            body.stmts.splice(0..0, read);
            (var, body)
        });
        Some(StmtKind::For {
            var,
            start,
            end,
            step,
            body,
            label: label_name(for_loop.label.as_ref()),
            unroll,
            inclusive: false,
            reverse,
        })
    }

    /// `for v in [a, b, c]` (or `.iter()` of it): the array bound with `let` first, then walked
    /// by name; `for (a, b) in x.iter()` (or `&(a, b)`, with `.enumerate()` `(i, (a, b))`) over
    /// an array of tuples: each element bound by a hidden name, then destructured.
    fn literal_or_tuple_loop(&mut self, for_loop: &syn::ExprForLoop) -> Option<syn::Expr> {
        // The array under `&`, `.iter()`, `.into_iter()`, `.enumerate()` and `.rev()`, put in
        // `slot` (and replaced by `name`, when given).
        fn literal_array(
            expr: &mut syn::Expr,
            name: Option<&syn::Ident>,
            slot: &mut Option<syn::Expr>,
        ) {
            match expr {
                syn::Expr::Paren(paren) => literal_array(&mut paren.expr, name, slot),
                syn::Expr::Reference(reference) if reference.mutability.is_none() => {
                    literal_array(&mut reference.expr, name, slot)
                }
                syn::Expr::MethodCall(call)
                    if call.args.is_empty()
                        && matches!(
                            call.method.to_string().as_str(),
                            "iter" | "into_iter" | "enumerate" | "rev"
                        ) =>
                {
                    literal_array(&mut call.receiver, name, slot)
                }
                syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
                    *slot = Some(expr.clone());
                    if let Some(name) = name {
                        *expr = syn::parse_quote!(#name);
                    }
                }
                _ => {}
            }
        }
        let mut iterated = (*for_loop.expr).clone();
        let mut literal = None;
        literal_array(&mut iterated, None, &mut literal);
        let literal = match literal {
            Some(_) => {
                let name = quote::format_ident!("__gpu_array{}", self.fresh_names());
                let mut array = None;
                literal_array(&mut iterated, Some(&name), &mut array);
                array.map(|array| (name, array))
            }
            None => None,
        };
        // Only a loop over an array's or a slice's elements (by name, after the adapters).
        fn by_name(expr: &syn::Expr) -> bool {
            match strip_parens(expr) {
                syn::Expr::Reference(reference) => by_name(&reference.expr),
                syn::Expr::MethodCall(call)
                    if call.args.is_empty()
                        && matches!(
                            call.method.to_string().as_str(),
                            "iter" | "into_iter" | "enumerate" | "rev"
                        ) =>
                {
                    by_name(&call.receiver)
                }
                syn::Expr::Path(_) => true,
                _ => false,
            }
        }
        if !by_name(&iterated) {
            return None;
        }
        let enumerate = matches!(strip_parens(&iterated), syn::Expr::MethodCall(call)
            if call.method == "enumerate"
                || matches!(strip_parens(&call.receiver), syn::Expr::MethodCall(inner) if inner.method == "enumerate"));
        let mut rewritten = for_loop.clone();
        rewritten.expr = Box::new(iterated);
        // A tuple or array pattern for the element (`(k, w)`, `[dx, dy]`): a hidden name,
        // destructured first in the body.
        let element = match (&mut *rewritten.pat, enumerate) {
            (syn::Pat::Tuple(pair), true) if pair.elems.len() == 2 => pair.elems.iter_mut().nth(1),
            (pat, false) => Some(pat),
            _ => None,
        };
        let mut destructured = false;
        if let Some(element) = element {
            let parts = |pat: &syn::Pat| match pat {
                syn::Pat::Tuple(_) | syn::Pat::Slice(_) => Some(pat.clone()),
                _ => None,
            };
            let tuple = match &*element {
                syn::Pat::Reference(reference) if reference.mutability.is_none() => {
                    parts(&reference.pat)
                }
                pat => parts(pat),
            };
            if let Some(tuple) = tuple {
                let name = quote::format_ident!("__gpu_element{}", self.fresh_names());
                *element = syn::parse_quote!(#name);
                let stmts = &rewritten.body.stmts;
                rewritten.body = syn::parse_quote!({ let #tuple = #name; #(#stmts)* });
                destructured = true;
            }
        }
        match literal {
            Some((name, array)) => Some(syn::parse_quote!({ let #name = #array; #rewritten })),
            None if destructured => Some(syn::Expr::ForLoop(rewritten)),
            None => None,
        }
    }

    /// The attributes a `for` loop accepts: `#[unroll]` or `#[unroll(N)]`, once.
    fn loop_attrs(&mut self, attrs: &[syn::Attribute]) -> Unroll {
        const USAGE: &str = "the only attribute a `for` loop takes in kernels is `#[unroll]` \
                             (unroll fully) or `#[unroll(N)]` (unroll by a factor of N, a positive integer)";
        let mut unroll = Unroll::Default;
        for attr in attrs {
            // Lint levels (`#[allow(clippy::needless_range_loop)]`) and `#[rustfmt::skip]`
            // speak to tools that read the Rust; the generated code has nothing to say to them.
            let path = attr.path();
            let tool = path.segments.len() == 2 && path.segments[0].ident == "rustfmt";
            if tool
                || ["allow", "expect", "warn", "deny", "forbid"]
                    .iter()
                    .any(|l| path.is_ident(l))
            {
                continue;
            }
            let this = match &attr.meta {
                syn::Meta::Path(path) if path.is_ident("unroll") => Some(Unroll::Full),
                syn::Meta::List(list) if list.path.is_ident("unroll") => {
                    match list.parse_args::<syn::LitInt>() {
                        Ok(count) if count.suffix().is_empty() => {
                            match count.base10_parse::<u32>() {
                                Ok(n) if n > 0 => Some(Unroll::Times(n)),
                                _ => {
                                    self.cx.error_spanned_by(
                                        &count,
                                        "`#[unroll(N)]` takes a positive count that fits a `u32`; \
                                         write `#[unroll]` to unroll fully",
                                    );
                                    None
                                }
                            }
                        }
                        _ => {
                            self.cx.error_spanned_by(&list.tokens, USAGE);
                            None
                        }
                    }
                }
                _ => {
                    self.cx.error_spanned_by(attr, USAGE);
                    None
                }
            };
            if let Some(this) = this {
                if unroll != Unroll::Default {
                    self.cx
                        .error_spanned_by(attr, "a `for` loop takes one `#[unroll]` attribute");
                }
                unroll = this;
            }
        }
        unroll
    }
}
