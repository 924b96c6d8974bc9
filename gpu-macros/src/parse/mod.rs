//! Stage 1: syn's syntax tree of a `#[kernel]` fn → kernel IR.
//!
//! Everything outside the kernel language is rejected here with the user's span and a message
//! naming the construct and what to use instead. Names are resolved here too (each use of a
//! variable becomes a `LocalId`), so later stages never look at strings to find a binding.
//!
//! One `Parser` walks a function; its methods are spread over files by what they parse:
//! [`signature`] (qualifiers, generics, parameters, types), [`statements`], [`expressions`],
//! [`calls`] (methods, intrinsics, device functions), [`format`] (assertions and printing),
//! [`constants`] (array lengths) and [`outer`] (constants defined outside the function).

mod adapters;
mod calls;
mod chunks;
mod closures;
mod constant_tables;
mod constants;
mod consumers;
mod destructure;
mod element_ops;
mod expressions;
mod format;
mod guards;
mod items;
mod literals;
mod loops;
mod optionals;
mod options;
mod ordering;
mod outer;
mod signature;
mod statements;
mod values;

pub use items::{
    default_impl, host_impl, impl_macro_name, impl_problems, parse_enum, parse_impl, parse_struct,
    repr_align, struct_length_constants, struct_problems, TypeEnv, OPERATOR_TRAITS,
};
pub use outer::set_launch_bounds;
pub use signature::kernel_args;

use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::types::{LenExpr, Ty};
use quote::ToTokens;
use signature::check_signature;
use std::collections::HashMap;

/// What kernel parameters and `let` annotations may be, for messages.
pub const SUPPORTED_SCALARS: &str =
    "bool, i8, u8, i16, u16, i32, u32, i64, u64, usize, isize, f32, f64";

/// Parses a kernel or device fn into IR, recording every unsupported construct in `cx`; the
/// `#[device]` types it may name are in `env`, and `owner` is the type whose `impl` it is in.
pub fn parse_function(
    cx: &Ctxt,
    env: &TypeEnv,
    item: &syn::ItemFn,
    kind: FnKind,
    owner: Option<Owner>,
) -> Function {
    let desugared = signature::desugared(item);
    let item = desugared.as_ref().unwrap_or(item);
    // A method's outer constants are named after the function as the IR names it.
    let name = match &owner {
        Some(owner) => method_name(&owner.ty.describe(), &owner.method),
        None => item.sig.ident.to_string(),
    };
    let mut parser = Parser::new(cx, env, kind, owner.as_ref().map(|o| o.ty), &name);
    check_signature(cx, &item.sig, kind);
    parser.generics = parser.generic_params(&item.sig.generics);
    let params = item
        .sig
        .inputs
        .iter()
        .filter_map(|input| parser.param(input))
        .collect::<Vec<_>>();
    parser.check_constant_total(&params);
    let ret = match (&item.sig.output, kind) {
        (syn::ReturnType::Type(_, ty), FnKind::Device) => parser.value_type(ty),
        _ => None,
    };
    parser.ret = ret;
    // Written with a return type (even one rejected above), its tail is its value: no second
    // message about an unused value.
    let returns_value = matches!(item.sig.output, syn::ReturnType::Type(..));
    let body = parser.function_body(&item.block, returns_value);
    let docs = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .map(|attr| attr.to_token_stream())
        .collect();
    let name_span = Loc::of(&item.sig.ident);
    Function {
        kind,
        name,
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
        owner,
        outer: parser.outer,
        conversions: parser.conversions,
    }
}

/// The state of parsing one function.
struct Parser<'a> {
    cx: &'a Ctxt,
    kind: FnKind,
    /// The function's name, which keys its outer constants.
    function: &'static str,
    /// The constants from outside the function that its code names.
    outer: Vec<OuterUse>,
    exprs: Vec<Expr>,
    locals: Vec<Local>,
    /// Visible bindings, innermost scope last; later bindings shadow earlier ones.
    scopes: Vec<Vec<(String, LocalId)>>,
    /// The values of integer `const` items, for array lengths.
    consts: HashMap<LocalId, LenExpr>,
    /// The kernel's generic parameters.
    generics: Vec<GenericParam>,
    /// The `#[device]` types the function may name.
    env: &'a TypeEnv,
    /// What `Self` means: the type of the `impl` being parsed.
    self_ty: Option<Ty>,
    /// How many assertions the function has so far: the next one's number.
    assertions: u32,
    /// For each closure being parsed, innermost last, its first local: older ones are captures.
    closure_bases: Vec<u32>,
    /// Names being bound to a closure (`let f = |x| ..`), which its body cannot call.
    closure_lets: Vec<String>,
    /// Statements that must run before the one being parsed: they compute its values.
    prelude: Vec<Stmt>,
    /// The loops around the code being parsed, innermost last.
    loops: Vec<values::LoopFrame>,
    /// How many hidden names rewritten loops have taken, so each is the function's own.
    hidden: usize,
    /// Whether an iterator consumed into a value may be computed before the current
    /// statement (see `values.rs`).
    lift: bool,
    /// The type the function (or the closure being parsed) returns, where it is written.
    ret: Option<Ty>,
    /// `u32::from(x)` conversions, checked once types are known.
    conversions: Vec<(ExprId, crate::types::Scalar, Loc)>,
    /// The `Option` locals declared so far (see `optionals/`).
    options: Vec<optionals::OptionLocal>,
}

impl<'a> Parser<'a> {
    fn new(
        cx: &'a Ctxt,
        env: &'a TypeEnv,
        kind: FnKind,
        self_ty: Option<Ty>,
        name: &str,
    ) -> Parser<'a> {
        Parser {
            cx,
            kind,
            // Lives as long as the compilation, as the IR's other interned names.
            function: Box::leak(name.into()),
            outer: Vec::new(),
            exprs: Vec::new(),
            locals: Vec::new(),
            scopes: vec![Vec::new()],
            consts: HashMap::new(),
            generics: Vec::new(),
            env,
            self_ty,
            assertions: 0,
            closure_bases: Vec::new(),
            closure_lets: Vec::new(),
            prelude: Vec::new(),
            loops: Vec::new(),
            hidden: 0,
            lift: false,
            ret: None,
            conversions: Vec::new(),
            options: Vec::new(),
        }
    }
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
        self.bind(name, id);
        id
    }

    /// Puts `local` in scope under `name`.
    fn bind(&mut self, name: String, local: LocalId) {
        self.scopes
            .last_mut()
            .expect("a scope is always open")
            .push((name, local));
    }

    /// Declares the names of a rejected parameter or `let`, so that their uses are not
    /// reported as unknown names as well.
    fn declare_rejected(&mut self, names: Vec<String>) {
        for name in names {
            self.declare(Local {
                name,
                mutable: false,
                annotation: None,
                element: false,
            });
        }
    }

    /// "kernel" or "device function", for messages.
    fn what(&self) -> &'static str {
        match self.kind {
            FnKind::Kernel => "kernel",
            FnKind::Device => "device function",
        }
    }

    /// "kernels" or "device functions", for messages.
    fn what_plural(&self) -> &'static str {
        match self.kind {
            FnKind::Kernel => "kernels",
            FnKind::Device => "device functions",
        }
    }

    /// The attribute that marks the function: `kernel` or `device`.
    fn attribute(&self) -> &'static str {
        match self.kind {
            FnKind::Kernel => "kernel",
            FnKind::Device => "device",
        }
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
