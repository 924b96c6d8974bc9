//! Values computed by statements, as Rust writes them: `let y = { let t = a * 2.0; t + 1.0 };`,
//! an `if` or `match` whose arms run statements before their value, `loop { .. break v; }`,
//! and `let x;` assigned later.
//!
//! The IR's expressions have no statements inside, so such a value becomes a variable declared
//! without a value (`StmtKind::Declare`) and the statements that assign it on every path: the
//! block's statements then `y = t + 1.0;`, each arm ending in its assignment, `y = v; break;`.
//! A `let` assigns its own variable; an assignment, a `return` or a function's final value
//! assigns a hidden one, declared just before the statement that reads it (see
//! [`Parser::value`]). An `if` or `match` whose arms are single expressions stays an
//! expression (a conditional), as before.
//!
//! An iterator consumed into a value (`x.iter().sum::<f32>()`, `.fold(..)`), or a value
//! computed by statements, inside a larger expression is lifted the same way into a hidden
//! variable computed before the statement, where that expression is evaluated once and
//! unconditionally: a conditional's arms and the right side of `&&` / `||` holding one become
//! statements of their own, and a `while` condition holding one becomes `loop { if !cond {
//! break; } .. }` (see [`Parser::lifting`]).

use super::consumers::{consumer, has_consumer};
use super::statements::label_name;
use super::{strip_parens, Parser};
use crate::ir::*;

/// A loop being parsed: its label, and the variable its `break value` assigns (a `loop` used
/// as a value).
pub(super) struct LoopFrame {
    label: Option<String>,
    value: Option<LocalId>,
}

/// Whether `expr`, in value position, runs statements: a block with more than its value, an
/// `if`/`match` with such an arm (or one that leaves by `panic!`, `return`, `break`), a `loop`.
pub(super) fn needs_statements(expr: &syn::Expr) -> bool {
    match strip_parens(expr) {
        syn::Expr::Block(block) if block.label.is_none() => block_needs_statements(&block.block),
        syn::Expr::If(if_expr) if super::options::if_let_read(if_expr).is_some() => true,
        syn::Expr::If(if_expr) => {
            block_needs_statements(&if_expr.then_branch)
                || if_expr
                    .else_branch
                    .as_ref()
                    .is_some_and(|(_, other)| needs_statements(other) || has_consumer(other))
        }
        syn::Expr::Match(_) if super::guards::is_guarded_match(expr) => true,
        syn::Expr::Match(match_expr) => match_expr.arms.iter().any(|arm| {
            arm.guard.is_none()
                && (needs_statements(&arm.body) || diverges(&arm.body) || has_consumer(&arm.body))
        }),
        syn::Expr::Loop(_) => true,
        other => consumer(other).is_some(),
    }
}

fn block_needs_statements(block: &syn::Block) -> bool {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(inner, None)] => {
            needs_statements(inner) || diverges(inner) || has_consumer(inner)
        }
        _ => true,
    }
}

/// Whether `expr` leaves instead of producing a value: `return`, `break`, `continue`, or a
/// `panic!` (and `unreachable!`, `todo!`, `unimplemented!`).
fn diverges(expr: &syn::Expr) -> bool {
    match strip_parens(expr) {
        syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => true,
        syn::Expr::Macro(mac) => is_panic(&mac.mac),
        _ => false,
    }
}

fn is_panic(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        )
    })
}

/// Whether a block's last statement is one after which the block has no value to give: it
/// leaves (`return ..;`, `panic!(..);`).
fn ends_leaving(block: &syn::Block) -> bool {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(expr, _)) => diverges(expr),
        Some(syn::Stmt::Macro(mac)) => is_panic(&mac.mac),
        _ => false,
    }
}

impl Parser<'_> {
    /// `expr` as a value: an expression, or, when it runs statements, a hidden variable that
    /// statements placed before the current one assign.
    pub(super) fn value(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        // A `match` value initialises a `let` (C++ computes it as a `switch` into the
        // variable): assigned (`out[i] = match ..`), it goes through a hidden one.
        if matches!(strip_parens(expr), syn::Expr::Match(_)) && !needs_statements(expr) {
            return self.hidden_value(expr, None);
        }
        self.value_of(expr, None)
    }

    /// [`Parser::value`] of a `let` annotated with `annotation`, which the hidden variable takes.
    pub(super) fn value_of(
        &mut self,
        expr: &syn::Expr,
        annotation: Option<crate::types::Ty>,
    ) -> Option<ExprId> {
        if !needs_statements(expr) {
            return self.lifting(true, |this| this.expr(expr));
        }
        self.hidden_value(expr, annotation)
    }

    /// The value of `expr`, a function's result or a `return`'s: an iterator consumed there
    /// (`x.iter().sum()`) takes the function's return type, as Rust infers it.
    pub(super) fn returned_value(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        let annotation = consumer(strip_parens(expr)).and(self.ret);
        self.value_of(expr, annotation)
    }

    /// Runs `f` with consumed iterators lifted before the statement (`on`) or reported (off).
    pub(super) fn lifting<R>(&mut self, on: bool, f: impl FnOnce(&mut Self) -> R) -> R {
        let outer = std::mem::replace(&mut self.lift, on);
        let out = f(self);
        self.lift = outer;
        out
    }

    /// A consumed iterator inside a larger expression: its value, computed before the
    /// statement where that is allowed (see [`Parser::lifting`]).
    pub(super) fn lifted(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        if self.lift {
            return self.hidden_value(expr, None);
        }
        let method = consumer(expr).map_or("sum", |found| found.name());
        self.cx.error_spanned_by(
            expr,
            format!(
                "`{method}` computes with a loop, which runs before the statement that needs \
                 it; here it would run where Rust does not run it: bind it with `let` first \
                 (`let t: f32 = x.iter().sum();`)"
            ),
        );
        None
    }

    /// `expr`, which runs statements, as a hidden variable those statements (placed in the
    /// prelude) assign.
    pub(super) fn hidden_value(
        &mut self,
        expr: &syn::Expr,
        annotation: Option<crate::types::Ty>,
    ) -> Option<ExprId> {
        let span = Loc::of(expr);
        let id = self.locals.len();
        // Not in scope: nothing the user wrote can name it, and each has its own name.
        self.locals.push(Local {
            name: format!("__gpu_value{id}"),
            mutable: true,
            annotation,
            element: false,
        });
        let target = LocalId(id as u32);
        let stmts = self.lowered(expr, target);
        self.prelude.push(Stmt {
            kind: StmtKind::Declare { local: target },
            span,
        });
        self.prelude.extend(stmts);
        Some(self.push_expr(ExprKind::Local(target), span))
    }

    /// Parses a statement, with the statements its values need before it.
    pub(super) fn stmts(&mut self, stmt: &syn::Stmt) -> Vec<Stmt> {
        if let Some(stmts) = self.option_stmts(stmt) {
            return stmts;
        }
        self.with_prelude(|this| this.stmt(stmt))
    }

    /// What `f` parses, after the statements it placed in the prelude.
    pub(super) fn with_prelude(&mut self, f: impl FnOnce(&mut Self) -> Option<Stmt>) -> Vec<Stmt> {
        let outer = std::mem::take(&mut self.prelude);
        // A statement inside starts where nothing is lifted until its values say so.
        let last = self.lifting(false, f);
        let mut stmts = std::mem::replace(&mut self.prelude, outer);
        stmts.extend(last);
        stmts
    }

    /// `let name = init;` where `init` runs statements: `local` (declared, not yet in scope, so
    /// `init` sees the bindings before it) is declared, then assigned by them.
    pub(super) fn let_lowered(&mut self, init: &syn::Expr, local: LocalId) -> Option<StmtKind> {
        let span = Loc::of(init);
        let mut stmts = self.lowered(init, local);
        let last = stmts.pop();
        self.prelude.push(Stmt {
            kind: StmtKind::Declare { local },
            span,
        });
        self.prelude.extend(stmts);
        last.map(|stmt| stmt.kind)
    }

    /// The statements that compute `expr` into `target` on every path that does not leave.
    fn lowered(&mut self, expr: &syn::Expr, target: LocalId) -> Vec<Stmt> {
        self.scoped(|this| this.with_prelude(|this| this.lower_into(expr, target)))
    }

    pub(super) fn lower_into(&mut self, expr: &syn::Expr, target: LocalId) -> Option<Stmt> {
        let span = Loc::of(expr);
        let kind = match strip_parens(expr) {
            syn::Expr::Block(block) if block.label.is_none() => {
                StmtKind::Block(self.lowered_block(&block.block, target))
            }
            syn::Expr::If(if_expr) if super::options::if_let_read(if_expr).is_some() => {
                let tested = super::options::if_let_read(if_expr)?;
                return self.lower_into(&tested, target);
            }
            syn::Expr::If(if_expr) => {
                let Some((_, else_expr)) = &if_expr.else_branch else {
                    self.cx.error_spanned_by(
                        if_expr,
                        "an `if` used as a value needs an `else` branch: `if c { a } else { b }`",
                    );
                    return None;
                };
                let cond = self.lifting(true, |this| this.condition(&if_expr.cond));
                let then_block = self.lowered_block(&if_expr.then_branch, target);
                let else_block = self.lowered_arm(else_expr, target);
                StmtKind::If {
                    cond: cond?,
                    then_block,
                    else_block: Some(else_block),
                }
            }
            syn::Expr::Match(match_expr) if super::guards::is_guarded_match(expr) => {
                let rewritten = self.guarded_match(match_expr)?;
                return self.lower_into(&rewritten, target);
            }
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.lifting(true, |this| this.expr(&match_expr.expr));
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    arms.push((patterns, self.lowered_arm(&arm.body, target)));
                }
                StmtKind::Match {
                    scrutinee: scrutinee?,
                    arms,
                }
            }
            syn::Expr::Loop(loop_expr) => {
                let label = label_name(loop_expr.label.as_ref());
                let body = self.in_loop(label.clone(), Some(target), |this| {
                    this.block(&loop_expr.body)
                });
                StmtKind::Loop { body, label }
            }
            other if consumer(other).is_some() => {
                return self.consumed(other, target);
            }
            other if diverges(other) => self.expr_stmt(other, false)?,
            other => {
                let value = self.lifting(true, |this| this.expr(other))?;
                let place = self.push_expr(ExprKind::Local(target), span);
                StmtKind::Assign {
                    place,
                    op: None,
                    value,
                }
            }
        };
        Some(Stmt { kind, span })
    }

    /// An `else` branch or a `match` arm: a block's statements, or the one statement of
    /// another expression.
    fn lowered_arm(&mut self, expr: &syn::Expr, target: LocalId) -> Block {
        match strip_parens(expr) {
            syn::Expr::Block(block) if block.label.is_none() => {
                self.lowered_block(&block.block, target)
            }
            other => Block {
                stmts: self.lowered(other, target),
            },
        }
    }

    /// A block whose final expression is assigned to `target`.
    fn lowered_block(&mut self, block: &syn::Block, target: LocalId) -> Block {
        let stmts = self.scoped(|this| {
            let mut stmts = Vec::new();
            let count = block.stmts.len();
            for (i, stmt) in block.stmts.iter().enumerate() {
                match stmt {
                    syn::Stmt::Expr(tail, None) if i + 1 == count => {
                        let rewritten = this.option_expr(tail);
                        let tail = rewritten.as_ref().unwrap_or(tail);
                        stmts.extend(this.with_prelude(|this| this.lower_into(tail, target)));
                    }
                    other => stmts.extend(this.stmts(other)),
                }
            }
            stmts
        });
        let has_tail = matches!(block.stmts.last(), Some(syn::Stmt::Expr(_, None)));
        if !has_tail && !ends_leaving(block) {
            self.cx.error_spanned_by(
                block,
                "this block has no value: end it with the value, without `;` (as in \
                 `{ let t = a * 2.0; t + 1.0 }`)",
            );
        }
        Block { stmts }
    }

    /// Parses a loop's body with the loop on the stack that `break value` looks in.
    pub(super) fn in_loop<R>(
        &mut self,
        label: Option<String>,
        value: Option<LocalId>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.loops.push(LoopFrame { label, value });
        let out = f(self);
        self.loops.pop();
        out
    }

    /// `break value` / `break 'label value`: the value assigned to the `loop`'s variable, then
    /// the jump.
    pub(super) fn break_value(
        &mut self,
        brk: &syn::ExprBreak,
        value: &syn::Expr,
    ) -> Option<StmtKind> {
        let label = brk.label.as_ref().map(|l| l.ident.to_string());
        let frame = match &label {
            Some(name) => self
                .loops
                .iter()
                .rev()
                .find(|f| f.label.as_deref() == Some(name.as_str())),
            None => self.loops.last(),
        };
        let Some(target) = frame.and_then(|f| f.value) else {
            self.cx.error_spanned_by(
                value,
                "`break` with a value leaves a `loop` whose value is used (`let v = loop { .. \
                 break x; };`); `while` and `for` loops have no value",
            );
            return None;
        };
        let span = Loc::of(brk);
        let mut stmts = self.with_prelude(|this| {
            let value = this.value(value)?;
            let place = this.push_expr(ExprKind::Local(target), span);
            Some(Stmt {
                kind: StmtKind::Assign {
                    place,
                    op: None,
                    value,
                },
                span,
            })
        });
        stmts.push(Stmt {
            kind: StmtKind::Break(label),
            span,
        });
        Some(StmtKind::Block(Block { stmts }))
    }
}

/// Whether a `loop`'s body has a `break value` that leaves it (not one of a loop inside it),
/// so the loop is a value.
pub(super) fn breaks_with_value(body: &syn::Block) -> bool {
    struct Finder {
        depth: u32,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_break(&mut self, brk: &'ast syn::ExprBreak) {
            if brk.expr.is_some() && (self.depth == 0 || brk.label.is_some()) {
                self.found = true;
            }
            syn::visit::visit_expr_break(self, brk);
        }
        fn visit_expr_loop(&mut self, inner: &'ast syn::ExprLoop) {
            self.depth += 1;
            syn::visit::visit_expr_loop(self, inner);
            self.depth -= 1;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut finder = Finder {
        depth: 0,
        found: false,
    };
    syn::visit::Visit::visit_block(&mut finder, body);
    finder.found
}
