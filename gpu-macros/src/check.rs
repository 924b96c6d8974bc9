//! Stage 2: type check. Infers every `let` and literal the way rustc would and records one
//! type per expression and per variable, which both emitters read.
//!
//! Unsuffixed literals start as inference variables (`{integer}`, `{float}`) that unify with
//! whatever they meet; the ones still open at the end default to `i32` and `f64`, as in Rust.

use crate::ctxt::Ctxt;
use crate::intrinsics::{Access, Arg, Arity, Op, Placement, Ret};
use crate::ir::*;
use crate::methods::{self, ArgTy, RetTy};
use std::collections::HashSet;

/// The result of type checking: the type of every expression and every variable.
pub struct Types {
    pub exprs: Vec<Ty>,
    pub locals: Vec<Ty>,
}

impl Types {
    pub fn expr(&self, id: ExprId) -> Ty {
        self.exprs[id.0 as usize]
    }

    pub fn local(&self, id: LocalId) -> Ty {
        self.locals[id.0 as usize]
    }

    /// The scalar type of an expression the checker proved to be scalar.
    pub fn scalar(&self, id: ExprId) -> Scalar {
        match self.expr(id) {
            Ty::Scalar(scalar) => scalar,
            other => unreachable!("checked as scalar, found {other:?}"),
        }
    }
}

/// Type checks every function of `program`; `None` when there were errors (they are in `cx`).
pub fn check_program(cx: &Ctxt, program: &Program) -> Option<Vec<Types>> {
    check_recursion(cx, program);
    let mut all = Vec::new();
    for function in &program.functions {
        let mut checker = Checker {
            cx,
            program,
            kernel: function,
            exprs: vec![None; function.exprs.len()],
            locals: vec![None; function.locals.len()],
            vars: Vec::new(),
            loops: Vec::new(),
            negated_literals: Vec::new(),
            negations: Vec::new(),
            let_inits: function
                .exprs
                .iter()
                .enumerate()
                .filter(|(_, e)| is_constructor(&e.kind))
                .map(|(i, _)| ExprId(i as u32))
                .filter(|id| is_let_init(&function.body, *id))
                .collect(),
            statements: function
                .exprs
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    matches!(&e.kind, ExprKind::Intrinsic { op, .. }
                        if matches!(op.signature().placement, Placement::Statement { .. }))
                })
                .map(|(i, _)| ExprId(i as u32))
                .filter(|id| is_statement(&function.body, *id))
                .collect(),
        };
        for param in &function.params {
            checker.locals[param.local.0 as usize] = Some(T::Ty(param.ty));
        }
        checker.block(&function.body);
        if let Some(ret) = function.ret {
            if !block_returns(&function.body) {
                cx.error(
                    function.name_span,
                    format!(
                        "device function `{}` must return a `{}` on every path: end it with the value or `return value;`",
                        function.name,
                        ret.rust_name()
                    ),
                );
            }
        }
        all.push(checker.finish());
    }
    if cx.has_errors() {
        return None;
    }
    all.into_iter().collect()
}

/// Expressions that create storage and so may only initialise a `let`.
fn is_constructor(kind: &ExprKind) -> bool {
    match kind {
        ExprKind::SharedArray { .. }
        | ExprKind::DynamicShared { .. }
        | ExprKind::ArrayRepeat { .. }
        | ExprKind::ArrayList { .. }
        | ExprKind::Match { .. } => true,
        ExprKind::Intrinsic { op, .. } => op.signature().placement == Placement::LetInit,
        _ => false,
    }
}

/// Whether `id` is the initializer of a `let` somewhere in `block`.
fn is_let_init(block: &Block, id: ExprId) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Let { init, .. } | StmtKind::Return(Some(init)) => *init == id,
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, body)| is_let_init(body, id)),
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => is_let_init(then_block, id) || else_block.as_ref().is_some_and(|b| is_let_init(b, id)),
        StmtKind::While { body, .. } | StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
            is_let_init(body, id)
        }
        StmtKind::Block(inner) => is_let_init(inner, id),
        _ => false,
    })
}

/// Whether `id` is built from integer literals and const generic parameters alone, so C++
/// sees a compile-time constant.
fn is_const_expr(function: &Function, id: ExprId) -> bool {
    match &function.expr(id).kind {
        ExprKind::GenericConst(_) | ExprKind::Lit(Lit::Int { .. }) => true,
        ExprKind::Binary { lhs, rhs, .. } => {
            is_const_expr(function, *lhs) && is_const_expr(function, *rhs)
        }
        ExprKind::Unary { operand, .. } => is_const_expr(function, *operand),
        ExprKind::Cast { expr, .. } => is_const_expr(function, *expr),
        _ => false,
    }
}

/// Whether `id` stands as an expression statement somewhere in `block`.
fn is_statement(block: &Block, id: ExprId) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Expr(expr) => *expr == id,
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, body)| is_statement(body, id)),
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => {
            is_statement(then_block, id) || else_block.as_ref().is_some_and(|b| is_statement(b, id))
        }
        StmtKind::While { body, .. } | StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
            is_statement(body, id)
        }
        StmtKind::Block(inner) => is_statement(inner, id),
        _ => false,
    })
}

/// Whether every path through `block` ends in `return`.
fn block_returns(block: &Block) -> bool {
    block.stmts.last().is_some_and(|stmt| match &stmt.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(inner) => block_returns(inner),
        StmtKind::If {
            then_block,
            else_block: Some(else_block),
            ..
        } => block_returns(then_block) && block_returns(else_block),
        StmtKind::Match { arms, .. } => arms.iter().all(|(_, body)| block_returns(body)),
        _ => false,
    })
}

/// GPU stacks are small and CUDA's recursion support is a trap for the unwary: a call cycle
/// among device functions is an error at the call that closes it.
fn check_recursion(cx: &Ctxt, program: &Program) {
    for (start, function) in program.functions.iter().enumerate() {
        // Depth-first from `start`: a path back to `start` is a cycle.
        let mut stack: Vec<(usize, Vec<String>)> = vec![(start, vec![function.name.clone()])];
        let mut seen = vec![false; program.functions.len()];
        while let Some((index, path)) = stack.pop() {
            for (callee, _, loc) in program.functions[index].callees() {
                let Some((callee_index, _)) = program.function(callee) else {
                    continue;
                };
                if callee_index == start {
                    if index == start {
                        let chain = path.join(" → ");
                        cx.error(
                            loc,
                            format!(
                                "recursion is not supported in GPU code: `{}` calls itself ({chain} → {callee}); \
                                 rewrite it as a loop",
                                function.name
                            ),
                        );
                    } else if start < index {
                        // Reported once, from the function that comes first.
                        let chain = path.join(" → ");
                        cx.error(
                            loc,
                            format!(
                                "recursion is not supported in GPU code: {chain} → {callee}; rewrite it as a loop"
                            ),
                        );
                    }
                    continue;
                }
                if !seen[callee_index] {
                    seen[callee_index] = true;
                    let mut next = path.clone();
                    next.push(callee.to_string());
                    stack.push((callee_index, next));
                }
            }
        }
    }
}

/// A type during inference.
#[derive(Clone, Copy, Debug)]
enum T {
    Ty(Ty),
    Var(u32),
    /// The type of an expression already reported as wrong: it unifies with anything, so one
    /// mistake gives one message.
    Error,
    /// A local array; its element type is an inference variable.
    Array {
        elem: u32,
        len: Len,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum VarKind {
    Int,
    Float,
    /// An array element: any scalar.
    Any,
}

/// A literal's inference variable: union-find parent, kind, and the type once known.
struct Var {
    parent: u32,
    kind: VarKind,
    bound: Option<Scalar>,
}

struct Checker<'a> {
    cx: &'a Ctxt,
    program: &'a Program,
    /// The function being checked.
    kernel: &'a Function,
    exprs: Vec<Option<T>>,
    locals: Vec<Option<T>>,
    vars: Vec<Var>,
    /// The enclosing loops' labels, innermost last.
    loops: Vec<Option<String>>,
    /// Integer literals directly under a unary minus: they may reach `MIN`.
    negated_literals: Vec<ExprId>,
    /// Negations whose operand type was still open when met.
    negations: Vec<(ExprId, Loc)>,
    /// Constructors that initialise a `let`, where they are allowed.
    let_inits: HashSet<ExprId>,
    /// Statement-only intrinsics (`wgmma_m64n*k16_*`, `wgmma_wait`) that stand as statements.
    statements: HashSet<ExprId>,
}

impl Checker<'_> {
    // ---- inference variables -----------------------------------------------------------

    fn new_var(&mut self, kind: VarKind) -> T {
        let id = self.vars.len() as u32;
        self.vars.push(Var {
            parent: id,
            kind,
            bound: None,
        });
        T::Var(id)
    }

    fn root(&mut self, mut id: u32) -> u32 {
        while self.vars[id as usize].parent != id {
            let parent = self.vars[id as usize].parent;
            self.vars[id as usize].parent = self.vars[parent as usize].parent;
            id = parent;
        }
        id
    }

    /// `t` with every bound variable replaced by its type.
    fn resolve(&mut self, t: T) -> T {
        match t {
            T::Ty(_) | T::Error | T::Array { .. } => t,
            T::Var(id) => {
                let root = self.root(id);
                match self.vars[root as usize].bound {
                    Some(scalar) => T::Ty(Ty::Scalar(scalar)),
                    None => T::Var(root),
                }
            }
        }
    }

    fn describe(&mut self, t: T) -> String {
        match self.resolve(t) {
            T::Ty(ty) => format!("`{}`", ty.describe()),
            T::Var(id) => match self.vars[id as usize].kind {
                VarKind::Int => "integer".to_string(),
                VarKind::Float => "floating-point number".to_string(),
                VarKind::Any => "a value".to_string(),
            },
            T::Error => "an erroneous value".to_string(),
            T::Array { elem, len } => {
                let elem = self.describe(T::Var(elem));
                format!("an array of {} ({elem})", len.describe())
            }
        }
    }

    /// Makes `found` equal to `expected`, or reports a mismatch at `loc`.
    fn unify(&mut self, expected: T, found: T, loc: Loc) -> bool {
        let (e, f) = (self.resolve(expected), self.resolve(found));
        let ok = match (e, f) {
            (T::Error, _) | (_, T::Error) => true,
            (T::Array { elem: a, len: la }, T::Array { elem: b, len: lb }) => {
                la == lb && self.unify_quiet(T::Var(a), T::Var(b))
            }
            (T::Array { .. }, _) | (_, T::Array { .. }) => false,
            (T::Ty(a), T::Ty(b)) => a == b,
            (T::Var(v), T::Ty(ty)) | (T::Ty(ty), T::Var(v)) => self.bind(v, ty),
            (T::Var(a), T::Var(b)) => self.union(a, b),
        };
        if !ok {
            let (expected_text, found_text) = (self.describe(e), self.describe(f));
            let hint = self.mismatch_hint(e, f);
            self.cx.error(
                loc,
                format!("mismatched types: expected {expected_text}, found {found_text}{hint}"),
            );
        }
        ok
    }

    /// Joins two variables: kinds must agree, except that `Any` takes the other's kind.
    fn union(&mut self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        let (ka, kb) = (self.vars[a as usize].kind, self.vars[b as usize].kind);
        let (root, child) = match (ka, kb) {
            _ if ka == kb => (a, b),
            (_, VarKind::Any) => (a, b),
            (VarKind::Any, _) => (b, a),
            _ => return false,
        };
        self.vars[child as usize].parent = root;
        true
    }

    /// `unify` without a message (the caller reports).
    fn unify_quiet(&mut self, a: T, b: T) -> bool {
        match (self.resolve(a), self.resolve(b)) {
            (T::Array { elem: a, len: la }, T::Array { elem: b, len: lb }) => {
                la == lb && self.unify_quiet(T::Var(a), T::Var(b))
            }
            (T::Var(a), T::Var(b)) => self.union(a, b),
            (T::Var(v), T::Ty(ty)) | (T::Ty(ty), T::Var(v)) => self.bind(v, ty),
            (T::Ty(a), T::Ty(b)) => a == b,
            _ => false,
        }
    }

    /// A fresh array element variable, joined with `t`.
    fn element_var(&mut self, t: T, loc: Loc) -> u32 {
        let T::Var(var) = self.new_var(VarKind::Any) else {
            unreachable!("new_var returns a variable")
        };
        if !matches!(self.resolve(t), T::Var(_) | T::Ty(Ty::Scalar(_)) | T::Error) {
            let text = self.describe(t);
            self.cx.error(
                loc,
                format!("array elements must be numbers or `bool`, found {text}"),
            );
        } else {
            self.unify(T::Var(var), t, loc);
        }
        var
    }

    fn mismatch_hint(&mut self, expected: T, found: T) -> String {
        match (expected, found) {
            (T::Ty(Ty::Scalar(e)), T::Var(_)) if e.is_half() => format!(
                "; `{0}` has no literals (it is not a primitive type): write `{0}::from_f32(2.0)` or `{0}::ONE`",
                e.rust_name()
            ),
            (T::Ty(Ty::Scalar(e)), T::Var(v)) if e.is_float() => {
                if self.vars[v as usize].kind == VarKind::Int {
                    format!(
                        "; write a float literal such as `2.0` (or `2.0_{}`)",
                        e.rust_name()
                    )
                } else {
                    String::new()
                }
            }
            (T::Ty(Ty::Scalar(e)), T::Ty(Ty::Scalar(f)))
                if e != Scalar::Bool && f != Scalar::Bool =>
            {
                format!(
                    "; kernels convert no number type implicitly: write `... as {}`",
                    e.rust_name()
                )
            }
            _ => String::new(),
        }
    }

    fn bind(&mut self, var: u32, ty: Ty) -> bool {
        let Ty::Scalar(scalar) = ty else {
            return false;
        };
        let kind_ok = match self.vars[var as usize].kind {
            VarKind::Int => scalar.is_int() || scalar.bound() == Some(Bound::Number),
            VarKind::Float => scalar.is_float(),
            VarKind::Any => true,
        };
        if kind_ok {
            self.vars[var as usize].bound = Some(scalar);
        }
        kind_ok
    }

    /// The known scalar type of `t`, if inference has settled it.
    fn known_scalar(&mut self, t: T) -> Option<Scalar> {
        match self.resolve(t) {
            T::Ty(Ty::Scalar(scalar)) => Some(scalar),
            _ => None,
        }
    }

    fn var_kind(&mut self, t: T) -> Option<VarKind> {
        match self.resolve(t) {
            T::Var(id) => match self.vars[id as usize].kind {
                VarKind::Any => None,
                kind => Some(kind),
            },
            T::Ty(_) | T::Error | T::Array { .. } => None,
        }
    }

    fn is_error(&mut self, t: T) -> bool {
        matches!(self.resolve(t), T::Error)
    }

    fn is_numeric(&mut self, t: T) -> bool {
        self.is_error(t)
            || self.var_kind(t).is_some()
            || self.known_scalar(t).is_some_and(Scalar::is_number)
    }

    fn is_int(&mut self, t: T) -> bool {
        self.is_error(t)
            || self.var_kind(t) == Some(VarKind::Int)
            || self.known_scalar(t).is_some_and(Scalar::is_int)
    }

    fn loc(&self, id: ExprId) -> Loc {
        self.kernel.expr(id).span
    }

    // ---- statements ----------------------------------------------------------------------

    fn block(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { local, init } => {
                let found = self.expr(*init);
                let decl = self.kernel.local(*local);
                let t = match decl.annotation {
                    Some(Ty::Array { elem, len }) => {
                        let var = self.element_var(T::Ty(Ty::Scalar(elem)), self.loc(*init));
                        let annotation = T::Array { elem: var, len };
                        self.unify(annotation, found, self.loc(*init));
                        annotation
                    }
                    Some(annotation) => {
                        self.unify(T::Ty(annotation), found, self.loc(*init));
                        T::Ty(annotation)
                    }
                    None => found,
                };
                let storage = matches!(t, T::Array { .. } | T::Ty(Ty::Shared { .. }));
                if storage && !is_constructor(&self.kernel.expr(*init).kind) {
                    self.cx.error(
                        self.loc(*init),
                        "arrays and shared memory cannot be copied: index the original",
                    );
                }
                if let T::Ty(ty @ (Ty::Slice { .. } | Ty::Dim3 | Ty::Index3 | Ty::Unit)) = t {
                    self.cx.error(
                        self.loc(*init),
                        format!(
                            "a value of type `{}` cannot be stored in a variable: {}",
                            ty.describe(),
                            match ty {
                                Ty::Slice { .. } => "index the slice parameter directly",
                                Ty::Unit => "this expression has no value",
                                _ => "store one component, e.g. `let tx = thread_idx().x;`",
                            }
                        ),
                    );
                }
                self.locals[local.0 as usize] = Some(t);
            }
            StmtKind::Assign { place, op, value } => self.assign(*place, *op, *value),
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
            StmtKind::Return(value) => {
                let ret = self.kernel.ret;
                match (value, ret) {
                    (Some(value), Some(ret)) => {
                        let t = self.expr(*value);
                        self.unify(T::Ty(Ty::Scalar(ret)), t, self.loc(*value));
                    }
                    (None, Some(ret)) => self.cx.error(
                        stmt.span,
                        format!(
                            "`{}` returns a `{}`: write `return value;`",
                            self.kernel.name,
                            ret.rust_name()
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
    fn match_patterns<'p>(
        &mut self,
        scrutinee: T,
        arms: impl Iterator<Item = &'p [Pattern]>,
        loc: Loc,
    ) {
        if !(self.is_int(scrutinee) || self.known_scalar(scrutinee) == Some(Scalar::Bool)) {
            let text = self.describe(scrutinee);
            self.cx.error(
                loc,
                format!("`match` in kernels is on integers and `bool`, not {text}"),
            );
            return;
        }
        let (mut wild, mut seen_true, mut seen_false) = (false, false, false);
        for patterns in arms {
            for pattern in patterns {
                match pattern {
                    Pattern::Wild => wild = true,
                    Pattern::Value(value) => {
                        if let ExprKind::Lit(Lit::Bool(b)) = self.kernel.expr(*value).kind {
                            seen_true |= b;
                            seen_false |= !b;
                        }
                        let t = self.expr(*value);
                        self.unify(scrutinee, t, self.loc(*value));
                    }
                    Pattern::Range { start, end, .. } => {
                        for bound in [start, end] {
                            let t = self.expr(*bound);
                            self.unify(scrutinee, t, self.loc(*bound));
                        }
                    }
                }
            }
        }
        let exhaustive = wild || (seen_true && seen_false);
        if !exhaustive {
            self.cx.error(
                loc,
                "non-exhaustive `match`: add a `_ => ...` arm for the values not listed",
            );
        }
    }

    fn condition(&mut self, cond: ExprId) {
        let t = self.expr(cond);
        self.unify(T::Ty(Ty::Scalar(Scalar::Bool)), t, self.loc(cond));
    }

    fn assign(&mut self, place: ExprId, op: Option<BinOp>, value: ExprId) {
        let place_t = self.expr(place);
        let value_t = self.expr(value);
        match &self.kernel.expr(place).kind {
            ExprKind::Local(local) => {
                let decl = self.kernel.local(*local);
                if matches!(place_t, T::Array { .. } | T::Ty(Ty::Shared { .. })) {
                    self.cx.error(
                        self.loc(place),
                        "arrays and shared memory cannot be assigned whole: assign their elements",
                    );
                } else if !decl.mutable {
                    let is_param = self.kernel.params.iter().any(|p| p.local == *local);
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
                    (self.exprs[base.0 as usize], &self.kernel.expr(*base).kind)
                {
                    let decl = self.kernel.local(*local);
                    if !decl.mutable {
                        self.cx.error(
                            self.loc(place),
                            format!(
                                "cannot assign to `{}[_]`: declare the array `let mut {}`",
                                decl.name, decl.name
                            ),
                        );
                    }
                }
                if let Some(T::Ty(Ty::Slice { mutable: false, .. })) = self.exprs[base.0 as usize] {
                    let name = match &self.kernel.expr(*base).kind {
                        ExprKind::Local(local) => self.kernel.local(*local).name.clone(),
                        _ => "the slice".to_string(),
                    };
                    self.cx.error(
                        self.loc(place),
                        format!(
                            "cannot assign to `{name}[_]`, which is behind a `&` reference: \
                             declare the parameter as `{name}: &mut [T]`"
                        ),
                    );
                }
            }
            _ => self.cx.error(
                self.loc(place),
                "cannot assign to this expression: assign to a `let mut` variable or to an element of a `&mut [T]` slice",
            ),
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

    // ---- expressions --------------------------------------------------------------------

    fn expr(&mut self, id: ExprId) -> T {
        let t = self.expr_kind(id);
        self.exprs[id.0 as usize] = Some(t);
        t
    }

    fn expr_kind(&mut self, id: ExprId) -> T {
        let loc = self.loc(id);
        let kernel = self.kernel;
        match &kernel.expr(id).kind {
            ExprKind::Lit(Lit::Bool(_)) => T::Ty(Ty::Scalar(Scalar::Bool)),
            ExprKind::Lit(Lit::Int { suffix, .. }) => match suffix {
                Some(scalar) => T::Ty(Ty::Scalar(*scalar)),
                None => self.new_var(VarKind::Int),
            },
            ExprKind::Lit(Lit::Float { suffix, .. }) => match suffix {
                Some(scalar) => T::Ty(Ty::Scalar(*scalar)),
                None => self.new_var(VarKind::Float),
            },
            ExprKind::Local(local) => self.locals[local.0 as usize].unwrap_or(T::Error),
            ExprKind::Binary { op, lhs, rhs } => {
                let lhs_t = self.expr(*lhs);
                let rhs_t = self.expr(*rhs);
                self.binary_type(*op, lhs_t, rhs_t, self.loc(*lhs), self.loc(*rhs))
            }
            ExprKind::Unary { op, operand } => {
                if let (UnOp::Neg, ExprKind::Lit(Lit::Int { .. })) =
                    (op, &kernel.expr(*operand).kind)
                {
                    self.negated_literals.push(*operand);
                }
                let t = self.expr(*operand);
                self.unary_type(*op, t, id, loc)
            }
            ExprKind::Cast { expr, to } => {
                let from = self.expr(*expr);
                self.cast(from, *to, loc);
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Index { base, index } => {
                let base_t = self.expr(*base);
                self.index_type(*index);
                match self.resolve(base_t) {
                    T::Ty(Ty::Slice { elem, .. } | Ty::Shared { elem, .. }) => {
                        T::Ty(Ty::Scalar(elem))
                    }
                    T::Array { elem, .. } => T::Var(elem),
                    T::Error => T::Error,
                    _ => {
                        let text = self.describe(base_t);
                        self.cx.error(
                            self.loc(*base),
                            format!("cannot index into a value of type {text}: only slice parameters can be indexed"),
                        );
                        T::Error
                    }
                }
            }
            ExprKind::Len(base) => {
                let base_t = self.expr(*base);
                if !matches!(
                    self.resolve(base_t),
                    T::Ty(Ty::Slice { .. } | Ty::Shared { .. }) | T::Array { .. } | T::Error
                ) {
                    let text = self.describe(base_t);
                    self.cx.error(
                        loc,
                        format!("`len()` is only available on slices, not on {text}"),
                    );
                }
                T::Ty(Ty::Scalar(Scalar::Usize))
            }
            ExprKind::Method {
                receiver,
                method,
                method_span,
                args,
                receiver_ty,
            } => self.method(*receiver, method, *method_span, args, *receiver_ty),
            ExprKind::Builtin(builtin) => T::Ty(builtin.ty()),
            ExprKind::GenericConst(_) => T::Ty(Ty::Scalar(Scalar::Usize)),
            ExprKind::FromBits { bits, to } => {
                let t = self.expr(*bits);
                let unsigned = if *to == Scalar::F32 {
                    Scalar::U32
                } else {
                    Scalar::U64
                };
                self.unify(T::Ty(Ty::Scalar(unsigned)), t, self.loc(*bits));
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Convert { expr, to } => {
                let t = self.expr(*expr);
                if to.is_half() {
                    // The inner conversion already fixed the source type.
                } else {
                    self.unify(T::Ty(Ty::Scalar(*to)), t, self.loc(*expr));
                }
                T::Ty(Ty::Scalar(*to))
            }
            ExprKind::Call { name, args, .. } => self.call(name, args, loc),
            kind if is_constructor(kind) && !self.let_inits.contains(&id) => {
                self.cx.error(
                    loc,
                    "this creates storage, so it can only initialise a `let`: `let name = ...;`",
                );
                T::Error
            }
            ExprKind::Intrinsic { op, args } => self.intrinsic(*op, args, id, loc),
            ExprKind::SharedArray { elem, len } => T::Ty(Ty::Shared {
                elem: *elem,
                len: Some(*len),
            }),
            ExprKind::DynamicShared { elem } => T::Ty(Ty::Shared {
                elem: *elem,
                len: None,
            }),
            ExprKind::ArrayRepeat { value, len } => {
                let t = self.expr(*value);
                let elem = self.element_var(t, self.loc(*value));
                T::Array { elem, len: *len }
            }
            ExprKind::ArrayList { elems } => {
                let first = self.expr(elems[0]);
                let elem = self.element_var(first, self.loc(elems[0]));
                for e in &elems[1..] {
                    let t = self.expr(*e);
                    self.unify(T::Var(elem), t, self.loc(*e));
                }
                T::Array {
                    elem,
                    len: Len::Known(elems.len() as u64),
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                let t = self.expr(*scrutinee);
                self.match_patterns(t, arms.iter().map(|(p, _)| p.as_slice()), loc);
                let first = self.expr(arms[0].1);
                for (_, value) in &arms[1..] {
                    let v = self.expr(*value);
                    self.unify(first, v, self.loc(*value));
                }
                first
            }
            ExprKind::Axis { base, axis } => {
                let base_t = self.expr(*base);
                match self.resolve(base_t) {
                    T::Ty(Ty::Dim3) => T::Ty(Ty::Scalar(Scalar::U32)),
                    T::Ty(Ty::Index3) => T::Ty(Ty::Scalar(Scalar::Usize)),
                    T::Error => T::Error,
                    _ => {
                        let text = self.describe(base_t);
                        self.cx.error(
                            loc,
                            format!(
                                "no field `{}` on {text}: components are read from index intrinsics such as `thread_idx().x`",
                                axis.name()
                            ),
                        );
                        T::Error
                    }
                }
            }
            ExprKind::Const { ty, name } => match constant_type(*ty, name) {
                Some(t) => T::Ty(Ty::Scalar(t)),
                None => {
                    self.cx.error(
                        loc,
                        format!(
                            "unknown constant `{}::{name}`: supported are {}",
                            ty.rust_name(),
                            constant_names(*ty)
                        ),
                    );
                    T::Ty(Ty::Scalar(*ty))
                }
            },
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                self.condition(*cond);
                let then_t = self.expr(*then_value);
                let else_t = self.expr(*else_value);
                self.unify(then_t, else_t, self.loc(*else_value));
                if !matches!(
                    self.resolve(then_t),
                    T::Var(_) | T::Error | T::Ty(Ty::Scalar(_))
                ) {
                    self.cx.error(
                        loc,
                        "an `if` used as a value must produce a number or `bool`",
                    );
                }
                then_t
            }
        }
    }

    fn binary_type(&mut self, op: BinOp, lhs: T, rhs: T, lhs_loc: Loc, rhs_loc: Loc) -> T {
        let bool_t = T::Ty(Ty::Scalar(Scalar::Bool));
        match op {
            BinOp::And | BinOp::Or => {
                self.unify(bool_t, lhs, lhs_loc);
                self.unify(bool_t, rhs, rhs_loc);
                bool_t
            }
            _ if op.is_comparison() => {
                self.unify(lhs, rhs, rhs_loc);
                self.require_scalar(lhs, op, lhs_loc);
                bool_t
            }
            BinOp::Shl | BinOp::Shr => {
                for (t, loc) in [(lhs, lhs_loc), (rhs, rhs_loc)] {
                    if !self.is_int(t) {
                        let text = self.describe(t);
                        self.cx.error(
                            loc,
                            format!("`{}` needs integer operands, found {text}", op.symbol()),
                        );
                    }
                }
                lhs
            }
            _ => {
                if !self.unify(lhs, rhs, rhs_loc) {
                    return lhs;
                }
                let allowed = match op {
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        self.is_int(lhs) || self.known_scalar(lhs) == Some(Scalar::Bool)
                    }
                    _ => self.is_numeric(lhs),
                };
                if !allowed {
                    let text = self.describe(lhs);
                    self.cx.error(
                        lhs_loc,
                        format!(
                            "binary operator `{}` cannot be applied to {text}",
                            op.symbol()
                        ),
                    );
                }
                lhs
            }
        }
    }

    fn require_scalar(&mut self, t: T, op: BinOp, loc: Loc) {
        if let T::Ty(ty @ (Ty::Slice { .. } | Ty::Dim3 | Ty::Index3 | Ty::Unit)) = self.resolve(t) {
            self.cx.error(
                loc,
                format!(
                    "binary operator `{}` cannot be applied to `{}`",
                    op.symbol(),
                    ty.describe()
                ),
            );
        }
    }

    fn unary_type(&mut self, op: UnOp, t: T, id: ExprId, loc: Loc) -> T {
        match op {
            UnOp::Neg => match self.resolve(t) {
                T::Error => t,
                T::Var(_) => {
                    self.negations.push((id, loc));
                    t
                }
                T::Ty(Ty::Scalar(s))
                    if s.is_signed_int() || s.is_float() || s.is_half() || s.bound().is_some() =>
                {
                    t
                }
                _ => {
                    let text = self.describe(t);
                    self.cx
                        .error(loc, format!("cannot apply unary operator `-` to {text}"));
                    t
                }
            },
            UnOp::Not => {
                let ok = self.is_int(t) || self.known_scalar(t) == Some(Scalar::Bool);
                if !ok {
                    let text = self.describe(t);
                    self.cx
                        .error(loc, format!("cannot apply unary operator `!` to {text}"));
                }
                t
            }
        }
    }

    fn cast(&mut self, from: T, to: Scalar, loc: Loc) {
        let from_scalar = match self.resolve(from) {
            T::Ty(Ty::Scalar(s)) => Some(s),
            T::Var(_) => None,
            T::Error => return,
            other => {
                let text = self.describe(other);
                self.cx
                    .error(loc, format!("cannot cast {text} as `{}`", to.rust_name()));
                return;
            }
        };
        let from_text = self.describe(from);
        if to.is_half() || from_scalar.is_some_and(Scalar::is_half) {
            let (half, other) = if to.is_half() {
                (to, from_scalar.map_or("f32", Scalar::rust_name))
            } else {
                (from_scalar.unwrap_or(Scalar::F16), to.rust_name())
            };
            self.cx.error(
                loc,
                format!(
                    "`as` does not convert `{}` (it is not a primitive type): use `{}::from_{other}(x)` \
                     or `x.to_{other}()`",
                    half.rust_name(),
                    half.rust_name()
                ),
            );
        } else if to == Scalar::Bool && from_scalar != Some(Scalar::Bool) {
            self.cx.error(
                loc,
                format!("cannot cast {from_text} as `bool`: compare with zero instead (`x != 0`)"),
            );
        } else if from_scalar == Some(Scalar::Bool) && to.is_float() {
            self.cx.error(
                loc,
                format!(
                    "cannot cast `bool` as `{}`: cast to an integer first (`b as u32 as {}`)",
                    to.rust_name(),
                    to.rust_name()
                ),
            );
        }
    }

    fn method(
        &mut self,
        receiver: ExprId,
        name: &str,
        name_loc: Loc,
        args: &[ExprId],
        receiver_ty: Option<Scalar>,
    ) -> T {
        let receiver_t = self.expr(receiver);
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        if let Some(ty) = receiver_ty {
            self.unify(T::Ty(Ty::Scalar(ty)), receiver_t, self.loc(receiver));
        }
        let scalar = match self.resolve(receiver_t) {
            T::Ty(Ty::Scalar(s)) => s,
            T::Error => return T::Error,
            T::Var(_) => {
                let text = self.describe(receiver_t);
                let example = if self.var_kind(receiver_t) == Some(VarKind::Float) {
                    "`2.0_f32`"
                } else {
                    "`2_u32`"
                };
                self.cx.error(
                    name_loc,
                    format!(
                        "can't call method `{name}` on ambiguous numeric type {{{}}}: give the value a type, \
                         e.g. {example} or `let x: f32 = ...;`",
                        text.replace("floating-point number", "float")
                    ),
                );
                return T::Error;
            }
            other => {
                let text = self.describe(other);
                self.cx.error(
                    name_loc,
                    format!("no method `{name}` on {text}: slices and arrays support `.len()` and indexing"),
                );
                return T::Error;
            }
        };
        let Some(method) = methods::lookup(name, scalar) else {
            if name.starts_with("fast_") && methods::lookup(name, Scalar::F32).is_some() {
                self.cx.error(
                    name_loc,
                    format!(
                        "`{name}` is one of CUDA's `f32` approximations: call it on an `f32`, or use `{}` on `{}`",
                        name.trim_start_matches("fast_"),
                        scalar.rust_name()
                    ),
                );
                return T::Error;
            }
            let available = methods::names_for(scalar);
            self.cx.error(
                name_loc,
                if available.is_empty() {
                    format!("no method `{name}` on `{}` in kernels", scalar.rust_name())
                } else {
                    format!(
                        "no method `{name}` on `{}` in kernels; available: {available}",
                        scalar.rust_name()
                    )
                },
            );
            return T::Error;
        };
        if let (methods::Cuda::IntFunc(..), Scalar::Generic(_)) = (method.cuda, scalar) {
            self.cx.error(
                name_loc,
                format!(
                    "`{name}` needs a concrete integer type, not the generic `{}`",
                    scalar.rust_name()
                ),
            );
            return T::Error;
        }
        if !self.arity(name, method.args.len(), args.len(), name_loc) {
            return T::Error;
        }
        for ((arg, arg_t), expected) in args.iter().zip(arg_ts).zip(method.args) {
            let expected = match expected {
                ArgTy::Same => T::Ty(Ty::Scalar(scalar)),
                ArgTy::I32 => T::Ty(Ty::Scalar(Scalar::I32)),
                ArgTy::U32 => T::Ty(Ty::Scalar(Scalar::U32)),
            };
            self.unify(expected, arg_t, self.loc(*arg));
        }
        T::Ty(Ty::Scalar(match method.ret {
            RetTy::Same => scalar,
            RetTy::Bool => Scalar::Bool,
            RetTy::U32 => Scalar::U32,
            RetTy::F32 => Scalar::F32,
            RetTy::F64 => Scalar::F64,
            RetTy::Bits if scalar == Scalar::F32 => Scalar::U32,
            RetTy::Bits | RetTy::U64 => Scalar::U64,
        }))
    }

    /// An index: `usize`, as Rust requires.
    fn index_type(&mut self, index: ExprId) {
        let t = self.expr(index);
        self.require_index(t, self.loc(index));
    }

    fn require_index(&mut self, t: T, loc: Loc) {
        match self.resolve(t) {
            T::Ty(Ty::Scalar(Scalar::Usize)) | T::Error => {}
            T::Var(_) => {
                self.unify(T::Ty(Ty::Scalar(Scalar::Usize)), t, loc);
            }
            _ => {
                let text = self.describe(t);
                self.cx.error(
                    loc,
                    format!("slices are indexed by `usize`, found {text}: write `... as usize`"),
                );
            }
        }
    }

    /// The element type of the base of `load4`/`store4`: 4-byte numbers or a type parameter, in
    /// global or shared memory (writable for a store).
    fn vector_base(&mut self, base: ExprId, t: T, store: bool) -> Option<Scalar> {
        let elem = match self.resolve(t) {
            T::Ty(Ty::Slice { elem, mutable }) if mutable || !store => elem,
            T::Ty(Ty::Shared { elem, .. }) => elem,
            T::Error => return None,
            other => {
                let text = self.describe(other);
                let what = if store {
                    "`&mut [T]` slices and shared memory"
                } else {
                    "slices and shared memory"
                };
                self.cx.error(
                    self.loc(base),
                    format!("vector loads and stores work on {what}, not {text}"),
                );
                return None;
            }
        };
        // A generic `T` is allowed so generic kernels get 16-byte accesses where `T` is 4 bytes
        // wide; other widths move `4 * size_of::<T>()` bytes at no more than 16-byte alignment,
        // which an index that is a multiple of 4 always gives (see the `rs_vec4` helper). The
        // 16-bit floats move 8 bytes, a quarter of the load instructions of scalar accesses.
        if !matches!(
            elem,
            Scalar::F32
                | Scalar::I32
                | Scalar::U32
                | Scalar::F16
                | Scalar::Bf16
                | Scalar::Generic(_)
        ) {
            self.cx.error(
                self.loc(base),
                format!(
                    "`load4`/`store4` move four `f32`, `i32`, `u32`, `f16`, `bf16` or generic `T` \
                     values, not `{}`",
                    elem.rust_name()
                ),
            );
            return None;
        }
        Some(elem)
    }

    /// A call of an intrinsic: its signature's argument shapes checked in order.
    fn intrinsic(&mut self, op: Op, args: &[ExprId], id: ExprId, loc: Loc) -> T {
        let signature = op.signature();
        let name = op.name();
        if let Placement::Statement { message } = signature.placement {
            if !self.statements.contains(&id) {
                self.cx.error(loc, message);
            }
        }
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        if let Arity::Counted = signature.arity {
            if !self.arity(&name, signature.args.len(), args.len(), loc) {
                return T::Error;
            }
        }
        // What the result may refer to: the number moved, the element type of the memory.
        let mut number = T::Error;
        let mut element = None;
        for ((shape, &arg), t) in signature.args.iter().zip(args).zip(arg_ts) {
            let arg_loc = self.loc(arg);
            match shape {
                Arg::Scalar(scalar) => {
                    self.unify(T::Ty(Ty::Scalar(*scalar)), t, arg_loc);
                }
                Arg::Number => {
                    if !self.is_numeric(t) || self.known_scalar(t).is_some_and(Scalar::is_half) {
                        let text = self.describe(t);
                        self.cx
                            .error(arg_loc, format!("`{name}` moves numbers, found {text}"));
                    }
                    number = t;
                }
                Arg::Index => self.require_index(t, arg_loc),
                Arg::Constant { message } => {
                    if !is_const_expr(self.kernel, arg) || !self.is_int(t) {
                        self.cx.error(arg_loc, message);
                    }
                }
                Arg::Shared { elem, message } => match self.resolve(t) {
                    T::Ty(Ty::Shared { elem: found, .. }) if elem.accepts(found) => {}
                    T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(arg_loc, message.replace("{found}", &text));
                    }
                },
                Arg::Slice { elem, message } => match self.resolve(t) {
                    T::Ty(Ty::Slice { elem: found, .. }) if elem.accepts(found) => {}
                    T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(arg_loc, message.replace("{found}", &text));
                    }
                },
                Arg::Fragment {
                    elem, len, message, ..
                } => self.fragment(arg, t, *elem, *len, message),
                Arg::Memory(access) => match self.memory(&name, arg, t, *access, loc) {
                    Some(elem) => element = Some(elem),
                    None => return T::Error,
                },
                Arg::Element => {
                    if let Some(elem) = element {
                        self.unify(T::Ty(Ty::Scalar(elem)), t, arg_loc);
                    }
                }
                Arg::Elements4 => {
                    if let Some(elem) = element {
                        let var = self.element_var(T::Ty(Ty::Scalar(elem)), loc);
                        let four = T::Array {
                            elem: var,
                            len: Len::Known(4),
                        };
                        self.unify(four, t, arg_loc);
                    }
                }
            }
        }
        let array = |this: &mut Self, elem: Scalar, len: u64| {
            let var = this.element_var(T::Ty(Ty::Scalar(elem)), loc);
            T::Array {
                elem: var,
                len: Len::Known(len),
            }
        };
        match signature.ret {
            Ret::Unit => T::Ty(Ty::Unit),
            Ret::Scalar(scalar) => T::Ty(Ty::Scalar(scalar)),
            Ret::Number => number,
            Ret::Element => element.map_or(T::Error, |elem| T::Ty(Ty::Scalar(elem))),
            Ret::Array { elem, len } => array(self, elem, u64::from(len)),
            Ret::Elements4 => element.map_or(T::Error, |elem| array(self, elem, 4)),
        }
    }

    /// Checks that `arg` is a local `[elem; len]` array variable (of any length for `None`).
    fn fragment(&mut self, arg: ExprId, t: T, elem: Scalar, len: Option<u32>, message: &str) {
        let is_local = matches!(self.kernel.expr(arg).kind, ExprKind::Local(_));
        let fits = is_local
            && match len {
                Some(len) => {
                    let var = self.element_var(T::Ty(Ty::Scalar(elem)), self.loc(arg));
                    let expected = T::Array {
                        elem: var,
                        len: Len::Known(u64::from(len)),
                    };
                    self.unify_quiet(expected, t)
                }
                None => match self.resolve(t) {
                    T::Array { elem: found, .. } => {
                        self.unify_quiet(T::Var(found), T::Ty(Ty::Scalar(elem)))
                    }
                    _ => false,
                },
            };
        if !fits {
            self.cx.error(self.loc(arg), message);
        }
    }

    /// The element type of the slice or shared memory a memory method is called on, or
    /// `None` once reported.
    fn memory(
        &mut self,
        name: &str,
        base: ExprId,
        t: T,
        access: Access,
        loc: Loc,
    ) -> Option<Scalar> {
        let (writes, bitwise) = match access {
            Access::Vector { store } => return self.vector_base(base, t, store),
            Access::Atomic { writes, bitwise } => (writes, bitwise),
        };
        let elem = match self.resolve(t) {
            T::Ty(
                Ty::Slice {
                    elem,
                    mutable: true,
                }
                | Ty::Shared { elem, .. },
            ) => elem,
            T::Error => return None,
            T::Ty(Ty::Slice { elem, .. }) if !writes => elem,
            T::Ty(Ty::Slice { mutable: false, .. }) => {
                self.cx.error(
                    self.loc(base),
                    format!(
                        "`{name}` writes: it needs a `&mut [T]` slice or shared memory, not a `&[T]`"
                    ),
                );
                return None;
            }
            other => {
                let text = self.describe(other);
                self.cx.error(
                    self.loc(base),
                    format!("atomics work on `&mut [T]` slices and shared memory, not {text}"),
                );
                return None;
            }
        };
        if elem == Scalar::Bool || elem.is_half() || (bitwise && elem.is_float()) {
            self.cx.error(
                loc,
                format!("`{name}` is not available on `{}`", elem.rust_name()),
            );
            return None;
        }
        Some(elem)
    }

    /// Whether `found` arguments are the `expected` number, reporting it if not.
    fn arity(&self, name: &str, expected: usize, found: usize, loc: Loc) -> bool {
        if expected != found {
            self.cx.error(
                loc,
                format!(
                    "`{name}` takes {expected} argument{}, found {found}",
                    if expected == 1 { "" } else { "s" }
                ),
            );
        }
        expected == found
    }

    fn call(&mut self, name: &str, args: &[ExprId], loc: Loc) -> T {
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        let Some((_, callee)) = self.program.function(name) else {
            // The definition was fetched by path; a missing one is rustc's error at the call.
            self.cx
                .error(loc, format!("`{name}` is not a `#[device]` function"));
            return T::Error;
        };
        if !self.arity(name, callee.params.len(), args.len(), loc) {
            return T::Error;
        }
        for ((param, arg), arg_t) in callee.params.iter().zip(args).zip(arg_ts) {
            match param.ty {
                Ty::Slice { elem, mutable } => {
                    let ok = match self.resolve(arg_t) {
                        T::Ty(Ty::Slice {
                            elem: arg_elem,
                            mutable: arg_mutable,
                        }) => arg_elem == elem && (arg_mutable || !mutable),
                        T::Ty(Ty::Shared { elem: arg_elem, .. }) => arg_elem == elem,
                        T::Error => true,
                        _ => false,
                    };
                    if !ok {
                        let found = self.describe(arg_t);
                        self.cx.error(
                            self.loc(*arg),
                            format!(
                                "mismatched types: `{name}` expects `{}`, found {found}",
                                param.ty.describe()
                            ),
                        );
                    }
                }
                ty => {
                    self.unify(T::Ty(ty), arg_t, self.loc(*arg));
                }
            }
        }
        match callee.ret {
            Some(ret) => T::Ty(Ty::Scalar(ret)),
            None => T::Ty(Ty::Unit),
        }
    }

    // ---- the end: defaults and checks that need final types --------------------------------

    fn finish(mut self) -> Option<Types> {
        let mut exprs = Vec::with_capacity(self.exprs.len());
        for t in std::mem::take(&mut self.exprs) {
            let ty = t.map_or(Ty::Unit, |t| self.finalize(t));
            exprs.push(ty);
        }
        let mut locals = Vec::with_capacity(self.locals.len());
        for t in std::mem::take(&mut self.locals) {
            let ty = t.map_or(Ty::Unit, |t| self.finalize(t));
            locals.push(ty);
        }
        for (id, loc) in std::mem::take(&mut self.negations) {
            if let Ty::Scalar(s) = exprs[id.0 as usize] {
                if !s.is_signed_int() && !s.is_float() && !s.is_half() && s.bound().is_none() {
                    self.cx.error(
                        loc,
                        format!(
                            "cannot apply unary operator `-` to type `{}`",
                            s.rust_name()
                        ),
                    );
                }
            }
        }
        for (index, expr) in self.kernel.exprs.iter().enumerate() {
            if let ExprKind::Lit(Lit::Int { value, .. }) = expr.kind {
                if let Ty::Scalar(scalar) = exprs[index] {
                    let negated = self.negated_literals.contains(&ExprId(index as u32));
                    if value > int_max(scalar, negated) {
                        self.cx.error(
                            expr.span,
                            format!(
                                "literal out of range for `{}`: the largest {} is {}",
                                scalar.rust_name(),
                                scalar.rust_name(),
                                int_max(scalar, false)
                            ),
                        );
                    }
                }
            }
        }
        if self.cx.has_errors() {
            return None;
        }
        Some(Types { exprs, locals })
    }

    fn finalize(&mut self, t: T) -> Ty {
        match self.resolve(t) {
            T::Ty(ty) => ty,
            T::Error => Ty::Unit,
            T::Array { elem, len } => match self.finalize(T::Var(elem)) {
                Ty::Scalar(elem) => Ty::Array { elem, len },
                _ => Ty::Unit,
            },
            T::Var(id) => Ty::Scalar(match self.vars[id as usize].kind {
                VarKind::Int => Scalar::I32,
                VarKind::Float | VarKind::Any => Scalar::F64,
            }),
        }
    }
}

/// The largest literal value `scalar` holds; one more for a negated signed literal (`-128`).
fn int_max(scalar: Scalar, negated: bool) -> u128 {
    let max = match scalar {
        Scalar::I32 => i32::MAX as u128,
        Scalar::U32 => u32::MAX as u128,
        Scalar::I64 => i64::MAX as u128,
        Scalar::U64 | Scalar::Usize => u64::MAX as u128,
        _ => u128::MAX,
    };
    if negated && scalar.is_signed_int() {
        max + 1
    } else {
        max
    }
}

/// The type of the associated constant `ty::name`, if the language knows it.
pub fn constant_type(ty: Scalar, name: &str) -> Option<Scalar> {
    let known = if ty.is_half() {
        HALF_CONSTANTS.contains(&name)
    } else if ty.is_int() {
        matches!(name, "MAX" | "MIN" | "BITS")
    } else if ty.is_float() {
        FLOAT_CONSTANTS.contains(&name)
    } else {
        false
    };
    match (known, name) {
        (false, _) => None,
        (true, "BITS") => Some(Scalar::U32),
        (true, _) => Some(ty),
    }
}

/// The `half` crate's constants on `f16` and `bf16`.
pub const HALF_CONSTANTS: &[&str] = &[
    "ZERO",
    "NEG_ZERO",
    "ONE",
    "NEG_ONE",
    "MAX",
    "MIN",
    "MIN_POSITIVE",
    "EPSILON",
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
];

/// The float constants kernels may name, as in `f32::` and `f32::consts::`.
pub const FLOAT_CONSTANTS: &[&str] = &[
    "MAX",
    "MIN",
    "MIN_POSITIVE",
    "EPSILON",
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
    "PI",
    "TAU",
    "E",
    "SQRT_2",
    "LN_2",
    "LN_10",
    "LOG2_E",
    "LOG10_E",
    "FRAC_1_SQRT_2",
    "FRAC_PI_2",
];

fn constant_names(ty: Scalar) -> String {
    if ty.is_half() {
        HALF_CONSTANTS.join(", ")
    } else if ty.is_float() {
        FLOAT_CONSTANTS.join(", ")
    } else {
        "MAX, MIN, BITS".to_string()
    }
}
