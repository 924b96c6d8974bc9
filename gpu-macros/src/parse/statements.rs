//! Statements: blocks, `let` and `const`, assignments, `if`, loops, `match` in statement
//! position, and the jumps.

use super::expressions::is_value_expr;
use super::{strip_parens, Parser};
use crate::ir::*;
use crate::types::Ty;

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

/// Whether a device function's final expression is its value rather than a statement (an `if`
/// without `else`, a loop).
pub(super) fn is_tail_value(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::If(if_expr) => if_expr.else_branch.is_some(),
        syn::Expr::Block(_) | syn::Expr::Match(_) => true,
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

    pub(super) fn block(&mut self, block: &syn::Block) -> Block {
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
                let closure = matches!(&*init.expr, syn::Expr::Closure(_));
                if closure {
                    self.closure_lets.push(name.clone());
                }
                let parsed = self.expr(&init.expr);
                if closure {
                    self.closure_lets.pop();
                }
                parsed
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
    pub(super) fn place(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        match strip_parens(expr) {
            syn::Expr::Path(_) | syn::Expr::Index(_) => {
                let place = self.expr(expr)?;
                self.check_capture_write(place);
                Some(place)
            }
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
