//! Stage 1: syn's syntax tree of a `#[kernel]` fn → kernel IR.
//!
//! Everything outside the kernel language is rejected here with the user's span and a message
//! naming the construct and what to use instead. Names are resolved here too (each use of a
//! variable becomes a `LocalId`), so later stages never look at strings to find a binding.

use crate::ctxt::Ctxt;
use crate::intrinsics::{Arg, Arity, Op, Signature};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::ToTokens;
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

fn check_signature(cx: &Ctxt, sig: &syn::Signature, kind: FnKind) {
    let what = match kind {
        FnKind::Kernel => "kernels",
        FnKind::Device => "device functions",
    };
    if let Some(token) = &sig.constness {
        cx.error_spanned_by(
            token,
            format!("{what} cannot be `const fn`: remove `const`"),
        );
    }
    if let Some(token) = &sig.asyncness {
        cx.error_spanned_by(
            token,
            format!("{what} cannot be `async fn`: remove `async`"),
        );
    }
    if let Some(token) = &sig.unsafety {
        cx.error_spanned_by(
            token,
            format!("{what} are safe functions: remove `unsafe` (the generated launcher is safe to call)"),
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            format!("{what} take no ABI: remove `extern`; the macro chooses the CUDA entry point"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("{what} cannot be variadic"));
    }
    if kind == FnKind::Device && !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "generic device functions are not supported yet: write them for concrete types \
             (bool, i32, u32, i64, u64, usize, f32, f64), or make the kernel generic",
        );
    }
    if let Some(clause) = &sig.generics.where_clause {
        cx.error_spanned_by(
            clause,
            format!("{what} take bounds inline: `<T: Float>` instead of a `where` clause"),
        );
    }
    if let (syn::ReturnType::Type(_, ty), FnKind::Kernel) = (&sig.output, kind) {
        cx.error_spanned_by(
            ty,
            "kernels cannot return a value: write results into a `&mut [T]` parameter",
        );
    }
}

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

    // ---- parameters -------------------------------------------------------------------

    /// `<T: Float, const N: usize>`: type parameters bounded by `Float`, `Integer` or `Number`,
    /// and `usize` const parameters.
    /// (A device function's are recorded too, so its rejection is the only message.)
    fn generic_params(&mut self, generics: &syn::Generics) -> Vec<GenericParam> {
        let mut params = Vec::new();
        for (index, param) in generics.params.iter().enumerate() {
            // The names live as long as the compilation: they become `&'static str` in the IR.
            let leak = |name: String| -> &'static str { Box::leak(name.into_boxed_str()) };
            match param {
                syn::GenericParam::Type(ty) => {
                    let bounds: Vec<String> = ty
                        .bounds
                        .iter()
                        .filter_map(|b| match b {
                            syn::TypeParamBound::Trait(t) => {
                                t.path.segments.last().map(|s| s.ident.to_string())
                            }
                            _ => None,
                        })
                        .collect();
                    let bound = match bounds
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .as_slice()
                    {
                        ["Float"] => Bound::Float,
                        ["Integer"] => Bound::Integer,
                        ["Number"] => Bound::Number,
                        _ => {
                            self.cx.error_spanned_by(
                                ty,
                                format!(
                                    "give `{}` one bound: `Float` (f32, f64), `Integer` (i32, u32, i64, u64, usize) \
                                     or `Number` (any of them)",
                                    ty.ident
                                ),
                            );
                            Bound::Number
                        }
                    };
                    params.push(GenericParam::Type(Generic {
                        index: index as u8,
                        bound,
                        name: leak(ty.ident.to_string()),
                    }));
                }
                syn::GenericParam::Const(constant) => {
                    if constant.ty.to_token_stream().to_string() != "usize" {
                        self.cx.error_spanned_by(
                            &constant.ty,
                            "const parameters of kernels are `usize`: `const N: usize`",
                        );
                    }
                    params.push(GenericParam::Const(leak(constant.ident.to_string())));
                }
                syn::GenericParam::Lifetime(lifetime) => {
                    self.cx.error_spanned_by(
                        lifetime,
                        "kernels take no lifetime parameters: slices are borrowed for the launch",
                    );
                }
            }
        }
        params
    }

    fn generic_type(&self, name: &str) -> Option<Generic> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Type(generic) if generic.name == name => Some(*generic),
            _ => None,
        })
    }

    fn generic_const(&self, name: &str) -> Option<&'static str> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Const(n) if *n == name => Some(*n),
            _ => None,
        })
    }

    fn param(&mut self, input: &syn::FnArg) -> Option<Param> {
        let typed = match input {
            syn::FnArg::Receiver(receiver) => {
                self.cx.error_spanned_by(
                    receiver,
                    "kernels cannot take `self`: write a free function with `#[kernel]`",
                );
                return None;
            }
            syn::FnArg::Typed(typed) => typed,
        };
        for attr in &typed.attrs {
            self.cx
                .error_spanned_by(attr, "attributes on kernel parameters are not supported");
        }
        let (name, mutable) = match &*typed.pat {
            syn::Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (pat.ident.to_string(), pat.mutability.is_some())
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "kernel parameters must be plain names such as `x: &[f32]`; patterns are not supported",
                );
                return None;
            }
        };
        let ty = self.param_type(&typed.ty)?;
        if mutable && matches!(ty, Ty::Slice { .. }) {
            self.cx.error_spanned_by(
                &typed.pat,
                "a slice parameter cannot be rebound: remove `mut` (write `x: &mut [T]` to write its elements)",
            );
        }
        let span = Loc::of(typed);
        let local = self.declare(Local {
            name,
            mutable,
            annotation: Some(ty),
        });
        Some(Param { local, ty, span })
    }

    fn param_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        match ty {
            // A `$t:ty` from a `macro_rules!` arrives wrapped in an invisible group.
            syn::Type::Group(group) => self.param_type(&group.elem),
            syn::Type::Reference(reference) => {
                let mutable = reference.mutability.is_some();
                match &*reference.elem {
                    syn::Type::Slice(slice) => {
                        let elem = self.scalar_type(&slice.elem)?;
                        Some(Ty::Slice { elem, mutable })
                    }
                    inner if mutable => {
                        self.cx.error_spanned_by(
                            ty,
                            format!(
                                "`&mut {}` parameters are not supported: a kernel cannot write through a \
                                 reference to a scalar; write results into a slice such as `&mut [{}]`",
                                inner.to_token_stream(),
                                inner.to_token_stream()
                            ),
                        );
                        None
                    }
                    inner => {
                        self.cx.error_spanned_by(
                            ty,
                            format!(
                                "scalar parameters are passed by value: write `{}` instead of `&{}`",
                                inner.to_token_stream(),
                                inner.to_token_stream()
                            ),
                        );
                        None
                    }
                }
            }
            syn::Type::Path(path) if path.qself.is_none() && is_named(path, "Vec") => {
                self.cx.error_spanned_by(
                    ty,
                    "`Vec` cannot be passed to a kernel: take a slice (`&[T]` or `&mut [T]`) and pass a `DeviceBuffer<T>` at launch",
                );
                None
            }
            syn::Type::Path(_) => self.scalar_type(ty).map(Ty::Scalar),
            syn::Type::Array(_) => {
                self.cx.error_spanned_by(
                    ty,
                    "array parameters are not supported: pass a slice `&[T]` (a `DeviceBuffer<T>` at launch)",
                );
                None
            }
            _ => {
                self.cx.error_spanned_by(
                    ty,
                    format!(
                        "unsupported parameter type `{}`: kernel parameters are scalars ({SUPPORTED_SCALARS}) \
                         or slices of them (`&[T]`, `&mut [T]`)",
                        ty.to_token_stream()
                    ),
                );
                None
            }
        }
    }

    fn scalar_type(&mut self, ty: &syn::Type) -> Option<Scalar> {
        let name = match ty {
            syn::Type::Path(path) if path.qself.is_none() => path
                .path
                .get_ident()
                .map(|ident| ident.to_string())
                .or_else(|| {
                    // `core::primitive::f32` and the like
                    let last = path.path.segments.last()?;
                    last.arguments
                        .is_none()
                        .then(|| last.ident.to_string())
                        .filter(|name| Scalar::from_rust_name(name).is_some())
                }),
            syn::Type::Paren(paren) => return self.scalar_type(&paren.elem),
            syn::Type::Group(group) => return self.scalar_type(&group.elem),
            _ => None,
        };
        if let Some(generic) = name.as_deref().and_then(|n| self.generic_type(n)) {
            return Some(Scalar::Generic(generic));
        }
        match name.as_deref().and_then(Scalar::from_rust_name) {
            Some(scalar) => Some(scalar),
            None => {
                let written = ty.to_token_stream().to_string();
                let hint = match written.as_str() {
                    "i8" | "i16" | "u8" | "u16" | "i128" | "u128" | "isize" | "char" => {
                        format!("`{written}` is not supported in kernels")
                    }
                    _ => format!("unsupported type `{written}`"),
                };
                self.cx.error_spanned_by(
                    ty,
                    format!("{hint}; the scalar types are {SUPPORTED_SCALARS}"),
                );
                None
            }
        }
    }

    // ---- statements ------------------------------------------------------------------

    /// The body of the function; a device function's final expression is its return value.
    fn function_body(&mut self, block: &syn::Block, returns_value: bool) -> Block {
        if !returns_value {
            return self.block(block);
        }
        self.scoped(|this| {
            let mut stmts = Vec::new();
            let count = block.stmts.len();
            for (i, stmt) in block.stmts.iter().enumerate() {
                match stmt {
                    syn::Stmt::Expr(expr, None) if i + 1 == count && is_tail_value(expr) => {
                        if let Some(value) = this.expr(expr) {
                            stmts.push(Stmt {
                                kind: StmtKind::Return(Some(value)),
                                span: Loc::of(expr),
                            });
                        }
                    }
                    other => stmts.extend(this.stmt(other)),
                }
            }
            Block { stmts }
        })
    }

    fn block(&mut self, block: &syn::Block) -> Block {
        self.scoped(|this| {
            let mut stmts = Vec::new();
            for stmt in &block.stmts {
                if let Some(stmt) = this.stmt(stmt) {
                    stmts.push(stmt);
                }
            }
            Block { stmts }
        })
    }

    fn stmt(&mut self, stmt: &syn::Stmt) -> Option<Stmt> {
        let span = Loc::of(stmt);
        let kind = match stmt {
            syn::Stmt::Local(local) => self.let_stmt(local)?,
            syn::Stmt::Item(syn::Item::Const(item)) => self.const_item(item)?,
            syn::Stmt::Item(item) => {
                self.cx.error_spanned_by(
                    item,
                    "items (fn, const, struct, use, ...) inside a kernel are not supported: move it out of the kernel",
                );
                return None;
            }
            syn::Stmt::Macro(mac) => {
                self.macro_error(&mac.mac);
                return None;
            }
            syn::Stmt::Expr(expr, semi) => self.expr_stmt(expr, semi.is_none())?,
        };
        Some(Stmt { kind, span })
    }

    fn macro_error(&mut self, mac: &syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        self.cx.error_spanned_by(
            mac,
            format!(
                "macros such as `{name}!` are not supported in kernels: they expand to code the GPU cannot run"
            ),
        );
    }

    fn let_stmt(&mut self, local: &syn::Local) -> Option<StmtKind> {
        let (pat, annotation) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        let (name, mutable) = match pat {
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                (ident.ident.to_string(), ident.mutability.is_some())
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "only simple bindings are supported: `let x = ...;` or `let mut x: T = ...;` (no patterns)",
                );
                // Its names are declared anyway, so their uses don't each report a missing name.
                for name in pattern_names(other) {
                    self.declare(Local {
                        name,
                        mutable: false,
                        annotation: None,
                    });
                }
                return None;
            }
        };
        let annotation = match annotation {
            Some(syn::Type::Array(array)) => {
                let elem = self.scalar_type(&array.elem)?;
                let len = self.length(&array.len)?;
                Some(Ty::Array { elem, len })
            }
            Some(ty) => Some(Ty::Scalar(self.scalar_type(ty)?)),
            None => None,
        };
        let init = match &local.init {
            Some(init) => {
                if let Some((_, diverge)) = &init.diverge {
                    self.cx
                        .error_spanned_by(diverge, "`let ... else` is not supported in kernels");
                }
                // The initializer sees the bindings before this one (`let x = x + 1;` shadows).
                self.expr(&init.expr)
            }
            None => {
                self.cx.error_spanned_by(
                    local,
                    format!(
                        "`{name}` needs an initial value: write `let {}{name} = ...;`",
                        if mutable { "mut " } else { "" }
                    ),
                );
                None
            }
        };
        // Declared even when the initializer failed, so later uses don't report a missing name.
        let local = self.declare(Local {
            name,
            mutable,
            annotation,
        });
        Some(StmtKind::Let { local, init: init? })
    }

    /// `const N: usize = 16;`: a constant usable in array lengths.
    fn const_item(&mut self, item: &syn::ItemConst) -> Option<StmtKind> {
        let ty = self.scalar_type(&item.ty)?;
        let init = self.expr(&item.expr)?;
        let value = if ty.is_int() {
            Some(self.const_value(&item.expr)?)
        } else {
            None
        };
        let local = self.declare(Local {
            name: item.ident.to_string(),
            mutable: false,
            annotation: Some(Ty::Scalar(ty)),
        });
        if let Some(value) = value {
            self.consts.insert(local, value);
        }
        Some(StmtKind::Let { local, init })
    }

    /// Evaluates a constant expression: integer literals, `const` items and arithmetic on them.
    fn const_value(&mut self, expr: &syn::Expr) -> Option<u128> {
        let value = self.try_const_value(expr);
        if value.is_none() {
            self.cx.error_spanned_by(
                expr,
                "expected a constant: an integer literal, a `const` item, or arithmetic on them",
            );
        }
        value
    }

    fn try_const_value(&self, expr: &syn::Expr) -> Option<u128> {
        match strip_parens(expr) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => int.base10_parse().ok(),
            syn::Expr::Path(path) => {
                let local = self.lookup(&path.path.get_ident()?.to_string())?;
                self.consts.get(&local).copied()
            }
            syn::Expr::Cast(cast) => self.try_const_value(&cast.expr),
            syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => self.try_const_value(inner),
                _ => None,
            },
            syn::Expr::Binary(binary) => {
                let l = self.try_const_value(&binary.left)?;
                let r = self.try_const_value(&binary.right)?;
                match binary.op {
                    syn::BinOp::Add(_) => l.checked_add(r),
                    syn::BinOp::Sub(_) => l.checked_sub(r),
                    syn::BinOp::Mul(_) => l.checked_mul(r),
                    syn::BinOp::Div(_) => l.checked_div(r),
                    syn::BinOp::Rem(_) => l.checked_rem(r),
                    syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                    syn::BinOp::Shr(_) => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// An array length or a const generic argument: a constant, or a const parameter.
    fn length(&mut self, expr: &syn::Expr) -> Option<Len> {
        if let syn::Expr::Path(path) = strip_parens(expr) {
            if let Some(name) = path
                .path
                .get_ident()
                .and_then(|i| self.generic_const(&i.to_string()))
            {
                return Some(Len::Param(name));
            }
        }
        let value = self.const_value(expr)?;
        match u64::try_from(value) {
            Ok(len) if len > 0 => Some(Len::Known(len)),
            _ => {
                self.cx
                    .error_spanned_by(expr, "the length must be between 1 and u64::MAX");
                None
            }
        }
    }

    /// An expression in statement position. `tail` is true when it ends a block without `;`.
    fn expr_stmt(&mut self, expr: &syn::Expr, tail: bool) -> Option<StmtKind> {
        match expr {
            syn::Expr::Assign(assign) => {
                let place = self.place(&assign.left)?;
                let value = self.expr(&assign.right)?;
                Some(StmtKind::Assign {
                    place,
                    op: None,
                    value,
                })
            }
            syn::Expr::Binary(binary) if compound_op(&binary.op).is_some() => {
                let place = self.place(&binary.left)?;
                let value = self.expr(&binary.right)?;
                Some(StmtKind::Assign {
                    place,
                    op: compound_op(&binary.op),
                    value,
                })
            }
            syn::Expr::If(if_expr) => self.if_stmt(if_expr),
            syn::Expr::While(while_expr) => {
                let label = label_name(while_expr.label.as_ref());
                if let syn::Expr::Let(let_expr) = &*while_expr.cond {
                    self.cx.error_spanned_by(
                        let_expr,
                        "`while let` is not supported in kernels: use `while condition { ... }`",
                    );
                    return None;
                }
                let cond = self.expr(&while_expr.cond);
                let body = self.block(&while_expr.body);
                Some(StmtKind::While {
                    cond: cond?,
                    body,
                    label,
                })
            }
            syn::Expr::Loop(loop_expr) => {
                let body = self.block(&loop_expr.body);
                Some(StmtKind::Loop {
                    body,
                    label: label_name(loop_expr.label.as_ref()),
                })
            }
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.expr(&match_expr.expr);
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    let body = match &*arm.body {
                        syn::Expr::Block(block) if block.label.is_none() => {
                            self.block(&block.block)
                        }
                        other => {
                            let span = Loc::of(other);
                            let stmt = self.scoped(|this| this.expr_stmt(other, false));
                            Block {
                                stmts: stmt.map(|kind| Stmt { kind, span }).into_iter().collect(),
                            }
                        }
                    };
                    arms.push((patterns, body));
                }
                Some(StmtKind::Match {
                    scrutinee: scrutinee?,
                    arms,
                })
            }
            syn::Expr::ForLoop(for_loop) => self.for_stmt(for_loop),
            syn::Expr::Break(brk) => {
                if let Some(value) = &brk.expr {
                    self.cx.error_spanned_by(
                        value,
                        "`break` with a value is not supported: loops in kernels have no value",
                    );
                }
                Some(StmtKind::Break(
                    brk.label.as_ref().map(|l| l.ident.to_string()),
                ))
            }
            syn::Expr::Continue(cont) => Some(StmtKind::Continue(
                cont.label.as_ref().map(|l| l.ident.to_string()),
            )),
            syn::Expr::Return(ret) => match &ret.expr {
                Some(value) if self.kind == FnKind::Kernel => {
                    self.cx.error_spanned_by(
                        value,
                        "kernels return nothing: write `return;` and store results in a `&mut [T]` parameter",
                    );
                    None
                }
                Some(value) => Some(StmtKind::Return(Some(self.expr(value)?))),
                None => Some(StmtKind::Return(None)),
            },
            syn::Expr::Block(block) if block.label.is_none() => {
                Some(StmtKind::Block(self.block(&block.block)))
            }
            syn::Expr::Macro(mac) => {
                self.macro_error(&mac.mac);
                None
            }
            other if tail && is_value_expr(other) => {
                // A value at the end of a block would be the block's result, but kernels and the
                // blocks of `if`/loops in statement position produce nothing.
                self.cx.error_spanned_by(
                    other,
                    "this value is unused: kernels return nothing; end the statement with `;` \
                     or store the value with `let` or into a `&mut [T]` element",
                );
                None
            }
            other => self.expr(other).map(StmtKind::Expr),
        }
    }

    /// The patterns of one arm: literals, ranges, `_`, joined with `|`.
    fn arm_patterns(&mut self, arm: &syn::Arm) -> Option<Vec<Pattern>> {
        if let Some((_, guard)) = &arm.guard {
            self.cx.error_spanned_by(
                guard,
                "match guards are not supported in kernels: use `if` inside the arm",
            );
            return None;
        }
        let mut patterns = Vec::new();
        let mut pending = vec![&arm.pat];
        while let Some(pat) = pending.pop() {
            match pat {
                syn::Pat::Or(or) => pending.extend(or.cases.iter().rev()),
                syn::Pat::Wild(_) => patterns.push(Pattern::Wild),
                syn::Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                    patterns.push(Pattern::Wild)
                }
                syn::Pat::Lit(lit) => {
                    patterns.push(Pattern::Value(self.expr(&lit.clone().into())?))
                }
                syn::Pat::Range(range) => {
                    let (Some(start), Some(end)) = (&range.start, &range.end) else {
                        self.cx
                            .error_spanned_by(range, "range patterns need both ends: `a..=b`");
                        return None;
                    };
                    patterns.push(Pattern::Range {
                        start: self.expr(start)?,
                        end: self.expr(end)?,
                        inclusive: matches!(range.limits, syn::RangeLimits::Closed(_)),
                    });
                }
                other => {
                    self.cx.error_spanned_by(
                        other,
                        "match patterns in kernels are literals, ranges (`a..=b`), `_` and `|` of them",
                    );
                    return None;
                }
            }
        }
        patterns.reverse();
        Some(patterns)
    }

    fn if_stmt(&mut self, if_expr: &syn::ExprIf) -> Option<StmtKind> {
        let cond = self.condition(&if_expr.cond);
        let then_block = self.block(&if_expr.then_branch);
        let else_block = match &if_expr.else_branch {
            None => None,
            Some((_, else_expr)) => match &**else_expr {
                syn::Expr::Block(block) => Some(self.block(&block.block)),
                syn::Expr::If(nested) => {
                    let span = Loc::of(nested);
                    let nested = self.scoped(|this| this.if_stmt(nested));
                    Some(Block {
                        stmts: nested.map(|kind| Stmt { kind, span }).into_iter().collect(),
                    })
                }
                other => {
                    self.cx
                        .error_spanned_by(other, "expected a block after `else`");
                    None
                }
            },
        };
        Some(StmtKind::If {
            cond: cond?,
            then_block,
            else_block,
        })
    }

    fn condition(&mut self, cond: &syn::Expr) -> Option<ExprId> {
        if let syn::Expr::Let(let_expr) = cond {
            self.cx.error_spanned_by(
                let_expr,
                "`if let` is not supported in kernels: use a boolean condition",
            );
            return None;
        }
        self.expr(cond)
    }

    fn for_stmt(&mut self, for_loop: &syn::ExprForLoop) -> Option<StmtKind> {
        let unroll = self.loop_attrs(&for_loop.attrs);
        let (range, step) = match &*for_loop.expr {
            syn::Expr::MethodCall(call) if call.method == "step_by" => {
                if call.args.len() != 1 {
                    self.cx
                        .error_spanned_by(call, "`step_by` takes exactly one argument");
                    return None;
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
                    "`for` loops in kernels iterate over a range: `for i in a..b` or `for i in (a..b).step_by(s)`",
                );
                return None;
            }
        };
        if let syn::RangeLimits::Closed(dots) = range.limits {
            self.cx.error_spanned_by(
                dots,
                "inclusive ranges `a..=b` are not supported yet: write `a..b + 1`",
            );
            return None;
        }
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            self.cx
                .error_spanned_by(range, "a `for` range needs both bounds: `for i in a..b`");
            return None;
        };
        let start = self.expr(start);
        let end = self.expr(end);
        let step = step.map(|step| self.expr(step));
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
            });
            (var, this.block(&for_loop.body))
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
        })
    }

    /// The attributes a `for` loop accepts: `#[unroll]` alone, which it reports.
    fn loop_attrs(&mut self, attrs: &[syn::Attribute]) -> bool {
        let mut unroll = false;
        for attr in attrs {
            if attr.path().is_ident("unroll") && matches!(attr.meta, syn::Meta::Path(_)) {
                unroll = true;
            } else {
                self.cx.error_spanned_by(
                    attr,
                    "the only attribute a `for` loop takes in kernels is `#[unroll]`",
                );
            }
        }
        unroll
    }

    /// The left side of an assignment: a variable or a slice element.
    fn place(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        match strip_parens(expr) {
            syn::Expr::Path(_) | syn::Expr::Index(_) => self.expr(expr),
            other => {
                self.cx.error_spanned_by(
                    other,
                    "cannot assign to this expression: assign to a `let mut` variable or to an element of a `&mut [T]` slice",
                );
                None
            }
        }
    }

    // ---- expressions -----------------------------------------------------------------

    fn expr(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        let span = Loc::of(expr);
        let kind = match expr {
            syn::Expr::Lit(lit) => ExprKind::Lit(self.lit(&lit.lit)?),
            syn::Expr::Path(path) => self.path_expr(path)?,
            syn::Expr::Paren(paren) => return self.expr(&paren.expr),
            syn::Expr::Group(group) => return self.expr(&group.expr),
            syn::Expr::Binary(binary) => {
                let Some(op) = binary_op(&binary.op) else {
                    self.cx.error_spanned_by(
                        binary,
                        "compound assignment is a statement in kernels: write it on its own line, ending with `;`",
                    );
                    return None;
                };
                let lhs = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                ExprKind::Binary {
                    op,
                    lhs: lhs?,
                    rhs: rhs?,
                }
            }
            syn::Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => {
                        self.cx.error_spanned_by(
                            unary,
                            "dereferencing (`*x`) is not supported: kernel values are scalars and slices",
                        );
                        return None;
                    }
                };
                ExprKind::Unary {
                    op,
                    operand: self.expr(&unary.expr)?,
                }
            }
            syn::Expr::Cast(cast) => {
                let inner = self.expr(&cast.expr);
                let to = self.scalar_type(&cast.ty)?;
                ExprKind::Cast { expr: inner?, to }
            }
            syn::Expr::Index(index) => {
                if let syn::Expr::Range(range) = strip_parens(&index.index) {
                    self.cx.error_spanned_by(
                        range,
                        "sub-slicing (`x[a..b]`) is not supported in kernels: index single elements",
                    );
                    return None;
                }
                let base = self.expr(&index.expr);
                let idx = self.expr(&index.index);
                ExprKind::Index {
                    base: base?,
                    index: idx?,
                }
            }
            syn::Expr::MethodCall(call) => self.method_call(call)?,
            syn::Expr::Call(call) => self.call(call)?,
            syn::Expr::Field(field) => {
                let axis = match &field.member {
                    syn::Member::Named(name) if name == "x" => Axis::X,
                    syn::Member::Named(name) if name == "y" => Axis::Y,
                    syn::Member::Named(name) if name == "z" => Axis::Z,
                    member => {
                        self.cx.error_spanned_by(
                            member,
                            "field access is only supported on index intrinsics: `thread_idx().x`, `.y`, `.z`",
                        );
                        return None;
                    }
                };
                ExprKind::Axis {
                    base: self.expr(&field.base)?,
                    axis,
                }
            }
            syn::Expr::If(if_expr) => self.select(if_expr)?,
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.expr(&match_expr.expr);
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    let value = match &*arm.body {
                        syn::Expr::Block(block) if block.label.is_none() => {
                            self.value_block(&block.block)?
                        }
                        other => self.expr(other)?,
                    };
                    arms.push((patterns, value));
                }
                ExprKind::Match {
                    scrutinee: scrutinee?,
                    arms,
                }
            }
            syn::Expr::Repeat(repeat) => {
                let value = self.expr(&repeat.expr);
                let len = self.length(&repeat.len)?;
                ExprKind::ArrayRepeat { value: value?, len }
            }
            syn::Expr::Array(array) => {
                if array.elems.is_empty() {
                    self.cx
                        .error_spanned_by(array, "arrays need at least one element");
                    return None;
                }
                let elems: Vec<Option<ExprId>> = array.elems.iter().map(|e| self.expr(e)).collect();
                ExprKind::ArrayList {
                    elems: elems.into_iter().collect::<Option<Vec<_>>>()?,
                }
            }
            syn::Expr::Block(block) if block.label.is_none() => {
                return self.value_block(&block.block);
            }
            other => {
                self.cx.error_spanned_by(other, unsupported_expr(other));
                return None;
            }
        };
        Some(self.push_expr(kind, span))
    }

    fn lit(&mut self, lit: &syn::Lit) -> Option<Lit> {
        match lit {
            syn::Lit::Bool(b) => Some(Lit::Bool(b.value)),
            syn::Lit::Int(int) => {
                let suffix = self.lit_suffix(int.suffix(), lit)?;
                if suffix.is_some_and(Scalar::is_float) {
                    return Some(Lit::Float {
                        digits: int.base10_digits().to_string(),
                        suffix,
                    });
                }
                match int.base10_digits().parse::<u128>() {
                    Ok(value) => Some(Lit::Int { value, suffix }),
                    Err(_) => {
                        self.cx
                            .error_spanned_by(lit, "integer literal is too large");
                        None
                    }
                }
            }
            syn::Lit::Float(float) => {
                let suffix = self.lit_suffix(float.suffix(), lit)?;
                if suffix.is_some_and(Scalar::is_int) {
                    self.cx
                        .error_spanned_by(lit, "a float literal cannot have an integer suffix");
                    return None;
                }
                Some(Lit::Float {
                    digits: float.base10_digits().to_string(),
                    suffix,
                })
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "only number and `bool` literals are supported in kernels (no strings, chars or bytes)",
                );
                None
            }
        }
    }

    fn lit_suffix(&mut self, suffix: &str, lit: &syn::Lit) -> Option<Option<Scalar>> {
        if suffix.is_empty() {
            return Some(None);
        }
        match Scalar::from_rust_name(suffix) {
            Some(scalar) if scalar != Scalar::Bool => Some(Some(scalar)),
            _ => {
                self.cx.error_spanned_by(
                    lit,
                    format!(
                        "literal suffix `{suffix}` is not supported; the number types are i32, u32, i64, u64, usize, f32, f64"
                    ),
                );
                None
            }
        }
    }

    fn path_expr(&mut self, path: &syn::ExprPath) -> Option<ExprKind> {
        if path.qself.is_some() {
            self.cx
                .error_spanned_by(path, "qualified paths are not supported in kernels");
            return None;
        }
        if let Some(ident) = path.path.get_ident() {
            let name = ident.to_string();
            return match self.lookup(&name) {
                Some(local) => Some(ExprKind::Local(local)),
                None if self.generic_const(&name).is_some() => {
                    Some(ExprKind::GenericConst(self.generic_const(&name)?))
                }
                None => {
                    self.cx.error_spanned_by(
                        path,
                        format!(
                            "cannot find value `{name}` in this kernel: kernels can use their parameters and \
                             `let` bindings (constants from outside the kernel are not supported yet)"
                        ),
                    );
                    None
                }
            };
        }
        // `f32::MAX`, `u32::MIN`, `f32::consts::PI`, `std::f64::consts::E`
        let segments: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let names: Vec<&str> = segments
            .iter()
            .map(String::as_str)
            .skip_while(|s| matches!(*s, "std" | "core"))
            .collect();
        let constant = match names.as_slice() {
            [ty, name] => Scalar::from_rust_name(ty).map(|ty| (ty, *name)),
            [ty, "consts", name] => Scalar::from_rust_name(ty).map(|ty| (ty, *name)),
            _ => None,
        };
        match constant {
            Some((ty, name)) => Some(ExprKind::Const {
                ty,
                name: name.to_string(),
            }),
            None => {
                self.cx.error_spanned_by(
                    path,
                    "paths are only supported for number constants such as `f32::MAX` or `f32::consts::PI`",
                );
                None
            }
        }
    }

    fn method_call(&mut self, call: &syn::ExprMethodCall) -> Option<ExprKind> {
        if let Some(turbofish) = &call.turbofish {
            self.cx.error_spanned_by(
                turbofish,
                "generic arguments on methods are not supported in kernels",
            );
            return None;
        }
        let method = call.method.to_string();
        if method == "step_by" {
            self.cx.error_spanned_by(
                call,
                "`step_by` is only supported as the iterator of a `for` loop: `for i in (a..b).step_by(s)`",
            );
            return None;
        }
        let receiver = self.expr(&call.receiver);
        let args: Vec<Option<ExprId>> = call.args.iter().map(|arg| self.expr(arg)).collect();
        let receiver = receiver?;
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        if method == "len" && args.is_empty() {
            return Some(ExprKind::Len(receiver));
        }
        if let Some(op) = Op::method(&method, args.len()) {
            if !self.arity(&op.signature(), args.len() + 1, call) {
                return None;
            }
            let args = std::iter::once(receiver).chain(args).collect();
            return Some(ExprKind::Intrinsic { op, args });
        }
        Some(ExprKind::Method {
            receiver,
            method,
            method_span: Loc::of(&call.method),
            args,
            receiver_ty: None,
        })
    }

    fn call(&mut self, call: &syn::ExprCall) -> Option<ExprKind> {
        let path = match &*call.func {
            syn::Expr::Path(path) if path.qself.is_none() => &path.path,
            other => {
                self.cx
                    .error_spanned_by(other, "only named functions can be called in kernels");
                return None;
            }
        };
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        // `f32::from_bits(u)`: a float from its bits; `T::from_bits(u)`: a type parameter's
        // value from the low bits of a `u64`.
        if let [.., ty, method] = segments.as_slice() {
            let generic = self.generic_type(ty).map(Scalar::Generic);
            if let (Some(to @ (Scalar::F32 | Scalar::F64 | Scalar::Generic(_))), "from_bits") =
                (generic.or(Scalar::from_rust_name(ty)), method.as_str())
            {
                let [arg] = call.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::from_bits` takes one argument"));
                    return None;
                };
                return Some(ExprKind::FromBits {
                    bits: self.expr(arg)?,
                    to,
                });
            }
        }
        // `f16::from_f32(x)`: the half crate's explicit conversions.
        if let [.., ty, method] = segments.as_slice() {
            if let (Some(to @ (Scalar::F16 | Scalar::Bf16)), "from_f32" | "from_f64") =
                (Scalar::from_rust_name(ty), method.as_str())
            {
                let [arg] = call.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::{method}` takes one argument"));
                    return None;
                };
                let arg = self.expr(arg)?;
                let from = if method == "from_f32" {
                    Scalar::F32
                } else {
                    Scalar::F64
                };
                // The argument's type is checked as a cast from `from`.
                let typed = self.push_expr(
                    ExprKind::Convert {
                        expr: arg,
                        to: from,
                    },
                    Loc::of(&call.args),
                );
                return Some(ExprKind::Convert { expr: typed, to });
            }
        }
        // `f32::sqrt(x)` and `f32::max(a, b)` are the method forms written as paths.
        if let [ty, method] = segments.as_slice() {
            if Scalar::from_rust_name(ty).is_some() {
                let mut args = call.args.iter();
                let Some(first) = args.next() else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::{method}` needs an argument"));
                    return None;
                };
                let receiver = self.expr(first);
                let rest: Vec<Option<ExprId>> = args.map(|arg| self.expr(arg)).collect();
                let receiver = receiver?;
                let rest = rest.into_iter().collect::<Option<Vec<_>>>()?;
                return Some(ExprKind::Method {
                    receiver,
                    method: method.clone(),
                    method_span: Loc::of(path),
                    args: rest,
                    // The path names the receiver's type, as `x.sqrt()` would infer it.
                    receiver_ty: Scalar::from_rust_name(ty),
                });
            }
        }
        let name = segments.last().cloned().unwrap_or_default();
        if let Some(builtin) = Builtin::ALL.into_iter().find(|b| b.rust_name() == name) {
            if !call.args.is_empty() {
                self.cx
                    .error_spanned_by(&call.args, format!("`{name}()` takes no arguments"));
                return None;
            }
            return Some(ExprKind::Builtin(builtin));
        }
        if let Some(kind) = self.intrinsic_call(&name, path, call)? {
            return Some(kind);
        }
        if path.segments.iter().any(|s| !s.arguments.is_none()) {
            self.cx.error_spanned_by(
                path,
                "generic arguments on device function calls are not supported",
            );
            return None;
        }
        // Anything else must be a `#[device]` function: its definition is fetched by path.
        let args: Vec<Option<ExprId>> = call.args.iter().map(|arg| self.expr(arg)).collect();
        Some(ExprKind::Call {
            name,
            path: path.to_token_stream(),
            args: args.into_iter().collect::<Option<Vec<_>>>()?,
        })
    }

    /// A call of a GPU intrinsic, `Some(None)` if `name` is not one.
    fn intrinsic_call(
        &mut self,
        name: &str,
        path: &syn::Path,
        call: &syn::ExprCall,
    ) -> Option<Option<ExprKind>> {
        let generics: Vec<&syn::GenericArgument> = match &path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().collect(),
            _ => Vec::new(),
        };
        let op = Op::function(name);
        let signature = op.map(Op::signature);
        // The arguments the call updates in place, written `&mut acc`.
        let by_mut_ref = |i: usize| {
            signature.as_ref().is_some_and(|signature| {
                matches!(
                    signature.args.get(i),
                    Some(Arg::Fragment {
                        by_mut_ref: true,
                        ..
                    })
                )
            })
        };
        let args: Vec<Option<ExprId>> = call
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| match arg {
                syn::Expr::Reference(r) if by_mut_ref(i) && r.mutability.is_some() => {
                    self.expr(&r.expr)
                }
                _ => self.expr(arg),
            })
            .collect();
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        for (i, arg) in call.args.iter().enumerate() {
            if by_mut_ref(i) && !matches!(arg, syn::Expr::Reference(r) if r.mutability.is_some()) {
                self.cx.error_spanned_by(
                    arg,
                    format!("`{name}` takes the accumulator array as `&mut acc`"),
                );
                return None;
            }
        }
        let kind = match (op, signature) {
            (Some(op), Some(signature)) => {
                if !self.arity(&signature, args.len(), call) {
                    return None;
                }
                ExprKind::Intrinsic { op, args }
            }
            (None, _) if name == "shared_array" => {
                let [syn::GenericArgument::Type(elem), len] = generics.as_slice() else {
                    self.cx.error_spanned_by(
                        path,
                        "write `shared_array::<T, N>()`: the element type and the length",
                    );
                    return None;
                };
                let elem = self.scalar_type(elem)?;
                let len = self.generic_length(len)?;
                ExprKind::SharedArray { elem, len }
            }
            (None, _) if name == "dynamic_shared" => {
                let [syn::GenericArgument::Type(elem)] = generics.as_slice() else {
                    self.cx.error_spanned_by(
                        path,
                        "write `dynamic_shared::<T>()`: its length comes from the launch's shared memory size",
                    );
                    return None;
                };
                ExprKind::DynamicShared {
                    elem: self.scalar_type(elem)?,
                }
            }
            _ => return Some(None),
        };
        if !matches!(
            kind,
            ExprKind::SharedArray { .. } | ExprKind::DynamicShared { .. }
        ) && !generics.is_empty()
        {
            self.cx
                .error_spanned_by(path, format!("`{name}` takes no generic arguments"));
            return None;
        }
        if matches!(
            kind,
            ExprKind::SharedArray { .. } | ExprKind::DynamicShared { .. }
        ) && !call.args.is_empty()
        {
            self.cx
                .error_spanned_by(&call.args, format!("`{name}` takes no arguments"));
            return None;
        }
        Some(Some(kind))
    }

    /// Whether an intrinsic whose arguments the parser counts got `count` of them, reporting
    /// its usage if not.
    fn arity(&self, signature: &Signature, count: usize, call: &impl ToTokens) -> bool {
        match &signature.arity {
            Arity::Usage(usage) if count != signature.args.len() => {
                self.cx.error_spanned_by(call, usage);
                false
            }
            Arity::Usage(_) | Arity::Counted => true,
        }
    }

    /// A const generic argument: `256`, `N`, or `{ TILE * 2 }`.
    fn generic_length(&mut self, arg: &syn::GenericArgument) -> Option<Len> {
        match arg {
            syn::GenericArgument::Const(expr) => self.length(expr),
            // `N` alone parses as a type.
            syn::GenericArgument::Type(syn::Type::Path(path)) if path.qself.is_none() => {
                let expr = syn::Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: path.path.clone(),
                });
                self.length(&expr)
            }
            other => {
                self.cx
                    .error_spanned_by(other, "expected a constant length");
                None
            }
        }
    }

    /// `if c { a } else { b }` in value position.
    fn select(&mut self, if_expr: &syn::ExprIf) -> Option<ExprKind> {
        let Some((_, else_expr)) = &if_expr.else_branch else {
            self.cx.error_spanned_by(
                if_expr,
                "an `if` used as a value needs an `else` branch: `if c { a } else { b }`",
            );
            return None;
        };
        let cond = self.condition(&if_expr.cond);
        let then_value = self.value_block(&if_expr.then_branch);
        let else_value = self.expr(else_expr);
        Some(ExprKind::Select {
            cond: cond?,
            then_value: then_value?,
            else_value: else_value?,
        })
    }

    /// A block used as a value: it must be a single expression.
    fn value_block(&mut self, block: &syn::Block) -> Option<ExprId> {
        match block.stmts.as_slice() {
            [syn::Stmt::Expr(expr, None)] => self.expr(expr),
            _ => {
                self.cx.error_spanned_by(
                    block,
                    "a block used as a value must be a single expression, as in `if c { a } else { b }`; \
                     compute the value with `let` statements before it",
                );
                None
            }
        }
    }
}

/// The names a pattern binds.
fn pattern_names(pat: &syn::Pat) -> Vec<String> {
    match pat {
        syn::Pat::Ident(ident) => vec![ident.ident.to_string()],
        syn::Pat::Tuple(tuple) => tuple.elems.iter().flat_map(pattern_names).collect(),
        syn::Pat::Type(typed) => pattern_names(&typed.pat),
        syn::Pat::Paren(paren) => pattern_names(&paren.pat),
        syn::Pat::Reference(reference) => pattern_names(&reference.pat),
        syn::Pat::Slice(slice) => slice.elems.iter().flat_map(pattern_names).collect(),
        syn::Pat::TupleStruct(tuple) => tuple.elems.iter().flat_map(pattern_names).collect(),
        _ => Vec::new(),
    }
}

fn label_name(label: Option<&syn::Label>) -> Option<String> {
    label.map(|l| l.name.ident.to_string())
}

/// Expressions of the language that produce a value (as opposed to unsupported constructs,
/// which get their own message).
fn is_value_expr(expr: &syn::Expr) -> bool {
    matches!(
        expr,
        syn::Expr::Lit(_)
            | syn::Expr::Path(_)
            | syn::Expr::Binary(_)
            | syn::Expr::Unary(_)
            | syn::Expr::Cast(_)
            | syn::Expr::Index(_)
            | syn::Expr::MethodCall(_)
            | syn::Expr::Call(_)
            | syn::Expr::Field(_)
            | syn::Expr::Paren(_)
            | syn::Expr::Group(_)
    )
}

/// Whether a device function's final expression is its value rather than a statement (an `if`
/// without `else`, a loop).
fn is_tail_value(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::If(if_expr) => if_expr.else_branch.is_some(),
        syn::Expr::Block(_) | syn::Expr::Match(_) => true,
        other => is_value_expr(other),
    }
}

fn strip_parens(expr: &syn::Expr) -> &syn::Expr {
    match expr {
        syn::Expr::Paren(paren) => strip_parens(&paren.expr),
        syn::Expr::Group(group) => strip_parens(&group.expr),
        other => other,
    }
}

fn is_named(path: &syn::TypePath, name: &str) -> bool {
    path.path.segments.last().is_some_and(|s| s.ident == name)
}

fn binary_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinOp::Add,
        syn::BinOp::Sub(_) => BinOp::Sub,
        syn::BinOp::Mul(_) => BinOp::Mul,
        syn::BinOp::Div(_) => BinOp::Div,
        syn::BinOp::Rem(_) => BinOp::Rem,
        syn::BinOp::And(_) => BinOp::And,
        syn::BinOp::Or(_) => BinOp::Or,
        syn::BinOp::BitXor(_) => BinOp::BitXor,
        syn::BinOp::BitAnd(_) => BinOp::BitAnd,
        syn::BinOp::BitOr(_) => BinOp::BitOr,
        syn::BinOp::Shl(_) => BinOp::Shl,
        syn::BinOp::Shr(_) => BinOp::Shr,
        syn::BinOp::Eq(_) => BinOp::Eq,
        syn::BinOp::Lt(_) => BinOp::Lt,
        syn::BinOp::Le(_) => BinOp::Le,
        syn::BinOp::Ne(_) => BinOp::Ne,
        syn::BinOp::Ge(_) => BinOp::Ge,
        syn::BinOp::Gt(_) => BinOp::Gt,
        _ => return None,
    })
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitXorAssign(_) => BinOp::BitXor,
        syn::BinOp::BitAndAssign(_) => BinOp::BitAnd,
        syn::BinOp::BitOrAssign(_) => BinOp::BitOr,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// The message for an expression kind outside the language.
fn unsupported_expr(expr: &syn::Expr) -> String {
    let what = match expr {
        syn::Expr::Closure(_) => "closures are not supported in kernels: write the code inline",
        syn::Expr::Tuple(_) => "tuples are not supported in kernels: use separate variables",
        syn::Expr::Struct(_) => "struct expressions are not supported in kernels",
        syn::Expr::Reference(_) => {
            "references (`&x`) are not supported in kernel expressions: slices come in as parameters"
        }
        syn::Expr::Range(_) => {
            "ranges are only supported as the iterator of a `for` loop: `for i in a..b`"
        }
        syn::Expr::Try(_) => "the `?` operator is not supported in kernels",
        syn::Expr::Async(_) | syn::Expr::Await(_) => "async code is not supported in kernels",
        syn::Expr::Unsafe(_) => "`unsafe` blocks are not needed (nor supported) in kernels",
        syn::Expr::Let(_) => "`let` expressions (`if let`, `while let`) are not supported in kernels",
        syn::Expr::Macro(_) => {
            "macros are not supported in kernels: they expand to code the GPU cannot run"
        }
        syn::Expr::Assign(_) => {
            "assignment is a statement in kernels: write it on its own line, ending with `;`"
        }
        syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => {
            "loops cannot be used as values: write the loop as a statement"
        }
        syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => {
            "`break`, `continue` and `return` cannot be used as values: write them as statements"
        }
        _ => "this expression is not supported in kernels",
    };
    what.to_string()
}

/// The arguments of `#[kernel(...)]`: nothing, or `launch_bounds(MAX_THREADS)` /
/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)` with integer literals.
pub fn kernel_args(cx: &Ctxt, attr: &TokenStream) -> Option<LaunchBounds> {
    if attr.is_empty() {
        return None;
    }
    const USAGE: &str = "`#[kernel]` takes no arguments or `launch_bounds(MAX_THREADS)` / \
                         `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, e.g. `#[kernel(launch_bounds(256, 2))]`";
    let list = match syn::parse2::<syn::Meta>(attr.clone()) {
        Ok(syn::Meta::List(list)) if list.path.is_ident("launch_bounds") => list,
        _ => {
            cx.error_spanned_by(attr, USAGE);
            return None;
        }
    };
    let numbers = list.parse_args_with(
        syn::punctuated::Punctuated::<syn::LitInt, syn::Token![,]>::parse_terminated,
    );
    let values: Vec<u32> = match numbers {
        Ok(numbers) if (1..=2).contains(&numbers.len()) => {
            let mut values = Vec::new();
            for number in &numbers {
                match number.base10_parse::<u32>() {
                    Ok(value) if value > 0 => values.push(value),
                    _ => {
                        cx.error_spanned_by(number, "launch bounds are positive integers");
                        return None;
                    }
                }
            }
            values
        }
        _ => {
            cx.error_spanned_by(&list, USAGE);
            return None;
        }
    };
    if values[0] > 1024 {
        cx.error_spanned_by(&list, "a block has at most 1024 threads");
        return None;
    }
    Some(LaunchBounds {
        max_threads: values[0],
        min_blocks: values.get(1).copied(),
    })
}
