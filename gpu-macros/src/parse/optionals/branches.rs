//! Taking an option apart where the code does: `if let`, `while let`, `match`, assignments and
//! comparisons, each rewritten in syn's terms into the option's value and flag.

use super::{
    hidden_names, is_none, none_pattern, path_name, some_of, some_pattern, Rewriter, Source,
};
use crate::parse::strip_parens;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

impl Rewriter<'_, '_> {
    /// `if let Some(p) = option { a } else { b }` as `if some { let p = value; a } else { b }`.
    pub(super) fn if_let(&mut self, if_expr: &syn::ExprIf) -> Option<syn::Expr> {
        let syn::Expr::Let(binding) = &*if_expr.cond else {
            return None;
        };
        let pat = some_pattern(&binding.pat)?.clone();
        let source = self.source(&binding.expr)?;
        let mut if_expr = if_expr.clone();
        self.visit_block_mut(&mut if_expr.then_branch);
        if let Some((_, other)) = &mut if_expr.else_branch {
            self.visit_expr_mut(other);
        }
        Some(self.tested(
            source,
            &pat,
            &if_expr.then_branch,
            if_expr.else_branch.map(|(_, e)| *e),
        ))
    }

    /// `while let Some(p) = option { body }` as `loop { setup; if !some { break; } let p =
    /// value; body }`: the option is taken apart again before each iteration, as Rust does.
    pub(super) fn while_let(&mut self, while_loop: &syn::ExprWhile) -> Option<syn::Expr> {
        let syn::Expr::Let(binding) = &*while_loop.cond else {
            return None;
        };
        let pat = some_pattern(&binding.pat)?.clone();
        let Source {
            setup,
            some,
            value,
            by_ref,
            ..
        } = self.source(&binding.expr)?;
        let mut body = while_loop.body.clone();
        self.visit_block_mut(&mut body);
        let bind = bound_part(&pat, &value, by_ref, &mut body);
        let (label, stmts) = (&while_loop.label, &body.stmts);
        Some(syn::parse_quote! {
            #label loop {
                #(#setup)*
                if !(#some) {
                    break;
                }
                #bind
                #(#stmts)*
            }
        })
    }

    /// `match option { Some(p) => a, None => b }` (or `_ => b`, in either order).
    pub(super) fn matched(&mut self, match_expr: &syn::ExprMatch) -> Option<syn::Expr> {
        let [first, second] = match_expr.arms.as_slice() else {
            return None;
        };
        let (some_arm, none_arm) = match (some_pattern(&first.pat), some_pattern(&second.pat)) {
            (Some(_), None) if none_pattern(&second.pat) => (first, second),
            (None, Some(_)) if none_pattern(&first.pat) => (second, first),
            _ => return None,
        };
        let source = self.source(&match_expr.expr)?;
        if let Some((if_token, _)) = some_arm.guard.as_ref().or(none_arm.guard.as_ref()) {
            self.parser.cx.error_spanned_by(
                if_token,
                "a `match` on an `Option` takes a `Some(v) =>` and a `None =>` arm without \
                 guards: test inside the arm",
            );
            return Some(syn::Expr::Match(match_expr.clone()));
        }
        let pat = some_pattern(&some_arm.pat)?.clone();
        let (mut then_body, mut else_body) = (some_arm.body.clone(), none_arm.body.clone());
        self.visit_expr_mut(&mut then_body);
        self.visit_expr_mut(&mut else_body);
        let then_branch: syn::Block = syn::parse_quote!({ #then_body });
        let else_branch: syn::Expr = syn::parse_quote!({ #else_body });
        Some(self.tested(source, &pat, &then_branch, Some(else_branch)))
    }

    /// `if some { let p = value; then } else { other }`, after the source's setup.
    fn tested(
        &mut self,
        source: Source,
        pat: &syn::Pat,
        then_branch: &syn::Block,
        other: Option<syn::Expr>,
    ) -> syn::Expr {
        let Source {
            setup,
            some,
            value,
            by_ref,
            ..
        } = source;
        let mut then_branch = then_branch.clone();
        let bind = bound_part(pat, &value, by_ref, &mut then_branch);
        let stmts = &then_branch.stmts;
        let else_branch = other.map(|other| quote::quote!(else #other));
        let tested: syn::Expr = syn::parse_quote! {
            if #some { #bind #(#stmts)* } #else_branch
        };
        Self::with_setup(setup, tested)
    }

    /// `name = Some(v)`, `name = None` or `name = other_option` for an option local `name`.
    pub(super) fn assigned(&mut self, assign: &syn::ExprAssign) -> Option<syn::Expr> {
        let name = path_name(&assign.left).filter(|name| self.names.contains(name))?;
        let (flag, value) = hidden_names(&name);
        let at = assign.eq_token.span;
        if is_none(&assign.right) {
            return Some(syn::parse_quote_spanned!(at=> #flag = false));
        }
        if let Some(inner) = some_of(&assign.right) {
            let mut inner = inner.clone();
            self.visit_expr_mut(&mut inner);
            return Some(syn::parse_quote_spanned!(at=> { #value = #inner; #flag = true; }));
        }
        // `best = if c { Some(j) } else { None };`: each branch assigns its own option.
        if let syn::Expr::If(choice) = strip_parens(&assign.right) {
            if let Some(assigned) = self.assigned_branches(&assign.left, choice) {
                return Some(assigned);
            }
        }
        match self.source(&assign.right) {
            Some(Source {
                setup,
                some,
                value: got,
                ..
            }) => Some(syn::parse_quote_spanned!(at=> {
                #(#setup)*
                let __gpu_some = #some;
                #value = #got;
                #flag = __gpu_some;
            })),
            None => {
                self.parser.cx.error_spanned_by(
                    &assign.right,
                    format!(
                        "`{name}` is an `Option` local: assign `Some(value)`, `None` or another \
                         option (`{name} = a.checked_sub(b);`)"
                    ),
                );
                // Reported once: the statement stays as it was.
                Some(syn::Expr::Assign(assign.clone()))
            }
        }
    }

    /// `if c { a } else { b }` assigned to option local `left`: `if c { left = a; } else { left =
    /// b; }`, each branch's statements before its value kept, an `else if` chain alike; `None`
    /// for an `if` without `else`.
    fn assigned_branches(&mut self, left: &syn::Expr, choice: &syn::ExprIf) -> Option<syn::Expr> {
        let (_, other) = choice.else_branch.as_ref()?;
        let branch = |block: &syn::Block| -> Option<syn::Block> {
            let (last, before) = block.stmts.split_last()?;
            let syn::Stmt::Expr(value, None) = last else {
                return None;
            };
            Some(syn::parse_quote!({ #(#before)* #left = #value; }))
        };
        let then_branch = branch(&choice.then_branch)?;
        let else_branch: syn::Expr = match strip_parens(other) {
            syn::Expr::Block(block) => syn::Expr::Block(syn::ExprBlock {
                block: branch(&block.block)?,
                ..block.clone()
            }),
            syn::Expr::If(inner) => {
                let assigned: syn::Expr = syn::parse_quote!(#left = #inner);
                let syn::Expr::Assign(assign) = assigned else {
                    return None;
                };
                syn::parse_quote!({ #assign; })
            }
            _ => return None,
        };
        let cond = &choice.cond;
        let mut rewritten: syn::Expr = syn::parse_quote!(if #cond #then_branch else #else_branch);
        self.visit_expr_mut(&mut rewritten);
        Some(rewritten)
    }

    /// `option == None`, `option != None`, `option == Some(v)` (either side, or `!=`).
    pub(super) fn compared(&mut self, binary: &syn::ExprBinary) -> Option<syn::Expr> {
        let equal = match binary.op {
            syn::BinOp::Eq(_) => true,
            syn::BinOp::Ne(_) => false,
            _ => return None,
        };
        let (option, other) = if self.is_source(&binary.left) {
            (&binary.left, &binary.right)
        } else if self.is_source(&binary.right) {
            (&binary.right, &binary.left)
        } else {
            return None;
        };
        if !is_none(other) && some_of(other).is_none() {
            return None;
        }
        let Source {
            setup, some, value, ..
        } = self.source(option)?;
        let at = binary.op.span();
        let test: syn::Expr = match some_of(other) {
            None => syn::parse_quote_spanned!(at=> !#some),
            Some(inner) => {
                let mut inner = inner.clone();
                self.visit_expr_mut(&mut inner);
                syn::parse_quote_spanned!(at=> (#some && #value == #inner))
            }
        };
        let test = match equal {
            true => test,
            false => syn::parse_quote_spanned!(at=> !(#test)),
        };
        Some(Self::with_setup(setup, syn::parse_quote!((#test))))
    }
}

/// The `let` that binds `Some(pat)`'s part to the option's value, `None` for `_`. Where the value
/// stands for the reference Rust's option holds (`by_ref`), `&m` binds it as `m`, and `*m` of
/// a plain `m` in `body` reads it.
fn bound_part(
    pat: &syn::Pat,
    value: &syn::Expr,
    by_ref: bool,
    body: &mut syn::Block,
) -> Option<syn::Stmt> {
    let pat = match pat {
        syn::Pat::Reference(reference) if by_ref => &*reference.pat,
        pat => pat,
    };
    if let (true, syn::Pat::Ident(ident)) = (by_ref, pat) {
        crate::parse::options::DerefsOf(&ident.ident).visit_block_mut(body);
    }
    match pat {
        syn::Pat::Wild(_) => None,
        pat => Some(syn::parse_quote!(let #pat = #value;)),
    }
}
