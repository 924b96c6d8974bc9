//! Collects every error of one macro expansion, so a user sees all problems in one build.

use crate::ir::Loc;
use proc_macro2::{Ident, TokenStream, TokenTree};
use std::cell::RefCell;

/// The error context shared by all stages.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// Records an error underlining `loc`.
    pub fn error(&self, loc: Loc, message: impl std::fmt::Display) {
        let range: TokenStream = [
            TokenTree::Ident(Ident::new("start", loc.start)),
            TokenTree::Ident(Ident::new("end", loc.end)),
        ]
        .into_iter()
        .collect();
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(range, message));
    }

    /// Records an error spanning the tokens of `tokens` (start to end, as rustc underlines them).
    pub fn error_spanned_by(&self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, message));
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// Turns the collected errors into `compile_error!` invocations, or `None` when there are none.
    pub fn into_compile_errors(self) -> Option<TokenStream> {
        let errors = self.errors.into_inner();
        if errors.is_empty() {
            return None;
        }
        Some(errors.into_iter().map(|e| e.to_compile_error()).collect())
    }
}
