//! `match` arms that bind the value (`n => n * 2`, `v @ 1..=9 => ..`), carry a guard (`v if v
//! < 0 => ..`) or match a tuple's parts (`match (a > 0, b % 2) { (true, 0) => .. }`), rewritten
//! in syn's terms as Rust evaluates them: the scrutinee once into a hidden variable, then an
//! `if` chain testing each arm's patterns (a tuple's part by part) and guard in order, each body
//! starting with its bindings. Other matches keep their own IR (a chain of comparisons with one
//! scrutinee, see `statements.rs`).

use super::expressions::is_constant_name;
use super::Parser;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;

/// Whether `arm` binds a name or has a guard.
fn binds_or_guards(arm: &syn::Arm) -> bool {
    fn binds(pat: &syn::Pat) -> bool {
        match pat {
            syn::Pat::Ident(ident) => {
                ident.subpat.is_some() || !is_constant_name(&ident.ident.to_string())
            }
            syn::Pat::Or(or) => or.cases.iter().any(binds),
            syn::Pat::Paren(paren) => binds(&paren.pat),
            syn::Pat::Tuple(_) => true,
            _ => false,
        }
    }
    arm.guard.is_some() || binds(&arm.pat)
}

/// Whether `expr` names `name` anywhere.
fn mentions(expr: &syn::Expr, name: &syn::Ident) -> bool {
    struct Finder<'a>(&'a syn::Ident, bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder<'_> {
        fn visit_ident(&mut self, ident: &'ast syn::Ident) {
            if ident == self.0 {
                self.1 = true;
            }
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // `println!("{v}")` names it inside its tokens.
            if mac.tokens.to_string().contains(&self.0.to_string()) {
                self.1 = true;
            }
        }
    }
    let mut finder = Finder(name, false);
    syn::visit::Visit::visit_expr(&mut finder, expr);
    finder.1
}

/// Whether `expr` is a `match` this file rewrites.
pub(super) fn is_guarded_match(expr: &syn::Expr) -> bool {
    matches!(super::strip_parens(expr), syn::Expr::Match(m) if m.arms.iter().any(binds_or_guards))
}

/// Replaces a binding in a guard with the value it binds (the hidden variable, or a part of
/// it).
struct Rename<'a> {
    from: &'a syn::Ident,
    to: syn::Expr,
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::Path(path) = expr {
            if path.path.is_ident(self.from) {
                *expr = self.to.clone();
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

impl Parser<'_> {
    /// The `if` chain of a `match` with bindings or guards, as a block expression.
    pub(super) fn guarded_match(&mut self, m: &syn::ExprMatch) -> Option<syn::Expr> {
        let value = format_ident!("__gpu_match{}", self.fresh_names());
        let scrutinee = &m.expr;
        let mut chain = TokenStream::new();
        let mut caught_all = false;
        for (i, arm) in m.arms.iter().enumerate() {
            let mut names = Vec::new();
            let test = self.pattern_test(&arm.pat, &quote!(#value), &mut names)?;
            let mut guard = arm.guard.as_ref().map(|(_, guard)| (**guard).clone());
            if let Some(guard) = &mut guard {
                for (name, part) in &names {
                    Rename {
                        from: name,
                        to: syn::parse2(quote!((#part))).ok()?,
                    }
                    .visit_expr_mut(guard);
                }
            }
            let cond = match (&test, &guard) {
                (None, None) => None,
                (Some(test), None) => Some(quote!(#test)),
                (None, Some(guard)) => Some(quote!(#guard)),
                (Some(test), Some(guard)) => Some(quote!((#test) && (#guard))),
            };
            let body = &arm.body;
            // A name bound to a tuple's part that only the guard reads is not bound again:
            // C++ would warn of it unused (one bound to the whole value the C++ code leaves
            // out by itself).
            let whole = value.to_string();
            let (names, parts): (Vec<_>, Vec<_>) = names
                .into_iter()
                .filter(|(name, part)| part.to_string() == whole || mentions(body, name))
                .unzip();
            let block = quote!({ #(let #names = #parts;)* #body });
            let else_token = if i == 0 { quote!() } else { quote!(else) };
            match cond {
                Some(cond) => chain.extend(quote!(#else_token if #cond #block)),
                None if i == 0 => {
                    chain.extend(block);
                    caught_all = true;
                    break;
                }
                None => {
                    chain.extend(quote!(else #block));
                    caught_all = true;
                    break;
                }
            }
        }
        if !caught_all {
            chain.extend(quote!(else { unreachable!() }));
        }
        let block: syn::Expr = syn::parse_quote_spanned! {syn::spanned::Spanned::span(&m.match_token)=>
            { let #value = #scrutinee; #chain }
        };
        Some(block)
    }

    /// The test of `value` against `pat` (`None`: always matches), recording the names the
    /// pattern binds and the part of the value each binds.
    fn pattern_test(
        &mut self,
        pat: &syn::Pat,
        value: &TokenStream,
        names: &mut Vec<(syn::Ident, TokenStream)>,
    ) -> Option<Option<TokenStream>> {
        Some(match pat {
            syn::Pat::Wild(_) => None,
            syn::Pat::Paren(paren) => self.pattern_test(&paren.pat, value, names)?,
            syn::Pat::Ident(ident)
                if ident.subpat.is_none()
                    && ident.mutability.is_none()
                    && is_constant_name(&ident.ident.to_string()) =>
            {
                let name = &ident.ident;
                Some(quote!(#value == #name))
            }
            syn::Pat::Ident(ident) if ident.by_ref.is_none() => {
                if names.iter().all(|(name, _)| *name != ident.ident) {
                    names.push((ident.ident.clone(), value.clone()));
                }
                match &ident.subpat {
                    Some((_, sub)) => self.pattern_test(sub, value, names)?,
                    None => None,
                }
            }
            syn::Pat::Lit(lit) => Some(quote!(#value == #lit)),
            syn::Pat::Path(path) => Some(quote!(#value == #path)),
            syn::Pat::Range(range) => {
                let low = range.start.as_ref().map(|start| quote!(#value >= #start));
                let high = range.end.as_ref().map(|end| match range.limits {
                    syn::RangeLimits::Closed(_) => quote!(#value <= #end),
                    syn::RangeLimits::HalfOpen(_) => quote!(#value < #end),
                });
                match (low, high) {
                    (Some(low), Some(high)) => Some(quote!((#low && #high))),
                    (Some(one), None) | (None, Some(one)) => Some(one),
                    (None, None) => None,
                }
            }
            // A tuple's parts, each against its own pattern.
            syn::Pat::Tuple(tuple) => {
                let mut tests = Vec::new();
                for (k, part) in tuple.elems.iter().enumerate() {
                    let index = syn::Index::from(k);
                    if let Some(test) = self.pattern_test(part, &quote!(#value.#index), names)? {
                        tests.push(test);
                    }
                }
                if tests.is_empty() {
                    None
                } else {
                    Some(quote!((#(#tests)&&*)))
                }
            }
            syn::Pat::Or(or) => {
                let mut tests = Vec::new();
                for case in &or.cases {
                    match self.pattern_test(case, value, names)? {
                        Some(test) => tests.push(test),
                        // One alternative matches everything: so does the whole.
                        None => return Some(None),
                    }
                }
                Some(quote!((#(#tests)||*)))
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "match patterns in kernels are literals, ranges (`a..=b`), constants, `_`, \
                     names (`n`, `n @ 1..=9`), tuples of them and `|` of them",
                );
                return None;
            }
        })
    }
}
