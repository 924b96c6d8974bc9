//! `Option` values a kernel keeps or takes apart at once, as a value and a flag.
//!
//! An `Option` local (`let mut best: Option<usize> = None;`, or a `let` of another option
//! below) is two hidden variables, its value and whether it is `Some`; `best = Some(j)` and
//! `best = None` assign them, and `if let Some(j) = best { .. }`, `match best { Some(j) => ..,
//! None => .. }`, `.unwrap_or(d)`, `.unwrap()`, `.expect("..")`, `.unwrap_or_default()`,
//! `.is_some()` and `.is_none()` read them. `a.checked_add(b)` (`_sub`, `_mul`), taken apart the
//! same ways or bound by a `let`, is the wrapping result and the test that it did not wrap,
//! written with the saturating and wrapping methods. Each statement is rewritten in syn's terms
//! before it is parsed, so no later stage knows about options.

mod branches;

use super::statements::pattern_names;
use super::{strip_parens, Parser};
use crate::ir::*;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

/// Rust's message for `unwrap` of `None`.
const UNWRAP_NONE: &str = "called `Option::unwrap()` on a `None` value";

/// An `Option` local: its name, the hidden variable of its flag, and the value its `None`
/// starts with (from the annotation; `unwrap_or_default` reads it too).
pub(super) struct OptionLocal {
    name: String,
    flag: LocalId,
    zero: Option<syn::Expr>,
}

/// An `Option` being taken apart: statements that bind its parts, whether it is `Some`, its
/// value (meaningful only then), and its type's zero when known.
struct Source {
    setup: Vec<syn::Stmt>,
    some: syn::Expr,
    value: syn::Expr,
    zero: Option<syn::Expr>,
    /// Whether Rust's option holds a reference (`x.iter().max()`), which the value stands for:
    /// `Some(&m)` binds it, and `*m` of `Some(m)` reads it.
    by_ref: bool,
}

/// The iterator methods that give an `Option` of what they find.
const FINDERS: [(&str, usize); 8] = [
    ("position", 1),
    ("find", 1),
    ("max", 0),
    ("min", 0),
    ("max_by", 1),
    ("min_by", 1),
    ("max_by_key", 1),
    ("min_by_key", 1),
];

/// Whether `expr` is an iterator's option (`x.iter().position(|&v| v == k)`, `.max()`, `.min()`
/// and their `_by` / `_by_key` forms, then `.copied()` or `.cloned()`) over what a `for` loop
/// walks: `Some(true)` where Rust's option holds a reference to an element.
fn iterator_option(expr: &syn::Expr) -> Option<bool> {
    let syn::Expr::MethodCall(call) = strip_parens(expr) else {
        return None;
    };
    let (call, copied) = match call.method.to_string().as_str() {
        "copied" | "cloned" if call.args.is_empty() => match strip_parens(&call.receiver) {
            syn::Expr::MethodCall(inner) => (inner, true),
            _ => return None,
        },
        _ => (call, false),
    };
    let method = call.method.to_string();
    if call.turbofish.is_some() || !FINDERS.contains(&(method.as_str(), call.args.len())) {
        return None;
    }
    // `.copied()`, `.map(..)` and `.filter(..)` before it, as the walk's consumers take them.
    let mut walk = strip_parens(&call.receiver);
    let mut values = copied;
    while let syn::Expr::MethodCall(inner) = walk {
        match (inner.method.to_string().as_str(), inner.args.len()) {
            ("copied" | "cloned" | "map", _) => values = true,
            ("filter", 1) => {}
            _ => break,
        }
        walk = strip_parens(&inner.receiver);
    }
    let by_ref = super::consumers::walks(walk)?;
    Some(by_ref && !values && method != "position")
}

/// Whether `tokens` may take apart an iterator's option (`if let Some(i) = x.iter().position(..)`,
/// `match x.iter().max() { .. }`): they name one of the methods and `Some`.
fn mentions_finder(tokens: &proc_macro2::TokenStream) -> bool {
    fn scan(tokens: &proc_macro2::TokenStream, finder: &mut bool, some: &mut bool) {
        for tree in tokens.clone() {
            match tree {
                proc_macro2::TokenTree::Ident(ident) => {
                    let text = ident.to_string();
                    *finder |= FINDERS.iter().any(|(name, _)| *name == text);
                    *some |= text == "Some";
                }
                proc_macro2::TokenTree::Group(group) => scan(&group.stream(), finder, some),
                _ => {}
            }
        }
    }
    let (mut finder, mut some) = (false, false);
    scan(tokens, &mut finder, &mut some);
    finder && some
}

/// The hidden names of option local `name`'s flag and value.
fn hidden_names(name: &str) -> (syn::Ident, syn::Ident) {
    (
        quote::format_ident!("__gpu_some_{}", name),
        quote::format_ident!("__gpu_value_{}", name),
    )
}

/// `T` of an `Option<T>` annotation.
fn option_type(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => match args.args.first() {
            Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The value a `None` of type `ty` holds: zero, or `false`; `None` for other types.
fn zero_of(ty: &syn::Type) -> Option<syn::Expr> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let name = path.path.get_ident()?.to_string();
    Some(match name.as_str() {
        "f32" | "f64" => syn::parse_quote!(0.0),
        "f16" | "bf16" => syn::parse_quote!(#ty::ZERO),
        "bool" => syn::parse_quote!(false),
        "i8" | "u8" | "i16" | "u16" | "i32" | "u32" | "i64" | "u64" | "usize" | "isize" => {
            syn::parse_quote!(0)
        }
        _ => return None,
    })
}

/// `Some(e)`'s `e`.
fn some_of(expr: &syn::Expr) -> Option<&syn::Expr> {
    match strip_parens(expr) {
        syn::Expr::Call(call) if call.args.len() == 1 => match &*call.func {
            syn::Expr::Path(path) if path.path.is_ident("Some") => Some(&call.args[0]),
            _ => None,
        },
        _ => None,
    }
}

fn is_none(expr: &syn::Expr) -> bool {
    matches!(strip_parens(expr), syn::Expr::Path(path) if path.path.is_ident("None"))
}

/// The `p` of a `Some(p)` pattern.
fn some_pattern(pat: &syn::Pat) -> Option<&syn::Pat> {
    match pat {
        syn::Pat::TupleStruct(some) if some.path.is_ident("Some") && some.elems.len() == 1 => {
            Some(&some.elems[0])
        }
        syn::Pat::Paren(paren) => some_pattern(&paren.pat),
        _ => None,
    }
}

/// Whether a `match` arm's pattern is `None` or `_`.
fn none_pattern(pat: &syn::Pat) -> bool {
    match pat {
        syn::Pat::Ident(ident) => ident.ident == "None" && ident.subpat.is_none(),
        syn::Pat::Path(path) => path.path.is_ident("None"),
        syn::Pat::Wild(_) => true,
        _ => false,
    }
}

/// The name a plain path expression reads.
fn path_name(expr: &syn::Expr) -> Option<String> {
    match strip_parens(expr) {
        syn::Expr::Path(path) if path.qself.is_none() => {
            path.path.get_ident().map(|ident| ident.to_string())
        }
        _ => None,
    }
}

/// Whether any `Option` form of this file could be in `tokens`.
fn mentions_any(tokens: &proc_macro2::TokenStream, names: &[String]) -> bool {
    tokens.clone().into_iter().any(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) => {
            let text = ident.to_string();
            text.starts_with("checked_") || names.contains(&text)
        }
        proc_macro2::TokenTree::Group(group) => mentions_any(&group.stream(), names),
        _ => false,
    })
}

impl Parser<'_> {
    /// The option locals in scope (not shadowed), by name.
    fn options_in_scope(&self) -> Vec<String> {
        self.options
            .iter()
            .filter(|option| self.lookup(&option.name) == Some(option.flag))
            .map(|option| option.name.clone())
            .collect()
    }

    /// `stmt` parsed with its options taken apart, or `None` when it holds none.
    pub(super) fn option_stmts(&mut self, stmt: &syn::Stmt) -> Option<Vec<Stmt>> {
        let names = self.options_in_scope();
        let tokens = stmt.to_token_stream();
        if !mentions_any(&tokens, &names) && !binds_option(stmt) && !mentions_finder(&tokens) {
            return None;
        }
        if let syn::Stmt::Local(local) = stmt {
            if let Some(stmts) = self.option_let(local, &names) {
                return Some(stmts);
            }
        }
        let mut rewritten = stmt.clone();
        Rewriter::new(self, names).visit_stmt_mut(&mut rewritten);
        Some(self.with_prelude(|this| this.stmt(&rewritten)))
    }

    /// `expr` (a block's final value) with its options taken apart, when it holds any.
    pub(super) fn option_expr(&mut self, expr: &syn::Expr) -> Option<syn::Expr> {
        let names = self.options_in_scope();
        let tokens = expr.to_token_stream();
        if !mentions_any(&tokens, &names) && !mentions_finder(&tokens) {
            return None;
        }
        let mut rewritten = expr.clone();
        Rewriter::new(self, names).visit_expr_mut(&mut rewritten);
        Some(rewritten)
    }

    /// `let [mut] name[: Option<T>] = init;` where `init` is `None`, `Some(v)` or another
    /// option: the hidden value and flag, then `name` in scope as the option. `None` when the
    /// `let` binds no option.
    fn option_let(&mut self, local: &syn::Local, names: &[String]) -> Option<Vec<Stmt>> {
        let (pat, annotation) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        let inner = annotation.and_then(option_type);
        let init = local.init.as_ref().map(|init| &*init.expr);
        let source = {
            let mut rewriter = Rewriter::new(self, names.to_vec());
            init.and_then(|init| rewriter.source(init))
        };
        let is_option = inner.is_some()
            || init.is_some_and(|init| is_none(init) || some_of(init).is_some())
            || source.is_some();
        if !is_option {
            return None;
        }
        let syn::Pat::Ident(ident) = pat else {
            self.cx.error_spanned_by(
                pat,
                "an `Option` is bound to one name: `let mut best: Option<usize> = None;`",
            );
            self.declare_rejected(pattern_names(pat));
            return Some(Vec::new());
        };
        let name = ident.ident.to_string();
        let (flag, value) = hidden_names(&name);
        let zero = inner.and_then(zero_of);
        if inner.is_some() && zero.is_none() {
            self.cx.error_spanned_by(
                annotation,
                "an `Option` local holds a number or `bool` (`Option<usize>`, `Option<f32>`)",
            );
            self.declare_rejected(vec![name]);
            return Some(Vec::new());
        }
        let ty = inner.map(|ty| quote::quote!(: #ty));
        let at = ident.ident.span();
        let mut lets: Vec<syn::Stmt> = Vec::new();
        match (init, source) {
            (Some(init), _) if is_none(init) => {
                let Some(zero) = &zero else {
                    self.cx.error_spanned_by(
                        init,
                        format!(
                            "write the `Option`'s type, which `None` does not say: `let mut \
                             {name}: Option<usize> = None;`"
                        ),
                    );
                    // Declared anyway (typed by its assignments), so its uses report nothing.
                    lets.push(syn::parse_quote_spanned!(at=> let mut #value;));
                    lets.push(syn::parse_quote_spanned!(at=> let mut #flag = false;));
                    return self.bind_option(name, &lets, None);
                };
                lets.push(syn::parse_quote_spanned!(at=> let mut #value #ty = #zero;));
                lets.push(syn::parse_quote_spanned!(at=> let mut #flag = false;));
            }
            (Some(init), _) if some_of(init).is_some() => {
                let mut inner_value = some_of(init).cloned()?;
                Rewriter::new(self, names.to_vec()).visit_expr_mut(&mut inner_value);
                lets.push(syn::parse_quote_spanned!(at=> let mut #value #ty = #inner_value;));
                lets.push(syn::parse_quote_spanned!(at=> let mut #flag = true;));
            }
            (_, Some(source)) => {
                lets.extend(source.setup);
                let (some, got) = (source.some, source.value);
                lets.push(syn::parse_quote_spanned!(at=> let mut #value #ty = #got;));
                lets.push(syn::parse_quote_spanned!(at=> let mut #flag = #some;));
            }
            (init, None) => {
                let tokens = init.map_or_else(|| pat.to_token_stream(), ToTokens::to_token_stream);
                self.cx.error_spanned_by(
                    tokens,
                    format!(
                        "an `Option` local starts as `None`, `Some(value)` or a checked \
                         operation (`a.checked_sub(b)`): `let mut {name}: Option<usize> = None;`"
                    ),
                );
                return Some(Vec::new());
            }
        }
        self.bind_option(name, &lets, zero)
    }

    /// Parses `lets` (which declare option `name`'s hidden value and flag) and puts `name` in
    /// scope as that option.
    fn bind_option(
        &mut self,
        name: String,
        lets: &[syn::Stmt],
        zero: Option<syn::Expr>,
    ) -> Option<Vec<Stmt>> {
        let mut stmts = Vec::new();
        for stmt in lets {
            stmts.extend(self.with_prelude(|this| this.stmt(stmt)));
        }
        let (flag, _) = hidden_names(&name);
        let flag = self.lookup(&flag.to_string())?;
        self.bind(name.clone(), flag);
        self.options.push(OptionLocal { name, flag, zero });
        Some(stmts)
    }
}

/// Whether `stmt` is a `let` that could bind an option (checked without the scope).
fn binds_option(stmt: &syn::Stmt) -> bool {
    let syn::Stmt::Local(local) = stmt else {
        return false;
    };
    let annotated = matches!(&local.pat, syn::Pat::Type(typed) if option_type(&typed.ty).is_some());
    annotated
        || local.init.as_ref().is_some_and(|init| {
            is_none(&init.expr)
                || some_of(&init.expr).is_some()
                || iterator_option(&init.expr).is_some()
        })
}

/// Rewrites one statement's options (see the module), reporting what it cannot take apart.
struct Rewriter<'p, 'a> {
    parser: &'p mut Parser<'a>,
    /// The option locals in scope where the rewriter is, innermost binding last.
    names: Vec<String>,
}

impl<'p, 'a> Rewriter<'p, 'a> {
    fn new(parser: &'p mut Parser<'a>, names: Vec<String>) -> Self {
        Rewriter { parser, names }
    }

    fn zero_of_local(&self, name: &str) -> Option<syn::Expr> {
        self.parser
            .options
            .iter()
            .rev()
            .find(|option| option.name == name)
            .and_then(|option| option.zero.clone())
    }

    /// A name for a hidden variable of this function.
    fn hidden(&mut self, base: &str) -> syn::Ident {
        self.parser.hidden += 1;
        quote::format_ident!("__gpu_{}{}", base, self.parser.hidden)
    }

    /// Whether `expr` is an option (see `source`), without rewriting it.
    fn is_source(&self, expr: &syn::Expr) -> bool {
        if iterator_option(expr).is_some() {
            return true;
        }
        match strip_parens(expr) {
            syn::Expr::MethodCall(call) => {
                matches!(
                    call.method.to_string().as_str(),
                    "checked_add" | "checked_sub" | "checked_mul"
                ) && call.args.len() == 1
            }
            other => path_name(other).is_some_and(|name| self.names.contains(&name)),
        }
    }

    /// `expr` as an option being taken apart: an option local, or a checked operation (whose
    /// operands are rewritten first).
    fn source(&mut self, expr: &syn::Expr) -> Option<Source> {
        if let Some(name) = path_name(expr).filter(|name| self.names.contains(name)) {
            let (some, value) = hidden_names(&name);
            return Some(Source {
                setup: Vec::new(),
                some: syn::parse_quote!(#some),
                value: syn::parse_quote!(#value),
                zero: self.zero_of_local(&name),
                by_ref: false,
            });
        }
        if let Some(by_ref) = iterator_option(expr) {
            // The walk that finds it sets the flag (see `consumers.rs`); the value is what
            // `.unwrap_or_default()` would give, meaningful only where the flag is set.
            let at = expr.span();
            let (flag, value) = (self.hidden("found"), self.hidden("finding"));
            let method = quote::format_ident!("{}", super::consumers::FLAG_METHOD, span = at);
            let mut walk = strip_parens(expr).clone();
            self.visit_expr_mut(&mut walk);
            let setup = vec![
                syn::parse_quote_spanned!(at=> let mut #flag = false;),
                syn::parse_quote_spanned!(at=> let #value = #walk.#method(#flag);),
            ];
            return Some(Source {
                setup,
                some: syn::parse_quote!(#flag),
                value: syn::parse_quote!(#value),
                zero: None,
                by_ref,
            });
        }
        let syn::Expr::MethodCall(call) = strip_parens(expr) else {
            return None;
        };
        let op = match call.method.to_string().as_str() {
            "checked_add" => "add",
            "checked_sub" => "sub",
            "checked_mul" => "mul",
            _ => return None,
        };
        if call.args.len() != 1 {
            return None;
        }
        let at = call.method.span();
        let mut setup = Vec::new();
        let mut operand = |this: &mut Self, expr: &syn::Expr, base: &str| -> syn::Expr {
            let mut expr = expr.clone();
            this.visit_expr_mut(&mut expr);
            if matches!(strip_parens(&expr), syn::Expr::Path(_) | syn::Expr::Lit(_)) {
                return expr;
            }
            let name = this.hidden(base);
            setup.push(syn::parse_quote_spanned!(at=> let #name = #expr;));
            syn::parse_quote!(#name)
        };
        let a = operand(self, &call.receiver, "a");
        let b = operand(self, &call.args[0], "b");
        let wrapping = quote::format_ident!("wrapping_{}", op, span = at);
        let saturating = quote::format_ident!("saturating_{}", op, span = at);
        let value: syn::Expr = syn::parse_quote_spanned!(at=> #a.#wrapping(#b));
        // The saturating result differs from the wrapped one exactly when the operation
        // overflows, except for a product that wraps onto the bound it saturates at; that one
        // no longer divides back (and `b == 0` never overflows).
        let some: syn::Expr = if op == "mul" {
            syn::parse_quote_spanned!(at=>
                (#a.#saturating(#b) == #value && (#b == 0 || #value / #b == #a)))
        } else {
            syn::parse_quote_spanned!(at=> (#a.#saturating(#b) == #value))
        };
        Some(Source {
            setup,
            some,
            value,
            zero: Some(syn::parse_quote_spanned!(at=> (#a ^ #a))),
            by_ref: false,
        })
    }

    /// `setup` then `value`, as one expression.
    fn with_setup(setup: Vec<syn::Stmt>, value: syn::Expr) -> syn::Expr {
        if setup.is_empty() {
            return value;
        }
        syn::parse_quote!({ #(#setup)* #value })
    }

    /// A method that takes an option apart: `unwrap_or`, `unwrap`, `expect`, ...
    fn consumed(&mut self, call: &syn::ExprMethodCall) -> Option<syn::Expr> {
        let method = call.method.to_string();
        let known = matches!(
            (method.as_str(), call.args.len()),
            ("unwrap_or", 1)
                | ("map_or", 2)
                | ("unwrap", 0)
                | ("expect", 1)
                | ("unwrap_or_default", 0)
                | ("is_some", 0)
                | ("is_none", 0)
        );
        // An iterator's option unwrapped at once is the walk's own (`consumers.rs`).
        if !known || iterator_option(&call.receiver).is_some() {
            return None;
        }
        let Source {
            mut setup,
            some,
            value,
            zero,
            ..
        } = self.source(&call.receiver)?;
        let at = call.method.span();
        let expr: syn::Expr = match method.as_str() {
            "map_or" => {
                // `option.map_or(d, |v| f(v))`: the default first, as Rust computes it.
                let syn::Expr::Closure(closure) = strip_parens(&call.args[1]) else {
                    self.parser.cx.error_spanned_by(
                        &call.args[1],
                        "`map_or` takes a closure here: `option.map_or(d, |v| v + 1)`",
                    );
                    return Some(call.receiver.as_ref().clone());
                };
                if closure.inputs.len() != 1 {
                    self.parser
                        .cx
                        .error_spanned_by(closure, "`map_or`'s closure takes one parameter");
                    return Some(call.receiver.as_ref().clone());
                }
                let mut fallback = call.args[0].clone();
                self.visit_expr_mut(&mut fallback);
                let name = self.hidden("or");
                setup.push(syn::parse_quote_spanned!(at=> let #name = #fallback;));
                let pat = &closure.inputs[0];
                let mut body = (*closure.body).clone();
                self.visit_expr_mut(&mut body);
                syn::parse_quote_spanned!(at=> (if #some { let #pat = #value; #body } else { #name }))
            }
            "is_some" => syn::parse_quote_spanned!(at=> (#some)),
            "is_none" => syn::parse_quote_spanned!(at=> (!#some)),
            "unwrap_or" | "unwrap_or_default" => {
                let mut fallback = match (method.as_str(), zero) {
                    ("unwrap_or", _) => call.args[0].clone(),
                    (_, Some(zero)) => zero,
                    (_, None) => {
                        self.parser.cx.error_spanned_by(
                            &call.method,
                            "`unwrap_or_default` needs the `Option`'s type: annotate it \
                             (`Option<usize>`) or write `.unwrap_or(0)`",
                        );
                        call.receiver.as_ref().clone()
                    }
                };
                self.visit_expr_mut(&mut fallback);
                // Rust computes the argument before it looks at the option.
                if !matches!(
                    strip_parens(&fallback),
                    syn::Expr::Path(_) | syn::Expr::Lit(_)
                ) {
                    let name = self.hidden("or");
                    setup.push(syn::parse_quote_spanned!(at=> let #name = #fallback;));
                    fallback = syn::parse_quote!(#name);
                }
                syn::parse_quote_spanned!(at=> (if #some { #value } else { #fallback }))
            }
            _ => {
                let message = match method.as_str() {
                    "expect" => match strip_parens(&call.args[0]) {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(text),
                            ..
                        }) => text.value(),
                        other => {
                            self.parser.cx.error_spanned_by(
                                other,
                                "`expect` takes a string literal in kernels",
                            );
                            String::new()
                        }
                    },
                    _ => UNWRAP_NONE.to_string(),
                };
                let message = message.replace('{', "{{").replace('}', "}}");
                setup.push(syn::parse_quote_spanned!(at=> if !#some { panic!(#message); }));
                return Some(Self::with_setup(setup, value));
            }
        };
        Some(Self::with_setup(setup, expr))
    }

    /// Reports a use of an option local that takes it apart in none of the supported ways.
    fn misused(&mut self, expr: &syn::Expr) {
        let name = path_name(expr).unwrap_or_default();
        self.parser.cx.error_spanned_by(
            expr,
            format!(
                "`{name}` is an `Option` local, kept as a value and a flag: take it apart where \
                 it is read (`if let Some(v) = {name}`, `match {name} {{ Some(v) => .., None => \
                 .. }}`, `{name}.unwrap_or(d)`, `{name}.unwrap()`, `{name}.is_some()`)"
            ),
        );
    }

    /// Runs `f` with the names `pat` binds no longer meaning option locals.
    fn shadowed_by<R>(&mut self, names: Vec<String>, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.names.clone();
        self.names.retain(|name| !names.contains(name));
        let out = f(self);
        self.names = saved;
        out
    }
}

impl VisitMut for Rewriter<'_, '_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        let rewritten = match strip_parens(expr) {
            syn::Expr::MethodCall(call) => self.consumed(call),
            syn::Expr::If(if_expr) => self.if_let(if_expr),
            syn::Expr::While(while_loop) => self.while_let(while_loop),
            syn::Expr::Match(match_expr) => self.matched(match_expr),
            syn::Expr::Assign(assign) => self.assigned(assign),
            syn::Expr::Binary(binary) => self.compared(binary),
            syn::Expr::Path(_) if path_name(expr).is_some_and(|n| self.names.contains(&n)) => {
                self.misused(expr);
                // Reported here: read as the value, so nothing later reports it again.
                let (_, value) = hidden_names(&path_name(expr).unwrap_or_default());
                *expr = syn::parse_quote!(#value);
                return;
            }
            _ => None,
        };
        if let Some(rewritten) = rewritten {
            *expr = rewritten;
            return;
        }
        match expr {
            syn::Expr::MethodCall(call) if call.method.to_string().starts_with("checked_") => {
                let method = call.method.to_string();
                self.parser.cx.error_spanned_by(
                    &call.method,
                    format!(
                        "`{method}` gives an `Option`: take it apart where it is made \
                         (`.unwrap_or(v)`, `if let Some(x) = a.{method}(b)`, `match`) or bind it \
                         with `let`; `checked_add`, `checked_sub` and `checked_mul` are supported"
                    ),
                );
            }
            syn::Expr::Closure(closure) => {
                let names = closure.inputs.iter().flat_map(pattern_names).collect();
                self.shadowed_by(names, |this| this.visit_expr_mut(&mut closure.body));
            }
            // `while let` is reported as such; its condition is not taken apart here.
            syn::Expr::While(while_loop) if matches!(&*while_loop.cond, syn::Expr::Let(_)) => {
                self.visit_block_mut(&mut while_loop.body);
            }
            syn::Expr::ForLoop(for_loop) => {
                self.visit_expr_mut(&mut for_loop.expr);
                let names = pattern_names(&for_loop.pat);
                self.shadowed_by(names, |this| this.visit_block_mut(&mut for_loop.body));
            }
            other => syn::visit_mut::visit_expr_mut(self, other),
        }
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        let names = pattern_names(&arm.pat);
        self.shadowed_by(names, |this| syn::visit_mut::visit_arm_mut(this, arm));
    }

    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let saved = self.names.clone();
        for stmt in &mut block.stmts {
            match stmt {
                // A `let` of an option inside is rewritten when its block is parsed.
                syn::Stmt::Local(local) => {
                    let binds = binds_option(&syn::Stmt::Local(local.clone()))
                        || local
                            .init
                            .as_ref()
                            .is_some_and(|init| self.is_source(&init.expr));
                    if let Some(init) = local.init.as_mut().filter(|_| !binds) {
                        self.visit_expr_mut(&mut init.expr);
                    }
                    let names = pattern_names(&local.pat);
                    self.names.retain(|name| !names.contains(name));
                }
                other => self.visit_stmt_mut(other),
            }
        }
        self.names = saved;
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        if let Some(init) = &mut local.init {
            self.visit_expr_mut(&mut init.expr);
        }
    }

    // Items and macros' insides are not the kernel's code to rewrite here.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
