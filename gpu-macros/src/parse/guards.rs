//! `match` arms that bind the value (`n => n * 2`, `v @ 1..=9 => ..`) or carry a guard
//! (`v if v < 0 => ..`), rewritten in syn's terms as Rust evaluates them: the scrutinee once
//! into a hidden variable, then an `if` chain testing each arm's patterns and guard in order,
//! each body starting with its bindings. Matches without either keep their own IR (a chain of
//! comparisons with one scrutinee, see `statements.rs`).

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
            _ => false,
        }
    }
    arm.guard.is_some() || binds(&arm.pat)
}

/// Whether `expr` is a `match` this file rewrites.
pub(super) fn is_guarded_match(expr: &syn::Expr) -> bool {
    matches!(super::strip_parens(expr), syn::Expr::Match(m) if m.arms.iter().any(binds_or_guards))
}

/// Renames a binding in a guard to the hidden variable.
struct Rename<'a> {
    from: &'a syn::Ident,
    to: &'a syn::Ident,
}

impl VisitMut for Rename<'_> {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.is_ident(self.from) {
            *path = syn::Path::from(self.to.clone());
        }
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
            let test = self.pattern_test(&arm.pat, &value, &mut names)?;
            let mut guard = arm.guard.as_ref().map(|(_, guard)| (**guard).clone());
            if let Some(guard) = &mut guard {
                for name in &names {
                    Rename {
                        from: name,
                        to: &value,
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
            let block = quote!({ #(let #names = #value;)* #body });
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
    /// pattern binds.
    fn pattern_test(
        &mut self,
        pat: &syn::Pat,
        value: &syn::Ident,
        names: &mut Vec<syn::Ident>,
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
                if !names.contains(&ident.ident) {
                    names.push(ident.ident.clone());
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
                     names (`n`, `n @ 1..=9`) and `|` of them",
                );
                return None;
            }
        })
    }
}
