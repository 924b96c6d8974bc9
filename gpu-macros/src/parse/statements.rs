//! Statements: blocks, `let` and `const`, assignments, `if`, `while` and `loop` (`for` is in
//! `loops.rs`), `match` in statement position, and the jumps.

use super::expressions::{is_constant_name, is_value_expr};
use super::format::SUPPORTED_MACROS;
use super::values::needs_statements;
use super::{strip_parens, Parser};
use crate::ir::*;
use crate::types::{LenExpr, Scalar, Ty};

/// The names a pattern binds.
pub(super) fn pattern_names(pat: &syn::Pat) -> Vec<String> {
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

pub(super) fn label_name(label: Option<&syn::Label>) -> Option<String> {
    label.map(|l| l.name.ident.to_string())
}

/// Whether a device function's final expression is its value rather than a statement (an `if`
/// without `else`, a loop).
pub(super) fn is_tail_value(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::If(if_expr) => if_expr.else_branch.is_some(),
        syn::Expr::Block(_) | syn::Expr::Match(_) => true,
        syn::Expr::Loop(loop_expr) => super::values::breaks_with_value(&loop_expr.body),
        other => is_value_expr(other),
    }
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

impl Parser<'_> {
    /// The body of the function; a device function's final expression is its return value.
    pub(super) fn function_body(&mut self, block: &syn::Block, returns_value: bool) -> Block {
        if !returns_value {
            return self.block(block);
        }
        self.scoped(|this| {
            let mut stmts = Vec::new();
            let count = block.stmts.len();
            for (i, stmt) in block.stmts.iter().enumerate() {
                match stmt {
                    syn::Stmt::Expr(expr, None) if i + 1 == count && is_tail_value(expr) => {
                        let rewritten = this.option_expr(expr);
                        let expr = rewritten.as_ref().unwrap_or(expr);
                        stmts.extend(this.with_prelude(|this| {
                            Some(Stmt {
                                kind: StmtKind::Return(Some(this.returned_value(expr)?)),
                                span: Loc::of(expr),
                            })
                        }));
                    }
                    other => stmts.extend(this.stmts(other)),
                }
            }
            Block { stmts }
        })
    }

    pub(super) fn block(&mut self, block: &syn::Block) -> Block {
        self.scoped(|this| {
            let mut stmts = Vec::new();
            for stmt in &block.stmts {
                stmts.extend(this.stmts(stmt));
            }
            Block { stmts }
        })
    }

    pub(super) fn stmt(&mut self, stmt: &syn::Stmt) -> Option<Stmt> {
        let span = Loc::of(stmt);
        let kind = match stmt {
            syn::Stmt::Local(local) => self.let_stmt(local)?,
            syn::Stmt::Item(syn::Item::Const(item)) => self.const_item(item)?,
            syn::Stmt::Item(item) => {
                self.cx.error_spanned_by(
                    item,
                    format!(
                        "items (fn, struct, use, ...) inside a {0} are not supported: move it out of \
                         the {0} (a `const` may stay)",
                        self.what()
                    ),
                );
                return None;
            }
            syn::Stmt::Macro(mac) => self.macro_stmt(&mac.mac)?,
            syn::Stmt::Expr(expr, semi) => self.expr_stmt(expr, semi.is_none())?,
        };
        Some(Stmt { kind, span })
    }

    pub(super) fn macro_error(&mut self, mac: &syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        self.cx.error_spanned_by(
            mac,
            format!(
                "macros such as `{name}!` are not supported in kernels: they expand to code the GPU cannot run (kernels take {SUPPORTED_MACROS})"
            ),
        );
    }

    fn let_stmt(&mut self, local: &syn::Local) -> Option<StmtKind> {
        let (pat, annotation) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        // `let v: [f32; 4] = core::array::from_fn(|i| ..);`: the array of the closure's values.
        if let Some(init) = local.init.as_ref().filter(|init| init.diverge.is_none()) {
            if let Some(closure) = array_from_fn(&init.expr) {
                let Some(array) = self.array_of_closure(closure, annotation) else {
                    // Declared anyway, so its uses report nothing more.
                    self.declare_rejected(pattern_names(pat));
                    return None;
                };
                let mut rewritten = local.clone();
                rewritten.init = Some(syn::LocalInit {
                    eq_token: init.eq_token,
                    expr: Box::new(array),
                    diverge: None,
                });
                return self.let_stmt(&rewritten);
            }
        }
        let (name, mutable) = match pat {
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                (ident.ident.to_string(), ident.mutability.is_some())
            }
            syn::Pat::Tuple(tuple) if annotation.is_none() => return self.let_tuple(local, tuple),
            syn::Pat::Slice(_) | syn::Pat::Struct(_) | syn::Pat::TupleStruct(_) => {
                return self.let_destructured(local, pat, annotation);
            }
            // `let _ = value;`: evaluated, bound to nothing.
            syn::Pat::Wild(_) => ("_".to_string(), false),
            other => {
                self.cx.error_spanned_by(
                    other,
                    "only simple bindings are supported: `let x = ...;`, `let mut x: T = ...;` or \
                     `let _ = ...;` (no patterns)",
                );
                // Its names are declared anyway, so their uses don't each report a missing name.
                self.declare_rejected(pattern_names(other));
                return None;
            }
        };
        let annotation = match annotation {
            Some(ty) => self.value_type(ty).map(Some),
            None => Some(None),
        };
        let Some(annotation) = annotation else {
            // A rejected type: the binding exists, so its uses report nothing more.
            self.declare_rejected(vec![name]);
            return None;
        };
        let init = match &local.init {
            // A value computed by statements assigns the variable itself, put in scope after;
            // one that shadows a binding goes through a hidden variable, since the twin's Rust
            // would see the new name, declared first, in the statements that compute it.
            Some(init)
                if init.diverge.is_none()
                    && name != "_"
                    && self.lookup(&name).is_none()
                    && needs_statements(&init.expr) =>
            {
                let id = LocalId(self.locals.len() as u32);
                self.locals.push(Local {
                    name: name.clone(),
                    mutable,
                    annotation,
                    element: false,
                });
                let kind = self.let_lowered(&init.expr, id);
                self.bind(name, id);
                return kind;
            }
            Some(init) => {
                if let Some((_, diverge)) = &init.diverge {
                    self.cx
                        .error_spanned_by(diverge, "`let ... else` is not supported in kernels");
                }
                // The initializer sees the bindings before this one (`let x = x + 1;` shadows).
                let closure = matches!(&*init.expr, syn::Expr::Closure(_));
                if closure {
                    self.closure_lets.push(name.clone());
                }
                let parsed = self.value_of(&init.expr, annotation);
                if closure {
                    self.closure_lets.pop();
                }
                parsed
            }
            // `let x;`: Rust's deferred initialization.
            None if name != "_" => {
                let local = self.declare(Local {
                    name,
                    mutable,
                    annotation,
                    element: false,
                });
                return Some(StmtKind::Declare { local });
            }
            None => {
                self.cx
                    .error_spanned_by(local, "`let _;` binds nothing: remove it");
                None
            }
        };
        // Declared even when the initializer failed, so later uses don't report a missing name.
        let local = self.declare(Local {
            name,
            mutable,
            annotation,
            element: false,
        });
        Some(StmtKind::Let { local, init: init? })
    }

    /// `const N: usize = 16;`: a constant usable in array lengths.
    fn const_item(&mut self, item: &syn::ItemConst) -> Option<StmtKind> {
        // `const TAPS: [f32; 5] = [..];`: read as the same immutable local array, which is
        // what a const array indexed in a function is (each use a copy of the same values).
        if let syn::Type::Array(_) = &*item.ty {
            let (name, ty, value) = (&item.ident, &item.ty, &item.expr);
            let local: syn::Stmt =
                syn::parse_quote_spanned!(item.ident.span()=> let #name: #ty = #value;);
            let syn::Stmt::Local(local) = local else {
                unreachable!("a let statement")
            };
            return self.let_stmt(&local);
        }
        let ty = self.scalar_type(&item.ty);
        let init = self.expr(&item.expr);
        let (Some(ty), Some(init)) = (ty, init) else {
            // Declared, so its uses neither report a missing name nor reach a constant of the
            // same name outside the function.
            self.declare_rejected(vec![item.ident.to_string()]);
            return None;
        };
        // Only a `usize` is a length; other integers' values are kept when the macro can fold
        // them, as a length written with them is one rustc rejects anyway.
        let value = if ty.is_int() {
            match self.const_value(&item.expr, ty == Scalar::Usize)? {
                value @ LenExpr::Known(_) => Some(value),
                value if ty == Scalar::Usize => Some(value),
                _ => None,
            }
        } else {
            None
        };
        let local = self.declare(Local {
            name: item.ident.to_string(),
            mutable: false,
            annotation: Some(Ty::Scalar(ty)),
            element: false,
        });
        if let Some(value) = value {
            self.consts.insert(local, value);
        }
        Some(StmtKind::Let { local, init })
    }

    /// An expression in statement position. `tail` is true when it ends a block without `;`.
    pub(super) fn expr_stmt(&mut self, expr: &syn::Expr, tail: bool) -> Option<StmtKind> {
        match expr {
            syn::Expr::Assign(assign)
                if matches!(strip_parens(&assign.left), syn::Expr::Tuple(_)) =>
            {
                self.assign_tuple(assign)
            }
            syn::Expr::Assign(assign) => {
                let place = self.place(&assign.left)?;
                let value = match self.written_type(&assign.left) {
                    // `out[i] = x.iter().sum();`: the sum's type is the place's, as Rust infers.
                    Some(ty)
                        if super::consumers::consumer(strip_parens(&assign.right)).is_some() =>
                    {
                        self.value_of(&assign.right, Some(ty))?
                    }
                    _ => self.value(&assign.right)?,
                };
                Some(StmtKind::Assign {
                    place,
                    op: None,
                    value,
                })
            }
            syn::Expr::Binary(binary) if compound_op(&binary.op).is_some() => {
                let place = self.place(&binary.left)?;
                let value = match compound_op(&binary.op) {
                    Some(BinOp::Shl | BinOp::Shr) => self.shift_amount(&binary.right)?,
                    _ => self.value(&binary.right)?,
                };
                Some(StmtKind::Assign {
                    place,
                    op: compound_op(&binary.op),
                    value,
                })
            }
            syn::Expr::If(if_expr) => match super::options::if_let_read(if_expr) {
                Some(tested) => self.expr_stmt(&tested, tail),
                None => self.if_stmt(if_expr),
            },
            // A condition that computes with statements (`while x.iter().any(..)`) runs
            // before each iteration: `loop { if !cond { break; } .. }`.
            syn::Expr::While(while_expr)
                if !matches!(&*while_expr.cond, syn::Expr::Let(_))
                    && (needs_statements(&while_expr.cond)
                        || super::consumers::has_consumer(&while_expr.cond)) =>
            {
                let (label, cond, body) = (&while_expr.label, &while_expr.cond, &while_expr.body);
                let stmts = &body.stmts;
                let rewritten: syn::Expr = syn::parse_quote! {
                    #label loop {
                        if !(#cond) {
                            break;
                        }
                        #(#stmts)*
                    }
                };
                self.expr_stmt(&rewritten, tail)
            }
            syn::Expr::While(while_expr) => {
                let label = label_name(while_expr.label.as_ref());
                if let syn::Expr::Let(let_expr) = &*while_expr.cond {
                    self.cx.error_spanned_by(
                        let_expr,
                        "`while let` takes apart an `Option` in kernels (`while let Some(j) = \
                         next { .. }`, an option local, a checked operation or a search); for \
                         anything else use `while condition { ... }`",
                    );
                    return None;
                }
                let cond = self.expr(&while_expr.cond);
                let body = self.in_loop(label.clone(), None, |this| this.block(&while_expr.body));
                Some(StmtKind::While {
                    cond: cond?,
                    body,
                    label,
                })
            }
            syn::Expr::Loop(loop_expr) => {
                let label = label_name(loop_expr.label.as_ref());
                let body = self.in_loop(label.clone(), None, |this| this.block(&loop_expr.body));
                Some(StmtKind::Loop { body, label })
            }
            syn::Expr::Match(match_expr) if super::guards::is_guarded_match(expr) => {
                let rewritten = self.guarded_match(match_expr)?;
                self.expr_stmt(&rewritten, tail)
            }
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.lifting(true, |this| this.expr(&match_expr.expr));
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    let body = match &*arm.body {
                        syn::Expr::Block(block) if block.label.is_none() => {
                            self.block(&block.block)
                        }
                        other => {
                            let span = Loc::of(other);
                            let stmts = self.scoped(|this| {
                                this.with_prelude(|this| {
                                    let kind = this.expr_stmt(other, false)?;
                                    Some(Stmt { kind, span })
                                })
                            });
                            Block { stmts }
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
                    return self.break_value(brk, value);
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
                Some(value) => Some(StmtKind::Return(Some(self.returned_value(value)?))),
                None => Some(StmtKind::Return(None)),
            },
            syn::Expr::Block(block) if block.label.is_none() => {
                Some(StmtKind::Block(self.block(&block.block)))
            }
            syn::Expr::Macro(mac) => self.macro_stmt(&mac.mac),
            // `y.iter_mut().for_each(|v| *v *= 2.0)`: the `for` loop over the same walk.
            syn::Expr::MethodCall(call)
                if call.method == "for_each"
                    && call.args.len() == 1
                    && matches!(&call.args[0], syn::Expr::Closure(c) if c.inputs.len() == 1) =>
            {
                let syn::Expr::Closure(closure) = &call.args[0] else {
                    return None;
                };
                let (walk, pat, body) = (&call.receiver, &closure.inputs[0], &closure.body);
                if returns(body) {
                    self.cx.error_spanned_by(
                        body,
                        "a `return` in `for_each`'s closure goes on to the next element: write \
                         the `for` loop, with `continue`",
                    );
                    return None;
                }
                let pat = match pat {
                    syn::Pat::Type(typed) => &*typed.pat,
                    other => other,
                };
                let rewritten: syn::Expr = syn::parse_quote!(for #pat in #walk { #body; });
                self.expr_stmt(&rewritten, tail)
            }
            syn::Expr::MethodCall(call)
                if (matches!(call.method.to_string().as_str(), "sort" | "sort_unstable")
                    && call.args.is_empty())
                    || (matches!(
                        call.method.to_string().as_str(),
                        "sort_by" | "sort_unstable_by"
                    ) && call.args.len() == 1) =>
            {
                self.sort_stmt(call)
            }
            syn::Expr::MethodCall(call) if call.method == "swap" && call.args.len() == 2 => {
                self.swap_stmt(call)
            }
            syn::Expr::MethodCall(call)
                if matches!(call.method.to_string().as_str(), "fill" | "copy_from_slice")
                    && call.args.len() == 1 =>
            {
                self.fill_stmt(call)
            }
            syn::Expr::Call(call) if is_mem_swap(call) => self.mem_swap(call),
            other if tail && is_value_expr(other) => {
                // A value at the end of a block would be the block's result, but kernels and the
                // blocks of `if`/loops in statement position produce nothing.
                let message = match self.kind {
                    FnKind::Kernel => "this value is unused: kernels return nothing; end the statement \
                                       with `;` or store the value with `let` or into a `&mut [T]` element",
                    FnKind::Device => "this value is unused: end the statement with `;`, store the \
                                       value with `let`, or give the function a return type \
                                       (`-> f32`) if it is the result",
                };
                self.cx.error_spanned_by(other, message);
                None
            }
            // Evaluated once, as the statement runs (`out.atomic_add(0, row.iter().sum())`).
            other => self
                .lifting(true, |this| this.expr(other))
                .map(StmtKind::Expr),
        }
    }

    /// The patterns of one arm: literals, ranges, `_`, joined with `|`.
    pub(super) fn arm_patterns(&mut self, arm: &syn::Arm) -> Option<Vec<Pattern>> {
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
                // `TILE`: as in Rust, a constant's name compares with its value.
                syn::Pat::Ident(ident)
                    if ident.subpat.is_none()
                        && ident.by_ref.is_none()
                        && ident.mutability.is_none()
                        && is_constant_name(&ident.ident.to_string()) =>
                {
                    patterns.push(self.constant_pattern(ident)?)
                }
                syn::Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                    patterns.push(Pattern::Wild)
                }
                syn::Pat::Lit(lit) => {
                    patterns.push(Pattern::Value(self.expr(&lit.clone().into())?))
                }
                // `Op::Add`: a variant of a `#[device]` enum.
                syn::Pat::Path(path) => {
                    patterns.push(Pattern::Value(self.expr(&path.clone().into())?))
                }
                syn::Pat::Range(range) => {
                    let start = match &range.start {
                        Some(start) => Some(self.expr(start)?),
                        None => None,
                    };
                    let end = match &range.end {
                        Some(end) => Some(self.expr(end)?),
                        None => None,
                    };
                    patterns.push(Pattern::Range {
                        start,
                        end,
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

    /// A constant's name as a pattern: a constant from outside the function (the CPU twin
    /// matches on its typed copy, a constant item, as Rust allows).
    fn constant_pattern(&mut self, ident: &syn::PatIdent) -> Option<Pattern> {
        let name = ident.ident.to_string();
        if self.lookup(&name).is_some() || self.generic_const(&name).is_some() {
            self.cx.error_spanned_by(
                ident,
                format!(
                    "`{name}` is declared in the {}: as a pattern write its value, or define \
                     the constant outside it (`const {name}: u32 = ...;` at module level)",
                    self.what()
                ),
            );
            return None;
        }
        let path = syn::Path::from(ident.ident.clone());
        let constant = self.outer_const(&path, false, None)?;
        Some(Pattern::Value(
            self.push_expr(ExprKind::Outer(constant), Loc::of(ident)),
        ))
    }

    fn if_stmt(&mut self, if_expr: &syn::ExprIf) -> Option<StmtKind> {
        let cond = self.lifting(true, |this| this.condition(&if_expr.cond));
        let then_block = self.block(&if_expr.then_branch);
        let else_block = match &if_expr.else_branch {
            None => None,
            Some((_, else_expr)) => match &**else_expr {
                syn::Expr::Block(block) => Some(self.block(&block.block)),
                syn::Expr::If(nested) => {
                    // What its condition computes first runs only when the `else` is taken.
                    let span = Loc::of(nested);
                    let stmts = self.scoped(|this| {
                        this.with_prelude(|this| {
                            let nested = syn::Expr::If(nested.clone());
                            let kind = this.expr_stmt(&nested, false)?;
                            Some(Stmt { kind, span })
                        })
                    });
                    Some(Block { stmts })
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

    pub(super) fn condition(&mut self, cond: &syn::Expr) -> Option<ExprId> {
        if let syn::Expr::Let(let_expr) = cond {
            self.cx.error_spanned_by(
                let_expr,
                "`if let` is not supported in kernels: use a boolean condition",
            );
            return None;
        }
        self.expr(cond)
    }

    /// The left side of an assignment: a variable, an element, a field, or `*r`.
    pub(super) fn place(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        match strip_parens(expr) {
            syn::Expr::Path(_) | syn::Expr::Index(_) | syn::Expr::Field(_) => {
                let place = self.expr(expr)?;
                self.check_capture_write(place);
                Some(place)
            }
            syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => self.expr(expr),
            other => {
                self.cx.error_spanned_by(
                    other,
                    "cannot assign to this expression: assign to a `let mut` variable or to an element of a `&mut [T]` slice",
                );
                None
            }
        }
    }
}

/// Whether `call` is `mem::swap(..)`, by any path to it.
/// The closure of `core::array::from_fn(|i| ..)` (or `std::`, `array::`), if `expr` is one.
pub(super) fn array_from_fn(expr: &syn::Expr) -> Option<&syn::ExprClosure> {
    let syn::Expr::Call(call) = strip_parens(expr) else {
        return None;
    };
    let syn::Expr::Path(path) = strip_parens(&call.func) else {
        return None;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    if !matches!(names.as_slice(), [.., module, function] if module == "array" && function == "from_fn")
    {
        return None;
    }
    match call.args.first() {
        Some(syn::Expr::Closure(closure)) if call.args.len() == 1 && closure.inputs.len() == 1 => {
            Some(closure)
        }
        _ => None,
    }
}

impl Parser<'_> {
    /// The array literal `core::array::from_fn(closure)` makes for a `let` annotated `[T; N]`
    /// with a literal `N` (at most 64): the closure's body once for each index.
    fn array_of_closure(
        &mut self,
        closure: &syn::ExprClosure,
        annotation: Option<&syn::Type>,
    ) -> Option<syn::Expr> {
        let len = match annotation {
            Some(syn::Type::Array(array)) => match &array.len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(len),
                    ..
                }) => len
                    .base10_parse::<usize>()
                    .ok()
                    .filter(|n| (1..=64).contains(n)),
                _ => None,
            },
            _ => None,
        };
        let Some(len) = len else {
            self.cx.error_spanned_by(
                closure,
                "`array::from_fn` builds its array where a `let` gives the type with a literal \
                 length of 1 to 64: `let v: [f32; 4] = core::array::from_fn(|i| ..);`",
            );
            return None;
        };
        let param = match &closure.inputs[0] {
            syn::Pat::Type(typed) => &*typed.pat,
            other => other,
        };
        let body = &closure.body;
        let elems = (0..len).map(|k| quote::quote!({ let #param: usize = #k; #body }));
        Some(syn::parse_quote!([#(#elems),*]))
    }
}

/// Whether `body` has a `return` of its own (not one of a closure inside it).
fn returns(body: &syn::Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, body);
    finder.0
}

fn is_mem_swap(call: &syn::ExprCall) -> bool {
    let syn::Expr::Path(path) = &*call.func else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(
        names.iter().map(String::as_str).collect::<Vec<_>>()[..],
        [.., "mem", "swap"]
    )
}
