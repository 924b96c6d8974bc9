//! Statements: `let` and what may be stored, assignments and what may be assigned,
//! conditions, loops and their labels, `match` patterns and exhaustiveness.

use super::{is_constructor, Checker, VarKind, T};
use crate::ir::*;
use crate::types::{Scalar, Ty};

impl Checker<'_> {
    pub(super) fn block(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { local, init } => {
                let found = self.expr(*init);
                let decl = self.kernel.local(*local);
                let t = match decl.annotation {
                    Some(ty @ Ty::Array { .. }) => {
                        let annotation = self.fresh_of(ty, self.loc(*init));
                        self.unify(annotation, found, self.loc(*init));
                        annotation
                    }
                    Some(annotation) => {
                        self.unify(T::Ty(annotation), found, self.loc(*init));
                        T::Ty(annotation)
                    }
                    None => found,
                };
                let shared = matches!(self.resolve(t), T::Ty(Ty::Shared { .. }));
                if shared && !is_constructor(&self.kernel.expr(*init).kind) {
                    self.cx.error(
                        self.loc(*init),
                        "shared memory cannot be copied: index the original",
                    );
                }
                let slice_view = matches!(
                    self.kernel.expr(*init).kind,
                    ExprKind::SubSlice { .. } | ExprKind::Local(_)
                );
                if let T::Ty(
                    ty @ (Ty::Slice { .. } | Ty::Dim3 | Ty::Index3 | Ty::Unit | Ty::TensorMap(_)),
                ) = t
                {
                    if matches!(ty, Ty::Slice { .. }) && slice_view {
                        self.locals[local.0 as usize] = Some(t);
                        return;
                    }
                    self.cx.error(
                        self.loc(*init),
                        format!(
                            "a value of type `{}` cannot be stored in a variable: {}",
                            ty.describe(),
                            match ty {
                                Ty::Slice { .. } => {
                                    "a slice variable holds a parameter or a part of one: \
                                     `let row = &x[a..b];`"
                                }
                                Ty::Unit => "this expression has no value",
                                // A copy would live in local memory, where tensor copies
                                // cannot read their descriptor.
                                Ty::TensorMap(_) => {
                                    "pass the parameter itself to `tma_load_2d`"
                                }
                                _ => "store one component, e.g. `let tx = thread_idx().x;`",
                            }
                        ),
                    );
                }
                self.locals[local.0 as usize] = Some(t);
            }
            StmtKind::Declare { local } => {
                let t = match self.kernel.local(*local).annotation {
                    Some(ty) => self.fresh_of(ty, stmt.span),
                    None => self.new_var(VarKind::Any),
                };
                self.locals[local.0 as usize] = Some(t);
                self.declared.insert(*local);
            }
            StmtKind::LetTuple { locals, init } => {
                let t = self.expr(*init);
                let t = match self.resolve(t) {
                    T::Ty(ty @ Ty::Tuple(_)) => self.fresh_of(ty, self.loc(*init)),
                    other => other,
                };
                match t {
                    T::Tuple(elems) if elems.len() == locals.len() => {
                        for (local, elem) in locals.iter().zip(elems) {
                            if let Some(local) = local {
                                self.locals[local.0 as usize] = Some(T::Var(*elem));
                            }
                        }
                    }
                    T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(
                            self.loc(*init),
                            format!(
                                "mismatched types: expected a tuple of {} elements, found {text}",
                                locals.len()
                            ),
                        );
                    }
                }
                for local in locals.iter().flatten() {
                    if self.locals[local.0 as usize].is_none() {
                        self.locals[local.0 as usize] = Some(T::Error);
                    }
                }
            }
            StmtKind::Assign { place, op, value } => self.assign(*place, *op, *value),
            StmtKind::Assert(assertion) => self.assertion(assertion),
            StmtKind::Print { format, .. } => self.format_args(format, true),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.condition(*cond);
                self.block(then_block);
                if let Some(else_block) = else_block {
                    self.block(else_block);
                }
            }
            StmtKind::While { cond, body, label } => {
                self.condition(*cond);
                self.in_loop(label, |this| this.block(body));
            }
            StmtKind::Loop { body, label } => self.in_loop(label, |this| this.block(body)),
            StmtKind::Match { scrutinee, arms } => {
                let t = self.expr(*scrutinee);
                self.match_patterns(t, arms.iter().map(|(p, _)| p.as_slice()), stmt.span);
                for (_, body) in arms {
                    self.block(body);
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                label,
                ..
            } => {
                let start_t = self.expr(*start);
                let end_t = self.expr(*end);
                self.unify(start_t, end_t, self.loc(*end));
                if !self.is_int(start_t) && self.known_scalar(start_t).is_some() {
                    let text = self.describe(start_t);
                    self.cx.error(
                        self.loc(*start),
                        format!("`for` ranges need integer bounds, found {text}"),
                    );
                }
                if let Some(step) = step {
                    let step_t = self.expr(*step);
                    self.unify(T::Ty(Ty::Scalar(Scalar::Usize)), step_t, self.loc(*step));
                }
                self.locals[var.0 as usize] = Some(start_t);
                self.in_loop(label, |this| this.block(body));
            }
            StmtKind::Break(label) | StmtKind::Continue(label) => {
                if self.loops.is_empty() {
                    self.cx.error(
                        stmt.span,
                        "`break` and `continue` are only allowed inside a loop",
                    );
                } else if let Some(label) = label {
                    if !self
                        .loops
                        .iter()
                        .any(|l| l.as_deref() == Some(label.as_str()))
                    {
                        self.cx.error(
                            stmt.span,
                            format!("use of undeclared label `'{label}`: no enclosing loop has it"),
                        );
                    }
                }
            }
            StmtKind::Return(value) if !self.returns.is_empty() => {
                let ret = *self.returns.last().expect("checked non-empty");
                match value {
                    Some(value) => {
                        let t = self.expr(*value);
                        self.unify(ret, t, self.loc(*value));
                    }
                    None => {
                        self.unify(ret, T::Ty(Ty::Unit), stmt.span);
                    }
                }
            }
            StmtKind::Return(value) => {
                let ret = self.kernel.ret;
                match (value, ret) {
                    (Some(value), Some(ret)) => {
                        let t = self.expr(*value);
                        let expected = self.fresh_of(ret, self.loc(*value));
                        self.unify(expected, t, self.loc(*value));
                    }
                    (None, Some(ret)) => self.cx.error(
                        stmt.span,
                        format!(
                            "`{}` returns a `{}`: write `return value;`",
                            self.kernel.name,
                            ret.describe()
                        ),
                    ),
                    (Some(value), None) => self.cx.error(
                        self.loc(*value),
                        format!("`{}` returns nothing: write `return;`", self.kernel.name),
                    ),
                    (None, None) => {}
                }
            }
            StmtKind::Block(block) => self.block(block),
            StmtKind::Expr(expr) => {
                self.expr(*expr);
            }
        }
    }

    fn in_loop(&mut self, label: &Option<String>, f: impl FnOnce(&mut Self)) {
        self.loops.push(label.clone());
        f(self);
        self.loops.pop();
    }

    /// Patterns must have the scrutinee's type (an integer or `bool`), and the arms must cover
    /// every value, as Rust requires: a `_` arm, or both `true` and `false`.
    pub(super) fn match_patterns<'p>(
        &mut self,
        scrutinee: T,
        arms: impl Iterator<Item = &'p [Pattern]>,
        loc: Loc,
    ) {
        let enumeration = match self.resolve(scrutinee) {
            T::Ty(Ty::Enum(def)) => Some(def),
            _ => None,
        };
        if enumeration.is_none()
            && !(self.is_int(scrutinee) || self.known_scalar(scrutinee) == Some(Scalar::Bool))
        {
            let text = self.describe(scrutinee);
            self.cx.error(
                loc,
                format!("`match` in kernels is on integers and `bool`, not {text}"),
            );
            return;
        }
        let (mut wild, mut seen_true, mut seen_false) = (false, false, false);
        let mut variants = Vec::new();
        // The integer values the arms cover, as inclusive intervals of numbers (`None` once
        // an arm's bound is not a number).
        let mut covered: Option<Vec<(i128, i128)>> = Some(Vec::new());
        for patterns in arms {
            for pattern in patterns {
                let interval = match pattern {
                    Pattern::Value(value) => int_value(self.kernel, *value).map(|v| (v, v)),
                    Pattern::Range {
                        start,
                        end,
                        inclusive,
                    } => {
                        let start = start.map(|s| int_value(self.kernel, s));
                        let end = end.map(|e| int_value(self.kernel, e));
                        match (start, end) {
                            (Some(None), _) | (_, Some(None)) => None,
                            (start, end) => Some((
                                start.flatten().unwrap_or(i128::MIN),
                                match end.flatten() {
                                    Some(e) if *inclusive => e,
                                    Some(e) => e - 1,
                                    None => i128::MAX,
                                },
                            )),
                        }
                    }
                    Pattern::Wild => None,
                };
                match (&mut covered, interval) {
                    (Some(list), Some(interval)) => list.push(interval),
                    (covered, None) if !matches!(pattern, Pattern::Wild) => *covered = None,
                    _ => {}
                }
                match pattern {
                    Pattern::Wild => wild = true,
                    Pattern::Value(value) => {
                        match &self.kernel.expr(*value).kind {
                            ExprKind::Lit(Lit::Bool(b)) => {
                                seen_true |= b;
                                seen_false |= !b;
                            }
                            ExprKind::Variant { name, .. } => variants.push(name.clone()),
                            _ => {}
                        }
                        let t = self.expr(*value);
                        self.unify(scrutinee, t, self.loc(*value));
                    }
                    Pattern::Range { start, end, .. } => {
                        for bound in start.iter().chain(end) {
                            let t = self.expr(*bound);
                            self.unify(scrutinee, t, self.loc(*bound));
                        }
                    }
                }
            }
        }
        let all_variants = enumeration.is_some_and(|def| {
            def.0
                .variants
                .iter()
                .all(|(name, _)| variants.contains(name))
        });
        let domain = match self.known_scalar(scrutinee) {
            Some(scalar) if scalar.is_int() && scalar.bound().is_none() => {
                let bits = scalar.bits();
                Some(if scalar.is_signed_int() {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                })
            }
            _ => None,
        };
        // Ranges open at an end (`0..`, `..=-2`) and values that together cover the type.
        let ranges_cover = match (covered, domain) {
            (Some(mut list), Some((lo, hi))) if !list.is_empty() => {
                list.sort();
                let mut next = lo;
                for (a, b) in list {
                    if a > next {
                        break;
                    }
                    next = next.max(b.saturating_add(1));
                }
                next > hi
            }
            _ => false,
        };
        let exhaustive = wild || (seen_true && seen_false) || all_variants || ranges_cover;
        if !exhaustive {
            self.cx.error(
                loc,
                "non-exhaustive `match`: add a `_ => ...` arm for the values not listed",
            );
        }
    }

    pub(super) fn condition(&mut self, cond: ExprId) {
        let t = self.expr(cond);
        self.unify(T::Ty(Ty::Scalar(Scalar::Bool)), t, self.loc(cond));
    }

    fn assign(&mut self, place: ExprId, op: Option<BinOp>, value: ExprId) {
        let place_t = self.expr(place);
        let value_t = self.expr(value);
        let kernel = self.kernel;
        match &kernel.expr(place).kind {
            ExprKind::Local(local) => {
                let decl = kernel.local(*local);
                let value_resolved = self.resolve(value_t);
                if self.declared.contains(local)
                    && matches!(
                        value_resolved,
                        T::Closure(_)
                            | T::Array { .. }
                            | T::Ty(
                                Ty::Slice { .. }
                                    | Ty::Shared { .. }
                                    | Ty::Array { .. }
                                    | Ty::TensorMap(_)
                                    | Ty::Dim3
                                    | Ty::Index3
                                    | Ty::Unit
                            )
                    )
                {
                    let what = self.describe(value_resolved);
                    self.cx.error(
                        self.loc(value),
                        format!(
                            "a value computed by statements (a block, `if`, `match` or `loop` \
                             with statements, or `let x;` assigned later) is a number, `bool`, \
                             struct or tuple, not {what}: bind this value with `let` directly"
                        ),
                    );
                } else if matches!(place_t, T::Array { .. } | T::Ty(Ty::Shared { .. })) {
                    self.cx.error(
                        self.loc(place),
                        "arrays and shared memory cannot be assigned whole: assign their elements",
                    );
                } else if kernel.param_pass(*local).is_some_and(|p| p != PassBy::Value) {
                    self.cx.error(
                        self.loc(place),
                        format!(
                            "`{0}` is a reference: assign through it with `*{0} = ...`",
                            decl.name
                        ),
                    );
                } else if !decl.mutable && !self.declared.contains(local) {
                    let is_param = kernel.params.iter().any(|p| p.local == *local);
                    let message = if is_param {
                        format!(
                            "cannot assign to immutable parameter `{}`: declare it `mut {}`",
                            decl.name, decl.name
                        )
                    } else {
                        format!(
                            "cannot assign twice to immutable variable `{}`: declare it `let mut {}`",
                            decl.name, decl.name
                        )
                    };
                    self.cx.error(self.loc(place), message);
                }
            }
            ExprKind::Index { base, .. } => {
                if let (Some(T::Array { .. }), ExprKind::Local(local)) =
                    (self.exprs[base.0 as usize], &kernel.expr(*base).kind)
                {
                    let decl = kernel.local(*local);
                    let table = kernel
                        .params
                        .iter()
                        .any(|p| p.local == *local && p.constant);
                    if table {
                        self.cx.error(
                            self.loc(place),
                            format!(
                                "cannot assign to `{}[_]`: a `#[constant]` table is read-only; \
                                 copy what changes into a `let mut` array",
                                decl.name
                            ),
                        );
                    } else if !decl.mutable && kernel.param_pass(*local) != Some(PassBy::RefMut) {
                        self.cx.error(
                            self.loc(place),
                            format!(
                                "cannot assign to `{}[_]`: declare the array `let mut {}`",
                                decl.name, decl.name
                            ),
                        );
                    }
                } else if let Some(T::Ty(Ty::Slice { mutable: false, .. })) =
                    self.exprs[base.0 as usize]
                {
                    let name = match &kernel.expr(*base).kind {
                        ExprKind::Local(local) => kernel.local(*local).name.clone(),
                        _ => "the slice".to_string(),
                    };
                    self.cx.error(
                        self.loc(place),
                        format!(
                            "cannot assign to `{name}[_]`, which is behind a `&` reference: \
                             declare the parameter as `{name}: &mut [T]`"
                        ),
                    );
                } else if let Some(problem) = self.place_problem(place, true) {
                    self.cx
                        .error(self.loc(place), format!("cannot assign here: {problem}"));
                }
            }
            ExprKind::Field { .. } | ExprKind::TupleField { .. } | ExprKind::Deref(_) => {
                if let Some(problem) = self.place_problem(place, true) {
                    self.cx
                        .error(self.loc(place), format!("cannot assign here: {problem}"));
                }
            }
            _ => self.cx.error(
                self.loc(place),
                "cannot assign to this expression: assign to a `let mut` variable or to an element of a `&mut [T]` slice",
            ),
        }
        if let (Some(op), T::Ty(user @ Ty::Struct(_))) = (op, self.resolve(place_t)) {
            self.user_compound(op, user, value_t, self.loc(place));
            return;
        }
        match op {
            None => {
                self.unify(place_t, value_t, self.loc(value));
            }
            Some(op) => {
                self.binary_type(op, place_t, value_t, self.loc(place), self.loc(value));
            }
        }
    }
}

/// The value of an integer literal pattern, negated or not (`-1`).
fn int_value(function: &Function, id: ExprId) -> Option<i128> {
    match &function.expr(id).kind {
        ExprKind::Lit(Lit::Int { value, .. }) => i128::try_from(*value).ok(),
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => int_value(function, *operand).map(|v| -v),
        _ => None,
    }
}
