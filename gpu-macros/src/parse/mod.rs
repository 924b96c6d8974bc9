//! Stage 1: syn's syntax tree of a `#[kernel]` fn → kernel IR.
//!
//! Everything outside the kernel language is rejected here with the user's span and a message
//! naming the construct and what to use instead. Names are resolved here too (each use of a
//! variable becomes a `LocalId`), so later stages never look at strings to find a binding.
//!
//! One `Parser` walks a function; its methods are spread over files by what they parse:
//! [`signature`] (qualifiers, generics, parameters, types), [`statements`], [`expressions`],
//! [`calls`] (methods, intrinsics, device functions) and [`constants`] (array lengths).

mod calls;
mod closures;
mod constants;
mod expressions;
mod signature;
mod statements;

pub use signature::kernel_args;

use crate::ctxt::Ctxt;
use crate::ir::*;
use quote::ToTokens;
use signature::check_signature;
use std::collections::HashMap;

/// What kernel parameters and `let` annotations may be, for messages.
pub const SUPPORTED_SCALARS: &str = "bool, i32, u32, i64, u64, usize, f32, f64";

/// Parses a kernel or device fn into IR, recording every unsupported construct in `cx`.
pub fn parse_function(cx: &Ctxt, item: &syn::ItemFn, kind: FnKind) -> Function {
    let mut parser = Parser {
        cx,
        kind,
        exprs: Vec::new(),
        locals: Vec::new(),
        scopes: vec![Vec::new()],
        consts: HashMap::new(),
        generics: Vec::new(),
        closure_bases: Vec::new(),
        closure_lets: Vec::new(),
    };
    check_signature(cx, &item.sig, kind);
    parser.generics = parser.generic_params(&item.sig.generics);
    let params = item
        .sig
        .inputs
        .iter()
        .filter_map(|input| parser.param(input))
        .collect();
    let ret = match (&item.sig.output, kind) {
        (syn::ReturnType::Type(_, ty), FnKind::Device) => parser.scalar_type(ty),
        _ => None,
    };
    let body = parser.function_body(&item.block, ret.is_some());
    let docs = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .map(|attr| attr.to_token_stream())
        .collect();
    let name_span = Loc::of(&item.sig.ident);
    Function {
        kind,
        name: item.sig.ident.to_string(),
        name_span,
        vis: item.vis.to_token_stream(),
        docs,
        params,
        ret,
        generics: parser.generics,
        body,
        exprs: parser.exprs,
        locals: parser.locals,
        file: name_span.start.file(),
        launch_bounds: None,
    }
}

/// The state of parsing one function.
struct Parser<'a> {
    cx: &'a Ctxt,
    kind: FnKind,
    exprs: Vec<Expr>,
    locals: Vec<Local>,
    /// Visible bindings, innermost scope last; later bindings shadow earlier ones.
    scopes: Vec<Vec<(String, LocalId)>>,
    /// The values of `const` items, for array lengths.
    consts: HashMap<LocalId, u128>,
    /// The kernel's generic parameters.
    generics: Vec<GenericParam>,
    /// For each closure being parsed, innermost last, its first local: older ones are captures.
    closure_bases: Vec<u32>,
    /// Names being bound to a closure (`let f = |x| ..`), which its body cannot call.
    closure_lets: Vec<String>,
}

impl Parser<'_> {
    fn push_expr(&mut self, kind: ExprKind, span: Loc) -> ExprId {
        self.exprs.push(Expr { kind, span });
        ExprId(self.exprs.len() as u32 - 1)
    }

    fn declare(&mut self, local: Local) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        let name = local.name.clone();
        self.locals.push(local);
        self.scopes
            .last_mut()
            .expect("a scope is always open")
            .push((name, id));
        id
    }

    fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, id)| *id)
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(Vec::new());
        let out = f(self);
        self.scopes.pop();
        out
    }
}

/// `expr` without the parentheses and invisible groups around it.
fn strip_parens(expr: &syn::Expr) -> &syn::Expr {
    match expr {
        syn::Expr::Paren(paren) => strip_parens(&paren.expr),
        syn::Expr::Group(group) => strip_parens(&group.expr),
        other => other,
    }
}
